"""The process-wide runtime: the method table (world), events, statistics, strict mode, the compiler.

    rt = runtime()
    rt.record("inferred", "numkit.core:clamp", (F64, F64, F64), cause="no-entry")
    rt.stats()   → {"loaded": 0, "inferred": 1, "cured": 0, "invalidated": 0, "spurious": 0, "variant": None}

Environment switches (``AOT_STRICT``, ``AOT_LOG``, ``AOT_DEBUG_REJECT``, ``AOT_VERIFY_PASSES``,
``AOT_CPU_VARIANT``) are read here and nowhere else.
The compiler (llvmlite) is imported only when something must be compiled.

Hot path (import, and every first call's event),
guarded by ``tests/bench/instructions.py`` and ``tests/bench/test_import_bench.py``: measure before and after
any change here.
"""

from __future__ import annotations

import os
import sys

from ..world import MethodTable

# (Not ``typing``, ``dataclasses`` or ``contextlib``: importing the runtime imports none of them; they would
# cost ``import aot`` several milliseconds.)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..world.causes import Cause
    from ..world.invalidation import Invalidation
    from .jit import Compiler
    from .loader import Loader

# The ``cpu`` owner's text (``aot.world.owners.CPU``). Importing that module here would cost importing aot a
# tenth of a millisecond (each module does); so would ``causes`` and ``invalidation``, read on first calls.
_CPU = "cpu"


class StrictModeError(RuntimeError):
    """Raised in strict mode instead of inferring or compiling at run time."""


class ReadOnlyBufferError(TypeError, ValueError):
    """Raised at a call, before anything runs, when compiled code would write into an argument whose buffer is
    read-only: a ``TypeError`` (the argument does not fit the parameter, which must be writable) and a
    ``ValueError`` (what NumPy raises for an assignment to a read-only array), so either ``except`` catches it."""


class Event(tuple):
    """Something the runtime did to a method instance, and why: ``kind``, ``method`` (its key), ``argtypes``
    (their texts), ``owner``, ``cause`` (its text, or "") and whether it was ``spurious``. A tuple of those
    six, with names (as a named tuple, written out: ``import aot`` imports no ``collections``)."""

    __slots__ = ()
    _fields = ("kind", "method", "argtypes", "owner", "cause", "spurious")

    def __new__(
        cls,
        kind: str,
        method: str,
        argtypes: tuple[str, ...],
        owner: str = _CPU,
        cause: str = "",
        spurious: bool = False,
    ) -> Event:
        return tuple.__new__(cls, (kind, method, argtypes, owner, cause, spurious))

    kind: str = property(lambda self: self[0])  # type: ignore[assignment]
    method: str = property(lambda self: self[1])  # type: ignore[assignment]
    argtypes: tuple[str, ...] = property(lambda self: self[2])  # type: ignore[assignment]
    owner: str = property(lambda self: self[3])  # type: ignore[assignment]
    cause: str = property(lambda self: self[4])  # type: ignore[assignment]
    spurious: bool = property(lambda self: self[5])  # type: ignore[assignment]

    def __getnewargs__(self) -> tuple:
        return tuple(self)

    def __repr__(self) -> str:
        return "Event(" + ", ".join(f"{name}={value!r}" for name, value in zip(self._fields, self)) + ")"

    def __str__(self) -> str:
        flag = " SPURIOUS" if self.spurious else ""
        cause = f" ({self.cause})" if self.cause else ""
        return f"aot: {self.kind} {self.method}({', '.join(self.argtypes)}) [{self.owner}]{cause}{flag}"


_new_tuple = tuple.__new__  # an Event without its Python-level __new__
_EVENT_FIELDS = len(Event._fields)


class Environment:
    """The switches the runtime reads from the environment once: ``AOT_STRICT``, ``AOT_LOG``,
    ``AOT_DEBUG_REJECT`` (method keys, comma-separated), ``AOT_VERIFY_PASSES`` (the IR verifier after
    every pass; the test suite turns it on) and ``AOT_CPU_VARIANT`` (the CPU variant of images to bind, when
    this CPU runs it)."""

    __slots__ = ("strict", "log", "debug_reject", "verify_passes", "cpu_variant")

    def __init__(
        self,
        strict: bool,
        log: bool,
        debug_reject: frozenset[str],
        verify_passes: bool = False,
        cpu_variant: str = "",
    ):
        self.strict, self.log, self.debug_reject, self.verify_passes = strict, log, debug_reject, verify_passes
        self.cpu_variant = cpu_variant

    def __repr__(self) -> str:
        return (
            f"Environment(strict={self.strict}, log={self.log}, debug_reject={set(self.debug_reject) or '{}'}, "
            f"verify_passes={self.verify_passes}, cpu_variant={self.cpu_variant!r})"
        )

    @classmethod
    def read(cls) -> Environment:
        reject = os.environ.get("AOT_DEBUG_REJECT", "")
        return cls(
            os.environ.get("AOT_STRICT", "") not in ("", "0"),
            os.environ.get("AOT_LOG", "") not in ("", "0"),
            frozenset(k.strip() for k in reject.split(",") if k.strip()),
            os.environ.get("AOT_VERIFY_PASSES", "") not in ("", "0"),
            os.environ.get("AOT_CPU_VARIANT", "").strip(),
        )


class Runtime:
    def __init__(self, env: Environment | None = None):
        self.env = env or Environment.read()
        self.table = MethodTable()
        self.strict = self.env.strict
        # Every event's six fields, one after another (``events`` makes them Event tuples when asked): one
        # event per first call, and no object per event for the garbage collector to go through.
        self._events: list = []
        self._compiler: Compiler | None = None
        self.building = False  # inside `aot build`: calls run as plain Python and record their types
        self.dispatchers: dict[str, int] = {}  # top-level package → native dispatcher address
        self._current_world: Any = None
        self._loader: Loader | None = None
        self._invalidation: Invalidation | None = None
        # Image entries with calls loaded before anything asked for the invalidation (see ``add_loaded``).
        self._loaded: list[tuple[Any, Any]] = []

    @property
    def invalidation(self) -> Invalidation:
        """Backedges and redefinition, for every owner (the CPU JIT and the ptx compiler subscribe to it)."""
        if self._invalidation is None:
            from ..world.invalidation import Invalidation

            self._invalidation = Invalidation()
            for image, entry in self._loaded:
                self._invalidation.add_loaded(image, entry)
            self._loaded = []
        return self._invalidation

    def add_loaded(self, image: Any, entry: Any) -> None:
        """An image entry with calls was loaded (``Invalidation.add_loaded``). Until a compile or a redefinition
        needs the invalidation, the pair is only kept: a package's first calls import no more modules."""
        if self._invalidation is None:
            self._loaded.append((image, entry))
        else:
            self._invalidation.add_loaded(image, entry)

    @property
    def current_world(self) -> Any:
        """Answers about the current definitions (for validating image entries), made when first needed."""
        if self._current_world is None:
            from ..world.validate import CurrentWorld

            self._current_world = CurrentWorld(self.table)
        return self._current_world

    @property
    def loader(self) -> Loader:
        """Finds and gates the packages' images; made on the first call (import reads no image)."""
        if self._loader is None:
            from .loader import Loader

            self._loader = Loader(self)
        return self._loader

    @property
    def compiler(self) -> Compiler:
        """The JIT compiler, created (and llvmlite imported) on first use."""
        if self._compiler is None:
            from .jit import Compiler

            self._compiler = Compiler(self)
        return self._compiler

    def record(
        self,
        kind: str,
        method: str,
        argtypes: tuple,
        owner: str = _CPU,
        cause: Cause | None = None,
        spurious: bool = False,
    ) -> None:
        """An event; ``argtypes`` are types or their texts."""
        if argtypes and type(argtypes[0]) is not str:  # (all types, or all texts)
            argtypes = tuple(map(str, argtypes))
        text = cause.text if cause is not None else ""  # (events carry the cause's text, e.g. edge-changed:pkg.mod:g)
        self._events += (kind, method, argtypes, owner, text, spurious)
        if self.env.log:  # AOT_LOG=1: every event, one line on stderr (spurious ones say so)
            print(str(_new_tuple(Event, self._events[-_EVENT_FIELDS:])), file=sys.stderr)

    @property
    def events(self) -> list[Event]:
        """Every event so far, oldest first."""
        fields = self._events
        return [_new_tuple(Event, fields[i : i + _EVENT_FIELDS]) for i in range(0, len(fields), _EVENT_FIELDS)]

    def redefine(self, key: str) -> None:
        """A method was defined again: close every code instance that depended on the old definition."""
        if self._current_world is not None:
            self._current_world.forget()
        for image in self._loader.images.values() if self._loader is not None else ():
            if image is not None and image._validator is not None:
                image._validator.forget()
        if self._invalidation is None and not self._loaded:  # (nothing loaded or compiled: nothing is stale)
            return
        for (method_key, argtypes), cause in self.invalidation.redefine(key):
            mdef = self.table.methods.get(method_key)
            dispatcher = getattr(mdef, "dispatcher", None)
            if dispatcher is not None and dispatcher.drop(argtypes):
                self.record("invalidated", method_key, argtypes, cause=cause)

    def seed(self, method: Any, argtypes: tuple) -> Any:
        """A callee's instance from a valid image entry (so it is not inferred again), or None."""
        image = self.loader.image_for(getattr(method, "module", method.key.split(":")[0]))
        if image is None or image.rejected:
            return None
        from ..world.instances import stored_key

        entry, cause = image.find(*stored_key((method.key, argtypes)))
        if entry is None or cause:
            return None
        return image.instance(entry, method)

    def stats(self) -> dict[str, Any]:
        """Events by kind, and ``variant``: the CPU variant of the libraries bound (their names joined by
        commas if packages bound different ones), None when none of an image with variants is bound."""
        out: dict[str, Any] = {"loaded": 0, "inferred": 0, "cured": 0, "invalidated": 0, "spurious": 0}
        fields = self._events
        for kind in fields[::_EVENT_FIELDS]:
            if kind in out:
                out[kind] += 1
        out["spurious"] = sum(fields[_EVENT_FIELDS - 1 :: _EVENT_FIELDS])
        images = self._loader.images.values() if self._loader is not None else ()
        bound = sorted({image.variant for image in images if image is not None and image.variant})
        out["variant"] = ",".join(bound) or None
        return out

    def check_strict(self, method: str, argtypes: tuple, cause: Cause) -> None:
        if self.strict:
            types = ", ".join(str(t) for t in argtypes)
            raise StrictModeError(
                f"strict mode: {method}({types}) would be inferred and compiled at run time (cause: {cause})"
            )


_RUNTIME: Runtime | None = None


def runtime() -> Runtime:
    global _RUNTIME
    if _RUNTIME is None:
        _RUNTIME = Runtime()
    return _RUNTIME


class private_runtime:  # noqa: N801  (used as a function: ``with private_runtime() as rt``)
    """``rt`` (a fresh Runtime by default) is the process's runtime inside the block; the previous one is put
    back when it ends, however it ends. The audit tools import a project's sources into a world of their own
    without disturbing the caller's.

        with private_runtime() as rt:
            rt.building = True
            importlib.import_module("numkit")      # numkit's methods go into rt.table
        runtime()                                   # → the runtime from before the block
    """

    def __init__(self, rt: Runtime | None = None):
        self.rt = rt if rt is not None else Runtime()
        self.saved: Runtime | None = None

    def __enter__(self) -> Runtime:
        global _RUNTIME
        self.saved, _RUNTIME = _RUNTIME, self.rt
        return self.rt

    def __exit__(self, *exc: object) -> None:
        global _RUNTIME
        _RUNTIME = self.saved
