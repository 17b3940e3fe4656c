"""Definite assignment: which reads of a variable may happen before any assignment to it.

    def f(n):
        for i in range(n):
            last = i
        return last        # ← 'last' is unassigned when n <= 0: Python raises UnboundLocalError

``maybe_unassigned(fn)`` returns the names whose reads need a runtime check; code generation guards
exactly those, so compiled code raises ``UnboundLocalError`` where Python does and costs nothing elsewhere.
"""

from __future__ import annotations

from ..ir import Function, predecessors, uses


def maybe_unassigned(fn: Function) -> frozenset[str]:
    everything = {name for name in fn.types} | set(fn.params)
    blocks = fn.block_map()
    preds = predecessors(fn.blocks)
    # Forward "definitely assigned on entry" sets; start from "everything" (top) except at the entry.
    entry = fn.blocks[0].label
    into: dict[str, set[str]] = {b.label: set(everything) for b in fn.blocks}
    into[entry] = set(fn.params)
    changed = True
    while changed:
        changed = False
        for b in fn.blocks:
            if b.label != entry:
                ps = preds[b.label]
                new = set.intersection(*(out_of(blocks[p], into[p]) for p in ps)) if ps else set(everything)
                if new != into[b.label]:
                    into[b.label] = new
                    changed = True
    risky: set[str] = set()
    for b in fn.blocks:
        assigned = set(into[b.label])
        for op in b.ops:
            for v in uses(op):
                if v.name not in assigned:
                    risky.add(v.name)
            dest = op.dest_var
            if dest is not None:
                assigned.add(dest.name)
    return frozenset(risky)


def out_of(block, assigned_in: set[str]) -> set[str]:
    out = set(assigned_in)
    for op in block.ops:
        dest = op.dest_var
        if dest is not None:
            out.add(dest.name)
    return out
