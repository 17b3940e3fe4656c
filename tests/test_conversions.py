"""NumPy's conversions of an array (``aot/intrinsics/conversions.py``): ``np.asarray(a)``, ``np.array(a)``,
``np.copy(a)``, ``np.ascontiguousarray(a)`` (with a compile-time ``dtype``), and the attributes ``a.strides``
and ``a.nbytes``.

Every compiled result, and every array argument's contents after the call, is compared with NumPy
(``f.py_func``) through ``support.check``, on arrays of every layout (C, Fortran, transposed, strided, reversed,
empty). ``np.asarray(a)`` is ``a`` itself: writing into it writes into ``a``, as in NumPy; the copies are new
C-ordered arrays. ``np.array(lst)`` / ``np.asarray(lst)`` of lists stay as they were.
"""

from __future__ import annotations

import ast

import numpy as np
import pytest

import aot

try:
    from .support import check, expect_compile_error, locate
except ImportError:  # tests/ is not a package
    from support import check, expect_compile_error, locate


def inputs():
    base = np.array([3.5, -1.0, 2.25, np.nan, 0.0, -7.5, 11.0, 4.0, -0.0])
    m = np.arange(20.0).reshape(4, 5) * 1.5 - 7
    t = np.arange(24.0).reshape(2, 3, 4) - 5
    return [
        base,
        base[::-1],
        base[1::2],
        np.zeros(0),
        m,
        np.asfortranarray(m),
        m.T,
        m[::-1, ::2],
        m[1:3, 1:],
        np.zeros((0, 3)),
        t,
        t.transpose(2, 0, 1),
        t[:, ::-1, ::2],
        np.zeros((2, 0, 3)),
        np.arange(12, dtype=np.int32).reshape(3, 4).T,
        np.array([[True, False], [False, True]])[:, ::-1],
    ]


def ids(a):
    return f"{a.dtype}{a.shape}{'C' if a.flags.c_contiguous else 'F' if a.flags.f_contiguous else 'A'}"


# ======================================================================================================
# np.asarray: the array itself
# ======================================================================================================


@aot.jit
def asarray_of(a):
    return np.asarray(a)


@aot.jit
def asarray_writes_through(a):
    b = np.asarray(a)
    b[0] = 42.0
    return b[0] + a[0]


@aot.jit
def asarray_same_dtype(a):
    b = np.asarray(a, dtype=np.float64)
    b[0] = 42.0
    return a[0]


@aot.jit
def asarray_converts(a):
    return np.asarray(a, np.float32)


@aot.jit
def asarray_converted_is_a_copy(a):
    b = np.asarray(a, dtype=np.int64)
    b[0] = 42
    return a[0]


@pytest.mark.parametrize("a", inputs(), ids=ids)
def test_asarray_is_the_array(a):
    check(asarray_of, a)
    assert np.shares_memory(asarray_of(a), a) or a.size == 0
    check(asarray_converts, a)


def test_asarray_aliases_its_array():
    a = np.arange(5.0)
    assert check(asarray_writes_through, a) == 84.0
    assert check(asarray_same_dtype, a) == 42.0
    assert check(asarray_converted_is_a_copy, a) == 0.0
    out = asarray_of(a)
    out[1] = -3.0
    assert a[1] == -3.0  # (the same memory, as NumPy's own result)


# ======================================================================================================
# np.array, np.copy: new C-ordered copies
# ======================================================================================================


@aot.jit
def array_of(a):
    return np.array(a)


@aot.jit
def array_int8(a):
    return np.array(a, dtype=np.int8)


@aot.jit
def array_bool(a):
    return np.array(a, np.bool_)


@aot.jit
def copy_of(a):
    return np.copy(a)


@aot.jit
def copies_are_new(a):
    b = np.array(a)
    c = np.copy(a)
    b[0] = 1.0
    c[0] = 2.0
    return a[0] + b[0] * 10.0 + c[0] * 100.0


@pytest.mark.parametrize("a", inputs(), ids=ids)
def test_array_and_copy_are_new_c_arrays(a):
    for f in (array_of, copy_of):
        got = check(f, a)
        assert got.flags.c_contiguous  # (np.copy keeps a Fortran array's order; compiled code's copy is C's)
        assert not np.shares_memory(got, a)
    if a.dtype.kind != "b" and not (a.dtype.kind == "f" and np.isnan(a).any()):
        check(array_int8, a)
    check(array_bool, a)


def test_copies_do_not_alias():
    a = np.arange(4.0)
    assert check(copies_are_new, a) == 210.0
    assert a[0] == 0.0


# ======================================================================================================
# np.ascontiguousarray: the array when it is C-ordered, else a C-ordered copy
# ======================================================================================================


@aot.jit
def contiguous_of(a):
    return np.ascontiguousarray(a)


@aot.jit
def contiguous_f32(a):
    return np.ascontiguousarray(a, dtype=np.float32)


@aot.jit
def contiguous_write(a):
    b = np.ascontiguousarray(a)
    b[0, 0] = 42.0
    return a[0, 0]


@pytest.mark.parametrize("a", inputs(), ids=ids)
def test_ascontiguousarray(a):
    got = check(contiguous_of, a)
    assert got.flags.c_contiguous
    if a.size:  # (NumPy's strides of an empty array are its own choice)
        assert got.strides == np.ascontiguousarray(a).strides
    check(contiguous_f32, a)


def test_ascontiguousarray_of_a_c_array_is_the_array():
    m = np.arange(6.0).reshape(2, 3)
    assert check(contiguous_write, m) == 42.0  # (known C-ordered when compiling: the array itself)
    assert np.shares_memory(contiguous_of(m), m)
    assert check(contiguous_write, m.T) == 0.0  # (a copy)


# ======================================================================================================
# Lists stay as they were
# ======================================================================================================


@aot.jit
def of_lists(x):
    return np.array([x, 2.0, 3.0]), np.asarray([1, 2, 3])


def test_lists_still_make_arrays():
    check(of_lists, 1.5)


# ======================================================================================================
# a.strides, a.nbytes
# ======================================================================================================


@aot.jit
def strides_of(a):
    return a.strides, a.nbytes


@aot.jit
def strides_of_views(a):
    return a.T.strides, a[::2].strides, a.reshape(-1).strides, np.zeros((3, 2)).strides, a.copy().nbytes


@pytest.mark.parametrize("a", inputs(), ids=ids)
def test_strides_and_nbytes(a):
    if a.size == 0:  # (the strides of an empty array are NumPy's own choice: compiled code has C strides)
        strides, nbytes = strides_of(a)
        assert len(strides) == a.ndim and nbytes == a.nbytes == 0
        return
    assert check(strides_of, a) == (a.strides, a.nbytes)


def test_strides_of_views_and_new_arrays():
    for a in (np.arange(12.0).reshape(3, 4), np.arange(24, dtype=np.int32).reshape(4, 6)[:, ::2]):
        check(strides_of_views, a)


# ======================================================================================================
# Refusals
# ======================================================================================================


@aot.jit
def copy_with_order(a):
    return np.copy(a, "F")


@aot.jit
def array_with_copy_keyword(a):
    return np.array(a, copy=True)


@aot.jit
def asarray_of_a_number(x):
    return np.asarray(x)


@aot.jit
def array_runtime_dtype(a, d):
    return np.array(a, d)


def test_refusals():
    a = np.arange(3.0)
    err = expect_compile_error(copy_with_order, a, at=locate(copy_with_order, 'np.copy(a, "F")'), node_type=ast.Call)
    assert "C-ordered" in str(err)
    err = expect_compile_error(
        array_with_copy_keyword, a, at=locate(array_with_copy_keyword, "np.array(a, copy=True)"), node_type=ast.Call
    )
    assert "dtype=" in str(err)
    expect_compile_error(asarray_of_a_number, 1.5, at=locate(asarray_of_a_number, "np.asarray(x)"), node_type=ast.Call)
    err = expect_compile_error(
        array_runtime_dtype, a, 3, at=locate(array_runtime_dtype, "np.array(a, d)"), node_type=ast.Call
    )
    assert "dtype must be" in str(err)


# ======================================================================================================
# np.identity, np.tril, np.triu, np.diag: new matrices
# ======================================================================================================


@aot.jit
def identities(n):
    return np.identity(n), np.identity(n, np.int32), np.identity(n, dtype=np.bool_), np.identity(n, np.float32)


@aot.jit
def triangles(a, k):
    return np.tril(a), np.triu(a), np.tril(a, k), np.triu(a, k=k)


@aot.jit
def diagonals(a, k):
    return np.diag(a), np.diag(a, k), np.diag(a, k=-k)


@aot.jit
def diagonal_is_a_copy(a):
    d = np.diag(a)
    d[0] = 42.0
    return a[0, 0]


def matrices():
    m = np.arange(20.0).reshape(4, 5) * 1.5 - 7
    return [
        m,
        m.T,
        m[::-1, ::2],
        np.asfortranarray(m),
        np.zeros((0, 3)),
        np.zeros((3, 0)),
        np.array([[4.0]]),
        np.arange(12, dtype=np.int32).reshape(3, 4).T,
        np.arange(9, dtype=np.uint8).reshape(3, 3),
        (np.arange(9).reshape(3, 3) % 2 == 0)[:, ::-1],
    ]


def vectors():
    base = np.array([3.5, -1.0, 2.25, np.nan, 0.0, -0.0])
    return [base, base[::-2], np.zeros(0), np.array([True, False, True]), np.arange(4, dtype=np.int16)]


@pytest.mark.parametrize("n", [0, 1, 4])
def test_identity(n):
    check(identities, n)


def test_identity_of_a_negative_size_raises_as_numpy():
    check(identities, -1, raises=ValueError)


@pytest.mark.parametrize("a", matrices(), ids=ids)
@pytest.mark.parametrize("k", [-5, -2, -1, 0, 1, 3, 6])
def test_tril_triu(a, k):
    for got in check(triangles, a, k):
        assert got.flags.c_contiguous


@pytest.mark.parametrize("a", matrices() + vectors(), ids=ids)
@pytest.mark.parametrize("k", [-4, -1, 0, 1, 2, 7])
def test_diag(a, k):
    check(diagonals, a, k)


def test_diag_of_a_matrix_is_a_copy():
    """(NumPy gives a read-only view of a 2-D array's diagonal; compiled code gives a new array.)"""
    m = np.arange(9.0).reshape(3, 3)
    assert diagonal_is_a_copy(m) == 0.0 and m[0, 0] == 0.0


@aot.jit
def tril_of_a_vector(v):
    return np.tril(v)


@aot.jit
def diag_of_a_cube(a):
    return np.diag(a)


@aot.jit
def identity_of_a_float(x):
    return np.identity(x)


def test_matrix_refusals():
    err = expect_compile_error(tril_of_a_vector, np.zeros(3), at=locate(tril_of_a_vector, "np.tril(v)"))
    assert "2-D" in str(err)
    err = expect_compile_error(diag_of_a_cube, np.zeros((2, 2, 2)), at=locate(diag_of_a_cube, "np.diag(a)"))
    assert "Input must be 1- or 2-d." in str(err)
    err = expect_compile_error(identity_of_a_float, 2.0, at=locate(identity_of_a_float, "np.identity(x)"))
    assert "integer" in str(err)
