"""NumPy's functions in compiled code: ufuncs (of numbers, or elementwise over arrays), reductions, and the
functions that make new arrays. Each spelling NumPy has for a function is listed on its one descriptor.

    np.sqrt(x)   → intrinsic np.sqrt    npfuncs.float_ufunc     lowering.ufunc       f64 of an int, f32 of f32
    a.sum(), np.sum(a, axis=0) → np.sum npfuncs.reduction_rule  lowering.reduction   (bound: npfuncs.bind_reduction)

Adding a NumPy function: a descriptor here (its spellings, its rule, its lowering, what it does to arrays),
and a lowering (``aot.codegen.lowering``, which routes to ``aot.codegen.npfuncs``/``nparrays``) unless an
existing one fits. See docs/CONTRIBUTING.md.
"""

from __future__ import annotations

from ..codegen import lowering
from ..infer import npfuncs
from ..ir.ops import Intrinsic
from .spec import IntrinsicSpec, Lowering, Rule


def _numpy(
    fn: Intrinsic,
    rule: Rule,
    lower: Lowering,
    arity: tuple[int, int | None],
    *names: str,
    methods: tuple[str, ...] = (),
    booleans: bool = True,
    allocating: bool = False,
    **more: object,
) -> IntrinsicSpec:
    """A NumPy function spelled ``np.<name>`` for each of ``names``."""
    return IntrinsicSpec.numpy_function(
        fn, rule, lower, arity=arity, numpy=names, methods=methods, booleans=booleans, allocating=allocating, **more
    )


def _unary(fn: Intrinsic, rule: Rule, *names: str, booleans: bool = True) -> IntrinsicSpec:
    return _numpy(fn, rule, lowering.ufunc, (1, 1), *names, booleans=booleans)


def _binary(fn: Intrinsic, rule: Rule, *names: str, booleans: bool = True) -> IntrinsicSpec:
    return _numpy(fn, rule, lowering.ufunc, (2, 2), *names, booleans=booleans)


def _reduction(fn: Intrinsic, *names: str, method: bool = True) -> IntrinsicSpec:
    """A reduction of a whole array, or along an axis (``ddof=`` for the spreads: std, var)."""
    spread = fn in (Intrinsic.NP_STD, Intrinsic.NP_VAR, Intrinsic.NP_NANSTD, Intrinsic.NP_NANVAR)
    return _numpy(
        fn,
        npfuncs.reduction_rule,
        lowering.reduction,
        (1, 3),
        *names,
        methods=names[:1] if method else (),
        keywords=frozenset({"axis", "ddof"} if spread else {"axis"}),
        bind=npfuncs.bind_reduction,
    )


def _new(fn: Intrinsic, rule: Rule, arity: tuple[int, int | None], *names: str, **more: object) -> IntrinsicSpec:
    """A function that makes a new array (or a tuple of them)."""
    return _numpy(fn, rule, lowering.new_array, arity, *names, allocating=True, **more)  # type: ignore[arg-type]


_FLOAT = "sqrt exp exp2 log log2 log10 log1p expm1 sin cos tan arcsin arccos arctan sinh cosh tanh fabs rint"

SPECS = (
    # ufuncs of one number: a float result (f32 stays f32), the argument's type, or a truth value
    *(_unary(Intrinsic["NP_" + name.upper()], npfuncs.float_ufunc, name) for name in _FLOAT.split()),
    _unary(Intrinsic.NP_RADIANS, npfuncs.float_ufunc, "radians", "deg2rad"),
    _unary(Intrinsic.NP_DEGREES, npfuncs.float_ufunc, "degrees", "rad2deg"),
    _unary(Intrinsic.NP_FLOOR, npfuncs.same_ufunc, "floor"),
    _unary(Intrinsic.NP_CEIL, npfuncs.same_ufunc, "ceil"),
    _unary(Intrinsic.NP_TRUNC, npfuncs.same_ufunc, "trunc"),
    _unary(Intrinsic.NP_ABS, npfuncs.same_ufunc, "absolute", "abs"),
    _unary(Intrinsic.NP_SIGN, npfuncs.same_ufunc, "sign", booleans=False),
    _unary(Intrinsic.NP_SQUARE, npfuncs.same_ufunc, "square", booleans=False),
    _unary(Intrinsic.NP_ISNAN, npfuncs.predicate_ufunc, "isnan"),
    _unary(Intrinsic.NP_ISINF, npfuncs.predicate_ufunc, "isinf"),
    _unary(Intrinsic.NP_ISFINITE, npfuncs.predicate_ufunc, "isfinite"),
    _unary(Intrinsic.NP_SIGNBIT, npfuncs.predicate_ufunc, "signbit", booleans=False),
    _unary(Intrinsic.NP_LOGICAL_NOT, npfuncs.predicate_ufunc, "logical_not"),
    _binary(Intrinsic.NP_LOGICAL_AND, npfuncs.predicate_ufunc, "logical_and"),
    _binary(Intrinsic.NP_LOGICAL_OR, npfuncs.predicate_ufunc, "logical_or"),
    _binary(Intrinsic.NP_LOGICAL_XOR, npfuncs.predicate_ufunc, "logical_xor"),
    _numpy(
        Intrinsic.NP_ROUND,
        npfuncs.round_rule,
        lowering.ufunc,
        (1, 2),
        "round",
        "around",
        methods=("round",),
        booleans=False,
        keywords=frozenset({"decimals"}),
    ),
    # np.float32(x) and the other scalar types (the type's name is the site's)
    _numpy(Intrinsic.NP_CAST, npfuncs.cast_rule, lowering.ufunc, (1, 1)),
    # ufuncs of two numbers: the promoted type, or a float of it
    _binary(Intrinsic.NP_MINIMUM, npfuncs.binary_ufunc, "minimum"),
    _binary(Intrinsic.NP_MAXIMUM, npfuncs.binary_ufunc, "maximum"),
    _binary(Intrinsic.NP_FMIN, npfuncs.binary_ufunc, "fmin"),
    _binary(Intrinsic.NP_FMAX, npfuncs.binary_ufunc, "fmax"),
    _binary(Intrinsic.NP_POWER, npfuncs.binary_ufunc, "power", booleans=False),
    _binary(Intrinsic.NP_FLOOR_DIVIDE, npfuncs.binary_ufunc, "floor_divide", booleans=False),
    _binary(Intrinsic.NP_REMAINDER, npfuncs.binary_ufunc, "remainder", "mod", booleans=False),
    _binary(Intrinsic.NP_FMOD, npfuncs.binary_ufunc, "fmod", booleans=False),
    _binary(Intrinsic.NP_DIVIDE, npfuncs.float_binary_ufunc, "divide", "true_divide", booleans=False),
    _binary(Intrinsic.NP_HYPOT, npfuncs.float_binary_ufunc, "hypot"),
    _binary(Intrinsic.NP_ARCTAN2, npfuncs.float_binary_ufunc, "arctan2"),
    _binary(Intrinsic.NP_COPYSIGN, npfuncs.float_binary_ufunc, "copysign"),
    # elementwise choices
    _numpy(Intrinsic.NP_WHERE, npfuncs.where_type, lowering.ufunc, (3, 3), "where"),
    _numpy(Intrinsic.NP_CLIP, npfuncs.clip_type, lowering.ufunc, (3, 3), "clip", methods=("clip",)),
    # reductions: a number, or along an axis a new array
    _reduction(Intrinsic.NP_SUM, "sum"),
    _reduction(Intrinsic.NP_PROD, "prod"),
    _reduction(Intrinsic.NP_MIN, "min", "amin"),
    _reduction(Intrinsic.NP_MAX, "max", "amax"),
    _reduction(Intrinsic.NP_MEAN, "mean"),
    _reduction(Intrinsic.NP_STD, "std"),
    _reduction(Intrinsic.NP_VAR, "var"),
    _reduction(Intrinsic.NP_ARGMIN, "argmin"),
    _reduction(Intrinsic.NP_ARGMAX, "argmax"),
    _reduction(Intrinsic.NP_ALL, "all"),
    _reduction(Intrinsic.NP_ANY, "any"),
    *(
        _reduction(Intrinsic["NP_" + name.upper()], name, method=False)
        for name in "nansum nanmean nanstd nanvar nanmin nanmax nanargmin nanargmax".split()
    ),
    _numpy(Intrinsic.NP_DOT, npfuncs.dot_rule, lowering.reduction, (2, 2), "dot"),  # (and a @ b)
    _numpy(Intrinsic.NP_NORM, npfuncs.norm_rule, lowering.numpy_scalar, (1, 1), "linalg.norm"),
    _numpy(
        Intrinsic.NP_SEARCHSORTED,
        npfuncs.searchsorted_rule,
        lowering.searchsorted,
        (2, 2),
        "searchsorted",
        keywords=frozenset({"side"}),
    ),
    _numpy(Intrinsic.NP_SEARCHSORTED_RIGHT, npfuncs.searchsorted_rule, lowering.searchsorted, (2, 2)),  # side=
    # functions that make new arrays (a tuple of them: np.nonzero), or count
    _new(Intrinsic.NP_OUTER, npfuncs.outer_rule, (2, 2), "outer"),
    _new(Intrinsic.NP_CUMSUM, npfuncs.sorting_rule, (1, 1), "cumsum", methods=("cumsum",)),
    _new(Intrinsic.NP_CUMPROD, npfuncs.sorting_rule, (1, 1), "cumprod", methods=("cumprod",)),
    _new(
        Intrinsic.NP_SORT,
        npfuncs.sort_rule,
        (1, 2),
        "sort",
        keywords=frozenset({"axis", "kind"}),
        bind=npfuncs.bind_sort,
    ),
    _new(
        Intrinsic.NP_ARGSORT,
        npfuncs.sort_rule,
        (1, 2),
        "argsort",
        methods=("argsort",),
        keywords=frozenset({"axis", "kind"}),
        bind=npfuncs.bind_sort,
    ),
    _new(Intrinsic.NP_DIFF, npfuncs.diff_rule, (1, 1), "diff"),
    _new(Intrinsic.NP_CONCATENATE, npfuncs.concatenate_rule, (1, 1), "concatenate"),
    _new(Intrinsic.NP_UNIQUE, npfuncs.unique_rule, (1, 1), "unique"),
    _new(Intrinsic.NP_BINCOUNT, npfuncs.bincount_rule, (1, 2), "bincount"),  # (x[, weights])
    _new(Intrinsic.NP_NONZERO, npfuncs.nonzero_rule, (1, 1), "nonzero"),  # (and np.where(c))
    _new(Intrinsic.NP_FLATNONZERO, npfuncs.nonzero_rule, (1, 1), "flatnonzero"),
    _numpy(Intrinsic.NP_COUNT_NONZERO, npfuncs.nonzero_rule, lowering.new_array, (1, 1), "count_nonzero"),
    _numpy(Intrinsic.NP_MEDIAN, npfuncs.sorting_rule, lowering.new_array, (1, 1), "median"),
)
