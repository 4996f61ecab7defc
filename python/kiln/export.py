"""Sealing a PyTorch program into a kiln artifact.

    batch = torch.export.Dim("batch", min=2, max=4)
    artifact = kiln.export(module, (example,), dynamic_shapes={"x": {0: batch}}, strict=True,
                           checks={"x": kiln.Check(range=(-1e6, 1e6), finite=True)})

A front door (_torch_export: torch.export; _torchscript_export: the
TorchScript tracer) turns the program into ONNX in memory with its dims,
and the ONNX importer proves the program's shape rules over the whole
declared domain: a refusal raises with the node, the claim and the
counterexample, and the domain is never narrowed to make it pass. Then,
by default, the eager program runs at the example and at every corner of the domain (each dim at
its smallest and largest size), and each case is compared with the sealed
artifact run by kiln: the cases are stored in the artifact as evidence
(up to a size budget; larger ones are compared and left out), so that
every later `kiln verify` replays them.
"""
import ctypes
import itertools
import os
import re
import warnings

import numpy

from . import _lib, _tensors
from ._replay import replay_case, replay_generation_all
from .contract import Check
from .errors import (ArgumentError, EvidenceError, LimitError, ProgramError, UnsupportedError, from_status,
                     raise_for)
from .program import load

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
        program = load(self.bytes, **options)
        program._bytes = self.bytes
        return program

    def __len__(self):
        return len(self.bytes)

    def __repr__(self):
        return "<kiln.Artifact %d bytes, %d evidence case%s sealed>" % (
            len(self.bytes), sum(1 for c in self.evidence if c["sealed"]),
            "" if sum(1 for c in self.evidence if c["sealed"]) == 1 else "s")


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


def _case_inputs(names, examples, axes, point):
    """The example inputs resized to the dims' sizes at `point`: axes[input][axis](point) each."""
    inputs = {}
    for name, example in zip(names, examples):
        array = example
        for axis, size in axes.get(name, {}).items():
            array = _resize(array, axis, size(point))
        inputs[name] = numpy.ascontiguousarray(array)
    return inputs


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
    if "a declaration (--dim" in message:
        message += " (from Python: give that axis a kiln.Dim in dynamic_shapes)"
    if count:  # the declarations are missing, and some ops are too
        message += "\nalso, %d construct%s cannot be imported:\n  %s" % (
            count, "" if count == 1 else "s",
            "\n  ".join(onnx.kiln_onnx_result_unsupported(result, i).decode() for i in range(count)))
    return _refusal_details(from_status(status, message), message)


def _set_check(builder, kiln_name, check):
    struct = _lib.init(_lib.InputCheck)
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
        case = _lib.EvidenceCase(case_name.encode(), len(kiln_inputs), in_names, in_array, len(outputs), out_names,
                                 out_array, rule_array)
        raise_for(kiln.kiln_builder_add_evidence(builder, ctypes.byref(case), ctypes.byref(error)), error)
    finally:
        for handle in handles:
            kiln.kiln_tensor_free(handle)


def _encode(builder):
    options = _lib.init(_lib.SaveOptions)
    data, size, error = ctypes.c_void_p(), ctypes.c_size_t(), _lib.Error()
    raise_for(_lib.kiln.kiln_builder_encode(builder, ctypes.byref(options), ctypes.byref(data), ctypes.byref(size),
                                            ctypes.byref(error)), error)
    try:
        return ctypes.string_at(data, size.value)
    finally:
        _lib.libc.free(data)


def _case_name(point, kind):
    if not point:
        return kind
    return "%s %s" % (kind, " ".join("%s=%d" % item for item in sorted(point.items())))


def export(program, args=(), kwargs=None, *, dynamic_shapes=None, strict=False, checks=None, evidence="corners",
           output_names=None, name=None, non_strict=False, evidence_bytes=DEFAULT_EVIDENCE_BYTES, rtol=None,
           atol=None, exporter="torch.export", input_names=None, opset=None):
    """Seal a PyTorch program into a kiln Artifact.

    program: an nn.Module, traced here by torch.export.export(program, args,
    kwargs, dynamic_shapes=..., strict=strict), or a torch.export
    ExportedProgram already made (its example inputs are used when args is
    empty; dynamic_shapes then only names its dims). dynamic_shapes:
    {input name: {axis: dim}} (or a list by position), each dim a
    torch.export.Dim (min/max required), a derived dim (2*d, d + 1),
    Dim.AUTO/Dim.STATIC, or a kiln.Dim. The contract is the exported
    program's: every symbol of its range_constraints becomes a kiln dim with
    the same bounds, derived sizes stay expressions over them, and kiln's
    checker proves the graph's shape rules over the whole domain.

    checks: {input name: kiln.Check}. evidence: "corners" (the example and
    every corner of the domain, compared with the eager program and sealed
    up to `evidence_bytes`), "example", None, or a list of cases {"name":
    ..., "inputs": {name: array}} whose expected outputs the eager program
    gives. rtol/atol override the dtype's tolerance. non_strict: kiln's
    checker stores preconditions it cannot prove as runtime guards instead
    of refusing (unrelated to torch's `strict`, which picks its tracer).
    exporter="torchscript" takes torch.onnx's TorchScript tracer instead
    (opset 14; kiln.Dims only; the route of PyTorch 1.13).

    Raises kiln.ArgumentError (a bad declaration: an unbounded dim, a dim on
    no input), kiln.ProgramError (torch specialized or narrowed a declared
    dim, or kiln's checker refused a rule: .dim or .node, .claim,
    .counterexample), kiln.UnsupportedError (every op or construct that
    cannot be translated, or a data-dependent size), or kiln.EvidenceError
    (the case and its error figures)."""
    with _Tracing(program) as module:
        traced = _trace(program, module, args, kwargs, dynamic_shapes, strict, output_names, exporter, input_names,
                        opset)
        program_name = name or getattr(traced, "program_name", None) or type(module).__name__
        return _seal(traced, checks or {}, evidence, program_name, non_strict, evidence_bytes, rtol, atol)


def export_methods(methods, *, name=None, evidence_bytes=DEFAULT_EVIDENCE_BYTES, context=None, state_axis=-2,
                   length_dim="past", generation=None):
    """Seal several PyTorch programs into one kiln Artifact, each a method (format 1.3): e.g. the
    prefill and decode of a generative decoder, over one set of weights.

    methods: {method name: {"program": module or ExportedProgram, and any of export's "args",
    "kwargs", "dynamic_shapes", "strict", "checks", "evidence", "output_names", "non_strict",
    "rtol", "atol", "exporter", "input_names", "opset"}}, in order: the first is the artifact's
    first method. Each is traced, checked and given evidence as export does it; their weights
    join one table by name (a name is one tensor: the same parameter of one module is stored
    once, and two different tensors of one name are refused). The artifact loads as its first
    method's Program, program.methods holding all of them.

    A method's "state": {output name: input name or None} imports caches the program passes in
    and out (a decoder's keys and values) as state tensors kept in the session
    (spec/python-export.md, "Caches as state"): the output, which must be the input
    concatenated with new rows along axis `state_axis`, is no output but the state after the
    run, appended to in place; the input is no input but the rows the state holds, its
    growing axis a dim (`past`) that the state's length binds. None: the method starts the
    state (a prefill), whose length dim `length_dim` is 0 there. Each state is `context` rows
    long (required with "state"), and `past + rows <= context` is declared for every append.
    States of one output name are one state across methods. The evidence of a method that reads
    a state's past rows starts from the example's cache, given as the case's "state:NAME"
    tensor.

    generation: generation cases to seal (spec/compatibility.md §5.1), each {"name", "prompt": token
    ids, "tokens": the ids a greedy generation of the prompt must make (e.g. the eager model's),
    and optionally "margin" (default 1e-4: how far below a step's largest logit the recorded
    token's may be), "prefill" and "decode" (the method names, default "prefill" and "decode")}.
    Each is replayed on this runtime before the artifact is returned, the recorded tokens fed
    back, and kiln.EvidenceError names the first token kiln does not make. Raises as export does,
    and kiln.ArgumentError for a bad method name or argument."""
    if not isinstance(methods, dict) or not methods:
        raise ArgumentError("methods must be a non-empty dict {method name: {'program': ..., ...}}", 1)
    allowed = {"program", "args", "kwargs", "dynamic_shapes", "strict", "checks", "evidence", "output_names",
               "non_strict", "rtol", "atol", "exporter", "input_names", "opset", "state"}
    generation_cases = _generation_cases(generation)  # refused before anything is traced
    parts, root = [], None
    try:
        for method_name, spec in methods.items():
            if not isinstance(spec, dict) or "program" not in spec:
                raise ArgumentError("methods['%s'] must be a dict with a 'program'" % method_name, 1)
            unknown = sorted(set(spec) - allowed)
            if unknown:
                raise ArgumentError("methods['%s'] has unknown keys %s (allowed: %s)" % (
                    method_name, ", ".join(unknown), ", ".join(sorted(allowed))), 1)
            program = spec["program"]
            with _Tracing(program) as module:
                traced = _trace(program, module, spec.get("args", ()), spec.get("kwargs"), spec.get("dynamic_shapes"),
                                spec.get("strict", False), spec.get("output_names"),
                                spec.get("exporter", "torch.export"), spec.get("input_names"), spec.get("opset"))
                program_name = name or getattr(traced, "program_name", None) or type(module).__name__
                states = _States(method_name, spec.get("state"), traced, context, state_axis, length_dim)
                part = _method_part(traced, spec.get("checks") or {}, spec.get("evidence", "corners"),
                                    program_name, spec.get("non_strict", False), evidence_bytes, spec.get("rtol"),
                                    spec.get("atol"), states)
            parts.append((method_name, part))
            error = _lib.Error()
            if root is None:
                root = part.builder
                raise_for(_lib.kiln.kiln_builder_set_method_name(root, str(method_name).encode(),
                                                                 ctypes.byref(error)), error)
            else:
                raise_for(_lib.kiln.kiln_builder_add_method(root, str(method_name).encode(), part.builder,
                                                            ctypes.byref(error)), error)
            part.builder = None  # the program's builder owns it now (or is it)
        for case in generation_cases:
            _add_generation(root, case)
        data = _encode(root)
    finally:
        for _, part in parts:
            if part.builder:
                _lib.kiln.kiln_builder_free(part.builder)
        if root:
            _lib.kiln.kiln_builder_free(root)
    report = []
    artifact = Artifact(data, report)
    for method_name, part in parts:
        for entry in part.report:
            entry["method"] = method_name
        report += part.report
        _check_cases(artifact, part.cases, part.kiln_name, part.output_names, part.report, method_name)
    if generation:
        program = artifact.load(verify="none")
        try:
            replay_generation_all(program)
        finally:
            program.close()
    return artifact


def _generation_cases(generation):
    """The generation cases given to export_methods, checked: [(name, prefill, decode, prompt, tokens, margin)]."""
    if generation is None:
        return []
    if not isinstance(generation, (list, tuple)):
        raise ArgumentError("generation must be a list of {'name', 'prompt', 'tokens', ...} dicts", 1)
    allowed = {"name", "prompt", "tokens", "margin", "prefill", "decode"}
    cases = []
    for i, case in enumerate(generation):
        if not isinstance(case, dict) or not {"name", "prompt", "tokens"} <= set(case):
            raise ArgumentError("generation[%d] must be a dict with 'name', 'prompt' and 'tokens'" % i, 1)
        unknown = sorted(set(case) - allowed)
        if unknown:
            raise ArgumentError("generation[%d] has unknown keys %s (allowed: %s)" % (
                i, ", ".join(unknown), ", ".join(sorted(allowed))), 1)
        lists = []
        for key in ("prompt", "tokens"):
            try:
                values = [int(t) for t in case[key]]
            except (TypeError, ValueError) as exc:
                raise ArgumentError("generation case '%s': %s must be a list of token ids" % (case["name"], key),
                                    1) from exc
            lists.append(values)
        try:
            margin = float(case.get("margin", 1e-4))
        except (TypeError, ValueError) as exc:
            raise ArgumentError("generation case '%s': margin must be a number" % case["name"], 1) from exc
        # No method named: the library's defaults (kiln_generation_case), prefill and decode.
        cases.append((str(case["name"]), case.get("prefill"), case.get("decode"), lists[0], lists[1], margin))
    return cases


def _method_name(method):
    """A method name for C, None (the library's default) when none is given."""
    return None if method is None else str(method).encode()


def _add_generation(builder, case):
    name, prefill, decode, prompt, tokens, margin = case
    prompt_array = (ctypes.c_int64 * max(len(prompt), 1))(*prompt)
    token_array = (ctypes.c_int64 * max(len(tokens), 1))(*tokens)
    c = _lib.GenerationCase(name.encode(), _method_name(prefill), _method_name(decode), prompt_array, len(prompt),
                            token_array, len(tokens), margin)
    error = _lib.Error()
    raise_for(_lib.kiln.kiln_builder_add_generation(builder, ctypes.byref(c), ctypes.byref(error)), error)


class _Tracing:
    """A module in eval mode while it is traced and run for evidence, put back in training mode after."""

    def __init__(self, program):
        self.module = None if type(program).__name__ == "ExportedProgram" else program
        self.was_training = getattr(self.module, "training", False)

    def __enter__(self):
        if hasattr(self.module, "eval"):
            self.module.eval()
        return self.module

    def __exit__(self, *exc):
        if self.was_training:
            self.module.train(True)
        return False


def _trace(program, module, args, kwargs, dynamic_shapes, strict, output_names, exporter, input_names, opset):
    """The program in ONNX with its dims, by the front door `exporter` names."""
    if _lib.onnx is None:
        raise UnsupportedError("this kiln was built without the ONNX importer (protobuf-c)", 15)
    if exporter not in ("torch.export", "torchscript"):
        raise ArgumentError("exporter must be 'torch.export' or 'torchscript', got %r" % (exporter,), 1)
    if exporter == "torch.export":
        try:
            from ._torch_export import from_module_or_program
            import torch.export  # noqa: F401 - PyTorch 1.x has none: the message below says what to do
        except ImportError as exc:
            raise UnsupportedError("kiln.export needs PyTorch 2 with torch.export (%s); on PyTorch 1.13 pass "
                                   "exporter='torchscript'" % exc, 15) from exc
        if input_names is not None:
            raise ArgumentError("input_names is the TorchScript route's; torch.export names the inputs after "
                                "forward's parameters", 1)
        args = tuple(args) if isinstance(args, (list, tuple)) else (args,)
        return from_module_or_program(program, args, kwargs, dynamic_shapes, strict, output_names)
    from ._torchscript_export import from_module
    if module is None or kwargs:
        raise ArgumentError("exporter='torchscript' takes a module and positional example inputs", 1)
    return from_module(module, args, dynamic_shapes, input_names, output_names, opset)


def _check_example_point(traced):
    """The example's own sizes are a point of the domain, else nothing proven about it would hold."""
    for name, size in traced.example_point.items():
        dim = traced.dims[name]
        if size < dim.min or size > dim.max or size % dim.multiple_of:
            raise ArgumentError("the example has %s=%d, outside %r: give an example inside the declared domain" % (
                name, size, dim), 19)


class _MethodPart:
    """One traced program imported, with its checks and evidence: its builder (owned until added to a
    program), the cases compared with it and what they name."""

    def __init__(self, builder, cases, kiln_name, output_names, report):
        self.builder, self.cases, self.kiln_name = builder, cases, kiln_name
        self.output_names, self.report = output_names, report


class _States:
    """A method's caches imported as state: the importer's options, and the traced program as the
    artifact sees it (no state output among its outputs)."""

    def __init__(self, method_name, state, traced, context, axis, length_dim):
        self.pairs, self.reads_past = {}, False
        if not state:
            return
        if not isinstance(state, dict):
            raise ArgumentError("methods['%s']['state'] must be a dict {output name: input name or None}" %
                                method_name, 1)
        if context is None or int(context) < 1:
            raise ArgumentError("a method with 'state' needs context=N, the rows each state holds (e.g. 2048)", 1)
        for output, source in state.items():
            if output not in traced.output_names:
                raise ArgumentError("methods['%s']['state'] names output '%s', which is not one (outputs: %s)" % (
                    method_name, output, ", ".join(traced.output_names)), 1)
            if source is not None and source not in traced.names:
                raise ArgumentError("methods['%s']['state']['%s'] names input '%s', which is not one (inputs: %s)"
                                    % (method_name, output, source, ", ".join(traced.names)), 1)
        self.pairs = dict(state)
        self.context, self.axis, self.length_dim = int(context), int(axis), length_dim
        self.reads_past = any(source is not None for source in state.values())

    def __bool__(self):
        return bool(self.pairs)

    def set_options(self, options, keep):
        if not self.pairs:
            return
        states = (_lib.OnnxState * len(self.pairs))(*(
            _lib.OnnxState(source.encode() if source else None, output.encode(), None)
            for output, source in self.pairs.items()))
        keep.append(states)
        options.states = ctypes.cast(states, ctypes.POINTER(_lib.OnnxState))
        options.state_count = len(self.pairs)
        options.state_capacity = self.context
        options.state_axis = self.axis
        options.state_length_dim = self.length_dim.encode()

    def evidence_names(self):
        """{cache input: "state:NAME"}: how an evidence case gives the rows a state starts with."""
        return {source: "state:" + re.sub(r"[^A-Za-z0-9_.-]", "_", output)
                for output, source in self.pairs.items() if source is not None}

    def traced_view(self, traced):
        """`traced` without the state outputs (what evidence compares)."""
        if not self.pairs:
            return traced
        from ._torch_export import Traced
        keep = [i for i, n in enumerate(traced.output_names) if n not in self.pairs]
        eager = traced.eager
        view = Traced(traced.model, traced.dims, traced.names, [traced.output_names[i] for i in keep],
                      traced.examples, traced.axes, traced.example_point,
                      lambda inputs: [eager(inputs)[i] for i in keep])
        view.first_outputs = [traced.first_outputs[i] for i in keep]
        return view


def _method_part(traced, checks, evidence, program_name, non_strict, evidence_bytes, rtol, atol, states=None):
    """Import the traced ONNX model over its dims and add the checks and the evidence."""
    onnx = _lib.onnx
    _check_example_point(traced)
    dims = traced.dims
    model = traced.model
    onnx_dims = (_lib.OnnxDim * max(len(dims), 1))(
        *(_lib.OnnxDim(d.name.encode(), d.min, d.max, d.multiple_of) for d in dims.values()))
    options = _lib.init(_lib.OnnxOptions)
    options.program_name = program_name.encode()
    options.dims = ctypes.cast(onnx_dims, ctypes.POINTER(_lib.OnnxDim))
    options.dim_count = len(dims)
    options.non_strict = bool(non_strict)
    keep = []
    if states:
        states.set_options(options, keep)
        traced = states.traced_view(traced)
    skipped = {}
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
        # A cache input is a state's rows when the case starts (spec/format.md §7.8.3).
        kiln_name.update(states.evidence_names() if states else {})
        for input_name, check in checks.items():
            if input_name not in kiln_name:
                raise ArgumentError("checks names '%s', which is not an input (inputs: %s)" % (
                    input_name, ", ".join(kiln_name)), 21)
            if not isinstance(check, Check):
                raise ArgumentError("checks['%s'] must be a kiln.Check" % input_name, 1)
            _set_check(builder, kiln_name[input_name], check)
        too_large = _corners_too_large(builder, dims, traced.example_point) if evidence == "corners" else {}
        cases = _evidence_cases(traced, evidence, too_large)
        report = _seal_cases(builder, cases, kiln_name, traced.output_names, evidence_bytes, rtol, atol)
        report += [{"name": name, "sealed": False, "skipped": reason, "results": None}
                   for name, reason in list(too_large.items()) + list(skipped.items())]
        return _MethodPart(onnx.kiln_onnx_result_take_builder(result), cases, kiln_name, traced.output_names,
                           report)
    finally:
        if result.value:
            onnx.kiln_onnx_result_free(result)


def _seal(traced, checks, evidence, program_name, non_strict, evidence_bytes, rtol, atol):
    """One program: its method part, sealed, and its cases checked against the artifact."""
    part = _method_part(traced, checks, evidence, program_name, non_strict, evidence_bytes, rtol, atol)
    try:
        data = _encode(part.builder)
    finally:
        _lib.kiln.kiln_builder_free(part.builder)
    artifact = Artifact(data, part.report)
    _check_cases(artifact, part.cases, part.kiln_name, part.output_names, part.report)
    return artifact


def _corners_too_large(builder, dims, example_point):
    """{case name: reason} of the corners whose arena is over the default session limit (a
    sequence length of 2048 at batch 64 puts gigabytes in an attention layer's arena): they are
    neither run eagerly nor sealed, and each is named in a warning. Asked of the program sealed
    without evidence, before any eager run."""
    program = Artifact(_encode(builder), []).load(verify="none")
    skipped = {}
    try:
        for point in _corners(dims):
            if point == example_point:
                continue
            try:
                program.session_arena(dims={name: (size, size) for name, size in point.items()})
            except LimitError as exc:
                name = _case_name(point, "corner")
                skipped[name] = exc.message
                warnings.warn("kiln.export: evidence case '%s' left out: %s" % (name, exc.message))
    finally:
        program.close()
    return skipped


def _evidence_cases(traced, evidence, too_large):
    """[(name, {input name: array}, [expected output arrays])] as `evidence` asks (without the
    corners in `too_large`)."""
    if evidence is None or evidence is False:
        return []
    names, examples = traced.names, traced.examples
    cases = [("example", dict(zip(names, examples)), traced.first_outputs)]
    if evidence == "example":
        return cases
    if evidence == "corners":
        seen = {tuple(sorted(traced.example_point.items()))}
        for point in _corners(traced.dims):
            key = tuple(sorted(point.items()))
            if key in seen or _case_name(point, "corner") in too_large:
                continue
            seen.add(key)
            inputs = _case_inputs(names, examples, traced.axes, point)
            cases.append((_case_name(point, "corner"), inputs, traced.eager(inputs)))
        return cases
    if isinstance(evidence, (list, tuple)):
        out = []
        for i, case in enumerate(evidence):
            inputs = {n: numpy.ascontiguousarray(numpy.asarray(v)) for n, v in case["inputs"].items()}
            expected = case.get("outputs")
            expected = list(expected.values()) if isinstance(expected, dict) else expected
            out.append((case.get("name", "case %d" % i), inputs,
                        expected if expected is not None else traced.eager(inputs)))
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


def _check_cases(artifact, cases, kiln_name, output_names, report, method=None):
    """Replay the sealed cases from the artifact (of `method`: its name; None the first); run the others in
    sessions; any mismatch raises."""
    if not cases:
        return
    program = artifact.load(verify="none")
    if method is not None:
        program = program.methods[method]
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
                    state = program.new_state() if program.state_names else None
                    for name in [n for n in kiln_inputs if n.startswith("state:")]:
                        state.write(name[len("state:"):], kiln_inputs.pop(name))
                    session = program.session(fit=kiln_inputs, state=state)
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
