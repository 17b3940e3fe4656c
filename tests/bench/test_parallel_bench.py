"""The parallel benchmark's script runs (small sizes, one round): its kernels compile with aot in both forms
and the parallel results equal the serial ones (``parallel_bench.measure`` checks that).

    python3 tests/bench/parallel_bench.py --numba-python PATH     # the figures (see its docstring)
"""

from __future__ import annotations

import parallel_bench


def test_the_benchmark_runs_small(monkeypatch):
    monkeypatch.setitem(parallel_bench.SIZES, "gauss_sum", 10_000)
    monkeypatch.setitem(parallel_bench.SIZES, "stencil", 40)
    monkeypatch.setenv("AOT_NUM_THREADS", "2")
    figures = parallel_bench.measure("aot", repeat=1)
    assert set(figures) == {"gauss_sum", "stencil", "small_sum", "tiny"}
    assert all(f["serial_ms"] >= 0 and f["parallel_ms"] >= 0 for f in figures.values())
