"""NumPy functions of whole arrays (issue #16 item 4): ``np.where``, ``np.clip``, ``np.cumsum``, ``np.sort``,
``np.argsort``, ``np.median``, ``a.astype(dtype)``, ``std``/``var`` with ``ddof=``.

Every compiled result is checked against the same function run as plain Python (``support.check``), on empty,
one-element, negative-stride, non-contiguous, 2-D C and Fortran arrays and NaN.
"""

import ast

import numpy as np
import pytest

import aot

try:
    from .support import check, expect_compile_error, locate
except ImportError:  # tests/ is not a package
    from support import check, expect_compile_error, locate

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's warnings (plain Python side)

_VALUES = np.array([3.0, -1.5, 2.0, 2.0, -7.0, 0.5, 11.0, -1.5, 4.25])


def layouts(values=_VALUES):
    m = np.arange(12.0).reshape(3, 4) * 1.5 - 4.0
    return [values, values[:0], values[:1], values[::-1], values[1::3], m, np.asfortranarray(m), m.T, m[::-1, ::2]]


@aot.jit
def where_clip(a, lo):
    return np.where(a > lo, a, 0.0), np.where(a > lo, 1, a), np.clip(a, lo, 3.0), a.clip(-1, 2)


@aot.jit
def cumulative(a):
    return np.cumsum(a), a.cumsum()


@aot.jit
def sorting(a):
    return np.sort(a), np.argsort(a), a.argsort()


def check_sorting(a):
    """``np.sort`` against NumPy; ``np.argsort`` against NumPy's stable order (what aot gives: NumPy's default
    quicksort orders ties as it happens to)."""
    got = sorting(a.copy())
    want = np.sort(a)
    assert got[0].dtype == want.dtype and np.array_equal(got[0], want, equal_nan=want.dtype.kind == "f")
    for order in got[1:]:
        assert order.dtype == np.int64 and np.array_equal(order, np.argsort(a, kind="stable"))


@aot.jit
def median(a):
    return np.median(a)


@aot.jit
def casts(a):
    return a.astype(np.int64), a.astype(np.int32), a.astype(np.float32), a.astype(np.bool_), a.astype(float)


@aot.jit
def spread(a, k):
    return a.std(ddof=1), np.var(a, ddof=k), np.std(a, ddof=k), a.var(ddof=0)


@pytest.mark.parametrize("k", range(9))
def test_on_every_layout(k):
    a = layouts()[k]
    check(where_clip, a, 0.5)
    check(cumulative, a)
    check(median, a)
    check(casts, a)
    check(spread, a, 1)
    if a.ndim == 1:
        check_sorting(a)


def test_nan():
    a = np.array([np.nan, 1.0, -2.0, np.nan, 0.5])
    check(where_clip, a, 0.0)
    check(where_clip, np.array([1.0, 2.0]), np.nan)
    check(cumulative, a)
    check_sorting(a)
    check(median, a)
    check(spread, a, 2)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.int16, np.float32, np.bool_])
def test_dtypes(dtype):
    a = np.array([5, 0, 3, 3, 1, 250, 7]).astype(dtype)
    check(cumulative, a)
    check_sorting(a)
    check(casts, a)
    if dtype is not np.bool_:
        check(median, a, close=True)
        check(spread, a, 1)
    if dtype is not np.bool_:
        check(where_clip, a, 2)


def test_argsort_is_stable():
    check_sorting(np.array([2, 1, 2, 1, 0, 2, 1] * 5))
    check_sorting(np.array([2.0, np.nan, 1.0, np.nan, 2.0, -0.0, 0.0]))


def test_sort_of_many_values():
    a = np.random.default_rng(3).standard_normal(10_001)
    check_sorting(a)
    check(median, a)
    check(median, a[:-1])


def test_ddof_beyond_the_count():
    check(spread, np.arange(3.0), 3)
    check(spread, np.arange(3.0), 5)


def test_float_to_int_casts_out_of_range_give_numpy_s_signed_values():
    a = np.array([np.nan, np.inf, -np.inf, 1e300, 3e9, -3e9, 40000.5, -40000.5, 300.7, -2.9, -0.0])
    check(casts, a)


@aot.jit
def sort_kind(m):
    return np.sort(m, kind="bubble")


@aot.jit
def sort_float_axis(m):
    return np.argsort(m, 1.0)


@aot.jit
def sort_in_place_flat(m):
    m.sort(axis=None)


@aot.jit
def list_sort_key(n):
    xs = [1.0, float(n)]
    xs.sort(reverse=True)
    return xs


@aot.jit
def where_scalars(x):
    return np.where(x > 0, x, 0.0)


@aot.jit
def std_axis(a):
    return np.std(a, 1, None)


def test_what_stays_out_is_a_compile_error():
    m = np.ones((2, 2))
    err = expect_compile_error(sort_kind, m, at=locate(sort_kind, 'np.sort(m, kind="bubble")'), node_type=ast.Call)
    assert "'stable'" in str(err)
    err = expect_compile_error(sort_float_axis, m, at=locate(sort_float_axis, "np.argsort(m, 1.0)"), node_type=ast.Call)
    assert "axis must be an integer or None" in str(err)
    err = expect_compile_error(
        sort_in_place_flat, m, at=locate(sort_in_place_flat, "m.sort(axis=None)"), node_type=ast.Call
    )
    assert "np.sort(a, axis=None)" in str(err)
    err = expect_compile_error(list_sort_key, 3, at=locate(list_sort_key, "xs.sort"), node_type=ast.Attribute)
    assert "key= and reverse= are not supported" in str(err)
    err = expect_compile_error(where_scalars, 1.0, at=locate(where_scalars, "np.where(x > 0, x, 0.0)"))
    assert "x if c else y" in str(err)
    expect_compile_error(std_axis, m, at=locate(std_axis, "np.std(a, 1, None)"), node_type=ast.Call)


# ------------------------------------------------------------------------------------------ axis=


@aot.jit
def along(a, ax):
    return (
        a.sum(axis=0),
        np.sum(a, 1),
        a.mean(ax),
        a.std(axis=0, ddof=1),
        np.var(a, axis=1, ddof=ax),
        a.prod(1),
        np.mean(a, axis=ax),
    )


@aot.jit
def along_exact(a):
    return a.min(0), a.max(axis=1), a.argmin(1), np.argmax(a, axis=0), (a > 2).all(0), (a > 2).any(axis=1)


def check_close_arrays(f, *args):
    """Float results of reductions along an axis: NumPy adds rows in order where the axis is not contiguous
    and pairwise where it is, so the last bits may differ; dtypes, shapes and NaN positions are exact."""
    for x, y in zip(f(*args), f.py_func(*args)):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape, (x, y)
        assert np.allclose(x, y, rtol=1e-12, atol=0.0, equal_nan=True), (x, y)


def two_d():
    m = np.arange(12.0).reshape(3, 4) * 1.5 - 4.0
    m[1, 2] = np.nan
    return [m, m.T, np.asfortranarray(m), m[::-1, ::2], m[:, :1], np.arange(-6, 6).reshape(4, 3), m[:0]]


@pytest.mark.parametrize("k", range(7))
def test_reductions_along_an_axis(k):
    m = two_d()[k]
    check_close_arrays(along, m, -1)
    check_close_arrays(along, m, 0)
    if m.size:
        check(along_exact, m)


def test_reductions_along_an_empty_axis():
    check_close_arrays(along, np.ones((0, 3)), 0)
    with pytest.raises(ValueError):
        along_exact(np.ones((0, 3)))
    with pytest.raises(ValueError):
        along(np.ones((2, 3)), 2)


@aot.jit
def axis_of_1d(a):
    return a.sum(axis=0)


def test_axis_of_a_1d_array_is_a_compile_error():
    err = expect_compile_error(axis_of_1d, np.ones(3), at=locate(axis_of_1d, "a.sum(axis=0)"), node_type=ast.Call)
    assert "2-D" in str(err)


# ------------------------------------------------------------------------------------------ np.dot, @


@aot.jit
def products(a, b, v):
    return a @ b, np.dot(a, v), v @ b, np.dot(v, v), a.T @ a


def test_matrix_products():
    a, b, v = np.arange(12.0).reshape(3, 4) - 5, np.arange(8.0).reshape(4, 2) / 3, np.arange(4.0) + 0.5
    for args in ((a, b, v), (np.asfortranarray(a), b[::-1], v[::-1]), (a[:, :0], b[:0], v[:0])):
        check_close_arrays(products, *args)
    check(products, np.arange(12).reshape(3, 4), np.arange(8).reshape(4, 2), np.arange(4))
    check(products, np.arange(12, dtype=np.int32).reshape(3, 4), np.arange(8).reshape(4, 2), np.arange(4))


def test_matrix_products_of_shapes_that_do_not_align_raise():
    with pytest.raises(ValueError):
        products(np.ones((3, 4)), np.ones((3, 4)), np.ones(4))


# ------------------------------------------------------------------------------------------ a.sort, np.round, side=


@aot.jit
def sort_in_place(a):
    b = a.copy()
    b.sort()
    a[::-2].sort()  # (a strided view: sorted through a copy)
    return b, a


@aot.jit
def rounding(a, x):
    return np.round(a), np.around(x), np.round(a.astype(np.int64))


@aot.jit
def search(edges, x):
    return np.searchsorted(edges, x, side="right"), np.searchsorted(edges, x, side="left"), np.searchsorted(edges, x)


def test_sort_in_place():
    check(sort_in_place, np.array([3.5, -1.5, 2.5, 2.0, np.nan, -7.0, 0.5]))
    check(sort_in_place, np.array([3, 1, 2]))
    check(sort_in_place, np.zeros(0))


def test_round_half_to_even():
    check(rounding, np.array([0.5, 1.5, 2.5, -0.5, -1.5, np.nan, 2.675, -0.0]), 2.5)


def test_searchsorted_sides():
    edges = np.array([0.0, 1.0, 1.0, 2.0, np.nan])
    for x in (1.0, 0.5, np.nan, -3.0, 5.0, 2.0):
        check(search, edges, x)


@aot.jit
def bad_side(edges, x):
    return np.searchsorted(edges, x, side="middle")


def test_searchsorted_bad_side_is_a_compile_error():
    err = expect_compile_error(bad_side, np.ones(2), 1.0, at=locate(bad_side, "np.searchsorted(edges, x, side"))
    assert "'left' or 'right'" in str(err)


# ------------------------------------------------------------------- sorting along an axis of N-D arrays


@aot.jit
def sorting_nd(a):
    return (
        np.sort(a),
        np.argsort(a),
        a.argsort(),
        np.sort(a, axis=None),
        np.argsort(a, None),
        np.sort(a, -1, "stable"),
        np.argsort(a, kind="mergesort"),
        a.argsort(kind="quicksort"),
    )


@aot.jit
def sorting_along(a, axis):
    return np.sort(a, axis), np.argsort(a, axis=axis), a.argsort(axis)


@aot.jit
def sort_rows_in_place(a):
    a.sort()


@aot.jit
def sort_in_place_along(a, axis):
    a.sort(axis)


@aot.jit
def sort_in_place_by_keyword(a, axis):
    a.sort(axis=axis, kind="stable")


def _stable(a, axis=-1):
    return np.argsort(a, axis, kind="stable")


def check_sorting_nd(a):
    """``np.sort`` (values) against NumPy; every ``argsort`` against NumPy's stable order."""
    got = sorting_nd(a.copy())
    want_sorted = [np.sort(a), np.sort(a, axis=None), np.sort(a)]
    want_orders = [_stable(a), _stable(a), _stable(a, None), _stable(a), _stable(a)]
    for g, w in zip([got[0], got[3], got[5]], want_sorted):
        assert g.dtype == w.dtype and g.shape == w.shape and np.array_equal(g, w, equal_nan=w.dtype.kind == "f")
    for g, w in zip([got[1], got[2], got[4], got[6], got[7]], want_orders):
        assert g.dtype == np.int64 and g.shape == w.shape and np.array_equal(g, w)
    for axis in range(-a.ndim, a.ndim):
        values, *orders = sorting_along(a.copy(), axis)
        w = np.sort(a, axis)
        assert values.dtype == w.dtype and np.array_equal(values, w, equal_nan=w.dtype.kind == "f")
        for order in orders:
            assert order.dtype == np.int64 and np.array_equal(order, _stable(a, axis))
        check(sort_in_place_along, a, axis)
        check(sort_in_place_by_keyword, a, axis)
    check(sort_rows_in_place, a)
    for axis in (a.ndim, -a.ndim - 1):  # (NumPy's AxisError is a ValueError)
        with pytest.raises(ValueError, match="out of bounds"):
            sorting_along(a, axis)
        with pytest.raises(ValueError, match="out of bounds"):
            sort_in_place_along(a.copy(), axis)


def nd_layouts():
    rng = np.random.default_rng(7)
    m = rng.integers(-3, 4, (5, 6)).astype(np.float64)  # (many ties: the stable order shows)
    m[1, 2], m[3, 0], m[3, 1], m[0, 5] = np.nan, -0.0, 0.0, np.nan
    t = rng.integers(0, 3, (3, 4, 5))
    return [
        m,
        m.T,
        np.asfortranarray(m),
        m[::-1, ::2],
        m[:, :1],
        m[:1, :],
        np.zeros((0, 3)),
        np.zeros((3, 0)),
        t,
        t[:, ::-1, 1::2],
        t.transpose(2, 0, 1),
        np.array([[np.nan, 1.0, np.nan, -np.inf, np.inf, 0.5]]),
    ]


@pytest.mark.parametrize("k", range(12))
def test_sorting_along_axes(k):
    check_sorting_nd(nd_layouts()[k])


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.float32, np.bool_, np.int64])
def test_sorting_along_axes_of_every_dtype(dtype):
    check_sorting_nd((np.arange(24).reshape(4, 6) * 7 % 5).astype(dtype))
    check_sorting_nd((np.arange(24).reshape(2, 3, 4)[:, ::-1] % 3).astype(dtype))


def test_sorting_1d_with_axis():
    for a in (_VALUES, _VALUES[::-2], _VALUES[:0], _VALUES[:1], np.array([np.nan, 1.0, np.nan, 0.0])):
        check_sorting_nd(a)


@aot.jit
def add_in_place(a):
    a += 1.0


def test_sorting_or_adding_in_place_into_a_read_only_array_raises_and_writes_nothing():
    for f, a, args in (
        (sort_rows_in_place, np.array([3.0, 1.0, 2.0]), ()),
        (sort_rows_in_place, np.array([[3.0, 1.0], [0.0, 2.0]]), ()),
        (sort_in_place_along, np.array([[3.0, 1.0], [0.0, 2.0]]), (0,)),
        (add_in_place, np.array([3.0, 1.0]), ()),
    ):
        before = a.copy()
        a.flags.writeable = False
        with pytest.raises(ValueError, match="read-only"):
            f(a, *args)
        assert np.array_equal(a, before)
