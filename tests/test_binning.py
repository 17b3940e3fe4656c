"""NumPy's binning functions in compiled code (SUBSET.md, "Beyond the floor"): ``np.digitize``,
``np.histogram`` and ``np.interp``, each compared with NumPy (``f.py_func``) through ``support.check``: values
and dtypes exactly, NumPy's ``ValueError`` messages, and the ``CompileError`` of what stays unsupported."""

from __future__ import annotations

import ast

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import aot

try:
    from .support import check, expect_compile_error, locate
except ImportError:  # tests/ is not a package
    from support import check, expect_compile_error, locate

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's warnings (plain Python side)

NAN = float("nan")
INF = float("inf")
_RNG = np.random.default_rng(33)


def _data(dtype: type, shape: tuple[int, ...]) -> np.ndarray:
    if np.issubdtype(dtype, np.integer):
        return _RNG.integers(-20, 20, size=shape).astype(dtype)
    return (_RNG.standard_normal(shape) * 10).astype(dtype)


# ------------------------------------------------------------------------------ np.digitize
@aot.jit
def digitize(x, bins):
    return np.digitize(x, bins)


@aot.jit
def digitize_right(x, bins):
    return np.digitize(x, bins, right=True)


@aot.jit
def digitize_positional(x, bins, right):
    return np.digitize(x, bins, right)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float64, np.float32])
@pytest.mark.parametrize("shape", [(0,), (7,), (2, 3, 2)])
def test_digitize_arrays_of_each_dtype_and_shape(dtype: type, shape: tuple[int, ...]) -> None:
    x = _data(dtype, shape)
    bins = np.array([-15.0, -4.0, 0.0, 0.0, 3.5, 12.0])
    for b in (bins, bins[::-1].copy(), bins.astype(np.int64), np.sort(_data(dtype, (5,)))):
        check(digitize, x, b)
        check(digitize_right, x, b)
        check(digitize_positional, x, b, True)
        check(digitize_positional, x, b, False)


def test_digitize_numbers_nan_strides_and_edge_cases() -> None:
    bins = np.array([1.0, 2.0, 2.0, 3.0])
    for v in (0.5, 1.0, 2.0, 2.5, 3.0, 9.0, NAN, -INF, INF, 2, -1):
        assert type(check(digitize, v, bins)) is int
        check(digitize_right, v, bins)
        check(digitize, v, bins[::-1].copy())
        check(digitize_right, v, bins[::-1].copy())
    x = np.array([NAN, 1.0, 5.0, 2.0, 2.5, -1.0, 3.0, INF])
    check(digitize, x, bins)
    check(digitize, x[::2], bins[::-1])  # (strided values, a reversed view of the bins)
    check(digitize, x.reshape(2, 4).T, bins[::2])
    check(digitize, x, np.array([], dtype=np.float64))  # (no bins: all 0)
    check(digitize, x, np.array([2.0, 2.0, 2.0]))  # (all equal: increasing)
    check(digitize_right, x, np.array([2.0]))
    check(digitize, np.arange(10), np.array([2, 5, 5, 8]))


def test_digitize_bins_that_are_not_monotonic_raise_numpy_s_error() -> None:
    for bins in (np.array([1.0, 3.0, 2.0]), np.array([3, 1, 2]), np.array([2.0, 2.0, 1.0, 3.0])):
        check(digitize, np.array([1.0, 2.0]), bins, raises=ValueError, messages=True)
    check(digitize, 1.5, np.array([1.0, 3.0, 2.0]), raises=ValueError, messages=True)


def test_digitize_refusals_say_what_to_write() -> None:
    @aot.jit
    def deep(x, bins):
        return np.digitize(x, bins)

    err = expect_compile_error(deep, 1.0, np.ones((2, 2)), at=locate(deep, "np.digitize(x, bins)"), node_type=ast.Call)
    assert "1-D" in str(err)


# ------------------------------------------------------------------------------ np.histogram
@aot.jit
def histogram(a):
    return np.histogram(a)


@aot.jit
def histogram_bins(a, bins):
    return np.histogram(a, bins)


@aot.jit
def histogram_keyword(a, bins):
    return np.histogram(a, bins=bins)


@aot.jit
def histogram_range(a, bins, lo, hi):
    return np.histogram(a, bins, range=(lo, hi))


@aot.jit
def histogram_unit(a, bins):
    return np.histogram(a, bins, (0.0, 1.0))


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.float64, np.float32])
@pytest.mark.parametrize("shape", [(0,), (9,), (3, 2, 4)])
def test_histogram_of_each_dtype_and_shape(dtype: type, shape: tuple[int, ...]) -> None:
    a = _data(dtype, shape) if dtype is not np.uint8 else _RNG.integers(0, 255, size=shape).astype(np.uint8)
    check(histogram, a)
    for bins in (1, 3, 7, 50):
        check(histogram_bins, a, bins)
        check(histogram_keyword, a, bins)
        check(histogram_range, a, bins, -5.0, 6.5)
        check(histogram_range, a, bins, -5, 6)
        check(histogram_unit, a, bins)
    edges = np.array([-12.0, -3.0, 0.0, 0.0, 4.5, 15.0])
    for e in (edges, edges.astype(np.int64), edges.astype(np.float32), edges[::2]):
        check(histogram_bins, a, e)


def test_histogram_edges_the_last_bin_closed_and_values_outside_ignored() -> None:
    a = np.array([0.0, 0.25, 0.5, 1.0, 1.0, -0.5, 2.0, 0.75])
    check(histogram_unit, a, 4)
    check(histogram_range, a, 4, 0.25, 1.0)
    check(histogram_range, a, 3, 0.5, 0.5)  # (an empty range: ±0.5)
    check(histogram_bins, a, np.array([0.0, 0.5, 1.0]))
    check(histogram_bins, a, np.array([0.0, 1.0, 1.0, 2.0]))  # (a repeated edge: an empty bin)
    check(histogram_bins, a, np.array([1.0]))  # (one edge: no bins)
    check(histogram_bins, a, np.array([], dtype=np.float64))
    check(histogram_bins, np.arange(4), np.array([0.0, 1.0, 1.0, 3.0]))
    check(histogram_bins, np.arange(30.0).reshape(5, 6)[::2, ::3], 4)  # (strided)
    check(histogram_bins, np.arange(30.0)[::-3], np.array([2.0, 9.5, 20.0, 27.0]))
    check(histogram, np.full(5, 3.0))  # (a constant array: (x - 0.5, x + 0.5))
    check(histogram, np.full(5, 3, dtype=np.int32))
    check(histogram, np.full(5, 3.0, dtype=np.float32))
    check(histogram, np.array([], dtype=np.float32))
    check(histogram_bins, np.linspace(0, 1, 101, dtype=np.float32), 7)
    check(histogram_bins, np.linspace(-1e300, 1e300, 11), 3)


def test_histogram_nan() -> None:
    a = np.array([1.0, NAN, 2.0, 0.5])
    check(histogram, a, raises=ValueError, messages=True)  # (autodetected range of [nan, nan] is not finite)
    check(histogram, a.astype(np.float32), raises=ValueError, messages=True)
    check(histogram_unit, a, 4)  # (NaN is outside any range)
    check(histogram_bins, a, np.array([0.0, 1.5, 3.0]))  # (and in no bin of given edges)


def test_histogram_errors_are_numpy_s() -> None:
    a = np.array([1.0, 2.0, 3.0])
    for bad in (np.array([1.0, INF]), np.array([-INF, 1.0]), np.array([INF, INF])):
        check(histogram, bad, raises=ValueError, messages=True)
    check(histogram_bins, a, 0, raises=ValueError, messages=True)
    check(histogram_bins, a, -3, raises=ValueError, messages=True)
    check(histogram_bins, a, np.array([1.0, 3.0, 2.0]), raises=ValueError, messages=True)
    check(histogram_bins, a, np.array([3, 1]), raises=ValueError, messages=True)
    check(histogram_range, a, 3, 2.0, 1.0, raises=ValueError, messages=True)
    check(histogram_range, a, 3, 0.0, INF, raises=ValueError, messages=True)
    check(histogram_range, a, 3, NAN, 1.0, raises=ValueError, messages=True)
    check(histogram_range, a, 3, -INF, 2.5, raises=ValueError, messages=True)
    check(histogram_range, a, 3, 0, 7)
    huge = np.array([3e38, -3e38], dtype=np.float32)  # (f32 edges that overflow: too many bins)
    check(histogram_bins, huge, 3, raises=ValueError, messages=True)
    check(histogram_range, a, 4, 1.0, 1.0 + 2.2e-16, raises=ValueError, messages=True)


def test_histogram_refusals_say_what_to_write() -> None:
    @aot.jit
    def weighted(a, w):
        return np.histogram(a, 5, weights=w)

    @aot.jit
    def dense(a):
        return np.histogram(a, 5, density=True)

    @aot.jit
    def float_bins(a):
        return np.histogram(a, 2.5)

    a = np.arange(5.0)
    err = expect_compile_error(weighted, a, a, at=locate(weighted, "np.histogram("), node_type=ast.Call)
    assert "weights= and density= are not supported" in str(err)
    err = expect_compile_error(dense, a, at=locate(dense, "np.histogram("), node_type=ast.Call)
    assert "weights= and density= are not supported" in str(err)
    err = expect_compile_error(float_bins, a, at=locate(float_bins, "np.histogram("), node_type=ast.Call)
    assert "`bins` must be an integer or an array" in str(err)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-1e6, 1e6, allow_nan=False), max_size=40),
    st.integers(1, 40),
    st.floats(-1e3, 1e3),
    st.floats(0, 1e3),
)
def test_histogram_hypothesis(values: list[float], bins: int, lo: float, width: float) -> None:
    a = np.array(values, dtype=np.float64)
    if values:
        check(histogram_bins, a, bins)
        check(histogram_bins, a.astype(np.float32), bins)
    check(histogram_range, a, bins, lo, lo + width)
    check(histogram_bins, a, np.sort(a))


# ------------------------------------------------------------------------------ np.interp
@aot.jit
def interp(x, xp, fp):
    return np.interp(x, xp, fp)


@aot.jit
def interp_left_right(x, xp, fp, lo, hi):
    return np.interp(x, xp, fp, lo, hi)


@aot.jit
def interp_right(x, xp, fp, hi):
    return np.interp(x, xp, fp, right=hi)


@aot.jit
def interp_left(x, xp, fp, lo):
    return np.interp(x, xp, fp, left=lo)


@aot.jit
def interp_none(x, xp, fp):
    return np.interp(x, xp, fp, left=None, right=None)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float64, np.float32])
@pytest.mark.parametrize("shape", [(0,), (8,), (2, 2, 3)])
def test_interp_arrays_of_each_dtype_and_shape(dtype: type, shape: tuple[int, ...]) -> None:
    x = _data(dtype, shape)
    xp = np.sort(_data(dtype, (6,)))
    fp = _data(dtype, (6,))
    check(interp, x, xp, fp)
    check(interp, x, xp.astype(np.float64), fp.astype(np.float32))
    check(interp_left_right, x, xp, fp, -100.0, 100)
    check(interp_right, x, xp, fp, 7.5)
    check(interp_left, x, xp, fp, -7)
    check(interp_none, x, xp, fp)


def test_interp_numbers_samples_nan_and_strides() -> None:
    xp = np.array([0.0, 1.0, 1.0, 2.5, 4.0])
    fp = np.array([1.0, 3.0, 5.0, -2.0, 0.1])
    for v in (-1.0, 0.0, 0.3, 1.0, 2.5, 3.1, 4.0, 5.0, NAN, INF, -INF, 2):
        assert type(check(interp, v, xp, fp)) is float
        check(interp_left_right, v, xp, fp, NAN, -1.0)
        check(interp_right, v, xp, fp, 9.0)
    x = np.linspace(-1, 5, 25)
    check(interp, x, xp, fp)  # (exact at the samples: fp itself)
    check(interp, x.reshape(5, 5).T, xp, fp)
    check(interp, x[::3], xp[::2], fp[::2])
    check(interp, xp, xp, fp)
    check(interp, np.array([0.5, NAN, 2.0]), np.array([1.0]), np.array([7.0]))  # (one sample)
    check(interp_left_right, np.array([0.5, 1.0, 2.0, NAN]), np.array([1.0]), np.array([7.0]), -1.0, 9.0)
    check(interp, np.array([0.5, 1.5]), np.array([0.0, 1.0, 2.0]), np.array([INF, 1.0, -INF]))  # (NaN retried)
    check(interp, np.array([0.5, 1.5]), np.array([0.0, 1.0, 2.0]), np.array([INF, INF, 1.0]))
    check(interp, 0.5, np.array([0.0, INF]), np.array([0.0, 1.0]))
    check(interp, np.array([1e-300, 0.1, 0.7]), np.array([0.0, 1e-310, 1.0]), np.array([3.0, 4.0, 5.0]))


def test_interp_errors_are_numpy_s() -> None:
    empty = np.array([], dtype=np.float64)
    check(interp, 1.0, empty, empty, raises=ValueError, messages=True)
    check(interp, np.array([], dtype=np.float64), empty, empty, raises=ValueError, messages=True)
    check(interp, 1.0, np.array([1.0, 2.0]), np.array([1.0]), raises=ValueError, messages=True)
    check(interp, np.ones(3), np.array([1.0, 2.0]), np.array([1.0, 2.0, 3.0]), raises=ValueError, messages=True)


def test_interp_refusals_say_what_to_write() -> None:
    @aot.jit
    def deep(x, xp):
        return np.interp(x, xp, xp)

    @aot.jit
    def array_left(x, xp):
        return np.interp(x, xp, xp, left=xp)

    err = expect_compile_error(deep, 1.0, np.ones((2, 2)), at=locate(deep, "np.interp("), node_type=ast.Call)
    assert "1-D" in str(err)
    err = expect_compile_error(array_left, 1.0, np.ones(2), at=locate(array_left, "np.interp("), node_type=ast.Call)
    assert "left= must be a number or None" in str(err)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=12),
    st.lists(st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False), min_size=12, max_size=12),
    st.lists(st.floats(-2e6, 2e6), max_size=20),
)
def test_interp_hypothesis(xp: list[float], fp: list[float], x: list[float]) -> None:
    samples = np.sort(np.array(xp))
    check(interp, np.array(x), samples, np.array(fp[: len(xp)]))
    for v in x[:3]:
        check(interp, v, samples, np.array(fp[: len(xp)]))
