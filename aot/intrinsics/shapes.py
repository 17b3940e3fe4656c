"""NumPy's shape functions: views of their array, as NumPy gives them (no copy), their axes compile-time
constants.

    np.flip(a, 0)          → intrinsic np.flip (%a, %c0)        shapes.shape_rule   codegen shapes.view
    a.squeeze(axis=1)      → intrinsic np.squeeze (%a, %c1)     (the axis's length checked at run time)
    np.atleast_2d(x)       → intrinsic np.atleast_2d (%x)       (of a number: a new 1x1 array)
"""

from __future__ import annotations

from ..codegen import shapes as lowering
from ..infer import shapes
from ..ir.ops import Intrinsic
from .spec import Effect, IntrinsicSpec


def _shape(fn: Intrinsic, arity: tuple[int, int | None], *, method: bool = False, keyword: str = "") -> IntrinsicSpec:
    name = fn.value.removeprefix("np.")
    return IntrinsicSpec(
        fn,
        shapes.shape_rule,
        lowering.view,
        Effect.VIEWS,
        arity=arity,
        numpy=(name,),
        methods=(name,) if method else (),
        keywords=frozenset({keyword}) if keyword else frozenset(),
    )


SPECS = (
    _shape(Intrinsic.NP_FLIP, (1, 2), keyword="axis"),
    _shape(Intrinsic.NP_FLIPLR, (1, 1)),
    _shape(Intrinsic.NP_FLIPUD, (1, 1)),
    _shape(Intrinsic.NP_EXPAND_DIMS, (2, 2), keyword="axis"),
    _shape(Intrinsic.NP_SQUEEZE, (1, 2), method=True, keyword="axis"),
    _shape(Intrinsic.NP_ATLEAST_1D, (1, 1)),
    _shape(Intrinsic.NP_ATLEAST_2D, (1, 1)),
    _shape(Intrinsic.NP_ATLEAST_3D, (1, 1)),
    _shape(Intrinsic.NP_TRANSPOSE, (1, None), method=True, keyword="axes"),
    _shape(Intrinsic.NP_SWAPAXES, (3, 3), method=True),
    _shape(Intrinsic.NP_MOVEAXIS, (3, 3)),
)
