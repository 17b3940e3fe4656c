"""The control-flow graph of a function: the edges between its blocks, what the entry reaches, natural loops.

    block_successors(block)                  ("bb2", "bb4")               where its jump or branch goes
    successor_map(fn.blocks)                 {"bb0": ("bb1",), …}         every block's successors
    predecessors(fn.blocks)                  {"bb0": [], "bb1": ["bb0", "bb2"], …}
    reachable(fn.blocks)                     {"bb0", "bb1", "bb2", "bb4"} what a path from the entry reaches
    natural_loop(preds, "bb1", ["bb2"])      {"bb1", "bb2"}               the loop of the back edge bb2 → bb1

Blocks are named by their labels. The maps list blocks in the order of ``blocks`` and edges in the order the
terminators name them, so whatever walks them does so in the same order on every run.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping, Sequence

from .function import Block
from .ops import successors


def block_successors(block: Block) -> tuple[str, ...]:
    """The labels ``block``'s last op jumps or branches to (a branch's true target first); ``()`` when it
    returns, raises or is empty."""
    return successors(block.ops[-1]) if block.ops else ()


def successor_map(blocks: Sequence[Block]) -> dict[str, tuple[str, ...]]:
    """Each block's label → its successors, in the order of ``blocks``."""
    return {b.label: block_successors(b) for b in blocks}


def predecessors(blocks: Sequence[Block]) -> dict[str, list[str]]:
    """Each block's label → the labels of the blocks with an edge to it, in the order of ``blocks`` (a
    branch whose two targets are one block counts twice). Every block has an entry, possibly empty; an edge
    to a label that is not among ``blocks`` is left out."""
    preds: dict[str, list[str]] = {b.label: [] for b in blocks}
    for b in blocks:
        for s in block_successors(b):
            if s in preds:
                preds[s].append(b.label)
    return preds


def reachable(blocks: Sequence[Block], avoid: str | None = None) -> set[str]:
    """The labels of the blocks some path from the entry (the first of ``blocks``) reaches; with ``avoid``,
    only paths that do not pass through that block (so it is left out, and everything is if it is the entry).
    A block ``avoid`` leaves out that the entry reaches is one every such path passes ``avoid`` to reach:
    ``reachable(blocks) - reachable(blocks, h)`` are the reachable blocks ``h`` dominates, ``h`` among them."""
    by_label = {b.label: b for b in blocks}
    seen: set[str] = set()
    stack = [blocks[0].label]
    while stack:
        label = stack.pop()
        if label in seen or label == avoid:
            continue
        seen.add(label)
        stack.extend(block_successors(by_label[label]))
    return seen


def natural_loop(
    preds: Mapping[str, Sequence[str]],
    header: str,
    latches: Iterable[str],
    within: Container[str] | None = None,
) -> set[str]:
    """``header`` and every block from which one of ``latches`` (the sources of back edges to ``header``) is
    reached without passing through ``header``: found by walking ``preds`` back from the latches. With
    ``within``, only blocks in it are visited, latches included (e.g. the blocks ``header`` dominates)."""
    loop = {header}
    stack = [label for label in latches if within is None or label in within]
    while stack:
        label = stack.pop()
        if label in loop:
            continue
        loop.add(label)
        stack.extend(p for p in preds[label] if within is None or p in within)
    return loop
