"""Value ranges in ``range`` loops (aot/analysis/ranges.py) and the loop versions codegen builds from them.

A loop whose ``//`` or ``%`` is proven to see a non-negative dividend once its bounds pass a run-time check
is compiled twice: a fast copy (``mul nsw nuw``, unsigned ``urem``) entered when the check passes, and the
original wrapping loop otherwise. Both must give exactly the compiled subset's results: Python's where
nothing overflows, and i64 wrap-around (SUBSET.md) where ``i * i`` does. Each behaviour test below runs
inputs on both sides of the guard.
"""

import numpy as np
import pytest

import aot
from aot.analysis.ranges import SQUARE_SAFE, Check, Fact, loop_versions
from aot.ir import parse_function

try:
    from .support import check
except ImportError:  # tests/ is not a package
    from support import check

M = SQUARE_SAFE  # 3037000499: the largest i with i * i <= 2**63 - 1


def wrap(x):
    """x as a wrapped signed 64-bit integer (what compiled int arithmetic gives)."""
    return (x + 2**63) % 2**64 - 2**63


# ======================================================================================================
# Functions under test
# ======================================================================================================


@aot.jit
def sq_mod(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s


@aot.jit
def sq_mod_between(a, b):
    s = 0
    for i in range(a, b):
        s += i * i % 7
    return s


@aot.jit
def sq_floordiv_between(a, b):
    s = 0
    for i in range(a, b):
        s += i * i // 7
    return s


@aot.jit
def sq_mod_down(a, b):
    s = 0
    for i in range(a, b, -1):
        s += i * i % 11
    return s


@aot.jit
def sq_mod_to_zero(n):
    s = 0
    for i in range(n, -1, -1):
        s += i * i % 7
    return s


@aot.jit
def sq_mod_step3(a, b):
    s = 0
    for i in range(a, b, 3):
        s += i * i % 7 + i % 5
    return s


@aot.jit
def sq_mod_any_step(a, b, c):
    s = 0
    for i in range(a, b, c):
        s += i * i % 13
    return s


@aot.jit
def mod_and_floordiv(a, b):
    s = 0
    for i in range(a, b):
        s += i % 7 + i // 7
    return s


@aot.jit
def sq_mod_until(n, limit):
    s = 0
    for i in range(n):
        if i >= limit:
            break
        s += i * i % 7
    return s


@aot.jit
def sq_mod_skipping(n):
    s = 0
    for i in range(n):
        if i % 3 == 0:
            continue
        s += i * i % 11
    else:
        s += 1000
    return s


@aot.jit
def shifted_counter(n):
    s = 0
    for i in range(n):
        i = i - 10
        s += i % 7 + i // 4
    return s


@aot.jit
def counter_as_divisor(n):
    s = 0
    for i in range(n):
        s += 1000 % (i + 1) + 1000 // (i + 1)
    return s


@aot.jit
def sq_mod_by(n, d):
    s = 0
    for i in range(n):
        s += i * i % d
    return s


@aot.jit
def outer_counter_inside(n, m):
    s = 0
    for i in range(n):
        for j in range(m):
            s += i * i % 7 + j
    return s


@aot.jit
def inner_counter_with_break(n, stop_at):
    s = 0
    for i in range(n):
        for j in range(n):
            if j == stop_at:
                break
            s += j * j % 5 - i
    return s


@aot.jit
def last_counter(n):
    i = -1
    s = 0
    for i in range(n):
        s += i * i % 7
    return s * 1000 + i


@aot.jit
def constant_bounds():
    s = 0
    for i in range(1000):
        s += i * i % 7
    return s


@aot.jit
def no_division(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def wrapped_sq_mod(values, mod):
    s = 0
    for i in values:
        s = wrap(s + wrap(i * i) % mod)
    return s


def wrapped_sq_floordiv(values, d):
    s = 0
    for i in values:
        s = wrap(s + wrap(i * i) // d)
    return s


# ======================================================================================================
# The analysis
# ======================================================================================================


def versions(f, *types):
    return loop_versions(parse_function(f.inspect_ir(*types)))


def bounds(v):
    """The guard as (variable, upper?, bound); the hidden ``$start`` copy of a bound reads as ``start``."""
    return sorted(("start" if c.var.startswith("$start") else c.var, c.upper, c.bound) for c in v.checks)


def test_counted_loop_is_versioned_on_its_stop_bound():
    (v,) = versions(sq_mod, "i64")
    assert v.checks == (Check("n", upper=True, bound=M + 1),)  # n <= M + 1, so every i <= M
    assert v.counter == (0, M)
    assert sorted(f.name for f in v.facts.values()) == ["NO_WRAP", "UNSIGNED_DIVISION"]


def test_negative_ranges_get_a_symmetric_guard():
    (v,) = versions(sq_mod_between, "i64", "i64")
    assert bounds(v) == [("b", True, M + 1), ("start", False, -M)]
    assert v.counter == (-M, M)
    assert Fact.UNSIGNED_DIVISION in v.facts.values()


def test_counting_down_to_a_constant_needs_one_check():
    (v,) = versions(sq_mod_to_zero, "i64")
    assert bounds(v) == [("start", True, M)] and v.counter == (0, M)


def test_constant_bounds_need_no_guard():
    (v,) = versions(constant_bounds)
    assert v.checks == () and v.counter == (0, 999)


def test_plain_division_of_the_counter_needs_only_a_sign_check():
    (v,) = versions(mod_and_floordiv, "i64", "i64")
    assert bounds(v) == [("start", False, 0)]
    assert list(v.facts.values()).count(Fact.UNSIGNED_DIVISION) == 2


def test_nothing_is_versioned_without_a_division_to_gain():
    assert versions(no_division, "i64") == ()
    assert versions(sq_mod_by, "i64", "i64") == ()  # the divisor may be <= 0
    assert versions(shifted_counter, "i64") == ()  # i - 10 may be negative


def test_outer_loop_is_versioned_for_a_square_inside_the_inner_loop():
    (v,) = versions(outer_counter_inside, "i64", "i64")
    assert v.checks == (Check("n", upper=True, bound=M + 1),)
    assert len(v.blocks) > 2  # the copy holds the inner loop too


def test_fast_version_uses_unsigned_remainder():
    llvm = sq_mod.inspect_llvm("i64")
    assert "urem i64" in llvm and "mul nuw nsw i64" in llvm
    assert "urem" not in no_division.inspect_llvm("i64")


# ======================================================================================================
# Behaviour: both versions agree with Python (no overflow) or with wrapped i64 arithmetic (overflow)
# ======================================================================================================


@pytest.mark.parametrize("n", [-5, 0, 1, 7, 8, 9, 1000])
def test_counted_loop_fast_path(n):
    check(sq_mod, n)


@pytest.mark.parametrize(
    "a,b", [(0, 100), (-100, 100), (-1000, -900), (M - 50, M + 1), (-M, -M + 50), (2**62, 2**62 - 10), (5, 5)]
)
def test_bounds_inside_the_guard_or_empty(a, b):
    check(sq_mod_between, a, b)
    # Squares near M are near 2**63: the sum of their // 7 wraps even though no square does.
    assert sq_floordiv_between(a, b) == wrapped_sq_floordiv(range(a, b), 7)
    if max(abs(a), abs(b)) <= 10**6:
        check(sq_floordiv_between, a, b)


@pytest.mark.parametrize(
    "a,b",
    [
        (M - 100, M + 100),
        (M + 1, M + 40),
        (-M - 100, -M + 100),
        (2**62, 2**62 + 50),
        (-(2**63), -(2**63) + 30),
        (2**63 - 30, 2**63 - 1),
    ],
)
def test_guard_fails_and_squares_wrap(a, b):
    """The slow version: i * i overflows, so % and // see negative wrapped values, exactly as i64 does."""
    assert sq_mod_between(a, b) == wrapped_sq_mod(range(a, b), 7)
    assert sq_floordiv_between(a, b) == wrapped_sq_floordiv(range(a, b), 7)


def test_guard_boundary_is_exact():
    # b = M + 1: the last i is M, whose square still fits: the fast version, and Python's result.
    check(sq_mod_between, M - 20, M + 1, expect=sum(i * i % 7 for i in range(M - 20, M + 1)))
    # One more element squares past 2**63 - 1: the slow version, and the wrapped result.
    assert wrap((M + 1) ** 2) < 0
    assert sq_mod_between(M - 20, M + 2) == wrapped_sq_mod(range(M - 20, M + 2), 7)


@pytest.mark.parametrize("a,b", [(100, -100), (10, 0), (M, M - 30), (M + 30, M - 30), (-M + 30, -M - 30)])
def test_negative_step(a, b):
    assert sq_mod_down(a, b) == wrapped_sq_mod(range(a, b, -1), 11)
    if max(abs(a), abs(b)) <= M:
        check(sq_mod_down, a, b)


@pytest.mark.parametrize("n", [-1, 0, 1, 10, 500])
def test_count_down_to_zero(n):
    check(sq_mod_to_zero, n)


def test_count_down_to_zero_from_past_the_guard():
    n = M + 25  # range(n, -1, -1) would be far too long; the guard only reads n, so check it via wrap
    assert sq_mod_down(n, M - 25) == wrapped_sq_mod(range(n, M - 25, -1), 11)


@pytest.mark.parametrize("a,b", [(0, 100), (-50, 50), (7, 8), (M - 40, M + 1), (-M - 1, -M + 60)])
def test_constant_step(a, b):
    expected = 0
    for i in range(a, b, 3):
        expected = wrap(expected + wrap(i * i) % 7 + i % 5)
    assert sq_mod_step3(a, b) == expected
    if max(abs(a), abs(b)) <= M:
        check(sq_mod_step3, a, b)


@pytest.mark.parametrize(
    "a,b,c",
    [
        (0, 100, 1),
        (0, 100, 7),
        (100, 0, -1),
        (100, -100, -9),
        (-50, 50, 4),
        (5, 5, 2),
        (M - 100, M + 100, 13),
        (M + 100, M - 100, -13),
        (-M - 100, -M + 100, 17),
        (0, 2**63 - 1, 2**61),
    ],
)
def test_step_known_only_at_run_time(a, b, c):
    assert sq_mod_any_step(a, b, c) == wrapped_sq_mod(range(a, b, c), 13)
    if max(abs(a), abs(b)) <= M:
        check(sq_mod_any_step, a, b, c)


def test_zero_step_still_raises():
    check(sq_mod_any_step, 0, 10, 0, raises=ValueError)


@pytest.mark.parametrize("a,b", [(0, 100), (-100, 100), (-100, -1), (2**63 - 50, 2**63 - 1), (-(2**63), -(2**63) + 50)])
def test_mod_and_floordiv_of_the_counter_both_signs(a, b):
    expected = 0
    for i in range(a, b):
        expected = wrap(expected + i % 7 + i // 7)
    assert mod_and_floordiv(a, b) == expected
    if max(abs(a), abs(b)) <= 10**6:
        check(mod_and_floordiv, a, b)


def test_large_stop_with_an_early_break_takes_the_slow_version():
    check(sq_mod_until, 2**62, 1000)
    check(sq_mod_until, M + 1, 1000)
    check(sq_mod_until, 500, 1000)


@pytest.mark.parametrize("n", [0, 1, 3, 4, 100])
def test_continue_and_for_else(n):
    check(sq_mod_skipping, n)


@pytest.mark.parametrize("n", [0, 5, 30])
def test_reassigned_counter_keeps_python_floor_semantics(n):
    check(shifted_counter, n)


@pytest.mark.parametrize("n", [0, 1, 50, 2000])
def test_counter_as_divisor(n):
    check(counter_as_divisor, n)


def test_runtime_divisor_keeps_its_checks_and_signs():
    check(sq_mod_by, 20, 7)
    check(sq_mod_by, 20, -7)
    check(sq_mod_by, 20, 0, raises=ZeroDivisionError)
    check(sq_mod_by, 0, 0)


@pytest.mark.parametrize("n,m", [(0, 5), (5, 0), (10, 20), (40, 3)])
def test_nested_loops(n, m):
    check(outer_counter_inside, n, m)
    check(inner_counter_with_break, n, m // 2)


def test_nested_outer_guard_fails():
    # n past the guard: the slow copy of the outer loop, its inner loop included, runs; the inner loop
    # returns after a few rounds so that the test stays short.
    assert len(versions(outer_counter_inside_until, "i64", "i64", "i64")) == 1
    check(outer_counter_inside_until, M + 10, 4, 30)
    check(outer_counter_inside_until, 20, 4, 30)  # the fast copy


@aot.jit
def outer_counter_inside_until(n, m, limit):
    s = 0
    for i in range(n):
        if i == limit:
            return s
        for j in range(m):
            s += i * i % 7 + j
    return s


@pytest.mark.parametrize("n", [0, 1, 9])
def test_loop_variable_after_the_loop(n):
    check(last_counter, n)


def test_constant_bounds():
    check(constant_bounds)


def test_results_match_numpy_int64_wrapping():
    # The documented semantics: the same values NumPy's int64 arithmetic gives.
    a, b = M - 5, M + 5
    i = np.arange(a, b, dtype=np.int64)
    with np.errstate(over="ignore"):
        squares = i * i
    assert sq_mod_between(a, b) == int(np.sum(squares % 7))
