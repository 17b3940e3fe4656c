"""Abstract interpretation of untyped IR: a worklist solver per method instance, interprocedural.

    inferencer = Inferencer(table, passes=pipeline.run)
    inst = inferencer.infer(method, (F64, I64))
    inst.return_type, inst.edges      # → f64, (Edge('call', 'numkit.core:sqr', '(f64)'), …)

Each variable has one type in a function: the join of every value assigned to it (``int`` and ``float``
unify to ``float``; anything else conflicting is an error naming both places). The solver visits blocks
reachable from the entry, re-visiting a block whenever a variable it reads grows, until nothing changes;
a final sweep then checks every op against its rule, records what each name means (globals, ``math.*``,
methods) and the instance's *edges*: every callee instance, every module constant folded in and every name
lookup that decided a call. Recursive and mutually recursive instances iterate together, from the
``bottom`` return type up, until their return types are stable.

The solver rewrites nothing: once an instance is final, it hands its fixed point — the untyped function with
every variable's type, and a ``FixedPoint`` saying what each name means and which blocks run — to the pass
pipeline it was given (``aot.passes.pipeline.run``), whose ``resolve`` pass makes typed IR of it.
"""

from __future__ import annotations

import builtins
import math
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from ..diagnostics import CompileError, Diagnostic, DiagnosticSink, Span
from ..intrinsics import registry
from ..intrinsics.spec import PLAIN, Effect, Site
from ..ir import (
    BinOp,
    BinOpKind,
    Block,
    Branch,
    Call,
    Compare,
    Const,
    Convert,
    Copy,
    Function,
    GetAttr,
    GetItem,
    GetView,
    Intrinsic,
    IntrinsicCall,
    LoadGlobal,
    MakeTuple,
    Op,
    Return,
    SetItem,
    Truth,
    UnaryKind,
    UnaryOp,
    Var,
    successors,
    uses,
)
from ..ir.ops import CallValue
from ..types import (
    BOOL,
    BOTTOM,
    F64,
    I64,
    NONE,
    ArrayType,
    ListType,
    OptionalType,
    PyValueType,
    ScalarType,
    TupleType,
    Type,
    describe,
    join,
    widen,
)
from ..world.edges import Edge, EdgeKind
from ..world.instances import InstanceKey
from . import arrays, calls, constructs, elementwise, lists, npfuncs, optional, rules, views
from .rules import RuleError

_MISSING = object()


class MethodSource(Protocol):
    """What the solver needs of a method: its key, its untyped IR, and its names' meanings."""

    key: str

    def untyped(self) -> Function: ...

    def resolve_name(self, name: str) -> Any: ...


class MethodTable(Protocol):
    def method_for(self, obj: Any) -> MethodSource | None: ...

    def intrinsic_for(self, obj: Any) -> Intrinsic | None: ...


@dataclass(frozen=True)
class FixedPoint:
    """What inference settled about one body, beyond the types of its variables: what the ``resolve`` pass
    needs to make typed IR of the untyped function."""

    argtypes: tuple[Type, ...]
    reached: frozenset[str]  # the blocks reached from the entry
    taken: Mapping[str, str]  # block → the one successor its branch can take (a constant condition)
    # (block, op index) of each name-based op → the runtime op it stands for, None for a compile-time value
    # (a tuple of ops: a call with the constants of the defaults it fills in, then the call)
    meanings: Mapping[tuple[str, int], Op | tuple[Op, ...] | None]
    # (block, op index) → optional variables the op reads as their narrowed type (``aot.infer.optional``)
    unwraps: Mapping[tuple[str, int], Mapping[str, Type]] = field(default_factory=dict)
    # block → the index of a call that never returns (its callee always raises): the rest never runs
    cut: Mapping[str, int] = field(default_factory=dict)
    # (block, op index) → the optionals the op tests at run time, and what None gives (``optional.none_checks``)
    checks: Mapping[tuple[str, int], optional.NoneChecks] = field(default_factory=dict)


@dataclass
class InferredInstance:
    """The result of inferring one method instance: typed IR, return type, edges and callees."""

    method: MethodSource
    argtypes: tuple[Type, ...]
    function: Function
    return_type: Type
    edges: tuple[Edge, ...]
    callees: tuple[InstanceKey, ...]
    pending: tuple[Diagnostic, ...] = ()  # problems that only count if the result is final (see _call)
    # Until the instance is final, ``function`` is the solver's IR and this its fixed point; the pass pipeline
    # runs once the instance is final (not on each round of a recursion) and leaves None here.
    fixed_point: FixedPoint | None = field(default=None, compare=False, repr=False)

    @property
    def key(self) -> InstanceKey:
        return (self.method.key, self.argtypes)


def const_type(value: Any) -> Type | None:
    """The type of a Python constant compiled code can fold in, or ``None``."""
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return I64 if -(2**63) <= value < 2**63 else None
    if isinstance(value, float):
        return F64
    if value is None:
        return NONE
    if isinstance(value, tuple):
        items = tuple(const_type(v) for v in value)
        return None if any(t is None or t == NONE for t in items) else TupleType(items)  # type: ignore[arg-type]
    return None


def is_constant(value: Any) -> bool:
    return type(value) in (bool, int, float, tuple) and const_type(value) is not None


@dataclass
class _Frame:
    method: MethodSource
    argtypes: tuple[Type, ...]
    depth: int
    provisional: Type = BOTTOM
    cycle_head: int = 1 << 30  # the lowest stack depth this frame's result depends on
    called_recursively: bool = False


@dataclass
class _Sweep:
    """What the final sweep over a solved function collects."""

    sink: DiagnosticSink
    meanings: dict[tuple[str, int], Op | tuple[Op, ...] | None] = field(default_factory=dict)
    unwraps: dict[tuple[str, int], dict[str, Type]] = field(default_factory=dict)
    checks: dict[tuple[str, int], optional.NoneChecks] = field(default_factory=dict)
    defaults: dict[str, Type] = field(default_factory=dict)  # the variables of default values filled in
    edges: set[Edge] = field(default_factory=set)
    callees: list[InstanceKey] = field(default_factory=list)


class Inferencer:
    """Explicit inference state: finished instances, the stack of instances being inferred, partial results."""

    def __init__(
        self,
        table: MethodTable,
        *,
        passes: Callable[[Function, FixedPoint], Function],
        max_rounds: int = 50,
        seed: Callable[[MethodSource, tuple[Type, ...]], InferredInstance | None] | None = None,
        overlay: Callable[[Intrinsic, ScalarType], str | None] | None = None,
    ):
        self.table = table
        self.seed = seed  # instances known without inference (valid image entries), or None
        # Makes each body's fixed point typed IR (aot.passes.pipeline.run: resolve, then the other passes).
        self.passes = passes
        # The owner's overlay (PTX: math.sin → __nv_sin); each resolution it makes is an edge.
        self.overlay = overlay
        self.done: dict[InstanceKey, InferredInstance] = {}
        self.failed: dict[InstanceKey, CompileError] = {}
        self.partial: dict[InstanceKey, tuple[InferredInstance, int]] = {}
        self.stack: list[_Frame] = []
        self.max_rounds = max_rounds

    # ----------------------------------------------------------------------------- instances
    def forget(self, keys: set[InstanceKey]) -> None:
        """Drop finished instances (after a redefinition made them stale)."""
        for key in keys:
            self.done.pop(key, None)
            self.failed.pop(key, None)

    def dependents(self, method_key: str) -> set[InstanceKey]:
        """Every finished (or failed) instance of ``method_key`` and every instance that calls one,
        transitively (``aot.world.invalidation.callers_closure``)."""
        from ..world.invalidation import callers_closure

        graph: dict[InstanceKey, tuple] = dict.fromkeys(self.failed, ())
        graph.update((key, inst.callees) for key, inst in self.done.items())
        return callers_closure(method_key, graph)

    def complete(self, instances: Any, resolve: Callable[[str], MethodSource | None]) -> None:
        """Make every callee of ``instances`` known too: instances seeded from an image bring their
        callees' keys only. ``resolve`` finds the method of a key (None when it no longer exists)."""
        pending = [c for inst in instances for c in inst.callees]
        seen: set = set()
        while pending:
            key, argtypes = pending.pop()
            if (key, argtypes) in seen:
                continue
            seen.add((key, argtypes))
            inst = self.done.get((key, argtypes))
            if inst is None:
                method = resolve(key)
                if method is None:
                    raise CompileError(f"{key}: a method compiled code relies on no longer exists")
                inst = self.infer(method, argtypes)
            pending.extend(inst.callees)

    def infer(self, method: MethodSource, argtypes: tuple[Type, ...]) -> InferredInstance:
        key = (method.key, tuple(argtypes))
        if key in self.done:
            return self.done[key]
        if key in self.failed:
            raise self.failed[key]
        self._call(method, tuple(argtypes), caller=None)
        return self.done[key]

    def _call(self, method: MethodSource, argtypes: tuple[Type, ...], caller: _Frame | None) -> Type:
        """The return type of ``method`` on ``argtypes``, inferring it if needed (recursion-safe)."""
        key = (method.key, argtypes)
        if key in self.done:
            return self.done[key].return_type
        if key in self.failed:
            raise self.failed[key]
        for frame in self.stack:
            if (frame.method.key, frame.argtypes) == key:
                frame.called_recursively = True
                self._depends(caller, frame.depth)
                return frame.provisional
        if key in self.partial:
            inst, head = self.partial[key]
            self._depends(caller, head)
            return inst.return_type
        if self.seed is not None:
            seeded = self.seed(method, argtypes)
            if seeded is not None:
                self.done[key] = seeded
                return seeded.return_type
        frame = _Frame(method, argtypes, len(self.stack))
        self.stack.append(frame)
        try:
            inst = self._solve_until_stable(frame)
        except CompileError as err:
            if not err.chain:
                err = err.with_chain(method.key)
            self.failed[key] = err
            raise err from None
        finally:
            self.stack.pop()
        if frame.cycle_head < frame.depth:
            self.partial[key] = (inst, frame.cycle_head)
            self._depends(caller, frame.cycle_head)
        else:
            finished = [(key, inst)]
            for other, (pinst, head) in list(self.partial.items()):
                if head >= frame.depth:
                    finished.append((other, pinst))
                    del self.partial[other]
            for k, i in finished:
                problems = list(i.pending)
                if i.return_type is BOTTOM and not problems:
                    problems.append(
                        Diagnostic(
                            i.function.span,
                            f"{i.method.key} never returns a value (every path recurses without a base case)",
                        )
                    )
                if problems:
                    error = CompileError(problems)
                    self.failed[k] = error
                    raise error
                self.done[k] = self._typed(i)
        return inst.return_type

    def _typed(self, inst: InferredInstance) -> InferredInstance:
        """A final instance with typed IR: the pass pipeline run on its fixed point."""
        if inst.fixed_point is None:
            return inst
        return replace(inst, function=self.passes(inst.function, inst.fixed_point), fixed_point=None)

    @staticmethod
    def _depends(caller: _Frame | None, depth: int) -> None:
        if caller is not None and depth < caller.depth:
            caller.cycle_head = min(caller.cycle_head, depth)

    def _solve_until_stable(self, frame: _Frame) -> InferredInstance:
        for rounds in range(self.max_rounds):
            inst = self._solve(frame)
            if not frame.called_recursively or inst.return_type == frame.provisional:
                return inst
            joined = widen(frame.provisional, inst.return_type, rounds)
            if joined is None:
                what = (
                    "does not settle"
                    if join(frame.provisional, inst.return_type) is not None
                    else f"returns both {frame.provisional} and {inst.return_type}"
                )
                raise CompileError(
                    [Diagnostic(frame.method.untyped().span, f"the return type of this recursive function {what}")]
                )
            frame.provisional = joined
            frame.called_recursively = False
            for other, (_, head) in list(self.partial.items()):
                if head >= frame.depth:
                    del self.partial[other]
        raise CompileError(
            [Diagnostic(frame.method.untyped().span, "the return type of this recursive function does not settle")]
        )

    # ----------------------------------------------------------------------------- one body
    def _solve(self, frame: _Frame) -> InferredInstance:
        fn = frame.method.untyped()
        if len(fn.params) != len(frame.argtypes):
            raise CompileError(
                [Diagnostic(fn.span, f"{fn.name} takes {len(fn.params)} arguments, got {len(frame.argtypes)}")]
            )
        state = _BodyState(self, frame, fn)
        state.fixed_point()
        optional.solve_with_narrowing(state)
        return state.finish()


class _BodyState:
    """The worklist fixed point over one function body, and the final checking sweep."""

    def __init__(self, inferencer: Inferencer, frame: _Frame, fn: Function):
        self.inf = inferencer
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
        self.sweep: _Sweep | None = None
        self.facts: dict[tuple[str, int], dict[str, Type]] | None = None  # what None tests proved (optional.py)
        # (block, op index) → the optionals the op reads as values, tested at run time (``optional.none_checks``)
        self.checked: dict[tuple[str, int], optional.NoneChecks] = {}
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
                result = self._eval(op, label, index)
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

    def _eval(self, op: Op, label: str, index: int) -> Type:
        if self.cut and index > self.cut.get(label, index):
            return BOTTOM  # (after a call that never returns: never runs)
        self.at = (label, index)
        try:
            return self.transfer(op, label, index)
        except RuleError as err:
            if self.sweep is not None:
                self.sweep.sink.error(op.span, str(err))
            return BOTTOM

    def t(self, var: Var) -> Type:
        t = self.types.get(var.name, BOTTOM)
        if self.facts and type(t) is OptionalType:
            known = self.facts.get(self.at, {}).get(var.name)
            if known is not None:
                if self.sweep is not None:
                    self.sweep.unwraps.setdefault(self.at, {})[var.name] = known
                return known
        if self.checked and type(t) is OptionalType and var.name in self.checked.get(self.at, ((),))[0]:
            if self.sweep is not None:
                self.sweep.unwraps.setdefault(self.at, {})[var.name] = t.inner
                self.sweep.checks[self.at] = self.checked[self.at]
            return t.inner  # (tested at run time, None doing what Python does: ``optional.none_checks``)
        return t

    def is_literal(self, var: Var) -> bool:
        return var.name in self.consts and is_temp(var.name) and var.name not in self.typed_consts

    # ---------------------------------------------------------------- transfer rules
    def transfer(self, op: Op, label: str, index: int) -> Type:
        if isinstance(op, Const):
            t = constructs.string_type(op.value) if isinstance(op.value, str) else const_type(op.value)
            if t is None:
                raise RuleError(f"constant {op.value!r} is not supported")
            if op.dest.name in self.single_def:
                self.consts[op.dest.name] = op.value
            return t
        if isinstance(op, Copy):
            return self.t(op.src)
        if isinstance(op, LoadGlobal):
            return self.load_global(op, label, index)
        if isinstance(op, GetAttr):
            return self.get_attr(op, label, index)
        if isinstance(op, CallValue):
            return self.call_value(op, label, index)
        operands = [self.t(v) for v in uses(op)]
        if any(t is BOTTOM for t in operands):
            return BOTTOM
        if isinstance(op, Compare):
            folded = npfuncs.compile_time_compare(op.op, *operands)
            if folded is not None:  # (dtypes compared)
                return self.folded(op.dest, folded, label, index)
        if (
            any(isinstance(t, PyValueType) for t in operands)
            and not isinstance(op, (Return, MakeTuple, Compare, Truth))
            and not (isinstance(op, UnaryOp) and op.op is UnaryKind.NOT)
        ):  # (a tuple of compile-time values is one; comparisons and truth tests of them fold)
            bad = next(t for t in operands if isinstance(t, PyValueType))
            raise RuleError(constructs.not_a_value(bad) or f"{bad.value!r} is not a value compiled code can use here")
        if isinstance(op, IntrinsicCall) and op.fn in optional.NONE_TESTS:
            if op.fn in optional.IS_FORM:  # ``x == None``: ``x is None`` (not on arrays)
                optional.equality_check(op.fn, operands[0], op.args[0].name)
                if self.sweep is not None:
                    test = IntrinsicCall(op.dest, optional.IS_FORM[op.fn], op.args, op.span)
                    self.sweep.meanings[(label, index)] = test
            test_spec = registry.spec(op.fn)
            result = test_spec.rule(test_spec, (operands[0],), PLAIN)
            known = optional.none_test_type(op.fn, operands[0])[1]
            if known is None:
                self.consts.pop(op.dest.name, None)
            elif op.dest.name in self.single_def:
                self.consts[op.dest.name] = known
            return result
        if any(isinstance(t, OptionalType) for t in operands) and not isinstance(op, Return):
            after = self.blocks[label].ops[index + 1] if index + 1 < len(self.blocks[label].ops) else None
            augmented = (  # (``x op= y``: the frontend's binop and copy back, both with the statement's span)
                isinstance(op, BinOp)
                and isinstance(after, Copy)
                and (after.src, after.dest, after.span) == (op.dest, op.lhs, op.span)
            )
            checks = optional.none_checks(op, {v.name: t for v, t in zip(uses(op), operands)}, augmented)
            if checks is None:
                used, maybe = next((v, t) for v, t in zip(uses(op), operands) if isinstance(t, OptionalType))
                assert isinstance(maybe, OptionalType)
                raise RuleError(optional.unnarrowed_message(used.name, maybe))
            self.checked[(label, index)] = checks
            operands = [self.t(v) for v in uses(op)]
        if isinstance(op, BinOp) and elementwise.involves_array(*operands):
            return self.array_binop(op, label, index)
        if isinstance(op, BinOp):
            negative = False
            if op.op is BinOpKind.POW:
                exponent = self.consts.get(op.rhs.name)
                negative = isinstance(exponent, int) and exponent < 0
            return rules.binop_type(
                op.op, self.t(op.lhs), self.t(op.rhs), self.is_literal(op.lhs), self.is_literal(op.rhs), negative
            )
        if isinstance(op, UnaryOp) and op.op is UnaryKind.NOT and isinstance(self.t(op.operand), PyValueType):
            return self.folded(op.dest, not self.t(op.operand).value, label, index)  # type: ignore[attr-defined]
        if isinstance(op, UnaryOp) and isinstance(self.t(op.operand), ArrayType):
            return elementwise.unary_type(op.op, self.t(op.operand))  # type: ignore[arg-type]
        if isinstance(op, UnaryOp):
            result = rules.unary_type(op.op, self.t(op.operand))
            value: Any = self.consts.get(op.operand.name)  # a number when the test below passes
            if (
                op.op in (UnaryKind.NEG, UnaryKind.POS)
                and type(value) in (int, float)
                and op.dest.name in self.single_def
            ):
                self.consts[op.dest.name] = -value if op.op is UnaryKind.NEG else value
            elif op.op is UnaryKind.NOT and type(value) is bool and op.dest.name in self.single_def:
                self.consts[op.dest.name] = not value  # (``not isinstance(…)`` decides a branch)
            return result
        if isinstance(op, Compare):
            folded = constructs.compare_constants(op.op, self.t(op.lhs), self.t(op.rhs))
            if folded is not None:
                return self.folded(op.dest, folded, label, index)
            if elementwise.involves_array(*operands):
                return elementwise.compare_type(op.op, self.t(op.lhs), self.t(op.rhs))
            return rules.compare_type(op.op, self.t(op.lhs), self.t(op.rhs))
        if isinstance(op, Truth) and not self.t(op.src).is_runtime:  # (a string, a module, a tuple of classes)
            src = self.t(op.src)
            return self.folded(op.dest, bool(src.value if isinstance(src, PyValueType) else src.items), label, index)  # type: ignore[attr-defined]
        if isinstance(op, Truth):
            if op.src.name in self.consts and op.dest.name in self.single_def:
                self.consts[op.dest.name] = bool(self.consts[op.src.name])
            else:
                self.consts.pop(op.dest.name, None)  # (a None test no longer constant: optional.py)
            return rules.truth_type(self.t(op.src))
        if isinstance(op, MakeTuple):
            return constructs.tuple_type(tuple(self.t(v) for v in op.items))
        if isinstance(op, GetView):
            return self.view(op)
        if isinstance(op, GetItem):
            obj_t = self.t(op.obj)
            if isinstance(obj_t, ArrayType):  # a[mask], a[idx], a[[k, p]], a[idx, j]: a new array
                selected = elementwise.subscript_type(obj_t, "i" * len(op.index), tuple(self.t(v) for v in op.index))
                if selected is not None:
                    return selected
            if isinstance(obj_t, ArrayType) and len(op.index) < obj_t.ndim:  # a[i] of an N-D array: a view
                return views.index_view_type(obj_t, tuple(self.t(v) for v in op.index))
            if isinstance(obj_t, ListType):
                return lists.getitem_type(obj_t, tuple(self.t(v) for v in op.index))
            const_index = None
            if isinstance(self.t(op.obj), TupleType) and len(op.index) == 1:
                value = self.consts.get(op.index[0].name)
                const_index = value if type(value) is int else None
            return rules.getitem_type(self.t(op.obj), tuple(self.t(v) for v in op.index), const_index)
        if isinstance(op, SetItem):
            obj_t = self.t(op.obj)
            if isinstance(obj_t, ArrayType) and elementwise.selection_assign_check(
                obj_t, "i" * len(op.index), tuple(self.t(v) for v in op.index), self.t(op.value)
            ):
                return BOTTOM
            if isinstance(obj_t, ArrayType) and len(op.index) < obj_t.ndim:  # assignment to a view
                target = views.index_view_type(obj_t, tuple(self.t(v) for v in op.index))
                views.assign_check(target, self.t(op.value))
                return BOTTOM
            if isinstance(obj_t, ListType):
                lists.setitem_check(obj_t, tuple(self.t(v) for v in op.index), self.t(op.value))
                return BOTTOM
            rules.setitem_check(self.t(op.obj), tuple(self.t(v) for v in op.index), self.t(op.value))
            return BOTTOM
        if isinstance(op, IntrinsicCall) and op.fn is Intrinsic.UNPACK:
            unpack = registry.spec(Intrinsic.UNPACK)  # (checks the count: a tuple's now, others' at run time)
            unpack.rule(unpack, tuple(operands), Site(consts=(None, self.consts.get(op.args[1].name))))
            if isinstance(operands[0], TupleType):
                if self.sweep is not None:  # (a tuple of the right length: nothing happens at run time)
                    self.sweep.meanings[(label, index)] = None
                return BOTTOM  # (no type: the op is dropped)
            return NONE
        if isinstance(op, IntrinsicCall):
            if op.fn is Intrinsic.LIST_SORT and isinstance(operands[0], ArrayType):  # ``a.sort()`` of an array
                if self.sweep is not None:
                    self.sweep.meanings[(label, index)] = IntrinsicCall(op.dest, Intrinsic.ARRAY_SORT, op.args, op.span)
                return npfuncs.method_type(registry.spec(Intrinsic.ARRAY_SORT), operands[0], tuple(operands[1:]))
            found = registry.spec(op.fn)
            return found.rule(found, tuple(operands), PLAIN)  # (its descriptor's rule: aot/intrinsics)
        if isinstance(op, Return):
            return BOTTOM
        return BOTTOM  # terminators and ops without results

    def array_binop(self, op: BinOp, label: str, index: int) -> Type:
        """``a op b`` with an array operand: a new array; ``a op= b`` on an array name writes ``a`` in place
        (the frontend lowers ``a op= b`` to a binop and a copy into ``a`` with the statement's span, which
        ``a = a op b`` never gives its binop)."""
        a, b = self.t(op.lhs), self.t(op.rhs)
        ops = self.blocks[label].ops
        after = ops[index + 1] if index + 1 < len(ops) else None
        if (
            isinstance(a, ArrayType)
            and isinstance(after, Copy)
            and after.src == op.dest
            and after.dest == op.lhs
            and after.span == op.span
        ):
            if op.op not in elementwise.INPLACE:
                raise RuleError(f"'{op.op.value}=' on an array is not supported; loop over the elements")
            result = elementwise.inplace_type(op.op, a, b, self.is_literal(op.rhs))
            if self.sweep is not None:
                fn = elementwise.INPLACE[op.op]
                self.sweep.meanings[(label, index)] = IntrinsicCall(op.dest, fn, (op.lhs, op.rhs), op.span)
            return result
        return elementwise.binop_type(op.op, a, b, self.is_literal(op.lhs), self.is_literal(op.rhs))

    def folded(self, dest: Var, value: bool, label: str, index: int) -> Type:
        """A boolean decided at compile time (``isinstance``, strings compared): a constant from now on."""
        if dest.name in self.single_def:
            self.consts[dest.name] = value
        if self.sweep is not None:
            self.sweep.meanings[(label, index)] = Const(dest, value, self.blocks[label].ops[index].span)
        return BOOL

    def view(self, op: GetView) -> Type:
        """``a[…]`` with slices: the layout of the view depends on which slice bounds are missing and on
        constant steps."""
        infos = []
        k = 0
        for c in op.spec:
            if c == views.SLICE:
                start, stop, step = op.index[k : k + 3]
                value = NONE if self.t(step) == NONE else self.constant_of(step)
                infos.append(
                    views.SliceInfo(
                        self.t(start) == NONE, self.t(stop) == NONE, 1 if value is NONE else _int_or_none(value)
                    )
                )
            k += {views.SLICE: 3, views.INT_INDEX: 1}.get(c, 0)
        obj_t = self.t(op.obj)
        if isinstance(obj_t, ListType):  # lst[a:b:c]: a new list
            return lists.slice_type(obj_t, op.spec, tuple(self.t(v) for v in op.index))
        if isinstance(obj_t, ArrayType):  # a[:, idx], a[1:, [k, p]]: a new array (written through by setitem)
            selected = elementwise.subscript_type(obj_t, op.spec, tuple(self.t(v) for v in op.index))
            if selected is not None:
                return selected
        return views.view_type(self.t(op.obj), op.spec, tuple(self.t(v) for v in op.index), tuple(infos))

    def load_global(self, op: LoadGlobal, label: str, index: int) -> Type:
        value = self.frame.method.resolve_name(op.name)
        if value is _MISSING or value is NameError:
            raise RuleError(f"name '{op.name}' is not defined")
        module = getattr(self.frame.method, "module", "?")
        return self.classify(value, f"{module}:{op.name}", op, label, index)

    def classify(self, value: Any, where: str, op: Op, label: str, index: int) -> Type:
        """The type of a named Python value, recording the edge and how the op resolves."""
        sweep = self.sweep
        dest = op.dest_var
        assert dest is not None
        if isinstance(value, str):  # a compile-time constant only (aot/infer/constructs.py)
            if sweep is not None:
                sweep.edges.add(Edge(EdgeKind.GLOBAL, where, value))
                sweep.meanings[(label, index)] = None
            return constructs.string_type(value)
        if is_constant(value):
            if dest.name in self.single_def:
                self.consts[dest.name] = value
            if sweep is not None:
                sweep.edges.add(Edge(EdgeKind.GLOBAL, where, value))
                sweep.meanings[(label, index)] = Const(dest, value, op.span)
            return const_type(value)  # type: ignore[return-value]
        numpy_scalar = npfuncs.scalar_value(value)
        if numpy_scalar is not None:  # np.float32(1e-7) at module level: folded like a float, with its type
            if dest.name in self.single_def:
                self.consts[dest.name] = numpy_scalar[1]
                self.typed_consts.add(dest.name)
            if sweep is not None:
                sweep.edges.add(Edge(EdgeKind.GLOBAL, where, npfuncs.scalar_text(value)))
                sweep.meanings[(label, index)] = Const(dest, numpy_scalar[1], op.span)
            return numpy_scalar[0]
        if isinstance(value, (int, float, str, bytes, list, dict, set, tuple)) or (
            hasattr(value, "__array__") and not isinstance(value, type)  # (NumPy's scalar types have one)
        ):
            kind = type(value).__name__
            raise RuleError(
                f"'{where.split(':', 1)[1]}' is a {kind}; compiled code can only read int, float, "
                f"bool and tuples of them from globals (pass other values as arguments)"
            )
        if not _is_compile_time_value(value):
            raise RuleError(
                f"'{where.split(':', 1)[1]}' is a {type(value).__name__} object; compiled code can "
                f"only use modules, functions, types and int/float/bool constants from globals"
            )
        intrinsic = self.inf.table.intrinsic_for(value)
        method = self.inf.table.method_for(value) if intrinsic is None else None
        if sweep is not None:
            sweep.meanings[(label, index)] = None  # compile-time only
            sweep.edges.add(Edge(EdgeKind.LOOKUP, where, method.key if method is not None else describe(value)))
        return PyValueType(value)

    def get_attr(self, op: GetAttr, label: str, index: int) -> Type:
        obj = self.t(op.obj)
        if obj is BOTTOM:
            return BOTTOM
        method = registry.METHODS.get(op.attr) if isinstance(obj, ArrayType) else None
        if isinstance(obj, ArrayType) and (
            op.attr == "dtype" or (method is not None and method.fn in registry.ALLOCATIONS)
        ):
            if self.sweep is not None:  # compile-time values: a dtype, a method until it is called
                self.sweep.meanings[(label, index)] = None
            if op.attr == "dtype":
                return PyValueType(arrays.ArrayDtype.get(obj.dtype))
            return PyValueType(arrays.ArrayMethod.get(op.attr, op.obj.name))
        if isinstance(obj, ArrayType):
            if method is not None and method.effect is Effect.VIEWS:  # called by call_value, which finds the
                if self.sweep is not None:  # array through this op
                    self.sweep.meanings[(label, index)] = None
                return PyValueType(method.fn)
            if op.attr in views.NOT_VIEWS:
                raise RuleError(views.NOT_VIEWS[op.attr])
            numpy_attr = self.numpy_array_attr(op, obj, label, index)
            if numpy_attr is not None:
                return numpy_attr
            attribute = registry.ATTRIBUTES.get(op.attr)
            if attribute is None:
                raise RuleError(
                    f"arrays have no attribute '{op.attr}' in compiled code (use shape, size, ndim, dtype, "
                    f"itemsize, T, reshape, ravel, or the methods {', '.join(registry.BOUND_METHODS)})"
                )
            if self.sweep is not None:
                self.sweep.meanings[(label, index)] = IntrinsicCall(op.dest, attribute.fn, (op.obj,), op.span)
            return attribute.rule(attribute, (obj,), PLAIN)
        if isinstance(obj, PyValueType) and isinstance(obj.value, type(math)):
            container = obj.value
            value = getattr(container, op.attr, _MISSING)
            if value is _MISSING:
                raise RuleError(f"module {getattr(container, '__name__', '?')} has no attribute '{op.attr}'")
            owner = getattr(container, "__name__", "?")
            return self.classify(value, f"{owner}:{op.attr}", op, label, index)
        if isinstance(obj, ListType):
            raise RuleError(lists.attribute_message(op.attr))
        what = _user_words(obj.value) if isinstance(obj, PyValueType) else f"a {obj} value"
        raise RuleError(
            f"attribute access on {what} is not supported; only arrays (shape, size, ndim) "
            f"and modules have attributes in compiled code"
        )

    def call_value(self, op: CallValue, label: str, index: int) -> Type:
        func = self.t(op.func)
        if func is BOTTOM:
            return BOTTOM
        if not isinstance(func, PyValueType):
            raise RuleError(f"a value of type {func} cannot be called")
        callee = func.value
        argtypes = tuple(self.t(a) for a in op.args)
        if any(t is BOTTOM for t in argtypes):
            return BOTTOM
        plain_callee = not isinstance(callee, (Intrinsic, npfuncs.BoundMethod, arrays.ArrayMethod))
        intrinsic = self.inf.table.intrinsic_for(callee) if plain_callee else None
        method = self.inf.table.method_for(callee) if plain_callee and intrinsic is None else None
        numpy = registry.numpy_function(callee) if plain_callee else None  # (np.ones is a Python function too)
        spelled = registry.spec(callee.fn) if isinstance(callee, npfuncs.BoundMethod) else numpy and numpy[1]
        keywords = op.keyword_names
        if (
            keywords
            and method is None
            and not (spelled and set(keywords) <= spelled.keywords and len(set(keywords)) == len(keywords))
        ):
            name = getattr(callee, "__qualname__", None) or getattr(callee, "__name__", None) or str(callee)
            raise RuleError(f"{name}() takes no keyword arguments in compiled code; pass its arguments by position")
        if isinstance(callee, Intrinsic) and registry.spec(callee).effect is Effect.VIEWS:
            return self.array_method(op, callee, argtypes, label, index)
        if isinstance(callee, npfuncs.BoundMethod):
            return self.array_method_call(op, callee, argtypes, label, index)
        if intrinsic is not None and intrinsic.value.startswith("gpu."):
            return self.gpu_call(op, intrinsic, argtypes, label, index)
        if constructs.is_isinstance(callee):
            return self.folded(op.dest, constructs.isinstance_call(argtypes), label, index)
        if callee is builtins.sorted:
            sort = registry.spec(Intrinsic.LIST_SORTED)
            result = sort.rule(sort, argtypes, PLAIN)
            if self.sweep is not None:
                self.sweep.meanings[(label, index)] = IntrinsicCall(op.dest, Intrinsic.LIST_SORTED, op.args, op.span)
            return result
        fn = numpy[1].fn if numpy is not None else None
        if fn is Intrinsic.LIST_TO_ARRAY and len(argtypes) == 1 and isinstance(argtypes[0], ListType):
            if self.sweep is not None:  # np.array(lst), np.asarray(lst)
                self.sweep.meanings[(label, index)] = IntrinsicCall(op.dest, fn, op.args, op.span)
            to_array = registry.spec(fn)
            return to_array.rule(to_array, argtypes, PLAIN)
        if numpy is not None and numpy[1].effect is Effect.VIEWS:  # np.ravel(a), np.reshape(a, shape)
            if self.sweep is not None:
                self.sweep.meanings[(label, index)] = IntrinsicCall(op.dest, numpy[1].fn, op.args, op.span)
            return views.function_type(numpy[1].fn, argtypes)
        if fn in registry.ALLOCATIONS or isinstance(callee, arrays.ArrayMethod):
            return self.allocation_call(op, fn, callee, argtypes, label, index)
        if fn is Intrinsic.NP_SEARCHSORTED and keywords == ("side",):  # np.searchsorted(a, x, side="right")
            if len(argtypes) != 3:
                raise RuleError("np.searchsorted() takes (a, x, side=…) here")
            side = registry.spec(npfuncs.searchsorted_side(argtypes[-1]))  # (the side picks the intrinsic)
            if self.sweep is not None:
                self.sweep.meanings[(label, index)] = IntrinsicCall(op.dest, side.fn, op.args[:2], op.span)
            return side.rule(side, argtypes[:2], Site(name="searchsorted"))
        takes_strings = numpy is not None and "kind" in numpy[1].keywords  # (np.sort(a, kind="stable"))
        for a, t in zip(op.args, argtypes) if not takes_strings else ():
            if constructs.is_string(t):
                raise RuleError(
                    f"a string cannot be passed to {_user_words(callee)}; {constructs.STRINGS_ARE_CONSTANTS}"
                )
            if isinstance(t, PyValueType):
                raise RuleError(f"{t.value!r} cannot be passed to compiled code")
            if isinstance(t, OptionalType):
                raise RuleError(optional.unnarrowed_message(a.name, t))
            if not t.is_runtime:
                raise RuleError(f"a tuple holding {t} cannot be passed to compiled code")
            if method is not None and lists.untyped(t):
                raise RuleError(lists.UNTYPED)
        sweep = self.sweep
        if method is not None:
            if getattr(getattr(method, "options", None), "kernel", False):
                raise RuleError(
                    f"{method.key} is a kernel: kernels are launched from Python with "
                    f"kernel[grid, block](…), not called; call a device function (a plain "
                    f"or @aot.jit function) from both instead"
                )
            args, argtypes, defaults, default_edges = calls.bind_call(op, method, argtypes, label, index, const_type)
            try:
                ret = self.inf._call(method, argtypes, self.frame)
            except CompileError as err:
                if err.chain and err.chain[0] == self.fn.name:
                    raise
                raise err.with_chain(self.fn.name) from None
            if calls.never_returns(self.inf.done.get((method.key, argtypes))):
                self.cut[label] = index
            if sweep is not None:
                call = Call(op.dest, method.key, args, op.span)
                sweep.meanings[(label, index)] = defaults + (call,) if defaults else call
                sweep.edges.add(Edge(EdgeKind.CALL, method.key, "(" + ", ".join(map(str, argtypes)) + ")"))
                sweep.edges.update(Edge(*edge) for edge in default_edges)
                for c in defaults:
                    if isinstance(c, Const):
                        sweep.defaults[c.dest.name] = const_type(c.value)  # type: ignore[assignment]  # (checked)
                sweep.callees.append((method.key, argtypes))
            return ret
        numpy_call = self.numpy_call(op, callee, argtypes, label, index)
        if numpy_call is not None:
            return numpy_call
        builtin = registry.PYTHON_FUNCTIONS.get(callee) if plain_callee else None
        intrinsic = builtin.fn if builtin is not None else intrinsic
        if intrinsic is Intrinsic.ABS and len(argtypes) == 1 and isinstance(argtypes[0], ArrayType):
            np_abs = registry.spec(Intrinsic.NP_ABS)  # abs(a): np.abs(a)
            result = np_abs.rule(np_abs, argtypes, Site("abs", (False,)))
            if sweep is not None:
                sweep.meanings[(label, index)] = IntrinsicCall(op.dest, Intrinsic.NP_ABS, op.args, op.span)
            return result
        if intrinsic is not None:
            found = registry.spec(intrinsic)
            result = found.rule(found, argtypes, PLAIN)
            if sweep is not None:
                sweep.meanings[(label, index)] = IntrinsicCall(op.dest, intrinsic, op.args, op.span)
                symbol = (
                    self.inf.overlay(intrinsic, result)
                    if self.inf.overlay is not None and isinstance(result, ScalarType)
                    else None
                )
                if symbol is not None:
                    sweep.edges.add(Edge(EdgeKind.OVERLAY, f"{intrinsic.value}({result})", symbol))
            return result
        target: ScalarType | None = None
        if callee is builtins.int:
            target = I64
        elif callee is builtins.float:
            target = F64
        elif isinstance(callee, ScalarType) and callee.kind != "n":
            target = callee
        elif callee is builtins.bool:
            if len(op.args) != 1:
                raise RuleError("bool() takes exactly one argument here")
            if sweep is not None:
                sweep.meanings[(label, index)] = Truth(op.dest, op.args[0], op.span)
            return rules.truth_type(argtypes[0])
        if target is not None:
            if len(op.args) != 1:
                raise RuleError(f"{target.name}() takes exactly one argument here")
            if sweep is not None:
                sweep.meanings[(label, index)] = Convert(op.dest, op.args[0], op.span)
            return rules.convert_type(target, argtypes[0])
        if callee is builtins.range:
            raise RuleError("range() can only be used as the iterable of a for loop")
        if isinstance(callee, type) and issubclass(callee, BaseException):
            raise RuleError('exceptions can only be raised: raise ValueError("message")')
        name = getattr(callee, "__qualname__", None) or getattr(callee, "__name__", None) or repr(callee)
        raise RuleError(f"calls to {name}() are not supported in compiled code")

    def array_method(self, op: CallValue, fn: Intrinsic, argtypes: tuple[Type, ...], label: str, index: int) -> Type:
        """``a.reshape(…)``, ``a.ravel()``: the array is the object of the ``getattr`` that made ``op.func``."""
        attr = next(
            (o for _, o in self.fn.ops() if isinstance(o, GetAttr) and o.dest == op.func and is_temp(o.dest.name)),
            None,
        )
        if attr is None:
            raise RuleError(f"call array methods directly, as in a.{fn.value.split('.')[1]}(…)")
        arr = self.t(attr.obj)
        view = registry.spec(fn)
        result = view.rule(view, (arr, *argtypes), PLAIN)
        if self.sweep is not None:
            self.sweep.meanings[(label, index)] = IntrinsicCall(op.dest, fn, (attr.obj, *op.args), op.span)
        return result

    # ------------------------------------------------------------ NumPy (aot.infer.npfuncs)
    def numpy_array_attr(self, op: GetAttr, obj: ArrayType, label: str, index: int) -> Type | None:
        """``a.itemsize`` (a constant), ``a.dtype`` (a compile-time value) and ``a.sum`` … (a method, called
        next); None for the other attributes."""
        meaning: Op | None
        if op.attr == "itemsize":
            result: Type = I64
            meaning = Const(op.dest, obj.dtype.itemsize, op.span)
            if op.dest.name in self.single_def:
                self.consts[op.dest.name] = obj.dtype.itemsize
        elif op.attr in registry.BOUND_METHODS:
            result, meaning = PyValueType(npfuncs.bound_method(registry.BOUND_METHODS[op.attr].fn, op.obj)), None
        else:
            return None
        if self.sweep is not None:
            self.sweep.meanings[(label, index)] = meaning
        return result

    def array_method_call(
        self, op: CallValue, method: npfuncs.BoundMethod, argtypes: tuple[Type, ...], label: str, index: int
    ) -> Type:
        obj = self.t(method.obj)
        assert isinstance(obj, ArrayType)
        args = (method.obj, *op.args)
        found = registry.spec(method.fn)
        if found.bind is not None:  # (``axis``, ``ddof=``, ``kind``: which arguments are the operands)
            result, order = found.bind(found, (obj, *argtypes), Site(keywords=op.keyword_names))
            args = tuple(args[i] for i in order)
        else:
            result = npfuncs.method_type(found, obj, argtypes)
        if self.sweep is not None:
            self.sweep.meanings[(label, index)] = IntrinsicCall(op.dest, method.fn, args, op.span)
        return result

    def numpy_call(self, op: CallValue, callee: Any, argtypes: tuple[Type, ...], label: str, index: int) -> Type | None:
        """``np.sqrt(x)``, ``np.sum(a)``, ``np.float32(x)`` …; None when ``callee`` is no NumPy object."""
        meaning: Op
        target = npfuncs.scalar_type_of(callee)
        if target is not None:
            if len(op.args) != 1:
                raise RuleError(f"{callee.__name__}() takes exactly one argument here")
            cast = registry.spec(Intrinsic.NP_CAST)
            result: Type = cast.rule(cast, argtypes, Site(name=npfuncs.numpy_type_name(target)))
            if target.kind == "b":
                meaning = Truth(op.dest, op.args[0], op.span)
            elif target.is_float:
                meaning = Convert(op.dest, op.args[0], op.span)
            else:
                meaning = IntrinsicCall(op.dest, Intrinsic.NP_CAST, op.args, op.span)
        else:
            found = registry.numpy_function(callee)
            if found is None or found[1].fn not in registry.NUMPY:
                return None
            name, spec = found
            if spec.fn is Intrinsic.NP_WHERE and len(op.args) == 1:  # (np.where(c) is np.nonzero(c))
                name, spec = "nonzero", registry.spec(Intrinsic.NP_NONZERO)
            site = Site(name, tuple(self.is_literal(a) for a in op.args), op.keyword_names)
            args = op.args
            if spec.bind is not None:  # (``axis``, ``ddof=``, ``kind``: which arguments are the operands)
                result, order = spec.bind(spec, argtypes, site)
                args = tuple(args[i] for i in order)
            else:
                result = spec.rule(spec, argtypes, site)
            meaning = IntrinsicCall(op.dest, spec.fn, args, op.span)
            libm = npfuncs.LIBM.get(spec.fn)
            if self.sweep is not None and libm is not None and self.inf.overlay is not None:
                element = result.dtype if isinstance(result, ArrayType) else result
                assert isinstance(element, ScalarType)
                symbol = self.inf.overlay(libm, element)  # (the owner's function the code calls)
                if symbol is not None:
                    self.sweep.edges.add(Edge(EdgeKind.OVERLAY, f"{libm.value}({element})", symbol))
        if self.sweep is not None:
            self.sweep.meanings[(label, index)] = meaning
        return result

    def allocation_call(
        self, op: CallValue, fn: Intrinsic | None, callee: Any, argtypes: tuple[Type, ...], label: str, index: int
    ) -> Type:
        """``np.zeros(…)`` and the like, ``a.copy()``: a new array (``aot.infer.arrays``)."""
        args = op.args
        if fn is None:  # a method of an array: its receiver is the first operand
            fn = registry.METHODS[callee.name].fn
            args = (Var(callee.receiver),) + args
            argtypes = (self.t(args[0]),) + argtypes
        spec = registry.spec(fn)
        assert spec.bind is not None
        result, runtime = spec.bind(spec, argtypes, Site(keywords=op.keyword_names))
        if self.sweep is not None:
            self.sweep.meanings[(label, index)] = IntrinsicCall(op.dest, fn, tuple(args[i] for i in runtime), op.span)
        return result

    def gpu_call(self, op: CallValue, fn: Intrinsic, argtypes: tuple[Type, ...], label: str, index: int) -> Type:
        """``aot.gpu.*``: axes and shared-array shapes must be constants; a dtype is a compile-time name."""
        spec = registry.spec(fn)
        result = spec.rule(spec, argtypes, Site(consts=tuple(self.constant_of(a) for a in op.args)))
        if self.sweep is not None:
            args = op.args[:1] if fn is Intrinsic.SHARED_ARRAY else op.args  # the dtype is in the type
            self.sweep.meanings[(label, index)] = IntrinsicCall(op.dest, fn, args, op.span)
        return result

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

    # ---------------------------------------------------------------- final sweep
    def finish(self) -> InferredInstance:
        self.sweep = _Sweep(DiagnosticSink())
        returns: list[tuple[Type, Span]] = []
        pending: list[Diagnostic] = []
        for label in [b.label for b in self.fn.blocks if b.label in self.visited]:
            block = self.blocks[label]
            for index, op in enumerate(block.ops):
                if self.cut and index > self.cut.get(label, index):
                    break
                self._eval(op, label, index)
                for v in uses(op):
                    if self.t(v) is BOTTOM and v.name not in self.frame.method.untyped().params:
                        pending.append(Diagnostic(op.span, self._bottom_message(v)))
                if isinstance(op, Return):
                    returns.append((NONE if op.value is None else self.t(op.value), op.span))
        for name, (old, new, span) in self.conflicts.items():
            self.sweep.sink.error(span, self._conflict_message(name, old, new))
        appended = {op.dest.name for _, op in self.fn.ops() if isinstance(op, IntrinsicCall) and op.fn in lists.STORES}
        copies = [(op.src.name, op.dest.name) for _, op in self.fn.ops() if isinstance(op, Copy)]
        for _ in range(len(copies)):  # (``xs = [f(x) for x in a if DEBUG]``: xs holds the comprehension's list)
            grown = appended | {dest for src, dest in copies if src in appended}
            if grown == appended:
                break
            appended = grown
        for name, t in self.types.items() if not self.sweep.sink else ():  # (an untyped item explains it first)
            if lists.untyped(t) and not is_temp(name) and name not in appended:  # (see lists.UNTYPED)
                where = next(iter(self.first_def.get(name, {}).values()), self.fn.span)
                self.sweep.sink.error(where, f"'{name}': {lists.UNTYPED}" if name[0] != "$" else lists.UNTYPED)
        ret: Type = BOTTOM
        for t, span in returns:
            if t is BOTTOM:
                continue
            joined = join(ret, t)
            if joined is None:
                self.sweep.sink.error(
                    span,
                    f"this returns {t}, but another return gives {ret}; "
                    f"a function returns one type (only int and float unify)",
                )
                continue
            ret = joined
        if constructs.is_string(ret):
            self.sweep.sink.error(returns[0][1], f"a string cannot be returned: {constructs.STRINGS_ARE_CONSTANTS}")
        elif isinstance(ret, PyValueType) or (isinstance(ret, TupleType) and not ret.is_runtime):
            self.sweep.sink.error(returns[0][1], "a function, module or class cannot be returned")
        self.sweep.sink.raise_if_any()
        if not returns:
            ret = NONE
        solved, fixed_point = self._fixed_point(ret)
        return InferredInstance(
            self.frame.method,
            self.frame.argtypes,
            solved,
            ret,
            tuple(sorted(self.sweep.edges, key=lambda e: (e.kind, e.target, repr(e.value)))),
            tuple(dict.fromkeys(self.sweep.callees)),
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

    def _fixed_point(self, ret: Type) -> tuple[Function, FixedPoint]:
        """The untyped function with the type of every variable (compile-time values included) and the
        return type, and what else ``resolve`` needs to make typed IR of it."""
        assert self.sweep is not None
        taken = {}
        for block in self.fn.blocks:
            if (
                block.label in self.visited
                and isinstance(block.terminator, Branch)
                and len(set(self.live_successors(block))) == 1
            ):
                taken[block.label] = self.live_successors(block)[0]
        solved = self.fn.copy()  # a copy: no pass can change the method's own untyped IR
        solved.types, solved.return_type = {**self.types, **self.sweep.defaults}, ret
        fixed_point = FixedPoint(
            self.frame.argtypes,
            frozenset(self.visited),
            taken,
            dict(self.sweep.meanings),
            dict(self.sweep.unwraps),
            dict(self.cut),
            dict(self.sweep.checks),
        )
        return solved, fixed_point


def _int_or_none(value: Any) -> int | None:
    return value if type(value) is int else None


def _is_compile_time_value(value: Any) -> bool:
    """Modules, functions, builtins, methods and types may be named in compiled code (never passed)."""
    if isinstance(value, (type(math), type, ScalarType)) or callable(getattr(value, "__aot_method__", None)):
        return True
    if registry.numpy_function(value) is not None or arrays.dtype_of(value) is not None:
        return True
    if getattr(value, "__aot_method__", None) is not None:
        return True
    return isinstance(value, (type(describe), type(len)))


def _user_words(value: Any) -> str:
    """A compile-time object as a user would name it: ``the class Point``, ``the function f``."""
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if isinstance(value, type):
        return f"the class {name}"
    if callable(value) and name:
        return f"the function {name}"
    return f"a {type(value).__name__} object"


def is_temp(name: str) -> bool:
    """Whether ``name`` is a frontend temporary (``0``, ``1`` …), assigned exactly once."""
    return name.isdigit()
