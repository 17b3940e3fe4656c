"""NumPy's conversions of an array, the array attributes ``a.strides`` and ``a.nbytes``, and the new matrices
``np.identity``, ``np.tril``, ``np.triu``, ``np.diag``.

    np.copy(a)                   → intrinsic np.copy (%a)   conversions.copy_rule   codegen conversions.copy
    np.array(a, np.float32)      → intrinsic np.array (%a)  (a converted C-ordered copy; the dtype in the type)
    np.ascontiguousarray(a)      → intrinsic np.ascontiguousarray (%a), or ``a`` itself when it is C-ordered
    np.asarray(a)                → ``a`` itself (a ``copy`` op); of another dtype, intrinsic np.array
    a.strides, a.nbytes          → intrinsic array.strides (%a) …   conversions.attribute_rule
    np.identity(n, np.int32)     → intrinsic np.identity (%n)       conversions.matrix_rule  codegen .matrix
    np.tril(a, k), np.diag(v, k) → intrinsic np.tril (%a, %k) …     (new C-ordered arrays)

``np.array`` and ``np.asarray`` are spelled by the list intrinsic (``aot/intrinsics/lists.py``: of a list, a new
array); of an array, ``aot.infer.callsites`` routes them to ``aot.infer.conversions``, whose ``np.array`` copy
is ``NP_ARRAY`` here (spelled by nobody else).
"""

from __future__ import annotations

from ..codegen import conversions as lowering
from ..infer import conversions
from ..ir.ops import Intrinsic
from .spec import Effect, IntrinsicSpec


def _copy(fn: Intrinsic, numpy: tuple[str, ...], keywords: frozenset[str]) -> IntrinsicSpec:
    return IntrinsicSpec.numpy_function(
        fn, conversions.copy_rule, lowering.copy, arity=(1, 1), allocating=True, numpy=numpy, keywords=keywords
    )


def _attribute(fn: Intrinsic, name: str) -> IntrinsicSpec:
    return IntrinsicSpec(
        fn, conversions.attribute_rule, lowering.attribute, Effect.METADATA, arity=(1, 1), attributes=(name,)
    )


def _matrix(fn: Intrinsic, keyword: str) -> IntrinsicSpec:
    return IntrinsicSpec.numpy_function(
        fn,
        conversions.matrix_rule,
        lowering.matrix,
        arity=(1, 2),
        allocating=True,
        numpy=(fn.value.removeprefix("np."),),
        keywords=frozenset({keyword}),
    )


SPECS = (
    _copy(Intrinsic.NP_COPY, ("copy",), frozenset()),
    _copy(Intrinsic.NP_ARRAY, (), frozenset()),
    _copy(Intrinsic.NP_ASCONTIGUOUSARRAY, ("ascontiguousarray",), frozenset({"dtype"})),
    _attribute(Intrinsic.STRIDES, "strides"),
    _attribute(Intrinsic.NBYTES, "nbytes"),
    _matrix(Intrinsic.NP_IDENTITY, "dtype"),
    _matrix(Intrinsic.NP_TRIL, "k"),
    _matrix(Intrinsic.NP_TRIU, "k"),
    _matrix(Intrinsic.NP_DIAG, "k"),
)
