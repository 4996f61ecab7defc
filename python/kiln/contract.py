"""What a user declares about a program's inputs: bounded dims and semantic checks."""
import math
import sys


def _unbounded(high):
    """Whether a foreign dim's max means "no upper bound": an infinity (float or symbolic), or the
    sys.maxsize - 1 that torch.export.Dim(name) stores when it is given no max."""
    try:
        return math.isinf(high) or int(high) >= sys.maxsize - 1
    except (TypeError, ValueError, OverflowError):
        return True


class Dim:
    """A named size with an inclusive range min..max (optionally only multiples of `multiple_of`).

    Every dynamic axis of an exported program is one of these: a domain
    the contract is proved over and every run is checked against, never an
    example size silently taken as the only one."""

    __slots__ = ("name", "min", "max", "multiple_of")

    def __init__(self, name, min=None, max=None, multiple_of=1):
        if not isinstance(name, str) or not name:
            raise ValueError("a Dim needs a name")
        if min is None or max is None:
            raise ValueError("Dim %r needs both min and max: kiln dims are bounded" % name)
        if not (isinstance(min, int) and isinstance(max, int) and isinstance(multiple_of, int)):
            raise TypeError("Dim %r: min, max and multiple_of are whole numbers" % name)
        if min < 0 or min > max:
            raise ValueError("Dim %r: need 0 <= min <= max, got %d..%d" % (name, min, max))
        if multiple_of < 1:
            raise ValueError("Dim %r: multiple_of must be at least 1, got %d" % (name, multiple_of))
        self.name, self.min, self.max, self.multiple_of = name, min, max, multiple_of

    @classmethod
    def of(cls, value):
        """A kiln Dim from `value`: a Dim, or any object with name/min/max (torch.export.Dim on PyTorch 2.x)."""
        if isinstance(value, cls):
            return value
        name = getattr(value, "__name__", None) or getattr(value, "name", None)
        low, high = getattr(value, "min", None), getattr(value, "max", None)
        if name is None or low is None or high is None:
            raise TypeError("%r is not a dim: give kiln.Dim(name, min=, max=) or an object with name, min and max"
                            % (value,))
        if _unbounded(high):
            raise ValueError("dim %r has no upper bound: kiln dims are bounded, give max=" % name)
        return cls(str(name), min=int(low), max=int(high), multiple_of=int(getattr(value, "multiple_of", 1) or 1))

    def first(self):
        """The smallest size of the domain (a multiple of multiple_of)."""
        r = self.min % self.multiple_of
        return self.min if r == 0 else self.min + self.multiple_of - r

    def last(self):
        """The largest size of the domain."""
        return self.max - self.max % self.multiple_of

    def __repr__(self):
        extra = ", multiple_of=%d" % self.multiple_of if self.multiple_of != 1 else ""
        return "Dim(%r, min=%d, max=%d%s)" % (self.name, self.min, self.max, extra)

    def __eq__(self, other):
        return isinstance(other, Dim) and (self.name, self.min, self.max, self.multiple_of) == \
            (other.name, other.min, other.max, other.multiple_of)

    def __hash__(self):
        return hash((self.name, self.min, self.max, self.multiple_of))


class Check:
    """Semantic checks on an input's values, sealed with the program and enforced before every run.

    range=(lo, hi): every value in lo..hi (NaN is outside); finite=True: no
    NaN or infinity (float inputs); categories=[...]: every value one of
    these (integer inputs); unit and description are documentation."""

    __slots__ = ("range", "finite", "categories", "unit", "description")

    def __init__(self, range=None, finite=False, categories=None, unit=None, description=None):
        if range is not None:
            low, high = range
            if math.isnan(low) or math.isnan(high) or low > high:
                raise ValueError("Check range needs lo <= hi (not NaN), got %r" % (range,))
            range = (float(low), float(high))
        self.range = range
        self.finite = bool(finite)
        self.categories = None if categories is None else sorted({int(c) for c in categories})
        if self.categories is not None and not self.categories:
            raise ValueError("Check categories: an empty list admits no value")
        self.unit = unit
        self.description = description

    def __repr__(self):
        parts = []
        if self.range is not None:
            parts.append("range=%r" % (self.range,))
        if self.finite:
            parts.append("finite=True")
        if self.categories is not None:
            parts.append("categories=%r" % (self.categories,))
        if self.unit:
            parts.append("unit=%r" % self.unit)
        if self.description:
            parts.append("description=%r" % self.description)
        return "Check(%s)" % ", ".join(parts)

    def __eq__(self, other):
        return isinstance(other, Check) and all(getattr(self, s) == getattr(other, s) for s in self.__slots__)
