"""Parallel loops on N threads against the serial loop, with aot and (when given) Numba, side by side.

    python3 tests/bench/parallel_bench.py                                   # aot: serial, parallel
    python3 tests/bench/parallel_bench.py --numba-python /path/to/python    # + Numba njit / parallel=True
    python3 tests/bench/parallel_bench.py --threads 2 --repeat 7 --json

Each figure is the best of ``--repeat`` timed calls (after one warm-up call that compiles), in ms; the
speedup is serial / parallel for the same compiler. aot's threads come from ``AOT_NUM_THREADS``, Numba's
from ``NUMBA_NUM_THREADS`` (both set to ``--threads``). Numba runs in the interpreter given, which needs
only numba and numpy: this file is imported there too and compiles ``parallel_kernels`` with ``njit``.
Every parallel result is checked against the serial one (equal arrays; sums within 1e-9 relative). A
calibration line says how free the cores were: how much longer ``--threads`` busy processes take than one.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parents[1])]  # (the kernels; this checkout's aot)

import parallel_kernels as pk  # noqa: E402

SIZES = {"gauss_sum": 20_000_000, "stencil": 3000, "small_sum": 10_000, "tiny": 64}


def inputs(name: str, small: bool = False):
    rng = np.random.default_rng(7)
    if name in ("gauss_sum", "small_sum"):
        return (rng.standard_normal(min(10_000, SIZES[name]) if small else SIZES[name]),)
    if name == "tiny":
        return (np.zeros(SIZES[name]),)
    n = 50 if small else SIZES[name]
    return rng.standard_normal((n, n)), np.zeros((n, n))


def best(fn, args, repeat: int) -> tuple[float, object]:
    result = fn(*args)  # (compiles)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn(*args)
        times.append(time.perf_counter() - start)
    if isinstance(args[-1], np.ndarray) and result is None:
        result = args[-1].copy()
    return min(times) * 1e3, result


def compiled(compiler: str):
    """{kernel: (serial, parallel)} compiled by ``compiler`` ("aot" or "numba")."""
    out = {}
    for name in pk.KERNELS:
        serial, parallel = getattr(pk, name + "_serial"), getattr(pk, name + "_parallel")
        if compiler == "aot":
            import aot

            out[name] = (aot.jit(boundscheck=False)(serial), aot.jit(parallel=True, boundscheck=False)(parallel))
        else:
            import numba

            out[name] = (numba.njit(serial), numba.njit(parallel=True)(parallel))
    return out


def measure(compiler: str, repeat: int) -> dict:
    figures = {}
    for name, (serial, parallel) in compiled(compiler).items():
        args = inputs(name)
        t_serial, r_serial = best(serial, args, repeat)
        t_parallel, r_parallel = best(parallel, inputs(name), repeat)
        if isinstance(r_serial, np.ndarray):
            assert np.array_equal(r_serial, r_parallel), name
        else:
            assert abs(r_serial - r_parallel) <= 1e-9 * abs(r_serial), (name, r_serial, r_parallel)
        figures[name] = {"serial_ms": round(t_serial, 4), "parallel_ms": round(t_parallel, 4)}
    return figures


def _spin(n: int) -> None:
    x = 0
    for i in range(n):
        x += i


def free_cores_ratio(threads: int) -> float:
    """How much longer ``threads`` busy processes take than one (1.0: that many cores are free for us)."""
    import multiprocessing

    start = time.perf_counter()
    _spin(3_000_000)
    one = time.perf_counter() - start
    workers = [multiprocessing.Process(target=_spin, args=(3_000_000,)) for _ in range(threads)]
    start = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return (time.perf_counter() - start) / one


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--numba-python", default=None)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--only", choices=("aot", "numba"), default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    os.environ["AOT_NUM_THREADS"] = os.environ["NUMBA_NUM_THREADS"] = str(args.threads)
    if args.only:  # (a child: one compiler, JSON out)
        print(json.dumps(measure(args.only, args.repeat)))
        return
    results = {"aot": measure("aot", args.repeat)}
    if args.numba_python:
        cmd = [args.numba_python, __file__, "--only", "numba", "--threads", str(args.threads)]
        child = subprocess.run(cmd + ["--repeat", str(args.repeat)], capture_output=True, text=True, check=True)
        results["numba"] = json.loads(child.stdout.strip().splitlines()[-1])
    if args.json:
        print(json.dumps(results))
        return
    load, ratio = os.getloadavg()[0], free_cores_ratio(args.threads)
    print(f"{args.threads} threads, best of {args.repeat}, load average {load:.2f}, {os.cpu_count()} CPUs")
    print(f"(calibration: {args.threads} busy Python processes take {ratio:.2f}x the time of one; 1.00 = free cores)")
    print(f"{'kernel':<12}{'compiler':<10}{'serial ms':>12}{'parallel ms':>14}{'speedup':>10}")
    for name in pk.KERNELS:
        for compiler, figures in results.items():
            f = figures[name]
            speedup = f["serial_ms"] / f["parallel_ms"]
            print(f"{name:<12}{compiler:<10}{f['serial_ms']:>12.4f}{f['parallel_ms']:>14.4f}{speedup:>9.2f}x")


if __name__ == "__main__":
    main()
