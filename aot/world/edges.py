"""Edge kinds: what a code instance relied on when it was inferred, and whether that still holds.

    EdgeKind("global") is EdgeKind.GLOBAL                   # the text an image stores for the kind
    edge_holds(EdgeKind.GLOBAL, now, "numkit.core:SCALE", 2.0)   → True while ``numkit.core.SCALE == 2.0``
    edge_holds("call", now, "numkit.core:mean", "(f64[:])")      → True while mean's definition is unchanged

Each kind has one rule, here, that answers "does this edge hold in the current world?" through a small view of
the world (``WorldNow``: what a name stands for, the value it has, whether a method's definition is the stored
one). Validation of image entries (``aot.world.validate``) and the tools (``aot verify``) ask only these rules,
so a new kind (deferred references, static values, a plugin's rules) is one member and one rule.

A kind is a ``str`` enum: images store its text, and a kind read back from an image is looked up by that text.
An edge itself (``Edge``: kind, target, value) is made by inference; a stored one is a plain triple.
This module is read on a package's first call, so it holds no dataclass (making one compiles a handful of
methods: half a millisecond; and nothing else on that path imports ``dataclasses``): ``Edge`` is written
out, with what ``@dataclass(frozen=True, order=True)`` would give it.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any, Protocol

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<missing>"})()
"""What ``WorldNow.resolve`` gives for a name bound to nothing."""


class EdgeKind(str, Enum):
    """What an edge records (``Edge(kind, target, value)`` in ``aot.infer``)."""

    CALL = "call"  # target: the callee's method key; value: its argument types' signature text "(f64, i64)"
    GLOBAL = "global"  # target: "module:name" of a constant the code folded in; value: that constant
    LOOKUP = "lookup"  # target: "module:name" of a global name; value: what it named (see ``CurrentWorld.names``)
    OVERLAY = "overlay"  # target: "intrinsic(type)"; value: the owner's own symbol for it (ptx: libdevice)
    DEFAULT = "default"  # target: "method key#parameter" whose default a call filled in; value: that default

    def __str__(self) -> str:
        return self.value

    __format__ = str.__format__  # type: ignore[assignment]  # str's own method on purpose; mypy reads it unbound


class Edge:
    """One thing an inferred instance relied on (``EdgeKind`` says what ``target`` and ``value`` are for
    each kind). Immutable; equal, hashed and ordered by ``(kind, target, value)``, as a frozen, ordered
    dataclass would be."""

    __slots__ = __match_args__ = ("kind", "target", "value")

    kind: EdgeKind
    target: str
    value: Any

    def __init__(self, kind: EdgeKind, target: str, value: Any):
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "value", value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple:  # (copies and pickles are made through __init__: the slots refuse assignment)
        return (type(self), (self.kind, self.target, self.value))

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(kind={self.kind!r}, target={self.target!r}, value={self.value!r})"

    def _fields(self) -> tuple:
        return (self.kind, self.target, self.value)

    def __hash__(self) -> int:
        return hash((self.kind, self.target, self.value))

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._fields() == other._fields()
        return NotImplemented

    def __lt__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._fields() < other._fields()
        return NotImplemented

    def __le__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._fields() <= other._fields()
        return NotImplemented

    def __gt__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._fields() > other._fields()
        return NotImplemented

    def __ge__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._fields() >= other._fields()
        return NotImplemented


CONSTANT_VALUED = frozenset({EdgeKind.GLOBAL, EdgeKind.DEFAULT})
"""The kinds whose value is a constant compiled code folded in (an image keeps them with its constants)."""


class WorldNow(Protocol):
    """What the rules ask of the current world."""

    def names(self, where: str) -> str:
        """What ``module:name`` stands for now, in the terms lookup edges record."""

    def resolve(self, where: str) -> Any:
        """The value ``module:name`` has now, or ``MISSING``."""

    def definition_holds(self, key: str) -> bool:
        """Whether method ``key`` is defined now as the image stored it."""

    def default(self, key: str, param: str) -> Any:
        """The default value parameter ``param`` of method ``key`` has now, or ``MISSING``."""


_ARRAY = (list, tuple)  # what a stored array decodes as (tuples at import, lists in full reads)


def numpy_scalar_text(value: Any) -> str | None:
    """A NumPy scalar constant (``np.float32(1e-07)``) as the text its edge stores: its type and its exact
    value (``numpy.float32(1.0000000116860974e-07)``); None for anything else. NumPy is not imported."""
    kind = type(value)
    if kind.__module__ != "numpy" or not hasattr(value, "item") or getattr(value, "shape", None) != ():
        return None
    return f"numpy.{kind.__name__}({value.item()!r})"


def constant_matches(stored: Any, current: Any) -> bool:
    """Whether a module constant still has the value (and the exact types) an entry folded in."""
    if type(stored) is str:  # a string constant, or a NumPy scalar (stored as its text: numpy_scalar_text)
        if type(current) is not str:
            return numpy_scalar_text(current) == stored
        if stored.startswith("numpy.") and stored.endswith(")"):  # (which of the two was read, the edge
            return False  # cannot say: never trust it)
        return current == stored
    if type(current) not in (bool, int, float, tuple):  # a list is stored like a tuple, but is no constant
        return False
    if isinstance(current, tuple):
        return (
            type(stored) in _ARRAY
            and len(stored) == len(current)
            and all(constant_matches(s, c) for s, c in zip(stored, current))
        )
    if type(current) is not type(stored):
        return False
    if isinstance(current, float) and current != current:
        return stored != stored
    return stored == current


def _call_holds(now: WorldNow, target: str, value: Any) -> bool:
    # The callee's own entry is validated separately (the graph walk); the edge needs its definition unchanged.
    return now.definition_holds(target)


def _global_holds(now: WorldNow, target: str, value: Any) -> bool:
    current = now.resolve(target)
    return current is not MISSING and constant_matches(value, current)


def _lookup_holds(now: WorldNow, target: str, value: Any) -> bool:
    return now.names(target) == value


def _overlay_holds(now: WorldNow, target: str, value: Any) -> bool:
    from ..targets.ptx import PtxTarget  # (only ptx entries have overlay edges)

    return PtxTarget().overlay_holds(target, value)


def _default_holds(now: WorldNow, target: str, value: Any) -> bool:
    key, _, param = target.rpartition("#")
    current = now.default(key, param)
    if current is None or value is None:
        return current is None and value is None
    return current is not MISSING and constant_matches(value, current)


RULES: dict[str, Callable[[WorldNow, str, Any], bool]] = {
    EdgeKind.CALL: _call_holds,
    EdgeKind.GLOBAL: _global_holds,
    EdgeKind.LOOKUP: _lookup_holds,
    EdgeKind.OVERLAY: _overlay_holds,
    EdgeKind.DEFAULT: _default_holds,
}
"""Each kind's rule, by kind or by its text (a str enum hashes as its text)."""


def edge_holds(kind: str, now: WorldNow, target: str, value: Any) -> bool:
    """Whether an edge of ``kind`` still holds (an unknown kind never does: it is from a newer compiler)."""
    rule = RULES.get(kind)
    return rule is not None and rule(now, target, value)
