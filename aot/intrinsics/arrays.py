"""Arrays owned by compiled code and what array methods do: allocations (``np.zeros`` …, ``a.copy()``), views
(``a.T``, ``a.reshape``, ``a.ravel``), and the methods that write their array (``a.sort()``, ``a.fill(v)``,
``a op= b``).

    np.zeros((n, m), np.int32) → intrinsic np.zeros (%n, %m)  arrays.allocation_rule  lowering.allocation
    a.reshape(n, -1)           → intrinsic array.reshape        views.view_rule         lowering.builtin
"""

from __future__ import annotations

from ..codegen import lowering
from ..infer import arrays, elementwise, npfuncs, views
from ..ir.ops import Intrinsic
from .spec import Effect, IntrinsicSpec, Lowering


def _allocation(fn: Intrinsic, *names: str, method: str = "", lower: Lowering = lowering.allocation) -> IntrinsicSpec:
    """A new array, its dtype a compile-time value (``dtype=`` by keyword too) kept in the result type."""
    return IntrinsicSpec(
        fn,
        arrays.allocation_rule,
        lower,
        Effect.READS,
        allocating=True,
        device_refusal=f"{fn.value}() allocates an array",
        numpy=names,
        methods=(method,) if method else (),
        keywords=frozenset({"dtype"}) if names else frozenset(),
        bind=arrays.bind_allocation,
    )


def _view(fn: Intrinsic, *, attribute: str = "", method: str = "") -> IntrinsicSpec:
    """A view of the array (or, for an array not C-contiguous at run time, what NumPy gives: maybe a copy)."""
    return IntrinsicSpec(
        fn,
        views.view_rule,
        lowering.builtin,
        Effect.VIEWS,
        arity=(1, None),
        numpy=(method,) if method else (),
        methods=(method,) if method else (),
        attributes=(attribute,) if attribute else (),
    )


def _in_place(fn: Intrinsic) -> IntrinsicSpec:
    """``a op= b`` on an array variable: NumPy's in-place ufunc (``aot.infer.elementwise.INPLACE``)."""
    return IntrinsicSpec(fn, elementwise.inplace_rule, lowering.in_place, Effect.WRITES, arity=(2, 2))


SPECS = (
    _allocation(Intrinsic.NP_EMPTY, "empty"),
    _allocation(Intrinsic.NP_ZEROS, "zeros"),
    _allocation(Intrinsic.NP_ONES, "ones"),
    _allocation(Intrinsic.NP_FULL, "full"),
    _allocation(Intrinsic.NP_EMPTY_LIKE, "empty_like"),
    _allocation(Intrinsic.NP_ZEROS_LIKE, "zeros_like"),
    _allocation(Intrinsic.NP_ONES_LIKE, "ones_like"),
    _allocation(Intrinsic.NP_FULL_LIKE, "full_like"),
    _allocation(Intrinsic.NP_ARANGE, "arange"),
    _allocation(Intrinsic.NP_LINSPACE, "linspace"),
    _allocation(Intrinsic.NP_EYE, "eye"),
    _allocation(Intrinsic.ARRAY_COPY, method="copy"),
    _allocation(Intrinsic.ARRAY_FLATTEN, method="flatten"),
    _allocation(Intrinsic.ARRAY_ASTYPE, method="astype", lower=lowering.astype),
    _view(Intrinsic.TRANSPOSE, attribute="T"),
    _view(Intrinsic.RESHAPE, method="reshape"),
    _view(Intrinsic.RAVEL, method="ravel"),
    IntrinsicSpec(
        Intrinsic.ARRAY_SORT,
        npfuncs.sort_rule,
        lowering.sort_in_place,
        Effect.WRITES,
        arity=(1, 2),
        device_refusal="a.sort() sorts through the C library",
        methods=("sort",),
        keywords=frozenset({"axis", "kind"}),
        bind=npfuncs.bind_sort,
    ),
    IntrinsicSpec(
        Intrinsic.ARRAY_FILL, npfuncs.fill_rule, lowering.fill, Effect.WRITES, arity=(2, 2), methods=("fill",)
    ),
    *(_in_place(fn) for fn in elementwise.INPLACE.values()),
)
