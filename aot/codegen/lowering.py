"""How each intrinsic op becomes LLVM IR: the lowerings its descriptor names (``aot/intrinsics``).

    SPECS[Intrinsic.NP_SUM].lower(fc, op)     → reduction(fc, op): a scalar, a new array along an axis,
                                                 or NaN-ignoring for np.nansum of floats

Each lowering takes the function being lowered (``Lowerer``: ``aot.codegen.function.FunctionCodegen``) and the
op, emits its code and assigns its destination. They route to the modules that know the family (``npfuncs``,
``nparrays``, ``arrays``, ``views``, ``lists``, ``intrinsics``, ``gpu_intrinsics``); a lowering that picks by
type (a ufunc of numbers or of arrays) picks here, so that ``FunctionCodegen`` asks no intrinsic what it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llvmlite import ir

from ..infer import elementwise as elementwise_rules
from ..ir import IntrinsicCall, Var
from ..ir.ops import Intrinsic
from ..types import NONE, ArrayType, ListType, Type
from . import arrays, elementwise, nanreduce, nparrays, npfuncs, views
from . import types as lt
from .context import Emitter
from .elementwise import Element
from .intrinsics import lower_intrinsic


class Lowerer(Emitter):
    """What a lowering uses of the function being lowered: ``aot.codegen.function.FunctionCodegen`` is one."""

    owned: set[str]
    """Variables whose values hold array references."""

    def t(self, var: Var) -> Type:
        raise NotImplementedError

    def load(self, var: Var) -> ir.Value:
        raise NotImplementedError

    def assign(self, name: str, value: ir.Value, fresh: bool = False) -> None:
        raise NotImplementedError

    def literal(self, *operands: Var) -> tuple[bool, ...]:
        raise NotImplementedError

    def elementwise(self, op: Any, operands: tuple[Var, ...], element: Element) -> None:
        raise NotImplementedError

    def list_intrinsic(self, op: IntrinsicCall) -> None:
        raise NotImplementedError

    def gpu_intrinsic(self, op: IntrinsicCall) -> ir.Value:
        raise NotImplementedError


def _operands(fc: Lowerer, op: IntrinsicCall) -> tuple[list[ir.Value], list[Type]]:
    return [fc.load(a) for a in op.args], [fc.t(a) for a in op.args]


def _none() -> ir.Value:
    return ir.Constant(lt.I8, 0)  # (the value of an op whose type is None)


# ------------------------------------------------------------------------------ scalars and builtins
def builtin(fc: Lowerer, op: IntrinsicCall) -> None:
    """``math`` functions, builtins, array attributes, loop counts, views (``aot.codegen.intrinsics``)."""
    args, argtypes = _operands(fc, op)
    result = lower_intrinsic(fc, op.fn, args, argtypes, fc.t(op.dest))
    fresh = views.may_copy(fc, op.fn, argtypes[0] if argtypes else NONE)
    fc.assign(op.dest.name, result, fresh=fresh)  # (a reshape that may copy: a new reference)


def length(fc: Lowerer, op: IntrinsicCall) -> None:
    """``len(x)`` and a for loop's trip count: of a list (``aot.codegen.lists``), else of an array or tuple."""
    if isinstance(fc.t(op.args[0]), ListType):
        fc.list_intrinsic(op)
    else:
        builtin(fc, op)


def list_op(fc: Lowerer, op: IntrinsicCall) -> None:
    """The list intrinsics and unpacking checks (``FunctionCodegen.list_intrinsic``, ``aot.codegen.lists``)."""
    fc.list_intrinsic(op)


def gpu(fc: Lowerer, op: IntrinsicCall) -> None:
    """``aot.gpu`` ids, barriers, atomics and shared arrays, through the target's hooks."""
    fc.assign(op.dest.name, fc.gpu_intrinsic(op))


# ------------------------------------------------------------------------------ NumPy
def ufunc(fc: Lowerer, op: IntrinsicCall) -> None:
    """A NumPy function of numbers (``aot.codegen.npfuncs``), or applied to every element of arrays: one loop
    over the same scalar lowering (``FunctionCodegen.elementwise``)."""
    rt = fc.t(op.dest)
    if not isinstance(rt, ArrayType):
        numpy_scalar(fc, op)
        return
    if op.fn not in (Intrinsic.NP_CLIP, Intrinsic.NP_WHERE, Intrinsic.NP_ROUND):  # (by value; decimals)
        elementwise.check_python_ints(fc, [(fc.load(a), fc.t(a)) for a in op.args])
    argtypes = [fc.t(a) for a in op.args]
    fc.elementwise(op, op.args, elementwise.ufunc_element(fc, op.fn, argtypes, rt.dtype))


def numpy_scalar(fc: Lowerer, op: IntrinsicCall) -> None:
    """A NumPy function whose result is a number (``aot.codegen.npfuncs``)."""
    args, argtypes = _operands(fc, op)
    fc.assign(op.dest.name, npfuncs.lower(fc, op.fn, args, argtypes, fc.t(op.dest)))


def reduction(fc: Lowerer, op: IntrinsicCall) -> None:
    """``np.sum`` and the other reductions, ``np.dot``: a number, or (along an axis, a matrix product) a new
    array; NaN-ignoring ones of float arrays by ``aot.codegen.nanreduce``."""
    made = fc.t(op.dest)
    args, argtypes = _operands(fc, op)
    if isinstance(made, ArrayType):
        name, fn = op.dest.name, op.fn

        def lower(hold: Callable[[ir.Value], None] | None) -> ir.Value:
            assert isinstance(made, ArrayType)
            if fn is Intrinsic.NP_DOT:
                return nparrays.dot(fc, args, argtypes, made, hold)
            return nparrays.reduce_axis(fc, fn, args, argtypes, made, hold)

        if name in fc.owned and all(a.name != name for a in op.args):
            lower(lambda out: fc.assign(name, out, fresh=True))
        else:
            fc.assign(name, lower(None), fresh=True)
    elif nanreduce.handles(op.fn, argtypes):
        fc.assign(op.dest.name, nanreduce.lower(fc, op.fn, args, argtypes, made))
    else:
        fc.assign(op.dest.name, npfuncs.lower(fc, op.fn, args, argtypes, made))


def new_array(fc: Lowerer, op: IntrinsicCall) -> None:
    """NumPy functions that make new arrays or tuples of them (``aot.codegen.nparrays``), or count."""
    args, argtypes = _operands(fc, op)
    made = fc.t(op.dest)
    result = nparrays.lower(fc, op.fn, args, argtypes, made)
    fc.assign(op.dest.name, result, fresh=arrays.owns_references(made))


def searchsorted(fc: Lowerer, op: IntrinsicCall) -> None:
    """``np.searchsorted(a, x)``: one index (``aot.codegen.npfuncs``), or a new array of them for an array."""
    made = fc.t(op.dest)
    if not isinstance(made, ArrayType):
        numpy_scalar(fc, op)
        return
    args, argtypes = _operands(fc, op)
    right = op.fn is Intrinsic.NP_SEARCHSORTED_RIGHT
    fc.assign(op.dest.name, nparrays.searchsorted_many(fc, args, argtypes, made, right), fresh=True)


# ------------------------------------------------------------------------------ arrays
def allocation(fc: Lowerer, op: IntrinsicCall) -> None:
    """``np.zeros`` and the other allocations, ``a.copy()`` (``aot.codegen.arrays``): a new array."""
    args, argtypes = _operands(fc, op)
    result = arrays.lower_allocation(fc, op.fn, args, argtypes, fc.t(op.dest), op.span)
    fc.assign(op.dest.name, result, fresh=True)


def astype(fc: Lowerer, op: IntrinsicCall) -> None:
    """``a.astype(dtype)``: a converted copy, one loop over the element cast."""
    rt, src = fc.t(op.dest), fc.t(op.args[0])
    assert isinstance(rt, ArrayType) and isinstance(src, ArrayType)
    fc.elementwise(op, op.args, elementwise.cast_element(fc, src.dtype, rt.dtype))


def fill(fc: Lowerer, op: IntrinsicCall) -> None:
    """``a.fill(v)``: as ``a[...] = v``."""
    at = fc.t(op.args[0])
    assert isinstance(at, ArrayType)
    views.assign(fc, fc.load(op.args[0]), at, fc.load(op.args[1]), fc.t(op.args[1]))
    fc.assign(op.dest.name, _none())


def sort_in_place(fc: Lowerer, op: IntrinsicCall) -> None:
    """``a.sort([axis])`` (``aot.codegen.nparrays``)."""
    args, argtypes = _operands(fc, op)
    nparrays.sort_in_place(fc, args, argtypes)
    fc.assign(op.dest.name, _none())


def in_place(fc: Lowerer, op: IntrinsicCall) -> None:
    """``a op= b`` on an array: NumPy's in-place ufunc writes ``a``; the result is ``a`` itself."""
    target, value = op.args
    tt, vt = fc.t(target), fc.t(value)
    assert isinstance(tt, ArrayType)
    kind = elementwise_rules.KIND_OF_INPLACE[op.fn]
    computed = elementwise_rules.binop_type(kind, tt, vt, False, fc.literal(target, value)[1])
    elementwise.check_python_ints(fc, [(fc.load(target), tt), (fc.load(value), vt)])
    elementwise.inplace(fc, kind, fc.load(target), tt, fc.load(value), vt, computed)
    fc.assign(op.dest.name, fc.load(target))
