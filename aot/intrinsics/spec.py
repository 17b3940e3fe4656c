"""What an intrinsic is: ``IntrinsicSpec``, the one record of everything the compiler knows about one
``aot.ir.ops.Intrinsic`` (its descriptor), and ``Effect``, what it does to the arrays it is given.

    SPECS[Intrinsic.NP_CUMSUM]
      rule      npfuncs.sorting_rule              operand types → result type (``aot.infer``)
      lower     lowering.new_array                the op → LLVM IR (``aot.codegen.lowering``)
      effect    Effect.READS                      reads its array; its result is a new array
      allocating True                             a new array owned by compiled code
      device_refusal "np.cumsum() allocates an array"   why kernels cannot call it
      numpy     ("cumsum",)   methods ("cumsum",) how Python code spells it

The descriptors themselves are in ``aot/intrinsics/<family>.py`` (``python``, ``numpy``, ``arrays``, ``lists``,
``gpu``), gathered by ``aot/intrinsics/registry.py``,
which derives every table the stages ask (what allocates, what the ``prange`` race check may let through, how
NumPy spells what). This module depends on the IR and the types only, so that rules and lowerings can name
the record they are given.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..ir.ops import Intrinsic, IntrinsicCall
from ..types import Type


class Effect(enum.Enum):
    """What an intrinsic does with the elements of its array operands: what the ``prange`` race check
    (``aot/analysis/parallel.py``) needs to know to let it run in a parallel loop."""

    METADATA = "metadata"  # reads an array's shape only, never its elements (len, a.shape)
    READS = "reads"  # reads every element of its array operands; an array result is a new array
    VIEWS = "views"  # gives a view of its first operand (a.T, a.reshape(...), a.ravel())
    WRITES = "writes"  # writes every element of its first operand (a.sort(), a += b), reads the others
    UPDATES = "updates"  # writes some element of its first operand in place (aot.gpu.atomic_add)
    NUMBERS = "numbers"  # takes numbers only (math.sqrt, range's count): never given an array
    OPAQUE = "opaque"  # none of these, or not known: refused in a prange loop when it touches an array


@dataclass(frozen=True, slots=True)
class Site:
    """How a call of an intrinsic was written, for the type rules that depend on it."""

    name: str = ""
    """The spelling the user wrote (``amin`` for ``np.amin``), for messages; empty: the intrinsic's own."""
    literal: tuple[bool, ...] = ()
    """Which operands are Python literals (which adapt to the other operand's width, as NumPy's do)."""
    keywords: tuple[str, ...] = ()
    """The names of the last ``len(keywords)`` arguments, given by keyword."""
    consts: tuple[Any, ...] = ()
    """Each argument's compile-time value where it has one, else None (``aot.gpu``'s axes and shapes)."""


PLAIN = Site()
"""An intrinsic op of the IR: its operands in order, none of them known to be a literal."""

Rule = Callable[["IntrinsicSpec", tuple[Type, ...], Site], Type]
"""The result type of the intrinsic given its operand types, or ``aot.infer.rules.RuleError``."""

Binding = Callable[["IntrinsicSpec", tuple[Type, ...], Site], tuple[Type, tuple[int, ...]]]
"""A spelled call whose arguments are not its operands one for one (``np.sum(a, axis=1)``, ``np.zeros(n,
dtype)``): the result type, and which arguments are the IR op's operands, in order."""

Lowering = Callable[[Any, IntrinsicCall], None]
"""Emits the op into ``aot.codegen.function.FunctionCodegen`` (given as ``aot.codegen.lowering.Lowerer``)
and assigns its destination."""


@dataclass(frozen=True, slots=True)
class IntrinsicSpec:
    """Everything known about one intrinsic. Adding one is adding its spec to its family's module, with a
    rule and a lowering (usually existing ones: a new ufunc takes the ufunc rule and lowering)."""

    fn: Intrinsic
    rule: Rule
    lower: Lowering
    effect: Effect
    arity: tuple[int, int | None] = (0, None)
    """How many operands the IR op takes: (least, most; None: no limit). The rules of ``math``, the builtins and
    NumPy's functions check a call against it (``np.sqrt() takes 1 argument here, got 2``)."""
    allocating: bool = False
    """Whether it gives a new array owned by compiled code (a new reference)."""
    device_refusal: str = ""
    """Why a kernel (or what it calls) cannot use it (kernels run no allocator and no C library); empty when
    it can."""
    python: tuple[str, ...] = ()
    """Its names among Python's builtins and the ``math`` module (``abs``, ``math.sqrt``)."""
    numpy: tuple[str, ...] = ()
    """Its names in NumPy (``abs`` and ``absolute``; ``linalg.norm`` in a submodule), the first its own."""
    methods: tuple[str, ...] = ()
    """Its names as an array method (``a.sum()``)."""
    attributes: tuple[str, ...] = ()
    """Its names as an array attribute (``a.shape``, ``a.T``)."""
    keywords: frozenset[str] = frozenset()
    """The keyword arguments a spelled call may give (``axis``, ``dtype`` …); others are a ``CompileError``."""
    bind: Binding | None = None
    """For spelled calls whose arguments are not the operands one for one (see ``Binding``)."""
    booleans: bool = True
    """Whether NumPy has a loop for boolean arguments that compiled code gives (``np.sign`` has not)."""

    @classmethod
    def numpy_function(
        cls, fn: Intrinsic, rule: Rule, lower: Lowering, *, allocating: bool = False, **fields: Any
    ) -> IntrinsicSpec:
        """A NumPy function: it reads every element of its array operands (``Effect.READS``), and a new array
        it gives (``allocating``) keeps it out of kernels."""
        refusal = f"{fn.value}() allocates an array" if allocating else ""
        return cls(fn, rule, lower, Effect.READS, allocating=allocating, device_refusal=refusal, **fields)

    @property
    def device(self) -> bool:
        """Whether kernels may use it."""
        return not self.device_refusal

    @property
    def name(self) -> str:
        """How messages name it: its first NumPy spelling, else the intrinsic's text (``math.sqrt``)."""
        return self.numpy[0] if self.numpy else self.fn.value
