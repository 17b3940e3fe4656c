"""Whole-array operations (issue #16 item 4): arithmetic, comparisons and ufuncs on arrays, broadcasting,
NumPy's result dtypes, in-place ``a op= b``.

Every compiled result is checked against the same function run as plain Python (``support.check``: the same
dtype, shape and contents, NaN- and sign-of-zero-aware; array arguments hold the same contents afterwards), on
empty, one-element, negative-stride, non-contiguous, 2-D C and Fortran arrays and NaN.
"""

import gc
import tracemalloc

import numpy as np
import pytest

import aot

try:
    from .support import check, check_raises, expect_compile_error, locate
except ImportError:  # tests/ is not a package
    from support import check, check_raises, expect_compile_error, locate

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's warnings (plain Python side)


def _1d(dtype=np.float64):
    base = np.array([3.5, -1.25, 0.0, 7.0, -0.0, 2.5, 10.0, -6.5], dtype=np.float64)
    if np.dtype(dtype).kind in "iu":
        base = np.array([3, -1, 0, 7, 5, 2, 10, -6]) % (256 if np.dtype(dtype).kind == "u" else 1000)
    return base.astype(dtype)


def arrays_1d(dtype=np.float64):
    a = _1d(dtype)
    return [a, a[:0], a[:1], a[::-1], a[::2], a[5:1:-2]]


def arrays_2d(dtype=np.float64):
    a = np.arange(-6, 6).reshape(3, 4).astype(dtype)
    return [a, np.asfortranarray(a), a.T, a[::-1, ::2], a[:0], a[1:2, 1:2]]


# ------------------------------------------------------------------------------------------ arithmetic


@aot.jit
def axpy(a, b):
    return a * 2.0 + b


@aot.jit
def arith(a, b):
    return a + b, a - b, a * b, a / b, a // b, a % b


@aot.jit
def with_scalar(a, x):
    return a + x, x - a, a * x, x / a, a**2, 2 ** (a * 0 + 1)


@aot.jit
def unary(a):
    return -a, +a, abs(a)


@aot.jit
def bitwise(a, b):
    return a & b, a | b, a ^ b, ~a


@aot.jit
def compare_all(a, b):
    return a < b, a <= b, a > b, a >= b, a == b, a != b


@aot.jit
def compare_scalar(a):
    return a > 0, 0.5 <= a, a == 2


@pytest.mark.parametrize("k", range(6))
def test_arithmetic_1d_layouts(k):
    a, b = arrays_1d()[k], arrays_1d()[k][::-1].copy() + 1.0
    check(axpy, a, b)
    check(arith, a, b)
    check(with_scalar, a, 1.5)
    check(unary, a)
    check(compare_all, a, b)
    check(compare_scalar, a)


@pytest.mark.parametrize("k", range(6))
def test_arithmetic_2d_layouts(k):
    a = arrays_2d()[k]
    b = np.ascontiguousarray(a[::-1]) * 0.5 + 3.0
    check(axpy, a, b)
    check(arith, a, b)
    check(with_scalar, a, -2.0)
    check(compare_all, a, b)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.int16, np.float32])
def test_dtypes_follow_numpy(dtype):
    a = _1d(dtype)
    b = (_1d(dtype)[::-1] + 1).astype(dtype)
    b[b == 0] = 1
    r = check(arith, a, b)
    assert [x.dtype for x in r] == [x.dtype for x in arith.py_func(a, b)]
    check(with_scalar, a, 3)
    check(compare_scalar, a)
    check(unary, a)
    if np.dtype(dtype).kind != "f":
        check(bitwise, a, b)


def test_mixed_dtypes_promote():
    check(arith, _1d(np.int32), _1d(np.float32) + 20)
    check(arith, _1d(np.int64), _1d(np.uint8) + 1)
    check(axpy, _1d(np.float32), _1d(np.float32))  # a Python float literal keeps float32
    check(axpy, _1d(np.int16), _1d(np.int8))
    check(compare_all, _1d(np.int64), _1d(np.float64))


def test_integer_division_by_zero_is_numpy_s():
    a, b = _1d(np.int64), np.array([0, 1, 0, -3, 2, 0, 1, 1])
    check(arith, a, b)  # 0 where NumPy gives 0 (with a warning), no ZeroDivisionError
    check(arith, _1d(), np.zeros(8))


def test_nan_and_infinities():
    a = np.array([np.nan, 1.0, -np.inf, np.inf, 0.0, -0.0])
    b = np.array([1.0, np.nan, np.inf, -np.inf, -0.0, 0.0])
    check(arith, a, b)
    check(compare_all, a, b)
    check(unary, a)


def test_booleans():
    m = np.array([True, False, True, False])
    n = np.array([True, True, False, False])
    check(bitwise, m, n)
    check(compare_all, m, n)
    check(with_scalar, m.astype(np.int64), 2)


@aot.jit
def bool_plus_int(m):
    return m + 1


def test_boolean_array_with_int_literal():
    check(bool_plus_int, np.array([True, False]))


@aot.jit
def negative_power(a):
    return a ** np.int64(-1)


def test_integer_power_of_negative_exponent_raises():
    check_raises(negative_power, np.arange(1, 4), exc=ValueError)


# ------------------------------------------------------------------------------------------ broadcasting


@aot.jit
def add(a, b):
    return a + b


def test_broadcasting():
    m = np.arange(12.0).reshape(3, 4)
    check(add, m, np.arange(4.0))
    check(add, np.arange(4.0), m)
    check(add, m, np.arange(3.0).reshape(3, 1))
    check(add, np.arange(3.0).reshape(3, 1), np.arange(4.0).reshape(1, 4))
    check(add, m.T, np.arange(3.0)[::-1])
    check(add, m[:0], np.arange(4.0))
    check(add, np.ones(1), np.arange(5.0))


def test_shapes_that_do_not_broadcast_raise():
    check_raises(add, np.arange(3.0), np.arange(4.0), exc=ValueError)
    check_raises(add, np.ones((2, 3)), np.ones((3, 2)), exc=ValueError)


# ------------------------------------------------------------------------------------------ ufuncs


@aot.jit
def unary_ufuncs(a):
    return (
        np.sqrt(a),
        np.exp(a),
        np.exp2(a),
        np.log(a),
        np.log2(a),
        np.log10(a),
        np.log1p(a),
        np.expm1(a),
        np.sin(a),
        np.cos(a),
        np.tan(a),
        np.arcsin(a),
        np.arccos(a),
        np.arctan(a),
        np.sinh(a),
        np.cosh(a),
        np.tanh(a),
        np.fabs(a),
        np.rint(a),
        np.floor(a),
        np.ceil(a),
        np.trunc(a),
        np.abs(a),
        np.absolute(a),
        np.sign(a),
        np.square(a),
        np.isnan(a),
        np.isinf(a),
        np.isfinite(a),
        np.signbit(a),
        np.radians(a),
        np.deg2rad(a),
        np.degrees(a),
        np.rad2deg(a),
    )


@aot.jit
def binary_ufuncs(a, b):
    return (
        np.minimum(a, b),
        np.minimum(a, 2.0),
        np.minimum(1.5, b),
        np.maximum(a, b),
        np.maximum(a, 2.0),
        np.maximum(1.5, b),
        np.fmin(a, b),
        np.fmin(a, 2.0),
        np.fmin(1.5, b),
        np.fmax(a, b),
        np.fmax(a, 2.0),
        np.fmax(1.5, b),
        np.power(a, b),
        np.power(a, 2.0),
        np.power(1.5, b),
        np.floor_divide(a, b),
        np.floor_divide(a, 2.0),
        np.floor_divide(1.5, b),
        np.remainder(a, b),
        np.remainder(a, 2.0),
        np.remainder(1.5, b),
        np.mod(a, b),
        np.mod(a, 2.0),
        np.mod(1.5, b),
        np.fmod(a, b),
        np.fmod(a, 2.0),
        np.fmod(1.5, b),
        np.divide(a, b),
        np.divide(a, 2.0),
        np.divide(1.5, b),
        np.true_divide(a, b),
        np.true_divide(a, 2.0),
        np.true_divide(1.5, b),
        np.hypot(a, b),
        np.hypot(a, 2.0),
        np.hypot(1.5, b),
        np.arctan2(a, b),
        np.arctan2(a, 2.0),
        np.arctan2(1.5, b),
        np.copysign(a, b),
        np.copysign(a, 2.0),
        np.copysign(1.5, b),
    )


def check_close(f, *args, rel_tol=1e-12):
    """Like ``check`` for results of transcendental functions, which NumPy computes with its own SIMD routines
    (the last bits may differ from the C library's): the same dtypes, shapes, NaN positions and signs, values
    within ``rel_tol``."""
    want, got = f.py_func(*args), f(*args)
    for k, (x, y) in enumerate(zip(got, want)):
        assert x.dtype == y.dtype and x.shape == y.shape, (k, x, y)
        assert np.array_equal(np.isnan(x), np.isnan(y)), (k, x, y)
        assert np.array_equal(np.signbit(x[~np.isnan(x)]), np.signbit(y[~np.isnan(y)])), (k, x, y)
        assert np.allclose(x, y, rtol=rel_tol, atol=0.0, equal_nan=True), (k, x, y)


def test_unary_ufuncs_on_arrays():
    a = np.array([0.5, -0.25, 0.0, np.nan, 2.0, -0.0, 0.75])
    check_close(unary_ufuncs, a)
    check_close(unary_ufuncs, a[::-2])
    check_close(unary_ufuncs, np.linspace(-0.9, 0.9, 12).reshape(3, 4).T)
    check_close(unary_ufuncs, np.asfortranarray(np.linspace(-0.9, 0.9, 12).reshape(3, 4)))
    check_close(unary_ufuncs, a[:0])
    check_close(unary_ufuncs, a[:1].astype(np.float32), rel_tol=1e-6)


def test_binary_ufuncs_on_arrays():
    a = np.array([0.5, -2.5, 0.0, np.nan, 3.0, -0.0, 7.25])
    b = np.array([1.5, 2.0, -3.0, 1.0, np.nan, 2.0, -0.5])
    check_close(binary_ufuncs, a, b)
    check_close(binary_ufuncs, a[::-1], b[::-1])
    check_close(binary_ufuncs, a.reshape(7, 1), b[:3])
    check_close(binary_ufuncs, a[:0], b[:0])


@aot.jit
def int_ufuncs(a):
    return np.abs(a), np.sqrt(a), np.minimum(a, 3), np.square(a), np.sign(a), np.isnan(a)


def test_ufuncs_on_integer_arrays_follow_numpy_dtypes():
    check(int_ufuncs, np.array([-3, 0, 4, 9]), close=True)
    check(int_ufuncs, np.array([-3, 0, 4, 9], dtype=np.int32), close=True)


@aot.jit
def ufunc_expression(x, y):
    return np.sqrt(x * x + y * y) - np.hypot(x, y) + np.maximum(x, 0.0) * np.exp(-np.abs(y))


def test_ufunc_expressions():
    x = np.linspace(-3, 3, 50)
    check(ufunc_expression, x, x[::-1].copy(), close=True)
    check(ufunc_expression, x.reshape(5, 10), x[:10], close=True)


# ------------------------------------------------------------------------------------------ in place


@aot.jit
def iadd(a, b):
    a += b
    return a


@aot.jit
def inplace_all(a, b):
    a += b
    a -= 1.0
    a *= b
    a /= 2.0
    return a


@aot.jit
def shift_tail(a, x):
    a[1:] -= x
    a[:2] *= 3.0
    return a


@aot.jit
def iadd_overlapping(a):
    a[1:] += a[:-1]
    return a


@aot.jit
def iadd_int(a, k):
    a += k
    a //= 2
    a %= 5
    return a


@aot.jit
def ibits(a, b, c):
    a &= b
    a |= c
    a ^= b
    return a


@aot.jit
def ipow(a, b):
    a **= b
    return a


@aot.jit
def aliased(a, b):
    c = a
    c += b
    return a


def test_inplace_writes_the_argument():
    check(iadd, np.arange(5.0), np.ones(5))
    check(iadd, np.arange(12.0).reshape(3, 4), np.arange(4.0))
    check(iadd, np.arange(12.0).reshape(3, 4).T, 2.5)
    check(inplace_all, np.arange(6.0)[::-1], np.arange(6.0) + 1)
    check(shift_tail, np.arange(6.0), 1.5)
    check(shift_tail, np.arange(12.0).reshape(3, 4), np.arange(4.0))
    check(iadd_overlapping, np.arange(8.0))
    check(iadd_int, np.arange(10), 7)
    check(iadd_int, np.arange(10, dtype=np.int32), 7)
    check(aliased, np.arange(4.0), np.ones(4))
    check(iadd, np.arange(5.0, dtype=np.float32), np.ones(5))  # f64 into f32: same kind
    check(ibits, np.arange(12).reshape(3, 4), np.array([5, 3, 12, 7]), 8)  # &= |= ^=, broadcast
    check(ibits, np.arange(6, dtype=np.uint8), np.uint8(6), np.uint8(1))
    check(ibits, np.array([True, False, True]), np.array([True, True, False]), np.array([False, False, True]))
    check(ipow, np.arange(6.0), 2.0)
    check(ipow, np.arange(6), np.array([0, 1, 2, 3, 2, 1]))
    check(ipow, np.linspace(0.5, 2.0, 4).reshape(2, 2), np.array([[1.5], [-2.0]]))


def test_inplace_that_would_grow_raises():
    check_raises(iadd, np.ones((1, 3)), np.ones((2, 3)), exc=ValueError)


@aot.jit
def float_into_int(a):
    a += 0.5
    return a


def test_inplace_float_into_int_is_a_compile_error():
    expect_compile_error(float_into_int, np.arange(3), at=locate(float_into_int, "a += 0.5"))


# ------------------------------------------------------------------------------------------ refusals


@aot.jit
def bool_sum(m, n):
    return m + n


@aot.jit
def shifted(a):
    return a << 1


@aot.jit
def truth_of_array(a):
    return not a


def test_what_stays_out_is_a_compile_error():
    m = np.array([True, False])
    expect_compile_error(bool_sum, m, m, at=locate(bool_sum, "m + n"))
    expect_compile_error(shifted, np.arange(3), at=locate(shifted, "a << 1"))
    expect_compile_error(truth_of_array, np.arange(3), at=locate(truth_of_array, "not a"))


# ------------------------------------------------------------------------------------------ memory


@aot.jit
def churn(a, n):
    s = 0.0
    for _ in range(n):
        b = a * 2.0 + a
        a = np.sqrt(b) - 1.0
        s += (a > 0).sum()
    return s


def _live_bytes():
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def test_temporaries_are_freed():
    x = np.arange(1000.0)
    churn(x, 2), check_raises(negative_power, np.arange(1, 4), exc=ValueError)
    tracemalloc.start()
    try:
        start = _live_bytes()
        for _ in range(200):
            churn(x, 5)
            with pytest.raises(ValueError):
                negative_power(np.arange(1, 1000))
            with pytest.raises(ValueError):
                add(np.ones(3), np.ones(4))
            iadd(x.copy(), x)
        grown = _live_bytes() - start
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, f"{grown} bytes still live after 200 rounds"


# ------------------------------------------------------------------------------------------ masks, index arrays


@aot.jit
def masks(a, idx):
    b = a[a > 0]
    c = a[idx]
    a[a < 0] = 0.0
    a[idx] = -1.0
    return b, c, a


@aot.jit
def mask_arithmetic(a):
    a[a > 2] -= 1.5
    a[a > 0] = a[a > 0] * 10.0
    a[np.isnan(a)] = np.arange(1.0, 2.0)
    return a


@aot.jit
def take_assign(a, idx, v):
    a[idx] = v
    return a


@pytest.mark.parametrize("k", range(6))
def test_masks_and_index_arrays(k):
    a = arrays_1d()[k]
    idx = np.array([0, -1, 0])[: len(a) and 3]
    check(masks, a, idx)
    check(mask_arithmetic, a)
    check(take_assign, a, idx, np.arange(len(idx)) * 1.5)
    check(take_assign, a, idx, np.ones(1))


@pytest.mark.parametrize("k", range(6))
def test_masks_and_index_arrays_2d(k):
    m = arrays_2d()[k]
    idx = np.array([0, -1])[: m.shape[0] and 2]
    check(masks, m, idx)
    check(mask_arithmetic, m)


def test_masks_with_nan():
    check(mask_arithmetic, np.array([np.nan, 3.0, -1.0, 0.5]))


def test_bad_selections_raise():
    check_raises(masks, np.arange(3.0), np.array([5]), exc=IndexError)
    check_raises(take_assign, np.arange(3.0), np.array([0, 1]), np.ones(3), exc=ValueError)
    check_raises(take_assign, np.arange(3.0), np.array([0, -4]), 1.0, exc=IndexError)


@aot.jit
def mask_shape(a, m):
    return a[m]


def test_mask_of_another_shape_raises():
    check_raises(mask_shape, np.arange(3.0), np.array([True, False]), exc=IndexError)


# ------------------------------------------------------------------------------------------ prange, kernels


@aot.jit(parallel=True)
def rows_in_prange(a, out):
    for i in aot.prange(a.shape[0]):
        row = a[i] * 2.0 + 1.0
        out[i] = row[0] + row[-1]
    return out


@aot.kernel
def kernel_with_array_expression(a):
    i = aot.gpu.global_id()
    b = a * 2.0
    a[i] = b[i]


def test_operators_in_prange_and_refused_in_kernels():
    a = np.arange(12.0).reshape(4, 3)
    check(rows_in_prange, a, np.zeros(4))
    with pytest.raises(aot.CompileError, match="whole-array operation"):
        kernel_with_array_expression[1, 4](np.zeros(4))


# ------------------------------------------------------------------------------------------ fused expressions


@aot.jit
def bump(a):
    a[0] = 100.0
    return 1.0


@aot.jit
def fused(a, b, m):
    return (
        a * 2.0 + b,
        np.sqrt(np.abs(a * b)) - (a > 0) * 1.5,
        (m * 2.0 + a[: m.shape[1]]) / (1.0 + m * m),
        np.where(a > 0, a * 3.0, -b),
    )


@aot.jit
def not_fused_across_a_call(a):
    return a * 2.0 + bump(a)  # (the product is made before bump writes a[0])


def test_fused_expressions_match_numpy():
    a, b = np.linspace(-2.0, 3.0, 6), np.arange(6.0)[::-1]
    m = np.arange(12.0).reshape(2, 6)
    check(fused, a, b, m)
    check(fused, a[::-1], b, np.asfortranarray(m))
    check(fused, a[:0], b[:0], m[:, :0])
    check(not_fused_across_a_call, np.arange(4.0))


def test_fused_shapes_that_do_not_broadcast_raise():
    check_raises(fused, np.ones(3), np.ones(4), np.ones((2, 3)), exc=ValueError)


@aot.jit
def plus_python_int(a, x):
    return a + x, np.minimum(a, x)


@aot.jit
def add_in_place(a, x):
    a += x
    return a


@pytest.mark.parametrize("x", [0, 1, 255, -1, 256, -129, 2**40])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint32, np.uint64])
def test_a_python_int_that_does_not_fit_an_integer_array_raises_as_in_numpy(dtype, x):
    """NumPy 2 converts a Python int beside an integer array to the array's dtype and raises OverflowError
    when it does not fit; compiled code must not wrap it instead."""
    a = np.array([0, 1, 5], dtype=dtype)
    check(plus_python_int, a, x)
    check(add_in_place, a, x)
