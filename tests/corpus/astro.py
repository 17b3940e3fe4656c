"""Astronomy helpers: sky separations, calendar conversions, periodograms and light-curve folding."""

import math

import numpy as np
from harness import call

import aot

DEG = math.pi / 180.0


@aot.jit
def angular_distance(ra1, dec1, ra2, dec2):
    """Great-circle separation (degrees in, degrees out) by the haversine formula."""
    a1 = np.radians(ra1)
    d1 = np.radians(dec1)
    a2 = np.radians(ra2)
    d2 = np.radians(dec2)
    s = np.sin((d2 - d1) / 2.0) ** 2 + np.cos(d1) * np.cos(d2) * np.sin((a2 - a1) / 2.0) ** 2
    return np.degrees(2.0 * np.arcsin(min(1.0, np.sqrt(s))))


def angular_distance_cases(rng):
    return [(10.0, 20.0, 10.0, 20.0), (0.0, 89.9, 180.0, 89.9), (359.5, -10.0, 0.5, -10.0), (12.3, -45.6, 200.1, 33.3)]


@aot.jit
def julian_date(year, month, day, hour):
    if month <= 2:
        year -= 1
        month += 12
    a = year // 100
    b = 2 - a + a // 4
    jd_day = int(365.25 * (year + 4716)) + int(30.6001 * (month + 1)) + day + b - 1524.5
    return jd_day + hour / 24.0


def julian_date_cases(rng):
    return [(2000, 1, 1, 12.0), (1987, 6, 19, 12.0), (1600, 12, 31, 0.0), (2024, 2, 29, 6.5)]


@aot.jit
def lomb_scargle(t, y, freqs):
    n = len(t)
    mean = 0.0
    for v in y:
        mean += v
    mean /= n
    out = np.empty(len(freqs))
    for k in range(len(freqs)):
        w = 2.0 * math.pi * freqs[k]
        s2 = 0.0
        c2 = 0.0
        for i in range(n):
            s2 += math.sin(2.0 * w * t[i])
            c2 += math.cos(2.0 * w * t[i])
        tau = math.atan2(s2, c2) / (2.0 * w)
        yc = ys = cc = ss = 0.0
        for i in range(n):
            c = math.cos(w * (t[i] - tau))
            s = math.sin(w * (t[i] - tau))
            d = y[i] - mean
            yc += d * c
            ys += d * s
            cc += c * c
            ss += s * s
        out[k] = 0.5 * (yc * yc / cc + ys * ys / ss)
    return out


def lomb_scargle_cases(rng):
    t = np.sort(rng.uniform(0.0, 30.0, 120))
    y = np.sin(2 * np.pi * 0.37 * t) + 0.3 * rng.standard_normal(120)
    f = np.linspace(0.05, 1.0, 50)
    return [(t, y, f), (t[::2], y[::2], f[::-1])]


TOLERANCE = {"lomb_scargle": 1e-9}


@aot.jit
def separation_matrix(ra, dec):
    n = len(ra)
    out = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            out[i, j] = angular_distance(ra[i], dec[i], ra[j], dec[j])
    return out


def separation_matrix_cases(rng):
    ra = rng.uniform(0, 360, 12)
    dec = rng.uniform(-90, 90, 12)
    return [(ra, dec), (ra[:1], dec[:1])]


@aot.jit
def airmass(alt_deg):
    z = np.radians(90.0 - alt_deg)
    return 1.0 / (np.cos(z) + 0.50572 * (96.07995 - (90.0 - alt_deg)) ** -1.6364)


def airmass_cases(rng):
    return [(90.0,), (30.0,), (5.0,)]


@aot.jit
def phase_fold(t, period, t0=0.0):
    out = np.empty(len(t))
    for i in range(len(t)):
        out[i] = ((t[i] - t0) / period) % 1.0
    return out


def phase_fold_cases(rng):
    t = np.sort(rng.uniform(0.0, 100.0, 200))
    return [(t, 2.5), call(t, 7.1, t0=3.3), (t[:1], 1.0)]


@aot.jit
def sigma_clip_mean(x, nsigma=3.0, maxiter=5):
    keep = np.ones(len(x), dtype=np.bool_)
    mean = 0.0
    for _ in range(maxiter):
        s = 0.0
        n = 0
        for i in range(len(x)):
            if keep[i]:
                s += x[i]
                n += 1
        mean = s / n
        v = 0.0
        for i in range(len(x)):
            if keep[i]:
                v += (x[i] - mean) ** 2
        sd = math.sqrt(v / n)
        changed = False
        for i in range(len(x)):
            if keep[i] and abs(x[i] - mean) > nsigma * sd:
                keep[i] = False
                changed = True
        if not changed:
            break
    return mean


def sigma_clip_mean_cases(rng):
    x = rng.standard_normal(300)
    x[::25] += 20.0
    return [(x,), call(x, nsigma=2.0), call(x[::-1], maxiter=1)]


@aot.jit
def equatorial_to_galactic(ra, dec, out):
    ra_gp = 192.85948 * DEG
    dec_gp = 27.12825 * DEG
    l_ncp = 122.93192 * DEG
    for i in range(len(ra)):
        a = ra[i] * DEG
        d = dec[i] * DEG
        sb = math.sin(d) * math.sin(dec_gp) + math.cos(d) * math.cos(dec_gp) * math.cos(a - ra_gp)
        b = math.asin(sb)
        y = math.cos(d) * math.sin(a - ra_gp)
        x = math.sin(d) * math.cos(dec_gp) - math.cos(d) * math.sin(dec_gp) * math.cos(a - ra_gp)
        lon = (l_ncp - math.atan2(y, x)) % (2.0 * math.pi)
        out[i, 0] = lon / DEG
        out[i, 1] = b / DEG


def equatorial_to_galactic_cases(rng):
    ra = rng.uniform(0, 360, 50)
    dec = rng.uniform(-89, 89, 50)
    return [(ra, dec, np.zeros((50, 2))), (ra[::-1], dec[::-1], np.zeros((50, 2)))]


TOLERANCE["equatorial_to_galactic"] = 1e-12


@aot.jit
def light_curve_stats(mag, err, *, weighted=True):
    num = 0.0
    den = 0.0
    for i in range(len(mag)):
        w = 1.0 / (err[i] * err[i]) if weighted else 1.0
        num += w * mag[i]
        den += w
    mean = num / den
    chi2 = 0.0
    for i in range(len(mag)):
        chi2 += ((mag[i] - mean) / err[i]) ** 2
    return mean, chi2 / (len(mag) - 1)


def light_curve_stats_cases(rng):
    m = 15.0 + 0.1 * rng.standard_normal(80)
    e = rng.uniform(0.01, 0.1, 80)
    return [(m, e), call(m, e, weighted=False), (m[:2], e[:2])]
