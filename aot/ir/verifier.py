"""Structural checks of a function, run after every pass in tests.

    >>> verify(fn)          # raises IRVerifyError listing every problem, or returns None

Checks: every block ends in exactly one terminator and holds no other; branch targets exist; labels are
unique; ``nowrap`` is only on ``add``s (of numbers, in typed functions); typed functions give every variable a
type, hold no untyped-only op, branch on booleans, and return values the declared return type covers (it is
the join of every returned value's type: ``return False`` and ``return 1`` in one function return i64, and
code generation converts the boolean).
"""

from __future__ import annotations

from ..types import BOOL, NONE, ScalarType, join
from .function import Function
from .ops import UNTYPED_ONLY, BinOp, BinOpKind, Branch, Return, successors, uses


class IRVerifyError(AssertionError):
    """The IR breaks an invariant: a compiler bug, never a user error."""


def verify(fn: Function) -> None:
    problems: list[str] = []
    labels = [b.label for b in fn.blocks]
    if len(set(labels)) != len(labels):
        problems.append("duplicate block labels")
    if not fn.blocks:
        problems.append("no blocks")
    known = set(labels)
    for block in fn.blocks:
        if not block.ops or not block.ops[-1].TERMINATOR:
            problems.append(f"{block.label}: does not end in a terminator")
        for op in block.ops[:-1]:
            if op.TERMINATOR:
                problems.append(f"{block.label}: terminator {op.NAME} before the end")
        for op in block.ops:
            for target in successors(op):
                if target not in known:
                    problems.append(f"{block.label}: branch to unknown block {target}")
            if isinstance(op, BinOp) and op.nowrap and op.op is not BinOpKind.ADD:
                problems.append(f"{block.label}: nowrap on binop {op.op.value} %{op.dest.name}")
            if not fn.is_typed:
                continue
            if isinstance(op, BinOp) and op.nowrap and not isinstance(fn.types.get(op.dest.name), ScalarType):
                problems.append(f"{block.label}: nowrap add %{op.dest.name} of type {fn.types.get(op.dest.name)}")
            if isinstance(op, UNTYPED_ONLY):
                problems.append(f"{block.label}: untyped op {op.NAME} in typed IR")
            names = [v.name for v in uses(op)]
            dest = getattr(op, "dest", None)
            if dest is not None:
                names.append(dest.name)
            for name in names:
                if name not in fn.types:
                    problems.append(f"{block.label}: %{name} has no type")
            if isinstance(op, Branch) and fn.types.get(op.cond.name) not in (BOOL, None):
                problems.append(f"{block.label}: branch on non-boolean %{op.cond.name}")
            if isinstance(op, Return):
                got = NONE if op.value is None else fn.types.get(op.value.name)
                ret = fn.return_type
                assert ret is not None  # fn.is_typed
                if got is None or join(got, ret) != ret:
                    problems.append(f"{block.label}: returns {got}, declared {fn.return_type}")
    if problems:
        raise IRVerifyError(f"{fn.name}: " + "; ".join(problems))
