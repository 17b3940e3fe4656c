"""The native type of method objects, made at run time with ``PyType_FromSpecWithBases`` (no C extension).

    Method = method_type()                 # a heap type named aot.Method, with vectorcall
    obj = Method()
    set_vectorcall(obj, dispatcher_address)
    set_table(obj, table_address, count)   # the try_ wrappers the dispatcher walks

Layout of an instance (bytes): 0 object head · 16 vectorcall · 24 __dict__ · 32 binding (``aot_bind``'s) ·
40 dispatch table · 48 table length · 56 fallback (a Python callable) · 64 ``__aot_method__`` (its
definition) · 72 ``__wrapped__`` (the Python function). The generated dispatcher
(``aot.codegen.cpython.emit_dispatcher``) reads the offsets up to the fallback.

What a method object is made of at import lives in those slots: no instance dict is made (one is, as for a
function, when someone sets an attribute of their own), which keeps ``@aot.jit`` to two stores per method
and one object fewer for the garbage collector to go through. ``__name__``, ``__qualname__``,
``__module__``, ``__doc__`` and ``__annotations__`` (which ``functools.wraps`` would copy into a dict) are
the Python function's, read through it until set on the method object (then its dict holds them).

Beyond calls it behaves as a function does: as a class attribute it binds the instance (``__get__``, which
also makes it a routine to ``inspect`` and ``pydoc``), and it pickles and copies by reference
(``__reduce__``), so another process imports its module and uses its own method object, bound to that
process's prebuilt code.

A new method object has no vectorcall (NULL): CPython then calls ``tp_call``, the class's ``__call__``
(``aot.runtime.method`` sets it), which runs the first call in Python. Import therefore needs no native
code at all; the first specialization published makes every later call native.

Hot path (import: one method object per ``@aot.jit``; calls),
guarded by ``tests/bench/instructions.py`` and ``tests/bench/test_import_bench.py``: measure before and after
any change here.
"""

from __future__ import annotations

import ctypes
from types import MethodType

from .. import abi

TYPE_CHECKING = False  # (not ``typing.TYPE_CHECKING``: ``import aot`` imports no ``typing`` for this module)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_api = ctypes.pythonapi

# The slots' offsets: the generated dispatcher reads the same table (aot.abi), so the two cannot drift apart.
VECTORCALL_OFFSET, DICT_OFFSET, BINDING_OFFSET = abi.METHOD_VECTORCALL, abi.METHOD_DICT, abi.METHOD_BINDING
TABLE_OFFSET, COUNT_OFFSET, FALLBACK_OFFSET = abi.METHOD_TABLE, abi.METHOD_COUNT, abi.METHOD_FALLBACK
METHOD_OFFSET, WRAPPED_OFFSET = abi.METHOD_DEFINITION, abi.METHOD_WRAPPED
BASIC_SIZE = abi.METHOD_BASIC_SIZE

_T_PYSSIZET, _T_OBJECT_EX, _READONLY = 19, 16, 1
_Py_tp_members, _Py_tp_new, _Py_tp_doc, _Py_tp_getset = 72, 65, 56, 73
_Py_TPFLAGS_BASETYPE, _Py_TPFLAGS_HAVE_VECTORCALL = 1 << 10, 1 << 11


class _MemberDef(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("type", ctypes.c_int),
        ("offset", ctypes.c_ssize_t),
        ("flags", ctypes.c_int),
        ("doc", ctypes.c_char_p),
    ]


class _GetSetDef(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("get", ctypes.c_void_p),
        ("set", ctypes.c_void_p),
        ("doc", ctypes.c_char_p),
        ("closure", ctypes.c_void_p),
    ]


class _Slot(ctypes.Structure):
    _fields_ = [("slot", ctypes.c_int), ("pfunc", ctypes.c_void_p)]


class _Spec(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("basicsize", ctypes.c_int),
        ("itemsize", ctypes.c_int),
        ("flags", ctypes.c_uint),
        ("slots", ctypes.POINTER(_Slot)),
    ]


def _address(name: str) -> int:
    return ctypes.cast(getattr(_api, name), ctypes.c_void_p).value  # type: ignore[return-value]


_keepalive: list = []


class _Name:
    """``__name__`` of method objects: the Python function's until one is set on the object (this
    descriptor has no ``__set__``, so the instance dict comes first). It lives on ``MethodBase``: the
    method type's own ``__name__`` is ``type``'s (a data descriptor, which wins on the class itself)."""

    __slots__ = ()

    def __get__(self, obj: Any, cls: Any = None) -> Any:
        return self if obj is None else obj.__wrapped__.__name__


class MethodBase:
    """The Python side of ``aot.Method``: calls that reach it are first calls (no native code yet).

    An instance holds ``__aot_method__`` (the definition) and ``__wrapped__`` (the Python function) in
    native slots; the rest is derived from them here."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        # Only what no slot, class attribute or instance dict holds reaches here. ``__qualname__`` is one:
        # a class cannot hold it for its instances (``type`` takes it for the class's own name).
        if name == "__qualname__":
            return self.__wrapped__.__qualname__
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # ``__call__`` (first calls) and ``_aot_dispatcher`` come from ``aot.runtime.method``, which makes the
    # method objects' class.
    __call__: Callable[..., Any]

    @property
    def py_func(self) -> Any:
        """The Python function the method compiles."""
        return self.__wrapped__

    __name__ = _Name()

    def __get__(self, obj: Any, cls: Any = None) -> Any:
        # As a class attribute, bind the instance as a function would: ``C().g(x)`` calls ``g(C(), x)`` (and
        # so, for a numeric method, usually fails as the dispatcher does on any other argument it cannot
        # take). Only lookups through a class come here: a call of the object itself is its vectorcall.
        # A ``__get__`` without ``__set__`` also makes the object a method descriptor, hence a routine, to
        # ``inspect`` (and so a function with a signature to ``pydoc`` and ``help``).
        return self if obj is None else MethodType(self, obj)

    def __reduce__(self) -> str:
        # By reference, as pickle saves a function: it looks ``__qualname__`` up in ``__module__`` (and
        # raises its own error for a method it cannot find there, one defined inside a function say). The
        # process that loads it imports that module and gets its own method object; ``copy`` and
        # ``deepcopy`` give the object itself.
        return self.__qualname__


def method_type() -> type:
    """The method type, made on the first call (the runtime's ``aot.runtime.method`` makes it once)."""
    if _MADE:
        return _MADE[0]
    # No __weaklistoffset__: the type keeps object's deallocation, which would not clear weak references.
    members = (_MemberDef * 10)(
        _MemberDef(b"__vectorcalloffset__", _T_PYSSIZET, VECTORCALL_OFFSET, _READONLY, None),
        _MemberDef(b"__dictoffset__", _T_PYSSIZET, DICT_OFFSET, _READONLY, None),
        # Writable views of the native slots, so the runtime sets them without ctypes (fast at import).
        _MemberDef(b"_aot_vectorcall", _T_PYSSIZET, VECTORCALL_OFFSET, 0, None),
        _MemberDef(b"_aot_table", _T_PYSSIZET, TABLE_OFFSET, 0, None),
        _MemberDef(b"_aot_count", _T_PYSSIZET, COUNT_OFFSET, 0, None),
        _MemberDef(b"_aot_binding", _T_PYSSIZET, BINDING_OFFSET, 0, None),
        _MemberDef(b"_aot_fallback", _T_OBJECT_EX, FALLBACK_OFFSET, 0, None),
        _MemberDef(b"__aot_method__", _T_OBJECT_EX, METHOD_OFFSET, 0, None),
        _MemberDef(b"__wrapped__", _T_OBJECT_EX, WRAPPED_OFFSET, 0, None),
        _MemberDef(),
    )
    doc = ctypes.c_char_p(b"A compiled method: calls dispatch natively on the argument types.")
    getset = (_GetSetDef * 2)(
        _GetSetDef(b"__dict__", _address("PyObject_GenericGetDict"), _address("PyObject_GenericSetDict"), None, None),
        _GetSetDef(),
    )
    slots = (_Slot * 5)(  # (tp_call comes from the class's __call__: a NULL vectorcall falls back to it)
        _Slot(_Py_tp_getset, ctypes.cast(getset, ctypes.c_void_p).value),
        _Slot(_Py_tp_members, ctypes.cast(members, ctypes.c_void_p).value),
        _Slot(_Py_tp_new, _address("PyType_GenericNew")),
        _Slot(_Py_tp_doc, ctypes.cast(doc, ctypes.c_void_p).value),
        _Slot(0, None),
    )
    spec = _Spec(b"aot.Method", BASIC_SIZE, 0, _Py_TPFLAGS_HAVE_VECTORCALL | _Py_TPFLAGS_BASETYPE, slots)
    _keepalive.extend([members, getset, doc, slots, spec])
    from_spec = _api.PyType_FromSpecWithBases
    from_spec.restype = ctypes.py_object
    from_spec.argtypes = [ctypes.c_void_p, ctypes.py_object]
    cls = from_spec(ctypes.addressof(spec), (MethodBase,))
    cls.__module__ = _Module(cls.__module__)
    cls.__doc__ = _Doc(cls.__doc__)
    cls.__annotations__ = _Annotations()
    _MADE.append(cls)
    return cls


_MADE: list[type] = []  # [the method type], once made


class _Module(str):
    """``__module__`` of the method type: to the class, its own module (a str, as ``type`` expects of
    that entry of a class's dict); to an instance, its Python function's module (this str is also a
    descriptor, which instances reach through the class's dict). An instance's own ``__module__``, once
    set, is in its dict, which comes first, as for functions."""

    __slots__ = ()

    def __get__(self, obj: Any, cls: Any = None) -> str:
        return self if obj is None else obj.__wrapped__.__module__


class _Doc(str):
    """``__doc__`` of the method type, as ``_Module`` (the class's docstring to the class; the Python
    function's to an instance, until one is set on it)."""

    __slots__ = ()

    def __get__(self, obj: Any, cls: Any = None) -> Any:
        return self if obj is None else obj.__wrapped__.__doc__


class _Annotations(dict):
    """``__annotations__`` of the method type, as ``_Module``: to the class, its own (none); to an instance,
    its Python function's, until set on it. It must be in the method type's own dict: reading a class's
    ``__annotations__`` when its dict has none stores an empty one there, which would hide this from
    instances."""

    __slots__ = ()

    def __get__(self, obj: Any, cls: Any = None) -> Any:
        return self if obj is None else obj.__wrapped__.__annotations__


def set_vectorcall(obj: Any, address: int) -> None:
    obj._aot_vectorcall = address


def set_table(obj: Any, address: int, count: int) -> None:
    obj._aot_count = 0  # never let the dispatcher see a count ahead of its table
    obj._aot_table = address
    obj._aot_count = count


def builtin_from_def(method_def_address: int) -> object:
    """A real builtin function from a ``PyMethodDef`` in compiled code."""
    new = _api.PyCFunction_NewEx
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.py_object]
    return new(method_def_address, None, None)
