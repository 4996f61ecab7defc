"""Exporting a PyTorch module into a sealed kiln artifact.

    artifact = kiln.export(module, (example,), dynamic_shapes={"x": {0: batch}},
                           checks={"x": kiln.Check(range=(-1e6, 1e6), finite=True)})

The module is traced by torch.onnx.export into memory (no file is
written), every Dim becomes a bounded kiln dim, and the ONNX importer
proves the program's shape rules over the whole declared domain: a
refusal raises with the node, the claim and the counterexample, and the
domain is never narrowed to make it pass. Then, by default, the eager
module runs at the example and at every corner of the domain (each dim at
its smallest and largest size), and each case is compared with the sealed
artifact run by kiln: the cases are stored in the artifact as evidence
(up to a size budget; larger ones are compared and left out), so that
every later `kiln verify` replays them.
"""
import ctypes
import inspect as _inspect
import io
import itertools
import os
import re
import warnings

import numpy

from . import _lib, _tensors
from .contract import Check, Dim
from .errors import ArgumentError, EvidenceError, LimitError, ProgramError, UnsupportedError, raise_for

# Cases, smallest first, are sealed while their tensors fit in this many bytes; the rest are compared only.
DEFAULT_EVIDENCE_BYTES = 32 << 20

# More dims than this: the all-smallest and all-largest corners and each dim alone at its largest.
MAX_CORNER_DIMS = 4


def tolerance(dtype, expected):
    """The comparison rule for an output of `dtype` (NumPy) expected to be `expected`: exact for
    integers and bools; for floats a relative tolerance of the dtype's precision after a few
    hundred operations, and an absolute one scaled by the output's largest magnitude."""
    if dtype.kind in "iub":
        return {"kind": "exact"}
    finite = numpy.abs(expected[numpy.isfinite(expected)]) if expected.size else numpy.zeros(0)
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    relative = {8: 1e-9, 4: 1e-4, 2: 1e-2}.get(dtype.itemsize, 1e-2)
    return {"kind": "tolerance", "rtol": relative, "atol": relative * scale}


def _rule_struct(rule):
    struct = _lib.CompareRule()
    struct.kind = 0 if rule["kind"] == "exact" else 1
    struct.atol = rule.get("atol", 0.0)
    struct.rtol = rule.get("rtol", 0.0)
    struct.nan_equal = bool(rule.get("nan_equal", False))
    return struct


class Artifact:
    """A sealed artifact in memory: save it, load it, or look at the evidence it carries."""

    def __init__(self, data, evidence_report):
        self.bytes = data
        self.evidence = evidence_report  # [{"name", "sealed", "results"}] per case compared at export

    def save(self, path):
        """Write the artifact to `path` atomically (temporary file, flush, rename), as the C writer does."""
        error = _lib.Error()
        raise_for(_lib.kiln.kiln_write_file_atomic(os.fspath(path).encode(), self.bytes, len(self.bytes),
                                                   ctypes.byref(error)), error)

    def load(self, **options):
        """The artifact as a Program (kiln.load options apply)."""
        from .program import load
        program = load(self.bytes, **options)
        program._bytes = self.bytes
        return program

    def __len__(self):
        return len(self.bytes)

    def __repr__(self):
        return "<kiln.Artifact %d bytes, %d evidence case%s sealed>" % (
            len(self.bytes), sum(1 for c in self.evidence if c["sealed"]),
            "" if sum(1 for c in self.evidence if c["sealed"]) == 1 else "s")


def _input_names(module, args, input_names):
    if input_names is not None:
        names = list(input_names)
    else:
        forward = getattr(module, "forward", module)
        parameters = [p for p in _inspect.signature(forward).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        names = [p.name for p in parameters[:len(args)]]
    if len(names) != len(args):
        raise ArgumentError("%d example input%s but %d input name%s" % (
            len(args), "" if len(args) == 1 else "s", len(names), "" if len(names) == 1 else "s"), 1)
    return names


def _dims_of(dynamic_shapes, names, args):
    """{input name: {axis: Dim}} and the Dims by name, from dynamic_shapes (by name or by position)."""
    axes_of, dims = {}, {}
    if dynamic_shapes is None:
        return axes_of, dims
    if isinstance(dynamic_shapes, (list, tuple)):
        dynamic_shapes = {names[i]: spec for i, spec in enumerate(dynamic_shapes) if spec}
    for input_name, spec in dynamic_shapes.items():
        if input_name not in names:
            raise ArgumentError("dynamic_shapes names '%s', which is not an input (inputs: %s)" % (
                input_name, ", ".join(names)), 21)
        if spec is None:
            continue
        if isinstance(spec, (list, tuple)):
            spec = {axis: d for axis, d in enumerate(spec) if d is not None}
        rank = args[names.index(input_name)].dim()
        axes = {}
        for axis, value in spec.items():
            if not -rank <= axis < rank:
                raise ArgumentError("dynamic_shapes['%s']: axis %d of a rank-%d input" % (input_name, axis, rank), 1)
            dim = Dim.of(value)
            known = dims.get(dim.name)
            if known is not None and known != dim:
                raise ArgumentError("two dims are called '%s' with different bounds: %r and %r" % (
                    dim.name, known, dim), 1)
            dims[dim.name] = dim
            axes[axis % rank] = dim
        axes_of[input_name] = axes
    return axes_of, dims


def _check_example(names, args, axes_of):
    """The example's own sizes are a point of the domain, else nothing proven about it would hold."""
    point = {}
    for name, example in zip(names, args):
        for axis, dim in axes_of.get(name, {}).items():
            size = int(example.shape[axis])
            if size < dim.min or size > dim.max or size % dim.multiple_of:
                raise ArgumentError("the example input '%s' has %d on axis %d, outside %r: give an example "
                                    "inside the declared domain" % (name, size, axis, dim), 19)
            if point.setdefault(dim.name, size) != size:
                raise ArgumentError("dim '%s' is %d and %d in the example inputs" % (
                    dim.name, point[dim.name], size), 19)
    return point


def _corners(dims):
    """The points {dim name: size} of the domain's corners."""
    ordered = list(dims.values())
    if len(ordered) <= MAX_CORNER_DIMS:
        return [dict(zip((d.name for d in ordered), sizes))
                for sizes in itertools.product(*((d.first(), d.last()) for d in ordered))]
    low = {d.name: d.first() for d in ordered}
    points = [low, {d.name: d.last() for d in ordered}]
    for d in ordered:
        points.append(dict(low, **{d.name: d.last()}))
    return points


def _resize(array, axis, size):
    """`array` with `size` entries along `axis`: its own values repeated or cut, so that the
    values of a corner case are the example's (valid token ids stay valid)."""
    current = array.shape[axis]
    if current == size:
        return array
    if current == 0:
        shape = list(array.shape)
        shape[axis] = size
        return numpy.zeros(shape, dtype=array.dtype)
    reps = -(-size // current)
    tiled = numpy.concatenate([array] * reps, axis=axis) if reps > 1 else array
    return numpy.take(tiled, numpy.arange(size), axis=axis)


def _case_inputs(names, examples, axes_of, point):
    inputs = {}
    for name, example in zip(names, examples):
        array = example
        for axis, dim in axes_of.get(name, {}).items():
            array = _resize(array, axis, point[dim.name])
        inputs[name] = numpy.ascontiguousarray(array)
    return inputs


def _eager(module, names, inputs, torch):
    tensors = [torch.from_numpy(inputs[name].copy()) for name in names]
    # Gradients stay enabled, as during the export: without them some modules
    # (nn.TransformerEncoderLayer in eval mode) take fused paths the export did not trace.
    with torch.enable_grad():
        result = module(*tensors)
    if isinstance(result, (list, tuple)):
        return [r.detach().cpu().numpy() for r in result]
    return [result.detach().cpu().numpy()]


def _compare(actual, expected, rule):
    """The figures of kiln_evidence_result for one output, computed here as kiln_evidence_compare
    (lib/model/evidence.c) computes them for a sealed case, so that a case compared without being
    sealed passes or fails as it would in `kiln verify`: NaN matches NaN only under nan_equal, an
    infinity matches only itself, and the error figures are over the pairs where both values are
    finite (the relative one where the expected value is not 0)."""
    if actual.shape != expected.shape:
        return {"passed": False, "elements": expected.size, "mismatches": expected.size,
                "max_abs_error": float("inf"), "max_rel_error": float("inf"),
                "problem": "shape %s, expected %s" % (actual.shape, expected.shape)}
    floating = expected.dtype.kind == "f"
    a, e = actual.astype(numpy.float64), expected.astype(numpy.float64)
    with numpy.errstate(invalid="ignore", over="ignore", divide="ignore"):
        diff = numpy.abs(a - e)
        if rule["kind"] == "exact" or not floating:
            good = actual == expected
        else:
            good = numpy.where(numpy.isinf(a) | numpy.isinf(e), a == e,
                               diff <= rule["atol"] + rule["rtol"] * numpy.abs(e))
        if floating:
            nan = numpy.isnan(a) | numpy.isnan(e)
            good = numpy.where(nan, bool(rule.get("nan_equal", False)) & numpy.isnan(a) & numpy.isnan(e), good)
        finite = numpy.isfinite(a) & numpy.isfinite(e)
        relative = finite & (e != 0)
        max_abs = float(diff[finite].max()) if finite.any() else 0.0
        max_rel = float((diff[relative] / numpy.abs(e[relative])).max()) if relative.any() else 0.0
    mismatches = int(numpy.count_nonzero(~good))
    return {"passed": mismatches == 0, "elements": int(expected.size), "mismatches": mismatches,
            "max_abs_error": max_abs, "max_rel_error": max_rel}


_NODE = re.compile(r"node \d+ '[^']*' \([^)]*\)|node \d+ \([^)]*\)")
# "counterexample: batch=3, n=2. Use the same dim ...": the point only, not the advice after it.
_COUNTEREXAMPLE = re.compile(r"counterexample:? ((?:[\w.]+=-?\d+)(?:, [\w.]+=-?\d+)*)")
# The importer reports a node the contract checker refused (KILN_ERR_INVALID_PROGRAM in the
# builder) as a construct it could not import: "node 0 '/Add' (Add): kiln refuses add: CLAIM".
_REFUSAL = re.compile(r"kiln refuses [\w.]+: (.*cannot prove that .*)")

INVALID_PROGRAM = 16  # kiln_status KILN_ERR_INVALID_PROGRAM: what the checker returns when it refuses
INVALID_ARGUMENT = 1  # kiln_status KILN_ERR_INVALID_ARGUMENT: a declaration (--dim, a kiln.Dim) is missing or names no size


def _refusal_details(exc, message):
    """Set exc.node, exc.claim and exc.counterexample from a refusal's `message` (None when absent)."""
    node = _NODE.search(message)
    refusal = _REFUSAL.search(message)
    counterexample = _COUNTEREXAMPLE.search(message)
    exc.node = node.group(0) if node else None
    exc.claim = refusal.group(1) if refusal else message
    exc.counterexample = counterexample.group(1) if counterexample else None
    return exc


def _import_error(status, error, result):
    """The exception for a failed import: the checker's refusal (ProgramError) with the node, the
    claim and the counterexample picked out of its message, or every unsupported construct."""
    onnx = _lib.onnx
    message = error.message.decode("utf-8", "replace")
    count = onnx.kiln_onnx_result_unsupported_count(result) if result else 0
    if count and status != INVALID_ARGUMENT:
        constructs = [onnx.kiln_onnx_result_unsupported(result, i).decode() for i in range(count)]
        refusals = [c for c in constructs if _REFUSAL.search(c)]
        if len(refusals) == count:  # every construct is importable; the declared domain is what fails
            exc = ProgramError("\n".join(refusals), INVALID_PROGRAM)
            exc.constructs = constructs
            return _refusal_details(exc, refusals[0])
        exc = UnsupportedError("%d construct%s cannot be imported:\n  %s" % (
            count, "" if count == 1 else "s", "\n  ".join(constructs)), status, constructs)
        return _refusal_details(exc, refusals[0] if refusals else "")
    from .errors import from_status
    if "a declaration (--dim" in message:
        message += " (from Python: give that axis a kiln.Dim in dynamic_shapes)"
    if count:  # the declarations are missing, and some ops are too
        message += "\nalso, %d construct%s cannot be imported:\n  %s" % (
            count, "" if count == 1 else "s",
            "\n  ".join(onnx.kiln_onnx_result_unsupported(result, i).decode() for i in range(count)))
    return _refusal_details(from_status(status, message), message)


def _set_check(builder, kiln_name, check):
    struct = _lib.InputCheck()
    _lib.kiln.kiln_input_check_default(ctypes.byref(struct))
    keep = []
    if check.range is not None:
        struct.has_range, struct.min, struct.max = True, check.range[0], check.range[1]
    struct.finite_only = check.finite
    if check.categories is not None:
        categories = (ctypes.c_int64 * len(check.categories))(*check.categories)
        keep.append(categories)
        struct.category_count, struct.categories = len(check.categories), categories
    struct.unit = check.unit.encode() if check.unit else None
    struct.description = check.description.encode() if check.description else None
    error = _lib.Error()
    raise_for(_lib.kiln.kiln_builder_set_input_check(builder, kiln_name.encode(), ctypes.byref(struct),
                                                     ctypes.byref(error)), error)


def _add_evidence(builder, case_name, kiln_inputs, outputs, rules):
    kiln = _lib.kiln
    handles, keep = [], []  # the buffers stay alive until the builder has copied them
    try:
        for array in list(kiln_inputs.values()) + list(outputs.values()):
            handle, kept = _tensors.wrap(array)
            handles.append(handle)
            keep.append(kept)
        in_handles, out_handles = handles[:len(kiln_inputs)], handles[len(kiln_inputs):]
        in_names = (ctypes.c_char_p * len(kiln_inputs))(*(n.encode() for n in kiln_inputs))
        out_names = (ctypes.c_char_p * len(outputs))(*(n.encode() for n in outputs))
        in_array = (ctypes.c_void_p * len(in_handles))(*(h.value for h in in_handles))
        out_array = (ctypes.c_void_p * len(out_handles))(*(h.value for h in out_handles))
        rule_array = (_lib.CompareRule * len(rules))(*(_rule_struct(r) for r in rules))
        error = _lib.Error()
        raise_for(kiln.kiln_builder_add_evidence(builder, case_name.encode(), len(kiln_inputs), in_names, in_array,
                                                 len(outputs), out_names, out_array, rule_array,
                                                 ctypes.byref(error)), error)
    finally:
        for handle in handles:
            kiln.kiln_tensor_free(handle)


def _encode(builder):
    options = _lib.SaveOptions()
    _lib.kiln.kiln_save_options_default(ctypes.byref(options))
    data, size, error = ctypes.c_void_p(), ctypes.c_size_t(), _lib.Error()
    raise_for(_lib.kiln.kiln_builder_encode_with_options(builder, ctypes.byref(options), ctypes.byref(data),
                                                         ctypes.byref(size), ctypes.byref(error)), error)
    try:
        return ctypes.string_at(data, size.value)
    finally:
        _lib.libc.free(data)


def _output_names(given, count, input_names):
    """The outputs' names: `given`, else "y" (or y0, y1, ...), else "output" when an input is called so.
    An output may not share an input's name: torch.onnx.export would rename the input ("y" becomes
    "y.1") and its dynamic axes would go to the output, leaving the input's dims undeclared."""
    if given is not None:
        clash = sorted(set(given) & set(input_names))
        if clash:
            raise ArgumentError("output name%s %s %s also an input's: give outputs other names" % (
                "" if len(clash) == 1 else "s", ", ".join("'%s'" % n for n in clash),
                "is" if len(clash) == 1 else "are"), 1)
        return list(given)
    base = "y"
    while True:
        names = [base] if count == 1 else ["%s%d" % (base, i) for i in range(count)]
        if not set(names) & set(input_names):
            return names
        base = "output" if base == "y" else base + "_"


def _case_name(point, kind):
    if not point:
        return kind
    return "%s %s" % (kind, " ".join("%s=%d" % item for item in sorted(point.items())))


def export(module, args, *, dynamic_shapes=None, checks=None, evidence="corners", input_names=None,
           output_names=None, name=None, opset=14, non_strict=False, evidence_bytes=DEFAULT_EVIDENCE_BYTES,
           rtol=None, atol=None):
    """Seal a PyTorch module into a kiln Artifact.

    args: the example inputs (tensors), in forward's order. dynamic_shapes:
    {input name: {axis: kiln.Dim}} (or a list by position); a Dim object
    used twice is one dim; torch.export.Dim objects are taken too. checks:
    {input name: kiln.Check}. evidence: "corners" (the example and every
    corner of the domain, compared with the eager module and sealed up to
    `evidence_bytes`), "example", None (no evidence), or a list of cases
    {"name": ..., "inputs": {name: array}} whose expected outputs the eager
    module gives. rtol/atol override the dtype's tolerance. non_strict:
    store unprovable preconditions as runtime guards instead of refusing.
    Raises kiln.UnsupportedError (every construct listed), the checker's
    kiln.ProgramError/ContractError (with .node, .claim, .counterexample),
    or kiln.EvidenceError (the case and its error figures)."""
    import torch

    if _lib.onnx is None:
        raise UnsupportedError("this kiln was built without the ONNX importer (protobuf-c)", 15)
    args = tuple(args) if isinstance(args, (list, tuple)) else (args,)
    if not all(isinstance(a, torch.Tensor) for a in args):
        raise ArgumentError("kiln.export takes the example inputs as a tuple of tensors", 1)
    names = _input_names(module, args, input_names)
    axes_of, dims = _dims_of(dynamic_shapes, names, args)
    example_point = _check_example(names, args, axes_of)
    was_training = getattr(module, "training", False)
    if hasattr(module, "eval"):
        module.eval()
    try:
        return _export(module, args, names, axes_of, dims, example_point, checks or {}, evidence, output_names,
                       name or type(module).__name__, opset, non_strict, evidence_bytes, rtol, atol, torch)
    finally:
        if was_training:
            module.train(True)


def _export(module, args, names, axes_of, dims, example_point, checks, evidence, output_names, program_name,
            opset, non_strict, evidence_bytes, rtol, atol, torch):
    onnx, kiln = _lib.onnx, _lib.kiln
    examples = [a.detach().cpu().numpy() for a in args]
    first_outputs = _eager(module, names, dict(zip(names, examples)), torch)
    output_names = _output_names(output_names, len(first_outputs), names)
    dynamic_axes = {n: {axis: d.name for axis, d in axes.items()} for n, axes in axes_of.items()}
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporter's tracer warnings speak of torch internals
        try:
            torch.onnx.export(module, args, buffer, input_names=names, output_names=list(output_names), dynamo=False,
                              dynamic_axes=dynamic_axes, opset_version=opset, do_constant_folding=True)
        except torch.onnx.errors.UnsupportedOperatorError as exc:
            raise UnsupportedError("PyTorch cannot export this module to ONNX opset %d: %s" % (opset, exc), 15,
                                   [str(exc)]) from exc
    model = buffer.getvalue()

    onnx_dims = (_lib.OnnxDim * max(len(dims), 1))(
        *(_lib.OnnxDim(d.name.encode(), d.min, d.max, d.multiple_of) for d in dims.values()))
    options = _lib.OnnxOptions()
    onnx.kiln_onnx_options_default(ctypes.byref(options))
    options.program_name = program_name.encode()
    options.dims = ctypes.cast(onnx_dims, ctypes.POINTER(_lib.OnnxDim))
    options.dim_count = len(dims)
    options.non_strict = bool(non_strict)
    result, error = ctypes.c_void_p(), _lib.Error()
    status = onnx.kiln_onnx_import_memory(model, len(model), ctypes.byref(options), ctypes.byref(result),
                                          ctypes.byref(error))
    try:
        if status != 0:
            raise _import_error(status, error, result)
        builder = onnx.kiln_onnx_result_builder(result)
        kiln_name = {onnx.kiln_onnx_result_input_onnx_name(result, i).decode():
                     onnx.kiln_onnx_result_input_kiln_name(result, i).decode()
                     for i in range(onnx.kiln_onnx_result_input_count(result))}
        for input_name, check in checks.items():
            if input_name not in kiln_name:
                raise ArgumentError("checks names '%s', which is not an input (inputs: %s)" % (
                    input_name, ", ".join(kiln_name)), 21)
            if not isinstance(check, Check):
                raise ArgumentError("checks['%s'] must be a kiln.Check" % input_name, 1)
            _set_check(builder, kiln_name[input_name], check)
        too_large = _corners_too_large(builder, dims, example_point) if evidence == "corners" else {}
        cases = _evidence_cases(module, names, examples, axes_of, dims, example_point, evidence, torch,
                                first_outputs, too_large)
        report = _seal_cases(builder, cases, kiln_name, output_names, evidence_bytes, rtol, atol)
        report += [{"name": name, "sealed": False, "skipped": reason, "results": None}
                   for name, reason in too_large.items()]
        data = _encode(builder)
    finally:
        if result.value:
            onnx.kiln_onnx_result_free(result)
    artifact = Artifact(data, report)
    _check_cases(artifact, cases, kiln_name, output_names, report)
    return artifact


def _corners_too_large(builder, dims, example_point):
    """{case name: reason} of the corners whose arena is over the default session limit (a
    sequence length of 2048 at batch 64 puts gigabytes in an attention layer's arena): they are
    neither run eagerly nor sealed, and each is named in a warning. Asked of the program sealed
    without evidence, before any eager run."""
    from .errors import LimitError as OverLimit
    program = Artifact(_encode(builder), []).load(verify="none")
    skipped = {}
    try:
        for point in _corners(dims):
            if point == example_point:
                continue
            try:
                program.session_arena(dims={name: (size, size) for name, size in point.items()})
            except OverLimit as exc:
                name = _case_name(point, "corner")
                skipped[name] = exc.message
                warnings.warn("kiln.export: evidence case '%s' left out: %s" % (name, exc.message))
    finally:
        program.close()
    return skipped


def _evidence_cases(module, names, examples, axes_of, dims, example_point, evidence, torch, first_outputs,
                    too_large):
    """[(name, {input name: array}, [expected output arrays])] as `evidence` asks (without the
    corners in `too_large`)."""
    if evidence is None or evidence is False:
        return []
    cases = [("example", dict(zip(names, examples)), first_outputs)]
    if evidence == "example":
        return cases
    if evidence == "corners":
        seen = {tuple(sorted(example_point.items()))}
        for point in _corners(dims):
            key = tuple(sorted(point.items()))
            if key in seen or _case_name(point, "corner") in too_large:
                continue
            seen.add(key)
            inputs = _case_inputs(names, examples, axes_of, point)
            cases.append((_case_name(point, "corner"), inputs, _eager(module, names, inputs, torch)))
        return cases
    if isinstance(evidence, (list, tuple)):
        out = []
        for i, case in enumerate(evidence):
            inputs = {n: numpy.ascontiguousarray(numpy.asarray(v)) for n, v in case["inputs"].items()}
            expected = case.get("outputs")
            expected = list(expected.values()) if isinstance(expected, dict) else expected
            out.append((case.get("name", "case %d" % i), inputs,
                        expected if expected is not None else _eager(module, names, inputs, torch)))
        return out
    raise ArgumentError("evidence must be 'corners', 'example', None or a list of cases, got %r" % (evidence,), 1)


def _rules(outputs, rtol, atol):
    rules = []
    for array in outputs:
        rule = tolerance(array.dtype, array)
        if rule["kind"] != "exact":
            rule["rtol"] = rule["rtol"] if rtol is None else rtol
            rule["atol"] = rule["atol"] if atol is None else atol
        rules.append(rule)
    return rules


def _seal_cases(builder, cases, kiln_name, output_names, budget, rtol, atol):
    """Store the cases in the builder, smallest first, while their tensors fit `budget` bytes."""
    report = []
    used = 0
    order = sorted(range(len(cases)), key=lambda i: sum(a.nbytes for a in cases[i][1].values()) +
                   sum(a.nbytes for a in cases[i][2]))
    sealed = set()
    for i in order:
        case_name, inputs, outputs = cases[i]
        size = sum(a.nbytes for a in inputs.values()) + sum(a.nbytes for a in outputs)
        if used + size > budget:
            continue
        used += size
        _add_evidence(builder, case_name, {kiln_name.get(n, n): a for n, a in inputs.items()},
                      dict(zip(output_names, outputs)), _rules(outputs, rtol, atol))
        sealed.add(i)
    for i, (case_name, _, outputs) in enumerate(cases):
        report.append({"name": case_name, "sealed": i in sealed, "rules": _rules(outputs, rtol, atol),
                       "results": None})
    return report


def _check_cases(artifact, cases, kiln_name, output_names, report):
    """Replay the sealed cases from the artifact; run the others in sessions; any mismatch raises."""
    if not cases:
        return
    from .verify import replay_case
    program = artifact.load(verify="none")
    try:
        stored = {n: i for i, n in enumerate(program.evidence)}
        for (case_name, inputs, outputs), entry in zip(cases, report):
            if entry["sealed"]:
                try:
                    results = replay_case(program, stored[case_name])
                except LimitError as exc:
                    raise EvidenceError("evidence '%s' cannot run within the default arena limit: %s" % (
                        case_name, exc.message), 13, case=case_name) from exc
            else:
                try:
                    kiln_inputs = {kiln_name.get(n, n): a for n, a in inputs.items()}
                    session = program.session(fit=kiln_inputs)
                    got = session.run(**kiln_inputs)
                    session.close()
                except LimitError as exc:
                    warnings.warn("kiln.export: case '%s' was not compared: %s" % (case_name, exc.message))
                    continue
                results = [dict(_compare(got[name], expected, rule), output=name, rule=rule)
                           for name, expected, rule in zip(output_names, outputs, entry["rules"])]
            entry["results"] = results
            failed = [r for r in results if not r["passed"]]
            if failed:
                r = failed[0]
                raise EvidenceError(
                    "evidence '%s': kiln and the eager module disagree on output '%s': %d of %d elements outside "
                    "the tolerance (max abs error %.3g)" % (case_name, r["output"], r["mismatches"], r["elements"],
                                                            r["max_abs_error"]), 23, case=case_name, results=results)
    finally:
        program.close()
