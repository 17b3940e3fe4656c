"""Keyword calls, defaults and optionals in images: built ahead of time, loaded with nothing inferred
(``AOT_STRICT=1``), and validated over their edges like every other entry — a changed default value
invalidates exactly the callers that used it (its ``default`` edge), at load and in an incremental build.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from buildsupport import aot_build, image_contents, pyproject, run_python, write_project

MOD = """
import aot
import numpy as np


def affine(x, factor=2.0, *, offset=0.5):
    return x * factor + offset


@aot.jit(signatures=["f64(f64)"])
def uses_default(x):
    return affine(x)


@aot.jit(signatures=["f64(f64)"])
def passes_all(x):
    return affine(x, 3.0, offset=1.0)


@aot.jit(signatures=["f64(f64)"])
def uses_offset_only(x):
    return affine(x, factor=-1.0)


@aot.jit(signatures=["f64(f64, f64)", "f64(f64, none)"])
def tolerance(x, tol=None):
    if tol is None:
        tol = 1e-3
    return x * tol


@aot.jit(signatures=["f64(f64)"])
def smallest(x):
    best = None
    for i in range(5):
        v = (x - i) * (x - i)
        if best is None or v < best:
            best = v
    if best is None:
        return -1.0
    return best


@aot.jit(signatures=["i64?(f64[:], f64)"])
def find(a, x):
    for i in range(len(a)):
        if a[i] == x:
            return i
    return None


@aot.jit(signatures=["f64[::1]?(i64)"])
def evens(n):
    if n < 0:
        return None
    return np.arange(n) * 2.0


@aot.jit(signatures=["i64(f64[:], f64)"])
def found_or_minus_one(a, x):
    i = find(a, x)
    if i == None:
        return -1
    return i


@aot.jit(signatures=["i64(f64[:], f64)"])
def found_plus_one(a, x):
    return find(a, x) + 1  # (None raises Python's TypeError: a test and a raise in the stored IR)
"""

CALLS = """
import math
import numpy as np
from kwpkg import mod

ARRAYS = [np.zeros(0), np.array([2.0]), np.array([1.0, 2.0, 3.0])[::-1]]


def outcome(f, *args):
    try:
        return f(*args)
    except TypeError as err:
        return str(err)


got = dict(
    uses_default=[mod.uses_default(x) for x in (0.0, -1.5, 2.0)],
    passes_all=[mod.passes_all(x) for x in (0.0, -1.5, 2.0)],
    uses_offset_only=[mod.uses_offset_only(x) for x in (0.0, -1.5, 2.0)],
    tolerance=[mod.tolerance(2.0), mod.tolerance(2.0, 0.5), mod.tolerance(2.0, tol=None), mod.tolerance(x=-1.0)],
    smallest=[mod.smallest(x) for x in (-3.0, 2.2, 9.0)],
    find=[mod.find(a, x) for a in ARRAYS for x in (2.0, 5.0)],
    evens=[None if r is None else r.tolist() for r in map(mod.evens, (-1, 0, 3))],
    found_or_minus_one=[mod.found_or_minus_one(a, x) for a in ARRAYS for x in (2.0, 5.0)],
    found_plus_one=[outcome(mod.found_plus_one, a, x) for a in ARRAYS for x in (2.0, 5.0)],
)
want = dict(
    uses_default=[mod.uses_default.py_func(x) for x in (0.0, -1.5, 2.0)],
    passes_all=[mod.passes_all.py_func(x) for x in (0.0, -1.5, 2.0)],
    uses_offset_only=[mod.uses_offset_only.py_func(x) for x in (0.0, -1.5, 2.0)],
    tolerance=[mod.tolerance.py_func(2.0), mod.tolerance.py_func(2.0, 0.5), mod.tolerance.py_func(2.0, tol=None),
               mod.tolerance.py_func(x=-1.0)],
    smallest=[mod.smallest.py_func(x) for x in (-3.0, 2.2, 9.0)],
    find=[mod.find.py_func(a, x) for a in ARRAYS for x in (2.0, 5.0)],
    evens=[None if r is None else r.tolist() for r in map(mod.evens.py_func, (-1, 0, 3))],
    found_or_minus_one=[mod.found_or_minus_one.py_func(a, x) for a in ARRAYS for x in (2.0, 5.0)],
    found_plus_one=[outcome(mod.found_plus_one.py_func, a, x) for a in ARRAYS for x in (2.0, 5.0)],
)
# (calls with keywords or defaults left out bind natively, through the library's own binder; a method never
# called so has no binding)
report(same=got == want, got=got, bound_natively=mod.tolerance._aot_binding != 0 and mod.passes_all._aot_binding == 0)
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    project = write_project(
        tmp_path_factory.mktemp("kw") / "kw",
        {"pyproject.toml": pyproject("kwpkg"), "kwpkg/__init__.py": "", "kwpkg/mod.py": MOD},
    )
    done = aot_build(project, "--json")
    assert done.rc == 0, done.stderr
    return project


def test_entries_with_keywords_defaults_and_none_are_built(built):
    contents = image_contents(built, "kwpkg")
    keys = set(contents.code)
    assert ("kwpkg.mod:tolerance", ("f64", "none")) in keys and ("kwpkg.mod:tolerance", ("f64", "f64")) in keys
    assert ("kwpkg.mod:affine", ("f64", "f64", "f64")) in keys
    # Optional return types are stored as their text and parsed back.
    assert contents.code[("kwpkg.mod:find", ("f64[:]", "f64"))].rettype == "i64?"
    assert contents.code[("kwpkg.mod:evens", ("i64",))].rettype == "f64[::1]?"
    edges = {key[0]: {(str(k), t, v) for k, t, v in entry.edges} for key, entry in contents.code.items()}
    assert ("default", "kwpkg.mod:affine#factor", 2.0) in edges["kwpkg.mod:uses_default"]
    assert ("default", "kwpkg.mod:affine#offset", 0.5) in edges["kwpkg.mod:uses_default"]
    assert not any(kind == "default" for kind, _, _ in edges["kwpkg.mod:passes_all"])
    assert {(k, t) for k, t, _ in edges["kwpkg.mod:uses_offset_only"] if k == "default"} == {
        ("default", "kwpkg.mod:affine#offset")
    }


def test_loaded_with_nothing_inferred_in_strict_mode(built):
    run = run_python(built, CALLS, env={"AOT_STRICT": "1"})
    assert run["same"], run["got"]
    assert run["stats"]["inferred"] == 0 and not run["llvmlite"] and run["bound_natively"]


def _with_default(project: Path, old: str, new: str) -> None:
    path = project / "kwpkg" / "mod.py"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_a_changed_default_invalidates_exactly_the_callers_that_used_it(built, tmp_path):
    from buildsupport import copy_project

    project = copy_project(built, tmp_path / "kw", images=True)
    _with_default(project, "factor=2.0", "factor=2.5")
    run = run_python(project, CALLS)
    assert run["same"], run["got"]
    inferred = run.keys("inferred")
    assert {method for method, _ in inferred} == {"kwpkg.mod:uses_default"}, inferred
    causes = {e["cause"] for e in run.events_of("inferred")}
    assert causes == {"edge-changed:kwpkg.mod:affine#factor"}, causes
    # An incremental build rebuilds that one entry and reuses every other.
    before = image_contents(project, "kwpkg")
    done = aot_build(project, "--json")
    assert done.rc == 0, done.stderr
    assert done.summary["built"] == 1 and done.summary["reused"] == len(before.code) - 1, done.summary
    after = image_contents(project, "kwpkg")
    changed = {key for key in after.code if after.code[key].edges != before.code[key].edges}
    assert changed == {("kwpkg.mod:uses_default", ("f64",))}
    run = run_python(project, CALLS, env={"AOT_STRICT": "1"})
    assert run["same"] and run["stats"]["inferred"] == 0


WORKLOAD_PKG = """
import aot


@aot.jit
def kwonly(x, *, scale=2.0, shift=None):
    if shift is None:
        shift = 0.0
    return x * scale + shift
"""

WORKLOAD = """
from wlpkg import mod

mod.kwonly(1.0)
mod.kwonly(2.0, shift=1.0)
mod.kwonly(3.0, scale=-1.0)
"""


def test_a_workload_records_keyword_calls_by_their_bound_types(tmp_path):
    project = write_project(
        tmp_path / "wl",
        {
            "pyproject.toml": pyproject("wlpkg") + 'workload = "wlpkg._workload"\n',
            "wlpkg/__init__.py": "",
            "wlpkg/mod.py": WORKLOAD_PKG,
            "wlpkg/_workload.py": WORKLOAD,
        },
    )
    done = aot_build(project, "--json")
    assert done.rc == 0, done.stderr
    keys = set(image_contents(project, "wlpkg").code)
    assert keys == {("wlpkg.mod:kwonly", ("f64", "f64", "none")), ("wlpkg.mod:kwonly", ("f64", "f64", "f64"))}
    run = run_python(
        project,
        """
        from wlpkg import mod
        got = [mod.kwonly(1.0), mod.kwonly(2.0, shift=1.0), mod.kwonly(3.0, scale=-1.0)]
        want = [mod.kwonly.py_func(1.0), mod.kwonly.py_func(2.0, shift=1.0), mod.kwonly.py_func(3.0, scale=-1.0)]
        # Keyword-only parameters: calls bind natively, through the package library's own binder.
        report(same=got == want, bound_natively=mod.kwonly._aot_binding != 0)
        """,
        env={"AOT_STRICT": "1"},
    )
    assert run["same"] and run["stats"]["inferred"] == 0
    assert run["bound_natively"] and not run["llvmlite"]
