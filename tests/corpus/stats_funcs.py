"""Descriptive statistics, histograms, binning and density estimates (the style of a small stats toolkit)."""

import math

import numpy as np
from harness import call

import aot


@aot.jit
def histogram_counts(x, lo, hi, nbins):
    counts = np.zeros(nbins, dtype=np.int64)
    width = (hi - lo) / nbins
    for v in x:
        if v < lo or v > hi or np.isnan(v):
            continue
        k = int((v - lo) / width)
        if k == nbins:
            k -= 1
        counts[k] += 1
    return counts


def histogram_counts_cases(rng):
    x = rng.normal(0.0, 1.0, 2000)
    x[::97] = np.nan
    return [(x, -3.0, 3.0, 20), (x[::-1], -1.0, 1.0, 5), (x[:0], 0.0, 1.0, 4)]


@aot.jit
def quantile_sorted(xs, q):
    n = len(xs)
    pos = q * (n - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, n - 1)
    frac = pos - lo
    return xs[lo] + (xs[hi] - xs[lo]) * frac


def quantile_sorted_cases(rng):
    xs = np.sort(rng.standard_normal(101))
    return [(xs, 0.5), (xs, 0.0), (xs, 1.0), (xs, 0.37), (xs[:1], 0.9)]


@aot.jit
def pearson(x, y):
    n = len(x)
    sx = sy = sxx = syy = sxy = 0.0
    for i in range(n):
        sx += x[i]
        sy += y[i]
    mx = sx / n
    my = sy / n
    for i in range(n):
        dx = x[i] - mx
        dy = y[i] - my
        sxx += dx * dx
        syy += dy * dy
        sxy += dx * dy
    return sxy / np.sqrt(sxx * syy)


def pearson_cases(rng):
    x = rng.standard_normal(300)
    y = 0.6 * x + 0.8 * rng.standard_normal(300)
    return [(x, y), (x[::-1], y[::-1]), (x[:2], y[:2]), (x, x)]


@aot.jit
def rank_data(x):
    order = np.argsort(x)
    ranks = np.empty(len(x))
    for i in range(len(x)):
        ranks[order[i]] = i + 1.0
    return ranks


def rank_data_cases(rng):
    x = rng.standard_normal(40)
    return [(x,), (x[::-1],), (x[:1],)]


@aot.jit
def binned_means(x, y, edges):
    nb = len(edges) - 1
    sums = np.zeros(nb)
    counts = np.zeros(nb, dtype=np.int64)
    for i in range(len(x)):
        k = np.searchsorted(edges, x[i], side="right") - 1
        if 0 <= k < nb:
            sums[k] += y[i]
            counts[k] += 1
    for k in range(nb):
        sums[k] = sums[k] / counts[k] if counts[k] > 0 else np.nan
    return sums


def binned_means_cases(rng):
    x = rng.uniform(0.0, 10.0, 500)
    y = np.sin(x) + 0.1 * rng.standard_normal(500)
    return [(x, y, np.linspace(0.0, 10.0, 11)), (x[:3], y[:3], np.array([0.0, 5.0, 10.0]))]


@aot.jit
def zscore(x, ddof=0):
    m = x.mean()
    s = x.std(ddof=ddof)
    out = np.empty_like(x)
    for i in range(len(x)):
        out[i] = (x[i] - m) / s
    return out


def zscore_cases(rng):
    x = rng.normal(3.0, 2.0, 100)
    return [(x,), call(x, ddof=1), (x[::-1],)]


@aot.jit
def weighted_mean(x, w=None):
    if w is None:
        s = 0.0
        for v in x:
            s += v
        return s / len(x)
    num = 0.0
    den = 0.0
    for i in range(len(x)):
        num += w[i] * x[i]
        den += w[i]
    return num / den


def weighted_mean_cases(rng):
    x = rng.standard_normal(60)
    w = rng.uniform(0.1, 1.0, 60)
    return [(x,), (x, w), call(x[::-1], w=w[::-1]), (x[:1], None)]


@aot.jit
def trimmed_mean(x, proportion):
    s = np.sort(x)
    k = int(proportion * len(s))
    core = s[k : len(s) - k]
    return core.sum() / len(core)


def trimmed_mean_cases(rng):
    x = rng.standard_t(2, 200)
    return [(x, 0.1), (x, 0.0), (x[:3], 0.2)]


@aot.jit
def kde_gaussian(samples, grid, bandwidth):
    n = len(samples)
    norm = 1.0 / (n * bandwidth * np.sqrt(2.0 * np.pi))
    out = np.zeros(len(grid))
    for j in range(len(grid)):
        for i in range(n):
            u = (grid[j] - samples[i]) / bandwidth
            out[j] += np.exp(-0.5 * u * u)
        out[j] *= norm
    return out


def kde_gaussian_cases(rng):
    s = np.concatenate([rng.normal(-2.0, 0.5, 100), rng.normal(1.0, 1.0, 150)])
    g = np.linspace(-5.0, 5.0, 64)
    return [(s, g, 0.3), (s[::-1], g[::2], 1.0), (s[:1], g, 0.5)]


TOLERANCE = {"kde_gaussian": 1e-12}


@aot.jit
def median_abs_deviation(x):
    med = np.median(x)
    dev = np.empty(len(x))
    for i in range(len(x)):
        dev[i] = abs(x[i] - med)
    return np.median(dev)


def median_abs_deviation_cases(rng):
    x = rng.standard_normal(99)
    return [(x,), (x[:1],), (x[::-1],)]


@aot.jit
def skew_kurtosis(x):
    n = len(x)
    m = 0.0
    for v in x:
        m += v
    m /= n
    m2 = m3 = m4 = 0.0
    for v in x:
        d = v - m
        d2 = d * d
        m2 += d2
        m3 += d2 * d
        m4 += d2 * d2
    m2 /= n
    m3 /= n
    m4 /= n
    return m3 / m2**1.5, m4 / (m2 * m2) - 3.0


def skew_kurtosis_cases(rng):
    x = rng.gamma(2.0, 1.0, 500)
    return [(x,), (x[::-1],), (x[:3],)]


@aot.jit
def bootstrap_means(x, n_boot, seed):
    out = np.empty(n_boot)
    state = seed
    n = len(x)
    for b in range(n_boot):
        s = 0.0
        for _ in range(n):
            state = (state * 6364136223846793005 + 1442695040888963407) & 0x7FFFFFFFFFFFFFFF
            s += x[(state >> 17) % n]
        out[b] = s / n
    return out


def bootstrap_means_cases(rng):
    x = rng.exponential(1.0, 50)
    return [(x, 20, 42), (x[::-1], 5, 7), (x[:1], 3, 1)]


@aot.jit
def covariance_matrix(data, out):
    n, p = data.shape
    for j in range(p):
        m = 0.0
        for i in range(n):
            m += data[i, j]
        out[j, j] = m / n
    means = [out[j, j] for j in range(p)]
    for a in range(p):
        for b in range(a, p):
            s = 0.0
            for i in range(n):
                s += (data[i, a] - means[a]) * (data[i, b] - means[b])
            out[a, b] = s / (n - 1)
            out[b, a] = out[a, b]


def covariance_matrix_cases(rng):
    d = rng.standard_normal((100, 4))
    return [(d, np.zeros((4, 4))), (d.T.copy().T, np.zeros((4, 4))), (d[:2, :1], np.zeros((1, 1)))]
