"""Types of whole-array operations: arithmetic, comparisons and ufuncs applied to arrays element by element.

    a * 2.0 + b      (f64[:], f64[:])   →  f64[:, ::1]-style new arrays: f64[::1]
    a > 0            (i32[:, :])        →  bool[:, ::1]
    np.sqrt(a)       (i64[:])           →  f64[::1]

Every result is a new C-contiguous array of the broadcast shape (NumPy's rules: shapes aligned on the right,
an axis of length 1 stretched), its dtype NumPy's: the promoted dtype of the operands, a Python literal adapting
to an array's dtype (``f32_array * 2.0`` is f32; a scalar variable counts as a NumPy scalar of its type), true
division of integers in f64, comparisons giving booleans. ``aot.codegen.elementwise`` lowers them as one loop
over the scalar lowering of each element. ``a += b`` on an array name writes into the array (NumPy's in-place
ufunc): the result is cast back to its dtype where NumPy's ``same_kind`` rule allows it.
"""

from __future__ import annotations

from ..ir.ops import BinOpKind, CmpKind, Intrinsic, UnaryKind
from ..types import BOOL, F64, I64, ArrayType, ScalarType, Type
from .npfuncs import TABLE
from .rules import RuleError, weak_promote

INPLACE: dict[BinOpKind, Intrinsic] = {
    BinOpKind.ADD: Intrinsic.ARRAY_IADD,
    BinOpKind.SUB: Intrinsic.ARRAY_ISUB,
    BinOpKind.MUL: Intrinsic.ARRAY_IMUL,
    BinOpKind.TRUEDIV: Intrinsic.ARRAY_ITRUEDIV,
    BinOpKind.FLOORDIV: Intrinsic.ARRAY_IFLOORDIV,
    BinOpKind.MOD: Intrinsic.ARRAY_IMOD,
    BinOpKind.POW: Intrinsic.ARRAY_IPOW,
    BinOpKind.AND: Intrinsic.ARRAY_IAND,
    BinOpKind.OR: Intrinsic.ARRAY_IOR,
    BinOpKind.XOR: Intrinsic.ARRAY_IXOR,
}
"""``a op= b`` on an array variable: the in-place intrinsic of each operator (operands: the array, ``b``)."""

KIND_OF_INPLACE = {fn: kind for kind, fn in INPLACE.items()}

ELEMENTWISE_FUNCTIONS = frozenset(
    {e.fn for e in TABLE.values() if e.rule in ("float", "same", "bool", "binary", "binfloat", "where", "clip")}
)
"""The NumPy intrinsics that apply a scalar function to every element (ufuncs, ``np.where``, ``np.clip``)."""

_UFUNC = {
    BinOpKind.ADD: "add",
    BinOpKind.SUB: "subtract",
    BinOpKind.MUL: "multiply",
    BinOpKind.TRUEDIV: "true_divide",
    BinOpKind.FLOORDIV: "floor_divide",
    BinOpKind.MOD: "remainder",
    BinOpKind.POW: "power",
    BinOpKind.AND: "bitwise_and",
    BinOpKind.OR: "bitwise_or",
    BinOpKind.XOR: "bitwise_xor",
}


def involves_array(*types: Type) -> bool:
    return any(isinstance(t, ArrayType) for t in types)


def element_type(t: Type, what: str) -> ScalarType:
    """The element type of an operand: an array's dtype, or a number itself."""
    if isinstance(t, ArrayType):
        return t.dtype
    if isinstance(t, ScalarType) and t.is_numeric:
        return t
    raise RuleError(f"{what} between an array and {t} is not supported; use arrays and numbers")


def result_array(dtype: ScalarType, *operands: Type) -> ArrayType:
    """A new C-contiguous array with as many axes as the operand with the most."""
    return ArrayType(dtype, max(t.ndim for t in operands if isinstance(t, ArrayType)), "C")


_PYTHON_SCALARS = (I64, F64, BOOL)


def weak(t: Type, literal: bool) -> bool:
    """Whether an operand beside an array adapts to the array's dtype as NumPy's Python scalars do: a literal,
    or a scalar of the types Python's ``int``, ``float`` and ``bool`` arrive as (``i32_array + n`` is i32 for
    an ``int`` n; a NumPy ``np.int64`` scalar there would give i64 in NumPy: convert the array instead)."""
    return not isinstance(t, ArrayType) and (literal or t in _PYTHON_SCALARS)


def _promoted(a: Type, b: Type, a_literal: bool, b_literal: bool, what: str) -> tuple[ScalarType, ScalarType]:
    x, y = element_type(a, what), element_type(b, what)
    both = weak_promote(x, y, weak(a, a_literal), weak(b, b_literal))
    return x, both


def binop_dtype(op: BinOpKind, a: Type, b: Type, a_literal: bool = False, b_literal: bool = False) -> ScalarType:
    """The dtype of ``a op b`` where either is an array."""
    symbol = f"'{op.value}'"
    if op not in _UFUNC:
        raise RuleError(f"{symbol} on whole arrays is not supported; loop over the elements")
    x, both = _promoted(a, b, a_literal, b_literal, symbol)
    y = element_type(b, symbol)
    if op in (BinOpKind.AND, BinOpKind.OR, BinOpKind.XOR):
        if both.is_float:
            raise RuleError(f"bitwise {symbol} needs integer or boolean arrays, not {x} and {y}")
        return both
    if x.kind == "b" and y.kind == "b":
        raise RuleError(
            f"arithmetic {symbol} of two booleans on whole arrays is not supported; use '|', '&' or '^', or "
            f"convert to integers first (a.astype(np.int64))"
        )
    if op is BinOpKind.TRUEDIV and not both.is_float:
        return F64
    return both


def binop_type(op: BinOpKind, a: Type, b: Type, a_literal: bool = False, b_literal: bool = False) -> ArrayType:
    return result_array(binop_dtype(op, a, b, a_literal, b_literal), a, b)


def compare_operand_dtype(a: Type, b: Type, a_literal: bool = False, b_literal: bool = False) -> ScalarType:
    """The dtype both sides of an elementwise comparison are converted to."""
    return _promoted(a, b, a_literal, b_literal, "comparison")[1]


def compare_type(op: CmpKind, a: Type, b: Type) -> ArrayType:
    compare_operand_dtype(a, b)
    return result_array(BOOL, a, b)


def unary_type(op: UnaryKind, a: ArrayType) -> ArrayType:
    d = a.dtype
    if op is UnaryKind.NOT:
        raise RuleError("the truth value of an array is ambiguous; use ~mask for the elementwise 'not', or a.any()")
    if op is UnaryKind.INVERT:
        if d.is_float:
            raise RuleError(f"'~' needs an integer or boolean array, not {d}")
        return ArrayType(d, a.ndim, "C")
    if d.kind == "b":
        raise RuleError(f"unary '{op.value}' of a boolean array is not supported; use '~' for the logical not")
    return ArrayType(d, a.ndim, "C")


_KIND_ORDER = {"b": 0, "u": 1, "i": 2, "f": 3}


def inplace_type(op: BinOpKind, target: ArrayType, value: Type, value_literal: bool = False) -> ArrayType:
    """``target op= value``: the result is cast back into the target, which NumPy allows within a kind or to a
    higher one (``same_kind``: f64 into f32, not f64 into i64)."""
    if isinstance(value, ArrayType) and value.ndim > target.ndim:
        raise RuleError(
            f"'{op.value}=' of an array with {value.ndim} axes into one with {target.ndim} cannot broadcast; "
            f"write a new array (x = x {op.value} y)"
        )
    dtype = binop_dtype(op, target, value, False, value_literal)
    if _KIND_ORDER[dtype.kind] > _KIND_ORDER[target.dtype.kind]:
        raise RuleError(
            f"'{op.value}=' cannot cast the {dtype} result of {_UFUNC[op]} back into the {target.dtype} array "
            f"(NumPy's same_kind rule); write a new array instead (x = x {op.value} y)"
        )
    return target


# ---------------------------------------------------------------------------- masks and index arrays


def selection_type(a: ArrayType, index: ArrayType) -> ArrayType:
    """``a[mask]`` (a boolean array of ``a``'s shape: the selected elements in C order, 1-D) or ``a[idx]`` (a
    1-D integer array indexing the first axis: ``a.ndim`` axes, the first of ``len(idx)``): a new array."""
    if index.dtype.kind == "b":
        if index.ndim != a.ndim:
            raise RuleError(
                f"a boolean mask must have the array's {a.ndim} axes here (a[mask] with mask of its shape), "
                f"not {index.ndim}"
            )
        return ArrayType(a.dtype, 1, "C")
    if index.dtype.is_float:
        raise RuleError("arrays used as indices must be of integer or boolean type, not float")
    if index.ndim != 1:
        raise RuleError("an index array must be 1-D here (it indexes the first axis): a[idx]")
    return ArrayType(a.dtype, a.ndim, "C")


def selection_assign_check(a: ArrayType, index: ArrayType, value: Type) -> None:
    """``a[mask] = v`` / ``a[idx] = v``: ``v`` a number, or a 1-D array of one value per selected element
    (or of one value) for a 1-D selection."""
    result = selection_type(a, index)
    if isinstance(value, ArrayType):
        if value.ndim != 1 or result.ndim != 1:
            raise RuleError(
                "a[mask] = values and a[idx] = values take a number, or a 1-D array of values for a 1-D result; "
                "loop over the elements"
            )
        return
    element_type(value, "assignment")
