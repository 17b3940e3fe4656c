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

Selections are new arrays too: ``a[mask]`` (a mask of ``a``'s shape) and ``a[…]`` with one index array, list or
1-D mask among integers and slices (``advanced``: ``a[idx]``, ``a[[k, p]]``, ``a[:, idx]``), in NumPy's shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..intrinsics.spec import IntrinsicSpec, Site
from ..ir.ops import BinOpKind, CmpKind, GetItem, GetView, Intrinsic, Op, UnaryKind
from ..types import BOOL, BOTTOM, F64, I64, ArrayType, ListType, ScalarType, Type
from .rules import RuleError, weak_promote
from .views import expand

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


def inplace_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """``a op= b`` (``array.iadd`` …): the array written, ``a``'s own type."""
    target = args[0]
    if not isinstance(target, ArrayType):
        raise RuleError(f"'{spec.fn.value}' writes an array, not {target}")
    return inplace_type(KIND_OF_INPLACE[spec.fn], target, args[1])


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


@dataclass(frozen=True)
class Advanced:
    """``a[…]`` with one index array or list of integers among integers and slices (NumPy's advanced indexing
    with a single advanced index, as Numba allows): ``a[idx]``, ``a[[k, p]]``, ``a[idx, j]``, ``a[i, idx]``,
    ``a[:, idx]``. It selects along ``axis`` of the basic view ``a[basic]`` (``spec`` with the index array
    written as a whole slice); the result is a new C array whose axis ``to`` has one entry per index (NumPy puts
    it first when integers and the index array are not next to each other: ``a[0, :, idx]``)."""

    basic: str  # the subscript's spec as in ``GetView``, the index array written as a whole slice ``s``
    at: int  # the index array's position among the subscript's variables
    axis: int  # the axis of ``a[basic]`` it selects along
    dim: int  # that axis's number in ``a`` itself (NumPy's error messages name it)
    to: int  # the result's axis of one entry per index
    result: ArrayType


def _index_array_item(t: Type) -> ScalarType | None:
    """The element type of an index array or list (``None`` for anything else: an integer, a slice bound)."""
    if isinstance(t, ArrayType):
        return t.dtype
    if isinstance(t, ListType):
        item = t.item
        if item is BOTTOM:  # ``a[[]]``: an empty index
            return I64
        if isinstance(item, ScalarType):
            return item
        raise RuleError(
            f"an index list must hold integers, not {item}: a nested list would index several axes at once, "
            f"which compiled code does not do; index one axis at a time (a[idx][:, jdx]) or loop"
        )
    return None


def advanced(arr: ArrayType, spec: str, index: tuple[Type, ...]) -> Advanced | None:
    """How ``arr[…]`` selects with an index array or list (``spec`` as in ``GetView``; ``index`` the types of
    the subscript's variables), or None when it has none."""
    found: list[tuple[int, int]] = []  # (position in spec, position among the variables)
    k = 0
    for pos, c in enumerate(spec):
        if c == "i" and _index_array_item(index[k]) is not None:
            found.append((pos, k))
        k += {"i": 1, "s": 3}.get(c, 0)
    if not found:
        return None
    if len(found) > 1:
        raise RuleError(
            "only one index array or list per subscript is supported (as in Numba); NumPy would pair their "
            "entries up: loop over the pairs (a[i[k], j[k]]), or index one axis at a time (a[idx][:, jdx])"
        )
    pos, at = found[0]
    t = index[at]
    dtype = _index_array_item(t)
    assert dtype is not None
    if dtype.is_float:
        raise RuleError("arrays used as indices must be of integer or boolean type, not float")
    if isinstance(t, ArrayType) and t.ndim != 1 and dtype.kind == "b":
        raise RuleError(
            f"a boolean mask must have the array's {arr.ndim} axes (a[mask]) or be 1-D, along one axis "
            f"(a[mask], a[:, mask]), not {t.ndim}"
        )
    if isinstance(t, ArrayType) and t.ndim != 1:
        raise RuleError(
            f"an index array must be 1-D here (a {t.ndim}-D one would add axes); index with idx.ravel() and "
            f"reshape the result"
        )
    full = expand(spec[:pos] + "a" + spec[pos + 1 :], arr.ndim)  # (the index array counts as one axis)
    axis = full[: full.index("a")].count("s")
    chosen = [j for j, c in enumerate(full) if c in "ia"]
    apart = "s" in full[chosen[0] : chosen[-1]]
    basic = spec[:pos] + "s" + spec[pos + 1 :]
    dim = full.index("a")
    return Advanced(basic, at, axis, dim, 0 if apart else axis, ArrayType(arr.dtype, full.count("s") + 1, "C"))


def selection_type(a: ArrayType, index: ArrayType) -> ArrayType:
    """``a[mask]`` (a boolean array of ``a``'s shape: the selected elements in C order, a new 1-D array)."""
    return ArrayType(a.dtype, 1, "C")


def is_mask(a: Type, index: tuple[Type, ...]) -> bool:
    """Whether ``a[index]`` is ``a[mask]`` with one boolean array of ``a``'s axes (a 1-D mask of an N-D array,
    or one in a subscript with other indices, selects along one axis: ``advanced``)."""
    return (
        isinstance(a, ArrayType)
        and len(index) == 1
        and isinstance(index[0], ArrayType)
        and index[0].dtype.kind == "b"
        and index[0].ndim == a.ndim
    )


def subscript_type(a: ArrayType, spec: str, index: tuple[Type, ...]) -> ArrayType | None:
    """The type of ``a[…]`` selecting with a mask or an index array (a new array), or None for a view or an
    element."""
    if is_mask(a, index):
        return selection_type(a, index[0])  # type: ignore[arg-type]
    plan = advanced(a, spec, index)
    return None if plan is None else plan.result


def selects(op: Op, types: Mapping[str, Type]) -> bool:
    """Whether ``op`` (a getitem or a getview of typed IR) selects with a mask or an index array: its result is
    a new array, which shares no memory with the array it was read from."""
    if isinstance(op, GetItem):
        spec = "i" * len(op.index)
    elif isinstance(op, GetView):
        spec = op.spec
    else:
        return False
    obj_t = types.get(op.obj.name)
    return (
        isinstance(obj_t, ArrayType) and subscript_type(obj_t, spec, tuple(types[v.name] for v in op.index)) is not None
    )


def selection_assign_check(a: ArrayType, spec: str, index: tuple[Type, ...], value: Type) -> bool:
    """``a[mask] = v`` (``v`` a number, or a 1-D array of one value per selected element, or of one value) and
    ``a[…idx…] = v`` (``v`` a number or an array that broadcasts to the selection): whether ``a[…]`` selects."""
    result = subscript_type(a, spec, index)
    if result is None:
        return False
    if isinstance(value, ListType) and not is_mask(a, index):  # a[[k, p]] = [x, y]: as np.array([x, y])
        if not (value.item is BOTTOM or (isinstance(value.item, ScalarType) and value.item.is_numeric)):
            raise RuleError(f"a[idx] = values takes a number, an array or a list of numbers, not {value}")
        value = ArrayType(I64 if value.item is BOTTOM else value.item, 1, "C")  # type: ignore[arg-type]
    if isinstance(value, ArrayType):
        if is_mask(a, index) and value.ndim != 1:
            raise RuleError("a[mask] = values takes a number, or a 1-D array of values; loop over the elements")
        if value.ndim > result.ndim:
            raise RuleError(
                f"cannot assign a {value.ndim}-D array to a {result.ndim}-D selection; index the source down to "
                f"{result.ndim} dimensions"
            )
        return True
    element_type(value, "assignment")
    return True
