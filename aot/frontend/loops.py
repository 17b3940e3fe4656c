"""The counted loop: the one shape of every loop the frontend makes over an iterable (``for`` in
``lower.py``; ``x in it`` and ``sum min max any all`` in ``iteration.py``). A hidden counter goes from its
first value to a trip count computed once, before the loop:

      $k = 0                                      (``start``: 1 for min/max, which read item 0 first)
      jump head
    head:
      %more = cmp lt $k, count
      br %more, body, exit                        (``enter``: the exit is one of the caller's blocks)
    body:
      x = item($k)                                (``next``: the item, bound or read by the caller …
      $k = binop add $k, 1, nowrap                 … then the step, before the rest of the body)
      …                                           (the caller's body; it jumps back to head)

Stepping before the body lets ``continue`` go straight back to the test, and, as an iterator's ``next``
does, lets LLVM schedule the unrolled loop's next counters ahead of the work that uses them.
``aot/analysis/ranges.py``, ``interrupts.py`` and ``parallel.py`` recognise this shape.

What the loop knows travels on the IR, not in the names: the step, and a unit-step range's item
``start + $k`` (``range_value``), are ``nowrap`` adds. The counter stays below the trip count, and
``start + k`` below the range's stop for ``k`` below its length, so neither can overflow; code generation
gives them ``nsw`` (``aot.codegen.function``), which lets LLVM prove index ranges.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from ..diagnostics import Span
from ..ir import BinOp, BinOpKind, Block, Branch, Builder, CmpKind, Compare, Copy, Var

T = TypeVar("T")


class Lowering(Protocol):
    """What this module uses of ``lower.Lowering``."""

    b: Builder

    def hidden(self, stem: str) -> Var: ...
    def const(self, value: Any, node: ast.AST) -> Var: ...


class CountedLoop:
    """One counted loop over ``count`` items, built in steps (the ops come out in the order of the calls):
    ``CountedLoop(…)`` names the counter ``$k``; ``one`` is the constant step (emitted where first asked
    for, else by ``start``); ``start`` sets the counter; ``enter`` makes the blocks and the test and leaves
    the builder in the body; ``next`` gives the item and steps the counter. Constants take their spans
    from ``at``, the loop's ops theirs from ``span``."""

    head: Block  # (made by ``enter``: where the body jumps back to, for the next iteration)

    def __init__(self, low: Lowering, count: Var, span: Span, at: ast.AST) -> None:
        self.low = low
        self.count = count
        self.span = span
        self.at = at
        self.counter = low.hidden("k")
        self._one: Var | None = None

    @property
    def one(self) -> Var:
        """The constant 1 the counter steps by."""
        if self._one is None:
            self._one = self.low.const(1, self.at)
        return self._one

    def start(self, first: Var | None = None) -> None:
        """``$k = first`` (a constant 0 unless given), then the step's constant if not made yet."""
        first = self.low.const(0, self.at) if first is None else first
        self.low.b.emit(Copy(self.counter, first, self.span))
        _ = self.one  # (made here, before the loop, if not made yet)

    def enter(self, blocks: int, exit: int) -> list[Block]:
        """Jump to the head, ``if $k < count`` there, and continue in the body. Makes the head, the body and
        ``blocks`` more blocks after them (returned, for the caller), of which ``exit`` is where the test
        goes once the items are done."""
        b = self.low.b
        head, body, *rest = (b.new_block() for _ in range(2 + blocks))
        self.head = head
        b.jump(head)
        b.set_block(head)
        more = b.emit_value(lambda d: Compare(d, CmpKind.LT, self.counter, self.count, self.span))
        b.terminate(Branch(more, body.label, rest[exit].label, self.span))
        b.set_block(body)
        return rest

    def next(self, take: Callable[[Var], T]) -> T:
        """``take($k)`` (the item of this iteration: bound to a target, or read), then ``$k = $k + 1``."""
        value = take(self.counter)
        self.low.b.emit(BinOp(self.counter, BinOpKind.ADD, self.counter, self.one, self.span, nowrap=True))
        return value


def range_value(low: Lowering, start: Var, step: Var, unit_step: bool, k: Var, span: Span, nowrap: bool = True) -> Var:
    """Item ``k`` of ``range(start, …, step)`` (``0 <= k < range.len``): ``start + k`` when the step is the
    constant 1 (``nowrap`` unless told otherwise), else ``start + k * step``."""
    b = low.b
    if unit_step:
        return b.emit_value(lambda d: BinOp(d, BinOpKind.ADD, start, k, span, nowrap=nowrap))
    offset = b.emit_value(lambda d: BinOp(d, BinOpKind.MUL, k, step, span))
    return b.emit_value(lambda d: BinOp(d, BinOpKind.ADD, start, offset, span))
