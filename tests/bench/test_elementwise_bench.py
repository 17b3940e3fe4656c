"""Whole-array expressions side by side: aot (``a * 2.0 + b`` compiled), NumPy (the same expression run by the
plain function) and, when installed, Numba's njit of it.

    python3 -m pytest tests/bench/test_elementwise_bench.py --benchmark-enable
    -> group "a * 2.0 + b": 1,000,000 float64 values, two new arrays per call in every column

Each test first checks, untimed, that each column gives NumPy's exact result.
"""

from __future__ import annotations

import numpy as np
import pytest

import aot

N = 1_000_000


@aot.jit
def axpy(a, b):
    return a * 2.0 + b


@pytest.mark.benchmark(group=f"a * 2.0 + b: n={N:_} float64")
@pytest.mark.parametrize("impl", ["aot", "numpy", "numba"])
def test_axpy(per_element, column, impl):
    fn = axpy.py_func if impl == "numpy" else column(axpy, impl)
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal(N), rng.standard_normal(N)
    np.testing.assert_array_equal(fn(a[:1000], b[:1000]), axpy.py_func(a[:1000], b[:1000]))
    per_element(N, fn, a, b)


@aot.jit
def column_means(m):
    return m.mean(axis=0)


@aot.jit
def row_sums(m):
    return m.sum(axis=1)


ROWS, COLS = 1000, 1000


@pytest.mark.benchmark(group=f"reductions with axis=: {ROWS}x{COLS} float64")
@pytest.mark.parametrize("impl", ["aot", "numpy", "numba"])
@pytest.mark.parametrize("kernel", ["mean axis=0", "sum axis=1"])
def test_axis_reduction(per_element, column, impl, kernel):
    method = column_means if kernel == "mean axis=0" else row_sums
    fn = method.py_func if impl == "numpy" else column(method, impl)
    m = np.random.default_rng(8).standard_normal((ROWS, COLS))
    np.testing.assert_allclose(fn(m[:50, :40]), method.py_func(m[:50, :40]), rtol=1e-12)
    per_element(ROWS * COLS, fn, m)
