"""The CPython side of compiled code, generated in LLVM IR: argument unboxing, result boxing, wrappers.

For each specialization ``impl`` (``i32 impl(ptr out, args…)``) this emits:

    i32 try_<sym>(PyObject *const *args, i64 nargs, PyObject **result)
        0 → the arguments are not of this specialization's types (nothing was set);
        1 → called: *result is the boxed return value, or NULL with a Python exception set.
    PyObject *fast_<sym>(PyObject *self, PyObject *const *args, Py_ssize_t nargs)   (METH_FASTCALL)
    PyMethodDef def_<sym> = {"name", fast_<sym>, METH_FASTCALL, NULL}

and, once per module, ``aot_dispatch``: the vectorcall function of method objects, which tries the
``try_`` wrappers of the method's dispatch table in order and falls back to a Python callable; and
``aot_bind``, which binds calls with keywords or left-out defaults to every parameter by position first
(the vectorcall of methods with keyword-only parameters; where the others' calls go when no wrapper takes
them and the method has binding words).
Type checks on scalars are pointer compares on ``ob_type`` and float values are read straight from the
object, so a call costs about what a call of a C builtin costs. The layouts read here are in ``aot.abi``.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from .. import abi
from ..types import NONE, ArrayType, ListType, OptionalType, ScalarType, TupleType, Type
from . import interrupt, loops, recursion
from . import types as lt
from .arraybox import box_array
from .arrays import make_array
from .context import ModuleContext
from .lists import box_list
from .types import memory_type, value_type

_TRY_TYPE = ir.FunctionType(lt.I32, [lt.PTR, lt.I64, lt.PTR])
_VECTORCALL_TYPE = ir.FunctionType(lt.PTR, [lt.PTR, lt.PTR, lt.I64, lt.PTR])


def try_function_type() -> ir.FunctionType:
    """The type of ``try_<sym>`` wrappers."""
    return _TRY_TYPE


def vectorcall_function_type() -> ir.FunctionType:
    """The type of ``vc_<sym>`` entries and of the dispatcher (CPython's ``vectorcallfunc``)."""
    return _VECTORCALL_TYPE


def _field(b: ir.IRBuilder, base: ir.Value, offset: int, ty: ir.Type) -> ir.Value:
    ptr = b.gep(b.bitcast(base, lt.PTR), [ir.Constant(lt.I64, offset)])
    return b.load(b.bitcast(ptr, ty.as_pointer()))


class _Api:
    """Declarations of the CPython C API a module uses (resolved by the JIT or the dynamic loader)."""

    def __init__(self, ctx: ModuleContext):
        self.ctx = ctx

    def fn(self, name: str, ret: ir.Type, *args: ir.Type, var_arg: bool = False) -> ir.Function:
        return self.ctx.declare(name, ir.FunctionType(ret, list(args), var_arg=var_arg))

    def type_object(self, name: str) -> ir.Value:
        return self.ctx.global_pointer(name).bitcast(lt.PTR)


def format_ok_function(ctx: ModuleContext) -> ir.Function:
    """``i1 aot_format_ok(ptr fmt, i8 kind)``: a one-item buffer format of kind i/u/f/b (native order)."""
    name = "aot_format_ok"
    existing = ctx.module.globals.get(name)
    if existing is not None:
        return existing
    fn = ir.Function(ctx.module, ir.FunctionType(lt.I1, [lt.PTR, lt.I8]), name)
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block())
    fmt, kind = fn.args
    c0 = b.load(fmt)
    prefixed = b.or_(
        b.or_(
            b.icmp_unsigned("==", c0, ir.Constant(lt.I8, ord("@"))),
            b.icmp_unsigned("==", c0, ir.Constant(lt.I8, ord("="))),
        ),
        b.icmp_unsigned("==", c0, ir.Constant(lt.I8, ord("<"))),
    )
    p = b.select(prefixed, b.gep(fmt, [ir.Constant(lt.I64, 1)]), fmt)
    c = b.load(p)
    single = b.icmp_unsigned("==", b.load(b.gep(p, [ir.Constant(lt.I64, 1)])), ir.Constant(lt.I8, 0))

    def any_of(chars: str) -> ir.Value:
        out: ir.Value = ir.Constant(lt.I1, 0)
        for ch in chars:
            out = b.or_(out, b.icmp_unsigned("==", c, ir.Constant(lt.I8, ord(ch))))
        return out

    ok = ir.Constant(lt.I1, 0)
    for k, chars in (("i", "bhilqn"), ("u", "BHILQN"), ("f", "efd"), ("b", "?")):
        ok = b.select(b.icmp_unsigned("==", kind, ir.Constant(lt.I8, ord(k))), any_of(chars), ok)
    b.ret(b.and_(single, ok))
    return fn


class _Unboxer:
    """Emits the argument checks and conversions of a ``try_`` wrapper."""

    overflow: ir.Block  # where an int argument too large for 64 bits goes (set by ``emit_try_wrapper``)

    def __init__(self, ctx: ModuleContext, b: ir.IRBuilder, mismatch: ir.Block):
        self.ctx = ctx
        self.api = _Api(ctx)
        self.b = b
        self.mismatch = mismatch
        self.views: list[tuple[ir.Value, ir.Value]] = []  # (Py_buffer slot, acquired flag)

    def require(self, cond: ir.Value) -> None:
        ok = self.b.append_basic_block("arg.ok")
        self.b.cbranch(cond, ok, self.mismatch)
        self.b.position_at_end(ok)

    def is_type(self, obj: ir.Value, type_name: str) -> ir.Value:
        ob_type = _field(self.b, obj, abi.PY_OBJECT_TYPE, lt.PTR)
        return self.b.icmp_unsigned("==", ob_type, self.api.type_object(type_name))

    def unbox(self, obj: ir.Value, t: Type, writable: bool) -> ir.Value:
        b = self.b
        if isinstance(t, ScalarType):
            if t.kind == "n":  # None (an argument left out or passed as None: aot.infer.optional)
                self.require(b.icmp_unsigned("==", obj, self.api.type_object("_Py_NoneStruct")))
                return ir.Constant(lt.I8, 0)
            if t.is_float:
                self.require(self.is_type(obj, "PyFloat_Type"))
                value = _field(b, obj, abi.PY_FLOAT_VALUE, lt.F64)
                return b.fptrunc(value, lt.F32) if t.bits == 32 else value
            if t.kind == "b":
                self.require(self.is_type(obj, "PyBool_Type"))
                return b.icmp_unsigned("==", obj, self.api.type_object("_Py_TrueStruct"))
            self.require(self.is_type(obj, "PyLong_Type"))
            if not t.is_signed:  # NumPy-style: unsigned arguments wrap
                mask = self.api.fn("PyLong_AsUnsignedLongLongMask", lt.I64, lt.PTR)
                value = b.call(mask, [obj])
                return b.trunc(value, value_type(t)) if t.bits < 64 else value
            as_long = self.api.fn("PyLong_AsLongLong", lt.I64, lt.PTR)
            value = b.call(as_long, [obj])
            failed = b.icmp_signed("==", value, ir.Constant(lt.I64, -1))
            with b.if_then(failed, likely=False):
                occurred = b.call(self.api.fn("PyErr_Occurred", lt.PTR), [])
                with b.if_then(b.icmp_unsigned("!=", occurred, ir.Constant(lt.PTR, None))):
                    b.branch(self.overflow)
            return b.trunc(value, value_type(t)) if t.bits < 64 else value
        if isinstance(t, TupleType):
            self.require(self.is_type(obj, "PyTuple_Type"))
            size = _field(b, obj, abi.PY_TUPLE_SIZE, lt.I64)
            self.require(b.icmp_signed("==", size, ir.Constant(lt.I64, len(t.items))))
            out = ir.Constant(value_type(t), ir.Undefined)
            for i, item_t in enumerate(t.items):
                item = _field(b, obj, abi.PY_TUPLE_ITEMS + abi.POINTER_SIZE * i, lt.PTR)
                out = b.insert_value(out, self.unbox(item, item_t, writable), i)
            return out
        if isinstance(t, ListType):  # (no list is taken from Python: the call falls back, and typeof says why)
            self.require(ir.Constant(lt.I1, 0))
            return ir.Constant(lt.PTR, None)
        assert isinstance(t, ArrayType)
        return self.unbox_array(obj, t, writable)

    def unbox_array(self, obj: ir.Value, t: ArrayType, writable: bool) -> ir.Value:
        b = self.b
        with b.goto_entry_block():
            view = b.alloca(ir.ArrayType(lt.I8, abi.PY_BUFFER_SIZE))
            flag = b.alloca(lt.I1)
            b.store(ir.Constant(lt.I1, 0), flag)
            view_ptr = b.bitcast(view, lt.PTR)
        self.views.append((view_ptr, flag))
        flags = abi.PyBUF_STRIDES | abi.PyBUF_FORMAT | (abi.PyBUF_WRITABLE if writable else 0)
        get = self.api.fn("PyObject_GetBuffer", lt.I32, lt.PTR, lt.PTR, lt.I32)
        status = b.call(get, [obj, view_ptr, ir.Constant(lt.I32, flags)])
        with b.if_then(b.icmp_signed("!=", status, ir.Constant(lt.I32, 0)), likely=False):
            b.call(self.api.fn("PyErr_Clear", ir.VoidType()), [])
            b.branch(self.mismatch)
        b.store(ir.Constant(lt.I1, 1), flag)
        ndim = _field(b, view_ptr, abi.PY_BUFFER_NDIM, lt.I32)
        self.require(b.icmp_signed("==", ndim, ir.Constant(lt.I32, t.ndim)))
        itemsize = _field(b, view_ptr, abi.PY_BUFFER_ITEMSIZE, lt.I64)
        self.require(b.icmp_signed("==", itemsize, ir.Constant(lt.I64, t.dtype.itemsize)))
        fmt = _field(b, view_ptr, abi.PY_BUFFER_FORMAT, lt.PTR)
        self.require(b.call(format_ok_function(self.ctx), [fmt, ir.Constant(lt.I8, ord(t.dtype.kind))]))
        if t.layout == "C":
            contiguous = self.api.fn("PyBuffer_IsContiguous", lt.I32, lt.PTR, lt.I8)
            is_c = b.call(contiguous, [view_ptr, ir.Constant(lt.I8, ord("C"))])
            self.require(b.icmp_signed("!=", is_c, ir.Constant(lt.I32, 0)))
        shape_p = b.bitcast(_field(b, view_ptr, abi.PY_BUFFER_SHAPE, lt.PTR), lt.I64.as_pointer())
        strides_p = b.bitcast(_field(b, view_ptr, abi.PY_BUFFER_STRIDES, lt.PTR), lt.I64.as_pointer())
        shape = ir.Constant(ir.ArrayType(lt.I64, t.ndim), ir.Undefined)
        strides = ir.Constant(ir.ArrayType(lt.I64, t.ndim), ir.Undefined)
        for k in range(t.ndim):
            shape = b.insert_value(shape, b.load(b.gep(shape_p, [ir.Constant(lt.I64, k)])), k)
            strides = b.insert_value(strides, b.load(b.gep(strides_p, [ir.Constant(lt.I64, k)])), k)
        data = b.bitcast(_field(b, view_ptr, abi.PY_BUFFER_BUF, lt.PTR), memory_type(t.dtype).as_pointer())
        return make_array(b, t, data, shape, strides, owner=None, parent=obj)  # borrowed from the argument

    def release_all(self) -> None:
        release = self.api.fn("PyBuffer_Release", ir.VoidType(), lt.PTR)
        for view, flag in self.views:
            with self.b.if_then(self.b.load(flag)):
                self.b.call(release, [view])


def box(ctx: ModuleContext, b: ir.IRBuilder, value: ir.Value, t: Type) -> ir.Value:
    """A new reference to the Python object for ``value`` (NULL with an exception set on failure)."""
    api = _Api(ctx)
    if isinstance(t, ScalarType):
        if t.kind == "n":
            return b.call(api.fn("Py_BuildValue", lt.PTR, lt.PTR, var_arg=True), [ctx.cstring("")])
        if t.kind == "b":
            return b.call(api.fn("PyBool_FromLong", lt.PTR, lt.I64), [b.zext(value, lt.I64)])
        if t.is_float:
            if t.bits == 32:
                value = b.fpext(value, lt.F64)
            return b.call(api.fn("PyFloat_FromDouble", lt.PTR, lt.F64), [value])
        if t.is_signed:
            wide = b.sext(value, lt.I64) if t.bits < 64 else value
            return b.call(api.fn("PyLong_FromLongLong", lt.PTR, lt.I64), [wide])
        wide = b.zext(value, lt.I64) if t.bits < 64 else value
        return b.call(api.fn("PyLong_FromUnsignedLongLong", lt.PTR, lt.I64), [wide])
    if isinstance(t, TupleType):
        tup = b.call(api.fn("PyTuple_New", lt.PTR, lt.I64), [ir.Constant(lt.I64, len(t.items))])
        fail = b.icmp_unsigned("==", tup, ir.Constant(lt.PTR, None))
        result = b.alloca(lt.PTR)
        b.store(tup, result)
        with b.if_then(b.not_(fail)):
            set_item = api.fn("PyTuple_SetItem", lt.I32, lt.PTR, lt.I64, lt.PTR)
            for i, item_t in enumerate(t.items):
                item = box(ctx, b, b.extract_value(value, i), item_t)
                with b.if_then(b.icmp_unsigned("==", item, ir.Constant(lt.PTR, None)), likely=False):
                    b.call(api.fn("Py_DecRef", ir.VoidType(), lt.PTR), [tup])
                    b.store(ir.Constant(lt.PTR, None), result)
                b.call(set_item, [tup, ir.Constant(lt.I64, i), item])
        return b.load(result)
    if isinstance(t, ArrayType):
        return box_array(ctx, b, value, t)
    if isinstance(t, ListType):
        return box_list(ctx, b, value, t, box, api.fn)
    if isinstance(t, OptionalType):  # None, or the value boxed (aot.codegen.optional)
        result = b.alloca(lt.PTR)
        with b.if_else(b.extract_value(value, 0)) as (none, some):
            with none:
                b.store(box(ctx, b, ir.Constant(lt.I8, 0), NONE), result)
            with some:
                b.store(box(ctx, b, b.extract_value(value, 1), t.inner), result)
        return b.load(result)
    raise TypeError(f"cannot return a {t} to Python")


def emit_try_wrapper(
    ctx: ModuleContext,
    name: str,
    impl: ir.Function,
    argtypes: tuple[Type, ...],
    ret: Type,
    writes: frozenset[int],
    nogil: bool = False,
    copy_recursion_limit: bool = False,
    install_signal_handler: bool = False,
) -> ir.Function:
    """The ``try_`` wrapper of ``impl``; with ``nogil`` the GIL is released around the call of ``impl`` (the
    arguments are unboxed and the result boxed while holding it; an exception raised without it is set
    through ``aot.codegen.gil``); with ``copy_recursion_limit`` (its module has recursive functions), the
    interpreter's recursion limit is copied for them first (``aot.codegen.recursion``); with
    ``install_signal_handler`` (its loops look for signals), the first call installs the handler that raises
    their flag (``aot.codegen.interrupt``)."""
    fn = ir.Function(ctx.module, _TRY_TYPE, name)
    args, nargs, result_slot = fn.args
    entry = fn.append_basic_block("entry")
    body = fn.append_basic_block("body")
    mismatch = fn.append_basic_block("mismatch")
    overflow = fn.append_basic_block("overflow")
    b = ir.IRBuilder(entry)
    b.branch(body)
    b.position_at_end(body)
    unboxer = _Unboxer(ctx, b, mismatch)
    unboxer.overflow = overflow
    unboxer.require(b.icmp_signed("==", nargs, ir.Constant(lt.I64, len(argtypes))))
    argv = b.bitcast(args, lt.PTR.as_pointer())
    values = []
    for i, t in enumerate(argtypes):
        obj = b.load(b.gep(argv, [ir.Constant(lt.I64, i)]))
        values.append(unboxer.unbox(obj, t, i in writes))
    out = b.alloca(impl.args[0].type.pointee)
    if copy_recursion_limit:
        recursion.copy_limit(ctx, b)
    if install_signal_handler:
        interrupt.install_once(ctx, b)
    if nogil:
        released = b.call(_Api(ctx).fn("PyEval_SaveThread", lt.PTR), [])
    status = b.call(impl, [out] + values)
    if nogil:
        b.call(_Api(ctx).fn("PyEval_RestoreThread", ir.VoidType(), lt.PTR), [released])
    unboxer.release_all()
    result_ptr = b.bitcast(result_slot, lt.PTR.as_pointer())
    with b.if_else(b.icmp_unsigned("==", status, ir.Constant(lt.I32, 0))) as (ok, error):
        with ok:
            b.store(box(ctx, b, b.load(out), ret), result_ptr)
        with error:
            b.store(ir.Constant(lt.PTR, None), result_ptr)
    b.ret(ir.Constant(lt.I32, 1))
    b.position_at_end(mismatch)
    unboxer.release_all()
    b.ret(ir.Constant(lt.I32, 0))
    b.position_at_end(overflow)  # an int argument too large for 64 bits: its OverflowError stands
    unboxer.release_all()
    b.store(ir.Constant(lt.PTR, None), b.bitcast(result_slot, lt.PTR.as_pointer()))
    b.ret(ir.Constant(lt.I32, 1))
    return fn


def emit_fastcall_wrapper(ctx: ModuleContext, name: str, try_fn: ir.Function, signature: str) -> ir.GlobalVariable:
    """A ``METH_FASTCALL`` function and the ``PyMethodDef`` (``def_<name>``) that makes it a builtin."""
    api = _Api(ctx)
    fn = ir.Function(ctx.module, ir.FunctionType(lt.PTR, [lt.PTR, lt.PTR, lt.I64]), f"fast_{name}")
    _, args, nargs = fn.args
    b = ir.IRBuilder(fn.append_basic_block())
    result = b.alloca(lt.PTR)
    # (not inlined: a builtin's call is no hot path, and a copy of the try-wrapper, the function inlined into
    # it, would double the code LLVM optimises and emits per method)
    called = b.call(try_fn, [args, nargs, b.bitcast(result, lt.PTR)], attrs=("noinline",))
    with b.if_then(b.icmp_unsigned("==", called, ir.Constant(lt.I32, 0)), likely=False):
        slot = ctx.global_pointer("PyExc_TypeError")
        exc = b.load(b.bitcast(slot, lt.PTR.as_pointer()))
        b.call(
            api.fn("PyErr_SetString", ir.VoidType(), lt.PTR, lt.PTR),
            [exc, ctx.cstring(f"arguments do not match the compiled signature {signature}")],
        )
        b.ret(ir.Constant(lt.PTR, None))
    b.ret(b.load(result))
    method_def_t = ir.LiteralStructType([lt.PTR, lt.PTR, lt.I32, lt.PTR])
    gv = ir.GlobalVariable(ctx.module, method_def_t, f"def_{name}")
    gv.initializer = ir.Constant(
        method_def_t,
        [ctx.cstring(name), fn.bitcast(lt.PTR), ir.Constant(lt.I32, abi.METH_FASTCALL), ir.Constant(lt.PTR, None)],
    )
    return gv


def emit_vectorcall_entry(ctx: ModuleContext, name: str, try_fn: ir.Function) -> ir.Function:
    """A vectorcall for a method with one specialization: this one, else the binder (when the method has
    binding words) or the Python fallback."""
    api = _Api(ctx)
    fn = ir.Function(ctx.module, _VECTORCALL_TYPE, name)
    self_, args, nargsf, kwnames = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    fast = fn.append_basic_block("fast")
    slow = fn.append_basic_block("slow")
    result = b.alloca(lt.PTR)
    b.cbranch(b.icmp_unsigned("==", kwnames, ir.Constant(lt.PTR, None)), fast, slow)
    b.position_at_end(fast)
    nargs = b.and_(nargsf, ir.Constant(lt.I64, abi.PY_VECTORCALL_ARGUMENTS_OFFSET - 1))
    called = b.call(try_fn, [args, nargs, b.bitcast(result, lt.PTR)])
    done = fn.append_basic_block("done")
    b.cbranch(b.icmp_unsigned("!=", called, ir.Constant(lt.I32, 0)), done, slow)
    b.position_at_end(done)
    b.ret(b.load(result))
    b.position_at_end(slow)
    _return_fallback(api, b, fn)
    return fn


def emit_dispatcher(ctx: ModuleContext, name: str = "aot_dispatch") -> ir.Function:
    """The vectorcall of method objects: try each specialization, else call the Python fallback (and, in the
    same module, ``aot_bind``: ``emit_binder``)."""
    existing = ctx.module.globals.get(name)
    if existing is not None:
        return existing
    emit_binder(ctx)
    api = _Api(ctx)
    fn = ir.Function(ctx.module, _VECTORCALL_TYPE, name)
    self_, args, nargsf, kwnames = fn.args
    entry = fn.append_basic_block("entry")
    loop = fn.append_basic_block("loop")
    body = fn.append_basic_block("try")
    fallback = fn.append_basic_block("fallback")
    b = ir.IRBuilder(entry)
    result = b.alloca(lt.PTR)
    index = b.alloca(lt.I64)
    b.store(ir.Constant(lt.I64, 0), index)
    nargs = b.and_(nargsf, ir.Constant(lt.I64, abi.PY_VECTORCALL_ARGUMENTS_OFFSET - 1))
    table = b.bitcast(_field(b, self_, abi.METHOD_TABLE, lt.PTR), _TRY_TYPE.as_pointer().as_pointer())
    count = _field(b, self_, abi.METHOD_COUNT, lt.I64)
    b.cbranch(b.icmp_unsigned("==", kwnames, ir.Constant(lt.PTR, None)), loop, fallback)
    b.position_at_end(loop)
    i = b.load(index)
    b.cbranch(b.icmp_signed("<", i, count), body, fallback)
    b.position_at_end(body)
    entry_fn = b.load(b.gep(table, [i]))
    called = b.call(entry_fn, [args, nargs, b.bitcast(result, lt.PTR)])
    b.store(b.add(i, ir.Constant(lt.I64, 1)), index)
    done = fn.append_basic_block("done")
    b.cbranch(b.icmp_unsigned("!=", called, ir.Constant(lt.I32, 0)), done, loop)
    b.position_at_end(done)
    b.ret(b.load(result))
    b.position_at_end(fallback)
    _return_fallback(api, b, fn)
    return fn


def emit_binder(ctx: ModuleContext, name: str = abi.BINDER_SYMBOL) -> ir.Function:
    """The vectorcall of method objects with keyword-only parameters, and where the others' vectorcall (a
    ``vc_`` entry, ``aot_dispatch``) sends a call it does not take when the method has a binding: binds a
    call's positional and keyword arguments to the parameters by Python's rules, fills in left-out
    defaults, then tries each specialization with every parameter by position, as ``aot_dispatch`` does.
    Its method object's binding slot (``abi.METHOD_BINDING``) points at the words
    ``aot.runtime.dispatch.Binding`` lays out: the numbers of positional, all and positional-only
    parameters, the function, its ``__defaults__`` and ``__kwdefaults__`` when the words were made (a call
    sees any reassignment by comparing them), this binder's address, then each parameter's name and default
    (NULL: none). Anything else (too many positional arguments, an unknown,
    repeated or non-interned keyword, a missing argument, defaults reassigned, no specialization that takes
    the types) goes, unchanged, to the Python fallback, which binds in Python and raises Python's errors."""
    existing = ctx.module.globals.get(name)
    if existing is not None:
        return existing
    api = _Api(ctx)
    fn = ir.Function(ctx.module, _VECTORCALL_TYPE, name)
    self_, args, nargsf, kwnames = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    fallback = fn.append_basic_block("fallback")
    i64, ptr, null = lt.I64, lt.PTR, ir.Constant(lt.PTR, None)
    full = b.alloca(ir.ArrayType(ptr, abi.BINDER_MAX_PARAMS), name="full")  # (the arguments, by parameter)
    result = b.alloca(ptr)
    found = b.alloca(i64)
    nkw_slot = b.alloca(i64)
    desc = b.bitcast(_field(b, self_, abi.METHOD_BINDING, ptr), i64.as_pointer())

    def word(i: int) -> ir.Value:
        return b.load(b.gep(desc, [ir.Constant(i64, i)]))

    def slot(i: ir.Value) -> ir.Value:
        return b.gep(full, [ir.Constant(i64, 0), i])

    def loop(start: ir.Value, stop: ir.Value, body: Callable[[ir.Value], None], tag: str) -> None:
        """``for i in range(start, stop): body(i)``, with a counter of its own (a slot in the entry block)."""
        with b.goto_entry_block():
            counter = b.alloca(i64, name=tag)
        loops.counted_loop(b, start, stop, body, tag, counter=counter)

    def bail_if(cond: ir.Value) -> None:
        ok = fn.append_basic_block("ok")
        b.cbranch(cond, fallback, ok)
        b.position_at_end(ok)

    nargs = b.and_(nargsf, ir.Constant(i64, abi.PY_VECTORCALL_ARGUMENTS_OFFSET - 1))
    npos, nparams, nposonly = word(0), word(1), word(2)
    bail_if(b.icmp_signed(">", nargs, npos))  # (too many positional arguments)
    func = b.inttoptr(word(3), ptr)
    defaults = b.call(api.fn("PyFunction_GetDefaults", ptr, ptr), [func])
    bail_if(b.icmp_unsigned("!=", b.ptrtoint(defaults, i64), word(4)))
    kwdefaults = b.call(api.fn("PyFunction_GetKwDefaults", ptr, ptr), [func])
    bail_if(b.icmp_unsigned("!=", b.ptrtoint(kwdefaults, i64), word(5)))
    argv = b.bitcast(args, ptr.as_pointer())
    loop(ir.Constant(i64, 0), nparams, lambda i: b.store(null, slot(i)), "clear")
    loop(ir.Constant(i64, 0), nargs, lambda i: b.store(b.load(b.gep(argv, [i])), slot(i)), "positional")
    b.store(ir.Constant(i64, 0), nkw_slot)
    with b.if_then(b.icmp_unsigned("!=", kwnames, null)):
        b.store(_field(b, kwnames, abi.PY_TUPLE_SIZE, i64), nkw_slot)
    names = b.gep(desc, [ir.Constant(i64, 7)])
    values = b.gep(names, [nparams])

    def keyword(k: ir.Value) -> None:
        items = b.bitcast(b.gep(b.bitcast(kwnames, ptr), [ir.Constant(i64, abi.PY_TUPLE_ITEMS)]), i64.as_pointer())
        name_k = b.load(b.gep(items, [k]))
        b.store(ir.Constant(i64, -1), found)

        def match(j: ir.Value) -> None:  # (interned names: the same object; any other goes to Python)
            with b.if_then(b.icmp_unsigned("==", b.load(b.gep(names, [j])), name_k)):
                b.store(j, found)

        loop(nposonly, nparams, match, "name")
        j = b.load(found)
        bail_if(b.icmp_signed("<", j, ir.Constant(i64, 0)))  # (unknown, positional-only or not interned)
        bail_if(b.icmp_unsigned("!=", b.load(slot(j)), null))  # (given twice)
        b.store(b.load(b.gep(argv, [b.add(nargs, k)])), slot(j))

    loop(ir.Constant(i64, 0), b.load(nkw_slot), keyword, "keyword")

    def default(j: ir.Value) -> None:
        with b.if_then(b.icmp_unsigned("==", b.load(slot(j)), null)):
            value = b.inttoptr(b.load(b.gep(values, [j])), ptr)
            bail_if(b.icmp_unsigned("==", value, null))  # (a missing argument)
            b.store(value, slot(j))

    loop(ir.Constant(i64, 0), nparams, default, "default")
    table = b.bitcast(_field(b, self_, abi.METHOD_TABLE, ptr), _TRY_TYPE.as_pointer().as_pointer())
    count = _field(b, self_, abi.METHOD_COUNT, i64)
    gathered = b.bitcast(full, ptr)

    def attempt(i: ir.Value) -> None:
        called = b.call(b.load(b.gep(table, [i])), [gathered, nparams, b.bitcast(result, ptr)])
        done, rest = fn.append_basic_block("done"), fn.append_basic_block("next")
        b.cbranch(b.icmp_unsigned("!=", called, ir.Constant(lt.I32, 0)), done, rest)
        b.position_at_end(done)
        b.ret(b.load(result))
        b.position_at_end(rest)

    loop(ir.Constant(i64, 0), count, attempt, "try")
    b.branch(fallback)
    b.position_at_end(fallback)
    _return_fallback(api, b, fn, binder=False)
    return fn


def _return_fallback(api: _Api, b: ir.IRBuilder, fn: ir.Function, binder: bool = True) -> None:
    """Pass a vectorcall on, unchanged, to the method's native binder when it has one (a call with keywords or
    left-out defaults: ``emit_binder``; not from the binder itself), else to its Python fallback, and return
    the result."""
    self_, args, nargsf, kwnames = fn.args
    if binder:
        binding = _field(b, self_, abi.METHOD_BINDING, lt.PTR)
        with b.if_then(b.icmp_unsigned("!=", binding, ir.Constant(lt.PTR, None))):
            words = b.bitcast(binding, lt.PTR.as_pointer())
            bind = b.bitcast(b.load(b.gep(words, [ir.Constant(lt.I64, 6)])), _VECTORCALL_TYPE.as_pointer())
            b.ret(b.call(bind, [self_, args, nargsf, kwnames]))
    vectorcall = api.fn("PyObject_Vectorcall", lt.PTR, lt.PTR, lt.PTR, lt.I64, lt.PTR)
    b.ret(b.call(vectorcall, [_field(b, self_, abi.METHOD_FALLBACK, lt.PTR), args, nargsf, kwnames]))
