"""Nearest neighbours and clustering on point clouds (rows are points)."""

import math

import numpy as np
from harness import call

import aot


def _points(rng, n=60, d=3):
    return rng.standard_normal((n, d))


@aot.jit
def sq_dist(a, b):
    s = 0.0
    for k in range(len(a)):
        d = a[k] - b[k]
        s += d * d
    return s


def sq_dist_cases(rng):
    p = _points(rng, 2, 5)
    return [(p[0], p[1]), (p[0, ::-1], p[1]), (p[0, :0], p[1, :0])]


@aot.jit
def nearest_neighbor(points, query):
    best = np.inf
    best_i = -1
    for i in range(points.shape[0]):
        d = 0.0
        for k in range(points.shape[1]):
            diff = points[i, k] - query[k]
            d += diff * diff
        if d < best:
            best = d
            best_i = i
    return best_i, math.sqrt(best)


def nearest_neighbor_cases(rng):
    p = _points(rng)
    return [(p, np.zeros(3)), (p[::-1], p[5]), (p[:1], np.ones(3))]


@aot.jit
def pairwise_sq_dists(a, b):
    out = np.empty((a.shape[0], b.shape[0]))
    for i in range(a.shape[0]):
        for j in range(b.shape[0]):
            s = 0.0
            for k in range(a.shape[1]):
                d = a[i, k] - b[j, k]
                s += d * d
            out[i, j] = s
    return out


def pairwise_sq_dists_cases(rng):
    a = _points(rng, 20)
    b = _points(rng, 15)
    return [(a, b), (a[::-1, ::-1], b), (a[:0], b)]


@aot.jit
def knn_distances(points, k, out):
    n = points.shape[0]
    d = np.empty(n)
    for i in range(n):
        for j in range(n):
            d[j] = sq_dist(points[i], points[j])
        order = np.argsort(d)
        for m in range(k):
            out[i, m] = math.sqrt(d[order[m + 1]])


def knn_distances_cases(rng):
    p = _points(rng, 30)
    return [(p, 3, np.zeros((30, 3))), (p[::-1], 1, np.zeros((30, 1)))]


@aot.jit
def kmeans_assign(points, centers, labels):
    inertia = 0.0
    for i in range(points.shape[0]):
        best = math.inf
        for c in range(centers.shape[0]):
            d = 0.0
            for k in range(points.shape[1]):
                t = points[i, k] - centers[c, k]
                d += t * t
            if d < best:
                best = d
                labels[i] = c
        inertia += best
    return inertia


def kmeans_assign_cases(rng):
    p = _points(rng, 100, 2)
    c = p[:4].copy()
    return [(p, c, np.zeros(100, dtype=np.int64)), (p[::-1], c[::-1], np.zeros(100, dtype=np.int64))]


@aot.jit
def kmeans_update(points, labels, k):
    d = points.shape[1]
    centers = np.zeros((k, d))
    counts = np.zeros(k)
    for i in range(points.shape[0]):
        counts[labels[i]] += 1.0
        centers[labels[i], :] += points[i, :]
    for c in range(k):
        centers[c, :] /= counts[c]
    return centers


def kmeans_update_cases(rng):
    p = _points(rng, 100, 2)
    lab = rng.integers(0, 4, 100)
    return [(p, lab, 4), (p[::-1], lab, 4)]


@aot.jit
def radius_count(points, r):
    n = points.shape[0]
    r2 = r * r
    count = 0
    for i in range(n):
        for j in range(i + 1, n):
            diff = points[i, :] - points[j, :]
            if np.sum(diff * diff) <= r2:
                count += 1
    return count


def radius_count_cases(rng):
    p = _points(rng)
    return [(p, 1.0), (p[::-1], 0.5), (p[:1], 1.0)]


@aot.jit
def knn_brute_parallel(points, queries, out):
    for q in aot.prange(queries.shape[0]):
        best = math.inf
        best_i = -1
        for i in range(points.shape[0]):
            d = 0.0
            for k in range(points.shape[1]):
                t = points[i, k] - queries[q, k]
                d += t * t
            if d < best:
                best = d
                best_i = i
        out[q] = best_i


def knn_brute_parallel_cases(rng):
    p = _points(rng, 200)
    q = _points(rng, 50)
    return [(p, q, np.zeros(50, dtype=np.int64)), (p[::-1], q, np.zeros(50, dtype=np.int64))]


@aot.jit
def medoid_index(points, metric=None):
    n = points.shape[0]
    best = math.inf
    best_i = 0
    for i in range(n):
        s = 0.0
        for j in range(n):
            if metric is None:
                s += math.sqrt(sq_dist(points[i], points[j]))
            else:
                s += sq_dist(points[i], points[j])
        if s < best:
            best = s
            best_i = i
    return best_i


def medoid_index_cases(rng):
    p = _points(rng, 25)
    return [(p,), call(p, metric="sqeuclidean"), (p[:1],)]


@aot.jit
def grid_bin_points(points, cell, nx, ny, counts):
    for i in range(points.shape[0]):
        gx = int(math.floor(points[i, 0] / cell)) + nx // 2
        gy = int(math.floor(points[i, 1] / cell)) + ny // 2
        if 0 <= gx < nx and 0 <= gy < ny:
            counts[gy, gx] += 1


def grid_bin_points_cases(rng):
    p = _points(rng, 300, 2)
    return [
        (p, 0.5, 10, 10, np.zeros((10, 10), dtype=np.int64)),
        (p[::-1], 1.0, 4, 6, np.zeros((6, 4), dtype=np.int64)),
    ]
