"""Value ranges in counted ``range`` loops, and the loop versions they justify.

    for i in range(n):            i in [0, 3037000499] whenever n <= 3037000500, checked once before the loop:
        s += i * i % 7      →     i * i cannot wrap (mul nsw nuw) and is >= 0, so % 7 is one unsigned urem

Compiled ints wrap (SUBSET.md), so codegen may only tell LLVM "this cannot overflow" or "this is not
negative" where that is proven; Python's floor ``//`` and ``%`` cost sign fix-ups otherwise. The range of
a loop's counter is known from its bounds, but a bound that is a runtime value (``n``) proves nothing by
itself. So ``loop_versions(fn)`` picks, per loop, a *guard* on the bounds (``n <= 3037000500``) under which
the counter lies in a small interval, runs an interval analysis over the loop's body from there, and keeps
what it proves as *facts* keyed by op position:

- ``NO_SIGNED_WRAP`` / ``NO_WRAP``: the exact result of an ``add``/``sub``/``mul`` fits in i64 (and, for
  ``NO_WRAP``, it and both operands are >= 0), so LLVM's ``nsw`` (and ``nuw``) flags hold;
- ``UNSIGNED_DIVISION``: a ``//`` or ``%`` has a dividend >= 0 and a divisor >= 1, where Python's floor
  division is plain unsigned division and the zero check cannot fail.

Codegen lowers a loop with checks twice: the original loop, and a copy using the facts, entered only when
the checks pass at run time. Results are identical either way (every fact is true on the copy), so wrapped
arithmetic stays exact for all inputs; only the speed differs. A loop whose facts need no check is lowered
once, with its facts. Loops are versioned only when some ``//`` or ``%`` becomes unsigned — the case where
the copy pays for itself.

What the analysis relies on is the frontend's shape of a ``for … in range`` loop (frontend/lower.py): the
trip count ``range.len(start, stop, step)`` computed in the block that jumps to the header, a header
``cmp lt $k, count; br``, hidden single-assignment ``$start``/``$step``, a counter ``$k`` that is only ever
set to 0 or incremented by 1, and the body opening with ``start + $k`` (or ``start + $k * step``), the loop
variable's value. Each of these is checked; a loop of any other shape gets no facts. Inside the loop the
analysis is flow-sensitive but starts every iteration from nothing known except that value, so no widening
is needed; inside a nested loop, whatever that loop assigns is unknown.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from ..ir import (
    BinOp,
    BinOpKind,
    Branch,
    CmpKind,
    Compare,
    Const,
    Copy,
    Function,
    Intrinsic,
    IntrinsicCall,
    Jump,
    UnaryKind,
    UnaryOp,
    natural_loop,
    predecessors,
    reachable,
    successors,
)
from ..types import I64

I64_MIN, I64_MAX = -(2**63), 2**63 - 1
SQUARE_SAFE = 3037000499  # the largest m with m * m <= I64_MAX

Interval = tuple[int, int]
FULL: Interval = (I64_MIN, I64_MAX)


class Fact(enum.Enum):
    """What is proven about one op on the loop version it belongs to."""

    NO_SIGNED_WRAP = "nsw"
    NO_WRAP = "nsw nuw"
    UNSIGNED_DIVISION = "unsigned"


@dataclass(frozen=True)
class Check:
    """One run-time condition of a loop version's guard: ``var <= bound`` (``upper``) or ``var >= bound``."""

    var: str
    upper: bool
    bound: int


@dataclass(frozen=True)
class LoopVersion:
    """A ``range`` loop and what holds on its fast version: ``facts`` (by (block label, op index)), valid
    whenever every check passes on entry; with no checks they always hold and there is a single version."""

    header: str
    preheader: str
    blocks: tuple[str, ...]
    counter: Interval  # every value of the loop variable, on the fast version
    checks: tuple[Check, ...]
    facts: Mapping[tuple[str, int], Fact]


@dataclass(frozen=True)
class _RangeLoop:
    header: str
    preheader: str
    blocks: frozenset[str]
    start: str
    stop: str
    step_sign: int  # +1, -1, or 0 when the step is only known at run time
    value_at: tuple[str, int]  # the op computing the loop variable's value (``start + $k * step``)


def loop_versions(fn: Function) -> tuple[LoopVersion, ...]:
    """The loops of ``fn`` worth lowering with facts, outermost first; no two of them nest."""
    preds, defs = predecessors(fn.blocks), _definitions(fn)
    loops = [
        loop
        for loop in (
            _match_range_loop(fn, preds, defs, b.label, i)
            for b in fn.blocks
            for i, op in enumerate(b.ops)
            if isinstance(op, IntrinsicCall) and op.fn is Intrinsic.RANGE_LEN
        )
        if loop is not None
    ]
    loops.sort(key=lambda loop: -len(loop.blocks))  # a loop's nested loops are smaller than it
    chosen: list[LoopVersion] = []
    for loop in loops:
        if any(loop.header in c.blocks for c in chosen):
            continue  # nested in a chosen loop: lowered inside its versions, with its facts
        version = _best_version(fn, preds, defs, loop)
        if version is not None:
            chosen.append(version)
    return tuple(chosen)


# ----------------------------------------------------------------------------------------- loop shape


def _definitions(fn: Function) -> dict[str, list]:
    defs: dict[str, list] = {}
    for _, op in fn.ops():
        if op.dest_var is not None:
            defs.setdefault(op.dest_var.name, []).append(op)
    return defs


def constant_int(fn: Function, name: str, defs: dict[str, list] | None = None) -> int | None:
    """The value of an i64 variable assigned exactly once, from a constant (through copies and negation,
    as in ``range(n, -1, -1)``), else None."""
    defs = _definitions(fn) if defs is None else defs
    sign, seen = 1, set()
    while name not in seen and name not in fn.params and fn.types.get(name) == I64:
        seen.add(name)
        ops = defs.get(name, [])
        if len(ops) != 1:
            return None
        op = ops[0]
        if isinstance(op, Const):
            value = sign * op.value if type(op.value) is int else None
            return value if value is not None and I64_MIN <= value <= I64_MAX else None
        if isinstance(op, UnaryOp) and op.op is UnaryKind.NEG:
            sign = -sign
            name = op.operand.name
        elif isinstance(op, Copy):
            name = op.src.name
        else:
            return None
    return None


def _match_range_loop(
    fn: Function, preds: dict[str, list[str]], defs: dict[str, list], pre_label: str, at: int
) -> _RangeLoop | None:
    """The loop whose trip count is the ``range.len`` at ``(pre_label, at)``, if it has the frontend's shape."""
    blocks = fn.block_map()
    pre = blocks[pre_label]
    count_op = pre.ops[at]
    assert isinstance(count_op, IntrinsicCall)
    start, stop, step = (v.name for v in count_op.args)
    count = count_op.dest.name
    jump = pre.ops[-1]
    if not isinstance(jump, Jump) or jump.target not in blocks:
        return None
    header = blocks[jump.target]
    if len(header.ops) != 2:
        return None
    test, branch = header.ops
    if not (
        isinstance(test, Compare)
        and test.op is CmpKind.LT
        and test.rhs.name == count
        and isinstance(branch, Branch)
        and branch.cond == test.dest
    ):
        return None
    k = test.lhs.name
    if any(fn.types.get(name) != I64 for name in (start, stop, step, count, k)):
        return None
    # The bounds the guard reads are those range.len saw: nothing after it reassigns them.
    if any(op.dest_var is not None and op.dest_var.name in (start, stop, step, count) for op in pre.ops[at + 1 :]):
        return None
    if len(defs.get(start, ())) != 1 or len(defs.get(step, ())) != 1 or len(defs.get(count, ())) != 1:
        return None
    # The counter runs 0, 1, … while below count: set to 0, incremented by 1, nothing else.
    for op in defs.get(k, ()):
        if isinstance(op, Copy) and constant_int(fn, op.src.name, defs) == 0:
            continue
        if (
            isinstance(op, BinOp)
            and op.op is BinOpKind.ADD
            and op.lhs.name == k
            and constant_int(fn, op.rhs.name, defs) == 1
        ):
            continue
        return None
    body = blocks[branch.if_true]
    value_at = _range_value(body.ops, start, step, k)
    if value_at is None:
        return None
    loop = _natural_loop(fn, preds, header.label)
    if body.label not in loop or pre_label in loop or [p for p in preds[header.label] if p not in loop] != [pre_label]:
        return None
    step_value = constant_int(fn, step, defs)
    step_sign = 0 if step_value is None else (1 if step_value > 0 else -1)
    return _RangeLoop(header.label, pre_label, frozenset(loop), start, stop, step_sign, (body.label, value_at))


def _range_value(ops: list, start: str, step: str, k: str) -> int | None:
    """Index of the op computing ``start + k`` (unit step) or ``start + k * step`` at the top of the body."""
    if (
        len(ops) >= 1
        and isinstance(ops[0], BinOp)
        and ops[0].op is BinOpKind.ADD
        and (ops[0].lhs.name, ops[0].rhs.name) == (start, k)
    ):
        return 0
    if (
        len(ops) >= 2
        and isinstance(ops[0], BinOp)
        and ops[0].op is BinOpKind.MUL
        and (ops[0].lhs.name, ops[0].rhs.name) == (k, step)
        and isinstance(ops[1], BinOp)
        and ops[1].op is BinOpKind.ADD
        and (ops[1].lhs.name, ops[1].rhs.name) == (start, ops[0].dest.name)
        and ops[0].dest.name not in (start, step, k)
    ):
        return 1
    return None


def _natural_loop(fn: Function, preds: dict[str, list[str]], header: str) -> set[str]:
    """The header and every block that reaches one of its back edges (from a block the header dominates)
    without passing through the header."""
    # Every path from the entry to one of these passes the header.
    dominated = reachable(fn.blocks) - reachable(fn.blocks, avoid=header)
    return natural_loop(preds, header, preds[header], within=dominated)


# ----------------------------------------------------------------------------------------- guards

# Bounds tried for a bound known only at run time: none, |i| small enough to square, i >= 0 and squarable.
_LOWER_CHOICES = (I64_MIN, -SQUARE_SAFE, 0)
_UPPER_CHOICES = (I64_MAX, SQUARE_SAFE)


def _best_version(
    fn: Function, preds: dict[str, list[str]], defs: dict[str, list], loop: _RangeLoop
) -> LoopVersion | None:
    """Try each guard; keep the one proving the most (unsigned divisions first), then the cheapest and widest."""
    inner = _inner_cycles(fn, loop)
    best, best_score = None, None
    for lo_choice in _LOWER_CHOICES:
        for hi_choice in _UPPER_CHOICES:
            guard = _guard(fn, defs, loop, lo_choice, hi_choice)
            if guard is None:
                continue
            counter, checks = guard
            facts = _prove(fn, preds, inner, loop, counter)
            divisions = sum(f is Fact.UNSIGNED_DIVISION for f in facts.values())
            score = (divisions, len(facts), -len(checks), counter[1] - counter[0])
            if divisions and (best_score is None or score > best_score):
                best = LoopVersion(
                    loop.header,
                    loop.preheader,
                    tuple(b.label for b in fn.blocks if b.label in loop.blocks),
                    counter,
                    checks,
                    facts,
                )
                best_score = score
    return best


def _guard(
    fn: Function, defs: dict[str, list], loop: _RangeLoop, lo_choice: int, hi_choice: int
) -> tuple[Interval, tuple[Check, ...]] | None:
    """The loop variable's interval when each run-time bound is within ``[lo_choice, hi_choice]``, and the
    checks that say so. Every value of ``range(start, stop, step)`` lies in ``[start, stop - 1]`` for a
    positive step, in ``[stop + 1, start]`` for a negative one, and between ``start`` and ``stop`` either way."""
    if loop.step_sign > 0:
        lower, upper = [(loop.start, 0)], [(loop.stop, -1)]
    elif loop.step_sign < 0:
        lower, upper = [(loop.stop, 1)], [(loop.start, 0)]
    else:
        lower = upper = [(loop.start, 0), (loop.stop, 0)]
    checks: list[Check] = []
    lows: list[int] = []
    highs: list[int] = []
    for (name, offset), out, choice, is_upper in [(t, lows, lo_choice, False) for t in lower] + [
        (t, highs, hi_choice, True) for t in upper
    ]:
        value = constant_int(fn, name, defs)
        if value is not None:
            out.append(value + offset)
            continue
        out.append(choice)
        bound = choice - offset  # name + offset <= choice  ⇔  name <= choice - offset (and likewise >=)
        if (bound < I64_MAX) if is_upper else (bound > I64_MIN):  # else every i64 satisfies it
            checks.append(Check(name, is_upper, bound))
    counter = (min(lows), max(highs))
    if counter[0] > counter[1]:
        return None  # the fast version would never run its body
    return counter, tuple(dict.fromkeys(checks))


# ----------------------------------------------------------------------------------------- intervals


def _prove(
    fn: Function, preds: dict[str, list[str]], inner: dict[str, set[str]], loop: _RangeLoop, counter: Interval
) -> dict[tuple[str, int], Fact]:
    """Forward interval analysis over the loop's blocks, each iteration starting from nothing known but the
    loop variable's value; inside nested cycles, what the cycle assigns is unknown at each block's entry."""
    blocks = fn.block_map()
    order = [b.label for b in fn.blocks if b.label in loop.blocks]
    into: dict[str, dict[str, Interval]] = {loop.header: {}}
    out: dict[str, dict[str, Interval]] = {}
    for _ in range(8 * len(order) + 8):
        changed = False
        for label in order:
            if label != loop.header:
                incoming = [out[p] for p in preds[label] if p in loop.blocks and p in out]
                if not incoming:
                    continue
                state = _join(incoming)
                for name in inner.get(label, ()):
                    state.pop(name, None)
                if into.get(label) == state and label in out:
                    continue
                into[label] = state
            elif label in out:
                continue
            out[label] = _transfer(fn, blocks[label], into[label], loop, counter, None)
            changed = True
        if not changed:
            break
    else:
        return {}  # did not settle: prove nothing rather than something unsound
    facts: dict[tuple[str, int], Fact] = {}
    for label in order:
        if label in into:
            _transfer(fn, blocks[label], into[label], loop, counter, facts)
    return facts


def _inner_cycles(fn: Function, loop: _RangeLoop) -> dict[str, set[str]]:
    """For each block on a cycle inside the loop (not through its header): the variables that cycle assigns."""
    blocks = fn.block_map()
    body = loop.blocks - {loop.header}
    succ = {b: [s for s in successors(blocks[b].ops[-1]) if s in body] for b in body}

    def reach(start: str) -> set[str]:
        seen, stack = set(), list(succ[start])
        while stack:
            label = stack.pop()
            if label not in seen:
                seen.add(label)
                stack.extend(succ[label])
        return seen

    reached = {b: reach(b) for b in body}
    out: dict[str, set[str]] = {}
    for b in body:
        if b in reached[b]:
            cycle = {c for c in reached[b] if b in reached[c]}
            out[b] = {op.dest_var.name for c in cycle for op in blocks[c].ops if op.dest_var is not None}
    return out


def _join(states: list[dict[str, Interval]]) -> dict[str, Interval]:
    first, rest = states[0], states[1:]
    joined = {}
    for name, (lo, hi) in first.items():
        if all(name in s for s in rest):
            joined[name] = (min([lo] + [s[name][0] for s in rest]), max([hi] + [s[name][1] for s in rest]))
    return joined


def _transfer(
    fn: Function,
    block,
    state: dict[str, Interval],
    loop: _RangeLoop,
    counter: Interval,
    facts: dict[tuple[str, int], Fact] | None,
) -> dict[str, Interval]:
    """The intervals after ``block``; with ``facts``, record what each op is proven to satisfy."""
    state = dict(state)
    for i, op in enumerate(block.ops):
        dest = op.dest_var
        if dest is None:
            continue
        value: Interval | None = None
        if (block.label, i) == loop.value_at:
            value = counter
        elif fn.types.get(dest.name) != I64:
            value = None
        elif isinstance(op, Const):
            value = (op.value, op.value) if type(op.value) is int else None
        elif isinstance(op, Copy) and fn.types.get(op.src.name) == I64:
            value = state.get(op.src.name, FULL)
        elif isinstance(op, UnaryOp) and op.op is UnaryKind.NEG and fn.types.get(op.operand.name) == I64:
            lo, hi = state.get(op.operand.name, FULL)
            value = _fits((-hi, -lo))
        elif isinstance(op, BinOp) and fn.types.get(op.lhs.name) == I64 and fn.types.get(op.rhs.name) == I64:
            value, fact = _binop(op, state.get(op.lhs.name, FULL), state.get(op.rhs.name, FULL))
            if fact is not None and facts is not None:
                facts[(block.label, i)] = fact
        if value is None or value == FULL:
            state.pop(dest.name, None)
        else:
            state[dest.name] = value
    return state


def _fits(interval: Interval) -> Interval | None:
    return interval if I64_MIN <= interval[0] and interval[1] <= I64_MAX else None


def _binop(op: BinOp, a: Interval, b: Interval) -> tuple[Interval | None, Fact | None]:
    """The exact result's interval and what the op satisfies (None, None when nothing is known)."""
    kind = op.op
    if kind in (BinOpKind.ADD, BinOpKind.SUB, BinOpKind.MUL):
        if kind is BinOpKind.ADD:
            exact = (a[0] + b[0], a[1] + b[1])
        elif kind is BinOpKind.SUB:
            exact = (a[0] - b[1], a[1] - b[0])
        elif op.lhs == op.rhs:  # a square: never negative
            squares = (a[0] * a[0], a[1] * a[1])
            exact = (0 if a[0] <= 0 <= a[1] else min(squares), max(squares))
        else:
            corners = [x * y for x in a for y in b]
            exact = (min(corners), max(corners))
        if _fits(exact) is None:
            return None, None  # may wrap: nothing known
        nonnegative = a[0] >= 0 and b[0] >= 0 and exact[0] >= 0
        return exact, Fact.NO_WRAP if nonnegative else Fact.NO_SIGNED_WRAP
    if kind in (BinOpKind.FLOORDIV, BinOpKind.MOD) and b[0] >= 1:
        if kind is BinOpKind.MOD:
            result = (0, b[1] - 1 if a[0] < 0 else min(a[1], b[1] - 1))
        else:  # a // b grows with a; for a fixed a it moves toward 0 (a >= 0) or away from it as b grows
            result = (min(a[0] // b[0], a[0] // b[1]), max(a[1] // b[0], a[1] // b[1]))
        return result, Fact.UNSIGNED_DIVISION if a[0] >= 0 else None
    return None, None
