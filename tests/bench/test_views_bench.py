"""Slicing-heavy stencils side by side: aot (loops over views), NumPy (whole-array slice expressions),
plain Python (``.py_func``, on a smaller input) and Numba ``njit`` (when installed).

    python3 -m pytest tests/bench/test_views_bench.py --benchmark-enable      # the figures
    python3 -m pytest tests/bench/test_views_bench.py                         # quick: each runs once

Every test first checks, untimed, that each column gives NumPy's exact result on a small input.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import view_kernels as vk

IMPLS = ("aot", "numpy", "python", "numba")


def _sizes(full, python):
    return [
        pytest.param(impl, python if impl == "python" else full, id=f"{impl}-n={python if impl == 'python' else full}")
        for impl in IMPLS
    ]


def _callable(column, method, reference, impl):
    return reference if impl == "numpy" else column(method, impl)


@functools.cache
def _data(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


SMOOTH_SMALL = 100_000


@pytest.mark.benchmark(group=f"views smooth: aot/numpy/numba n=1_000_000, python n={SMOOTH_SMALL}")
@pytest.mark.parametrize("impl,n", _sizes(1_000_000, SMOOTH_SMALL))
def test_smooth(per_element, column, impl, n):
    fn = _callable(column, vk.smooth, vk.numpy_smooth, impl)
    a = _data((1000,), 1)
    expected = np.ones_like(a)
    vk.numpy_smooth(a, expected)
    out = np.ones_like(a)
    fn(a, out)
    np.testing.assert_array_equal(out, expected)
    big = _data((n,), 1)
    per_element(n, fn, big, np.empty_like(big))


LAPLACE_SMALL = 150


@pytest.mark.benchmark(group=f"views laplace: aot/numpy/numba 1000x1000, python {LAPLACE_SMALL}x{LAPLACE_SMALL}")
@pytest.mark.parametrize("impl,n", _sizes(1000, LAPLACE_SMALL))
def test_laplace(per_element, column, impl, n):
    fn = _callable(column, vk.laplace, vk.numpy_laplace, impl)
    a = _data((40, 30), 2)
    expected = np.ones_like(a)
    vk.numpy_laplace(a, expected)
    out = np.ones_like(a)
    fn(a, out)
    np.testing.assert_array_equal(out, expected)
    big = _data((n, n), 2)
    per_element(n * n, fn, big, np.empty_like(big))


SHIFT_SMALL = 100_000


@pytest.mark.benchmark(group=f"views shift a[1:] = a[:-1]: aot/numpy/numba n=1_000_000, python n={SHIFT_SMALL}")
@pytest.mark.parametrize("impl,n", _sizes(1_000_000, SHIFT_SMALL))
def test_shift(per_element, column, impl, n):
    fn = _callable(column, vk.shift, vk.numpy_shift, impl)
    a = _data((1000,), 3)
    expected = a.copy()
    vk.numpy_shift(expected)
    got = a.copy()
    fn(got)
    np.testing.assert_array_equal(got, expected)
    per_element(n, fn, _data((n,), 3).copy())
