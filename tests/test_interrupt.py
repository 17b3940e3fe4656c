"""Ctrl-C reaches compiled loops (``aot.codegen.interrupt``): a signal Python handles stops a long compiled loop
within a fraction of a second, in a serial loop, a ``nogil`` function and a ``prange`` loop; the function
unwinds as from any error and is callable again with right results; the handler Python or the user installed
still runs (a handler that does not raise lets the loop finish).

Each case runs in a child interpreter that another process signals (``kill``), as a terminal does: a thread of
the child could not, since the compiled loop holds the GIL.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import aot
from aot.analysis.interrupts import poll_edges
from aot.ir import parse_function
from buildsupport import base_env, build_two_variants, run_python

_SPIN = """@aot.jit
def spin(n: int) -> int:
    s = 0
    i = 0
    while i != n:  # (no trip count: polled at each iteration)
        s += i % 7
        i += 1
    return s
"""

_SCRIPT = textwrap.dedent(
    """
    import os, signal, subprocess, sys, time
    import aot

    {SPIN}

    @aot.jit
    def nested(n: int, m: int) -> float:
        s = 0.0
        for i in range(n):
            for j in range(m):
                s += (i * j) % 3
        return s

    @aot.jit(nogil=True)
    def spin_nogil(n: int) -> int:
        s = 0
        i = 0
        while i != n:  # (no trip count: polled at each iteration)
            s += i % 7
            i += 1
        return s

    @aot.jit(parallel=True)
    def rows(n: int, m: int) -> float:
        s = 0.0
        for i in aot.prange(n):
            for j in range(m):
                s += (i * j) % 3
        return s

    mode, sig, handler = sys.argv[1], getattr(signal, sys.argv[2]), sys.argv[3]
    f, big, small = {
        "serial": (spin, (10**13,), (1000,)),
        "nested": (nested, (10**8, 10**6), (30, 20)),
        "nogil": (spin_nogil, (10**13,), (1000,)),
        "prange": (rows, (10**8, 10**6), (30, 20)),
    }[mode]
    seen = []
    if handler == "raising":  # (a user's handler, installed before the first call)
        class Stop(Exception):
            pass
        def on_signal(signum, frame):
            seen.append(signum)
            raise Stop
        signal.signal(sig, on_signal)
        stops = (Stop,)
    elif handler == "quiet":  # (one that does not raise: the loop goes on)
        signal.signal(sig, lambda signum, frame: seen.append(signum))
        stops = ()
        big = {"serial": (3 * 10**8,), "nogil": (3 * 10**8,)}.get(mode, (8000, 10**5))  # (about a second)
    else:
        stops = (KeyboardInterrupt,)
    assert f(*small) == f.py_func(*small)  # (compiled, the handler installed)
    start = time.perf_counter()
    subprocess.Popen(["sh", "-c", f"sleep 0.3; kill -{int(sig)} {os.getpid()}"])
    try:
        result = f(*big)
        outcome = "returned"
    except stops as e:
        outcome = type(e).__name__
    late = time.perf_counter() - start - 0.3
    again = f(*small) == f.py_func(*small)
    print(outcome, round(late, 3), seen == [sig] if handler != "python" else True, again)
    """
).replace("{SPIN}", _SPIN)


def _run(tmp_path, mode: str, sig: str = "SIGINT", handler: str = "python") -> list[str]:
    script = tmp_path / "interrupted.py"
    script.write_text(_SCRIPT)
    env = base_env({"AOT_NUM_THREADS": "2"})
    done = subprocess.run(
        [sys.executable, str(script), mode, sig, handler], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.split()


@pytest.mark.parametrize("mode", ["serial", "nested", "nogil", "prange"])
def test_ctrl_c_stops_a_compiled_loop_within_half_a_second(tmp_path, mode):
    outcome, late, _, again = _run(tmp_path, mode)
    assert outcome == "KeyboardInterrupt" and float(late) < 0.5, (outcome, late)
    assert again == "True"


@pytest.mark.parametrize("mode", ["serial", "prange"])
def test_the_users_handler_runs_for_any_signal_python_handles(tmp_path, mode):
    outcome, late, seen, again = _run(tmp_path, mode, "SIGTERM", "raising")
    assert outcome == "Stop" and float(late) < 0.5 and seen == "True" and again == "True", (outcome, late)


@pytest.mark.parametrize("mode", ["serial", "nested"])
def test_a_handler_that_does_not_raise_lets_the_loop_finish(tmp_path, mode):
    outcome, _, seen, again = _run(tmp_path, mode, "SIGINT", "quiet")
    assert (outcome, seen, again) == ("returned", "True", "True")


def test_a_prebuilt_loop_is_interrupted_in_every_cpu_variant(tmp_path):
    source = """
        import aot

        @aot.jit(signatures=["i64(i64)"])
        def spin(n):
            s = 0
            i = 0
            while i != n:  # (no trip count: polled at each iteration)
                s += i % 7
                i += 1
            return s
    """
    project = build_two_variants(tmp_path, "ik", source)
    run = run_python(
        project,
        """
        import os, subprocess, time, ik
        assert ik.spin(100) == ik.spin.py_func(100)
        start = time.perf_counter()
        subprocess.Popen(["sh", "-c", f"sleep 0.3; kill -2 {os.getpid()}"])
        try:
            ik.spin(10**13)
            outcome = "returned"
        except KeyboardInterrupt:
            outcome = "KeyboardInterrupt"
        report(outcome=outcome, late=time.perf_counter() - start - 0.3, again=ik.spin(100))
        """,
        env={"AOT_STRICT": "1"},
    )
    assert run["outcome"] == "KeyboardInterrupt" and run["late"] < 0.5 and run["again"] == ik_spin(100)
    assert run["stats"]["inferred"] == 0


def ik_spin(n: int) -> int:
    return sum(i % 7 for i in range(n))


_THREAD = textwrap.dedent(
    """
    import os, signal, subprocess, threading
    import aot

    {SPIN}

    signal.signal(signal.SIGINT, lambda signum, frame: None)  # (the main thread goes on)
    spin(10)
    out = []
    worker = threading.Thread(target=lambda: out.append(spin(7 * 4 * 10**7)))
    worker.start()
    subprocess.Popen(["sh", "-c", f"sleep 0.2; kill -2 {os.getpid()}"]).wait()
    worker.join()
    print(out == [21 * 4 * 10**7])  # (0 + 1 + … + 6 for each 7 numbers)
    """
).replace("{SPIN}", _SPIN)


def test_a_loop_on_another_thread_runs_to_its_end_through_a_signal(tmp_path):
    script = tmp_path / "thread.py"
    script.write_text(_THREAD)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=base_env())
    assert done.returncode == 0 and done.stdout.strip() == "True", done.stdout + done.stderr[-3000:]


# ------------------------------------------------------------------------------------------ where loops look


@aot.jit
def counted_loops(a: aot.i64[:], n: int) -> int:
    s = 0
    for i in range(n):  # (innermost and counted: not polled)
        s += a[i % len(a)]
    i = 0
    while i < n:  # (counted too: i only grows by a constant, n is not changed)
        s += a[i % len(a)]
        i += 2
    return s


@aot.jit
def uncounted_loops(a: aot.i64[:], n: int) -> int:
    s = 0
    i = 0
    while i != n:  # (may never end: polled)
        s += a[i % len(a)]
        i += 1
    j = 0
    while j < n:  # (n changes in the loop: polled)
        j += 1
        n -= 1
    while True:  # (polled)
        s += 1
        if s > 100:
            break
    for _ in range(3):  # (an outer loop: polled; its inner counted loop is not)
        for m in range(n):
            s += m
    return s


@pytest.mark.parametrize(("method", "polls"), [("counted_loops", 0), ("uncounted_loops", 4)])
def test_which_loops_look_for_signals(method, polls):
    f = globals()[method]
    a = np.arange(5)
    assert f(a, 20) == f.py_func(a, 20)
    assert len(poll_edges(parse_function(f.inspect_ir("i64[:]", "i64")))) == polls
