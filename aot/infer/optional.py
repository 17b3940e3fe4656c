"""Optional values: ``None`` and a value in one variable, and the ``is None`` tests that narrow it.

    def f(x, tol=None):                  tol: none in the instance f(f64, none), f64 in f(f64, f64)
        if tol is None:                  a constant test in either instance: one branch is compiled
            tol = 1e-8                   tol: f64? (the join of none and f64), known to be f64 from here
        return x * tol                   tol narrowed: %tol.some = convert %tol (f64) feeds the multiply

A variable assigned ``None`` on one path and a value of type ``t`` on another has type ``t?``
(``aot.types.OptionalType``: a flag and the value). Inference keeps one type per variable, so what a test
proves is a *fact* at each op: ``Narrowing`` is a forward dataflow over the reached blocks that knows, before
every op, which optional variables are surely ``None`` and which surely hold a value — from the argument types
(an argument passed as None has type ``none``), assignments, and branches on ``x is None`` / ``x is not None``
(also inside ``and``/``or``). Where a fact is known the solver types the use as ``none`` or ``t`` and the
``resolve`` pass reads the value out of the optional (``unwrap_uses``); a use of an optional where no fact is
known is a ``CompileError`` saying to test it first. Facts and types depend on each other, so the solver
repeats its fixed point until both are stable (``solve_with_narrowing``); a body without optionals is solved
once, as before.

An optional number read without a test where Python raises ``TypeError`` on None (arithmetic, unary ``- + ~``,
``< <= > >=``) or answers without its value (``==``, ``!=``, truth, ``not``) is read as its value after a test
that raises that error or gives that answer (``none_checks``, ``checked_blocks``).

A function whose returns join ``none`` and ``t`` returns a ``t?`` (the solver's join of its returns), which
its callers narrow the same way. ``x == None`` / ``x != None`` are ``EQ_NONE`` / ``NE_NONE`` tests, read as
``is None`` / ``is not None`` (``IS_FORM``) except on arrays (``equality_check``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from ..intrinsics.spec import IntrinsicSpec, Site
from ..ir import Block, Branch, Const, Copy, Function, IntrinsicCall, Jump, Op, Truth, Var, uses
from ..ir.ops import BinOp, BinOpKind, CmpKind, Compare, Convert, Intrinsic, Raise, UnaryKind, UnaryOp
from ..types import BOOL, NONE, ArrayType, OptionalType, ScalarType, Type
from .rules import RuleError

NONE_TESTS = (Intrinsic.IS_NONE, Intrinsic.IS_NOT_NONE, Intrinsic.EQ_NONE, Intrinsic.NE_NONE)
IS_FORM = {Intrinsic.EQ_NONE: Intrinsic.IS_NONE, Intrinsic.NE_NONE: Intrinsic.IS_NOT_NONE}
"""``x == None`` / ``x != None`` mean ``x is None`` / ``x is not None`` (Python's answer for every value compiled
code holds but arrays, whose ``== None`` NumPy computes element by element: ``equality_check`` refuses them)."""
_TRUE_IF_NONE = (Intrinsic.IS_NONE, Intrinsic.EQ_NONE)
_UNASSIGNED = "unassigned"  # (meets as the identity: a path where the variable has no value yet)
_NONE, _SOME = "none", "some"

Facts = Mapping[tuple[str, int], Mapping[str, Type]]
"""(block, op index) → the optional variables whose type is known before that op → that type."""


def none_test_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """``x is None`` and the like (the solver keeps the value when it is known: ``none_test_type``)."""
    return none_test_type(spec.fn, args[0])[0]


def none_test_type(fn: Intrinsic, operand: Type) -> tuple[Type, bool | None]:
    """The type of ``x is None`` (``fn``: IS_NONE or IS_NOT_NONE) on a value of type ``operand`` (narrowed), and
    its value when known at compile time (anything that is not optional is never None)."""
    if isinstance(operand, OptionalType):
        return BOOL, None
    is_none = operand == NONE
    return BOOL, is_none if fn in _TRUE_IF_NONE else not is_none


def equality_check(fn: Intrinsic, operand: Type, name: str) -> None:
    """``x == None`` / ``x != None`` (``fn``: EQ_NONE or NE_NONE): refused where NumPy compares elementwise."""
    inner = operand.inner if isinstance(operand, OptionalType) else operand
    if isinstance(inner, ArrayType):
        word, test = ("==", "is") if fn is Intrinsic.EQ_NONE else ("!=", "is not")
        raise RuleError(
            f"'{word} None' on an array compares it element by element in NumPy (a boolean array); "
            f"to test whether it is None, write '{name if name.isidentifier() else 'a'} {test} None'"
        )


def unnarrowed_message(name: str, t: OptionalType) -> str:
    what = f"'{name}'" if not name.isdigit() and not name.startswith("$") else "this value"
    return (
        f"{what} may be None here (its type is {t}: None on some paths); test it first, e.g. "
        f"'if {name if what != 'this value' else 'x'} is None: ...' or '... is not None', before using it as {t.inner}"
    )


def _test_of(block: Block) -> tuple[str, bool] | None:
    """The variable a block's branch tests for None, and whether the true edge means it is None."""
    term = block.ops[-1] if block.ops else None
    if not isinstance(term, Branch):
        return None
    name, negate = term.cond.name, False
    for i in range(len(block.ops) - 2, -1, -1):
        op = block.ops[i]
        if op.dest_var is None or op.dest_var.name != name:
            continue
        if isinstance(op, (Truth, Copy)):
            name = op.src.name
            continue
        if isinstance(op, IntrinsicCall) and op.fn in NONE_TESTS:
            tested = op.args[0].name
            if any(o.dest_var is not None and o.dest_var.name == tested for o in block.ops[i + 1 :]):
                return None  # (reassigned after the test)
            return tested, (op.fn in _TRUE_IF_NONE) != negate
        return None
    return None


def narrowing(
    fn: Function,
    types: Mapping[str, Type],
    argtypes: tuple[Type, ...],
    visited: set[str],
    live_successors: Callable[[Block], tuple[str, ...]],
) -> dict[tuple[str, int], dict[str, Type]]:
    """The facts before every op of the visited blocks (see ``Facts``); empty when nothing is optional."""
    optional = {name: t for name, t in types.items() if isinstance(t, OptionalType)}
    if not optional:
        return {}
    blocks = fn.block_map()
    entry: dict[str, str] = {name: _UNASSIGNED for name in optional}
    for p, t in zip(fn.params, argtypes):
        if p in optional:
            entry[p] = _NONE if t == NONE else _SOME
    state_in: dict[str, dict[str, str]] = {fn.entry.label: entry}
    edges_out: dict[tuple[str, str], dict[str, str]] = {}
    work = deque([fn.entry.label])
    queued = {fn.entry.label}
    facts: dict[tuple[str, int], dict[str, Type]] = {}
    while work:
        label = work.popleft()
        queued.discard(label)
        block = blocks[label]
        state = dict(state_in[label])
        for index, op in enumerate(block.ops):
            facts[(label, index)] = {
                n: (NONE if s == _NONE else optional[n].inner) for n, s in state.items() if s in (_NONE, _SOME)
            }
            dest = op.dest_var
            if dest is not None and dest.name in optional:
                state[dest.name] = _state_after(op, state, types, optional)
        test = _test_of(block)
        for succ in dict.fromkeys(live_successors(block)):
            out = dict(state)
            if test is not None and test[0] in optional and isinstance(block.ops[-1], Branch):
                term = block.ops[-1]
                if term.if_true != term.if_false:
                    is_none_edge = (succ == term.if_true) == test[1]
                    out[test[0]] = _NONE if is_none_edge else _SOME
            if edges_out.get((label, succ)) == out:
                continue
            edges_out[(label, succ)] = out
            preds = [v for (p, s), v in edges_out.items() if s == succ and p in visited]
            merged = _meet(preds)
            if state_in.get(succ) != merged and succ in visited:
                state_in[succ] = merged
                if succ not in queued:
                    work.append(succ)
                    queued.add(succ)
    return facts


def _state_after(op: Op, state: Mapping[str, str], types: Mapping[str, Type], optional: Mapping[str, Type]) -> str:
    if isinstance(op, Copy):
        src = op.src.name
        if src in optional:
            return state.get(src, "unknown")
        t = types.get(src)
    else:
        t = types.get(op.dest_var.name) if op.dest_var is not None else None
        if isinstance(t, OptionalType):
            return "unknown"
    return _NONE if t == NONE else _SOME


def _meet(states: list[dict[str, str]]) -> dict[str, str]:
    out: dict[str, str] = {}
    names = set().union(*states) if states else set()
    for name in names:
        values = {s.get(name, "unknown") for s in states} - {_UNASSIGNED}
        if not values:
            out[name] = _UNASSIGNED
        elif len(values) == 1:
            out[name] = values.pop()
    return out


def solve_with_narrowing(body: Any, max_rounds: int = 12) -> None:
    """Repeat ``body``'s fixed point (``aot.infer.body.BodyState``) with the facts of its previous round
    until types, constants and facts are stable; nothing to do for a body without optionals or None tests."""
    fn = body.fn
    if not any(isinstance(t, OptionalType) for t in body.types.values()) and not any(
        isinstance(op, IntrinsicCall) and op.fn in NONE_TESTS for _, op in fn.ops()
    ):
        return
    params = dict(zip(fn.params, body.frame.argtypes))
    for _ in range(max_rounds):
        facts = narrowing(fn, body.types, body.frame.argtypes, body.visited, body.live_successors)
        if facts == (body.facts or {}):
            return  # (the facts of the types they gave: a consistent fixed point)
        body.facts = facts
        body.types = dict(params)
        body.consts = {}
        body.conflicts = {}
        body.first_def = {p: {t: fn.span} for p, t in params.items()}
        body.visited = set()
        body.fixed_point()
    raise_unsettled(fn)


def raise_unsettled(fn: Function) -> None:
    from ..diagnostics import CompileError, Diagnostic

    raise CompileError([Diagnostic(fn.span, "the None tests of this function do not settle; simplify them")])


def unwrap_uses(op: Op, unwraps: Mapping[str, Type], label: str, index: int, types: dict[str, Type]) -> list[Op]:
    """``op`` reading each narrowed optional variable through a ``convert`` to its known type: the converts,
    then the op with its operands renamed (``types`` gains the new variables)."""
    out: list[Op] = []
    renamed: dict[str, Var] = {}
    used = {v.name for v in uses(op)}
    for name, t in unwraps.items():
        if name not in used:
            continue
        var = Var(f"{name}.{'none' if t == NONE else 'some'}.{label}.{index}")
        types[var.name] = t
        renamed[name] = var
        out.append(Convert(var, Var(name), op.span))
    changes: dict[str, Any] = {}
    for field, kind in zip(op.operand_fields(), op.FIELDS):
        value = getattr(op, field)
        if kind in ("var", "optvar") and value is not None and value.name in renamed:
            changes[field] = renamed[value.name]
        elif kind == "vars" and any(v.name in renamed for v in value):
            changes[field] = tuple(renamed.get(v.name, v) for v in value)
    out.append(replace(op, **changes) if changes else op)  # type: ignore[type-var]
    return out


# ------------------------------------------------------------------------ None used as a value, untested

NoneChecks = tuple[tuple[str, ...], Mapping[tuple[bool, ...], "str | bool"]]
"""The optional operands an op tests (in order), and for each combination of them that holds a None (``True``:
that operand is None) what Python does: raise ``TypeError`` with that message (a ``str``), or give that
boolean (a ``bool``: ``None == 0`` is False, ``not None`` is True)."""

_PYTHON_NAMES = {"i": "int", "u": "int", "f": "float", "b": "bool"}
_BINOP_SYMBOLS = {
    BinOpKind.ADD: "+",
    BinOpKind.SUB: "-",
    BinOpKind.MUL: "*",
    BinOpKind.TRUEDIV: "/",
    BinOpKind.FLOORDIV: "//",
    BinOpKind.MOD: "%",
    BinOpKind.POW: "** or pow()",
    BinOpKind.LSHIFT: "<<",
    BinOpKind.RSHIFT: ">>",
    BinOpKind.AND: "&",
    BinOpKind.OR: "|",
    BinOpKind.XOR: "^",
}
_UNARY_SYMBOLS = {UnaryKind.NEG: "-", UnaryKind.POS: "+", UnaryKind.INVERT: "~"}
_ORDER_SYMBOLS = {CmpKind.LT: "<", CmpKind.LE: "<=", CmpKind.GT: ">", CmpKind.GE: ">="}


def _python_name(t: ScalarType) -> str:
    """The name Python's messages give a number of type ``t``: ``int``, ``float`` or ``bool`` (NumPy's scalars
    defer to Python's numbers there: ``np.float32(1) + None`` names ``'float'``)."""
    return _PYTHON_NAMES[t.kind]


def none_checks(op: Op, types: Mapping[str, Type], augmented: bool = False) -> NoneChecks | None:
    """An op that reads an optional number no ``is None`` test narrowed, where Python raises ``TypeError`` on
    None (arithmetic, unary ``- + ~``, ``< <= > >=``; ``augmented``: the binop of ``x op= y``) or answers
    without the value (``==``, ``!=``, truth, ``not``): what to test and what None gives, so that it compiles
    as Python runs it; None for any other use (a ``CompileError`` saying to test it first)."""
    operands: tuple[Var, ...]
    words: tuple[str, str] | None = None
    if isinstance(op, BinOp) and op.op in _BINOP_SYMBOLS:
        symbol = _BINOP_SYMBOLS[op.op].split()[0] + "=" if augmented else _BINOP_SYMBOLS[op.op]
        operands, words = (op.lhs, op.rhs), (f"unsupported operand type(s) for {symbol}: ", "{} and {}")
    elif isinstance(op, UnaryOp) and op.op in _UNARY_SYMBOLS:
        operands, words = (op.operand,), (f"bad operand type for unary {_UNARY_SYMBOLS[op.op]}: ", "{}")
    elif isinstance(op, Compare) and op.op in _ORDER_SYMBOLS:
        operands = (op.lhs, op.rhs)
        words = (f"'{_ORDER_SYMBOLS[op.op]}' not supported between instances of ", "{} and {}")
    elif isinstance(op, Compare) and op.op in (CmpKind.EQ, CmpKind.NE):
        operands = (op.lhs, op.rhs)
    elif isinstance(op, Truth):
        operands = (op.src,)
    elif isinstance(op, UnaryOp) and op.op is UnaryKind.NOT:
        operands = (op.operand,)
    else:
        return None
    kinds = [types.get(v.name) for v in operands]
    inner = [t.inner if isinstance(t, OptionalType) else t for t in kinds]
    numbers = [t for t in inner if isinstance(t, ScalarType) and t.is_numeric]
    if len(numbers) != len(inner):
        return None  # (arrays, tuples: NumPy's or Python's answers differ by type; test it first)
    tested = tuple(dict.fromkeys(v.name for v, t in zip(operands, kinds) if isinstance(t, OptionalType)))
    outcomes: dict[tuple[bool, ...], str | bool] = {}
    for k in range(1, 1 << len(tested)):
        state = tuple(bool(k >> i & 1) for i in range(len(tested)))
        none = [bool(dict(zip(tested, state)).get(v.name)) for v in operands]
        if words is not None:
            names = ["'NoneType'" if n else f"'{_python_name(t)}'" for n, t in zip(none, numbers)]
            outcomes[state] = words[0] + words[1].format(*names)
        elif isinstance(op, Compare):  # (None equals None only; a number never equals None)
            outcomes[state] = (none[0] and none[1]) == (op.op is CmpKind.EQ)
        else:  # (None is false)
            outcomes[state] = isinstance(op, UnaryOp)
    return tested, outcomes


def checked_blocks(
    checks: NoneChecks, label: str, index: int, op: Op, types: dict[str, Type]
) -> tuple[list[Op], list[Block], str, str | None]:
    """The IR that does what Python does where an op's operands hold None (``none_checks``): the ops ending
    the op's block (the first test), the blocks of the other tests and of each outcome (a ``raise``, or the
    op's result as a constant), the label of the block where the op runs, every operand a value, and the
    label where both meet after the op (None when every None raises). ``types`` gains the tests' variables."""
    tested, outcomes = checks
    blocks: list[Block] = []
    base = f"{label}.n{index}"
    join = f"{base}.join" if any(type(v) is bool for v in outcomes.values()) else None
    span = op.span

    def test(k: int, tag: str, if_none: str, if_value: str) -> list[Op]:
        flag = Var(f"{tested[k]}.isnone.{tag}")
        types[flag.name] = BOOL
        return [IntrinsicCall(flag, Intrinsic.IS_NONE, (Var(tested[k]),), span), Branch(flag, if_none, if_value, span)]

    def after_none(k: int, state: tuple[bool, ...], tag: str) -> None:
        """Block ``tag``: ``state`` known for the operands before ``k``, one None among them."""
        if k < len(tested):
            blocks.append(Block(tag, test(k, tag, f"{tag}.1", f"{tag}.0")))
            after_none(k + 1, (*state, True), f"{tag}.1")
            after_none(k + 1, (*state, False), f"{tag}.0")
            return
        outcome = outcomes[state]
        if isinstance(outcome, str):
            blocks.append(Block(tag, [Raise("TypeError", outcome, span)]))
        else:
            assert op.dest_var is not None and join is not None
            blocks.append(Block(tag, [Const(op.dest_var, outcome, span), Jump(join, span)]))

    closing: list[Op] = []
    state: tuple[bool, ...] = ()
    for k in range(len(tested)):
        tag = f"{base}.{k}"
        ops = test(k, tag, f"{tag}.none", f"{tag}.ok")
        if k == 0:
            closing = ops
        else:
            blocks.append(Block(f"{base}.{k - 1}.ok", ops))
        after_none(k + 1, (*state, True), f"{tag}.none")
        state = (*state, False)
    return closing, blocks, f"{base}.{len(tested) - 1}.ok", join
