"""kiln.export's front door for PyTorch 2: a torch.export ExportedProgram and its contract.

The route (spec/python-export.md says why): torch.export.export traces the
module (or the user hands in the ExportedProgram); its range_constraints are
the contract. Each root symbol becomes a kiln dim with the same bounds,
named after the user's Dim, and each derived size (`batch + 1`, `2*batch`)
stays that expression over it. torch.onnx.export translates the program's
core ATen graph to ONNX opset 18; its dim_params are torch's symbols (s6,
`s6 + 1`), renamed here to the dims' names, and kiln's importer re-proves
every shape rule over the whole domain. Nothing torch suggests is applied:
a declared dim that torch specialized or narrowed is refused with the dim,
the rule and a counterexample.
"""
import contextlib
import io
import logging
import re
import sys
import warnings

import numpy

from .contract import Dim
from .errors import ArgumentError, ProgramError, UnsupportedError

OPSET = 18

# A torch symbol as it appears in a dim_param or a range constraint: s6, s27 (backed), u0 (unbacked).
_SYMBOL = re.compile(r"\b([su]\d+)\b")


@contextlib.contextmanager
def quiet_torch():
    """Silence torch's loggers and warnings while it traces: on a refused export torch._guards
    logs pages of internal stack before raising, and the ONNX exporter warns of missing
    torchvision; kiln raises one error of its own that says what went wrong."""
    saved = {}
    for name in list(logging.root.manager.loggerDict) + ["torch"]:
        if name == "torch" or name.startswith("torch."):
            logger = logging.getLogger(name)
            saved[name] = logger.level
            logger.setLevel(logging.CRITICAL + 1)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)


class Traced:
    """What a front door hands to the sealing pipeline: the ONNX model, the dims it is declared
    over, the inputs and outputs by name, the example, and the eager program for evidence."""

    def __init__(self, model, dims, names, output_names, examples, axes, example_point, eager):
        self.model = model                # ONNX ModelProto bytes, dim_params named after `dims`
        self.dims = dims                  # {name: kiln.Dim}: the root dims, as torch bounded them
        self.names = names                # input names, in the program's order
        self.output_names = output_names
        self.examples = examples          # [numpy array] per input
        self.axes = axes                  # {input: {axis: size(point)}}: the dynamic axes' sizes at a point
        self.example_point = example_point
        self.eager = eager                # {input name: array} -> [output arrays]


def _torch():
    import torch
    import torch.export  # noqa: F401 - torch 1.x has no torch.export: the TorchScript route is the fallback
    return torch


def _dim_hint(value):
    """'auto' / 'static' / 'dynamic' for torch's Dim.AUTO, Dim.STATIC, Dim.DYNAMIC (hints, not named dims)."""
    kind = getattr(value, "type", None)
    name = getattr(kind, "name", None)
    return name.lower() if name in ("AUTO", "STATIC", "DYNAMIC") else None


def _torch_spec(value, where, torch):
    """One axis of dynamic_shapes as torch.export takes it: a kiln.Dim becomes torch.export.Dim
    (multiple_of=k becomes k * Dim(name + '_over_k')); torch's own Dims and hints pass through.
    An unbounded named Dim is refused here, before tracing."""
    Dimension = torch.export.Dim
    if value is None or _dim_hint(value) is not None or isinstance(value, int):
        return value
    if isinstance(value, Dim):
        if value.multiple_of == 1:
            return Dimension(value.name, min=value.min, max=value.max)
        k = value.multiple_of
        root = Dimension("%s_over_%d" % (value.name, k), min=-(-value.min // k), max=value.max // k)
        return k * root
    root = getattr(value, "root", None)
    named = root if root is not None else value
    name = getattr(named, "__name__", None)
    high = getattr(named, "max", None)
    if name is None or high is None:
        raise ArgumentError("%s: %r is not a dim: give torch.export.Dim(name, min=, max=), a derived dim, "
                            "Dim.AUTO/Dim.STATIC or kiln.Dim" % (where, value), 1)
    if high >= (1 << 62):
        raise ArgumentError("%s: Dim '%s' has no upper bound; kiln seals bounded dims, so give it one: "
                            "Dim('%s', min=%d, max=...)" % (where, name, name, getattr(named, "min", 0) or 0), 1)
    return value


def _kiln_or_torch_dim(value, where, torch):
    """An axis spec as given when it is torch's (Dim, derived dim, hint), an int or None; another
    library's dim object (name, min, max, multiple_of) as a kiln.Dim."""
    from torch.export import dynamic_shapes as torch_shapes
    torch_kinds = tuple(getattr(torch_shapes, kind) for kind in ("Dim", "_DerivedDim", "_DimHint")
                        if hasattr(torch_shapes, kind))
    if value is None or isinstance(value, (int, Dim) + torch_kinds) or _dim_hint(value) is not None:
        return value
    try:
        return Dim.of(value)
    except (TypeError, ValueError) as exc:
        raise ArgumentError("%s: %s" % (where, exc), 1) from exc


def check_example_sizes(declared, parameters, args, kwargs):
    """Every declared axis of the example inside its dim's bounds (torch's own message names
    its internal range, which starts at 2)."""
    for input_name, axes in declared.items():
        position = parameters.index(input_name)
        example = args[position] if position < len(args) else (kwargs or {}).get(input_name)
        shape = getattr(example, "shape", None)
        if shape is None:
            continue
        for axis, value in axes.items():
            dim = value if isinstance(value, Dim) else None
            if dim is None and getattr(value, "root", None) is None and _dim_hint(value) is None and \
                    getattr(value, "__name__", None) is not None:
                dim = Dim(value.__name__, min=int(value.min), max=int(value.max))
            if dim is None or not -len(shape) <= axis < len(shape):
                continue
            size = int(shape[axis])
            if size < dim.min or size > dim.max or size % dim.multiple_of:
                raise ArgumentError("the example input '%s' has %d on axis %d, outside %r: give an example "
                                    "inside the declared domain" % (input_name, size, axis, dim), 19)


def _declared_name(value):
    """The user's name for the root dim of an axis spec, or None (a hint, a constant, nothing)."""
    if isinstance(value, Dim):
        return value.name if value.multiple_of == 1 else "%s_over_%d" % (value.name, value.multiple_of)
    root = getattr(value, "root", None)
    return getattr(root if root is not None else value, "__name__", None)


def _declared_bounds(value):
    """(min, max) the user declared for an axis spec's root dim, or None where torch picks them."""
    if isinstance(value, Dim):
        if value.multiple_of == 1:
            return value.min, value.max
        k = value.multiple_of
        return -(-value.min // k), value.max // k
    root = getattr(value, "root", None)
    named = root if root is not None else value
    if _dim_hint(named) is not None:
        low, high = getattr(named, "min", None), getattr(named, "max", None)
        return None if low is None and high is None else (low, high)
    low, high = getattr(named, "min", None), getattr(named, "max", None)
    return None if low is None or high is None else (int(low), int(high))


class Inputs:
    """The program's inputs: the example (args, kwargs) as a tree, its tensor leaves by name."""

    def __init__(self, args, kwargs, names, torch):
        from torch.utils import _pytree as pytree
        self.pytree = pytree
        leaves, self.spec = pytree.tree_flatten((args, kwargs))
        self.leaves = leaves
        self.tensor_positions = [i for i, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]
        if len(self.tensor_positions) != len(names):
            raise ProgramError("the exported program has %d tensor inputs but the example holds %d tensors" % (
                len(names), len(self.tensor_positions)), 16)
        self.names = names
        self.torch = torch

    def examples(self):
        return [self.leaves[i].detach().cpu().numpy() for i in self.tensor_positions]

    def call(self, function, arrays):
        """function(*args, **kwargs) with the example's tree, its tensors replaced by `arrays` (by name)."""
        leaves = list(self.leaves)
        for name, position in zip(self.names, self.tensor_positions):
            leaves[position] = self.torch.from_numpy(numpy.array(arrays[name], copy=True))
        args, kwargs = self.pytree.tree_unflatten(leaves, self.spec)
        return function(*args, **kwargs)


def _parameter_names(module, args, kwargs):
    import inspect
    forward = getattr(module, "forward", module)
    parameters = [p.name for p in inspect.signature(forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return parameters[:len(args)] + [k for k in kwargs if k not in parameters[:len(args)]]


def _torch_dynamic_shapes(dynamic_shapes, parameters, torch):
    """dynamic_shapes with kiln.Dims turned into torch's, checked: every key an input, every named
    dim bounded. Returns (torch's dynamic_shapes, {input: {axis: the user's spec}})."""
    if dynamic_shapes is None:
        return None, {}
    if isinstance(dynamic_shapes, (list, tuple)):
        dynamic_shapes = {parameters[i]: spec for i, spec in enumerate(dynamic_shapes) if i < len(parameters)}
    converted, declared = {}, {}
    for input_name, spec in dynamic_shapes.items():
        if input_name not in parameters:
            raise ArgumentError("dynamic_shapes names '%s', which is not an input (inputs: %s)" % (
                input_name, ", ".join(parameters)), 21)
        if spec is None or not isinstance(spec, (dict, list, tuple)):
            converted[input_name] = spec
            continue
        items = [(axis, _kiln_or_torch_dim(value, "dynamic_shapes['%s'][%d]" % (input_name, axis), torch))
                 for axis, value in (spec.items() if isinstance(spec, dict) else enumerate(spec))]
        axes = {}
        for axis, value in items:
            axes[axis] = _torch_spec(value, "dynamic_shapes['%s'][%d]" % (input_name, axis), torch)
        declared[input_name] = dict(items)
        converted[input_name] = axes if isinstance(spec, dict) else [axes.get(i) for i in range(len(spec))]
    return {p: converted.get(p) for p in parameters}, declared


def trace(module, args, kwargs, dynamic_shapes, strict, torch):
    """torch.export.export(module, ...), its failures as kiln errors. Returns (ep, declared axes)."""
    parameters = _parameter_names(module, args, kwargs)
    shapes, declared = _torch_dynamic_shapes(dynamic_shapes, parameters, torch)
    check_example_sizes(declared, parameters, args, kwargs)
    # On a failed trace torch prints the partial graph to stderr before raising; kiln's error
    # says what failed, so that text is dropped (what the module prints itself while traced
    # successfully is passed on).
    printed = io.StringIO()
    with quiet_torch(), contextlib.redirect_stderr(printed):
        try:
            ep = torch.export.export(module, tuple(args), kwargs or None, dynamic_shapes=shapes, strict=strict)
        except Exception as exc:  # torch raises many kinds; each becomes the kiln error that says what to fix
            raise _trace_error(exc, declared, torch) from exc
    sys.stderr.write(printed.getvalue())
    return ep, declared


def _first_paragraph(text):
    return text.strip().split("\n\n")[0].strip()


def _user_frame(text):
    """The 'File "...", line N' of the user's own code in a torch message (not torch's), or ''."""
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\w+)\n\s*(.*)', text)
    for path, line, function, code in reversed(frames):
        if "/torch/" not in path:
            return " at %s:%s (%s: %s)" % (path, line, function, code.strip())
    return ""


def _trace_error(exc, declared, torch):
    text = str(exc)
    kind = type(exc).__name__
    if "Constraints violated" in text:
        return _constraint_error(text, declared)
    if kind in ("Unsupported", "GuardOnDataDependentSymNode", "UserError") and \
            ("data-dependent" in text.lower() or "data dependent" in text.lower()):
        return UnsupportedError(
            "the program's control flow or a size depends on tensor values, which kiln's contract cannot "
            "bound%s: %s. Make it branch-free (torch.where, torch.cond) or give the size as an input's dim"
            % (_user_frame(text), _first_paragraph(text).splitlines()[0]), 15, [_first_paragraph(text)])
    if kind == "UserError":
        return ArgumentError("torch.export refused the call: %s" % _first_paragraph(text), 1)
    return UnsupportedError("torch.export cannot trace this module (%s)%s: %s" % (
        kind, _user_frame(text), _first_paragraph(text).splitlines()[0] if text else kind), 15,
        [_first_paragraph(text)])


def _axis_of(name, declared):
    for input_name, axes in declared.items():
        for axis, value in axes.items():
            if _declared_name(value) == name:
                return input_name, axis, _declared_bounds(value)
    return None, None, None


def _counterexample(name, declared, outside):
    """A size of dim `name` in its declared range for which `outside(size)` holds, or None."""
    _, _, bounds = _axis_of(name, declared)
    if not bounds or None in bounds:
        return None
    for size in (bounds[0], bounds[1]) + tuple(range(bounds[0] + 1, min(bounds[1], bounds[0] + 64))):
        if outside(size):
            return size
    return None


def _constraint_error(text, declared):
    """torch found the program valid for less than the declared domain. Refuse, per dim, with the
    rule torch guarded and a size of the declared domain it fails at; never apply the fix."""
    problems, counterexamples, names = [], [], []
    where = _user_frame(text)
    fixes = dict(re.findall(r"^\s+(\w+) = (.+)$", text.split("Suggested fixes:")[-1], re.M)) \
        if "Suggested fixes:" in text else {}
    for line in re.findall(r"^\s+- (.+)$", text, re.M):
        match = re.search(r"marked (\w+) as dynamic but your code specialized it to be a constant \((-?\d+)\)", line)
        if match:
            name, constant = match.group(1), int(match.group(2))
            names.append(name)
            size = _counterexample(name, declared, lambda s, c=constant: s != c)
            problems.append("torch.export specialized dim '%s'%s to the constant %d%s" % (
                name, _described(name, declared), constant, where))
            if size is not None:
                counterexamples.append("%s=%d" % (name, size))
            continue
        match = re.search(r"The values of (\w+) = .+? and (\w+) = .+? must always be equal", line)
        if match:
            first, second = match.group(1), match.group(2)
            names += [first, second]
            problems.append("torch.export holds the program only where dim '%s'%s equals dim '%s'%s%s" % (
                first, _described(first, declared), second, _described(second, declared), where))
            pair = _unequal_pair(first, second, declared)
            if pair:
                counterexamples.append("%s=%d, %s=%d" % (first, pair[0], second, pair[1]))
            continue
        match = re.search(r"Not all values of (\w+) = (.+?) in the specified range (.+?) satisfy the generated "
                          r"guard (.+)$", line)
        if match:
            name, guard = match.group(1), match.group(4).strip()
            names.append(name)
            fix = fixes.get(name, "")
            low = re.search(r"min=(-?\d+)", fix)
            high = re.search(r"max=(-?\d+)", fix)
            low, high = int(low.group(1)) if low else None, int(high.group(1)) if high else None
            size = _counterexample(name, declared, lambda s: (low is not None and s < low) or
                                   (high is not None and s > high))
            problems.append("torch.export holds dim '%s'%s only where %s" % (name, _described(name, declared),
                                                                            _readable_guard(guard)))
            if size is not None:
                counterexamples.append("%s=%d" % (name, size))
            continue
        problems.append(line.strip())
    for name, fix in fixes.items():
        if name not in names and re.fullmatch(r"[\w +*/-]+", fix.strip()):
            names.append(name)
            problems.append("torch.export found dim '%s'%s always equal to %s" % (name, _described(name, declared),
                                                                                 fix.strip()))
    message = "; ".join(problems) or _first_paragraph(text)
    if counterexamples:
        message += "; counterexample: %s" % ", ".join(counterexamples)
    message += (". kiln seals the declared domain or nothing: change the program so that it holds for every "
                "declared size, or declare the smaller domain yourself")
    exc = ProgramError(message, 16)
    exc.dim = names[0] if names else None
    exc.claim = problems[0] if problems else message
    exc.counterexample = ", ".join(counterexamples) or None
    return exc


def _readable_guard(guard):
    """A guard of torch's in the user's terms: L['x'].size()[0] -> x.shape[0]."""
    guard = re.sub(r"L\['flat_args'\]\[(\d+)\]\.size\(\)\[(\d+)\]", r"input#\1.shape[\2]", guard)
    return re.sub(r"L\['(\w+)'\]\.size\(\)\[(\d+)\]", r"\1.shape[\2]", guard)


def _unequal_pair(first, second, declared):
    """Sizes (a, b) of two declared dims with a != b, neither 1 where the domain allows (a size 1
    may broadcast), or None."""
    bounds = [_axis_of(name, declared)[2] for name in (first, second)]
    if not all(bounds) or None in bounds[0] + bounds[1]:
        return None
    (low_a, high_a), (low_b, high_b) = bounds
    for a in (max(low_a, 2), high_a, low_a):
        for b in (max(low_b, 2), high_b, max(low_b, 2) + 1, low_b):
            if a != b and low_a <= a <= high_a and low_b <= b <= high_b:
                return a, b
    return None


def _described(name, declared):
    input_name, axis, bounds = _axis_of(name, declared)
    if input_name is None:
        return ""
    if bounds and None not in bounds:
        return " (input '%s' axis %d, declared %d..%d)" % (input_name, axis, bounds[0], bounds[1])
    return " (input '%s' axis %d)" % (input_name, axis)


def _unbacked_error(ep, symbols):
    """A data-dependent size (an unbacked symbol): name the op that makes it and where."""
    for node in ep.graph.nodes:
        value = node.meta.get("val")
        shape = getattr(value, "shape", None)
        if shape is None:
            continue
        found = {str(s) for s in shape if not isinstance(s, int)} & symbols or \
            {m for s in shape if not isinstance(s, int) for m in _SYMBOL.findall(str(s))} & symbols
        if found:
            trace = node.meta.get("stack_trace") or ""
            return UnsupportedError(
                "%s%s gives a tensor whose size depends on tensor values (%s): kiln's contract bounds every "
                "size by the declared dims. Give that size as an input's dim, or pad to a bounded size" % (
                    node.target, _user_frame(trace), ", ".join(sorted(found))), 15, [str(node.target)])
    return UnsupportedError("the program has sizes that depend on tensor values (%s)" % ", ".join(sorted(symbols)),
                            15, sorted(symbols))


def contract(ep, declared, input_names):
    """The kiln dims of the ExportedProgram: {symbol: kiln.Dim}, {input: {axis: sympy expr}}.
    Refuses unbounded dims, data-dependent sizes, and declared dims torch specialized or narrowed."""
    import sympy
    ranges = {}
    unbacked = set()
    for expr, bounds in ep.range_constraints.items():
        if not getattr(expr, "is_Symbol", False):
            continue
        if str(expr).startswith("u"):
            unbacked.add(str(expr))
            continue
        ranges[expr] = bounds
    if unbacked:
        raise _unbacked_error(ep, unbacked)
    placeholders = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    recovered = _traced_dim_names(placeholders, input_names)
    names, axes, scaled, wanted = {}, {}, {}, {}
    for input_name in input_names:
        value = placeholders[input_name].meta.get("val")
        spec = declared.get(input_name, {})
        shape = list(getattr(value, "shape", ()))
        axes[input_name] = {}
        for axis, size in enumerate(shape):
            user = spec.get(axis, spec.get(axis - len(shape)))
            if isinstance(size, int):
                hint = _dim_hint(user)
                if user is not None and not isinstance(user, int) and hint != "static" and \
                        (hint is None or _declared_bounds(user) is not None):
                    name = _declared_name(user) or "%s_dim%d" % (input_name, axis)
                    raise _specialized(name, input_name, axis, size, _declared_bounds(user))
                continue
            expr = size.node.expr
            axes[input_name][axis] = expr
            free = list(expr.free_symbols)
            bounds = _declared_bounds(user) if user is not None and not isinstance(user, int) else None
            if bounds is not None and None not in bounds and len(free) == 1 and \
                    (expr == free[0] or (isinstance(user, Dim) and expr == user.multiple_of * free[0])):
                wanted.setdefault(free[0], bounds)  # Dim.AUTO(min=, max=) too: torch may narrow it silently
            if isinstance(user, Dim) and user.multiple_of > 1 and len(free) == 1 and \
                    expr == user.multiple_of * free[0]:
                scaled[free[0]] = user  # the user's kiln.Dim stands for multiple_of * root
            if len(free) == 1 and free[0] not in names:
                declared_name = _declared_name(user) if user is not None and _dim_hint(user) is None else None
                declared_name = declared_name or recovered.get((input_name, axis))
                if declared_name is not None or expr == free[0]:
                    names[free[0]] = declared_name or "%s_dim%d" % (input_name, axis)
    for symbol in ranges:
        names.setdefault(symbol, str(symbol))
    dims = {}
    for symbol, bounds in ranges.items():
        name = names[symbol]
        low, high = bounds.lower, bounds.upper
        input_name, axis = _first_axis(axes, symbol)
        if not getattr(high, "is_finite", True) or int(high) >= (1 << 62):
            raise ArgumentError("dim '%s'%s is unbounded in the exported program (%s..inf): kiln seals bounded "
                                "dims; declare it Dim('%s', min=%s, max=...) in dynamic_shapes" % (
                                    name, _where(input_name, axis), low, name, low), 1)
        low, high = int(low), int(high)
        want = wanted.get(symbol) or _user_bounds(declared, name)
        if want is not None and None not in want and low == 2 and int(want[0]) < 2 and high == int(want[1]):
            # torch takes a backed size to be at least 2 (it specializes 0 and 1) where no guard
            # says so; the declared smaller sizes stay, proven by kiln's checker and run as evidence.
            low = int(want[0])
        if want is not None and None not in want and (low, high) != (int(want[0]), int(want[1])):
            exc = ProgramError(
                "torch.export narrowed dim '%s'%s from the declared %d..%d to %d..%d (a guard of the program); "
                "counterexample: %s=%d. kiln seals the declared domain or nothing: change the program so that it "
                "holds for every declared size, or declare %d..%d yourself" % (
                    name, _where(input_name, axis), want[0], want[1], low, high, name,
                    want[1] if high < want[1] else want[0], low, high), 16)
            exc.dim, exc.claim = name, "%s in %d..%d" % (name, low, high)
            exc.counterexample = "%s=%d" % (name, want[1] if high < want[1] else want[0])
            raise exc
        dims[symbol] = scaled.get(symbol) or Dim(name, min=low, max=high)
    scales = {symbol: dim.multiple_of for symbol, dim in scaled.items()}
    return dims, scales, axes, sympy


def _traced_dim_names(placeholders, input_names):
    """{(input, axis): the user's Dim name} as the tracer recorded it, for an ExportedProgram handed
    in without its dynamic_shapes: torch's shape environment maps each size's source
    (L['x'].size()[0] non-strict, L['flat_args'][0].size()[0] strict) to the Dim's name. Empty
    where torch kept no environment (a program loaded by torch.export.load): the dims are then
    named <input>_dim<axis>."""
    found = {}
    for position, input_name in enumerate(input_names):
        shape = getattr(placeholders[input_name].meta.get("val"), "shape", ())
        for axis, size in enumerate(shape):
            if isinstance(size, int):
                continue
            environment = getattr(size.node, "shape_env", None)
            debug_names = getattr(environment, "source_name_to_debug_name", None) or {}
            for source in ("L['%s'].size()[%d]" % (input_name, axis), "L['flat_args'][%d].size()[%d]" % (position, axis)):
                name = debug_names.get(source)
                if name is not None and re.fullmatch(r"[A-Za-z_]\w*", name):
                    found[(input_name, axis)] = name
                    break
    return found


def _first_axis(axes, symbol):
    for input_name, by_axis in axes.items():
        for axis, expr in by_axis.items():
            if symbol in expr.free_symbols:
                return input_name, axis
    return None, None


def _where(input_name, axis):
    return "" if input_name is None else " (input '%s' axis %d)" % (input_name, axis)


def _user_bounds(declared, name):
    for axes in declared.values():
        for value in axes.values():
            if _declared_name(value) == name:
                return _declared_bounds(value)
    return None


def _specialized(name, input_name, axis, size, bounds):
    other = None
    if bounds and None not in bounds:
        other = bounds[0] if bounds[0] != size else bounds[1]
    message = "torch.export specialized dim '%s' (input '%s' axis %d%s) to the constant %d" % (
        name, input_name, axis, ", declared %d..%d" % tuple(bounds) if bounds and None not in bounds else "", size)
    if other is not None and other != size:
        message += "; counterexample: %s=%d" % (name, other)
    message += (". kiln seals the declared domain or nothing: change the program so that it holds for every "
                "declared size, or declare the axis static")
    exc = ProgramError(message, 16)
    exc.dim, exc.claim = name, "%s == %d" % (name, size)
    exc.counterexample = None if other is None or other == size else "%s=%d" % (name, other)
    return exc


def _unsupported_ops(ep):
    """Every ATen op of the program that torch's ONNX exporter has no translation for, with where
    the user's code calls it (the exporter itself stops at the first)."""
    try:
        from torch.onnx._internal.exporter import _decomp, _fx_passes, _registration
        registry = _registration.ONNXRegistry.from_torchlib()
        table = _decomp.create_onnx_friendly_decomposition_table(_decomp.get_onnx_implemented_overloads(registry))
        program = ep.run_decompositions(table)
        # The exporter drops assertions (_assert_tensor_metadata, _assert_scalar, ...) before it
        # translates: they have no translation and need none.
        _fx_passes.remove_assertion_nodes(program.graph_module)
    except Exception:  # a private API of torch's: when it moves, the exporter's own message stands
        return []
    found = {}
    for node in program.graph.nodes:
        if node.op == "call_function" and hasattr(node.target, "_schema") and not registry.is_registered(node.target):
            found.setdefault(str(node.target), _user_frame(node.meta.get("stack_trace") or ""))
    return ["%s%s" % (op, where) for op, where in sorted(found.items())]


def to_onnx(ep, torch):
    """torch.onnx.export of the ExportedProgram at opset 18 (a ModelProto); every ATen op it cannot
    translate is listed at once."""
    # Without gradients, as torch.onnx's own examples run it: with them on, its graph
    # simplification can fail on a view it would otherwise translate (T5's attention reshape).
    with quiet_torch(), torch.no_grad():
        try:
            return torch.onnx.export(ep, dynamo=True, opset_version=OPSET, verbose=False).model_proto
        except Exception as exc:  # ConversionError and its causes
            text = str(exc)
            ops = _unsupported_ops(ep) if "No ONNX function found" in text else []
            if ops:
                raise UnsupportedError("%d op%s of the exported program cannot be translated to ONNX opset %d:\n  %s"
                                       % (len(ops), "" if len(ops) == 1 else "s", OPSET, "\n  ".join(ops)),
                                       15, ops) from exc
            summary = text.split("## Exception summary")[-1].strip().splitlines()
            raise UnsupportedError("torch.onnx.export cannot translate the exported program: %s" % (
                next((line for line in summary if line.strip()), text)), 15, [text]) from exc


def rename(model, symbol_names, output_names):
    """Name the model's dim_params after the dims, `symbol_names` {symbol: (dim name, scale)}
    (torch's s6 -> batch, `s6 + 1` -> `batch + 1`; for the root r of a multiple_of-4 dim n,
    `4*r` -> n and r -> `(n / 4)`)
    and its outputs `output_names`: the value is renamed where it is made and used, or, where
    that cannot be done (the output is an input or another output, or a subgraph may use it),
    copied by an Identity node."""
    def renamed(text):
        for symbol, (name, scale) in symbol_names.items():
            if scale > 1:  # the root of a kiln.Dim with multiple_of: scale*root is the dim itself
                text = re.sub(r"\b%d\*%s\b" % (scale, symbol), name, text)
        return _SYMBOL.sub(lambda match: kiln_size(match.group(1)), text)

    def kiln_size(symbol):
        if symbol not in symbol_names:
            return symbol
        name, scale = symbol_names[symbol]
        return name if scale == 1 else "(%s / %d)" % (name, scale)

    graph = model.graph
    for value in list(graph.input) + list(graph.output) + list(graph.value_info):
        for dim in value.type.tensor_type.shape.dim:
            if dim.HasField("dim_param"):
                dim.dim_param = renamed(dim.dim_param)
    has_subgraphs = any(attribute.HasField("g") or len(attribute.graphs)
                        for node in graph.node for attribute in node.attribute)
    taken = {v.name for v in graph.input} | {t.name for t in graph.initializer}
    produced = [o.name for o in graph.output]

    def rename_value(old, new):
        for node in graph.node:
            node.input[:] = [new if v == old else v for v in node.input]
            node.output[:] = [new if v == old else v for v in node.output]
        for value in graph.value_info:
            if value.name == old:
                value.name = new

    for output, name in zip(graph.output, output_names):
        old = output.name
        if old == name:
            continue
        used = {v for node in graph.node for v in list(node.input) + list(node.output)}
        if name in used and name not in produced:  # an inner value has the name: it takes another
            fresh = name + "_inner"
            while fresh in used or fresh in taken:
                fresh += "_"
            rename_value(name, fresh)
        if has_subgraphs or old in taken or produced.count(old) > 1:
            node = graph.node.add()
            node.op_type, node.name = "Identity", "kiln_output_%s" % name
            node.input.append(old)
            node.output.append(name)
        else:
            rename_value(old, name)
        output.name = name
    return model


def output_names(result, given, input_names, torch):
    """The outputs' names: `given`; else the keys of a dict or ModelOutput result; else y (y0, y1, ...)."""
    from torch.utils import _pytree as pytree
    paths = [(path, leaf) for path, leaf in pytree.tree_flatten_with_path(result)[0] if isinstance(leaf, torch.Tensor)]
    if given is not None:
        names = list(given)
        if len(names) != len(paths):
            raise ArgumentError("%d output name%s for %d outputs" % (len(names), "" if len(names) == 1 else "s",
                                                                     len(paths)), 1)
    else:
        keys = [path[0].key if len(path) == 1 and hasattr(path[0], "key") else
                path[0].name if len(path) == 1 and hasattr(path[0], "name") else None for path, _ in paths]
        if len(paths) > 1 and all(isinstance(k, str) and re.fullmatch(r"[A-Za-z_]\w*", k) for k in keys) \
                and len(set(keys)) == len(keys):
            names = keys
        else:
            base = "y"
            while True:
                names = [base] if len(paths) == 1 else ["%s%d" % (base, i) for i in range(len(paths))]
                if not set(names) & set(input_names):
                    break
                base = "output" if base == "y" else base + "_"
    clash = sorted(set(names) & set(input_names))
    if clash:
        raise ArgumentError("output name%s %s also an input's: give outputs other names" % (
            "" if len(clash) == 1 else "s", ", ".join("'%s'" % n for n in clash)), 1)
    return names


def tensor_leaves(result, torch):
    from torch.utils import _pytree as pytree
    return [t.detach().cpu().numpy() for t in pytree.tree_leaves(result) if isinstance(t, torch.Tensor)]


def from_module_or_program(target, args, kwargs, dynamic_shapes, strict, given_output_names):
    """Trace `target` (a module) or take it (an ExportedProgram) and translate it: a Traced."""
    torch = _torch()
    if isinstance(target, torch.export.ExportedProgram):
        ep = target
        example_args, example_kwargs = ep.example_inputs if ep.example_inputs is not None else (args, kwargs)
        if args is not None and len(args):
            example_args, example_kwargs = tuple(args), dict(kwargs or {})
        user_inputs = list(ep.graph_signature.user_inputs)
        _, declared = _torch_dynamic_shapes(dynamic_shapes, user_inputs, torch) if dynamic_shapes else (None, {})
        eager_module = ep.module()
    else:
        example_args, example_kwargs = tuple(args), dict(kwargs or {})
        ep, declared = trace(target, example_args, example_kwargs, dynamic_shapes, strict, torch)
        user_inputs = list(ep.graph_signature.user_inputs)
        eager_module = target
    inputs = Inputs(example_args, example_kwargs, user_inputs, torch)
    dims_by_symbol, scales, axes, sympy = contract(ep, declared, user_inputs)

    def eager(arrays):
        # Gradients stay as they were while tracing (enabled): a module such as
        # nn.TransformerEncoderLayer takes fused paths under no_grad that the export did not trace.
        with torch.enable_grad():
            return tensor_leaves(inputs.call(eager_module, arrays), torch)

    examples = inputs.examples()
    first = eager(dict(zip(user_inputs, examples)))
    with torch.enable_grad():
        names_out = output_names(inputs.call(eager_module, dict(zip(user_inputs, examples))), given_output_names,
                                 user_inputs, torch)
    if len(names_out) != len(first):
        raise ProgramError("the module gives %d tensors but %d output names" % (len(first), len(names_out)), 16)
    model = to_onnx(ep, torch)
    if len(model.graph.output) != len(first):
        raise ProgramError("the ONNX translation has %d outputs, the eager module %d tensors" % (
            len(model.graph.output), len(first)), 16)
    model = rename(model, {str(symbol): (dim.name, scales.get(symbol, 1)) for symbol, dim in dims_by_symbol.items()},
                   names_out)
    dims = {dim.name: dim for dim in dims_by_symbol.values()}
    # A root symbol at a point of the kiln dims: the dim's size (over multiple_of for a kiln.Dim's root).
    roots = {symbol: (dim.name, scales.get(symbol, 1)) for symbol, dim in dims_by_symbol.items()}
    sizers = {name: {axis: _sizer(expr, roots, sympy) for axis, expr in by_axis.items()}
              for name, by_axis in axes.items()}
    example_point = _example_point(axes, examples, user_inputs, roots, sympy)
    traced = Traced(model.SerializeToString(), dims, user_inputs, names_out, examples, sizers, example_point, eager)
    traced.first_outputs = first
    traced.program_name = type(target).__name__ if eager_module is target else _module_class_name(ep)
    return traced


def _module_class_name(ep):
    """The class name of the module an ExportedProgram was traced from (its root's entry in
    the nodes' nn_module_stack), or "program"."""
    for node in ep.graph.nodes:
        for path, kind in (node.meta.get("nn_module_stack") or {}).values():
            if path == "":
                return str(kind).rsplit(".", 1)[-1]
    return "program"


def _sizer(expr, roots, sympy):
    def size(point):
        value = expr.subs({symbol: point[name] // scale for symbol, (name, scale) in roots.items()})
        return int(sympy.floor(value))
    return size


def _example_point(axes, examples, names, roots, sympy):
    """{dim name: size} of the example: each root dim solved from an axis it sizes."""
    point = {}
    for input_name, array in zip(names, examples):
        for axis, expr in axes.get(input_name, {}).items():
            free = list(expr.free_symbols)
            if len(free) != 1 or free[0] not in roots:
                continue
            name, scale = roots[free[0]]
            if name in point:
                continue
            try:
                solutions = [s for s in sympy.solve(sympy.Eq(expr, int(array.shape[axis])), free[0]) if s.is_integer]
            except (NotImplementedError, TypeError):  # floor division and the like: another axis may say
                continue
            if solutions:
                point[name] = int(solutions[0]) * scale
    return point
