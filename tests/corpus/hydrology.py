"""Hydrology: goodness of fit of simulated discharge, flow duration, baseflow and simple reservoirs."""

import math

import numpy as np
from harness import call

import aot


def _flows(rng, n=365):
    base = 5.0 + 3.0 * np.sin(np.arange(n) * 2 * np.pi / 365)
    return base + rng.gamma(0.5, 4.0, n)


@aot.jit
def nash_sutcliffe(obs, sim):
    n = len(obs)
    mean = 0.0
    for v in obs:
        mean += v
    mean /= n
    num = 0.0
    den = 0.0
    for i in range(n):
        num += (obs[i] - sim[i]) ** 2
        den += (obs[i] - mean) ** 2
    return 1.0 - num / den


def nash_sutcliffe_cases(rng):
    q = _flows(rng)
    s = q * 0.9 + rng.standard_normal(365)
    return [(q, s), (q[::-1], s[::-1]), (q[:2], s[:2])]


@aot.jit
def _mean_sd(x, ddof=0):
    n = len(x)
    m = 0.0
    for v in x:
        m += v
    m /= n
    ss = 0.0
    for v in x:
        ss += (v - m) ** 2
    return m, math.sqrt(ss / (n - ddof))


def _mean_sd_cases(rng):
    q = _flows(rng, 30)
    return [(q,), (q[:1],), call(q[::-1], ddof=1)]


@aot.jit
def kling_gupta(obs, sim):
    mo, so = _mean_sd(obs, ddof=0)
    ms, ss = _mean_sd(sim, ddof=0)
    cov = 0.0
    for i in range(len(obs)):
        cov += (obs[i] - mo) * (sim[i] - ms)
    r = cov / len(obs) / (so * ss)
    return 1.0 - np.sqrt((r - 1.0) ** 2 + (ss / so - 1.0) ** 2 + (ms / mo - 1.0) ** 2)


def kling_gupta_cases(rng):
    q = _flows(rng)
    return [(q, 1.1 * q + rng.standard_normal(365)), (q[::-1], q[::-1] + 0.5)]


@aot.jit
def flow_duration_curve(q):
    s = np.sort(q)[::-1]
    n = len(s)
    p = np.empty(n)
    for i in range(n):
        p[i] = (i + 1) / (n + 1)
    return p, s


def flow_duration_curve_cases(rng):
    q = _flows(rng)
    return [(q,), (q[:1],)]


@aot.jit
def exceedance_flow(q_sorted_desc, prob):
    n = len(q_sorted_desc)
    pos = prob * (n + 1) - 1.0
    if pos <= 0.0:
        return q_sorted_desc[0]
    if pos >= n - 1:
        return q_sorted_desc[n - 1]
    i = int(pos)
    f = pos - i
    return q_sorted_desc[i] * (1.0 - f) + q_sorted_desc[i + 1] * f


def exceedance_flow_cases(rng):
    q = np.sort(_flows(rng))[::-1].copy()
    return [(q, 0.95), (q, 0.05), (q, 0.5), (q[:1], 0.3)]


@aot.jit
def baseflow_lyne_hollick(q, alpha=0.925):
    n = len(q)
    quick = 0.0
    base = np.empty(n)
    base[0] = q[0]
    for i in range(1, n):
        quick = alpha * quick + 0.5 * (1.0 + alpha) * (q[i] - q[i - 1])
        if quick < 0.0:
            quick = 0.0
        base[i] = min(q[i] - quick, q[i])
    return base


def baseflow_lyne_hollick_cases(rng):
    q = _flows(rng)
    return [(q,), call(q, alpha=0.98), (q[:1],)]


@aot.jit
def linear_reservoir(precip, k, s0, out):
    s = s0
    for i in range(len(precip)):
        s += precip[i]
        qout = s / k
        s -= qout
        out[i] = qout
    return s


def linear_reservoir_cases(rng):
    p = rng.gamma(0.3, 5.0, 200)
    return [(p, 10.0, 0.0, np.zeros(200)), (p[::-1], 2.5, 30.0, np.zeros(200)), (p[:0], 3.0, 1.0, np.zeros(0))]


@aot.jit
def recession_constants(q, min_len):
    ks = []
    start = 0
    for i in range(1, len(q) + 1):
        if i == len(q) or q[i] >= q[i - 1]:
            if i - start >= min_len:
                ks.append((q[i - 1] / q[start]) ** (1.0 / (i - 1 - start)))
            start = i
    return len(ks)


def recession_constants_cases(rng):
    q = _flows(rng)
    return [(q, 3), (q[::-1], 2), (q[:1], 2)]


@aot.jit
def percent_bias(obs, sim):
    so = 0.0
    sd = 0.0
    for o, s in zip(obs, sim):
        so += o
        sd += s - o
    return 100.0 * sd / so


def percent_bias_cases(rng):
    q = _flows(rng)
    return [(q, q * 1.1), (q[::-1], q[::-1] - 1.0)]


@aot.jit
def hydrograph_peaks(q, threshold):
    peaks = []
    for i in range(1, len(q) - 1):
        if q[i] > threshold and q[i] >= q[i - 1] and q[i] > q[i + 1]:
            peaks.append(i)
    return np.array(peaks)


def hydrograph_peaks_cases(rng):
    q = _flows(rng)
    return [(q, 8.0), (q[::-1], 20.0)]
