"""NumPy's comparisons of whole arrays in compiled code (SUBSET.md, "Beyond the floor"): ``np.isclose``,
``np.allclose`` and ``np.array_equal``, each compared with NumPy (``f.py_func``) through ``support.check``:
values and dtypes exactly, broadcasting and its ``ValueError``, and the ``CompileError`` of what stays
unsupported."""

from __future__ import annotations

import ast

import numpy as np
import pytest

import aot

try:
    from .support import check, expect_compile_error, locate
except ImportError:  # tests/ is not a package
    from support import check, expect_compile_error, locate

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's warnings (plain Python side)

NAN = float("nan")
INF = float("inf")
_RNG = np.random.default_rng(33)
_DTYPES = [np.float64, np.float32, np.int64, np.int32, np.bool_]
_PAIRS = [(d, d) for d in _DTYPES] + [
    (np.int64, np.float64),
    (np.float64, np.float32),
    (np.float32, np.int32),
    (np.int32, np.bool_),
    (np.bool_, np.float64),
]
"""Each dtype with itself, and the mixed pairs whose promotion differs (each pair compiles its own code)."""


def _data(dtype: type, shape: tuple[int, ...]) -> np.ndarray:
    """Values with many near neighbours (each a small step from the one before), NaN and inf among floats."""
    if dtype is np.bool_:
        return _RNG.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        return _RNG.integers(-5, 5, size=shape).astype(dtype)
    values = _RNG.choice([0.0, 1.0, 1.0 + 1e-9, 1.0 + 1e-6, 1.0 + 1e-3, -2.5, 1e-9, NAN, INF, -INF], size=shape)
    return values.astype(dtype)


# ------------------------------------------------------------------------------ np.isclose
@aot.jit
def isclose(a, b):
    return np.isclose(a, b)


@aot.jit
def isclose_all(a, b, rtol, atol, equal_nan):
    return np.isclose(a, b, rtol, atol, equal_nan)


@aot.jit
def isclose_atol(a, b, atol):
    return np.isclose(a, b, atol=atol)


@aot.jit
def isclose_nan(a, b):
    return np.isclose(a, b, equal_nan=True)


@aot.jit
def isclose_keywords(a, b):
    return np.isclose(a, b, equal_nan=True, atol=1e-3, rtol=0.0)


@aot.jit
def isclose_atol_nan(a, b, atol, equal_nan):
    return np.isclose(a, b, atol=atol, equal_nan=equal_nan)


@aot.jit
def isclose_fused(a, b):
    return np.isclose(a * 2.0, b + 1.0)


@pytest.mark.parametrize(("x_dtype", "y_dtype"), _PAIRS)
def test_isclose_arrays_of_each_dtype(x_dtype: type, y_dtype: type) -> None:
    for shape in [(0,), (9,), (3, 4)]:
        x = _data(x_dtype, shape)
        y = x.copy() if x_dtype is y_dtype else _data(y_dtype, shape)
        if x.size:
            y.flat[0] = _data(y_dtype, (1,))[0]
        check(isclose, x, y)
        check(isclose, y, x)
        check(isclose_nan, x, y)
        check(isclose_atol, x, y, 0.5)
        check(isclose_all, x, y, 0.1, 0.01, True)
        check(isclose_all, x, y, 0, 0, False)
        check(isclose_keywords, x, y)


def test_isclose_near_values_nan_and_inf() -> None:
    a = np.array([1.0, 1.0, 1.0, NAN, NAN, INF, INF, -INF, 1e10, 0.0, 1e-9, 0.0])
    b = np.array([1.0 + 1e-6, 1.0 + 1e-4, 1.0 + 2e-5, NAN, 1.0, INF, -INF, INF, 1.00001e10, 1e-9, 0.0, -0.0])
    for x, y in [(a, b), (b, a), (a.astype(np.float32), b), (a, b.astype(np.float32))]:
        check(isclose, x, y)
        check(isclose_nan, x, y)
        check(isclose_all, x, y, 0.0, 0.0, True)
        check(isclose_all, x, y, 1e-3, 0.0, False)
        check(isclose_atol, x, y, 1e-8)


def test_isclose_numbers() -> None:
    for x, y in [(1.0, 1.0 + 1e-9), (1.0, 1.1), (NAN, NAN), (INF, INF), (INF, -INF), (3, 3), (3, 4), (True, 1.0)]:
        check(isclose, x, y)
        check(isclose_nan, x, y)
        check(isclose_all, x, y, 0.2, 0.0, False)
        check(isclose_all, x, y, 0.0, 0.0, True)
        check(isclose_keywords, x, y)
    check(isclose, np.float32(1.0), np.float32(1.0 + 1e-6))
    for x, y in [(1.0, 1.001), (NAN, NAN), (1.0, 1.1)]:  # (a bool equal_nan stands for the missing rtol)
        for equal_nan in (True, False):
            check(isclose_atol_nan, x, y, 0.01, equal_nan)
            check(isclose_atol_nan, np.array([x]), y, 0.01, equal_nan)


def test_isclose_a_number_beside_an_array_adapts() -> None:
    for a in (_data(np.float32, (12,)), _data(np.float64, (12,)), _data(np.int32, (6,)), _data(np.bool_, (4,))):
        for n in (1.0, 1.0 + 1e-6, 1, 0, NAN, INF, True):
            check(isclose, a, n)
            check(isclose, n, a)
            check(isclose_nan, a, n)
            check(isclose_atol, n, a, 1e-3)


def test_isclose_broadcasts_and_reads_strides() -> None:
    a = _data(np.float64, (4, 6))
    check(isclose, a, a[0])
    check(isclose, a[:, :1], a[0])
    check(isclose, a[::2, ::3], a[1::2, ::3].T.T)
    check(isclose, a.T, a.T.copy())
    check(isclose, a[:, ::-1], a)
    check(isclose, a.reshape(2, 2, 6), a[:2])
    check(isclose_fused, a, a)
    check(isclose, a, a[:3])  # (shapes (4, 6) and (3, 6): NumPy's ValueError)
    check(isclose, a, np.zeros(5))


# ------------------------------------------------------------------------------ np.allclose
@aot.jit
def allclose(a, b):
    return np.allclose(a, b)


@aot.jit
def allclose_all(a, b, rtol, atol, equal_nan):
    return np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


@aot.jit
def allclose_nan(a, b):
    return np.allclose(a, b, equal_nan=True)


@pytest.mark.parametrize("dtype", _DTYPES)
def test_allclose(dtype: type) -> None:
    for shape in [(0,), (1,), (9,), (3, 4)]:
        x = _data(dtype, shape)
        for y in (x, x.copy(), _data(dtype, shape), x[::-1], x.astype(np.float64) + 1e-9, x.astype(np.float64) + 1e-3):
            check(allclose, x, y)
            check(allclose_nan, x, y)
            check(allclose_all, x, y, 0.1, 0.01, True)
            check(allclose_all, x, y, 0.0, 2.0, False)


def test_allclose_numbers_broadcasting_and_errors() -> None:
    a = np.linspace(0.0, 1.0, 12).reshape(3, 4)
    check(allclose, a, a[0])
    check(allclose, a, 0.5)
    check(allclose, 1.0, 1.0 + 1e-9)
    check(allclose, 1.0, 1.1)
    check(allclose, NAN, NAN)
    check(allclose_nan, NAN, NAN)
    check(allclose_nan, np.full(3, NAN), NAN)
    check(allclose, a, a[:2])  # (NumPy's ValueError)
    check(allclose, np.zeros((0, 4)), np.zeros(4))


# ------------------------------------------------------------------------------ np.array_equal
@aot.jit
def array_equal(a, b):
    return np.array_equal(a, b)


@aot.jit
def array_equal_nan(a, b, equal_nan):
    return np.array_equal(a, b, equal_nan=equal_nan)


@pytest.mark.parametrize(("x_dtype", "y_dtype"), _PAIRS)
def test_array_equal_of_each_dtype(x_dtype: type, y_dtype: type) -> None:
    for shape in [(0,), (7,), (3, 4)]:
        x = _data(x_dtype, shape)
        for y in (x.astype(y_dtype), _data(y_dtype, shape)):
            check(array_equal, x, y)
            check(array_equal_nan, x, y, True)
            check(array_equal_nan, x, y, False)


def test_array_equal_shapes_strides_nan_and_numbers() -> None:
    a = np.arange(12.0).reshape(3, 4)
    check(array_equal, a, a.copy())
    check(array_equal, a, a.T)
    check(array_equal, a.T, a.T.copy())
    check(array_equal, a[:, ::-1], a[:, ::-1].copy())
    check(array_equal, a, a[:2])
    check(array_equal, a, a[0])
    check(array_equal, a[0], a)
    check(array_equal, a.ravel(), a)
    check(array_equal, np.zeros(0), np.zeros((0,)))
    check(array_equal, np.zeros((0, 3)), np.zeros((3, 0)))
    check(array_equal, a, 1.0)
    check(array_equal, 2.0, 2)
    check(array_equal, 2.0, 2.5)
    n = np.array([1.0, NAN, INF])
    check(array_equal, n, n)
    check(array_equal_nan, n, n.copy(), True)
    check(array_equal_nan, n, np.array([1.0, 2.0, INF]), True)
    check(array_equal_nan, np.array([1.0, 2.0, INF]), n, True)
    check(array_equal_nan, n, n.astype(np.float32), True)
    check(array_equal_nan, NAN, NAN, True)
    check(array_equal_nan, NAN, NAN, False)


# ------------------------------------------------------------------------------ refusals
@aot.jit
def isclose_of_numbers_atol(a, b):
    return np.isclose(a, b, atol=1e-3)


@aot.jit
def isclose_array_rtol(a, b):
    return np.isclose(a, b, rtol=b)


@aot.jit
def isclose_bool_atol(a, b):
    return np.isclose(a, b, atol=True)


@aot.jit
def isclose_of_a_tuple(a):
    return np.isclose((1.0, 2.0), a)


@aot.jit
def allclose_too_many(a):
    return np.allclose(a, a, 1e-5, 1e-8, False, 3)


@aot.jit
def array_equal_float_equal_nan(a):
    return np.array_equal(a, a, equal_nan=1.5)


@aot.jit
def allclose_unknown_keyword(a):
    return np.allclose(a, a, tol=1.0)


def test_refusals_say_what_to_write() -> None:
    a = np.ones(3)
    err = expect_compile_error(
        isclose_of_numbers_atol, 1.0, 2.0, at=locate(isclose_of_numbers_atol, "np.isclose"), node_type=ast.Call
    )
    assert "rtol= and atol=" in str(err)
    err = expect_compile_error(isclose_array_rtol, a, a, at=locate(isclose_array_rtol, "np.isclose"))
    assert "rtol= must be a number" in str(err)
    err = expect_compile_error(isclose_bool_atol, a, a, at=locate(isclose_bool_atol, "np.isclose"))
    assert "not a bool" in str(err)
    expect_compile_error(isclose_of_a_tuple, a, at=locate(isclose_of_a_tuple, "np.isclose"))
    expect_compile_error(allclose_too_many, a, at=locate(allclose_too_many, "np.allclose"))
    err = expect_compile_error(array_equal_float_equal_nan, a, at=locate(array_equal_float_equal_nan, "np.array_equal"))
    assert "equal_nan" in str(err)
    expect_compile_error(allclose_unknown_keyword, a, at=locate(allclose_unknown_keyword, "np.allclose"))
