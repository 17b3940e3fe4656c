"""Numerical methods: root finding, ODE steps, quadrature, interpolation and small dense linear algebra."""

import math

import numpy as np
from harness import call

import aot

TINY = np.float32(1e-7)


@aot.jit
def newton_sqrt(a, tol=1e-12, maxiter=50):
    if a < 0.0:
        raise ValueError("negative argument")
    if a == 0.0:
        return 0.0
    x = a if a > 1.0 else 1.0
    for _ in range(maxiter):
        nx = 0.5 * (x + a / x)
        if abs(nx - x) <= tol * nx:
            return nx
        x = nx
    return x


def newton_sqrt_cases(rng):
    return [(2.0,), (1e-8,), call(12345.678, tol=1e-6), (0.0,), (-1.0,)]


@aot.jit
def horner(coeffs, x):
    acc = 0.0
    for c in coeffs:
        acc = acc * x + c
    return acc


def horner_cases(rng):
    c = np.array([1.0, -6.0, 11.0, -6.0])
    return [(c, 0.5), (c, 3.0), (c[::-1], -2.0), (c[:0], 1.0)]


@aot.jit
def bisect_poly(coeffs, lo, hi, tol=1e-9):
    flo = horner(coeffs, lo)
    if flo == 0.0:
        return lo
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        fm = horner(coeffs, mid)
        if (fm < 0.0) == (flo < 0.0):
            lo = mid
            flo = fm
        else:
            hi = mid
    return 0.5 * (lo + hi)


def bisect_poly_cases(rng):
    c = np.array([1.0, -6.0, 11.0, -6.0])
    return [(c, 0.0, 1.5), (c, 1.5, 2.5), call(c, 2.5, 10.0, tol=1e-3)]


@aot.jit
def bracketed_roots(coeffs, lo, hi, n_intervals, out):
    step = (hi - lo) / n_intervals
    found = 0
    a = lo
    fa = horner(coeffs, a)
    for k in range(n_intervals):
        b = lo + (k + 1) * step
        fb = horner(coeffs, b)
        if fa == 0.0 or fa * fb < 0.0:
            if found < len(out):
                out[found] = bisect_poly(coeffs, a, b, tol=1e-12)
            found += 1
        a = b
        fa = fb
    return found


def bracketed_roots_cases(rng):
    c = np.array([1.0, -6.0, 11.0, -6.0])
    return [(c, 0.1, 4.0, 50, np.zeros(3)), (c, -5.0, 5.0, 7, np.zeros(1)), (c[:2], 0.0, 1.0, 1, np.zeros(1))]


@aot.jit
def brent_root(coeffs, a, b, xtol=1e-12, maxiter=100):
    fa = horner(coeffs, a)
    fb = horner(coeffs, b)
    if fa * fb > 0.0:
        raise ValueError("root not bracketed")
    if abs(fa) < abs(fb):
        a, b = b, a
        fa, fb = fb, fa
    c = a
    fc = fa
    mflag = True
    d = 0.0
    for _ in range(maxiter):
        if fb == 0.0 or abs(b - a) < xtol:
            return b
        if fa != fc and fb != fc:
            s = (
                a * fb * fc / ((fa - fb) * (fa - fc))
                + b * fa * fc / ((fb - fa) * (fb - fc))
                + c * fa * fb / ((fc - fa) * (fc - fb))
            )
        else:
            s = b - fb * (b - a) / (fb - fa)
        lo = (3.0 * a + b) / 4.0
        cond1 = not (min(lo, b) < s < max(lo, b))
        cond2 = mflag and abs(s - b) >= abs(b - c) / 2.0
        cond3 = (not mflag) and abs(s - b) >= abs(c - d) / 2.0
        if cond1 or cond2 or cond3:
            s = 0.5 * (a + b)
            mflag = True
        else:
            mflag = False
        fs = horner(coeffs, s)
        d = c
        c = b
        fc = fb
        if fa * fs < 0.0:
            b = s
            fb = fs
        else:
            a = s
            fa = fs
        if abs(fa) < abs(fb):
            a, b = b, a
            fa, fb = fb, fa
    return b


def brent_root_cases(rng):
    c = np.array([1.0, 0.0, -2.0])
    return [(c, 0.0, 2.0), (c, -2.0, 0.0), (c, 3.0, 4.0)]


@aot.jit
def rk4_oscillator(x0, v0, omega, zeta, dt, nsteps):
    x = x0
    v = v0
    for _ in range(nsteps):
        k1x = v
        k1v = -2.0 * zeta * omega * v - omega * omega * x
        k2x = v + 0.5 * dt * k1v
        k2v = -2.0 * zeta * omega * (v + 0.5 * dt * k1v) - omega * omega * (x + 0.5 * dt * k1x)
        k3x = v + 0.5 * dt * k2v
        k3v = -2.0 * zeta * omega * (v + 0.5 * dt * k2v) - omega * omega * (x + 0.5 * dt * k2x)
        k4x = v + dt * k3v
        k4v = -2.0 * zeta * omega * (v + dt * k3v) - omega * omega * (x + dt * k3x)
        x += dt / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x)
        v += dt / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v)
    return x, v


def rk4_oscillator_cases(rng):
    return [(1.0, 0.0, 2.0, 0.1, 0.01, 1000), (0.0, 1.0, 1.0, 0.0, 0.1, 0), (-0.5, 2.0, 5.0, 1.5, 0.001, 300)]


@aot.jit
def lotka_volterra_euler(y, params, dt, nsteps):
    a, b, c, d = params
    rate = np.empty(2)
    for _ in range(nsteps):
        x, z = y[0], y[1]
        rate[0] = a * x - b * x * z
        rate[1] = d * x * z - c * z
        y[...] = y + dt * rate
    return y


def lotka_volterra_euler_cases(rng):
    return [
        (np.array([10.0, 5.0]), (1.1, 0.4, 0.4, 0.1), 0.01, 100),
        (np.array([1.0, 1.0]), (1.0, 1.0, 1.0, 1.0), 0.1, 0),
    ]


@aot.jit
def euler_logistic(r, capacity, x0, dt, nsteps):
    out = np.empty(nsteps)
    x = x0
    for i in range(nsteps):
        out[i] = x
        x += dt * r * x * (1.0 - x / capacity)
    return out


def euler_logistic_cases(rng):
    return [(0.5, 100.0, 1.0, 0.1, 500), (2.0, 1.0, 0.01, 0.5, 40), (1.0, 10.0, 5.0, 0.1, 0)]


@aot.jit
def trapezoid(y, x):
    s = 0.0
    for i in range(1, len(y)):
        s += 0.5 * (x[i] - x[i - 1]) * (y[i] + y[i - 1])
    return s


def trapezoid_cases(rng):
    x = np.sort(rng.uniform(0.0, math.pi, 100))
    return [(np.sin(x), x), (np.sin(x)[::-1], x[::-1]), (x[:1], x[:1])]


@aot.jit
def simpson(f_vals, dx):
    n = len(f_vals)
    if n % 2 == 0:
        raise ValueError("Simpson's rule needs an odd number of points")
    s = f_vals[0] + f_vals[n - 1]
    for i in range(1, n - 1):
        s += (4.0 if i % 2 == 1 else 2.0) * f_vals[i]
    return s * dx / 3.0


def simpson_cases(rng):
    x = np.linspace(0.0, 1.0, 101)
    return [(np.exp(x), 0.01), (np.exp(x)[::-1], 0.01), (x[:1], 1.0), (x[:4], 0.1)]


@aot.jit
def interp_linear(xp, fp, x, out):
    for i in range(len(x)):
        j = np.searchsorted(xp, x[i])
        if j == 0:
            out[i] = fp[0]
        elif j == len(xp):
            out[i] = fp[len(xp) - 1]
        else:
            t = (x[i] - xp[j - 1]) / (xp[j] - xp[j - 1])
            out[i] = fp[j - 1] + t * (fp[j] - fp[j - 1])


def interp_linear_cases(rng):
    xp = np.sort(rng.uniform(0.0, 10.0, 30))
    fp = np.cos(xp)
    x = rng.uniform(-1.0, 11.0, 80)
    return [(xp, fp, x, np.zeros(80)), (xp, fp, x[::-1], np.zeros(80))]


@aot.jit
def interp_bsearch(xp, fp, x, out):
    n = len(xp)
    for i in range(len(x)):
        v = x[i]
        if v <= xp[0]:
            out[i] = fp[0]
            continue
        if v >= xp[n - 1]:
            out[i] = fp[n - 1]
            continue
        lo = 0
        hi = n - 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if xp[mid] <= v:
                lo = mid
            else:
                hi = mid
        t = (v - xp[lo]) / (xp[hi] - xp[lo])
        out[i] = fp[lo] + t * (fp[hi] - fp[lo])


def interp_bsearch_cases(rng):
    xp = np.sort(rng.uniform(0.0, 10.0, 30))
    fp = np.cos(xp)
    x = rng.uniform(-1.0, 11.0, 80)
    return [(xp, fp, x, np.zeros(80)), (xp, fp, x[::-1], np.zeros(80)), (xp[:1], fp[:1], x[:3], np.zeros(3))]


@aot.jit
def matvec(a, x):
    out = np.zeros(a.shape[0])
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[i] += a[i, j] * x[j]
    return out


def matvec_cases(rng):
    a = rng.standard_normal((7, 5))
    return [(a, rng.standard_normal(5)), (a.T, rng.standard_normal(7)), (a[:0], rng.standard_normal(5))]


@aot.jit
def gauss_solve(a, b):
    n = a.shape[0]
    for k in range(n):
        p = k
        for i in range(k + 1, n):
            if abs(a[i, k]) > abs(a[p, k]):
                p = i
        if a[p, k] == 0.0:
            raise ValueError("singular matrix")
        if p != k:
            for j in range(n):
                a[k, j], a[p, j] = a[p, j], a[k, j]
            b[k], b[p] = b[p], b[k]
        for i in range(k + 1, n):
            f = a[i, k] / a[k, k]
            for j in range(k, n):
                a[i, j] -= f * a[k, j]
            b[i] -= f * b[k]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for j in range(i + 1, n):
            s -= a[i, j] * b[j]
        b[i] = s / a[i, i]


def gauss_solve_cases(rng):
    a = rng.standard_normal((6, 6)) + 6 * np.eye(6)
    b = rng.standard_normal(6)
    return [(a, b), (a.T, b[::-1]), (np.zeros((2, 2)), np.ones(2)), (np.ones((1, 1)), np.ones(1))]


@aot.jit
def lu_decompose(a):
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


def lu_decompose_cases(rng):
    a = rng.standard_normal((5, 5))
    return [(a,), (a.T,), (np.ones((1, 1)),)]


@aot.jit
def power_iteration(a, iters, tol=1e-10):
    n = a.shape[0]
    v = np.ones(n) / math.sqrt(n)
    lam = 0.0
    for _ in range(iters):
        w = a @ v
        new = np.linalg.norm(w)
        v = w / new
        if abs(new - lam) < tol:
            break
        lam = new
    return lam, v


def power_iteration_cases(rng):
    m = rng.standard_normal((6, 6))
    a = m @ m.T
    return [(a, 200), call(a, 5, tol=1e-3)]


@aot.jit
def cholesky(a):
    n = a.shape[0]
    low = np.zeros_like(a)
    for j in range(n):
        s = a[j, j] - np.dot(low[j, :j], low[j, :j])
        if s <= 0.0:
            raise ValueError("matrix is not positive definite")
        low[j, j] = np.sqrt(s)
        for i in range(j + 1, n):
            low[i, j] = (a[i, j] - np.dot(low[i, :j], low[j, :j])) / low[j, j]
    return low


def cholesky_cases(rng):
    m = rng.standard_normal((5, 5))
    return [(m @ m.T + 5 * np.eye(5),), (np.eye(1) * 4.0,), (-np.eye(2),)]


@aot.jit
def quantize(x, step, out):
    for i in range(len(x)):
        out[i] = np.round(x[i] / (step + TINY)) * step
    return out.astype(np.int64)


def quantize_cases(rng):
    x = rng.uniform(-5, 5, 40)
    return [(x, 0.5, np.zeros(40)), (x[::-1], 0.1, np.zeros(40))]


@aot.jit
def clip_inplace(x, lo, hi):
    if isinstance(lo, float) and lo > hi:
        lo, hi = hi, lo
    n = 0
    for i in range(len(x)):
        if x[i] < lo:
            x[i] = lo
            n += 1
        elif x[i] > hi:
            x[i] = hi
            n += 1
    return n


def clip_inplace_cases(rng):
    x = rng.standard_normal(100)
    return [(x, -1.0, 1.0), (x[::-1], 0.5, -0.5), (x[:0], 0.0, 1.0)]
