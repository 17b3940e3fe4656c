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
from dataclasses import dataclass
from typing import Any, Optional

from ..world import MethodTable


class StrictModeError(RuntimeError):
    """Raised in strict mode instead of inferring or compiling at run time."""


@dataclass(frozen=True)
class Event:
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
        self.events: list[Event] = []
        self._compiler: Any = None

    @property
    def compiler(self):
        """The JIT compiler, created (and llvmlite imported) on first use."""
        if self._compiler is None:
            from .jit import Compiler
            self._compiler = Compiler(self)
        return self._compiler

    def record(self, kind: str, method: str, argtypes: tuple, owner: str = "cpu", cause: str = "",
               spurious: bool = False) -> Event:
        event = Event(kind, method, tuple(str(t) for t in argtypes), owner, cause, spurious)
        self.events.append(event)
        if self.env.log or (spurious and self.env.log):
            print(str(event), file=sys.stderr)
        return event

    def stats(self) -> dict[str, int]:
        out = {"loaded": 0, "inferred": 0, "cured": 0, "invalidated": 0, "spurious": 0}
        for e in self.events:
            if e.kind in out:
                out[e.kind] += 1
            if e.spurious:
                out["spurious"] += 1
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
