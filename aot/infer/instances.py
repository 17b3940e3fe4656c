"""The values inference makes, and what it needs of the methods it infers.

    MethodSource, MethodTable     what the solver asks of a method and of the table that finds methods
    Transfer                      one op's rule: its type, and what the final sweep records of it
    Frame                         an instance being inferred, on the solver's stack
    FixedPoint                    one body: what ``resolve`` needs beyond the types of its variables
    InferredInstance              one method instance: typed IR, return type, edges and callees

and the constants compiled code can fold in (``const_type``, ``is_constant``). The solver
(``aot.infer.solver``), a body's fixed point (``aot.infer.body``) and the transfer rules
(``aot.infer.transfer``) make these; the pass pipeline, codegen and images read them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..diagnostics import Diagnostic
from ..ir import Function, Intrinsic, Op
from ..types import BOOL, BOTTOM, F64, I64, NONE, TupleType, Type
from ..world.edges import Edge
from ..world.instances import InstanceKey
from . import optional


class MethodSource(Protocol):
    """What the solver needs of a method: its key, its untyped IR, and its names' meanings."""

    key: str

    def untyped(self) -> Function: ...

    def resolve_name(self, name: str) -> Any: ...


class MethodTable(Protocol):
    def method_for(self, obj: Any) -> MethodSource | None: ...

    def intrinsic_for(self, obj: Any) -> Intrinsic | None: ...


class _Same:
    """The meaning of an op that stands for itself at run time (``Transfer.meaning``)."""

    def __repr__(self) -> str:
        return "SAME"


SAME = _Same()

Meaning = Op | tuple[Op, ...] | None
"""What a name-based op stands for at run time: another op, ops run in turn (the constants of the defaults a
call fills in, then the call), or None (a compile-time value: the op is dropped)."""


@dataclass(frozen=True)
class Transfer:
    """What one op's transfer rule gives (``aot.infer.transfer``): the type of its result (``BOTTOM``: none
    yet, or none at all), and what the final sweep records of it — its meaning when it stands for something
    else at run time (``SAME`` when it stands for itself), the edges its resolution relied on, the instance it
    calls, and the library function and type an owner's overlay may replace (an ``overlay`` edge when it does).
    Every pass evaluates the rules alike; only the final sweep keeps more than the type."""

    type: Type
    meaning: Meaning | _Same = SAME
    edges: tuple[Edge, ...] = ()
    callee: InstanceKey | None = None
    overlay: tuple[Intrinsic, Type] | None = None


NO_TYPE = Transfer(BOTTOM)
"""The result of an op without a type: none yet (an operand has none), or none at all (a store, a jump)."""


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


@dataclass
class Frame:
    """One instance being inferred (``Inferencer.stack``): its provisional return type while it recurses."""

    method: MethodSource
    argtypes: tuple[Type, ...]
    depth: int
    provisional: Type = BOTTOM
    cycle_head: int = 1 << 30  # the lowest stack depth this frame's result depends on
    called_recursively: bool = False


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
