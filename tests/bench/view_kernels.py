"""Slicing-heavy kernels written with loops over views, compiled with aot; ``.py_func`` is plain Python, and
``numpy_*`` the same computation as whole-array NumPy expressions.

    smooth(a, out)       out[1:-1] = (a[:-2] + a[2:]) * 0.5, out's ends set to 0
    laplace(a, out)      out[1:-1, 1:-1] = 0.25 * (up + down + left + right), out's border set to 0
    shift(a)             a[1:] = a[:-1] (overlapping: the source is copied first, as NumPy does)

tests/bench/test_views_bench.py times aot, NumPy, plain Python and (when installed) Numba side by side.
"""

import aot


@aot.jit(boundscheck=False)
def smooth(a, out):
    out[0] = 0.0
    out[-1:] = 0.0
    mid = out[1:-1]
    left = a[:-2]
    right = a[2:]
    for i in range(len(mid)):
        mid[i] = (left[i] + right[i]) * 0.5


@aot.jit(boundscheck=False)
def laplace(a, out):
    out[0] = 0.0
    out[-1] = 0.0
    out[:, 0] = 0.0
    out[:, -1] = 0.0
    for i in range(1, a.shape[0] - 1):
        up = a[i - 1, 1:-1]
        down = a[i + 1, 1:-1]
        left = a[i, :-2]
        right = a[i, 2:]
        row = out[i, 1:-1]
        for j in range(len(row)):
            row[j] = 0.25 * (up[j] + down[j] + left[j] + right[j])


@aot.jit(boundscheck=False)
def shift(a):
    a[1:] = a[:-1]


def numpy_smooth(a, out):
    out[0] = 0.0
    out[-1:] = 0.0
    out[1:-1] = (a[:-2] + a[2:]) * 0.5


def numpy_laplace(a, out):
    out[0] = 0.0
    out[-1] = 0.0
    out[:, 0] = 0.0
    out[:, -1] = 0.0
    out[1:-1, 1:-1] = 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])


def numpy_shift(a):
    a[1:] = a[:-1]
