"""The ABI table (aot/abi.py) against CPython itself, the runtime's method type and the generated code.

Generated code reads CPython's objects and aot's method objects through raw offsets; a wrong one does not fail
cleanly, it reads or calls garbage. So each value is checked where it comes from: ctypes mirrors of CPython's
structs, live objects read at the table's offsets, the method type's members, and the dispatcher's LLVM IR.
"""

from __future__ import annotations

import ctypes
import itertools
import re

import numpy as np
import pytest
from llvmlite import ir

import aot
from aot import abi
from aot.runtime.methodtype import method_type

# Prebuilt libraries bake these values in, and a library is only rejected when the compiler version changes:
# a change here must be deliberate (a new layout, a new version), never a side effect.
PINNED = {
    "POINTER_SIZE": 8,
    "PY_OBJECT_HEAD_SIZE": 16,
    "PY_OBJECT_TYPE": 8,
    "PY_FLOAT_VALUE": 16,
    "PY_TUPLE_SIZE": 16,
    "PY_TUPLE_ITEMS": 24,
    "PY_BUFFER_SIZE": 80,
    "PY_BUFFER_BUF": 0,
    "PY_BUFFER_ITEMSIZE": 24,
    "PY_BUFFER_NDIM": 36,
    "PY_BUFFER_FORMAT": 40,
    "PY_BUFFER_SHAPE": 48,
    "PY_BUFFER_STRIDES": 56,
    "PyBUF_WRITABLE": 0x1,
    "PyBUF_FORMAT": 0x4,
    "PyBUF_STRIDES": 0x18,
    "PY_METHOD_DEF_SIZE": 32,
    "PY_METHOD_DEF_FLAGS": 16,
    "METH_FASTCALL": 0x80,
    "PY_VECTORCALL_ARGUMENTS_OFFSET": 1 << 63,
    "METHOD_VECTORCALL": 16,
    "METHOD_DICT": 24,
    "METHOD_BINDING": 32,
    "BINDER_SYMBOL": "aot_bind",
    "BINDER_MAX_PARAMS": 32,
    "METHOD_TABLE": 40,
    "METHOD_COUNT": 48,
    "METHOD_FALLBACK": 56,
    "METHOD_DEFINITION": 64,
    "METHOD_WRAPPED": 72,
    "METHOD_BASIC_SIZE": 80,
}
METHOD_SLOTS = (
    "METHOD_VECTORCALL",
    "METHOD_DICT",
    "METHOD_BINDING",
    "METHOD_TABLE",
    "METHOD_COUNT",
    "METHOD_FALLBACK",
    "METHOD_DEFINITION",
    "METHOD_WRAPPED",
)


class PyObjectHead(ctypes.Structure):
    _fields_ = [("ob_refcnt", ctypes.c_ssize_t), ("ob_type", ctypes.c_void_p)]


class PyFloatObject(ctypes.Structure):
    _fields_ = [("ob_base", PyObjectHead), ("ob_fval", ctypes.c_double)]


class PyTupleObject(ctypes.Structure):
    _fields_ = [("ob_base", PyObjectHead), ("ob_size", ctypes.c_ssize_t), ("ob_item", ctypes.c_void_p * 1)]


class PyBuffer(ctypes.Structure):
    _fields_ = [
        ("buf", ctypes.c_void_p),
        ("obj", ctypes.c_void_p),
        ("len", ctypes.c_ssize_t),
        ("itemsize", ctypes.c_ssize_t),
        ("readonly", ctypes.c_int),
        ("ndim", ctypes.c_int),
        ("format", ctypes.c_char_p),
        ("shape", ctypes.POINTER(ctypes.c_ssize_t)),
        ("strides", ctypes.POINTER(ctypes.c_ssize_t)),
        ("suboffsets", ctypes.POINTER(ctypes.c_ssize_t)),
        ("internal", ctypes.c_void_p),
    ]


class PyMethodDef(ctypes.Structure):
    _fields_ = [
        ("ml_name", ctypes.c_char_p),
        ("ml_meth", ctypes.c_void_p),
        ("ml_flags", ctypes.c_int),
        ("ml_doc", ctypes.c_char_p),
    ]


def _pointer_at(obj: object, offset: int) -> int:
    return ctypes.c_void_p.from_address(id(obj) + offset).value or 0


def test_the_table_holds_the_pinned_layout() -> None:
    table = {name: getattr(abi, name) for name in dir(abi) if name[0].isupper()}
    assert table == PINNED


# ------------------------------------------------------------------------------------------ CPython


def test_object_layouts_match_ctypes_mirrors_and_live_objects() -> None:
    assert ctypes.sizeof(ctypes.c_void_p) == abi.POINTER_SIZE
    assert ctypes.sizeof(PyObjectHead) == abi.PY_OBJECT_HEAD_SIZE
    assert PyObjectHead.ob_type.offset == abi.PY_OBJECT_TYPE
    assert PyFloatObject.ob_fval.offset == abi.PY_FLOAT_VALUE
    assert PyTupleObject.ob_size.offset == abi.PY_TUPLE_SIZE
    assert PyTupleObject.ob_item.offset == abi.PY_TUPLE_ITEMS
    x = 2.5 + len("abc")  # a float object made at run time, not a constant
    assert _pointer_at(x, abi.PY_OBJECT_TYPE) == id(float)
    assert ctypes.c_double.from_address(id(x) + abi.PY_FLOAT_VALUE).value == 5.5
    items = (x, "b", None)
    assert ctypes.c_ssize_t.from_address(id(items) + abi.PY_TUPLE_SIZE).value == 3
    for i, item in enumerate(items):
        assert _pointer_at(items, abi.PY_TUPLE_ITEMS + abi.POINTER_SIZE * i) == id(item)


def test_py_buffer_layout_matches_a_ctypes_mirror_and_a_real_view() -> None:
    assert ctypes.sizeof(PyBuffer) == abi.PY_BUFFER_SIZE
    offsets = {
        "buf": abi.PY_BUFFER_BUF,
        "itemsize": abi.PY_BUFFER_ITEMSIZE,
        "ndim": abi.PY_BUFFER_NDIM,
        "format": abi.PY_BUFFER_FORMAT,
        "shape": abi.PY_BUFFER_SHAPE,
        "strides": abi.PY_BUFFER_STRIDES,
    }
    assert {name: getattr(PyBuffer, name).offset for name in offsets} == offsets
    a = np.zeros((3, 4), dtype=np.float32)[:, ::2]
    raw = (ctypes.c_char * abi.PY_BUFFER_SIZE)()
    get = ctypes.pythonapi.PyObject_GetBuffer
    get.argtypes = [ctypes.py_object, ctypes.c_void_p, ctypes.c_int]
    assert get(a, raw, abi.PyBUF_STRIDES | abi.PyBUF_FORMAT | abi.PyBUF_WRITABLE) == 0
    try:
        base = ctypes.addressof(raw)

        def read(ctype, offset):
            return ctype.from_address(base + offset).value

        assert read(ctypes.c_void_p, abi.PY_BUFFER_BUF) == a.ctypes.data
        assert read(ctypes.c_ssize_t, abi.PY_BUFFER_ITEMSIZE) == 4
        assert read(ctypes.c_int, abi.PY_BUFFER_NDIM) == 2
        assert read(ctypes.c_char_p, abi.PY_BUFFER_FORMAT) == b"f"
        shape = ctypes.cast(read(ctypes.c_void_p, abi.PY_BUFFER_SHAPE), ctypes.POINTER(ctypes.c_ssize_t))
        strides = ctypes.cast(read(ctypes.c_void_p, abi.PY_BUFFER_STRIDES), ctypes.POINTER(ctypes.c_ssize_t))
        assert (shape[0], shape[1]) == a.shape and (strides[0], strides[1]) == a.strides
    finally:
        ctypes.pythonapi.PyBuffer_Release(raw)
    # A read-only buffer refuses PyBUF_WRITABLE: the flag is the one CPython checks.
    with pytest.raises(BufferError):
        get(b"abc", raw, abi.PyBUF_WRITABLE)


def test_method_def_layout_matches_ctypes_and_the_generated_struct() -> None:
    import llvmlite.binding as llvm

    from aot.codegen.context import ModuleContext
    from aot.codegen.cpython import emit_fastcall_wrapper, try_function_type
    from aot.targets import CpuTarget

    assert ctypes.sizeof(PyMethodDef) == abi.PY_METHOD_DEF_SIZE
    assert PyMethodDef.ml_flags.offset == abi.PY_METHOD_DEF_FLAGS
    target = CpuTarget.host()
    module = ir.Module(name="method_def")
    try_fn = ir.Function(module, try_function_type(), "try_f")
    emit_fastcall_wrapper(ModuleContext(module, target), "f", try_fn, "(f64) → f64")
    module.triple = target.triple
    llmod = llvm.parse_assembly(str(module))
    data = target.target_machine().target_data
    struct = llmod.get_global_variable("def_f").global_value_type
    assert data.get_abi_size(struct) == abi.PY_METHOD_DEF_SIZE
    assert data.get_element_offset(struct, 2) == abi.PY_METHOD_DEF_FLAGS


# ------------------------------------------------------------------------------------------ the method object


def test_method_slots_are_distinct_aligned_and_inside_the_object() -> None:
    offsets = sorted(getattr(abi, name) for name in METHOD_SLOTS)
    assert offsets[0] >= abi.PY_OBJECT_HEAD_SIZE
    assert all(o % abi.POINTER_SIZE == 0 for o in offsets)
    assert all(b - a >= abi.POINTER_SIZE for a, b in itertools.pairwise(offsets))
    assert offsets[-1] + abi.POINTER_SIZE <= abi.METHOD_BASIC_SIZE


def test_method_type_sits_at_the_tables_offsets() -> None:
    cls = method_type()
    assert cls.__basicsize__ == abi.METHOD_BASIC_SIZE
    assert cls.__dictoffset__ == abi.METHOD_DICT
    assert cls.__weakrefoffset__ == 0
    obj = cls()
    fallback, definition, wrapped = object(), object(), object()
    obj._aot_table, obj._aot_count, obj._aot_vectorcall, obj._aot_binding = 0x5550, 7, 0x7770, 0x3330
    try:
        obj._aot_fallback, obj.__aot_method__, obj.__wrapped__ = fallback, definition, wrapped
        assert _pointer_at(obj, abi.METHOD_TABLE) == 0x5550
        assert ctypes.c_ssize_t.from_address(id(obj) + abi.METHOD_COUNT).value == 7
        assert _pointer_at(obj, abi.METHOD_VECTORCALL) == 0x7770
        assert _pointer_at(obj, abi.METHOD_BINDING) == 0x3330
        assert _pointer_at(obj, abi.METHOD_FALLBACK) == id(fallback)
        assert _pointer_at(obj, abi.METHOD_DEFINITION) == id(definition)
        assert _pointer_at(obj, abi.METHOD_WRAPPED) == id(wrapped)
        obj.own = 1  # the instance dict lives at the dict offset
        assert _pointer_at(obj, abi.METHOD_DICT) == id(obj.__dict__)
    finally:
        obj._aot_vectorcall, obj._aot_table, obj._aot_count, obj._aot_binding = 0, 0, 0, 0  # (fake pointers)


def test_the_generated_dispatcher_reads_the_tables_slots() -> None:
    from aot.codegen.context import ModuleContext
    from aot.codegen.cpython import emit_dispatcher
    from aot.targets import CpuTarget

    module = ir.Module(name="dispatch")
    emit_dispatcher(ModuleContext(module, CpuTarget.host()))

    def offsets(name: str) -> set[int]:
        text = str(module.get_global(name))
        return {int(o) for o in re.findall(r"getelementptr i8, i8\* %\S+, i64 (\d+)", text)}

    # (the binding: where a call that no specialization takes goes when the method has one)
    assert offsets("aot_dispatch") == {abi.METHOD_TABLE, abi.METHOD_COUNT, abi.METHOD_FALLBACK, abi.METHOD_BINDING}
    # The binder (emitted with it) reads the keyword names' tuple too.
    assert offsets(abi.BINDER_SYMBOL) == {
        abi.METHOD_BINDING,
        abi.METHOD_TABLE,
        abi.METHOD_COUNT,
        abi.METHOD_FALLBACK,
        abi.PY_TUPLE_SIZE,
        abi.PY_TUPLE_ITEMS,
    }


@aot.jit
def _twice(x):
    return x + x


def test_a_method_with_two_specializations_dispatches_natively() -> None:
    from aot.runtime import runtime

    assert _twice(3) == 6 and _twice(1.25) == 2.5
    assert _twice._aot_count == 2 and _twice._aot_vectorcall == runtime().compiler.dispatcher_address()
    for _ in range(3):  # through the dispatcher's table walk
        assert _twice(20) == 40 and _twice(0.5) == 1.0
    with pytest.raises(TypeError, match="cannot take a str"):  # no specialization takes it: to the fallback
        _twice("ab")
