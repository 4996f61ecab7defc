"""The dims a user declares to kiln.export for torch.export: dynamic_shapes as torch takes it
(kiln.Dims and other libraries' dim objects turned into torch.export.Dims, checked before
tracing), and what was declared for each input's axis (name, bounds), which the contract and
the refusals compare with what torch found."""
import re

from .contract import Dim
from .errors import ArgumentError

# A torch symbol as it appears in a dim_param or a range constraint: s6, s27 (backed), u0 (unbacked).
TORCH_SYMBOL = re.compile(r"\b([su]\d+)\b")


def dim_hint(value):
    """'auto' / 'static' / 'dynamic' for torch's Dim.AUTO, Dim.STATIC, Dim.DYNAMIC (hints, not named dims)."""
    kind = getattr(value, "type", None)
    name = getattr(kind, "name", None)
    return name.lower() if name in ("AUTO", "STATIC", "DYNAMIC") else None


def _torch_spec(value, where, torch):
    """One axis of dynamic_shapes as torch.export takes it: a kiln.Dim becomes torch.export.Dim
    (multiple_of=k becomes k * Dim(name + '_over_k')); torch's own Dims and hints pass through.
    An unbounded named Dim is refused here, before tracing."""
    Dimension = torch.export.Dim
    if value is None or dim_hint(value) is not None or isinstance(value, int):
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
    if value is None or isinstance(value, (int, Dim) + torch_kinds) or dim_hint(value) is not None:
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
            if dim is None and getattr(value, "root", None) is None and dim_hint(value) is None and \
                    getattr(value, "__name__", None) is not None:
                dim = Dim(value.__name__, min=int(value.min), max=int(value.max))
            if dim is None or not -len(shape) <= axis < len(shape):
                continue
            size = int(shape[axis])
            if size < dim.min or size > dim.max or size % dim.multiple_of:
                raise ArgumentError("the example input '%s' has %d on axis %d, outside %r: give an example "
                                    "inside the declared domain" % (input_name, size, axis, dim), 19)


def declared_name(value):
    """The user's name for the root dim of an axis spec, or None (a hint, a constant, nothing)."""
    if isinstance(value, Dim):
        return value.name if value.multiple_of == 1 else "%s_over_%d" % (value.name, value.multiple_of)
    root = getattr(value, "root", None)
    return getattr(root if root is not None else value, "__name__", None)


def declared_bounds(value):
    """(min, max) the user declared for an axis spec's root dim, or None where torch picks them."""
    if isinstance(value, Dim):
        if value.multiple_of == 1:
            return value.min, value.max
        k = value.multiple_of
        return -(-value.min // k), value.max // k
    root = getattr(value, "root", None)
    named = root if root is not None else value
    if dim_hint(named) is not None:
        low, high = getattr(named, "min", None), getattr(named, "max", None)
        return None if low is None and high is None else (low, high)
    low, high = getattr(named, "min", None), getattr(named, "max", None)
    return None if low is None or high is None else (int(low), int(high))


def parameter_names(module, args, kwargs):
    import inspect
    forward = getattr(module, "forward", module)
    parameters = [p.name for p in inspect.signature(forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return parameters[:len(args)] + [k for k in kwargs if k not in parameters[:len(args)]]


def torch_dynamic_shapes(dynamic_shapes, parameters, torch):
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


def axis_of(name, declared):
    """(input, axis, declared bounds) of the first axis declared with the dim `name`, or Nones."""
    for input_name, axes in declared.items():
        for axis, value in axes.items():
            if declared_name(value) == name:
                return input_name, axis, declared_bounds(value)
    return None, None, None
