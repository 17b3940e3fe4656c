"""Types of NumPy's shape functions, views of their array (``aot/intrinsics/shapes.py``): ``np.flip``,
``np.fliplr``, ``np.flipud``, ``np.expand_dims``, ``np.squeeze``, ``np.atleast_1d/2d/3d``, ``np.transpose``,
``np.swapaxes``, ``np.moveaxis`` and the methods ``a.squeeze``, ``a.transpose``, ``a.swapaxes``.

    np.flip(a, 0)             of f64[:, ::1]  → f64[:, :]     (a negative stride)
    np.expand_dims(a, -1)     of f64[::1]     → f64[:, ::1]   (a new axis of length 1)
    np.squeeze(a, axis=1)     of f64[:, :, :] → f64[:, :]     (the axis's length checked at run time)

Each is a ``Plan``: for every axis of the result, which axis of the array it is (reversed or not) or a new axis
of length 1, and which axes are dropped. The result's number of axes must be known when compiling, so the
axes these functions take are compile-time constants (an int, or a tuple of ints; negative counts from the
end), given as ``site.consts``; the lowering (``aot/codegen/shapes.py``) makes the same plan from the same
constants. A constant axis out of range is refused with NumPy's message. The result is ``C`` where the array is
``C`` and its axes keep their order (new axes of length 1 added, axes of length 1 dropped), else ``A``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..intrinsics.spec import IntrinsicSpec, Site
from ..ir.ops import Intrinsic
from ..types import NONE, ArrayType, ScalarType, TupleType, Type
from .rules import RuleError

KEEP, FLIP, NEW = "keep", "flip", "new"


@dataclass(frozen=True)
class Plan:
    """The result's axes, each ``(KEEP, k)`` (axis ``k`` of the array), ``(FLIP, k)`` (reversed) or ``(NEW, -1)``
    (a new axis of length 1), and the array's axes left out (their length must be 1)."""

    axes: tuple[tuple[str, int], ...]
    squeezed: tuple[int, ...] = ()


ATLEAST = {Intrinsic.NP_ATLEAST_1D: 1, Intrinsic.NP_ATLEAST_2D: 2, Intrinsic.NP_ATLEAST_3D: 3}


def shape_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """The type of the view (or, for ``np.atleast_*`` of a number, of the new array holding it)."""
    method = not site.name
    name = f"a.{spec.name}" if method else f"np.{site.name}"
    lo, hi = spec.arity
    if len(args) < lo or (hi is not None and len(args) > hi):
        want = f"{lo} argument{'s' if lo > 1 else ''}" if lo == hi else f"{lo} to {hi} arguments"
        more = "; call it once for each array" if spec.fn in ATLEAST and len(args) > 1 else ""
        raise RuleError(f"{name}() takes {want} here, got {len(args)}{more}")
    consts = tuple(site.consts[k] if k < len(site.consts) else None for k in range(len(args)))
    plan = shape_plan(spec.fn, args, consts, name, method)
    return plan_type(args[0], plan)


def plan_type(arr: Type, plan: Plan) -> ArrayType:
    if isinstance(arr, ScalarType):  # (np.atleast_*(x): a new array)
        return ArrayType(arr, len(plan.axes), "C")
    assert isinstance(arr, ArrayType)
    kept = [k for kind, k in plan.axes if kind != NEW]
    ordered = kept == sorted(kept) and all(kind != FLIP for kind, _ in plan.axes)
    return ArrayType(arr.dtype, len(plan.axes), "C" if arr.layout == "C" and ordered else "A")


def shape_plan(fn: Intrinsic, args: tuple[Type, ...], consts: tuple[Any, ...], name: str, method: bool = False) -> Plan:
    """The plan of ``fn`` called with ``args`` (the array first), ``consts`` their compile-time values."""
    arr = args[0]
    if fn in ATLEAST:
        if isinstance(arr, ScalarType) and arr.is_numeric:
            ndim = 0
        elif isinstance(arr, ArrayType):
            ndim = arr.ndim
        else:
            raise RuleError(f"{name}() takes an array or a number here, not {arr}")
        return _atleast(ATLEAST[fn], ndim)
    if not isinstance(arr, ArrayType):
        raise RuleError(f"{name}() needs an array here, not {arr}")
    ndim = arr.ndim
    rest = tuple(zip(args[1:], consts[1:]))
    if fn is Intrinsic.NP_FLIP:
        if not rest or rest[0][0] == NONE:
            return _flipped(ndim, range(ndim))
        return _flipped(ndim, _axes(*rest[0], ndim, name, "axis"))
    if fn is Intrinsic.NP_FLIPLR:
        if ndim < 2:
            raise RuleError(f"np.fliplr(): Input must be >= 2-d. (this array is {ndim}-D); use np.flip(a) for 1-D")
        return _flipped(ndim, (1,))
    if fn is Intrinsic.NP_FLIPUD:
        return _flipped(ndim, (0,))
    if fn is Intrinsic.NP_EXPAND_DIMS:
        t, value = rest[0]
        count = len(value) if isinstance(t, TupleType) and isinstance(value, tuple) else 1
        new = _axes(t, value, ndim + count, name, "axis")
        given = iter(range(ndim))
        return Plan(tuple((NEW, -1) if k in new else (KEEP, next(given)) for k in range(ndim + count)))
    if fn is Intrinsic.NP_SQUEEZE:
        if not rest or rest[0][0] == NONE:
            raise RuleError(
                f"{name}() without axis= is not supported here: which axes have length 1 is known only at run "
                f"time, and the result's number of axes must be known when compiling; pass axis= (an int or a "
                f"tuple of ints: {name}({'' if method else 'a, '}axis=0))"
            )
        gone = _axes(*rest[0], ndim, name, "axis")
        if len(gone) == ndim:
            raise RuleError(f"{name}() of every axis would give a 0-d array, which compiled code does not make")
        return Plan(tuple((KEEP, k) for k in range(ndim) if k not in gone), tuple(sorted(gone)))
    if fn is Intrinsic.NP_TRANSPOSE:
        if not rest or (len(rest) == 1 and rest[0][0] == NONE):
            order: tuple[int, ...] = tuple(reversed(range(ndim)))
        elif len(rest) == 1 and isinstance(rest[0][0], TupleType):
            order = _permutation(rest[0], ndim, name)
        elif method and all(isinstance(t, ScalarType) for t, _ in rest):  # (a.transpose(1, 0))
            values = tuple(v for _, v in rest)
            known = all(type(v) is int for v in values)
            order = _permutation((TupleType(tuple(t for t, _ in rest)), values if known else None), ndim, name)
        else:
            raise RuleError(f"{name}(): axes must be a tuple of integers, one for each axis")
        return Plan(tuple((KEEP, k) for k in order))
    if fn is Intrinsic.NP_SWAPAXES:
        i, j = (_axis(t, v, ndim, name, what) for (t, v), what in zip(rest, ("axis1", "axis2")))
        swapped = list(range(ndim))
        swapped[i], swapped[j] = j, i
        return Plan(tuple((KEEP, k) for k in swapped))
    if fn is Intrinsic.NP_MOVEAXIS:
        source = _axes(*rest[0], ndim, name, "source", ordered=True)
        destination = _axes(*rest[1], ndim, name, "destination", ordered=True)
        if len(source) != len(destination):
            raise RuleError("`source` and `destination` arguments must have the same number of elements")
        moved = [k for k in range(ndim) if k not in source]
        for dest, src in sorted(zip(destination, source)):
            moved.insert(dest, src)
        return Plan(tuple((KEEP, k) for k in moved))
    raise AssertionError(fn)


def _atleast(n: int, ndim: int) -> Plan:
    """NumPy's shapes: a number gives ``n`` axes of length 1; (N,) gives (1, N) and (1, N, 1); (M, N) gives
    (M, N, 1) for ``n == 3``; an array with ``n`` axes or more is itself."""
    keep = tuple((KEEP, k) for k in range(ndim))
    if ndim >= n:
        return Plan(keep)
    if ndim == 0:
        return Plan(((NEW, -1),) * n)
    if ndim == 1:
        return Plan(((NEW, -1), *keep, *(((NEW, -1),) if n == 3 else ())))
    return Plan((*keep, (NEW, -1)))


def _flipped(ndim: int, axes: Any) -> Plan:
    chosen = set(axes)
    return Plan(tuple((FLIP if k in chosen else KEEP, k) for k in range(ndim)))


def _axis(t: Type, value: Any, ndim: int, name: str, what: str) -> int:
    """One constant axis (negative counts from the end), checked against ``ndim`` as NumPy checks it."""
    if not (isinstance(t, ScalarType) and (t.is_int or t.kind == "b")):
        raise RuleError(f"{name}(): {what} must be an integer, not {t}")
    if type(value) is not int:
        raise RuleError(
            f"{name}(): {what} must be a compile-time constant here (a literal, or a global int): which "
            f"axes the view reverses, adds, drops or moves is fixed when compiling"
        )
    if not -ndim <= value < ndim:
        raise RuleError(f"{name}(): axis {value} is out of bounds for array of dimension {ndim}")
    return value % ndim


def _axes(t: Type, value: Any, ndim: int, name: str, what: str, ordered: bool = False) -> tuple[int, ...]:
    """An axis or a tuple of them (constants), each checked, none repeated."""
    if isinstance(t, TupleType):
        if not isinstance(value, tuple):
            value = (None,) * len(t.items)
        found = tuple(_axis(it, v, ndim, name, what) for it, v in zip(t.items, value))
    else:
        found = (_axis(t, value, ndim, name, what),)
    if len(set(found)) != len(found):
        raise RuleError(f"{name}(): repeated axis" + (f" in `{what}` argument" if ordered else ""))
    return found


def _permutation(given: tuple[Type, Any], ndim: int, name: str) -> tuple[int, ...]:
    t, value = given
    assert isinstance(t, TupleType)
    if len(t.items) != ndim:
        raise RuleError(f"{name}(): axes don't match array (give {ndim} axes, a permutation of 0..{ndim - 1})")
    if not isinstance(value, tuple):
        value = (None,) * ndim
    order = tuple(_axis(it, v, ndim, name, "axes") for it, v in zip(t.items, value))
    if len(set(order)) != ndim:
        raise RuleError(f"{name}(): repeated axis in transpose")
    return order
