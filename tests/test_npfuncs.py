"""NumPy in compiled code (SUBSET.md, "Beyond the floor"): ufuncs on scalars, NumPy scalar types and
constants, full reductions of arrays, np.dot / ``@`` of 1-D arrays, np.searchsorted, dtype attributes, and
the edges that record every NumPy name compiled code resolved.

Every behavioural test compares the compiled method with plain Python (``f.py_func``, which calls NumPy)
through ``support.check``. Transcendental functions are compared with a tolerance of a few units in the last
place (NumPy's own SIMD loops and the C library may round differently: SUBSET.md documents it); everything
else, float sums included (NumPy's pairwise summation is reproduced), is compared exactly.
"""

from __future__ import annotations

import ast
import math
import warnings

import numpy
import numpy as np
import pytest
from numpy import sqrt as np_sqrt_by_name

import aot

try:
    from .support import check, check_raises, expect_compile_error, locate
except ImportError:  # tests/ is not a package
    from support import check, check_raises, expect_compile_error, locate

from aot.infer import Inferencer
from aot.passes import pipeline
from aot.runtime import runtime
from aot.types import F32, F64, I32
from aot.world.edges import EdgeKind, edge_holds
from aot.world.validate import CurrentWorld

NAN = float("nan")
INF = float("inf")
ULP = 4e-16  # relative tolerance for transcendental functions (a unit or two in the last place)

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy warns where it gives NaN or inf

FLOATS = [0.0, -0.0, 1.5, -2.5, 0.5, 1e-300, 1e300, 710.0, NAN, INF, -INF]
INTS = [0, 1, -7, 12, 2**40]

# ======================================================================================================
# Ufuncs of one scalar
# ======================================================================================================


@aot.jit
def u_sqrt(x):
    return np.sqrt(x)


@aot.jit
def u_exp(x):
    return np.exp(x)


@aot.jit
def u_exp2(x):
    return np.exp2(x)


@aot.jit
def u_log(x):
    return np.log(x)


@aot.jit
def u_log2(x):
    return np.log2(x)


@aot.jit
def u_log10(x):
    return np.log10(x)


@aot.jit
def u_log1p(x):
    return np.log1p(x)


@aot.jit
def u_expm1(x):
    return np.expm1(x)


@aot.jit
def u_sin(x):
    return np.sin(x)


@aot.jit
def u_cos(x):
    return np.cos(x)


@aot.jit
def u_tan(x):
    return np.tan(x)


@aot.jit
def u_arcsin(x):
    return np.arcsin(x)


@aot.jit
def u_arccos(x):
    return np.arccos(x)


@aot.jit
def u_arctan(x):
    return np.arctan(x)


@aot.jit
def u_sinh(x):
    return np.sinh(x)


@aot.jit
def u_cosh(x):
    return np.cosh(x)


@aot.jit
def u_tanh(x):
    return np.tanh(x)


@aot.jit
def u_fabs(x):
    return np.fabs(x)


@aot.jit
def u_rint(x):
    return np.rint(x)


@aot.jit
def u_floor(x):
    return np.floor(x)


@aot.jit
def u_ceil(x):
    return np.ceil(x)


@aot.jit
def u_trunc(x):
    return np.trunc(x)


@aot.jit
def u_abs(x):
    return np.abs(x)


@aot.jit
def u_absolute(x):
    return numpy.absolute(x)


@aot.jit
def u_sign(x):
    return np.sign(x)


@aot.jit
def u_square(x):
    return np.square(x)


@aot.jit
def u_isnan(x):
    return np.isnan(x)


@aot.jit
def u_isinf(x):
    return np.isinf(x)


@aot.jit
def u_isfinite(x):
    return np.isfinite(x)


@aot.jit
def u_signbit(x):
    return np.signbit(x)


EXACT_UNARY = [u_sqrt, u_fabs, u_rint, u_floor, u_ceil, u_trunc, u_abs, u_absolute, u_sign, u_square]
PREDICATES = [u_isnan, u_isinf, u_isfinite, u_signbit]
TRANSCENDENTAL = [
    u_exp,
    u_exp2,
    u_log,
    u_log2,
    u_log10,
    u_log1p,
    u_expm1,
    u_sin,
    u_cos,
    u_tan,
    u_arcsin,
    u_arccos,
    u_arctan,
    u_sinh,
    u_cosh,
    u_tanh,
]


@pytest.mark.parametrize("f", EXACT_UNARY + PREDICATES, ids=lambda f: f.__name__)
def test_exact_unary(f):
    """Exact on floats; on ints NumPy's integer loops: abs, floor, ceil, trunc, sign and square keep an int
    (square wraps), the float functions give a float, the predicates a bool."""
    for x in FLOATS + [2.5, 3.5, -0.5, 1e16 + 2]:
        check(f, x)
    for n in INTS:
        check(f, n)


@aot.jit
def u_logical(x, y):
    return np.logical_and(x, y), np.logical_or(x, y), np.logical_xor(x, y), np.logical_not(x)


def test_logical_functions_of_numbers_and_of_arrays():
    """NumPy's logical functions take the truth of each operand (NaN is true); of arrays, a bool array,
    broadcast as NumPy does (a column against a row), and the result is a fresh array."""
    values = [0.0, -0.0, 1.5, NAN, INF, 0, 3, -1, True, False]
    for x in values:
        for y in values:
            check(u_logical, x, y)
    a = np.array([0.0, 1.0, NAN, -2.0, 0.0])
    b = np.array([1, 0, 0, 5, 0])
    check(u_logical, a, b)
    check(u_logical, a[:, None], b)
    check(u_logical, a, True)
    check(u_logical, np.array([True, False]), np.array([[True], [False]]))
    check(u_logical, a[::2], 2)  # (strided)


@pytest.mark.parametrize("f", TRANSCENDENTAL, ids=lambda f: f.__name__)
def test_transcendental(f):
    for x in FLOATS + [0.3, -0.9, 2.0, 100.0]:
        check(f, x, close=True, rel_tol=ULP)
    for n in [0, 1, -1, 3]:  # an int argument gives a float
        check(f, n, close=True, rel_tol=ULP)


def test_numpy_scalar_semantics_not_math_errors():
    """Where ``math`` raises, NumPy gives NaN or inf (with a warning): so does compiled code."""
    check(u_sqrt, -1.0, expect=NAN)
    check(u_log, 0.0, expect=-INF)
    check(u_log, -1.0, expect=NAN)
    check(u_exp, 1000.0, expect=INF)
    check(u_arcsin, 2.0, expect=NAN)
    assert type(u_floor(2.5)) is float and u_floor(-2.5) == -3.0  # np.floor returns a float
    assert type(u_abs(-3)) is int and u_abs(-3) == 3  # np.abs of an int is an int


def test_abs_of_the_most_negative_int_wraps_as_numpy():
    check(u_abs, -(2**63))


@aot.jit
def u_sqrt_f32(x):
    return np.sqrt(np.float32(x))


@aot.jit
def u_sin_f32(x):
    return np.sin(np.float32(x))


@aot.jit
def u_floor_i32(x):
    return np.floor(np.int32(x))


@aot.jit
def u_sqrt_i16(x):
    return np.sqrt(np.int16(x))


@pytest.mark.parametrize("x", [0.0, 2.0, 0.1, -1.0, NAN, INF, 3e38], ids=repr)
def test_float32_in_float32_out(x):
    """An f32 argument computes in single precision; the result comes back as a Python float holding the
    single-precision value (as aot.f32 results do)."""
    got = check(u_sqrt_f32, x)
    assert type(got) is float
    check(u_sin_f32, x, close=True, rel_tol=1e-7)


def test_integer_widths_follow_numpy_loops():
    check(u_floor_i32, 7)
    check(u_sqrt_i16, 9)  # an int16 argument gives float32 in NumPy
    check(u_sqrt_i16, 2)


# ======================================================================================================
# Ufuncs of two scalars
# ======================================================================================================


@aot.jit
def b_minimum(x, y):
    return np.minimum(x, y)


@aot.jit
def b_maximum(x, y):
    return np.maximum(x, y)


@aot.jit
def b_fmin(x, y):
    return np.fmin(x, y)


@aot.jit
def b_fmax(x, y):
    return np.fmax(x, y)


@aot.jit
def b_copysign(x, y):
    return np.copysign(x, y)


@aot.jit
def b_hypot(x, y):
    return np.hypot(x, y)


@aot.jit
def b_arctan2(x, y):
    return np.arctan2(x, y)


@aot.jit
def b_power(x, y):
    return np.power(x, y)


PAIRS = [(1.0, 2.0), (2.0, 1.0), (0.0, -0.0), (-0.0, 0.0), (NAN, 1.0), (1.0, NAN), (NAN, NAN), (-INF, 3.0), (3, -4)]


@pytest.mark.parametrize("f", [b_minimum, b_maximum, b_fmin, b_fmax, b_copysign], ids=lambda f: f.__name__)
def test_min_max_copysign(f):
    """minimum/maximum propagate NaN, fmin/fmax ignore it; ties between zeros pick the operand NumPy's loop
    picks (the sign of the zero is compared)."""
    for pair in PAIRS:
        check(f, *pair)


@pytest.mark.parametrize("pair", [(3, 4), (-7, 2), (5, 5), (0, -1)], ids=repr)
def test_min_max_of_ints_stay_ints(pair):
    for f in (b_minimum, b_maximum, b_fmin, b_fmax):
        check(f, *pair)


@pytest.mark.parametrize("f", [b_hypot, b_arctan2, b_power], ids=lambda f: f.__name__)
def test_binary_float_functions(f):
    for pair in [(3.0, 4.0), (-1.0, 0.5), (0.0, -0.0), (NAN, 1.0), (INF, NAN), (-8.0, 1 / 3), (2, 3)]:
        check(f, *pair, close=True, rel_tol=ULP)


def test_integer_power_wraps_as_numpy():
    for pair in [(2, 10), (3, 0), (-3, 3), (0, 0), (7, 40), (-1, 63)]:
        check(b_power, *pair)


def test_integer_power_to_a_negative_power_raises_value_error():
    check_raises(b_power, 2, -1, exc=ValueError, messages=True)


@aot.jit
def d_floor_divide(x, y):
    return np.floor_divide(x, y)


@aot.jit
def d_remainder(x, y):
    return np.remainder(x, y)


@aot.jit
def d_mod(x, y):
    return np.mod(x, y)


@aot.jit
def d_fmod(x, y):
    return np.fmod(x, y)


@aot.jit
def d_divide(x, y):
    return np.divide(x, y)


@aot.jit
def d_true_divide(x, y):
    return np.true_divide(x, y)


DIVISIONS = [d_floor_divide, d_remainder, d_mod, d_fmod, d_divide, d_true_divide]
FLOAT_DIVISIONS = [(7.5, 2.0), (-7.5, 2.0), (7.5, -2.0), (1.0, 0.0), (-1.0, 0.0), (0.0, 0.0), (-0.0, 3.0), (NAN, 1.0)]
FLOAT_DIVISIONS += [(INF, 2.0), (1.0, INF), (-1.0, INF), (1e308, 1e-308), (0.1, 0.01)]
INT_DIVISIONS = [(7, 2), (-7, 2), (7, -2), (-7, -2), (7, 0), (0, 0), (-(2**63), -1), (-(2**63), 1), (6, 3)]


@pytest.mark.parametrize("f", DIVISIONS, ids=lambda f: f.__name__)
def test_divisions_never_raise_and_give_numpys_values(f):
    """Division by zero: inf/NaN for floats, 0 for integers (NumPy only warns); otherwise floor division and
    modulo as Python's, fmod as C's."""
    for pair in FLOAT_DIVISIONS + INT_DIVISIONS:
        check(f, *pair)


@aot.jit
def mixed_literal(x):
    return np.maximum(np.float32(x), 1), np.minimum(np.int32(x), 2)


def test_python_literals_adapt_to_numpy_scalars():
    check(mixed_literal, 3.0)
    check(mixed_literal, -5.0)


# ======================================================================================================
# NumPy scalar types, constants, imports under any name
# ======================================================================================================


@aot.jit
def to_float64(x):
    return np.float64(x)


@aot.jit
def to_float32(x):
    return np.float32(x)


@aot.jit
def to_int64(x):
    return np.int64(x)


@aot.jit
def to_int32(x):
    return np.int32(x)


@aot.jit
def to_uint8(x):
    return np.uint8(x)


@aot.jit
def to_bool(x):
    return np.bool_(x)


@pytest.mark.parametrize("f", [to_float64, to_float32, to_int64, to_int32, to_uint8, to_bool], ids=lambda f: f.__name__)
def test_numpy_scalar_conversions(f):
    """Conversions as NumPy's constructors on a Python number: floats truncate, NaN and infinity raise
    (ValueError, OverflowError), a value outside the type raises OverflowError."""
    for x in [0, 1, -1, 255, 256, 2**31, 0.1, -1.5, 3.99, 1e10, NAN, INF, True]:
        check(f, x)


@aot.jit
def constants():
    return np.pi, np.e, np.inf, -np.inf, np.nan, numpy.pi


def test_numpy_constants():
    check(constants)


TINY32 = np.float32(1e-7)
COUNT16 = np.int16(-300)
FLAG = np.bool_(True)


@aot.jit
def scalar_globals(x):
    return np.float32(x) + TINY32, np.float64(x) + TINY32, COUNT16 * 2, COUNT16 * 200, FLAG


def test_numpy_scalar_globals_fold_with_their_type():
    check(scalar_globals, 1.0)
    check(scalar_globals, np.nan)


@aot.jit
def from_numpy_import(x):
    return np_sqrt_by_name(x)


def sqrt(x):
    """A helper of the user's that happens to share a NumPy function's name."""
    return x + 1.0


@aot.jit
def calls_own_sqrt(x):
    return sqrt(x)


def test_a_user_function_named_like_numpys_is_the_users():
    check(calls_own_sqrt, 4.0, expect=5.0)


def test_numpy_imported_under_other_names():
    check(from_numpy_import, 2.0)
    check(u_absolute, -2.0)


# ======================================================================================================
# Reductions
# ======================================================================================================


@aot.jit
def r_sum(a):
    return a.sum()


@aot.jit
def r_np_sum(a):
    return np.sum(a)


@aot.jit
def r_prod(a):
    return a.prod()


@aot.jit
def r_min(a):
    return a.min()


@aot.jit
def r_max(a):
    return np.max(a)


@aot.jit
def r_amin(a):
    return np.amin(a)


@aot.jit
def r_mean(a):
    return a.mean()


@aot.jit
def r_std(a):
    return np.std(a)


@aot.jit
def r_var(a):
    return a.var()


@aot.jit
def r_argmin(a):
    return a.argmin()


@aot.jit
def r_argmax(a):
    return np.argmax(a)


@aot.jit
def r_all(a):
    return a.all()


@aot.jit
def r_any(a):
    return np.any(a)


ALL_REDUCTIONS = [r_sum, r_prod, r_min, r_max, r_mean, r_std, r_var, r_argmin, r_argmax, r_all, r_any]
ALIASES = [(r_np_sum, r_sum), (r_amin, r_min)]  # np.sum(a) is a.sum(), np.amin(a) is a.min()
ORDERED = [r_sum, r_np_sum, r_prod, r_mean, r_std, r_var]

rng = np.random.default_rng(2026)


def vectors():
    """1-D float arrays: every pairwise-summation regime (n < 8, blocks of 8 up to 128, halves above),
    reversed and strided views."""
    out = {}
    for n in (1, 2, 7, 8, 9, 16, 100, 127, 128, 129, 1000, 4099):
        base = rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 3, n)
        out[f"n{n}"] = base
        out[f"n{n}-rev"] = base[::-1]
        out[f"n{n}-step3"] = base[::3]
    return out


VECTORS = vectors()


@pytest.mark.parametrize("f, same_as", ALIASES, ids=lambda f: f.__name__)
def test_function_forms_are_the_methods(f, same_as):
    for a in (VECTORS["n129"], np.arange(7), np.zeros(0), np.ones((3, 4))[:, ::2]):
        assert check(f, a) == check(same_as, a)


@pytest.mark.parametrize("f", ALL_REDUCTIONS, ids=lambda f: f.__name__)
def test_reductions_of_float_vectors_are_exact(f):
    """Exact, not close: float sums use NumPy's pairwise summation."""
    for a in VECTORS.values():
        check(f, a)


@pytest.mark.parametrize("f", ALL_REDUCTIONS, ids=lambda f: f.__name__)
def test_reductions_of_other_dtypes(f):
    """Sums of integers in 64 bits (unsigned stay unsigned), of booleans as int; mean/std/var of integers
    in float64; f32 stays f32 (summed pairwise in single precision)."""
    values = rng.standard_normal(300) * 50
    for dtype in [np.float32, np.int32, np.int8, np.uint64, np.bool_]:
        a = (values > 0) if dtype is np.bool_ else values.astype(dtype)
        check(f, a)
        check(f, a[::-2])
        check(f, a[:5])


def test_integer_means_sum_in_buffers_of_8192_as_numpy():
    a = rng.integers(-(2**62), 2**62, 20001)
    for f in (r_mean, r_var, r_std):
        check(f, a)
        check(f, a[::-1])


@pytest.mark.parametrize("f", ALL_REDUCTIONS, ids=lambda f: f.__name__)
def test_reductions_of_matrices(f):
    m = rng.standard_normal((37, 23))
    big = rng.standard_normal((150, 90))
    for a in (m, m.T, m[::-1], m[:, ::2], m[::2, ::-3], np.asfortranarray(m), big, big.T, big[::-1], big[:, ::2]):
        check(f, a)
    check(f, rng.standard_normal((4, 5, 6))[::2, :, ::-1])


@pytest.mark.parametrize("f", ORDERED, ids=lambda f: f.__name__)
def test_large_three_dimensional_views_agree_to_rounding(f):
    """The documented difference: N-D views over 8192 elements whose axes do not merge may be summed in
    another order than NumPy's buffered iteration."""
    a = rng.standard_normal((30, 40, 50))[::-1, :, ::2]
    check(f, a, close=True, rel_tol=1e-12)


def test_nan_propagates_and_argmin_finds_the_first_nan():
    a = np.array([1.0, NAN, -3.0, NAN, 7.0])
    for f in ALL_REDUCTIONS:
        check(f, a)
        check(f, a[::-1])
    b = np.array([NAN, 1.0, 2.0])
    for f in (r_min, r_max, r_argmin, r_argmax):
        check(f, b)


@pytest.mark.parametrize("f", ALL_REDUCTIONS, ids=lambda f: f.__name__)
def test_ties_nans_and_lanes(f):
    """Long arrays (min/max/argmin/argmax keep eight interleaved partial results): the first of equal
    extremes, the first NaN wherever it lies, booleans and integers with many ties, in every layout."""
    ints = rng.integers(-3, 4, 203)
    cases = [ints, ints[::-1], ints[::3], ints > 0, (ints > 5)[:40], ints.astype(np.uint8), ints.astype(np.int8)]
    for pos in (0, 5, 16, 17, 100, 199):
        x = rng.standard_normal(200)
        x[pos] = NAN
        cases += [x, x[::-1]]
    x = rng.standard_normal(64)
    x[[3, 40]] = x.min() - 1.0  # the extreme twice, in different lanes
    x[[9, 50]] = x.max() + 1.0
    cases += [x, x[::-1]]
    for a in cases:
        check(f, a)


EXTREMES = [r_min, r_max, r_argmin, r_argmax]


@pytest.mark.parametrize("f", EXTREMES, ids=lambda f: f.__name__)
def test_extremes_of_long_arrays(f):
    """Arrays of at least two vector blocks take the vector loops (contiguous ones a load per block, 1-D views
    of other strides, reversed too, an element at a time): the extreme in the first block, the last whole
    block and the tail, ties across blocks, NaN anywhere (also in the first block, the tail, everywhere),
    infinities, integer bounds, f32, N-D and every dtype's block size."""
    cases = []
    for n in (64, 65, 100, 127, 128, 130, 1000, 4099):
        x = rng.standard_normal(n)
        cases.append(x)
        for pos in (0, 1, 31, 32, 63, n - 1, n // 2):
            y = x.copy()
            y[pos] = NAN
            cases.append(y)
            z = x.copy()
            z[pos] = 1e300 if pos % 2 else -1e300
            z[(pos + 7) % n] = z[pos]  # the same extreme twice
            cases.append(z)
    ties = np.repeat(rng.integers(-2, 3, 125).astype(np.float64), 5)  # 625 elements, many equal extremes
    cases += [ties, ties.astype(np.float32), np.full(300, NAN), np.full(300, 7.0), np.full(300, -np.inf)]
    x = rng.standard_normal(300)
    x[[5, 200]] = np.inf
    x[[17, 250]] = -np.inf
    cases += [x, x.astype(np.float32), np.zeros(200), np.array([-0.0, 0.0] * 100), np.array([0.0, -0.0] * 100)]
    for dtype in (np.int64, np.int32, np.int16, np.int8, np.uint64, np.uint32, np.uint8):
        info = np.iinfo(dtype)
        for n in (255, 256, 511, 512, 513, 2000):
            a = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
            a[n // 3] = info.max
            a[n // 5] = info.min
            a[n - 1] = info.max
            cases += [a, np.sort(a), a[::-1].copy()]
    f32 = rng.standard_normal(1000).astype(np.float32)
    f32[900] = NAN
    cases += [f32, f32[:899], rng.standard_normal((40, 30)), np.ascontiguousarray(rng.standard_normal((5, 6, 7)))]
    for a in cases:
        check(f, a)
        check(f, a[::-1])
        check(f, a[1::3])


@pytest.mark.parametrize("f", EXTREMES, ids=lambda f: f.__name__)
def test_extremes_of_long_boolean_arrays(f):
    """Booleans stop at the first False (min, argmin) or True (max, argmax): found in a block of 64, in the
    tail, or not at all."""
    for n in (1, 63, 64, 65, 128, 129, 1000):
        for pos in sorted({0, 1, 63, 64, n // 2, n - 1}):
            if pos < n:
                a = np.zeros(n, dtype=np.bool_)
                a[pos] = True
                check(f, a)
                check(f, ~a)
                check(f, a[::-1])
                check(f, np.repeat(a, 2)[::-2])
        check(f, np.zeros(n, dtype=np.bool_))
        check(f, np.ones(n, dtype=np.bool_))
    check(f, (rng.standard_normal((30, 20)) > 2.5))


def test_length_one_axes_and_broadcast_strides():
    """The flat fast path only where the axes really merge: axes of length 1 may have any stride."""
    base = rng.standard_normal((3, 5, 4))
    views = [base[:, 1:2, :], base[:, :, 2:3], base[1:2], base[:, None, :, 0], np.broadcast_to(base[0, 0], (3, 4))]
    for a in views:
        for f in ALL_REDUCTIONS:
            check(f, a)


def test_signed_zeros_as_numpy():
    """Up to three elements: NumPy's min/max return the later of equal zeros (in longer arrays its SIMD loops'
    choice varies with the position, and so may the compiled code's: SUBSET.md)."""
    for a in (np.array([0.0, -0.0]), np.array([-0.0, 0.0]), np.array([-0.0]), np.array([0.0, 1.0, -0.0])):
        for f in ALL_REDUCTIONS:
            check(f, a)


def test_empty_arrays():
    """sum/prod give the identity, all/any True/False, mean/std/var NaN (NumPy warns); min/max and
    argmin/argmax raise ValueError as NumPy does."""
    for dtype in (np.float64, np.int64, np.float32):
        e = np.zeros(0, dtype=dtype)
        for f in (r_sum, r_np_sum, r_prod, r_all, r_any, r_mean, r_std, r_var):
            check(f, e)
        for f in (r_min, r_max, r_amin, r_argmin, r_argmax):
            check_raises(f, e, exc=ValueError)
    check(r_sum, np.zeros((0, 3)))
    check_raises(r_min, np.zeros((3, 0)), exc=ValueError)


def test_single_elements():
    for a in (np.array([2.5]), np.array([-4]), np.array([True]), np.array([[NAN]])):
        for f in ALL_REDUCTIONS:
            check(f, a)


@aot.jit
def sum_of_squares_by_method(a):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * a[i]
    return s - a.var() * a.size


def test_reductions_inside_expressions():
    check(sum_of_squares_by_method, np.array([1.0, 2.0, 3.0]), close=True)


# ======================================================================================================
# np.dot and @, np.searchsorted
# ======================================================================================================


@aot.jit
def dot(a, b):
    return np.dot(a, b)


@aot.jit
def matmul(a, b):
    return a @ b


def test_dot_of_integer_vectors_is_exact():
    a = rng.integers(-100, 100, 50)
    b = rng.integers(-100, 100, 50)
    for f in (dot, matmul):
        check(f, a, b)
        check(f, a[::-1], b[::2].copy()[:25].repeat(2))
        check(f, a[:0], b[:0])
        check(f, a[:1], b[:1])


def test_dot_of_float_vectors_agrees_to_rounding():
    """NumPy's float dot is BLAS's, whose order of additions is its own: SUBSET.md documents a tolerance."""
    a = rng.standard_normal(300)
    b = rng.standard_normal(300)
    for f in (dot, matmul):
        check(f, a, b, close=True, rel_tol=1e-12)
        check(f, a[::-2], b[::2], close=True, rel_tol=1e-12)
        check(f, np.array([NAN, 1.0]), np.array([1.0, 2.0]))


def test_dot_of_different_lengths_raises_value_error():
    check_raises(dot, np.ones(3), np.ones(4), exc=ValueError)


@aot.jit
def search(a, x):
    return np.searchsorted(a, x)


def test_searchsorted_left():
    for x in [-10.0, 0.0, 1.0, 2.5, 3.0, 100.0, NAN, -INF, 2]:
        for a in (np.array([0.0, 1.0, 1.0, 2.0, 3.0, 3.0]), np.array([]), np.array([1.0]), np.array([1.0, 2.0, NAN])):
            check(search, a, x)
        check(search, np.array([1, 3, 5, 7]), x)


# ======================================================================================================
# dtype attributes
# ======================================================================================================


@aot.jit
def dtype_facts(a):
    return a.itemsize, a.dtype == np.float64, a.dtype != np.float32, a.dtype == np.int32


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.uint8, np.bool_])
def test_itemsize_and_dtype_comparisons_fold(dtype):
    check(dtype_facts, np.zeros(3, dtype=dtype))


@aot.jit
def dtype_branch(a):
    if a.dtype == np.float32:
        return 1
    return 2


def test_dtype_comparison_decides_a_branch():
    check(dtype_branch, np.zeros(2, dtype=np.float32))
    check(dtype_branch, np.zeros(2))


# ======================================================================================================
# Edges: every NumPy name a method resolved
# ======================================================================================================


def edges_of(f, *argtypes):
    inst = Inferencer(runtime().table, passes=pipeline.run).infer(f.__aot_method__, argtypes)
    return {(e.kind, e.target): e.value for e in inst.edges}


def test_edges_record_the_numpy_module_and_the_function():
    edges = edges_of(u_sqrt, F64)
    assert edges[(EdgeKind.LOOKUP, f"{__name__}:np")] == "module:numpy"
    assert edges[(EdgeKind.LOOKUP, "numpy:sqrt")] == "numpy:sqrt"
    edges = edges_of(from_numpy_import, F64)
    assert edges[(EdgeKind.LOOKUP, f"{__name__}:np_sqrt_by_name")] == "numpy:sqrt"


def test_rebinding_a_numpy_name_breaks_its_edges(monkeypatch):
    world = CurrentWorld(runtime().table)
    edges = edges_of(u_sqrt, F64)
    for (kind, target), value in edges.items():
        assert edge_holds(kind, world, target, value)
    monkeypatch.setattr(np, "sqrt", np.cos)  # np.sqrt rebound in the numpy module
    sqrt_edge = edges[(EdgeKind.LOOKUP, "numpy:sqrt")]
    assert not edge_holds(EdgeKind.LOOKUP, CurrentWorld(runtime().table), "numpy:sqrt", sqrt_edge)
    monkeypatch.undo()
    monkeypatch.setitem(globals(), "np", math)  # the module's global np bound to something else
    key = (EdgeKind.LOOKUP, f"{__name__}:np")
    assert not edge_holds(key[0], CurrentWorld(runtime().table), key[1], edges[key])
    monkeypatch.undo()
    assert edge_holds(key[0], CurrentWorld(runtime().table), key[1], edges[key])


def test_numpy_scalar_globals_are_edges_with_type_and_value(monkeypatch):
    edges = edges_of(scalar_globals, F64)
    key = (EdgeKind.GLOBAL, f"{__name__}:TINY32")
    assert edges[key] == "numpy.float32(1.0000000116860974e-07)"
    assert edge_holds(key[0], CurrentWorld(runtime().table), key[1], edges[key])
    for other in (np.float32(2e-7), np.float64(TINY32), float(TINY32), 1e-7):
        monkeypatch.setitem(globals(), "TINY32", other)
        assert not edge_holds(key[0], CurrentWorld(runtime().table), key[1], edges[key]), other


def test_conversions_and_reductions_types():
    inst = Inferencer(runtime().table, passes=pipeline.run).infer(u_sqrt_f32.__aot_method__, (F64,))
    assert inst.return_type == F32
    inst = Inferencer(runtime().table, passes=pipeline.run).infer(r_sum.__aot_method__, (I32[:],))
    assert str(inst.return_type) == "i64"


# ======================================================================================================
# What is left out: clean CompileErrors
# ======================================================================================================


@aot.jit
def sqrt_of_array(a):
    return np.sqrt(a)


@aot.jit
def sum_with_axis(a):
    return a.sum(0)


@aot.jit
def sqrt_of_bool(b):
    return np.sqrt(b)


@aot.jit
def dot_of_matrices(a, b):
    return a @ b


@aot.jit
def unknown_numpy_function(x):
    return np.histogram2d(x, x)


@aot.jit
def array_attribute_unknown(a):
    return a.flags


def test_ufunc_of_an_int8_array_is_a_clean_error():  # (NumPy gives float16; whole arrays: test_elementwise.py)
    at = locate(sqrt_of_array, "np.sqrt(a)")
    err = expect_compile_error(sqrt_of_array, np.ones(3, np.int8), at=at, node_type=ast.Call)
    assert "float16" in str(err)


def test_reduction_arguments_are_a_clean_error():
    err = expect_compile_error(sum_with_axis, np.ones(3), at=locate(sum_with_axis, "a.sum(0)"), node_type=ast.Call)
    assert "axis" in str(err)


def test_float16_results_are_a_clean_error():
    err = expect_compile_error(sqrt_of_bool, True, at=locate(sqrt_of_bool, "np.sqrt(b)"), node_type=ast.Call)
    assert "float16" in str(err)


def test_dot_of_3d_arrays_is_a_clean_error():  # (1-D and 2-D: tests/test_nparrays.py)
    m = np.ones((2, 2, 2))
    err = expect_compile_error(dot_of_matrices, m, m, at=locate(dot_of_matrices, "a @ b"), node_type=ast.BinOp)
    assert "2-D" in str(err)


def test_unsupported_numpy_function_is_a_clean_error():
    err = expect_compile_error(
        unknown_numpy_function, np.ones(3), at=locate(unknown_numpy_function, "np.histogram2d("), node_type=ast.Call
    )
    assert "histogram" in str(err)


def test_unknown_array_attribute_lists_what_exists():
    err = expect_compile_error(
        array_attribute_unknown, np.ones(3), at=locate(array_attribute_unknown, "a.flags"), node_type=ast.Attribute
    )
    assert "itemsize" in str(err) and "sum" in str(err)


def test_no_warnings_from_compiled_code():
    """Compiled code gives NumPy's values without NumPy's RuntimeWarnings (it does not go through NumPy)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(u_sqrt(-1.0))


# ======================================================================================================
# In kernels: the same lowering, libdevice on the ptx owner (recorded as overlay edges)
# ======================================================================================================


@aot.kernel
def k_numpy(out, x):
    i = aot.gpu.global_id()
    if i < out.shape[0]:
        out[i] = np.sqrt(x[i]) + np.minimum(x[i], 1.0) + np.floor(x[i])


def test_numpy_functions_in_a_kernel_match_its_emulation():
    from aot.runtime.cuda import no_device_reason

    if no_device_reason() is None:
        pytest.skip("a CUDA device is present: launches go to it")
    x = rng.uniform(-2.0, 5.0, 37)
    compiled, emulated = np.zeros(37), np.zeros(37)
    k_numpy[3, 16](compiled, x)
    k_numpy.emulate[3, 16](emulated, x)
    np.testing.assert_array_equal(compiled, emulated)


def test_numpy_functions_on_the_ptx_owner_record_libdevice_overlays():
    from aot.targets import PtxTarget

    inferencer = Inferencer(runtime().table, passes=pipeline.run, overlay=PtxTarget().overlay)
    inst = inferencer.infer(u_sin.__aot_method__, (F64,))
    assert (EdgeKind.OVERLAY, "math.sin(f64)", "__nv_sin") in {(e.kind, e.target, e.value) for e in inst.edges}


# ------------------------------------------------------------------------------------------ np.linalg.norm


@aot.jit
def norm(a):
    return np.linalg.norm(a)


@aot.jit
def normalized(a):
    return a / np.linalg.norm(a)


@aot.jit
def norm_with_ord(a):
    return np.linalg.norm(a, 2)


def test_linalg_norm_is_the_2_norm_of_the_flattened_array():
    """``np.linalg.norm(x)``: sqrt of the sum of squares of every element (NumPy: ``sqrt(x.ravel() @
    x.ravel())``, summed by BLAS; here pairwise, in memory order: equal to rounding)."""
    m = rng.standard_normal((37, 23))
    cases = [*VECTORS.values(), m, m.T, m[::2, ::-3], rng.standard_normal((4, 5, 6))[::2, :, ::-1], np.zeros(0)]
    for a in cases:
        check(norm, a, close=True, rel_tol=1e-13)
    for a in (np.arange(-5, 7), np.arange(12, dtype=np.int8).reshape(3, 4), np.array([True, False, True])):
        assert check(norm, a, close=True, rel_tol=1e-13) == pytest.approx(math.sqrt(np.sum(a.astype(float) ** 2)))
    check(norm, np.array([3.0, NAN]))
    check(norm, np.array([1.0, -math.inf]))
    check(norm, rng.standard_normal(50).astype(np.float32), close=True, rel_tol=1e-6)
    check(normalized, VECTORS["n100"], close=True, rel_tol=1e-13)


def test_linalg_norm_takes_the_array_alone():
    at = locate(norm_with_ord, "np.linalg.norm(a, 2)")
    err = expect_compile_error(norm_with_ord, np.ones(3), at=at, node_type=ast.Call)
    assert "np.linalg.norm() takes 1 argument here, got 2" in str(err)


# ------------------------------------------------------------------------------ np.round(x, decimals)


@aot.jit
def rounded(x, d):
    return np.round(x, d), np.around(x, d), np.round(x), np.round(x, decimals=d), np.round(x, 2), np.round(x, -1)


@aot.jit
def rounded_array(a, d):
    return a.round(d), a.round(), np.round(a * 2.0, d) + 1.0, a.round(decimals=d), np.round(a, -2)


DECIMALS = [0, 1, 2, 3, -1, -2, 15, 22, 23, 40, 308, 400, -308, -400]


def test_round_with_decimals_on_floats():
    for x in (2.675, 1.005, -0.5, 0.5, 1.5, -2.5, 123.456, 1e300, 5e-324, -0.0, 1234567.891, NAN, INF, -INF):
        for d in DECIMALS:
            check(rounded, x, d)
    for x in (np.float32(1.005), np.float32(-2.675), np.float32(3e38)):
        for d in (0, 1, 2, -1, 38, 39):
            check(rounded, x, d)


def test_round_with_decimals_on_ints():
    for x in (123, -125, 0, 15, 25, -35, 2**62 + 1, -(2**63), 2**63 - 1):
        for d in (0, 2, -1, -2, -19, -30, 400):
            check(rounded, x, d)


def test_round_with_decimals_on_arrays():
    m = np.arange(12.0).reshape(3, 4) * 1.111 - 5.0
    arrays = [
        np.array([1.25, 2.5, NAN, -3.75, INF, -0.0]),
        np.zeros(0),
        np.array([0.5]),
        m,
        m[:, ::-2],
        m.T,
        np.array([1.005, 2.675, -0.125], np.float32),
        np.array([255, 5, 15, 25, 0], np.uint8),
        np.array([2147483647, -15, 25], np.int32),
        np.arange(-20, 20, 3),
        np.array([np.iinfo(np.int64).max, np.iinfo(np.int64).min]),
    ]
    for a in arrays:
        for d in (0, 1, 2, -1, -2, 3, 20):
            check(rounded_array, a, d)


def test_round_decimals_beyond_a_c_int_raise_as_numpy():
    check(rounded, 1.5, 2**31, raises=OverflowError)
    check(rounded, 1.5, -(2**31) - 1, raises=OverflowError)
    check(rounded_array, np.ones(3), 2**40, raises=OverflowError)


@aot.jit
def round_float_decimals(x):
    return np.round(x, 1.5)


@aot.jit
def round_bool(x):
    return np.round(x > 0, 1)


@aot.jit
def round_array_decimals(x, d):
    return np.round(x, d)


def test_round_what_stays_out():
    err = expect_compile_error(
        round_float_decimals, 1.0, at=locate(round_float_decimals, "np.round(x, 1.5)"), node_type=ast.Call
    )
    assert "decimals must be an integer" in str(err)
    err = expect_compile_error(round_bool, 1.0, at=locate(round_bool, "np.round(x > 0, 1)"), node_type=ast.Call)
    assert "boolean" in str(err)
    err = expect_compile_error(
        round_array_decimals, 1.0, np.arange(3), at=locate(round_array_decimals, "np.round(x, d)"), node_type=ast.Call
    )
    assert "decimals must be an integer" in str(err)
