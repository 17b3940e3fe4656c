"""``np.nanprod`` and ``np.trapezoid`` in emitted code (their types: ``aot.infer.totals``).

np.nanprod(a)   NumPy multiplies a copy of a float array with its NaNs replaced by 1, a copy laid out as the
                array is in memory: so this multiplies the elements in memory order
                (``walks.memory_order``), one after the other from 1, a NaN as 1; of integers and booleans
                the plain product (wrapping in 64 bits, as ``np.prod``); of an empty array 1
"""

from __future__ import annotations

from llvmlite import ir

from ..infer.totals import trapezoid_types
from ..ir import IntrinsicCall
from ..types import F64, I64, ArrayType, ScalarType
from . import arrays, loops, reductions, ufuncs
from . import types as lt
from .lowering import Lowerer
from .numerics import coerce
from .types import value_type
from .walks import element, entry_alloca, memory_order, size_of


def nanprod(fc: Lowerer, op: IntrinsicCall) -> None:
    """``np.nanprod(a)``: a number of the result type."""
    b = fc.b
    at, rt = fc.t(op.args[0]), fc.t(op.dest)
    assert isinstance(at, ArrayType) and isinstance(rt, ScalarType)
    arr = fc.load(op.args[0])
    size = size_of(b, arr, at.ndim)
    if at.dtype.is_float:
        arr = memory_order(b, arr, at)
    one = ir.Constant(value_type(rt), 1.0 if rt.is_float else 1)
    slot = entry_alloca(b, fc.llfn, value_type(rt))
    b.store(one, slot)

    def multiply(k: ir.Value) -> None:
        x = coerce(fc, element(b, arr, at, k), at.dtype, rt)
        if rt.is_float:
            b.store(b.fmul(b.load(slot), b.select(ufuncs.isnan(b, x), one, x)), slot)
        else:
            b.store(b.mul(b.load(slot), x), slot)

    loops.counted_loop(b, ir.Constant(lt.I64, 0), size, multiply, "nanprod", counter=entry_alloca(b, fc.llfn, lt.I64))
    fc.assign(op.dest.name, b.load(slot))


def _add(b: ir.IRBuilder, t: ScalarType, x: ir.Value, y: ir.Value) -> ir.Value:
    return b.fadd(x, y) if t.is_float else b.add(x, y)


def trapezoid(fc: Lowerer, op: IntrinsicCall) -> None:
    """``np.trapezoid(y[, x | dx])``: a float of the result type."""
    b = fc.b
    yt, rt = fc.t(op.args[0]), fc.t(op.dest)
    assert isinstance(yt, ArrayType) and isinstance(rt, ScalarType)
    y = fc.load(op.args[0])
    i64 = lambda v: ir.Constant(lt.I64, v)  # noqa: E731
    gaps = lambda n: b.select(b.icmp_signed("<", n, i64(1)), i64(0), b.sub(n, i64(1)))  # noqa: E731
    ny = gaps(size_of(b, y, 1))
    xt = fc.t(op.args[1]) if len(op.args) > 1 else F64
    x = fc.load(op.args[1]) if len(op.args) > 1 else ir.Constant(lt.F64, 1.0)
    if isinstance(xt, ArrayType):
        product, _ = trapezoid_types(yt, xt.dtype, False)
        nd = gaps(size_of(b, x, 1))
        fits = b.or_(
            b.icmp_signed("==", nd, ny), b.or_(b.icmp_signed("==", nd, i64(1)), b.icmp_signed("==", ny, i64(1)))
        )
        fc.check(b.not_(fits), "ValueError", "operands could not be broadcast together (np.diff(x) and y's sums)")
        count = b.select(b.icmp_signed("==", nd, i64(1)), ny, nd)
    else:
        assert isinstance(xt, ScalarType)
        product, _ = trapezoid_types(yt, xt, xt in (F64, I64))
        nd, count = i64(1), ny
    terms_t = ArrayType(rt, 1, "C")
    terms, _ = arrays.allocate(fc, terms_t, [count])
    half = ir.Constant(value_type(rt), 2.0)

    def term(k: ir.Value) -> None:
        ky = b.select(b.icmp_signed("==", ny, i64(1)), i64(0), k)
        pair = _add(b, yt.dtype, element(b, y, yt, b.add(ky, i64(1))), element(b, y, yt, ky))
        if isinstance(xt, ArrayType):
            kd = b.select(b.icmp_signed("==", nd, i64(1)), i64(0), k)
            hi, lo = element(b, x, xt, b.add(kd, i64(1))), element(b, x, xt, kd)
            d = b.fsub(hi, lo) if xt.dtype.is_float else b.sub(hi, lo)
            d = coerce(fc, d, xt.dtype, product)
        else:
            d = coerce(fc, x, xt, product)
        pair = coerce(fc, pair, yt.dtype, product)
        p = b.fmul(d, pair) if product.is_float else b.mul(d, pair)
        arrays.store_element(fc, terms, terms_t, k, b.fdiv(coerce(fc, p, product, rt), half))

    loops.counted_loop(b, i64(0), count, term, "trapezoid", counter=entry_alloca(b, fc.llfn, lt.I64))
    pw = reductions.pairwise_function(fc, terms_t, rt, False)
    zero = ir.Constant(value_type(rt), 0.0)  # (of no terms the pairwise sum is -0.0: 0 + -0.0 is 0.0)
    total = b.fadd(zero, b.call(pw, [terms, i64(0), count, zero]))
    arrays.decref(fc.ctx, b, terms, terms_t)
    fc.assign(op.dest.name, total)
