"""What a valid image costs at import: a generated package imported (and each method called once) in fresh
interpreters, against the same modules as plain Python, and against Numba loading them from its cache.

    python3 -m pytest tests/bench/test_import_bench.py --benchmark-enable -s   # 1,000 methods, 20 modules
    python3 -m pytest tests/bench/test_import_bench.py                          # quick: 40 methods, 4 modules
    -> the "figures" table: medians over fresh interpreters (see tests/bench/importprobe.py)

Issue 4's goals, asserted at full size: import + one call of every method costs at most 20 us per method
more than plain Python, and importing while calling nothing at most 2 ms more. The plain-Python baseline
is the same files with ``aot.jit`` replaced by the identity (aot, numpy and bytecode caches loaded in
both, outside the timing); Numba's is ``numba.njit(cache=True)`` after a run that filled its cache.

Each figure is given twice: from the fastest of the fresh interpreters on each side (what the code costs:
interference from the rest of the machine only ever adds time, which is why ``timeit`` reports minima)
and from the medians. The goals are checked on the former: on a shared two-core machine the medians of
the same code were seen to move by a factor of four between runs.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

import genpkg
from buildsupport import aot_build, base_env

PER_METHOD_GOAL = 20e-6
IMPORT_GOAL = 2e-3
PROBE = Path(__file__).resolve().parent / "importprobe.py"


@pytest.fixture(scope="module")
def built(tmp_path_factory, bench_full):
    """A generated package with a valid image, and the JSON file listing one call per method."""
    methods, modules = (1000, 20) if bench_full else (40, 4)
    root = tmp_path_factory.mktemp("importbench")
    gen = genpkg.generate(root / "gen", methods=methods, modules=modules)
    done = aot_build(gen.root, "--jobs", "2")
    assert done.rc == 0, done.stderr[-3000:]
    calls = root / "calls.json"
    calls.write_text(json.dumps({"package": gen.package, "calls": gen.calls}))
    return gen, calls, root


def probe(mode: str, gen, calls: Path, root: Path, *extra: str) -> dict:
    # One BLAS thread: NumPy's (OpenBLAS) pool otherwise spins after import, on every side alike, and on a
    # small machine takes the core the measured work runs on (the figures then move by half).
    env = base_env({"NUMBA_CACHE_DIR": str(root / "numba-cache"), "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"})
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # both sides import from warm bytecode caches
    proc = subprocess.run(
        [sys.executable, str(PROBE), mode, str(gen.root), str(calls), *extra],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        cwd=root,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _fewest_faults(runs: list[dict]):
    """The fewest minor page faults of import + calls over ``runs`` (None where not counted)."""
    counts = [r["faults"]["import"] + r["faults"]["calls"] for r in runs if r.get("faults")]
    return min(counts) if counts else None


def medians(runs: list[dict]) -> dict:
    return {k: statistics.median(r[k] for r in runs) for k in ("import", "calls")} | {
        "total": statistics.median(r["import"] + r["calls"] for r in runs)
    }


def minima(runs: list[dict]) -> dict:
    return {k: min(r[k] for r in runs) for k in ("import", "calls")} | {
        "total": min(r["import"] + r["calls"] for r in runs)
    }


def test_import_and_first_calls_against_plain_python_and_numba(built, figures, bench_full):
    gen, calls, root = built
    full = bench_full
    n = len(gen.methods)
    rounds = 15 if full else 3
    probe("plain", gen, calls, root)  # writes the bytecode caches
    aot_runs, plain_runs, idle_aot, idle_plain = [], [], [], []
    for _ in range(rounds):  # interleaved, so drifting load hits both alike
        aot_runs.append(probe("aot", gen, calls, root))
        plain_runs.append(probe("plain", gen, calls, root))
        idle_aot.append(probe("aot", gen, calls, root, "--no-calls"))
        idle_plain.append(probe("plain", gen, calls, root, "--no-calls"))
    for run in aot_runs:
        assert run["n"] == n and run["stats"]["loaded"] == n, run["stats"]
        assert run["stats"]["inferred"] == 0 and run["stats"]["cured"] == 0 and run["llvmlite"] is False
    for run in idle_aot:
        assert run["stats"]["loaded"] == 0 and run["llvmlite"] is False

    a, p = minima(aot_runs), minima(plain_runs)
    per_method = (a["total"] - p["total"]) / n
    import_only = minima(idle_aot)["import"] - minima(idle_plain)["import"]
    per_method_median = (medians(aot_runs)["total"] - medians(plain_runs)["total"]) / n
    import_only_median = medians(idle_aot)["import"] - medians(idle_plain)["import"]
    label = f"{n} methods"
    figures(f"plain Python: import + one call each ({label})", p["total"])
    figures(
        f"aot, valid image: import + one call each ({label})",
        a["total"],
        note=f"import {a['import'] * 1e3:.1f} ms + calls {a['calls'] * 1e3:.1f} ms",
    )
    faults = _fewest_faults(aot_runs), _fewest_faults(plain_runs)
    figures(
        "aot: cost per method over plain Python",
        per_method,
        PER_METHOD_GOAL if full else None,
        note=f"(medians: {per_method_median * 1e6:.1f} us"
        + (f"; page faults: {(faults[0] - faults[1]) / n:.2f} more per method)" if None not in faults else ")"),
    )
    figures(
        f"aot: import only, over plain Python ({label})",
        import_only,
        IMPORT_GOAL if full else None,
        note=f"(plain {minima(idle_plain)['import'] * 1e3:.1f} ms; medians: {import_only_median * 1e3:.2f} ms)",
    )

    numba_per_method = None
    if full or os.environ.get("AOT_BENCH_NUMBA", "") not in ("", "0"):
        pytest.importorskip("numba", reason="Numba is not installed: no Numba figure")
        t0 = time.perf_counter()
        probe("numba", gen, calls, root)  # compiles everything and fills the cache
        fill = time.perf_counter() - t0
        numba_runs = [probe("numba", gen, calls, root) for _ in range(max(3, rounds // 2))]
        nb = minima(numba_runs)
        numba_per_method = (nb["total"] - p["total"]) / n
        figures(
            f"Numba cache=True, warm cache: import + one call each ({label})",
            nb["total"],
            note=f"import {nb['import'] * 1e3:.1f} ms + calls {nb['calls'] * 1e3:.1f} ms",
        )
        figures("Numba: cost per method over plain Python", numba_per_method)
        figures(f"Numba: first run, filling the cache ({label})", fill)

    if full:
        missed = [f"{per_method * 1e6:.1f} us per method > {PER_METHOD_GOAL * 1e6:.0f} us"] * (
            per_method > PER_METHOD_GOAL
        )
        missed += [f"import {import_only * 1e3:.2f} ms more > {IMPORT_GOAL * 1e3:.0f} ms"] * (import_only > IMPORT_GOAL)
        assert not missed, "goals missed: " + "; ".join(missed)
