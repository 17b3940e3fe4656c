"""Arrays made and used inside ``prange`` loop bodies (``@aot.jit(parallel=True)``).

    @aot.jit(parallel=True)
    def rowwise(x):
        out = np.empty(x.shape[0])
        for i in aot.prange(x.shape[0]):       x[i]: a view of a shared array (its owner's count touched by
            row = x[i] - x[i].mean()                 every thread at once: atomic increments and decrements)
            tmp = np.zeros(x.shape[1])          tmp, row: private to the iteration (written freely)
            tmp[:] = row * row                  out[:] = …, out.sum() while out[i] is written: CompileError
            out[i] = np.sqrt(tmp.sum())
        return out

Every compiled result is checked against the plain-Python function (``check``) with 1, 2 and 3 threads;
memory is counted with ``tracemalloc`` (the allocator's blocks come from ``PyMem_RawMalloc``); a stress test
of many views of one shared array in every iteration runs in a child process with 2 to 4 threads.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

import aot
from aot import prange
from support import check, expect_compile_error, locate

# (NumPy warns of the mean of an empty row, which is NaN on both sides)
pytestmark = pytest.mark.filterwarnings("ignore:Mean of empty slice", "ignore:invalid value encountered")


@pytest.fixture(params=(1, 2, 3))
def threads(request, monkeypatch):
    monkeypatch.setenv("AOT_NUM_THREADS", str(request.param))
    return request.param


def matrices():
    rng = np.random.default_rng(7)
    m = rng.standard_normal((9, 5))
    with_nan = m.copy()
    with_nan[3, 2] = np.nan
    return [
        m,
        np.zeros((0, 5)),  # no rows
        np.ones((3, 0)),  # empty rows
        m[:1],  # one row
        m[::-1],  # negative strides, on both axes
        m[::-2, ::-1],
        np.asfortranarray(m),
        with_nan,
        rng.standard_normal((40, 3)),
    ]


# ------------------------------------------------------------------------------------- per-iteration arrays


@aot.jit(parallel=True)
def rowwise(x):
    out = np.empty(x.shape[0])
    for i in prange(x.shape[0]):
        row = x[i] - x[i].mean()  # a view, a reduction, a new temporary array per iteration
        tmp = np.zeros(x.shape[1])
        tmp[:] = row * row
        out[i] = np.sqrt(tmp.sum())
    return out


@aot.jit(parallel=True)
def centred_rows(x, out):
    for i in prange(x.shape[0]):
        out[i] = x[i] - x[i].mean()  # a row of a shared array written whole: the iteration's own row


@aot.jit(parallel=True)
def scaled_rows(x):
    out = np.zeros_like(x)
    for i in prange(len(x)):
        out[i, :] = np.abs(x[i, :]) * 2.0 + 1.0
    return out


@aot.jit(parallel=True)
def columns(x):
    out = np.empty((x.shape[1], x.shape[0]))
    for j in prange(x.shape[1]):
        col = np.sort(x[:, j])  # a new array of a column view
        out[j] = np.cumsum(col)
    return out


@aot.jit(parallel=True)
def private_work(x):
    s = 0.0
    hi = -np.inf
    for i in prange(x.shape[0]):
        a = x[i].copy()
        a.sort()  # a private array written whole, in place
        b = np.ones(a.shape[0])
        b += a  # in place, private
        b[1:] = b[:-1] * 0.5  # a view of a private array, written
        c = np.where(b > 1.0, b, 0.0)
        s += c.sum() + np.arange(3.0).sum()
        if a.shape[0] > 0:
            hi = max(hi, a[a.shape[0] - 1])
    return s, hi


def norm2(v):
    return np.sqrt((v * v).sum())


@aot.jit(parallel=True)
def calls_with_private_arrays(x):
    out = np.empty(x.shape[0])
    for i in prange(x.shape[0]):
        out[i] = norm2(x[i] - 1.0)  # (the argument is a new array: the callee may do with it what it wants)
    return out


@aot.jit(parallel=True)
def strided_out(x, out):
    for i in prange(x.shape[0]):
        out[i + 1, ::-1] = x[i]


@aot.jit(parallel=True)
def column_writes(x):
    out = np.zeros((x.shape[0], x.shape[1]))
    for j in prange(x.shape[1]):
        out[:, j] = x[:, j] * 2.0 - x[::-1, j]  # (a column of a shared array: the iteration's own)
    return out


@aot.jit(parallel=True)
def ellipsis_rows(x):
    out = np.zeros_like(x)
    for i in prange(x.shape[0]):
        out[i, ...] = x[i, ::-1] + np.arange(x.shape[1])
    return out


@aot.jit(parallel=True)
def one_of_two(x, fresh):
    for i in prange(x.shape[0]):
        if fresh:
            t = np.zeros(3)
        else:
            t = x[i]  # (the iteration's own row of x, or a new array: either way its own)
        t[0] = 7.0
    return x


@aot.jit(parallel=True)
def row_norms_3d(x):
    out = np.empty((x.shape[0], x.shape[2]))
    for i in prange(x.shape[0]):
        acc = np.zeros(x.shape[2])
        for k in range(x.shape[1]):
            acc += x[i, k] * x[i, k]
        out[i] = np.sqrt(acc)
    return out


def test_columns_ellipses_branches_and_three_dimensions(threads):
    rng = np.random.default_rng(3)
    for m in matrices():
        check(column_writes, m)
        check(ellipsis_rows, m)
        if m.shape[1] >= 3:
            check(one_of_two, m, True)
            check(one_of_two, m, False)
    for shape in ((5, 3, 4), (0, 2, 2), (1, 1, 1), (4, 0, 3)):
        x = rng.standard_normal(shape)
        check(row_norms_3d, x, close=True)
        check(row_norms_3d, x[::-1, :, ::-1], close=True)


@aot.jit(parallel=True)
def nearest(x):
    out = np.empty(x.shape[0])
    for i in prange(x.shape[0]):
        d = x - x[i]  # (the whole shared array read, a new array per iteration)
        dist = np.sqrt((d * d).sum(axis=1))
        dist[i] = np.inf
        out[i] = dist.min()
    return out


@aot.jit(parallel=True)
def pairwise(x):
    n = x.shape[0]
    out = np.empty((n, n))
    for i in prange(n):
        for j in range(n):
            out[i, j] = np.sqrt(((x[i] - x[j]) ** 2).sum())
    return out


def test_numba_style_distances(threads):
    for m in matrices():
        if m.shape[0] > 0:
            check(nearest, m, close=True)
        check(pairwise, m, close=True)


def test_the_example_matches_python(threads):
    for m in matrices():
        check(rowwise, m, close=True)


def test_rows_of_shared_arrays_written_whole(threads):
    for m in matrices():
        check(centred_rows, m, np.zeros(m.shape), close=True)
        check(scaled_rows, m)
        check(strided_out, m, np.zeros((m.shape[0] + 1, m.shape[1])))


def test_columns_sorted_and_summed(threads):
    for m in matrices():  # (a NaN sorts last in both)
        check(columns, m)


def test_private_arrays_written_in_place_and_reduced(threads):
    for m in matrices():
        check(private_work, m, close=True)
        check(calls_with_private_arrays, m, close=True)


# --------------------------------------------------------------------------------------------- memory


def _grown(f, *args, times=1000):
    f(*args)  # (compiled, and the pool's threads started, before counting)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(times):
            f(*args)
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def test_per_iteration_arrays_are_freed(threads):
    m = np.random.default_rng(1).standard_normal((50, 20))
    for f in (rowwise, scaled_rows, columns, private_work):
        grown = _grown(f, m)
        assert grown < 64 * 1024, f"{f.__name__}: {grown} bytes still held after 1000 calls"


@aot.jit(parallel=True)
def raises_midway(x, bad):
    base = x * 1.0  # (owned by compiled code, shared by the iterations)
    out = np.zeros(x.shape[0])
    for i in prange(x.shape[0]):
        row = base[i]  # (only ever a view of base: not counted)
        tmp = row * 2.0  # (the iteration's own: plain counts)
        if i % 2 == 0:
            pick = row  # (a view of base or the iteration's own: counted atomically)
        else:
            pick = tmp
        if i == bad:
            raise ValueError("bad row")
        out[i] = pick.sum() + tmp[0]
    return out, base


def test_views_and_arrays_of_an_iteration_are_released_when_one_raises(threads):
    x = np.random.default_rng(5).standard_normal((30, 6))
    check(raises_midway, x, -1, close=True)
    check(raises_midway, x, 17, raises=ValueError)

    def both():
        raises_midway(x, -1)
        try:
            raises_midway(x, 11)
        except ValueError:
            pass

    assert _grown(both, times=500) < 64 * 1024


# ------------------------------------------------------------------------- reference counts across threads

STRESS = """
import os, sys, tracemalloc
import numpy as np
import aot

@aot.jit(parallel=True)
def views(n, m, never):
    base = np.ones((16, m))  # owned by compiled code: every counted view of it counts its block
    out = np.zeros(n)
    for i in aot.prange(n):
        t = np.ones(m)
        s = 0.0
        for k in range(16):
            if k == never:
                v = t  # (never taken, but v may be base[k] or an array of the iteration: counted, atomically)
            else:
                v = base[k]
            w = v[1:]
            x = w[1:]
            u = base[k, :]  # (only ever a view of base: held by the function, not counted)
            s += w[0] + x[0] + u[1] + v[k % m] - t[0]
        out[i] = s
    return out, base

views(8, 4, -1)
tracemalloc.start()
before = tracemalloc.get_traced_memory()[0]
for threads in (2, 3, 4):
    os.environ["AOT_NUM_THREADS"] = str(threads)
    for _ in range(200):
        out, base = views(4000, 4, -1)
        assert (out == 48.0).all(), out[out != 48.0][:5]
        assert (base == 1.0).all()
        del out, base
grown = tracemalloc.get_traced_memory()[0] - before
print("grown", grown)
assert grown < 256 * 1024, grown
print("ok")
"""


def test_views_of_a_shared_array_count_its_references_atomically(tmp_path):
    """Many views of one array owned by compiled code, made in every iteration on 2 to 4 threads at once: a
    lost increment frees the block early (wrong values, a crash), a lost decrement leaks it (the count)."""
    script = tmp_path / "stress.py"
    script.write_text(STRESS)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd(), *sys.path]))
    run = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stdout + run.stderr


# ------------------------------------------------------------------------------------ races still refused


def test_a_shared_array_written_whole_in_the_body_is_a_compile_error():
    @aot.jit(parallel=True)
    def whole(x, out):
        for i in prange(x.shape[0]):
            out[:] = x[i]

    err = expect_compile_error(
        whole, np.ones((3, 2)), np.ones(2), at=locate(whole, "out[:] ="), node_type=ast.Subscript
    )
    assert "'out'" in str(err) and "same elements" in str(err)

    @aot.jit(parallel=True)
    def sliced(x, out):
        for i in prange(x.shape[0]):
            v = out[1:]
            v[0] = x[i, 0]

    expect_compile_error(sliced, np.ones((3, 2)), np.ones(3), at=locate(sliced, "v[0] ="), node_type=ast.Subscript)


def test_reading_a_written_array_whole_is_a_compile_error():
    @aot.jit(parallel=True)
    def reads_all(out):
        for i in prange(out.shape[0]):
            out[i] = out.sum()

    err = expect_compile_error(reads_all, np.ones(4), at=locate(reads_all, "out.sum()"), node_type=ast.Call)
    assert "another index" in str(err)

    @aot.jit(parallel=True)
    def next_row(x):
        for i in prange(x.shape[0] - 1):
            x[i, :] = x[i + 1] * 0.5

    expect_compile_error(next_row, np.ones((3, 2)), at=locate(next_row, "x[i + 1]"), node_type=ast.Subscript)


def test_writes_through_views_not_related_to_the_loop_variable_are_compile_errors():
    @aot.jit(parallel=True)
    def transposed(x):
        for i in prange(x.shape[0]):
            x.T[0, i] = 1.0

    expect_compile_error(transposed, np.ones((3, 3)), at=locate(transposed, "x.T[0, i] ="), node_type=ast.Subscript)

    @aot.jit(parallel=True)
    def shifted_view(out):
        r = out[1:]
        for i in prange(out.shape[0] - 1):
            r[i] = 1.0
            out[i] = 2.0

    expect_compile_error(shifted_view, np.ones(4), at=locate(shifted_view, "out[i] = 2.0"), node_type=ast.Subscript)


def test_a_view_made_before_the_loop_keeps_the_index_it_was_made_with():
    @aot.jit(parallel=True)
    def stale(out):
        j = 0
        r = out[j]  # (row 0, whatever j is in the body)
        for i in prange(out.shape[0]):
            j = i
            r[0] = 1.0
            out[j, 1] = 2.0

    expect_compile_error(stale, np.zeros((4, 3)), at=locate(stale, "out[j, 1]"), node_type=ast.Subscript)

    @aot.jit(parallel=True)
    def column_before(out):
        r = out[:, 2]
        for i in prange(out.shape[0]):
            r[i] = 1.0  # (out[i, 2]: the iteration's own row)
            out[i, 0] = 2.0
        return out

    for m in (np.zeros((4, 3)), np.zeros((0, 3)), np.zeros((1, 3)), np.zeros((5, 3))[::-1]):
        check(column_before, m)


@aot.jit(parallel=True)
def into_slices(x, out, out2):
    r = out[1:]
    back = out2[::-1]
    for i in prange(x.shape[0]):
        r[i] = x[i] * 2.0  # (out[1 + i])
        v = back[1:]
        v[i] += 1.0  # (out2[n - 2 - i])
    return out, out2


def test_writes_through_slices_of_invariant_start_and_step():
    for n in (0, 1, 2, 7):
        check(into_slices, np.arange(float(n)), np.zeros(n + 1), np.zeros(n + 1))

    @aot.jit(parallel=True)
    def both_ends(x, out):
        r = out[1:]
        back = out[::-1]
        for i in prange(x.shape[0]):
            r[i] = x[i]  # (out[1 + i] and out[n - 1 - i]: another iteration's element)
            back[i] = x[i]

    expect_compile_error(both_ends, np.ones(3), np.ones(4), at=locate(both_ends, "back[i] ="), node_type=ast.Subscript)

    @aot.jit(parallel=True)
    def moving(out):
        for i in prange(out.shape[0]):
            v = out[out.shape[0] - 1 - i :]  # (its start moves with i: v[i] is one element for every i)
            v[i] = 1.0

    err = expect_compile_error(moving, np.zeros(4), at=locate(moving, "v[i] ="), node_type=ast.Subscript)
    assert "not the prange loop variable" in str(err)


def test_shared_arrays_written_in_place_or_sorted_are_compile_errors():
    @aot.jit(parallel=True)
    def inplace(x, out):
        for i in prange(x.shape[0]):
            out += x[i]

    expect_compile_error(inplace, np.ones((3, 2)), np.ones(2), at=locate(inplace, "out += x[i]"))

    @aot.jit(parallel=True)
    def sorts(x):
        for _ in prange(x.shape[0]):
            x.sort()

    expect_compile_error(sorts, np.ones(3), at=locate(sorts, "x.sort()"), node_type=ast.Call)

    @aot.jit(parallel=True)
    def sorts_row(x):
        for i in prange(x.shape[0]):
            x[i].sort()  # (its own row: fine)
        return x

    check(sorts_row, np.random.default_rng(2).standard_normal((4, 5)))


def test_a_call_given_a_view_of_a_shared_array_is_still_a_compile_error():
    @aot.jit(parallel=True)
    def calls(x):
        out = np.empty(x.shape[0])
        for i in prange(x.shape[0]):
            out[i] = norm2(x[i])
        return out

    err = expect_compile_error(calls, np.ones((3, 2)), at=locate(calls, "norm2(x[i])"), node_type=ast.Call)
    assert "before the loop" in str(err)


def test_a_private_array_read_after_the_loop_is_still_a_compile_error():
    @aot.jit(parallel=True)
    def leaks(n):
        t = np.zeros(1)
        for i in prange(n):
            t = np.full(2, float(i))
        return t

    expect_compile_error(leaks, 3, at=locate(leaks, "t = np.full"), node_type=ast.Assign)


# ---------------------------------------------------------------------------------------------- lists


@aot.jit(parallel=True)
def private_lists(n):
    s = 0.0
    for i in prange(n):
        xs = [i * 1.0]
        for k in range(i % 4):
            xs.append(k * 0.5)
        ys = sorted(xs)
        zs = [y * 2 for y in ys]
        a = np.array(zs)
        s += a.sum() + xs.pop() + len(zs)
    return s


def test_lists_made_in_the_iteration(threads):
    for n in (0, 1, 2, 10, 101):
        check(private_lists, n)
    assert _grown(private_lists, 50, times=300) < 64 * 1024


def test_a_list_made_before_the_loop_is_a_compile_error():
    @aot.jit(parallel=True)
    def shared_list(n):
        xs = [1.0, 2.0]
        s = 0.0
        for i in prange(n):
            s += xs[i % 2]
        return s

    err = expect_compile_error(shared_list, 3, at=locate(shared_list, "xs[i % 2]"), node_type=ast.Subscript)
    assert "make the list in the iteration" in str(err)

    @aot.jit(parallel=True)
    def list_of_arrays(x):
        s = 0.0
        for i in prange(x.shape[0]):
            rows = [x[i]]
            s += rows[0][0]
        return s

    expect_compile_error(list_of_arrays, np.ones((2, 2)), at=locate(list_of_arrays, "[x[i]]"), node_type=ast.List)


# ------------------------------------------------------------------------------- where counts are atomic


def _atomic_functions(method, *argtypes):
    """The names of the LLVM functions of ``method``'s module that change a count atomically."""
    found = set()
    for chunk in method.inspect_llvm(*argtypes).split("\ndefine ")[1:]:
        name = re.search(r"@([\w.$]+)\(", chunk)
        if name and "atomicrmw" in chunk:
            found.add(name.group(1))
    return found


@aot.jit
def serial_rowwise(x):
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = (x[i] - x[i].mean()).sum()
    return out


def test_counts_are_atomic_only_in_prange_bodies():
    """Serial code counts with plain loads and stores (LLVM folds a view's increment with its decrement: see
    tests/bench/test_alloc_bench.py, views in a loop); the outlined body of a prange loop, whose views of a
    shared array count its block from several threads, with atomicrmw."""
    assert _atomic_functions(serial_rowwise, "f64[:, :]") == set()
    atomic = _atomic_functions(rowwise, "f64[:, :]")
    assert atomic and all(".prange." in name for name in atomic), atomic


@aot.jit(parallel=True)
def rounded_rows(x):
    out = np.empty_like(x)
    for i in aot.prange(x.shape[0]):
        out[i] = np.round(x[i], 2)
    return out


def test_numpy_functions_of_rows_in_a_prange_body():
    x = np.random.default_rng(3).standard_normal((7, 5)) * 100
    for a in (x, x[::-1, ::2], x[:0], x[:1]):
        check(rounded_rows, a)


@aot.jit(parallel=True)
def nan_rows(x):
    out = np.empty(x.shape[0])
    for i in aot.prange(x.shape[0]):
        t = 0.0
        for v in x[i].flat:
            t += v
        out[i] = np.nanmean(x[i]) + t + np.count_nonzero(x[i])
    return out


@aot.jit(parallel=True)
def fill_rows(x):
    for i in aot.prange(x.shape[0]):
        x[i].fill(i)


@aot.jit(parallel=True)
def fill_whole(x):
    for i in aot.prange(x.shape[0]):
        x.fill(i)


def test_nan_reductions_flat_and_fill_of_rows_in_a_prange_body():
    x = np.random.default_rng(4).standard_normal((6, 5))
    x[1, 2] = np.nan
    for a in (x, x[::-1, ::2], x[:1]):
        check(nan_rows, a)
        check(fill_rows, a.copy())
    err = expect_compile_error(fill_whole, x.copy(), at=locate(fill_whole, "x.fill(i)"), node_type=ast.Call)
    assert "'x'" in str(err)
