"""Building functions op by op.

b = Builder("demo:f", ("x",), file="demo.py")
t = b.emit_value(lambda d: Const(d, 1), span)
b.terminate(Return(t, span))
fn = b.finish()
"""

from __future__ import annotations

from collections.abc import Callable

from ..diagnostics import UNKNOWN_SPAN, Span
from .function import Block, Function
from .ops import Jump, Op, Var


class Builder:
    """Appends ops to a current block; makes fresh temporaries ``%0, %1 …`` and labels ``bb0, bb1 …``."""

    def __init__(self, name: str, params: tuple[str, ...], file: str = "<unknown>", span: Span = UNKNOWN_SPAN):
        self.name = name
        self.params = params
        self.file = file
        self.span = span
        self.blocks: list[Block] = []
        self._temps = 0
        self.block = self.new_block()

    def new_block(self) -> Block:
        block = Block(f"bb{len(self.blocks)}")
        self.blocks.append(block)
        return block

    def set_block(self, block: Block) -> None:
        self.block = block

    @property
    def terminated(self) -> bool:
        return self.block.terminator is not None

    def temp(self) -> Var:
        var = Var(str(self._temps))  # digits only: no Python name can clash with a temporary
        self._temps += 1
        return var

    def emit(self, op: Op) -> None:
        if self.terminated:
            # Code after a return/raise/break is unreachable: keep it out of the CFG.
            self.set_block(self.new_block())
        self.block.ops.append(op)

    def emit_value(self, make: Callable[[Var], Op]) -> Var:
        dest = self.temp()
        self.emit(make(dest))
        return dest

    def terminate(self, op: Op) -> None:
        self.emit(op)

    def jump(self, target: Block, span: Span | None = None) -> None:
        """Fall through to ``target`` (spans default to the function's, for a jump has no source)."""
        if not self.terminated:
            self.block.ops.append(Jump(target.label, span or self.span))

    def finish(self) -> Function:
        return Function(self.name, self.params, self.blocks, self.file, self.span)
