"""Views and slicing (SUBSET.md, "Beyond the floor"): ``a[lo:hi:step]`` on every axis, ``a[i]`` of an N-D array,
``a[:, j]``, ``...``, ``a.T``, ``reshape``, ``ravel``, and assignment to slices from numbers and arrays.

Every compiled result, and every array argument's contents after the call, is compared with plain Python
(``f.py_func``, i.e. NumPy) through ``support.check`` on many inputs: empty, one element, negative strides,
non-contiguous views, C- and F-ordered 2-D arrays, NaN. What stays out is a CompileError at ``file:line:col``.
"""

from __future__ import annotations

import ast
import itertools
import tracemalloc

import numpy as np
import pytest

import aot
from aot.infer.views import SliceInfo, view_type
from aot.types import F64, I64, NONE, ArrayType

try:
    from .support import check, clone_array, expect_compile_error, locate
except ImportError:  # tests/ is not a package
    from support import check, clone_array, expect_compile_error, locate

# ======================================================================================================
# Inputs
# ======================================================================================================

BASE = np.array([3.5, -1.0, 2.25, np.nan, 0.0, -7.5, 11.0, 4.0, -0.0])


def ones_d():
    """1-D float arrays of every kind of layout."""
    return [
        np.zeros(0),
        np.array([2.5]),
        BASE.copy(),
        BASE[::-1],
        BASE[1::2],
        BASE[::-3],
        np.arange(12.0),
    ]


def twos_d():
    """2-D float arrays: C, F, transposed, negative strides, empty on either axis, 1x1."""
    m = np.arange(20.0).reshape(4, 5) * 1.5 - 7
    m[2, 3] = np.nan
    return [
        m,
        np.asfortranarray(m),
        m.T,
        m[::-1, ::-2],
        m[1:3, 1:],
        np.zeros((0, 3)),
        np.zeros((3, 0)),
        np.array([[4.0]]),
    ]


BOUNDS = [0, 1, 2, -1, -2, 5, -5, 100, -100]  # missing bounds are tested by functions that leave them out
STEPS = [1, 2, 3, -1, -2, -4]


# ======================================================================================================
# Reading through views
# ======================================================================================================


@aot.jit
def weighted(v):
    """A helper that reads a 1-D array (a view, when called with one): order-sensitive."""
    t = 0.0
    for i in range(len(v)):
        t += v[i] * (i + 1)
    return t


@aot.jit
def slice3(a, lo, hi, st):
    v = a[lo:hi:st]
    return weighted(v), len(v)


@aot.jit
def slice_from(a, lo):
    return weighted(a[lo:])


@aot.jit
def slice_to(a, hi):
    return weighted(a[:hi])


@aot.jit
def slice_step(a, st):
    return weighted(a[::st])


@aot.jit
def slice_all(a):
    return weighted(a[:]) + 100.0 * weighted(a[::-1])


@aot.jit
def slice_constants(a):
    return weighted(a[1:-1]), weighted(a[-3:]), weighted(a[::2]), weighted(a[-2::-2]), a[1:][::2].shape


@aot.jit
def slice_of_slice(a, lo, st):
    v = a[lo:][::st]
    w = v[1:-1]
    return weighted(w), len(w)


@aot.jit
def view_iteration(a):
    t = 0.0
    for x in a[1:]:
        t = t * 0.5 + x
    return t


def _bound_cases():
    return itertools.product(BOUNDS, BOUNDS[:6], STEPS)


def test_slice_with_runtime_bounds_matches_numpy():
    for a in ones_d():
        for lo, hi, st in _bound_cases():
            check(slice3, a, lo, hi, st)


def test_slice_with_missing_parts():
    for a in ones_d():
        for x in BOUNDS:
            check(slice_from, a, x)
            check(slice_to, a, x)
        for st in STEPS:
            check(slice_step, a, st)
        check(slice_all, a)


def test_zero_step_raises_value_error():
    for a in ones_d():
        check(slice_step, a, 0, raises=ValueError)
        check(slice3, a, 1, 2, 0, raises=ValueError)


def test_slice_with_constant_bounds_and_chained_slices():
    for a in ones_d():
        check(slice_constants, a)
        for lo, st in itertools.product([0, 1, -3, 50], [1, 2, -1, -3]):
            check(slice_of_slice, a, lo, st)
        check(view_iteration, a)


@aot.jit
def typed_bounds(a, lo, hi, st):
    return weighted(a[lo:hi:st]), weighted(a[True:]), len(a[lo:])


def test_slice_bounds_of_every_integer_type():
    # (u64 last: once a u64 instance exists, the dispatcher may serve a plain int through it)
    for a in ones_d():
        for lo, hi, st in ((-2, 100, -1), (1, -1, 2)):
            check(typed_bounds, a, lo, hi, st)
            check(typed_bounds, a, np.int32(lo), np.int8(hi), np.int16(st))
    for a in ones_d():
        for lo, hi, st in ((1, 5, 1), (0, 9, 2), (2**63, 2**64 - 1, 2**63 + 5)):
            check(typed_bounds, a, np.uint64(lo), np.uint64(hi), np.uint64(st))


# ------------------------------------------------------------------------------------------ 2-D


@aot.jit
def row(m, i):
    return weighted(m[i])


@aot.jit
def column(m, j):
    return weighted(m[:, j])


@aot.jit
def row_part(m, i, lo):
    return weighted(m[i, lo:])


@aot.jit
def block_sum(m, lo, hi, st):
    v = m[lo:hi, ::st]
    t = 0.0
    for i in range(v.shape[0]):
        t += weighted(v[i]) * (i + 1)
    return t, v.shape


@aot.jit
def ellipsis_views(m, j):
    return weighted(m[..., j]), weighted(m[j, ...]), m[...].shape, m[..., ::2].shape, m[:, ...].shape


@aot.jit
def rows_iteration(m):
    t = 0.0
    for r in m:
        t = t * 0.5 + weighted(r)
    return t


@aot.jit
def row_of_row_view(m):
    r = m[1:]
    return r[0].shape, r[-1][1:].shape


def test_row_and_column_views():
    for m in twos_d():
        for k in (0, 1, -1, 2, 3, 4, -6):
            check(row, m, k)
            check(column, m, k)
            check(row_part, m, k, 1)
            check(row_part, m, k, -2)


def test_two_d_slices():
    for m in twos_d():
        for lo, hi, st in itertools.product([0, 1, -1, 9], [2, -1, 10], [1, 2, -1, -3]):
            check(block_sum, m, lo, hi, st)
        for j in (0, 1, -1, 7):
            check(ellipsis_views, m, j)
        check(rows_iteration, m)
        check(row_of_row_view, m)


@aot.jit
def three_d(t, i, j):
    return weighted(t[i, :, j]), weighted(t[i][j]), weighted(t[..., i, j]), t[i].shape, t[:, i].shape, t[1:, ::-1].shape


def test_three_d_views():
    t = np.arange(60.0).reshape(3, 4, 5)
    for arr in (t, np.asfortranarray(t), t.transpose(2, 0, 1).copy(), t[:, ::-1, 1:]):
        for i, j in ((0, 0), (1, 2), (-1, -1), (2, 3), (3, 0)):
            check(three_d, arr, i, j)


# ------------------------------------------------------------------------------------------ declared layouts


@aot.jit
def c_column(m: aot.f64[:, ::1], j: int) -> float:
    return weighted(m[:, j]) + 10.0 * weighted(m[j, ::2]) + 100.0 * weighted(m[j][1:3])


@aot.jit
def c_rows(m: aot.f64[:, ::1], lo: int) -> float:
    t = 0.0
    for r in m[lo:]:
        t = t * 3.0 + weighted(r[1:])
    return t


def test_views_of_contiguous_arguments_keep_the_right_strides():
    m = np.arange(30.0).reshape(5, 6)
    for j in (0, 1, 4, -1):
        check(c_column, m, j)
    for lo in (0, 2, -1, 9):
        check(c_rows, m, lo)


def _c(n):
    return ArrayType(F64, n, "C")


@pytest.mark.parametrize(
    "base,spec,infos,layout,ndim",
    [
        (_c(1), "s", [SliceInfo(False, False, 1)], "C", 1),  # a[1:3]
        (_c(1), "s", [SliceInfo(True, True, 2)], "A", 1),  # a[::2]
        (_c(1), "s", [SliceInfo(True, True, None)], "A", 1),  # a[::k]
        (_c(2), "s", [SliceInfo(False, False, 1)], "C", 2),  # a[1:3] (rows)
        (_c(2), "is", [SliceInfo(False, True, 1)], "C", 1),  # a[i, 1:]
        (_c(2), "si", [SliceInfo(True, True, 1)], "A", 1),  # a[:, j]
        (_c(2), "ss", [SliceInfo(True, True, 1), SliceInfo(False, True, 1)], "A", 2),  # a[:, 1:]
        (_c(2), "ss", [SliceInfo(False, True, 1), SliceInfo(True, True, 1)], "C", 2),  # a[1:, :]
        (_c(3), "ei", [], "A", 2),  # a[..., j]
        (_c(3), "ie", [], "C", 2),  # a[i, ...]
        (_c(2), "e", [], "C", 2),  # a[...]
        (ArrayType(F64, 2, "A"), "is", [SliceInfo(False, False, 1)], "A", 1),
    ],
)
def test_layout_of_views_is_sound(base, spec, infos, layout, ndim):
    index = []
    for c in spec:
        index.extend([I64] if c == "i" else [NONE, NONE, NONE] if c == "s" else [])
    assert view_type(base, spec, tuple(index), tuple(infos)) == ArrayType(F64, ndim, layout)


# ======================================================================================================
# Writing through views
# ======================================================================================================


@aot.jit
def fill_inner(out, x):
    out[1:-1] = x


@aot.jit
def fill_every(out, st, x):
    out[::st] = x


@aot.jit
def write_in_view(a, k):
    v = a[::-2]
    v[k] = 99.0
    v[k] += 1.0


@aot.jit
def assign_slice(dst, src, lo, hi):
    dst[lo:hi] = src


@aot.jit
def shift_right(a):
    a[1:] = a[:-1]


@aot.jit
def shift_left(a):
    a[:-1] = a[1:]


@aot.jit
def reverse_in_place(a):
    a[:] = a[::-1]


@aot.jit
def stencil(a, out):
    out[1:-1] = 0.0
    mid = out[1:-1]
    left = a[:-2]
    right = a[2:]
    for i in range(len(mid)):
        mid[i] = (left[i] + right[i]) * 0.5


def test_fill_slices_with_numbers():
    for a in ones_d():
        check(fill_inner, a, 2.5)
        check(fill_inner, a, np.nan)
        for st in (1, 2, -1, -3):
            check(fill_every, a, st, -4.0)
        check(fill_every, a, 0, 1.0, raises=ValueError)


def test_writes_through_views_reach_the_argument():
    for a in ones_d():
        for k in (0, 1, -1, 7):
            check(write_in_view, a, k)


def test_assign_arrays_to_slices():
    for dst in ones_d():
        for src in ones_d():
            for lo, hi in ((0, 100), (0, 1), (1, 3), (-3, 50), (2, 2), (-100, -1)):
                check(assign_slice, dst, src, lo, hi)


def test_overlapping_source_and_destination_are_copied_first():
    for a in ones_d():
        check(shift_right, a)
        check(shift_left, a)
        check(reverse_in_place, a)


def test_stencil_written_with_views():
    for a in ones_d():
        check(stencil, a, np.ones(len(a)))
        check(stencil, a, np.ones(2 * len(a))[::2])


@aot.jit
def assign_row(m, i, r):
    m[i, :] = r


@aot.jit
def assign_row_short(m, i, r):
    m[i] = r


@aot.jit
def assign_column(m, j, c):
    m[:, j] = c


@aot.jit
def broadcast_rows(m, r):
    m[1:, :] = r


@aot.jit
def fill_all(m, x):
    m[...] = x


@aot.jit
def assign_transpose(m):
    m[:, :] = m.T


@aot.jit
def assign_block(m, src):
    m[1:3, ::-1] = src


def test_assign_rows_columns_and_blocks():
    for m in twos_d():
        n_rows, n_cols = m.shape
        for r in (np.arange(float(n_cols)), np.array([7.0]), np.zeros(0), np.arange(float(n_cols + 1))):
            for i in (0, -1, 2, 9):
                check(assign_row, m, i, r)
                check(assign_row_short, m, i, r)
            check(broadcast_rows, m, r)
        for c in (np.arange(float(n_rows)) - 1, np.array([3.0]), np.arange(float(n_rows))[::-1]):
            for j in (0, -1, 4):
                check(assign_column, m, j, c)
        check(fill_all, m, -2.0)
        for src in (np.ones((2, n_cols)), np.arange(float(n_cols)), np.ones((3, n_cols)), np.ones((2, 1))):
            check(assign_block, m, src)
    square = np.arange(16.0).reshape(4, 4)
    for m in (square, np.asfortranarray(square), square[::-1], square.T):
        check(assign_transpose, m)


@aot.jit
def int_slices(a, x):
    a[1:3] = x
    a[-1:] = a[:1]


@aot.jit
def bool_slices(a, b):
    a[::2] = True
    a[1::2] = b[: len(a[1::2])]


def test_slices_of_other_dtypes_convert_like_numpy():
    for a in (np.arange(6, dtype=np.int32), np.arange(6, dtype=np.int64)[::-1], np.zeros(1, dtype=np.int16)):
        check(int_slices, a, 7)
        check(int_slices, a, 2.75)
        check(int_slices, a, True)
    b = np.array([True, False, True, False])
    for a in (np.zeros(6, dtype=np.bool_), np.zeros(1, dtype=np.bool_), np.zeros(0, dtype=np.bool_)):
        check(bool_slices, a, b)


@aot.jit
def write_through_callee(a):
    fill_inner(a[2:], 5.0)


@aot.jit
def read_view_only(a):
    return weighted(a[1:])


def test_read_only_buffers_stay_read_only_through_views():
    ro = np.frombuffer(np.arange(5.0).tobytes(), dtype=np.float64)
    for f in (write_in_view, write_through_callee, shift_right):
        args = (ro, 1) if f is write_in_view else (ro,)
        with pytest.raises(ValueError, match="read-only"):
            f(*args)
        assert ro.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    check(read_view_only, ro)


@aot.jit
def write_through_tuple(a):
    t = (a[1:], a[2:])
    v = t[0]
    v[0] = 5.0


@aot.jit
def write_tuple_item(t):
    v = t[0]
    v[1:] = 7.0


@aot.jit
def write_tuple_of_views(a, x):
    write_tuple_item((a[::2], x))


def test_writes_through_tuples_of_views_are_seen():
    for f, args in ((write_through_tuple, ()), (write_tuple_of_views, (2.0,))):
        for a in ones_d():
            check(f, a, *args)
        ro = np.frombuffer(np.arange(4.0).tobytes(), dtype=np.float64)
        with pytest.raises(ValueError, match="read-only"):
            f(ro, *args)
        assert ro.tolist() == [0.0, 1.0, 2.0, 3.0]
    for a in ones_d():
        check(write_tuple_item, (a, 1.0))
    ro = np.frombuffer(np.arange(4.0).tobytes(), dtype=np.float64)
    with pytest.raises(TypeError):  # a read-only buffer inside a tuple argument: refused, nothing written
        write_tuple_item((ro, 1.0))
    assert ro.tolist() == [0.0, 1.0, 2.0, 3.0]


# ======================================================================================================
# a.T, reshape, ravel
# ======================================================================================================


@aot.jit
def transposed(m):
    t = m.T
    s = 0.0
    for i in range(t.shape[0]):
        s += weighted(t[i]) * (i + 1)
    return s, t.shape, m.T.T.shape


@aot.jit
def transposed_1d(a):
    return weighted(a.T)


def test_transpose():
    for m in twos_d():
        check(transposed, m)
    for a in ones_d():
        check(transposed_1d, a)


@aot.jit
def reshape_sum(a: aot.f64[::1], n: int, m: int):
    r = a.reshape(n, m)
    s = 0.0
    for i in range(r.shape[0]):
        s += weighted(r[i]) * (i + 1)
    return s, r.shape


@aot.jit
def reshape_tuple(a: aot.f64[:, ::1], k: int):
    r = a.reshape((k, -1, 2))
    return weighted(r[0, :, 1]), r.shape


@aot.jit
def reshape_write(a: aot.f64[::1]) -> None:
    r = a.reshape(-1, 2)
    r[:, 0] = 1.0


@aot.jit
def ravel_sum(m):
    return weighted(m.ravel()), m.ravel().shape


def test_reshape():
    a = np.arange(12.0)
    for n, m in ((3, 4), (4, 3), (-1, 6), (2, -1), (12, 1), (5, 2), (-1, 5), (-1, -1), (0, -1), (-2, -6)):
        check(reshape_sum, a, n, m)
    for n, m in ((0, 5), (0, -1), (-1, 0)):
        check(reshape_sum, np.zeros(0), n, m)
    check(reshape_sum, np.array([1.5]), 1, 1)
    for k in (1, 2, 3, -1, 5):
        check(reshape_tuple, np.arange(12.0).reshape(3, 4), k)
    for a in (np.arange(8.0), np.zeros(0), np.arange(7.0)):
        check(reshape_write, a)


def test_ravel():
    for m in twos_d():
        check(ravel_sum, m)


# ravel/reshape of arrays that are not C-contiguous: NumPy's view where NumPy gives one, a C copy otherwise;
# which of them is seen by writing into the result (check compares the arguments afterwards) and by
# np.shares_memory.


@aot.jit
def ravel_written(m):
    b = m.ravel()
    if len(b):
        b[0] = 99.0
    return b


@aot.jit
def np_ravel_written(m):
    b = np.ravel(m)
    if b.size:
        b[-1] = -99.0
    return weighted(b), b.shape


@aot.jit
def reshape_written(a, n):
    r = a.reshape(n, -1)
    if r.size:
        r[0, -1] = 77.0
    return r


@aot.jit
def np_reshape_written(a, shape):
    r = np.reshape(a, shape)
    r[0, 0, 0] = -1.5
    return r, weighted(r.ravel())


def non_contiguous():
    """Arrays of every layout, the non-contiguous ones among them (views into a larger block)."""
    block = np.arange(48.0) * 1.5 - 20.0
    block[7] = np.nan
    m = block[:24].reshape(4, 6)
    t = block.reshape(2, 4, 6)
    return [
        m,
        m.T,
        np.asfortranarray(m),
        m[::2],
        m[:, ::2],
        m[::-1],
        m[::-1, ::-1],
        m[1:3, 1:5],
        block[::2],
        block[::-1],
        block[::-3],
        t[:, ::2],
        t[:, :, ::3],
        t[::-1, 1:3],
        block.reshape(4, 12)[::2],
        block.reshape(4, 12)[::-2, ::-1],
        np.zeros((0, 4))[:, ::2],
        np.zeros((3, 0)).T,
        block[5:6],
        m[2:3, ::-2],
    ]


def test_ravel_of_any_layout():
    for a in non_contiguous():
        check(ravel_written, a)
        check(np_ravel_written, a)
        if a.flags.writeable and a.size:
            x = a.copy()  # (a C copy: the result is a view of it, written through)
            assert ravel_written(x)[0] == 99.0 and x.flat[0] == 99.0
            y = np.asfortranarray(a) if a.ndim > 1 else a[::-1]
            if not y.flags.c_contiguous:  # (a copy: y stays as it was)
                before = y.copy()
                ravel_written(y)
                assert np.array_equal(y, before, equal_nan=True)


def test_reshape_of_any_layout():
    for a in non_contiguous():
        for n in (1, 2, 3, 4, -1, 5, 0):
            check(reshape_written, a, n)
        if a.size and a.size % 2 == 0:
            for n in (1, 2, 3, a.shape[0]):
                if a.size % n == 0:
                    reshape_written_sharing(a, n)
        if a.size == 24:
            for shape in ((2, 3, 4), (4, 3, 2), (1, 24, 1), (2, -1, 3), (3, 2, -4)):
                check(np_reshape_written, a, shape)


@aot.jit
def reshaped_twice(a, n):
    s = 0.0
    for _ in range(n):
        r = a.reshape(2, -1)  # (a copy of a transposed array, a view of a[::2]; each dropped at the next)
        b = a.ravel()
        s += r[0, 0] + b[-1]
    return s


def test_views_and_copies_are_counted():
    m = np.arange(2000.0).reshape(40, 50)
    for a in (m.T, m[::2], m):
        check(reshaped_twice, a, 3)
    assert np.shares_memory(reshape_written(x := clone_array(m[::2]), 20), x)  # (NumPy: a view, same shape)
    assert not np.shares_memory(reshape_written(y := clone_array(m.T), 4), y)
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        for _ in range(200):
            reshaped_twice(m.T, 5)  # ~ 2 x 16 kB copied per round
            reshape_written(m.T, 4)
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, f"{grown} bytes still live after 200 rounds"


def reshape_written_sharing(a, n):
    """``reshape`` shares ``a``'s memory exactly where NumPy's does, with NumPy's strides."""
    x, y = clone_array(a), clone_array(a)
    r_jit, r_py = reshape_written(x, n), reshape_written.py_func(y, n)
    assert np.array_equal(r_jit, r_py, equal_nan=True)
    assert np.shares_memory(r_jit, x) == np.shares_memory(r_py, y), (a.shape, a.strides, n)
    assert r_jit.strides == r_py.strides or r_jit.size <= 1, (a.shape, a.strides, n)
    assert np.array_equal(x, y, equal_nan=True)


# ======================================================================================================
# What stays out: CompileErrors at file:line:col saying what to write instead
# ======================================================================================================


@aot.jit
def too_many_indices(m):
    return weighted(m[1:, 2:, 0])


@aot.jit
def two_ellipses(m):
    return weighted(m[..., 0, ...])


@aot.jit
def slice_a_tuple(x):
    t = (x, x, x)
    return t[1:]


@aot.jit
def float_bound(a):
    return weighted(a[1.0:])


@aot.jit
def flatten_copy(m):
    return weighted(m.flatten())


@aot.jit
def fancy_index(a, idx):
    return weighted(a[idx])


@aot.jit
def fancy_two_axes(m, idx):
    return m[idx, 1:]


@aot.jit
def fancy_two_arrays(m, idx):
    return m[idx, idx]


@aot.jit
def whole_slice_arithmetic(a):
    a[1:] += 1.0


@aot.jit
def zero_d(a):
    return a[0, ...]


@aot.jit
def assign_too_many_dims(a, m):
    a[1:] = m


@aot.jit
def slice_object(a):
    s = slice(1, 2)
    return a[s]


def test_unsupported_view_constructs_are_compile_errors():
    m, a = np.zeros((3, 4)), np.zeros(5)
    err = expect_compile_error(
        too_many_indices, m, at=locate(too_many_indices, "m[1:, 2:, 0]"), node_type=ast.Subscript
    )
    assert "too many indices" in str(err)
    err = expect_compile_error(two_ellipses, m, at=locate(two_ellipses, "m[..., 0, ...]"), node_type=ast.Subscript)
    assert "single ellipsis" in str(err)
    err = expect_compile_error(slice_a_tuple, 1.0, at=locate(slice_a_tuple, "t[1:]"), node_type=ast.Subscript)
    assert "tuple" in str(err)
    err = expect_compile_error(float_bound, a, at=locate(float_bound, "a[1.0:]"), node_type=ast.Subscript)
    assert "integers or None" in str(err)
    for arr in (m, m.T, m[::-1, ::2], np.zeros((0, 3)), np.ones((1, 1))):
        check(flatten_copy, arr)  # (a.flatten(): a new C-ordered 1-D array)
    idx = np.array([0, 1])
    check(fancy_index, np.arange(5.0), idx)  # (a[idx] on one axis compiles now: tests/test_elementwise.py)
    check(fancy_two_axes, m, idx)  # (one index array among slices: tests/test_fancy.py)
    err = expect_compile_error(
        fancy_two_arrays, m, idx, at=locate(fancy_two_arrays, "m[idx, idx]"), node_type=ast.Subscript
    )
    assert "only one index array" in str(err) and "loop over" in str(err)
    check(whole_slice_arithmetic, np.arange(5.0))  # (now compiled: tests/test_elementwise.py)
    err = expect_compile_error(zero_d, a, at=locate(zero_d, "a[0, ...]"), node_type=ast.Subscript)
    assert "drop the '...'" in str(err)
    err = expect_compile_error(
        assign_too_many_dims, a, m, at=locate(assign_too_many_dims, "a[1:] = m"), node_type=ast.Assign
    )
    assert "index the source down" in str(err)
    expect_compile_error(slice_object, a, at=locate(slice_object, "slice(1, 2)"), node_type=ast.Call)


@aot.jit
def bad_reshape_arg(a, x):
    return weighted(a.reshape(x, 2))


def test_reshape_needs_integers():
    err = expect_compile_error(
        bad_reshape_arg, np.zeros(4), 2.0, at=locate(bad_reshape_arg, "a.reshape(x, 2)"), node_type=ast.Call
    )
    assert "-1" in str(err)


# ======================================================================================================
# Views in kernels
# ======================================================================================================


@aot.kernel
def rows_kernel(m, out):
    i = aot.gpu.global_id()
    if i < m.shape[0]:
        t = 0.0
        for x in m[i, 1:]:
            t = t * 0.5 + x
        out[i] = t
        m[i, ::2] = -1.0
        m[i, 1:] = m[i, :-1]


def test_views_in_a_kernel_on_the_cpu_grid_and_in_ptx():
    from aot.runtime.cuda import no_device_reason
    from linker.nvvm import find_libdevice

    m = np.arange(20.0).reshape(4, 5)
    out = np.zeros(4)
    want_m, want_out = m.copy(), out.copy()
    rows_kernel.emulate[1, 8](want_m, want_out)
    if no_device_reason() is not None:  # no device: the kernel runs compiled for the CPU over the grid
        rows_kernel[1, 8](m, out)
        np.testing.assert_array_equal(out, want_out)
        np.testing.assert_array_equal(m, want_m)
    if find_libdevice() is not None:  # a device has no malloc: an overlapping source is refused, never copied
        ptx = rows_kernel.inspect_ptx("f64[:, ::1]", "f64[::1]")
        assert ".entry" in ptx and "malloc" not in ptx


# ======================================================================================================
# Views in a built image
# ======================================================================================================


def test_views_survive_aot_build_and_load_from_the_image(tmp_path):
    """Methods with views are built ahead of time, stored as IR in the image, and called from it in a fresh
    interpreter that never imports llvmlite."""
    from buildsupport import aot_build, pyproject, run_python, write_project

    project = write_project(
        tmp_path / "vp",
        {
            "pyproject.toml": pyproject("viewpkg"),
            "viewpkg/__init__.py": """
                import aot


                @aot.jit(signatures=["none(f64[:], f64[:])", "none(f64[::1], f64[::1])"])
                def smooth(a, out):
                    out[0] = 0.0
                    out[-1:] = out[:1]
                    mid = out[1:-1]
                    left, right = a[:-2], a[2:]
                    for i in range(len(mid)):
                        mid[i] = (left[i] + right[i]) * 0.5


                @aot.jit(signatures=["f64(f64[:, :], i64)"])
                def corner(m, k):
                    return m[::-1, k:].T.ravel()[0] if m.shape[1] == 1 else m[..., k][-1] + m.T[k, 0]
            """,
        },
    )
    done = aot_build(project)
    assert done.rc == 0, done.stderr
    run = run_python(
        project,
        """
        import numpy as np
        import viewpkg
        a = np.arange(6.0) ** 2
        out = np.ones(6)
        viewpkg.smooth(a, out)
        strided = np.ones(12)[::2]
        viewpkg.smooth(a[::-1].copy()[::1], strided)
        m = np.arange(12.0).reshape(3, 4)
        report(out=out, strided=strided, corner=viewpkg.corner(m, 1))
        """,
    )
    assert run["out"] == {"array": [0.0, 2.0, 5.0, 10.0, 17.0, 0.0]}
    assert run["strided"] == {"array": [0.0, 17.0, 10.0, 5.0, 2.0, 0.0]}
    assert run["corner"] == 9.0 + 1.0
    assert not run["llvmlite"]
    assert {e["kind"] for e in run["events"]} <= {"loaded"}, run["events"]


@aot.jit
def tail_of(a):
    return a[1:]


@aot.jit
def views_of_a_new_array(n):
    b = np.arange(n * 1.0).reshape((n, 1))
    return b[::2, 0], b.T


def test_views_returned_to_python_share_memory_and_outlive_compiled_references():
    a = np.arange(5.0)
    t = tail_of(a)
    assert np.shares_memory(t, a) and list(t) == [1.0, 2.0, 3.0, 4.0]
    frozen = np.arange(4.0)
    frozen.setflags(write=False)
    assert not tail_of(frozen).flags.writeable
    for n in (0, 1, 6):
        got, want = views_of_a_new_array(n), views_of_a_new_array.py_func(n)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])


@aot.jit
def flatten_and_write(m):
    f = m.flatten()
    f[0] = -1.0
    return f


def test_flatten_is_a_copy_in_c_order():
    for m in (np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(2, 3).T, np.arange(24.0).reshape(2, 3, 4)[:, ::2]):
        got, want = flatten_and_write(m.copy()), flatten_and_write.py_func(m.copy())
        np.testing.assert_array_equal(got, want)
        assert got.flags.c_contiguous and not np.shares_memory(got, m)


@aot.jit
def reshaped_to(a, shape):
    return np.reshape(a, shape)


def test_reshape_errors_carry_numpy_s_messages():
    m = np.arange(12.0)
    shapes = [(5, -1), (-1, 5), (5, 3), (0, -1), (7,), (2, -3, 4), (-1, -1, 5), (-1, -1), (1, 1, 1, 13)]
    for a in (m, m[::-1], m.reshape(3, 4).T, np.zeros(0)):
        for shape in shapes:
            check(reshaped_to, a, shape, messages=True)
    check(reshaped_to, m, (5, -1), raises=ValueError, messages=True)


@aot.jit
def ravel_in_fortran_order(a):
    return np.ravel(a, "F")


@aot.jit
def reshape_of_a_number(x):
    return np.reshape(x, 1)


def test_ravel_and_reshape_what_stays_out():
    err = expect_compile_error(
        ravel_in_fortran_order, np.zeros(3), at=locate(ravel_in_fortran_order, 'np.ravel(a, "F")'), node_type=ast.Call
    )
    assert "the C order" in str(err)
    err = expect_compile_error(
        reshape_of_a_number, 1.5, at=locate(reshape_of_a_number, "np.reshape(x, 1)"), node_type=ast.Call
    )
    assert "needs an array" in str(err)
