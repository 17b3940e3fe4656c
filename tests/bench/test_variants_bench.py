"""A vectorisable kernel in the x86-64-v2 and x86-64-v3 libraries of one image, side by side (issue 18
item 3): the same build, bound per child process through ``AOT_CPU_VARIANT``.

    python3 -m pytest tests/bench/test_variants_bench.py -s     # -> the "figures" table: seconds per call
                                                               #    of each variant, and v2 / v3

Each child calls the kernel on 4,096 doubles (in cache: the loop is compute-bound) and takes the best of
several rounds. The results of the two variants must be the same bits (no contraction into FMAs).
"""

from __future__ import annotations

import json
import platform

import pytest

from buildsupport import aot_build, pyproject, run_python, write_project

SOURCE = """\
    import aot

    @aot.jit
    def horner(x: aot.f64[::1], out: aot.f64[::1]) -> None:
        for i in range(x.shape[0]):
            v = x[i]
            out[i] = ((((0.25 * v - 1.5) * v + 2.0) * v - 0.75) * v + 3.0) * v - 1.0
    """

PROBE = """
import time
import numpy as np
import vk
x = np.linspace(-2.0, 2.0, 4096)
out = np.empty_like(x)
vk.horner(x, out)
best = float("inf")
for _ in range(30):
    t0 = time.perf_counter()
    for _ in range(200):
        vk.horner(x, out)
    best = min(best, (time.perf_counter() - t0) / 200)
want = np.empty_like(x)
vk.horner.py_func(x, want)
report(seconds=best, same=bool((out == want).all()), checksum=float(out.sum()))
"""


def test_v2_and_v3_side_by_side(tmp_path, figures):
    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("the variants offered are x86-64 levels")
    variants = ["x86-64-v2", "x86-64-v3"]
    project = write_project(
        tmp_path / "vk",
        {
            "pyproject.toml": pyproject("vk") + f"\n[tool.aot.cpu]\nvariants = {json.dumps(variants)}\n",
            "vk/__init__.py": SOURCE,
        },
    )
    done = aot_build(project)
    assert done.rc == 0, done.stderr
    runs = {}
    for name in variants:
        run = run_python(project, PROBE, env={"AOT_CPU_VARIANT": name})
        if run["stats"]["variant"] != name:
            pytest.skip(f"this CPU does not run {name}")
        assert run["same"] and run["stats"]["loaded"] == 1
        runs[name] = run
    assert runs["x86-64-v2"]["checksum"] == runs["x86-64-v3"]["checksum"]
    v2, v3 = runs["x86-64-v2"]["seconds"], runs["x86-64-v3"]["seconds"]
    figures("horner, 4,096 f64, x86-64-v2 library (per call)", v2)
    figures("horner, 4,096 f64, x86-64-v3 library (per call)", v3, note=f"v2 / v3 = {v2 / v3:.2f}")
