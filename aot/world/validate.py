"""Validation of image entries against the current definitions (docs/ARCHITECTURE.md, "Follow a first call").

    v = Validator(contents, CurrentWorld(table))
    v.check(("numkit.stats:zscore", ("f64", "f64", "f64")))
        →  Verdict(valid=False, cause=Cause(CauseKind.EDGE_CHANGED, "numkit.core:mean"))

An entry is valid iff it was open-ended when built (``max_world``), its method's fingerprint is unchanged,
every edge holds by its kind's rule (``aot.world.edges``: module constants unchanged, names naming the same
things, callees' definitions unchanged, overlays resolving alike), and every callee entry is valid.
Callees are decided depth-first; mutually recursive entries (a strongly connected component of the call
graph) are decided together: all valid, or all invalid with the first cause found. Verdicts are memoised;
``forget`` drops them after a redefinition.

Hot path (every prebuilt method's first call), guarded by ``tests/bench/instructions.py`` and
``tests/bench/test_import_bench.py``.
"""

from __future__ import annotations

import builtins
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..types import describe
from .edges import MISSING as _MISSING
from .edges import RULES
from .fingerprint import definition
from .methods import MAX_WORLD, MethodOptions

if TYPE_CHECKING:
    from ..image.contents import ImageReader
    from ..image.entries import CodeEntry
    from .causes import Cause
    from .instances import StoredKey

_ModuleType = type(sys)
_BuiltinType = type(len)


class Verdict:
    """Whether an entry is valid, and why not (``cause``, None when it is)."""

    __slots__ = ("valid", "cause")

    def __init__(self, valid: bool, cause: Cause | None = None):
        self.valid = valid
        self.cause = cause

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Verdict) and (self.valid, self.cause) == (other.valid, other.cause)

    def __hash__(self) -> int:
        return hash((self.valid, self.cause))

    def __repr__(self) -> str:
        return f"Verdict(valid={self.valid}, cause={self.cause!r})"


VALID = Verdict(True)


def _invalid(cause: str, detail: str = "") -> Verdict:
    """An invalid verdict for ``cause`` (a ``CauseKind`` member's name). Causes are read only when an entry is
    invalid: a package whose entries hold imports no more modules on its first calls."""
    from .causes import Cause, CauseKind

    return Verdict(False, Cause(CauseKind[cause], detail))


_DEFAULT_OPTIONS = MethodOptions()


class CurrentWorld:
    """Answers questions about the current definitions: what a name is bound to, a method's definition.

    Looked-up names that stand for a module or a builtin (``math``, ``len``) are remembered for the current
    world, until a method is redefined (``forget``): validating a thousand entries that call ``len``
    resolves it once per module. Names bound to functions are looked up every time (they are what tests
    patch), and a name that resolves to nothing is never remembered (its module may simply not be imported
    yet). Definitions are encoded each time they are asked for: a validator remembers what it compared
    (``Validator.holds``), not the bytes, which would be a quarter of a kilobyte of fresh memory for each
    method called.
    """

    def __init__(self, table: Any):
        self.table = table
        self.known_names: dict[str, str] = {}  # what ``names`` remembers (read directly by validation)

    def forget(self) -> None:
        self.known_names.clear()

    def resolve(self, where: str) -> Any:
        """The value ``module:name`` has now (through the module's globals, then builtins)."""
        module, _, name = where.partition(":")
        mod = sys.modules.get(module)
        if mod is None:
            return _MISSING
        if "." not in name:  # the common case: one global (or builtin) name
            value = mod.__dict__.get(name, _MISSING)
            return getattr(builtins, name, _MISSING) if value is _MISSING else value
        parts = name.split(".")
        value = mod.__dict__.get(parts[0], _MISSING)
        for part in parts[1:]:
            value = getattr(value, part, _MISSING)
            if value is _MISSING:
                break
        return value

    def function_for(self, key: str) -> Callable | None:
        mdef = self.table.methods.get(key)
        if mdef is not None:
            return mdef.py_func
        value = self.resolve(key)
        if value is _MISSING:
            return None
        inner = getattr(value, "__aot_method__", None)
        return inner.py_func if inner is not None else value if callable(value) else None

    def definition(self, key: str) -> bytes | None:
        """The current definition of method ``key`` (``aot.world.fingerprint.definition``), or None."""
        mdef = self.table.methods.get(key)
        if mdef is not None:
            return definition(mdef.py_func, mdef.options)
        func = self.function_for(key)
        # (hasattr(func, "__code__") rules out None, which mypy cannot see)
        return definition(func, _DEFAULT_OPTIONS) if hasattr(func, "__code__") else None  # type: ignore[arg-type]

    def default(self, key: str, param: str) -> Any:
        """The default value parameter ``param`` of method ``key`` has now, or ``MISSING`` (``default`` edges)."""
        from ..binding import Parameters

        func = self.function_for(key)
        if not hasattr(func, "__code__"):
            return _MISSING
        return Parameters.of(func).default(param, _MISSING)

    def names(self, where: str) -> str:
        """What a looked-up name stands for now, in the terms lookup edges record."""
        known = self.known_names.get(where)
        if known is not None:
            return known
        value = self.resolve(where)
        if value is _MISSING:
            return "<missing>"
        kind = type(value)
        if kind is _ModuleType:
            known = self.known_names[where] = "module:" + value.__name__
        elif kind is _BuiltinType:
            known = self.known_names[where] = f"{value.__module__ or 'builtins'}:{value.__qualname__}"
        elif getattr(value, "__aot_method__", None) is not None:
            known = value.__aot_method__.key
        elif callable(value) and hasattr(value, "__code__"):
            known = f"{value.__module__}:{value.__qualname__}"
        else:
            known = describe(value)
        return known


class Validator:
    """Decides image entries, memoising verdicts for the current world. To the edge rules it is the world now
    (``aot.world.edges.WorldNow``): ``names`` and ``resolve`` are the current world's own, and
    ``definition_holds`` compares a method's stored definition with its current one, once a world."""

    def __init__(self, contents: ImageReader, world: CurrentWorld, reject: frozenset[str] = frozenset()):
        self.contents = contents
        self.world = world
        self.names, self.resolve = world.names, world.resolve  # (what the edge rules ask: no frame in between)
        self.default = world.default
        self.reject = reject
        self.verdicts: dict[StoredKey, Verdict] = {}
        self.held: dict[str, bool] = {}  # method key → whether its stored definition is the current one

    def forget(self) -> None:
        self.verdicts.clear()
        self.held.clear()
        self.world.forget()

    def holds(self, key: str) -> bool:
        """Whether the image's definition of method ``key`` is its current one (compared once a world)."""
        held = self.held[key] = self.contents.holds_definition(key, self.world.definition(key))
        return held

    # ------------------------------------------------------------------ the world as edge rules see it
    def definition_holds(self, key: str) -> bool:
        held = self.held.get(key)  # (a definition that does not hold is remembered too)
        return self.holds(key) if held is None else held

    # ------------------------------------------------------------------ local checks
    def local_check(self, entry: CodeEntry) -> Verdict:
        """Everything about ``entry`` except its callees' validity: its world bounds, its own definition, and every
        edge by its kind's rule (``aot.world.edges``)."""
        if entry.max_world != MAX_WORLD:  # (closed in the building world: never bound)
            return _invalid("INVALID_AT_BUILD")
        if self.reject and entry.method in self.reject:
            return _invalid("DEBUG_REJECT")
        held = self.held.get(entry.method)
        if not (self.holds(entry.method) if held is None else held):
            return _invalid("FINGERPRINT_CHANGED")
        rules = RULES
        for kind, target, value in entry.edges:
            rule = rules.get(kind)
            if rule is None or not rule(self, target, value):
                return _invalid("EDGE_CHANGED", target)
        return VALID

    # ------------------------------------------------------------------ graph walk (Tarjan)
    def check(self, key: StoredKey, entry: CodeEntry | None = None) -> Verdict:
        """The verdict on the entry for ``key`` (``entry``, when the caller has looked it up already)."""
        verdicts = self.verdicts
        verdict = verdicts.get(key)
        if verdict is not None:
            return verdict
        find = self.contents.entry
        if entry is None:
            entry = find(key)
            if entry is None:
                return _invalid("NO_ENTRY")
        calls = entry.call_keys
        for c in calls:
            if c not in verdicts and find(c) is not None:
                break
        else:  # the common case: a leaf, or callees decided already. No graph walk needed.
            verdict = self.local_check(entry)
            if verdict.valid:
                for callee in calls:
                    decided = verdicts.get(callee)
                    if decided is None or not decided.valid:  # (None: no entry for the callee)
                        verdict = _invalid("EDGE_CHANGED", callee[0])
                        break
            verdicts[key] = verdict
            return verdict
        index: dict[StoredKey, int] = {}
        low: dict[StoredKey, int] = {}
        stack: list[StoredKey] = []
        on_stack: set[StoredKey] = set()
        counter = [0]

        def visit(k: StoredKey) -> None:
            index[k] = low[k] = counter[0]
            counter[0] += 1
            stack.append(k)
            on_stack.add(k)
            for callee in find(k).call_keys:  # type: ignore[union-attr]  # visited only when it has an entry
                if callee in self.verdicts or find(callee) is None:
                    continue
                if callee not in index:
                    visit(callee)
                    low[k] = min(low[k], low[callee])
                elif callee in on_stack:
                    low[k] = min(low[k], index[callee])
            if low[k] == index[k]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == k:
                        break
                self._decide(component)

        visit(key)
        return self.verdicts[key]

    def _decide(self, component: list[StoredKey]) -> None:
        """Decide a strongly connected component, whose callees outside it are decided already.

        A member failing its own checks keeps its cause; the others are invalid because of it."""
        members = set(component)
        find = self.contents.entry
        locals_ = {k: self.local_check(find(k)) for k in component}  # type: ignore[arg-type]  # (all have entries)
        shared: Verdict | None = None
        for k in sorted(component):
            if not locals_[k].valid:
                shared = shared or _invalid("EDGE_CHANGED", k[0])
                continue
            for callee in find(k).call_keys:  # type: ignore[union-attr]  # a member: it has an entry
                if callee in members:
                    continue
                if find(callee) is None or not self.verdicts[callee].valid:
                    shared = shared or _invalid("EDGE_CHANGED", callee[0])
                    break
        for k in component:
            if not locals_[k].valid:
                self.verdicts[k] = locals_[k]
            else:
                self.verdicts[k] = shared or VALID
