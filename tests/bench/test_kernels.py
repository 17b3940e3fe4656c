"""Kernels timed side by side: aot (boundscheck=False), plain Python (``.py_func``), Numba ``njit``.

    python3 -m pytest tests/bench --benchmark-enable            # the figures
    python3 -m pytest tests/bench                                # quick: each runs once, as a test

One pytest-benchmark group per kernel; the ids carry the input size.  Plain Python runs a smaller
input where the full one would take seconds per round (the group name says so); compare columns by the
per-element table that tests/bench/conftest.py prints after the run.  Every test first checks, untimed,
that aot (and Numba, in its column) gives exactly Python's result on the small input.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import kernels

IMPLS = ("aot", "python", "numba")


def _sizes(full, python):
    """pytest params: (impl, size); the id says the size, e.g. 'python-n=200000'."""
    params = []
    for impl in IMPLS:
        n = python if impl == "python" else full
        params.append(pytest.param(impl, n, id=f"{impl}-n={n}"))
    return params


@functools.cache
def _vector(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n)


@functools.cache
def _matrix(n: int, m: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, m))


# -- integer loop: sum(i*i % 7 for i in range(n)) ----------------------------------------------------

INT_LOOP_SMALL = 200_000


@pytest.mark.benchmark(group=f"int_loop: aot/numba n=10_000_000, python n={INT_LOOP_SMALL}")
@pytest.mark.parametrize("impl,n", _sizes(10_000_000, INT_LOOP_SMALL))
def test_int_loop(per_element, column, impl, n):
    fn = column(kernels.int_loop, impl)
    expected = kernels.int_loop.py_func(INT_LOOP_SMALL)
    assert kernels.int_loop(INT_LOOP_SMALL) == expected
    assert fn(INT_LOOP_SMALL) == expected
    result = per_element(n, fn, n)
    assert isinstance(result, int) and result > 0


# -- dot product of two float64 vectors ---------------------------------------------------------------

DOT_SMALL = 100_000


@pytest.mark.benchmark(group=f"dot: aot/numba n=1_000_000 float64, python n={DOT_SMALL}")
@pytest.mark.parametrize("impl,n", _sizes(1_000_000, DOT_SMALL))
def test_dot(per_element, column, impl, n):
    fn = column(kernels.dot, impl)
    a, b = _vector(DOT_SMALL, 1), _vector(DOT_SMALL, 2)
    expected = kernels.dot.py_func(a, b)
    assert kernels.dot(a, b) == expected
    assert fn(a, b) == expected
    per_element(n, fn, _vector(n, 1), _vector(n, 2))


# -- naive matmul, triple loop writing into out ---------------------------------------------------------

MATMUL_SMALL = 40


@pytest.mark.benchmark(group=f"matmul: aot/numba 200x200, python {MATMUL_SMALL}x{MATMUL_SMALL} (per multiply-add)")
@pytest.mark.parametrize("impl,n", _sizes(200, MATMUL_SMALL))
def test_matmul(per_element, column, impl, n):
    fn = column(kernels.matmul, impl)
    a, b = _matrix(MATMUL_SMALL, MATMUL_SMALL, 1), _matrix(MATMUL_SMALL, MATMUL_SMALL, 2)
    expected = np.zeros((MATMUL_SMALL, MATMUL_SMALL))
    kernels.matmul.py_func(a, b, expected)
    for candidate in (kernels.matmul, fn):
        out = np.zeros((MATMUL_SMALL, MATMUL_SMALL))
        candidate(a, b, out)
        np.testing.assert_array_equal(out, expected)
    np.testing.assert_allclose(expected, a @ b, rtol=1e-12, atol=1e-12)
    out = np.zeros((n, n))
    per_element(n**3, fn, _matrix(n, n, 1), _matrix(n, n, 2), out)


# -- Mandelbrot escape counts over [-2, 0.5] x [-1.25, 1.25] -----------------------------------------

MANDEL_SMALL = 50
MAX_ITER = 100


def _mandel_args(n: int):
    out = np.zeros((n, n), dtype=np.int64)
    return out, -2.0, -1.25, 2.5 / n, 2.5 / n, MAX_ITER


@pytest.mark.benchmark(
    group=f"mandelbrot: aot/numba 200x200, python {MANDEL_SMALL}x{MANDEL_SMALL}, max_iter={MAX_ITER} (per pixel)"
)
@pytest.mark.parametrize("impl,n", _sizes(200, MANDEL_SMALL))
def test_mandelbrot(per_element, column, impl, n):
    fn = column(kernels.mandelbrot, impl)
    expected_out, *rest = _mandel_args(MANDEL_SMALL)
    expected_total = kernels.mandelbrot.py_func(expected_out, *rest)
    for candidate in (kernels.mandelbrot, fn):
        out, *rest = _mandel_args(MANDEL_SMALL)
        assert candidate(out, *rest) == expected_total
        np.testing.assert_array_equal(out, expected_out)
    total = per_element(n * n, fn, *_mandel_args(n))
    assert 0 < total <= MAX_ITER * n * n


# -- 2-D 5-point stencil -----------------------------------------------------------------------------

STENCIL_SMALL = 150


@pytest.mark.benchmark(
    group=f"stencil: aot/numba 1000x1000, python {STENCIL_SMALL}x{STENCIL_SMALL} (per interior point)"
)
@pytest.mark.parametrize("impl,n", _sizes(1000, STENCIL_SMALL))
def test_stencil(per_element, column, impl, n):
    fn = column(kernels.stencil, impl)
    a = _matrix(STENCIL_SMALL, STENCIL_SMALL, 3)
    expected = np.zeros_like(a)
    kernels.stencil.py_func(a, expected)
    for candidate in (kernels.stencil, fn):
        out = np.zeros_like(a)
        candidate(a, out)
        np.testing.assert_array_equal(out, expected)
    big = _matrix(n, n, 3)
    per_element((n - 2) ** 2, fn, big, np.zeros_like(big))
