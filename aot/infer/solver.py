"""The interprocedural solver: which method instances to infer, in what order, and what stays known.

    inferencer = Inferencer(table, passes=pipeline.run)
    inst = inferencer.infer(method, (F64, I64))
    inst.return_type, inst.edges      # → f64, (Edge('call', 'numkit.core:sqr', '(f64)'), …)

The ``Inferencer`` is the home of everything between instances: the finished (and failed) instances, the
stack of instances being inferred, recursion and its widening, and invalidation (``forget``,
``dependents``). One body's fixed point is ``aot.infer.body.BodyState``; the rule of each op is in the
table of ``aot.infer.transfer``; the values all of them make are in ``aot.infer.instances``.

Each variable has one type in a function: the join of every value assigned to it (``int`` and ``float``
unify to ``float``; anything else conflicting is an error naming both places). The body's solver visits
blocks reachable from the entry, re-visiting a block whenever a variable it reads grows, until nothing
changes; a final sweep then checks every op against its rule, records what each name means (globals,
``math.*``, methods) and the instance's *edges*: every callee instance, every module constant folded in and
every name lookup that decided a call. Recursive and mutually recursive instances iterate together, from the
``bottom`` return type up, until their return types are stable.

The solver rewrites nothing: once an instance is final, it hands its fixed point — the untyped function with
every variable's type, and a ``FixedPoint`` saying what each name means and which blocks run — to the pass
pipeline it was given (``aot.passes.pipeline.run``), whose ``resolve`` pass makes typed IR of it.

(``aot.builder`` imports ``InferredInstance`` from here; its home is ``aot.infer.instances``, and
``aot.infer`` exports it.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..diagnostics import CompileError, Diagnostic
from ..ir import Function, Intrinsic
from ..types import BOTTOM, ScalarType, Type, join, widen
from ..world.instances import InstanceKey
from . import optional
from .body import BodyState
from .instances import FixedPoint, Frame, InferredInstance, MethodSource, MethodTable
from .transfer import TRANSFER


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
        self.stack: list[Frame] = []
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
        self.call(method, tuple(argtypes), caller=None)
        return self.done[key]

    def call(self, method: MethodSource, argtypes: tuple[Type, ...], caller: Frame | None) -> Type:
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
        frame = Frame(method, argtypes, len(self.stack))
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
    def _depends(caller: Frame | None, depth: int) -> None:
        if caller is not None and depth < caller.depth:
            caller.cycle_head = min(caller.cycle_head, depth)

    def _solve_until_stable(self, frame: Frame) -> InferredInstance:
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
    def _solve(self, frame: Frame) -> InferredInstance:
        fn = frame.method.untyped()
        if len(fn.params) != len(frame.argtypes):
            raise CompileError(
                [Diagnostic(fn.span, f"{fn.name} takes {len(fn.params)} arguments, got {len(frame.argtypes)}")]
            )
        state = BodyState(self, frame, fn, TRANSFER)
        state.fixed_point()
        optional.solve_with_narrowing(state)
        return state.finish()
