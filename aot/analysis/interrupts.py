"""Where a compiled loop looks for a signal (Ctrl-C): the back edges that get a poll (``aot.codegen.interrupt``).

    poll_edges(fn)  → {("bb4", "bb2"), …}       (source block, loop header) of each polled back edge

Every loop polls once per iteration, at its back edge, except an innermost counted loop: its trip count is
known when it starts, and a poll inside would keep LLVM from vectorising it, so it is polled by the loop around
it. Counted: ``for … in range``, ``prange``, what the frontend lowers to them (``enumerate``, ``zip``, iteration
over an array), and a ``while i < n`` (``<=``; ``>``/``>=`` counting down) whose ``i`` the loop changes only by
adding a constant of the right sign and whose ``n`` it does not change. So any other ``while`` loop polls at each
iteration (``while True`` among them), and nested loops at each iteration of all but the innermost; a single
counted loop without an outer one runs to its end.
"""

from __future__ import annotations

from ..ir import (
    BinOp,
    Branch,
    Compare,
    Copy,
    Function,
    Intrinsic,
    IntrinsicCall,
    natural_loop,
    predecessors,
    successor_map,
)
from ..ir.ops import BinOpKind, CmpKind, Truth
from ..types import I64
from .ranges import constant_int

_COUNTS = (Intrinsic.RANGE_LEN, Intrinsic.PRANGE_LEN)


def _back_edges(fn: Function, succ: dict[str, tuple[str, ...]]) -> list[tuple[str, str]]:
    """Edges to a block on the depth-first path from the entry (to a loop's header), in a fixed order."""
    if not fn.blocks:
        return []
    entry = fn.blocks[0].label
    found: list[tuple[str, str]] = []
    state: dict[str, int] = {entry: 1}  # 1: on the path, 2: done
    work: list[tuple[str, list[str]]] = [(entry, list(reversed(succ.get(entry, []))))]
    while work:
        node, pending = work[-1]
        if not pending:
            state[node] = 2
            work.pop()
            continue
        nxt = pending.pop()
        seen = state.get(nxt)
        if seen == 1:
            found.append((node, nxt))
        elif seen is None and nxt in succ:
            state[nxt] = 1
            work.append((nxt, list(reversed(succ[nxt]))))
    return found


def _counted(ops: list, counts: set[str]) -> bool:
    """Whether a header of ``ops`` heads a counted loop: ``$k < count; branch`` with ``count`` a ``range.len``."""
    if len(ops) != 2 or not isinstance(ops[0], Compare) or not isinstance(ops[1], Branch):
        return False
    test = ops[0]
    return test.op is CmpKind.LT and test.rhs.name in counts and ops[1].cond == test.dest


_UP = {CmpKind.LT: 1, CmpKind.LE: 1, CmpKind.GT: -1, CmpKind.GE: -1}


def _stepped(fn: Function, blocks: dict, header: str, body: set[str], defs: dict[str, list]) -> bool:
    """Whether ``header`` heads ``while i < n`` (or ``<=``, ``>``, ``>=``) that stays in the loop while the test
    holds, with ``i`` changed in the loop only to itself plus a constant of the test's direction (directly or
    through a copy) and ``n`` not changed in it: LLVM counts its trips as it counts a ``range``'s."""
    ops = blocks[header].ops
    branch = ops[-1] if ops else None
    if not isinstance(branch, Branch) or branch.if_true not in body or branch.if_false in body:
        return False
    cond = branch.cond.name
    truth = next((op for op in ops if isinstance(op, Truth) and op.dest.name == cond), None)
    if truth is not None:
        cond = truth.src.name
    test = next((op for op in ops if isinstance(op, Compare) and op.dest.name == cond), None)
    if test is None or test.op not in _UP or fn.types.get(test.lhs.name) != I64:
        return False
    i, n, direction = test.lhs.name, test.rhs.name, _UP[test.op]
    in_loop = {id(op) for label in body for op in blocks[label].ops}
    if n in fn.types and any(id(op) in in_loop for op in defs.get(n, ())):
        return False

    def steps(op) -> bool:
        if isinstance(op, Copy):
            sources = defs.get(op.src.name, ())
            return len(sources) == 1 and steps(sources[0])
        if not isinstance(op, BinOp) or op.lhs.name != i or op.op not in (BinOpKind.ADD, BinOpKind.SUB):
            return False
        step = constant_int(fn, op.rhs.name, defs)
        return step is not None and step * (1 if op.op is BinOpKind.ADD else -1) * direction > 0

    return all(steps(op) for op in defs.get(i, ()) if id(op) in in_loop)


def poll_edges(fn: Function) -> frozenset[tuple[str, str]]:
    """The back edges of ``fn`` that poll for a signal (see the module docstring)."""
    succ = successor_map(fn.blocks)
    edges = _back_edges(fn, succ)
    if not edges:
        return frozenset()
    preds = predecessors(fn.blocks)
    counts = {op.dest.name for _, op in fn.ops() if isinstance(op, IntrinsicCall) and op.fn in _COUNTS}
    defs: dict[str, list] = {}
    for _, op in fn.ops():
        if op.dest_var is not None:
            defs.setdefault(op.dest_var.name, []).append(op)
    blocks = fn.block_map()
    loops: dict[str, set[str]] = {}
    for source, header in edges:
        loops.setdefault(header, set()).update(natural_loop(preds, header, [source]))
    polled = set()
    for source, header in edges:
        inner = any(other != header and other in loops[header] for other in loops)
        counted = _counted(blocks[header].ops, counts) or _stepped(fn, blocks, header, loops[header], defs)
        if inner or not counted:
            polled.add((source, header))
    return frozenset(polled)
