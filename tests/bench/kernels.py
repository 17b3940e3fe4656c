"""Benchmark kernels, compiled with aot; ``kernel.py_func`` is the same kernel as plain Python.

    int_loop(10)                 -> 19       (sum of i*i % 7 for i < 10)
    dot(a, b)                    -> float    (sequential sum, same order as Python)
    matmul(a, b, out)            -> None     (out = a @ b, naive triple loop)
    mandelbrot(out, ...)         -> int      (escape counts written into out; returns their sum)
    stencil(a, out)              -> None     (5-point average on the interior of out)

The functions live in a real module file because aot compiles from the source (``inspect.getsource``).
tests/bench/test_kernels.py times each against ``.py_func`` and, when installed, Numba's ``njit``.
"""

import aot


@aot.jit
def add_one(x):
    return x + 1.0


@aot.jit
def add_tol(x, *, tol=1e-8):
    """A keyword-only parameter: called natively through the binder (tests/bench/test_call_overhead.py)."""
    return x + tol


@aot.jit(boundscheck=False)
def int_loop(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s


@aot.jit(boundscheck=False)
def dot(a, b):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    return s


@aot.jit(boundscheck=False)
def matmul(a, b, out):
    n = a.shape[0]
    m = b.shape[1]
    inner = a.shape[1]
    for i in range(n):
        for j in range(m):
            s = 0.0
            for k in range(inner):
                s += a[i, k] * b[k, j]
            out[i, j] = s


@aot.jit(boundscheck=False)
def mandelbrot(out, x0, y0, dx, dy, max_iter):
    total = 0
    for i in range(out.shape[0]):
        ci = y0 + i * dy
        for j in range(out.shape[1]):
            cr = x0 + j * dx
            zr = 0.0
            zi = 0.0
            n = 0
            while n < max_iter and zr * zr + zi * zi <= 4.0:
                zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
                n += 1
            out[i, j] = n
            total += n
    return total


@aot.jit(boundscheck=False)
def stencil(a, out):
    for i in range(1, a.shape[0] - 1):
        for j in range(1, a.shape[1] - 1):
            out[i, j] = 0.2 * (a[i, j] + a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])


@aot.jit
def fib(n: int) -> int:
    """Plain recursion on a cycle of one: guarded (``aot.codegen.recursion``), its error unwinding by a jump."""
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


@aot.jit(boundscheck=False)
def halves(a: aot.f64[:]) -> float:
    """Divide and conquer over views: a guarded cycle whose frames hold arrays (its error returns)."""
    if len(a) <= 8:
        s = 0.0
        for i in range(len(a)):
            s += a[i]
        return s
    m = len(a) // 2
    return halves(a[:m]) + halves(a[m:])
