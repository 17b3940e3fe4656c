"""The type rules of NumPy's binning functions: ``np.digitize``, ``np.histogram`` and ``np.interp``.

    np.digitize(x, bins[, right])           → i64 for a number ``x``, a new i64 array of ``x``'s shape
    np.histogram(a[, bins[, range]])        → (hist: i64[::1], bin_edges: f64[::1] (f32 of f32), or bins' dtype)
    np.interp(x, xp, fp[, left[, right]])   → f64 for a number ``x``, a new f64 array of ``x``'s shape

Each is a binding (``aot.intrinsics.spec.Binding``): the result type, and which arguments are the IR op's
operands, in order (the lowerings are in ``aot.codegen.binning``):

    digitize    (x, bins[, right])          ``right`` a truth value, read when the code runs
    histogram   (a, bins[, range])          ``range`` only when given (not None) with an integer ``bins``
    interp      (x, xp, fp[, left, right])  a missing ``left`` before a given ``right`` is ``fp`` itself (an
                                            array where a number stands: NumPy's default, ``fp[0]``)
"""

from __future__ import annotations

from ..intrinsics.spec import IntrinsicSpec, Site
from ..types import BOOL, F32, F64, I64, NONE, ArrayType, ScalarType, TupleType, Type
from .calls import numpy_arguments
from .rules import RuleError


def _number(t: Type) -> bool:
    return isinstance(t, ScalarType) and t.is_numeric


def _vector(t: Type, name: str, what: str) -> ArrayType:
    if not (isinstance(t, ArrayType) and t.dtype.is_numeric):
        raise RuleError(f"np.{name}(): {what} must be a 1-D array of numbers here, not {t}")
    if t.ndim != 1:
        raise RuleError(f"np.{name}(): {what} must be a 1-D array (NumPy: object too deep for desired array)")
    return t


def _values(t: Type, name: str, result: ScalarType) -> Type:
    """A number gives a number; an array a new C array of its shape."""
    if isinstance(t, ArrayType) and t.dtype.is_numeric:
        return ArrayType(result, t.ndim, "C")
    if not _number(t):
        raise RuleError(f"np.{name}(): x must be a number or an array of numbers, not {t}")
    return result


def bind_digitize(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> tuple[Type, tuple[int, ...]]:
    """``np.digitize(x, bins, right=False)``: ``bins`` a 1-D array (increasing or decreasing, checked when the
    code runs), ``right`` a truth value."""
    where = numpy_arguments("digitize", ("x", "bins", "right"), args, site.keywords, 2)
    result = _values(args[where["x"]], "digitize", I64)
    _vector(args[where["bins"]], "digitize", "bins")
    order = [where["x"], where["bins"]]
    if "right" in where:
        right = args[where["right"]]
        if not (isinstance(right, ScalarType) and (right.kind == "b" or right.is_int)):
            raise RuleError(f"np.digitize(): right= must be True or False, not {right}")
        order.append(where["right"])
    return result, tuple(order)


def digitize_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    return bind_digitize(spec, args, site)[0]


def histogram_edges(a: ArrayType, bins: Type, bounds: Type) -> ScalarType:
    """The dtype of ``np.histogram``'s edges: an array ``bins``' own; for a number of bins NumPy's
    ``result_type`` of the range and ``a`` (the range's numbers count as Python's, which adapt), made a float:
    f32 for f32 data, f64 otherwise."""
    if isinstance(bins, ArrayType):
        return bins.dtype
    if a.dtype == F32 and (bounds == NONE or all(t in (F32, F64) or t.is_int for t in _range_items(bounds))):
        return F32
    return F64


def _range_items(bounds: Type) -> tuple[ScalarType, ...]:
    assert isinstance(bounds, TupleType)
    return tuple(t for t in bounds.items if isinstance(t, ScalarType))


def bind_histogram(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> tuple[Type, tuple[int, ...]]:
    """``np.histogram(a, bins=10, range=None)``: ``a`` an array of numbers (flattened); ``bins`` a positive
    integer or a 1-D array of increasing edges; ``range`` None or a pair of numbers. ``weights=`` and
    ``density=`` are refused."""
    refused = [k for k in site.keywords if k in ("weights", "density")]
    if refused or len(args) - len(site.keywords) > 3:
        raise RuleError(
            "np.histogram(): weights= and density= are not supported here; count with np.histogram(a, bins, range) "
            "and weigh or normalise the counts after (hist / (hist.sum() * np.diff(edges)))"
        )
    where = numpy_arguments("histogram", ("a", "bins", "range"), args, site.keywords, 1)
    a = args[where["a"]]
    if not (isinstance(a, ArrayType) and a.dtype.is_numeric and a.dtype.kind != "b"):
        raise RuleError(f"np.histogram() takes an array of numbers here (not booleans), not {a}")
    bins = args[where["bins"]] if "bins" in where else I64
    bounds = args[where["range"]] if "range" in where else NONE
    order = [where["a"]]
    if isinstance(bins, ArrayType):
        if not bins.dtype.is_numeric or bins.dtype.kind == "b":
            raise RuleError(f"np.histogram(): bins must be an integer or an array of numbers, not {bins}")
        if bins.ndim != 1:
            raise RuleError("np.histogram(): `bins` must be 1d, when an array")
    elif not (isinstance(bins, ScalarType) and bins.is_int):
        raise RuleError(f"np.histogram(): `bins` must be an integer or an array here, not {bins}")
    if "bins" in where:
        order.append(where["bins"])
    if bounds != NONE:
        items = bounds.items if isinstance(bounds, TupleType) else ()
        if len(items) != 2 or not all(_number(t) and t != BOOL for t in items):
            raise RuleError(f"np.histogram(): range must be None or a pair of numbers (lo, hi), not {bounds}")
        if not isinstance(bins, ArrayType):  # (NumPy ignores the range of given edges)
            if "bins" not in where:
                raise RuleError("np.histogram(): give bins with range here: np.histogram(a, 10, range=(lo, hi))")
            order.append(where["range"])
    edges = histogram_edges(a, bins, bounds if len(order) == 3 else NONE)
    return TupleType((ArrayType(I64, 1, "C"), ArrayType(edges, 1, "C"))), tuple(order)


def histogram_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    return bind_histogram(spec, args, site)[0]


def bind_interp(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> tuple[Type, tuple[int, ...]]:
    """``np.interp(x, xp, fp, left=None, right=None)``: ``xp`` and ``fp`` 1-D arrays of numbers, ``left`` and
    ``right`` None or numbers; computed in f64."""
    where = numpy_arguments("interp", ("x", "xp", "fp", "left", "right"), args, site.keywords, 3)
    result = _values(args[where["x"]], "interp", F64)
    _vector(args[where["xp"]], "interp", "xp")
    _vector(args[where["fp"]], "interp", "fp")
    given = {}
    for k in ("left", "right"):
        if k in where and args[where[k]] != NONE:
            if not _number(args[where[k]]):
                raise RuleError(f"np.interp(): {k}= must be a number or None, not {args[where[k]]}")
            given[k] = where[k]
    order = [where["x"], where["xp"], where["fp"]]
    if given:
        order.append(given.get("left", where["fp"]))  # (fp for a missing left: an array means NumPy's default)
    if "right" in given:
        order.append(given["right"])
    return result, tuple(order)


def interp_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """Of the IR op's operands too, where ``fp`` may stand for a missing ``left``."""
    if len(args) > 3 and not site.keywords and isinstance(args[3], ArrayType):
        args = (*args[:3], NONE, *args[4:])
    return bind_interp(spec, args, site)[0]
