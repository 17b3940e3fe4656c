"""Economics: inequality measures, discretised AR(1) processes, value-function iteration and cash flows."""

import math

import numpy as np
from harness import call

import aot


@aot.jit
def gini(x):
    xs = np.sort(x)
    n = len(xs)
    cum = 0.0
    weighted = 0.0
    for i in range(n):
        cum += xs[i]
        weighted += (i + 1) * xs[i]
    return (2.0 * weighted) / (n * cum) - (n + 1.0) / n


def gini_cases(rng):
    x = rng.lognormal(0.0, 1.0, 500)
    return [(x,), (np.ones(10),), (x[:1],)]


@aot.jit
def gini_sorted(xs):
    n = len(xs)
    cum = 0.0
    weighted = 0.0
    for i in range(n):
        cum += xs[i]
        weighted += (i + 1) * xs[i]
    return (2.0 * weighted) / (n * cum) - (n + 1.0) / n


def gini_sorted_cases(rng):
    x = np.sort(rng.lognormal(0.0, 1.0, 500))
    return [(x,), (np.ones(10),), (x[:1],), (np.arange(1, 6),)]


@aot.jit
def lorenz_curve(xs, out):
    total = 0.0
    for v in xs:
        total += v
    out[0] = 0.0
    acc = 0.0
    for i in range(len(xs)):
        acc += xs[i]
        out[i + 1] = acc / total


def lorenz_curve_cases(rng):
    x = np.sort(rng.pareto(2.0, 100))
    return [(x, np.zeros(101)), (x[:1], np.zeros(2)), (np.arange(1.0, 5.0), np.zeros(5))]


@aot.jit
def _norm_cdf(x):
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def _norm_cdf_cases(rng):
    return [(0.0,), (1.96,), (-3.5,)]


@aot.jit
def tauchen(n, rho, sigma, m=3.0):
    std_y = sigma / math.sqrt(1.0 - rho * rho)
    ymax = m * std_y
    grid = np.linspace(-ymax, ymax, n)
    step = grid[1] - grid[0]
    p = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            z = grid[j] - rho * grid[i]
            if j == 0:
                p[i, j] = _norm_cdf((z + step / 2.0) / sigma)
            elif j == n - 1:
                p[i, j] = 1.0 - _norm_cdf((z - step / 2.0) / sigma)
            else:
                p[i, j] = _norm_cdf((z + step / 2.0) / sigma) - _norm_cdf((z - step / 2.0) / sigma)
    return grid, p


def tauchen_cases(rng):
    return [(5, 0.9, 0.1), call(9, 0.5, 0.2, m=2.0), (2, 0.0, 1.0)]


@aot.jit
def bellman_step(v, grid, beta, alpha, v_new, policy):
    n = len(grid)
    for i in range(n):
        wealth = grid[i] ** alpha
        best = -math.inf
        best_j = 0
        for j in range(n):
            c = wealth - grid[j]
            if c <= 0.0:
                break
            val = math.log(c) + beta * v[j]
            if val > best:
                best = val
                best_j = j
        v_new[i] = best
        policy[i] = best_j
    err = 0.0
    for i in range(n):
        err = max(err, abs(v_new[i] - v[i]))
    return err


def bellman_step_cases(rng):
    g = np.linspace(0.05, 2.0, 60)
    v = np.log(g)
    return [
        (v, g, 0.95, 0.3, np.zeros(60), np.zeros(60, dtype=np.int64)),
        (v[:1], g[:1], 0.9, 0.5, np.zeros(1), np.zeros(1, dtype=np.int64)),
    ]


@aot.jit
def cobb_douglas(k, labor, alpha, tfp=1.0):
    return tfp * k**alpha * labor ** (1.0 - alpha)


def cobb_douglas_cases(rng):
    return [(10.0, 5.0, 0.33), call(1.0, 1.0, 0.5, tfp=2.0), (0.0, 3.0, 0.3)]


@aot.jit
def npv(rate, cashflows):
    total = 0.0
    disc = 1.0
    for cf in cashflows:
        total += cf / disc
        disc *= 1.0 + rate
    return total


def npv_cases(rng):
    cf = np.array([-1000.0, 300.0, 400.0, 500.0, 200.0])
    return [(0.05, cf), (0.0, cf), (-0.5, cf[::-1]), (0.1, cf[:0])]


@aot.jit
def irr(cashflows, lo=-0.99, hi=1.0, tol=1e-10, maxiter=200):
    flo = npv(lo, cashflows)
    fhi = npv(hi, cashflows)
    if flo * fhi > 0.0:
        raise ValueError("no sign change in the bracket")
    for _ in range(maxiter):
        mid = 0.5 * (lo + hi)
        fmid = npv(mid, cashflows)
        if abs(fmid) < tol or hi - lo < tol:
            return mid
        if flo * fmid < 0.0:
            hi = mid
        else:
            lo = mid
            flo = fmid
    return 0.5 * (lo + hi)


def irr_cases(rng):
    cf = np.array([-1000.0, 300.0, 400.0, 500.0, 200.0])
    return [(cf,), call(cf, tol=1e-4), call(cf, 0.5, 1.0), (np.array([-1.0, -2.0]),)]


@aot.jit
def lorenz_points(x):
    xs = x.copy()
    xs.sort()
    out = np.empty(len(xs) + 1)
    lorenz_curve(xs, out)
    return out


def lorenz_points_cases(rng):
    x = rng.lognormal(0.0, 0.5, 50)
    return [(x,), (x[:1],)]


@aot.jit
def income_shares(incomes, groups, ngroups, out):
    total = 0.0
    for v in incomes:
        total += v
    for g in range(ngroups):
        out[g] = 0.0
    for i in range(len(incomes)):
        if groups[i] in (0, 1, 2) and groups[i] < ngroups:
            out[groups[i]] += incomes[i] / total


def income_shares_cases(rng):
    inc = rng.lognormal(0.0, 1.0, 200)
    grp = rng.integers(0, 4, 200)
    return [(inc, grp, 3, np.zeros(3)), (inc[::-1], grp[::-1], 2, np.zeros(2))]


@aot.jit
def markov_simulate(p, x0, draws, path):
    n = p.shape[0]
    state = x0
    for t in range(len(draws)):
        path[t] = state
        u = draws[t]
        acc = 0.0
        nxt = n - 1
        for j in range(n):
            acc += p[state, j]
            if u < acc:
                nxt = j
                break
        state = nxt
    return state


def markov_simulate_cases(rng):
    p = np.array([[0.9, 0.1, 0.0], [0.2, 0.6, 0.2], [0.0, 0.3, 0.7]])
    u = rng.random(100)
    return [(p, 0, u, np.zeros(100, dtype=np.int64)), (p.T.copy(), 2, u[::-1], np.zeros(100, dtype=np.int64))]
