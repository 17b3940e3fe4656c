"""The control-flow-graph helpers of ``aot.ir.cfg``: successors, predecessors, reachability, natural loops."""

from __future__ import annotations

import textwrap

from aot.ir import (
    Block,
    Function,
    Jump,
    block_successors,
    natural_loop,
    parse_function,
    predecessors,
    reachable,
    successor_map,
    verify,
)
from aot.ir.cfg import natural_loop as cfg_natural_loop


def _ir(body: str) -> Function:
    """A function ``demo:f(%n: i64) -> i64`` with the blocks of ``body`` (labels and ops, spans added)."""
    lines = ['func demo:f(%n: i64) -> i64  file "demo.py" @1:1-9:1']
    for line in textwrap.dedent(body).strip().splitlines():
        lines.append(line if line.endswith(":") else f"  {line.strip()}  @1:1-1:2")
    return parse_function("\n".join(lines) + "\n")


# Two nested loops: bb1 heads the outer one (bb3 → bb1 closes it), bb3 the inner one (bb4 → bb3).
# bb6 is unreachable and jumps into the outer loop.
NESTED = _ir(
    """
    bb0:
      %0: i64 = const 0
      jump bb1
    bb1:
      %c: boolean = cmp lt, %0, %n
      br %c, bb2, bb5
    bb2:
      jump bb3
    bb3:
      br %c, bb4, bb1
    bb4:
      jump bb3
    bb5:
      ret %0
    bb6:
      jump bb1
    """
)


def test_the_sample_is_valid_ir():
    verify(NESTED)


def test_block_successors_follow_the_terminator():
    blocks = NESTED.block_map()
    assert block_successors(blocks["bb0"]) == ("bb1",)
    assert block_successors(blocks["bb1"]) == ("bb2", "bb5")  # the true target first
    assert block_successors(blocks["bb5"]) == ()
    assert block_successors(Block("empty")) == ()


def test_successor_map_lists_every_block_in_order():
    succ = successor_map(NESTED.blocks)
    assert list(succ) == [b.label for b in NESTED.blocks]
    assert succ == {
        "bb0": ("bb1",),
        "bb1": ("bb2", "bb5"),
        "bb2": ("bb3",),
        "bb3": ("bb4", "bb1"),
        "bb4": ("bb3",),
        "bb5": (),
        "bb6": ("bb1",),
    }


def test_predecessors_in_block_order():
    preds = predecessors(NESTED.blocks)
    assert list(preds) == [b.label for b in NESTED.blocks]
    assert preds == {
        "bb0": [],
        "bb1": ["bb0", "bb3", "bb6"],
        "bb2": ["bb1"],
        "bb3": ["bb2", "bb4"],
        "bb4": ["bb3"],
        "bb5": ["bb1"],
        "bb6": [],
    }


def test_predecessors_count_a_branch_to_one_block_twice():
    fn = _ir(
        """
        bb0:
          %c: boolean = cmp lt, %n, %n
          br %c, bb1, bb1
        bb1:
          ret %n
        """
    )
    assert predecessors(fn.blocks) == {"bb0": [], "bb1": ["bb0", "bb0"]}


def test_predecessors_leave_out_edges_to_other_blocks():
    # Only the blocks given count: here the entry's jump leaves them (as after a pass drops blocks).
    blocks = [Block("bb0", [Jump("bb9", NESTED.span)]), Block("bb1", [Jump("bb0", NESTED.span)])]
    assert predecessors(blocks) == {"bb0": ["bb1"], "bb1": []}


def test_reachable_from_the_entry():
    assert reachable(NESTED.blocks) == {"bb0", "bb1", "bb2", "bb3", "bb4", "bb5"}
    assert reachable(NESTED.blocks, avoid="bb3") == {"bb0", "bb1", "bb2", "bb5"}
    assert reachable(NESTED.blocks, avoid="bb0") == set()


def test_reachable_sets_give_what_a_block_dominates():
    dominated = reachable(NESTED.blocks) - reachable(NESTED.blocks, avoid="bb1")
    assert dominated == {"bb1", "bb2", "bb3", "bb4", "bb5"}
    assert reachable(NESTED.blocks) - reachable(NESTED.blocks, avoid="bb3") == {"bb3", "bb4"}


def test_natural_loops_of_back_edges():
    preds = predecessors(NESTED.blocks)
    assert natural_loop(preds, "bb1", ["bb3"]) == {"bb1", "bb2", "bb3", "bb4"}
    assert natural_loop(preds, "bb3", ["bb4"]) == {"bb3", "bb4"}
    assert natural_loop(preds, "bb3", ["bb3"]) == {"bb3"}  # a block that loops to itself


def test_natural_loop_within_a_set():
    preds = predecessors(NESTED.blocks)
    # Every predecessor of bb1 taken as a latch: the entry and unreachable bb6 come in.
    assert natural_loop(preds, "bb1", preds["bb1"]) == {"bb0", "bb1", "bb2", "bb3", "bb4", "bb6"}
    # Kept to the blocks bb1 dominates, only the real back edge bb3 → bb1 is left.
    dominated = reachable(NESTED.blocks) - reachable(NESTED.blocks, avoid="bb1")
    assert natural_loop(preds, "bb1", preds["bb1"], within=dominated) == {"bb1", "bb2", "bb3", "bb4"}


def test_the_package_exports_the_module_helpers():
    assert natural_loop is cfg_natural_loop


def test_callers_see_the_same_loops():
    from aot.analysis.interrupts import poll_edges
    from aot.analysis.ranges import _natural_loop

    preds = predecessors(NESTED.blocks)
    assert _natural_loop(NESTED, preds, "bb1") == {"bb1", "bb2", "bb3", "bb4"}
    # Both loops are ``while`` loops (not counted), so both back edges poll.
    assert poll_edges(NESTED) == frozenset({("bb3", "bb1"), ("bb4", "bb3")})
