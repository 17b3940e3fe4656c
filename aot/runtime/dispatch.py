"""Dispatchers: the Python side of a method object — its signatures, its compiled specializations and the
native dispatch table they are published in, and the calls no native code takes.

    d = dispatcher_of(mdef)          # made on the method's first call (importing a module makes none)
    d.call_python(args, kwargs)      # convert to a declared signature; the first call obtains a specialization
    d.specs                          # what is compiled now (``aot.runtime.firstcall.Specialization``)

A method's first call, and any call that no compiled specialization accepts, reaches
``Dispatcher.call_python`` (Python): it converts arguments to a declared signature and obtains the
specialization (``aot.runtime.firstcall``). Later calls with those types run natively without any Python.

Hot path (every first call, and every call no specialization takes),
guarded by ``tests/bench/instructions.py`` and ``tests/bench/test_import_bench.py``: measure before and after
any change here.
"""

from __future__ import annotations

import ctypes

from .. import abi
from ..binding import Parameters
from ..types import ArrayType, ScalarType, TupleType, Type, accepts, typeof
from ..world import MethodDef
from .firstcall import Specialization, obtain
from .methodtype import set_table, set_vectorcall
from .signatures import SCALARS, convert, convertible, declared_signatures, scalar_types
from .state import ReadOnlyBufferError, runtime

TYPE_CHECKING = False  # (not ``typing.TYPE_CHECKING``: importing the runtime imports no ``typing``)
if TYPE_CHECKING:
    from typing import Any


class Dispatcher:
    """The Python side of a method object: its definition, signatures and compiled specializations. Made on
    the method's first call, or when a build asks for its signatures (``dispatcher_of``): importing a module
    makes none."""

    __slots__ = (
        "obj",
        "mdef",
        "_declared",
        "specs",
        "recorded",
        "_tables",
        "uncompiled",
        "binds_in_python",
        "_parameters",
        "_binding",
        "unbindable",
    )

    def __init__(self, mdef: MethodDef):
        self.obj = mdef.method
        self.mdef = mdef
        self._declared: tuple[tuple[Type, ...], ...] | None = None
        self.specs: tuple[Specialization, ...] = ()
        self.recorded: dict[tuple[Type, ...], None] | None = None  # argument types seen by `aot build`
        self._tables: tuple[Any, ...] | None = None  # every table published stays alive (a call may walk one)
        self.uncompiled: set[tuple[Type, ...]] | None = None  # argument types whose calls run ``.py_func``
        # Keyword-only parameters (or *args/**kwargs): compiled code takes every parameter by position, so
        # such a method's specializations are never its vectorcall (which would take keyword-only arguments
        # by position too): the native binder (``aot_bind``) binds its calls by Python's rules, and what it
        # sends back binds here in Python (``aot.binding``) and calls the specialization's builtin.
        code = mdef.py_func.__code__
        self.binds_in_python = code.co_kwonlyargcount > 0 or bool(code.co_flags & 0x0C)  # (CO_VARARGS|VARKEYWORDS)
        self._parameters: Parameters | None = None  # (made on the first call with keywords or defaults)
        # What the native binder (``aot_bind``) reads: made on the first publication for a method with
        # keyword-only parameters, on the first call with keywords or left-out defaults for the others.
        self._binding: Binding | None = None
        self.unbindable = False  # (no native binder for this method: ``_refresh_binding``)

    @property
    def declared(self) -> tuple[tuple[Type, ...], ...]:
        if self._declared is None:
            self._declared = declared_signatures(self.mdef.py_func, self.mdef.signatures)
        return self._declared

    # ------------------------------------------------------------------ specializations
    def add(self, spec: Specialization) -> None:
        self.specs += (spec,)
        self._publish()

    def drop(self, argtypes: tuple[str, ...]) -> bool:
        """Remove the specialization for these argument types (its code relied on a stale definition)."""
        kept = tuple(s for s in self.specs if tuple(map(str, s.argtypes)) != tuple(argtypes))
        if len(kept) == len(self.specs):
            return False
        self.specs = kept
        self._publish()
        return True

    def _publish(self) -> None:
        if self._tables is None:  # the first publication: native code may call the fallback from now on
            self._tables = ()
            self.obj._aot_fallback = self  # called as ``fallback`` (no bound method kept per method)
        specs = self.specs
        if not self.declared and any(map(_unsigned_scalars, specs)):
            # A specialization inferred for unsigned scalars (NumPy's) would take Python ints natively (its
            # wrapper converts them as a declared signature asks), where Python's types say i64: every call
            # is dispatched in Python instead, by its arguments' exact types.
            if self._tables:
                set_table(self.obj, 0, 0)
            set_vectorcall(self.obj, 0)
            return
        if self.binds_in_python:
            # Keyword-only parameters: the native binder is the vectorcall (it takes no call by position that
            # Python would not); without one, every call binds in Python.
            set_vectorcall(self.obj, 0)  # (no call walks a table being replaced)
            if specs and self._refresh_binding():
                self._publish_table(specs)
                set_vectorcall(self.obj, self._binding.binder)  # type: ignore[union-attr]
            return
        if self._binding is not None:
            self._refresh_binding()  # (defaults reassigned since)
        if len(specs) == 1 and specs[0].vectorcall_address:
            # One specialization: it is the vectorcall itself (no table walk, no indirect call).
            if self._binding is not None:  # (what the binder walks for calls with keywords or defaults)
                self._publish_table(specs)
            elif self._tables:  # (a table was published before)
                set_table(self.obj, 0, 0)
            self.obj._aot_vectorcall = specs[0].vectorcall_address  # (``set_vectorcall``, on every first call)
            return
        if len(specs) > 1:  # contiguous-array specializations first: the fast path when both accept a call
            specs = self.specs = tuple(
                sorted(specs, key=lambda s: sum(isinstance(t, ArrayType) and t.layout == "A" for t in s.argtypes))
            )
        self._publish_table(specs)
        # None: no vectorcall, so calls reach MethodBase.__call__ (Python) as before the first one.
        set_vectorcall(self.obj, _dispatcher_address(runtime(), self.mdef.module) if specs else 0)

    def _publish_table(self, specs: tuple[Specialization, ...]) -> None:
        table = (ctypes.c_void_p * max(len(specs), 1))(*[s.try_address for s in specs])
        self._tables = (*(self._tables or ()), table)
        set_table(self.obj, ctypes.addressof(table), len(specs))

    def _refresh_binding(self) -> bool:
        """Make the words the native binder reads (``Binding``), or make them again after the defaults were
        reassigned; False, and none, when the method cannot have them (more parameters than the binder takes,
        ``*args``, or no binder: a library built before binders existed, without a compiler)."""
        parameters = self.parameters()
        if self._binding is not None and self._binding.parameters is parameters:
            return True
        code = self.mdef.py_func.__code__
        address = 0
        if code.co_argcount + code.co_kwonlyargcount <= abi.BINDER_MAX_PARAMS and not code.co_flags & 0x0C:
            address = _dispatcher_address(runtime(), self.mdef.module, abi.BINDER_SYMBOL)
        if not address:
            self.obj._aot_binding, self._binding, self.unbindable = 0, None, True
            return False
        binding = Binding(parameters, self.mdef.py_func, address)
        self._tables = (*(self._tables or ()), binding)  # (kept alive: a call may be reading the old words)
        self.obj._aot_binding = binding.address
        self._binding = binding
        return True

    def find(self, argtypes: tuple[Type, ...]) -> Specialization | None:
        for spec in self.specs:
            if len(spec.argtypes) == len(argtypes) and all(accepts(d, a) for d, a in zip(spec.argtypes, argtypes)):
                return spec
        return None

    # ------------------------------------------------------------------ slow path
    def fallback(self, *args: Any, **kwargs: Any) -> Any:
        """What native code calls when no specialization takes a call."""
        return self.call_python(args, kwargs)

    __call__ = fallback

    def call_python(self, args: tuple, kwargs: dict) -> Any:
        """A call that no native code took: the first one (``MethodBase.__call__``), or one that no
        specialization accepts. Converts to a declared signature, loads or compiles, then calls natively."""
        if kwargs or len(args) != self.mdef.py_func.__code__.co_argcount or self.binds_in_python:
            parameters = self.parameters()
            binding = self._binding
            if self.specs and not self.unbindable and (binding is None or binding.parameters is not parameters):
                # From now on such calls bind natively (this one came here: the method had no binding words
                # yet, or the defaults were reassigned since they were made).
                if self._refresh_binding():
                    self._publish()
            bound = parameters.bind(args, kwargs)  # keywords and defaults, by position
            if bound is None:  # a call Python rejects: the function itself raises Python's own TypeError
                return self.mdef.py_func(*args, **kwargs)
            if not self.binds_in_python:
                return self.obj(*bound)  # by position: natively when a specialization takes it
            args = bound
        n = len(args)
        classes = (type(args[0]),) if n == 1 else (type(args[0]), type(args[1])) if n == 2 else tuple(map(type, args))
        common = SCALARS.get(classes) or scalar_types(classes)
        if common is not None:  # (the common case: scalars, whose types' texts are known too)
            argtypes, texts, _ = common
        else:
            texts = None
            try:
                argtypes = tuple(map(typeof, args))
            except TypeError as err:
                raise TypeError(f"{self.mdef.key}: {err}") from None
        rt = runtime()
        if rt.building:
            if not self.declared:
                if self.recorded is None:
                    self.recorded = {}
                self.recorded.setdefault(argtypes)
            return self.plain(args)
        declared = self.declared
        if not self.specs and (not declared or argtypes in declared):
            # The first call, with exactly a compiled signature's types: load it (or compile it), no
            # conversions to work out.
            spec = obtain(self, argtypes, texts, rt)
            if spec is None:
                return self.plain(args)
            if self.binds_in_python:
                return self.call(spec, args, argtypes)
            return self.obj(*args)  # natively, through the specialization just published
        if declared:
            n = len(argtypes)
            target = next((d for d in declared if len(d) == n and all(map(accepts, d, argtypes))), None)
            converted = args  # (a signature that accepts the values as they are: a C array for an A one)
            if target is None:
                target = next((d for d in declared if len(d) == n and all(map(convertible, argtypes, d))), None)
                if target is None:
                    raise TypeError(self.mismatch(declared, argtypes))
                converted = tuple(map(convert, args, target))
            spec = self.find(target)
            if spec is None:
                spec = obtain(self, target, getattr(target, "texts", None))
                if spec is None:
                    return self.plain(args)
                if self.binds_in_python:
                    return self.call(spec, converted, argtypes)
                return self.obj(*converted)  # natively, through the table just extended
            return self.call(spec, converted, argtypes)
        spec = self.find(argtypes)
        if spec is None:
            spec = obtain(self, argtypes)
            if spec is None:
                return self.plain(args)
            if self.binds_in_python:
                return self.call(spec, args, argtypes)
            return self.obj(*args)  # natively, through the table just extended
        return self.call(spec, args, argtypes)

    def mismatch(self, declared: tuple[tuple[Type, ...], ...], argtypes: tuple[Type, ...]) -> str:
        """Why no declared signature takes a call: the signatures, and for the closest one (of the call's
        arity) the first argument it does not take, by name."""
        sigs = ", ".join("(" + ", ".join(map(str, d)) + ")" for d in declared)
        text = f"{self.mdef.key}: no compiled signature takes ({', '.join(map(str, argtypes))}); declared: {sigs}"
        same_arity = [d for d in declared if len(d) == len(argtypes)]
        if len(same_arity) == 1:
            names = self.mdef.py_func.__code__.co_varnames
            for i, (want, got) in enumerate(zip(same_arity[0], argtypes)):
                if not convertible(got, want):
                    why = ""
                    if isinstance(want, ArrayType) and isinstance(got, ArrayType) and want.layout == "C":
                        why = " (a C-contiguous array is declared)" if got.layout != "C" else ""
                    text += f"; argument '{names[i]}' is {got}, where {want} is declared{why}"
                    break
        return text

    def plain(self, args: tuple) -> Any:
        """``.py_func`` on a call's arguments in parameter order (keyword-only ones passed by name again)."""
        code = self.mdef.py_func.__code__
        if not code.co_kwonlyargcount or code.co_flags & 0x0C:  # (*args/**kwargs: never compiled)
            return self.mdef.py_func(*args)
        n = code.co_argcount
        return self.mdef.py_func(*args[:n], **dict(zip(self.parameters().params[n:], args[n:])))

    def parameters(self) -> Parameters:
        """How calls from Python bind to the method's parameters (made again when its defaults are reassigned)."""
        known = self._parameters
        if known is None or not known.holds_for(self.mdef.py_func):
            known = self._parameters = Parameters(self.mdef.py_func)
        return known

    def call(self, spec: Specialization, args: tuple, argtypes: tuple[Type, ...]) -> Any:
        try:
            return spec.builtin(*args)
        except TypeError as err:
            if "do not match the compiled signature" not in str(err):
                raise
        # The types matched but the native check did not: a read-only buffer the function writes to,
        # or a scalar of a subclass (e.g. a NumPy scalar) that needs converting.
        converted = []
        for value, t in zip(args, spec.argtypes):
            if isinstance(t, ArrayType):
                with memoryview(value) as view:
                    if view.readonly:
                        raise ReadOnlyBufferError(
                            f"{self.mdef.key}: assignment destination is read-only "
                            f"(the compiled function writes to this array)"
                        )
                converted.append(value)
            else:
                converted.append(convert(value, t))
        return spec.builtin(*converted)


def _unsigned_scalars(spec: Specialization) -> bool:
    """Whether a specialization takes an unsigned integer scalar (also inside a tuple)."""

    def unsigned(t: Type) -> bool:
        if isinstance(t, TupleType):
            return any(map(unsigned, t.items))
        return isinstance(t, ScalarType) and t.is_int and not t.is_signed

    return any(map(unsigned, spec.argtypes))


# ---------------------------------------------------------------------------------- method objects


def dispatcher_of(mdef: MethodDef) -> Dispatcher | None:
    """The dispatcher of an ``@aot.jit`` method (made when first needed: importing a module makes none), or
    None for a definition that is no such method."""
    d = mdef.dispatcher
    if d is None and mdef.method is not None:
        made = Dispatcher(mdef)
        # Two threads' first calls must share one dispatcher (the tables it publishes must stay alive): the
        # one made first is kept. Between this test and the store nothing calls, so no other thread runs.
        d = mdef.dispatcher
        if d is None:
            d = mdef.dispatcher = made
    return d


def _dispatcher_address(rt: Any, module: str, symbol: str = "aot_dispatch") -> int:
    """The native dispatcher (for methods with several specializations), or with ``symbol`` ``aot_bind`` the
    native binder (for methods with keyword-only parameters): from the package's prebuilt library when it
    has one (no llvmlite), else generated now. A binder is generated only for a package without a library:
    a library built before binders existed gives 0 (its calls bind in Python, as they did), and so does a
    runtime without llvmlite."""
    package = module.split(".")[0]
    key = package if symbol == "aot_dispatch" else (package, symbol)
    address = rt.dispatchers.get(key)
    if address is None:
        image = None if rt.building else rt.loader.image_for(module)
        library = image is not None and image.rejected is None
        if image is not None and library:
            address = image.address(symbol)
        if not address and symbol == "aot_dispatch":
            address = rt.compiler.dispatcher_address()
        elif not address and not library:
            try:
                address = rt.compiler.binder_address()
            except ImportError:
                address = 0
        rt.dispatchers[key] = address or 0
    return address or 0


class Binding:
    """The words ``aot_bind`` reads for one method (``aot.codegen.cpython.emit_binder``): its numbers of
    positional, all and positional-only parameters, the function, the identities of its ``__defaults__`` and
    ``__kwdefaults__`` as they were, the binder's address, then each parameter's name and default value (0:
    none). It holds every object whose address it gives, so no address can be reused by another object while
    it is published."""

    __slots__ = ("parameters", "words", "held", "address", "binder")

    def __init__(self, parameters: Parameters, func: Any, binder: int):
        n = len(parameters.params)
        defaults = [parameters.defaults[i] if parameters.has_default(i) else None for i in range(n)]
        self.held = (func, func.__defaults__, func.__kwdefaults__, parameters.params, tuple(defaults))
        self.parameters = parameters
        words = [parameters.npos, n, parameters.nposonly, id(func)]
        words += [0 if func.__defaults__ is None else id(func.__defaults__)]
        words += [0 if func.__kwdefaults__ is None else id(func.__kwdefaults__), binder]
        words += [id(name) for name in parameters.params]
        words += [id(v) if parameters.has_default(i) else 0 for i, v in enumerate(parameters.defaults)]
        self.words = (ctypes.c_int64 * len(words))(*words)
        self.address = ctypes.addressof(self.words)
        self.binder = binder
