"""NumPy in compiled code: which NumPy objects compiled code understands, and the type rule of each.

    np.sqrt(x)        →  intrinsic np.sqrt   f64 for an int or f64 argument, f32 for f32 (NumPy's loops)
    np.float32(x)     →  intrinsic np.cast   the NumPy scalar type is the result type
    a.sum(), np.sum(a) → intrinsic np.sum   i64 for signed ints and booleans, u64 for unsigned, else the dtype

``TABLE`` is the one table of NumPy functions: the name in the ``numpy`` module → its intrinsic and its rule
(``Rule``: how the result type follows from the argument types). ``aot.codegen.npfuncs`` lowers each
intrinsic of a scalar function for one element; applying a ufunc to whole arrays later is one loop over that
lowering with the same rule applied to the element types. NumPy is never imported here: a NumPy object can
only reach the compiler from a module that imported NumPy already (``sys.modules``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

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

# How a result type follows from the argument types (NumPy's loops, for the types aot compiles):
#   float   - a float function: f32 stays f32, f64 and 32/64-bit integers give f64, i16/u16 give f32
#             (i8, u8 and booleans would give float16, which aot has not: a RuleError says to convert first)
#   same    - the argument's type (abs, floor, ceil, trunc, square, sign on integers keep their type)
#   bool    - a predicate (isnan …)
#   binary  - the promoted type of both arguments
#   binfloat - a float function of the promoted type of both arguments
#   reduce_* - reductions of an array (see ``reduction_type``)


@dataclass(frozen=True)
class Entry:
    fn: Intrinsic
    rule: str
    arity: int = 1
    bool_ok: bool = True  # whether NumPy has a loop for booleans that aot can give
    libm: Intrinsic | None = None  # the ``math`` function whose C library function (or LLVM's) computes it


_LIBM = {
    "sqrt": Intrinsic.SQRT,
    "exp": Intrinsic.EXP,
    "log": Intrinsic.LOG,
    "log2": Intrinsic.LOG2,
    "log10": Intrinsic.LOG10,
    "log1p": Intrinsic.LOG1P,
    "expm1": Intrinsic.EXPM1,
    "sin": Intrinsic.SIN,
    "cos": Intrinsic.COS,
    "tan": Intrinsic.TAN,
    "arcsin": Intrinsic.ASIN,
    "arccos": Intrinsic.ACOS,
    "arctan": Intrinsic.ATAN,
    "sinh": Intrinsic.SINH,
    "cosh": Intrinsic.COSH,
    "tanh": Intrinsic.TANH,
    "fabs": Intrinsic.FABS,
}


_UNARY_FLOAT = "sqrt exp exp2 log log2 log10 log1p expm1 sin cos tan arcsin arccos arctan sinh cosh tanh fabs rint"
_REDUCTIONS = "sum prod min max mean std var argmin argmax all any"
_NAN_REDUCTIONS = "nansum nanmean nanstd nanvar nanmin nanmax nanargmin nanargmax"  # (functions only)
NAN_PLAIN: dict[Intrinsic, Intrinsic] = {
    Intrinsic["NP_" + name.upper()]: Intrinsic["NP_" + name[3:].upper()] for name in _NAN_REDUCTIONS.split()
}
"""Each NaN-ignoring reduction → the plain one: what it is of arrays that cannot hold NaN (integers, booleans)."""

TABLE: dict[str, Entry] = {
    **{name: Entry(Intrinsic["NP_" + name.upper()], "float", libm=_LIBM.get(name)) for name in _UNARY_FLOAT.split()},
    "radians": Entry(Intrinsic.NP_RADIANS, "float"),
    "deg2rad": Entry(Intrinsic.NP_RADIANS, "float"),
    "degrees": Entry(Intrinsic.NP_DEGREES, "float"),
    "rad2deg": Entry(Intrinsic.NP_DEGREES, "float"),
    "round": Entry(Intrinsic.NP_ROUND, "round", 2, bool_ok=False),  # (x[, decimals]: round_type)
    "around": Entry(Intrinsic.NP_ROUND, "round", 2, bool_ok=False),
    "floor": Entry(Intrinsic.NP_FLOOR, "same"),
    "ceil": Entry(Intrinsic.NP_CEIL, "same"),
    "trunc": Entry(Intrinsic.NP_TRUNC, "same"),
    "abs": Entry(Intrinsic.NP_ABS, "same"),
    "absolute": Entry(Intrinsic.NP_ABS, "same"),
    "sign": Entry(Intrinsic.NP_SIGN, "same", bool_ok=False),
    "square": Entry(Intrinsic.NP_SQUARE, "same", bool_ok=False),
    "isnan": Entry(Intrinsic.NP_ISNAN, "bool"),
    "isinf": Entry(Intrinsic.NP_ISINF, "bool"),
    "isfinite": Entry(Intrinsic.NP_ISFINITE, "bool"),
    "signbit": Entry(Intrinsic.NP_SIGNBIT, "bool", bool_ok=False),
    "minimum": Entry(Intrinsic.NP_MINIMUM, "binary", 2),
    "maximum": Entry(Intrinsic.NP_MAXIMUM, "binary", 2),
    "fmin": Entry(Intrinsic.NP_FMIN, "binary", 2),
    "fmax": Entry(Intrinsic.NP_FMAX, "binary", 2),
    "power": Entry(Intrinsic.NP_POWER, "binary", 2, bool_ok=False),
    "floor_divide": Entry(Intrinsic.NP_FLOOR_DIVIDE, "binary", 2, bool_ok=False),
    "remainder": Entry(Intrinsic.NP_REMAINDER, "binary", 2, bool_ok=False),
    "mod": Entry(Intrinsic.NP_REMAINDER, "binary", 2, bool_ok=False),
    "fmod": Entry(Intrinsic.NP_FMOD, "binary", 2, bool_ok=False),
    "divide": Entry(Intrinsic.NP_DIVIDE, "binfloat", 2, bool_ok=False),
    "true_divide": Entry(Intrinsic.NP_DIVIDE, "binfloat", 2, bool_ok=False),
    "hypot": Entry(Intrinsic.NP_HYPOT, "binfloat", 2, libm=Intrinsic.HYPOT),
    "arctan2": Entry(Intrinsic.NP_ARCTAN2, "binfloat", 2, libm=Intrinsic.ATAN2),
    "copysign": Entry(Intrinsic.NP_COPYSIGN, "binfloat", 2),
    **{name: Entry(Intrinsic["NP_" + name.upper()], "reduce", 1) for name in _REDUCTIONS.split()},
    **{name: Entry(Intrinsic["NP_" + name.upper()], "reduce", 1) for name in _NAN_REDUCTIONS.split()},
    "amin": Entry(Intrinsic.NP_MIN, "reduce", 1),
    "amax": Entry(Intrinsic.NP_MAX, "reduce", 1),
    "dot": Entry(Intrinsic.NP_DOT, "dot", 2),
    "outer": Entry(Intrinsic.NP_OUTER, "outer", 2),
    "norm": Entry(Intrinsic.NP_NORM, "norm", 1),  # (np.linalg.norm: _MODULES)
    "searchsorted": Entry(Intrinsic.NP_SEARCHSORTED, "searchsorted", 2),
    "where": Entry(Intrinsic.NP_WHERE, "where", 3),
    "clip": Entry(Intrinsic.NP_CLIP, "clip", 3),
    "cumsum": Entry(Intrinsic.NP_CUMSUM, "cumsum", 1),
    "cumprod": Entry(Intrinsic.NP_CUMPROD, "cumsum", 1),
    "sort": Entry(Intrinsic.NP_SORT, "sort", 1),
    "argsort": Entry(Intrinsic.NP_ARGSORT, "sort", 1),
    "median": Entry(Intrinsic.NP_MEDIAN, "median", 1),
    "diff": Entry(Intrinsic.NP_DIFF, "diff", 1),
    "concatenate": Entry(Intrinsic.NP_CONCATENATE, "concatenate", 1),
    "unique": Entry(Intrinsic.NP_UNIQUE, "unique", 1),
    "bincount": Entry(Intrinsic.NP_BINCOUNT, "bincount", 1),  # (and a second argument: the weights)
    "nonzero": Entry(Intrinsic.NP_NONZERO, "nonzero", 1),
    "flatnonzero": Entry(Intrinsic.NP_FLATNONZERO, "nonzero", 1),
    "count_nonzero": Entry(Intrinsic.NP_COUNT_NONZERO, "nonzero", 1),
}

_MODULES = {"norm": "numpy.linalg"}
"""The module of each function of the table not in ``numpy`` itself."""

LIBM: dict[Intrinsic, Intrinsic] = {e.fn: e.libm for e in TABLE.values() if e.libm is not None}
"""NumPy intrinsic → the ``math`` intrinsic whose library function computes it (for codegen and overlays)."""

ARRAY_METHODS: dict[str, Intrinsic] = {
    name: Intrinsic["NP_" + name.upper()] for name in _REDUCTIONS.split() + ["cumsum", "cumprod", "argsort", "clip"]
}
ARRAY_METHODS["sort"] = Intrinsic.ARRAY_SORT
ARRAY_METHODS["round"] = Intrinsic.NP_ROUND
ARRAY_METHODS["fill"] = Intrinsic.ARRAY_FILL
"""``a.sum()`` and the other reductions, ``a.cumsum()``, ``a.argsort()``, ``a.clip(lo, hi)``, ``a.round(d)``,
``a.sort()`` and ``a.fill(v)`` (in place) as array methods."""

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


def _numpy() -> Any:
    return sys.modules.get("numpy")


def function_entry(value: Any) -> tuple[str, Entry] | None:
    """The name and table entry of a NumPy function object (``np.sqrt``, ``np.sum``), or None. The object
    is known by its own name (``np.abs`` is ``absolute``), and must be NumPy's: a ufunc, or a function of
    the ``numpy`` module (not a user's function named ``sqrt`` bound in its place)."""
    np = _numpy()
    name = getattr(value, "__name__", None)
    if np is None or not isinstance(name, str) or name not in TABLE:
        return None
    if not isinstance(value, np.ufunc) and getattr(value, "__module__", None) != _MODULES.get(name, "numpy"):
        return None
    return name, TABLE[name]


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


def function_type(name: str, entry: Entry, args: tuple[Type, ...], literal: tuple[bool, ...]) -> Type:
    """The result type of ``np.<name>(*args)`` (``literal``: which arguments are Python literals, which adapt
    to the other operand as NumPy's Python scalars do). A ufunc given an array gives a new C-contiguous array
    of the element type, broadcast as ``aot.infer.elementwise`` says."""
    if entry.rule == "round":
        return round_type(args, name)
    if len(args) != entry.arity and not (entry.rule in ("reduce", "bincount") and len(args) == 2):  # (axis, weights)
        plural = "s" if entry.arity > 1 else ""
        qualified = _MODULES.get(name, "numpy").replace("numpy", "np", 1) + "." + name
        raise RuleError(f"{qualified}() takes {entry.arity} argument{plural} here, got {len(args)}")
    if entry.rule == "reduce":
        return reduction_call(entry.fn, args)[0]
    if entry.rule == "dot":
        return dot_type(args[0], args[1])
    if entry.rule == "outer":
        return outer_type(args[0], args[1])
    if entry.rule == "norm":  # (of any array: NumPy flattens it; integers and booleans as float64)
        d = _array(args[0], "linalg.norm").dtype
        return d if d.is_float else F64
    if entry.rule == "searchsorted":
        return searchsorted_type(args[0], args[1])
    if entry.rule == "sort":
        return sort_call(entry.fn, args)[0]
    if entry.rule == "diff":
        return diff_type(_array(args[0], name))
    if entry.rule == "concatenate":
        return concatenate_type(args[0])
    if entry.rule == "unique":  # (the elements flattened, sorted, each distinct one once)
        return ArrayType(_array(args[0], name).dtype, 1, "C")
    if entry.rule == "bincount":
        return bincount_type(*args)
    if entry.rule == "nonzero":
        return nonzero_type(entry.fn, _array(args[0], name))
    if entry.rule in ("cumsum", "median"):
        return _sorting_type(entry.fn, _array(args[0], name), name)
    if entry.rule == "where" and not any(isinstance(a, ArrayType) for a in args):
        raise RuleError(
            "np.where of three scalars gives a 0-d array, which compiled code does not have; write x if c else y"
        )
    scalars = tuple(_scalar(a.dtype if isinstance(a, ArrayType) else a, name, entry.bool_ok) for a in args)
    arrays = [a.ndim for a in args if isinstance(a, ArrayType)]
    if arrays:  # (Python's scalars beside an array adapt to it: aot.infer.elementwise.weak)
        literal = tuple(lit or a in (I64, F64, BOOL) for a, lit in zip(args, literal))
    weak = tuple(lit and not isinstance(a, ArrayType) for a, lit in zip(args, literal))
    element = _element_type(name, entry, scalars, weak)
    return ArrayType(element, max(arrays), "C") if arrays else element  # (a ufunc of arrays: a new array)


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


def takes_decimals_keyword(callee: Any, keywords: tuple[str, ...]) -> bool:
    """Whether a call is ``np.round(x, decimals=d)`` (or ``a.round(decimals=d)``)."""
    if keywords != ("decimals",):
        return False
    if isinstance(callee, BoundMethod):
        return callee.fn is Intrinsic.NP_ROUND
    found = function_entry(callee)
    return found is not None and found[1].fn is Intrinsic.NP_ROUND


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

_SORTS = (Intrinsic.NP_SORT, Intrinsic.NP_ARGSORT, Intrinsic.ARRAY_SORT)


def is_sort(callee: Any) -> bool:
    """Whether ``callee`` is ``np.sort`` or ``np.argsort`` (whose ``kind`` is a string constant)."""
    found = function_entry(callee)
    return found is not None and found[1].fn in _SORTS


def _intrinsic_of(callee: Any) -> Intrinsic | None:
    """The intrinsic a call's callee stands for: an array method's, or a NumPy function's; else None."""
    if isinstance(callee, BoundMethod):
        return callee.fn
    found = function_entry(callee)
    return found[1].fn if found is not None else None


def takes_sort_keywords(callee: Any, keywords: tuple[str, ...]) -> bool:
    """Whether a call is a sort given ``axis=`` and/or ``kind=`` by keyword (``np.sort``, ``np.argsort``,
    ``a.sort``, ``a.argsort``)."""
    fn = _intrinsic_of(callee)
    return fn in _SORTS and bool(keywords) and set(keywords) <= {"axis", "kind"} and len(set(keywords)) == len(keywords)


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


def _element_type(name: str, entry: Entry, scalars: tuple[ScalarType, ...], literal: tuple[bool, ...]) -> ScalarType:
    if entry.rule == "where":  # (the condition is a truth value; the values promote)
        return weak_promote(scalars[1], scalars[2], literal[1], literal[2])
    if entry.rule == "clip":
        if any(s.kind == "b" for s in scalars):
            raise RuleError("np.clip of booleans is not supported; use integers")
        return weak_promote(weak_promote(scalars[0], scalars[1], literal[0], literal[1]), scalars[2], False, literal[2])
    if entry.rule == "float":
        return float_type(scalars[0], name)
    if entry.rule == "same":
        return scalars[0]
    if entry.rule == "bool":
        return BOOL
    both = weak_promote(scalars[0], scalars[1], literal[0], literal[1])
    if entry.rule == "binfloat":
        return float_type(both, name)
    if entry.fn is Intrinsic.NP_POWER and both.kind == "b":
        raise RuleError("np.power of two booleans is not supported; convert them with int() first")
    return both


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


def method_type(fn: Intrinsic, obj: ArrayType, args: tuple[Type, ...]) -> Type:
    name = fn.value.split(".", 1)[1]
    if fn in _SORTS:
        return sort_call(fn, (obj, *args))[0]
    if fn is Intrinsic.NP_ROUND:
        return round_type((obj, *args))
    if fn is Intrinsic.ARRAY_FILL:  # (the number converted to the element type, as a[...] = v stores it)
        if len(args) != 1 or not (isinstance(args[0], ScalarType) and args[0].is_numeric):
            raise RuleError("a.fill(v) takes one number here (to fill with an array, write a[...] = b)")
        return NONE
    if fn in (Intrinsic.NP_CUMSUM, Intrinsic.NP_CUMPROD, Intrinsic.NP_CLIP):
        if fn is Intrinsic.NP_CLIP and len(args) != 2 or fn is not Intrinsic.NP_CLIP and args:
            raise RuleError(f"a.{name}() takes {'(lo, hi)' if fn is Intrinsic.NP_CLIP else 'no arguments'} here")
        return function_type(name, TABLE[name], (obj, *args), (False,) * (1 + len(args)))
    return reduction_call(fn, (obj, *args))[0]


REDUCE_FNS = frozenset(ARRAY_METHODS[name] for name in _REDUCTIONS.split()) | frozenset(NAN_PLAIN)
_SPREAD = (Intrinsic.NP_STD, Intrinsic.NP_VAR, Intrinsic.NP_NANSTD, Intrinsic.NP_NANVAR)


def searchsorted_side(callee: Any, keywords: tuple[str, ...], side: Type | None) -> Intrinsic | None:
    """``np.searchsorted(a, x, side="left"|"right")``: the intrinsic of that side; None for other calls."""
    found = function_entry(callee)
    if keywords != ("side",) or found is None or found[1].fn is not Intrinsic.NP_SEARCHSORTED:
        return None
    value = side.value if isinstance(side, PyValueType) else None
    if value not in ("left", "right"):
        raise RuleError("np.searchsorted(): side= must be the constant 'left' or 'right'")
    return Intrinsic.NP_SEARCHSORTED if value == "left" else Intrinsic.NP_SEARCHSORTED_RIGHT


def takes_reduction_keywords(callee: Any, keywords: tuple[str, ...]) -> bool:
    """Whether a call is a reduction given ``axis=`` (and, for ``std``/``var``, ``ddof=``) by keyword."""
    fn = _intrinsic_of(callee)
    allowed = {"axis", "ddof"} if fn in _SPREAD else {"axis"}
    return fn in REDUCE_FNS and bool(keywords) and set(keywords) <= allowed and len(set(keywords)) == len(keywords)


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
