"""Views in LLVM IR: slicing, ``a[i]`` of an N-D array, ``a.T``, ``reshape``, ``ravel``, slice assignment.

    %v: f64[:] = getview %a "s" [%start, %stop, %step]       data + start*stride, count, stride*step

A view is an array value over the same memory: a moved data pointer and new shape and byte strides. Every view
is built by ``view_of``, which copies every other field of the array value from its base (so that fields
added to the array value later are carried to views). Python's ``slice.indices`` semantics (negative and
missing bounds, clamping, negative steps, empty results) live in ``slice_indices`` alone. Slice assignment
(``assign``) broadcasts its source like NumPy and copies a source that overlaps the destination first.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from ..infer.views import ELLIPSIS, INT_INDEX, SLICE, expand
from ..ir.ops import Intrinsic
from ..types import I64, NONE, ArrayType, ListType, ScalarType, TupleType, Type
from . import arrays, casts, gil, lists, loops, sizes
from . import types as lt
from .context import Emitter, ModuleContext
from .numerics import coerce
from .types import memory_type, value_type

DATA, SHAPE, STRIDES = 0, 1, 2
"""The fields of an array value a view replaces; any other field is copied from the base."""

Typed = tuple[ir.Value, Type]
P64 = lt.I64.as_pointer()


def _i64(n: int) -> ir.Constant:
    return ir.Constant(lt.I64, n)


def parts(em: Emitter, arr: ir.Value, t: ArrayType) -> tuple[ir.Value, list[ir.Value], list[ir.Value]]:
    """Data pointer, shape and byte strides of an array value. A ``C`` array's strides are computed from its
    shape (a buffer may give any stride to an axis of length 1)."""
    b = em.b
    data = b.extract_value(arr, DATA)
    shape = [b.extract_value(b.extract_value(arr, SHAPE), k) for k in range(t.ndim)]
    if t.layout != "C":
        return data, shape, [b.extract_value(b.extract_value(arr, STRIDES), k) for k in range(t.ndim)]
    return data, shape, c_strides(em, shape, t.dtype)


def c_strides(em: Emitter, shape: list[ir.Value], dtype: ScalarType) -> list[ir.Value]:
    strides: list[ir.Value] = []
    step: ir.Value = _i64(dtype.itemsize)
    for n in reversed(shape):
        strides.insert(0, step)
        step = em.b.mul(step, n)
    return strides


def offset(em: Emitter, data: ir.Value, nbytes: ir.Value) -> ir.Value:
    """``data`` moved by ``nbytes`` (no ``inbounds``: an empty view may point one past its base)."""
    b = em.b
    return b.bitcast(b.gep(b.bitcast(data, lt.PTR), [nbytes]), data.type)


def view_of(
    em: Emitter, base: ir.Value, data: ir.Value, shape: list[ir.Value], strides: list[ir.Value], result: ArrayType
) -> ir.Value:
    """The array value of a view of ``base``: ``data``, ``shape`` and ``strides`` are the view's own, every
    other field is the base's."""
    b = em.b
    ty = value_type(result)
    out = ir.Constant(ty, ir.Undefined)
    for k in range(len(ty.elements)):
        if k not in (DATA, SHAPE, STRIDES):
            out = b.insert_value(out, b.extract_value(base, k), k)
    out = b.insert_value(out, b.bitcast(data, memory_type(result.dtype).as_pointer()), DATA)
    for field, values in ((SHAPE, shape), (STRIDES, strides)):
        arr = ir.Constant(ir.ArrayType(lt.I64, result.ndim), ir.Undefined)
        for k, v in enumerate(values):
            arr = b.insert_value(arr, v, k)
        out = b.insert_value(out, arr, field)
    return out


# ---------------------------------------------------------------------------------------- indices


def slice_indices(
    em: Emitter, start: ir.Value | None, stop: ir.Value | None, step: ir.Value | None, length: ir.Value
) -> tuple[ir.Value, ir.Value, ir.Value]:
    """``(start, step, count)`` of ``range(*slice(start, stop, step).indices(length))``; ``None`` is a
    missing part. A zero step raises ``ValueError`` as in Python."""
    b = em.b
    zero, one = _i64(0), _i64(1)
    if step is None:
        step = one
    else:
        em.check(b.icmp_signed("==", step, zero), "ValueError", "slice step cannot be zero")
    negative = b.icmp_signed("<", step, zero)
    lower = b.select(negative, _i64(-1), zero)
    upper = b.select(negative, b.sub(length, one), length)

    def clamp(value: ir.Value | None, default: ir.Value) -> ir.Value:
        if value is None:
            return default
        wrapped = b.add(value, length)
        low = b.select(b.icmp_signed("<", wrapped, lower), lower, wrapped)
        high = b.select(b.icmp_signed(">", value, upper), upper, value)
        return b.select(b.icmp_signed("<", value, zero), low, high)

    first = clamp(start, b.select(negative, upper, lower))
    last = clamp(stop, b.select(negative, lower, upper))
    # count = (distance - 1) // |step| + 1 where the distance is positive; |step| as unsigned (2**63 fits)
    distance = b.select(negative, b.sub(first, last), b.sub(last, first))
    magnitude = b.select(negative, b.neg(step), step)
    count = b.add(b.udiv(b.sub(distance, one), magnitude), one)
    count = b.select(b.icmp_signed(">", distance, zero), count, zero)
    return first, step, count


def checked_index(em: Emitter, index: ir.Value, it: Type, length: ir.Value) -> ir.Value:
    """An integer index into an axis of ``length``: negative counts from the end; out of range raises
    ``IndexError`` (unless the function was compiled with ``boundscheck=False``)."""
    b = em.b
    i = coerce(em, index, it, I64)
    if not (isinstance(it, ScalarType) and not it.is_signed):
        i = b.select(b.icmp_signed("<", i, _i64(0)), b.add(i, length), i)
    options = getattr(em, "options", None)
    if options is None or options.boundscheck:
        em.check(b.icmp_unsigned(">=", i, length), "IndexError", "index out of range")
    return i


def get_view(em: Emitter, arr: ir.Value, at: ArrayType, spec: str, index: list[Typed], result: ArrayType) -> ir.Value:
    """``arr[…]`` with slices or an ellipsis (``spec`` as in ``GetView``)."""
    b = em.b
    data, shape, strides = parts(em, arr, at)
    moved: ir.Value = _i64(0)
    new_shape: list[ir.Value] = []
    new_strides: list[ir.Value] = []
    items = iter(index)
    full = expand(spec, at.ndim)
    explicit = _explicit_positions(spec, at.ndim)
    for axis, kind in enumerate(full):
        n, stride = shape[axis], strides[axis]
        if kind == INT_INDEX:
            value, t = next(items)
            moved = b.add(moved, b.mul(checked_index(em, value, t, n), stride))
        elif axis in explicit:
            start, stop, step = (_optional(em, *next(items)) for _ in range(3))
            first, step_value, count = slice_indices(em, start, stop, step, n)
            moved = b.add(moved, b.mul(first, stride))
            new_shape.append(count)
            new_strides.append(b.mul(stride, step_value))
        else:  # a whole axis: the ellipsis's, or one left out at the end
            new_shape.append(n)
            new_strides.append(stride)
    return view_of(em, arr, offset(em, data, moved), new_shape, new_strides, result)


def _explicit_positions(spec: str, ndim: int) -> set[int]:
    """The axes an explicit slice of ``spec`` applies to (the ellipsis stands for the axes in between)."""
    out, axis = set(), 0
    used = sum(1 for c in spec if c != ELLIPSIS)
    for c in spec:
        if c == ELLIPSIS:
            axis += ndim - used
            continue
        if c == SLICE:
            out.add(axis)
        axis += 1
    return out


def _optional(em: Emitter, value: ir.Value, t: Type) -> ir.Value | None:
    """A slice bound or step as i64 (None where missing); a u64 beyond i64 is clamped, as it clamps anyway."""
    if t == NONE:
        return None
    v = coerce(em, value, t, I64)
    if isinstance(t, ScalarType) and t.kind == "u" and t.bits == 64:
        v = em.b.select(em.b.icmp_signed("<", v, _i64(0)), _i64(2**63 - 1), v)
    return v


def list_slice(em: Emitter, lst: ir.Value, t: ListType, index: list[Typed]) -> ir.Value:
    """``lst[start:stop:step]`` (one slice: ``index`` its three parts): a new list of those items, as Python
    slices a list (a copy, not a view)."""
    start, stop, step = (_optional(em, value, vt) for value, vt in index)
    first, step_value, count = slice_indices(em, start, stop, step, lists.length(em.b, lst))
    return lists.slice_copy(em, lst, t, first, step_value, count)


def index_view(em: Emitter, arr: ir.Value, at: ArrayType, index: list[Typed], result: ArrayType) -> ir.Value:
    """``a[i]`` (``a[i, j]``…) of an array with more axes than indices: the view of the remaining axes."""
    return get_view(em, arr, at, INT_INDEX * len(index), index, result)


# ---------------------------------------------------------------------------------------- methods


def method(em: Emitter, fn: Intrinsic, args: list[ir.Value], argtypes: list[Type], result: ArrayType) -> ir.Value:
    """``a.T``, ``a.reshape(…)``, ``a.ravel()``. Of an array not known to be C-contiguous (``may_copy``) on a
    target that allocates, the result is a new reference: a view (NumPy's: ``ravel`` of a C-contiguous array,
    ``reshape`` where the strides can express the new shape) or a new C-ordered copy."""
    b = em.b
    arr, at = args[0], argtypes[0]
    assert isinstance(at, ArrayType)
    data, shape, strides = parts(em, arr, at)
    if fn is Intrinsic.TRANSPOSE:
        return view_of(em, arr, data, shape[::-1], strides[::-1], result)
    size: ir.Value = _i64(1)
    for n in shape:
        size = b.mul(size, n)
    new_shape = [size]
    if fn is Intrinsic.RESHAPE:
        new_shape = _resolve_unknown(em, _reshape_dims(em, args[1:], argtypes[1:]), size, at.dtype.itemsize)
    if may_copy(em, fn, at):
        return _view_or_copy(em, fn, arr, at, new_shape, result)
    if at.layout != "C":  # (a device: no allocator to copy with)
        what = "reshape()" if fn is Intrinsic.RESHAPE else "ravel()"
        em.check(
            b.not_(is_contiguous(em, shape, strides, at.dtype)),
            "ValueError",
            f"{what} of a non-contiguous array in a kernel would need a copy, which kernels cannot make; "
            f"pass a contiguous array (declare it aot.{at.dtype.name}[::1])",
        )
    return view_of(em, arr, data, new_shape, c_strides(em, new_shape, at.dtype), result)


def may_copy(em: Emitter, fn: Intrinsic, at: Type) -> bool:
    """Whether ``a.reshape(…)`` / ``a.ravel()`` of an ``at`` may copy (then its result is a new reference)."""
    return (
        fn in (Intrinsic.RESHAPE, Intrinsic.RAVEL)
        and isinstance(at, ArrayType)
        and at.layout != "C"
        and em.ctx.target.has_host_runtime
    )


def _view_or_copy(
    em: Emitter, fn: Intrinsic, arr: ir.Value, at: ArrayType, new_shape: list[ir.Value], result: ArrayType
) -> ir.Value:
    """NumPy's choice, made at run time: a C-contiguous array gives a view with C strides; ``reshape`` of another
    gives a view with the strides NumPy's no-copy rule finds, when it finds them; anything else a C-ordered copy.
    The result is a new reference either way."""
    b = em.b
    data, shape, strides = parts(em, arr, at)
    with b.goto_entry_block():
        slot = b.alloca(value_type(result), name="reshape.result")
        new_slot = b.alloca(ir.ArrayType(lt.I64, len(new_shape)), name="reshape.strides")
        old_slot = b.alloca(ir.ArrayType(lt.I64, 2 * at.ndim), name="reshape.old")
        dims_slot = b.alloca(ir.ArrayType(lt.I64, len(new_shape)), name="reshape.dims")
        flag = b.alloca(lt.I1, name="reshape.view")
    viewable = is_contiguous(em, shape, strides, at.dtype)
    b.store(viewable, flag)
    c_view = view_of(em, arr, data, new_shape, c_strides(em, new_shape, at.dtype), result)
    b.store(c_view, slot)
    if fn is Intrinsic.RESHAPE:
        with b.if_then(b.not_(viewable)):
            for k in range(at.ndim):
                b.store(shape[k], b.gep(old_slot, [_i64(0), _i64(k)]))
                b.store(strides[k], b.gep(old_slot, [_i64(0), _i64(at.ndim + k)]))
            for k, d in enumerate(new_shape):
                b.store(d, b.gep(dims_slot, [_i64(0), _i64(k)]))
            first = [b.gep(s, [_i64(0), _i64(0)]) for s in (old_slot, dims_slot, new_slot)]
            old_strides = b.gep(old_slot, [_i64(0), _i64(at.ndim)])
            found = b.call(
                _nocopy_function(em.ctx),
                [
                    _i64(at.ndim),
                    first[0],
                    old_strides,
                    _i64(len(new_shape)),
                    first[1],
                    first[2],
                    _i64(at.dtype.itemsize),
                ],
            )
            with b.if_then(found):
                new_strides = [b.load(b.gep(new_slot, [_i64(0), _i64(k)])) for k in range(len(new_shape))]
                b.store(view_of(em, arr, data, new_shape, new_strides, result), slot)
            b.store(found, flag)
    with b.if_else(b.load(flag)) as (view, copy):
        with view:
            arrays.incref(em.ctx, b, b.load(slot), result)
        with copy:
            made, _ = arrays.allocate(em, result, new_shape)
            arrays.copy(em, arr, at, made, result, shape)
            b.store(made, slot)
    return b.load(slot)


def _nocopy_function(ctx: ModuleContext) -> ir.Function:
    """``i1 aot_nocopy_reshape(i64 oldnd, ptr olddims, ptr oldstrides, i64 newnd, ptr newdims, ptr newstrides,
    i64 itemsize)``: NumPy's rule for reshaping a non-contiguous (non-empty) array without a copy. Axes of
    length 1 are dropped from the old shape (in place); then each run of new axes whose product equals a run of
    old axes takes its strides from the last old axis of the run, when those old axes lie evenly (each stride
    the next one times its length). Writes the new strides and gives 1, or gives 0 where a copy is needed."""
    fnty = ir.FunctionType(lt.I1, [lt.I64, P64, P64, lt.I64, P64, P64, lt.I64])
    fn, b = ctx.internal_function("aot_nocopy_reshape", fnty)
    if b is None:
        return fn
    oldnd_in, olddims, oldstrides, newnd, newdims, newstrides, itemsize = fn.args
    names = ("k", "count", "oi", "oj", "ni", "nj", "np", "op")
    slots = {name: b.alloca(lt.I64, name=name) for name in names}

    def get(name: str) -> ir.Value:
        return b.load(slots[name])

    def put(name: str, value: ir.Value) -> None:
        b.store(value, slots[name])

    def at(base: ir.Value, i: ir.Value) -> ir.Value:
        return b.gep(base, [i])

    def loop(test: Callable[[], ir.Value], body: Callable[[], None], name: str) -> None:
        loops.while_loop(b, fn, test, body, name)

    one = _i64(1)
    for name in ("k", "count", "oi", "ni"):
        put(name, _i64(0))

    def squeeze() -> None:
        k = get("k")
        with b.if_then(b.icmp_signed("!=", b.load(at(olddims, k)), one)):
            c = get("count")
            b.store(b.load(at(olddims, k)), at(olddims, c))
            b.store(b.load(at(oldstrides, k)), at(oldstrides, c))
            put("count", b.add(c, one))
        put("k", b.add(k, one))

    loop(lambda: b.icmp_signed("<", get("k"), oldnd_in), squeeze, "squeeze")
    oldnd = get("count")
    put("oj", one)
    put("nj", one)
    fail = fn.append_basic_block("fail")

    def run() -> None:
        put("np", b.load(at(newdims, get("ni"))))
        put("op", b.load(at(olddims, get("oi"))))

        def grow() -> None:
            smaller = b.icmp_signed("<", get("np"), get("op"))
            with b.if_else(smaller) as (new_side, old_side):
                with new_side:
                    put("np", b.mul(get("np"), b.load(at(newdims, get("nj")))))
                    put("nj", b.add(get("nj"), one))
                with old_side:
                    put("op", b.mul(get("op"), b.load(at(olddims, get("oj")))))
                    put("oj", b.add(get("oj"), one))

        loop(lambda: b.icmp_signed("!=", get("np"), get("op")), grow, "match")
        put("k", get("oi"))

        def even() -> None:  # (the old axes of the run must lie evenly to merge)
            k = get("k")
            following = b.add(k, one)
            expected = b.mul(b.load(at(olddims, following)), b.load(at(oldstrides, following)))
            ok = fn.append_basic_block("even.ok")
            b.cbranch(b.icmp_signed("!=", b.load(at(oldstrides, k)), expected), fail, ok)
            b.position_at_end(ok)
            put("k", following)

        loop(lambda: b.icmp_signed("<", get("k"), b.sub(get("oj"), one)), even, "even")
        last = b.sub(get("nj"), one)
        b.store(b.load(at(oldstrides, b.sub(get("oj"), one))), at(newstrides, last))
        put("k", last)

        def spread() -> None:
            k = get("k")
            below = b.sub(k, one)
            b.store(b.mul(b.load(at(newstrides, k)), b.load(at(newdims, k))), at(newstrides, below))
            put("k", below)

        loop(lambda: b.icmp_signed(">", get("k"), get("ni")), spread, "spread")
        put("ni", get("nj"))
        put("nj", b.add(get("nj"), one))
        put("oi", get("oj"))
        put("oj", b.add(get("oj"), one))

    loop(lambda: b.and_(b.icmp_signed("<", get("ni"), newnd), b.icmp_signed("<", get("oi"), oldnd)), run, "runs")
    ni = get("ni")
    has_run = b.icmp_signed(">=", ni, one)
    last_stride = b.select(has_run, b.load(at(newstrides, b.select(has_run, b.sub(ni, one), _i64(0)))), itemsize)
    put("k", ni)

    def trailing() -> None:  # (new axes of length 1 after the last run)
        b.store(last_stride, at(newstrides, get("k")))
        put("k", b.add(get("k"), one))

    loop(lambda: b.icmp_signed("<", get("k"), newnd), trailing, "ones")
    b.ret(ir.Constant(lt.I1, 1))
    b.position_at_end(fail)
    b.ret(ir.Constant(lt.I1, 0))
    return fn


def _reshape_dims(em: Emitter, args: list[ir.Value], argtypes: list[Type]) -> list[ir.Value]:
    if len(args) == 1 and isinstance(argtypes[0], TupleType):
        t = argtypes[0]
        return [coerce(em, em.b.extract_value(args[0], k), it, I64) for k, it in enumerate(t.items)]
    return [coerce(em, a, t, I64) for a, t in zip(args, argtypes)]


def _resolve_unknown(em: Emitter, dims: list[ir.Value], size: ir.Value, itemsize: int) -> list[ir.Value]:
    """The new shape with its ``-1`` (at most one negative entry) worked out; a shape of another size raises
    ``ValueError``, and so does one whose size does not fit an ``int64`` (checked, never wrapped: a wrapped
    product could match ``size``)."""
    b = em.b
    unknowns: ir.Value = _i64(0)
    given: list[ir.Value] = []
    for d in dims:
        is_unknown = b.icmp_signed("<", d, _i64(0))  # (NumPy 2 takes any negative entry for the unknown one)
        unknowns = b.add(unknowns, b.zext(is_unknown, lt.I64))
        given.append(b.select(is_unknown, _i64(1), d))
    em.check(b.icmp_signed(">", unknowns, _i64(1)), "ValueError", "can only specify one unknown dimension")
    known, _ = sizes.checked_product(em, given)
    too_big = sizes.shape_overflows(em, given, itemsize)
    has_unknown = b.icmp_signed("==", unknowns, _i64(1))
    safe = b.select(b.icmp_signed("==", known, _i64(0)), _i64(1), known)
    missing = b.sdiv(size, safe)
    wrong = b.icmp_signed("!=", b.mul(b.select(has_unknown, missing, _i64(1)), known), size)
    unsolvable = b.and_(has_unknown, b.icmp_signed("==", known, _i64(0)))
    _size_mismatch(em, b.or_(too_big, b.or_(unsolvable, wrong)), size, dims)
    return [b.select(b.icmp_signed("<", d, _i64(0)), missing, d) for d in dims]


_RESHAPE_TEXT = 1600
"""Bytes for NumPy's message: the size and up to 64 dimensions of 21 characters."""


def _size_mismatch(em: Emitter, failed: ir.Value, size: ir.Value, dims: list[ir.Value]) -> None:
    """Raise NumPy's ``ValueError`` for a new shape of another size when ``failed`` holds ("cannot reshape
    array of size 12 into shape (5,newaxis)")."""
    b = em.b

    def with_values() -> None:
        with b.goto_entry_block():
            slot = b.alloca(ir.ArrayType(lt.I64, len(dims)), name="reshape.asked")
        for k, d in enumerate(dims):
            b.store(d, b.gep(slot, [_i64(0), _i64(k)]))
        b.call(_reshape_error_function(em.ctx), [size, _i64(len(dims)), b.gep(slot, [_i64(0), _i64(0)])])

    with b.if_then(failed, likely=False):
        em.raise_("ValueError", "cannot reshape array: the new shape has a different number of elements", with_values)


def _reshape_error_function(ctx: ModuleContext) -> ir.Function:
    """``void aot_reshape_error(i64 size, i64 n, ptr dims)``: sets NumPy's message, written as NumPy writes the
    shape: leading unknown (negative) entries left out, a later one as ``newaxis``, ``(5,)`` for one entry
    (holding the GIL for the moment it takes: ``aot.codegen.gil``)."""
    fn, b = ctx.internal_function("aot_reshape_error", ir.FunctionType(ir.VoidType(), [lt.I64, lt.I64, P64]))
    if b is None:
        return fn
    fn.attributes.add("cold")
    fn.attributes.add("noinline")
    size, n, dims = fn.args
    snprintf = ctx.declare("snprintf", ir.FunctionType(lt.I32, [lt.PTR, lt.I64, lt.PTR], var_arg=True))
    text = b.alloca(ir.ArrayType(lt.I8, _RESHAPE_TEXT), name="text")
    pos = b.alloca(lt.I64, name="pos")
    k = b.alloca(lt.I64, name="k")
    one = _i64(1)

    def write(fmt: str, *values: ir.Value) -> None:
        at = b.load(pos)
        room = b.sub(_i64(_RESHAPE_TEXT), at)
        wrote = b.call(snprintf, [b.gep(text, [_i64(0), at]), room, ctx.cstring(fmt), *values])
        after = b.add(at, b.sext(wrote, lt.I64))
        b.store(b.select(b.icmp_signed("<", after, _i64(_RESHAPE_TEXT - 1)), after, _i64(_RESHAPE_TEXT - 1)), pos)

    def loop(test: Callable[[], ir.Value], body: Callable[[], None], name: str) -> None:
        loops.while_loop(b, fn, test, body, name)

    def dim() -> ir.Value:
        return b.load(b.gep(dims, [b.load(k)]))

    def within() -> ir.Value:
        return b.icmp_signed("<", b.load(k), n)

    b.store(_i64(0), pos)
    write("cannot reshape array of size %lld into shape (", size)
    b.store(_i64(0), k)

    def leading() -> ir.Value:  # (a short-circuit: dims[k] is read only while k < n)
        test = fn.append_basic_block("leading.dim")
        done = fn.append_basic_block("leading.done")
        start = b.block
        b.cbranch(within(), test, done)
        b.position_at_end(test)
        negative = b.icmp_signed("<", dim(), _i64(0))
        b.branch(done)
        b.position_at_end(done)
        phi = b.phi(lt.I1)
        phi.add_incoming(ir.Constant(lt.I1, 0), start)
        phi.add_incoming(negative, test)
        return phi

    loop(leading, lambda: b.store(b.add(b.load(k), one), k), "skip")
    with b.if_then(within()):
        write("%lld", dim())
        b.store(b.add(b.load(k), one), k)

    def rest() -> None:
        with b.if_else(b.icmp_signed("<", dim(), _i64(0))) as (unknown, known):
            with unknown:
                write(",newaxis")
            with known:
                write(",%lld", dim())
        b.store(b.add(b.load(k), one), k)

    loop(within, rest, "dims")
    write(")")
    with b.if_then(b.icmp_signed("==", n, one)):  # (NumPy's "(5,)": the ")" written over)
        b.store(b.sub(b.load(pos), one), pos)
        write(",)")
    token = b.call(gil.acquire_function(ctx), [])
    exc = b.load(b.bitcast(ctx.global_pointer("PyExc_ValueError"), lt.PTR.as_pointer()))
    set_string = ctx.declare("PyErr_SetString", ir.FunctionType(ir.VoidType(), [lt.PTR, lt.PTR]))
    b.call(set_string, [exc, b.gep(text, [_i64(0), _i64(0)])])
    b.call(gil.release_function(ctx), [token])
    b.ret_void()
    return fn


def is_contiguous(em: Emitter, shape: list[ir.Value], strides: list[ir.Value], dtype: ScalarType) -> ir.Value:
    """Whether the elements lie in C order without gaps (an empty array always does)."""
    b = em.b
    ok: ir.Value = ir.Constant(lt.I1, 1)
    empty: ir.Value = ir.Constant(lt.I1, 0)
    expected: ir.Value = _i64(dtype.itemsize)
    for n, s in zip(reversed(shape), reversed(strides)):
        ok = b.and_(ok, b.or_(b.icmp_signed("==", n, _i64(1)), b.icmp_signed("==", s, expected)))
        empty = b.or_(empty, b.icmp_signed("==", n, _i64(0)))
        expected = b.mul(expected, n)
    return b.or_(ok, empty)


# ---------------------------------------------------------------------------------------- assignment


def nd_loop(em: Emitter, shape: list[ir.Value], body: Callable[[list[ir.Value]], None]) -> None:
    """``body(indices)`` for every index of ``shape``, in C order (nested counted loops)."""
    b = em.b
    indices: list[ir.Value] = []

    def level(k: int) -> None:
        if k == len(shape):
            body(indices)
            return
        with b.goto_entry_block():
            slot = b.alloca(lt.I64, name=f"view.i{k}")
        b.store(_i64(0), slot)
        test = em.llfn.append_basic_block(f"view.loop{k}")
        inside = em.llfn.append_basic_block(f"view.body{k}")
        done = em.llfn.append_basic_block(f"view.end{k}")
        b.branch(test)
        b.position_at_end(test)
        i = b.load(slot)
        b.cbranch(b.icmp_signed("<", i, shape[k]), inside, done)
        b.position_at_end(inside)
        indices.append(i)
        level(k + 1)
        indices.pop()
        b.store(b.add(i, _i64(1), flags=("nsw",)), slot)
        b.branch(test)
        b.position_at_end(done)

    level(0)


def element(em: Emitter, data: ir.Value, strides: list[ir.Value], indices: list[ir.Value]) -> ir.Value:
    b = em.b
    moved: ir.Value = _i64(0)
    for i, s in zip(indices, strides):
        moved = b.add(moved, b.mul(i, s))
    return b.bitcast(b.gep(b.bitcast(data, lt.PTR), [moved], inbounds=True), data.type)


def _extent(
    em: Emitter, data: ir.Value, shape: list[ir.Value], strides: list[ir.Value], itemsize: int
) -> tuple[ir.Value, ir.Value]:
    """The byte range ``[lo, hi)`` the elements of a non-empty array lie in."""
    b = em.b
    lo = hi = b.ptrtoint(data, lt.I64)
    for n, s in zip(shape, strides):
        reach = b.mul(b.sub(n, _i64(1)), s)
        negative = b.icmp_signed("<", reach, _i64(0))
        lo = b.add(lo, b.select(negative, reach, _i64(0)))
        hi = b.add(hi, b.select(negative, _i64(0), reach))
    return lo, b.add(hi, _i64(itemsize))


def assign(em: Emitter, target: ir.Value, tt: ArrayType, value: ir.Value, vt: Type) -> None:
    """``view[…] = value``: a number fills the view; an array (or a list of numbers) is broadcast to it (NumPy's
    rules; another shape raises ``ValueError``) and copied first when it overlaps the view."""
    b = em.b
    data, shape, strides = parts(em, target, tt)
    if isinstance(vt, ListType):  # (a list of numbers: its items, as the 1-D array np.array(lst))
        value, vt = lists.items_array(em, value, vt)

    def store(ptr: ir.Value, v: ir.Value, t: Type) -> None:
        v = coerce(em, v, t, tt.dtype)
        b.store(b.zext(v, lt.I8) if tt.dtype.kind == "b" else v, ptr)

    if not isinstance(vt, ArrayType):
        assert isinstance(vt, ScalarType)
        value, vt = casts.store_convert(em, value, vt, tt.dtype), tt.dtype  # (NumPy's checks, once)
        nd_loop(em, shape, lambda idx: store(element(em, data, strides, idx), value, vt))
        return
    src, src_shape, src_strides = parts(em, value, vt)
    lead = tt.ndim - vt.ndim
    aligned: list[ir.Value] = [_i64(0)] * lead
    bad: ir.Value = ir.Constant(lt.I1, 0)
    for k in range(vt.ndim):
        n, m = shape[lead + k], src_shape[k]
        bad = b.or_(bad, b.and_(b.icmp_signed("!=", m, n), b.icmp_signed("!=", m, _i64(1))))
        aligned.append(b.select(b.icmp_signed("==", m, _i64(1)), _i64(0), src_strides[k]))
    em.check(bad, "ValueError", "could not broadcast the input array into the shape of the assignment target")
    src, aligned, temp = unaliased(em, data, shape, strides, tt, src, src_shape, src_strides, aligned, vt)

    def copy(idx: list[ir.Value]) -> None:
        v = b.load(element(em, src, aligned, idx))
        if vt.dtype.kind == "b":
            v = b.icmp_unsigned("!=", v, ir.Constant(lt.I8, 0))
        store(element(em, data, strides, idx), v, vt.dtype)

    nd_loop(em, shape, copy)
    release_copy(em, temp)


def release_copy(em: Emitter, temp: ir.Value) -> None:
    """Free the copy ``unaliased`` made (its pointer, or null when it made none)."""
    b = em.b
    if em.ctx.target.has_host_runtime:
        with b.if_then(b.icmp_unsigned("!=", temp, ir.Constant(lt.PTR, None))):
            b.call(em.ctx.declare("free", ir.FunctionType(ir.VoidType(), [lt.PTR])), [temp])


def unaliased(
    em: Emitter,
    data: ir.Value,
    shape: list[ir.Value],
    strides: list[ir.Value],
    tt: ArrayType,
    src: ir.Value,
    src_shape: list[ir.Value],
    src_strides: list[ir.Value],
    aligned: list[ir.Value],
    vt: ArrayType,
) -> tuple[ir.Value, list[ir.Value], ir.Value]:
    """Where the source's memory overlaps the target's, a C-ordered copy of the source (from ``malloc``,
    freed by the caller through the returned pointer, else null) and its broadcast strides."""
    b = em.b
    empty: ir.Value = ir.Constant(lt.I1, 0)
    for n in shape + src_shape:
        empty = b.or_(empty, b.icmp_signed("==", n, _i64(0)))
    t_lo, t_hi = _extent(em, data, shape, strides, tt.dtype.itemsize)
    s_lo, s_hi = _extent(em, src, src_shape, src_strides, vt.dtype.itemsize)
    overlap = b.and_(b.not_(empty), b.and_(b.icmp_unsigned("<", s_lo, t_hi), b.icmp_unsigned("<", t_lo, s_hi)))
    with b.goto_entry_block():
        src_slot = b.alloca(src.type, name="view.src")
        stride_slots = [b.alloca(lt.I64, name=f"view.stride{k}") for k in range(len(aligned))]
        temp_slot = b.alloca(lt.PTR, name="view.temp")
    b.store(src, src_slot)
    for slot, s in zip(stride_slots, aligned):
        b.store(s, slot)
    b.store(ir.Constant(lt.PTR, None), temp_slot)
    if not em.ctx.target.has_host_runtime:  # a device: no malloc to copy through
        em.check(
            overlap,
            "ValueError",
            "assigning a slice from an overlapping slice of the same array is not supported in kernels; "
            "copy through another array",
        )
        return src, aligned, ir.Constant(lt.PTR, None)
    with b.if_then(overlap, likely=False):
        size: ir.Value = _i64(vt.dtype.itemsize)
        for n in src_shape:
            size = b.mul(size, n)
        malloc = em.ctx.declare("malloc", ir.FunctionType(lt.PTR, [lt.I64]))
        raw = b.call(malloc, [size])
        em.check(b.icmp_unsigned("==", raw, ir.Constant(lt.PTR, None)), "MemoryError", "out of memory")
        b.store(raw, temp_slot)
        copy_data = b.bitcast(raw, src.type)
        copy_strides = c_strides(em, src_shape, vt.dtype)
        nd_loop(
            em,
            src_shape,
            lambda idx: b.store(b.load(element(em, src, src_strides, idx)), element(em, copy_data, copy_strides, idx)),
        )
        b.store(copy_data, src_slot)
        lead = len(aligned) - len(src_shape)
        for k, (n, s) in enumerate(zip(src_shape, copy_strides)):
            b.store(b.select(b.icmp_signed("==", n, _i64(1)), _i64(0), s), stride_slots[lead + k])
    return b.load(src_slot), [b.load(s) for s in stride_slots], b.load(temp_slot)
