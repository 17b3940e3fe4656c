"""Binary layouts that generated code and the runtime must agree on: CPython's objects and aot's method object.

    abi.METHOD_TABLE      → 40   the dispatcher loads a method object's table of try_ wrappers from self + 40
    abi.PY_BUFFER_NDIM    → 36   argument unboxing reads Py_buffer.ndim at view + 36

The generated code (``aot.codegen.cpython``) reads these offsets through raw pointers, and the runtime's method
type (``aot.runtime.methodtype``) declares its native slots at them: both read this one table, so they cannot
drift apart (a dispatcher reading the table from the wrong slot would call through garbage). The values are
those of 64-bit CPython 3.10–3.13, neither debug nor free-threaded builds (the image gate checks the Python ABI).
Prebuilt libraries bake them in, so changing one needs a new compiler version; ``tests/test_abi.py`` pins each
value and checks it against CPython itself. Pure Python, importable without llvmlite.
"""

from __future__ import annotations

POINTER_SIZE = 8

# ----------------------------------------------------------------------------------------- CPython objects
PY_OBJECT_HEAD_SIZE = 16
"""``sizeof(PyObject)``: ``ob_refcnt``, ``ob_type``."""
PY_OBJECT_TYPE = 8
"""``offsetof(PyObject, ob_type)``: scalar arguments are type-checked by comparing this pointer."""
PY_FLOAT_VALUE = 16
"""``offsetof(PyFloatObject, ob_fval)``."""
PY_TUPLE_SIZE = 16
"""``offsetof(PyTupleObject, ob_base.ob_size)``."""
PY_TUPLE_ITEMS = 24
"""``offsetof(PyTupleObject, ob_item)``: item ``i`` is the pointer at ``PY_TUPLE_ITEMS + POINTER_SIZE * i``."""

# ``Py_buffer``, filled by ``PyObject_GetBuffer``
PY_BUFFER_SIZE = 80
PY_BUFFER_BUF = 0
PY_BUFFER_ITEMSIZE = 24
PY_BUFFER_NDIM = 36  # an int
PY_BUFFER_FORMAT = 40
PY_BUFFER_SHAPE = 48
PY_BUFFER_STRIDES = 56
PyBUF_WRITABLE = 0x1
PyBUF_FORMAT = 0x4
PyBUF_STRIDES = 0x18  # PyBUF_ND | 0x10

# ``PyMethodDef``: ``{const char *ml_name; PyCFunction ml_meth; int ml_flags; const char *ml_doc}``
PY_METHOD_DEF_SIZE = 32
PY_METHOD_DEF_FLAGS = 16
METH_FASTCALL = 0x80

PY_VECTORCALL_ARGUMENTS_OFFSET = 1 << 63
"""The flag a vectorcall's ``nargsf`` may carry besides the argument count."""

# ----------------------------------------------------------------------------------------- the method object
# An instance of ``aot.Method`` (a heap type made by ``aot.runtime.methodtype``): the object head, then
# pointer-sized slots. The generated dispatcher reads the table, its length and the fallback.
METHOD_VECTORCALL = 16
"""The vectorcall function (the type's ``__vectorcalloffset__``); NULL until the first specialization."""
METHOD_DICT = 24
"""The instance dict (``__dictoffset__``), made only when someone sets an attribute of their own."""
METHOD_BINDING = 32
"""How the native binder (``aot_bind``) binds keyword arguments: the address of the method's binding words
(``aot.runtime.dispatch.Binding``), or 0. Read only by ``aot_bind``, published only where a method has it."""
BINDER_SYMBOL = "aot_bind"
"""The native binder's symbol, next to ``aot_dispatch`` in every package's library and in the JIT's."""
BINDER_MAX_PARAMS = 32
"""The most parameters a method bound by ``aot_bind`` may have (it gathers the arguments in a frame array)."""
METHOD_TABLE = 40
"""The dispatch table: an array of ``try_`` wrapper addresses, tried in order."""
METHOD_COUNT = 48
"""The number of entries in the dispatch table (a ``Py_ssize_t``)."""
METHOD_FALLBACK = 56
"""The Python callable a call goes to when no specialization takes the arguments."""
METHOD_DEFINITION = 64
"""``__aot_method__``: the method's definition."""
METHOD_WRAPPED = 72
"""``__wrapped__``: the Python function."""
METHOD_BASIC_SIZE = 80
"""``__basicsize__`` of the method type."""
