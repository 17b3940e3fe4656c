"""``np.nanprod`` in compiled code (SUBSET.md, "Beyond the floor"), compared with NumPy (``f.py_func``) through
``support.check``: values and dtypes exactly (float products in NumPy's order, bit for bit), and the
``CompileError`` of what stays unsupported."""

from __future__ import annotations

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


@aot.jit
def nanprod(a):
    return np.nanprod(a)


def _data(dtype: type, shape: tuple[int, ...]) -> np.ndarray:
    if dtype is np.bool_:
        return _RNG.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        return _RNG.integers(1, 4, size=shape).astype(dtype)
    values = _RNG.uniform(0.5, 1.7, size=shape)
    values[_RNG.random(shape) < 0.2] = NAN
    return values.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.int8, np.uint8, np.uint64, np.bool_])
@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (300,), (3, 4), (0, 3), (2, 3, 5)])
def test_nanprod_of_each_dtype_and_shape(dtype: type, shape: tuple[int, ...]) -> None:
    a = _data(dtype, shape)
    check(nanprod, a)
    check(nanprod, a.T)
    if a.ndim:
        check(nanprod, a[::-1])
    if a.ndim > 1:
        check(nanprod, np.asfortranarray(a))
        check(nanprod, a[:, ::2])


def test_nanprod_nan_inf_and_overflow() -> None:
    check(nanprod, np.array([NAN, NAN]))
    check(nanprod, np.array([NAN, INF, 2.0]))
    check(nanprod, np.array([INF, 0.0, NAN]))
    check(nanprod, np.array([-0.0, NAN, 3.0]))
    check(nanprod, np.array([1e300, 1e300, NAN], dtype=np.float64))
    check(nanprod, np.array([1e30, 1e30], dtype=np.float32))
    check(nanprod, np.full(70, 2, dtype=np.int64))  # (wraps, as NumPy's)
    check(nanprod, np.full(70, 3, dtype=np.int8))
    check(nanprod, np.full(70, 3, dtype=np.uint32))
    big = _RNG.uniform(0.9, 1.1, size=(40, 50))
    check(nanprod, big)
    check(nanprod, big.T)
    check(nanprod, big[::3, ::-2])


@aot.jit
def nanprod_axis(a):
    return np.nanprod(a, axis=0)


@aot.jit
def nanprod_of_a_number(x):
    return np.nanprod(x)


def test_nanprod_refusals_say_what_to_write() -> None:
    expect_compile_error(nanprod_axis, np.ones((2, 2)), at=locate(nanprod_axis, "np.nanprod"))
    err = expect_compile_error(nanprod_of_a_number, 2.0, at=locate(nanprod_of_a_number, "np.nanprod"))
    assert "array" in str(err)


# ------------------------------------------------------------------------------ np.trapezoid
@aot.jit
def trapezoid(y):
    return np.trapezoid(y)


@aot.jit
def trapezoid_x(y, x):
    return np.trapezoid(y, x)


@aot.jit
def trapezoid_x_keyword(y, x):
    return np.trapezoid(y, x=x, dx=3.0)


@aot.jit
def trapezoid_dx(y, dx):
    return np.trapezoid(y, dx=dx)


@aot.jit
def trapezoid_none_dx(y, dx):
    return np.trapezoid(y, None, dx)


_NUMBERS = [np.float64, np.float32, np.int64, np.int32, np.int8, np.uint8]


@pytest.mark.parametrize("y_dtype", _NUMBERS)
@pytest.mark.parametrize("x_dtype", _NUMBERS)
def test_trapezoid_of_each_dtype(y_dtype: type, x_dtype: type) -> None:
    for n in (0, 1, 2, 5, 200):
        y = (_RNG.uniform(-60, 60, size=n)).astype(y_dtype)
        x = np.sort(_RNG.uniform(0, 100, size=n)).astype(x_dtype)
        check(trapezoid, y)
        check(trapezoid_x, y, x)
        check(trapezoid_x_keyword, y, x)
        check(trapezoid_x, y[::-2], x[::-2])
        for dx in (0.5, 2, 1e-3):
            check(trapezoid_dx, y, dx)
            check(trapezoid_none_dx, y, dx)
        check(trapezoid_dx, y, np.float32(0.25))


def test_trapezoid_nan_inf_and_broadcast_lengths() -> None:
    y = np.array([1.0, NAN, 2.0, INF, 3.0])
    check(trapezoid, y)
    check(trapezoid, np.array([INF, -INF]))
    x = np.linspace(0.0, 1.0, 5)
    check(trapezoid_x, y, x)
    check(trapezoid_x, x, y)
    check(trapezoid_x, x, x[:2])  # (one gap: NumPy's d broadcasts)
    check(trapezoid_x, x[:2], x)  # (one sum broadcasts)
    check(trapezoid_x, x[:1], x)
    check(trapezoid_x, x, x[:1])
    check(trapezoid_x, x, x[:3])  # (NumPy's ValueError)
    check(trapezoid_x, x[:0], x[:1])


@aot.jit
def trapezoid_2d(y):
    return np.trapezoid(y)


@aot.jit
def trapezoid_axis(y):
    return np.trapezoid(y, axis=0)


@aot.jit
def trapezoid_number_x(y):
    return np.trapezoid(y, 2.0)


@aot.jit
def trapezoid_bools(y):
    return np.trapezoid(y)


def test_trapezoid_refusals_say_what_to_write() -> None:
    y = np.ones(4)
    err = expect_compile_error(trapezoid_2d, np.ones((2, 3)), at=locate(trapezoid_2d, "np.trapezoid"))
    assert "1-D" in str(err)
    expect_compile_error(trapezoid_axis, y, at=locate(trapezoid_axis, "np.trapezoid"))
    err = expect_compile_error(trapezoid_number_x, y, at=locate(trapezoid_number_x, "np.trapezoid"))
    assert "x must be None or a 1-D array" in str(err)
    expect_compile_error(trapezoid_bools, np.ones(3, dtype=np.bool_), at=locate(trapezoid_bools, "np.trapezoid"))
