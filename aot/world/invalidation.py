"""Invalidation: backedges from each method to the code instances that relied on it, and what a redefinition
closes.

    inv = Invalidation()
    inv.add(("numkit.stats:zscore", ("f64[:]",)), {"numkit.core:mean"})   # zscore's code relied on mean
    inv.subscribe(cpu_jit.forget)      # each owner's compiler drops what it inferred from a changed method
    inv.redefine("numkit.core:mean")
        → [(("numkit.core:mean", …), Cause(REDEFINED)),
           (("numkit.stats:zscore", ("f64[:]",)), Cause(EDGE_CHANGED, "numkit.core:mean"))]

World age (a counter that grows by one whenever a method is defined or redefined): redefining a method
closes every code instance that depends on it, transitively through backedges, and nothing else. Instances
are named by their stored key (method key, argument types' texts). Two sources feed the backedges: instances
compiled in this process (``add``, with every callee their code inlines) and specializations loaded from an
image, whose callees are worked out only when a redefinition asks (``add_loaded``: a first call stays cheap).
Each owner's compiler (the CPU JIT, the ``ptx`` compiler) ``subscribe``s: on a redefinition it forgets what
it inferred from the old definition and names the instances it dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, TypeVar

from .causes import REDEFINED, Cause
from .instances import StoredKey

K = TypeVar("K", bound=Hashable)

Forget = Callable[[str], Iterable[StoredKey]]
"""An owner's reaction to a redefinition of a method key: drop what relied on it, name what was dropped."""


class Invalidation:
    def __init__(self) -> None:
        self._backedges: dict[str, set[StoredKey]] = {}  # method key → instances whose code relied on it
        # Entries loaded from images whose callees are not worked out yet: (image, entry) pairs.
        self._later: list[tuple[Any, Any]] = []
        self._subscribers: list[Forget] = []

    def add(self, instance: StoredKey, callees: Iterable[str]) -> None:
        """``instance``'s code relied on (inlined) the methods ``callees``."""
        for callee in callees:
            self._backedges.setdefault(callee, set()).add(instance)

    def add_loaded(self, image: Any, entry: Any) -> None:
        """An image entry (with calls) was loaded: like ``add`` for ``entry.key``, with its callees worked out
        by ``image.callees(entry)`` only when something asks for backedges (a first call stays cheap)."""
        self._later.append((image, entry))

    def subscribe(self, forget: Forget) -> None:
        self._subscribers.append(forget)

    @property
    def backedges(self) -> dict[str, set[StoredKey]]:
        """Method key → the instances whose code relied on it."""
        later, self._later = self._later, []
        for image, entry in later:
            self.add(entry.key, image.callees(entry))
        return self._backedges

    def dependents(self, key: str) -> set[StoredKey]:
        """Every instance that relied on method ``key``, directly or through other instances."""
        out: set[StoredKey] = set()
        stack, seen = [key], {key}
        backedges = self.backedges
        while stack:
            for instance in backedges.get(stack.pop(), ()):
                if instance not in out:
                    out.add(instance)
                    if instance[0] not in seen:
                        seen.add(instance[0])
                        stack.append(instance[0])
        return out

    def redefine(self, key: str) -> list[tuple[StoredKey, Cause]]:
        """Method ``key`` was defined again: every instance that depended on the old definition, in a stable
        order, with its cause; every subscriber has dropped what it inferred from it."""
        stale = self.dependents(key)
        for forget in self._subscribers:
            stale.update(forget(key))
        return [
            (instance, REDEFINED if instance[0] == key else Cause.edge_changed(key))
            for instance in sorted(stale, key=str)
        ]


def callers_closure(method_key: str, callees: Mapping[K, Iterable[K]]) -> set[K]:
    """Every instance of method ``method_key`` among ``callees``' keys, and every instance whose code calls
    one, transitively: what a compiler drops when that method is redefined (``callees``: instance key →
    the instance keys it calls; keys are ``(method key, argument types)``)."""
    callers: dict[K, set[K]] = {}
    for key, called in callees.items():
        for callee in called:
            callers.setdefault(callee, set()).add(key)
    out = {k for k in callees if k[0] == method_key}  # type: ignore[index]  # (instance keys are tuples)
    stack = list(out)
    while stack:
        for caller in callers.get(stack.pop(), ()):
            if caller not in out:
                out.add(caller)
                stack.append(caller)
    return out
