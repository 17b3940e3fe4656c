"""Python's own intrinsics: ``math`` functions, the builtins compiled code understands, array attributes, the
counts and items of the frontend's loops, and ``x is None``.

    math.sqrt(x)   →  intrinsic math.sqrt   rules.builtin_rule      lowering.builtin   (Python's errors kept)
    len(a)         →  intrinsic len         rules.builtin_rule      lowering.length    (of a list too)
"""

from __future__ import annotations

from ..codegen import lowering
from ..infer import constructs, optional, rules
from ..ir.ops import FLOAT_MATH_1, FLOAT_MATH_2, Intrinsic
from .spec import Effect, IntrinsicSpec


def _math(fn: Intrinsic, arity: int) -> IntrinsicSpec:
    """A ``math`` function of numbers (its spelling is the intrinsic's own text: ``math.sqrt``)."""
    return IntrinsicSpec(
        fn, rules.builtin_rule, lowering.builtin, Effect.NUMBERS, arity=(arity, arity), python=(fn.value,)
    )


_UNARY = sorted(FLOAT_MATH_1 | {Intrinsic.FLOOR, Intrinsic.CEIL, Intrinsic.TRUNC}, key=lambda f: f.value)
_PREDICATES = (Intrinsic.ISNAN, Intrinsic.ISINF, Intrinsic.ISFINITE)


def _loop(fn: Intrinsic, effect: Effect, arity: tuple[int, int | None]) -> IntrinsicSpec:
    """An intrinsic of the frontend's loops (``aot/frontend/iteration.py``), typed by its first operand."""
    return IntrinsicSpec(fn, constructs.loop_rule, lowering.builtin, effect, arity=arity)


def _none_test(fn: Intrinsic) -> IntrinsicSpec:
    return IntrinsicSpec(fn, optional.none_test_rule, lowering.builtin, Effect.OPAQUE, arity=(1, 1))


SPECS = (
    *(_math(fn, 1) for fn in _UNARY),
    *(_math(fn, 1) for fn in _PREDICATES),
    *(_math(fn, 2) for fn in sorted(FLOAT_MATH_2, key=lambda f: f.value)),
    IntrinsicSpec(
        Intrinsic.GCD, rules.builtin_rule, lowering.builtin, Effect.NUMBERS, arity=(0, None), python=("math.gcd",)
    ),
    # builtins: abs/min/max of numbers (abs of an array is np.abs), round(x[, ndigits]), len of anything sized
    IntrinsicSpec(Intrinsic.ABS, rules.builtin_rule, lowering.builtin, Effect.READS, arity=(1, 1), python=("abs",)),
    IntrinsicSpec(Intrinsic.MIN, rules.builtin_rule, lowering.builtin, Effect.READS, arity=(2, None), python=("min",)),
    IntrinsicSpec(Intrinsic.MAX, rules.builtin_rule, lowering.builtin, Effect.READS, arity=(2, None), python=("max",)),
    IntrinsicSpec(
        Intrinsic.ROUND, rules.builtin_rule, lowering.builtin, Effect.NUMBERS, arity=(1, 2), python=("round",)
    ),
    IntrinsicSpec(Intrinsic.LEN, rules.builtin_rule, lowering.length, Effect.METADATA, arity=(1, 1), python=("len",)),
    # array attributes
    IntrinsicSpec(
        Intrinsic.SHAPE, rules.builtin_rule, lowering.builtin, Effect.METADATA, arity=(1, 1), attributes=("shape",)
    ),
    IntrinsicSpec(
        Intrinsic.SIZE, rules.builtin_rule, lowering.builtin, Effect.METADATA, arity=(1, 1), attributes=("size",)
    ),
    IntrinsicSpec(
        Intrinsic.NDIM, rules.builtin_rule, lowering.builtin, Effect.METADATA, arity=(1, 1), attributes=("ndim",)
    ),
    # loops: range's trip count (start, stop, step), prange's, and the frontend's loops over values
    IntrinsicSpec(Intrinsic.RANGE_LEN, rules.builtin_rule, lowering.builtin, Effect.NUMBERS, arity=(3, 3)),
    IntrinsicSpec(Intrinsic.PRANGE_LEN, rules.builtin_rule, lowering.builtin, Effect.NUMBERS, arity=(3, 3)),
    IntrinsicSpec(Intrinsic.NOGIL, rules.builtin_rule, lowering.builtin, Effect.NUMBERS, arity=(0, 0)),
    IntrinsicSpec(Intrinsic.ITER_LEN, constructs.loop_rule, lowering.length, Effect.METADATA, arity=(1, 1)),
    _loop(Intrinsic.INDEX, Effect.NUMBERS, (1, 1)),
    _loop(Intrinsic.FLAT_LEN, Effect.READS, (1, 1)),
    _loop(Intrinsic.FLAT_ITEM, Effect.READS, (2, 2)),
    # x is None, x == None (resolved to ``is`` but for arrays, which are refused)
    *(_none_test(fn) for fn in (Intrinsic.IS_NONE, Intrinsic.IS_NOT_NONE, Intrinsic.EQ_NONE, Intrinsic.NE_NONE)),
)
