"""``@aot.jit``: method objects whose calls dispatch natively to compiled specializations.

    @aot.jit
    def f(x, y): return x * y + 1.0

    f(2.0, 3.0)      # first call: infer + compile f(f64, f64), add it to f's native dispatch table
    f(2.0, 3.0)      # later calls: the native dispatcher finds it; no Python runs
    f.py_func(2.0, 3.0), f.specializations(), f.inspect_ir("f64", "f64")

A method's first call, and any call that no compiled specialization accepts, reaches
``Dispatcher.call_python`` (Python): it converts arguments to a declared signature, and loads the
specialization from the package's image when its entry is valid, or compiles it (unless strict mode
forbids it). Later calls with those types run natively without any Python.

Hot path (every first call, and every call no specialization takes),
guarded by ``tests/bench/instructions.py`` and ``tests/bench/test_import_bench.py``: measure before and after
any change here.
"""

from __future__ import annotations

import _thread
import ctypes
import inspect
import sys
import typing
from collections.abc import Callable, Sequence
from functools import lru_cache
from types import FunctionType
from typing import TYPE_CHECKING, Any

from ..diagnostics import CompileError, SourceChangedError
from ..types import ArrayType, ScalarType, SignatureError, TupleType, Type, accepts, parse_signature, parse_type, typeof
from ..world import MethodDef, MethodOptions

if TYPE_CHECKING:
    from ..world.causes import Cause
from .methodtype import builtin_from_def, method_type, set_table, set_vectorcall
from .state import runtime


class Specialization:
    """One compiled specialization of a method, as ``specializations()`` reports it."""

    __slots__ = (
        "argtypes",
        "_return_type",
        "origin",
        "try_address",
        "vectorcall_address",
        "def_address",
        "image",
        "entry",
        "_builtin",
    )

    def __init__(
        self,
        argtypes: tuple[Type, ...],
        return_type: Type | str,
        origin: str,
        try_address: int,
        vectorcall_address: int = 0,
        def_address: int = 0,
        image: Any = None,
        entry: Any = None,
    ):
        self.argtypes = argtypes
        self._return_type = return_type  # a type, or its text (parsed when first asked for)
        self.origin = origin  # "jit" (compiled in this process) or "image" (loaded from a prebuilt image)
        self.try_address = try_address
        self.vectorcall_address = vectorcall_address  # this specialization alone as the vectorcall (0: none)
        # Its PyMethodDef, from which the builtin is made when first asked for (for an image entry: from the
        # same slot of the library's entry table as its code, never looked up by a stored name).
        self.def_address = def_address
        self.image, self.entry = image, entry  # the image entry it was loaded from (None: compiled here)
        self._builtin: Any = None

    @property
    def return_type(self) -> Type:
        t = self._return_type
        if type(t) is str:
            t = self._return_type = parse_type(t)
        return t  # type: ignore[return-value]  # (parsed above when it was its text)

    @property
    def builtin(self) -> Any:
        """The specialization as a real builtin function (``METH_FASTCALL``)."""
        if self._builtin is None:
            if not self.def_address:
                raise RuntimeError(f"{self!r}: its native code has no PyMethodDef")
            self._builtin = builtin_from_def(self.def_address)
        return self._builtin

    def __repr__(self) -> str:
        return f"<specialization ({', '.join(map(str, self.argtypes))}) -> {self.return_type} from {self.origin}>"


def _declared_signatures(py_func: Callable, signatures: Sequence[str] | None) -> tuple[tuple[Type, ...], ...]:
    """Argument types from ``signatures=`` strings, else from concrete annotations, else none (pure JIT).

    Made on a method's first call. The common results are shared between methods (see ``scalar_types``),
    which keeps a thousand first calls from leaving a thousand more objects for the garbage collector."""
    if signatures:
        try:
            return _parse_signatures(tuple(signatures))
        except SignatureError as err:
            raise TypeError(f"{py_func.__qualname__}: {err}") from None
    hints = getattr(py_func, "__annotations__", None) or {}
    code = py_func.__code__
    n = code.co_argcount
    if not hints and n:  # parameters, none annotated: pure JIT
        return ()
    names = code.co_varnames[:n]
    get = hints.get
    # The common case: every parameter `float`, `int` or `bool`, a signature shared with other methods.
    classes = (get(names[0]),) if n == 1 else (get(names[0]), get(names[1])) if n == 2 else tuple(map(get, names))
    common = _shared_scalars(classes)
    if common is None and str in set(map(type, hints.values())):  # `from __future__ import annotations`
        try:
            hints = typing.get_type_hints(py_func)
        except Exception:
            pass
        classes = tuple(map(hints.get, names))
        common = _shared_scalars(classes)
    if common is not None:
        return common[2]
    types = tuple(map(_annotation_type, classes))
    return () if None in types else (types,)  # type: ignore[return-value]  # (no None in them)


@lru_cache(maxsize=1024)
def _parse_signatures(texts: tuple[str, ...]) -> tuple[tuple[Type, ...], ...]:
    return tuple(_Signature.of(parse_signature(text)[1]) for text in texts)


class _Signature(tuple):
    """The argument types of a declared signature (a tuple), with their texts (``texts``): what a first call
    looks the signature's image entry up by, worked out once per signature instead of on every first call."""

    texts: tuple[str, ...]

    @classmethod
    def of(cls, types: tuple[Type, ...]) -> _Signature:
        signature = cls(types)
        signature.texts = tuple(map(str, types))
        return signature


_PYTHON_TYPES = {int: parse_type("int"), float: parse_type("float"), bool: parse_type("bool")}


_Scalars = tuple[tuple[Type, ...], tuple[str, ...], tuple[tuple[Type, ...]]]
_SCALARS: dict[tuple[type, ...], _Scalars] = {}


def scalar_types(classes: tuple[Any, ...]) -> _Scalars | None:
    """For classes of arguments (or annotations) that are all ``int``, ``float`` or ``bool``: their types,
    the types' texts and the declared signatures they make, made once per combination and shared
    (``(float, int)`` → ``((f64, i64), ("f64", "i64"), ((f64, i64),))``); None for any other classes."""
    found = _SCALARS.get(classes)
    if found is None:
        if not all(map(_PYTHON_TYPES.__contains__, classes)):
            return None
        types = _Signature.of(tuple(map(_PYTHON_TYPES.__getitem__, classes)))
        found = _SCALARS[classes] = (types, types.texts, (types,))
    return found


def _shared_scalars(annotations: tuple[Any, ...]) -> _Scalars | None:
    """``scalar_types`` of annotations, which may be anything (None for an unhashable one)."""
    try:
        return _SCALARS.get(annotations) or scalar_types(annotations)
    except TypeError:
        return None


def _annotation_type(annotation: Any) -> Type | None:
    if annotation is None:
        return None
    if isinstance(annotation, (ScalarType, ArrayType, TupleType)):
        return annotation
    if type(annotation) is type:
        return _PYTHON_TYPES.get(annotation)
    if isinstance(annotation, str):
        try:
            return parse_type(annotation)
        except SignatureError:
            return None
    return None


def _convert(value: Any, t: Type) -> Any:
    """Convert a Python value to what a declared parameter type takes (int → float and the like)."""
    if isinstance(t, ScalarType):
        if t.is_float:
            return float(value)
        if t.kind == "b":
            return bool(value)
        if t.is_int:
            return int(value)
    if isinstance(t, TupleType):
        return tuple(_convert(v, it) for v, it in zip(value, t.items))
    return value


def _convertible(actual: Type, declared: Type) -> bool:
    if accepts(declared, actual):
        return True
    if isinstance(declared, ScalarType) and isinstance(actual, ScalarType):
        return declared.is_numeric and actual.is_numeric and (declared.is_float or not actual.is_float)
    if isinstance(declared, TupleType) and isinstance(actual, TupleType):
        return len(declared.items) == len(actual.items) and all(
            _convertible(a, d) for a, d in zip(actual.items, declared.items)
        )
    return False


_OBTAINING = _thread.RLock()  # held while a specialization is loaded or compiled (see ``Dispatcher.obtain``)


class Dispatcher:
    """The Python side of a method object: its definition, signatures and compiled specializations. Made on
    the method's first call, or when a build asks for its signatures (``dispatcher_of``): importing a module
    makes none."""

    __slots__ = ("obj", "mdef", "_declared", "specs", "recorded", "_tables", "uncompiled")

    def __init__(self, mdef: MethodDef):
        self.obj = mdef.method
        self.mdef = mdef
        self._declared: tuple[tuple[Type, ...], ...] | None = None
        self.specs: tuple[Specialization, ...] = ()
        self.recorded: dict[tuple[Type, ...], None] | None = None  # argument types seen by `aot build`
        self._tables: tuple[Any, ...] | None = None  # every table published stays alive (a call may walk one)
        self.uncompiled: set[tuple[Type, ...]] | None = None  # argument types whose calls run ``.py_func``

    @property
    def declared(self) -> tuple[tuple[Type, ...], ...]:
        if self._declared is None:
            self._declared = _declared_signatures(self.mdef.py_func, self.mdef.signatures)
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
        if len(specs) == 1 and specs[0].vectorcall_address:
            # One specialization: it is the vectorcall itself (no table walk, no indirect call).
            if self._tables:  # (a table was published before)
                set_table(self.obj, 0, 0)
            self.obj._aot_vectorcall = specs[0].vectorcall_address  # (``set_vectorcall``, on every first call)
            return
        if len(specs) > 1:  # contiguous-array specializations first: the fast path when both accept a call
            specs = self.specs = tuple(
                sorted(specs, key=lambda s: sum(isinstance(t, ArrayType) and t.layout == "A" for t in s.argtypes))
            )
        table = (ctypes.c_void_p * max(len(specs), 1))(*[s.try_address for s in specs])
        self._tables += (table,)
        set_table(self.obj, ctypes.addressof(table), len(specs))
        # None: no vectorcall, so calls reach MethodBase.__call__ (Python) as before the first one.
        set_vectorcall(self.obj, _dispatcher_address(runtime(), self.mdef.module) if specs else 0)

    def find(self, argtypes: tuple[Type, ...]) -> Specialization | None:
        for spec in self.specs:
            if len(spec.argtypes) == len(argtypes) and all(accepts(d, a) for d, a in zip(spec.argtypes, argtypes)):
                return spec
        return None

    def obtain(
        self, argtypes: tuple[Type, ...], texts: tuple[str, ...] | None = None, rt: Any = None
    ) -> Specialization | None:
        """A specialization from the image when its entry is valid, else one compiled now (``texts``: the
        argument types' texts, when the caller has them; ``rt``: the runtime, when the caller has it); None
        when nothing can be compiled from the method's source as it reads now (``compile``): the call runs
        ``.py_func``.

        One thread at a time loads or compiles: threads making the same first call at once get the one
        specialization the first of them made (not one each, published over each other while another
        thread's call walks the dispatch table; llvmlite takes one module at a time anyway)."""
        _OBTAINING.acquire()  # (not ``with``: its protocol costs as much again, on every first call)
        try:
            if self.specs:
                spec = self.find(argtypes)
                if spec is not None:  # (made by another thread meanwhile)
                    return spec
            rt = rt or runtime()
            mdef = self.mdef
            image = rt.loader.image_for(mdef.py_func.__module__)  # (the module of its key)
            if image is None:
                return self.compile(argtypes)
            entry, cause = image.find(mdef.key, tuple(map(str, argtypes)) if texts is None else texts)
            if entry is None or cause:  # (an invalid entry: the spurious-reinference check compares with it)
                return self.compile(argtypes, cause, image if entry is not None else None, entry)
            return self.load(image, entry, argtypes, rt)
        finally:
            _OBTAINING.release()

    def load(self, image: Any, entry: Any, argtypes: tuple[Type, ...], rt: Any = None) -> Specialization | None:
        rt = rt or runtime()
        bound = image.bind(entry)
        if type(bound) is not tuple:  # valid IR, unusable native code (``bound``: the cause): code from the IR
            from ..world.causes import IR_DAMAGED

            instance = image.instance(entry, self.mdef)
            if instance is None:  # the image's IR is damaged (the image is rejected now) or this entry's is
                return self.compile(argtypes, IR_DAMAGED if image.rejected is None else image.rejection)
            cause = bound
            rt.check_strict(self.mdef.key, argtypes, cause)
            try:
                compiled = rt.compiler.cure(instance, self.mdef)
            except Exception as err:  # stored IR that decodes yet does not compile: as if damaged
                rt.compiler.forget_stored()
                image.distrust_ir(err)
                return self.compile(argtypes, IR_DAMAGED)
            rt.record("cured", self.mdef.key, entry.argtypes, cause=cause)
            spec = Specialization(
                argtypes,
                entry.rettype,
                "image",
                compiled.try_address,
                compiled.vectorcall_address,
                compiled.def_address,
            )
        else:
            rt.record("loaded", self.mdef.key, entry.argtypes)
            spec = Specialization(argtypes, entry.rettype, "image", bound[0], bound[1], bound[2], image, entry)
        if entry.call_keys:
            rt.add_loaded(image, entry)
        self.specs += (spec,)
        self._publish()
        return spec

    def compile(
        self, argtypes: tuple[Type, ...], cause: Cause | None = None, image: Any = None, rejected: Any = None
    ) -> Specialization | None:
        """A specialization inferred and compiled now, because of ``cause`` (no entry, when not given); None when
        the method's source (or a callee's) no longer holds the code Python imported: nothing is compiled, and
        calls with these types run ``.py_func``."""
        from ..world.causes import NO_ENTRY, SOURCE_CHANGED

        cause = cause or NO_ENTRY
        rt = runtime()
        if self.uncompiled is not None and argtypes in self.uncompiled:
            rt.check_strict(self.mdef.key, argtypes, SOURCE_CHANGED)
            return None
        rt.check_strict(self.mdef.key, argtypes, cause)
        try:
            compiled = _compiled(rt, self.mdef, argtypes)
        except SourceChangedError as err:
            self.interpret(rt, argtypes, err)
            return None
        spurious = rejected is not None and _same_as_stored(rt, compiled.instance, image)
        rt.record("inferred", self.mdef.key, argtypes, cause=cause, spurious=spurious)
        from ..world.instances import stored_key

        rt.invalidation.add(stored_key((self.mdef.key, argtypes)), rt.compiler.reachable_keys(compiled.instance))
        spec = Specialization(
            argtypes,
            compiled.instance.return_type,
            "jit",
            compiled.try_address,
            compiled.vectorcall_address,
            compiled.def_address,
        )
        self.add(spec)
        return spec

    def interpret(self, rt: Any, argtypes: tuple[Type, ...], err: SourceChangedError) -> None:
        """Calls with ``argtypes`` run ``.py_func`` from now on: the source no longer holds what was imported.
        An ``invalidated`` event (nothing compiled) with cause ``source-changed``, and one line on stderr."""
        if self.uncompiled is None:
            self.uncompiled = set()
        self.uncompiled.add(argtypes)
        from ..world.causes import SOURCE_CHANGED

        rt.record("invalidated", self.mdef.key, argtypes, cause=SOURCE_CHANGED)
        where = err.diagnostics[0] if err.diagnostics else None
        print(
            f"aot: {self.mdef.key}({', '.join(map(str, argtypes))}) runs as plain Python: "
            f"{f'{where.span}: {where.message}' if where is not None else err}",
            file=sys.stderr,
        )

    # ------------------------------------------------------------------ slow path
    def fallback(self, *args: Any, **kwargs: Any) -> Any:
        """What native code calls when no specialization takes a call."""
        return self.call_python(args, kwargs)

    __call__ = fallback

    def call_python(self, args: tuple, kwargs: dict) -> Any:
        """A call that no native code took: the first one (``MethodBase.__call__``), or one that no
        specialization accepts. Converts to a declared signature, loads or compiles, then calls natively."""
        if kwargs or len(args) != self.mdef.py_func.__code__.co_argcount:
            try:  # keywords and defaults bind as in Python, with Python's errors
                bound = inspect.signature(self.mdef.py_func).bind(*args, **kwargs)
            except TypeError as err:
                raise TypeError(f"{self.mdef.key}: {err}") from None
            bound.apply_defaults()
            args = bound.args
        n = len(args)
        classes = (type(args[0]),) if n == 1 else (type(args[0]), type(args[1])) if n == 2 else tuple(map(type, args))
        common = _SCALARS.get(classes) or scalar_types(classes)
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
            return self.mdef.py_func(*args)
        declared = self.declared
        if not self.specs and (not declared or argtypes in declared):
            # The first call, with exactly a compiled signature's types: load it (or compile it), no
            # conversions to work out.
            if self.obtain(argtypes, texts, rt) is None:
                return self.mdef.py_func(*args)
            return self.obj(*args)  # natively, through the specialization just published
        if declared:
            n = len(argtypes)
            target = next((d for d in declared if len(d) == n and all(map(accepts, d, argtypes))), None)
            converted = args  # (a signature that accepts the values as they are: a C array for an A one)
            if target is None:
                target = next((d for d in declared if len(d) == n and all(map(_convertible, argtypes, d))), None)
                if target is None:
                    sigs = ", ".join("(" + ", ".join(map(str, d)) + ")" for d in declared)
                    raise TypeError(
                        f"{self.mdef.key}: no compiled signature takes "
                        f"({', '.join(map(str, argtypes))}); declared: {sigs}"
                    )
                converted = tuple(map(_convert, args, target))
            spec = self.find(target)
            if spec is None:
                if self.obtain(target, getattr(target, "texts", None)) is None:
                    return self.mdef.py_func(*args)
                return self.obj(*converted)  # natively, through the table just extended
            return self.call(spec, converted, argtypes)
        spec = self.find(argtypes)
        if spec is None:
            if self.obtain(argtypes) is None:
                return self.mdef.py_func(*args)
            return self.obj(*args)  # natively, through the table just extended
        return self.call(spec, args, argtypes)

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
                        raise ValueError(
                            f"{self.mdef.key}: assignment destination is read-only "
                            f"(the compiled function writes to this array)"
                        )
                converted.append(value)
            else:
                converted.append(_convert(value, t))
        return spec.builtin(*converted)


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


def _call(self: Any, *args: Any, **kwargs: Any) -> Any:
    """A call of a method object with no native code for it: its first one (see ``methodtype``)."""
    mdef = self.__aot_method__
    return (mdef.dispatcher or dispatcher_of(mdef)).call_python(args, kwargs)  # type: ignore[union-attr]


def _dispatcher(self: Any) -> Dispatcher:
    return dispatcher_of(self.__aot_method__)  # type: ignore[return-value]  # (a method object's: never None)


def _specializations(self: Any) -> list[Specialization]:
    """What is compiled now for this method, and where each came from."""
    return list(_dispatcher(self).specs)


def _argtypes(args: Sequence[Any]) -> tuple[Type, ...]:
    """Types given as strings (``"f64[:]"``), type objects (``aot.f64``) or ``int``/``float``/``bool``."""
    out = []
    for a in args:
        t = parse_type(a) if isinstance(a, str) else _annotation_type(a)
        if t is None:
            raise TypeError(f"not a type: {a!r}")
        out.append(t)
    return tuple(out)


def _resolve_types(self: Any, argtypes: Sequence[Any]) -> tuple[Type, ...]:
    d = _dispatcher(self)
    if argtypes:
        return _argtypes(argtypes)
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


def _same_as_stored(rt: Any, inst: Any, image: Any) -> bool:
    """Whether a reinference reproduced exactly what the image held: the instance's typed IR and that of
    every callee its code inlines. Then rejecting the entry made no difference: the reinference was
    spurious. (A callee that really changed makes its caller's rejection necessary, even though the
    caller's own IR, a call, reads the same.)"""
    from serializer.irformat import encode_function

    contents = image.contents
    done = rt.compiler.inferencer.done
    stack, seen = [inst.key], set()
    while stack:
        key = stack.pop()
        if key in seen:
            continue
        seen.add(key)
        fresh = done.get(key)
        stored = contents.entry((key[0], tuple(map(str, key[1])))) if contents is not None else None
        try:
            if fresh is None or stored is None or encode_function(fresh.function, image.root) != stored.ir:
                return False
        except ValueError:  # the image's IR is damaged: nothing to compare with
            return False
        stack.extend(fresh.callees)
    return True


def _compiled(rt: Any, mdef: MethodDef, argtypes: tuple[Type, ...]) -> Any:
    """``rt.compiler.compile``. Should it fail other than with a ``CompileError`` where instances made from
    images' stored IR took part (seeded callees: IR that passes its checksum and decodes, yet does not
    compile), that IR is not used again, and the method is compiled once more from source alone."""
    try:
        return rt.compiler.compile(mdef, argtypes)
    except CompileError:
        raise
    except Exception as err:
        if not rt.compiler.forget_stored():
            raise  # (no stored IR took part: a compiler bug, which must show)
        for image in list(rt.loader.images.values()):
            if image is not None:
                image.distrust_ir(err)
        return rt.compiler.compile(mdef, argtypes)


_OPTIONS = {True: MethodOptions(boundscheck=True), False: MethodOptions(boundscheck=False)}


def _dispatcher_address(rt: Any, module: str) -> int:
    """The native dispatcher (for methods with several specializations): from the package's prebuilt
    library when it has one (no llvmlite), else generated now."""
    package = module.split(".")[0]
    address = rt.dispatchers.get(package)
    if address is None:
        image = None if rt.building else rt.loader.image_for(module)
        if image is not None and image.rejected is None:
            address = image.address("aot_dispatch")
        if not address:
            address = rt.compiler.dispatcher_address()
        rt.dispatchers[package] = address
    return address


def jit(
    func: Callable | None = None,
    *,
    signatures: Sequence[str] | None = None,
    boundscheck: bool = True,
    parallel: bool = False,
    nogil: bool = False,
) -> Any:
    """Make a module-level function a compiled method (see the module docstring).

    This runs once per method at import, so it is kept to about a microsecond: it reads no image and
    makes no native code (the first call does), and signatures are parsed on the first call (``aot build``
    reports malformed ones for every method)."""
    if func is None:
        if type(signatures) is str:
            raise TypeError("@aot.jit(signatures=...) takes a list of signature strings, not one string")
        return lambda f: jit(f, signatures=signatures, boundscheck=boundscheck, parallel=parallel, nogil=nogil)
    if type(func) is not FunctionType:
        raise TypeError(f"@aot.jit needs a Python function, not {type(func).__name__}")
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
