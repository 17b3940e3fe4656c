"""Frame-based audio features: zero crossings, energy, pre-emphasis, autocorrelation and pitch."""

import math

import numpy as np
from harness import call

import aot

EPS = np.float32(1e-7)


def _tone(rng, n, sr=8000.0, f0=220.0):
    t = np.arange(n) / sr
    return np.sin(2 * np.pi * f0 * t) + 0.05 * rng.standard_normal(n)


@aot.jit
def zero_crossing_rate(frame):
    n = len(frame)
    count = 0
    for i in range(1, n):
        if (frame[i - 1] >= 0.0) != (frame[i] >= 0.0):
            count += 1
    return count / (n - 1)


def zero_crossing_rate_cases(rng):
    x = _tone(rng, 512)
    return [(x,), (x[::-1],), (x[:2],), (rng.standard_normal(100),)]


@aot.jit
def rms_frames(signal, frame_len, hop):
    nframes = 1 + (len(signal) - frame_len) // hop
    out = np.empty(nframes)
    for f in range(nframes):
        frame = signal[f * hop : f * hop + frame_len]
        out[f] = np.sqrt(np.mean(frame * frame))
    return out


def rms_frames_cases(rng):
    x = _tone(rng, 4000)
    return [(x, 256, 128), (x[::-1], 400, 400), (x[:256], 256, 64)]


@aot.jit
def pre_emphasis(signal, coeff=0.97):
    out = np.empty_like(signal)
    out[0] = signal[0]
    out[1:] = signal[1:] - coeff * signal[:-1]
    return out


def pre_emphasis_cases(rng):
    x = _tone(rng, 1000)
    return [(x,), call(x, coeff=0.5), (x[:1],)]


@aot.jit
def autocorrelation(frame, max_lag):
    n = len(frame)
    out = np.zeros(max_lag)
    for lag in range(max_lag):
        for i in range(n - lag):
            out[lag] += frame[i] * frame[i + lag]
    return out


def autocorrelation_cases(rng):
    x = _tone(rng, 400)
    return [(x, 100), (x[::-1], 10), (x[:1], 1)]


@aot.jit
def amdf_pitch(frame, sr, fmin, fmax):
    n = len(frame)
    lag_min = int(sr / fmax)
    lag_max = min(int(sr / fmin), n - 1)
    best_lag = lag_min
    best = math.inf
    for lag in range(lag_min, lag_max + 1):
        d = 0.0
        for i in range(n - lag):
            d += abs(frame[i] - frame[i + lag])
        d /= n - lag
        if d < best:
            best = d
            best_lag = lag
    return sr / best_lag


def amdf_pitch_cases(rng):
    return [
        (_tone(rng, 1024), 8000.0, 80.0, 500.0),
        (_tone(rng, 800, f0=330.0), 8000.0, 100.0, 1000.0),
        (_tone(rng, 600)[::-1], 8000.0, 60.0, 400.0),
    ]


@aot.jit
def frame_energy_db(frames, out):
    for f in range(frames.shape[0]):
        s = 0.0
        for i in range(frames.shape[1]):
            s += frames[f, i] ** 2
        out[f] = 10.0 * np.log10(s / frames.shape[1] + EPS)


def frame_energy_db_cases(rng):
    fr = _tone(rng, 2048).reshape(8, 256)
    return [(fr, np.zeros(8)), (fr[::-1, ::2], np.zeros(8)), (np.zeros((2, 4)), np.zeros(2))]


@aot.jit
def hann_window(n):
    w = np.empty(n)
    for i in range(n):
        w[i] = 0.5 - 0.5 * math.cos(2.0 * math.pi * i / (n - 1))
    return w


def hann_window_cases(rng):
    return [(16,), (2,), (513,)]


@aot.jit
def peak_normalize(x, target=1.0):
    peak = np.max(np.abs(x))
    if peak == 0.0:
        return 0.0
    g = target / peak
    for i in range(len(x)):
        x[i] *= g
    return g


def peak_normalize_cases(rng):
    x = 0.3 * _tone(rng, 500)
    return [(x,), call(x[::-1], target=0.5), (np.zeros(4),)]


@aot.jit
def envelope_follower(x, sr, attack_ms, release_ms, out):
    ga = math.exp(-1.0 / (sr * attack_ms * 0.001))
    gr = math.exp(-1.0 / (sr * release_ms * 0.001))
    env = 0.0
    for i in range(len(x)):
        v = abs(x[i])
        g = ga if v > env else gr
        env = g * env + (1.0 - g) * v
        out[i] = env


def envelope_follower_cases(rng):
    x = _tone(rng, 2000) * np.linspace(0.0, 1.0, 2000)
    return [(x, 8000.0, 5.0, 50.0, np.zeros(2000)), (x[::-1], 8000.0, 1.0, 1.0, np.zeros(2000))]


TOLERANCE = {"envelope_follower": 1e-12}


@aot.jit
def spectral_centroid(mag, freqs):
    num = 0.0
    den = 0.0
    for k in range(len(mag)):
        num += freqs[k] * mag[k]
        den += mag[k]
    if den == 0.0:
        return 0.0
    return num / den


def spectral_centroid_cases(rng):
    mag = np.abs(rng.standard_normal(257))
    freqs = np.linspace(0.0, 4000.0, 257)
    return [(mag, freqs), (mag[::-1], freqs), (np.zeros(3), freqs[:3])]


@aot.jit
def onset_strength(frames_energy, out):
    prev = frames_energy[0]
    for i, e in enumerate(frames_energy):
        d = e - prev
        out[i] = d if d > 0.0 else 0.0
        prev = e


def onset_strength_cases(rng):
    e = np.abs(rng.standard_normal(64)).cumsum() % 3.0
    return [(e, np.zeros(64)), (e[::-1], np.zeros(64)), (e[:1], np.zeros(1))]


@aot.jit
def mix_down(left, right, gains, out):
    for i, (a, b) in enumerate(zip(left, right)):
        out[i] = gains[0] * a + gains[1] * b


def mix_down_cases(rng):
    a = _tone(rng, 300)
    b = _tone(rng, 300, f0=440.0)
    return [(a, b, (0.5, 0.5), np.zeros(300)), (a[::-1], b, (1.0, -1.0), np.zeros(300))]
