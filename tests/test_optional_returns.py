"""Functions that return ``None`` on some paths and a value on others (SUBSET.md, "Calls": ``None`` and
optional values), and ``x == None`` / ``x != None``. Results from Python are ``None`` or the value, as
``f.py_func`` gives them; compiled callers get an optional value (``i64?``) they narrow with ``is None``,
``is not None``, ``== None`` or ``!= None``; a use that no test narrows is a located ``CompileError``.
"""

import gc
import math
import tracemalloc

import numpy as np
import pytest

import aot

try:
    from .support import check, compile_error, expect_compile_error, locate
except ImportError:  # tests/ is not a package
    from support import check, compile_error, expect_compile_error, locate


def _arrays():
    """Empty, one element, several, a negative-stride view, NaN and a 2-D row."""
    base = np.array([3.0, -1.0, 2.5, math.nan, 2.5, 7.0])
    return [np.zeros(0), np.array([2.5]), base, base[::-1], base[::-2], np.array([[1.0, 2.5], [2.5, 0.0]])[1]]


# ------------------------------------------------------------------------------------- from Python


@aot.jit
def find(a, x):
    for i in range(len(a)):
        if a[i] == x:
            return i
    return None


@pytest.mark.parametrize("a", _arrays(), ids=["empty", "one", "several", "reversed", "strided", "row"])
@pytest.mark.parametrize("x", [2.5, -1.0, 9.0, math.nan])
def test_a_search_returns_the_index_or_none(a, x):
    check(find, a, x)


def test_the_return_type_is_optional():
    text = find.inspect_ir("f64[:]", "f64")
    assert "-> i64?" in text.splitlines()[0]


@aot.jit
def falls_off_the_end(x):
    if x > 0:
        return x * 2


@aot.jit
def bare_return(x):
    if x < 0:
        return
    return math.sqrt(x)


@aot.jit
def none_first(n):
    if n == 0:
        return None
    return n - 1


@pytest.mark.parametrize("x", [3, -2, 0, 2.5, -0.0, math.inf, math.nan])
def test_every_path_to_none(x):
    check(falls_off_the_end, x)
    check(bare_return, float(x))
    if not isinstance(x, float):
        check(none_first, x)


@aot.jit
def int_bool_or_none(x):
    if x > 1:
        return x > 2
    if x < -1:
        return None
    return True


@aot.jit
def largest_below(a, limit):
    best = None
    for v in a:
        if v < limit and (best is None or v > best):
            best = v
    return best  # (an optional local returned as it is)


@pytest.mark.parametrize("a", _arrays(), ids=["empty", "one", "several", "reversed", "strided", "row"])
def test_an_optional_local_returned_unnarrowed(a):
    check(largest_below, a, 2.6)
    check(largest_below, a, -5.0)


def test_a_boolean_or_none():
    for x in (3, 2, 0, -5):
        check(int_bool_or_none, x)


@aot.jit
def pair_or_none(x, n):
    if n <= 0:
        return None
    return (x * n, n)


@pytest.mark.parametrize("n", [-1, 0, 1, 4])
def test_a_tuple_or_none(n):
    check(pair_or_none, 1.5, n)


@aot.jit
def evens_or_none(n):
    if n < 0:
        return None
    return np.arange(n) * 2.0


@aot.jit
def tail_or_none(a):
    if len(a) == 0:
        return None
    return a[1:]


@pytest.mark.parametrize("n", [-3, 0, 1, 5])
def test_a_new_array_or_none(n):
    check(evens_or_none, n)


@pytest.mark.parametrize("a", _arrays()[:5], ids=["empty", "one", "several", "reversed", "strided"])
def test_a_view_of_the_argument_or_none(a):
    check(tail_or_none, a)
    got = tail_or_none(a)
    if got is not None and got.size:  # (an empty view shares no memory)
        assert np.shares_memory(got, a)


# ------------------------------------------------------------------------------------- compiled callers


@aot.jit
def index_or_minus_one(a, x):
    i = find(a, x)
    if i is None:
        return -1
    return i * 10


@aot.jit
def count_found(a, xs):
    n = 0
    for x in xs:
        if find(a, x) is not None:
            n += 1
    return n


@aot.jit
def passes_it_on(a, x):
    return find(a, x)


@aot.jit
def narrowed_by_equality(a, x):
    i = find(a, x)
    if i == None:  # noqa: E711  (what the test is about)
        return -1.0
    return i + 0.5


@aot.jit
def narrowed_by_inequality(a, x):
    i = find(a, x)
    if i != None and i > 0:  # noqa: E711
        return i
    return 0


@pytest.mark.parametrize("a", _arrays(), ids=["empty", "one", "several", "reversed", "strided", "row"])
@pytest.mark.parametrize("x", [2.5, 3.0, math.nan])
def test_callers_narrow_the_result(a, x):
    check(index_or_minus_one, a, x)
    check(passes_it_on, a, x)
    check(narrowed_by_equality, a, x)
    check(narrowed_by_inequality, a, x)


def test_a_caller_counting_found_values():
    check(count_found, np.array([1.0, 2.0, 3.0]), np.array([2.0, 5.0, 3.0, math.nan]))
    check(count_found, np.zeros(0), np.array([1.0]))


@aot.jit
def total_or_minus_one(n):
    r = evens_or_none(n)
    if r is not None:
        return r.sum()
    return -1.0


@aot.jit
def keeps_the_array(n):
    r = evens_or_none(n)
    scratch = np.ones(1000)  # (allocated after r: reuses r's memory if r was freed too early)
    if r is None:
        return scratch[:0]
    return r


def test_an_array_or_none_in_a_compiled_caller():
    for n in (-1, 0, 3, 100):
        check(total_or_minus_one, n)
        check(keeps_the_array, n)


def _live_bytes():
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def test_arrays_returned_as_optionals_are_freed():
    keeps_the_array(5), total_or_minus_one(5), evens_or_none(5)
    tracemalloc.start()
    try:
        start = _live_bytes()
        for _ in range(200):
            keeps_the_array(500)
            keeps_the_array(-1)
            total_or_minus_one(500)
            evens_or_none(500)
        grown = _live_bytes() - start
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, f"{grown} bytes still live after 200 rounds"


@aot.jit
def zeros_if_none(n):
    out = evens_or_none(n)
    if out is None:
        out = np.zeros(3)  # (then an array on every path: narrowed from here)
    return out.sum() + len(out)


@aot.jit
def unpacks_the_pair(x, n):
    r = pair_or_none(x, n)
    if r is not None:
        a, b = r
        return a + b
    return 0.0


@aot.jit
def skips_nones(a):
    total = 0.0
    for i in range(len(a)):
        r = pair_or_none(a[i], i)
        if r is None:
            continue
        total += r[0] * r[1]
    return total


def test_callers_of_array_and_tuple_results():
    for n in (-1, 0, 4):
        check(zeros_if_none, n)
        check(unpacks_the_pair, 1.5, n)
    for a in _arrays()[:5]:
        check(skips_nones, a)


@aot.jit
def bsearch(a, x, lo, hi):
    if lo >= hi:
        return None
    mid = (lo + hi) // 2
    if a[mid] == x:
        return mid
    if a[mid] < x:
        return bsearch(a, x, mid + 1, hi)
    return bsearch(a, x, lo, mid)


@pytest.mark.parametrize("x", [-4.0, 0.0, 3.0, 9.0, 10.0, math.nan])
def test_a_recursive_function_returning_none_or_a_value(x):
    a = np.arange(-4.0, 10.0)
    check(bsearch, a, x, 0, len(a))
    check(bsearch, a[:0], x, 0, 0)


@aot.jit(signatures=["i64?(f64[:], f64)"])
def declared_find(a, x):
    for i in range(len(a)):
        if a[i] == x:
            return i
    return None


def test_a_declared_optional_return_type():
    a = np.array([1.0, 2.0])
    assert declared_find(a, 2.0) == 1 and declared_find(a, 3.0) is None
    assert declared_find(a[::-1], 1.0) == 1


# ------------------------------------------------------------------------------------- used without a test


@aot.jit
def adds_to_it(a, x):
    return find(a, x) + 1


@aot.jit
def multiplies_two(a, x, y):
    return find(a, x) * find(a, y)


@aot.jit
def negates_it(a, x):
    return -find(a, x)


@aot.jit
def compares_it(a, x, limit):
    return find(a, x) >= limit


@aot.jit
def sums_found(a, xs):
    s = 0
    for x in xs:
        s += find(a, x)  # (raises at the first x not in a, as Python does)
    return s


@aot.jit
def scaled_power(x, flag):
    e = None
    if flag:
        e = 2
    return np.float32(x) ** e


@pytest.mark.parametrize("x", [2.0, 3.0, math.nan])
def test_arithmetic_on_the_result_raises_pythons_type_error_on_none(x):
    a = np.array([1.0, 2.0, -0.0])
    check(adds_to_it, a, x, messages=True)
    check(negates_it, a, x, messages=True)
    check(compares_it, a, x, 1, messages=True)
    check(compares_it, a, x, 0.5, messages=True)
    for y in (2.0, 3.0, math.nan):
        check(multiplies_two, a, x, y, messages=True)  # ('NoneType' on either side, or both)
    check(adds_to_it, a[:0], x, raises=TypeError, messages=True)


def test_the_type_error_names_pythons_types():
    check(sums_found, np.array([1.0, 2.0]), np.array([2.0, 1.0]))
    check(sums_found, np.array([1.0, 2.0]), np.array([2.0, 7.0, 1.0]), raises=TypeError, messages=True)
    check(scaled_power, 3.0, True)
    check(scaled_power, 3.0, False, raises=TypeError, messages=True)  # (NumPy's float32 is a 'float' there)


@aot.jit
def equals(a, x, k):
    return (find(a, x) == k, find(a, x) != k, k == find(a, x), find(a, x) == find(a, k))


@aot.jit
def truth_of_it(a, x):
    n = 0
    if find(a, x):  # (None and 0 are false)
        n += 1
    if not find(a, x):
        n += 10
    return n


@aot.jit
def or_default(a, x):
    return find(a, x) or -1


@pytest.mark.parametrize("x", [1.0, 2.0, 9.0, math.nan])
def test_equality_and_truth_give_pythons_answers_for_none(x):
    a = np.array([1.0, 2.0, 3.0])
    for k in (0, 1, 9):
        check(equals, a, x, k)
    check(equals, a[:0], x, 1)  # (None == None)
    check(truth_of_it, a, x)
    check(or_default, a, x)


# ------------------------------------------------------------------------------------- what stays an error


@aot.jit
def indexes_with_it(a, x):
    i = find(a, x)
    return a[i]


@aot.jit
def float_or_tuple(x):
    if x > 0:
        return x
    return (x, x)


@aot.jit
def list_or_none(n):
    if n < 0:
        return None
    return [float(n)]


def test_indexing_with_the_result_without_a_test_is_a_compile_error():
    a = np.array([1.0, 2.0])
    err = expect_compile_error(indexes_with_it, a, 2.0, at=locate(indexes_with_it, "a[i]"))
    assert "'i' may be None here" in str(err) and "i64?" in str(err) and "if i is None" in str(err)
    assert indexes_with_it.py_func(a, 2.0) == 2.0


def test_two_different_values_stay_an_error():
    err = expect_compile_error(float_or_tuple, 1.0, at=locate(float_or_tuple, "return (x, x)"))
    assert "returns (f64, f64), but another return gives f64" in str(err)


def test_a_list_or_none_is_a_compile_error():
    err = compile_error(list_or_none, 2)
    assert "none" in str(err) and "list[f64]" in str(err)


# ------------------------------------------------------------------------------------- x == None


@aot.jit
def tolerance_eq(x, tol=None):
    if tol == None:  # noqa: E711
        tol = 1e-8
    return x + tol


@aot.jit
def compares_values_with_none(x, a):
    return (x == None, None != x, x != None, None == None, a.shape == None, 1 < x != None)  # noqa: E711


@aot.jit
def out_ne_none(a, out=None):
    s = 0.0
    for i in range(len(a)):
        s += a[i]
        if out != None:  # noqa: E711
            out[i] = s
    return s


@aot.jit
def array_eq_none(a):
    return a == None  # noqa: E711


@aot.jit
def none_ne_array(a):
    if None != a:  # noqa: E711
        return 1
    return 0


def test_eq_none_narrows_as_is_none():
    for args in ((1.0,), (1.0, 0.5), (1.0, None), (-2, 3)):
        check(tolerance_eq, *args)
    text = tolerance_eq.inspect_ir("f64", "none")
    assert "intrinsic is_none" in text and "eq_none" not in text  # (typed IR holds the 'is None' test)


@pytest.mark.parametrize("x", [0.0, -1.5, math.nan, 3])
def test_eq_none_on_values_that_are_never_none_is_false(x):
    check(compares_values_with_none, x, np.zeros(2))


def test_ne_none_when_the_array_is_left_out():
    for a in (np.zeros(0), np.array([1.0]), np.arange(5.0)[::-1]):
        check(out_ne_none, a)
        check(out_ne_none, a, None)


def test_eq_none_on_an_array_is_a_compile_error_saying_to_use_is():
    err = expect_compile_error(array_eq_none, np.zeros(3), at=locate(array_eq_none, "a == None"))
    assert "element by element" in str(err) and "'a is None'" in str(err)
    err = expect_compile_error(none_ne_array, np.zeros(3), at=locate(none_ne_array, "None != a"))
    assert "'a is not None'" in str(err)
    err = expect_compile_error(out_ne_none, np.zeros(3), np.zeros(3), at=locate(out_ne_none, "out != None"))
    assert "'out is not None'" in str(err)
    check(none_ne_array, None)  # (None itself: no array, so nothing to refuse)
