"""A method's first call with some argument types, in one place: find the package's image, validate the
entry, bind its native code (or cure it from its IR), or compile now with the cause, and check whether that
reinference was spurious.

    spec = obtain(dispatcher, (f64, f64))      # loaded, cured or compiled: published in the dispatch table
    spec.origin                                # "image" or "jit"; None returned: the call runs ``.py_func``

``d`` is the method's ``aot.runtime.dispatch.Dispatcher`` (which imports this module: here its type is the
``DispatcherProtocol`` it answers), ``rt`` the ``Runtime``, ``image`` the package's ``PackageImage`` (the
loader's) and ``entry`` one of its ``CodeEntry`` records. Every step says what it did as an event
(``loaded``, ``cured``, ``inferred`` with its cause and whether it was spurious, ``invalidated``), and strict
mode refuses any compilation.

Hot path (every first call), guarded by ``tests/bench/instructions.py`` and
``tests/bench/test_import_bench.py``: measure before and after any change here.
"""

from __future__ import annotations

import sys

from ..diagnostics import CompileError, SourceChangedError
from ..forksafe import FIRST_CALLS
from ..types import Type, parse_type
from ..world import MethodDef
from .methodtype import builtin_from_def
from .state import runtime

TYPE_CHECKING = False  # (not ``typing.TYPE_CHECKING``: importing the runtime imports no ``typing``)
if TYPE_CHECKING:
    from typing import Any, Protocol

    from ..image.entries import CodeEntry
    from ..infer import InferredInstance
    from ..world.causes import Cause
    from .jit import Compiled
    from .loader import PackageImage
    from .state import Runtime

    class DispatcherProtocol(Protocol):
        """What the first call uses of a method's ``aot.runtime.dispatch.Dispatcher``, which passes itself to
        ``obtain`` (where mypy checks that it answers this). Not that class itself: ``dispatch`` imports this
        module, and importing it back, even for annotations only, would be an import cycle."""

        mdef: MethodDef
        specs: tuple[Specialization, ...]
        uncompiled: set[tuple[Type, ...]] | None

        def find(self, argtypes: tuple[Type, ...]) -> Specialization | None: ...

        def add(self, spec: Specialization) -> None: ...

        def _publish(self) -> None: ...


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
        image: PackageImage | None = None,
        entry: CodeEntry | None = None,
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


_OBTAINING = FIRST_CALLS  # held while a specialization is loaded or compiled (see ``obtain``); a fork waits for it


def obtain(
    d: DispatcherProtocol, argtypes: tuple[Type, ...], texts: tuple[str, ...] | None = None, rt: Runtime | None = None
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
        if d.specs:
            spec = d.find(argtypes)
            if spec is not None:  # (made by another thread meanwhile)
                return spec
        rt = rt or runtime()
        mdef = d.mdef
        image = rt.loader.image_for(mdef.py_func.__module__)  # (the module of its key)
        if image is None:
            return compile_now(d, argtypes)
        entry, cause = image.find(mdef.key, tuple(map(str, argtypes)) if texts is None else texts)
        if entry is None or cause:  # (an invalid entry: the spurious-reinference check compares with it)
            return compile_now(d, argtypes, cause, image if entry is not None else None, entry)
        return load(d, image, entry, argtypes, rt)
    finally:
        _OBTAINING.release()


def load(
    d: DispatcherProtocol,
    image: PackageImage,
    entry: CodeEntry,
    argtypes: tuple[Type, ...],
    rt: Runtime | None = None,
) -> Specialization | None:
    rt = rt or runtime()
    bound = image.bind(entry)
    if type(bound) is not tuple:  # valid IR, unusable native code (``bound``: the cause): code from the IR
        from ..world.causes import IR_DAMAGED

        instance = image.instance(entry, d.mdef)
        if instance is None:  # the image's IR is damaged (the image is rejected now) or this entry's is
            return compile_now(d, argtypes, IR_DAMAGED if image.rejected is None else image.rejection)
        cause = bound
        rt.check_strict(d.mdef.key, argtypes, cause)
        from .compilerless import compiler_available, run_as_python

        if not compiler_available():  # (a runtime-only install: the call runs .py_func)
            run_as_python(d, rt, argtypes, cause)
            return None
        try:
            compiled = rt.compiler.cure(instance, d.mdef)
        except Exception as err:  # stored IR that decodes yet does not compile: as if damaged
            rt.compiler.forget_stored()
            image.distrust_ir(err)
            return compile_now(d, argtypes, IR_DAMAGED)
        rt.record("cured", d.mdef.key, entry.argtypes, cause=cause)
        spec = Specialization(
            argtypes,
            entry.rettype,
            "image",
            compiled.try_address,
            compiled.vectorcall_address,
            compiled.def_address,
        )
    else:
        rt.record("loaded", d.mdef.key, entry.argtypes)
        spec = Specialization(argtypes, entry.rettype, "image", bound[0], bound[1], bound[2], image, entry)
    if entry.call_keys:
        rt.add_loaded(image, entry)
    d.specs += (spec,)
    d._publish()
    return spec


def compile_now(
    d: DispatcherProtocol,
    argtypes: tuple[Type, ...],
    cause: Cause | None = None,
    image: PackageImage | None = None,
    rejected: CodeEntry | None = None,
) -> Specialization | None:
    """A specialization inferred and compiled now, because of ``cause`` (no entry, when not given); None when
    the method's source (or a callee's) no longer holds the code Python imported: nothing is compiled, and
    calls with these types run ``.py_func``."""
    from ..world.causes import NO_ENTRY, SOURCE_CHANGED

    cause = cause or NO_ENTRY
    rt = runtime()
    if d.uncompiled is not None and argtypes in d.uncompiled:
        rt.check_strict(d.mdef.key, argtypes, SOURCE_CHANGED)
        return None
    rt.check_strict(d.mdef.key, argtypes, cause)
    from .compilerless import compiler_available, run_as_python

    if not compiler_available():  # (a runtime-only install: the call runs .py_func)
        run_as_python(d, rt, argtypes, cause)
        return None
    try:
        compiled = _compiled(rt, d.mdef, argtypes)
    except SourceChangedError as err:
        interpret(d, rt, argtypes, err)
        return None
    # (``rejected`` comes with its ``image``: ``obtain`` passes both or neither)
    spurious = rejected is not None and image is not None and _same_as_stored(rt, compiled.instance, image)
    rt.record("inferred", d.mdef.key, argtypes, cause=cause, spurious=spurious)
    from ..world.instances import stored_key

    rt.invalidation.add(stored_key((d.mdef.key, argtypes)), rt.compiler.reachable_keys(compiled.instance))
    spec = Specialization(
        argtypes,
        compiled.instance.return_type,
        "jit",
        compiled.try_address,
        compiled.vectorcall_address,
        compiled.def_address,
    )
    d.add(spec)
    return spec


def interpret(d: DispatcherProtocol, rt: Runtime, argtypes: tuple[Type, ...], err: SourceChangedError) -> None:
    """Calls with ``argtypes`` run ``.py_func`` from now on: the source no longer holds what was imported.
    An ``invalidated`` event (nothing compiled) with cause ``source-changed``, and one line on stderr."""
    if d.uncompiled is None:
        d.uncompiled = set()
    d.uncompiled.add(argtypes)
    from ..world.causes import SOURCE_CHANGED

    rt.record("invalidated", d.mdef.key, argtypes, cause=SOURCE_CHANGED)
    where = err.diagnostics[0] if err.diagnostics else None
    print(
        f"aot: {d.mdef.key}({', '.join(map(str, argtypes))}) runs as plain Python: "
        f"{f'{where.span}: {where.message}' if where is not None else err}",
        file=sys.stderr,
    )


def _same_as_stored(rt: Runtime, inst: InferredInstance, image: PackageImage) -> bool:
    """Whether a reinference reproduced exactly what the image held: the instance's typed IR and that of
    every callee its code inlines. Then rejecting the entry made no difference: the reinference was
    spurious. (A callee that really changed makes its caller's rejection necessary, even though the
    caller's own IR, a call, reads the same.)"""
    from serializer.irformat import encode_function

    from ..world.instances import stored_key

    contents = image.contents
    done = rt.compiler.inferencer.done
    stack, seen = [inst.key], set()
    while stack:
        key = stack.pop()
        if key in seen:
            continue
        seen.add(key)
        fresh = done.get(key)
        stored = contents.entry(stored_key(key)) if contents is not None else None
        try:
            if fresh is None or stored is None or encode_function(fresh.function, image.root) != stored.ir:
                return False
        except ValueError:  # the image's IR is damaged: nothing to compare with
            return False
        stack.extend(fresh.callees)
    return True


def _compiled(rt: Runtime, mdef: MethodDef, argtypes: tuple[Type, ...]) -> Compiled:
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
