"""The kernels of the parallel benchmark, as plain functions: each in a serial (``range``) and a parallel
(``prange``) form. Nothing here imports a compiler but ``prange``: ``parallel_bench.py`` compiles them
with aot, and, in an interpreter that has Numba, with ``numba.njit``.

    gauss_sum(a)        -> sum of exp(-a[i]**2)          (a scalar reduction)
    stencil(a, out)     -> out[i, j] = 5-point average    (disjoint writes, rows split between threads)
    small_sum(a)        -> gauss_sum of 10,000 elements    (a loop of a few microseconds: the fork-join's cost)
    tiny(out)           -> out[i] = i * 0.5 for 64 elements (nothing but the fork-join)
"""

import math

try:
    from numba import prange
except ImportError:
    from aot import prange


def gauss_sum_serial(a):
    s = 0.0
    for i in range(a.shape[0]):
        s += math.exp(-a[i] * a[i])
    return s


def gauss_sum_parallel(a):
    s = 0.0
    for i in prange(a.shape[0]):
        s += math.exp(-a[i] * a[i])
    return s


def stencil_serial(a, out):
    for i in range(1, a.shape[0] - 1):
        for j in range(1, a.shape[1] - 1):
            out[i, j] = 0.2 * (a[i, j] + a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])


def stencil_parallel(a, out):
    for i in prange(1, a.shape[0] - 1):
        for j in range(1, a.shape[1] - 1):
            out[i, j] = 0.2 * (a[i, j] + a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])


small_sum_serial, small_sum_parallel = gauss_sum_serial, gauss_sum_parallel


def tiny_serial(out):
    for i in range(out.shape[0]):
        out[i] = i * 0.5


def tiny_parallel(out):
    for i in prange(out.shape[0]):
        out[i] = i * 0.5


KERNELS = ("gauss_sum", "stencil", "small_sum", "tiny")
