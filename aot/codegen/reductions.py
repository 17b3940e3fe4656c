"""Full reductions of an array to one number, NumPy's way: ``np.sum`` … ``np.any``, ``np.dot`` of 1-D arrays,
``np.linalg.norm``, ``np.searchsorted`` of one value (``aot.infer.npfuncs`` types them).

    a.sum()      →  call @aot_np_pairwise_f64_f64_1C(...)        ; NumPy's pairwise summation
    a.min()      →  vector loops over contiguous memory, eight lanes over a strided N-D view; NaN wins
    a.argmax()   →  the extreme, then the first element equal to it (or the first NaN)

Reductions walk the array in C order (``aot.codegen.walks``); float sums use NumPy's pairwise algorithm (blocks
of 8 partial sums up to 128 elements, halves above) over the array in memory order, so that results match
NumPy's bit for bit on 1-D and C-contiguous arrays. The pairwise helper is one internal function per element
type, array rank and mode, emitted once per module. Along an axis: ``aot.codegen.nparrays``; NaN-ignoring ones
of floats: ``aot.codegen.nanreduce``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from llvmlite import ir

from ..infer.npfuncs import NAN_PLAIN
from ..ir.ops import Intrinsic
from ..types import BOOL, I64, ArrayType, ScalarType, Type, promote
from . import loops
from . import types as lt
from .context import Emitter
from .numerics import coerce, convert_scalar
from .types import value_type
from .ufuncs import isnan, less
from .walks import element, entry_alloca, is_empty, memory_order, size_of

REDUCTIONS = frozenset(
    {
        Intrinsic.NP_SUM,
        Intrinsic.NP_PROD,
        Intrinsic.NP_MIN,
        Intrinsic.NP_MAX,
        Intrinsic.NP_MEAN,
        Intrinsic.NP_STD,
        Intrinsic.NP_VAR,
        Intrinsic.NP_ARGMIN,
        Intrinsic.NP_ARGMAX,
        Intrinsic.NP_ALL,
        Intrinsic.NP_ANY,
    }
) | frozenset(NAN_PLAIN)
"""The intrinsics ``reduce`` lowers (the NaN-ignoring ones of integers and booleans too: they are the plain ones)."""

_BLOCK = 128  # NumPy's PW_BLOCKSIZE


def pairwise_function(
    em: Emitter, at: ArrayType, acc: ScalarType, squares: bool, skip_nan: bool = False
) -> ir.Function:
    """``acc pw(array a, i64 lo, i64 n, acc mean)``: NumPy's pairwise sum of the elements ``lo … lo+n-1`` (C
    order) converted to ``acc`` — of ``(x - mean)**2`` with ``squares`` (the second pass of var/std); with
    ``skip_nan`` a NaN element counts as 0 (``np.nansum`` sums a copy with its NaNs replaced by 0)."""
    nan = "_nan" if skip_nan else ""
    name = f"aot_np_pairwise_{at.dtype.name}_{acc.name}_{at.ndim}{at.layout}{'_sq' if squares else ''}{nan}"
    existing = em.ctx.module.globals.get(name)
    if existing is not None:
        return existing
    ft = value_type(acc)
    fn = ir.Function(em.ctx.module, ir.FunctionType(ft, [value_type(at), lt.I64, lt.I64, ft]), name)
    fn.linkage = "internal"
    arr, lo, n, mean = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    i64 = lambda v: ir.Constant(lt.I64, v)  # noqa: E731

    def item(k: ir.Value) -> ir.Value:
        x = coerce(em_like(b), element(b, arr, at, b.add(lo, k)), at.dtype, acc)
        value = x
        if squares:
            d = b.fsub(x, mean)
            value = b.fmul(d, d)
        return b.select(isnan(b, x), ir.Constant(ft, 0.0), value) if skip_nan else value

    small, medium, large = (fn.append_basic_block(x) for x in ("small", "medium", "large"))
    b.cbranch(b.icmp_signed("<", n, i64(8)), small, medium)
    # n < 8: a plain loop
    b.position_at_end(small)
    total = entry_alloca(b, fn, ft)
    b.store(ir.Constant(ft, -0.0), total)
    loops.counted_loop(
        b, i64(0), n, lambda k: b.store(b.fadd(b.load(total), item(k)), total), counter=entry_alloca(b, fn, lt.I64)
    )
    b.ret(b.load(total))
    # 8 <= n <= 128: eight partial sums, then the tail
    b.position_at_end(medium)
    blocked = fn.append_basic_block("blocked")
    b.cbranch(b.icmp_signed("<=", n, i64(_BLOCK)), blocked, large)
    b.position_at_end(blocked)
    partial = [entry_alloca(b, fn, ft) for _ in range(8)]
    for j, slot in enumerate(partial):
        b.store(item(i64(j)), slot)
    whole = b.sub(n, b.srem(n, i64(8)))
    steps = b.sdiv(whole, i64(8))

    def block(s: ir.Value) -> None:
        base = b.mul(s, i64(8))
        for j, slot in enumerate(partial):
            b.store(b.fadd(b.load(slot), item(b.add(base, i64(j)))), slot)

    loops.counted_loop(b, i64(1), steps, block, counter=entry_alloca(b, fn, lt.I64))
    r = [b.load(slot) for slot in partial]
    res = b.fadd(b.fadd(b.fadd(r[0], r[1]), b.fadd(r[2], r[3])), b.fadd(b.fadd(r[4], r[5]), b.fadd(r[6], r[7])))
    b.store(res, total)
    loops.counted_loop(
        b, whole, n, lambda k: b.store(b.fadd(b.load(total), item(k)), total), counter=entry_alloca(b, fn, lt.I64)
    )
    b.ret(b.load(total))
    # n > 128: two halves, the first a multiple of 8
    b.position_at_end(large)
    half = b.sdiv(n, i64(2))
    half = b.sub(half, b.srem(half, i64(8)))
    first = b.call(fn, [arr, lo, half, mean])
    second = b.call(fn, [arr, b.add(lo, half), b.sub(n, half), mean])
    b.ret(b.fadd(first, second))
    return fn


class _Bare(Emitter):
    """An emitter for code in a helper function, which never raises (only conversions are emitted)."""

    def __init__(self, b: ir.IRBuilder):
        self.b = b


def em_like(b: ir.IRBuilder) -> Emitter:
    return _Bare(b)


def _float_sum(em: Emitter, arr: ir.Value, at: ArrayType, acc: ScalarType, mean: ir.Value | None = None) -> ir.Value:
    """NumPy's sum of the elements as ``acc`` (of their squared deviations from ``mean`` with one): 0 plus
    pairwise sums over the array in its iteration order (``memory_order``). NumPy sums the whole array
    pairwise when its axes merge into one (1-D, contiguous) and when it sums a temporary (the deviations);
    otherwise it goes through buffers, each summed pairwise, the buffers' sums added in order: of 8192
    elements for integers converted to floats, of as many whole innermost rows as fit in 8192 elements for N-D
    views whose axes do not merge. (This matches NumPy 2.x bit for bit on 1-D and contiguous arrays, their
    transposes and views of up to 8192 elements; larger N-D views may differ in the last bits.)"""
    if at.ndim == 1:
        return _buffered_sum(em, arr, at, acc, mean)
    return _over(em, arr, at, value_type(acc), lambda view, vt: _buffered_sum(em, view, vt, acc, mean))


def norm(em: Emitter, arr: ir.Value, at: ArrayType, rt: ScalarType) -> ir.Value:
    """``np.linalg.norm(x)``: ``sqrt(x.ravel() @ x.ravel())``, the squares summed pairwise in memory order."""
    squares = _float_sum(em, memory_order(em.b, arr, at), at, rt, ir.Constant(value_type(rt), 0.0))
    return em.call_intrinsic("llvm.sqrt", [squares])


def _buffered_sum(em: Emitter, arr: ir.Value, at: ArrayType, acc: ScalarType, mean: ir.Value | None) -> ir.Value:
    """0 plus the pairwise sums of consecutive buffers of ``arr`` (1-D: its axes merged; N-D: they do not)."""
    b = em.b
    ft = value_type(acc)
    size = size_of(b, arr, at.ndim)
    zero = ir.Constant(ft, 0.0)
    i64 = lambda v: ir.Constant(lt.I64, v)  # noqa: E731
    whole = b.select(b.icmp_signed("<", size, i64(1)), i64(1), size)
    if mean is not None:
        chunk = whole
    elif at.ndim == 1 or at.layout == "C":
        chunk = whole if at.dtype.is_float else i64(_BUFFER)
    else:  # a buffer holds as many whole rows of the innermost axis as fit
        inner = b.extract_value(b.extract_value(arr, 1), at.ndim - 1)
        inner = b.select(b.icmp_signed("<", inner, i64(1)), i64(1), inner)
        rows = b.mul(b.sdiv(i64(_BUFFER), inner), inner)
        chunk = b.select(b.icmp_signed("<", rows, inner), inner, rows)
    pw = pairwise_function(em, at, acc, mean is not None)
    total = entry_alloca(b, em.llfn, ft)
    b.store(zero, total)
    count = b.sdiv(b.add(size, b.sub(chunk, i64(1))), chunk)

    def one(c: ir.Value) -> None:
        lo = b.mul(c, chunk)
        left = b.sub(size, lo)
        n = b.select(b.icmp_signed("<", left, chunk), left, chunk)
        b.store(b.fadd(b.load(total), b.call(pw, [arr, lo, n, mean if mean is not None else zero])), total)

    loops.counted_loop(b, i64(0), count, one, counter=entry_alloca(b, em.llfn, lt.I64))
    return b.load(total)


_BUFFER = 8192  # NumPy's default buffer size (elements)


def _merges(b: ir.IRBuilder, arr: ir.Value, at: ArrayType) -> ir.Value:
    """Whether the axes of ``arr`` (in iteration order) merge into one, as NumPy's iterator coalesces them:
    each axis longer than 1 steps by the extent of the next inner one longer than 1."""
    return _flat_stride(b, arr, at)[0]


def _flat_stride(b: ir.IRBuilder, arr: ir.Value, at: ArrayType) -> tuple[ir.Value, ir.Value]:
    """(whether the axes merge, the stride of the merged axis: that of the innermost axis longer than 1)."""
    shape, strides = b.extract_value(arr, 1), b.extract_value(arr, 2)
    one = ir.Constant(lt.I64, 1)
    ok: ir.Value = ir.Constant(lt.I1, 1)
    seen: ir.Value = ir.Constant(lt.I1, 0)  # an axis longer than 1 was seen (inside this one)
    expected: ir.Value = ir.Constant(lt.I64, 0)  # the stride that axis's extent asks of the next outer one
    step: ir.Value = b.extract_value(strides, at.ndim - 1)
    for k in reversed(range(at.ndim)):
        n, stride = b.extract_value(shape, k), b.extract_value(strides, k)
        long = b.icmp_signed("!=", n, one)
        ok = b.and_(ok, b.or_(b.not_(b.and_(long, seen)), b.icmp_signed("==", stride, expected)))
        step = b.select(b.and_(long, b.not_(seen)), stride, step)
        expected = b.select(long, b.mul(stride, n), expected)
        seen = b.or_(seen, long)
    return ok, step


def _over(
    em: Emitter, arr: ir.Value, at: ArrayType, t: ir.Type, body: Callable[[ir.Value, ArrayType], ir.Value]
) -> ir.Value:
    """``body(view, type)`` emitted for the layouts an array may have at run time, the fastest first: a
    contiguous run of memory (type layout ``C``: vector loads), a 1-D strided view of an N-D array whose axes
    merge (no index arithmetic per element), the array itself. The flat index of an element is the same in
    each, so ``body`` computes the same value."""
    if at.layout == "C":
        return body(arr, at)
    b = em.b
    slot = entry_alloca(b, em.llfn, t)
    if at.ndim == 1:
        merges, flat = None, arr
    else:
        merges, stride = _flat_stride(b, arr, at)
        one_axis = ir.Constant(ir.ArrayType(lt.I64, 1), None)
        flat = ir.Constant(value_type(ArrayType(at.dtype, 1)), ir.Undefined)
        flat = b.insert_value(flat, b.extract_value(arr, 0), 0)
        flat = b.insert_value(flat, b.insert_value(one_axis, size_of(b, arr, at.ndim), 0), 1)
        flat = b.insert_value(flat, b.insert_value(one_axis, stride, 0), 2)

    def flat_body() -> None:
        unit = ir.Constant(lt.I64, at.dtype.itemsize if at.dtype.kind != "b" else 1)
        with b.if_else(b.icmp_signed("==", b.extract_value(b.extract_value(flat, 2), 0), unit)) as (dense, strided):
            with dense:
                b.store(body(flat, ArrayType(at.dtype, 1, "C")), slot)
            with strided:
                b.store(body(flat, ArrayType(at.dtype, 1)), slot)

    if merges is None:
        flat_body()
    else:
        with b.if_else(merges) as (then, otherwise):
            with then:
                flat_body()
            with otherwise:
                b.store(body(arr, at), slot)
    return b.load(slot)


_LANES = 8  # independent partial results of min/max/argmin/argmax (a chain of selects is latency-bound)


def reduce(
    em: Emitter, fn: Intrinsic, arr: ir.Value, at: ArrayType, rt: ScalarType, ddof: ir.Value | None = None
) -> ir.Value:
    """The full reduction ``fn`` (one of ``REDUCTIONS``) of an array, as a number of type ``rt``; ``ddof``: that
    of ``np.std``/``np.var``, converted to ``rt``."""
    b = em.b
    if fn in NAN_PLAIN:  # (np.nansum … of integers and booleans; of floats: aot.codegen.nanreduce)
        assert not at.dtype.is_float
        fn = NAN_PLAIN[fn]
    size = size_of(b, arr, at.ndim)
    name = fn.value.split(".", 1)[1]
    if rt.is_float and fn not in (Intrinsic.NP_MIN, Intrinsic.NP_MAX):
        arr = memory_order(b, arr, at)
    if fn is Intrinsic.NP_SUM and rt.is_float:
        return _float_sum(em, arr, at, rt)
    if fn in (Intrinsic.NP_MEAN, Intrinsic.NP_VAR, Intrinsic.NP_STD):
        n = b.sitofp(size, value_type(rt))
        mean = b.fdiv(_float_sum(em, arr, at, rt), n)
        if fn is Intrinsic.NP_MEAN:
            return mean
        count = n
        if ddof is not None:  # NumPy's max(n - ddof, 0): inf or NaN where nothing is left
            fewer = b.fsub(n, ddof)
            count = b.select(
                b.fcmp_ordered(">", fewer, ir.Constant(fewer.type, 0.0)), fewer, ir.Constant(fewer.type, 0.0)
            )
        var = b.fdiv(_float_sum(em, arr, at, rt, mean), count)
        return em.call_intrinsic("llvm.sqrt", [var]) if fn is Intrinsic.NP_STD else var
    if fn in (Intrinsic.NP_MIN, Intrinsic.NP_MAX):
        what = "minimum" if fn is Intrinsic.NP_MIN else "maximum"
        em.check(
            is_empty(b, size), "ValueError", f"zero-size array to reduction operation {what} which has no identity"
        )
    elif fn in (Intrinsic.NP_ARGMIN, Intrinsic.NP_ARGMAX):
        em.check(is_empty(b, size), "ValueError", f"attempt to get {name} of an empty sequence")
    else:
        return _over(em, arr, at, value_type(rt), lambda view, vt: _accumulate(em, fn, view, vt, size, rt))
    if fn in (Intrinsic.NP_MIN, Intrinsic.NP_MAX):
        arr = memory_order(b, arr, at)  # (any order gives the same value: memory order merges more often)
    return _over(em, arr, at, value_type(rt), lambda view, vt: _extreme(em, fn, view, vt, size))


def _accumulate(em: Emitter, fn: Intrinsic, arr: ir.Value, at: ArrayType, size: ir.Value, rt: ScalarType) -> ir.Value:
    """Integer sums and products (wrapping, in 64 bits), float products (in order), all and any."""
    b = em.b
    d = at.dtype
    slot = entry_alloca(b, em.llfn, value_type(rt))
    if fn in (Intrinsic.NP_ALL, Intrinsic.NP_ANY):
        b.store(ir.Constant(lt.I1, int(fn is Intrinsic.NP_ALL)), slot)

        def test(k: ir.Value) -> None:
            x = element(b, arr, at, k)
            truth = convert_scalar(em, x, d, BOOL) if d.kind != "b" else x
            b.store(b.and_(b.load(slot), truth) if fn is Intrinsic.NP_ALL else b.or_(b.load(slot), truth), slot)

        loops.counted_loop(b, ir.Constant(lt.I64, 0), size, test, counter=entry_alloca(b, em.llfn, lt.I64))
        return b.load(slot)
    product = fn is Intrinsic.NP_PROD
    b.store(ir.Constant(value_type(rt), (1.0 if rt.is_float else 1) if product else 0), slot)
    step = (b.fmul if rt.is_float else b.mul) if product else b.add

    def accumulate(k: ir.Value) -> None:
        x = coerce(em, element(b, arr, at, k), d, rt)
        b.store(step(b.load(slot), x), slot)

    loops.counted_loop(b, ir.Constant(lt.I64, 0), size, accumulate, counter=entry_alloca(b, em.llfn, lt.I64))
    return b.load(slot)


def _extreme(em: Emitter, fn: Intrinsic, arr: ir.Value, at: ArrayType, size: ir.Value) -> ir.Value:
    """min, max, argmin, argmax of a non-empty array: NaN wins and stays; arg… give the first extreme (the
    first NaN). Contiguous memory and 1-D views take vector loops (``_vector_extreme``, ``_bool_extreme``);
    N-D views whose axes do not merge keep eight lanes of partial results over interleaved elements,
    combined in index order."""
    b = em.b
    d = at.dtype
    smaller = fn in (Intrinsic.NP_MIN, Intrinsic.NP_ARGMIN)
    arg = fn in (Intrinsic.NP_ARGMIN, Intrinsic.NP_ARGMAX)
    kd = d if d.kind != "b" else ScalarType("u1", "u", 1)
    i64 = lambda v: ir.Constant(lt.I64, v)  # noqa: E731

    def better(x: ir.Value, i: ir.Value, best: ir.Value, where: ir.Value, later: bool = True) -> ir.Value:
        """Whether element ``x`` (index ``i``) replaces ``best`` (index ``where``); ``later``: ``i > where``
        is known (within a lane and in the tail), so no tie needs the indices."""
        strictly = less(b, x, best, kd) if smaller else less(b, best, x, kd)
        if not arg:  # min/max: an equal later value replaces (which of 0.0 and -0.0 NumPy returns varies)
            if not d.is_float:
                return b.not_(less(b, best, x, kd) if smaller else less(b, x, best, kd))
            keep = b.fcmp_ordered("<=" if smaller else ">=", x, best)
            return b.or_(isnan(b, x), b.and_(b.not_(isnan(b, best)), keep))
        if later:
            result = strictly
        else:
            equal = b.fcmp_ordered("==", x, best) if d.is_float else b.icmp_unsigned("==", x, best)
            result = b.or_(strictly, b.and_(equal, b.icmp_signed("<", i, where)))
        if not d.is_float:
            return result
        nan_x, nan_best = isnan(b, x), isnan(b, best)
        earlier_nan = ir.Constant(lt.I1, 0) if later else b.and_(nan_x, b.icmp_signed("<", i, where))
        return b.select(nan_best, earlier_nan, b.or_(result, nan_x))

    if (at.layout == "C" or at.ndim == 1) and d.kind == "b":
        return _bool_extreme(em, fn, arr, at, size)
    if at.layout == "C" or at.ndim == 1:
        return _vector_extreme(em, arr, at, size, smaller, arg, better)
    best = [entry_alloca(b, em.llfn, value_type(d)) for _ in range(_LANES)]
    where = [entry_alloca(b, em.llfn, lt.I64) for _ in range(_LANES)]
    lanes = b.icmp_signed(">=", size, i64(2 * _LANES))
    whole = b.select(lanes, b.mul(b.sdiv(size, i64(_LANES)), i64(_LANES)), i64(1))
    for j in range(_LANES):  # lane j starts at element j (element 0 for all lanes without lanes)
        start = b.select(lanes, i64(j), i64(0))
        b.store(element(b, arr, at, start), best[j])
        b.store(start, where[j])

    def block(s: ir.Value) -> None:
        base = b.mul(s, i64(_LANES))
        for j in range(_LANES):
            i = b.add(base, i64(j))
            x, current, at_ = element(b, arr, at, i), b.load(best[j]), b.load(where[j])
            take = better(x, i, current, at_)
            b.store(b.select(take, x, current), best[j])
            b.store(b.select(take, i, at_), where[j])

    loops.counted_loop(b, i64(1), b.sdiv(whole, i64(_LANES)), block, counter=entry_alloca(b, em.llfn, lt.I64))
    for j in range(1, _LANES):
        x, i, current, at_ = b.load(best[j]), b.load(where[j]), b.load(best[0]), b.load(where[0])
        take = better(x, i, current, at_, later=False)
        b.store(b.select(take, x, current), best[0])
        b.store(b.select(take, i, at_), where[0])

    def tail(k: ir.Value) -> None:
        x, current, at_ = element(b, arr, at, k), b.load(best[0]), b.load(where[0])
        take = better(x, k, current, at_)
        b.store(b.select(take, x, current), best[0])
        b.store(b.select(take, k, at_), where[0])

    loops.counted_loop(b, whole, size, tail, counter=entry_alloca(b, em.llfn, lt.I64))
    return b.load(where[0]) if arg else b.load(best[0])


_VECTOR_BYTES = 256  # a block of the vector loops of min/max/argmin/argmax (several registers: the loop-carried
# compare-and-select of one register is latency-bound; half as much for integers, whose min/max take a cycle)


def _vector_extreme(
    em: Emitter, arr: ir.Value, at: ArrayType, size: ir.Value, smaller: bool, arg: bool, better: Callable[..., ir.Value]
) -> ir.Value:
    """min/max/argmin/argmax of a contiguous run of memory or a 1-D view (not booleans: ``_bool_extreme``),
    in two passes. The extreme value: blocks of elements loaded as one vector, lane ``j`` keeping the extreme
    of elements ``j, L+j, 2L+j, …`` (NaNs are only noted, in a vector of flags, so that the select chain
    stays short), the lanes then reduced, a NaN if any was noted; the tail and arrays shorter than two blocks
    run the scalar rule (``better``). argmin/argmax then look for the first element equal to it, or the first
    NaN (``_find_first``): as NumPy, the first occurrence of the extreme, the first NaN wherever it lies."""
    b = em.b
    d = at.dtype
    n_lanes = _lanes(at, (_VECTOR_BYTES if d.is_float else _VECTOR_BYTES // 2) // d.itemsize)
    i64 = lambda v: ir.Constant(lt.I64, v)  # noqa: E731
    et = b.extract_value(arr, 0).type.pointee
    vt = ir.VectorType(et, n_lanes)
    load_block, _ = _stored(b, arr, at, n_lanes)
    best = entry_alloca(b, em.llfn, et)
    acc = entry_alloca(b, em.llfn, vt)
    nans = entry_alloca(b, em.llfn, ir.VectorType(lt.I1, n_lanes))
    tail_start = entry_alloca(b, em.llfn, lt.I64)
    blocks = b.sdiv(size, i64(n_lanes))

    def beats(x: ir.Value, y: ir.Value) -> ir.Value:  # x strictly better than y (ordered: False with a NaN)
        return less(b, x, y, d) if smaller else less(b, y, x, d)

    with b.if_else(b.icmp_signed(">=", blocks, i64(2))) as (vector, scalar):
        with vector:
            first = load_block(i64(0))
            b.store(first, acc)
            if d.is_float:
                b.store(isnan(b, first), nans)

            def step(s: ir.Value) -> None:
                x, current = load_block(s), b.load(acc)
                b.store(b.select(beats(x, current), x, current), acc)
                if d.is_float:
                    b.store(b.or_(b.load(nans), isnan(b, x)), nans)

            loops.counted_loop(b, i64(1), blocks, step, counter=entry_alloca(b, em.llfn, lt.I64))
            lanes = b.load(acc)
            width = n_lanes
            while width > 1:  # halves against halves: which of equal values stays does not matter
                width //= 2
                low, high = (
                    b.shuffle_vector(lanes, lanes, ir.Constant(ir.VectorType(lt.I32, width), list(range(k, k + width))))
                    for k in (0, width)
                )
                lanes = b.select(beats(high, low), high, low)
            value = b.extract_element(lanes, ir.Constant(lt.I32, 0))
            if d.is_float:
                noted = b.bitcast(b.load(nans), ir.IntType(n_lanes))
                nan = b.icmp_unsigned("!=", noted, ir.Constant(ir.IntType(n_lanes), 0))
                value = b.select(nan, ir.Constant(et, math.nan), value)
            b.store(value, best)
            b.store(b.mul(blocks, i64(n_lanes)), tail_start)
        with scalar:
            b.store(element(b, arr, at, i64(0)), best)
            b.store(i64(1), tail_start)

    def tail(k: ir.Value) -> None:
        x, current = element(b, arr, at, k), b.load(best)
        b.store(b.select(better(x, k, current, i64(0)), x, current), best)

    loops.counted_loop(b, b.load(tail_start), size, tail, counter=entry_alloca(b, em.llfn, lt.I64))
    extreme = b.load(best)
    if not arg:
        return extreme
    if d.is_float:  # x == extreme, or x is a NaN (there is one only when the extreme is a NaN)

        def test(x: ir.Value) -> ir.Value:
            return b.or_(b.fcmp_ordered("==", x, _splat(b, extreme, x.type)), isnan(b, x))

    else:

        def test(x: ir.Value) -> ir.Value:
            return b.icmp_unsigned("==", x, _splat(b, extreme, x.type))

    return _find_first(em, arr, at, size, test)


def _splat(b: ir.IRBuilder, v: ir.Value, t: ir.Type) -> ir.Value:
    """``v`` as a value of type ``t``: itself, or in every lane of a vector."""
    if not isinstance(t, ir.VectorType):
        return v
    one = b.insert_element(ir.Constant(t, ir.Undefined), v, ir.Constant(lt.I32, 0))
    return b.shuffle_vector(one, ir.Constant(t, ir.Undefined), ir.Constant(ir.VectorType(lt.I32, t.count), None))


def _lanes(at: ArrayType, contiguous: int) -> int:
    """Lanes of a vector loop: ``contiguous`` for contiguous memory, at most 32 for a strided view (each
    element its own load: more would only lengthen the code)."""
    return contiguous if at.layout == "C" else min(32, contiguous)


def _stored(
    b: ir.IRBuilder, arr: ir.Value, at: ArrayType, n_lanes: int
) -> tuple[Callable[[ir.Value], ir.Value], Callable[[ir.Value], ir.Value]]:
    """(block ``s`` as a vector of ``n_lanes`` stored elements, element ``k`` as stored) of a contiguous array
    (one vector load) or a 1-D view of any stride (the elements loaded one by one into the vector)."""
    data = b.extract_value(arr, 0)
    et = data.type.pointee
    vt = ir.VectorType(et, n_lanes)
    i64 = lambda v: ir.Constant(lt.I64, v)  # noqa: E731
    if at.layout == "C":

        def block(s: ir.Value) -> ir.Value:
            ptr = b.gep(data, [b.mul(s, i64(n_lanes))])
            return b.load(b.bitcast(ptr, vt.as_pointer()), align=at.dtype.itemsize)

        return block, lambda k: b.load(b.gep(data, [k]))
    assert at.ndim == 1
    stride = b.extract_value(b.extract_value(arr, 2), 0)
    raw = b.bitcast(data, lt.PTR)

    def one(k: ir.Value) -> ir.Value:
        return b.load(b.bitcast(b.gep(raw, [b.mul(k, stride)]), data.type))

    def gathered(s: ir.Value) -> ir.Value:
        base = b.gep(raw, [b.mul(b.mul(s, i64(n_lanes)), stride)])
        v = ir.Constant(vt, ir.Undefined)
        for j in range(n_lanes):
            x = b.load(b.bitcast(b.gep(base, [b.mul(i64(j), stride)]), data.type))
            v = b.insert_element(v, x, ir.Constant(lt.I32, j))
        return v

    return gathered, one


def _find_first(
    em: Emitter, arr: ir.Value, at: ArrayType, size: ir.Value, test: Callable[[ir.Value], ir.Value]
) -> ir.Value:
    """The index of the first element of a contiguous array or 1-D view for which ``test`` holds, else
    ``size``. ``test``
    takes a stored element (booleans as their byte) or a vector of them and gives an ``i1`` or a vector of
    them: blocks of up to 64 elements are tested at once, the loop leaving at the first block with a hit."""
    b = em.b
    fn = em.llfn
    i64 = lambda v: ir.Constant(lt.I64, v)  # noqa: E731
    n_lanes = _lanes(at, min(64, _VECTOR_BYTES // at.dtype.itemsize))
    load_block, load_one = _stored(b, arr, at, n_lanes)
    mt = ir.IntType(n_lanes)
    found, index = entry_alloca(b, fn, lt.I64), entry_alloca(b, fn, lt.I64)
    b.store(size, found)
    b.store(i64(0), index)
    blocks = b.sdiv(size, i64(n_lanes))
    head, body, hit, rest, check, one, one_hit, done = (
        fn.append_basic_block("find." + n) for n in ("head", "block", "hit", "rest", "check", "one", "found", "done")
    )
    b.branch(head)
    b.position_at_end(head)
    s = b.load(index)
    b.cbranch(b.icmp_signed("<", s, blocks), body, rest)
    b.position_at_end(body)
    mask = b.bitcast(test(load_block(s)), mt)
    b.store(b.add(s, i64(1)), index)
    b.cbranch(b.icmp_unsigned("!=", mask, ir.Constant(mt, 0)), hit, head)
    b.position_at_end(hit)
    cttz = em.ctx.declare("llvm.cttz.i64", ir.FunctionType(lt.I64, [lt.I64, lt.I1]))
    lane = b.call(cttz, [b.zext(mask, lt.I64) if n_lanes < 64 else mask, ir.Constant(lt.I1, 1)])
    b.store(b.add(b.mul(s, i64(n_lanes)), lane), found)
    b.branch(done)
    b.position_at_end(rest)  # the elements after the last whole block, one by one
    b.store(b.mul(blocks, i64(n_lanes)), index)
    b.branch(check)
    b.position_at_end(check)
    k = b.load(index)
    b.cbranch(b.icmp_signed("<", k, size), one, done)
    b.position_at_end(one)
    b.store(b.add(k, i64(1)), index)
    b.cbranch(test(load_one(k)), one_hit, check)
    b.position_at_end(one_hit)
    b.store(k, found)
    b.branch(done)
    b.position_at_end(done)
    return b.load(found)


def _bool_extreme(em: Emitter, fn: Intrinsic, arr: ir.Value, at: ArrayType, size: ir.Value) -> ir.Value:
    """min/max/argmin/argmax of booleans (contiguous, or a 1-D view): the first element equal to the extreme
    there can be (False for min/argmin, True for max/argmax) ends the search (``_find_first``). min is then
    "no False", argmin the first False or else 0, and so on."""
    b = em.b
    want_true = fn in (Intrinsic.NP_MAX, Intrinsic.NP_ARGMAX)

    def test(x: ir.Value) -> ir.Value:
        return b.icmp_unsigned("!=" if want_true else "==", x, ir.Constant(x.type, None))

    first = _find_first(em, arr, at, size, test)
    missing = b.icmp_signed("==", first, size)
    if fn in (Intrinsic.NP_ARGMIN, Intrinsic.NP_ARGMAX):
        return b.select(missing, ir.Constant(lt.I64, 0), first)
    return b.not_(missing) if want_true else missing


def dot(em: Emitter, args: list[ir.Value], argtypes: list[Type], rt: ScalarType) -> ir.Value:
    """The inner product of two 1-D arrays of the same length (NumPy's ValueError otherwise), in order."""
    b = em.b
    x, y = args
    xt, yt = argtypes
    assert isinstance(xt, ArrayType) and isinstance(yt, ArrayType)
    n = b.extract_value(b.extract_value(x, 1), 0)
    em.check(
        b.icmp_signed("!=", n, b.extract_value(b.extract_value(y, 1), 0)),
        "ValueError",
        "shapes not aligned: np.dot of 1-D arrays of different lengths",
    )
    total = entry_alloca(b, em.llfn, value_type(rt))
    b.store(ir.Constant(value_type(rt), 0.0 if rt.is_float else 0), total)

    def step(k: ir.Value) -> None:
        p = coerce(em, element(b, x, xt, k), xt.dtype, rt)
        q = coerce(em, element(b, y, yt, k), yt.dtype, rt)
        if rt.is_float:
            b.store(b.fadd(b.load(total), b.fmul(p, q)), total)
        else:
            b.store(b.add(b.load(total), b.mul(p, q)), total)

    loops.counted_loop(b, ir.Constant(lt.I64, 0), n, step, counter=entry_alloca(b, em.llfn, lt.I64))
    return b.load(total)


def searchsorted(em: Emitter, args: list[ir.Value], argtypes: list[Type], right: bool = False) -> ir.Value:
    """``np.searchsorted(a, x)`` (side='left'): the first index whose element is not less than ``x``, in
    NumPy's order where NaN sorts last; ``right``: the first whose element is greater than ``x``."""
    b = em.b
    arr, x = args
    at, xt = argtypes
    assert isinstance(at, ArrayType) and isinstance(xt, ScalarType)
    common = _common(at.dtype, xt)
    key = coerce(em, x, xt, common)
    lo, hi = entry_alloca(b, em.llfn, lt.I64), entry_alloca(b, em.llfn, lt.I64)
    b.store(ir.Constant(lt.I64, 0), lo)
    b.store(b.extract_value(b.extract_value(arr, 1), 0), hi)
    head, body, done = (em.llfn.append_basic_block(n) for n in ("search.head", "search.body", "search.done"))
    b.branch(head)
    b.position_at_end(head)
    b.cbranch(b.icmp_signed("<", b.load(lo), b.load(hi)), body, done)
    b.position_at_end(body)
    mid = b.add(b.load(lo), b.lshr(b.sub(b.load(hi), b.load(lo)), ir.Constant(lt.I64, 1)))
    v = coerce(em, element(b, arr, at, mid), at.dtype, common)
    if right:  # v <= x, NaN the largest: every v <= NaN
        below = b.not_(less(b, key, v, common))
        if common.is_float:
            below = b.or_(b.and_(below, b.not_(isnan(b, v))), isnan(b, key))
    else:
        below = less(b, v, key, common)
        if common.is_float:  # NaN is the largest: v < NaN for every number v
            below = b.or_(below, b.and_(isnan(b, key), b.not_(isnan(b, v))))
    b.store(b.select(below, b.add(mid, ir.Constant(lt.I64, 1)), b.load(lo)), lo)
    b.store(b.select(below, b.load(hi), mid), hi)
    b.branch(head)
    b.position_at_end(done)
    return b.load(lo)


def _common(a: ScalarType, b: ScalarType) -> ScalarType:
    t = promote(a, b)
    return I64 if t.kind == "b" else t
