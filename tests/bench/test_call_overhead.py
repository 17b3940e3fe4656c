"""Cost of one call from Python: aot's ``add_one(x) = x + 1.0`` against a C builtin (``math.fabs``),
the plain Python function and, when installed, Numba's njit of it; and of calls of ``add_tol(x, *, tol)``
with its keyword-only parameter left out or passed by keyword (bound natively: ``aot_bind``).

    python3 -m pytest tests/bench/test_call_overhead.py --benchmark-enable
    -> group "call overhead: 1000 calls per round"; the per-element table gives the time per call

Each round calls the function 1000 times from a Python loop, so the figures include the loop's own
cost (the same for every column); ``math.fabs`` shows what a call into C costs at best.
"""

from __future__ import annotations

import math

import pytest

import kernels

CALLS = 1000
XS = [float(i) * 0.5 - 100.0 for i in range(CALLS)]


def call_loop(fn, xs):
    for x in xs:
        fn(x)


def _column(column, impl):
    if impl == "math.fabs":
        return math.fabs
    return column(kernels.add_one, impl)


@pytest.mark.benchmark(group=f"call overhead: {CALLS} calls per round")
@pytest.mark.parametrize("impl", ["aot", "math.fabs", "python", "numba"])
def test_call_overhead(per_element, column, impl):
    fn = _column(column, impl)
    fn(1.5)  # compile / warm up outside the timing
    if impl != "math.fabs":
        assert fn(1.5) == 2.5
    per_element(CALLS, call_loop, fn, XS)


def default_loop(fn, xs):
    for x in xs:
        fn(x)


def keyword_loop(fn, xs):
    for x in xs:
        fn(x, tol=0.5)


@pytest.mark.benchmark(group=f"keyword-only calls: {CALLS} calls per round")
@pytest.mark.parametrize("shape", ["default", "keyword"])
@pytest.mark.parametrize("impl", ["aot", "python"])  # (Numba's njit takes no keyword-only parameters)
def test_keyword_only_call_overhead(per_element, column, impl, shape):
    fn = column(kernels.add_tol, impl)
    assert fn(1.5) == 1.5 + 1e-8 and fn(1.5, tol=0.5) == 2.0  # (compiled, and bound once each way)
    per_element(CALLS, keyword_loop if shape == "keyword" else default_loop, fn, XS)


def test_call_results():
    """Not timed: the compiled function gives Python's answers, types included."""
    f = kernels.add_one
    for x in XS[:50] + [0.0, -0.0, -1.0, 1e308, -math.inf, math.inf, 5e-324]:
        got, want = f(x), f.py_func(x)
        assert type(got) is float and got == want and math.copysign(1.0, got) == math.copysign(1.0, want), x
    assert math.isnan(f(math.nan))
    got = f(2)  # an int argument: another specialization, float result
    assert type(got) is float and got == 3.0
