"""Recursion guarded against overflow (``aot.codegen.recursion``): what the guard costs where it costs most.

    python3 -m pytest tests/bench/test_recursion_bench.py --benchmark-enable
    -> group "recursion: fib": aot's fib(25) against plain Python's fib(20), per call made
    -> group "recursion: halves": divide and conquer over views of 2**16 f64 (frames holding arrays)

``fib`` does almost nothing but call itself, so its column shows the guard's whole cost per call (a depth and
a guard passed along, two compares); ``halves`` is closer to real recursive code. For the before/after figure,
run the same benchmark at the commit before the guard. The plain Python columns are functions of their own
(``.py_func`` of a recursive method calls the compiled method by its global name). There is no Numba column:
Numba's recursion has no guard (a deep one crashes the process), and it compiles a recursive function only
through its own dispatcher's name.
"""

from __future__ import annotations

import numpy as np
import pytest

import kernels


def _calls(n: int) -> int:
    """Calls of fib made by fib(n)."""
    a, b = 1, 1
    for _ in range(n):
        a, b = b, a + b + 1
    return a


def fib_plain(n: int) -> int:
    if n < 2:
        return n
    return fib_plain(n - 1) + fib_plain(n - 2)


def halves_plain(a) -> float:
    if len(a) <= 8:
        s = 0.0
        for i in range(len(a)):
            s += a[i]
        return s
    m = len(a) // 2
    return halves_plain(a[:m]) + halves_plain(a[m:])


@pytest.mark.benchmark(group="recursion: fib")
@pytest.mark.parametrize(("impl", "n"), [("aot", 25), ("python", 20)])
def test_fib(per_element, impl, n):
    fn = kernels.fib if impl == "aot" else fib_plain
    assert fn(20) == 6765
    per_element(_calls(n), fn, n)


@pytest.mark.benchmark(group="recursion: halves, 2**16 f64")
@pytest.mark.parametrize("impl", ["aot", "python"])
def test_halves(per_element, impl):
    fn = kernels.halves if impl == "aot" else halves_plain
    a = np.arange(2.0**16)
    assert kernels.halves(a[:100]) == halves_plain(a[:100])
    per_element(len(a), fn, a)
