"""Benchmark helpers: implementations side by side, and a per-element summary.

    python3 -m pytest tests/bench --benchmark-enable
    -> pytest-benchmark's tables (one group per kernel: aot, python, numba)
    -> "per-element time" table: mean time / elements per call, and each column's ratio to aot

The plain Python column often runs a smaller input than aot and Numba (a full-size run would take
seconds per round); dividing by the number of elements processed keeps the columns comparable.
With ``--benchmark-disable`` (the default in pyproject) every benchmark runs its function once, as a
plain test, and no summary is printed.
"""

from __future__ import annotations

import functools
import os

import pytest

_RESULTS = pytest.StashKey[list]()
_FIGURES = pytest.StashKey[list]()


def full_size(config) -> bool:
    """Whether the build/import benchmarks run at full size (1,000 methods over 20 modules):
    with ``--benchmark-enable`` or ``AOT_BENCH_FULL=1``; otherwise they run small, as quick tests."""
    return bool(config.getoption("benchmark_enable", False)) or os.environ.get("AOT_BENCH_FULL", "") not in ("", "0")


@pytest.fixture(scope="session")
def bench_full(request) -> bool:
    """True at full size (see ``full_size``)."""
    return full_size(request.config)


@pytest.fixture
def figures(request):
    """``figures(name, seconds, goal=None, note="")``: one line of the "figures" table printed after the run
    (``goal`` is an upper bound in seconds; the table says whether it was met)."""

    def record(name: str, seconds: float, goal: float | None = None, note: str = "") -> None:
        request.config.stash.setdefault(_FIGURES, []).append((name, seconds, goal, note))

    return record


@functools.cache
def _numba_compiled(py_func):
    numba = pytest.importorskip("numba", reason="Numba is not installed: no Numba column")
    return numba.njit(py_func)


def _implementation(method, impl: str):
    if impl == "aot":
        return method
    if impl == "python":
        return method.py_func
    if impl == "numba":
        pytest.importorskip("numba", reason="Numba is not installed: no Numba column")
        return _numba_compiled(method.py_func)
    raise ValueError(impl)


@pytest.fixture
def column():
    """``column(method, impl)``: the callable for one column: the aot method (``"aot"``), its
    ``.py_func`` (``"python"``), or Numba's njit of ``.py_func`` (``"numba"``).

    Only the numba column imports numba, and it skips (with a reason) when Numba is missing.
    """
    return _implementation


@pytest.fixture
def per_element(benchmark, request):
    """``per_element(elements, fn, *args)``: benchmark ``fn(*args)`` and record time per element."""

    def run(elements: int, fn, *args):
        result = benchmark(fn, *args)
        benchmark.extra_info["elements"] = elements
        stats = getattr(benchmark, "stats", None)
        if not benchmark.disabled and stats:
            mean = stats.stats.mean
            benchmark.extra_info["ns_per_element"] = mean / elements * 1e9
            params = getattr(request.node, "callspec", None)
            impl = params.params.get("impl", "?") if params else "?"
            request.config.stash.setdefault(_RESULTS, []).append(
                (benchmark.group or "", impl, request.node.name, elements, mean)
            )
        return result

    return run


def _fmt_time(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if seconds >= scale or unit == "ns":
            return f"{seconds / scale:8.2f} {unit}"
    raise AssertionError


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    figures = config.stash.get(_FIGURES, [])
    if figures:
        tr = terminalreporter
        tr.write_sep("-", "figures (build and import benchmarks)")
        for name, seconds, goal, note in figures:
            verdict = (
                ""
                if goal is None
                else f"  goal <= {_fmt_time(goal).strip():>10}  " + ("met" if seconds <= goal else "MISSED")
            )
            tr.write_line(f"    {name:<58} {_fmt_time(seconds)}{verdict}  {note}".rstrip())
    rows = config.stash.get(_RESULTS, [])
    if not rows:
        return
    tr = terminalreporter
    tr.write_sep("-", "per-element time (mean time / elements; ratio to aot in the same group)")
    groups: dict[str, list] = {}
    for row in rows:
        groups.setdefault(row[0], []).append(row)
    for group, items in groups.items():
        tr.write_line(f"{group}")
        aot = [m / e for _, impl, _, e, m in items if impl == "aot"]
        for _, _impl, name, elements, mean in sorted(items, key=lambda r: r[4] / r[3]):
            per = mean / elements
            ratio = f"{per / aot[0]:9.3g}x aot" if aot else ""
            tr.write_line(f"    {name:<44} {elements:>12,d} el  {_fmt_time(per)}/el  {ratio}")
