"""Typing the calls that make arrays owned by compiled code: ``np.empty/zeros/ones/full``, their ``*_like``,
``np.arange``, ``np.linspace``, ``np.eye``, ``a.copy()`` and ``a.astype(dtype)``.

    numpy_function(np.zeros)                          → Intrinsic.NP_ZEROS
    allocation_type(NP_ZEROS, ((i64, i64), pyobj<int32>)) → (i32[:, ::1], (0,))   the runtime operands' indices

NumPy is looked up in ``sys.modules`` (compiled code names it through the function's globals, under any name,
so it is imported already); nothing here imports it. Arguments are NumPy's positional ones; a dtype is a
compile-time value — a NumPy scalar type (``np.float64``), ``float``/``int``/``bool`` or
``a.dtype`` — and is dropped from the runtime operands (the result type holds it). Every result is a new
C-contiguous array (layout ``C``).
"""

from __future__ import annotations

import builtins
import sys
from typing import Any

from ..intrinsics.spec import IntrinsicSpec, Site
from ..ir.ops import Intrinsic
from ..types import BOOL, F64, I64, NONE, ArrayType, PyValueType, ScalarType, TupleType, Type, dtype_of_format
from .rules import RuleError


def dtype_of(value: Any) -> ScalarType | None:
    """The element type a compile-time dtype names (``np.float64``, ``float``, ``a.dtype``, ``"float64"``), or
    None. (``aot``'s own types are not NumPy dtypes: the plain-Python function would fail with them.)"""
    if isinstance(value, ArrayDtype):
        return value.scalar
    if value is builtins.float:
        return F64
    if value is builtins.int:
        return I64
    if value is builtins.bool:
        return BOOL
    np = sys.modules.get("numpy")
    if np is None:
        return None
    if isinstance(value, (np.dtype, str)) or (isinstance(value, type) and issubclass(value, np.generic)):
        try:
            dt = np.dtype(value)
        except TypeError:  # (a string naming no dtype)
            return None
        return dtype_of_format(dt.char, dt.itemsize)
    return None


class ArrayDtype:
    """``a.dtype``: the element type of an array, as a compile-time value (one object per type)."""

    __slots__ = ("scalar", "__qualname__")
    _made: dict[ScalarType, ArrayDtype] = {}

    def __init__(self, scalar: ScalarType):
        self.scalar = scalar
        self.__qualname__ = f"dtype({scalar})"

    @classmethod
    def get(cls, scalar: ScalarType) -> ArrayDtype:
        if scalar not in cls._made:
            cls._made[scalar] = cls(scalar)
        return cls._made[scalar]


class ArrayMethod:
    """``a.copy`` before it is called: which method, of which variable (one object per pair, so that the
    compile-time type ``pyobj<…>`` of the attribute is the same on every round of the solver)."""

    __slots__ = ("name", "receiver", "__qualname__")
    _made: dict[tuple[str, str], ArrayMethod] = {}

    def __init__(self, name: str, receiver: str):
        self.name, self.receiver = name, receiver
        self.__qualname__ = f"ndarray.{name}"

    @classmethod
    def get(cls, name: str, receiver: str) -> ArrayMethod:
        key = (name, receiver)
        if key not in cls._made:
            cls._made[key] = cls(name, receiver)
        return cls._made[key]


def _dtype_arg(t: Type, name: str) -> ScalarType:
    if isinstance(t, PyValueType):
        dt = dtype_of(t.value)
        if dt is not None:
            return dt
    raise RuleError(
        f"{name}(): the dtype must be a NumPy or aot scalar type (np.float64, np.int64, np.bool_, np.float32 …) "
        f"or a.dtype, not {t}"
    )


def _scalar_value(t: Type, name: str, what: str) -> ScalarType:
    if isinstance(t, ScalarType) and t.is_numeric:
        return t
    raise RuleError(f"{name}(): {what} must be a number, not {t}")


def _shape_ndim(t: Type, name: str) -> int:
    def is_int(x: Type) -> bool:
        return isinstance(x, ScalarType) and x.is_int

    if is_int(t):
        return 1
    if isinstance(t, TupleType) and t.items and all(is_int(i) for i in t.items):
        return len(t.items)
    if isinstance(t, TupleType) and not t.items:
        raise RuleError(f"{name}(): 0-d arrays are not supported; give the shape at least one dimension")
    raise RuleError(f"{name}(): the shape must be an int or a tuple of ints, not {t}")


def _split(args: tuple[Type, ...], dtype_at: int | None, name: str) -> tuple[ScalarType | None, tuple[int, ...]]:
    """The dtype (when given at position ``dtype_at``) and the indices of the runtime operands."""
    dtype = None
    runtime = []
    for i, t in enumerate(args):
        if dtype_at is not None and i == dtype_at:
            dtype = _dtype_arg(t, name)
        elif isinstance(t, PyValueType):
            raise RuleError(f"{name}(): argument {i + 1} cannot be {t} (a dtype goes last: {name}(…, np.float64))")
        else:
            runtime.append(i)
    return dtype, tuple(runtime)


def _arity(args: tuple[Type, ...], lo: int, hi: int, name: str, signature: str) -> None:
    if not lo <= len(args) <= hi:
        raise RuleError(
            f"{name}() takes {signature} here (by position), got {len(args)} arguments; "
            f"keyword arguments are not supported"
        )


_DTYPE_AT = {
    Intrinsic.NP_EMPTY: 1,
    Intrinsic.NP_ZEROS: 1,
    Intrinsic.NP_ONES: 1,
    Intrinsic.NP_FULL: 2,
    Intrinsic.NP_EMPTY_LIKE: 1,
    Intrinsic.NP_ZEROS_LIKE: 1,
    Intrinsic.NP_ONES_LIKE: 1,
    Intrinsic.NP_FULL_LIKE: 2,
    Intrinsic.NP_EYE: 3,
}
"""Where NumPy's signature of each allocation has its dtype (``np.zeros(shape, dtype)``)."""


def allocation_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """``np.zeros(shape[, dtype])`` …, ``a.copy()`` (the array first): the new array's type."""
    return allocation_type(spec.fn, args, dtype_last="dtype" in site.keywords)[0]


def bind_allocation(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> tuple[Type, tuple[int, ...]]:
    """The new array's type, and the runtime operands among the arguments (the dtype is in the type)."""
    return allocation_type(spec.fn, args, dtype_last="dtype" in site.keywords)


def allocation_type(
    fn: Intrinsic, args: tuple[Type, ...], dtype_last: bool = False
) -> tuple[ArrayType, tuple[int, ...]]:
    """The result type of an allocating call, and which of its arguments are runtime operands (``dtype_last``:
    the last argument was given as ``dtype=``; it must then stand where NumPy's signature has the dtype, but
    for ``arange``, whose bounds come before it whatever their number)."""
    if dtype_last and fn is not Intrinsic.NP_ARANGE and len(args) - 1 != _DTYPE_AT.get(fn):
        name = "np." + fn.value.split(".", 1)[1]
        raise RuleError(f"{name}(): give the arguments before dtype= too, by position")
    name = "np." + fn.value.split(".", 1)[1] if not fn.value.startswith("array.") else fn.value.split(".", 1)[1]
    if fn in (Intrinsic.NP_EMPTY, Intrinsic.NP_ZEROS, Intrinsic.NP_ONES):
        _arity(args, 1, 2, name, "(shape, dtype=float)")
        dtype, runtime = _split(args, 1, name)
        return ArrayType(dtype or F64, _shape_ndim(args[0], name), "C"), runtime
    if fn is Intrinsic.NP_FULL:
        _arity(args, 2, 3, name, "(shape, fill_value, dtype)")
        dtype, runtime = _split(args, 2, name)
        fill = _scalar_value(args[1], name, "the fill value")
        return ArrayType(dtype or fill, _shape_ndim(args[0], name), "C"), runtime
    if fn in (Intrinsic.NP_EMPTY_LIKE, Intrinsic.NP_ZEROS_LIKE, Intrinsic.NP_ONES_LIKE, Intrinsic.NP_FULL_LIKE):
        full = fn is Intrinsic.NP_FULL_LIKE
        _arity(args, 2 if full else 1, 3 if full else 2, name, "(a, fill_value, dtype)" if full else "(a, dtype)")
        proto = args[0]
        if not isinstance(proto, ArrayType):
            raise RuleError(f"{name}(): the first argument must be an array, not {proto}")
        dtype, runtime = _split(args, 2 if full else 1, name)
        if full:
            _scalar_value(args[1], name, "the fill value")
        return ArrayType(dtype or proto.dtype, proto.ndim, "C"), runtime
    if fn in (Intrinsic.ARRAY_COPY, Intrinsic.ARRAY_FLATTEN):
        if len(args) != 1:
            raise RuleError(f"a.{name}() takes no arguments here (the copy is C-ordered)")
        proto = args[0]
        assert isinstance(proto, ArrayType)
        return ArrayType(proto.dtype, 1 if fn is Intrinsic.ARRAY_FLATTEN else proto.ndim, "C"), (0,)
    if fn is Intrinsic.ARRAY_ASTYPE:  # (NumPy's casts, aot.codegen.elementwise.cast_element)
        if len(args) != 2:
            raise RuleError("a.astype(dtype) takes the dtype alone here (a new C-ordered array)")
        proto = args[0]
        assert isinstance(proto, ArrayType)
        return ArrayType(_dtype_arg(args[1], "astype"), proto.ndim, "C"), (0,)
    if fn is Intrinsic.NP_ARANGE:
        _arity(args, 1, 4, name, "([start,] stop[, step][, dtype])")
        dtype, runtime = _split(args, len(args) - 1 if dtype_last else 3 if len(args) == 4 else None, name)
        if not runtime:
            raise RuleError(f"{name}() needs a stop value")
        numbers = [_scalar_value(args[i], name, "each bound") for i in runtime]
        inferred = F64 if any(n.is_float for n in numbers) else I64
        if dtype is not None and not dtype.is_float and inferred.is_float:
            raise RuleError(f"{name}() with float bounds and the integer dtype {dtype} is not supported")
        if dtype is not None and dtype.kind == "b":
            raise RuleError(f"{name}() with a boolean dtype is not supported")
        return ArrayType(dtype or inferred, 1, "C"), runtime
    if fn is Intrinsic.NP_LINSPACE:
        _arity(args, 2, 4, name, "(start, stop[, num][, endpoint])")
        _, runtime = _split(args, None, name)
        _scalar_value(args[0], name, "start")
        _scalar_value(args[1], name, "stop")
        if len(args) > 2 and not (isinstance(args[2], ScalarType) and args[2].is_int):
            raise RuleError(f"{name}(): num must be an integer, not {args[2]}")
        if len(args) > 3 and args[3] != BOOL:
            raise RuleError(f"{name}(): endpoint must be a bool, not {args[3]}")
        return ArrayType(F64, 1, "C"), runtime
    if fn is Intrinsic.NP_EYE:
        _arity(args, 1, 4, name, "(N[, M[, k]][, dtype])")
        dtype, runtime = _split(args, 3 if len(args) == 4 else None, name)
        for i in runtime:
            t = args[i]
            if not (isinstance(t, ScalarType) and (t.is_int or (i == 1 and t == NONE))):
                raise RuleError(f"{name}(): N, M and k must be integers (M may be None), not {t}")
        return ArrayType(dtype or F64, 2, "C"), runtime
    raise RuleError(f"{name}() is not supported")
