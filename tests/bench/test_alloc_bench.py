"""Arrays owned by compiled code: allocating in a loop, and returning a new array to Python, side by side with
NumPy (the plain function, which calls NumPy from Python) and, when installed, Numba's njit of it.

    python3 -m pytest tests/bench/test_alloc_bench.py --benchmark-enable
    -> group "allocation in a loop": np.zeros(64) + a write + a read, ROUNDS times inside one call
    -> group "returning a new array": one call from Python giving a fresh array of N float64 values
    -> group "views in a loop": two views of an array compiled code owns per round (each counts its block:
       plain counts, which LLVM folds away, outside prange bodies; atomic ones in them)

The per-element table gives the time per allocation (per round) and per returned element.
"""

from __future__ import annotations

import numpy as np
import pytest

import aot

ROUNDS = 10_000
SIZE = 64
N = 1000
CALLS = 200


@aot.jit
def alloc_loop(n, rounds):
    total = 0.0
    for r in range(rounds):
        a = np.zeros(n)
        a[r % n] = 1.0
        b = a.copy()
        total += b[r % n]
    return total


@aot.jit
def view_loop(m, rounds):
    base = np.ones((16, m))  # (owned by compiled code: every view made of it counts its block)
    s = 0.0
    for r in range(rounds):
        v = base[r % 16]
        w = v[1:]
        s += w[0] + v[0]
    return s


@aot.jit
def ramp(n):
    return np.linspace(0.0, 1.0, n)


def call_many(fn, n, calls):
    for _ in range(calls):
        fn(n)


@pytest.mark.benchmark(group=f"allocation in a loop: np.zeros({SIZE}) + copy, {ROUNDS} rounds per call")
@pytest.mark.parametrize("impl", ["aot", "python", "numba"])
def test_alloc_loop(per_element, column, impl):
    fn = column(alloc_loop, impl)
    assert fn(SIZE, 10) == 10.0  # compile / warm up outside the timing
    per_element(ROUNDS, fn, SIZE, ROUNDS)


@pytest.mark.benchmark(group=f"returning a new array: linspace of {N} values, {CALLS} calls per round")
@pytest.mark.parametrize("impl", ["aot", "python", "numba"])
def test_return_new_array(per_element, column, impl):
    fn = column(ramp, impl)
    assert np.array_equal(fn(N), np.linspace(0.0, 1.0, N))
    per_element(N * CALLS, call_many, fn, N, CALLS)


@pytest.mark.benchmark(group=f"views in a loop: base[r % 16] and a slice of it, {ROUNDS} rounds per call")
@pytest.mark.parametrize("impl", ["aot", "python", "numba"])
def test_views_in_a_loop(per_element, column, impl):
    fn = column(view_loop, impl)
    assert fn(SIZE, 10) == 20.0
    per_element(ROUNDS, fn, SIZE, ROUNDS)
