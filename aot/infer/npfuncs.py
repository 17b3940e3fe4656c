"""NumPy in compiled code: which NumPy objects compiled code understands, and the type rule of each.

    np.sqrt(x)        →  intrinsic np.sqrt   f64 for an int or f64 argument, f32 for f32 (NumPy's loops)
    np.float32(x)     →  intrinsic np.cast   the NumPy scalar type is the result type
    a.sum(), np.sum(a) → intrinsic np.sum   i64 for signed ints and booleans, u64 for unsigned, else the dtype

Which NumPy names compile, and to which intrinsic, is said by each intrinsic's descriptor
(``aot/intrinsics/numpy.py``), which names its rule here: a function of the descriptor, the operand types and
how the call was written (``aot.intrinsics.spec.Site``). ``aot.codegen.npfuncs`` lowers each intrinsic of a
scalar function for one element; applying a ufunc to whole arrays is one loop over that lowering with the
same rule applied to the element types. NumPy is never imported here: a NumPy object can
only reach the compiler from a module that imported NumPy already (``sys.modules``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..intrinsics.spec import IntrinsicSpec, Site
from ..ir.ops import CmpKind, Intrinsic, Var
from ..types import (
    BOOL,
    F32,
    F64,
    I8,
    I16,
    I32,
    I64,
    NONE,
    U8,
    U16,
    U32,
    U64,
    ArrayType,
    ListType,
    PyValueType,
    ScalarType,
    TupleType,
    Type,
    promote,
)
from ..world.edges import numpy_scalar_text
from .arrays import ArrayDtype
from .rules import RuleError, weak_promote

LIBM = {
    Intrinsic.NP_SQRT: Intrinsic.SQRT,
    Intrinsic.NP_EXP: Intrinsic.EXP,
    Intrinsic.NP_LOG: Intrinsic.LOG,
    Intrinsic.NP_LOG2: Intrinsic.LOG2,
    Intrinsic.NP_LOG10: Intrinsic.LOG10,
    Intrinsic.NP_LOG1P: Intrinsic.LOG1P,
    Intrinsic.NP_EXPM1: Intrinsic.EXPM1,
    Intrinsic.NP_SIN: Intrinsic.SIN,
    Intrinsic.NP_COS: Intrinsic.COS,
    Intrinsic.NP_TAN: Intrinsic.TAN,
    Intrinsic.NP_ARCSIN: Intrinsic.ASIN,
    Intrinsic.NP_ARCCOS: Intrinsic.ACOS,
    Intrinsic.NP_ARCTAN: Intrinsic.ATAN,
    Intrinsic.NP_SINH: Intrinsic.SINH,
    Intrinsic.NP_COSH: Intrinsic.COSH,
    Intrinsic.NP_TANH: Intrinsic.TANH,
    Intrinsic.NP_FABS: Intrinsic.FABS,
    Intrinsic.NP_HYPOT: Intrinsic.HYPOT,
    Intrinsic.NP_ARCTAN2: Intrinsic.ATAN2,
}
"""NumPy intrinsic → the ``math`` intrinsic whose library function computes it (for codegen and overlays)."""

_NAN_REDUCTIONS = "nansum nanmean nanstd nanvar nanmin nanmax nanargmin nanargmax"  # (functions only)
NAN_PLAIN: dict[Intrinsic, Intrinsic] = {
    Intrinsic["NP_" + name.upper()]: Intrinsic["NP_" + name[3:].upper()] for name in _NAN_REDUCTIONS.split()
}
"""Each NaN-ignoring reduction → the plain one: what it is of arrays that cannot hold NaN (integers, booleans)."""

_SCALAR_TYPES = {
    "float64": F64,
    "float32": F32,
    "int64": I64,
    "int32": I32,
    "int16": I16,
    "int8": I8,
    "uint64": U64,
    "uint32": U32,
    "uint16": U16,
    "uint8": U8,
    "bool_": BOOL,
    "double": F64,
    "single": F32,
    "intp": I64,
}
_NAME_OF_TYPE = {t: name for name, t in reversed(list(_SCALAR_TYPES.items()))}


def numpy_type_name(t: ScalarType) -> str:
    """NumPy's name of the scalar type ``t`` stands for (f64 → ``float64``)."""
    return _NAME_OF_TYPE[t]


def _numpy() -> Any:
    return sys.modules.get("numpy")


def scalar_type_of(value: Any) -> ScalarType | None:
    """The aot scalar type a NumPy scalar type stands for (``np.float32`` → f32), or None."""
    np = _numpy()
    if np is None or not isinstance(value, type):
        return None
    for name, t in _SCALAR_TYPES.items():
        if getattr(np, name, None) is value:
            return t
    return None


def scalar_value(value: Any) -> tuple[ScalarType, Any] | None:
    """A NumPy scalar (``np.float32(1e-7)``) as its type and the plain Python value it holds, or None."""
    t = scalar_type_of(type(value))
    if t is None:
        return None
    return t, value.item()


def scalar_text(value: Any) -> str | None:
    """The text a ``global`` edge stores for a NumPy scalar constant (``aot.world.edges.numpy_scalar_text``)."""
    return numpy_scalar_text(value) if scalar_value(value) is not None else None


def float_type(t: ScalarType, name: str) -> ScalarType:
    """The float type NumPy computes a float function of ``t`` in."""
    if t.is_float:
        return t
    if t.bits >= 32:
        return F64
    if t.bits == 16:
        return F32
    raise RuleError(
        f"np.{name} of {t} gives float16 in NumPy, which compiled code does not have; convert the argument "
        f"first (float(x) or np.float32(x))"
    )


def _scalar(t: Type, name: str, bool_ok: bool) -> ScalarType:
    if isinstance(t, ScalarType) and t.is_numeric:
        if t.kind == "b" and not bool_ok:
            raise RuleError(f"np.{name} of a boolean is not supported; convert it with int() first")
        return t
    if isinstance(t, TupleType):
        raise RuleError(f"np.{name} of a tuple is not supported; apply it to each element")
    raise RuleError(f"np.{name} is not supported on {t}")


def _arity(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> None:
    lo, hi = spec.arity
    if len(args) < lo or (hi is not None and len(args) > hi):
        want = f"{lo} argument{'s' if lo > 1 else ''}" if lo == hi else f"{lo} to {hi} arguments"
        raise RuleError(f"np.{site.name or spec.name}() takes {want} here, got {len(args)}")


def _ufunc(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site, element: _Element) -> Type:
    """A function of numbers applied elementwise (a ufunc, ``np.where``, ``np.clip``): of numbers, a number; of
    arrays, a new C-contiguous array of the element type, broadcast as ``aot.infer.elementwise`` says. Python's
    literals (``site.literal``) adapt to the other operand, as NumPy's Python scalars do."""
    _arity(spec, args, site)
    name = site.name or spec.name
    literal = site.literal or (False,) * len(args)
    scalars = tuple(_scalar(a.dtype if isinstance(a, ArrayType) else a, name, spec.booleans) for a in args)
    arrays = [a.ndim for a in args if isinstance(a, ArrayType)]
    if arrays:  # (Python's scalars beside an array adapt to it: aot.infer.elementwise.weak)
        literal = tuple(lit or a in (I64, F64, BOOL) for a, lit in zip(args, literal))
    weak = tuple(lit and not isinstance(a, ArrayType) for a, lit in zip(args, literal))
    result = element(spec.fn, name, scalars, weak)
    return ArrayType(result, max(arrays), "C") if arrays else result


_Element = Callable[[Intrinsic, str, tuple[ScalarType, ...], tuple[bool, ...]], ScalarType]


def float_ufunc(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """``np.sqrt`` …: f32 stays f32, f64 and 32/64-bit integers give f64, i16/u16 give f32 (i8, u8 and
    booleans would give float16, which aot has not: a ``RuleError`` says to convert first)."""
    return _ufunc(spec, args, site, lambda fn, name, s, weak: float_type(s[0], name))


def same_ufunc(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """``np.abs``, ``np.floor`` …: the argument's type (integers keep theirs)."""
    return _ufunc(spec, args, site, lambda fn, name, s, weak: s[0])


def predicate_ufunc(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """``np.isnan`` …: a boolean."""
    return _ufunc(spec, args, site, lambda fn, name, s, weak: BOOL)


def _promoted(fn: Intrinsic, s: tuple[ScalarType, ...], weak: tuple[bool, ...]) -> ScalarType:
    both = weak_promote(s[0], s[1], weak[0], weak[1])
    if fn is Intrinsic.NP_POWER and both.kind == "b":
        raise RuleError("np.power of two booleans is not supported; convert them with int() first")
    return both


def binary_ufunc(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """``np.minimum``, ``np.power`` …: the promoted type of both arguments."""
    return _ufunc(spec, args, site, lambda fn, name, s, weak: _promoted(fn, s, weak))


def float_binary_ufunc(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """``np.divide``, ``np.hypot`` …: a float function of the promoted type of both arguments."""
    return _ufunc(spec, args, site, lambda fn, name, s, weak: float_type(weak_promote(s[0], s[1], *weak), name))


def where_type(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """``np.where(c, x, y)`` of arrays: the condition is a truth value; the values promote."""
    if len(args) == 3 and not any(isinstance(a, ArrayType) for a in args):
        raise RuleError(
            "np.where of three scalars gives a 0-d array, which compiled code does not have; write x if c else y"
        )
    return _ufunc(spec, args, site, lambda fn, name, s, weak: weak_promote(s[1], s[2], weak[1], weak[2]))


def _clip_element(fn: Intrinsic, name: str, s: tuple[ScalarType, ...], weak: tuple[bool, ...]) -> ScalarType:
    if any(t.kind == "b" for t in s):
        raise RuleError("np.clip of booleans is not supported; use integers")
    return weak_promote(weak_promote(s[0], s[1], weak[0], weak[1]), s[2], False, weak[2])


def clip_type(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """``np.clip(a, lo, hi)``: the promoted type of the three."""
    return _ufunc(spec, args, site, _clip_element)


def round_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """``np.round(x[, decimals])``: see ``round_type``."""
    return round_type(args, site.name or spec.name)


def reduction_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """``np.sum(a[, axis][, ddof])`` …: see ``reduction_call``."""
    return reduction_call(spec.fn, args, site.keywords)[0]


def bind_reduction(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> tuple[Type, tuple[int, ...]]:
    return reduction_call(spec.fn, args, site.keywords)


def sort_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """``np.sort(a[, axis[, kind]])``, ``np.argsort``, ``a.sort``: see ``sort_call``."""
    return sort_call(spec.fn, args, site.keywords)[0]


def bind_sort(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> tuple[Type, tuple[int, ...]]:
    return sort_call(spec.fn, args, site.keywords)


def dot_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    _arity(spec, args, site)
    return dot_type(args[0], args[1])


def outer_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    _arity(spec, args, site)
    return outer_type(args[0], args[1])


def norm_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """``np.linalg.norm(a)`` of any array: NumPy flattens it; integers and booleans as float64."""
    _arity(spec, args, site)
    d = _array(args[0], "linalg.norm").dtype
    return d if d.is_float else F64


def searchsorted_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    _arity(spec, args, site)
    return searchsorted_type(args[0], args[1])


def diff_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    _arity(spec, args, site)
    return diff_type(_array(args[0], site.name or spec.name))


def concatenate_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    _arity(spec, args, site)
    return concatenate_type(args[0])


def unique_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """``np.unique(a)``: the elements flattened, sorted, each distinct one once."""
    _arity(spec, args, site)
    return ArrayType(_array(args[0], site.name or spec.name).dtype, 1, "C")


def bincount_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    _arity(spec, args, site)
    return bincount_type(*args)


def nonzero_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    _arity(spec, args, site)
    return nonzero_type(spec.fn, _array(args[0], site.name or spec.name))


def sorting_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """``np.cumsum``, ``np.cumprod``, ``np.median`` of an array."""
    _arity(spec, args, site)
    name = site.name or spec.name
    return _sorting_type(spec.fn, _array(args[0], name), name)


def cast_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """``np.int32(x)`` …: the NumPy scalar type the call names (``site.name``, ``int32``) is the result type."""
    target = _SCALAR_TYPES.get(site.name)
    if target is None:
        raise RuleError("np.cast is written as a call of the NumPy scalar type: np.int32(x)")
    _arity(spec, args, site)
    return cast_type(target, args[0])


def fill_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """``a.fill(v)``: the number converted to the element type, as ``a[...] = v`` stores it; gives None."""
    if len(args) != 2 or not (isinstance(args[1], ScalarType) and args[1].is_numeric):
        raise RuleError("a.fill(v) takes one number here (to fill with an array, write a[...] = b)")
    return NONE


def round_type(args: tuple[Type, ...], name: str = "round") -> Type:
    """``np.round(x)`` / ``np.round(x, decimals)`` (``np.around``, ``a.round``): the type of ``x`` (an array's a
    new one), decimals an integer."""
    if len(args) not in (1, 2):
        raise RuleError(f"np.{name}() takes (x, decimals) here, got {len(args)} arguments")
    if len(args) == 2 and not (isinstance(args[1], ScalarType) and (args[1].is_int or args[1].kind == "b")):
        raise RuleError(f"np.{name}(): decimals must be an integer, not {args[1]}")
    x = args[0]
    element = _scalar(x.dtype if isinstance(x, ArrayType) else x, name, False)
    return ArrayType(element, x.ndim, "C") if isinstance(x, ArrayType) else element


def _sorting_type(fn: Intrinsic, a: ArrayType, name: str) -> Type:
    if fn in (Intrinsic.NP_CUMSUM, Intrinsic.NP_CUMPROD):  # (flattened in C order; NumPy's sum/prod dtype)
        return ArrayType(reduction_type(Intrinsic.NP_SUM, a, name), 1, "C")
    if fn is Intrinsic.NP_MEDIAN:
        if a.dtype.kind == "b":
            raise RuleError("np.median of a boolean array is not supported; convert it to integers first")
        return a.dtype if a.dtype.is_float else F64
    raise AssertionError(fn)


SORT_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")
"""The ``kind=`` values a sort takes: each gives the stable order here (a valid answer for every kind)."""


def sort_call(fn: Intrinsic, args: tuple[Type, ...], keywords: tuple[str, ...] = ()) -> tuple[Type, tuple[int, ...]]:
    """``np.sort(a[, axis[, kind]])``, ``np.argsort``, ``a.sort(…)``, ``a.argsort(…)`` (the array first; the last
    ``len(keywords)`` arguments by keyword): the type, and the operands in order: the array, then ``axis`` when
    it is an integer. Without ``axis`` (NumPy's ``-1``) each line along the last axis is sorted; ``axis=None``
    sorts the array flattened (a 1-D result); ``kind`` is a constant and changes nothing (the order is stable)."""
    name = {Intrinsic.NP_SORT: "np.sort", Intrinsic.NP_ARGSORT: "np.argsort", Intrinsic.ARRAY_SORT: "a.sort"}[fn]
    positional = len(args) - len(keywords)
    if positional > 3:
        raise RuleError(f"{name}() takes (a, axis, kind) here; order= is not supported")
    names = ["a", "axis", "kind"][:positional] + list(keywords)
    if len(set(names)) != len(names):
        raise RuleError(f"{name}() got multiple values for one argument")
    where = dict(zip(names, range(len(args))))
    a = _array(args[0], name.split(".")[-1])
    if "kind" in where:
        kind = args[where["kind"]]
        value = kind.value if isinstance(kind, PyValueType) else None if kind == NONE else kind
        if value not in SORT_KINDS:
            raise RuleError(
                f"{name}(): kind= must be the constant 'quicksort', 'mergesort', 'heapsort' or 'stable' "
                "(compiled code sorts stably whichever is named)"
            )
    axis = args[where["axis"]] if "axis" in where else I64
    dtype = NONE if fn is Intrinsic.ARRAY_SORT else a.dtype if fn is Intrinsic.NP_SORT else I64
    if axis == NONE:
        if fn is Intrinsic.ARRAY_SORT:
            raise RuleError(
                "a.sort(axis=None) is not supported (NumPy sorts in place along an axis); use np.sort(a, axis=None)"
            )
        return ArrayType(dtype, 1, "C"), (0,)  # (flattened)
    if not (isinstance(axis, ScalarType) and axis.is_int):
        raise RuleError(f"{name}(): axis must be an integer or None, not {axis}")
    order = (0, where["axis"]) if "axis" in where else (0,)
    return (NONE if fn is Intrinsic.ARRAY_SORT else ArrayType(dtype, a.ndim, "C")), order


def nonzero_type(fn: Intrinsic, a: ArrayType) -> Type:
    """``np.nonzero(a)`` / ``np.where(a)``: a tuple of one new i64 index array per axis; ``np.flatnonzero(a)``:
    one array of C-order indices; ``np.count_nonzero(a)``: their count (an element is nonzero as ``bool()`` of
    it is true: NaN is)."""
    if fn is Intrinsic.NP_COUNT_NONZERO:
        return I64
    index = ArrayType(I64, 1, "C")
    return TupleType((index,) * a.ndim) if fn is Intrinsic.NP_NONZERO else index


def bincount_type(x: Type, weights: Type | None = None) -> ArrayType:
    """``np.bincount(x[, weights])``: of a 1-D array of integers that fit in i64 (NumPy's safe cast; booleans
    too), a new array of ``max(x) + 1`` counts (i64), or weight sums (f64) given a 1-D array of weights."""
    a = _array(x, "bincount")
    if a.ndim != 1:
        raise RuleError("np.bincount() takes a 1-D array of non-negative integers")
    if not (a.dtype.kind == "b" or (a.dtype.is_int and not (a.dtype.kind == "u" and a.dtype.bits == 64))):
        raise RuleError(f"np.bincount() counts integers (NumPy cannot cast {a.dtype} to int64 safely)")
    if weights is None:
        return ArrayType(I64, 1, "C")
    w = _array(weights, "bincount")
    if w.ndim != 1 or not w.dtype.is_numeric:
        raise RuleError("np.bincount()'s weights are a 1-D array of numbers here")
    return ArrayType(F64, 1, "C")


def concatenate_type(seq: Type) -> ArrayType:
    """``np.concatenate(seq)`` of a tuple or a list of arrays of one number of axes, along the first axis: a new
    C array of their promoted dtype (NumPy's ``result_type``)."""
    if isinstance(seq, TupleType):
        items = seq.items
    elif isinstance(seq, ListType):
        items = (seq.item,)
    else:
        raise RuleError(f"np.concatenate() takes a tuple or a list of arrays here, not {seq}")
    if not items:
        raise RuleError("np.concatenate() needs at least one array to concatenate")
    arrays = [t for t in items if isinstance(t, ArrayType)]
    if len(arrays) != len(items):
        raise RuleError("np.concatenate() joins arrays here; make each item an array (np.array([x]) for a number)")
    if len({t.ndim for t in arrays}) != 1:
        raise RuleError("np.concatenate(): all the input arrays must have the same number of dimensions")
    dtype = arrays[0].dtype
    for t in arrays[1:]:
        dtype = promote(dtype, t.dtype)
    return ArrayType(dtype, arrays[0].ndim, "C")


def diff_type(a: ArrayType) -> ArrayType:
    """``np.diff(a)`` of a 1-D array: a new C array of ``a``'s dtype (booleans differ by ``!=``, as in NumPy)."""
    if a.ndim != 1:
        raise RuleError("np.diff is supported for 1-D arrays only here (NumPy differences along the last axis)")
    return ArrayType(a.dtype, 1, "C")


def cast_type(target: ScalarType, arg: Type) -> ScalarType:
    """``np.float32(x)`` and the other NumPy scalar types called on a number."""
    if not (isinstance(arg, ScalarType) and arg.is_numeric):
        raise RuleError(f"np.{_NAME_OF_TYPE[target]}() takes one number here, not {arg}")
    return target


def _array(t: Type, name: str) -> ArrayType:
    if not isinstance(t, ArrayType):
        raise RuleError(f"np.{name}() needs an array here, not {t}")
    return t


def reduction_type(fn: Intrinsic, a: Type, name: str | None = None) -> ScalarType:
    """The scalar a full reduction of an array gives (NumPy's rules: sums of integers in 64 bits)."""
    name = name or fn.value.split(".", 1)[1]
    d = _array(a, name).dtype
    fn = NAN_PLAIN.get(fn, fn)  # (np.nansum's type is np.sum's …)
    if fn in (Intrinsic.NP_SUM, Intrinsic.NP_PROD):
        if d.is_float:
            return d
        return U64 if d.kind == "u" else I64
    if fn in (Intrinsic.NP_MIN, Intrinsic.NP_MAX):
        return d
    if fn in (Intrinsic.NP_ARGMIN, Intrinsic.NP_ARGMAX):
        return I64
    if fn in (Intrinsic.NP_ALL, Intrinsic.NP_ANY):
        return BOOL
    # mean, std, var: in the float type, f64 for integers and booleans
    return d if d.is_float else F64


def dot_type(a: Type, b: Type) -> Type:
    """``np.dot(x, y)`` / ``x @ y`` of 1-D and 2-D arrays: the inner product of two 1-D arrays (a scalar), a
    matrix times a vector (1-D), a vector times a matrix (1-D), a matrix product (2-D): a new array."""
    x, y = _array(a, "dot"), _array(b, "dot")
    if x.ndim > 2 or y.ndim > 2:
        raise RuleError("np.dot and '@' are supported for 1-D and 2-D arrays only")
    t = promote(x.dtype, y.dtype)
    if t.kind == "b":
        raise RuleError("np.dot of boolean arrays is not supported; use integer arrays")
    ndim = x.ndim + y.ndim - 2
    return ArrayType(t, ndim, "C") if ndim else t


def outer_type(a: Type, b: Type) -> ArrayType:
    """``np.outer(x, y)``: a new 2-D C array ``x.ravel()[i] * y.ravel()[j]`` of the promoted dtype (NumPy makes
    arrays of both first, so a number counts as an array of its type, one element; booleans give their and)."""
    dtypes = []
    for t in (a, b):
        d = t.dtype if isinstance(t, ArrayType) else t
        if not (isinstance(d, ScalarType) and d.is_numeric):
            raise RuleError(f"np.outer() takes arrays or numbers, not {t}")
        dtypes.append(d)
    return ArrayType(promote(dtypes[0], dtypes[1]), 2, "C")


def searchsorted_type(a: Type, x: Type) -> Type:
    """``np.searchsorted(a, x)``: an index (i64) for a number ``x``; for an array of numbers, a new C array of
    ``x``'s shape holding the index of each of its elements (NumPy's ``intp`` array)."""
    arr = _array(a, "searchsorted")
    if arr.ndim != 1:
        raise RuleError("np.searchsorted needs a 1-D sorted array")
    if isinstance(x, ArrayType) and x.dtype.is_numeric:
        return ArrayType(I64, x.ndim, "C")
    if not (isinstance(x, ScalarType) and x.is_numeric):
        raise RuleError(f"np.searchsorted(a, x) takes a number or an array of numbers as x, not {x}")
    return I64


def method_type(spec: IntrinsicSpec, obj: ArrayType, args: tuple[Type, ...]) -> Type:
    """``a.<method>(*args)`` of an array method without a binding (``spec.bind``) of its own."""
    fn, name = spec.fn, spec.methods[0] if spec.methods else spec.name
    if fn in (Intrinsic.NP_CUMSUM, Intrinsic.NP_CUMPROD, Intrinsic.NP_CLIP):
        if fn is Intrinsic.NP_CLIP and len(args) != 2 or fn is not Intrinsic.NP_CLIP and args:
            raise RuleError(f"a.{name}() takes {'(lo, hi)' if fn is Intrinsic.NP_CLIP else 'no arguments'} here")
    return spec.rule(spec, (obj, *args), Site(name=name))


def searchsorted_side(side: Type) -> Intrinsic:
    """``np.searchsorted(a, x, side="left"|"right")``: the intrinsic of that side."""
    value = side.value if isinstance(side, PyValueType) else None
    if value not in ("left", "right"):
        raise RuleError("np.searchsorted(): side= must be the constant 'left' or 'right'")
    return Intrinsic.NP_SEARCHSORTED if value == "left" else Intrinsic.NP_SEARCHSORTED_RIGHT


def reduction_call(
    fn: Intrinsic, args: tuple[Type, ...], keywords: tuple[str, ...] = ()
) -> tuple[Type, tuple[int, ...]]:
    """A reduction called with its arguments (the array first; the last ``len(keywords)`` by keyword): its
    type, and which arguments are its operands in order: the array, then ``axis`` (when given: a 1-D result of
    a 2-D array), then ``ddof``. ``axis`` is the second positional argument, as in NumPy's signatures."""
    name = fn.value.split(".", 1)[1]
    positional = len(args) - len(keywords)
    if positional > 2:
        raise RuleError(f"np.{name}(): give ddof= by keyword (other arguments, dtype= and out=, are not supported)")
    where = dict(zip(keywords, range(positional, len(args))))
    if positional == 2:
        where["axis"] = 1
    order = [0] + [where[k] for k in ("axis", "ddof") if k in where]
    a = _array(args[0], name)
    if "ddof" in where:
        ddof = args[where["ddof"]]
        if not (isinstance(ddof, ScalarType) and ddof.is_numeric and ddof.kind != "b"):
            raise RuleError(f"ddof= must be a number, not {ddof}")
    scalar = reduction_type(fn, a, name)
    if "axis" not in where:
        return scalar, tuple(order)
    if fn in NAN_PLAIN:
        raise RuleError(f"np.{name}() with axis= is not supported here (only of the whole array); loop over the lines")
    axis = args[where["axis"]]
    if not (isinstance(axis, ScalarType) and axis.is_int):
        raise RuleError(f"np.{name}(): axis must be an integer here (one axis), not {axis}")
    if a.ndim != 2:
        raise RuleError(
            f"np.{name}() with axis= is supported for 2-D arrays here (a 1-D result); of a 1-D array, leave axis out"
        )
    return ArrayType(scalar, 1, "C"), tuple(order)


@dataclass(frozen=True)
class BoundMethod:
    """``a.sum`` before it is called: the reduction and the array variable it was read from."""

    fn: Intrinsic
    obj: Var


_BOUND: dict[BoundMethod, BoundMethod] = {}


def bound_method(fn: Intrinsic, obj: Var) -> BoundMethod:
    """The one ``BoundMethod`` of ``fn`` on ``obj`` (compile-time values are compared by identity)."""
    method = BoundMethod(fn, obj)
    return _BOUND.setdefault(method, method)


def dtype_scalar_type(value: Any) -> ScalarType | None:
    """The aot scalar type a compile-time dtype stands for: ``a.dtype`` (a NumPy dtype), a NumPy scalar type
    (``np.float64``) or an aot type (``aot.f64``); None for anything else. (For ``dtype=`` arguments.)"""
    if isinstance(value, ScalarType):
        return value if value.is_numeric else None
    if isinstance(value, ArrayDtype):
        return value.scalar
    np = _numpy()
    if np is None:
        return None
    if isinstance(value, np.dtype):
        value = value.type
    return scalar_type_of(value)


def _is_dtype(value: Any) -> bool:
    """Whether ``value`` is a dtype (``a.dtype``: ``aot.infer.arrays.ArrayDtype``; or a NumPy dtype)."""
    if isinstance(value, ArrayDtype):
        return True
    np = _numpy()
    return np is not None and isinstance(value, np.dtype)


def compile_time_compare(op: CmpKind, a: Type, b: Type) -> bool | None:
    """``a.dtype == np.float64`` (and ``!=``) folded at compile time; None for other comparisons."""
    if op not in (CmpKind.EQ, CmpKind.NE) or not (isinstance(a, PyValueType) and isinstance(b, PyValueType)):
        return None
    if not (_is_dtype(a.value) or _is_dtype(b.value)):
        return None
    x, y = dtype_scalar_type(a.value), dtype_scalar_type(b.value)
    if x is None or y is None:
        return None
    return (x == y) == (op is CmpKind.EQ)
