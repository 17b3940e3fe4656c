"""NumPy's comparisons of whole arrays: whether two arrays' elements are close (within tolerances) or equal.

    np.isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False)  → np.isclose     comparisons.bind_close
    np.allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) → np.allclose    comparisons.bind_close
    np.array_equal(a1, a2, equal_nan=False)                    → np.array_equal comparisons.bind_array_equal

(rules in ``aot.infer.comparisons``, lowerings in ``aot.codegen.comparisons``.) ``np.isclose`` of arrays makes a
new bool array, ``np.allclose`` one it releases (kernels refuse both); ``np.array_equal`` allocates nothing.
"""

from __future__ import annotations

from ..codegen.comparisons import allclose, array_equal, isclose
from ..infer import comparisons as rules
from ..ir.ops import Intrinsic
from .spec import Binding, IntrinsicSpec, Lowering, Rule


def _comparison(
    fn: Intrinsic, rule: Rule, bind: Binding, lowering: Lowering, arity: tuple[int, int], allocating: bool
) -> IntrinsicSpec:
    """A NumPy comparison (a new bool array when it gives one)."""
    return IntrinsicSpec.numpy_function(
        fn,
        rule,
        lowering,
        arity=arity,
        allocating=allocating,
        numpy=(fn.value.split(".", 1)[1],),
        keywords=frozenset({"rtol", "atol", "equal_nan"} if arity[1] == 5 else {"equal_nan"}),
        bind=bind,
    )


SPECS = (
    _comparison(Intrinsic.NP_ISCLOSE, rules.close_rule, rules.bind_close, isclose, (2, 5), True),
    _comparison(Intrinsic.NP_ALLCLOSE, rules.close_rule, rules.bind_close, allclose, (2, 5), True),
    _comparison(Intrinsic.NP_ARRAY_EQUAL, rules.array_equal_rule, rules.bind_array_equal, array_equal, (2, 3), False),
)
