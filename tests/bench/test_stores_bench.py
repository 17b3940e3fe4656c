"""Stores into integer arrays with NumPy's range check (``aot.codegen.casts.store_convert``), side by side with
stores that need none: 1e6 stores of i64 values into an i32 array, into an i64 array, and f64 into f64.

    python3 -m pytest tests/bench/test_stores_bench.py --benchmark-enable

Each test first checks, untimed, that aot gives plain Python's (NumPy's) result."""

from __future__ import annotations

import numpy as np
import pytest

import store_kernels

N = 1_000_000
CASES = [
    ("narrowing i64 -> i32", store_kernels.narrowing, np.int32),
    ("same width i64 -> i64", store_kernels.same_width, np.int64),
    ("same width f64 -> f64", store_kernels.same_float, np.float64),
]


@pytest.mark.benchmark(group="stores: 1e6 element stores")
@pytest.mark.parametrize("name,fn,dtype", CASES, ids=[c[0] for c in CASES])
def test_store_loop(benchmark, name, fn, dtype):
    want, got = np.zeros(1000, dtype), np.zeros(1000, dtype)
    fn.py_func(want, 1000)
    fn(got, 1000)
    assert np.array_equal(want, got)
    out = np.zeros(N, dtype)
    benchmark(fn, out, N)
    assert out[-1] == (N - 1) * 3 - N if dtype is not np.float64 else out[-1] == (N - 1) * 0.5
