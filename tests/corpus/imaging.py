"""Image processing on 2-D arrays: gradients, filters, integral images, thresholds and labelling."""

import math

import numpy as np

import aot


def _image(rng, h=24, w=32):
    yy, xx = np.mgrid[0:h, 0:w]
    img = np.exp(-((xx - w / 2) ** 2 + (yy - h / 2) ** 2) / (0.1 * h * w))
    return img + 0.05 * rng.standard_normal((h, w))


@aot.jit
def sobel_magnitude(img, out):
    h, w = img.shape
    for i in range(1, h - 1):
        for j in range(1, w - 1):
            gx = (
                img[i - 1, j + 1]
                + 2.0 * img[i, j + 1]
                + img[i + 1, j + 1]
                - img[i - 1, j - 1]
                - 2.0 * img[i, j - 1]
                - img[i + 1, j - 1]
            )
            gy = (
                img[i + 1, j - 1]
                + 2.0 * img[i + 1, j]
                + img[i + 1, j + 1]
                - img[i - 1, j - 1]
                - 2.0 * img[i - 1, j]
                - img[i - 1, j + 1]
            )
            out[i, j] = math.hypot(gx, gy)


def sobel_magnitude_cases(rng):
    img = _image(rng)
    return [(img, np.zeros_like(img)), (img[::-1, ::2], np.zeros((24, 16))), (img[:2, :2], np.zeros((2, 2)))]


@aot.jit
def integral_image(img):
    h, w = img.shape
    out = np.zeros((h + 1, w + 1))
    for i in range(h):
        row = 0.0
        for j in range(w):
            row += img[i, j]
            out[i + 1, j + 1] = out[i, j + 1] + row
    return out


def integral_image_cases(rng):
    img = _image(rng)
    return [(img,), (img.T,), (img[:1, :1],)]


@aot.jit
def box_sum(ii, r0, c0, r1, c1):
    return ii[r1, c1] - ii[r0, c1] - ii[r1, c0] + ii[r0, c0]


def box_sum_cases(rng):
    ii = np.cumsum(np.cumsum(rng.random((10, 12)), 0), 1)
    return [(ii, 0, 0, 9, 11), (ii, 2, 3, 5, 7), (ii, 4, 4, 4, 4)]


@aot.jit
def box_blur(img, r):
    h, w = img.shape
    out = np.empty_like(img)
    for i in range(h):
        for j in range(w):
            s = 0.0
            n = 0
            for di in range(-r, r + 1):
                for dj in range(-r, r + 1):
                    y = i + di
                    x = j + dj
                    if 0 <= y < h and 0 <= x < w:
                        s += img[y, x]
                        n += 1
            out[i, j] = s / n
    return out


def box_blur_cases(rng):
    img = _image(rng, 16, 20)
    return [(img, 1), (img[::-1], 3), (img[:1, :1], 2)]


@aot.jit
def gradients(img):
    gy = np.zeros_like(img)
    gx = np.zeros_like(img)
    gy[1:-1, :] = 0.5 * (img[2:, :] - img[:-2, :])
    gx[:, 1:-1] = 0.5 * (img[:, 2:] - img[:, :-2])
    return gx, gy


def gradients_cases(rng):
    img = _image(rng)
    return [(img,), (img[:, ::-1],), (img[:1, :3],)]


@aot.jit
def flood_fill(labels, r0, c0, new_label):
    h, w = labels.shape
    old = labels[r0, c0]
    if old == new_label:
        return 0
    stack = [(r0, c0)]
    filled = 0
    while stack:
        r, c = stack.pop()
        if r < 0 or r >= h or c < 0 or c >= w or labels[r, c] != old:
            continue
        labels[r, c] = new_label
        filled += 1
        stack.append((r + 1, c))
        stack.append((r - 1, c))
        stack.append((r, c + 1))
        stack.append((r, c - 1))
    return filled


def flood_fill_cases(rng):
    m = (rng.random((20, 20)) > 0.4).astype(np.int64)
    return [(m, 10, 10, 7), (m, 0, 0, 2), (np.zeros((1, 1), dtype=np.int64), 0, 0, 0)]


@aot.jit
def otsu_threshold(hist):
    total = 0
    wsum = 0.0
    for k in range(len(hist)):
        total += hist[k]
        wsum += k * hist[k]
    best_k = 0
    best = -1.0
    w0 = 0
    s0 = 0.0
    for k in range(len(hist)):
        w0 += hist[k]
        if w0 == 0:
            continue
        w1 = total - w0
        if w1 == 0:
            break
        s0 += k * hist[k]
        m0 = s0 / w0
        m1 = (wsum - s0) / w1
        between = w0 * w1 * (m0 - m1) ** 2
        if between > best:
            best = between
            best_k = k
    return best_k


def otsu_threshold_cases(rng):
    v = np.concatenate([rng.normal(60, 10, 3000), rng.normal(180, 20, 2000)]).clip(0, 255).astype(np.int64)
    hist = np.bincount(v, minlength=256)
    return [(hist,), (hist[::-1],), (np.zeros(4, dtype=np.int64),)]


@aot.jit
def convolve2d_valid(img, kernel):
    kh, kw = kernel.shape
    out = np.zeros((img.shape[0] - kh + 1, img.shape[1] - kw + 1))
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            for a in range(kh):
                for b in range(kw):
                    out[i, j] += img[i + a, j + b] * kernel[kh - 1 - a, kw - 1 - b]
    return out


def convolve2d_valid_cases(rng):
    img = _image(rng)
    k = rng.standard_normal((3, 3))
    return [(img, k), (img[::-1], k[:1]), (img[:3, :3], k)]


@aot.jit
def median_filter3(img, out):
    h, w = img.shape
    for i in range(h):
        for j in range(w):
            vals = []
            for di in (-1, 0, 1):
                for dj in (-1, 0, 1):
                    y = min(max(i + di, 0), h - 1)
                    x = min(max(j + dj, 0), w - 1)
                    vals.append(img[y, x])
            vals.sort()
            out[i, j] = vals[4]


def median_filter3_cases(rng):
    img = _image(rng, 10, 12)
    return [(img, np.zeros((10, 12))), (img[::-1, ::-1], np.zeros((10, 12)))]


@aot.jit
def label_components(mask):
    h, w = mask.shape
    labels = np.zeros((h, w), dtype=np.int64)
    parent = np.arange(h * w)
    count = 0
    for i in range(h):
        for j in range(w):
            if not mask[i, j]:
                continue
            up = labels[i - 1, j] if i > 0 else 0
            left = labels[i, j - 1] if j > 0 else 0
            if up == 0 and left == 0:
                count += 1
                labels[i, j] = count
            else:
                labels[i, j] = max(up, left)
                if up and left and up != left:
                    a, b = _find(parent, up), _find(parent, left)
                    parent[max(a, b)] = min(a, b)
    for i in range(h):
        for j in range(w):
            if labels[i, j]:
                labels[i, j] = _find(parent, labels[i, j])
    return labels


@aot.jit
def _find(parent, k):
    while parent[k] != k:
        parent[k] = parent[parent[k]]
        k = parent[k]
    return k


def label_components_cases(rng):
    m = rng.random((16, 16)) > 0.55
    return [(m,), (m[::-1],), (np.zeros((1, 1), dtype=np.bool_),)]


def _find_cases(rng):
    parent = np.array([0, 0, 1, 2, 4, 4, 5])
    return [(parent, 3), (parent, 6), (parent, 0)]


@aot.jit
def threshold_inplace(img, t, lo, hi):
    n = 0
    for i in range(img.shape[0]):
        for j in range(img.shape[1]):
            if img[i, j] > t:
                img[i, j] = hi
                n += 1
            else:
                img[i, j] = lo
    return n


def threshold_inplace_cases(rng):
    img = _image(rng)
    u8 = (255 * rng.random((8, 9))).astype(np.uint8)
    return [(img, 0.5, 0.0, 1.0), (img[::2, ::-3], 0.1, -1.0, 1.0), (u8, 128, 0, 255)]


@aot.jit
def histogram_equalize(img, nbins, out):
    hist = np.zeros(nbins)
    h, w = img.shape
    for i in range(h):
        for j in range(w):
            hist[min(int(img[i, j] * nbins), nbins - 1)] += 1
    cdf = np.cumsum(hist) / (h * w)
    for i in range(h):
        for j in range(w):
            out[i, j] = cdf[min(int(img[i, j] * nbins), nbins - 1)]


def histogram_equalize_cases(rng):
    img = rng.random((12, 12)) ** 2
    return [(img, 16, np.zeros((12, 12))), (img.T, 256, np.zeros((12, 12)))]
