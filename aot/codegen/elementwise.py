"""Whole-array operations in LLVM IR: one loop applying a scalar lowering to every element of a new array.

    %r: f64[::1] = binop mul %a, %2      →  broadcast shape; allocate; for i: r[i] = a[i] * 2.0

``lower`` broadcasts its operands (NumPy's rules: ``ValueError`` for shapes that do not broadcast), allocates the
result (``aot.codegen.arrays.allocate``) and fills it in C order. When every array operand is contiguous and of
the result's shape — the common case — one flat loop over plain element pointers runs, which LLVM vectorises as
it does a hand-written loop; otherwise nested loops read each operand through its strides (a broadcast axis
with stride 0). The element functions are the scalar ones: ``aot.codegen.ufuncs.lower_scalar`` for ufuncs and
for ``/ // % **`` (NumPy's semantics: no ZeroDivisionError), plain wrapping arithmetic for ``+ - *``.
An expression's chain (``a * 2.0 + b``) is one loop: ``FunctionCodegen`` composes the element functions of
operations whose result only the next one reads, over all their operands. ``inplace`` is ``a op= b``: the
result computed as a new array, then copied into ``a`` by slice assignment (``aot.codegen.views.assign``:
broadcasting, the cast back), so that an operand overlapping ``a`` reads its old values, as in NumPy.
``select``/``assign_selection`` read and write ``a[mask]``; ``gather``/``scatter`` read and write ``a[…]`` with
one index array, list or 1-D mask among integers and slices.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from ..infer.elementwise import Advanced
from ..ir.ops import BinOpKind, CmpKind, Intrinsic, UnaryKind
from ..types import BOOL, I64, NONE, ArrayType, ListType, ScalarType, Type
from . import arrays, casts, gil, lists, loops, ufuncs, views
from . import types as lt
from .context import Emitter, ModuleContext
from .numerics import FLOAT_PLAIN_OPS, WRAPPING_INT_OPS, coerce, compare
from .types import memory_type
from .walks import element

Element = Callable[[list[ir.Value]], ir.Value]
"""Computes one result element from the operands' elements (each of its operand's element type)."""

_NUMPY_OF = {
    BinOpKind.TRUEDIV: Intrinsic.NP_DIVIDE,
    BinOpKind.FLOORDIV: Intrinsic.NP_FLOOR_DIVIDE,
    BinOpKind.MOD: Intrinsic.NP_REMAINDER,
    BinOpKind.POW: Intrinsic.NP_POWER,
}


def element_type(t: Type) -> ScalarType:
    if isinstance(t, ArrayType):
        return t.dtype
    assert isinstance(t, ScalarType)
    return t


def check_python_ints(em: Emitter, operands: list[tuple[ir.Value, Type]]) -> None:
    """NumPy 2 converts a Python int beside an integer array to the array's dtype, and raises OverflowError
    when it does not fit (``u8_array - 1`` is u8; ``u8_array + -1`` raises): so do we, where wrapping would
    give another answer. (An ``i64`` scalar is a Python int: ``aot.infer.elementwise.weak``.)"""
    arrays_ = [t.dtype for _, t in operands if isinstance(t, ArrayType) and t.dtype.is_int and t.dtype != I64]
    if not arrays_:
        return
    for value, t in operands:
        if isinstance(t, ScalarType) and t == I64:
            casts.check_int_fits(em, value, arrays_[0])


def binop_element(em: Emitter, kind: BinOpKind, types: list[Type], rt: ScalarType) -> Element:
    """One element of ``a op b`` in NumPy's semantics, computed in (and giving) ``rt``."""
    ts = [element_type(t) for t in types]

    def one(values: list[ir.Value]) -> ir.Value:
        if kind in _NUMPY_OF:
            return ufuncs.lower_scalar(em, _NUMPY_OF[kind], values, ts, rt)
        x, y = (coerce(em, v, t, rt) for v, t in zip(values, ts))
        name = FLOAT_PLAIN_OPS[kind] if rt.is_float else WRAPPING_INT_OPS[kind]
        return getattr(em.b, name)(x, y)

    return one


def compare_element(em: Emitter, op: CmpKind, types: list[Type], common: ScalarType) -> Element:
    ts = [element_type(t) for t in types]

    def one(values: list[ir.Value]) -> ir.Value:
        x, y = (coerce(em, v, t, common) for v, t in zip(values, ts))
        return compare(em, op, x, y, common)

    return one


def unary_element(em: Emitter, op: UnaryKind, rt: ScalarType) -> Element:
    def one(values: list[ir.Value]) -> ir.Value:
        (x,) = values
        if op is UnaryKind.NEG:
            return em.b.fneg(x) if rt.is_float else em.b.neg(x)
        if op is UnaryKind.INVERT:
            return em.b.not_(x)
        return x

    return one


def ufunc_element(em: Emitter, fn: Intrinsic, types: list[Type], rt: ScalarType) -> Element:
    ts = [element_type(t) for t in types]
    return lambda values: ufuncs.lower_scalar(em, fn, values, ts, rt)


def cast_element(em: Emitter, src: ScalarType, dst: ScalarType) -> Element:
    """``a.astype(dst)``: NumPy's C casts (``casts.numpy_cast``)."""
    return lambda values: casts.numpy_cast(em, values[0], src, dst)


def lower(
    em: Emitter,
    operands: list[tuple[ir.Value, Type]],
    result: ArrayType,
    element: Element,
    hold: Callable[[ir.Value], None] | None = None,
    reusable: list[bool] | None = None,
) -> ir.Value:
    """A new array (a new reference) of the operands broadcast, each element ``element(operand elements)``.
    ``hold(array)`` is called once it is allocated, before it is filled (so that an error raised while filling,
    such as an integer power's, releases it). ``reusable[k]``: operand ``k`` is a temporary no other code reads
    (an expression's intermediate result), whose memory is written in place of a new array when it is the
    only reference to it and already of the result's dtype and shape (NumPy's temporary elision: ``a * 2.0 +
    b`` allocates once)."""
    b = em.b
    nd = result.ndim
    one = ir.Constant(lt.I64, 1)
    shape: list[ir.Value] = [one] * nd
    bad: ir.Value = ir.Constant(lt.I1, 0)
    parts: list[tuple[ir.Value, list[ir.Value], list[ir.Value]] | None] = []
    for value, t in operands:
        if not isinstance(t, ArrayType):
            parts.append(None)
            continue
        data, dims, strides = views.parts(em, value, t)
        parts.append((data, dims, strides))
        lead = nd - t.ndim
        for k, n in enumerate(dims):
            current = shape[lead + k]
            differ = b.and_(b.icmp_signed("!=", n, current), b.icmp_signed("!=", current, one))
            bad = b.or_(bad, b.and_(differ, b.icmp_signed("!=", n, one)))
            shape[lead + k] = b.select(b.icmp_signed("==", current, one), n, current)
    em.check(bad, "ValueError", "operands could not be broadcast together (their shapes differ)")
    out = _reuse_or_allocate(em, operands, reusable or [False] * len(operands), result, shape)
    if hold is not None:
        hold(out)
    out_data = b.extract_value(out, arrays.DATA)
    fast: ir.Value = ir.Constant(lt.I1, 1)
    for (_, t), got in zip(operands, parts):
        if got is None:
            continue
        assert isinstance(t, ArrayType)
        if t.ndim != nd:
            fast = ir.Constant(lt.I1, 0)
            continue
        data, dims, strides = got
        for n, m in zip(dims, shape):
            fast = b.and_(fast, b.icmp_signed("==", n, m))
        if t.layout != "C":
            fast = b.and_(fast, views.is_contiguous(em, dims, strides, t.dtype))
    scalars = [value if got is None else None for (value, _), got in zip(operands, parts)]

    def store(ptr: ir.Value, v: ir.Value) -> None:
        b.store(b.zext(v, lt.I8) if result.dtype.kind == "b" else v, ptr)

    def load(ptr: ir.Value, t: ArrayType) -> ir.Value:
        v = b.load(ptr)
        return b.icmp_unsigned("!=", v, ir.Constant(lt.I8, 0)) if t.dtype.kind == "b" else v

    with b.if_else(fast) as (dense, strided):
        with dense:
            size: ir.Value = one
            for n in shape:
                size = b.mul(size, n)
            typed = [
                None if got is None else b.bitcast(got[0], memory_type(element_type(t)).as_pointer())
                for (_, t), got in zip(operands, parts)
            ]

            def flat(i: ir.Value) -> None:
                values = [
                    s if p is None else load(b.gep(p, [i], inbounds=True), t)  # type: ignore[arg-type]
                    for s, p, (_, t) in zip(scalars, typed, operands)
                ]
                store(b.gep(out_data, [i], inbounds=True), element(values))

            loops.counted_loop(em.b, ir.Constant(lt.I64, 0), size, flat, "ewise")
        with strided:
            aligned: list[list[ir.Value] | None] = []
            for (_, t), got in zip(operands, parts):
                if got is None:
                    aligned.append(None)
                    continue
                assert isinstance(t, ArrayType)
                _, dims, strides = got
                zero = ir.Constant(lt.I64, 0)
                missing = [zero] * (nd - t.ndim)
                aligned.append(
                    missing + [b.select(b.icmp_signed("==", n, one), zero, s) for n, s in zip(dims, strides)]
                )
            out_strides = views.c_strides(em, shape, result.dtype)

            def nested(idx: list[ir.Value]) -> None:
                values = []
                for s, got, st, (_, t) in zip(scalars, parts, aligned, operands):
                    if got is None or st is None:
                        values.append(s)
                    else:
                        assert isinstance(t, ArrayType)
                        values.append(load(views.element(em, got[0], st, idx), t))
                store(views.element(em, out_data, out_strides, idx), element(values))

            views.nd_loop(em, shape, nested)
    return out


def _reuse_or_allocate(
    em: Emitter, operands: list[tuple[ir.Value, Type]], reusable: list[bool], result: ArrayType, shape: list[ir.Value]
) -> ir.Value:
    b = em.b
    candidates = [
        value
        for (value, t), ok in zip(operands, reusable)
        if ok and isinstance(t, ArrayType) and t.layout == "C" and t.dtype == result.dtype and t.ndim == result.ndim
    ]
    if not candidates or not arrays.refcounted(em.ctx):
        return arrays.allocate(em, result, shape)[0]
    value = candidates[0]
    owner = b.extract_value(value, arrays.OWNER)
    with b.goto_entry_block():
        slot = b.alloca(value.type, name="ewise.out")
        sole = b.alloca(lt.I1, name="ewise.sole")
    b.store(ir.Constant(lt.I1, 0), sole)
    with b.if_then(b.icmp_unsigned("!=", owner, ir.Constant(lt.PTR, None))):  # (memory compiled code owns)
        count = b.load_atomic(b.bitcast(owner, lt.I64.as_pointer()), "monotonic", 8)  # (a prange body's
        alone: ir.Value = b.icmp_signed("==", count, ir.Constant(lt.I64, 1))  # threads count shared blocks)
        for n, m in zip(arrays.shape_of(b, value, result.ndim), shape):
            alone = b.and_(alone, b.icmp_signed("==", n, m))
        b.store(alone, sole)
    with b.if_else(b.load(sole)) as (reuse, fresh):
        with reuse:
            arrays.incref(em.ctx, b, value, result)  # (the result is a new reference, as a new array is)
            b.store(value, slot)
        with fresh:
            b.store(arrays.allocate(em, result, shape)[0], slot)
    return b.load(slot)


def inplace(
    em: Emitter, kind: BinOpKind, target: ir.Value, tt: ArrayType, value: ir.Value, vt: Type, computed: ArrayType
) -> None:
    """``target op= value``: the result (of dtype ``computed.dtype``) into ``target``, cast to its dtype."""
    temp = lower(em, [(target, tt), (value, vt)], computed, binop_element(em, kind, [tt, vt], computed.dtype))
    views.assign(em, target, tt, temp, computed)
    arrays.decref(em.ctx, em.b, temp, computed)


# ---------------------------------------------------------------------------- masks and index arrays


def _i64(v: int) -> ir.Constant:
    return ir.Constant(lt.I64, v)


def _load(em: Emitter, ptr: ir.Value, t: ScalarType) -> ir.Value:
    v = em.b.load(ptr)
    return em.b.icmp_unsigned("!=", v, ir.Constant(lt.I8, 0)) if t.kind == "b" else v


def _store(em: Emitter, ptr: ir.Value, v: ir.Value, t: ScalarType) -> None:
    em.b.store(em.b.zext(v, lt.I8) if t.kind == "b" else v, ptr)


def _mask_shape_check(em: Emitter, shape: list[ir.Value], mshape: list[ir.Value]) -> None:
    b = em.b
    bad: ir.Value = ir.Constant(lt.I1, 0)
    for n, m in zip(shape, mshape):
        bad = b.or_(bad, b.icmp_signed("!=", n, m))
    em.check(bad, "IndexError", "boolean index did not match the shape of the indexed array")


def _count(em: Emitter, mask: ir.Value, mt: ArrayType) -> ir.Value:
    b = em.b
    mdata, mshape, mstrides = views.parts(em, mask, mt)
    with b.goto_entry_block():
        total = b.alloca(lt.I64, name="mask.count")
    b.store(_i64(0), total)
    views.nd_loop(
        em,
        mshape,
        lambda idx: b.store(
            b.add(b.load(total), b.zext(_load(em, views.element(em, mdata, mstrides, idx), BOOL), lt.I64)), total
        ),
    )
    return b.load(total)


def select(
    em: Emitter,
    arr: ir.Value,
    at: ArrayType,
    index: ir.Value,
    it: ArrayType,
    result: ArrayType,
    hold: Callable[[ir.Value], None] | None,
) -> ir.Value:
    """``arr[mask]`` (``aot.infer.elementwise.selection_type``): the selected elements in C order, a new array."""
    b = em.b
    data, shape, strides = views.parts(em, arr, at)
    mdata, mshape, mstrides = views.parts(em, index, it)
    _mask_shape_check(em, shape, mshape)
    out, _ = arrays.allocate(em, result, [_count(em, index, it)])
    if hold is not None:
        hold(out)
    out_data = b.extract_value(out, arrays.DATA)
    with b.goto_entry_block():
        k = b.alloca(lt.I64, name="mask.k")
    b.store(_i64(0), k)

    def pick(idx: list[ir.Value]) -> None:
        with b.if_then(_load(em, views.element(em, mdata, mstrides, idx), BOOL)):
            value = b.load(views.element(em, data, strides, idx))
            b.store(value, b.gep(out_data, [b.load(k)], inbounds=True))
            b.store(b.add(b.load(k), _i64(1)), k)

    views.nd_loop(em, shape, pick)
    return out


def assign_selection(
    em: Emitter, arr: ir.Value, at: ArrayType, index: ir.Value, it: ArrayType, value: ir.Value, vt: Type
) -> None:
    """``arr[mask] = value``: a number into every selected element, or a 1-D array of one value per selected
    element (or of one value), copied first (it may be a view of ``arr``)."""
    b = em.b
    data, shape, strides = views.parts(em, arr, at)
    d = at.dtype
    idata, ishape, istrides = views.parts(em, index, it)
    _mask_shape_check(em, shape, ishape)
    selected = _count(em, index, it)
    if isinstance(vt, ArrayType):
        n = arrays.shape_of(b, value, 1)[0]
        em.check(
            b.and_(b.icmp_signed("!=", n, selected), b.icmp_signed("!=", n, _i64(1))),
            "ValueError",
            "cannot assign this many values to the selected elements (give one per selected element, or one)",
        )
        copy_t = ArrayType(d, 1, "C")
        copy, _ = arrays.allocate(em, copy_t, [n])
        loops.counted_loop(
            em.b,
            _i64(0),
            n,
            lambda k: arrays.store_element(em, copy, copy_t, k, coerce(em, element(b, value, vt, k), vt.dtype, d)),
            "selcopy",
        )
        copy_data = b.extract_value(copy, arrays.DATA)
        step = b.select(b.icmp_signed("==", n, _i64(1)), _i64(0), _i64(1))

        def source(k: ir.Value) -> ir.Value:
            return _load(em, b.gep(copy_data, [b.mul(k, step)]), d)
    else:
        assert isinstance(vt, ScalarType)
        fill = casts.store_convert(em, value, vt, d)

        def source(k: ir.Value) -> ir.Value:
            return fill

    with b.goto_entry_block():
        k_slot = b.alloca(lt.I64, name="mask.k")
    b.store(_i64(0), k_slot)

    def put(idx: list[ir.Value]) -> None:
        with b.if_then(_load(em, views.element(em, idata, istrides, idx), BOOL)):
            k = b.load(k_slot)
            _store(em, views.element(em, data, strides, idx), source(k), d)
            b.store(b.add(k, _i64(1)), k_slot)

    views.nd_loop(em, shape, put)
    if isinstance(vt, ArrayType):
        arrays.decref(em.ctx, b, copy, copy_t)


# ------------------------------------------------------------------ one index array among integers and slices
#
#     a[:, idx]   →   v = a[:, :] (a view); for k, row in entries(idx): out[:, k] = v[:, row]
#
# The subscript is a basic view with the index array's axis left whole (``views.get_view``), then, for each entry
# of the index (``_Entries``: an integer array or list, or the positions of a boolean mask's True entries), a loop
# over the other axes reading (or writing) the view at the entry's row (``aot.infer.elementwise.Advanced``).

_OUT_OF_BOUNDS = "index %lld is out of bounds for axis %lld with size %lld"
_MASK_MISMATCH = (
    "boolean index did not match indexed array along axis %lld; size of axis is %lld but size of corresponding "
    "boolean axis is %lld"
)


def _index_error_function(ctx: ModuleContext) -> ir.Function:
    """``void aot_index_error(ptr format, i64, i64, i64)``: NumPy's ``IndexError`` with its values in the message
    (holding the GIL for the moment it takes: ``aot.codegen.gil``)."""
    fnty = ir.FunctionType(ir.VoidType(), [lt.PTR, lt.I64, lt.I64, lt.I64])
    fn, b = ctx.internal_function("aot_index_error", fnty)
    if b is None:
        return fn
    fn.attributes.add("cold")
    fn.attributes.add("noinline")
    fmt = ir.FunctionType(lt.PTR, [lt.PTR, lt.PTR], var_arg=True)
    token = b.call(gil.acquire_function(ctx), [])
    exc = b.load(b.bitcast(ctx.global_pointer("PyExc_IndexError"), lt.PTR.as_pointer()))
    b.call(ctx.declare("PyErr_Format", fmt), [exc, *fn.args])
    b.call(gil.release_function(ctx), [token])
    b.ret_void()
    return fn


def _index_error(em: Emitter, failed: ir.Value, text: str, values: tuple[ir.Value, ir.Value, ir.Value]) -> None:
    """Raise NumPy's ``IndexError`` (``text`` formatted with ``values``) when ``failed`` holds."""
    with em.b.if_then(failed, likely=False):
        em.raise_(
            "IndexError",
            text.split(";")[0].replace(" %lld", ""),
            lambda: em.b.call(_index_error_function(em.ctx), [em.ctx.cstring(text), *values]),
        )


def _wrapped(em: Emitter, raw: ir.Value, t: ScalarType, size: ir.Value) -> tuple[ir.Value, ir.Value]:
    """An entry of an index array as an i64, and that index with a negative one counted from the end."""
    b = em.b
    i = coerce(em, raw, t, I64)
    if not t.is_signed:
        return i, i
    return i, b.select(b.icmp_signed("<", i, _i64(0)), b.add(i, size), i)


class _Entries:
    """The entries of an index array or list along an axis of ``size``: ``count`` of them, and ``each(body)``
    calling ``body(k, row)`` for the k-th in order (``row`` wrapped and in bounds). Integer entries are all
    checked (NumPy's ``IndexError``, whatever the other axes' lengths; always: they are data, whatever
    ``boundscheck`` says): before ``each`` with ``first`` (an assignment then writes nothing), else each as
    ``each`` visits it (every one is visited; a selection's new array is released by the error). A boolean mask
    must have the axis's length, and its entries are the positions of its True values."""

    def __init__(self, em: Emitter, plan: Advanced, index: tuple[ir.Value, Type], size: ir.Value, first: bool):
        b = em.b
        value, t = index
        if isinstance(t, ListType):
            value, t = lists.items_array(em, value, t)
        assert isinstance(t, ArrayType)
        self.em, self.size, self.dtype = em, size, t.dtype
        data, shape, strides = views.parts(em, value, t)
        self.data, self.length, self.stride = data, shape[0], strides[0]
        if self.mask:
            bad = b.icmp_signed("!=", self.length, size)
            _index_error(em, bad, _MASK_MISMATCH, (_i64(plan.dim), size, self.length))
            with b.goto_entry_block():
                total = b.alloca(lt.I64, name="mask.count")
            b.store(_i64(0), total)
            self._scan(lambda k: b.store(b.add(b.load(total), b.zext(self.entry(k), lt.I64)), total))
            self.count = b.load(total)
        else:
            self.count = self.length
            self.dim = plan.dim
            self.first = first
            if first:
                self._scan(self.checked)

    @property
    def mask(self) -> bool:
        return self.dtype.kind == "b"

    def checked(self, k: ir.Value) -> ir.Value:
        """Entry ``k`` wrapped, or NumPy's ``IndexError``."""
        i, row = _wrapped(self.em, self.entry(k), self.dtype, self.size)
        failed = self.em.b.icmp_unsigned(">=", row, self.size)
        _index_error(self.em, failed, _OUT_OF_BOUNDS, (i, _i64(self.dim), self.size))
        return row

    def entry(self, k: ir.Value) -> ir.Value:
        return _load(self.em, views.element(self.em, self.data, [self.stride], [k]), self.dtype)

    def _scan(self, body: Callable[[ir.Value], None]) -> None:
        loops.counted_loop(self.em.b, _i64(0), self.length, body, "index")

    def unaliased(self, data: ir.Value, shape: list[ir.Value], strides: list[ir.Value], tt: ArrayType) -> ir.Value:
        """Read the entries from a copy where they lie in the memory an assignment writes (``idx[idx] = 0``
        uses the indices as they were); the copy's pointer, to ``views.release_copy``."""
        vt = ArrayType(self.dtype, 1, "A")
        lengths, strides_ = [self.length], [self.stride]
        self.data, (self.stride,), temp = views.unaliased(
            self.em, data, shape, strides, tt, self.data, lengths, strides_, [self.stride], vt
        )
        return temp

    def each(self, body: Callable[[ir.Value, ir.Value], None]) -> None:
        b = self.em.b
        if not self.mask:
            if self.first:  # (checked already)
                self._scan(lambda k: body(k, _wrapped(self.em, self.entry(k), self.dtype, self.size)[1]))
            else:
                self._scan(lambda k: body(k, self.checked(k)))
            return
        with b.goto_entry_block():
            slot = b.alloca(lt.I64, name="mask.k")
        b.store(_i64(0), slot)

        def visit(j: ir.Value) -> None:
            with b.if_then(self.entry(j)):
                k = b.load(slot)
                body(k, j)
                b.store(b.add(k, _i64(1)), slot)

        self._scan(visit)


def _basic_view(
    em: Emitter, arr: ir.Value, at: ArrayType, plan: Advanced, index: list[tuple[ir.Value, Type]]
) -> tuple[ir.Value, ArrayType]:
    """``arr[plan.basic]``: the subscript with the index array's axis whole (the index array's variable
    standing for a slice's three missing parts)."""
    missing = (ir.Constant(lt.I8, 0), NONE)
    items = index[: plan.at] + [missing] * 3 + index[plan.at + 1 :]
    base_t = ArrayType(at.dtype, plan.result.ndim, "A")
    return views.get_view(em, arr, at, plan.basic, items, base_t), base_t


def _split(plan: Advanced, shape: list[ir.Value]) -> list[ir.Value]:
    """The basic view's shape without the index array's axis: the other axes of the result."""
    return shape[: plan.axis] + shape[plan.axis + 1 :]


def _at(plan: Advanced, rest: list[ir.Value], k: ir.Value, row: ir.Value) -> tuple[list[ir.Value], list[ir.Value]]:
    """The result's element (its axis ``plan.to`` at ``k``) and the basic view's (its axis at ``row``) of the
    other axes' indices ``rest``."""
    return rest[: plan.to] + [k] + rest[plan.to :], rest[: plan.axis] + [row] + rest[plan.axis :]


Visit = Callable[[list[ir.Value], list[ir.Value]], None]
"""One element of a selection: its index in the result, and in the basic view."""


def _each_element(em: Emitter, plan: Advanced, entries: _Entries, rest: list[ir.Value], body: Visit) -> None:
    """``body(result_index, view_index)`` for every element of the selection, in the result's C order: the
    axes before the index's outside, its entries, then the axes after it."""

    def outside(before: list[ir.Value]) -> None:
        def entry(k: ir.Value, row: ir.Value) -> None:
            views.nd_loop(em, rest[plan.to :], lambda after: body(*_at(plan, before + after, k, row)))

        entries.each(entry)

    views.nd_loop(em, rest[: plan.to], outside)


def gather(
    em: Emitter,
    arr: ir.Value,
    at: ArrayType,
    plan: Advanced,
    index: list[tuple[ir.Value, Type]],
    hold: Callable[[ir.Value], None] | None,
) -> ir.Value:
    """``arr[…idx…]`` with one index array or list (``aot.infer.elementwise.advanced``): a new C array."""
    b = em.b
    base, base_t = _basic_view(em, arr, at, plan, index)
    data, shape, strides = views.parts(em, base, base_t)
    # (with the index's axis first, its entries are checked as they are read: each is, once)
    entries = _Entries(em, plan, index[plan.at], shape[plan.axis], first=plan.to > 0)
    rest = _split(plan, shape)
    dims = rest[: plan.to] + [entries.count] + rest[plan.to :]
    out, _ = arrays.allocate(em, plan.result, dims)
    if hold is not None:
        hold(out)
    out_data = b.extract_value(out, arrays.DATA)
    out_strides = views.c_strides(em, dims, plan.result.dtype)

    def copy(to: list[ir.Value], src: list[ir.Value]) -> None:
        b.store(b.load(views.element(em, data, strides, src)), views.element(em, out_data, out_strides, to))

    _each_element(em, plan, entries, rest, copy)
    return out


def scatter(
    em: Emitter,
    arr: ir.Value,
    at: ArrayType,
    plan: Advanced,
    index: list[tuple[ir.Value, Type]],
    value: ir.Value,
    vt: Type,
) -> None:
    """``arr[…idx…] = value``: a number into every selected element, or an array (or a list of numbers)
    broadcast to the selection's shape (NumPy's rules), read from a copy where it overlaps ``arr``
    (``a[[k, p]] = a[[p, k]]`` swaps rows). Every index is checked before anything is written, and read from a
    copy where the index array lies in ``arr``; a repeated index is written once per entry, the last entry's value
    staying, as NumPy does."""
    b = em.b
    d = at.dtype
    base, base_t = _basic_view(em, arr, at, plan, index)
    data, shape, strides = views.parts(em, base, base_t)
    entries = _Entries(em, plan, index[plan.at], shape[plan.axis], first=True)
    rest = _split(plan, shape)
    dims = rest[: plan.to] + [entries.count] + rest[plan.to :]
    if isinstance(vt, ListType):
        value, vt = lists.items_array(em, value, vt)
    copies: list[ir.Value] = []
    if isinstance(vt, ArrayType):
        src, src_shape, src_strides = views.parts(em, value, vt)
        lead = len(dims) - vt.ndim
        aligned: list[ir.Value] = [_i64(0)] * lead
        bad: ir.Value = ir.Constant(lt.I1, 0)
        for k in range(vt.ndim):
            m = src_shape[k]
            bad = b.or_(bad, b.and_(b.icmp_signed("!=", m, dims[lead + k]), b.icmp_signed("!=", m, _i64(1))))
            aligned.append(b.select(b.icmp_signed("==", m, _i64(1)), _i64(0), src_strides[k]))
        em.check(bad, "ValueError", "shape mismatch: value array could not be broadcast to indexing result")
        copies.append(entries.unaliased(data, shape, strides, base_t))
        src, aligned, temp = views.unaliased(em, data, shape, strides, base_t, src, src_shape, src_strides, aligned, vt)
        copies.append(temp)
        vdtype = vt.dtype

        def source(idx: list[ir.Value]) -> ir.Value:
            return coerce(em, _load(em, views.element(em, src, aligned, idx), vdtype), vdtype, d)
    else:
        copies.append(entries.unaliased(data, shape, strides, base_t))
        fill = casts.store_convert(em, value, vt, d)

        def source(idx: list[ir.Value]) -> ir.Value:
            return fill

    def put(to: list[ir.Value], target: list[ir.Value]) -> None:
        _store(em, views.element(em, data, strides, target), source(to), d)

    _each_element(em, plan, entries, rest, put)
    for temp in copies:
        views.release_copy(em, temp)
