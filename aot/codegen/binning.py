"""NumPy's binning functions in emitted code: ``np.digitize``, ``np.histogram`` and ``np.interp`` (their types:
``aot.infer.binning``, which says which arguments are the op's operands).

    np.digitize(x, bins, right)   bins checked monotonic (as NumPy, in f64: leading equal values skipped, the
                                  first different one gives the direction); then a binary search per value,
                                  NaN ordered last (NumPy's ``searchsorted`` of ``bins`` or of ``bins[::-1]``)
    np.histogram(a, n, range)     the outer edges (the range, else ``a``'s min and max, ±0.5 when equal; an
                                  empty ``a``: 0 and 1), NumPy's ``linspace`` of them in its type, then each
                                  kept value's bin estimated from its position and moved to the edges' bin
    np.histogram(a, edges)        the edges checked increasing, then each value's bin by a binary search (the
                                  last bin closed), NaN in no bin
    np.interp(x, xp, fp, l, r)    in f64, per value as NumPy's C loop: NaN gives NaN; below/above the samples
                                  ``left``/``right``; at a sample its value; else ``slope*(x - xp[j]) + fp[j]``,
                                  retried from ``xp[j+1]`` when that is NaN
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from ..ir import IntrinsicCall
from ..ir.ops import Intrinsic
from ..types import BOOL, F32, F64, I64, ArrayType, ScalarType, TupleType, Type
from . import arrays, gil, loops, reductions
from . import types as lt
from .context import Emitter, ModuleContext
from .lowering import Lowerer
from .numerics import coerce
from .types import value_type
from .ufuncs import isnan
from .walks import element, entry_alloca, size_of

_I64 = lambda v: ir.Constant(lt.I64, v)  # noqa: E731
_F64 = lambda v: ir.Constant(lt.F64, v)  # noqa: E731


def _operands(fc: Lowerer, op: IntrinsicCall) -> tuple[list[ir.Value], list[Type]]:
    return [fc.load(a) for a in op.args], [fc.t(a) for a in op.args]


def _common(a: ScalarType, b: ScalarType) -> ScalarType:
    from ..types import promote

    t = promote(a, b)
    return I64 if t.kind == "b" else t


def _less(b: ir.IRBuilder, x: ir.Value, y: ir.Value, t: ScalarType, or_equal: bool) -> ir.Value:
    """``x < y`` (or ``x <= y``) in NumPy's sort order, NaN after every number (and equal to NaN)."""
    if not t.is_float:
        op = "<=" if or_equal else "<"
        return b.icmp_signed(op, x, y) if t.is_signed else b.icmp_unsigned(op, x, y)
    plain = b.fcmp_ordered("<=" if or_equal else "<", x, y)
    nan_x, nan_y = isnan(b, x), isnan(b, y)
    if or_equal:  # (everything is <= NaN; NaN is <= nothing else)
        return b.or_(plain, nan_y)
    return b.or_(plain, b.and_(nan_y, b.not_(nan_x)))


def _bisect(em: Emitter, n: ir.Value, below: Callable[[ir.Value], ir.Value], name: str) -> ir.Value:
    """The first index ``i`` in ``[0, n)`` where ``below(i)`` fails (``n`` if none), ``below`` holding on a prefix."""
    b = em.b
    lo, hi = entry_alloca(b, em.llfn, lt.I64), entry_alloca(b, em.llfn, lt.I64)
    b.store(_I64(0), lo)
    b.store(n, hi)
    head, body, done = (em.llfn.append_basic_block(f"{name}.{part}") for part in ("head", "body", "done"))
    b.branch(head)
    b.position_at_end(head)
    b.cbranch(b.icmp_signed("<", b.load(lo), b.load(hi)), body, done)
    b.position_at_end(body)
    mid = b.add(b.load(lo), b.lshr(b.sub(b.load(hi), b.load(lo)), _I64(1)))
    go = below(mid)
    b.store(b.select(go, b.add(mid, _I64(1)), b.load(lo)), lo)
    b.store(b.select(go, b.load(hi), mid), hi)
    b.branch(head)
    b.position_at_end(done)
    return b.load(lo)


def _slot(em: Emitter, t: ir.Type, value: ir.Value) -> ir.Value:
    slot = entry_alloca(em.b, em.llfn, t)
    em.b.store(value, slot)
    return slot


def _assign(fc: Lowerer, op: IntrinsicCall, value: ir.Value) -> None:
    fc.assign(op.dest.name, value, fresh=arrays.owns_references(fc.t(op.dest)))


def _each(em: Emitter, x: ir.Value, xt: Type, result: Type, one: Callable[[ir.Value], ir.Value], name: str) -> ir.Value:
    """``one`` of a number, or of each element of an array (C order) into a new array of its shape."""
    if not isinstance(xt, ArrayType):
        return one(x)
    assert isinstance(result, ArrayType)
    b = em.b
    out, _ = arrays.allocate(em, result, arrays.shape_of(b, x, xt.ndim))
    loops.counted_loop(
        b,
        _I64(0),
        size_of(b, x, xt.ndim),
        lambda k: arrays.store_element(em, out, result, k, one(element(b, x, xt, k))),
        name,
    )
    return out


# ------------------------------------------------------------------------------ np.digitize
def digitize(fc: Lowerer, op: IntrinsicCall) -> None:
    """``np.digitize(x, bins[, right])``: NumPy's ``ValueError`` for bins neither increasing nor decreasing."""
    em, b = fc, fc.b
    args, argtypes = _operands(fc, op)
    (x, bins), (xt, bt) = args[:2], argtypes[:2]
    assert isinstance(bt, ArrayType)
    right = coerce(em, args[2], argtypes[2], BOOL) if len(args) > 2 else ir.Constant(lt.I1, 0)
    n = arrays.shape_of(b, bins, 1)[0]

    def bin_at(i: ir.Value, t: ScalarType) -> ir.Value:
        return coerce(em, element(b, bins, bt, i), bt.dtype, t)

    # NumPy's check (in f64): skip the values equal to the first; the next one sets the direction
    first = _slot(em, lt.I64, n)
    rises, falls = _slot(em, lt.I1, ir.Constant(lt.I1, 0)), _slot(em, lt.I1, ir.Constant(lt.I1, 0))

    def scan(i: ir.Value) -> None:
        here, before = bin_at(i, F64), bin_at(b.sub(i, _I64(1)), F64)
        differs = b.fcmp_unordered("une", here, bin_at(_I64(0), F64))
        unset = b.icmp_signed("==", b.load(first), n)
        b.store(b.select(b.and_(unset, differs), i, b.load(first)), first)
        b.store(b.or_(b.load(rises), b.fcmp_ordered("<", before, here)), rises)
        b.store(b.or_(b.load(falls), b.fcmp_ordered(">", before, here)), falls)

    loops.counted_loop(b, _I64(1), n, scan, "digitize.mono")
    settled = b.icmp_signed("==", b.load(first), n)  # (all equal, or at most one bin: increasing)
    rising = _slot(em, lt.I1, ir.Constant(lt.I1, 1))
    with b.if_then(b.not_(settled)):
        b.store(b.fcmp_ordered("<", bin_at(_I64(0), F64), bin_at(b.load(first), F64)), rising)
    increasing = b.load(rising)
    bad = b.select(increasing, b.load(falls), b.load(rises))
    em.check(bad, "ValueError", "bins must be monotonically increasing or decreasing")

    def one(v: ir.Value) -> ir.Value:
        vt = xt.dtype if isinstance(xt, ArrayType) else xt
        assert isinstance(vt, ScalarType)
        common = _common(bt.dtype, vt)
        key = coerce(em, v, vt, common)

        def below(i: ir.Value) -> ir.Value:
            e = bin_at(i, common)
            holds = b.select(right, _less(b, e, key, common, False), _less(b, e, key, common, True))
            return b.select(increasing, holds, b.not_(holds))

        return _bisect(em, n, below, "digitize")

    _assign(fc, op, _each(em, x, xt, fc.t(op.dest), one, "digitize"))


# ------------------------------------------------------------------------------ np.interp
def interp(fc: Lowerer, op: IntrinsicCall) -> None:
    """``np.interp(x, xp, fp[, left[, right]])`` (a ``left`` operand that is an array: not given)."""
    em, b = fc, fc.b
    args, argtypes = _operands(fc, op)
    (x, xp, fp), (xt, xpt, fpt) = args[:3], argtypes[:3]
    assert isinstance(xpt, ArrayType) and isinstance(fpt, ArrayType)
    n = arrays.shape_of(b, xp, 1)[0]
    em.check(b.icmp_signed("==", n, _I64(0)), "ValueError", "array of sample points is empty")
    em.check(
        b.icmp_signed("!=", arrays.shape_of(b, fp, 1)[0], n), "ValueError", "fp and xp are not of the same length."
    )

    def xs(i: ir.Value) -> ir.Value:
        return coerce(em, element(b, xp, xpt, i), xpt.dtype, F64)

    def fs(i: ir.Value) -> ir.Value:
        return coerce(em, element(b, fp, fpt, i), fpt.dtype, F64)

    last = b.sub(n, _I64(1))

    def given(k: int, default: ir.Value) -> ir.Value:
        if len(args) > k and isinstance(argtypes[k], ScalarType):
            return coerce(em, args[k], argtypes[k], F64)
        return default

    left, right = given(3, fs(_I64(0))), given(4, fs(last))
    x0, f0, xn = xs(_I64(0)), fs(_I64(0)), xs(last)
    single = b.icmp_signed("==", n, _I64(1))

    def one(v: ir.Value) -> ir.Value:
        vt = xt.dtype if isinstance(xt, ArrayType) else xt
        assert isinstance(vt, ScalarType)
        value = coerce(em, v, vt, F64)
        result = _slot(em, lt.F64, value)  # (NaN gives NaN)
        with b.if_else(single) as (one_sample, samples):
            with one_sample:
                lone = b.select(b.fcmp_ordered(">", value, x0), right, f0)
                b.store(b.select(b.fcmp_ordered("<", value, x0), left, lone), result)
            with samples:
                with b.if_then(b.not_(isnan(b, value))):
                    _between(em, value, n, xs, fs, left, right, xn, result)
        return b.load(result)

    _assign(fc, op, _each(em, x, xt, fc.t(op.dest), one, "interp"))


def _between(
    em: Emitter,
    value: ir.Value,
    n: ir.Value,
    xs: Callable[[ir.Value], ir.Value],
    fs: Callable[[ir.Value], ir.Value],
    left: ir.Value,
    right: ir.Value,
    xn: ir.Value,
    result: ir.Value,
) -> None:
    """NumPy's value at ``value`` (not NaN) of two or more samples, stored in ``result``."""
    b = em.b
    count = _bisect(em, n, lambda i: b.fcmp_ordered("<=", xs(i), value), "interp")  # (xp[i] <= value)
    above = b.fcmp_ordered(">", value, xn)
    with b.if_else(b.icmp_signed("==", count, _I64(0))) as (under, within):
        with under:
            b.store(left, result)
        with within:
            j = b.sub(count, _I64(1))
            at_last = b.icmp_signed("==", j, b.sub(n, _I64(1)))
            with b.if_else(b.or_(above, at_last)) as (end, inner):
                with end:
                    b.store(b.select(above, right, fs(j)), result)
                with inner:
                    xj, fj = xs(j), fs(j)
                    with b.if_else(b.fcmp_ordered("==", xj, value)) as (exact, slope_of):
                        with exact:
                            b.store(fj, result)
                        with slope_of:
                            k = b.add(j, _I64(1))
                            xk, fk = xs(k), fs(k)
                            slope = b.fdiv(b.fsub(fk, fj), b.fsub(xk, xj))
                            got = b.fadd(b.fmul(slope, b.fsub(value, xj)), fj)
                            again = b.fadd(b.fmul(slope, b.fsub(value, xk)), fk)
                            retried = b.select(isnan(b, got), again, got)
                            flat = b.and_(isnan(b, retried), b.fcmp_ordered("==", fj, fk))
                            b.store(b.select(flat, fj, retried), result)


# ------------------------------------------------------------------------------ np.histogram
def histogram(fc: Lowerer, op: IntrinsicCall) -> None:
    """``np.histogram(a[, bins[, range]])``: ``(hist, bin_edges)``."""
    em, b = fc, fc.b
    args, argtypes = _operands(fc, op)
    made = fc.t(op.dest)
    assert isinstance(made, TupleType)
    hist_t, edges_t = made.items
    assert isinstance(hist_t, ArrayType) and isinstance(edges_t, ArrayType)
    a, at = args[0], argtypes[0]
    assert isinstance(at, ArrayType)
    if len(args) > 1 and isinstance(argtypes[1], ArrayType):
        hist, edges = _given_edges(em, a, at, args[1], argtypes[1], hist_t, edges_t)
    else:
        count = coerce(em, args[1], argtypes[1], I64) if len(args) > 1 else _I64(10)
        bounds = (args[2], argtypes[2]) if len(args) > 2 else None
        hist, edges = _equal_bins(em, a, at, count, bounds, hist_t, edges_t)
    packed = ir.Constant(value_type(made), ir.Undefined)
    packed = b.insert_value(b.insert_value(packed, hist, 0), edges, 1)
    _assign(fc, op, packed)


def _zeros(em: Emitter, t: ArrayType, n: ir.Value) -> ir.Value:
    out, nbytes = arrays.allocate(em, t, [n])
    arrays.zero(em, out, nbytes)
    return out


def _add_one(em: Emitter, hist: ir.Value, index: ir.Value) -> None:
    b = em.b
    slot = b.gep(b.extract_value(hist, arrays.DATA), [index], inbounds=True)
    b.store(b.add(b.load(slot), _I64(1)), slot)


def _given_edges(
    em: Emitter, a: ir.Value, at: ArrayType, bins: ir.Value, bt: Type, hist_t: ArrayType, edges_t: ArrayType
) -> tuple[ir.Value, ir.Value]:
    b = em.b
    assert isinstance(bt, ArrayType)
    d = bt.dtype
    n = arrays.shape_of(b, bins, 1)[0]

    def edge(i: ir.Value) -> ir.Value:
        return element(b, bins, bt, i)

    rises = _slot(em, lt.I1, ir.Constant(lt.I1, 0))

    def check(i: ir.Value) -> None:  # (edges[:-1] > edges[1:] anywhere: NaN compares false)
        before, here = edge(b.sub(i, _I64(1))), edge(i)
        wrong = b.fcmp_ordered(">", before, here) if d.is_float else _less(b, here, before, d, False)
        b.store(b.or_(b.load(rises), wrong), rises)

    loops.counted_loop(b, _I64(1), n, check, "histogram.mono")
    em.check(b.load(rises), "ValueError", "`bins` must increase monotonically, when an array")
    edges, _ = arrays.allocate(em, edges_t, [n])
    loops.counted_loop(b, _I64(0), n, lambda i: arrays.store_element(em, edges, edges_t, i, edge(i)), "histogram.edges")
    bins_n = b.select(b.icmp_signed(">", n, _I64(0)), b.sub(n, _I64(1)), _I64(0))
    hist = _zeros(em, hist_t, bins_n)
    common = _common(at.dtype, d)
    last = b.sub(n, _I64(1))

    def count(k: ir.Value) -> None:
        x = coerce(em, element(b, a, at, k), at.dtype, common)
        found = _bisect(em, n, lambda i: _less(b, coerce(em, edge(i), d, common), x, common, True), "histogram.find")
        j = b.sub(found, _I64(1))  # (the last edge <= x)
        closing = b.and_(b.icmp_signed("==", j, last), b.icmp_signed(">", n, _I64(1)))
        if common.is_float:
            closing = b.and_(closing, b.fcmp_ordered("==", x, coerce(em, edge(last), d, common)))
        else:
            closing = b.and_(closing, b.icmp_signed("==", x, coerce(em, edge(last), d, common)))
        j = b.select(closing, b.sub(last, _I64(1)), j)
        inside = b.and_(b.icmp_signed(">=", j, _I64(0)), b.icmp_signed("<", j, bins_n))
        if common.is_float:
            inside = b.and_(inside, b.not_(isnan(b, x)))
        with b.if_then(inside):
            _add_one(em, hist, j)

    loops.counted_loop(b, _I64(0), size_of(b, a, at.ndim), count, "histogram")
    return hist, edges


def _equal_bins(
    em: Emitter,
    a: ir.Value,
    at: ArrayType,
    count: ir.Value,
    bounds: tuple[ir.Value, Type] | None,
    hist_t: ArrayType,
    edges_t: ArrayType,
) -> tuple[ir.Value, ir.Value]:
    b = em.b
    em.check(b.icmp_signed("<", count, _I64(1)), "ValueError", "`bins` must be positive, when an integer")
    size = size_of(b, a, at.ndim)
    narrow = False  # (NumPy's linspace in f32: of f32 data's own min and max, or of an f32 range)
    use_narrow: ir.Value = ir.Constant(lt.I1, 0)
    if bounds is not None:
        value, tt = bounds
        assert isinstance(tt, TupleType)
        items = [(b.extract_value(value, k), t) for k, t in enumerate(tt.items)]
        (lo, lo_t), (hi, hi_t) = items
        assert isinstance(lo_t, ScalarType) and isinstance(hi_t, ScalarType)
        both = _common(lo_t, hi_t)
        reversed_ = _less(b, coerce(em, hi, hi_t, both), coerce(em, lo, lo_t, both), both, False)
        if both.is_float:
            reversed_ = b.and_(
                reversed_, b.not_(b.or_(isnan(b, coerce(em, lo, lo_t, both)), isnan(b, coerce(em, hi, hi_t, both))))
            )
        em.check(reversed_, "ValueError", "max must be larger than min in range parameter.")
        first, last = coerce(em, lo, lo_t, F64), coerce(em, hi, hi_t, F64)
        _finite_or_raise(em, "supplied", first, lo_t, last, hi_t)
        narrow = lo_t == F32 and hi_t == F32
        use_narrow = ir.Constant(lt.I1, int(narrow))
        first32, last32 = (coerce(em, lo, lo_t, F32), coerce(em, hi, hi_t, F32)) if narrow else (None, None)
    else:
        # NumPy's a.min() and a.max() (the same reductions, so the same answer between 0.0 and -0.0; NaN
        # propagates); an empty array's range is (0, 1)
        low, high = _slot(em, lt.F64, _F64(0.0)), _slot(em, lt.F64, _F64(1.0))
        empty = b.icmp_signed("==", size, _I64(0))
        with b.if_then(b.not_(empty)):
            found_lo = coerce(em, reductions.reduce(em, Intrinsic.NP_MIN, a, at, at.dtype), at.dtype, F64)
            found_hi = coerce(em, reductions.reduce(em, Intrinsic.NP_MAX, a, at, at.dtype), at.dtype, F64)
            _finite_or_raise(em, "autodetected", found_lo, at.dtype, found_hi, at.dtype)
            b.store(found_lo, low)
            b.store(found_hi, high)
        first, last = b.load(low), b.load(high)
        narrow = at.dtype == F32
        use_narrow = b.and_(ir.Constant(lt.I1, int(narrow)), b.not_(empty))
        first32, last32 = (b.fptrunc(first, lt.F32), b.fptrunc(last, lt.F32)) if narrow else (None, None)
    same = b.fcmp_ordered("==", first, last)
    first = b.select(same, b.fsub(first, _F64(0.5)), first)
    last = b.select(same, b.fadd(last, _F64(0.5)), last)
    if first32 is not None and last32 is not None:
        half = ir.Constant(lt.F32, 0.5)
        first32 = b.select(same, b.fsub(first32, half), first32)
        last32 = b.select(same, b.fadd(last32, half), last32)
    # the edges: NumPy's linspace(first, last, count + 1) in its type, stored in the edges' dtype
    edges, _ = arrays.allocate(em, edges_t, [b.add(count, _I64(1))])
    et = edges_t.dtype

    def spaced(i: ir.Value, start: ir.Value, stop: ir.Value, ft: ir.Type) -> ir.Value:
        div = b.sitofp(count, ft)
        delta = b.fsub(stop, start)
        step = b.fdiv(delta, div)
        fi = b.sitofp(i, ft)
        zero = b.fcmp_ordered("==", step, ir.Constant(ft, 0.0))
        value = b.fadd(b.select(zero, b.fmul(b.fdiv(fi, div), delta), b.fmul(fi, step)), start)
        return b.select(b.icmp_signed("==", i, count), stop, value)

    def put(i: ir.Value) -> None:
        wide = coerce(em, spaced(i, first, last, lt.F64), F64, et)
        if first32 is not None and last32 is not None:
            wide = b.select(use_narrow, coerce(em, spaced(i, first32, last32, lt.F32), F32, et), wide)
        arrays.store_element(em, edges, edges_t, i, wide)

    loops.counted_loop(b, _I64(0), b.add(count, _I64(1)), put, "histogram.edges")
    edge_data = b.extract_value(edges, arrays.DATA)
    crowded = _slot(em, lt.I1, ir.Constant(lt.I1, 0))

    def crowd(i: ir.Value) -> None:  # (edges[:-1] >= edges[1:] anywhere: bins too narrow for the type)
        before, here = (b.load(b.gep(edge_data, [j], inbounds=True)) for j in (b.sub(i, _I64(1)), i))
        b.store(b.or_(b.load(crowded), b.fcmp_ordered(">=", before, here)), crowded)

    loops.counted_loop(b, _I64(1), b.add(count, _I64(1)), crowd, "histogram.narrow")
    text = "Too many bins for data range. Cannot create %lld finite-sized bins."
    with b.if_then(b.load(crowded), likely=False):
        em.raise_(
            "ValueError",
            "Too many bins for data range. Cannot create finite-sized bins.",
            lambda: b.call(_count_error_function(em.ctx), [em.ctx.cstring(text), count]),
        )
    hist = _zeros(em, hist_t, count)
    weak = et == F32 and at.dtype == F32  # (the range's numbers compared in f32, as NumPy's Python floats)
    top = b.sub(count, _I64(1))
    span = b.fsub(last, first)
    nbins = b.sitofp(count, lt.F64)
    index = entry_alloca(b, em.llfn, lt.I64)

    def place(k: ir.Value) -> None:
        v = element(b, a, at, k)
        x = coerce(em, v, at.dtype, F64)
        if weak:
            x32 = coerce(em, v, at.dtype, F32)
            keep = b.and_(
                b.fcmp_ordered(">=", x32, b.fptrunc(first, lt.F32)), b.fcmp_ordered("<=", x32, b.fptrunc(last, lt.F32))
            )
        else:
            keep = b.and_(b.fcmp_ordered(">=", x, first), b.fcmp_ordered("<=", x, last))
        with b.if_then(keep):
            guess = b.fmul(b.fdiv(b.fsub(x, first), span), nbins)
            guess = b.select(b.fcmp_ordered(">", guess, _F64(0.0)), guess, _F64(0.0))  # (NaN: 0)
            guess = b.select(b.fcmp_ordered(">=", guess, b.sitofp(top, lt.F64)), b.sitofp(top, lt.F64), guess)
            b.store(b.fptosi(guess, lt.I64), index)
            xe = coerce(em, v, at.dtype, et)

            def edge(i: ir.Value) -> ir.Value:
                return b.load(b.gep(edge_data, [i], inbounds=True))

            loops.while_loop(
                b,
                em.llfn,
                lambda: b.and_(
                    b.icmp_signed(">", b.load(index), _I64(0)), b.fcmp_ordered("<", xe, edge(b.load(index)))
                ),
                lambda: b.store(b.sub(b.load(index), _I64(1)), index),
                "histogram.down",
            )
            loops.while_loop(
                b,
                em.llfn,
                lambda: b.and_(
                    b.icmp_signed("<", b.load(index), top),
                    b.fcmp_ordered(">=", xe, edge(b.add(b.load(index), _I64(1)))),
                ),
                lambda: b.store(b.add(b.load(index), _I64(1)), index),
                "histogram.up",
            )
            _add_one(em, hist, b.load(index))

    loops.counted_loop(b, _I64(0), size, place, "histogram")
    return hist, edges


def _finite_or_raise(em: Emitter, which: str, lo: ir.Value, lo_t: ScalarType, hi: ir.Value, hi_t: ScalarType) -> None:
    """NumPy's ``ValueError`` "autodetected range of [nan, nan] is not finite" (or "supplied …") when either
    edge (an f64 value here) is NaN or infinite; the values written as Python writes them (an integer edge
    without ``.0``; an f32 value as the f64 it is)."""
    b = em.b
    inf = _F64(float("inf"))

    def finite(v: ir.Value) -> ir.Value:
        return b.fcmp_ordered("<", b.call(_fabs(em.ctx), [v]), inf)

    text = f"{which} range of [%s, %s] is not finite"

    def with_values() -> None:
        flags = [ir.Constant(lt.I32, 0 if t.is_int else 2) for t in (lo_t, hi_t)]  # (Py_DTSF_ADD_DOT_0)
        b.call(_range_error_function(em.ctx), [em.ctx.cstring(text), lo, flags[0], hi, flags[1]])

    with b.if_then(b.not_(b.and_(finite(lo), finite(hi))), likely=False):
        em.raise_("ValueError", f"{which} range is not finite", with_values)


def _fabs(ctx: ModuleContext) -> ir.Function:
    return ctx.declare("llvm.fabs.f64", ir.FunctionType(lt.F64, [lt.F64]))


def _range_error_function(ctx: ModuleContext) -> ir.Function:
    """``void aot_np_range_error(ptr format, double lo, i32 lo_flags, double hi, i32 hi_flags)``: ``ValueError``
    with both values written by CPython's ``repr`` of a float (``PyOS_double_to_string``), holding the GIL."""
    fnty = ir.FunctionType(ir.VoidType(), [lt.PTR, lt.F64, lt.I32, lt.F64, lt.I32])
    fn, b = ctx.internal_function("aot_np_range_error", fnty)
    if b is None:
        return fn
    fn.attributes.add("cold")
    fn.attributes.add("noinline")
    text, lo, lo_flags, hi, hi_flags = fn.args
    token = b.call(gil.acquire_function(ctx), [])
    to_string = ctx.declare("PyOS_double_to_string", ir.FunctionType(lt.PTR, [lt.F64, lt.I8, lt.I32, lt.I32, lt.PTR]))
    written = [
        b.call(to_string, [v, ir.Constant(lt.I8, ord("r")), ir.Constant(lt.I32, 0), f, ir.Constant(lt.PTR, None)])
        for v, f in ((lo, lo_flags), (hi, hi_flags))
    ]
    exc = b.load(b.bitcast(ctx.global_pointer("PyExc_ValueError"), lt.PTR.as_pointer()))
    b.call(ctx.declare("PyErr_Format", ir.FunctionType(lt.PTR, [lt.PTR, lt.PTR], var_arg=True)), [exc, text, *written])
    free = ctx.declare("PyMem_Free", ir.FunctionType(ir.VoidType(), [lt.PTR]))
    for s in written:
        b.call(free, [s])
    b.call(gil.release_function(ctx), [token])
    b.ret_void()
    return fn


def _count_error_function(ctx: ModuleContext) -> ir.Function:
    """``void aot_np_count_error(ptr format, i64)``: ``ValueError`` with the number in its message (holding the
    GIL for the moment it takes)."""
    fn, b = ctx.internal_function("aot_np_count_error", ir.FunctionType(ir.VoidType(), [lt.PTR, lt.I64]))
    if b is None:
        return fn
    fn.attributes.add("cold")
    fn.attributes.add("noinline")
    token = b.call(gil.acquire_function(ctx), [])
    exc = b.load(b.bitcast(ctx.global_pointer("PyExc_ValueError"), lt.PTR.as_pointer()))
    b.call(ctx.declare("PyErr_Format", ir.FunctionType(lt.PTR, [lt.PTR, lt.PTR], var_arg=True)), [exc, *fn.args])
    b.call(gil.release_function(ctx), [token])
    b.ret_void()
    return fn
