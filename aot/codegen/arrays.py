"""Array values, the memory compiled code owns, and the intrinsics that allocate it.

An array value is ``{data, [n x i64] shape, [n x i64] byte strides, owner, parent}`` (``types.value_type``):

- ``owner`` points at the header of memory compiled code allocated, or is NULL for memory borrowed from a
  Python argument. The header is ``{i64 refcount, ptr free}``: ``free(header)`` releases the block, whose
  data follows the 16-byte header (so the data is 16-byte aligned). Blocks come from ``PyMem_RawMalloc``
  (thread-safe without the GIL, and traced by ``tracemalloc``, which is how the tests count live memory).
- ``parent`` is the Python object the memory was borrowed from (a borrowed reference, alive while the call
  runs), or NULL: boxing a returned borrowed array keeps the parent alive (``return a`` gives the same memory).

Every array value is built by ``make_array`` — views must be too, taking ``owner`` and ``parent`` from their
base (and ``incref``-ing nothing: the refcount discipline below counts references held by variables, not views
being built).

The refcount functions (``aot_nrt_incref``/``aot_nrt_decref``/``aot_nrt_alloc``) are emitted as LLVM IR into
each module with internal linkage, so a prebuilt library is self-contained and nothing is bound at load; a
block allocated by one module is freed by any other through the ``free`` pointer in its header.

Threads: a block's count is touched by one thread at a time everywhere but in the body of a ``prange`` loop.
A call borrows its Python arguments (their owner is NULL), a block handed to Python is released by its
object's ``tp_dealloc`` under the GIL, and a call in a ``prange`` body is given only arrays made in its
iteration (``aot.analysis.parallel``), so such counts are plain loads and stores, which LLVM folds (an
increment and its decrement cancel: a view made in a serial loop costs nothing). The outlined body of a
``prange`` loop (``aot.codegen.parallel``), whose views of shared arrays count their owner's block from every
thread at once, calls the atomic ones instead (``count_atomically``: ``aot_nrt_incref_atomic``, an
``atomicrmw add`` (monotonic), and ``aot_nrt_decref_atomic``, an ``atomicrmw sub`` (acq_rel: the thread
that frees the block sees every other thread's writes to it)), but for the variables that only ever hold
arrays made in the iteration (``ParallelLoop.own``), and none for views of shared arrays (``borrowed``).

The discipline (``function.py``): a variable's slot holds one reference; storing into a slot increfs the new
value (unless it is a new reference already: an allocation, a call's result) and decrefs the old one; every
slot is decref'd when the function returns, normally or with an error. Arguments are borrowed by the callee
(it increfs them into its slots); a result is returned as a new reference the caller owns, and the CPython
wrapper hands that reference to the Python object it boxes (``arraybox.py``). Tuples holding arrays count
each array item; a list (``lists.py``) is a block of this allocator, counted the same way. Only the CPU
allocates: on a target without Python exceptions (``ptx``) allocation is a
``CompileError`` and nothing is counted (every owner there is NULL).
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from llvmlite import ir

from ..diagnostics import CompileError, Diagnostic, Span
from ..ir.ops import Intrinsic
from ..types import BOOL, F64, I64, NONE, ArrayType, ListType, OptionalType, ScalarType, TupleType, Type
from . import loops, sizes
from . import types as lt
from .context import Emitter, ModuleContext
from .numerics import coerce
from .types import memory_type, value_type

DATA, SHAPE, STRIDES, OWNER, PARENT = range(5)
HEADER_SIZE = 16
_NULL = ir.Constant(lt.PTR, None)


# ------------------------------------------------------------------------------------------- values


def make_array(
    b: ir.IRBuilder,
    t: ArrayType,
    data: ir.Value,
    shape: ir.Value | list[ir.Value],
    strides: ir.Value | list[ir.Value],
    owner: ir.Value | None = None,
    parent: ir.Value | None = None,
) -> ir.Value:
    """The one constructor of array values: ``shape``/``strides`` as ``[n x i64]`` values or lists of i64;
    ``owner``/``parent`` NULL when not given. Takes no reference."""
    out = ir.Constant(value_type(t), ir.Undefined)
    want = memory_type(t.dtype).as_pointer()
    if data.type != want:
        data = b.bitcast(data, want) if data.type.addrspace == want.addrspace else b.addrspacecast(data, want)
    out = b.insert_value(out, data, DATA)
    out = b.insert_value(out, _dims(b, t.ndim, shape), SHAPE)
    out = b.insert_value(out, _dims(b, t.ndim, strides), STRIDES)
    out = b.insert_value(out, _NULL if owner is None else b.bitcast(owner, lt.PTR), OWNER)
    return b.insert_value(out, _NULL if parent is None else b.bitcast(parent, lt.PTR), PARENT)


def _dims(b: ir.IRBuilder, n: int, dims: ir.Value | list[ir.Value]) -> ir.Value:
    if not isinstance(dims, list):
        return dims
    out = ir.Constant(ir.ArrayType(lt.I64, n), ir.Undefined)
    for k, d in enumerate(dims):
        out = b.insert_value(out, d, k)
    return out


def shape_of(b: ir.IRBuilder, arr: ir.Value, ndim: int) -> list[ir.Value]:
    shape = b.extract_value(arr, SHAPE)
    return [b.extract_value(shape, k) for k in range(ndim)]


def owns_references(t: Type) -> bool:
    """Whether values of ``t`` hold counted references (arrays, lists, and tuples holding one)."""
    if isinstance(t, (ArrayType, ListType)):
        return True
    if isinstance(t, OptionalType):  # (an array that may be None: None's value is all zeros, a NULL owner)
        return owns_references(t.inner)
    return isinstance(t, TupleType) and any(owns_references(i) for i in t.items)


def refcounted(ctx: ModuleContext) -> bool:
    """Whether code for this module's target counts references (only targets with the host runtime,
    ``Target.has_host_runtime``, run the allocator; elsewhere every owner is NULL)."""
    return ctx.target.has_host_runtime


# ----------------------------------------------------------------------------------- the allocator


def _refcount_ptr(b: ir.IRBuilder, header: ir.Value) -> ir.Value:
    return b.bitcast(header, lt.I64.as_pointer())


def incref_function(ctx: ModuleContext, atomic: bool = False) -> ir.Function:
    """``void aot_nrt_incref(ptr header)`` (NULL: nothing); ``aot_nrt_incref_atomic`` for several threads."""
    name = "aot_nrt_incref_atomic" if atomic else "aot_nrt_incref"
    fn, b = ctx.internal_function(name, ir.FunctionType(ir.VoidType(), [lt.PTR]))
    if b is not None:
        fn.attributes.add("alwaysinline")
        (header,) = fn.args
        with b.if_then(b.icmp_unsigned("!=", header, _NULL)):
            count = _refcount_ptr(b, header)
            if atomic:
                b.atomic_rmw("add", count, ir.Constant(lt.I64, 1), "monotonic")
            else:
                b.store(b.add(b.load(count), ir.Constant(lt.I64, 1)), count)
        b.ret_void()
    return fn


def decref_function(ctx: ModuleContext, atomic: bool = False) -> ir.Function:
    """``void aot_nrt_decref(ptr header)``: the last reference frees the block through its header;
    ``aot_nrt_decref_atomic`` for several threads."""
    name = "aot_nrt_decref_atomic" if atomic else "aot_nrt_decref"
    fn, b = ctx.internal_function(name, ir.FunctionType(ir.VoidType(), [lt.PTR]))
    if b is not None:
        (header,) = fn.args
        with b.if_then(b.icmp_unsigned("!=", header, _NULL)):
            count = _refcount_ptr(b, header)
            if atomic:
                old = b.atomic_rmw("sub", count, ir.Constant(lt.I64, 1), "acq_rel")
            else:
                old = b.load(count)
                b.store(b.sub(old, ir.Constant(lt.I64, 1)), count)
            with b.if_then(b.icmp_signed("==", old, ir.Constant(lt.I64, 1)), likely=False):
                free_t = ir.FunctionType(ir.VoidType(), [lt.PTR])
                slot = b.bitcast(b.gep(header, [ir.Constant(lt.I64, 8)]), free_t.as_pointer().as_pointer())
                b.call(b.load(slot), [header])
        b.ret_void()
    return fn


def count_atomically(ctx: ModuleContext, llfn: ir.Function, keep: Collection[int] = ()) -> None:
    """Make every count ``llfn`` changes atomic (the outlined body of a ``prange`` loop: its chunks run at once)
    but the calls in ``keep`` (their ``id``: counts of arrays made in the iteration, which no other thread sees)."""
    swap = {
        incref_function(ctx).name: incref_function(ctx, atomic=True),
        decref_function(ctx).name: decref_function(ctx, atomic=True),
    }
    for block in llfn.blocks:
        for instr in block.instructions:
            name = getattr(instr, "callee", None) and getattr(instr.callee, "name", None)
            if isinstance(instr, ir.CallInstr) and name in swap and id(instr) not in keep:
                instr.replace_callee(swap[name])


def alloc_function(ctx: ModuleContext) -> ir.Function:
    """``ptr aot_nrt_alloc(i64 nbytes)``: a block with one reference, or NULL when memory is exhausted."""
    fn, b = ctx.internal_function("aot_nrt_alloc", ir.FunctionType(lt.PTR, [lt.I64]))
    if b is not None:
        (nbytes,) = fn.args
        malloc = ctx.declare("PyMem_RawMalloc", ir.FunctionType(lt.PTR, [lt.I64]))
        free = ctx.declare("PyMem_RawFree", ir.FunctionType(ir.VoidType(), [lt.PTR]))
        header = b.call(malloc, [b.add(nbytes, ir.Constant(lt.I64, HEADER_SIZE))])
        with b.if_then(b.icmp_unsigned("!=", header, _NULL)):
            b.store(ir.Constant(lt.I64, 1), _refcount_ptr(b, header))
            slot = b.bitcast(b.gep(header, [ir.Constant(lt.I64, 8)]), lt.PTR.as_pointer())
            b.store(free.bitcast(lt.PTR), slot)
        b.ret(header)
    return fn


def incref(ctx: ModuleContext, b: ir.IRBuilder, value: ir.Value, t: Type) -> list[ir.CallInstr]:
    """Count one more reference to every array in ``value`` (the calls made)."""
    return _each_owner(ctx, b, value, t, incref_function)


def decref(ctx: ModuleContext, b: ir.IRBuilder, value: ir.Value, t: Type) -> list[ir.CallInstr]:
    """Drop one reference to every array in ``value`` (the calls made)."""
    return _each_owner(ctx, b, value, t, decref_function)


def _each_owner(
    ctx: ModuleContext, b: ir.IRBuilder, value: ir.Value, t: Type, get: Callable[[ModuleContext], ir.Function]
) -> list[ir.CallInstr]:
    if isinstance(t, ArrayType):
        return [b.call(get(ctx), [b.extract_value(value, OWNER)])]
    if isinstance(t, ListType):  # (a list is its block's header: aot.codegen.lists)
        return [b.call(get(ctx), [value])]
    calls: list[ir.CallInstr] = []
    if isinstance(t, TupleType):
        for i, item in enumerate(t.items):
            if owns_references(item):
                calls += _each_owner(ctx, b, b.extract_value(value, i), item, get)
    elif isinstance(t, OptionalType) and owns_references(t.inner):
        calls += _each_owner(ctx, b, b.extract_value(value, 1), t.inner, get)  # (None holds NULL owners: no-ops)
    return calls


# --------------------------------------------------------------------------------- allocation


def allocate(em: Emitter, t: ArrayType, dims: list[ir.Value]) -> tuple[ir.Value, ir.Value]:
    """A new C-contiguous array of shape ``dims`` (uninitialised), and its byte size. Raises ``ValueError``
    for a negative dimension and ``MemoryError`` when the block cannot be had."""
    b = em.b
    ctx = em.ctx
    for d in dims:
        em.check(b.icmp_signed("<", d, ir.Constant(lt.I64, 0)), "ValueError", "negative dimensions are not allowed")
    em.check(sizes.shape_overflows(em, dims, t.dtype.itemsize), "ValueError", sizes.TOO_BIG)
    nbytes = b.mul(_element_count(b, dims), ir.Constant(lt.I64, t.dtype.itemsize))  # (fits: checked above)
    em.check(
        b.icmp_unsigned(">", nbytes, ir.Constant(lt.I64, 1 << 62)), "MemoryError", "cannot allocate memory for an array"
    )
    header = b.call(alloc_function(ctx), [nbytes])
    em.check(b.icmp_unsigned("==", header, _NULL), "MemoryError", "cannot allocate memory for an array")
    data = b.gep(header, [ir.Constant(lt.I64, HEADER_SIZE)])
    strides: list[ir.Value] = [ir.Constant(lt.I64, 0)] * len(dims)
    step: ir.Value = ir.Constant(lt.I64, t.dtype.itemsize)
    for k in reversed(range(len(dims))):
        strides[k] = step
        step = b.mul(step, dims[k])
    return make_array(b, t, data, dims, strides, owner=header), nbytes


def _element_count(b: ir.IRBuilder, dims: list[ir.Value]) -> ir.Value:
    n: ir.Value = ir.Constant(lt.I64, 1)
    for d in dims:
        n = b.mul(n, d)
    return n


def store_element(em: Emitter, arr: ir.Value, t: ArrayType, index: ir.Value, value: ir.Value) -> None:
    """``arr.flat[index] = value`` on a C-contiguous array (``value`` already of the element type)."""
    b = em.b
    if t.dtype.kind == "b":
        value = b.zext(value, lt.I8)
    b.store(value, b.gep(b.extract_value(arr, DATA), [index], inbounds=True))


def _fill(em: Emitter, arr: ir.Value, t: ArrayType, dims: list[ir.Value], value: ir.Value) -> None:
    n = _element_count(em.b, dims)
    loops.counted_loop(em.b, ir.Constant(lt.I64, 0), n, lambda i: store_element(em, arr, t, i, value), "fill")


def zero(em: Emitter, arr: ir.Value, nbytes: ir.Value) -> None:
    b = em.b
    memset = em.ctx.declare("llvm.memset.p0i8.i64", ir.FunctionType(ir.VoidType(), [lt.PTR, lt.I8, lt.I64, lt.I1]))
    data = b.bitcast(b.extract_value(arr, DATA), lt.PTR)
    b.call(memset, [data, ir.Constant(lt.I8, 0), nbytes, ir.Constant(lt.I1, 0)])


def _one(t: ScalarType) -> ir.Constant:
    if t.kind == "b":
        return ir.Constant(lt.I1, 1)
    if t.is_float:
        return ir.Constant(value_type(t), 1.0)
    return ir.Constant(value_type(t), 1)


def lower_allocation(
    em: Emitter, fn: Intrinsic, args: list[ir.Value], argtypes: list[Type], result: Type, span: Span
) -> ir.Value:
    """A new array (a new reference) for an allocation (``aot/intrinsics/arrays.py``: ``np.zeros`` …, ``a.copy()``)."""
    if not refcounted(em.ctx):
        raise CompileError(
            [
                Diagnostic(
                    span,
                    f"{fn.value}() cannot run on the {em.ctx.target.owner} target: kernels cannot "
                    "allocate arrays; pass the array in as an argument (or use aot.gpu.shared_array)",
                )
            ]
        )
    assert isinstance(result, ArrayType)
    b = em.b
    if fn in (Intrinsic.NP_EMPTY, Intrinsic.NP_ZEROS, Intrinsic.NP_ONES, Intrinsic.NP_FULL):
        dims = _shape_dims(em, args[0], argtypes[0])
    elif fn is Intrinsic.NP_EYE:
        n = coerce(em, args[0], argtypes[0], I64)
        m = n if len(args) < 2 or argtypes[1] == NONE else coerce(em, args[1], argtypes[1], I64)
        dims = [n, m]
    elif fn in (Intrinsic.NP_ARANGE, Intrinsic.NP_LINSPACE):
        return _ranges(em, fn, args, argtypes, result)
    else:  # *_like and copy: the shape of the array argument
        src_t = argtypes[0]
        assert isinstance(src_t, ArrayType)
        dims = shape_of(b, args[0], src_t.ndim)
    if fn is Intrinsic.ARRAY_FLATTEN:  # the elements in C order, into one axis
        total = ir.Constant(lt.I64, 1)
        for n in dims:
            total = b.mul(total, n)
        arr, _ = allocate(em, result, [total])
        src_t = argtypes[0]
        assert isinstance(src_t, ArrayType)
        copy(em, args[0], src_t, arr, result, dims)
        return arr
    arr, nbytes = allocate(em, result, dims)
    if fn in (Intrinsic.NP_ZEROS, Intrinsic.NP_ZEROS_LIKE, Intrinsic.NP_EYE):
        zero(em, arr, nbytes)
    elif fn in (Intrinsic.NP_ONES, Intrinsic.NP_ONES_LIKE):
        _fill(em, arr, result, dims, _one(result.dtype))
    elif fn in (Intrinsic.NP_FULL, Intrinsic.NP_FULL_LIKE):
        _fill(em, arr, result, dims, coerce(em, args[1], argtypes[1], result.dtype))
    elif fn is Intrinsic.ARRAY_COPY:
        src_t = argtypes[0]
        assert isinstance(src_t, ArrayType)
        copy(em, args[0], src_t, arr, result, dims)
    if fn is Intrinsic.NP_EYE:
        _eye_diagonal(em, arr, result, dims, args, argtypes)
    return arr


def _shape_dims(em: Emitter, shape: ir.Value, t: Type) -> list[ir.Value]:
    if isinstance(t, TupleType):
        return [coerce(em, em.b.extract_value(shape, k), it, I64) for k, it in enumerate(t.items)]
    return [coerce(em, shape, t, I64)]


def copy(em: Emitter, src: ir.Value, src_t: ArrayType, dst: ir.Value, dst_t: ArrayType, dims: list[ir.Value]) -> None:
    """Element by element in C order: one loop per dimension, the source read through its strides."""
    b = em.b
    data = b.bitcast(b.extract_value(src, DATA), lt.PTR)
    strides = b.extract_value(src, STRIDES)
    elem_ptr = memory_type(src_t.dtype).as_pointer()

    def level(k: int, offset: ir.Value, flat: ir.Value) -> None:
        if k == src_t.ndim:
            value = b.load(b.bitcast(b.gep(data, [offset]), elem_ptr))
            b.store(value, b.gep(b.extract_value(dst, DATA), [flat], inbounds=True))
            return
        stride = b.extract_value(strides, k)

        def body(i: ir.Value) -> None:
            level(k + 1, b.add(offset, b.mul(i, stride)), b.add(b.mul(flat, dims[k]), i))

        loops.counted_loop(em.b, ir.Constant(lt.I64, 0), dims[k], body, f"copy{k}")

    level(0, ir.Constant(lt.I64, 0), ir.Constant(lt.I64, 0))


def _eye_diagonal(
    em: Emitter, arr: ir.Value, t: ArrayType, dims: list[ir.Value], args: list[ir.Value], argtypes: list[Type]
) -> None:
    """Ones on the ``k``-th diagonal: rows ``max(0, -k) <= i < min(n, m - k)``."""
    b = em.b
    n, m = dims
    k = coerce(em, args[2], argtypes[2], I64) if len(args) > 2 else ir.Constant(lt.I64, 0)
    zero = ir.Constant(lt.I64, 0)
    start = b.select(b.icmp_signed("<", k, zero), b.neg(k), zero)
    m_minus_k = b.sub(m, k)
    stop = b.select(b.icmp_signed("<", m_minus_k, n), m_minus_k, n)
    one = _one(t.dtype)
    loops.counted_loop(
        em.b, start, stop, lambda i: store_element(em, arr, t, b.add(b.mul(i, m), b.add(i, k)), one), "eye"
    )


def _ranges(em: Emitter, fn: Intrinsic, args: list[ir.Value], argtypes: list[Type], result: ArrayType) -> ir.Value:
    b = em.b
    if fn is Intrinsic.NP_LINSPACE:
        return _linspace(em, args, argtypes, result)
    rt = result.dtype
    if rt.is_float:  # NumPy's rule: the first two values in the dtype, then start + i * (second - first)
        values = [coerce(em, a, t, F64) for a, t in zip(args, argtypes)]
        if len(values) == 1:
            values.insert(0, ir.Constant(lt.F64, 0.0))
        if len(values) == 2:
            values.append(ir.Constant(lt.F64, 1.0))
        start, stop, step = values
        em.check(b.fcmp_ordered("==", step, ir.Constant(lt.F64, 0.0)), "ZeroDivisionError", "division by zero")
        length = b.fdiv(b.fsub(stop, start), step)
        em.check(b.fcmp_unordered("uno", length, length), "ValueError", "arange: cannot compute length")
        length = em.call_intrinsic("llvm.ceil", [length])
        em.check(
            b.fcmp_ordered(">=", length, ir.Constant(lt.F64, 2.0**62)), "ValueError", "Maximum allowed size exceeded"
        )
        positive = b.fcmp_ordered(">", length, ir.Constant(lt.F64, 0.0))
        count = b.select(positive, b.fptosi(length, lt.I64), ir.Constant(lt.I64, 0))
        arr, _ = allocate(em, result, [count])
        first = coerce(em, start, F64, rt)
        delta = b.fsub(coerce(em, b.fadd(start, step), F64, rt), first)

        def body(i: ir.Value) -> None:
            value = b.fadd(first, b.fmul(b.sitofp(i, value_type(rt)), delta))
            at_zero = b.icmp_signed("==", i, ir.Constant(lt.I64, 0))
            store_element(em, arr, result, i, b.select(at_zero, first, value))

        loops.counted_loop(em.b, ir.Constant(lt.I64, 0), count, body, "arange")
        return arr
    ints = [coerce(em, a, t, I64) for a, t in zip(args, argtypes)]
    if len(ints) == 1:
        ints.insert(0, ir.Constant(lt.I64, 0))
    if len(ints) == 2:
        ints.append(ir.Constant(lt.I64, 1))
    start, stop, step = ints
    zero, one = ir.Constant(lt.I64, 0), ir.Constant(lt.I64, 1)
    em.check(b.icmp_signed("==", step, zero), "ZeroDivisionError", "division by zero")
    up = b.icmp_signed(">", step, zero)
    lo, hi = b.select(up, start, stop), b.select(up, stop, start)
    magnitude = b.select(up, step, b.neg(step))
    count = b.add(b.udiv(b.sub(b.sub(hi, lo), one), magnitude), one)
    count = b.select(b.icmp_signed("<", lo, hi), count, zero)
    arr, _ = allocate(em, result, [count])

    def int_body(i: ir.Value) -> None:
        value = coerce(em, b.add(start, b.mul(i, step)), I64, rt)
        store_element(em, arr, result, i, value)

    loops.counted_loop(em.b, zero, count, int_body, "arange")
    return arr


def _linspace(em: Emitter, args: list[ir.Value], argtypes: list[Type], result: ArrayType) -> ir.Value:
    """NumPy's ``linspace``: ``i * step + start`` (``i / div * delta + start`` when the step underflows to 0),
    the last value exactly ``stop`` when the endpoint is included."""
    b = em.b
    start, stop = (coerce(em, a, t, F64) for a, t in zip(args[:2], argtypes[:2]))
    num = coerce(em, args[2], argtypes[2], I64) if len(args) > 2 else ir.Constant(lt.I64, 50)
    endpoint = coerce(em, args[3], argtypes[3], BOOL) if len(args) > 3 else ir.Constant(lt.I1, 1)
    em.check(b.icmp_signed("<", num, ir.Constant(lt.I64, 0)), "ValueError", "Number of samples must be non-negative.")
    arr, _ = allocate(em, result, [num])
    div = b.select(endpoint, b.sub(num, ir.Constant(lt.I64, 1)), num)
    fdiv = b.sitofp(div, lt.F64)
    delta = b.fsub(stop, start)
    step = b.fdiv(delta, fdiv)
    has_div = b.icmp_signed(">", div, ir.Constant(lt.I64, 0))
    step_zero = b.and_(has_div, b.fcmp_ordered("==", step, ir.Constant(lt.F64, 0.0)))
    last = b.sub(num, ir.Constant(lt.I64, 1))
    pin_last = b.and_(endpoint, b.icmp_signed(">", num, ir.Constant(lt.I64, 1)))

    def body(i: ir.Value) -> None:
        fi = b.sitofp(i, lt.F64)
        scaled = b.select(step_zero, b.fmul(b.fdiv(fi, fdiv), delta), b.fmul(fi, b.select(has_div, step, delta)))
        value = b.fadd(scaled, start)
        value = b.select(b.and_(pin_last, b.icmp_signed("==", i, last)), stop, value)
        store_element(em, arr, result, i, coerce(em, value, F64, result.dtype))

    loops.counted_loop(em.b, ir.Constant(lt.I64, 0), num, body, "linspace")
    return arr
