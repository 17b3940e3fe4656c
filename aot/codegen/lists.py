"""Lists: values compiled code allocates, counts and returns to Python as Python lists.

A list value is a pointer to a block from the allocator of ``arrays.py`` (``aot_nrt_alloc``), so the same
``{i64 refcount, ptr free}`` header and the same ``incref``/``decref`` count it; the payload after the header
is ``{i64 len, i64 cap, ptr items}``. ``items`` is a separate ``PyMem_RawMalloc`` block of ``cap`` items in
their register layout (booleans as bytes), grown by doubling; ``[]`` has none (NULL) until its first append,
so that an empty list whose item type is only known where it is stored (``[[x], []]``) is never wrong. The
header's ``free`` is the list's own
``aot_list_free…`` function: it drops the reference each item holds (arrays, lists, tuples holding them),
then frees the items and the block. A list is shared by reference, as in Python (``b = a`` then
``b.append(x)`` changes ``a``); the refcount discipline of ``function.py`` applies unchanged: a variable's
slot holds one reference, a new list (``[…]``, ``pop``'s item) is a new reference, and the list holds one
reference to every item it stores. Only the CPU allocates: a list on another target is a ``CompileError``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from llvmlite import ir

from ..diagnostics import CompileError, Diagnostic, Span
from ..ir.ops import Intrinsic
from ..types import BOTTOM, I64, ArrayType, ListType, ScalarType, Type
from . import loops
from . import types as lt
from .arrays import (
    DATA,
    HEADER_SIZE,
    SHAPE,
    STRIDES,
    alloc_function,
    allocate,
    decref,
    incref,
    make_array,
    owns_references,
    refcounted,
)
from .context import Emitter, ModuleContext
from .numerics import coerce
from .types import value_type

LEN, CAP, ITEMS = 0, 1, 2
_PAYLOAD = ir.LiteralStructType([lt.I64, lt.I64, lt.PTR])
_NULL = ir.Constant(lt.PTR, None)
_MIN_CAP = 4


def item_memory_type(t: Type) -> ir.Type:
    """How an item is laid out in the items block (booleans are bytes, everything else as in registers)."""
    if (isinstance(t, ScalarType) and t.kind == "b") or t is BOTTOM:  # (``[]`` stored as an item: never read)
        return lt.I8
    return value_type(t)


def _payload(b: ir.IRBuilder, lst: ir.Value) -> ir.Value:
    return b.bitcast(b.gep(lst, [ir.Constant(lt.I64, HEADER_SIZE)]), _PAYLOAD.as_pointer())


def _field(b: ir.IRBuilder, lst: ir.Value, k: int) -> ir.Value:
    return b.gep(_payload(b, lst), [ir.Constant(lt.I32, 0), ir.Constant(lt.I32, k)])


def _items(b: ir.IRBuilder, lst: ir.Value, item: Type) -> ir.Value:
    return b.bitcast(b.load(_field(b, lst, ITEMS)), item_memory_type(item).as_pointer())


def _item_size(b: ir.IRBuilder, item: Type) -> ir.Value:
    ptr = b.gep(ir.Constant(item_memory_type(item).as_pointer(), None), [ir.Constant(lt.I64, 1)])
    return b.ptrtoint(ptr, lt.I64)


def _load_item(b: ir.IRBuilder, ptr: ir.Value, item: Type) -> ir.Value:
    value = b.load(ptr)
    if isinstance(item, ScalarType) and item.kind == "b":
        value = b.icmp_unsigned("!=", value, ir.Constant(lt.I8, 0))
    return value


def _store_item(b: ir.IRBuilder, value: ir.Value, ptr: ir.Value, item: Type) -> None:
    if isinstance(item, ScalarType) and item.kind == "b":
        value = b.zext(value, lt.I8)
    b.store(value, ptr)


def length(b: ir.IRBuilder, lst: ir.Value) -> ir.Value:
    return b.load(_field(b, lst, LEN))


# ------------------------------------------------------------------------------------ the free function


def _raw(ctx: ModuleContext, name: str) -> ir.Function:
    if name == "PyMem_RawFree":
        return ctx.declare(name, ir.FunctionType(ir.VoidType(), [lt.PTR]))
    if name == "PyMem_RawMalloc":
        return ctx.declare(name, ir.FunctionType(lt.PTR, [lt.I64]))
    return ctx.declare(name, ir.FunctionType(lt.PTR, [lt.PTR, lt.I64]))  # PyMem_RawRealloc


def free_function(ctx: ModuleContext, item: Type) -> ir.Function:
    """``void aot_list_free…(ptr header)``: each item's references dropped, the items and the block freed."""
    counted = owns_references(item)
    digest = hashlib.sha256(str(item).encode()).hexdigest()[:12]  # (one function per item type)
    name = f"aot_list_free_{digest}" if counted else "aot_list_free"
    fn, b = ctx.internal_function(name, ir.FunctionType(ir.VoidType(), [lt.PTR]))
    if b is None:
        return fn
    (header,) = fn.args
    if counted:
        items = _items(b, header, item)
        n = length(b, header)

        def drop(i: ir.Value) -> None:
            decref(ctx, b, b.load(b.gep(items, [i])), item)

        loops.counted_loop(b, ir.Constant(lt.I64, 0), n, drop, "free")
    b.call(_raw(ctx, "PyMem_RawFree"), [b.load(_field(b, header, ITEMS))])
    b.call(_raw(ctx, "PyMem_RawFree"), [header])
    b.ret_void()
    return fn


# -------------------------------------------------------------------------------------------- values


def new_list(em: Emitter, t: ListType, items: list[tuple[ir.Value, Type]], span: Span) -> ir.Value:
    """``[a, b, …]``: a new list (a new reference) holding a reference to each item."""
    if not refcounted(em.ctx):
        raise CompileError(
            [
                Diagnostic(
                    span,
                    f"lists cannot be made on the {em.ctx.target.owner} target: kernels cannot allocate; "
                    "use an array passed in as an argument (or aot.gpu.shared_array)",
                )
            ]
        )
    b = em.b
    header = b.call(alloc_function(em.ctx), [ir.Constant(lt.I64, 24)])
    em.check(b.icmp_unsigned("==", header, _NULL), "MemoryError", "cannot allocate memory for a list")
    cap = max(len(items), _MIN_CAP) if items else 0
    data: ir.Value = _NULL  # (``[]`` holds no items block until its first append, which knows the item type)
    if items:
        data = b.call(_raw(em.ctx, "PyMem_RawMalloc"), [b.mul(_item_size(b, t.item), ir.Constant(lt.I64, cap))])
        failed = b.icmp_unsigned("==", data, _NULL)
        with b.if_then(failed, likely=False):
            b.call(_raw(em.ctx, "PyMem_RawFree"), [header])
        em.check(failed, "MemoryError", "cannot allocate memory for a list")
    _set_free(em, header, t.item)
    b.store(ir.Constant(lt.I64, len(items)), _field(b, header, LEN))
    b.store(ir.Constant(lt.I64, cap), _field(b, header, CAP))
    b.store(data, _field(b, header, ITEMS))
    base = _items(b, header, t.item)
    for k, (value, vt) in enumerate(items):
        value = coerce(em, value, vt, t.item)
        incref(em.ctx, b, value, t.item)
        _store_item(b, value, b.gep(base, [ir.Constant(lt.I64, k)]), t.item)
    return header


def _set_free(em: Emitter, header: ir.Value, item: Type) -> None:
    free_slot = em.b.bitcast(em.b.gep(header, [ir.Constant(lt.I64, 8)]), lt.PTR.as_pointer())
    em.b.store(em.b.bitcast(free_function(em.ctx, item), lt.PTR), free_slot)


def _index(em: Emitter, lst: ir.Value, index: ir.Value, index_t: Type, n: ir.Value, message: str) -> ir.Value:
    """A Python index into ``n`` items (negative counts from the end), or ``IndexError``."""
    b = em.b
    i = coerce(em, index, index_t, I64)
    i = b.select(b.icmp_signed("<", i, ir.Constant(lt.I64, 0)), b.add(i, n), i)
    em.check(b.icmp_unsigned(">=", i, n), "IndexError", message)
    return i


def item_pointer(
    em: Emitter, lst: ir.Value, t: ListType, index: ir.Value, index_t: Type, message: str = "list index out of range"
) -> ir.Value:
    b = em.b
    i = _index(em, lst, index, index_t, length(b, lst), message)
    return b.gep(_items(b, lst, t.item), [i])


def get_item(em: Emitter, lst: ir.Value, t: ListType, index: ir.Value, index_t: Type) -> ir.Value:
    """``lst[i]``: the item (borrowed: the variable it is stored into takes its own reference)."""
    return _load_item(em.b, item_pointer(em, lst, t, index, index_t), t.item)


def items_array(em: Emitter, lst: ir.Value, t: ListType) -> tuple[ir.Value, ArrayType]:
    """The items of a list of numbers as a 1-D C array value over the list's own memory (borrowed: valid while
    the list is alive and not appended to), and its type; ``list[bottom]`` (``[]``) as an empty i64 array."""
    item = t.item if isinstance(t.item, ScalarType) else I64
    at = ArrayType(item, 1, "C")
    b = em.b
    data = b.load(_field(b, lst, ITEMS))  # (NULL for [] before its first append: never read, the length is 0)
    return make_array(b, at, data, [length(b, lst)], [ir.Constant(lt.I64, item.itemsize)]), at


def set_item(em: Emitter, lst: ir.Value, t: ListType, index: ir.Value, index_t: Type, value: ir.Value) -> None:
    """``lst[i] = value`` (``value`` already of the item type): the list's reference moves to the new item."""
    b = em.b
    ptr = item_pointer(em, lst, t, index, index_t, "list assignment index out of range")
    old = _load_item(b, ptr, t.item)
    incref(em.ctx, b, value, t.item)
    _store_item(b, value, ptr, t.item)
    decref(em.ctx, b, old, t.item)


def append(em: Emitter, lst: ir.Value, t: ListType, value: ir.Value) -> None:
    """``lst.append(value)`` (``value`` already of the item type), growing the items by doubling."""
    b = em.b
    n = length(b, lst)
    cap_ptr = _field(b, lst, CAP)
    cap = b.load(cap_ptr)
    with b.if_then(b.icmp_signed(">=", n, cap), likely=False):
        doubled = b.mul(cap, ir.Constant(lt.I64, 2))
        new_cap = b.select(
            b.icmp_signed("<", doubled, ir.Constant(lt.I64, _MIN_CAP)), ir.Constant(lt.I64, _MIN_CAP), doubled
        )
        size = b.mul(new_cap, _item_size(b, t.item))
        em.check(b.icmp_signed(">", new_cap, ir.Constant(lt.I64, 1 << 56)), "MemoryError", "list is too big")
        items_ptr = _field(b, lst, ITEMS)
        grown = b.call(_raw(em.ctx, "PyMem_RawRealloc"), [b.load(items_ptr), size])
        em.check(b.icmp_unsigned("==", grown, _NULL), "MemoryError", "cannot allocate memory for a list")
        b.store(grown, items_ptr)
        b.store(new_cap, cap_ptr)
        _set_free(em, lst, t.item)  # (a list made empty, as ``[]`` stored as an item, learns its item type here)
    incref(em.ctx, b, value, t.item)
    _store_item(b, value, b.gep(_items(b, lst, t.item), [n]), t.item)
    b.store(b.add(n, ir.Constant(lt.I64, 1)), _field(b, lst, LEN))


def pop(em: Emitter, lst: ir.Value, t: ListType, index: tuple[ir.Value, Type] | None) -> ir.Value:
    """``lst.pop([i])``: the item, as a new reference (the list's own)."""
    b = em.b
    n = length(b, lst)
    em.check(b.icmp_signed("==", n, ir.Constant(lt.I64, 0)), "IndexError", "pop from empty list")
    last = b.sub(n, ir.Constant(lt.I64, 1))
    items = _items(b, lst, t.item)
    if index is None:
        i = last
    else:
        i = _index(em, lst, index[0], index[1], n, "pop index out of range")
    value = _load_item(b, b.gep(items, [i]), t.item)
    if index is not None:  # the items after it move down by one
        memmove = em.ctx.declare(
            "llvm.memmove.p0i8.p0i8.i64", ir.FunctionType(ir.VoidType(), [lt.PTR, lt.PTR, lt.I64, lt.I1])
        )
        size = _item_size(b, t.item)
        dst = b.bitcast(b.gep(items, [i]), lt.PTR)
        src = b.bitcast(b.gep(items, [b.add(i, ir.Constant(lt.I64, 1))]), lt.PTR)
        b.call(memmove, [dst, src, b.mul(b.sub(last, i), size), ir.Constant(lt.I1, 0)])
    b.store(last, _field(b, lst, LEN))
    return value


def check_unpack(em: Emitter, n: ir.Value, count: int) -> None:
    """``a, b = x`` of a list or a 1-D array of ``n`` items: ``ValueError`` with Python's messages unless
    ``n == count``."""
    b = em.b
    em.check(
        b.icmp_signed(">", n, ir.Constant(lt.I64, count)), "ValueError", f"too many values to unpack (expected {count})"
    )
    for got in range(count):
        em.check(
            b.icmp_signed("==", n, ir.Constant(lt.I64, got)),
            "ValueError",
            f"not enough values to unpack (expected {count}, got {got})",
        )


# ------------------------------------------------------------------------------------------ sorting


def _sort_function(ctx: ModuleContext, item: ScalarType) -> ir.Function:
    """``void aot_list_sort…(T* items, T* scratch, i64 n)``: a stable bottom-up merge sort by ``<`` (Python's
    order: an item moves before an earlier one only when it is smaller), ``items`` sorted in place."""
    name = "aot_list_sort_" + hashlib.sha256(str(item).encode()).hexdigest()[:12]
    existing = ctx.module.globals.get(name)
    if existing is not None:
        assert isinstance(existing, ir.Function)
        return existing
    mt = item_memory_type(item)
    fn = ir.Function(ctx.module, ir.FunctionType(ir.VoidType(), [mt.as_pointer(), mt.as_pointer(), lt.I64]), name)
    fn.linkage = "internal"
    items, scratch, n = fn.args
    names = ("entry", "outer", "pass", "inner", "run", "merge", "pick", "bounds", "compare", "right", "left")
    blk = {s: fn.append_basic_block(s) for s in (*names, "next", "advance", "swap", "done", "copy", "exit")}
    b = ir.IRBuilder(blk["entry"])
    src, dst = b.alloca(mt.as_pointer()), b.alloca(mt.as_pointer())
    width, i, p, q, k = (b.alloca(lt.I64) for _ in range(5))
    one = ir.Constant(lt.I64, 1)
    b.store(items, src)
    b.store(scratch, dst)
    b.store(one, width)
    b.branch(blk["outer"])

    def smaller(x: ir.Value, y: ir.Value) -> ir.Value:
        if item.is_float:
            return b.fcmp_ordered("<", x, y)
        return b.icmp_signed("<", x, y) if item.is_signed else b.icmp_unsigned("<", x, y)

    def least(x: ir.Value, y: ir.Value) -> ir.Value:
        return b.select(b.icmp_signed("<", x, y), x, y)

    b.position_at_end(blk["outer"])  # while width < n: a pass merging pairs of runs of that width
    w = b.load(width)
    b.cbranch(b.icmp_signed("<", w, n), blk["pass"], blk["done"])
    b.position_at_end(blk["pass"])
    b.store(ir.Constant(lt.I64, 0), i)
    b.branch(blk["inner"])
    b.position_at_end(blk["inner"])  # each pair [lo, mid) [mid, hi), from src into dst
    lo = b.load(i)
    b.cbranch(b.icmp_signed("<", lo, n), blk["run"], blk["swap"])
    b.position_at_end(blk["run"])
    mid = least(b.add(lo, w), n)
    hi = least(b.add(mid, w), n)
    s, d = b.load(src), b.load(dst)
    b.store(lo, p)
    b.store(mid, q)
    b.store(lo, k)
    b.branch(blk["merge"])
    b.position_at_end(blk["merge"])
    kv = b.load(k)
    b.cbranch(b.icmp_signed("<", kv, hi), blk["pick"], blk["advance"])
    b.position_at_end(blk["pick"])  # the left run's item unless it is used up or the right one is smaller
    pv, qv = b.load(p), b.load(q)
    b.cbranch(b.icmp_signed(">=", pv, mid), blk["right"], blk["bounds"])
    b.position_at_end(blk["bounds"])
    b.cbranch(b.icmp_signed(">=", qv, hi), blk["left"], blk["compare"])
    b.position_at_end(blk["compare"])
    b.cbranch(smaller(b.load(b.gep(s, [qv])), b.load(b.gep(s, [pv]))), blk["right"], blk["left"])
    for side, at, slot in (("right", qv, q), ("left", pv, p)):
        b.position_at_end(blk[side])
        b.store(b.load(b.gep(s, [at])), b.gep(d, [kv]))
        b.store(b.add(at, one), slot)
        b.branch(blk["next"])
    b.position_at_end(blk["next"])
    b.store(b.add(kv, one), k)
    b.branch(blk["merge"])
    b.position_at_end(blk["advance"])
    b.store(hi, i)
    b.branch(blk["inner"])
    b.position_at_end(blk["swap"])  # the merged runs are the next pass's source
    old_src = b.load(src)
    b.store(b.load(dst), src)
    b.store(old_src, dst)
    b.store(b.add(w, w), width)
    b.branch(blk["outer"])
    b.position_at_end(blk["done"])  # sorted in the scratch block: copied back
    final = b.load(src)
    b.cbranch(b.icmp_unsigned("!=", final, items), blk["copy"], blk["exit"])
    b.position_at_end(blk["copy"])
    b.call(_memcpy(ctx), [b.bitcast(items, lt.PTR), b.bitcast(final, lt.PTR), b.mul(n, _item_size(b, item)), _FALSE])
    b.branch(blk["exit"])
    b.position_at_end(blk["exit"])
    b.ret_void()
    return fn


_FALSE = ir.Constant(lt.I1, 0)
_NAN_SORT = (
    "sorting a list holding NaN is not supported in compiled code (Python's order then depends on its algorithm)"
)


def _memcpy(ctx: ModuleContext) -> ir.Function:
    return ctx.declare("llvm.memcpy.p0i8.p0i8.i64", ir.FunctionType(ir.VoidType(), [lt.PTR, lt.PTR, lt.I64, lt.I1]))


def _no_nan(em: Emitter, lst: ir.Value, t: ListType) -> None:
    """A list of floats holding a NaN cannot be sorted: ``ValueError`` (Python's order with a NaN depends on
    where its algorithm compares it, which no other sort reproduces)."""
    b = em.b
    if isinstance(t.item, ScalarType) and t.item.is_float:
        items = _items(b, lst, t.item)

        def check(k: ir.Value) -> None:
            x = b.load(b.gep(items, [k]))
            em.check(b.fcmp_unordered("uno", x, x), "ValueError", _NAN_SORT)

        loops.counted_loop(em.b, ir.Constant(lt.I64, 0), length(b, lst), check, "sortnan")


def sort(em: Emitter, lst: ir.Value, t: ListType, owned: bool = False) -> None:
    """``lst.sort()`` of numbers (``owned``: ``lst`` is a new reference of the caller's, released if the sort
    fails)."""
    b = em.b
    item = t.item
    assert isinstance(item, ScalarType)
    if not owned:
        _no_nan(em, lst, t)
    n = length(b, lst)
    items = _items(b, lst, item)
    scratch = b.call(_raw(em.ctx, "PyMem_RawMalloc"), [b.mul(n, _item_size(b, item))])
    failed = b.icmp_unsigned("==", scratch, _NULL)
    if owned:
        with b.if_then(failed, likely=False):
            decref(em.ctx, b, lst, t)
    em.check(failed, "MemoryError", "cannot allocate memory for a sort")
    b.call(_sort_function(em.ctx, item), [items, b.bitcast(scratch, items.type), n])
    b.call(_raw(em.ctx, "PyMem_RawFree"), [scratch])


def reverse(em: Emitter, lst: ir.Value, t: ListType) -> None:
    """``lst.reverse()``: items ``i`` and ``n - 1 - i`` swap places (the list keeps its references)."""
    b = em.b
    n = length(b, lst)
    items = _items(b, lst, t.item)

    def swap(i: ir.Value) -> None:
        p, q = b.gep(items, [i]), b.gep(items, [b.sub(b.sub(n, i), ir.Constant(lt.I64, 1))])
        x, y = b.load(p), b.load(q)
        b.store(y, p)
        b.store(x, q)

    loops.counted_loop(em.b, ir.Constant(lt.I64, 0), b.sdiv(n, ir.Constant(lt.I64, 2)), swap, "reverse")


def slice_copy(em: Emitter, lst: ir.Value, t: ListType, first: ir.Value, step: ir.Value, count: ir.Value) -> ir.Value:
    """``lst[start:stop:step]``, its items ``first``, ``first + step`` … (``count`` of them: Python's slice
    semantics, worked out by ``aot.codegen.views.list_slice``): a new list (a new reference) holding another
    reference to each item taken."""
    b = em.b
    header = b.call(alloc_function(em.ctx), [ir.Constant(lt.I64, 24)])
    em.check(b.icmp_unsigned("==", header, _NULL), "MemoryError", "cannot allocate memory for a list")
    cap = b.select(b.icmp_signed(">", count, ir.Constant(lt.I64, 0)), count, ir.Constant(lt.I64, 1))
    data = b.call(_raw(em.ctx, "PyMem_RawMalloc"), [b.mul(cap, _item_size(b, t.item))])
    failed = b.icmp_unsigned("==", data, _NULL)
    with b.if_then(failed, likely=False):
        b.call(_raw(em.ctx, "PyMem_RawFree"), [header])
    em.check(failed, "MemoryError", "cannot allocate memory for a list")
    _set_free(em, header, t.item)
    b.store(count, _field(b, header, LEN))
    b.store(cap, _field(b, header, CAP))
    b.store(data, _field(b, header, ITEMS))
    source, target = _items(b, lst, t.item), _items(b, header, t.item)

    def take(i: ir.Value) -> None:
        item = _load_item(b, b.gep(source, [b.add(first, b.mul(i, step))]), t.item)
        incref(em.ctx, b, item, t.item)
        _store_item(b, item, b.gep(target, [i]), t.item)

    loops.counted_loop(em.b, ir.Constant(lt.I64, 0), count, take, "listslice")
    return header


def sorted_copy(em: Emitter, lst: ir.Value, t: ListType) -> ir.Value:
    """``sorted(lst)`` of numbers: a new list (a new reference) of the items, sorted (``sort``)."""
    b = em.b
    _no_nan(em, lst, t)
    n = length(b, lst)
    size = b.mul(n, _item_size(b, t.item))
    header = b.call(alloc_function(em.ctx), [ir.Constant(lt.I64, 24)])
    em.check(b.icmp_unsigned("==", header, _NULL), "MemoryError", "cannot allocate memory for a list")
    data = b.call(_raw(em.ctx, "PyMem_RawMalloc"), [size])
    failed = b.icmp_unsigned("==", data, _NULL)
    with b.if_then(failed, likely=False):
        b.call(_raw(em.ctx, "PyMem_RawFree"), [header])
    em.check(failed, "MemoryError", "cannot allocate memory for a list")
    b.call(_memcpy(em.ctx), [data, b.bitcast(_items(b, lst, t.item), lt.PTR), size, _FALSE])
    _set_free(em, header, t.item)
    b.store(n, _field(b, header, LEN))
    b.store(n, _field(b, header, CAP))
    b.store(data, _field(b, header, ITEMS))
    sort(em, header, t, owned=True)
    return header


# ------------------------------------------------------------------------------------ np.array(lst)


def to_array(em: Emitter, lst: ir.Value, t: ListType, result: ArrayType) -> ir.Value:
    """``np.array(lst)``: a new C-contiguous array; nested lists and arrays must all have one shape
    (``ValueError`` otherwise, as NumPy's inhomogeneous shape). The shape is taken from the first item at
    each level (an empty list gives zeros from there on)."""
    b = em.b
    zero = ir.Constant(lt.I64, 0)
    dims: list[ir.Value] = []
    probe, pt = lst, t  # type: tuple[ir.Value, Type]  # follow the first items down to the scalars
    while isinstance(pt, ListType):
        n = length(b, probe)
        dims.append(n)
        if not isinstance(pt.item, (ListType, ArrayType)):
            break
        with b.goto_entry_block():
            slot = b.alloca(value_type(pt.item))
        b.store(ir.Constant(value_type(pt.item), None), slot)
        with b.if_then(b.icmp_signed(">", n, zero)):
            b.store(_load_item(b, b.gep(_items(b, probe, pt.item), [zero]), pt.item), slot)
        probe, pt = b.load(slot), pt.item
        if isinstance(pt, ArrayType):  # (a zeroed array value: its shape reads as zeros)
            shape = b.extract_value(probe, SHAPE)
            dims.extend(b.extract_value(shape, k) for k in range(pt.ndim))
        elif isinstance(pt, ListType):  # (an empty outer list: no first item, its length reads as 0)
            has = b.icmp_signed(">", n, zero)
            probe = b.select(has, probe, b.call(_empty_list(em.ctx), []))
    arr, _ = allocate(em, result, dims)
    flat_ptr = b.alloca(lt.I64)
    b.store(zero, flat_ptr)
    _copy_items(em, lst, t, dims, 0, arr, result, flat_ptr)
    return arr


def _empty_list(ctx: ModuleContext) -> ir.Function:
    """``ptr aot_list_empty()``: a constant empty payload (length 0) for probing the shape of ``[]``."""
    name = "aot_list_empty"
    existing = ctx.module.globals.get(name)
    if existing is not None:
        assert isinstance(existing, ir.Function)
        return existing
    block_t = ir.ArrayType(lt.I64, HEADER_SIZE // 8 + 3)
    g = ir.GlobalVariable(ctx.module, block_t, name + ".block")
    g.linkage = "internal"
    g.initializer = ir.Constant(block_t, None)
    fn = ir.Function(ctx.module, ir.FunctionType(lt.PTR, []), name)
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.ret(b.bitcast(g, lt.PTR))
    return fn


def _copy_items(
    em: Emitter,
    lst: ir.Value,
    t: ListType,
    dims: list[ir.Value],
    level: int,
    arr: ir.Value,
    result: ArrayType,
    flat_ptr: ir.Value,
) -> None:
    b = em.b
    em.check(
        b.icmp_signed("!=", length(b, lst), dims[level]),
        "ValueError",
        "setting an array element with a sequence: the lists have an inhomogeneous shape",
    )
    data = b.extract_value(arr, DATA)

    def body(i: ir.Value) -> None:
        item = _load_item(b, b.gep(_items(b, lst, t.item), [i]), t.item)
        if isinstance(t.item, ListType):
            _copy_items(em, item, t.item, dims, level + 1, arr, result, flat_ptr)
        elif isinstance(t.item, ArrayType):
            _copy_array(em, item, t.item, dims[level + 1 :], data, result, flat_ptr)
        else:
            flat = b.load(flat_ptr)
            value = coerce(em, item, t.item, result.dtype)
            if result.dtype.kind == "b":
                value = b.zext(value, lt.I8)
            b.store(value, b.gep(data, [flat], inbounds=True))
            b.store(b.add(flat, ir.Constant(lt.I64, 1)), flat_ptr)

    loops.counted_loop(em.b, ir.Constant(lt.I64, 0), dims[level], body, f"tolist{level}")


def _copy_array(
    em: Emitter, src: ir.Value, st: ArrayType, dims: list[ir.Value], data: ir.Value, result: ArrayType, flat_ptr
) -> None:
    b = em.b
    shape = b.extract_value(src, SHAPE)
    for k in range(st.ndim):
        em.check(
            b.icmp_signed("!=", b.extract_value(shape, k), dims[k]),
            "ValueError",
            "setting an array element with a sequence: the arrays have an inhomogeneous shape",
        )
    base = b.bitcast(b.extract_value(src, DATA), lt.PTR)
    strides = b.extract_value(src, STRIDES)
    elem = item_memory_type(st.dtype).as_pointer()

    def level(k: int, offset: ir.Value) -> None:
        if k == st.ndim:
            flat = b.load(flat_ptr)
            b.store(b.load(b.bitcast(b.gep(base, [offset]), elem)), b.gep(data, [flat], inbounds=True))
            b.store(b.add(flat, ir.Constant(lt.I64, 1)), flat_ptr)
            return
        stride = b.extract_value(strides, k)
        loops.counted_loop(
            em.b, ir.Constant(lt.I64, 0), dims[k], lambda i: level(k + 1, b.add(offset, b.mul(i, stride))), "arrcp"
        )

    level(0, ir.Constant(lt.I64, 0))


# ------------------------------------------------------------------------------------------- intrinsics


def lower(em: Emitter, fn: Intrinsic, args: list[ir.Value], argtypes: list[Type], result: Type, span: Span) -> ir.Value:
    """The value of a list intrinsic other than ``append`` (``function.py`` stores it as a new reference)."""
    if fn is Intrinsic.LIST_NEW:
        assert isinstance(result, ListType)
        return new_list(em, result, list(zip(args, argtypes)), span)
    lt_ = argtypes[0]
    assert isinstance(lt_, ListType)
    if fn is Intrinsic.LIST_POP:
        return pop(em, args[0], lt_, (args[1], argtypes[1]) if len(args) > 1 else None)
    if fn is Intrinsic.LIST_SORTED:
        return sorted_copy(em, args[0], lt_)
    assert fn is Intrinsic.LIST_TO_ARRAY and isinstance(result, ArrayType)
    return to_array(em, args[0], lt_, result)


# ------------------------------------------------------------------------------------------- boxing


def box_list(
    ctx: ModuleContext,
    b: ir.IRBuilder,
    lst: ir.Value,
    t: ListType,
    box: Callable[[ModuleContext, ir.IRBuilder, ir.Value, Type], ir.Value],
    api_fn: Callable[..., ir.Function],
) -> ir.Value:
    """A new Python list of the items (each boxed), taking over the reference ``lst`` is (NULL with an
    exception set on failure)."""
    fn = b.function
    n = length(b, lst)
    if t.item is BOTTOM:  # (a list never stored into: always empty)
        out = b.call(api_fn("PyList_New", lt.PTR, lt.I64), [ir.Constant(lt.I64, 0)])
        decref(ctx, b, lst, t)
        return out
    new = api_fn("PyList_New", lt.PTR, lt.I64)
    set_item = api_fn("PyList_SetItem", lt.I32, lt.PTR, lt.I64, lt.PTR)
    py_decref = api_fn("Py_DecRef", ir.VoidType(), lt.PTR)
    result = b.alloca(lt.PTR)
    out = b.call(new, [n])
    b.store(out, result)
    pre = b.block
    head, body, fail, done = (fn.append_basic_block(f"boxlist.{s}") for s in ("head", "body", "fail", "done"))
    b.cbranch(b.icmp_unsigned("==", out, _NULL), done, head)
    b.position_at_end(head)
    i = b.phi(lt.I64)
    i.add_incoming(ir.Constant(lt.I64, 0), pre)
    b.cbranch(b.icmp_signed("<", i, n), body, done)
    b.position_at_end(body)
    item = _load_item(b, b.gep(_items(b, lst, t.item), [i]), t.item)
    incref(ctx, b, item, t.item)  # (boxing an array or a list takes over a reference)
    obj = box(ctx, b, item, t.item)
    next_i = b.add(i, ir.Constant(lt.I64, 1))
    stored = fn.append_basic_block("boxlist.set")
    b.cbranch(b.icmp_unsigned("==", obj, _NULL), fail, stored)
    b.position_at_end(stored)
    b.call(set_item, [out, i, obj])
    i.add_incoming(next_i, stored)
    b.branch(head)
    b.position_at_end(fail)
    b.call(py_decref, [out])
    b.store(_NULL, result)
    b.branch(done)
    b.position_at_end(done)
    decref(ctx, b, lst, t)
    return b.load(result)
