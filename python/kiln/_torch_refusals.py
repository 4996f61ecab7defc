"""The refusals of kiln.export's torch.export route: each way torch's program holds for less than
the declared domain (a specialized, guarded, equated or data-dependent size) and each failure of
the trace, as the kiln error that names the dim, the rule, a counterexample and the user's line.
Nothing torch suggests is applied (spec/python-export.md §3)."""
import re

from ._torch_dims import TORCH_SYMBOL, axis_of
from .errors import ArgumentError, ProgramError, UnsupportedError

def _first_paragraph(text):
    return text.strip().split("\n\n")[0].strip()


def user_frame(text):
    """The 'File "...", line N' of the user's own code in a torch message (not torch's), or ''."""
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\w+)\n\s*(.*)', text)
    for path, line, function, code in reversed(frames):
        if "/torch/" not in path:
            return " at %s:%s (%s: %s)" % (path, line, function, code.strip())
    return ""


def trace_error(exc, declared, torch):
    text = str(exc)
    kind = type(exc).__name__
    if "Constraints violated" in text:
        return _constraint_error(text, declared)
    if kind in ("Unsupported", "GuardOnDataDependentSymNode", "UserError") and \
            ("data-dependent" in text.lower() or "data dependent" in text.lower()):
        return UnsupportedError(
            "the program's control flow or a size depends on tensor values, which kiln's contract cannot "
            "bound%s: %s. Make it branch-free (torch.where, torch.cond) or give the size as an input's dim"
            % (user_frame(text), _first_paragraph(text).splitlines()[0]), 15, [_first_paragraph(text)])
    if kind == "UserError":
        return ArgumentError("torch.export refused the call: %s" % _first_paragraph(text), 1)
    return UnsupportedError("torch.export cannot trace this module (%s)%s: %s" % (
        kind, user_frame(text), _first_paragraph(text).splitlines()[0] if text else kind), 15,
        [_first_paragraph(text)])


def _counterexample(name, declared, outside):
    """A size of dim `name` in its declared range for which `outside(size)` holds, or None."""
    _, _, bounds = axis_of(name, declared)
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
    where = user_frame(text)
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
    bounds = [axis_of(name, declared)[2] for name in (first, second)]
    if not all(bounds) or None in bounds[0] + bounds[1]:
        return None
    (low_a, high_a), (low_b, high_b) = bounds
    for a in (max(low_a, 2), high_a, low_a):
        for b in (max(low_b, 2), high_b, max(low_b, 2) + 1, low_b):
            if a != b and low_a <= a <= high_a and low_b <= b <= high_b:
                return a, b
    return None


def _described(name, declared):
    input_name, axis, bounds = axis_of(name, declared)
    if input_name is None:
        return ""
    if bounds and None not in bounds:
        return " (input '%s' axis %d, declared %d..%d)" % (input_name, axis, bounds[0], bounds[1])
    return " (input '%s' axis %d)" % (input_name, axis)


def unbacked_error(ep, symbols):
    """A data-dependent size (an unbacked symbol): name the op that makes it and where."""
    for node in ep.graph.nodes:
        value = node.meta.get("val")
        shape = getattr(value, "shape", None)
        if shape is None:
            continue
        found = {str(s) for s in shape if not isinstance(s, int)} & symbols or \
            {m for s in shape if not isinstance(s, int) for m in TORCH_SYMBOL.findall(str(s))} & symbols
        if found:
            trace = node.meta.get("stack_trace") or ""
            return UnsupportedError(
                "%s%s gives a tensor whose size depends on tensor values (%s): kiln's contract bounds every "
                "size by the declared dims. Give that size as an input's dim, or pad to a bounded size" % (
                    node.target, user_frame(trace), ", ".join(sorted(found))), 15, [str(node.target)])
    return UnsupportedError("the program has sizes that depend on tensor values (%s)" % ", ".join(sorted(symbols)),
                            15, sorted(symbols))


def at_axis(input_name, axis):
    return "" if input_name is None else " (input '%s' axis %d)" % (input_name, axis)


def specialized(name, input_name, axis, size, bounds):
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
