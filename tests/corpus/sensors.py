"""Sensor logs with gaps: NaN-aware statistics, binning of readings, step detection and path tracing."""

import numpy as np

import aot


@aot.jit
def gap_fraction(readings):
    missing = 0
    for v in readings.flat:
        if np.isnan(v):
            missing += 1
    return missing / readings.size if readings.size else 0.0


def gap_fraction_cases(rng):
    m = rng.normal(20.0, 3.0, (24, 7))
    m[rng.random((24, 7)) < 0.15] = np.nan
    return [(m,), (m.T,), (m[::2, ::-1],), (m[:, 3],), (np.empty((0, 3)),)]


@aot.jit
def standardize_nan(x):
    mu = np.nanmean(x)
    sd = np.nanstd(x)
    out = np.empty_like(x)
    for i in range(len(x)):
        out[i] = (x[i] - mu) / sd if sd > 0 else 0.0
    return out


def standardize_nan_cases(rng):
    x = rng.normal(0.5, 0.1, 300)
    x[rng.random(300) < 0.1] = np.nan
    return [(x,), (x[::-2],), (np.array([np.nan, 1.0, np.nan]),), (np.ones(4),)]


@aot.jit
def spread_summary(x):
    lo = np.nanmin(x)
    hi = np.nanmax(x)
    return hi - lo, np.nanargmax(x) - np.nanargmin(x), np.nansum(x), np.nanvar(x, ddof=1)


def spread_summary_cases(rng):
    x = rng.gamma(2.0, 1.5, 200)
    x[rng.integers(0, 200, 30)] = np.nan
    return [(x,), (x.reshape(20, 10).T,), (x[:1] + 1.0,), (np.full(3, np.nan),)]


@aot.jit
def histogram_by_edges(values, edges):
    counts = np.zeros(len(edges) - 1, np.int64)
    slots = np.searchsorted(edges, values, side="right") - 1
    for k in slots:
        if 0 <= k < len(counts):
            counts[k] += 1
    return counts


def histogram_by_edges_cases(rng):
    v = rng.uniform(-1.0, 11.0, 500)
    edges = np.linspace(0.0, 10.0, 11)
    return [
        (v, edges),
        (v[::-3], edges[::2]),
        (np.empty(0), edges),
        (np.array([0.0, 10.0, 5.0]), np.array([5.0, 10.0])),
    ]


@aot.jit
def count_steps(x, threshold):
    jumps = np.abs(np.diff(x))
    count = 0
    biggest = 0.0
    for j in jumps:
        if j > threshold:
            count += 1
        biggest = max(biggest, float(j))
    return count, biggest


def count_steps_cases(rng):
    x = np.cumsum(rng.normal(0.0, 1.0, 400))
    return [(x, 1.5), (x[::-5], 3.0), (x[:1], 0.5), (np.round(x).astype(np.int64), 2)]


@aot.jit
def hold_last(m, initial):
    out = np.empty_like(m)
    last = np.empty(m.shape[1])
    last.fill(initial)
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            if not np.isnan(m[i, j]):
                last[j] = m[i, j]
            out[i, j] = last[j]
    return out


def hold_last_cases(rng):
    m = rng.normal(0.0, 1.0, (30, 4))
    m[rng.random((30, 4)) < 0.3] = np.nan
    return [(m, 0.0), (m[::-1], np.nan), (m[:, :1], -1.0)]


@aot.jit
def trace_back(moves):
    """Walk a table of moves (0: up, 1: left, 2: diagonal) from the far corner to the origin."""
    here = (moves.shape[0] - 1, moves.shape[1] - 1)
    steps = 0
    while here != (0, 0):
        i, j = here
        m = moves[i, j]
        if i == 0 or (m == 1 and j > 0):
            here = (i, j - 1)
        elif j == 0 or m == 0:
            here = (i - 1, j)
        else:
            here = (i - 1, j - 1)
        steps += 1
    return steps


def trace_back_cases(rng):
    moves = rng.integers(0, 3, (12, 9))
    return [(moves,), (moves.T,), (moves[:1, :1],), (np.full((5, 5), 2),)]


@aot.jit
def overlap_ratio(a, b):
    lows = [a[0], b[0]]
    if lows[0] > lows[1]:
        lows.reverse()
    highs = [a[1], b[1]]
    if highs[0] > highs[1]:
        highs.reverse()
    shared = highs[0] - lows[1]
    total = highs[1] - lows[0]
    return max(shared, 0.0) / total if total > 0 else 0.0


def overlap_ratio_cases(rng):
    return [
        (np.array([0.0, 4.0]), np.array([2.0, 6.0])),
        (np.array([2.0, 6.0]), np.array([0.0, 4.0])),
        (np.array([0.0, 1.0]), np.array([3.0, 5.0])),
        (np.array([1.0, 1.0]), np.array([1.0, 1.0])),
    ]
