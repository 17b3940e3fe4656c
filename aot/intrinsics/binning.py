"""NumPy's binning functions: which bin each value falls in, how many values each bin holds, and linear
interpolation between sample points. Each makes a new array of an array argument (kernels refuse them).

    np.digitize(x, bins, right=False)          → np.digitize   binning.bind_digitize    binning.digitize
    np.histogram(a, bins=10, range=None)       → np.histogram  binning.bind_histogram   binning.histogram
    np.interp(x, xp, fp, left=None, right=None) → np.interp    binning.bind_interp      binning.interp

(rules in ``aot.infer.binning``, lowerings in ``aot.codegen.binning``.)
"""

from __future__ import annotations

from ..codegen.binning import digitize, histogram, interp
from ..infer import binning as rules
from ..ir.ops import Intrinsic
from .spec import Binding, IntrinsicSpec, Lowering, Rule


def _binning(
    fn: Intrinsic, rule: Rule, bind: Binding, lowering: Lowering, arity: tuple[int, int], keywords: str
) -> IntrinsicSpec:
    """A NumPy function whose array result is a new array."""
    return IntrinsicSpec.numpy_function(
        fn,
        rule,
        lowering,
        arity=arity,
        allocating=True,
        numpy=(fn.value.split(".", 1)[1],),
        keywords=frozenset(keywords.split()),
        bind=bind,
    )


SPECS = (
    _binning(Intrinsic.NP_DIGITIZE, rules.digitize_rule, rules.bind_digitize, digitize, (2, 3), "right"),
    _binning(
        Intrinsic.NP_HISTOGRAM,
        rules.histogram_rule,
        rules.bind_histogram,
        histogram,
        (1, 3),
        "bins range weights density",
    ),
    _binning(Intrinsic.NP_INTERP, rules.interp_rule, rules.bind_interp, interp, (3, 5), "left right"),
)
