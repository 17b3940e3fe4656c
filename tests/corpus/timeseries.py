"""Time-series utilities: running moments, lags, resampling and gap filling."""

import math

import numpy as np
from harness import call

import aot


@aot.jit
def welford(x):
    n = 0
    mean = 0.0
    m2 = 0.0
    for v in x:
        if math.isnan(v):
            continue
        n += 1
        delta = v - mean
        mean += delta / n
        m2 += delta * (v - mean)
    if n < 2:
        return mean, math.nan
    return mean, m2 / (n - 1)


def welford_cases(rng):
    x = rng.normal(5.0, 2.0, 1000)
    y = x.copy()
    y[::10] = np.nan
    return [(x,), (y,), (x[:1],), (x[::-1],), (np.empty(0),)]


@aot.jit
def _mean(x):
    s = 0.0
    for v in x:
        s += v
    return s / len(x)


def _mean_cases(rng):
    x = rng.standard_normal(50)
    return [(x,), (x[:1],), (x[::-3],)]


@aot.jit
def autocorr(x, lag):
    n = len(x)
    m = _mean(x)
    num = 0.0
    den = 0.0
    for i in range(n):
        d = x[i] - m
        den += d * d
        if i + lag < n:
            num += d * (x[i + lag] - m)
    return num / den


def autocorr_cases(rng):
    e = rng.standard_normal(500)
    ar = np.empty(500)
    ar[0] = e[0]
    for i in range(1, 500):
        ar[i] = 0.8 * ar[i - 1] + e[i]
    return [(ar, 1), (ar, 10), (ar[::-1], 3), (e[:2], 5)]


@aot.jit
def diff(x, order):
    n = len(x)
    out = x.copy()
    for k in range(order):
        for i in range(n - 1 - k):
            out[i] = out[i + 1] - out[i]
    return out[: n - order]


def diff_cases(rng):
    x = rng.standard_normal(40).cumsum()
    return [(x, 1), (x, 2), (x[::-1], 3), (x[:1], 0)]


@aot.jit
def cumsum_inplace(x):
    for i in range(1, len(x)):
        x[i] += x[i - 1]


def cumsum_inplace_cases(rng):
    x = rng.standard_normal(100)
    return [(x,), (x[::-1],), (x[:1],), (rng.integers(-5, 5, 30),)]


@aot.jit
def median3_filter(x):
    n = len(x)
    out = np.empty_like(x)
    for i in range(n):
        a = x[max(i - 1, 0)]
        b = x[i]
        c = x[min(i + 1, n - 1)]
        out[i] = max(min(a, b), min(max(a, b), c))
    return out


def median3_filter_cases(rng):
    x = rng.standard_normal(80)
    x[::9] += 10.0
    return [(x,), (x[::-1],), (x[:1],)]


@aot.jit
def lag_matrix(x, nlags):
    n = len(x)
    out = np.empty((n - nlags, nlags + 1))
    for k in range(nlags + 1):
        out[:, k] = x[nlags - k : n - k]
    return out


def lag_matrix_cases(rng):
    x = rng.standard_normal(30)
    return [(x, 3), (x[::-1], 1), (x[:4], 3)]


@aot.jit
def detrend_linear(x):
    n = len(x)
    t = np.arange(n)
    tm = (n - 1) / 2.0
    xm = np.sum(x) / n
    num = 0.0
    den = 0.0
    for i in range(n):
        num += (t[i] - tm) * (x[i] - xm)
        den += (t[i] - tm) ** 2
    slope = num / den
    out = np.empty(n)
    for i in range(n):
        out[i] = x[i] - (xm + slope * (t[i] - tm))
    return out


def detrend_linear_cases(rng):
    x = 0.5 * np.arange(60) + rng.standard_normal(60)
    return [(x,), (x[::-1],), (x[:2],)]


@aot.jit
def level_crossings(x, level):
    above = x[:-1] >= level
    below = x[1:] < level
    count = 0
    for i in range(len(above)):
        if above[i] != (not below[i]):
            count += 1
    return count


def level_crossings_cases(rng):
    x = rng.standard_normal(200).cumsum()
    return [(x, 0.0), (x, 2.5), (x[:1], 0.0)]


@aot.jit
def block_means(x, factor):
    nb = len(x) // factor
    out = np.empty(nb)
    for b in range(nb):
        out[b] = x[b * factor : (b + 1) * factor].mean()
    return out


def block_means_cases(rng):
    x = rng.standard_normal(100)
    return [(x, 10), (x, 7), (x[:3], 5)]


@aot.jit
def fill_forward(x):
    last = np.nan
    for i in range(len(x)):
        if np.isnan(x[i]):
            x[i] = last
        else:
            last = x[i]


def fill_forward_cases(rng):
    x = rng.standard_normal(50)
    x[rng.random(50) < 0.3] = np.nan
    return [(x,), (x[::-1],), (np.full(3, np.nan),)]


@aot.jit
def fill_gaps_linear(x, max_gap):
    n = len(x)
    i = 0
    filled = 0
    while i < n:
        if np.isnan(x[i]):
            j = i
            while j < n and np.isnan(x[j]):
                j += 1
            if i > 0 and j < n and j - i <= max_gap:
                a = x[i - 1]
                b = x[j]
                for k in range(i, j):
                    x[k] = a + (b - a) * (k - i + 1) / (j - i + 1)
                    filled += 1
            i = j
        else:
            i += 1
    return filled


def fill_gaps_linear_cases(rng):
    x = rng.standard_normal(60)
    x[rng.random(60) < 0.25] = np.nan
    return [(x, 2), (x.copy(), 10), (x[::-1], 1), (np.full(4, np.nan), 3)]


@aot.jit
def seasonal_means(x, period, out):
    counts = np.zeros(period, dtype=np.int64)
    for i in range(period):
        out[i] = 0.0
    for i in range(len(x)):
        out[i % period] += x[i]
        counts[i % period] += 1
    for k in range(period):
        out[k] /= counts[k]


def seasonal_means_cases(rng):
    x = np.sin(np.arange(96) * 2 * np.pi / 12) + 0.1 * rng.standard_normal(96)
    return [(x, 12, np.zeros(12)), (x[::-1], 4, np.zeros(4))]


@aot.jit
def exponential_smoothing_forecast(x, alpha, beta, horizon):
    level = x[0]
    trend = x[1] - x[0]
    for i in range(1, len(x)):
        prev = level
        level = alpha * x[i] + (1.0 - alpha) * (level + trend)
        trend = beta * (level - prev) + (1.0 - beta) * trend
    out = np.empty(horizon)
    for h in range(horizon):
        out[h] = level + (h + 1) * trend
    return out


def exponential_smoothing_forecast_cases(rng):
    x = 10.0 + 0.3 * np.arange(50) + rng.standard_normal(50)
    return [(x, 0.5, 0.2, 5), (x[::-1], 0.1, 0.9, 3), (x[:2], 0.3, 0.3, 1)]


@aot.jit
def moving_average(x, window, out=None):
    n = len(x)
    if out is None:
        out = np.empty(n)
    acc = 0.0
    for i in range(n):
        acc += x[i]
        if i >= window:
            acc -= x[i - window]
        out[i] = acc / min(i + 1, window)
    return out


def moving_average_cases(rng):
    x = rng.standard_normal(120).cumsum()
    return [(x, 10), (x[::-1], 3, np.zeros(120)), call(x[:1], 4, out=np.zeros(1)), (x[:0], 2)]
