"""Arrays returned to Python: a small buffer-exporting object, then ``numpy.asarray`` on it when NumPy imports.

    box_array(ctx, b, value, t)   → a new reference: a NumPy array viewing the memory (zero copy), or, where
                                    NumPy cannot be imported, the ``aot.ArrayMemory`` object itself (a buffer)

``aot.ArrayMemory`` is a heap type made on first use by generated code (``PyType_FromSpec``, with
``bf_getbuffer`` and ``tp_dealloc`` written in LLVM IR here): no NumPy C API, no llvmlite and nothing bound
at load. Each object holds the array's owner reference (taken over from the returned value) or, for memory
borrowed from an argument, a reference to that argument (``return a`` gives a view of the same memory);
the NumPy array's base keeps it alive, and its ``tp_dealloc`` drops the owner reference, freeing the block
when it was the last. Layout (a ``PyVarObject`` whose items are the shape then the strides):

    16 ob_size   24 owner   32 parent   40 data   48 nbytes   56 itemsize   64 ndim   72 readonly
    80 format (8 bytes)   88 shape[ndim], strides[ndim]
"""

from __future__ import annotations

from llvmlite import ir

from .. import abi
from ..types import ArrayType
from . import types as lt
from .arrays import DATA, OWNER, PARENT, STRIDES, decref_function
from .context import ModuleContext

_OWNER, _PARENT, _DATA, _NBYTES, _ITEMSIZE, _NDIM, _READONLY, _FORMAT, _DIMS = 24, 32, 40, 48, 56, 64, 72, 80, 88
_BASIC_SIZE = 88
_Py_bf_getbuffer, _Py_tp_dealloc = 1, 52
_Py_TPFLAGS_DEFAULT = 1 << 18
_Py_TPFLAGS_DISALLOW_INSTANTIATION = 1 << 7
_PyBUF_WRITABLE, _PyBUF_FORMAT, _PyBUF_ND, _PyBUF_STRIDES = 0x1, 0x4, 0x8, 0x18
_FORMATS = {
    ("i", 8): "b",
    ("i", 16): "h",
    ("i", 32): "i",
    ("i", 64): "q",
    ("u", 8): "B",
    ("u", 16): "H",
    ("u", 32): "I",
    ("u", 64): "Q",
    ("f", 32): "f",
    ("f", 64): "d",
    ("b", 1): "?",
}
_NULL = ir.Constant(lt.PTR, None)


def _at(b: ir.IRBuilder, base: ir.Value, offset: int | ir.Value, ty: ir.Type) -> ir.Value:
    off = ir.Constant(lt.I64, offset) if isinstance(offset, int) else offset
    return b.bitcast(b.gep(b.bitcast(base, lt.PTR), [off]), ty.as_pointer())


def _fn(ctx: ModuleContext, name: str, ret: ir.Type, *args: ir.Type) -> ir.Function:
    return ctx.declare(name, ir.FunctionType(ret, list(args)))


def _set_error(ctx: ModuleContext, b: ir.IRBuilder, exc: str, message: str) -> None:
    slot = ctx.global_pointer(f"PyExc_{exc}")
    b.call(
        _fn(ctx, "PyErr_SetString", ir.VoidType(), lt.PTR, lt.PTR),
        [b.load(b.bitcast(slot, lt.PTR.as_pointer())), ctx.cstring(message)],
    )


def _getbuffer(ctx: ModuleContext) -> ir.Function:
    """``int getbuffer(self, Py_buffer *view, int flags)``."""
    name = "aot_arraymemory_getbuffer"
    fn, b = ctx.internal_function(name, ir.FunctionType(lt.I32, [lt.PTR, lt.PTR, lt.I32]))
    if b is None:
        return fn
    self_, view, flags = fn.args
    readonly = b.load(_at(b, self_, _READONLY, lt.I64))
    wants_write = b.icmp_unsigned("!=", b.and_(flags, ir.Constant(lt.I32, _PyBUF_WRITABLE)), ir.Constant(lt.I32, 0))
    with b.if_then(b.and_(wants_write, b.icmp_unsigned("!=", readonly, ir.Constant(lt.I64, 0))), likely=False):
        _set_error(ctx, b, "BufferError", "the memory of this array is read-only")
        b.store(_NULL, _at(b, view, 8, lt.PTR))
        b.ret(ir.Constant(lt.I32, -1))
    strided = b.icmp_unsigned(
        "==", b.and_(flags, ir.Constant(lt.I32, _PyBUF_STRIDES)), ir.Constant(lt.I32, _PyBUF_STRIDES)
    )
    with b.if_then(b.not_(strided), likely=False):
        _set_error(ctx, b, "BufferError", "arrays returned by compiled code export strided buffers only")
        b.store(_NULL, _at(b, view, 8, lt.PTR))
        b.ret(ir.Constant(lt.I32, -1))
    ndim = b.load(_at(b, self_, _NDIM, lt.I64))
    b.call(_fn(ctx, "Py_IncRef", ir.VoidType(), lt.PTR), [self_])
    b.store(b.load(_at(b, self_, _DATA, lt.PTR)), _at(b, view, abi.PY_BUFFER_BUF, lt.PTR))
    b.store(self_, _at(b, view, 8, lt.PTR))
    b.store(b.load(_at(b, self_, _NBYTES, lt.I64)), _at(b, view, 16, lt.I64))
    b.store(b.load(_at(b, self_, _ITEMSIZE, lt.I64)), _at(b, view, abi.PY_BUFFER_ITEMSIZE, lt.I64))
    b.store(b.trunc(readonly, lt.I32), _at(b, view, 32, lt.I32))
    b.store(b.trunc(ndim, lt.I32), _at(b, view, abi.PY_BUFFER_NDIM, lt.I32))
    wants_format = b.icmp_unsigned("!=", b.and_(flags, ir.Constant(lt.I32, _PyBUF_FORMAT)), ir.Constant(lt.I32, 0))
    fmt = b.select(wants_format, b.gep(b.bitcast(self_, lt.PTR), [ir.Constant(lt.I64, _FORMAT)]), _NULL)
    b.store(fmt, _at(b, view, abi.PY_BUFFER_FORMAT, lt.PTR))
    dims = b.gep(b.bitcast(self_, lt.PTR), [ir.Constant(lt.I64, _DIMS)])
    b.store(dims, _at(b, view, abi.PY_BUFFER_SHAPE, lt.PTR))
    b.store(b.gep(dims, [b.mul(ndim, ir.Constant(lt.I64, 8))]), _at(b, view, abi.PY_BUFFER_STRIDES, lt.PTR))
    b.store(_NULL, _at(b, view, 64, lt.PTR))
    b.store(_NULL, _at(b, view, 72, lt.PTR))
    b.ret(ir.Constant(lt.I32, 0))
    return fn


def _dealloc(ctx: ModuleContext) -> ir.Function:
    """``void dealloc(self)``: drop the owner reference (or the parent), free the object, release its type."""
    name = "aot_arraymemory_dealloc"
    fn, b = ctx.internal_function(name, ir.FunctionType(ir.VoidType(), [lt.PTR]))
    if b is None:
        return fn
    (self_,) = fn.args
    b.call(decref_function(ctx), [b.load(_at(b, self_, _OWNER, lt.PTR))])
    parent = b.load(_at(b, self_, _PARENT, lt.PTR))
    with b.if_then(b.icmp_unsigned("!=", parent, _NULL)):
        b.call(_fn(ctx, "Py_DecRef", ir.VoidType(), lt.PTR), [parent])
    tp = b.load(_at(b, self_, abi.PY_OBJECT_TYPE, lt.PTR))
    b.call(_fn(ctx, "PyObject_Free", ir.VoidType(), lt.PTR), [self_])
    b.call(_fn(ctx, "Py_DecRef", ir.VoidType(), lt.PTR), [tp])
    b.ret_void()
    return fn


def _cached(ctx: ModuleContext, name: str) -> ir.GlobalVariable:
    existing = ctx.module.globals.get(name)
    if existing is not None:
        return existing
    gv = ir.GlobalVariable(ctx.module, lt.PTR, name)
    gv.linkage = "internal"
    gv.initializer = _NULL
    return gv


def _type_function(ctx: ModuleContext) -> ir.Function:
    """``ptr aot_arraymemory_type()``: the module's ``aot.ArrayMemory`` type, made on first use (NULL with an
    exception set if that fails)."""
    name = "aot_arraymemory_type"
    fn, b = ctx.internal_function(name, ir.FunctionType(lt.PTR, []))
    if b is None:
        return fn
    cache = _cached(ctx, "aot_arraymemory_type.cached")
    known = b.load(cache)
    with b.if_then(b.icmp_unsigned("!=", known, _NULL), likely=True):
        b.ret(known)
    slot_t = ir.LiteralStructType([lt.I32, lt.PTR])
    slots = ir.Constant(
        ir.ArrayType(slot_t, 3),
        [
            ir.Constant(slot_t, [ir.Constant(lt.I32, _Py_bf_getbuffer), _getbuffer(ctx).bitcast(lt.PTR)]),
            ir.Constant(slot_t, [ir.Constant(lt.I32, _Py_tp_dealloc), _dealloc(ctx).bitcast(lt.PTR)]),
            ir.Constant(slot_t, [ir.Constant(lt.I32, 0), _NULL]),
        ],
    )
    slots_gv = ir.GlobalVariable(ctx.module, slots.type, "aot_arraymemory_slots")
    slots_gv.linkage = "internal"
    slots_gv.global_constant = True
    slots_gv.initializer = slots
    spec_t = ir.LiteralStructType([lt.PTR, lt.I32, lt.I32, lt.I32, lt.PTR])
    flags = _Py_TPFLAGS_DEFAULT | _Py_TPFLAGS_DISALLOW_INSTANTIATION
    spec = ir.Constant(
        spec_t,
        [
            ctx.cstring("aot.ArrayMemory"),
            ir.Constant(lt.I32, _BASIC_SIZE),
            ir.Constant(lt.I32, 8),
            ir.Constant(lt.I32, flags),
            slots_gv.bitcast(lt.PTR),
        ],
    )
    spec_gv = ir.GlobalVariable(ctx.module, spec_t, "aot_arraymemory_spec")
    spec_gv.linkage = "internal"
    spec_gv.initializer = spec
    made = b.call(_fn(ctx, "PyType_FromSpec", lt.PTR, lt.PTR), [spec_gv.bitcast(lt.PTR)])
    b.store(made, cache)
    b.ret(made)
    return fn


def _asarray_function(ctx: ModuleContext) -> ir.Function:
    """``ptr aot_numpy_asarray()``: ``numpy.asarray`` (looked up once), or NULL when NumPy cannot be imported."""
    name = "aot_numpy_asarray"
    fn, b = ctx.internal_function(name, ir.FunctionType(lt.PTR, []))
    if b is None:
        return fn
    cache = _cached(ctx, "aot_numpy_asarray.cached")
    tried = ir.GlobalVariable(ctx.module, lt.I8, "aot_numpy_asarray.tried")
    tried.linkage = "internal"
    tried.initializer = ir.Constant(lt.I8, 0)
    with b.if_then(b.icmp_unsigned("!=", b.load(tried), ir.Constant(lt.I8, 0)), likely=True):
        b.ret(b.load(cache))
    b.store(ir.Constant(lt.I8, 1), tried)
    module = b.call(_fn(ctx, "PyImport_ImportModule", lt.PTR, lt.PTR), [ctx.cstring("numpy")])
    found = b.alloca(lt.PTR)
    b.store(_NULL, found)
    with b.if_else(b.icmp_unsigned("==", module, _NULL)) as (missing, present):
        with missing:
            b.call(_fn(ctx, "PyErr_Clear", ir.VoidType()), [])
        with present:
            attr = b.call(_fn(ctx, "PyObject_GetAttrString", lt.PTR, lt.PTR, lt.PTR), [module, ctx.cstring("asarray")])
            b.call(_fn(ctx, "Py_DecRef", ir.VoidType(), lt.PTR), [module])
            with b.if_then(b.icmp_unsigned("==", attr, _NULL)):
                b.call(_fn(ctx, "PyErr_Clear", ir.VoidType()), [])
            b.store(attr, found)
    result = b.load(found)
    b.store(result, cache)
    b.ret(result)
    return fn


def box_array(ctx: ModuleContext, b: ir.IRBuilder, value: ir.Value, t: ArrayType) -> ir.Value:
    """A new reference to a Python object for the array ``value``, taking over its owner reference (NULL with
    an exception set on failure, the reference dropped)."""
    owner = b.extract_value(value, OWNER)
    parent = b.extract_value(value, PARENT)
    result = b.alloca(lt.PTR)
    b.store(_NULL, result)
    tp = b.call(_type_function(ctx), [])
    with b.if_else(b.icmp_unsigned("==", tp, _NULL), likely=False) as (failed, made):
        with failed:
            b.call(decref_function(ctx), [owner])
        with made:
            alloc = _fn(ctx, "PyType_GenericAlloc", lt.PTR, lt.PTR, lt.I64)
            obj = b.call(alloc, [tp, ir.Constant(lt.I64, 2 * t.ndim)])
            with b.if_else(b.icmp_unsigned("==", obj, _NULL), likely=False) as (no_obj, filled):
                with no_obj:
                    b.call(decref_function(ctx), [owner])
                with filled:
                    _fill_object(ctx, b, obj, value, t, owner, parent)
                    b.store(_as_numpy(ctx, b, obj), result)
    return b.load(result)


def _fill_object(
    ctx: ModuleContext, b: ir.IRBuilder, obj: ir.Value, value: ir.Value, t: ArrayType, owner: ir.Value, parent: ir.Value
) -> None:
    b.store(owner, _at(b, obj, _OWNER, lt.PTR))
    b.store(parent, _at(b, obj, _PARENT, lt.PTR))
    readonly = b.alloca(lt.I64)
    b.store(ir.Constant(lt.I64, 0), readonly)
    with b.if_then(b.icmp_unsigned("!=", parent, _NULL)):
        b.call(_fn(ctx, "Py_IncRef", ir.VoidType(), lt.PTR), [parent])
        with b.if_then(b.icmp_unsigned("==", owner, _NULL)):  # borrowed: as writable as the argument
            view = b.alloca(ir.ArrayType(lt.I8, abi.PY_BUFFER_SIZE))
            view_p = b.bitcast(view, lt.PTR)
            get = _fn(ctx, "PyObject_GetBuffer", lt.I32, lt.PTR, lt.PTR, lt.I32)
            status = b.call(get, [parent, view_p, ir.Constant(lt.I32, _PyBUF_WRITABLE)])
            with b.if_else(b.icmp_signed("==", status, ir.Constant(lt.I32, 0))) as (writable, not_writable):
                with writable:
                    b.call(_fn(ctx, "PyBuffer_Release", ir.VoidType(), lt.PTR), [view_p])
                with not_writable:
                    b.call(_fn(ctx, "PyErr_Clear", ir.VoidType()), [])
                    b.store(ir.Constant(lt.I64, 1), readonly)
    b.store(b.bitcast(b.extract_value(value, DATA), lt.PTR), _at(b, obj, _DATA, lt.PTR))
    itemsize = t.dtype.itemsize
    nbytes: ir.Value = ir.Constant(lt.I64, itemsize)
    shape = b.extract_value(value, 1)
    strides = b.extract_value(value, STRIDES)
    for k in range(t.ndim):
        d = b.extract_value(shape, k)
        nbytes = b.mul(nbytes, d)
        b.store(d, _at(b, obj, _DIMS + 8 * k, lt.I64))
        b.store(b.extract_value(strides, k), _at(b, obj, _DIMS + 8 * (t.ndim + k), lt.I64))
    b.store(nbytes, _at(b, obj, _NBYTES, lt.I64))
    b.store(ir.Constant(lt.I64, itemsize), _at(b, obj, _ITEMSIZE, lt.I64))
    b.store(ir.Constant(lt.I64, t.ndim), _at(b, obj, _NDIM, lt.I64))
    b.store(b.load(readonly), _at(b, obj, _READONLY, lt.I64))
    fmt = _FORMATS[(t.dtype.kind, t.dtype.bits)]
    b.store(ir.Constant(lt.I64, ord(fmt)), _at(b, obj, _FORMAT, lt.I64))


def _as_numpy(ctx: ModuleContext, b: ir.IRBuilder, obj: ir.Value) -> ir.Value:
    """``numpy.asarray(obj)`` (stealing ``obj``), or ``obj`` itself without NumPy."""
    asarray = b.call(_asarray_function(ctx), [])
    out = b.alloca(lt.PTR)
    b.store(obj, out)
    with b.if_then(b.icmp_unsigned("!=", asarray, _NULL)):
        call = ctx.declare("PyObject_CallFunctionObjArgs", ir.FunctionType(lt.PTR, [lt.PTR], var_arg=True))
        b.store(b.call(call, [asarray, obj, _NULL]), out)
        b.call(_fn(ctx, "Py_DecRef", ir.VoidType(), lt.PTR), [obj])
    return b.load(out)
