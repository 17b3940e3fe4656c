"""The type rules of NumPy's comparisons of whole arrays: ``np.isclose``, ``np.allclose`` and ``np.array_equal``.

    np.isclose(a, b[, rtol[, atol[, equal_nan]]])   → bool of two numbers; a new bool array of the operands
                                                      broadcast (NumPy's rules) when either is an array
    np.allclose(a, b[, rtol[, atol[, equal_nan]]])  → bool
    np.array_equal(a1, a2[, equal_nan])            → bool

Each is a binding (``aot.intrinsics.spec.Binding``): the result type, and which arguments are the IR op's
operands, in order (the lowerings are in ``aot.codegen.comparisons``):

    isclose, allclose   (a, b[, rtol, atol[, equal_nan]])   a missing ``rtol`` or ``atol`` before a given one is
                                                            an array operand itself (``a`` or ``b``), or else
                                                            a bool ``equal_nan``, which stands for NumPy's
                                                            default (1e-05, 1e-08); ``rtol`` and ``atol`` are
                                                            numbers, never bools
    array_equal         (a1, a2[, equal_nan])
"""

from __future__ import annotations

from ..intrinsics.spec import IntrinsicSpec, Site
from ..types import BOOL, ArrayType, ScalarType, Type
from .calls import numpy_arguments
from .rules import RuleError

_CLOSE = ("a", "b", "rtol", "atol", "equal_nan")


def _operand(t: Type, name: str, what: str) -> Type:
    """A number or an array of numbers (booleans too)."""
    if isinstance(t, ArrayType) and t.dtype.is_numeric:
        return t
    if isinstance(t, ScalarType) and t.is_numeric:
        return t
    raise RuleError(f"np.{name}(): {what} must be a number or an array of numbers here, not {t}")


def _truth(t: Type, name: str) -> None:
    if not (isinstance(t, ScalarType) and (t.kind == "b" or t.is_int)):
        raise RuleError(f"np.{name}(): equal_nan= must be True or False, not {t}")


def _ndim(t: Type) -> int:
    return t.ndim if isinstance(t, ArrayType) else 0


def close_type(name: str, a: Type, b: Type) -> Type:
    """The result of ``np.isclose(a, b)`` (``np.allclose``: a bool)."""
    _operand(a, name, "a")
    _operand(b, name, "b")
    if name == "allclose" or not (isinstance(a, ArrayType) or isinstance(b, ArrayType)):
        return BOOL
    return ArrayType(BOOL, max(_ndim(a), _ndim(b)), "C")


def bind_close(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> tuple[Type, tuple[int, ...]]:
    """``np.isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False)`` and ``np.allclose``: ``rtol`` and ``atol``
    numbers (not arrays), ``equal_nan`` a truth value, all read when the code runs."""
    name = spec.name
    where = numpy_arguments(name, _CLOSE, args, site.keywords, 2)
    a, b = args[where["a"]], args[where["b"]]
    result = close_type(name, a, b)
    for k in ("rtol", "atol"):
        if k in where:
            t = args[where[k]]
            if not (isinstance(t, ScalarType) and t.is_numeric and t != BOOL):
                raise RuleError(f"np.{name}(): {k}= must be a number (not a bool or an array) here, not {t}")
    if "equal_nan" in where:
        _truth(args[where["equal_nan"]], name)
    order = [where["a"], where["b"]]
    last = max((k for k, p in enumerate(_CLOSE) if p in where), default=1)
    if last >= 2:
        stand_ins = [where[p] for p in ("a", "b") if isinstance(args[where[p]], ArrayType)]
        if "equal_nan" in where and args[where["equal_nan"]] == BOOL:
            stand_ins.append(where["equal_nan"])
        placeholder = stand_ins[0] if stand_ins else None
        for p in _CLOSE[2 : last + 1]:
            if p in where:
                order.append(where[p])
            elif placeholder is None:
                raise RuleError(
                    f"np.{name}() of two numbers: give rtol= and atol= both here "
                    f"(np.{name}(a, b, rtol=1e-05, atol=1e-08, equal_nan=...))"
                )
            else:
                order.append(placeholder)  # (an array or a bool where a number stands: NumPy's default)
    return result, tuple(order)


def close_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """Of the IR op's operands too, where ``a`` or ``b`` may stand for a missing tolerance."""
    if len(args) < 2:
        raise RuleError(f"np.{spec.name}() is missing the argument {'ab'[len(args)]!r}")
    if not site.keywords and len(args) <= 5:
        return close_type(spec.name, args[0], args[1])
    return bind_close(spec, args, site)[0]


def bind_array_equal(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> tuple[Type, tuple[int, ...]]:
    """``np.array_equal(a1, a2, equal_nan=False)``: numbers or arrays of numbers; arrays of different shapes
    are not equal (False); ``equal_nan`` a truth value read when the code runs."""
    where = numpy_arguments("array_equal", ("a1", "a2", "equal_nan"), args, site.keywords, 2)
    a1, a2 = args[where["a1"]], args[where["a2"]]
    _operand(a1, "array_equal", "a1")
    _operand(a2, "array_equal", "a2")
    if (isinstance(a1, ArrayType) and a1.ndim == 0) or (isinstance(a2, ArrayType) and a2.ndim == 0):
        raise RuleError("np.array_equal() of a 0-d array is not supported here; compare a[()] instead")
    order = [where["a1"], where["a2"]]
    if "equal_nan" in where:
        _truth(args[where["equal_nan"]], "array_equal")
        order.append(where["equal_nan"])
    return BOOL, tuple(order)


def array_equal_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    return bind_array_equal(spec, args, site)[0]
