"""The ops of the IR: a small closed set of frozen dataclasses, one line each when printed.

    %3: f64 = binop add %x, %2  @4:12-4:17

An op names its operands as ``Var``s (function-local names; a variable may be assigned in several places,
and has one type in the whole function). ``FIELDS`` of each op class says how each field prints
(``var``, ``vars``, ``kind``, ``str``, ``label``, ``value``, ``int``; a ``flag`` prints as its name when set,
else not at all), which is all the printer and the parser need to be exact inverses. Result-type rules live
in ``aot.infer.rules``; each op's docstring states it.

Untyped IR (from the frontend) may hold ``LoadGlobal``, ``GetAttr`` and ``CallValue``: names whose meaning
is only known once the function's globals are looked at. Inference resolves them, and the ``resolve`` pass
rewrites them into ``Const``, ``Call``, ``Intrinsic`` and ``Convert``, so typed IR holds runtime ops only.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, ClassVar, final

from ..diagnostics import UNKNOWN_SPAN, Span


@dataclass(frozen=True, slots=True)
class Var:
    """A function-local variable or temporary (printed ``%name``)."""

    name: str

    def __str__(self) -> str:
        return f"%{self.name}"


class BinOpKind(enum.Enum):
    ADD = "add"
    SUB = "sub"
    MUL = "mul"
    TRUEDIV = "truediv"
    FLOORDIV = "floordiv"
    MOD = "mod"
    POW = "pow"
    LSHIFT = "lshift"
    RSHIFT = "rshift"
    AND = "and"
    OR = "or"
    XOR = "xor"


class UnaryKind(enum.Enum):
    NEG = "neg"
    POS = "pos"
    INVERT = "invert"
    NOT = "not"


class CmpKind(enum.Enum):
    EQ = "eq"
    NE = "ne"
    LT = "lt"
    LE = "le"
    GT = "gt"
    GE = "ge"


class Intrinsic(enum.Enum):
    """Built-in operations with fixed semantics: ``math`` functions, some builtins, array attributes, NumPy.
    What is known about each (its type rule, its lowering, its spellings, what it does to arrays) is in its
    descriptor, ``aot.intrinsics.registry.SPECS``; its value is its name in the printed IR."""

    SQRT = "math.sqrt"
    EXP = "math.exp"
    LOG = "math.log"
    LOG2 = "math.log2"
    LOG10 = "math.log10"
    LOG1P = "math.log1p"
    ERF = "math.erf"
    ERFC = "math.erfc"
    EXPM1 = "math.expm1"
    SIN = "math.sin"
    COS = "math.cos"
    TAN = "math.tan"
    ASIN = "math.asin"
    ACOS = "math.acos"
    ATAN = "math.atan"
    ATAN2 = "math.atan2"
    SINH = "math.sinh"
    COSH = "math.cosh"
    TANH = "math.tanh"
    FLOOR = "math.floor"
    CEIL = "math.ceil"
    TRUNC = "math.trunc"
    FABS = "math.fabs"
    COPYSIGN = "math.copysign"
    FMOD = "math.fmod"
    HYPOT = "math.hypot"
    POWF = "math.pow"
    ISNAN = "math.isnan"
    ISINF = "math.isinf"
    ISFINITE = "math.isfinite"
    GCD = "math.gcd"
    ABS = "abs"
    MIN = "min"
    MAX = "max"
    ROUND = "round"
    LEN = "len"
    SHAPE = "array.shape"
    SIZE = "array.size"
    NDIM = "array.ndim"
    RANGE_LEN = "range.len"
    ITER_LEN = "iter.len"  # the trip count of a for loop over a 1-D array or a tuple (aot/frontend/iteration.py)
    # ``for x in a.flat`` (aot/frontend/iteration.py): the element count of the array, and its element k in C order
    FLAT_LEN = "flat.len"
    FLAT_ITEM = "flat.item"
    INDEX = "operator.index"  # an integer operand as itself (enumerate's start); a float is a CompileError
    # Views (aot/infer/views.py, aot/codegen/views.py): ``a.T``, ``a.reshape(shape)`` (a tuple of ints with at
    # most one negative), ``a.ravel()``. Each gives a view of its array, or for an array not C-contiguous at
    # run time what NumPy gives: a view where the strides allow, else a C-ordered copy (a new reference).
    TRANSPOSE = "array.T"
    RESHAPE = "array.reshape"
    RAVEL = "array.ravel"
    # NumPy's shape functions, views of their array (aot/intrinsics/shapes.py, aot/infer/shapes.py,
    # aot/codegen/shapes.py); their axes are compile-time constants. ``np.atleast_*`` of a number: a new array.
    NP_FLIP = "np.flip"
    NP_FLIPLR = "np.fliplr"
    NP_FLIPUD = "np.flipud"
    NP_EXPAND_DIMS = "np.expand_dims"
    NP_SQUEEZE = "np.squeeze"
    NP_ATLEAST_1D = "np.atleast_1d"
    NP_ATLEAST_2D = "np.atleast_2d"
    NP_ATLEAST_3D = "np.atleast_3d"
    NP_TRANSPOSE = "np.transpose"
    NP_SWAPAXES = "np.swapaxes"
    NP_MOVEAXIS = "np.moveaxis"
    IS_NONE = "is_none"  # ``x is None`` (aot.infer.optional): constant unless x is optional
    IS_NOT_NONE = "is_not_none"
    EQ_NONE = "eq_none"  # ``x == None``: ``x is None`` for every value but arrays (resolved to IS_NONE)
    NE_NONE = "ne_none"
    # NumPy (``aot.infer.npfuncs`` types them, ``aot.codegen.npfuncs`` lowers them): ufuncs on scalars with
    # NumPy's semantics (no exceptions: NaN and inf as NumPy gives them), a checked conversion to a NumPy
    # scalar type (the result type says which), and full reductions of an array to a scalar.
    NP_SQRT = "np.sqrt"
    NP_EXP = "np.exp"
    NP_EXP2 = "np.exp2"
    NP_LOG = "np.log"
    NP_LOG2 = "np.log2"
    NP_LOG10 = "np.log10"
    NP_LOG1P = "np.log1p"
    NP_EXPM1 = "np.expm1"
    NP_SIN = "np.sin"
    NP_COS = "np.cos"
    NP_TAN = "np.tan"
    NP_ARCSIN = "np.arcsin"
    NP_ARCCOS = "np.arccos"
    NP_ARCTAN = "np.arctan"
    NP_SINH = "np.sinh"
    NP_COSH = "np.cosh"
    NP_TANH = "np.tanh"
    NP_FABS = "np.fabs"
    NP_RADIANS = "np.radians"
    NP_DEGREES = "np.degrees"
    NP_RINT = "np.rint"
    NP_ROUND = "np.round"  # np.round(x[, decimals]) (aot/infer/npfuncs.py)
    NP_FLOOR = "np.floor"
    NP_CEIL = "np.ceil"
    NP_TRUNC = "np.trunc"
    NP_ISNAN = "np.isnan"
    NP_ISINF = "np.isinf"
    NP_ISFINITE = "np.isfinite"
    NP_SIGNBIT = "np.signbit"
    NP_LOGICAL_NOT = "np.logical_not"  # NumPy's logical functions: the truth of each operand (NaN is true)
    NP_LOGICAL_AND = "np.logical_and"
    NP_LOGICAL_OR = "np.logical_or"
    NP_LOGICAL_XOR = "np.logical_xor"
    NP_ABS = "np.abs"
    NP_SIGN = "np.sign"
    NP_SQUARE = "np.square"
    NP_MINIMUM = "np.minimum"
    NP_MAXIMUM = "np.maximum"
    NP_FMIN = "np.fmin"
    NP_FMAX = "np.fmax"
    NP_HYPOT = "np.hypot"
    NP_ARCTAN2 = "np.arctan2"
    NP_COPYSIGN = "np.copysign"
    NP_POWER = "np.power"
    NP_FLOOR_DIVIDE = "np.floor_divide"
    NP_REMAINDER = "np.remainder"
    NP_FMOD = "np.fmod"
    NP_DIVIDE = "np.divide"
    NP_CAST = "np.cast"
    NP_SUM = "np.sum"
    NP_PROD = "np.prod"
    NP_MIN = "np.min"
    NP_MAX = "np.max"
    NP_MEAN = "np.mean"
    NP_STD = "np.std"
    NP_VAR = "np.var"
    NP_ARGMIN = "np.argmin"
    NP_ARGMAX = "np.argmax"
    NP_ALL = "np.all"
    NP_ANY = "np.any"
    NP_DOT = "np.dot"
    # NumPy's NaN-ignoring full reductions (float arrays: aot.codegen.nanreduce; others are the plain ones)
    NP_NANSUM = "np.nansum"
    NP_NANMEAN = "np.nanmean"
    NP_NANSTD = "np.nanstd"
    NP_NANVAR = "np.nanvar"
    NP_NANMIN = "np.nanmin"
    NP_NANMAX = "np.nanmax"
    NP_NANARGMIN = "np.nanargmin"
    NP_NANARGMAX = "np.nanargmax"
    NP_OUTER = "np.outer"  # (a new 2-D array: ``aot.codegen.nparrays``)
    NP_NORM = "np.linalg.norm"  # (``ord=None``: the 2-norm of the flattened array)
    NP_SEARCHSORTED = "np.searchsorted"
    NP_SEARCHSORTED_RIGHT = "np.searchsorted_right"  # ``side="right"``
    # ``np.where(c, x, y)`` and ``np.clip(a, lo, hi)`` (elementwise on arrays, or of scalars); ``np.cumsum``,
    # ``np.sort``, ``np.argsort`` give new arrays (``aot.codegen.nparrays``), ``np.median`` a scalar.
    NP_WHERE = "np.where"
    NP_CLIP = "np.clip"
    NP_CUMSUM = "np.cumsum"
    NP_CUMPROD = "np.cumprod"  # (as np.cumsum, multiplying: NumPy's product dtype)
    NP_SORT = "np.sort"
    NP_ARGSORT = "np.argsort"
    NP_MEDIAN = "np.median"
    # ``np.nonzero(a)`` (also ``np.where(a)``): a tuple of index arrays, one per axis; ``np.flatnonzero(a)`` the C-order
    # indices; ``np.count_nonzero(a)`` their count (``aot.codegen.nparrays``)
    NP_NONZERO = "np.nonzero"
    NP_FLATNONZERO = "np.flatnonzero"
    NP_COUNT_NONZERO = "np.count_nonzero"
    NP_UNIQUE = "np.unique"  # (the sorted distinct elements, flattened; one NaN: ``aot.codegen.nparrays``)
    NP_BINCOUNT = "np.bincount"  # (the count, or weight sum, of each non-negative integer)
    NP_CONCATENATE = "np.concatenate"  # (of a tuple or a list of arrays, along axis 0: ``aot.codegen.nparrays``)
    NP_DIFF = "np.diff"  # (of a 1-D array: a new array of its n - 1 differences, ``aot.codegen.nparrays``)
    # NumPy's binning functions (``aot/intrinsics/binning.py``; lowered by ``aot.codegen.binning``): the bin of
    # each value, the counts of an array in bins (and the edges), linear interpolation between sample points
    NP_DIGITIZE = "np.digitize"
    NP_HISTOGRAM = "np.histogram"
    NP_INTERP = "np.interp"
    # NumPy's comparisons of whole arrays (``aot/intrinsics/comparisons.py``; lowered by ``aot.codegen.comparisons``):
    # elementwise closeness within tolerances (a bool, or a new bool array), whether all are close, equality
    NP_ISCLOSE = "np.isclose"
    NP_ALLCLOSE = "np.allclose"
    NP_ARRAY_EQUAL = "np.array_equal"
    # Totals of a whole array (``aot/intrinsics/totals.py``, ``aot.codegen.totals``): the product NaN counting as 1;
    # the trapezoidal rule's integral of a 1-D array
    NP_NANPROD = "np.nanprod"
    NP_TRAPEZOID = "np.trapezoid"
    # ``aot.prange`` in a ``parallel=True`` method: the trip count of a loop whose iterations run on threads
    # (``aot.codegen.parallel``); ``aot.nogil``: a no-op first in a ``nogil=True`` method (its wrappers release
    # the GIL), so that the options live in the stored IR.
    PRANGE_LEN = "prange.len"
    NOGIL = "aot.nogil"
    # GPU intrinsics (``aot.gpu``; ``aot.codegen.gpu`` lowers them for ptx, and for a CPU grid's loop).
    # Ids are i64 with an optional constant axis operand; atomic_add(array, index, value) gives the old
    # element; shared_array's operand is its constant shape, its dtype is in the result type (``f32[::1]``).
    THREAD_ID = "gpu.thread_id"
    BLOCK_ID = "gpu.block_id"
    BLOCK_DIM = "gpu.block_dim"
    GRID_DIM = "gpu.grid_dim"
    GLOBAL_ID = "gpu.global_id"
    SYNC_THREADS = "gpu.sync_threads"
    ATOMIC_ADD = "gpu.atomic_add"
    SHARED_ARRAY = "gpu.shared_array"
    # Arrays owned by compiled code (``aot.infer.arrays`` types them, ``aot.codegen.arrays`` lowers them): the
    # operands are the runtime arguments in NumPy's positional order, the dtype is in the result type.
    NP_EMPTY = "np.empty"
    NP_ZEROS = "np.zeros"
    NP_ONES = "np.ones"
    NP_FULL = "np.full"
    NP_EMPTY_LIKE = "np.empty_like"
    NP_ZEROS_LIKE = "np.zeros_like"
    NP_ONES_LIKE = "np.ones_like"
    NP_FULL_LIKE = "np.full_like"
    NP_ARANGE = "np.arange"
    NP_LINSPACE = "np.linspace"
    NP_EYE = "np.eye"
    ARRAY_COPY = "array.copy"
    ARRAY_FLATTEN = "array.flatten"  # ``a.flatten()``: a new 1-D array of the elements in C order
    # Conversions of an array (``aot/intrinsics/conversions.py``): ``np.copy(a)``, ``np.array(a[, dtype])`` (also
    # ``np.asarray(a, dtype)`` of another dtype) and ``np.ascontiguousarray(a[, dtype])`` of an array not known to
    # be C-contiguous: a new C-ordered copy (the dtype in the result type; ``np.asarray(a)`` is ``a`` itself);
    # ``a.strides`` (NumPy's byte strides, a tuple of i64) and ``a.nbytes``; the new matrices ``np.identity(n)``
    # (the dtype in the result type), ``np.tril(a, k)``/``np.triu(a, k)`` (of a 2-D array) and ``np.diag(v, k)``
    # (of a 1-D array: a new 2-D one; of a 2-D array: a new 1-D copy of its diagonal)
    NP_COPY = "np.copy"
    NP_ARRAY = "np.array"
    NP_ASCONTIGUOUSARRAY = "np.ascontiguousarray"
    STRIDES = "array.strides"
    NBYTES = "array.nbytes"
    NP_IDENTITY = "np.identity"
    NP_TRIL = "np.tril"
    NP_TRIU = "np.triu"
    NP_DIAG = "np.diag"
    # Lists (``aot.infer.lists`` types them, ``aot.codegen.lists`` lowers them): ``[a, b]`` (its items; ``[]``
    # takes its item type from the variable it is assigned to), ``lst.append(x)`` (its result is the list
    # itself, assigned back to the list's variable: how ``[]`` learns its item type), ``lst.pop([i])``, and
    # ``np.array(lst)`` / ``np.asarray(lst)`` (a new array).
    LIST_NEW = "list.new"
    LIST_APPEND = "list.append"
    LIST_POP = "list.pop"
    LIST_TO_ARRAY = "list.to_array"
    LIST_SORT = "list.sort"  # ``lst.sort()`` (in place; a list of numbers), and ``sorted(lst)`` (a new list)
    LIST_SORTED = "list.sorted"
    LIST_REVERSE = "list.reverse"  # ``lst.reverse()``: in place; gives None
    # ``a, b = x`` where ``x`` is not a tuple display: ``x`` must hold exactly that many items (operands: ``x``
    # and the constant count). A tuple's length is checked at compile time (the op is then dropped); a list's
    # or a 1-D array's at run time (``ValueError`` with Python's messages).
    UNPACK = "unpack"
    ARRAY_SORT = "array.sort"  # ``a.sort([axis])``: sorts in place along an axis (aot.codegen.nparrays); gives None
    ARRAY_FILL = "array.fill"  # ``a.fill(v)``: stores the number v in every element, as ``a[...] = v``; gives None
    ARRAY_ASTYPE = "array.astype"  # ``a.astype(dtype)``: a converted C-ordered copy (the dtype in the result type)
    # ``a op= b`` on an array variable (``aot.infer.elementwise``): NumPy's in-place ufunc writes ``a``; the
    # result is ``a`` itself. (``a op b`` on arrays stays a ``binop`` whose result type is a new array.)
    ARRAY_IADD = "array.iadd"
    ARRAY_ISUB = "array.isub"
    ARRAY_IMUL = "array.imul"
    ARRAY_ITRUEDIV = "array.itruediv"
    ARRAY_IFLOORDIV = "array.ifloordiv"
    ARRAY_IMOD = "array.imod"
    ARRAY_IPOW = "array.ipow"
    ARRAY_IAND = "array.iand"
    ARRAY_IOR = "array.ior"
    ARRAY_IXOR = "array.ixor"


FLOAT_MATH_1 = frozenset(
    {
        Intrinsic.SQRT,
        Intrinsic.EXP,
        Intrinsic.LOG,
        Intrinsic.LOG2,
        Intrinsic.LOG10,
        Intrinsic.LOG1P,
        Intrinsic.ERF,
        Intrinsic.ERFC,
        Intrinsic.EXPM1,
        Intrinsic.SIN,
        Intrinsic.COS,
        Intrinsic.TAN,
        Intrinsic.ASIN,
        Intrinsic.ACOS,
        Intrinsic.ATAN,
        Intrinsic.SINH,
        Intrinsic.COSH,
        Intrinsic.TANH,
        Intrinsic.FABS,
    }
)
"""``math`` functions of one float that give a float."""

FLOAT_MATH_2 = frozenset({Intrinsic.ATAN2, Intrinsic.COPYSIGN, Intrinsic.FMOD, Intrinsic.HYPOT, Intrinsic.POWF})
"""``math`` functions of two floats that give a float."""


class Op:
    """Base of all ops. Subclasses are frozen, slotted dataclasses with a ``span`` last."""

    __slots__ = ()
    NAME: ClassVar[str]
    FIELDS: ClassVar[tuple[str, ...]]
    TERMINATOR: ClassVar[bool] = False
    span: Span

    @property
    def dest_var(self) -> Var | None:
        return getattr(self, "dest", None)

    @classmethod
    def operand_fields(cls) -> tuple[str, ...]:
        names = [f for f in cls.__dataclass_fields__ if f not in ("dest", "span")]  # type: ignore[attr-defined]
        return tuple(names)


def _op(name: str, fields: tuple[str, ...], terminator: bool = False):
    def wrap(cls):
        cls.NAME = name
        cls.FIELDS = fields
        cls.TERMINATOR = terminator
        return final(cls)

    return wrap


# ------------------------------------------------------------------------------------ value ops


@_op("const", ("value",))
@dataclass(frozen=True, slots=True)
class Const(Op):
    """A literal or folded constant. Type: that of the value (int → i64, float → f64, tuple → tuple)."""

    dest: Var
    value: Any
    span: Span = UNKNOWN_SPAN


@_op("copy", ("var",))
@dataclass(frozen=True, slots=True)
class Copy(Op):
    """Assignment ``dest = src``. Type: the destination variable's (the join of all its assignments)."""

    dest: Var
    src: Var
    span: Span = UNKNOWN_SPAN


@_op("binop", ("kind", "var", "var", "flag"))
@dataclass(frozen=True, slots=True)
class BinOp(Op):
    """Arithmetic. Type: NumPy promotion of the operands (``truediv`` and negative ``pow`` give float).
    ``nowrap`` (on ``add`` only, printed ``binop add, %$k1, %2, nowrap``): the sum cannot overflow, as the
    frontend knows of a counted loop's step ``$k + 1`` and of a unit-step range's ``start + $k``
    (``aot/frontend/loops.py``); code generation says so to LLVM (``nsw``) where the add is an integer one."""

    dest: Var
    op: BinOpKind
    lhs: Var
    rhs: Var
    span: Span = UNKNOWN_SPAN
    nowrap: bool = False  # (after ``span``: ``BinOp(dest, op, lhs, rhs, span)`` still reads as before)


@_op("unary", ("kind", "var"))
@dataclass(frozen=True, slots=True)
class UnaryOp(Op):
    """``-x``, ``+x``, ``~x``, ``not x``. Type: the operand's (boolean computes as int; ``not`` → boolean)."""

    dest: Var
    op: UnaryKind
    operand: Var
    span: Span = UNKNOWN_SPAN


@_op("cmp", ("kind", "var", "var"))
@dataclass(frozen=True, slots=True)
class Compare(Op):
    """A comparison of two numbers. Type: boolean."""

    dest: Var
    op: CmpKind
    lhs: Var
    rhs: Var
    span: Span = UNKNOWN_SPAN


@_op("truth", ("var",))
@dataclass(frozen=True, slots=True)
class Truth(Op):
    """``bool(x)`` as Python's truth test. Type: boolean."""

    dest: Var
    src: Var
    span: Span = UNKNOWN_SPAN


@_op("convert", ("var",))
@dataclass(frozen=True, slots=True)
class Convert(Op):
    """Numeric conversion to the destination's type (``int(x)``, ``float(x)``, ``aot.f32(x)``, promotions)."""

    dest: Var
    src: Var
    span: Span = UNKNOWN_SPAN


@_op("loadglobal", ("str",))
@dataclass(frozen=True, slots=True)
class LoadGlobal(Op):
    """Untyped only: a module global or builtin looked up by name. Type: the value's (constants fold)."""

    dest: Var
    name: str
    span: Span = UNKNOWN_SPAN


@_op("getattr", ("var", "str"))
@dataclass(frozen=True, slots=True)
class GetAttr(Op):
    """Untyped only: ``obj.attr`` on a module or an array. Type: the attribute's."""

    dest: Var
    obj: Var
    attr: str
    span: Span = UNKNOWN_SPAN


@_op("callvalue", ("var", "vars", "str"))
@dataclass(frozen=True, slots=True)
class CallValue(Op):
    """Untyped only: a call of whatever ``func`` names. Type: decided by what it resolves to. ``keywords``
    names the last arguments, comma-separated (``f(x, tol=t)``: args ``[%x, %t]``, keywords ``"tol"``)."""

    dest: Var
    func: Var
    args: tuple[Var, ...]
    span: Span = UNKNOWN_SPAN
    keywords: str = ""  # (after ``span``: ``CallValue(dest, func, args, span)`` still reads as before)

    @property
    def keyword_names(self) -> tuple[str, ...]:
        return tuple(self.keywords.split(",")) if self.keywords else ()


@_op("call", ("str", "vars"))
@dataclass(frozen=True, slots=True)
class Call(Op):
    """A call of method ``callee`` (``pkg.mod:qualname``) specialised on the argument types. Type: its return."""

    dest: Var
    callee: str
    args: tuple[Var, ...]
    span: Span = UNKNOWN_SPAN


@_op("intrinsic", ("kind", "vars"))
@dataclass(frozen=True, slots=True)
class IntrinsicCall(Op):
    """A built-in operation (``math.sqrt``, ``min``, ``array.shape`` …). Type: per ``aot.infer.rules``."""

    dest: Var
    fn: Intrinsic
    args: tuple[Var, ...]
    span: Span = UNKNOWN_SPAN


@_op("tuple", ("vars",))
@dataclass(frozen=True, slots=True)
class MakeTuple(Op):
    """``(a, b, …)``. Type: the tuple of the items' types."""

    dest: Var
    items: tuple[Var, ...]
    span: Span = UNKNOWN_SPAN


@_op("getitem", ("var", "vars"))
@dataclass(frozen=True, slots=True)
class GetItem(Op):
    """``obj[i, …]`` on an array (one index per dimension) or a tuple. Type: the element's."""

    dest: Var
    obj: Var
    index: tuple[Var, ...]
    span: Span = UNKNOWN_SPAN


@_op("setitem", ("var", "vars", "var"))
@dataclass(frozen=True, slots=True)
class SetItem(Op):
    """``obj[i, …] = value`` on an array; the value converts to the element type. No result."""

    obj: Var
    index: tuple[Var, ...]
    value: Var
    span: Span = UNKNOWN_SPAN


@_op("getview", ("var", "str", "vars"))
@dataclass(frozen=True, slots=True)
class GetView(Op):
    """``obj[…]`` on an array with slices or ``...`` (``a[1:-1]``, ``a[:, j]``, ``a[..., 0]``). ``spec`` says
    what each index is, one letter each: ``i`` an integer (one var), ``s`` a slice (three vars: start, stop,
    step; a ``none`` var is a missing one), ``e`` an ellipsis (no var). Type: a view (aot/infer/views.py)."""

    dest: Var
    obj: Var
    spec: str
    index: tuple[Var, ...]
    span: Span = UNKNOWN_SPAN


# ---------------------------------------------------------------------------------- terminators


@_op("jump", ("label",), terminator=True)
@dataclass(frozen=True, slots=True)
class Jump(Op):
    """Go to block ``target``."""

    target: str
    span: Span = UNKNOWN_SPAN


@_op("br", ("var", "label", "label"), terminator=True)
@dataclass(frozen=True, slots=True)
class Branch(Op):
    """Go to ``if_true`` when the boolean ``cond`` holds, else to ``if_false``."""

    cond: Var
    if_true: str
    if_false: str
    span: Span = UNKNOWN_SPAN


@_op("ret", ("optvar",), terminator=True)
@dataclass(frozen=True, slots=True)
class Return(Op):
    """Return ``value`` (``None`` when absent) to the caller."""

    value: Var | None
    span: Span = UNKNOWN_SPAN


@_op("raise", ("str", "str"), terminator=True)
@dataclass(frozen=True, slots=True)
class Raise(Op):
    """Raise the builtin exception class ``exc`` with the constant ``message``."""

    exc: str
    message: str
    span: Span = UNKNOWN_SPAN


ALL_OPS: tuple[type[Op], ...] = (
    Const,
    Copy,
    BinOp,
    UnaryOp,
    Compare,
    Truth,
    Convert,
    LoadGlobal,
    GetAttr,
    CallValue,
    Call,
    IntrinsicCall,
    MakeTuple,
    GetItem,
    SetItem,
    GetView,
    Jump,
    Branch,
    Return,
    Raise,
)
OPS_BY_NAME: dict[str, type[Op]] = {cls.NAME: cls for cls in ALL_OPS}
UNTYPED_ONLY = (LoadGlobal, GetAttr, CallValue)
KIND_ENUMS = {BinOp: BinOpKind, UnaryOp: UnaryKind, Compare: CmpKind, IntrinsicCall: Intrinsic}


def uses(op: Op) -> tuple[Var, ...]:
    """The variables ``op`` reads, ``optvar`` fields included."""
    out: list[Var] = []
    for name, kind in zip(op.operand_fields(), op.FIELDS):
        value = getattr(op, name)
        if kind in ("var", "optvar") and value is not None:
            out.append(value)
        elif kind == "vars":
            out.extend(value)
    return tuple(out)


def successors(op: Op) -> tuple[str, ...]:
    if isinstance(op, Jump):
        return (op.target,)
    if isinstance(op, Branch):
        return (op.if_true, op.if_false)
    return ()
