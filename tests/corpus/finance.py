"""Returns, moving windows and risk measures over price series (the style of a small backtesting package)."""

import math

import numpy as np
from harness import call

import aot


@aot.jit
def simple_returns(prices):
    out = np.empty(len(prices) - 1)
    for i in range(len(prices) - 1):
        out[i] = prices[i + 1] / prices[i] - 1.0
    return out


def simple_returns_cases(rng):
    p = 100.0 * np.cumprod(1.0 + 0.01 * rng.standard_normal(250))
    return [(p,), (p[::-1],), (p[:1],), (p[::3],)]


@aot.jit
def log_returns(prices):
    return np.log(prices[1:] / prices[:-1])


def log_returns_cases(rng):
    p = 50.0 * np.cumprod(1.0 + 0.02 * rng.standard_normal(100))
    return [(p,), (p[:2],), (p[::-1],)]


@aot.jit
def ewma(x, alpha, adjust=True):
    n = len(x)
    out = np.empty_like(x)
    if n == 0:
        return out
    if adjust:
        num = 0.0
        den = 0.0
        for i in range(n):
            num = num * (1.0 - alpha) + x[i]
            den = den * (1.0 - alpha) + 1.0
            out[i] = num / den
    else:
        out[0] = x[0]
        for i in range(1, n):
            out[i] = alpha * x[i] + (1.0 - alpha) * out[i - 1]
    return out


def ewma_cases(rng):
    x = rng.standard_normal(300).cumsum()
    return [(x, 0.1), (x, 0.5, False), (x[:1], 0.3), (np.empty(0), 0.3)]


@aot.jit
def max_drawdown(prices):
    peak = -np.inf
    worst = 0.0
    for p in prices:
        if p > peak:
            peak = p
        dd = (p - peak) / peak
        if dd < worst:
            worst = dd
    return worst


def max_drawdown_cases(rng):
    p = 100.0 * np.cumprod(1.0 + 0.03 * rng.standard_normal(500))
    return [(p,), (p[::-1],), (p[:1],), (np.linspace(1.0, 2.0, 10),)]


@aot.jit
def max_drawdown_duration(prices):
    peak = prices[0]
    start = 0
    longest = 0
    for i in range(1, len(prices)):
        if prices[i] >= peak:
            peak = prices[i]
            start = i
        elif i - start > longest:
            longest = i - start
    return longest


def max_drawdown_duration_cases(rng):
    p = 100.0 * np.cumprod(1.0 + 0.02 * rng.standard_normal(400))
    return [(p,), (p[::-1],), (p[:1],), (p[::7],)]


@aot.jit
def rolling_mean(x, window):
    out = np.empty(len(x))
    acc = 0.0
    for i in range(len(x)):
        acc += x[i]
        if i >= window:
            acc -= x[i - window]
        if i >= window - 1:
            out[i] = acc / window
        else:
            out[i] = np.nan
    return out


def rolling_mean_cases(rng):
    x = rng.standard_normal(200)
    return [(x, 5), (x[::-1], 20), (x[:1], 3), (x[:0], 3)]


@aot.jit
def rolling_std(x, window, out):
    n = len(x)
    for i in range(n):
        if i < window - 1:
            out[i] = math.nan
        else:
            out[i] = x[i - window + 1 : i + 1].std()


def rolling_std_cases(rng):
    x = rng.standard_normal(120)
    return [(x, 10, np.zeros(120)), (x[:3], 2, np.zeros(3)), (x[::-2], 4, np.zeros(60))]


@aot.jit
def rolling_max(x, window, out):
    n = len(x)
    for i in range(n):
        lo = max(0, i - window + 1)
        out[i] = x[lo : i + 1].max()


def rolling_max_cases(rng):
    x = rng.standard_normal(150)
    return [(x, 7, np.zeros(150)), (x[::-1], 1, np.zeros(150)), (x[:1], 3, np.zeros(1))]


@aot.jit
def _mean_std(x):
    n = len(x)
    s = 0.0
    for v in x:
        s += v
    m = s / n
    ss = 0.0
    for v in x:
        ss += (v - m) * (v - m)
    return m, math.sqrt(ss / (n - 1))


def _mean_std_cases(rng):
    x = rng.standard_normal(64)
    return [(x,), (x[::-1],), (x[:2],)]


@aot.jit
def sharpe_ratio(returns, risk_free=0.0, periods=252):
    m, s = _mean_std(returns)
    return (m - risk_free / periods) / s * np.sqrt(periods)


def sharpe_ratio_cases(rng):
    r = 0.0005 + 0.01 * rng.standard_normal(500)
    return [(r,), call(r, risk_free=0.02), call(r[::-1], 0.01, periods=12)]


@aot.jit
def sortino_ratio(returns, target):
    n = len(returns)
    mean = 0.0
    down = 0.0
    for r in returns:
        mean += r
        if r < target:
            down += (r - target) ** 2
    mean /= n
    if down == 0.0:
        return np.inf
    return (mean - target) / np.sqrt(down / n)


def sortino_ratio_cases(rng):
    r = 0.001 + 0.02 * rng.standard_normal(300)
    return [(r, 0.0), (r[::-1], 0.001), (np.abs(r[:5]), -1.0)]


@aot.jit
def vwap(price, volume):
    pv = 0.0
    vol = 0.0
    for i in range(len(price)):
        pv += price[i] * volume[i]
        vol += volume[i]
    return pv / vol


def vwap_cases(rng):
    p = 20.0 + rng.standard_normal(100)
    v = rng.integers(1, 1000, 100).astype(np.float64)
    return [(p, v), (p[::-1], v[::-1]), (p[:1], v[:1])]


@aot.jit
def rsi(prices, period=14):
    n = len(prices)
    out = np.full(n, np.nan)
    gain = 0.0
    loss = 0.0
    for i in range(1, n):
        d = prices[i] - prices[i - 1]
        g = d if d > 0 else 0.0
        lo = -d if d < 0 else 0.0
        if i <= period:
            gain += g / period
            loss += lo / period
        else:
            gain = (gain * (period - 1) + g) / period
            loss = (loss * (period - 1) + lo) / period
        if i >= period:
            out[i] = 100.0 - 100.0 / (1.0 + gain / loss)
    return out


def rsi_cases(rng):
    p = 100.0 + rng.standard_normal(200).cumsum()
    return [(p,), call(p, period=5), (p[:3],)]


@aot.jit
def bollinger_bands(x, window, k=2.0):
    n = len(x)
    mid = rolling_mean(x, window=window)
    upper = np.empty(n)
    lower = np.empty(n)
    for i in range(n):
        if i < window - 1:
            upper[i] = np.nan
            lower[i] = np.nan
            continue
        s = 0.0
        for j in range(i - window + 1, i + 1):
            s += (x[j] - mid[i]) ** 2
        sd = math.sqrt(s / window)
        upper[i] = mid[i] + k * sd
        lower[i] = mid[i] - k * sd
    return upper, mid, lower


def bollinger_bands_cases(rng):
    x = 10.0 + rng.standard_normal(100).cumsum()
    return [(x, 20), call(x, 5, k=1.5), (x[:2], 3)]


@aot.jit
def cumulative_returns(returns, out):
    acc = 1.0
    for i in range(len(returns)):
        acc *= 1.0 + returns[i]
        out[i] = acc - 1.0
    return acc - 1.0


def cumulative_returns_cases(rng):
    r = 0.01 * rng.standard_normal(260)
    return [(r, np.zeros(260)), (r[::-1], np.zeros(260)), (r[:0], np.zeros(0))]


@aot.jit
def panel_rolling_zscore(panel, window, out):
    n, m = panel.shape
    for j in aot.prange(m):
        s = 0.0
        ss = 0.0
        for i in range(n):
            v = panel[i, j]
            s += v
            ss += v * v
            if i >= window:
                old = panel[i - window, j]
                s -= old
                ss -= old * old
            if i >= window - 1:
                mean = s / window
                var = ss / window - mean * mean
                out[i, j] = (v - mean) / math.sqrt(var) if var > 0.0 else 0.0
            else:
                out[i, j] = math.nan


def panel_rolling_zscore_cases(rng):
    p = rng.standard_normal((200, 8)).cumsum(axis=0)
    return [(p, 20, np.zeros((200, 8))), (p[::-1, ::2], 5, np.zeros((200, 4))), (p[:1], 3, np.zeros((1, 8)))]
