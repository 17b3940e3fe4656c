"""NumPy's totals of a whole array beyond the reductions of ``aot/intrinsics/numpy.py``:

    np.nanprod(a)                    → np.nanprod    totals.nanprod_rule    the product, NaN counting as 1
    np.trapezoid(y, x=None, dx=1.0)  → np.trapezoid  totals.bind_trapezoid  the trapezoidal rule's integral

(rules in ``aot.infer.totals``, lowerings in ``aot.codegen.totals``.) Each reads every element of its arrays and
gives a number; ``np.trapezoid`` sums its terms from an array it makes (kernels refuse it).
"""

from __future__ import annotations

from ..codegen.totals import nanprod, trapezoid
from ..infer import totals as rules
from ..ir.ops import Intrinsic
from .spec import Effect, IntrinsicSpec

SPECS = (
    IntrinsicSpec.numpy_function(Intrinsic.NP_NANPROD, rules.nanprod_rule, nanprod, arity=(1, 1), numpy=("nanprod",)),
    IntrinsicSpec(  # (its terms are summed from an array it makes: kernels cannot call it)
        Intrinsic.NP_TRAPEZOID,
        rules.trapezoid_rule,
        trapezoid,
        Effect.READS,
        arity=(1, 3),
        device_refusal="np.trapezoid() allocates an array",
        numpy=("trapezoid",),
        keywords=frozenset({"x", "dx", "axis"}),
        bind=rules.bind_trapezoid,
    ),
)
