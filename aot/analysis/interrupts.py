"""Where a compiled loop looks for a signal (Ctrl-C): the back edges that get a poll (``aot.codegen.interrupt``).

    poll_edges(fn)  → {("bb4", "bb2"), …}       (source block, loop header) of each polled back edge

Every loop polls once per iteration, at its back edge, except an innermost counted loop (``for … in range``,
``prange``, and what the frontend lowers to them: ``enumerate``, ``zip``, iteration over an array): its trip
count is known when it starts, and a poll inside would keep LLVM from vectorising it, so it is polled by the
loop around it. So a ``while`` loop polls at each iteration, and nested loops at each iteration of all but
the innermost; a single counted loop without an outer one runs to its end.
"""

from __future__ import annotations

from ..ir import Branch, Compare, Function, Intrinsic, IntrinsicCall, Jump
from ..ir.ops import CmpKind

_COUNTS = (Intrinsic.RANGE_LEN, Intrinsic.PRANGE_LEN)


def _successors(fn: Function) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for block in fn.blocks:
        last = block.ops[-1] if block.ops else None
        if isinstance(last, Jump):
            out[block.label] = [last.target]
        elif isinstance(last, Branch):
            out[block.label] = [last.if_true, last.if_false]
        else:
            out[block.label] = []
    return out


def _back_edges(fn: Function, succ: dict[str, list[str]]) -> list[tuple[str, str]]:
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


def _loop(header: str, source: str, preds: dict[str, list[str]]) -> set[str]:
    """The natural loop of the back edge ``source → header``."""
    body = {header, source}
    stack = [source] if source != header else []
    while stack:
        for p in preds.get(stack.pop(), ()):
            if p not in body:
                body.add(p)
                stack.append(p)
    return body


def _counted(fn: Function, header: str, counts: set[str]) -> bool:
    """Whether ``header`` heads a counted loop: ``$k < count; branch`` with ``count`` a ``range.len``."""
    ops = fn.block_map()[header].ops
    if len(ops) != 2 or not isinstance(ops[0], Compare) or not isinstance(ops[1], Branch):
        return False
    test = ops[0]
    return test.op is CmpKind.LT and test.rhs.name in counts and ops[1].cond == test.dest


def poll_edges(fn: Function) -> frozenset[tuple[str, str]]:
    """The back edges of ``fn`` that poll for a signal (see the module docstring)."""
    succ = _successors(fn)
    edges = _back_edges(fn, succ)
    if not edges:
        return frozenset()
    preds: dict[str, list[str]] = {label: [] for label in succ}
    for label, targets in succ.items():
        for t in targets:
            preds.setdefault(t, []).append(label)
    counts = {op.dest.name for _, op in fn.ops() if isinstance(op, IntrinsicCall) and op.fn in _COUNTS}
    loops: dict[str, set[str]] = {}
    for source, header in edges:
        loops.setdefault(header, set()).update(_loop(header, source, preds))
    polled = set()
    for source, header in edges:
        inner = any(other != header and other in loops[header] for other in loops)
        if inner or not _counted(fn, header, counts):
            polled.add((source, header))
    return frozenset(polled)
