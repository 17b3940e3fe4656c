"""Helpers for the tests that build projects with ``aot build`` and import them in fresh interpreters.

    project = copy_project(FIXTURES / "numkit", tmp_path / "nk")      # sources only (no __aot__)
    done = aot_build(project, "--json")                                # the CLI, in a subprocess
    done.rc, done.summary["built"], done.stderr
    contents = image_contents(project, "numkit")                       # ImageContents of the image
    out = run_python(project, "import numkit; print(report())")        # a fresh interpreter, see PRELUDE

Everything runs the code of this checkout (``PYTHONPATH`` = the repository root), never an installed
``aot``: ``aot_build`` runs ``cli.main`` with ``sys.executable``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import serializer
from aot.image.contents import ImageContents

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"

CLI = "import sys, cli; sys.argv[0] = 'aot'; cli.main()"


def base_env(extra: dict[str, str] | None = None, path: Iterable[Path] = ()) -> dict[str, str]:
    """The environment of a child: this checkout first on the path, no aot switches unless given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AOT_")}
    env["PYTHONPATH"] = os.pathsep.join([*(str(p) for p in path), str(REPO)])
    env.pop("PYTHONSTARTUP", None)
    env.update(extra or {})
    return env


def pyproject(package: str) -> str:
    """The ``pyproject.toml`` of a one-package test project built with aot."""
    return f'[project]\nname = "{package}"\nversion = "0.1.0"\n\n[tool.aot]\npackages = ["{package}"]\n'


def write_project(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (path → text, dedented) under ``root``; returns ``root``."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def build_two_variants(root: Path, package: str, source: str) -> Path:
    """A one-module package ``package`` (``source``, dedented) built with two CPU variants of this machine's
    architecture (one where no second is offered), so that its code and its wrappers are separate objects."""
    import platform

    variants = {"x86_64": ["generic", "x86-64-v2"], "aarch64": ["generic", "armv8.2-a"]}.get(
        platform.machine(), ["generic"]
    )
    project = write_project(
        root / package,
        {
            "pyproject.toml": pyproject(package) + f"\n[tool.aot.cpu]\nvariants = {variants!r}\n",
            f"{package}/__init__.py": source,
        },
    )
    done = aot_build(project)
    assert done.rc == 0, done.stderr
    return project


def copy_project(src: Path, dst: Path, *, images: bool = False) -> Path:
    """A copy of a project; its images come along only with ``images=True`` (never __pycache__)."""
    ignore = ["__pycache__", ".pytest_cache"] + ([] if images else ["__aot__"])
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(*ignore))
    return dst


@dataclass
class Done:
    rc: int
    stdout: str
    stderr: str

    @property
    def summary(self) -> dict[str, Any]:
        """The JSON object on the last line of stdout (``--json``)."""
        lines = self.stdout.strip().splitlines()
        assert lines, f"no stdout; stderr:\n{self.stderr}"
        return json.loads(lines[-1])


def aot_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 300, cwd: Path | None = None) -> Done:
    proc = subprocess.run(
        [sys.executable, "-c", CLI, *args],
        capture_output=True,
        text=True,
        env=env or base_env(),
        timeout=timeout,
        cwd=cwd,
    )
    return Done(proc.returncode, proc.stdout, proc.stderr)


def aot_build(project: Path, *args: str, env: dict[str, str] | None = None) -> Done:
    return aot_cli("build", str(project), *args, env=env)


def aot_build_popen(project: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", CLI, "build", str(project), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=base_env(),
    )


def image_path(project: Path, package: str) -> Path:
    return project / package / "__aot__" / f"{package}.cpu.aotimg"


def so_path(project: Path, package: str) -> Path:
    return project / package / "__aot__" / f"{package}.cpu.so"


def image_contents(project: Path, package: str) -> ImageContents:
    return ImageContents.from_tables(serializer.read_image(image_path(project, package)).tables)


def callers_closure(contents: ImageContents, changed: set) -> set:
    """Entry keys that are in ``changed`` or reach one of them through call edges (transitively)."""
    out = set(changed)
    grew = True
    while grew:
        grew = False
        for key, entry in contents.code.items():
            if key not in out and any(callee in out for callee in entry.call_keys):
                out.add(key)
                grew = True
    return out


def entries_of(contents: ImageContents, method: str) -> set:
    return {key for key in contents.code if key[0] == method}


def readers_of(contents: ImageContents, constant: str) -> set:
    return {key for key, e in contents.code.items() if any(k == "global" and t == constant for k, t, _ in e.edges)}


# ------------------------------------------------------------------------------------------ fresh interpreters

PRELUDE = '''
import json as _json, sys as _sys, math as _math
import aot as _aot

def events():
    return [dict(kind=e.kind, method=e.method, argtypes=list(e.argtypes), owner=e.owner, cause=e.cause,
                 spurious=e.spurious) for e in _aot.events()]

def _plain(v):
    try:
        import numpy as np
    except ImportError:
        np = None
    if np is not None and isinstance(v, np.ndarray):
        return {"array": v.tolist()}
    if isinstance(v, tuple):
        return [_plain(x) for x in v]
    if isinstance(v, float) and not _math.isfinite(v):
        return repr(v)
    return v

def report(**extra):
    """The last line of stdout: stats, events, whether llvmlite was imported, and ``extra``."""
    out = dict(stats=_aot.stats(), events=events(), llvmlite="llvmlite" in _sys.modules, world=_aot.world())
    out.update({k: _plain(v) for k, v in extra.items()})
    print(_json.dumps(out))
'''


@dataclass
class Run:
    rc: int
    stdout: str
    stderr: str
    report: dict[str, Any] | None

    def __getitem__(self, key: str) -> Any:
        assert self.report is not None, f"the script printed no report (rc={self.rc}):\n{self.stderr}"
        return self.report[key]

    def keys(self, kind: str) -> set:
        """(method, argtypes) of every event of ``kind``."""
        return {(e["method"], tuple(e["argtypes"])) for e in self["events"] if e["kind"] == kind}

    def events_of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self["events"] if e["kind"] == kind]


def run_python(
    project: Path,
    code: str,
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 240,
    check: bool = True,
) -> Run:
    """Run ``PRELUDE + code`` in a fresh interpreter with ``project`` first on the path.

    The script lives in its own folder beside the project (which is its ``sys.path[0]``), and runs in
    ``cwd`` (default: that folder), so the packages are found through ``PYTHONPATH`` only."""
    folder = project.parent / "_probes"
    folder.mkdir(exist_ok=True)
    text = PRELUDE + "\n" + textwrap.dedent(code)
    script = folder / f"probe_{hashlib.sha1(text.encode()).hexdigest()[:12]}.py"
    script.write_text(text)
    proc = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        cwd=cwd or folder,
        env=base_env(env, path=[project]),
        timeout=timeout,
    )
    lines = proc.stdout.strip().splitlines()
    report = None
    if lines:
        try:
            report = json.loads(lines[-1])
        except ValueError:
            report = None
    run = Run(proc.returncode, proc.stdout, proc.stderr, report)
    if check:
        assert proc.returncode == 0, f"probe failed (rc={proc.returncode}):\n{proc.stderr[-4000:]}"
        assert report is not None, f"probe printed no report:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    return run


# Every call of numkit's workload, with results kept, plus helpers to compare them with plain Python.
# ``call_all()`` calls the compiled methods; ``compare(got)`` then calls each ``.py_func`` on fresh copies
# of the same arguments (after the events of interest were taken: plain Python calls compiled callees).
CALLS = """
import math
import numpy as np
import numkit
from numkit import arrays, core, ntheory, roots, stats, stencil

def _a():
    return np.linspace(-1.0, 2.0, 16)

def _g():
    return np.add.outer(np.arange(6.0) ** 2, np.arange(5.0) ** 2)

def _z():
    return np.zeros((6, 5))

CALLS = [
    ("core.clamp", core.clamp, lambda: (1.5, 0.0, 1.0)),
    ("core.lerp", core.lerp, lambda: (0.0, 10.0, 0.25)),
    ("core.sign", core.sign, lambda: (-3.0,)),
    ("core.sqr/f", core.sqr, lambda: (1.5,)),
    ("core.sqr/i", core.sqr, lambda: (7,)),
    ("core.absdiff/f", core.absdiff, lambda: (1.0, 3.5)),
    ("core.absdiff/i", core.absdiff, lambda: (3, 10)),
    ("core.hypot2/f", core.hypot2, lambda: (3.0, 4.0)),
    ("core.hypot2/i", core.hypot2, lambda: (3, 4)),
    ("core.scaled", core.scaled, lambda: (1.25,)),
    ("core.almost_equal", core.almost_equal, lambda: (0.1 + 0.2, 0.3)),
    ("core.weighted3", core.weighted3, lambda: ((1.0, 2.0, 3.0),)),
    ("core.smoothstep", core.smoothstep, lambda: (0.0, 1.0, 0.5)),
    ("core.wrap_angle", core.wrap_angle, lambda: (7.0,)),
    ("stats.mean", stats.mean, lambda: (_a(),)),
    ("stats.mean/strided", stats.mean, lambda: (_a()[::2],)),
    ("stats.variance", stats.variance, lambda: (_a(),)),
    ("stats.std", stats.std, lambda: (_a(),)),
    ("stats.zscore", stats.zscore, lambda: (1.0, 0.5, 2.0)),
    ("stats.minmax", stats.minmax, lambda: (_a(),)),
    ("stats.dot", stats.dot, lambda: (_a(), np.cos(_a()))),
    ("stats.norm", stats.norm, lambda: (_a(),)),
    ("stats.cumsum", stats.cumsum, lambda: (_a(), np.empty(16))),
    ("stats.suffix_sum", stats.suffix_sum, lambda: (_a(), np.empty(16))),
    ("stats.argmax", stats.argmax, lambda: (np.cos(_a()),)),
    ("stats.weighted_mean3", stats.weighted_mean3, lambda: (1.0, 2.0, 4.0)),
    ("stats.sum_sq", stats.sum_sq, lambda: (_a(),)),
    ("stats.rms", stats.rms, lambda: (_a(),)),
    ("stats.clip_into", stats.clip_into, lambda: (_a(), -0.5, 0.5, np.empty(16))),
    ("stats.standardize", stats.standardize, lambda: (_a(), np.empty(16))),
    ("stats.histogram", stats.histogram, lambda: (_a(), -1.0, 2.0, np.zeros(4, dtype=np.int64))),
    ("stats.max_abs_dev", stats.max_abs_dev, lambda: (_a(),)),
    ("stats.rescale", stats.rescale, lambda: (_a(), np.empty(16))),
    ("roots.cubic", roots.cubic, lambda: (2.0, 1.0, 0.0, 0.0, -8.0)),
    ("roots.bisect_cubic", roots.bisect_cubic, lambda: (1.0, 0.0, -1.0, -2.0, 1.0, 2.0)),
    ("roots.newton_sqrt", roots.newton_sqrt, lambda: (2.0,)),
    ("roots.newton_cbrt", roots.newton_cbrt, lambda: (-27.0,)),
    ("roots.nth_root", roots.nth_root, lambda: (32.0, 5)),
    ("roots.secant_cubic", roots.secant_cubic, lambda: (1.0, 0.0, -1.0, -2.0, 1.0, 2.0)),
    ("roots.fixed_point_cos", roots.fixed_point_cos, lambda: (1.0,)),
    ("roots.newton_cubic", roots.newton_cubic, lambda: (1.0, 0.0, -1.0, -2.0, 1.5)),
    ("stencil.check_same_shape", stencil.check_same_shape, lambda: (_g(), _z())),
    ("stencil.smooth3", stencil.smooth3, lambda: (_a(), np.empty(16))),
    ("stencil.diff1", stencil.diff1, lambda: (_a(), np.empty(16), 0.2)),
    ("stencil.laplacian5", stencil.laplacian5, lambda: (_g(), _z(), 1.0)),
    ("stencil.set_boundary", stencil.set_boundary, lambda: (_g(), 0.0)),
    ("stencil.jacobi_sweep", stencil.jacobi_sweep, lambda: (_g(), np.ones((6, 5)), _z(), 0.25)),
    ("stencil.jacobi_solve", stencil.jacobi_solve, lambda: (_g(), np.ones((6, 5)), _z(), 0.25, 3)),
    ("stencil.interior_sum", stencil.interior_sum, lambda: (_g(),)),
    ("ntheory.gcd", ntheory.gcd, lambda: (84, 36)),
    ("ntheory.lcm", ntheory.lcm, lambda: (4, 6)),
    ("ntheory.is_prime", ntheory.is_prime, lambda: (97,)),
    ("ntheory.count_primes", ntheory.count_primes, lambda: (50,)),
    ("ntheory.next_prime", ntheory.next_prime, lambda: (90,)),
    ("ntheory.are_twins", ntheory.are_twins, lambda: (41, 43)),
    ("ntheory.modpow", ntheory.modpow, lambda: (3, 200, 1000003)),
    ("ntheory.fib", ntheory.fib, lambda: (12,)),
    ("ntheory.fib_iter", ntheory.fib_iter, lambda: (50,)),
    ("ntheory.factorial", ntheory.factorial, lambda: (10,)),
    ("ntheory.binomial", ntheory.binomial, lambda: (30, 12)),
    ("ntheory.collatz_len", ntheory.collatz_len, lambda: (27,)),
    ("ntheory.digit_sum", ntheory.digit_sum, lambda: (-98765,)),
    ("ntheory.is_even", ntheory.is_even, lambda: (10,)),
    ("ntheory.is_odd", ntheory.is_odd, lambda: (7,)),
    ("ntheory.isqrt", ntheory.isqrt, lambda: (1000,)),
    ("arrays.centered", arrays.centered, lambda: (_a(),)),
    ("arrays.moving_average", arrays.moving_average, lambda: (_a(), 3)),
    ("arrays.outer", arrays.outer, lambda: (_a(), np.cos(_a()))),
    ("arrays.histogram", arrays.histogram, lambda: (_a(), -1.0, 2.0, 4)),
    ("arrays.rescaled", arrays.rescaled, lambda: (_a(),)),
    ("arrays.tridiagonal", arrays.tridiagonal, lambda: (4, -1.0)),
    ("arrays.sample_cubic", arrays.sample_cubic, lambda: (-1.0, 1.0, 9)),
    ("arrays.scale_in_place", arrays.scale_in_place, lambda: (_a(), 0.5)),
    ("arrays.squares", arrays.squares, lambda: (6,)),
]
"""

MUTUAL_CALLS = """
import mutual
from mutual import evens, odds, other

CALLS = [
    ("evens.is_even", evens.is_even, lambda: (10,)),
    ("odds.is_odd", odds.is_odd, lambda: (7,)),
    ("other.count_even", other.count_even, lambda: (10,)),
    ("other.leaf", other.leaf, lambda: (2.0,)),
    ("other.twice_leaf", other.twice_leaf, lambda: (2.0,)),
    ("evens.half", evens.half, lambda: (7,)),
    ("odds.triple", odds.triple, lambda: (5,)),
]
"""

# Calling and comparing; appended after CALLS or MUTUAL_CALLS.
COMPARE = '''
def _same(x, y):
    try:
        import numpy as np
    except ImportError:
        np = None
    if np is not None and isinstance(x, np.ndarray):
        return isinstance(y, np.ndarray) and x.shape == y.shape and np.allclose(x, y, rtol=1e-12, atol=0.0,
                                                                                equal_nan=True)
    if np is not None and isinstance(y, np.generic):
        y = y.item()
    if isinstance(x, tuple):
        return isinstance(y, tuple) and len(x) == len(y) and all(_same(a, b) for a, b in zip(x, y))
    if type(x) is not type(y):
        return False
    if isinstance(x, float):
        return x == y or (x != x and y != y) or _math.isclose(x, y, rel_tol=1e-12)
    return x == y

def call_all(calls=None):
    got = []
    for label, m, make in (CALLS if calls is None else calls):
        args = make()
        try:
            r, err = m(*args), None
        except Exception as e:
            r, err = None, f"{type(e).__name__}: {e}"
        got.append((label, m, make, args, r, err))
    return got

def compare(got):
    """[label, compiled, python, compiled error, python error] for every call whose compiled result (or
    output arrays) differ from plain Python's on fresh copies of the arguments."""
    bad = []
    for label, m, make, args, r, err in got:
        args2 = make()
        try:
            r2, err2 = m.py_func(*args2), None
        except Exception as e:
            r2, err2 = None, f"{type(e).__name__}: {e}"
        same_args = all(_same(a, b) for a, b in zip(args, args2))
        if (err is None) != (err2 is None) or not _same(r, r2) or not same_args:
            bad.append([label, repr(r), repr(r2), err, err2])
    return bad

def snapshot():
    return dict(stats=_aot.stats(), events=events(), llvmlite="llvmlite" in _sys.modules)

def results(got):
    return {label: _plain(r) for label, m, make, args, r, err in got}
'''

# The common scenario: call everything, take the events, compare with plain Python, report.
CALL_AND_REPORT = """
got = call_all()
snap = snapshot()
report(mismatches=compare(got), errors=[[g[0], g[5]] for g in got if g[5]], **snap)
"""
