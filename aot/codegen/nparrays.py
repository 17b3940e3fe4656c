"""NumPy functions of whole arrays that are not elementwise: ``np.cumsum``, ``np.sort``, ``np.argsort``,
``np.cumprod``, ``np.diff``, ``np.unique``, ``np.bincount``, ``np.concatenate``, ``np.nonzero`` and
``np.flatnonzero``, ``np.searchsorted`` of an array of values (new arrays), ``np.median`` and
``np.count_nonzero`` (scalars).

    np.sort(a)     →  a C-ordered copy, then qsort_r(copy, n, itemsize, @aot_np_cmp_f64, NULL)
    np.argsort(a)  →  0 … n-1, then qsort_r(indices, n, 8, @aot_np_argcmp_f64, values)
    np.sort(m, k)  →  each line along axis k copied into a buffer, sorted there, copied into the result's line

Of an N-D array (or given ``axis``) each line along the axis is sorted (``a.sort(axis)`` writes the lines back
where they lie); ``axis=None`` sorts the array flattened, as a 1-D one.

Sorting uses the C library's ``qsort_r`` with a comparator emitted once per module and element type, in NumPy's
order (NaN after every number). ``np.argsort`` breaks ties by index, so it gives the stable order (NumPy's
``kind='stable'``; NumPy's default quicksort may order equal elements differently). ``np.sort`` orders
``-0.0`` and ``0.0`` as equal, as NumPy does, so which comes first is unspecified. ``np.cumsum`` adds in C
order, one element after the other, as NumPy's ``add.accumulate`` (``np.cumprod`` multiplies); ``np.median``
sorts a copy and takes the middle element or the mean of the two middle ones (NaN when any element is NaN, and
for an empty array).
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from ..ir.ops import Intrinsic
from ..types import BOOL, I64, ArrayType, ListType, ScalarType, TupleType, Type
from . import arrays, lists, loops, reductions, sizes, ufuncs, views
from . import types as lt
from .context import Emitter, ModuleContext
from .numerics import coerce, convert_scalar
from .types import memory_type, value_type
from .walks import element

_CMP = ir.FunctionType(lt.I32, [lt.PTR, lt.PTR, lt.PTR])
_I64 = lambda v: ir.Constant(lt.I64, v)  # noqa: E731


def _element_of(b: ir.IRBuilder, t: ArrayType, arr: ir.Value, k: ir.Value) -> ir.Value:
    return element(b, arr, t, k)  # (the one walk of an array of any strides in C order)


def _size(b: ir.IRBuilder, arr: ir.Value, ndim: int) -> ir.Value:
    size: ir.Value = _I64(1)
    for n in arrays.shape_of(b, arr, ndim):
        size = b.mul(size, n)
    return size


def _order(b: ir.IRBuilder, x: ir.Value, y: ir.Value, d: ScalarType) -> tuple[ir.Value, ir.Value]:
    """(x sorts before y, y sorts before x) in NumPy's order: NaN after every number."""
    if d.is_float:
        nan_x, nan_y = b.fcmp_unordered("uno", x, x), b.fcmp_unordered("uno", y, y)
        before = b.or_(b.fcmp_ordered("<", x, y), b.and_(b.not_(nan_x), nan_y))
        after = b.or_(b.fcmp_ordered("<", y, x), b.and_(nan_x, b.not_(nan_y)))
        return before, after
    if d.is_signed:
        return b.icmp_signed("<", x, y), b.icmp_signed("<", y, x)
    return b.icmp_unsigned("<", x, y), b.icmp_unsigned("<", y, x)


def _comparator(ctx: ModuleContext, d: ScalarType, by_index: bool) -> ir.Function:
    """``int cmp(const void *p, const void *q, void *values)``: of two elements (``by_index``: of two i64
    indices into ``values``, ties broken by the index)."""
    name = f"aot_np_{'argcmp' if by_index else 'cmp'}_{d.name}"
    fn, b = ctx.internal_function(name, _CMP)
    if b is None:
        return fn
    p, q, values = fn.args
    elem = memory_type(d).as_pointer()
    if by_index:
        i, j = (b.load(b.bitcast(v, lt.I64.as_pointer())) for v in (p, q))
        base = b.bitcast(values, elem)
        x, y = b.load(b.gep(base, [i])), b.load(b.gep(base, [j]))
    else:
        x, y = (b.load(b.bitcast(v, elem)) for v in (p, q))
    before, after = _order(b, x, y, d if d.kind != "b" else ScalarType("u1", "u", 1))
    if by_index:
        tie = b.not_(b.or_(before, after))
        before = b.or_(before, b.and_(tie, b.icmp_signed("<", i, j)))
        after = b.or_(after, b.and_(tie, b.icmp_signed("<", j, i)))
    b.ret(b.sub(b.zext(after, lt.I32), b.zext(before, lt.I32)))
    return fn


def _qsort(em: Emitter, base: ir.Value, n: ir.Value, itemsize: int, cmp: ir.Function, values: ir.Value) -> None:
    qsort_r = em.ctx.declare(
        "qsort_r", ir.FunctionType(ir.VoidType(), [lt.PTR, lt.I64, lt.I64, _CMP.as_pointer(), lt.PTR])
    )
    em.b.call(qsort_r, [em.b.bitcast(base, lt.PTR), n, _I64(itemsize), cmp, em.b.bitcast(values, lt.PTR)])


def _sorted_copy(em: Emitter, arr: ir.Value, at: ArrayType) -> tuple[ir.Value, ir.Value]:
    """A new 1-D C array of the elements of ``arr`` (C order) sorted, and its length."""
    b = em.b
    n = _size(b, arr, at.ndim)
    flat_t = ArrayType(at.dtype, 1, "C")
    out, _ = arrays.allocate(em, flat_t, [n])
    data = b.extract_value(out, arrays.DATA)

    def copy(k: ir.Value) -> None:
        arrays.store_element(em, out, flat_t, k, _element_of(b, at, arr, k))

    loops.counted_loop(em.b, _I64(0), n, copy, "sortcopy")
    _qsort(em, data, n, _itemsize(at.dtype), _comparator(em.ctx, at.dtype, False), ir.Constant(lt.PTR, None))
    return out, n


def _itemsize(d: ScalarType) -> int:
    return 1 if d.kind == "b" else d.itemsize


def lower(em: Emitter, fn: Intrinsic, args: list[ir.Value], argtypes: list[Type], result: Type) -> ir.Value:
    """``np.cumsum``/``np.sort``/``np.argsort``/``np.outer`` (a new reference) or ``np.median`` (a scalar)."""
    b = em.b
    if fn is Intrinsic.NP_OUTER:
        assert isinstance(result, ArrayType)
        return outer(em, args, argtypes, result)
    if fn is Intrinsic.NP_CONCATENATE:
        assert isinstance(result, ArrayType)
        return concatenate(em, args[0], argtypes[0], result)
    if fn in (Intrinsic.NP_NONZERO, Intrinsic.NP_FLATNONZERO, Intrinsic.NP_COUNT_NONZERO):
        return nonzero(em, fn, args[0], argtypes[0], result)
    if fn is Intrinsic.NP_BINCOUNT:
        assert isinstance(result, ArrayType)
        return bincount(em, args, argtypes, result)
    arr, at = args[0], argtypes[0]
    assert isinstance(at, ArrayType)
    if fn in (Intrinsic.NP_SORT, Intrinsic.NP_ARGSORT) and isinstance(result, ArrayType) and result.ndim == at.ndim:
        if len(args) > 1 or at.ndim > 1:  # (along an axis: the given one, else the last)
            axis = coerce(em, args[1], argtypes[1], I64) if len(args) > 1 else _I64(-1)
            out, _ = arrays.allocate(em, result, arrays.shape_of(b, arr, at.ndim))
            _sort_lines(em, arr, at, axis, out, result, fn is Intrinsic.NP_ARGSORT)
            return out
    if fn is Intrinsic.NP_SORT:  # (1-D, or flattened: axis=None)
        return _sorted_copy(em, arr, at)[0]
    if fn is Intrinsic.NP_UNIQUE:
        assert isinstance(result, ArrayType)
        return unique(em, arr, at, result)
    if fn is Intrinsic.NP_DIFF:
        assert isinstance(result, ArrayType)
        return _diff(em, arr, at, result)
    if fn is Intrinsic.NP_MEDIAN:
        assert isinstance(result, ScalarType)
        return _median(em, arr, at, result)
    assert isinstance(result, ArrayType)
    n = _size(b, arr, at.ndim)
    out, _ = arrays.allocate(em, result, [n])
    if fn is Intrinsic.NP_ARGSORT:
        values, _ = arrays.allocate(em, ArrayType(at.dtype, 1, "C"), [n])  # (a C copy the comparator indexes)
        flat_t = ArrayType(at.dtype, 1, "C")

        def fill(k: ir.Value) -> None:
            arrays.store_element(em, values, flat_t, k, _element_of(b, at, arr, k))
            arrays.store_element(em, out, result, k, k)

        loops.counted_loop(em.b, _I64(0), n, fill, "argsort")
        data = b.extract_value(values, arrays.DATA)
        _qsort(em, b.extract_value(out, arrays.DATA), n, 8, _comparator(em.ctx, at.dtype, True), data)
        arrays.decref(em.ctx, b, values, flat_t)
        return out
    assert fn in (Intrinsic.NP_CUMSUM, Intrinsic.NP_CUMPROD)
    rt = result.dtype
    product = fn is Intrinsic.NP_CUMPROD
    with b.goto_entry_block():
        total = b.alloca(value_type(rt))
    b.store(ir.Constant(value_type(rt), (1.0 if rt.is_float else 1) if product else (0.0 if rt.is_float else 0)), total)

    def step(k: ir.Value) -> None:
        x = coerce(em, _element_of(b, at, arr, k), at.dtype, rt)
        if product:
            s = b.fmul(b.load(total), x) if rt.is_float else b.mul(b.load(total), x)
        else:
            s = b.fadd(b.load(total), x) if rt.is_float else b.add(b.load(total), x)
        b.store(s, total)
        arrays.store_element(em, out, result, k, s)

    loops.counted_loop(em.b, _I64(0), n, step, "cumsum")
    return out


def unique(em: Emitter, arr: ir.Value, at: ArrayType, result: ArrayType) -> ir.Value:
    """``np.unique(a)``: a sorted copy (``_sorted_copy``), then each element that differs from the one before
    it, in a new array; NaNs sort last and are kept once (NumPy's ``equal_nan=True``)."""
    b = em.b
    d = at.dtype
    copy, n = _sorted_copy(em, arr, at)
    flat_t = ArrayType(d, 1, "C")
    with b.goto_entry_block():
        kept = b.alloca(lt.I64, name="unique.kept")

    def fresh(k: ir.Value) -> ir.Value:
        """Element k of the sorted copy starts a new value (k > 0: compared with element k - 1)."""
        x, y = _element_of(b, flat_t, copy, k), _element_of(b, flat_t, copy, b.sub(k, _I64(1)))
        if d.is_float:
            return b.and_(b.fcmp_unordered("une", x, y), b.not_(b.and_(ufuncs.isnan(b, x), ufuncs.isnan(b, y))))
        return b.icmp_unsigned("!=", x, y)

    b.store(b.select(b.icmp_signed(">", n, _I64(0)), _I64(1), _I64(0)), kept)
    loops.counted_loop(
        em.b, _I64(1), n, lambda k: b.store(b.add(b.load(kept), b.zext(fresh(k), lt.I64)), kept), "uniqcount"
    )
    out, _ = arrays.allocate(em, result, [b.load(kept)])
    with b.if_then(b.icmp_signed(">", n, _I64(0))):
        arrays.store_element(em, out, result, _I64(0), _element_of(b, flat_t, copy, _I64(0)))
    b.store(_I64(1), kept)

    def take(k: ir.Value) -> None:
        with b.if_then(fresh(k)):
            arrays.store_element(em, out, result, b.load(kept), _element_of(b, flat_t, copy, k))
            b.store(b.add(b.load(kept), _I64(1)), kept)

    loops.counted_loop(em.b, _I64(1), n, take, "uniqtake")
    arrays.decref(em.ctx, b, copy, flat_t)
    return out


def bincount(em: Emitter, args: list[ir.Value], argtypes: list[Type], result: ArrayType) -> ir.Value:
    """``np.bincount(x[, weights])``: the largest value (a negative one raises NumPy's ``ValueError``), then a
    new zeroed array of that length plus one, each ``x[i]`` adding 1 (or ``weights[i]``, in f64, in order)."""
    b = em.b
    x, xt = args[0], argtypes[0]
    assert isinstance(xt, ArrayType)
    n = arrays.shape_of(b, x, 1)[0]

    def value(k: ir.Value) -> ir.Value:
        return coerce(em, _element_of(b, xt, x, k), xt.dtype, I64)

    with b.goto_entry_block():
        top = b.alloca(lt.I64, name="bincount.max")
    b.store(_I64(-1), top)

    def scan(k: ir.Value) -> None:
        v = value(k)
        em.check(b.icmp_signed("<", v, _I64(0)), "ValueError", "'list' argument must have no negative elements")
        b.store(b.select(b.icmp_signed(">", v, b.load(top)), v, b.load(top)), top)

    loops.counted_loop(em.b, _I64(0), n, scan, "binmax")
    if len(args) > 1:
        wt = argtypes[1]
        assert isinstance(wt, ArrayType)
        m = arrays.shape_of(b, args[1], 1)[0]
        em.check(b.icmp_signed("!=", m, n), "ValueError", "The weights and list don't have the same length.")
    size = b.add(b.load(top), _I64(1))
    out, _ = arrays.allocate(em, result, [size])
    zero = ir.Constant(value_type(result.dtype), 0.0 if result.dtype.is_float else 0)
    loops.counted_loop(em.b, _I64(0), size, lambda k: arrays.store_element(em, out, result, k, zero), "binzero")
    data = b.extract_value(out, arrays.DATA)

    def add(k: ir.Value) -> None:
        slot = b.gep(data, [value(k)], inbounds=True)
        if len(args) > 1:
            wt = argtypes[1]
            assert isinstance(wt, ArrayType)
            w = coerce(em, _element_of(b, wt, args[1], k), wt.dtype, result.dtype)
            b.store(b.fadd(b.load(slot), w), slot)
        else:
            b.store(b.add(b.load(slot), _I64(1)), slot)

    loops.counted_loop(em.b, _I64(0), n, add, "bincount")
    return out


def nonzero(em: Emitter, fn: Intrinsic, arr: ir.Value, at: Type, result: Type) -> ir.Value:
    """``np.count_nonzero(a)``: how many elements are true as ``bool()`` (NaN is); ``np.flatnonzero(a)``: a new
    array of their C-order indices; ``np.nonzero(a)``: a tuple of new arrays, one per axis, of their indices
    along it (in C order), as NumPy gives them."""
    b = em.b
    assert isinstance(at, ArrayType)
    n = _size(b, arr, at.ndim)
    with b.goto_entry_block():
        count = b.alloca(lt.I64, name="nonzero.count")
    b.store(_I64(0), count)

    def truth(k: ir.Value) -> ir.Value:
        x = _element_of(b, at, arr, k)
        return x if at.dtype.kind == "b" else convert_scalar(em, x, at.dtype, BOOL)

    loops.counted_loop(
        em.b, _I64(0), n, lambda k: b.store(b.add(b.load(count), b.zext(truth(k), lt.I64)), count), "nzcount"
    )
    if fn is Intrinsic.NP_COUNT_NONZERO:
        return b.load(count)
    index_t = ArrayType(I64, 1, "C")
    axes = 1 if fn is Intrinsic.NP_FLATNONZERO else at.ndim
    outs = [arrays.allocate(em, index_t, [b.load(count)])[0] for _ in range(axes)]
    shape = arrays.shape_of(b, arr, at.ndim)
    b.store(_I64(0), count)

    def fill(k: ir.Value) -> None:
        with b.if_then(truth(k)):
            j = b.load(count)
            if fn is Intrinsic.NP_FLATNONZERO:
                arrays.store_element(em, outs[0], index_t, j, k)
            else:
                rest = k
                for d in reversed(range(at.ndim)):  # (the flat index unravelled, last axis first)
                    arrays.store_element(em, outs[d], index_t, j, b.urem(rest, shape[d]) if d else rest)
                    if d:
                        rest = b.udiv(rest, shape[d])
            b.store(b.add(j, _I64(1)), count)

    loops.counted_loop(em.b, _I64(0), n, fill, "nzfill")
    if fn is Intrinsic.NP_FLATNONZERO:
        return outs[0]
    packed = ir.Constant(value_type(result), ir.Undefined)
    for d, out in enumerate(outs):
        packed = b.insert_value(packed, out, d)
    return packed


def concatenate(em: Emitter, seq: ir.Value, st: Type, result: ArrayType) -> ir.Value:
    """``np.concatenate(seq)`` along the first axis of a tuple (unrolled) or a list (a loop) of arrays: the
    other axes must agree (NumPy's ``ValueError``), then each array's elements, in C order, fill the next block
    of the new array, converted to its dtype."""
    b = em.b
    ndim = result.ndim
    if isinstance(st, TupleType):
        count = _I64(len(st.items))

        def part(k: int) -> tuple[ir.Value, ArrayType]:
            t = st.items[k]
            assert isinstance(t, ArrayType)
            return b.extract_value(seq, k), t

        def each(body: Callable[[ir.Value, ArrayType], None]) -> None:
            for k in range(len(st.items)):
                body(*part(k))

        first = part(0)
    else:
        assert isinstance(st, ListType) and isinstance(st.item, ArrayType)
        item_t = st.item
        count = lists.length(b, seq)
        em.check(b.icmp_signed("==", count, _I64(0)), "ValueError", "need at least one array to concatenate")

        def each(body: Callable[[ir.Value, ArrayType], None]) -> None:
            loops.counted_loop(
                em.b, _I64(0), count, lambda k: body(lists.get_item(em, seq, st, k, I64), item_t), "concat"
            )

        first = (lists.get_item(em, seq, st, _I64(0), I64), item_t)
    rest = arrays.shape_of(b, first[0], ndim)[1:]
    with b.goto_entry_block():
        total = b.alloca(lt.I64, name="concat.rows")
    b.store(_I64(0), total)

    def measure(arr: ir.Value, t: ArrayType) -> None:
        shape = arrays.shape_of(b, arr, ndim)
        bad: ir.Value = ir.Constant(lt.I1, 0)
        for n, m in zip(shape[1:], rest):
            bad = b.or_(bad, b.icmp_signed("!=", n, m))
        em.check(
            bad, "ValueError", "all the input array dimensions except for the concatenation axis must match exactly"
        )
        grown, wrapped = sizes.checked_sum(em, [shape[0]], b.load(total))
        em.check(wrapped, "ValueError", sizes.TOO_BIG)
        b.store(grown, total)

    each(measure)
    out, _ = arrays.allocate(em, result, [b.load(total), *rest])
    with b.goto_entry_block():
        at_ = b.alloca(lt.I64, name="concat.at")
    b.store(_I64(0), at_)

    def copy(arr: ir.Value, t: ArrayType) -> None:
        start = b.load(at_)
        n = _size(b, arr, t.ndim)

        def one(k: ir.Value) -> None:
            value = coerce(em, _element_of(b, t, arr, k), t.dtype, result.dtype)
            arrays.store_element(em, out, result, b.add(start, k), value)

        loops.counted_loop(em.b, _I64(0), n, one, "concatcopy")
        b.store(b.add(start, n), at_)

    each(copy)
    return out


def _diff(em: Emitter, arr: ir.Value, at: ArrayType, result: ArrayType) -> ir.Value:
    """``np.diff(a)`` of a 1-D array: ``out[k] = a[k + 1] - a[k]`` for the ``max(n - 1, 0)`` pairs, in ``a``'s
    dtype (integers wrap, as NumPy's subtraction does; booleans give ``a[k + 1] != a[k]``)."""
    b = em.b
    n = arrays.shape_of(b, arr, 1)[0]
    count = b.select(b.icmp_signed(">", n, _I64(0)), b.sub(n, _I64(1)), _I64(0))
    out, _ = arrays.allocate(em, result, [count])
    d = at.dtype

    def one(k: ir.Value) -> None:
        x, y = _element_of(b, at, arr, k), _element_of(b, at, arr, b.add(k, _I64(1)))
        if d.kind == "b":
            value = b.xor(y, x)
        elif d.is_float:
            value = b.fsub(y, x)
        else:
            value = b.sub(y, x)
        arrays.store_element(em, out, result, k, value)

    loops.counted_loop(em.b, _I64(0), count, one, "diff")
    return out


def searchsorted_many(
    em: Emitter, args: list[ir.Value], argtypes: list[Type], result: ArrayType, right: bool
) -> ir.Value:
    """``np.searchsorted(a, v)`` of an array ``v``: a new C array of ``v``'s shape, element ``k`` (C order) the
    index ``np.searchsorted(a, v.flat[k])`` (``aot.codegen.reductions``), each found by its own binary search."""
    b = em.b
    (arr, v), (at, vt) = args, argtypes
    assert isinstance(vt, ArrayType)
    out, _ = arrays.allocate(em, result, arrays.shape_of(b, v, vt.ndim))

    def one(k: ir.Value) -> None:
        index = reductions.searchsorted(em, [arr, _element_of(b, vt, v, k)], [at, vt.dtype], right=right)
        arrays.store_element(em, out, result, k, index)

    loops.counted_loop(em.b, _I64(0), _size(b, v, vt.ndim), one, "searchsorted")
    return out


def _median(em: Emitter, arr: ir.Value, at: ArrayType, rt: ScalarType) -> ir.Value:
    b = em.b
    ft = value_type(rt)
    copy, n = _sorted_copy(em, arr, at)
    data = b.extract_value(copy, arrays.DATA)
    with b.goto_entry_block():
        slot = b.alloca(ft)
    b.store(ir.Constant(ft, float("nan")), slot)

    def at_index(k: ir.Value) -> ir.Value:
        v = b.load(b.gep(data, [k]))
        return coerce(em, v, at.dtype, rt)

    with b.if_then(b.icmp_signed(">", n, _I64(0))):
        half = b.sdiv(n, _I64(2))
        upper = at_index(half)
        lower = at_index(b.select(b.icmp_signed("==", b.srem(n, _I64(2)), _I64(0)), b.sub(half, _I64(1)), half))
        mid = b.fdiv(b.fadd(lower, upper), ir.Constant(ft, 2.0))
        odd = b.icmp_signed("!=", b.srem(n, _I64(2)), _I64(0))
        value = b.select(odd, upper, mid)
        last = at_index(b.sub(n, _I64(1)))
        b.store(b.select(b.fcmp_unordered("uno", last, last), last, value), slot)
    arrays.decref(em.ctx, b, copy, ArrayType(at.dtype, 1, "C"))
    return b.load(slot)


def reduce_axis(
    em: Emitter,
    fn: Intrinsic,
    args: list[ir.Value],
    argtypes: list[Type],
    result: ArrayType,
    hold: Callable[[ir.Value], None] | None,
) -> ir.Value:
    """A reduction of a 2-D array along ``axis`` (the second operand; a third is ``ddof``): a new 1-D array,
    each element the full reduction (``aot.codegen.reductions``) of one line along the axis."""
    b = em.b
    arr, at = args[0], argtypes[0]
    assert isinstance(at, ArrayType)
    axis = coerce(em, args[1], argtypes[1], I64)
    axis = b.select(b.icmp_signed("<", axis, _I64(0)), b.add(axis, _I64(2)), axis)
    em.check(b.icmp_unsigned(">=", axis, _I64(2)), "ValueError", "axis is out of bounds for an array of dimension 2")
    data, shape, strides = views.parts(em, arr, at)
    first = b.icmp_signed("==", axis, _I64(0))
    n, step = b.select(first, shape[0], shape[1]), b.select(first, strides[0], strides[1])
    m, across = b.select(first, shape[1], shape[0]), b.select(first, strides[1], strides[0])
    out, _ = arrays.allocate(em, result, [m])
    if hold is not None:
        hold(out)
    ddof = coerce(em, args[2], argtypes[2], result.dtype) if len(args) > 2 else None
    rt = result.dtype
    unit = _I64(at.dtype.itemsize if at.dtype.kind != "b" else 1)

    def lines() -> None:
        def one(j: ir.Value) -> None:
            start = views.offset(em, data, b.mul(j, across))
            with b.goto_entry_block():
                slot = b.alloca(value_type(rt), name="axis.value")
            with b.if_else(b.icmp_signed("==", step, unit)) as (dense, strided):
                for branch, layout in ((dense, "C"), (strided, "A")):  # (a contiguous line: vector loads)
                    with branch:
                        line_t = ArrayType(at.dtype, 1, layout)
                        line = views.view_of(em, arr, start, [n], [step], line_t)
                        b.store(reductions.reduce(em, fn, line, line_t, rt, ddof), slot)
            arrays.store_element(em, out, result, j, b.load(slot))

        loops.counted_loop(em.b, _I64(0), m, one, "axis")

    if fn not in (Intrinsic.NP_SUM, Intrinsic.NP_MEAN, Intrinsic.NP_PROD) or not rt.is_float:
        lines()
        return out
    # NumPy adds the lines one after the other where the kept axis is the inner one in memory (row by row
    # for axis=0 of a C array): in that order, over rows read as they lie
    inner = b.icmp_signed("<", _abs(b, across), _abs(b, step))
    with b.if_else(inner) as (by_rows, by_lines):
        with by_rows:
            _by_rows(em, fn, data, at, n, step, m, across, out, result)
        with by_lines:
            lines()
    return out


def _abs(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
    return b.select(b.icmp_signed("<", v, _I64(0)), b.neg(v), v)


def _by_rows(
    em: Emitter,
    fn: Intrinsic,
    data: ir.Value,
    at: ArrayType,
    n: ir.Value,
    step: ir.Value,
    m: ir.Value,
    across: ir.Value,
    out: ir.Value,
    result: ArrayType,
) -> None:
    """``out[j] = x[0, j] op x[1, j] op …`` (0 or 1 first), ``/ n`` for the mean, line ``i`` at ``i * step``."""
    b = em.b
    rt = result.dtype
    out_data = b.extract_value(out, arrays.DATA)
    product = fn is Intrinsic.NP_PROD
    start = ir.Constant(value_type(rt), 1.0 if product else 0.0)
    loops.counted_loop(em.b, _I64(0), m, lambda j: b.store(start, b.gep(out_data, [j], inbounds=True)), "rows.init")
    elem = memory_type(at.dtype).as_pointer()

    unit = _I64(at.dtype.itemsize)

    def row(i: ir.Value) -> None:
        base = views.offset(em, data, b.mul(i, step))
        dense_base = b.bitcast(base, elem)

        def add(j: ir.Value, dense: bool) -> None:
            ptr = b.gep(out_data, [j], inbounds=True)
            source = b.gep(dense_base, [j]) if dense else b.bitcast(views.offset(em, base, b.mul(j, across)), elem)
            x = coerce(em, b.load(source), at.dtype, rt)
            b.store(b.fmul(b.load(ptr), x) if product else b.fadd(b.load(ptr), x), ptr)

        with b.if_else(b.icmp_signed("==", across, unit)) as (dense, strided):  # (contiguous rows: vectorised)
            with dense:
                loops.counted_loop(em.b, _I64(0), m, lambda j: add(j, True), "rows.add")
            with strided:
                loops.counted_loop(em.b, _I64(0), m, lambda j: add(j, False), "rows.add")

    loops.counted_loop(em.b, _I64(0), n, row, "rows")
    if fn is Intrinsic.NP_MEAN:
        count = b.sitofp(n, value_type(rt))
        loops.counted_loop(
            em.b,
            _I64(0),
            m,
            lambda j: b.store(b.fdiv(b.load(b.gep(out_data, [j])), count), b.gep(out_data, [j], inbounds=True)),
            "rows.mean",
        )


def dot(
    em: Emitter,
    args: list[ir.Value],
    argtypes: list[Type],
    result: ArrayType,
    hold: Callable[[ir.Value], None] | None,
) -> ir.Value:
    """``x @ y`` with a 2-D operand: rows of ``x`` (a 1-D ``x`` is one row) times ``y`` (a 1-D ``y`` is one
    column), accumulated ``out[i, :] += x[i, p] * y[p, :]`` in the promoted type; shapes that do not align
    raise NumPy's ``ValueError``."""
    b = em.b
    (x, y), (xt, yt) = args, argtypes
    assert isinstance(xt, ArrayType) and isinstance(yt, ArrayType)
    rt = result.dtype
    xdata, xshape, xstrides = views.parts(em, x, xt)
    ydata, yshape, ystrides = views.parts(em, y, yt)
    zero = _I64(0)
    if xt.ndim == 1:  # (one row)
        xshape, xstrides = [_I64(1)] + xshape, [zero] + xstrides
    if yt.ndim == 1:  # (one column)
        yshape, ystrides = yshape + [_I64(1)], ystrides + [zero]
    n, k, m = xshape[0], xshape[1], yshape[1]
    em.check(b.icmp_signed("!=", k, yshape[0]), "ValueError", "shapes not aligned for np.dot / '@'")
    dims = ([n] if xt.ndim == 2 else []) + ([m] if yt.ndim == 2 else [])
    out, nbytes = arrays.allocate(em, result, dims)
    if hold is not None:
        hold(out)
    arrays.zero(em, out, nbytes)
    out_data = b.extract_value(out, arrays.DATA)

    def row(i: ir.Value) -> None:
        def term(p: ir.Value) -> None:
            a = coerce(em, _load(em, views.element(em, xdata, xstrides, [i, p]), xt.dtype), xt.dtype, rt)

            def add(j: ir.Value) -> None:
                c = coerce(em, _load(em, views.element(em, ydata, ystrides, [p, j]), yt.dtype), yt.dtype, rt)
                ptr = b.gep(out_data, [b.add(b.mul(i, m), j)], inbounds=True)
                product = b.fmul(a, c) if rt.is_float else b.mul(a, c)
                b.store(b.fadd(b.load(ptr), product) if rt.is_float else b.add(b.load(ptr), product), ptr)

            loops.counted_loop(em.b, zero, m, add, "dot.j")

        loops.counted_loop(em.b, zero, k, term, "dot.p")

    loops.counted_loop(em.b, zero, n, row, "dot.i")
    return out


def outer(em: Emitter, args: list[ir.Value], argtypes: list[Type], result: ArrayType) -> ir.Value:
    """``np.outer(x, y)``: ``out[i, j] = x.ravel()[i] * y.ravel()[j]`` (C order; a number is one element) in
    the promoted type, a new C array of shape ``(x.size, y.size)``; the product of booleans is their and."""
    b = em.b
    rt = result.dtype

    def flat(arr: ir.Value, t: Type) -> tuple[ir.Value, Callable[[ir.Value], ir.Value]]:
        if isinstance(t, ArrayType):
            return _size(b, arr, t.ndim), lambda k: coerce(em, element(b, arr, t, k), t.dtype, rt)
        assert isinstance(t, ScalarType)
        value = coerce(em, arr, t, rt)
        return _I64(1), lambda k: value

    (n, x), (m, y) = (flat(arr, t) for arr, t in zip(args, argtypes))
    out, _ = arrays.allocate(em, result, [n, m])

    def row(i: ir.Value) -> None:
        xi = x(i)
        base = b.mul(i, m)

        def column(j: ir.Value) -> None:
            yj = y(j)
            product = b.fmul(xi, yj) if rt.is_float else b.and_(xi, yj) if rt.kind == "b" else b.mul(xi, yj)
            arrays.store_element(em, out, result, b.add(base, j), product)

        loops.counted_loop(em.b, _I64(0), m, column, "outer.j")

    loops.counted_loop(em.b, _I64(0), n, row, "outer.i")
    return out


def _load(em: Emitter, ptr: ir.Value, t: ScalarType) -> ir.Value:
    v = em.b.load(ptr)
    return em.b.icmp_unsigned("!=", v, ir.Constant(lt.I8, 0)) if t.kind == "b" else v


def _sort_lines(
    em: Emitter, arr: ir.Value, at: ArrayType, axis: ir.Value, out: ir.Value, out_t: ArrayType, by_index: bool
) -> None:
    """Each line of ``arr`` along ``axis`` (negative counts from the end; out of range raises ``ValueError``)
    sorted into the same line of ``out`` (``out`` may be ``arr``: in place), or, ``by_index``, the stable order
    of its elements: a line is copied into a buffer, sorted there by ``qsort_r``, and copied out."""
    b = em.b
    ndim = at.ndim
    axis = b.select(b.icmp_signed("<", axis, _I64(0)), b.add(axis, _I64(ndim)), axis)
    em.check(
        b.icmp_unsigned(">=", axis, _I64(ndim)), "ValueError", f"axis is out of bounds for an array of dimension {ndim}"
    )
    data, shape, strides = views.parts(em, arr, at)
    out_data, _, out_strides = views.parts(em, out, out_t)

    def pick(values: list[ir.Value], k: ir.Value) -> ir.Value:
        chosen = values[0]
        for j in range(1, ndim):
            chosen = b.select(b.icmp_signed("==", k, _I64(j)), values[j], chosen)
        return chosen

    def other(values: list[ir.Value], j: int) -> ir.Value:  # (the j-th axis but the sorted one)
        return b.select(b.icmp_signed("<", _I64(j), axis), values[j], values[j + 1])

    n, step, out_step = pick(shape, axis), pick(strides, axis), pick(out_strides, axis)
    rest = [other(shape, j) for j in range(ndim - 1)]
    rest_in, rest_out = [other(strides, j) for j in range(ndim - 1)], [other(out_strides, j) for j in range(ndim - 1)]
    size = _itemsize(at.dtype)
    malloc = em.ctx.declare("malloc", ir.FunctionType(lt.PTR, [lt.I64]))
    free = em.ctx.declare("free", ir.FunctionType(ir.VoidType(), [lt.PTR]))
    per = size + (8 if by_index else 0)
    buffer = b.call(malloc, [b.add(b.mul(n, _I64(per)), _I64(8))])
    em.check(b.icmp_unsigned("==", buffer, ir.Constant(lt.PTR, None)), "MemoryError", "cannot allocate memory to sort")
    elem = memory_type(at.dtype).as_pointer()
    values = b.bitcast(buffer, elem)
    indices = b.bitcast(b.gep(buffer, [b.mul(n, _I64(size))]), lt.I64.as_pointer())  # (after the values)
    out_elem = memory_type(out_t.dtype).as_pointer()

    def line(idx: list[ir.Value]) -> None:
        source = views.element(em, data, rest_in, idx) if idx else data
        target = views.element(em, out_data, rest_out, idx) if idx else out_data

        def gather(k: ir.Value) -> None:
            b.store(b.load(views.offset(em, source, b.mul(k, step))), b.gep(values, [k]))
            if by_index:
                b.store(k, b.gep(indices, [k]))

        loops.counted_loop(em.b, _I64(0), n, gather, "sortline.in")
        if by_index:
            _qsort(em, indices, n, 8, _comparator(em.ctx, at.dtype, True), values)
        else:
            _qsort(em, values, n, size, _comparator(em.ctx, at.dtype, False), ir.Constant(lt.PTR, None))
        got = indices if by_index else values

        def scatter(k: ir.Value) -> None:
            place = b.bitcast(views.offset(em, target, b.mul(k, out_step)), out_elem)
            b.store(b.load(b.gep(got, [k])), place)

        loops.counted_loop(em.b, _I64(0), n, scatter, "sortline.out")

    views.nd_loop(em, rest, line)
    b.call(free, [buffer])


def sort_in_place(em: Emitter, args: list[ir.Value], argtypes: list[Type]) -> None:
    """``a.sort()`` / ``a.sort(axis)``: each line along the axis (the last by default) sorted where it lies."""
    arr, at = args[0], argtypes[0]
    assert isinstance(at, ArrayType)
    if len(args) > 1 or at.ndim > 1:
        axis = coerce(em, args[1], argtypes[1], I64) if len(args) > 1 else _I64(-1)
        _sort_lines(em, arr, at, axis, arr, at, False)
        return
    _sort_vector(em, arr, at)


def _sort_vector(em: Emitter, arr: ir.Value, at: ArrayType) -> None:
    """``a.sort()`` of a 1-D array: sorted where it lies when contiguous, else through a sorted copy."""
    b = em.b
    data, shape, strides = views.parts(em, arr, at)
    cmp = _comparator(em.ctx, at.dtype, False)
    with b.if_else(b.icmp_signed("==", strides[0], _I64(_itemsize(at.dtype)))) as (dense, strided):
        with dense:
            _qsort(em, data, shape[0], _itemsize(at.dtype), cmp, ir.Constant(lt.PTR, None))
        with strided:
            copy, _ = _sorted_copy(em, arr, at)
            copy_t = ArrayType(at.dtype, 1, "C")
            views.assign(em, arr, at, copy, copy_t)
            arrays.decref(em.ctx, b, copy, copy_t)
