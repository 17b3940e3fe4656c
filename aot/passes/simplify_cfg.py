"""Simplify the control-flow graph: thread jumps through empty blocks, merge straight-line chains.

    bb3:                        bb3:
      jump bb4          →         %7: i64 = binop add %x, %6
    bb4:                          ret %7
      %7 = binop add %x, %6
      ret %7

The frontend emits a block per structured-statement edge (``if`` ends, loop exits); most of them are empty
or have a single predecessor. Removing them keeps printed IR short and gives codegen fewer blocks.
"""

from __future__ import annotations

from ..ir import Block, Branch, Function, Jump, predecessors, reachable, successors
from ..ir.ops import Op


def _retarget(op: Op, forward: dict[str, str]) -> Op:
    def follow(label: str) -> str:
        seen = set()
        while label in forward and label not in seen:
            seen.add(label)
            label = forward[label]
        return label

    if isinstance(op, Jump):
        return Jump(follow(op.target), op.span)
    if isinstance(op, Branch):
        t, f = follow(op.if_true), follow(op.if_false)
        return Jump(t, op.span) if t == f else Branch(op.cond, t, f, op.span)
    return op


def run(fn: Function, context: object = None) -> Function:
    blocks = [Block(b.label, list(b.ops)) for b in fn.blocks]
    entry = blocks[0].label
    # 1. Jump threading: an empty block that only jumps elsewhere is skipped by its predecessors.
    forward = {
        b.label: b.ops[0].target
        for b in blocks
        if b.label != entry and len(b.ops) == 1 and isinstance(b.ops[0], Jump) and b.ops[0].target != b.label
    }
    for b in blocks:
        b.ops[-1] = _retarget(b.ops[-1], forward)
    # 2. Drop what is no longer reachable.
    live = reachable(blocks)
    blocks = [b for b in blocks if b.label in live]
    # 3. Merge a block into its only predecessor when that predecessor jumps to it unconditionally.
    preds = predecessors(blocks)
    by_label = {b.label: b for b in blocks}
    merged: set[str] = set()
    for b in blocks:
        if b.label in merged:
            continue
        while True:
            last = b.ops[-1]
            if not isinstance(last, Jump) or last.target == entry or last.target == b.label:
                break
            nxt = by_label[last.target]
            if preds[nxt.label] != [b.label]:
                break
            b.ops = b.ops[:-1] + nxt.ops
            merged.add(nxt.label)
            for s in successors(nxt.ops[-1]):
                preds[s] = [b.label if p == nxt.label else p for p in preds[s]]
    return fn.with_blocks([b for b in blocks if b.label not in merged])
