"""The contract of an ExportedProgram as kiln dims: every root symbol of its range_constraints
becomes a kiln dim with torch's bounds, named after the user's Dim, each input axis a size
expression over them; refused where torch specialized or narrowed a declared dim
(spec/python-export.md §2)."""
import re

from ._torch_dims import axis_of, declared_bounds, declared_name, dim_hint
from ._torch_refusals import at_axis, specialized, unbacked_error
from .contract import Dim
from .errors import ArgumentError, ProgramError

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
        raise unbacked_error(ep, unbacked)
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
                hint = dim_hint(user)
                if user is not None and not isinstance(user, int) and hint != "static" and \
                        (hint is None or declared_bounds(user) is not None):
                    name = declared_name(user) or "%s_dim%d" % (input_name, axis)
                    raise specialized(name, input_name, axis, size, declared_bounds(user))
                continue
            expr = size.node.expr
            axes[input_name][axis] = expr
            free = list(expr.free_symbols)
            bounds = declared_bounds(user) if user is not None and not isinstance(user, int) else None
            if bounds is not None and None not in bounds and len(free) == 1 and \
                    (expr == free[0] or (isinstance(user, Dim) and expr == user.multiple_of * free[0])):
                wanted.setdefault(free[0], bounds)  # Dim.AUTO(min=, max=) too: torch may narrow it silently
            if isinstance(user, Dim) and user.multiple_of > 1 and len(free) == 1 and \
                    expr == user.multiple_of * free[0]:
                scaled[free[0]] = user  # the user's kiln.Dim stands for multiple_of * root
            if len(free) == 1 and free[0] not in names:
                user_name = declared_name(user) if user is not None and dim_hint(user) is None else None
                user_name = user_name or recovered.get((input_name, axis))
                if user_name is not None or expr == free[0]:
                    names[free[0]] = user_name or "%s_dim%d" % (input_name, axis)
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
                                    name, at_axis(input_name, axis), low, name, low), 1)
        low, high = int(low), int(high)
        want = wanted.get(symbol) or axis_of(name, declared)[2]
        if want is not None and None not in want and low == 2 and int(want[0]) < 2 and high == int(want[1]):
            # torch takes a backed size to be at least 2 (it specializes 0 and 1) where no guard
            # says so; the declared smaller sizes stay, proven by kiln's checker and run as evidence.
            low = int(want[0])
        if want is not None and None not in want and (low, high) != (int(want[0]), int(want[1])):
            exc = ProgramError(
                "torch.export narrowed dim '%s'%s from the declared %d..%d to %d..%d (a guard of the program); "
                "counterexample: %s=%d. kiln seals the declared domain or nothing: change the program so that it "
                "holds for every declared size, or declare %d..%d yourself" % (
                    name, at_axis(input_name, axis), want[0], want[1], low, high, name,
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


def sizer(expr, roots, sympy):
    def size(point):
        value = expr.subs({symbol: point[name] // scale for symbol, (name, scale) in roots.items()})
        return int(sympy.floor(value))
    return size


def example_point(axes, examples, names, roots, sympy):
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
