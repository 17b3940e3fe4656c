"""The corpus of real-style numeric functions (tests/corpus/): what passes today keeps passing.

``tests/corpus/expected_ok.txt`` lists the entries that compile and match plain Python today; an entry of the
list that stops passing fails this test, an entry that starts passing is reported (a warning) and never fails
it: add it to the list with ``python3 tests/corpus/run.py --update-expected``.  The other tests check the
runner itself: how it judges results, and that a child process that dies hides no other entry.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import textwrap
import warnings

import numpy as np
import pytest

import aot

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")


def _load(name):
    if CORPUS not in sys.path:
        sys.path.insert(0, CORPUS)
    spec = importlib.util.spec_from_file_location(f"corpus_{name}", os.path.join(CORPUS, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


run = _load("run")
harness = _load("harness")


@pytest.fixture(scope="module")
def corpus_rows():
    return run.run_all()


def test_corpus_entries_that_passed_still_pass(corpus_rows):
    rows = corpus_rows
    by_name = {r["name"]: r for r in rows}
    expected = run.read_expected()
    assert len(rows) >= 60 and len(expected) > 0
    lost = []
    for name in expected:
        r = by_name.get(name)
        if r is None:
            lost.append(f"{name}: no longer in the corpus")
        elif r["status"] != "ok":
            lost.append(f"{name}: {r['status']}: {r['message']}")
    assert not lost, "corpus entries that passed no longer do:\n" + "\n".join(lost)
    gained = sorted(r["name"] for r in rows if r["status"] == "ok" and r["name"] not in expected)
    if gained:
        warnings.warn(
            f"{len(gained)} corpus entries pass now and are not in expected_ok.txt (python3 tests/corpus/run.py "
            f"--update-expected): {', '.join(gained)}",
            stacklevel=1,
        )


def test_every_entry_has_a_status_and_compile_errors_a_blocker(corpus_rows):
    rows = corpus_rows
    assert rows and all(r["status"] in ("ok", "compile-error", "wrong", "crash", "skipped") for r in rows)
    assert all(r["cases"] > 0 for r in rows if r["status"] == "ok")
    for r in rows:
        assert (r["category"] is not None) == (r["status"] == "compile-error"), r


# ------------------------------------------------------------------------------------------ judging results


def test_same_is_nan_aware_type_aware_and_tolerant():
    assert harness.same(np.float64(1.0), 1.0)
    assert harness.same(float("nan"), np.nan)
    assert not harness.same(1, 1.0)
    assert not harness.same(True, 1)
    assert harness.same(1.0 + 1e-13, 1.0) and not harness.same(1.0 + 1e-6, 1.0)
    assert harness.same(1.0 + 1e-6, 1.0, rel_tol=1e-5)
    assert not harness.same(float("inf"), 1e308)
    a = np.array([1.0, np.nan, -np.inf])
    assert harness.same(a, a.copy())
    assert not harness.same(a, np.array([1.0, 0.0, -np.inf]))
    assert not harness.same(a, a.astype(np.float32))
    assert not harness.same(np.zeros(3), np.zeros((3, 1)))
    assert harness.same((1, (np.ones(2), 2.0)), (np.int64(1), (np.ones(2), np.float64(2.0))))
    assert not harness.same((1, 2), (1, 2, 3))


class _Fake:
    """A stand-in for a method: ``py_func`` is the plain function, calling it runs ``impl``."""

    def __init__(self, py_func, impl):
        self.py_func = py_func
        self.impl = impl

    def __call__(self, *args, **kwargs):
        return self.impl(*args, **kwargs)


def _total(a):
    s = 0.0
    for v in a:
        s += v
    return s


def _scale(a, k):
    for i in range(len(a)):
        a[i] *= k


def _cases(rng):
    return [(np.arange(4.0),), (np.empty(0),)]


def _scale_cases(rng):
    return [(np.arange(3.0), 2.0)]


def test_judge_statuses():
    ok = harness.judge("t.total", _Fake(_total, _total), _cases)
    assert ok[0] == "ok" and ok[2] == 2 and ok[3] is None

    status, message, case, _ = harness.judge("t.total", _Fake(_total, lambda a: _total(a) + 1e-3), _cases)
    assert status == "wrong" and case == 0 and "result" in message

    def bad_scale(a, k):
        _scale(a, k)
        a[0] = 99.0

    status, message, _, _ = harness.judge("t.scale", _Fake(_scale, bad_scale), _scale_cases)
    assert status == "wrong" and "array argument 0" in message

    def raises(a):
        raise IndexError("out of range")

    status, message, _, _ = harness.judge("t.total", _Fake(_total, raises), _cases)
    assert status == "wrong" and "IndexError" in message

    def rejects(a):
        raise aot.CompileError("f.py:3:9: error: slices are not supported; index elements one by one")

    # An exception whose innermost frame lies in the compiler's stages escaped the compiler: a crash.
    stage = os.path.join(os.path.dirname(aot.__file__), "infer", "not_a_real_file.py")
    ns = {}
    exec(compile("def boom(a):\n    raise KeyError('internal')\n", stage, "exec"), ns)
    status, message, _, _ = harness.judge("t.total", _Fake(_total, ns["boom"]), _cases)
    assert status == "crash" and "internal error: KeyError" in message

    status, message, _, err = harness.judge("t.total", _Fake(_total, rejects), _cases)
    assert status == "compile-error" and message.startswith("CompileError: ") and "slices are not" in message
    assert harness.blocker(err) == ("slices", "")


def test_blocker_names_numpy_functions_from_the_call_chain():
    err = aot.CompileError(
        "numeric.py:325:55: error: keyword-only parameters are not supported; make them positional\n"
        "  while compiling finance:rsi -> numpy:full"
    )
    assert harness.blocker(err) == ("array allocation", "np.full")
    err = aot.CompileError("numeric.py:1:1: error: something\n  while compiling m:f -> numpy:argsort")
    assert harness.blocker(err) == ("NumPy ufuncs and functions", "np.argsort")


def test_blocker_names_array_methods():
    err = aot.CompileError("m.py:4:9: error: arrays have no attribute 'std' in compiled code (use shape, size, ndim)")
    assert harness.blocker(err) == ("array methods", ".std()")


def test_all_blockers_lists_every_diagnostic_once():
    err = aot.CompileError(
        "m.py:3:9: error: slices are not supported; index elements one by one\n"
        "m.py:5:1: error: lists are not supported as values; use a tuple or an array argument\n"
        "m.py:7:9: error: slices are not supported; index elements one by one"
    )
    assert harness.all_blockers(err) == [("slices", ""), ("lists as values", "")]


# ------------------------------------------------------------------------------------------ isolation


CRASHING_MODULE = """
import os

import numpy as np

import aot


@aot.jit
def first(a):
    return a[0]


def first_cases(rng):
    return [(np.arange(3.0),)]


@aot.jit
def dies(a):
    return a[0]


def dies_cases(rng):
    os._exit(7)


@aot.jit
def after(a):
    s = 0.0
    for v in a:
        s += v
    return s


def after_cases(rng):
    return [(np.arange(3.0),), (np.empty(0),)]


@aot.jit
def skipped(a):
    for i in aot.no_such_name(len(a)):
        a[i] = 0.0


def skipped_cases(rng):
    return [(np.arange(3.0),)]
"""


def test_a_dying_child_hides_no_other_entry(tmp_path):
    (tmp_path / "crashy.py").write_text(textwrap.dedent(CRASHING_MODULE))
    rows = run.run_all(folder=str(tmp_path))
    status = {r["name"]: r["status"] for r in rows}
    assert status == {"crashy.first": "ok", "crashy.dies": "crash", "crashy.after": "ok", "crashy.skipped": "skipped"}
    dies = next(r for r in rows if r["name"] == "crashy.dies")
    assert "status 7" in dies["message"]
    assert dies["category"] is None and dies["cases"] == 0


BROKEN_MODULE = """
import numpy as np

import aot

raise ImportError("a corpus module that does not import")
"""


def test_a_module_that_does_not_import_is_one_crash(tmp_path):
    (tmp_path / "broken.py").write_text(BROKEN_MODULE)
    rows = run.run_all(folder=str(tmp_path))
    assert [(r["name"], r["status"]) for r in rows] == [("broken", "crash")]
    assert "ImportError: a corpus module that does not import" in rows[0]["message"]


@pytest.mark.parametrize("argv", [["--update-expected", "econ"]])
def test_update_expected_needs_the_whole_corpus(argv):
    with pytest.raises(SystemExit):
        run.main(argv)
