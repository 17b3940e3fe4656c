"""NumPy's conversions of an array in LLVM IR (``aot/intrinsics/conversions.py``), ``a.strides``/``a.nbytes``
and the new matrices.

    np.copy(a), np.array(a), np.ascontiguousarray(a)   a new C-ordered array, one loop over the element cast
    a.strides                                          the array value's byte strides, as a tuple
    a.nbytes                                           the product of the shape, times the itemsize
    np.identity(n), np.tril(a, k), np.diag(v, k) …     a new zeroed C-ordered array, then its other elements

(``np.asarray(a)``, and ``np.ascontiguousarray(a)`` of an array known to be C-contiguous, are ``a`` itself:
inference makes them a ``copy`` op, so nothing is lowered here for them.)
"""

from __future__ import annotations

from llvmlite import ir

from ..diagnostics import CompileError, Diagnostic
from ..ir import IntrinsicCall
from ..ir.ops import Intrinsic
from ..types import I64, ArrayType
from . import arrays, elementwise, loops, views
from . import types as lt
from .lowering import Lowerer
from .numerics import coerce
from .types import memory_type, value_type


def copy(fc: Lowerer, op: IntrinsicCall) -> None:
    """A new C-ordered array of the result's dtype holding the array's elements (converted as ``a.astype``)."""
    rt, src = fc.t(op.dest), fc.t(op.args[0])
    assert isinstance(rt, ArrayType) and isinstance(src, ArrayType)
    fc.elementwise(op, op.args[:1], elementwise.cast_element(fc, src.dtype, rt.dtype))


def attribute(fc: Lowerer, op: IntrinsicCall) -> None:
    """``a.strides`` (a tuple of the byte strides) or ``a.nbytes``."""
    b = fc.b
    at = fc.t(op.args[0])
    assert isinstance(at, ArrayType)
    arr = fc.load(op.args[0])
    if op.fn is Intrinsic.STRIDES:
        strides = b.extract_value(arr, arrays.STRIDES)
        out: ir.Value = ir.Constant(value_type(fc.t(op.dest)), ir.Undefined)
        for k in range(at.ndim):
            out = b.insert_value(out, b.extract_value(strides, k), k)
        fc.assign(op.dest.name, out)
        return
    nbytes: ir.Value = ir.Constant(lt.I64, at.dtype.itemsize)
    for n in arrays.shape_of(b, arr, at.ndim):
        nbytes = b.mul(nbytes, n)
    fc.assign(op.dest.name, nbytes)


def _store(fc: Lowerer, out: ir.Value, flat: ir.Value, value: ir.Value) -> None:
    """``out.flat[flat] = value`` on a new C-ordered array, ``value`` in the element's memory type."""
    b = fc.b
    b.store(value, b.gep(b.extract_value(out, arrays.DATA), [flat], inbounds=True))


def matrix(fc: Lowerer, op: IntrinsicCall) -> None:
    """``np.identity``, ``np.tril``, ``np.triu``, ``np.diag``: a new zeroed C-ordered array, then the elements
    that are not zero."""
    b = fc.b
    rt = fc.t(op.dest)
    assert isinstance(rt, ArrayType)
    if not arrays.refcounted(fc.ctx):
        raise CompileError(
            [
                Diagnostic(
                    op.span,
                    f"{op.fn.value}() cannot run on the {fc.ctx.target.owner} target: kernels cannot "
                    "allocate arrays; pass the array in as an argument",
                )
            ]
        )
    zero = ir.Constant(lt.I64, 0)
    k = coerce(fc, fc.load(op.args[1]), fc.t(op.args[1]), I64) if len(op.args) > 1 else zero
    if op.fn is Intrinsic.NP_IDENTITY:
        n = coerce(fc, fc.load(op.args[0]), fc.t(op.args[0]), I64)
        out, nbytes = arrays.allocate(fc, rt, [n, n])
        arrays.zero(fc, out, nbytes)
        unit = ir.Constant(memory_type(rt.dtype), 1.0 if rt.dtype.is_float else 1)
        loops.counted_loop(b, zero, n, lambda i: _store(fc, out, b.add(b.mul(i, n), i), unit), "identity")
        fc.assign(op.dest.name, out, fresh=True)
        return
    at = fc.t(op.args[0])
    assert isinstance(at, ArrayType)
    data, shape, strides = views.parts(fc, fc.load(op.args[0]), at)
    below = b.select(b.icmp_signed("<", k, zero), b.neg(k), zero)  # (the diagonal's first row)
    right = b.select(b.icmp_signed(">", k, zero), k, zero)  # (its first column)
    if op.fn is Intrinsic.NP_DIAG and at.ndim == 1:  # v on the k-th diagonal of a (n + |k|)-square array
        n = shape[0]
        side = b.add(n, b.add(below, right))
        out, nbytes = arrays.allocate(fc, rt, [side, side])
        arrays.zero(fc, out, nbytes)

        def put(i: ir.Value) -> None:
            value = b.load(views.element(fc, data, strides, [i]))
            _store(fc, out, b.add(b.mul(b.add(i, below), side), b.add(i, right)), value)

        loops.counted_loop(b, zero, n, put, "diag")
    elif op.fn is Intrinsic.NP_DIAG:  # the k-th diagonal of a 2-D array: min(rows - below, cols - right) items
        rows, cols = b.sub(shape[0], below), b.sub(shape[1], right)
        count = b.select(b.icmp_signed("<", rows, cols), rows, cols)
        count = b.select(b.icmp_signed("<", count, zero), zero, count)
        out, _ = arrays.allocate(fc, rt, [count])

        def take(i: ir.Value) -> None:
            value = b.load(views.element(fc, data, strides, [b.add(i, below), b.add(i, right)]))
            _store(fc, out, i, value)

        loops.counted_loop(b, zero, count, take, "diag")
    else:  # np.tril keeps j - i <= k, np.triu keeps j - i >= k
        out, nbytes = arrays.allocate(fc, rt, shape)
        arrays.zero(fc, out, nbytes)
        lower = op.fn is Intrinsic.NP_TRIL

        def keep(index: list[ir.Value]) -> None:
            i, j = index
            offset = b.sub(j, i)
            kept = b.icmp_signed("<=", offset, k) if lower else b.icmp_signed(">=", offset, k)
            with b.if_then(kept):
                value = b.load(views.element(fc, data, strides, index))
                _store(fc, out, b.add(b.mul(i, shape[1]), j), value)

        views.nd_loop(fc, shape, keep)
    fc.assign(op.dest.name, out, fresh=True)
