"""The process-wide runtime: the method table (world), events, statistics, strict mode, the compiler.

    rt = runtime()
    rt.record("inferred", "numkit.core:clamp", (F64, F64, F64), cause="no-entry")
    rt.stats()   → {"loaded": 0, "inferred": 1, "cured": 0, "invalidated": 0, "spurious": 0}

Environment switches (``AOT_STRICT``, ``AOT_LOG``, ``AOT_DEBUG_REJECT``) are read here and nowhere else.
The compiler (llvmlite) is imported only when something must be compiled.
"""
from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator, NamedTuple, Optional

from ..world import MethodTable


class StrictModeError(RuntimeError):
    """Raised in strict mode instead of inferring or compiling at run time."""


class Event(NamedTuple):
    """Something the runtime did to a method instance, and why."""

    kind: str
    method: str
    argtypes: tuple[str, ...]
    owner: str = "cpu"
    cause: str = ""
    spurious: bool = False

    def __str__(self) -> str:
        flag = " SPURIOUS" if self.spurious else ""
        cause = f" ({self.cause})" if self.cause else ""
        return f"aot: {self.kind} {self.method}({', '.join(self.argtypes)}) [{self.owner}]{cause}{flag}"


_new_tuple = tuple.__new__  # an Event without the named tuple's Python-level __new__
_EVENT_FIELDS = len(Event._fields)


@dataclass(frozen=True)
class Environment:
    strict: bool
    log: bool
    debug_reject: frozenset[str]

    @classmethod
    def read(cls) -> "Environment":
        reject = os.environ.get("AOT_DEBUG_REJECT", "")
        return cls(os.environ.get("AOT_STRICT", "") not in ("", "0"),
                   os.environ.get("AOT_LOG", "") not in ("", "0"),
                   frozenset(k.strip() for k in reject.split(",") if k.strip()))


class Runtime:
    def __init__(self, env: Optional[Environment] = None):
        self.env = env or Environment.read()
        self.table = MethodTable()
        self.strict = self.env.strict
        # Every event's six fields, one after another (``events`` makes them Event tuples when asked): one
        # event per first call, and no object per event for the garbage collector to go through.
        self._events: list = []
        self._compiler: Any = None
        self.building = False  # inside `aot build`: calls run as plain Python and record their types
        self.dispatchers: dict[str, int] = {}  # top-level package → native dispatcher address
        self._current_world: Any = None
        self._loader: Any = None
        # Backedges: method key → the (method key, argtypes) instances whose code relied on it.
        self._backedges: dict[str, set[tuple[str, tuple]]] = {}
        # Specializations loaded from image entries with calls since the backedges were last brought up to
        # date. Their callees are worked out only when something asks for backedges (a redefinition, mostly).
        self._loaded: list[Any] = []

    @property
    def current_world(self) -> Any:
        """Answers about the current definitions (for validating image entries), made when first needed."""
        if self._current_world is None:
            from ..world.validate import CurrentWorld
            self._current_world = CurrentWorld(self.table)
        return self._current_world

    @property
    def loader(self) -> Any:
        """Finds and gates the packages' images; made on the first call (import reads no image)."""
        if self._loader is None:
            from .loader import Loader
            self._loader = Loader(self)
        return self._loader

    @property
    def compiler(self):
        """The JIT compiler, created (and llvmlite imported) on first use."""
        if self._compiler is None:
            from .jit import Compiler
            self._compiler = Compiler(self)
        return self._compiler

    def record(self, kind: str, method: str, argtypes: tuple, owner: str = "cpu", cause: str = "",
               spurious: bool = False) -> None:
        """An event; ``argtypes`` are types or their texts."""
        if argtypes and type(argtypes[0]) is not str:  # (all types, or all texts)
            argtypes = tuple(map(str, argtypes))
        self._events += (kind, method, argtypes, owner, cause, spurious)
        if self.env.log:  # AOT_LOG=1: every event, one line on stderr (spurious ones say so)
            print(str(_new_tuple(Event, self._events[-_EVENT_FIELDS:])), file=sys.stderr)

    @property
    def events(self) -> list[Event]:
        """Every event so far, oldest first."""
        fields = self._events
        return [_new_tuple(Event, fields[i:i + _EVENT_FIELDS]) for i in range(0, len(fields), _EVENT_FIELDS)]

    def add_backedges(self, instance: tuple[str, tuple], callees: Any) -> None:
        for callee in callees:
            self._backedges.setdefault(callee, set()).add(instance)

    def add_loaded(self, spec: Any) -> None:
        """A specialization was loaded from an image entry (``spec.entry``) that has calls: its backedges (to
        every callee its code inlines) come when needed."""
        self._loaded.append(spec)

    @property
    def backedges(self) -> dict[str, set[tuple[str, tuple]]]:
        """Method key → the instances (method key, argument types) whose code relied on it."""
        loaded, self._loaded = self._loaded, []
        for spec in loaded:
            self.add_backedges(spec.entry.key, spec.image.callees(spec.entry))
        return self._backedges

    def dependents(self, key: str) -> set[tuple[str, tuple]]:
        """Every instance that relied on method ``key``, directly or through other instances."""
        out: set[tuple[str, tuple]] = set()
        stack = [key]
        seen = {key}
        backedges = self.backedges
        while stack:
            for inst in backedges.get(stack.pop(), ()):
                if inst not in out:
                    out.add(inst)
                    if inst[0] not in seen:
                        seen.add(inst[0])
                        stack.append(inst[0])
        return out

    def redefine(self, key: str) -> None:
        """A method was defined again: close every code instance that depended on the old definition."""
        if self._current_world is not None:
            self._current_world.forget()
        for image in self._loader.images.values() if self._loader is not None else ():
            if image is not None and image._validator is not None:
                image._validator.forget()
        stale = self.dependents(key)
        if self._compiler is not None:
            inferred = self._compiler.inferencer.dependents(key)
            self._compiler.inferencer.forget(inferred)
            stale |= {(k, tuple(map(str, t))) for k, t in inferred}
        for method_key, argtypes in sorted(stale, key=str):
            mdef = self.table.methods.get(method_key)
            dispatcher = getattr(mdef, "dispatcher", None)
            if dispatcher is not None and dispatcher.drop(argtypes):
                cause = "redefined" if method_key == key else f"edge-changed:{key}"
                self.record("invalidated", method_key, argtypes, cause=cause)

    def seed(self, method: Any, argtypes: tuple) -> Any:
        """A callee's instance from a valid image entry (so it is not inferred again), or None."""
        image = self.loader.image_for(getattr(method, "module", method.key.split(":")[0]))
        if image is None or image.rejected:
            return None
        entry, cause = image.find(method.key, tuple(map(str, argtypes)))
        if entry is None or cause:
            return None
        return image.instance(entry, method)

    def stats(self) -> dict[str, int]:
        out = {"loaded": 0, "inferred": 0, "cured": 0, "invalidated": 0, "spurious": 0}
        fields = self._events
        for kind in fields[::_EVENT_FIELDS]:
            if kind in out:
                out[kind] += 1
        out["spurious"] = sum(fields[_EVENT_FIELDS - 1::_EVENT_FIELDS])
        return out

    def check_strict(self, method: str, argtypes: tuple, cause: str) -> None:
        if self.strict:
            types = ", ".join(str(t) for t in argtypes)
            raise StrictModeError(f"strict mode: {method}({types}) would be inferred and compiled at run time "
                                  f"(cause: {cause})")


_RUNTIME: Optional[Runtime] = None


def runtime() -> Runtime:
    global _RUNTIME
    if _RUNTIME is None:
        _RUNTIME = Runtime()
    return _RUNTIME


@contextmanager
def private_runtime(rt: Optional[Runtime] = None) -> Iterator[Runtime]:
    """``rt`` (a fresh Runtime by default) is the process's runtime inside the block; the previous one is put
    back when it ends, however it ends. The audit tools import a project's sources into a world of their own
    without disturbing the caller's.

        with private_runtime() as rt:
            rt.building = True
            importlib.import_module("numkit")      # numkit's methods go into rt.table
        runtime()                                   # → the runtime from before the block
    """
    global _RUNTIME
    saved = _RUNTIME
    _RUNTIME = rt if rt is not None else Runtime()
    try:
        yield _RUNTIME
    finally:
        _RUNTIME = saved
