"""argmin/argmax/min/max side by side: aot (``np.argmax(a)`` … compiled), NumPy (the same call run by the plain
function) and, when installed, Numba's njit of it.

    python3 -m pytest tests/bench/test_extremes_bench.py --benchmark-enable
    -> one group per kernel and input: 1,000,000 elements of float64, float32, int64 or bool, and every
       other element of 2,000,000 float64 (a strided view); per-element times in the summary

Random normal values put the extreme anywhere (argmin/argmax then read the array twice in aot: the extreme,
then its first index); booleans are mostly False with a True after the middle. Each test first checks,
untimed, that its column gives NumPy's exact result.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import aot

N = 1_000_000


@aot.jit
def argmax(a):
    return np.argmax(a)


@aot.jit
def argmin(a):
    return a.argmin()


@aot.jit
def maximum(a):
    return np.max(a)


@aot.jit
def minimum(a):
    return a.min()


KERNELS = {"argmax": argmax, "argmin": argmin, "max": maximum, "min": minimum}
INPUTS = ("float64", "float32", "int64", "bool", "float64[::2]")


@functools.cache
def _input(kind: str) -> np.ndarray:
    rng = np.random.default_rng(11)
    if kind == "bool":
        a = np.zeros(N, dtype=np.bool_)
        a[N // 2 + 12345] = True
        return a
    if kind == "float64[::2]":
        return rng.standard_normal(2 * N)[::2]
    if kind == "int64":
        return rng.integers(-(2**62), 2**62, N)
    return rng.standard_normal(N).astype(kind)


@pytest.mark.parametrize("impl", ["aot", "numpy", "numba"])
@pytest.mark.parametrize("kind", INPUTS)
@pytest.mark.parametrize("kernel", list(KERNELS))
def test_extreme(benchmark, per_element, column, kernel, kind, impl):
    benchmark.group = f"{kernel}: n={N:_} {kind}"
    method = KERNELS[kernel]
    fn = method.py_func if impl == "numpy" else column(method, impl)
    a = _input(kind)
    expected = method.py_func(a)
    assert fn(a) == expected and type(method(a)) is type(expected.item())
    per_element(N, fn, a)
