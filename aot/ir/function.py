"""Functions and basic blocks.

    func numkit.core:sqr(%x: f64) -> f64  file "numkit/core.py" @7:1-9:17
    bb0:
      %0: f64 = binop mul %x, %x  @9:12-9:17
      ret %0  @9:5-9:17

A ``Function`` is a list of ``Block``s (the first is the entry), the parameter names, and — once typed —
the type of every variable and the return type. Functions are values: passes build new ones.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from ..diagnostics import UNKNOWN_SPAN, Span
from ..types import Type
from .ops import Op, Var


@dataclass(slots=True)
class Block:
    """A label and a list of ops; the last op is the only terminator."""

    label: str
    ops: list[Op] = field(default_factory=list)

    @property
    def terminator(self) -> Op | None:
        return self.ops[-1] if self.ops and self.ops[-1].TERMINATOR else None


@dataclass(slots=True)
class Function:
    """One method's body: untyped (``types`` empty) or typed (every variable typed, ``return_type`` set)."""

    name: str
    params: tuple[str, ...]
    blocks: list[Block]
    file: str = "<unknown>"
    span: Span = UNKNOWN_SPAN
    types: dict[str, Type] = field(default_factory=dict)
    return_type: Type | None = None

    @property
    def is_typed(self) -> bool:
        return self.return_type is not None

    @property
    def entry(self) -> Block:
        return self.blocks[0]

    def block_map(self) -> dict[str, Block]:
        return {b.label: b for b in self.blocks}

    def ops(self) -> Iterator[tuple[Block, Op]]:
        for block in self.blocks:
            for op in block.ops:
                yield block, op

    def type_of(self, var: Var) -> Type:
        return self.types[var.name]

    def with_blocks(self, blocks: list[Block], **changes) -> Function:
        """A copy holding ``blocks`` (and any other field changes)."""
        return replace(self, blocks=blocks, **changes)

    def copy(self) -> Function:
        return replace(self, blocks=[Block(b.label, list(b.ops)) for b in self.blocks], types=dict(self.types))
