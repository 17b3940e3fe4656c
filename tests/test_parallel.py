"""Parallel loops (``aot.prange`` with ``@aot.jit(parallel=True)``) and ``@aot.jit(nogil=True)``.

    @aot.jit(parallel=True)
    def total(a):                       total(a) == total.py_func(a)   (within rounding for floats; exact for ints)
        s = 0.0                         AOT_NUM_THREADS=1, 2, 3, 7: the same results
        for i in aot.prange(len(a)):    an error in any chunk: the first one by iteration order is raised
            s += a[i]                   a race (a value carried between iterations, a shared write): CompileError
        return s

Every compiled result is checked against the plain-Python function (``check``); a parallel method is also
compared with the same body compiled serially, on random programs (``progen.generate_prange``).
"""

from __future__ import annotations

import ast
import os
import random
import signal
import subprocess
import sys
import threading
import time
import types
import warnings

import numpy as np
import pytest

import aot
import progen
from aot import prange
from buildsupport import aot_build, image_contents, pyproject, run_python, write_project
from support import check, expect_compile_error, locate
from test_differential import load_entry

THREADS = (1, 2, 3, 7)


@pytest.fixture(params=THREADS)
def threads(request, monkeypatch):
    monkeypatch.setenv("AOT_NUM_THREADS", str(request.param))
    return request.param


# ---------------------------------------------------------------------------------------------- reductions


@aot.jit(parallel=True)
def total(a):
    s = 0.0
    for i in aot.prange(len(a)):
        s += a[i]
    return s


@aot.jit(parallel=True)
def int_reductions(n, k):
    s = 0
    d = 100
    p = 1
    for i in prange(n):
        t = i * i - k
        s += t
        d -= i % 5
        p *= (i % 500 == 7) + 1  # (stays in 64 bits)
    return s, d, p


@aot.jit(parallel=True)
def stepped(a, start, stop, step):
    s = 0.0
    c = 0
    for i in aot.prange(start, stop, step):
        s += a[i] * 0.5
        c += 1
    return s, c


def arrays():
    base = np.linspace(-3.0, 7.0, 101)
    return [
        np.zeros(0),
        np.array([2.5]),
        base,
        base[::-1],  # negative strides
        base[::3],
        np.array([1.0, np.nan, 2.0, 3.0, 4.0]),
        np.array([np.inf, 1.0, 2.0]),
    ]


@aot.jit(parallel=True)
def extremes(a, start):
    lo = start
    hi = -start
    best = -1
    for i in aot.prange(len(a)):
        lo = min(lo, a[i])
        hi = max(hi, a[i] * 2.0)
        best = max(best, (i * 7919) % 101)
    return lo, hi, best


def test_min_and_max_reductions_pick_as_python_does(threads):
    ties = np.array([0.0, -0.0, 1.0, -0.0, 0.0, 3.0, -1.0, -1.0])
    for a in [*arrays(), ties, ties[::-1], np.array([np.nan] * 5), np.array([1.0, -np.inf, np.nan, 2.0])]:
        for start in (0.0, -0.0, 100.0, np.inf, np.nan):
            check(extremes, a, start)


def test_float_sum_matches_python(threads):
    for a in arrays():
        check(total, a, close=True, rel_tol=1e-9, signed_zero=False)


def test_int_reductions_equal_python_exactly(threads):
    for n in (0, 1, 2, 3, 10, 1000, 12345):
        for k in (0, -7, 2**40):
            check(int_reductions, n, k)


def test_prange_with_start_stop_and_negative_step(threads):
    a = np.arange(50.0) ** 1.5
    for start, stop, step in ((0, 50, 1), (3, 47, 4), (49, -1, -1), (48, 2, -3), (10, 10, 1), (10, 3, 1), (0, 50, 7)):
        check(stepped, a, start, stop, step, close=True, rel_tol=1e-12)


def test_zero_step_raises_like_range(threads):
    check(stepped, np.ones(3), 0, 3, 0, raises=ValueError)


# ---------------------------------------------------------------------------------------------- arrays


@aot.jit(parallel=True)
def smooth(a, out):
    for i in aot.prange(1, len(a) - 1):
        left = a[i - 1]
        out[i] = 0.25 * left + 0.5 * a[i] + 0.25 * a[i + 1]


@aot.jit(parallel=True)
def rows(m, out):
    for i in aot.prange(m.shape[0]):
        acc = 0.0
        for j in range(m.shape[1]):
            out[i, j] = m[i, j] * 2.0
            acc += m[i, j]
        out[i, 0] = acc


@aot.jit(parallel=True)
def shifted(a, out, offset):
    for i in aot.prange(len(out) - offset):
        out[i + offset] = out[i + offset] + a[i]


@aot.jit(parallel=True)
def nested(m):
    s = 0
    for i in aot.prange(m.shape[0]):
        for j in aot.prange(m.shape[1]):  # (inside a parallel loop: serial)
            s += m[i, j]
    return s


def test_disjoint_writes(threads):
    for a in arrays():
        check(smooth, a, np.zeros_like(a))
        check(smooth, a, np.zeros(len(a))[::-1])
    base = np.arange(35.0).reshape(5, 7)
    for m in (base, base.T, base[::-1, ::2], np.zeros((0, 3)), np.ones((1, 1))):
        check(rows, m, np.zeros(m.shape))
    for offset in (0, 1, 5):
        check(shifted, np.arange(20.0), np.ones(20), offset)
    for m in (np.arange(12).reshape(3, 4), np.zeros((0, 0), dtype=np.int64), np.arange(6).reshape(6, 1)[::-1]):
        check(nested, m)


@aot.jit(parallel=True)
def repeated(a, reps):
    total = 0.0
    for r in range(reps):  # (a parallel loop in a serial one: forked and joined each time)
        s = 0.0
        for i in aot.prange(len(a)):
            s += a[i] * r
        total += s
    return total


@aot.jit
def calls_parallel(a):
    return repeated(a, 3)


@aot.jit(parallel=True)
def with_else(a, t):
    s = 0
    c = 0
    for i in aot.prange(len(a)):
        y = -1 if a[i] < t[0] else t[1]
        s += a[i] * y
        c = max(c, y)
    else:
        s += 1000
    return s, c


@aot.jit(parallel=True)
def narrow(a, flags):
    s = aot.i32(0)
    for i in aot.prange(len(a)):
        s += a[i]
        flags[i] = a[i] > 0
    return s


def helper_scalar(x):
    return x * 2.0 + 1.0


@aot.jit(parallel=True)
def maybe_bound(a, flag, out):
    if flag:
        x = 2.0
    for i in aot.prange(len(a)):
        out[i] = helper_scalar(a[i] * x)


def test_loops_in_loops_callers_else_tuples_and_narrow_types(threads):
    a = np.arange(10.0)
    for reps in (0, 1, 4):
        check(repeated, a, reps, close=True)
    check(calls_parallel, a[::-2], close=True)
    for ints in (np.arange(10), np.zeros(0, dtype=np.int64), np.array([-3])):
        check(with_else, ints, (4, 2))
    big = np.array([2**31 - 1, 1, 5, -7], dtype=np.int32)  # (i32 wraps as NumPy's int32 does)
    assert narrow(big, np.zeros(4, dtype=bool)) == np.int32(big.sum(dtype=np.int32))
    check(narrow, np.arange(-3, 4, dtype=np.int32), np.zeros(7, dtype=bool))
    for flag in (True, False):
        check(maybe_bound, a, flag, np.zeros(10))
    check(maybe_bound, np.zeros(0), False, np.zeros(0))


# ---------------------------------------------------------------------------------------------- errors


@aot.jit(parallel=True)
def failing(a, bad_value, bad_index):
    s = 0.0
    for i in aot.prange(len(a)):
        if i == bad_value:
            raise ValueError("bad value")
        s += a[i] + a[i - bad_index]
    return s


def test_an_error_in_a_chunk_is_raised_as_the_serial_loop_raises_it(threads):
    a = np.arange(100.0)
    for bad_value, bad_index in ((5, 0), (99, 0), (-1, -1000), (0, 0), (70, -100), (10, 200)):
        check(failing, a, bad_value, bad_index, close=True)


def test_the_first_error_by_iteration_order_wins(threads):
    # Iteration 80 raises IndexError, iteration 90 ValueError: serially IndexError comes first, and so
    # it must in parallel, whichever chunk finishes first.
    a = np.arange(100.0)
    for _ in range(5):
        with pytest.raises(IndexError):
            failing(a, 90, -20)  # a[i + 20] is out of range from i = 80 on
    check(failing, a, 10, -80, messages=True, raises=ValueError)  # i = 10 fails before any IndexError (i >= 20)


# ---------------------------------------------------------------------------------------------- serial meaning


@aot.jit
def not_parallel(a):
    s = 0.0
    last = -1
    for i in aot.prange(len(a)):  # without parallel=True: range (a value may leave the loop)
        s += a[i]
        last = i
    return s, last


def test_prange_is_range_in_python_and_without_parallel():
    assert list(prange(2, 9, 3)) == [2, 5, 8]
    assert isinstance(prange(4), range)
    for a in arrays():
        check(not_parallel, a)


NUMBA_STYLE = """
import numba
from numba import prange

import aot


@aot.jit(parallel=True)
def entry(a):
    s = 0.0
    for i in prange(len(a)):
        s += a[i]
    for i in numba.prange(len(a)):
        s += a[i] * 2.0
    return s
"""


def test_numba_prange_is_recognised(tmp_path, monkeypatch):
    from aot.parallel import is_prange

    fake = type("prange", (), {"__module__": "numba.misc.special", "__new__": lambda cls, *args: range(*args)})
    assert is_prange(fake) and is_prange(prange) and not is_prange(range)
    numba = types.ModuleType("numba")
    numba.prange = fake  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "numba", numba)
    entry = load_entry(NUMBA_STYLE, tmp_path)
    check(entry, np.arange(100.0), close=True)
    assert "prange.len" in entry.inspect_ir("f64[:]")


# ---------------------------------------------------------------------------------------------- races


def test_a_value_read_after_the_loop_is_a_compile_error():
    @aot.jit(parallel=True)
    def last_value(a):
        x = 0.0
        for i in aot.prange(len(a)):
            x = a[i]
        return x

    err = expect_compile_error(last_value, np.ones(3), at=locate(last_value, "x = a[i]"), node_type=ast.Assign)
    assert "'x'" in str(err) and "after" in str(err)


def test_a_value_carried_between_iterations_is_a_compile_error():
    @aot.jit(parallel=True)
    def recurrence(a):
        s = 1.0
        for i in aot.prange(len(a)):
            s = s * 0.5 + a[i]
        return s

    err = expect_compile_error(recurrence, np.ones(3), at=locate(recurrence, "s * 0.5"), node_type=ast.BinOp)
    assert "'s'" in str(err) and "reduction" in str(err)


def test_reading_a_reduction_in_the_loop_is_a_compile_error():
    @aot.jit(parallel=True)
    def peek(a, out):
        s = 0.0
        for i in aot.prange(len(a)):
            s += a[i]
            out[i] = s
        return s

    err = expect_compile_error(peek, np.ones(3), np.ones(3), at=locate(peek, "s += a[i]"), node_type=ast.AugAssign)
    assert "'s'" in str(err)


def test_min_with_the_reduction_second_is_a_compile_error():
    @aot.jit(parallel=True)
    def swapped(a):
        lo = 0.0
        for i in aot.prange(len(a)):
            lo = min(a[i], lo)
        return lo

    err = expect_compile_error(swapped, np.ones(3), at=locate(swapped, "min(a[i], lo)"), node_type=ast.Call)
    assert "min(s, …)" in str(err)


def test_mixed_reduction_operators_are_a_compile_error():
    @aot.jit(parallel=True)
    def mixed(n):
        s = 1
        for i in aot.prange(n):
            s += i
            s *= 2
        return s

    expect_compile_error(mixed, 3, at=locate(mixed, "s += i"), node_type=ast.AugAssign)


def test_a_write_at_another_index_is_a_compile_error():
    @aot.jit(parallel=True)
    def shared_slot(a, out):
        for i in aot.prange(len(a)):
            out[0] = a[i]

    err = expect_compile_error(shared_slot, np.ones(3), np.ones(3), at=locate(shared_slot, "out[0] ="))
    assert "'out'" in str(err) and "loop variable" in str(err)

    @aot.jit(parallel=True)
    def scaled(a, out, k):
        for i in aot.prange(len(a)):
            out[i * k] = a[i]

    expect_compile_error(scaled, np.ones(3), np.ones(3), 1, at=locate(scaled, "out[i * k] ="))


def test_reading_another_iterations_element_is_a_compile_error():
    @aot.jit(parallel=True)
    def forward(a):
        for i in aot.prange(len(a) - 1):
            a[i] = a[i + 1]

    err = expect_compile_error(forward, np.ones(3), at=locate(forward, "a[i + 1]"), node_type=ast.Subscript)
    assert "another index" in str(err)


def test_an_alias_of_a_written_array_counts_as_the_array():
    @aot.jit(parallel=True)
    def through_alias(a):
        b = a
        for i in aot.prange(len(a) - 1):
            b[i] = a[i + 1]

    expect_compile_error(through_alias, np.ones(3), at=locate(through_alias, "a[i + 1]"), node_type=ast.Subscript)


PRANGE_IR = """func demo:fill(%out: f64[:]) -> none  file "demo.py" @1:1-4:20
bb0:
  %0: i64 = const 0  @2:14-2:30
  %$start1: i64 = copy %0  @2:14-2:30
  %1: i64 = intrinsic len, [%out]  @2:21-2:29
  %2: i64 = const 1  @2:14-2:30
  %$step2: i64 = copy %2  @2:14-2:30
  %3: i64 = intrinsic prange.len, [%$start1, %1, %$step2]  @2:14-2:30
  %4: i64 = const 0  @2:14-2:30
  %$k3: i64 = copy %4  @2:14-2:30
  %5: i64 = const 1  @2:14-2:30
  jump bb1  @1:1-4:20
bb1:
  %6: boolean = cmp lt, %$k3, %3  @2:14-2:30
  br %6, bb2, bb4  @2:14-2:30
bb2:
  %7: i64 = binop add, %$start1, %$k3  @2:14-2:30
  %i: i64 = copy %7  @2:9-2:10
  %$k3: i64 = binop add, %$k3, %5  @2:14-2:30
  %8: f64 = const 1.0  @3:18-3:21
  BODY
  jump bb1  @1:1-4:20
bb4:
  ret -  @1:1-4:20
"""


def test_an_array_intrinsic_unknown_to_the_check_is_refused_in_a_prange_loop():
    """An op that might write an array, added after the check was written, is refused (never risked)."""
    from aot.analysis import parallel
    from aot.ir import parse_function

    fine = parse_function(PRANGE_IR.replace("BODY", "setitem %out, [%i], %8  @3:9-3:21"))
    parallel.check(fine)
    assert [loop.reductions for loop in parallel.parallel_loops(fine)] == [()]
    unknown = parse_function(PRANGE_IR.replace("BODY", "%9: f64 = intrinsic gpu.atomic_add, [%out, %i, %8]  @3:9-3:21"))
    with pytest.raises(aot.CompileError, match=r"demo.py:3:9: .*gpu.atomic_add on an array is not supported"):
        parallel.check(unknown)


def test_break_and_return_in_a_prange_loop_are_compile_errors():
    @aot.jit(parallel=True)
    def leaves(a):
        for i in aot.prange(len(a)):
            if a[i] > 0:
                break

    expect_compile_error(leaves, np.ones(3), at=locate(leaves, "break"), node_type=ast.Break)

    @aot.jit(parallel=True)
    def returns(a):
        for i in aot.prange(len(a)):
            if a[i] > 0:
                return i
        return -1

    expect_compile_error(returns, np.ones(3), at=locate(returns, "return i"), node_type=ast.Return)


def helper_writes(a, i):
    a[i] = 1.0


def test_a_call_given_an_array_is_a_compile_error():
    @aot.jit(parallel=True)
    def calls(a):
        for i in aot.prange(len(a)):
            helper_writes(a, i)

    err = expect_compile_error(calls, np.ones(3), at=locate(calls, "helper_writes(a, i)"), node_type=ast.Call)
    assert "'a'" in str(err)


def test_prange_in_a_kernel_is_a_compile_error():
    def body(out):
        for i in aot.prange(len(out)):
            out[i] = 1.0

    k = aot.kernel(body)
    with pytest.raises(aot.CompileError) as info:
        k[1, 1](np.zeros(3))
    assert "prange" in str(info.value) and "kernel" in str(info.value)
    assert str(info.value).startswith(f"{locate(body, 'aot.prange')[0]}:{locate(body, 'aot.prange')[1]}:")


# ---------------------------------------------------------------------------------------------- threads


@aot.jit(parallel=True, nogil=True)
def busy(n):
    s = 0.0
    for _i in aot.prange(n):
        x = 0.5
        for _j in range(200):
            x = x * 0.999 + 0.001
        s += x
    return s


def _task_count():
    return len(os.listdir("/proc/self/task"))


def _running_count():
    """Threads of this process running or ready to run (state R), parked ones (S) not counted."""
    running = 0
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/stat") as f:
                running += f.read().rsplit(")", 1)[1].split()[0] == "R"
        except OSError:  # (a thread that just ended)
            pass
    return running


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs /proc")
def test_the_loop_runs_on_aot_num_threads_threads(monkeypatch):
    """Four chunks run at once: the calling Python thread's and three of the pool's workers."""
    monkeypatch.setenv("AOT_NUM_THREADS", "4")
    busy(10)
    seen = 0
    worker = threading.Thread(target=busy, args=(4_000_000,))
    worker.start()
    while worker.is_alive():
        seen = max(seen, _running_count())
        time.sleep(0.001)
    assert seen >= 4
    assert busy(1000) == pytest.approx(busy.py_func(1000))


@aot.jit(parallel=True)
def fill_squares(out):
    for i in aot.prange(out.shape[0]):
        out[i] = i * i


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs /proc")
def test_consecutive_loops_reuse_the_pools_threads(monkeypatch):
    """The workers are started by the first loop and parked between loops: a thousand more loops start no
    thread, and each gives the serial result (the workers see every new loop, none runs a stale one)."""
    monkeypatch.setenv("AOT_NUM_THREADS", "4")
    out = np.zeros(1001)
    fill_squares(out)
    threads = _task_count()
    for n in list(range(1, 400)) + [1001] * 600:
        out[:] = -1.0
        fill_squares(out[:n])
        assert out[:n].tolist() == [float(i * i) for i in range(n)] and (n == 1001 or out[n] == -1.0)
    assert _task_count() == threads
    monkeypatch.setenv("AOT_NUM_THREADS", "7")  # (more chunks: three more workers, once)
    fill_squares(out)
    assert _task_count() == threads + 3
    fill_squares(out)
    assert _task_count() == threads + 3


@aot.jit(nogil=True)
def spin(n):
    x = 0.0
    for i in range(n):
        x = x * 0.9999 + (i % 7)
    return x


@aot.jit
def spin_holding(n):
    x = 0.0
    for i in range(n):
        x = x * 0.9999 + (i % 7)
    return x


def _progress_while(f, n):
    """How many times the main thread got to run Python while another thread ran ``f(n)``."""
    ticks = 0
    worker = threading.Thread(target=f, args=(n,))
    worker.start()
    while worker.is_alive():
        ticks += 1
    worker.join()
    return ticks


def test_nogil_lets_python_threads_run_meanwhile():
    n = 100_000_000  # (a few tenths of a second: the main thread counts all along with nogil, and only
    spin(10), spin_holding(10)  # in the switch intervals before and after the call without it)
    free = _progress_while(spin, n)
    held = _progress_while(spin_holding, n)
    assert free > 5 * max(held, 1000), (free, held)
    check(spin, 1000)


def test_two_threads_run_compiled_calls_at_once():
    """While one thread is inside a long nogil call, another thread completes whole compiled calls."""
    long_call = 200_000_000
    spin(10)
    done = []
    worker = threading.Thread(target=lambda: done.append(spin(long_call)))
    worker.start()
    calls = 0
    while worker.is_alive():
        spin(1000)
        calls += 1
    worker.join()
    assert calls > 100 and done == [spin(long_call)], calls


@aot.jit(nogil=True)
def lookup(a, i):
    if i == 3:
        raise ValueError("three")
    return a[i], a[i] * 2.0


def test_nogil_raises_and_returns_like_python():
    a = np.arange(5.0)
    for i in (0, 4, -1, -5, 5, -6):
        check(lookup, a, i)
    check(lookup, a, 3, messages=True, raises=ValueError)
    check(spin, 0)


def test_threads_calling_a_parallel_method_at_once(monkeypatch):
    monkeypatch.setenv("AOT_NUM_THREADS", "3")
    a = np.linspace(0.0, 1.0, 10001)
    want = total.py_func(a)
    results = []
    errors = []

    def call():
        results.append(total(a))
        try:
            failing(a, 17, 0)
        except ValueError as err:
            errors.append(str(err))

    workers = [threading.Thread(target=call) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert results == pytest.approx([want] * 4) and errors == ["bad value"] * 4


@aot.jit(parallel=True)
def inner_sum(n, k):
    s = 0
    for i in aot.prange(n):
        s += i * k
    return s


@aot.jit(parallel=True)
def outer_sum(n):
    s = 0
    for k in aot.prange(n):
        s += inner_sum(k * 10, k)  # (a parallel method reached from a chunk: it runs its chunks serially)
    return s


@aot.jit
def inner_twice(n):
    return inner_sum(n, 1) + inner_sum(n, 2)


def test_a_parallel_method_called_from_a_chunk_runs_serially_without_deadlock(threads):
    for n in (0, 1, 5, 40):
        check(outer_sum, n)
    check(inner_twice, 1000)


def test_an_error_in_a_chunk_leaves_the_pool_ready(threads):
    a = np.arange(100.0)
    for bad in (0, 30, 99):
        with pytest.raises(ValueError, match="bad value"):
            failing(a, bad, 0)
        check(total, a, close=True)
        check(outer_sum, 12)


def test_many_python_threads_share_the_pool(monkeypatch):
    """Eight Python threads, each making many parallel calls (nested ones and failing ones among them): a
    loop that finds the pool busy with another thread's loop starts threads of its own; results stay right."""
    monkeypatch.setenv("AOT_NUM_THREADS", "3")
    a = np.linspace(0.0, 1.0, 5001)
    want_total, want_outer = total.py_func(a), outer_sum.py_func(20)
    problems = []

    def call(seed):
        rng = random.Random(seed)
        for _ in range(60):
            pick = rng.randrange(3)
            if pick == 0 and total(a) != pytest.approx(want_total):
                problems.append("total")
            elif pick == 1 and outer_sum(20) != want_outer:
                problems.append("outer_sum")
            elif pick == 2:
                try:
                    failing(a, rng.randrange(5001), 0)
                    problems.append("no error")
                except ValueError:
                    pass

    workers = [threading.Thread(target=call, args=(seed,)) for seed in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=120)
    assert not any(w.is_alive() for w in workers), "a thread is stuck"
    assert problems == []


def _forked(fn):
    """Run ``fn()`` in a forked child: (exit status, what it wrote)."""
    read, write = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # (Python 3.12+: forking a process with threads)
        pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        code = 1
        signal.alarm(60)  # (a child stuck waiting for threads it does not have is killed)
        try:
            os.write(write, repr(fn()).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read) as f:
        text = f.read()
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), text


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_runs_parallel_loops(monkeypatch):
    """The child of a process whose pool has threads (parked, or busy with another thread's loop at the
    moment of the fork) has none of them: its first loop starts its own."""
    monkeypatch.setenv("AOT_NUM_THREADS", "4")
    a = np.arange(100_000.0)
    want = total.py_func(a)
    assert total(a) == pytest.approx(want)
    child = _forked(lambda: [total(a) for _ in range(50)] + [outer_sum(20)])
    assert child == (0, repr([total(a)] * 50 + [outer_sum.py_func(20)]))
    stop = threading.Event()

    def keep_busy():
        while not stop.is_set():
            busy(200_000)

    worker = threading.Thread(target=keep_busy)
    worker.start()
    try:
        time.sleep(0.05)
        for _ in range(3):
            child = _forked(lambda: [total(a) for _ in range(20)])
            assert child == (0, repr([total(a)] * 20))
    finally:
        stop.set()
        worker.join()


_EXITS = """
import sys, threading, aot

@aot.jit(parallel=True, nogil=True)
def spin(n):
    s = 0.0
    for _i in aot.prange(n):
        x = 0.5
        for _j in range(200):
            x = x * 0.999 + 0.001
        s += x
    return s

spin(1000)  # (the pool's workers start, then park)
if sys.argv[1] == "busy":  # a daemon thread in a parallel loop when the interpreter exits
    started = threading.Event()

    def forever():
        started.set()
        while True:
            spin(1_000_000)

    threading.Thread(target=forever, daemon=True).start()
    started.wait()
print("exiting", flush=True)
"""


@pytest.mark.parametrize("when", ["parked", "busy"])
def test_the_process_exits_with_the_pools_threads(tmp_path, when):
    script = tmp_path / "exits.py"
    script.write_text(_EXITS)
    env = dict(os.environ, AOT_NUM_THREADS="4", PYTHONPATH=os.path.dirname(os.path.dirname(aot.__file__)))
    proc = subprocess.run([sys.executable, str(script), when], capture_output=True, text=True, timeout=120, env=env)
    assert (proc.returncode, proc.stdout) == (0, "exiting\n"), proc.stderr


# ---------------------------------------------------------------------------------------------- random programs


@pytest.mark.parametrize("seed", range(16))
def test_generated_prange_programs(seed, tmp_path, monkeypatch):
    """Parallel against plain Python and against the same body compiled serially: ints exactly, floats
    within rounding (a sum in another order), the same exception type when one is raised."""
    monkeypatch.setenv("AOT_NUM_THREADS", str(1 + seed % 4))
    prog = progen.generate_prange(progen.RandomChooser(random.Random(seed)))
    entry = load_entry(prog.source, tmp_path)
    serial = entry.py_func.__globals__["entry_serial"]
    rng = random.Random(seed)
    for _ in range(6):
        args = progen.random_args(rng, prog.params)
        outs = {}
        for name, fn in (("python", entry.py_func), ("parallel", entry), ("serial", serial)):
            out = np.zeros(progen.PRANGE_LEN)
            outs[name] = (progen.outcome(fn, (*args, out)), out)
        (want, want_out) = outs["python"]
        for name in ("parallel", "serial"):
            got, got_out = outs[name]
            where = f"{name} on {args!r}:\n{prog.source}"
            assert got[0] == want[0], f"{where}\n{progen.describe(want)} / {progen.describe(got)}"
            if want[0] == "raise":
                assert type(got[1]) is type(want[1]), where
                continue
            (ws, wf, wp, wm), (gs, gf, gp, gm) = want[1], got[1]
            assert (gs, gp) == (ws, wp) and progen.same_result(gm, float(wm)), where
            assert gf == pytest.approx(wf, rel=1e-9, abs=1e-9, nan_ok=True), where
            np.testing.assert_array_equal(got_out, want_out, err_msg=where)


# ---------------------------------------------------------------------------------------------- images


PACKAGE = {
    "pyproject.toml": pyproject("parpkg"),
    "parpkg/__init__.py": "from . import ops\n",
    "parpkg/ops.py": """
        import aot


        @aot.jit(parallel=True, signatures=["f64(f64[:])"])
        def total(a):
            s = 0.0
            for i in aot.prange(len(a)):
                s += a[i]
            return s


        @aot.jit(parallel=True, nogil=True, signatures=["none(f64[:], f64[:])"])
        def smooth(a, out):
            for i in aot.prange(1, len(a) - 1):
                out[i] = 0.5 * (a[i - 1] + a[i + 1])


        @aot.jit(nogil=True, signatures=["i64(i64)"])
        def spin(n):
            s = 0
            for i in range(n):
                s += i % 7
            return s
    """,
}


def test_parallel_and_nogil_entries_load_from_the_image_with_nothing_inferred(tmp_path):
    project = write_project(tmp_path / "proj", PACKAGE)
    done = aot_build(project, "--json")
    assert done.rc == 0, done.stderr
    assert done.summary["built"] == 3
    run = run_python(
        project,
        """
        import threading, numpy as np
        import parpkg.ops as ops
        a = np.arange(1000.0)
        out = np.zeros(1000)
        ops.smooth(a, out)
        box = []
        t = threading.Thread(target=lambda: box.append(ops.spin(10**6)))
        t.start(); t.join()
        report(total=ops.total(a), out=out[:4].tolist(), spin=box[0])
        """,
        env={"AOT_STRICT": "1", "AOT_NUM_THREADS": "3"},
    )
    assert run["stats"]["inferred"] == 0 and run["stats"]["loaded"] == 3
    assert run["total"] == sum(range(1000)) and run["out"] == [0.0, 1.0, 2.0, 3.0]
    assert run["spin"] == sum(i % 7 for i in range(10**6))
    assert not run["llvmlite"]
    code = image_contents(project, "parpkg").code
    assert b"aot.nogil" in code[("parpkg.ops:spin", ("i64",))].ir  # (the options live in the stored IR)
    assert b"prange.len" in code[("parpkg.ops:total", ("f64[:]",))].ir


@aot.jit(parallel=True)
def allocates_in_prange(n, out):
    for i in aot.prange(n):
        tmp = np.full(3, i * 2.0)
        if i == 7:
            raise ValueError("seven")
        out[i] = tmp[1] + out[i]


@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_a_prange_body_that_allocates_frees_its_arrays_also_when_an_iteration_raises(threads, monkeypatch):
    """Each chunk holds its own references (arrays copied in from the function, arrays made in the body) and
    releases them when it ends, normally or with an exception: nothing is freed twice, nothing is left."""
    import tracemalloc

    monkeypatch.setenv("AOT_NUM_THREADS", threads)
    for n in (0, 5, 7):
        out, want = np.ones(n), np.ones(n)
        allocates_in_prange(n, out)
        allocates_in_prange.py_func(n, want)
        np.testing.assert_array_equal(out, want)
    with pytest.raises(ValueError, match="seven"):
        allocates_in_prange(12, np.zeros(12))
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(200):
            with pytest.raises(ValueError):
                allocates_in_prange(40, np.zeros(40))
            allocates_in_prange(6, np.zeros(6))
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, f"{grown} bytes still held after 400 parallel calls"
