"""Types of views: slicing, ``a[i]`` of an N-D array, ``a.T``, ``a.reshape``, ``a.ravel``, slice assignment.

    >>> view_type(ArrayType(F64, 2, "C"), "is", (I64, NONE, NONE, NONE), (SliceInfo(True, True, 1),))
    f64[::1]
    >>> view_type(ArrayType(F64, 2, "C"), "si", (NONE, NONE, NONE, I64), (SliceInfo(True, True, 1),))
    f64[:]

A view is an array of the same dtype over the same memory. Its layout is ``C`` only where that is sure for
every shape: integer indices on the leading axes, then at most one slice of unit step, then whole axes
(``a[i]``, ``a[1:3]``, ``a[i, 2:5]`` and ``a[2:5, :]`` of a C array); any other view is ``A`` (any strides).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..intrinsics.spec import IntrinsicSpec, Site
from ..ir.ops import Call, Convert, Copy, GetItem, GetView, Intrinsic, IntrinsicCall, MakeTuple, Op, Var
from ..types import BOTTOM, I64, NONE, ArrayType, ListType, ScalarType, TupleType, Type
from .rules import RuleError, index_message

INT_INDEX, SLICE, ELLIPSIS = "i", "s", "e"


@dataclass(frozen=True)
class SliceInfo:
    """What is known at compile time about one slice: missing bounds, and its step when constant (a missing
    step is 1; None when it is only known at run time)."""

    no_start: bool
    no_stop: bool
    step: int | None

    @property
    def whole(self) -> bool:
        return self.no_start and self.no_stop and self.step == 1


def _is_int(t: Type) -> bool:
    return isinstance(t, ScalarType) and (t.is_int or t.kind == "b")


def expand(spec: str, ndim: int) -> str:
    """``spec`` with its ellipsis (or the axes left out at the end) written as whole slices, one per axis."""
    if spec.count(ELLIPSIS) > 1:
        raise RuleError("an index can only have a single ellipsis ('...')")
    used = sum(1 for c in spec if c != ELLIPSIS)
    if used > ndim:
        raise RuleError(f"too many indices for a {ndim}-D array: {used} given")
    fill = SLICE * (ndim - used)
    return spec.replace(ELLIPSIS, fill) if ELLIPSIS in spec else spec + fill


def view_type(arr: Type, spec: str, index: tuple[Type, ...], slices: tuple[SliceInfo, ...]) -> ArrayType:
    """The type of ``arr[…]`` with slices or an ellipsis (``spec`` as in ``GetView``; ``slices`` one per
    ``s`` of ``spec``)."""
    if not isinstance(arr, ArrayType):
        if isinstance(arr, TupleType):
            raise RuleError("slicing a tuple is not supported; index its elements with constants")
        raise RuleError(f"{arr} cannot be sliced")
    k = 0
    for c in spec:
        if c == INT_INDEX:
            if not _is_int(index[k]):
                raise RuleError(index_message(index[k]))
            k += 1
        elif c == SLICE:
            for t in index[k : k + 3]:
                if not (_is_int(t) or t == NONE):
                    raise RuleError(f"slice bounds and steps must be integers or None, not {t}")
            k += 3
    full = expand(spec, arr.ndim)
    ndim = full.count(SLICE)
    if ndim == 0:
        raise RuleError("'...' with an integer index on every axis would give a 0-d array; drop the '...'")
    # The slices that stand for whole axes (the ellipsis, the axes left out) are whole by construction.
    given = iter(slices)
    infos: list[SliceInfo | None] = []
    for c in spec:
        if c == ELLIPSIS:
            infos.extend([SliceInfo(True, True, 1)] * (len(full) - (len(spec) - 1)))
        else:
            infos.append(next(given) if c == SLICE else None)
    infos.extend([SliceInfo(True, True, 1)] * (len(full) - len(infos)))
    return ArrayType(arr.dtype, ndim, "C" if arr.layout == "C" and _stays_contiguous(infos) else "A")


def _stays_contiguous(infos: list[SliceInfo | None]) -> bool:
    k = 0
    while k < len(infos) and infos[k] is None:  # leading integer indices
        k += 1
    if k < len(infos):
        first = infos[k]
        assert first is not None
        if first.step != 1:
            return False
        k += 1
    return all(info is not None and info.whole for info in infos[k:])


def index_view_type(arr: ArrayType, index: tuple[Type, ...]) -> ArrayType:
    """``a[i]`` (or ``a[i, j]``) of an array with more axes than indices: the view of the remaining axes."""
    for t in index:
        if not _is_int(t):
            raise RuleError(index_message(t))
    return ArrayType(arr.dtype, arr.ndim - len(index), arr.layout)


def assign_check(target: ArrayType, value: Type) -> None:
    """``view[…] = value``: a number (every element gets it), or an array (or a list of numbers, as the 1-D array
    ``np.array(lst)``) that broadcasts to the view."""
    if isinstance(value, ScalarType) and value.is_numeric:
        return
    if isinstance(value, ListType) and (value.item is BOTTOM or isinstance(value.item, ScalarType)):
        value = ArrayType(value.item if isinstance(value.item, ScalarType) else I64, 1, "C")  # (as np.array(lst))
    if isinstance(value, ArrayType):
        if value.ndim > target.ndim:
            raise RuleError(
                f"cannot assign a {value.ndim}-D array to a {target.ndim}-D slice; index the source down to "
                f"{target.ndim} dimensions"
            )
        return
    raise RuleError(f"cannot assign a {value} to an array slice; assign a number or an array")


def view_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    return method_type(spec.fn, args)


def method_type(fn: Intrinsic, args: tuple[Type, ...]) -> ArrayType:
    """``a.T``, ``a.reshape(…)``, ``a.ravel()``: ``args[0]`` is the array."""
    arr = args[0]
    assert isinstance(arr, ArrayType)
    rest = args[1:]
    if fn is Intrinsic.TRANSPOSE:
        return arr if arr.ndim == 1 else arr.with_layout("A")
    if fn is Intrinsic.RAVEL:  # (a view of a C-contiguous array, else a C-ordered copy: C either way)
        if rest:
            raise RuleError("ravel() takes no arguments here (only the C order)")
        return ArrayType(arr.dtype, 1, "C")
    if fn is Intrinsic.RESHAPE:  # (of a non-C array: a view with its own strides, or a C-ordered copy)
        dims = reshape_dims(rest)
        return ArrayType(arr.dtype, len(dims), "C" if arr.layout == "C" else "A")
    raise AssertionError(fn)


def reshape_dims(args: tuple[Type, ...]) -> tuple[Type, ...]:
    """The types of the new shape's entries: ``reshape(n, m)`` or ``reshape((n, m))``."""
    if len(args) == 1 and isinstance(args[0], TupleType):
        dims = args[0].items
    else:
        dims = args
    if not dims:
        raise RuleError("reshape() needs the new shape: a.reshape(n, m) or a.reshape((n, m))")
    for t in dims:
        if not _is_int(t):
            raise RuleError(f"reshape() takes integers (one of them may be -1), not {t}")
    return tuple(I64 for _ in dims)


METHODS = frozenset(
    {
        Intrinsic.TRANSPOSE,
        Intrinsic.RESHAPE,
        Intrinsic.RAVEL,
        # NumPy's shape functions (typed by ``aot.infer.shapes``, lowered by ``aot.codegen.shapes``)
        Intrinsic.NP_FLIP,
        Intrinsic.NP_FLIPLR,
        Intrinsic.NP_FLIPUD,
        Intrinsic.NP_EXPAND_DIMS,
        Intrinsic.NP_SQUEEZE,
        Intrinsic.NP_ATLEAST_1D,
        Intrinsic.NP_ATLEAST_2D,
        Intrinsic.NP_ATLEAST_3D,
        Intrinsic.NP_TRANSPOSE,
        Intrinsic.NP_SWAPAXES,
        Intrinsic.NP_MOVEAXIS,
    }
)
"""The intrinsics that make views of their first argument (``a.T``, ``reshape``, ``ravel`` typed by
``method_type``)."""


def function_type(fn: Intrinsic, args: tuple[Type, ...]) -> ArrayType:
    """``np.ravel(a)`` / ``np.reshape(a, shape)``: as ``a.ravel()`` / ``a.reshape(shape)``."""
    name = "ravel" if fn is Intrinsic.RAVEL else "reshape"
    if len(args) != (1 if fn is Intrinsic.RAVEL else 2):
        shape = "" if fn is Intrinsic.RAVEL else ", shape"
        raise RuleError(f"np.{name}() takes (a{shape}) here (the C order), got {len(args)} arguments")
    if not isinstance(args[0], ArrayType):
        raise RuleError(f"np.{name}() needs an array here, not {args[0]}")
    return method_type(fn, args)


NOT_VIEWS: dict[str, str] = {}
"""Array methods left out, with what to write instead."""


def aliases(op: Op) -> tuple[Var, ...]:
    """The values whose memory ``op``'s result may share: the array a view is made of, the items of a tuple,
    the tuple an item comes from, a copy's source, a call's arguments (writing into the result writes into
    them)."""
    if isinstance(op, (GetView, GetItem)):
        return (op.obj,)
    if isinstance(op, IntrinsicCall) and op.fn in METHODS:
        return (op.args[0],)
    if isinstance(op, MakeTuple):
        return op.items
    if isinstance(op, (Copy, Convert)):
        return (op.src,)
    if isinstance(op, Call):  # (a call's result may be any of its array arguments: ``return a``)
        return op.args
    return ()


def holds_array(t: Type) -> bool:
    """Whether values of ``t`` give access to array memory (an array, or a tuple holding one)."""
    return isinstance(t, ArrayType) or (isinstance(t, TupleType) and any(holds_array(i) for i in t.items))
