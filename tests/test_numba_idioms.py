"""Constructs that real Numba code writes and that a survey of public packages found missing: ``np.searchsorted``
of an array of values, ``np.diff``, iteration over ``a.flat``, ``==``/``!=`` between tuples, ``a.fill(v)`` (and
in-place writes refusing read-only buffers), the NaN-ignoring reductions (``np.nansum`` …), ``lst.reverse()``,
``np.concatenate``, ``np.nonzero``/``np.where(c)``/``np.count_nonzero``, ``np.cumprod``, ``np.unique`` and
``np.bincount``.

Every compiled result is checked against the same function run as plain Python (``support.check``) on empty,
one-element, negative-stride and NaN inputs; what stays unsupported is a ``CompileError`` at its place.
"""

import numpy as np
import pytest

import aot

try:
    from .support import check, expect_compile_error, locate
except ImportError:  # tests/ is not a package
    from support import check, expect_compile_error, locate

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's warnings (plain Python side)


# ------------------------------------------------------------------------- np.searchsorted of an array


@aot.jit
def search_many(edges, v):
    return np.searchsorted(edges, v), np.searchsorted(edges, v, side="right"), np.searchsorted(edges, v, side="left")


EDGES = np.array([0.0, 1.0, 1.0, 2.0, np.nan])


@pytest.mark.parametrize(
    "v",
    [
        np.array([1.0, 0.5, np.nan, -3.0, 5.0, 2.0]),
        np.zeros(0),
        np.array([1.0]),
        np.array([2.0, 1.0, 0.0, -1.0])[::-2],
        np.array([[1.0, 3.0], [np.nan, 0.0]]),
        np.array([[1, 2, 0], [3, -1, 1]]).T,
        np.array([True, False]),
    ],
)
def test_searchsorted_of_an_array(v):
    got = check(search_many, EDGES, v)
    assert all(r.dtype == np.int64 and r.shape == v.shape for r in got)


def test_searchsorted_of_an_array_mixed_dtypes():
    check(search_many, np.arange(6), np.array([2.5, -1.0, 5.0, 6.0]))  # (int edges, float values: compared as f64)
    check(search_many, np.array([0.5, 1.5, 2.5], dtype=np.float32), np.array([1, 2, 3], dtype=np.int32))
    check(search_many, np.zeros(0), np.array([1.0, 2.0]))


@aot.jit
def bins_of(x, edges):
    k = np.searchsorted(edges, x, side="right") - 1  # (the result takes part in whole-array arithmetic)
    counts = np.zeros(len(edges), np.int64)
    for i in k:
        if i >= 0:
            counts[i] += 1
    return counts


def test_searchsorted_result_is_an_array_value():
    check(bins_of, np.array([0.1, 0.5, 2.2, -1.0, 3.9]), np.array([0.0, 1.0, 2.0, 3.0]))


@aot.jit
def search_2d_edges(edges, v):
    return np.searchsorted(edges, v)


def test_searchsorted_in_2d_edges_is_a_compile_error():
    err = expect_compile_error(
        search_2d_edges, np.ones((2, 2)), np.ones(2), at=locate(search_2d_edges, "np.searchsorted(")
    )
    assert "1-D" in str(err)


# ------------------------------------------------------------------------- np.diff


@aot.jit
def diff(a):
    return np.diff(a)


@pytest.mark.parametrize(
    "a",
    [
        np.array([1.0, 4.0, np.nan, 2.0, -0.0, 0.0]),
        np.zeros(0),
        np.array([3.5]),
        np.arange(10)[::-3],
        np.array([True, False, False, True, True]),
        np.array([0, 255, 3], dtype=np.uint8),
        np.array([-(2**63), 1]),
        np.array([1.5, 2.25, -7.0], dtype=np.float32),
        np.arange(12.0).reshape(3, 4)[:, 1],
    ],
)
def test_diff(a):
    got = check(diff, a)
    assert got.dtype == a.dtype


@aot.jit
def returns_and_steps(prices):
    r = np.diff(np.log(prices))
    return r.sum(), np.diff(np.searchsorted(prices, prices))


def test_diff_in_expressions():
    check(returns_and_steps, np.array([1.0, 1.5, 1.25, 2.0]), close=True)


@aot.jit
def diff_2d(a):
    return np.diff(a)


def test_diff_of_2d_is_a_compile_error():
    err = expect_compile_error(diff_2d, np.ones((2, 3)), at=locate(diff_2d, "np.diff("))
    assert "1-D" in str(err)


# ------------------------------------------------------------------------- for x in a.flat


@aot.jit
def flat_nanmean(a):
    total = 0.0
    count = 0
    for v in a.flat:
        if not np.isnan(v):
            total += v
            count += 1
    return total / count if count else np.nan


@aot.jit
def flat_argmax(a):
    best = -np.inf
    where = -1
    for i, v in enumerate(a.flat):
        if v > best or (where == -1 and not np.isnan(v)):
            best, where = v, i
    return where


@aot.jit
def flat_forms(a, b):
    pairs = 0.0
    for x, y in zip(a.flat, b.flat):
        pairs += x * y
    squares = [v * v for v in a.flat if v > 0]
    return pairs, sum((v for v in b.flat), 0.0), any(v < 0 for v in a.flat), len(squares), 2.0 in a.flat


@aot.jit
def flat_else(a, stop):
    seen = 0
    for v in a.flat:
        if v == stop:
            break
        seen += 1
    else:
        seen = -1
    return seen


def _arrays():
    m = np.arange(12.0).reshape(3, 4) - 4.5
    m[1, 2] = np.nan
    return [
        m,
        m.T,
        np.asfortranarray(m),
        m[::-1, ::2],
        m[:, 1],
        np.zeros((0, 3)),
        np.array([7.5]),
        np.arange(24.0).reshape(2, 3, 4)[:, ::-1],
    ]


@pytest.mark.parametrize("a", _arrays())
def test_flat_iteration(a):
    check(flat_nanmean, a)
    check(flat_argmax, a)
    check(flat_forms, a, a[::-1] * 0.5 if a.ndim == 1 else a * 0.5)
    check(flat_else, a, 2.0)
    check(flat_else, a, 99.0)


def test_flat_iteration_of_integers_and_booleans():
    check(flat_forms, np.arange(-3, 3).reshape(2, 3), np.ones((2, 3), np.int32))
    check(flat_else, np.array([[True, False], [False, True]]), False)


@aot.jit
def flat_of_a_number(x):
    s = 0.0
    for v in x.flat:
        s += v
    return s


def test_flat_of_a_number_is_a_compile_error():
    err = expect_compile_error(flat_of_a_number, 2.5, at=locate(flat_of_a_number, "x.flat"))
    assert "arrays only" in str(err)


@aot.jit
def flat_indexed(a):
    return a.flat[1]


def test_flat_outside_a_loop_is_a_compile_error():
    expect_compile_error(flat_indexed, np.ones(3), at=locate(flat_indexed, "a.flat"))


# ------------------------------------------------------------------------- == and != between tuples


@aot.jit
def tuples_compare(a, b, i, j):
    here = (i, j)
    return here == (0, 0), here != (0, 0), (a[0], i) == (b[0], j), (i, (j, 1.0)) == (i, (j, 1)), (i,) == (i, j)


@pytest.mark.parametrize(
    "a, b, i, j",
    [
        (np.array([1.0]), np.array([1.0]), 0, 0),
        (np.array([1.0]), np.array([2.0]), 0, 0),
        (np.array([np.nan]), np.array([np.nan]), 3, 3),
        (np.array([-0.0]), np.array([0.0]), 2, -2),
        (np.array([5]), np.array([5.0]), 7, 7),
        (np.array([True]), np.array([1]), 0, 1),
    ],
)
def test_tuple_equality(a, b, i, j):
    check(tuples_compare, a, b, i, j)


@aot.jit
def walk_back(steps):
    path = [(len(steps) - 1, 0)]
    while path[-1] != (0, 0):
        i, j = path[-1]
        path.append((i - 1, j) if steps[i] == 0 else (i - 1, j + 1) if i > 0 else (0, 0))
    return len(path), path[-1] == (0, 0)


def test_tuple_inequality_as_a_loop_test():
    check(walk_back, np.array([0, 1, 0, 1]))
    check(walk_back, np.array([1]))


@aot.jit
def tuple_order(i, j):
    return (i, j) < (j, i)


@aot.jit
def tuple_of_array_equal(a):
    return (a, 1) == (a, 1)


def test_tuple_ordering_and_tuples_of_arrays_are_compile_errors():
    expect_compile_error(tuple_order, 1, 2, at=locate(tuple_order, "(i, j) < (j, i)"))
    err = expect_compile_error(tuple_of_array_equal, np.ones(2), at=locate(tuple_of_array_equal, "(a, 1) =="))
    assert "numbers and tuples of numbers" in str(err)


# ------------------------------------------------------- a.fill(v), and in-place writes need writable buffers


@aot.jit
def fill(a, v):
    a.fill(v)
    return a.sum()


@pytest.mark.parametrize(
    "a, v",
    [
        (np.zeros(4), 2.5),
        (np.zeros(0), 1.0),
        (np.ones(1), np.nan),
        (np.zeros((3, 4))[::-1, 1::2], -0.0),
        (np.zeros(5, np.int32), 7),
        (np.zeros(3, np.int64), 2.75),  # (truncated, as NumPy stores a float into an int array)
        (np.zeros(3, np.float32), 0.1),
        (np.zeros(2, np.bool_), 3),
    ],
)
def test_fill(a, v):
    check(fill, a, v)


@aot.jit
def fill_then_use(n):
    best = np.empty(n)
    best.fill(np.inf)
    for i in range(n):
        best[i] = min(best[i], i * 0.5)
    return best


def test_fill_an_array_made_in_compiled_code():
    check(fill_then_use, 4)
    check(fill_then_use, 0)


@aot.jit
def fill_with_array(a, b):
    a.fill(b)


def test_fill_with_an_array_is_a_compile_error():
    err = expect_compile_error(fill_with_array, np.zeros(2), np.ones(2), at=locate(fill_with_array, "a.fill(b)"))
    assert "a[...] = b" in str(err)


@aot.jit
def add_in_place(a):
    a += 1.0


@aot.jit
def sort_in_place(a):
    a.sort()


@aot.jit
def fill_in_callee(a):
    fill(a, 3.0)


@pytest.mark.parametrize("f", [add_in_place, sort_in_place, fill_in_callee])
def test_in_place_writes_refuse_a_read_only_argument(f):
    ro = np.array([3.0, 1.0, 2.0])
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        f(ro)
    assert ro.tolist() == [3.0, 1.0, 2.0]
    rw = ro.copy()
    check(f, rw)


# --------------------------------------------------------- np.nansum and the other NaN-ignoring reductions


@aot.jit
def nan_sums(a):
    return np.nansum(a), np.nanmean(a), np.nanvar(a), np.nanstd(a)


@aot.jit
def nan_spread(a, k):
    return np.nanvar(a, ddof=1), np.nanstd(a, ddof=k)


@aot.jit
def nan_extremes(a):
    return np.nanmin(a), np.nanmax(a), np.nanargmin(a), np.nanargmax(a)


def _nan_arrays():
    rng = np.random.default_rng(7)
    m = rng.random((60, 50))
    m[rng.random((60, 50)) < 0.25] = np.nan
    big = rng.random((130, 90)).astype(np.float32)  # (more than 8192 elements: NumPy's buffer size)
    big[big < 0.1] = np.nan
    return [
        np.array([1.0, np.nan, 3.0, 2.5, np.nan]),
        np.zeros(0),
        np.array([np.nan]),
        np.full(4, np.nan),
        np.array([4.0]),
        np.array([np.nan, -np.inf, 2.0, np.inf]),
        np.array([-0.0, 0.0, np.nan])[::-1],
        m,
        m.T,
        m[::-1, ::3],
        m.astype(np.float32),
        big.T[::2, ::-1],
        np.arange(12).reshape(3, 4),
        np.array([True, False, True]),
        np.array([], dtype=np.int32),
    ]


@pytest.mark.parametrize("a", _nan_arrays())
def test_nan_reductions_match_numpy_bit_for_bit(a):
    check(nan_sums, a)
    check(nan_spread, a, 2)
    check(nan_extremes, a, signed_zero=False)  # (which of 0.0 and -0.0 fmin/fmax keep is NumPy's choice)


def test_nan_reductions_of_nothing_but_nan_and_of_nothing():
    check(nan_extremes, np.full(3, np.nan), raises=ValueError, messages=True)  # All-NaN slice encountered
    check(nan_extremes, np.zeros(0), raises=ValueError, messages=True)  # zero-size … fmin
    check(nan_extremes, np.zeros(0, np.int64), raises=ValueError)


@aot.jit
def nanmean_by_row(a):
    out = np.empty(a.shape[0])
    for i in range(a.shape[0]):
        out[i] = np.nanmean(a[i])
    return out


def test_nanmean_of_views():
    m = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan], [2.0, 4.0, 8.0]])
    check(nanmean_by_row, m)
    check(nanmean_by_row, m.T)


@aot.jit
def nanmean_axis(a):
    return np.nanmean(a, axis=0)


def test_nan_reductions_along_an_axis_are_a_compile_error():
    err = expect_compile_error(nanmean_axis, np.ones((2, 2)), at=locate(nanmean_axis, "np.nanmean("))
    assert "axis=" in str(err)


# ------------------------------------------------------------------------- lst.reverse()


@aot.jit
def interval_overlap(a, b):
    ends = [a[1], b[1]]
    if ends[1] < ends[0]:
        ends.reverse()
    starts = [a[0], b[0]]
    if starts[1] < starts[0]:
        starts.reverse()
    inter = max(ends[0] - starts[1], 0.0)
    union = ends[1] - starts[0]
    return inter / union if union > 0 else 0.0


def test_list_reverse_of_two():
    cases = [((0.0, 2.0), (1.0, 3.0)), ((1.0, 3.0), (0.0, 2.0)), ((0.0, 1.0), (2.0, 3.0)), ((1.0, 1.0), (1.0, 1.0))]
    for a, b in cases:
        check(interval_overlap, np.array(a), np.array(b))


@aot.jit
def reversed_lists(n):
    xs = [i * 1.5 for i in range(n)]
    xs.reverse()
    rows = [np.full(2, float(i)) for i in range(n)]
    rows.reverse()
    pairs = [(i, -i) for i in range(n)]
    pairs.reverse()
    nested = [[i] for i in range(n)]
    nested.reverse()
    return xs, rows, pairs, nested, xs.reverse()


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_list_reverse_of_every_item_type(n):
    check(reversed_lists, n)


@aot.jit
def reverse_with_argument(n):
    xs = [1.0, 2.0]
    xs.reverse(n)
    return xs


def test_list_reverse_with_an_argument_is_a_compile_error():
    err = expect_compile_error(reverse_with_argument, 1, at=locate(reverse_with_argument, "xs.reverse(n)"))
    assert "no arguments" in str(err)


# ------------------------------------------------------------------------- np.concatenate


@aot.jit
def concat_pair(a, b):
    return np.concatenate((a, b))


@aot.jit
def concat_three(a, b):
    return np.concatenate((a, b[::-1], a))


@pytest.mark.parametrize(
    "a, b",
    [
        (np.arange(3.0), np.arange(2)),
        (np.zeros(0), np.array([1.5], np.float32)),
        (np.zeros(0, np.int32), np.zeros(0, np.int32)),
        (np.array([True, False]), np.array([7, 8], np.uint8)),
        (np.arange(10.0)[::-3], np.array([np.nan, -0.0])),
        (np.ones((2, 3)), np.arange(6.0).reshape(3, 2).T),
        (np.arange(12).reshape(4, 3)[::2], np.zeros((0, 3), np.int64)),
        (np.ones((2, 3)), np.zeros((2, 2))),  # (other axes differ: NumPy's ValueError)
    ],
)
def test_concatenate_a_tuple(a, b):
    check(concat_pair, a, b)
    check(concat_three, a, b)


@aot.jit
def concat_list(n):
    parts = [np.arange(i) * 0.5 for i in range(n)]
    return np.concatenate(parts)


def test_concatenate_a_list():
    check(concat_list, 4)
    check(concat_list, 1)
    check(concat_list, 0, raises=ValueError)  # need at least one array to concatenate


@aot.jit
def concat_mixed_ranks(a, b):
    return np.concatenate((a, b))


@aot.jit
def concat_axis(a, b):
    return np.concatenate((a, b), axis=1)


def test_concatenate_refusals_are_compile_errors():
    err = expect_compile_error(
        concat_mixed_ranks, np.ones(2), np.ones((1, 2)), at=locate(concat_mixed_ranks, "np.concatenate(")
    )
    assert "same number of dimensions" in str(err)
    expect_compile_error(concat_axis, np.ones((1, 2)), np.ones((1, 2)), at=locate(concat_axis, "np.concatenate("))


# ------------------------------------------------- np.nonzero, np.where(c), np.flatnonzero, np.count_nonzero


@aot.jit
def nonzero_forms(a):
    return np.nonzero(a), np.where(a), np.flatnonzero(a), np.count_nonzero(a)


@pytest.mark.parametrize(
    "a",
    [
        np.array([0.0, 1.0, np.nan, 0.0, -2.0, -0.0]),
        np.zeros(0),
        np.zeros(3),
        np.array([[0, 3], [4, 0], [0, 5]]),
        np.array([[0, 3], [4, 0], [0, 5]]).T,
        np.array([True, False, True])[::-1],
        np.arange(24).reshape(2, 3, 4)[:, ::-1] % 5 == 0,
        np.array([0, 200, 0], np.uint8),
    ],
)
def test_nonzero(a):
    check(nonzero_forms, a)


@aot.jit
def above(x, t):
    idx = np.where(x > t)[0]
    return idx, x[idx].sum()


def test_where_of_a_condition_indexes():
    check(above, np.array([0.5, 3.0, -1.0, 4.5, 2.0]), 1.0)
    check(above, np.array([0.5]), 1.0)


# ------------------------------------------------------------------------- no leaks


@aot.jit
def churn_new_arrays(x, rounds):
    total = 0.0
    for r in range(rounds):
        k = np.searchsorted(x, x[::-1]) + np.diff(x).size
        both = np.concatenate((x, k * 0.5))
        (idx,) = np.nonzero(both > r)
        total += idx.size + np.nanmean(both) + np.flatnonzero(k).size
    return total


def test_new_arrays_of_these_functions_are_freed():
    import gc
    import tracemalloc

    x = np.sort(np.random.default_rng(3).random(500))
    churn_new_arrays(x, 1)
    tracemalloc.start()
    try:
        gc.collect()
        start = tracemalloc.get_traced_memory()[0]
        for _ in range(100):
            churn_new_arrays(x, 5)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, f"{grown} bytes still live after 100 calls"
    check(churn_new_arrays, x, 3)


# ------------------------------------------------------------------------- np.cumprod


@aot.jit
def cumulative_products(a):
    return np.cumprod(a), a.cumprod()


@pytest.mark.parametrize(
    "a",
    [
        np.array([1.5, 2.0, np.nan, 3.0, -0.5]),
        np.zeros(0),
        np.array([7.0]),
        np.arange(1, 6).reshape(5, 1),
        np.array([True, True, False]),
        np.array([200, 2, 3], np.uint8),  # (NumPy's product dtype: uint64)
        np.array([2**40, 2**40], np.int64),  # (wraps, as NumPy's int64 products do)
        np.array([1.5, 3.0, 0.1], np.float32),
        np.arange(1.0, 13.0).reshape(3, 4).T[::-1],
    ],
)
def test_cumprod(a):
    check(cumulative_products, a)


# ------------------------------------------------------------------------- np.unique, np.bincount


@aot.jit
def distinct(a):
    return np.unique(a)


@pytest.mark.parametrize(
    "a",
    [
        np.array([3.0, np.nan, 1.0, np.nan, 3.0, -2.5, 1.0]),
        np.zeros(0),
        np.array([4.0]),
        np.array([[2, 1], [1, 3]]).T,
        np.array([True, False, True]),
        np.array([9, 200, 9, 0], np.uint8)[::-1],
        np.full(3, np.nan),
        np.array([1.5, 0.5, 1.5], np.float32),
    ],
)
def test_unique(a):
    check(distinct, a)


@aot.jit
def counts(x):
    return np.bincount(x)


@aot.jit
def weighted_counts(x, w):
    return np.bincount(x, w)


@pytest.mark.parametrize(
    "x",
    [
        np.array([1, 3, 1, 0, 3, 3]),
        np.array([], np.int64),
        np.array([0]),
        np.array([True, False, True]),
        np.array([2, 0, 7], np.uint8)[::-1],
        np.array([4, -1, 2]),  # (NumPy's ValueError)
    ],
)
def test_bincount(x):
    check(counts, x)
    if len(x):  # (documented difference: of no values NumPy gives an int64 array even with weights)
        check(weighted_counts, x, np.linspace(-1.0, 2.0, len(x)))
    else:
        assert weighted_counts(x, np.zeros(0)).dtype == np.float64


def test_bincount_weights():
    check(weighted_counts, np.array([0, 2, 0]), np.array([0.5, 0.25, np.nan]))
    check(weighted_counts, np.array([1, 1]), np.array([1, 2], np.int32))
    check(weighted_counts, np.array([1, 2]), np.array([1.0]), raises=ValueError)


@aot.jit
def count_floats(x):
    return np.bincount(x)


def test_bincount_of_floats_is_a_compile_error():
    err = expect_compile_error(count_floats, np.ones(2), at=locate(count_floats, "np.bincount("))
    assert "integers" in str(err)


# ------------------------------------------------------------------------- kernels cannot allocate


@aot.kernel
def kernel_nonzero(a, out):
    i = aot.gpu.global_id()
    if i < out.shape[0]:
        found = np.nonzero(a)
        out[i] = found[0].size


@aot.kernel
def kernel_flat_sum(a, out):
    i = aot.gpu.global_id()
    if i < out.shape[0]:
        s = 0.0
        for v in a.flat:  # (reads in place: no allocation)
            s += v
        out[i] = s + i


def test_new_arrays_in_kernels_are_compile_errors_and_flat_reads_are_not():
    err = expect_compile_error(
        lambda: kernel_nonzero[1, 4](np.ones(3), np.zeros(4)), at=locate(kernel_nonzero, "np.nonzero(a)")
    )
    assert "allocates" in str(err)
    out = np.zeros(4)
    kernel_flat_sum[1, 4](np.arange(6.0).reshape(2, 3).T, out)
    assert out.tolist() == [15.0, 16.0, 17.0, 18.0]
