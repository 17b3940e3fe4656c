"""Stores into integer arrays give NumPy 2's answer or NumPy's error, never a wrapped value: an ``i64`` (a Python
int in plain Python) or ``f64`` (a Python float) that does not fit the element's dtype raises, on every store path
(``a[i] = v``, ``a[i, j] = v``, ``a[...] = v``, ``a[:] = v``, slices, ``a.fill(v)``, ``a[idx] = v``,
``a[mask] = v``); NumPy scalars of other types are checked into signed dtypes and cast into unsigned ones, as
NumPy does. Every case is checked against the same function run as plain Python (``support.check``)."""

import numpy as np
import pytest

import aot

try:
    from .support import check as _check
except ImportError:  # tests/ is not a package
    from support import check as _check

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's cast warnings (plain Python side)


def check(f, *args, **kwargs):
    """``support.check`` with NumPy's messages compared too."""
    return _check(f, *args, messages=True, **kwargs)


DTYPES = [np.uint8, np.int8, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


def bounds(dtype):
    """Python ints at and just beyond the dtype's bounds (within i64: aot's ints are 64-bit)."""
    info = np.iinfo(dtype)
    values = [int(info.min), int(info.max), 0, -1, 1, int(info.min) - 1, int(info.max) + 1]
    return [v for v in values if -(2**63) <= v < 2**63]


FLOATS = [float("nan"), float("inf"), -float("inf"), 2.7, -2.7, 255.9, 256.0, -128.5, 1e30, -1e30, 9.3e18, -9.3e18]


@aot.jit
def store_at(a, i, v):
    a[i] = v
    return a[i]


@aot.jit
def store_2d(a, i, j, v):
    a[i, j] = v


@aot.jit
def store_all(a, v):
    a[...] = v


@aot.jit
def store_slice(a, v):
    a[:] = v


@aot.jit
def store_tail(a, v):
    a[1:] = v


@aot.jit
def store_reversed(a, v):
    a[::-1] = v


@aot.jit
def fill(a, v):
    a.fill(v)


@aot.jit
def store_index(a, idx, v):
    a[idx] = v


@aot.jit
def store_mask(a, v):
    a[a == 0] = v


@aot.jit
def store_from(a, src):
    for i in range(len(src)):
        a[i] = src[i]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_python_int_element_stores(dtype):
    for v in bounds(dtype):
        check(store_at, np.zeros(3, dtype), 1, v)
        check(store_at, np.zeros(3, dtype), -1, v)
        check(store_2d, np.zeros((2, 3), dtype), 1, 2, v)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_python_int_whole_array_stores(dtype):
    for v in bounds(dtype):
        for n in (0, 1, 4):
            for f in (store_all, store_slice, store_tail, store_reversed, fill, store_mask):
                check(f, np.zeros(n, dtype), v)
            check(store_index, np.zeros(n + 1, dtype), np.array([0, -1]), v)
        check(store_all, np.zeros((2, 3), dtype)[:, ::-1], v)


def test_the_briefs_cases_raise_as_numpy_does():
    check(store_at, np.zeros(2, np.uint8), 0, 300, raises=OverflowError)
    check(store_all, np.zeros(4, np.int32), 2**40, raises=OverflowError)
    check(store_at, np.zeros(2, np.int64), 0, float("nan"), raises=ValueError)
    check(store_at, np.zeros(2, np.int64), 0, float("inf"), raises=OverflowError)
    check(store_at, np.zeros(2, np.int8), 0, 2.7, expect=2)
    check(store_at, np.zeros(2, np.uint8), 0, 255, expect=255)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_python_float_stores(dtype):
    for v in FLOATS:
        check(store_at, np.zeros(3, dtype), 0, v)
        check(store_2d, np.zeros((2, 2), dtype), 1, 0, v)
        for f in (store_all, store_slice, fill, store_mask):
            check(f, np.zeros(3, dtype), v)
        check(store_index, np.zeros(3, dtype), np.array([2]), v)


SOURCES = [np.int8, np.uint8, np.int32, np.uint32, np.uint64, np.float32]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("src", SOURCES, ids=lambda d: d.__name__)
def test_numpy_scalars_into_other_dtypes(dtype, src):
    """A value read from an array of another dtype is a NumPy scalar in plain Python: NumPy checks it into a
    signed dtype and casts it (wrapping) into an unsigned one."""
    if src is np.float32:
        values = [np.nan, np.inf, -np.inf, 300.5, -3.5, 3e9, 1e30, 2.0**31, 2.0**63]
        if dtype is np.uint64:  # (NaN, inf and values beyond u64: undefined in C; aot casts them as astype does)
            values = [300.5, -3.5, 3e9, 2.0**31, 2.0**63]
    else:
        info = np.iinfo(src)
        values = [info.min, info.max, 0, 1, info.max // 2 + 1]
    for v in values:
        check(store_from, np.zeros(1, dtype), np.array([v], src))
    check(store_from, np.zeros(0, dtype), np.zeros(0, src))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64, np.float64], ids=lambda d: d.__name__)
def test_same_type_stores_are_unchanged(dtype):
    src = np.arange(-3, 4).astype(dtype)[::-1]
    check(store_from, np.zeros(7, dtype), src)


@aot.jit
def add_at(a, i, v):
    a[i] += v


def test_augmented_stores():
    """``a[i] += v``: the sum checked on its store (in range: NumPy's answer; ``v`` beyond the dtype and the sum
    too: NumPy's error, whose message names the sum where NumPy names ``v``). (Where only one of them leaves the
    dtype aot and NumPy differ: docs/SUBSET.md.)"""
    _check(add_at, np.full(2, 250, np.uint8), 0, 3, expect=None)
    _check(add_at, np.full(2, 250, np.uint8), 1, 300, raises=OverflowError)
    _check(add_at, np.zeros(2, np.int32), 0, 2**40, raises=OverflowError)
    _check(add_at, np.zeros(2, np.int32), 0, 2.5, expect=None)
    _check(add_at, np.zeros(2, np.int32), 0, float("nan"), raises=ValueError)
    _check(add_at, np.full(1, -100, np.int8), 0, -28, expect=None)
