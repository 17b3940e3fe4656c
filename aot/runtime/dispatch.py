"""``@aot.jit``: method objects whose calls dispatch natively to compiled specializations.

    @aot.jit
    def f(x, y): return x * y + 1.0

    f(2.0, 3.0)      # first call: infer + compile f(f64, f64), add it to f's native dispatch table
    f(2.0, 3.0)      # later calls: the native dispatcher finds it; no Python runs
    f.py_func(2.0, 3.0), f.specializations(), f.inspect_ir("f64", "f64")

A call that no compiled specialization accepts reaches ``Dispatcher.fallback`` (Python): it converts
arguments to a declared signature, or compiles a new specialization (unless strict mode forbids it).
"""
from __future__ import annotations

import ctypes
import inspect
import typing
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from ..types import (ArrayType, ScalarType, SignatureError, TupleType, Type, accepts, parse_signature,
                     parse_type, typeof)
from ..world import MethodDef, MethodOptions
from .methodtype import builtin_from_def, method_type, set_table, set_vectorcall
from .state import runtime


@dataclass
class Specialization:
    """One compiled specialization of a method, as ``specializations()`` reports it."""

    argtypes: tuple[Type, ...]
    return_type: Type
    origin: str  # "jit" (compiled in this process) or "image" (loaded from a prebuilt image)
    try_address: int
    vectorcall_address: int = 0  # this specialization alone as the method's vectorcall (0: none)
    def_address: int = 0  # its PyMethodDef, from which the builtin is made when first asked for
    _builtin: Any = None

    @property
    def builtin(self) -> Any:
        """The specialization as a real builtin function (``METH_FASTCALL``)."""
        if self._builtin is None:
            self._builtin = builtin_from_def(self.def_address)
        return self._builtin

    def __repr__(self) -> str:
        return (f"<specialization ({', '.join(map(str, self.argtypes))}) -> {self.return_type} "
                f"from {self.origin}>")


def _declared_signatures(py_func: Callable, signatures: Optional[Sequence[str]]) -> list[tuple[Type, ...]]:
    """Argument types from ``signatures=`` strings, else from concrete annotations, else none (pure JIT)."""
    if signatures:
        out = []
        for text in signatures:
            try:
                _, args = parse_signature(text)
            except SignatureError as err:
                raise TypeError(f"{py_func.__qualname__}: {err}") from None
            out.append(args)
        return out
    hints = dict(getattr(py_func, "__annotations__", None) or {})
    if any(isinstance(v, str) for v in hints.values()):  # `from __future__ import annotations`
        try:
            hints = typing.get_type_hints(py_func)
        except Exception:
            pass
    code = py_func.__code__
    params = code.co_varnames[:code.co_argcount]
    types = []
    for name in params:
        t = _annotation_type(hints.get(name))
        if t is None:
            return []
        types.append(t)
    return [tuple(types)]


def _annotation_type(annotation: Any) -> Optional[Type]:
    if annotation is None:
        return None
    if isinstance(annotation, (ScalarType, ArrayType, TupleType)):
        return annotation
    simple = {int: "int", float: "float", bool: "bool"}
    if annotation in simple:
        return parse_type(simple[annotation])
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
            _convertible(a, d) for a, d in zip(actual.items, declared.items))
    return False


class Dispatcher:
    """The Python side of a method object: its definition, signatures and compiled specializations."""

    def __init__(self, obj: Any, mdef: MethodDef, signatures: Optional[Sequence[str]], dispatch_address: int = 0):
        self.obj = obj
        self.dispatch_address = dispatch_address  # the generic native dispatcher
        self.mdef = mdef
        self.signatures = signatures  # the `signatures=` strings, parsed when first needed
        self._declared: Optional[list[tuple[Type, ...]]] = None
        self.specs: list[Specialization] = []
        self.recorded: dict[tuple[Type, ...], None] = {}  # argument types seen while `aot build` runs
        self._tables: list[Any] = []  # every table ever published stays alive (a call may be walking one)

    @property
    def declared(self) -> list[tuple[Type, ...]]:
        if self._declared is None:
            self._declared = _declared_signatures(self.mdef.py_func, self.signatures)
        return self._declared

    # ------------------------------------------------------------------ specializations
    def add(self, spec: Specialization) -> None:
        self.specs.append(spec)
        self._publish()

    def drop(self, argtypes: tuple[str, ...]) -> bool:
        """Remove the specialization for these argument types (its code relied on a stale definition)."""
        kept = [s for s in self.specs if tuple(map(str, s.argtypes)) != tuple(argtypes)]
        if len(kept) == len(self.specs):
            return False
        self.specs = kept
        self._publish()
        return True

    def _publish(self) -> None:
        # Contiguous-array specializations first: they are the fast path when both accept a call.
        self.specs.sort(key=lambda s: sum(isinstance(t, ArrayType) and t.layout == "A" for t in s.argtypes))
        table = (ctypes.c_void_p * max(len(self.specs), 1))(*[s.try_address for s in self.specs])
        self._tables.append(table)
        set_table(self.obj, ctypes.addressof(table), len(self.specs))
        # One specialization: it is the vectorcall itself (no table walk, no indirect call).
        single = self.specs[0].vectorcall_address if len(self.specs) == 1 else 0
        set_vectorcall(self.obj, single or self.dispatch_address)

    def find(self, argtypes: tuple[Type, ...]) -> Optional[Specialization]:
        for spec in self.specs:
            if len(spec.argtypes) == len(argtypes) and all(accepts(d, a) for d, a in zip(spec.argtypes, argtypes)):
                return spec
        return None

    def obtain(self, argtypes: tuple[Type, ...]) -> Specialization:
        """A specialization from the image when its entry is valid, else one compiled now."""
        return self.from_image(argtypes) or self.compile(argtypes, *self._rejection)

    def from_image(self, argtypes: tuple[Type, ...]) -> Optional[Specialization]:
        """The image's specialization when its entry is valid (remembering why not, otherwise)."""
        image = runtime().loader.image_for(self.mdef.module)
        self._rejection: tuple = ("no-entry", None, None)
        if image is None:
            return None
        found = image.find(self.mdef.key, tuple(map(str, argtypes)))
        if found.entry is not None and found.verdict.valid:
            return self.load(image, found.entry, argtypes)
        self._rejection = (found.verdict.cause, image if found.entry is not None else None, found.entry)
        return None

    def load(self, image: Any, entry: Any, argtypes: tuple[Type, ...]) -> Specialization:
        rt = runtime()
        bound = image.bind(entry)
        rettype = parse_type(entry.rettype)
        if bound is None:  # valid IR, unusable native code: generate code from the IR, no inference
            cause = image.native_problem or "native-missing"
            rt.check_strict(self.mdef.key, argtypes, cause)
            compiled = rt.compiler.cure(image.instance(entry, self.mdef), self.mdef)
            rt.record("cured", self.mdef.key, argtypes, cause=cause)
            bound = (compiled.try_address, compiled.def_address, compiled.vectorcall_address)
        else:
            rt.record("loaded", self.mdef.key, argtypes)
        rt.add_backedges((self.mdef.key, entry.argtypes), image.callees(entry))
        spec = Specialization(argtypes, rettype, "image", bound[0], bound[2], bound[1])
        self.add(spec)
        return spec

    def compile(self, argtypes: tuple[Type, ...], cause: str = "no-entry", image: Any = None,
                rejected: Any = None) -> Specialization:
        rt = runtime()
        rt.check_strict(self.mdef.key, argtypes, cause)
        compiled = rt.compiler.compile(self.mdef, argtypes)
        spurious = rejected is not None and _same_as_stored(rt, compiled.instance, image)
        rt.record("inferred", self.mdef.key, argtypes, cause=cause, spurious=spurious)
        reached = rt.compiler.reachable_keys(compiled.instance)
        rt.add_backedges((self.mdef.key, tuple(map(str, argtypes))), reached)
        spec = Specialization(argtypes, compiled.instance.return_type, "jit", compiled.try_address,
                              compiled.vectorcall_address, compiled.def_address)
        self.add(spec)
        return spec

    # ------------------------------------------------------------------ slow path
    def fallback(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs or len(args) != self.mdef.py_func.__code__.co_argcount:
            try:  # keywords and defaults bind as in Python, with Python's errors
                bound = inspect.signature(self.mdef.py_func).bind(*args, **kwargs)
            except TypeError as err:
                raise TypeError(f"{self.mdef.key}: {err}") from None
            bound.apply_defaults()
            args = bound.args
        try:
            argtypes = tuple(typeof(a) for a in args)
        except TypeError as err:
            raise TypeError(f"{self.mdef.key}: {err}") from None
        if runtime().building:
            if not self.declared:
                self.recorded.setdefault(argtypes)
            return self.mdef.py_func(*args)
        if self.declared:
            exact = [d for d in self.declared
                     if len(d) == len(argtypes) and all(accepts(t, a) for a, t in zip(argtypes, d))]
            for declared in exact + self.declared:
                if len(declared) == len(argtypes) and all(_convertible(a, d) for a, d in zip(argtypes, declared)):
                    converted = tuple(_convert(a, t) for a, t in zip(args, declared))
                    spec = self.find(declared)
                    if spec is None:
                        self.obtain(declared)
                        return self.obj(*converted)  # natively, through the table just extended
                    return self.call(spec, converted, argtypes)
            sigs = ", ".join("(" + ", ".join(map(str, d)) + ")" for d in self.declared)
            raise TypeError(f"{self.mdef.key}: no compiled signature takes "
                            f"({', '.join(map(str, argtypes))}); declared: {sigs}")
        spec = self.find(argtypes)
        if spec is None:
            self.obtain(argtypes)
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
                        raise ValueError(f"{self.mdef.key}: assignment destination is read-only "
                                         f"(the compiled function writes to this array)")
                converted.append(value)
            else:
                converted.append(_convert(value, t))
        return spec.builtin(*converted)


# ---------------------------------------------------------------------------------- method objects

def _dispatcher(self: Any) -> Dispatcher:
    return self._aot_dispatcher


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


def _get(self: Any, instance: Any, owner: Any = None) -> Any:
    return self  # methods behave like staticmethods when stored on a class


_METHODS_INSTALLED = False
_METHOD_CLASS: Any = None


def _method_class() -> type:
    global _METHODS_INSTALLED, _METHOD_CLASS
    cls = _METHOD_CLASS = method_type()
    if not _METHODS_INSTALLED:
        cls.specializations = _specializations
        cls.inspect_ir = _inspect_ir
        cls.inspect_llvm = _inspect_llvm
        cls.inspect_asm = _inspect_asm
        cls.__repr__ = _repr
        _METHODS_INSTALLED = True
    return cls


def make_method(py_func: Callable, signatures: Optional[Sequence[str]] = None, boundscheck: bool = True) -> Any:
    if not inspect.isfunction(py_func):
        raise TypeError(f"@aot.jit needs a Python function, not {type(py_func).__name__}")
    # This runs once per method at import: keep it to a few microseconds (signatures are parsed, and
    # fingerprints computed, on the first call; `aot build` reports malformed signatures of every method).
    if isinstance(signatures, str):
        raise TypeError("@aot.jit(signatures=...) takes a list of signature strings, not one string")
    rt = runtime()
    obj = (_METHOD_CLASS or _method_class())()
    table = rt.table
    key = f"{py_func.__module__}:{py_func.__qualname__}"
    redefining = key in table.methods
    mdef = table.define(py_func, _OPTIONS[bool(boundscheck)], key)
    if redefining:
        rt.redefine(mdef.key)
    dispatcher = Dispatcher(obj, mdef, signatures, _dispatcher_address(rt, mdef.module))
    mdef.dispatcher = dispatcher
    obj.__dict__.update(
        py_func=py_func, __aot_method__=mdef, _aot_dispatcher=dispatcher, __name__=py_func.__name__,
        __qualname__=py_func.__qualname__, __module__=py_func.__module__, __doc__=py_func.__doc__,
        __wrapped__=py_func)
    obj._aot_vectorcall = dispatcher.dispatch_address  # the native slots (see aot.runtime.methodtype)
    obj._aot_fallback = dispatcher.fallback
    return obj


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
        stored = contents.code.get((key[0], tuple(map(str, key[1])))) if contents is not None else None
        if fresh is None or stored is None or encode_function(fresh.function, image.root) != stored.ir:
            return False
        stack.extend(fresh.callees)
    return True


_OPTIONS = {True: MethodOptions(boundscheck=True), False: MethodOptions(boundscheck=False)}


def _dispatcher_address(rt: Any, module: str) -> int:
    """The native dispatcher: from the package's prebuilt library when it has one (no llvmlite)."""
    package = module.split(".")[0]
    address = rt.dispatchers.get(package)
    if address is None:
        image = None if rt.building else rt.loader.image_for(module)
        if image is not None and image.rejected is None:
            address = image.runtime_address("aot_dispatch")
        if not address:
            address = rt.compiler.dispatcher_address()
        rt.dispatchers[package] = address
    return address


def jit(func: Optional[Callable] = None, *, signatures: Optional[Sequence[str]] = None,
        boundscheck: bool = True) -> Any:
    """Make a module-level function a compiled method (see the module docstring)."""
    if func is not None:
        return make_method(func, signatures, boundscheck)
    return lambda f: make_method(f, signatures, boundscheck)
