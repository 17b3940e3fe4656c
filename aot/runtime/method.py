"""``@aot.jit`` and the Python side of method objects (their native type is ``methodtype``).

    @aot.jit
    def f(x, y): return x * y + 1.0

    f(2.0, 3.0)      # first call: load or compile f(f64, f64), add it to f's native dispatch table
    f(2.0, 3.0)      # later calls: the native dispatcher finds it; no Python runs
    f.py_func(2.0, 3.0), f.specializations(), f.inspect_ir("f64", "f64")

Hot path (import: ``jit`` runs once per method), guarded by ``tests/bench/test_import_bench.py``.
"""

from __future__ import annotations

from types import FunctionType

from ..types import Type
from ..world import MethodOptions
from .dispatch import Dispatcher, dispatcher_of
from .firstcall import Specialization
from .methodtype import method_type
from .signatures import types_named
from .state import runtime

TYPE_CHECKING = False  # (not ``typing.TYPE_CHECKING``: importing the runtime imports no ``typing``)
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any


def _call(self: Any, *args: Any, **kwargs: Any) -> Any:
    """A call of a method object with no native code for it: its first one (see ``methodtype``)."""
    mdef = self.__aot_method__
    return (mdef.dispatcher or dispatcher_of(mdef)).call_python(args, kwargs)  # type: ignore[union-attr]


def _dispatcher(self: Any) -> Dispatcher:
    return dispatcher_of(self.__aot_method__)  # type: ignore[return-value]  # (a method object's: never None)


def _specializations(self: Any) -> list[Specialization]:
    """What is compiled now for this method, and where each came from."""
    return list(_dispatcher(self).specs)


def _resolve_types(self: Any, argtypes: Sequence[Any]) -> tuple[Type, ...]:
    d = _dispatcher(self)
    if argtypes:
        return types_named(argtypes)
    if len(d.declared) == 1:
        return d.declared[0]
    raise TypeError("give the argument types, e.g. f.inspect_ir('f64', 'f64[:]')")


def _inspect_ir(self: Any, *argtypes: Any) -> str:
    """The typed IR of this method for ``argtypes`` (type objects or strings)."""
    from ..ir import print_function

    d = _dispatcher(self)
    return print_function(runtime().compiler.infer(d.mdef, _resolve_types(self, argtypes)).function)


def _inspect_llvm(self: Any, *argtypes: Any) -> str:
    """The optimised LLVM IR of this method for ``argtypes``."""
    d = _dispatcher(self)
    return runtime().compiler.llvm_ir(d.mdef, _resolve_types(self, argtypes))


def _inspect_asm(self: Any, *argtypes: Any) -> str:
    """The machine code of this method for ``argtypes``, as assembly."""
    d = _dispatcher(self)
    return runtime().compiler.assembly(d.mdef, _resolve_types(self, argtypes))


def _repr(self: Any) -> str:
    return f"<aot method {_dispatcher(self).mdef.key}>"


def _method_class() -> type:
    """The type of method objects (``aot.Method``) with its Python-level methods. Made once, when aot is
    imported, as a C extension's types are."""
    cls: Any = method_type()
    cls.__call__ = _call
    cls._aot_dispatcher = property(_dispatcher)
    cls.specializations = _specializations
    cls.inspect_ir = _inspect_ir
    cls.inspect_llvm = _inspect_llvm
    cls.inspect_asm = _inspect_asm
    cls.__repr__ = _repr
    return cls


_METHOD_CLASS = _method_class()


_OPTIONS = {True: MethodOptions(boundscheck=True), False: MethodOptions(boundscheck=False)}


def jit(
    func: Callable | None = None,
    *,
    signatures: Sequence[str] | None = None,
    boundscheck: bool | None = True,
    parallel: bool = False,
    nogil: bool = False,
    **numba_options: Any,
) -> Any:
    """Make a module-level function a compiled method (see the module docstring).

    This runs once per method at import, so it is kept to about a microsecond: it reads no image and
    makes no native code (the first call does), and signatures are parsed on the first call (``aot build``
    reports malformed ones for every method). Numba's spelling (``@aot.jit("f8(f8[:])", cache=True)``) is
    checked and translated at decoration by ``numbacompat``, imported only then."""
    if numba_options or (func is not None and type(func) is not FunctionType):
        from .numbacompat import check_numba_options, numba_signatures

        check_numba_options(numba_options)
        if isinstance(func, (str, list, tuple)):
            if signatures is not None:
                raise TypeError(
                    "@aot.jit: give signatures once, positionally in Numba's spelling or as signatures=[...] in aot's"
                )
            func, signatures = None, numba_signatures(func)
    if boundscheck is None:  # (Numba's default spelled out: aot's default, the checks kept)
        boundscheck = True
    if func is None:
        if type(signatures) is str:
            raise TypeError("@aot.jit(signatures=...) takes a list of signature strings, not one string")
        return lambda f: jit(f, signatures=signatures, boundscheck=boundscheck, parallel=parallel, nogil=nogil)
    if type(func) is not FunctionType:
        raise TypeError(
            f"@aot.jit needs a Python function (or signature strings in Numba's spelling), not {type(func).__name__}"
        )
    rt = runtime()
    obj = _METHOD_CLASS()
    table = rt.table
    key = f"{func.__module__}:{func.__qualname__}"
    redefining = key in table.methods
    options = _OPTIONS[bool(boundscheck)]
    if parallel or nogil:
        options = MethodOptions(bool(boundscheck), parallel=bool(parallel), nogil=bool(nogil))
    mdef = table.define(func, options, key, obj, signatures)  # (no dispatcher until called)
    if redefining:
        rt.redefine(key)
    obj.__aot_method__, obj.__wrapped__ = mdef, func  # (native slots: see ``methodtype``)
    return obj
