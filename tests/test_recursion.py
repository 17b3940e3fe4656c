"""Recursion in compiled code ends in ``RecursionError``, never in a crash (``aot.codegen.recursion``).

Functions on a cycle of calls check their depth against ``sys.getrecursionlimit()`` and the stack against
the thread's: whichever binds first raises Python's ``RecursionError``, which unwinds (releasing what each frame
holds), and the function is callable again with right results. Functions that cannot recurse have no guard.
Runs that could die of a signal run in a child process: a crash is a failed test, not a lost suite.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import aot
from buildsupport import base_env, build_two_variants, run_python


@aot.jit
def depth(n: int) -> int:
    if n <= 0:
        return 0
    return depth(n - 1) + 1


@aot.jit
def is_even(n: int) -> bool:
    if n == 0:
        return True
    return is_odd(n - 1)


@aot.jit
def is_odd(n: int) -> bool:
    if n == 0:
        return False
    return is_even(n - 1)


@aot.jit
def total(a: aot.f64[:]) -> float:  # (holds arrays: its error returns through every frame, releasing them)
    if len(a) == 0:
        return 0.0
    return a[0] + total(a[1:])


@aot.jit(nogil=True)
def depth_nogil(n: int) -> int:
    if n <= 0:
        return 0
    return depth_nogil(n - 1) + 1


@aot.jit(parallel=True)
def depths(ns: aot.i64[:], out: aot.i64[:]) -> None:
    for i in aot.prange(len(ns)):
        out[i] = depth(ns[i])


@aot.jit
def square(x: float) -> float:
    return x * x


@aot.jit
def calls_in_a_loop(k: int) -> int:
    s = 0
    for i in range(k):
        s += depth(i % 3)  # (a call LLVM cannot inline: its result slot must not take new stack each time)
    return s


@pytest.fixture
def limit():
    """Sets ``sys.getrecursionlimit()`` for one test."""
    before = sys.getrecursionlimit()
    yield sys.setrecursionlimit
    sys.setrecursionlimit(before)


def test_recursion_past_the_limit_raises_recursion_error_and_the_function_still_works():
    assert depth(500) == depth.py_func(500) == 500
    with pytest.raises(RecursionError, match="maximum recursion depth exceeded"):
        depth(200_000)
    with pytest.raises(RecursionError):
        depth.py_func(200_000)
    assert depth(900) == 900


def test_the_limit_follows_sys_getrecursionlimit(limit):
    limit(3000)
    assert depth(2500) == 2500
    with pytest.raises(RecursionError):
        depth(3500)
    limit(1500)
    with pytest.raises(RecursionError):
        depth(2500)
    assert depth(1000) == 1000


def test_mutual_recursion_is_guarded():
    assert (is_even(10), is_odd(7), is_even(7)) == (True, True, False)
    with pytest.raises(RecursionError):
        is_even(100_000)
    assert is_even(100) is True


def test_recursion_holding_arrays_unwinds_and_releases_them():
    import tracemalloc

    a = np.arange(50.0)
    assert total(a) == total.py_func(a) == a.sum()
    big = np.ones(100_000)
    tracemalloc.start()
    try:
        for _ in range(3):
            with pytest.raises(RecursionError):
                total(big)
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(5):
            with pytest.raises(RecursionError):
                total(big)
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert after - before < 4096, after - before
    assert total(a) == a.sum()


def test_a_nogil_function_raises_recursion_error():
    with pytest.raises(RecursionError):
        depth_nogil(200_000)
    assert depth_nogil(100) == 100


def test_recursion_in_a_prange_body_raises_recursion_error():
    out = np.zeros(4, np.int64)
    depths(np.array([1, 2, 3, 4]), out)
    assert out.tolist() == [1, 2, 3, 4]
    with pytest.raises(RecursionError):
        depths(np.array([1, 2, 200_000, 4]), out)


def test_a_loop_of_calls_does_not_grow_the_stack():
    assert calls_in_a_loop(10) == calls_in_a_loop.py_func(10)
    assert calls_in_a_loop(3_000_000) == 3_000_000  # (crashed before: 16 bytes of stack per call)


def _guarded_bodies(method, *types) -> list[str]:
    """The methods whose ``.guarded`` body the (optimised) module of ``method`` defines, by name."""
    names = re.findall(r"define [^@]*@\"?aot_\w+?__(\w+)_[0-9a-f]{12}\.guarded", method.inspect_llvm(*types))
    return sorted(names)


def test_only_functions_on_a_cycle_are_guarded():
    square(1.0)
    assert _guarded_bodies(square, "f64") == []
    assert _guarded_bodies(calls_in_a_loop, "i64") == ["depth"]  # (its callee's, not the loop's own)
    assert _guarded_bodies(is_even, "i64") == ["is_even"]  # (is_odd's body is inlined into it)


_DEEP = textwrap.dedent(
    """
    import sys, threading
    import aot

    @aot.jit
    def depth(n: int) -> int:
        if n <= 0:
            return 0
        return depth(n - 1) + 1

    sys.setrecursionlimit(10**8)  # (the stack binds first)
    results = []

    def run():
        try:
            depth(10**8)
            results.append("returned")
        except RecursionError as e:
            results.append(str(e))
        results.append(depth(1000))

    run()
    threading.stack_size(1 << 20)  # (a thread with a smaller stack than the main one)
    t = threading.Thread(target=run)
    t.start()
    t.join()
    print(results)
    """
)


def test_the_threads_stack_binds_first_when_the_limit_is_high(tmp_path):
    script = tmp_path / "deep.py"
    script.write_text(_DEEP)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=base_env())
    assert done.returncode == 0, done.stderr[-3000:]
    stack = "maximum recursion depth exceeded (the thread's stack is used up)"
    assert done.stdout.strip() == repr([stack, 1000, stack, 1000])


def test_prebuilt_recursion_is_guarded_in_every_cpu_variant(tmp_path):
    source = """
        import aot

        @aot.jit(signatures=["i64(i64)"])
        def depth(n):
            if n <= 0:
                return 0
            return depth(n - 1) + 1
    """
    project = build_two_variants(tmp_path, "rk", source)
    run = run_python(
        project,
        """
        import sys, rk
        out = [rk.depth(500)]
        try:
            rk.depth(5000)
        except RecursionError as e:
            out.append(str(e))
        sys.setrecursionlimit(8000)
        out.append(rk.depth(5000))
        report(out=out)
        """,
        env={"AOT_STRICT": "1"},
    )
    assert run["out"] == [500, "maximum recursion depth exceeded", 5000]
    assert run["stats"]["inferred"] == 0
