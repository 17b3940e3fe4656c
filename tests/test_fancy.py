"""Indexing with an index array or a list of integers (one per subscript, among integers and slices, as Numba
allows), reads, writes and augmented assignment; ``np.outer``.

Every compiled result is checked against the same function run as plain Python (``support.check``: the same
dtype, shape and contents; array arguments hold the same contents afterwards), on empty, one-element,
negative-stride, non-contiguous and Fortran arrays; errors are NumPy's (``IndexError`` with its message for an
index out of bounds, ``ValueError`` for a value that does not broadcast); what stays unsupported is a
``CompileError`` at the subscript.
"""

import ast
import gc
import tracemalloc

import numpy as np
import pytest

import aot
from aot import gpu
from aot.runtime.cuda import no_device_reason

try:
    from .support import check, check_raises, expect_compile_error, locate
except ImportError:  # tests/ is not a package
    from support import check, check_raises, expect_compile_error, locate

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def arrays_1d(dtype=np.float64):
    a = np.array([3.5, -1.25, 0.0, 7.0, -0.0, 2.5, 10.0, -6.5]).astype(dtype)
    return [a, a[:0], a[:1], a[::-1], a[::2], a[5:1:-2]]


def arrays_2d(dtype=np.float64):
    a = np.arange(-6, 6).reshape(3, 4).astype(dtype)
    return [a, np.asfortranarray(a), a.T, a[::-1, ::2], a[:0], a[1:2, 1:2]]


def indices_for(n, dtype=np.int64):
    """Index arrays valid for an axis of ``n``: repeated, negative, empty, one entry."""
    if n == 0:
        return [np.zeros(0, dtype)]
    entries = [0, n - 1, 0, n - 1] if np.dtype(dtype).kind == "u" else [0, n - 1, 0, -1, -n]
    out = [np.array(entries, dtype), np.zeros(0, dtype), np.array([n - 1], dtype)]
    return out + [out[0][::-2]]


# ------------------------------------------------------------------------------------------ reads


@aot.jit
def take(a, idx):
    return a[idx]


@aot.jit
def take_pair(a, k, p):
    return a[[k, p]], a[[p]]


@aot.jit
def take_list(a, n):
    lst = []
    for i in range(n):
        lst.append(n - 1 - 2 * i)
    return a[lst]


@aot.jit
def take_nothing(a):
    return a[[]]


@pytest.mark.parametrize("k", range(6))
def test_index_array_reads_1d(k):
    a = arrays_1d()[k]
    for dtype in (np.int64, np.int32, np.uint8):
        for idx in indices_for(len(a), dtype):
            check(take, a, idx)
    check(take_nothing, a)
    check(take_list, a, 0)  # (a list appended to in a loop that never runs: empty)
    if len(a):
        check(take_pair, a, 0, len(a) - 1)
        check(take_pair, a, -1, 0)
        check(take_list, a, len(a) // 2 + 1)


def test_index_array_keeps_the_dtype():
    for dtype in (np.int32, np.uint8, np.bool_, np.float32):
        a = (np.arange(6) % 3).astype(dtype)
        out = check(take, a, np.array([5, 0, 2]))
        assert out.dtype == dtype


@aot.jit
def rows_and_columns(m, idx, i):
    return m[idx], m[idx, i], m[i, idx], m[:, idx], m[1:, idx], m[idx, ::-1], m[..., idx], m[idx, :]


@pytest.mark.parametrize("k", range(6))
def test_index_array_on_one_axis_of_2d(k):
    m = arrays_2d()[k]
    rows, cols = m.shape
    if rows == 0:
        check(take, m, np.zeros(0, np.int64))
        check_raises(take, m, np.array([0]), exc=IndexError)
        return
    for idx in indices_for(min(rows, cols)):
        check(rows_and_columns, m, idx, 0)
        check(rows_and_columns, m, idx, -1)


@aot.jit
def three_axes(a, idx):
    return a[0, :, idx], a[:, 0, idx], a[..., idx, 0], a[0, ..., idx, :], a[:, idx, 1:], a[1, idx]


def test_result_shapes_follow_numpy_for_one_advanced_index():
    # integers and the index array apart (a slice between them): the index's axis comes first, as in NumPy
    a = np.arange(24.0).reshape(2, 3, 4)
    idx = np.array([1, -1, 0])
    got = check(three_axes, a, idx)
    assert [x.shape for x in got] == [(3, 3), (2, 3), (2, 3), (3, 4), (2, 3, 3), (3, 4)]
    check(three_axes, a.transpose(2, 1, 0)[:2, :, ::-1].copy(order="F"), idx)


def test_index_out_of_bounds_is_numpys_index_error():
    m = np.arange(12.0).reshape(3, 4)
    check_raises(take, np.arange(3.0), np.array([0, 3]), exc=IndexError, messages=True)
    check_raises(take, np.arange(3.0), np.array([-4]), exc=IndexError, messages=True)
    check_raises(take, np.zeros(0), np.array([0]), exc=IndexError, messages=True)
    check_raises(rows_and_columns, m, np.array([3]), 0, exc=IndexError, messages=True)
    check_raises(three_axes, np.zeros((2, 3, 4)), np.array([3]), exc=IndexError, messages=True)
    # checked even where the result is empty along another axis (as NumPy does)
    check_raises(rows_and_columns, np.zeros((0, 3)), np.array([5]), 0, exc=IndexError)
    check_raises(take_pair, np.arange(3.0), 0, 3, exc=IndexError, messages=True)


@aot.jit(boundscheck=False)
def take_unchecked(a, idx):
    return a[idx]


@aot.jit(boundscheck=False)
def put_unchecked(a, idx):
    a[idx] = 1.0
    return a


def test_index_arrays_are_checked_even_without_boundscheck():
    # (boundscheck=False drops the checks of integer indices written in the code; an index array's entries are data)
    check_raises(take_unchecked, np.arange(3.0), np.array([0, 3]), exc=IndexError, messages=True)
    check_raises(put_unchecked, np.arange(3.0), np.array([-4]), exc=IndexError, messages=True)
    check(take_unchecked, np.arange(3.0), np.array([2, -3]))


# ------------------------------------------------------------------------------------------ writes


@aot.jit
def put(a, idx, v):
    a[idx] = v
    return a


@aot.jit
def put_list(a, k, p, x, y):
    a[[k, p]] = [x, y]
    return a


@aot.jit
def put_axes(m, idx, j, v):
    m[idx, j] = v
    m[j, idx] = v
    return m


@aot.jit
def put_columns(m, idx, v):
    m[:, idx] = v
    return m


@aot.jit
def put_rows_from(m, idx, lo):
    m[idx, lo:] = m[idx, :-lo] if lo else m[idx]
    return m


@aot.jit
def swap_rows(m, k, p):
    m[[k, p]] = m[[p, k]]
    return m


@pytest.mark.parametrize("k", range(6))
def test_index_array_writes_1d(k):
    a = arrays_1d()[k]
    for idx in indices_for(len(a)):
        check(put, a, idx, 9.5)
        check(put, a, idx, np.arange(len(idx)) * 1.5 - 1.0)
        check(put, a, idx, np.ones(1) * 4.0)
        check(put, a, idx, np.arange(len(idx), dtype=np.int32)[::-1])
    if len(a) > 1:
        check(put_list, a, 0, -1, 1.5, 2.5)
        check(put_list, a, 1, 1, 1.5, 2.5)  # (a repeated index: the last value stays)


def test_repeated_indices_keep_the_last_value():
    out = check(put, np.zeros(4), np.array([2, 2, 2, 0]), np.array([1.0, 2.0, 3.0, 4.0]))
    assert out[2] == 3.0


def test_writes_convert_to_the_arrays_dtype():
    check(put, np.arange(5), np.array([1, 3]), 2.75)
    check(put, np.arange(5, dtype=np.int32), np.array([1, 3]), np.array([2.5, -7.9]))
    check(put, np.zeros(4, np.bool_), np.array([1, 3]), 1)
    check(put, np.zeros(4, np.float32), np.array([1, 3]), np.array([True, False]))


@pytest.mark.parametrize("k", range(6))
def test_index_array_writes_2d(k):
    m = arrays_2d()[k]
    rows, cols = m.shape
    if rows == 0:
        check(put, m, np.zeros(0, np.int64), 1.0)
        return
    n = min(rows, cols)
    for idx in indices_for(n):
        check(put, m, idx, 7.0)
        check(put, m, idx, np.arange(cols) * 0.5)  # a row broadcast to every selected row
        check(put, m, idx, np.arange(len(idx) * cols).reshape(len(idx), cols))
        check(put_axes, m, idx, 0, -2.0)
        check(put_axes, m, idx, -1, np.arange(len(idx)) + 0.25)
        check(put_columns, m, idx, 3.0)
        check(put_columns, m, idx, np.arange(len(idx)) - 10.0)
        check(put_columns, m, idx, np.arange(rows)[::-1].reshape(rows, 1) * 1.0)
    check(swap_rows, m, 0, rows - 1)
    check(swap_rows, m, -1, -1)
    if cols > 1:
        check(put_rows_from, m, np.array([0, -1]), 1)
        check(put_rows_from, m, np.array([rows - 1]), 0)


@aot.jit
def put_reversed(a, idx):
    a[idx] = a[::-1]
    return a


@aot.jit
def put_columns_shifted(m, idx):
    m[:, idx] = m[:, ::-1]
    return m


def test_a_value_overlapping_the_array_is_read_first():
    check(put_reversed, np.arange(6.0), np.array([1, 2, 3, 4, 5, 0]))
    check(put_reversed, np.arange(6.0)[::-1], np.array([1, 2, 3, 4, 5, 0]))
    m = np.arange(12.0).reshape(3, 4)
    check(put_columns_shifted, m, np.array([1, 2, 3, 0]))
    check(put_columns_shifted, m.T, np.array([1, 2, 0]))


@aot.jit
def put_through_itself(idx, v):
    idx[idx] = v
    return idx


def test_an_index_array_that_is_written_is_read_as_it_was():
    check(put_through_itself, np.array([1, 0, 2]), 5)
    check(put_through_itself, np.array([1, 0, 2]), np.array([9, 8, 7]))
    check(put_through_itself, np.array([2, 2, 0]), 1)


def test_bad_writes_raise_numpys_errors_and_write_nothing():
    a = np.arange(5.0)
    check_raises(put, a, np.array([0, 5]), 1.0, exc=IndexError, messages=True)
    check_raises(put, a, np.array([4, -6]), np.array([1.0, 2.0]), exc=IndexError, messages=True)
    check_raises(put, a, np.array([0, 1]), np.arange(3.0), exc=ValueError)
    m = np.arange(12.0).reshape(3, 4)
    check_raises(put_columns, m, np.array([1, 4]), 0.0, exc=IndexError, messages=True)
    check_raises(put_columns, m, np.array([1, 2]), np.ones(3), exc=ValueError)
    check_raises(put_axes, m, np.array([0, 3]), 0, 1.0, exc=IndexError, messages=True)


# ------------------------------------------------------------------------------------------ augmented


@aot.jit
def bump(a, idx, v):
    a[idx] += v
    return a


@aot.jit
def bump_axes(m, idx, v):
    m[:, idx] *= v
    m[idx, 0] -= v
    m[1:, idx] += 1
    m[[0, 0]] += 1.5
    return m


@aot.jit
def bump_branching(m, idx, flag):
    m[:, idx] += 1.0 if flag else -2.0  # (the value's branches lie between the selection and its write)
    m[idx, 1:] = m[0, 1:] if flag else m[-1, :-1]
    return m


def test_augmented_assignment_is_buffered():
    check(bump_branching, np.arange(12.0).reshape(3, 4), np.array([2, 0, 2]), True)
    check(bump_branching, np.arange(12.0).reshape(3, 4), np.array([-1]), False)
    # NumPy: a repeated index is incremented once (the selection is read, computed, then written)
    check(bump, np.zeros(4), np.array([1, 1, 3, 1]), 1.0)
    check(bump, np.arange(5), np.array([-1, 0, -1]), np.array([10, 20, 30]))
    check(bump, np.arange(5.0)[::-2], np.zeros(0, np.int64), 1.0)
    for m in arrays_2d():
        if len(m) and m.shape[1] > 1:
            check(bump, m, np.array([0, -1, 0]), np.arange(m.shape[1]) * 1.0)
            check(bump_axes, m, np.array([1, 1, 0]), 2.0)


# ------------------------------------------------------------------------------------------ masks on one axis


@aot.jit
def mask_axes(m, rows, cols):
    return m[rows], m[:, cols], m[rows, -1], m[0, cols], m[rows, 1:], m[[True, False, True]]


@aot.jit
def mask_writes(m, rows, cols, v):
    m[:, cols] = v
    m[rows] += 1.0
    m[rows, 0] = -1.0
    return m


@aot.jit
def clear_through_itself(mask):
    mask[mask] = False
    return mask


def test_boolean_masks_along_one_axis():
    m = np.arange(12.0).reshape(3, 4)
    for x in (m, np.asfortranarray(m), m[::-1, ::-1], np.arange(48.0).reshape(6, 8)[::2, 1::2]):
        for rows in (np.array([True, False, True]), np.zeros(3, np.bool_), np.ones(3, np.bool_)[::-1]):
            cols = np.array([False, True, True, False])
            assert check(mask_axes, x, rows, cols) is not None
            check(mask_writes, x, rows, cols, 5.0)
            check(mask_writes, x, rows, cols[::-1], np.arange(3.0).reshape(3, 1))
    check(clear_through_itself, np.array([True, False, True]))
    # a mask of another length than its axis: NumPy's IndexError and message
    check_raises(mask_axes, m, np.array([True, False]), np.ones(4, np.bool_), exc=IndexError, messages=True)
    check_raises(mask_axes, m, np.ones(3, np.bool_), np.ones(5, np.bool_), exc=IndexError, messages=True)
    check_raises(mask_writes, m, np.ones(3, np.bool_), np.ones(3, np.bool_), 0.0, exc=IndexError, messages=True)
    check_raises(mask_writes, m, np.ones(3, np.bool_), np.ones(4, np.bool_), np.ones(3), exc=ValueError)


# ------------------------------------------------------------------------------------------ the corpus's use


@aot.jit
def lu(a):
    n = a.shape[0]
    lu = a.copy()
    perm = np.arange(n)
    for k in range(n):
        p = k + np.argmax(np.abs(lu[k:, k]))
        if p != k:
            lu[[k, p]] = lu[[p, k]]
            perm[k], perm[p] = perm[p], perm[k]
        lu[k + 1 :, k] /= lu[k, k]
        lu[k + 1 :, k + 1 :] -= np.outer(lu[k + 1 :, k], lu[k, k + 1 :])
    return lu, perm


def test_partial_pivoting_lu():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((6, 6))
    for x in (a, a.T, a[::-1, ::-1], np.ones((1, 1)), np.zeros((0, 0))):
        check(lu, x)


# ------------------------------------------------------------------------------------------ np.outer


@aot.jit
def outer(x, y):
    return np.outer(x, y)


def test_outer():
    for x in arrays_1d():
        for y in (np.arange(3.0), np.arange(4)[::-1], np.zeros(0)):
            check(outer, x, y)
            check(outer, y, x)
    m = np.arange(6).reshape(2, 3)
    check(outer, m, np.arange(2.0))  # (N-D arguments are flattened in C order)
    check(outer, m.T, m[:, ::-2])
    check(outer, np.array([1.0, np.nan, -0.0]), np.array([np.inf, -1.0]))
    check(outer, 2.5, np.arange(3))
    check(outer, np.arange(3), 4)
    for dx, dy in ((np.int32, np.float32), (np.uint8, np.int8), (np.bool_, np.bool_), (np.int32, np.int32)):
        got = check(outer, np.array([1, 0, 1], dx), np.array([1, 1], dy))
        assert got.dtype == np.outer(np.array([1], dx), np.array([1], dy)).dtype


# ------------------------------------------------------------------------------------------ what stays out


@aot.jit
def two_index_arrays(m, idx):
    return m[idx, idx]


@aot.jit
def index_matrix(a, idx):
    return a[idx]


@aot.jit
def float_index(a, x):
    return a[x]


@aot.jit
def nested_list(a):
    return a[[[0, 1]]]


@aot.jit
def mask_of_two_axes(m, mask):
    return m[mask]


@aot.jit
def outer_of_a_tuple(x):
    return np.outer((1.0, 2.0), x)


def test_unsupported_advanced_indexing_is_a_compile_error():
    m, idx = np.zeros((3, 4)), np.array([0, 1])
    err = expect_compile_error(
        two_index_arrays, m, idx, at=locate(two_index_arrays, "m[idx, idx]"), node_type=ast.Subscript
    )
    assert "only one index array" in str(err) and "loop over" in str(err)
    err = expect_compile_error(index_matrix, m[0], np.zeros((2, 2), np.int64), at=locate(index_matrix, "a[idx]"))
    assert "must be 1-D" in str(err)
    err = expect_compile_error(float_index, m[0], np.zeros(2), at=locate(float_index, "a[x]"))
    assert "integer or boolean" in str(err)
    err = expect_compile_error(nested_list, m, at=locate(nested_list, "a[[[0, 1]]]"), node_type=ast.Subscript)
    assert "index one axis at a time" in str(err)
    err = expect_compile_error(
        mask_of_two_axes, np.zeros((2, 3, 4)), np.ones((2, 3), np.bool_), at=locate(mask_of_two_axes, "m[mask]")
    )
    assert "a boolean mask must have the array's 3 axes" in str(err) and "or be 1-D" in str(err)
    err = expect_compile_error(outer_of_a_tuple, m[0], at=locate(outer_of_a_tuple, "np.outer"))
    assert "np.outer() takes arrays or numbers" in str(err)


# ------------------------------------------------------------------------------------------ read-only arrays


@aot.jit
def write_the_copy(a, idx):
    b = a[idx]
    b[0] = 1.0
    return b


@aot.jit
def write_the_columns(a, idx):
    c = a[:, idx]
    c[0] = 2.0
    a[:, idx][0] = 3.0
    return c


@aot.jit
def put_columns_then_read(m, idx):
    m[:, idx] = 0.0
    return m[0, 0]


def test_a_selection_is_a_copy_so_a_read_only_array_may_be_selected_from():
    for a in (np.arange(5.0), np.arange(6.0).reshape(2, 3)):
        a.setflags(write=False)
        out = write_the_copy(a, np.array([1, 0]))
        assert np.all(out[0] == 1.0) and not np.shares_memory(out, a)
        assert a.ravel()[0] == 0.0
    out = write_the_columns(a, np.array([1, 0]))
    assert out[0, 0] == 2.0 and out[1, 0] == 4.0 and a[0, 1] == 1.0
    m = np.arange(6.0).reshape(2, 3)
    m.setflags(write=False)
    for f, args in ((put, (np.array([0]), 1.0)), (put_columns_then_read, (np.array([0]),))):
        with pytest.raises(ValueError, match="read-only"):  # (writing through a[idx] and a[:, idx] is writing a)
            f(m, *args)
    assert m[0, 0] == 0.0


# ------------------------------------------------------------------------------------------ kernels


@aot.kernel
def scatter_kernel(x: aot.f64[::1], idx: aot.i64[::1], v: aot.f64[::1], w: aot.f64[::1]):
    if gpu.global_id() == 0:
        x[idx] = 1.5
    elif gpu.global_id() == 1:
        v[idx] = w[: len(idx)]


@pytest.mark.skipif(no_device_reason() is None, reason="a CUDA device is present: launches go to it")
def test_index_array_writes_in_a_kernel():
    x, v, w, idx = np.arange(6.0), np.arange(6.0), -np.arange(6.0) - 1.0, np.array([4, -1, 4])
    compiled, emulated = (x.copy(), v.copy()), (x.copy(), v.copy())
    scatter_kernel[1, 4](compiled[0], idx, compiled[1], w)
    scatter_kernel.emulate[1, 4](emulated[0], idx, emulated[1], w)
    for c, e in zip(compiled, emulated):
        np.testing.assert_array_equal(c, e)
    assert compiled[0][5] == 1.5 and compiled[1][4] == -3.0 and compiled[1][5] == -2.0
    with pytest.raises(IndexError, match="index 6 is out of bounds for axis 0 with size 6"):
        scatter_kernel[1, 1](x.copy(), np.array([6]), v.copy(), w)
    ptx_llvm = scatter_kernel.inspect_llvm("f64[::1]", "i64[::1]", "f64[::1]", "f64[::1]")
    assert "aot_index_error" not in ptx_llvm and "PyErr_Format" not in ptx_llvm


# ------------------------------------------------------------------------------------------ memory


@aot.jit
def churn(m, idx, cols, rounds):
    total = 0.0
    for _ in range(rounds):
        rows = m[idx]
        m[[0, 1]] = m[[1, 0]]
        m[:, idx] += 1.0
        m[idx] = m[::-1][: len(idx)]
        total += rows[0, 0] + m[:, cols].sum() + np.outer(rows[0], idx).sum()
    return total


def _live_bytes():
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def test_selections_and_their_copies_are_freed():
    m = np.arange(64.0 * 64).reshape(64, 64)
    idx, cols = np.arange(0, 64, 3), np.array([True, False] * 32)
    check(churn, m, idx, cols, 3)
    tracemalloc.start()
    try:
        start = _live_bytes()
        for _ in range(100):
            churn(m, idx, cols, 5)
            with pytest.raises(IndexError):
                take(m, np.array([0, 1, 64]))  # (the new array, half filled, is released)
            with pytest.raises(IndexError):
                rows_and_columns(m, np.array([0, 99]), 0)
            with pytest.raises(ValueError):
                put(m, idx, np.ones(3))
        grown = _live_bytes() - start
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, f"{grown} bytes still live after 100 rounds"


# ------------------------------------------------------------------------------------------ lists as values


@aot.jit
def assign_lists(a, m, x, y):
    a[1:3] = [x, y]
    a[:0] = []
    m[0, :] = [x, y, 1]
    m[:, [2, 0]] = [y, x]
    m[1:, [1]] = [True]
    return a, m


def test_lists_of_numbers_assign_as_arrays():
    a, m = np.arange(5.0), np.arange(9).reshape(3, 3)
    check(assign_lists, a, m, 7, -2)
    check(assign_lists, a[::-1], m.T, 0, 1)
    check_raises(assign_lists, a[:2], m, 7, -2, exc=ValueError)  # (a[1:3] has 1 element)
