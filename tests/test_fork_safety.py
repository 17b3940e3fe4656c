"""A ``fork()`` at any moment leaves a child that works (``aot.forksafe``): forked while another thread is in a
first call, inside LLVM in a build, or running a ``prange`` loop, the child compiles, loads and runs parallel
loops, and exits. Before, a fork during a first call left the child waiting forever on the lock the other
thread held.

Each scenario runs in a fresh interpreter (``_SCRIPT``): a thread starts the work and signals from inside it
(the step is slowed down so the fork surely lands in it), the main thread forks, the child does its part and
exits 0; the parent reports whether the child finished within the time limit (a hang is a failure, never a
stuck suite). The first scenario hung before ``aot.forksafe``; the other two guard what holds today (LLVM's own
mutexes held by another thread at the fork are a race no test provokes reliably: the fork now waits for them).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from buildsupport import FIXTURES, base_env, copy_project

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

_SCRIPT = textwrap.dedent(
    """
    import os, sys, threading, time, warnings
    import numpy as np
    import aot

    warnings.simplefilter("ignore", DeprecationWarning)  # (Python 3.12+: forking a process with threads)
    mode = sys.argv[1]
    inside = threading.Event()


    @aot.jit
    def poly(x: float) -> float:
        return 3.0 * x * x + 2.0 * x + 1.0


    @aot.jit
    def fresh(n: int) -> int:  # (first called in the child)
        s = 0
        for i in range(n):
            s += i * i
        return s


    @aot.jit(parallel=True)
    def total(a: aot.f64[:]) -> float:
        s = 0.0
        for i in aot.prange(len(a)):
            s += a[i] * 0.5
        return s


    def slowed(module, name):
        '''``module.name`` made to signal ``inside`` and dwell there, so the fork lands in it.'''
        original = getattr(module, name)

        def wrapper(*args, **kwargs):
            inside.set()
            time.sleep(0.5)
            return original(*args, **kwargs)

        setattr(module, name, wrapper)


    if mode == "first-call":
        from aot.codegen import engine
        slowed(engine.JitEngine, "add")  # (inside the first call, under its lock, about to run LLVM)
        work = lambda: poly(2.0)
    elif mode == "build":
        from aot.builder import driver
        from aot.codegen import module
        slowed(module, "optimize")  # (inside LLVM, optimising a module of an object file)
        work = lambda: driver.build_project(sys.argv[2])
    elif mode == "prange":
        a = np.ones(40_000_000)
        total(a[:10])  # (compiled, the pool's workers started)
        def work():
            threading.Timer(0.05, inside.set).start()
            for _ in range(5):
                total(a)
    worker = threading.Thread(target=work)
    worker.start()
    assert inside.wait(120)
    pid = os.fork()
    if pid == 0:
        ok = poly(2.0) == 17.0 and fresh(10) == 285 and total(np.ones(1000)) == 500.0
        os._exit(0 if ok else 3)
    deadline = time.monotonic() + 120
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            print("child hung")
            sys.exit(1)
        time.sleep(0.01)
    worker.join()
    print("child", os.waitstatus_to_exitcode(status))
    """
)


@pytest.mark.parametrize("mode", ["first-call", "build", "prange"])
def test_a_child_forked_in_the_middle_of_work_completes(tmp_path, mode):
    script = tmp_path / "forked.py"
    script.write_text(_SCRIPT)
    args = [str(copy_project(FIXTURES / "numkit", tmp_path / "numkit"))] if mode == "build" else []
    env = base_env({"AOT_NUM_THREADS": "2"})
    done = subprocess.run(
        [sys.executable, str(script), mode, *args], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path
    )
    assert done.returncode == 0 and done.stdout.strip().endswith("child 0"), done.stdout + done.stderr[-3000:]


def test_a_child_forgets_the_cuda_device_of_its_parent(monkeypatch):
    """A CUDA context does not survive a fork: where the parent had a device, the child has none, and says why
    (no GPU is needed: the device is a stand-in)."""
    from aot.runtime import cuda

    monkeypatch.setattr(cuda, "_DEVICE", [object()])
    monkeypatch.setattr(cuda, "_FORKED", [])
    cuda._after_fork_in_child()
    assert cuda.device() is None
    assert "forked after its parent initialised CUDA" in (cuda.no_device_reason() or "")


def test_a_child_of_a_process_without_a_device_may_still_look_for_one(monkeypatch):
    from aot.runtime import cuda

    monkeypatch.setattr(cuda, "_DEVICE", [None])
    monkeypatch.setattr(cuda, "_FORKED", [])
    cuda._after_fork_in_child()
    assert cuda._DEVICE == [] and cuda._FORKED == []
