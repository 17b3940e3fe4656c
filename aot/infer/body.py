"""One body's fixed point: the worklist over its blocks, what its variables read as, and the final sweep.

    state = BodyState(inferencer, frame, fn, TRANSFER)
    state.fixed_point()                       # every op's rule (TRANSFER: aot.infer.transfer) until no type grows
    optional.solve_with_narrowing(state)      # again with what None tests proved, until that settles too
    inst = state.finish()                     # the final sweep: diagnostics, meanings, edges → InferredInstance

Every pass evaluates the same transfer rules (``evaluate``, through the table the solver gives: ``TRANSFER``);
each gives a ``Transfer`` (``aot.infer.instances``). The worklist keeps only its type; the final sweep
(``finish``) also keeps what the results say beyond it — what each op means, the edges, the callees, the
overlays (``Sweep.record``) — and reports the problems the rules raised, which the worklist passes ignore (an
op can be fine once its operands have grown). No rule knows which pass it runs in.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..diagnostics import Diagnostic, DiagnosticSink, Span
from ..ir import (
    BinOp,
    Block,
    Branch,
    Const,
    Copy,
    Function,
    Intrinsic,
    IntrinsicCall,
    MakeTuple,
    Op,
    Return,
    Var,
    successors,
    uses,
)
from ..types import BOOL, BOTTOM, NONE, OptionalType, PyValueType, ScalarType, TupleType, Type, join
from ..world.edges import Edge, EdgeKind
from ..world.instances import InstanceKey
from . import constructs, lists, optional, rules
from .instances import (
    NO_TYPE,
    SAME,
    FixedPoint,
    Frame,
    InferredInstance,
    Meaning,
    MethodSource,
    MethodTable,
    Transfer,
    const_type,
)
from .rules import RuleError

Rule = Callable[["BodyState", Any, str, int], Transfer]
"""A transfer rule (``aot.infer.transfer.TRANSFER``): ``rule(body, op, label, index)``."""


class Solver(Protocol):
    """What a body asks of the interprocedural solver (``aot.infer.solver.Inferencer``)."""

    table: MethodTable
    overlay: Callable[[Intrinsic, ScalarType], str | None] | None
    done: dict[InstanceKey, InferredInstance]

    def call(self, method: MethodSource, argtypes: tuple[Type, ...], caller: Frame | None) -> Type: ...


@dataclass
class Sweep:
    """What the final sweep over a solved body collects from its ops' transfer results."""

    # The owner's overlay (``Inferencer.overlay``): each library function it replaces is an edge.
    overlay: Callable[[Intrinsic, ScalarType], str | None] | None
    sink: DiagnosticSink = field(default_factory=DiagnosticSink)
    meanings: dict[tuple[str, int], Meaning] = field(default_factory=dict)
    defaults: dict[str, Type] = field(default_factory=dict)  # the variables of default values filled in
    edges: set[Edge] = field(default_factory=set)
    callees: list[InstanceKey] = field(default_factory=list)

    def record(self, at: tuple[str, int], result: Transfer) -> None:
        """Keep what the op at ``at`` means, the edges its resolution relied on and the instance it calls."""
        meaning = result.meaning
        if meaning is not SAME:
            self.meanings[at] = meaning  # type: ignore[assignment]  # (not SAME)
            if isinstance(meaning, tuple):  # (a call's defaults: constants, variables of their own)
                for c in meaning[:-1]:
                    if isinstance(c, Const):
                        self.defaults[c.dest.name] = const_type(c.value)  # type: ignore[assignment]  # (checked)
        self.edges.update(result.edges)
        if result.overlay is not None and self.overlay is not None:
            fn, element = result.overlay
            assert isinstance(element, ScalarType)
            symbol = self.overlay(fn, element)  # (the owner's function the code calls)
            if symbol is not None:
                self.edges.add(Edge(EdgeKind.OVERLAY, f"{fn.value}({element})", symbol))
        if result.callee is not None:
            self.callees.append(result.callee)


class BodyState:
    """The worklist fixed point over one function body, and the final checking sweep."""

    def __init__(self, inferencer: Solver, frame: Frame, fn: Function, rules: Mapping[type[Op], Rule]):
        self.inf = inferencer
        self.rules = rules  # op class → its transfer rule (``aot.infer.transfer.TRANSFER``)
        self.frame = frame
        self.fn = fn
        self.blocks = fn.block_map()
        self.types: dict[str, Type] = dict(zip(fn.params, frame.argtypes))
        self.first_def: dict[str, dict[Type, Span]] = {p: {t: fn.span} for p, t in self.types.items()}
        self.conflicts: dict[str, tuple[Type, Type, Span]] = {}
        self.visited: set[str] = set()
        self.users: dict[str, set[str]] = {}
        defs: dict[str, int] = {}
        for block, op in fn.ops():
            for v in uses(op):
                self.users.setdefault(v.name, set()).add(block.label)
            dest = op.dest_var
            if dest is not None:
                defs[dest.name] = defs.get(dest.name, 0) + 1
        self.single_def = {name for name, n in defs.items() if n == 1 and name not in fn.params}
        self.foldable = {
            op.dest.name: op
            for _, op in fn.ops()
            if isinstance(op, (MakeTuple, BinOp)) and op.dest.name in self.single_def
        }
        self.consts: dict[str, Any] = {}
        self.typed_consts: set[str] = set()  # constants with a type of their own (NumPy scalars): not weak
        self.facts: dict[tuple[str, int], dict[str, Type]] | None = None  # what None tests proved (optional.py)
        # (block, op index) → the optionals the op reads as values, tested at run time (``optional.none_checks``)
        self.checked: dict[tuple[str, int], optional.NoneChecks] = {}
        # What ``t`` read as narrowed, per op: the final sweep's are the fixed point's ``unwraps`` and ``checks``.
        self.unwraps: dict[tuple[str, int], dict[str, Type]] = {}
        self.checks: dict[tuple[str, int], optional.NoneChecks] = {}
        self.at = ("", 0)  # the op being evaluated
        self.cut: dict[str, int] = {}  # block → a call in it that never returns (calls.never_returns)

    # ---------------------------------------------------------------- iteration
    def fixed_point(self) -> None:
        work = deque([self.fn.entry.label])
        queued = {self.fn.entry.label}
        while work:
            label = work.popleft()
            queued.discard(label)
            self.visited.add(label)
            block = self.blocks[label]
            for index, op in enumerate(block.ops):
                try:
                    result = self.evaluate(op, label, index).type
                except RuleError:
                    continue  # (reported by the final sweep, if the op still fails then)
                dest = op.dest_var
                if dest is None or result is BOTTOM:
                    continue
                old = self.types.get(dest.name, BOTTOM)
                new = join(old, result)
                if new is None:
                    self.conflicts.setdefault(dest.name, (old, result, op.span))
                    continue
                self.first_def.setdefault(dest.name, {}).setdefault(result, op.span)
                if new != old:
                    self.types[dest.name] = new
                    for user in self.users.get(dest.name, ()):
                        if user in self.visited and user not in queued:
                            work.append(user)
                            queued.add(user)
            for succ in self.live_successors(block):
                if succ not in self.visited and succ not in queued:
                    work.append(succ)
                    queued.add(succ)

    def live_successors(self, block: Block) -> tuple[str, ...]:
        """Successors, except the branch not taken when the condition is a constant (``while True``); none
        after a call that never returns."""
        if block.label in self.cut:
            return ()
        term = block.ops[-1] if block.ops else None
        if isinstance(term, Branch) and term.cond.name in self.consts:
            return (term.if_true if self.consts[term.cond.name] else term.if_false,)
        return successors(term) if term is not None else ()

    def evaluate(self, op: Op, label: str, index: int) -> Transfer:
        """The result of ``op``'s transfer rule (``RuleError`` when the rule rejects the op as it is now)."""
        if self.cut and index > self.cut.get(label, index):
            return NO_TYPE  # (after a call that never returns: never runs)
        self.at = (label, index)
        return self.rules[type(op)](self, op, label, index)

    # ---------------------------------------------------------------- what the rules read
    def t(self, var: Var) -> Type:
        """The type ``var`` has at the op being evaluated: an optional known (or tested) not None there reads
        as its value's type (noted in ``unwraps`` and ``checks``)."""
        t = self.types.get(var.name, BOTTOM)
        if self.facts and type(t) is OptionalType:
            known = self.facts.get(self.at, {}).get(var.name)
            if known is not None:
                self.unwraps.setdefault(self.at, {})[var.name] = known
                return known
        if self.checked and type(t) is OptionalType and var.name in self.checked.get(self.at, ((),))[0]:
            self.unwraps.setdefault(self.at, {})[var.name] = t.inner
            self.checks[self.at] = self.checked[self.at]
            return t.inner  # (tested at run time, None doing what Python does: ``optional.none_checks``)
        return t

    def is_literal(self, var: Var) -> bool:
        return var.name in self.consts and is_temp(var.name) and var.name not in self.typed_consts

    def constant_of(self, var: Var) -> Any:
        """A value known at compile time: a constant, integer arithmetic on constants (``TILE + 1``) or a
        tuple of them; else None."""
        if var.name in self.consts:
            return self.consts[var.name]
        op = self.foldable.get(var.name)
        if isinstance(op, MakeTuple):
            items = tuple(self.constant_of(v) for v in op.items)
            return None if any(i is None for i in items) else items
        if isinstance(op, BinOp):
            return rules.fold_int_binop(op.op, self.constant_of(op.lhs), self.constant_of(op.rhs))
        return None

    def folded(self, dest: Var, value: bool, label: str, index: int) -> Transfer:
        """A boolean decided at compile time (``isinstance``, strings compared): a constant from now on."""
        if dest.name in self.single_def:
            self.consts[dest.name] = value
        return Transfer(BOOL, Const(dest, value, self.blocks[label].ops[index].span))

    # ---------------------------------------------------------------- final sweep
    def finish(self) -> InferredInstance:
        sweep = Sweep(self.inf.overlay)
        self.unwraps, self.checks = {}, {}  # (what the sweep's own reads note)
        returns: list[tuple[Type, Span]] = []
        pending: list[Diagnostic] = []
        for label in [b.label for b in self.fn.blocks if b.label in self.visited]:
            block = self.blocks[label]
            for index, op in enumerate(block.ops):
                if self.cut and index > self.cut.get(label, index):
                    break
                try:
                    sweep.record((label, index), self.evaluate(op, label, index))
                except RuleError as err:
                    sweep.sink.error(op.span, str(err))
                for v in uses(op):
                    if self.t(v) is BOTTOM and v.name not in self.frame.method.untyped().params:
                        pending.append(Diagnostic(op.span, self._bottom_message(v)))
                if isinstance(op, Return):
                    returns.append((NONE if op.value is None else self.t(op.value), op.span))
        for name, (old, new, span) in self.conflicts.items():
            sweep.sink.error(span, self._conflict_message(name, old, new))
        appended = {op.dest.name for _, op in self.fn.ops() if isinstance(op, IntrinsicCall) and op.fn in lists.STORES}
        copies = [(op.src.name, op.dest.name) for _, op in self.fn.ops() if isinstance(op, Copy)]
        for _ in range(len(copies)):  # (``xs = [f(x) for x in a if DEBUG]``: xs holds the comprehension's list)
            grown = appended | {dest for src, dest in copies if src in appended}
            if grown == appended:
                break
            appended = grown
        for name, t in self.types.items() if not sweep.sink else ():  # (an untyped item explains it first)
            if lists.untyped(t) and not is_temp(name) and name not in appended:  # (see lists.UNTYPED)
                where = next(iter(self.first_def.get(name, {}).values()), self.fn.span)
                sweep.sink.error(where, f"'{name}': {lists.UNTYPED}" if name[0] != "$" else lists.UNTYPED)
        ret: Type = BOTTOM
        for t, span in returns:
            if t is BOTTOM:
                continue
            joined = join(ret, t)
            if joined is None:
                sweep.sink.error(
                    span,
                    f"this returns {t}, but another return gives {ret}; "
                    f"a function returns one type (only int and float unify)",
                )
                continue
            ret = joined
        if constructs.is_string(ret):
            sweep.sink.error(returns[0][1], f"a string cannot be returned: {constructs.STRINGS_ARE_CONSTANTS}")
        elif isinstance(ret, PyValueType) or (isinstance(ret, TupleType) and not ret.is_runtime):
            sweep.sink.error(returns[0][1], "a function, module or class cannot be returned")
        sweep.sink.raise_if_any()
        if not returns:
            ret = NONE
        solved, fixed_point = self._fixed_point(ret, sweep)
        return InferredInstance(
            self.frame.method,
            self.frame.argtypes,
            solved,
            ret,
            tuple(sorted(sweep.edges, key=lambda e: (e.kind, e.target, repr(e.value)))),
            tuple(dict.fromkeys(sweep.callees)),
            tuple(dict.fromkeys(pending)),
            fixed_point,
        )

    def _bottom_message(self, var: Var) -> str:
        if is_temp(var.name) or var.name.startswith("$"):
            return "this value never gets a type (a recursive call that never returns?)"
        return f"variable '{var.name}' is used but never assigned a value it can have here"

    def _conflict_message(self, name: str, old: Type, new: Type) -> str:
        if constructs.is_string(old) or constructs.is_string(new):
            return f"one variable takes {old} and {new}: {constructs.STRINGS_ARE_CONSTANTS}"
        if name.startswith("$") or is_temp(name):
            return f"the alternatives of this expression have different types, {old} and {new}"
        places = self.first_def.get(name, {})
        where = places.get(old)
        at = f" at {where}" if where is not None else ""
        return (
            f"variable '{name}' is assigned {new} here but {old}{at}; a local variable has one type "
            f"(only int and float unify) — use another name"
        )

    def _fixed_point(self, ret: Type, sweep: Sweep) -> tuple[Function, FixedPoint]:
        """The untyped function with the type of every variable (compile-time values included) and the
        return type, and what else ``resolve`` needs to make typed IR of it."""
        taken = {}
        for block in self.fn.blocks:
            if (
                block.label in self.visited
                and isinstance(block.terminator, Branch)
                and len(set(self.live_successors(block))) == 1
            ):
                taken[block.label] = self.live_successors(block)[0]
        solved = self.fn.copy()  # a copy: no pass can change the method's own untyped IR
        solved.types, solved.return_type = {**self.types, **sweep.defaults}, ret
        fixed_point = FixedPoint(
            self.frame.argtypes,
            frozenset(self.visited),
            taken,
            dict(sweep.meanings),
            dict(self.unwraps),
            dict(self.cut),
            dict(self.checks),
        )
        return solved, fixed_point


def is_temp(name: str) -> bool:
    """Whether ``name`` is a frontend temporary (``0``, ``1`` …), assigned exactly once."""
    return name.isdigit()
