"""Per-op transfer rules: the result type of an op from its operand types.

    >>> binop_type(BinOpKind.TRUEDIV, I64, I64)
    f64
    >>> intrinsic_type(Intrinsic.FLOOR, (F64,), (1, 1))
    i64

A rule raises ``RuleError`` (a message for the user, located by the caller) when the operands are outside
the subset. ``BOTTOM`` operands never reach the rules: the solver waits until they are known.
"""

from __future__ import annotations

from ..intrinsics.spec import IntrinsicSpec, Site
from ..ir.ops import FLOAT_MATH_1, FLOAT_MATH_2, BinOpKind, CmpKind, Intrinsic, UnaryKind
from ..types import (
    BOOL,
    F32,
    F64,
    I64,
    NONE,
    ArrayType,
    ListType,
    PyValueType,
    ScalarType,
    TupleType,
    Type,
    arith_type,
    promote,
)


class RuleError(Exception):
    """Operand types an op does not accept; the message says what to write instead."""


def _scalar(t: Type, what: str) -> ScalarType:
    if isinstance(t, ScalarType) and t.is_numeric:
        return t
    if isinstance(t, ArrayType):
        raise RuleError(f"{what} on whole arrays is not supported; loop over the elements")
    if isinstance(t, TupleType):
        raise RuleError(f"{what} on tuples is not supported; unpack the elements")
    if isinstance(t, ListType):
        raise RuleError(f"{what} on lists is not supported; loop over the items (or use np.array(lst))")
    raise RuleError(f"{what} is not supported on {t}")


def weak_promote(a: ScalarType, b: ScalarType, a_literal: bool = False, b_literal: bool = False) -> ScalarType:
    """Promotion where a Python literal adapts to the other operand's width (``i32 + 1`` is ``i32``)."""
    if a_literal and not b_literal and b.kind != "b" and (b.is_float or a.is_int):
        return b
    if b_literal and not a_literal and a.kind != "b" and (a.is_float or b.is_int):
        return a
    return promote(a, b)


def binop_type(
    op: BinOpKind, a: Type, b: Type, a_literal: bool = False, b_literal: bool = False, negative_exponent: bool = False
) -> ScalarType:
    sa, sb = _scalar(a, f"'{op.value}'"), _scalar(b, f"'{op.value}'")
    if op in (BinOpKind.AND, BinOpKind.OR, BinOpKind.XOR, BinOpKind.LSHIFT, BinOpKind.RSHIFT):
        if sa.is_float or sb.is_float:
            raise RuleError(f"bitwise '{op.value}' needs integer operands, not {sa} and {sb}")
        if sa.kind == "b" and sb.kind == "b" and op in (BinOpKind.AND, BinOpKind.OR, BinOpKind.XOR):
            return BOOL
        return weak_promote(arith_type(sa), arith_type(sb), a_literal, b_literal)
    result = weak_promote(arith_type(sa), arith_type(sb), a_literal, b_literal)
    if op is BinOpKind.TRUEDIV and not result.is_float:
        return F64
    if op is BinOpKind.POW and not result.is_float and negative_exponent:
        return F64
    return result


def unary_type(op: UnaryKind, a: Type) -> ScalarType:
    if op is UnaryKind.NOT:
        return truth_type(a)
    s = _scalar(a, f"unary '{op.value}'")
    if op is UnaryKind.INVERT and s.is_float:
        raise RuleError(f"'~' needs an integer operand, not {s}")
    return arith_type(s)


def compare_type(op: CmpKind, a: Type, b: Type) -> ScalarType:
    if isinstance(a, TupleType) and isinstance(b, TupleType) and op in (CmpKind.EQ, CmpKind.NE):
        tuple_equality_check(a, b)  # (item by item: aot.codegen.numerics.tuples_equal)
        return BOOL
    _scalar(a, "comparison")
    _scalar(b, "comparison")
    return BOOL


def tuple_equality_check(a: TupleType, b: TupleType) -> None:
    """``t == u`` / ``t != u`` compares tuples of numbers (and of such tuples) item by item, as Python does;
    tuples of other lengths are unequal. Ordering tuples, and tuples holding arrays or other values, are not
    supported."""
    for x, y in zip(a.items, b.items):
        if isinstance(x, TupleType) and isinstance(y, TupleType):
            tuple_equality_check(x, y)
        elif not (isinstance(x, ScalarType) and x.is_numeric and isinstance(y, ScalarType) and y.is_numeric):
            raise RuleError(f"'==' between tuples compares numbers and tuples of numbers here, not {x} and {y}")


def compare_operand_type(a: ScalarType, b: ScalarType, a_literal: bool, b_literal: bool) -> ScalarType:
    """The type both sides of a comparison convert to."""
    return weak_promote(a, b, a_literal, b_literal)


def truth_type(a: Type) -> ScalarType:
    if isinstance(a, ScalarType):
        return BOOL
    if isinstance(a, (TupleType, ListType)):
        return BOOL
    raise RuleError("the truth value of an array is ambiguous; compare its elements or its length")


_FLOAT_FUNCS_1 = FLOAT_MATH_1
_FLOAT_FUNCS_2 = FLOAT_MATH_2
_PREDICATES = {Intrinsic.ISNAN, Intrinsic.ISINF, Intrinsic.ISFINITE}
_ROUNDING = {Intrinsic.FLOOR, Intrinsic.CEIL, Intrinsic.TRUNC}


def float_result(*args: ScalarType) -> ScalarType:
    """``math`` functions compute in f64, or in f32 when every argument is f32 (libdevice's ``…f`` forms)."""
    return F32 if all(a == F32 for a in args) else F64


def builtin_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """``math`` functions, ``abs``/``min``/``max``/``round``/``len``, ``a.shape``, loop counts."""
    return intrinsic_type(spec.fn, args, spec.arity)


def gpu_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """``aot.gpu`` calls (their axes and shapes are compile-time values: ``site.consts``)."""
    return gpu_intrinsic_type(spec.fn, args, site.consts or (None,) * len(args))


def intrinsic_type(fn: Intrinsic, args: tuple[Type, ...], arity: tuple[int, int | None] = (0, None)) -> Type:
    lo, hi = arity
    name = fn.value
    if len(args) < lo or (hi is not None and len(args) > hi):
        want = f"{lo}" if lo == hi else f"{lo} or more" if hi is None else f"{lo} to {hi}"
        raise RuleError(f"{name}() takes {want} arguments here, got {len(args)}")
    if fn in (Intrinsic.LEN,):
        if isinstance(args[0], (ArrayType, TupleType, ListType)):
            return I64
        raise RuleError(f"len() needs an array, a tuple or a list, not {args[0]}")
    if fn in (Intrinsic.SHAPE, Intrinsic.SIZE, Intrinsic.NDIM):
        a = args[0]
        assert isinstance(a, ArrayType)
        return TupleType((I64,) * a.ndim) if fn is Intrinsic.SHAPE else I64
    if fn is Intrinsic.NOGIL:
        return NONE
    scalars = tuple(_scalar(a, f"{name}()") for a in args)
    if fn in (Intrinsic.RANGE_LEN, Intrinsic.PRANGE_LEN):
        if any(s.is_float for s in scalars):
            raise RuleError("range() arguments must be integers")
        return I64
    if fn is Intrinsic.GCD:
        for s in scalars:
            if s.is_float or (s.is_int and not s.is_signed and s.bits == 64):
                raise RuleError(f"math.gcd() takes integers that fit in an i64, not {s}")
        return I64
    if fn in _FLOAT_FUNCS_1 or fn in _FLOAT_FUNCS_2:
        return float_result(*scalars)
    if fn in _PREDICATES:
        return BOOL
    if fn in _ROUNDING:
        return I64
    if fn is Intrinsic.ABS:
        return arith_type(scalars[0])
    if fn in (Intrinsic.MIN, Intrinsic.MAX):
        result = scalars[0]
        for s in scalars[1:]:
            result = promote(result, s)
        return result
    if fn is Intrinsic.ROUND:
        if len(scalars) == 2:
            if scalars[1].is_float:
                raise RuleError("round()'s second argument must be an integer")
            return scalars[0] if scalars[0].is_float else I64
        return I64
    raise RuleError(f"{name}() is not supported on the CPU")


GPU_IDS = frozenset(
    {Intrinsic.THREAD_ID, Intrinsic.BLOCK_ID, Intrinsic.BLOCK_DIM, Intrinsic.GRID_DIM, Intrinsic.GLOBAL_ID}
)
SHARED_MEMORY_LIMIT = 48 * 1024
"""Bytes of statically allocated shared memory a block may use (every architecture from sm_60)."""


def fold_int_binop(op: BinOpKind, a: object, b: object) -> int | None:
    """``a op b`` for int constants where it is exact and fits in i64 (shapes such as ``TILE + 1``), else None."""
    if type(a) is not int or type(b) is not int:
        return None
    if op is BinOpKind.ADD:
        value = a + b
    elif op is BinOpKind.SUB:
        value = a - b
    elif op is BinOpKind.MUL:
        value = a * b
    elif op in (BinOpKind.FLOORDIV, BinOpKind.MOD) and b != 0:
        value = a // b if op is BinOpKind.FLOORDIV else a % b
    else:
        return None
    return value if -(2**63) <= value < 2**63 else None


def gpu_intrinsic_type(fn: Intrinsic, args: tuple[Type, ...], consts: tuple[object, ...]) -> Type:
    """``aot.gpu.*`` calls; ``consts`` holds each argument's compile-time value (None when unknown).

    >>> gpu_intrinsic_type(Intrinsic.SHARED_ARRAY, (TupleType((I64,)), PyValueType(F32)), ((256,), None))
    f32[::1]
    """
    name = "aot.gpu." + fn.value.split(".", 1)[1]
    if fn in GPU_IDS:
        if len(args) > 1:
            raise RuleError(f"{name}() takes at most one argument, the axis (0, 1 or 2)")
        if args and not (type(consts[0]) is int and 0 <= consts[0] <= 2):
            raise RuleError(f"{name}(): the axis must be a constant 0, 1 or 2 (x, y or z)")
        return I64
    if fn is Intrinsic.SYNC_THREADS:
        if args:
            raise RuleError(f"{name}() takes no arguments")
        return NONE
    if fn is Intrinsic.ATOMIC_ADD:
        if len(args) != 3:
            raise RuleError(f"{name}() takes 3 arguments (array, index, value), got {len(args)}")
        arr, index, value = args
        if not isinstance(arr, ArrayType):
            raise RuleError(f"{name}(): the first argument must be an array, not {arr}")
        getitem_type(arr, index.items if isinstance(index, TupleType) else (index,), None)
        if arr.dtype.kind == "b":
            raise RuleError(f"{name}() on a boolean array is not supported; use an integer array")
        v = _scalar(value, f"{name}()")
        if v.is_float and not arr.dtype.is_float:
            raise RuleError(
                f"{name}(): adding a {v} to an element of a {arr} would truncate; convert the value with int() first"
            )
        return arr.dtype
    if fn is Intrinsic.SHARED_ARRAY:
        if len(args) != 2:
            raise RuleError(f"{name}() takes 2 arguments (shape, dtype), got {len(args)}")
        shape = consts[0] if isinstance(consts[0], tuple) else (consts[0],)
        if not shape or not all(type(d) is int and d > 0 for d in shape):
            raise RuleError(
                f"{name}() needs a constant shape: a positive int or a tuple of them, "
                f"e.g. shared_array((256,), aot.f32) or a module-level constant"
            )
        dtype = args[1].value if isinstance(args[1], PyValueType) else None
        if not isinstance(dtype, ScalarType) or not dtype.is_numeric:
            raise RuleError(f"{name}(): the dtype must be a scalar type such as aot.f32 or aot.i64")
        size = dtype.itemsize
        for d in shape:
            size *= d
        if size > SHARED_MEMORY_LIMIT:
            raise RuleError(
                f"{name}(): {size} bytes exceed the {SHARED_MEMORY_LIMIT} bytes of shared memory "
                f"a block can allocate statically"
            )
        return ArrayType(dtype, len(shape), "C")
    raise RuleError(f"{name}() is not supported")


def convert_type(target: ScalarType, a: Type) -> ScalarType:
    _scalar(a, f"{target.name}()")
    return target


def getitem_type(obj: Type, index: tuple[Type, ...], const_index: int | None) -> Type:
    if isinstance(obj, ArrayType):
        if len(index) != obj.ndim:
            raise RuleError(f"too many indices for a {obj.ndim}-D array: {len(index)} given")
        for t in index:
            if not (isinstance(t, ScalarType) and (t.is_int or t.kind == "b")):
                raise RuleError(index_message(t))
        return obj.dtype
    if isinstance(obj, TupleType):
        if len(index) != 1:
            raise RuleError("a tuple takes one index")
        t = index[0]
        if not (isinstance(t, ScalarType) and t.is_int):
            raise RuleError(f"tuple indices must be integers, not {t}")
        n = len(obj.items)
        if const_index is not None:
            if not -n <= const_index < n:
                raise RuleError(f"tuple index {const_index} out of range for a tuple of {n}")
            return obj.items[const_index]
        if n == 0:
            raise RuleError("indexing an empty tuple (a for loop, 'in' or sum/min/max over a tuple needs one item)")
        if not obj.is_uniform:
            raise RuleError(f"a tuple of mixed types {obj} can only be indexed with a constant")
        return obj.items[0]
    raise RuleError(f"{obj} cannot be indexed")


def index_message(t: Type) -> str:
    """Why ``t`` cannot index an array, and what to write instead."""
    if isinstance(t, ArrayType):
        return "indexing with an array (fancy indexing) is not supported; loop over the index array"
    if t == NONE:
        return "None (np.newaxis) in an index is not supported; use a.reshape(…) to add an axis"
    return f"array indices must be integers or slices, not {t}"


def setitem_check(obj: Type, index: tuple[Type, ...], value: Type) -> None:
    if isinstance(obj, TupleType):
        raise RuleError("tuples are immutable; build a new tuple instead")
    getitem_type(obj, index, None)
    _scalar(value, "storing into an array")
