"""NumPy's shape functions as views (``aot/intrinsics/shapes.py``): ``np.flip``, ``np.fliplr``, ``np.flipud``,
``np.expand_dims``, ``np.squeeze``, ``np.atleast_1d/2d/3d``, ``np.transpose``, ``np.swapaxes``, ``np.moveaxis``
and the methods ``a.squeeze``, ``a.transpose``, ``a.swapaxes``.

Every compiled result, and every array argument's contents after the call, is compared with NumPy
(``f.py_func``) through ``support.check``, on 1-D, 2-D and 3-D arrays of every layout (C, transposed, strided,
reversed, empty). The results are views: writing into one writes into the array, as in NumPy. What stays out
(``np.squeeze`` without ``axis=``, an axis that is not a constant or is out of range) is a CompileError at
``file:line:col``.
"""

from __future__ import annotations

import ast

import numpy as np
import pytest

import aot
from aot.infer.shapes import shape_rule
from aot.intrinsics.registry import SPECS
from aot.intrinsics.spec import Site
from aot.ir.ops import Intrinsic
from aot.types import F64, I64, ArrayType, TupleType

try:
    from .support import check, clone_array, expect_compile_error, locate
except ImportError:  # tests/ is not a package
    from support import check, clone_array, expect_compile_error, locate

# ======================================================================================================
# Inputs
# ======================================================================================================


def ones_d():
    base = np.array([3.5, -1.0, 2.25, np.nan, 0.0, -7.5, 11.0, 4.0, -0.0])
    return [base, base[::-1], base[1::2], np.zeros(0), np.array([2.5])]


def twos_d():
    m = np.arange(20.0).reshape(4, 5) * 1.5 - 7
    return [m, np.asfortranarray(m), m.T, m[::-1, ::2], m[1:3, 1:], np.zeros((0, 3)), np.array([[4.0]])]


def threes_d():
    t = np.arange(24.0).reshape(2, 3, 4) - 5
    return [t, t.transpose(2, 0, 1), t[:, ::-1, ::2], np.asfortranarray(t), np.zeros((2, 0, 3))]


def every():
    return ones_d() + twos_d() + threes_d()


# ======================================================================================================
# np.flip, np.fliplr, np.flipud
# ======================================================================================================


@aot.jit
def flip_all(a):
    return np.flip(a)


@aot.jit
def flip_none(a):
    return np.flip(a, None)


@aot.jit
def flip_first(a):
    return np.flip(a, 0)


@aot.jit
def flip_last(a):
    return np.flip(a, axis=-1)


@aot.jit
def flip_pair(a):
    return np.flip(a, (0, -1))


@aot.jit
def flip_lr(a):
    return np.fliplr(a)


@aot.jit
def flip_ud(a):
    return np.flipud(a)


def test_flip():
    for a in every():
        for f in (flip_all, flip_none, flip_first, flip_last, flip_ud):
            check(f, a)
        if a.ndim >= 2:
            check(flip_pair, a)
            check(flip_lr, a)
    for a in (
        np.arange(6, dtype=np.int32).reshape(2, 3),
        np.array([[True, False, False]]),
        np.arange(5, dtype=np.uint8),
    ):
        check(flip_all, a)
        check(transposed, a)
        check(atleast, a)


# ======================================================================================================
# np.expand_dims, np.squeeze, np.atleast_*
# ======================================================================================================


@aot.jit
def expand_front(a):
    return np.expand_dims(a, 0)


@aot.jit
def expand_back(a):
    return np.expand_dims(a, axis=-1)


@aot.jit
def expand_two(a):
    return np.expand_dims(a, (0, 2))


def test_expand_dims():
    for a in every():
        for f in (expand_front, expand_back, expand_two):
            got = check(f, a)
            assert got.shape == f.py_func(a).shape


@aot.jit
def squeeze_1(a):
    return np.squeeze(a, 1)


@aot.jit
def squeeze_keyword(a):
    return np.squeeze(a, axis=-1)


@aot.jit
def squeeze_pair(a):
    return np.squeeze(a, axis=(0, 2))


@aot.jit
def squeeze_method(a):
    return a.squeeze(0), a.squeeze(axis=-1)


def test_squeeze():
    t = np.arange(6.0).reshape(1, 6, 1)
    for a in (t, t[:, ::-2], np.asfortranarray(t), t.transpose(2, 1, 0), np.zeros((1, 0, 1))):
        for f in (squeeze_keyword, squeeze_pair, squeeze_method):
            check(f, a)
    for a in (np.arange(6.0).reshape(3, 1, 2), np.arange(6.0).reshape(3, 2, 1)[:, ::-1].transpose(0, 2, 1)):
        check(squeeze_1, a)


def test_squeeze_of_an_axis_not_of_length_one_raises_numpy_s_error():
    m = np.arange(6.0).reshape(2, 3)
    for f, a in ((squeeze_1, m), (squeeze_keyword, m), (squeeze_pair, np.zeros((1, 2, 2))), (squeeze_method, m)):
        check(f, a, raises=ValueError, messages=True)
    check(squeeze_1, np.zeros((2, 0)), raises=ValueError, messages=True)


@aot.jit
def atleast(a):
    return np.atleast_1d(a), np.atleast_2d(a), np.atleast_3d(a)


def test_atleast():
    for a in every():
        got = check(atleast, a)
        assert [g.shape for g in got] == [e.shape for e in atleast.py_func(a)]
    for x in (3.5, 7, True, -0.0):
        check(atleast, x)


# ======================================================================================================
# np.transpose, np.swapaxes, np.moveaxis and the methods
# ======================================================================================================


@aot.jit
def transposed(a):
    return np.transpose(a), a.transpose()


@aot.jit
def permuted(a):
    return np.transpose(a, (1, 2, 0)), np.transpose(a, axes=(-1, 0, 1)), a.transpose(2, 0, 1), a.transpose((0, 2, 1))


@aot.jit
def swapped(a):
    return np.swapaxes(a, 0, -1), a.swapaxes(0, 0)


@aot.jit
def moved(a):
    return np.moveaxis(a, 0, -1), np.moveaxis(a, -1, 0)


@aot.jit
def moved_many(a):
    return np.moveaxis(a, (0, 1), (2, 0))


def test_transpose_swapaxes_moveaxis():
    for a in every():
        check(transposed, a)
        check(swapped, a)
        check(moved, a)
        if a.ndim == 3:
            check(permuted, a)
            check(moved_many, a)


@aot.jit
def transpose_2d(a):
    return a.transpose(1, 0), np.transpose(a, (1, 0)), a.swapaxes(1, 0), a.transpose(None)


def test_transpose_2d():
    for a in twos_d():
        check(transpose_2d, a)


AXIS = -1
AXES = (0, -1)


@aot.jit
def global_axes(a):
    return np.flip(a, AXIS), np.squeeze(np.expand_dims(a, AXES), AXES), np.flip(a, 1 - 2)


def test_axes_from_globals_and_folded_arithmetic():
    for a in twos_d():
        check(global_axes, a)


# ======================================================================================================
# Views: writing through them, returning them, reading them in compiled loops
# ======================================================================================================


@aot.jit
def write_flipped(a):
    b = np.flip(a)
    b[0] = 9.0
    return a[-1]


@aot.jit
def write_each(m):
    np.fliplr(m)[0, 0] = 1.0
    np.flipud(m)[0, 0] = 2.0
    np.expand_dims(m, 0)[0, 1, 1] = 3.0
    np.transpose(m)[0, 2] = 4.0
    m.swapaxes(0, 1)[1, 2] = 5.0
    np.atleast_3d(m)[1, 0, 0] = 6.0
    np.moveaxis(m, 0, 1)[2, 3] = 7.0
    return m.sum()


@aot.jit
def write_squeezed(t):
    s = t.squeeze(axis=1)
    s[-1, 0] = -1.0
    s[0, :] = 8.0


def test_writing_through_the_views_writes_the_array():
    for a in ones_d():
        if len(a):
            check(write_flipped, a)
    for m in twos_d()[:5]:
        check(write_each, m)
    t = np.arange(12.0).reshape(3, 1, 4)
    for a in (t, t[::-1, :, ::2], np.asfortranarray(t)):
        check(write_squeezed, a)


def test_writing_through_a_view_of_a_read_only_array_is_refused_at_the_call():
    a = np.arange(5.0)
    a.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        write_flipped(a)
    assert list(flip_all(a)) == [4.0, 3.0, 2.0, 1.0, 0.0]  # (reading is fine)


@aot.jit
def flipped_view(a):
    return np.flip(a, 1)


@aot.jit
def squeezed_view(a):
    return a.squeeze(0)


def test_returned_views_share_the_array_s_memory():
    m = np.arange(12.0).reshape(3, 4)
    got = flipped_view(x := clone_array(m))
    assert np.shares_memory(got, x) and got.strides == (32, -8)
    got[0, 0] = 99.0
    assert x[0, 3] == 99.0
    got = squeezed_view(y := clone_array(m[None, :, ::2]))
    assert np.shares_memory(got, y) and got.shape == (3, 2)
    for f in (expand_front, atleast, transposed, swapped, moved):
        result = f(z := clone_array(m))
        for r in result if isinstance(result, tuple) else (result,):
            assert np.shares_memory(r, z)


@aot.jit
def weighted_reversed(a):
    b = np.flip(a)
    t = 0.0
    for i in range(len(b)):
        t += b[i] * (i + 1)
    return t


@aot.jit
def column_sums(m):
    c = np.swapaxes(m, 0, 1)
    out = np.zeros(c.shape[0])
    for i in range(c.shape[0]):
        out[i] = c[i].sum()
    return out


def test_views_read_in_loops():
    for a in ones_d():
        check(weighted_reversed, a)
    for m in twos_d():
        check(column_sums, m)


@aot.jit(parallel=True)
def parallel_reversed(a, out):
    r = np.flip(a)
    for i in aot.prange(len(out)):
        out[i] = r[i] * 2.0


@aot.jit(parallel=True)
def parallel_write_through_view(a):
    r = np.flip(a)
    for i in aot.prange(len(a)):
        r[i] = i * 1.0


def test_prange_reads_views_of_shared_arrays():
    a = np.arange(100.0)
    out = np.zeros(100)
    parallel_reversed(a, out)
    assert np.array_equal(out, a[::-1] * 2.0)


def test_prange_write_through_a_view_of_a_shared_array():
    """The race check treats a view's region as unknown: a write through it in a prange loop is refused."""
    a = np.arange(10.0)
    expect_compile_error(parallel_write_through_view, a, at=locate(parallel_write_through_view, "r[i] = i * 1.0"))


# ======================================================================================================
# Types
# ======================================================================================================


def _typed(fn, args, consts=(), name="f"):
    spec = SPECS[fn]
    return shape_rule(spec, args, Site(name, consts=consts))


def test_result_types_and_layouts():
    c2, a2, c3 = ArrayType(F64, 2, "C"), ArrayType(F64, 2, "A"), ArrayType(F64, 3, "C")
    assert _typed(Intrinsic.NP_FLIP, (c2,)) == a2
    assert _typed(Intrinsic.NP_EXPAND_DIMS, (c2, I64), (None, -1)) == c3
    assert _typed(Intrinsic.NP_EXPAND_DIMS, (a2, I64), (None, 0)) == ArrayType(F64, 3, "A")
    assert _typed(Intrinsic.NP_SQUEEZE, (c3, TupleType((I64, I64))), (None, (0, 2))) == ArrayType(F64, 1, "C")
    assert _typed(Intrinsic.NP_ATLEAST_3D, (ArrayType(F64, 1, "C"),)) == c3
    assert _typed(Intrinsic.NP_ATLEAST_2D, (F64,)) == c2
    assert _typed(Intrinsic.NP_TRANSPOSE, (c2,)) == a2
    assert _typed(Intrinsic.NP_TRANSPOSE, (c2, TupleType((I64, I64))), (None, (0, 1))) == c2
    assert _typed(Intrinsic.NP_SWAPAXES, (c2, I64, I64), (None, 1, -1)) == c2
    assert _typed(Intrinsic.NP_MOVEAXIS, (c3, I64, I64), (None, 0, 2)) == ArrayType(F64, 3, "A")


# ======================================================================================================
# Refusals
# ======================================================================================================


@aot.jit
def squeeze_unknown(a):
    return np.squeeze(a)


@aot.jit
def squeeze_method_unknown(a):
    return a.squeeze()


@aot.jit
def flip_runtime_axis(a, k):
    return np.flip(a, k)


@aot.jit
def expand_out_of_range(a):
    return np.expand_dims(a, 3)


@aot.jit
def swap_out_of_range(a):
    return np.swapaxes(a, 0, -3)


@aot.jit
def fliplr_1d(a):
    return np.fliplr(a)


@aot.jit
def transpose_wrong(a):
    return np.transpose(a, (0, 0))


@aot.jit
def transpose_short(a):
    return np.transpose(a, (0,))


@aot.jit
def squeeze_everything(a):
    return np.squeeze(a, (0, 1))


@aot.jit
def atleast_two(a, b):
    return np.atleast_1d(a, b)


@aot.jit
def moveaxis_mismatch(a):
    return np.moveaxis(a, (0, 1), 0)


def test_refusals_are_located_compile_errors():
    m = np.zeros((2, 3))
    err = expect_compile_error(squeeze_unknown, m, at=locate(squeeze_unknown, "np.squeeze(a)"), node_type=ast.Call)
    assert "axis=" in str(err)
    err = expect_compile_error(
        squeeze_method_unknown, m, at=locate(squeeze_method_unknown, "a.squeeze()"), node_type=ast.Call
    )
    assert "axis=" in str(err)
    err = expect_compile_error(
        flip_runtime_axis, m, 0, at=locate(flip_runtime_axis, "np.flip(a, k)"), node_type=ast.Call
    )
    assert "compile-time constant" in str(err)
    err = expect_compile_error(
        expand_out_of_range, m, at=locate(expand_out_of_range, "np.expand_dims(a, 3)"), node_type=ast.Call
    )
    assert "axis 3 is out of bounds for array of dimension 3" in str(err)
    with pytest.raises(np.exceptions.AxisError, match="axis 3 is out of bounds for array of dimension 3"):
        expand_out_of_range.py_func(m)
    err = expect_compile_error(
        swap_out_of_range, m, at=locate(swap_out_of_range, "np.swapaxes(a, 0, -3)"), node_type=ast.Call
    )
    assert "axis -3 is out of bounds for array of dimension 2" in str(err)
    err = expect_compile_error(fliplr_1d, np.zeros(3), at=locate(fliplr_1d, "np.fliplr(a)"), node_type=ast.Call)
    assert "Input must be >= 2-d." in str(err)
    err = expect_compile_error(
        transpose_wrong, m, at=locate(transpose_wrong, "np.transpose(a, (0, 0))"), node_type=ast.Call
    )
    assert "repeated axis in transpose" in str(err)
    err = expect_compile_error(
        transpose_short, m, at=locate(transpose_short, "np.transpose(a, (0,))"), node_type=ast.Call
    )
    assert "axes don't match array" in str(err)
    err = expect_compile_error(
        squeeze_everything, np.zeros((1, 1)), at=locate(squeeze_everything, "np.squeeze(a, (0, 1))")
    )
    assert "0-d" in str(err)
    err = expect_compile_error(atleast_two, m, m, at=locate(atleast_two, "np.atleast_1d(a, b)"), node_type=ast.Call)
    assert "once for each array" in str(err)
    err = expect_compile_error(moveaxis_mismatch, m, at=locate(moveaxis_mismatch, "np.moveaxis"), node_type=ast.Call)
    assert "same number of elements" in str(err)
