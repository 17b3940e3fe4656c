"""Lists in images: entries that make, change and return lists (of floats, tuples, arrays and lists, ``[]``
typed where it is stored) are built ahead of time and loaded with nothing inferred (``AOT_STRICT=1``), their
results equal to plain Python's."""

from __future__ import annotations

from pathlib import Path

import pytest

from buildsupport import aot_build, image_contents, pyproject, run_python, write_project

MOD = """
import aot
import numpy as np


def halves(n):
    out = []
    for i in range(n):
        out.append(i * 0.5)
    return out


@aot.jit(signatures=["list[f64](i64)"])
def grown(n):
    xs = halves(n)
    xs.append(-1.0)
    if len(xs) > 2:
        xs.pop(1)
    return xs


@aot.jit(signatures=["(list[(i64, f64)], list[list[f64]])(f64[:])"])
def shapes(a):
    pairs = [(i, x) for i, x in enumerate(a) if x == x]
    nested = [[x, x * 2.0] for x in a]
    nested.append([])
    return pairs, nested


@aot.jit(signatures=["f64[:, ::1](i64)"])
def matrix(n):
    rows = []
    for i in range(n):
        rows.append(np.full(3, i * 1.5))
    return np.array(rows)


@aot.jit(signatures=["f64(f64[:])"])
def sum_of_squares(a):
    return sum((x * x for x in a), 0.0)
"""

CALLS = """
import numpy as np
from lpkg import mod

a = np.array([1.0, float("nan"), -2.5, 4.0])


def norm(x):  # (NumPy scalars as Python's, NaN as a string: == compares them)
    if isinstance(x, (list, tuple)):
        return type(x)(norm(v) for v in x)
    if isinstance(x, np.generic):
        x = x.item()
    return "nan" if isinstance(x, float) and x != x else (type(x).__name__, x)


got = dict(
    grown=[mod.grown(n) for n in (0, 1, 5)],
    shapes=norm(mod.shapes(a)),
    matrix=mod.matrix(4).tolist(),
    sum_of_squares=mod.sum_of_squares(np.arange(5.0)),
)
want = dict(
    grown=[mod.grown.py_func(n) for n in (0, 1, 5)],
    shapes=norm(mod.shapes.py_func(a)),
    matrix=np.array(mod.matrix.py_func(4)).tolist(),
    sum_of_squares=mod.sum_of_squares.py_func(np.arange(5.0)),
)
report(same=got == want, got=got, want=want)
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    project = write_project(
        tmp_path_factory.mktemp("lists") / "lists",
        {"pyproject.toml": pyproject("lpkg"), "lpkg/__init__.py": "", "lpkg/mod.py": MOD},
    )
    done = aot_build(project, "--json")
    assert done.rc == 0, done.stderr
    return project


def test_entries_with_lists_are_built(built):
    keys = set(image_contents(built, "lpkg").code)
    assert ("lpkg.mod:halves", ("i64",)) in keys and ("lpkg.mod:shapes", ("f64[:]",)) in keys


def test_lists_load_with_nothing_inferred_in_strict_mode(built):
    run = run_python(built, CALLS, env={"AOT_STRICT": "1"})
    assert run["same"], (run["got"], run["want"])
    assert run["stats"]["inferred"] == 0 and not run["llvmlite"]
