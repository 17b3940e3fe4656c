"""NumPy's shape functions in LLVM IR (``aot/intrinsics/shapes.py``): a view of the array, built by
``views.view_of`` from its data pointer, shape and byte strides as the plan of ``aot.infer.shapes`` says.

    np.flip(a, 0)         data + (n0 - 1) * s0, shape (n0, n1), strides (-s0, s1)
    np.expand_dims(a, 0)  data, shape (1, n0, n1), strides (s0 * n0, s0, s1)
    np.squeeze(a, 1)      data, shape (n0, n2), strides (s0, s2); n1 != 1 raises NumPy's ValueError

A view shares its base's reference (as ``a.T`` does: the variable it is assigned to takes a reference);
``np.atleast_*`` of a number is a new array (a new reference).
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir

from ..diagnostics import CompileError, Diagnostic
from ..infer.shapes import FLIP, NEW, plan_type, shape_plan
from ..ir import IntrinsicCall, Var
from ..ir.ops import Copy, MakeTuple, UnaryKind, UnaryOp
from ..types import NONE, ArrayType, ScalarType
from . import arrays, views
from . import types as lt
from .lowering import Lowerer

SQUEEZE_MESSAGE = "cannot select an axis to squeeze out which has size not equal to one"


class ShapeLowerer(Lowerer):
    """What the lowering uses beyond ``Lowerer``: the compile-time value of an operand (the axes)."""

    fn: Any
    """The function being lowered (``aot.ir.Function``)."""

    def constant_value(self, var: Var) -> Any:
        raise NotImplementedError


def _constant(fc: ShapeLowerer, var: Var) -> Any:
    """An axis operand's compile-time value (inference found it: ``aot.infer.body.BodyState.constant_of``): a
    constant, its negation (``-1``), a tuple of them, or what ``constant_value`` folds."""
    for _, o in fc.fn.ops():
        if isinstance(o, UnaryOp) and o.dest == var and o.op in (UnaryKind.NEG, UnaryKind.POS):
            value = _constant(fc, o.operand)
            return -value if o.op is UnaryKind.NEG else value
        if isinstance(o, MakeTuple) and o.dest == var:
            return tuple(_constant(fc, v) for v in o.items)
        if isinstance(o, Copy) and o.dest == var:
            return _constant(fc, o.src)
    return fc.constant_value(var)


def view(fc: ShapeLowerer, op: IntrinsicCall) -> None:
    """The view of ``op.args[0]`` the plan makes (``np.atleast_*`` of a number: a new array holding it)."""
    argtypes = tuple(fc.t(a) for a in op.args)
    consts = (None,) + tuple(None if t == NONE else _constant(fc, a) for a, t in zip(op.args[1:], argtypes[1:]))
    plan = shape_plan(op.fn, argtypes, consts, op.fn.value, method=True)  # (checked by inference)
    result = fc.t(op.dest)
    assert isinstance(result, ArrayType) and result == plan_type(argtypes[0], plan)
    b = fc.b
    one = ir.Constant(lt.I64, 1)
    at = argtypes[0]
    if isinstance(at, ScalarType):
        if not arrays.refcounted(fc.ctx):
            raise CompileError(
                [
                    Diagnostic(
                        op.span,
                        f"{op.fn.value}() of a number cannot run on the {fc.ctx.target.owner} target: it makes a "
                        "new array, and kernels cannot allocate arrays",
                    )
                ]
            )
        made, _ = arrays.allocate(fc, result, [one] * result.ndim)
        views.assign(fc, made, result, fc.load(op.args[0]), at)
        fc.assign(op.dest.name, made, fresh=True)
        return
    assert isinstance(at, ArrayType)
    arr = fc.load(op.args[0])
    data, shape, strides = views.parts(fc, arr, at)
    for k in plan.squeezed:
        fc.check(b.icmp_signed("!=", shape[k], one), "ValueError", SQUEEZE_MESSAGE)
    moved: ir.Value = ir.Constant(lt.I64, 0)
    new_shape: list[ir.Value] = []
    new_strides: list[ir.Value | None] = []
    for kind, k in plan.axes:
        if kind == NEW:
            new_shape.append(one)
            new_strides.append(None)
            continue
        n, stride = shape[k], strides[k]
        if kind == FLIP:  # (the last element first; an empty axis stays where it is)
            last = b.mul(b.sub(n, one), stride)
            zero = ir.Constant(lt.I64, 0)
            moved = b.add(moved, b.select(b.icmp_signed(">", n, zero), last, zero))
            stride = b.neg(stride)
        new_shape.append(n)
        new_strides.append(stride)
    if result.layout == "C":
        final = views.c_strides(fc, new_shape, result.dtype)
    else:  # a new axis of length 1: the stride it would have in C order after the axes that follow it
        final = []
        after: ir.Value = ir.Constant(lt.I64, result.dtype.itemsize)
        for n, s in zip(reversed(new_shape), reversed(new_strides)):
            stride = after if s is None else s
            final.insert(0, stride)
            after = b.mul(stride, n)
    moved_data = views.offset(fc, data, moved) if any(kind == FLIP for kind, _ in plan.axes) else data
    fc.assign(op.dest.name, views.view_of(fc, arr, moved_data, new_shape, final, result))
