"""The world at import: validation of image entries on load, precise invalidation, curing, spurious reinference.

Every scenario runs in a fresh interpreter against a built copy of a fixture (``fixtures/numkit``, or
``fixtures/mutual`` for recursion across modules), changed the way the scenario says:

    nothing changed                 → every call served from the image: inferred == 0, no llvmlite, strict ok
    core.sqr edited                 → exactly sqr and its transitive callers reinferred, results == Python
    core.EPS changed                → exactly its readers reinferred
    comments, blank lines, docs     → nothing reinferred
    mutual recursion, one side      → both sides (and their callers) reinferred, the rest loaded
    only same-package callees       → valid after load
    .so deleted / tampered          → every entry cured, none inferred
    foreign or damaged image        → rejected with one warning line, results right, strict mode raises
    redefinition in a process       → dependents invalidated through backedges, world grew, results == Python
    AOT_DEBUG_REJECT                → the reinference is flagged spurious
    AOT_LOG=1                       → one stderr line per event

The expected sets are computed from the image's own edges (``buildsupport.callers_closure``), and the set of
method instances called is the set the events name, so the assertions say "exactly these, and nothing else".
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

import serializer
from buildsupport import (
    CALL_AND_REPORT,
    CALLS,
    COMPARE,
    FIXTURES,
    MUTUAL_CALLS,
    aot_build,
    callers_closure,
    copy_project,
    entries_of,
    image_contents,
    image_path,
    readers_of,
    run_python,
    so_path,
)

ALL = CALLS + COMPARE + CALL_AND_REPORT
MUTUAL_ALL = MUTUAL_CALLS + COMPARE + CALL_AND_REPORT


# ------------------------------------------------------------------------------------------------ fixtures


def _built(tmp_path_factory, fixture: str) -> Path:
    project = copy_project(FIXTURES / fixture, tmp_path_factory.mktemp("world") / fixture)
    done = aot_build(project, "--json")
    assert done.rc == 0, done.stderr
    return project


@pytest.fixture(scope="module")
def numkit_built(tmp_path_factory) -> Path:
    return _built(tmp_path_factory, "numkit")


@pytest.fixture(scope="module")
def numkit_image(numkit_built):
    return image_contents(numkit_built, "numkit")


@pytest.fixture
def numkit(numkit_built, tmp_path) -> Path:
    """A private built copy of numkit, free to edit (its image comes along: no path is baked in)."""
    return copy_project(numkit_built, tmp_path / "numkit", images=True)


@pytest.fixture(scope="module")
def mutual_built(tmp_path_factory) -> Path:
    return _built(tmp_path_factory, "mutual")


@pytest.fixture
def mutual(mutual_built, tmp_path) -> Path:
    return copy_project(mutual_built, tmp_path / "mutual", images=True)


@pytest.fixture(scope="module")
def baseline(numkit_built):
    """Nothing changed: all of numkit's workload calls in a fresh interpreter."""
    return run_python(numkit_built, ALL)


def edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text()
    assert text.count(old) == count, f"{old!r} occurs {text.count(old)} times in {path}"
    path.write_text(text.replace(old, new))


def called(run) -> set:
    """Every method instance the run dispatched to (whatever served it)."""
    return {(e["method"], tuple(e["argtypes"])) for e in run["events"]}


def assert_right_results(run) -> None:
    assert run["errors"] == [], run["errors"]
    assert run["mismatches"] == [], f"compiled results differ from plain Python: {run['mismatches']}"


def assert_exactly_reinferred(run, expected: set) -> None:
    """The instances in ``expected`` (among those called) were reinferred, each once; the others loaded."""
    calls = called(run)
    inferred = [(e["method"], tuple(e["argtypes"])) for e in run.events_of("inferred")]
    assert len(inferred) == len(set(inferred)), f"an instance was inferred twice: {inferred}"
    assert set(inferred) == expected & calls, (
        f"reinferred but still valid: {sorted(set(inferred) - expected)}; "
        f"stale but not reinferred: {sorted((expected & calls) - set(inferred))}"
    )
    assert run.keys("loaded") == calls - expected
    assert run["stats"]["cured"] == 0 and run["stats"]["invalidated"] == 0


# ------------------------------------------------------------------------------------------- nothing changed


def test_nothing_changed_every_call_served_from_the_image(baseline, numkit_image):
    st = baseline["stats"]
    assert st["inferred"] == 0 and st["spurious"] == 0 and st["cured"] == 0 and st["invalidated"] == 0
    assert baseline["llvmlite"] is False, "llvmlite was imported although the image is valid"
    loaded = baseline.keys("loaded")
    assert st["loaded"] == len(loaded) == len(baseline["events"]), "an instance was loaded twice"
    assert loaded <= set(numkit_image.code), "loaded something the image does not hold"
    assert len(loaded) >= 60
    assert {
        ("numkit.core:sqr", ("f64",)),
        ("numkit.core:sqr", ("i64",)),
        ("numkit.ntheory:is_even", ("i64",)),
        ("numkit.stencil:set_boundary", ("f64[:, ::1]", "f64")),
    } <= loaded
    assert all(e["owner"] == "cpu" and not e["spurious"] for e in baseline["events"])
    assert_right_results(baseline)


def test_nothing_changed_strict_mode_passes(numkit_built):
    run = run_python(numkit_built, ALL, env={"AOT_STRICT": "1"})
    assert run["stats"]["inferred"] == 0 and run["stats"]["loaded"] >= 60
    assert run["llvmlite"] is False
    assert_right_results(run)


IMPORT_ONLY = """
    import sys
    before = set(sys.modules)
    import numkit
    from numkit import core
    imported = sorted(m for m in set(sys.modules) - before if not m.startswith("numkit"))
    native_before = core.lerp._aot_vectorcall  # none yet: the first call reaches MethodBase.__call__
    r = core.lerp(0.0, 10.0, 0.25)
    (spec,) = core.lerp.specializations()
    after = sorted(m for m in set(sys.modules) - before if not m.startswith("numkit"))
    report(imported=imported, after=after, r=r, origin=spec.origin, native_before=native_before,
           native_after=core.lerp._aot_vectorcall == spec.vectorcall_address != 0, again=core.lerp(0.0, 10.0, 0.5))
"""


def test_import_reads_no_image_and_the_first_call_binds_natively(numkit_built):
    """Importing a package with an image runs no image code at all (the cost of import is the methods'
    objects); the first call of a method reads, validates and binds its entry."""
    run = run_python(numkit_built, IMPORT_ONLY)
    assert run["imported"] == [], f"import loaded {run['imported']}"
    assert "serializer" in run["after"] and "msgpack" in run["after"]
    assert run["stats"]["loaded"] == 1 and run["stats"]["inferred"] == 0 and run["llvmlite"] is False
    assert run["r"] == 2.5 and run["again"] == 5.0 and run["origin"] == "image"
    assert run["native_before"] == 0 and run["native_after"], "the first call did not bind the prebuilt code"


def test_images_are_found_through_the_module_file_not_the_current_directory(numkit_built, tmp_path):
    decoy = tmp_path / "decoy"
    for folder in (decoy / "numkit" / "__aot__", decoy / "__aot__"):
        folder.mkdir(parents=True)
        (folder / "numkit.cpu.aotimg").write_bytes(b"not an image at all")
    run = run_python(numkit_built, ALL, env={"AOT_STRICT": "1"}, cwd=decoy)
    assert run["stats"]["inferred"] == 0 and run["stats"]["loaded"] >= 60
    assert "numkit.cpu.aotimg" not in run.stderr
    assert_right_results(run)


def test_only_same_package_callees_are_valid_after_load(numkit_built, mutual_built):
    """Entries whose edges all stay inside the package, called before any of their callees: all valid
    (the Julia bug where such entries were never marked valid)."""
    mutual = image_contents(mutual_built, "mutual")
    assert mutual.code[("mutual.other:leaf", ("f64",))].state == "valid-no-outside-edges"
    assert mutual.code[("mutual.other:twice_leaf", ("f64",))].state != "invalid"
    run = run_python(
        mutual_built,
        """
        from mutual import other
        report(r=[other.twice_leaf(2.0), other.leaf(2.0)])
    """,
        env={"AOT_STRICT": "1"},
    )
    assert run["r"] == [2.0, 2.0]
    assert [e["kind"] for e in run["events"]] == ["loaded", "loaded"] and run["llvmlite"] is False

    run = run_python(
        numkit_built,
        """
        import numpy as np
        from numkit import core, ntheory, stencil
        u = np.zeros((6, 5)); f = np.ones((6, 5)); tmp = np.zeros((6, 5))
        r = [ntheory.count_primes(50), ntheory.fib(15), stencil.jacobi_solve(u, f, tmp, 0.25, 2),
             core.lerp(1.0, 3.0, 0.5)]
        report(r=r)
    """,
        env={"AOT_STRICT": "1"},
    )
    assert run["r"][:2] == [15, 610] and run["r"][3] == 2.0
    assert run.keys("loaded") == {
        ("numkit.ntheory:count_primes", ("i64",)),
        ("numkit.ntheory:fib", ("i64",)),
        ("numkit.stencil:jacobi_solve", ("f64[:, :]",) * 3 + ("f64", "i64")),
        ("numkit.core:lerp", ("f64", "f64", "f64")),
    }
    assert run["stats"]["inferred"] == 0 and run["llvmlite"] is False


# ----------------------------------------------------------------------------------------- edited sources


def test_callee_edited_in_another_module(numkit, numkit_image):
    """core.sqr changes its results: sqr and everything reaching it is reinferred (no stale value), every
    other entry, including the rest of core.py, stays loaded. With AOT_LOG=1 each event is one stderr line."""
    edit(numkit / "numkit" / "core.py", "    return x * x\n", "    return x * x + 1\n")
    run = run_python(numkit, ALL, env={"AOT_LOG": "1"})
    sqr = entries_of(numkit_image, "numkit.core:sqr")
    expected = callers_closure(numkit_image, sqr)
    assert_exactly_reinferred(run, expected)
    assert {
        ("numkit.core:hypot2", ("f64", "f64")),
        ("numkit.stats:variance", ("f64[:]",)),
        ("numkit.ntheory:count_primes", ("i64",)),
        ("numkit.stats:standardize", ("f64[:]", "f64[:]")),
    } <= run.keys("inferred"), "transitive callers in other modules must be reinferred"
    same_file = {k for k in run.keys("loaded") if k[0].startswith("numkit.core:")}
    assert {"numkit.core:clamp", "numkit.core:lerp", "numkit.core:sign", "numkit.core:absdiff"} <= {
        k[0] for k in same_file
    }
    direct = {k for k, e in numkit_image.code.items() if any(c in sqr for c in e.call_keys)}
    for e in run.events_of("inferred"):
        key = (e["method"], tuple(e["argtypes"]))
        if key in sqr:
            assert e["cause"] == "fingerprint-changed" and not e["spurious"], e
        elif key in direct:
            assert e["cause"] == "edge-changed:numkit.core:sqr", e
            # Its own IR reads the same (a call), but the inlined callee changed: not spurious.
            assert not e["spurious"], e
        else:  # a transitive caller: invalid because a callee in the closure is
            assert e["cause"].startswith("edge-changed:"), e
            culprit = e["cause"][len("edge-changed:") :]
            assert any(k[0] == culprit for k in expected), e
    assert run["llvmlite"] is True
    assert_right_results(run)
    log = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(log) == len(run["events"]), f"AOT_LOG=1 must print one line per event:\n{run.stderr}"
    for line, e in zip(log, run["events"]):
        assert e["kind"] in line and e["method"] in line and e["cause"] in line, (line, e)
        assert ("spurious" in line.lower()) == e["spurious"], (line, e)


@pytest.mark.parametrize(
    "name, old, new",
    [
        ("EPS", "EPS = 1e-12\n", "EPS = 1e-10\n"),
        ("WEIGHTS", "WEIGHTS = (0.25, 0.5, 0.25)\n", "WEIGHTS = (0.2, 0.6, 0.2)\n"),
        ("CHECK_ARGS", "CHECK_ARGS = True\n", "CHECK_ARGS = 1\n"),  # an equal value of another type
    ],
)
def test_module_constant_changed(numkit, numkit_image, name, old, new):
    edit(numkit / "numkit" / "core.py", old, new)
    run = run_python(numkit, ALL)
    readers = readers_of(numkit_image, f"numkit.core:{name}")
    assert len(readers) >= 1
    assert_exactly_reinferred(run, callers_closure(numkit_image, readers))
    for e in run.events_of("inferred"):
        if (e["method"], tuple(e["argtypes"])) in readers:
            assert e["cause"] == f"edge-changed:numkit.core:{name}", e
            assert not e["spurious"], f"the constant is folded in: the IR changed, nothing spurious: {e}"
    assert_right_results(run)


def test_tuple_constant_turned_into_a_list_is_not_served_from_the_image(numkit):
    """A list is mutable and compiled code never folds one: the readers' entries must not be used."""
    edit(numkit / "numkit" / "core.py", "WEIGHTS = (0.25, 0.5, 0.25)\n", "WEIGHTS = [0.25, 0.5, 0.25]\n")
    run = run_python(
        numkit,
        """
        from numkit import core
        try:
            r = core.weighted3((1.0, 2.0, 3.0))
        except _aot.CompileError as e:
            r = "CompileError"
        core.WEIGHTS[0] = 1.0
        try:
            r2 = core.weighted3((1.0, 2.0, 3.0))
        except _aot.CompileError as e:
            r2 = "CompileError"
        report(r=[r, r2], python=core.weighted3.py_func((1.0, 2.0, 3.0)))
    """,
    )
    assert run["python"] == 2.75
    assert run.keys("loaded") == set(), "an entry that folded the tuple was served for a list"
    assert run["r"][1] in ("CompileError", 2.75)


def test_comment_blank_line_and_docstring_edits_reinfer_nothing(numkit):
    """Every line number moves, docstrings and comments change, a constant is respelled with its value kept:
    no fingerprint or edge changes, so everything is served from the image (strict mode)."""
    for path in sorted((numkit / "numkit").glob("*.py")):
        text = path.read_text()
        text = "# A comment above everything.\n\n\n" + text
        text = re.sub(
            r'^(    """)(.*)(""")$', r"\1\2 (Reworded.)\3\n\n    # A comment in the body.\n", text, flags=re.M
        )
        text = text.replace("\n\n@aot.jit", "\n\n\n# Between methods.\n@aot.jit")
        path.write_text(text)
    edit(
        numkit / "numkit" / "core.py",
        '    """Limit x to the closed interval [lo, hi]. (Reworded.)"""',
        '    """Clamp.\n\n    Several lines of documentation now.\n    """',
    )
    edit(numkit / "numkit" / "core.py", "EPS = 1e-12\n", "EPS = 0.000_000_000_001  # the same value, spelled out\n")
    run = run_python(numkit, ALL, env={"AOT_STRICT": "1"})
    assert run["stats"]["inferred"] == 0 and run["stats"]["loaded"] >= 60
    assert run["llvmlite"] is False
    assert_right_results(run)


def lookups_of(contents, name: str) -> set:
    return {k for k, e in contents.code.items() if any(kind == "lookup" and t == name for kind, t, _ in e.edges)}


def test_name_rebound_in_the_callers_module(numkit, numkit_image):
    """stats.py defines its own ``sqr`` after ``from .core import sqr``: the methods of stats that look the
    name up (and their callers) are reinferred; core's own callers of core.sqr stay loaded."""
    edit(
        numkit / "numkit" / "stats.py",
        "from .core import clamp, sqr\n",
        'from .core import clamp, sqr\n\n\n@aot.jit(signatures=["f64(f64)"])\ndef sqr(x):\n    return x * x + 1.0\n',
    )
    run = run_python(numkit, ALL)
    readers = lookups_of(numkit_image, "numkit.stats:sqr")
    assert {k[0] for k in readers} == {"numkit.stats:variance", "numkit.stats:sum_sq"}
    assert_exactly_reinferred(run, callers_closure(numkit_image, readers))
    for e in run.events_of("inferred"):
        if (e["method"], tuple(e["argtypes"])) in readers:
            assert e["cause"] == "edge-changed:numkit.stats:sqr" and not e["spurious"], e
    assert ("numkit.core:hypot2", ("f64", "f64")) in run.keys("loaded")
    assert_right_results(run)


PATCHED_BETWEEN_FIRST_CALLS = """
    from numkit import ntheory
    first = ntheory.next_prime(10)          # validates the lookup of ntheory.is_prime: bound to the method
    real = ntheory.is_prime
    def is_prime(n):                        # a plain function, as a test's patch would put there
        return n % 2 == 1
    ntheory.is_prime = is_prime
    count = ntheory.count_primes(20)        # its entry looks is_prime up too: now it names another function
    expected = ntheory.count_primes.py_func(20)
    ntheory.is_prime = real
    report(first=first, count=count, expected=expected)
"""


def test_a_name_rebound_between_two_first_calls_is_looked_up_again(numkit_built):
    """What a name bound to a function stands for is not remembered from one validation to the next: an
    entry first called after the name was rebound is reinferred, with the cause naming it."""
    run = run_python(numkit_built, PATCHED_BETWEEN_FIRST_CALLS)
    assert run["first"] == 11
    (event,) = [e for e in run["events"] if e["method"] == "numkit.ntheory:count_primes"]
    assert event["kind"] == "inferred" and event["cause"] == "edge-changed:numkit.ntheory:is_prime", event
    assert run["count"] == run["expected"] == 9


def test_builtin_shadowed_in_the_module(numkit, numkit_image):
    """core.py defines its own ``abs``: every method of core that called the builtin, and their callers,
    are reinferred (and compute with the new ``abs``)."""
    edit(
        numkit / "numkit" / "core.py",
        "CHECK_ARGS = True\n",
        "CHECK_ARGS = True\n\n\ndef abs(x):\n    return x if x >= 0 else -x\n",
    )
    run = run_python(numkit, ALL, check=False)
    assert run.rc == 0, run.stderr[-3000:]
    readers = lookups_of(numkit_image, "numkit.core:abs")
    assert {k[0] for k in readers} == {"numkit.core:absdiff", "numkit.core:almost_equal"}
    assert_exactly_reinferred(run, callers_closure(numkit_image, readers))
    assert_right_results(run)


def test_debug_reject_of_a_caller_whose_callees_stay_valid(numkit_built):
    """std is rejected, variance (valid, from the image) is reused by its inference, and variance's own
    callees (mean, sqr) must come along for code generation (a KeyError in codegen once)."""
    run = run_python(
        numkit_built,
        """
        import numpy as np
        from numkit import stats
        a = np.linspace(0.0, 1.0, 9)
        report(r=[stats.std(a), stats.std.py_func(a)])
    """,
        env={"AOT_DEBUG_REJECT": "numkit.stats:std"},
        check=False,
    )
    assert run.rc == 0, run.stderr[-3000:]
    assert run["r"][0] == pytest.approx(run["r"][1], rel=1e-12)
    (e,) = [e for e in run["events"] if e["method"] == "numkit.stats:std"]
    assert e["kind"] == "inferred" and e["cause"] == "debug-reject" and e["spurious"] is True


def test_a_method_added_after_the_build_is_inferred_with_cause_no_entry(numkit):
    path = numkit / "numkit" / "core.py"
    path.write_text(path.read_text() + "\n\n@aot.jit\ndef cube(x: float) -> float:\n    return x * sqr(x)\n")
    run = run_python(
        numkit,
        """
        from numkit import core
        report(r=[core.cube(2.0), core.sqr(2.0)])
    """,
    )
    assert run["r"] == [8.0, 4.0]
    assert [(e["kind"], e["method"], e["cause"], e["spurious"]) for e in run["events"]] == [
        ("inferred", "numkit.core:cube", "no-entry", False),
        ("loaded", "numkit.core:sqr", "", False),
    ]
    strict = run_python(
        numkit,
        """
        from numkit import core
        try:
            core.cube(2.0)
            raised = None
        except _aot.StrictModeError as e:
            raised = str(e)
        report(raised=raised, r=core.sqr(3.0))
    """,
        env={"AOT_STRICT": "1"},
    )
    assert "numkit.core:cube" in strict["raised"] and "no-entry" in strict["raised"] and strict["r"] == 9.0


# ------------------------------------------------------------------------------------ mutual recursion


def test_mutual_nothing_changed(mutual_built):
    run = run_python(mutual_built, MUTUAL_ALL, env={"AOT_STRICT": "1"})
    assert run["stats"]["loaded"] == 7 and run["stats"]["inferred"] == 0 and run["llvmlite"] is False
    assert_right_results(run)


@pytest.mark.parametrize("side", ["odds", "evens"])
def test_mutual_recursion_across_modules_one_side_edited(mutual, side):
    """Editing either side of is_even <-> is_odd (two modules) reinfers both, and count_even that calls
    the cycle; half, triple (in the same files), leaf and twice_leaf stay loaded. The edit changes the
    results, so a stale side would show."""
    image = image_contents(mutual, "mutual")
    if side == "odds":
        edit(mutual / "mutual" / "odds.py", "        return False\n", "        return n == 0\n")
        changed = "mutual.odds:is_odd"
    else:
        edit(mutual / "mutual" / "evens.py", "        return True\n", "        return n != 0\n")
        changed = "mutual.evens:is_even"
    run = run_python(mutual, MUTUAL_ALL)
    cycle = {("mutual.evens:is_even", ("i64",)), ("mutual.odds:is_odd", ("i64",))}
    expected = cycle | {("mutual.other:count_even", ("i64",))}
    assert callers_closure(image, entries_of(image, changed)) == expected
    assert_exactly_reinferred(run, expected)
    assert run.keys("loaded") == {
        ("mutual.evens:half", ("i64",)),
        ("mutual.odds:triple", ("i64",)),
        ("mutual.other:leaf", ("f64",)),
        ("mutual.other:twice_leaf", ("f64",)),
    }
    causes = {e["method"]: e["cause"] for e in run.events_of("inferred")}
    other = ({"mutual.evens:is_even", "mutual.odds:is_odd"} - {changed}).pop()
    assert causes[changed] == "fingerprint-changed"
    assert causes[other] == f"edge-changed:{changed}"
    assert causes["mutual.other:count_even"].startswith("edge-changed:")
    assert_right_results(run)


# ------------------------------------------------------------------------------------------- native code


@pytest.mark.parametrize("order", ["callees-first", "callers-first"])
def test_shared_library_deleted_every_entry_cured(numkit, order):
    """Without the .so every entry is cured from its stored IR, none inferred; in either call order (callers
    first means curing std before variance and sqr were ever needed, which once failed in codegen)."""
    so_path(numkit, "numkit").unlink()
    run = run_python(
        numkit,
        CALLS + ("CALLS.reverse()\n" if order == "callers-first" else "") + COMPARE + CALL_AND_REPORT,
        check=False,
    )
    assert run.rc == 0, run.stderr[-3000:]
    st = run["stats"]
    assert st["inferred"] == 0 and st["loaded"] == 0 and st["spurious"] == 0
    assert st["cured"] >= 60 and st["cured"] == len(run.keys("cured")) == len(run["events"])
    assert all(e["cause"] == "native-missing" for e in run["events"])
    assert_right_results(run)


def test_shared_library_tampered_is_never_loaded_and_entries_are_cured(numkit):
    so = so_path(numkit, "numkit")
    so.write_bytes(so.read_bytes() + b"\0")  # still a loadable library, but not the one the header names
    run = run_python(
        numkit,
        """
        from numkit import core, ntheory, stats
        import numpy as np
        r = [core.hypot2(3.0, 4.0), ntheory.gcd(84, 36), stats.mean(np.arange(5.0))]
        maps = open("/proc/self/maps").read() if _sys.platform.startswith("linux") else ""
        report(r=r, mapped=[line.split()[-1] for line in maps.splitlines() if ".cpu.so" in line],
               maps_readable="_multiarray_umath" in maps)
    """,
    )
    assert run["r"] == [25.0, 12, 2.0]
    assert run["maps_readable"] or not os.path.exists("/proc/self/maps")
    assert run.keys("cured") == {
        ("numkit.core:hypot2", ("f64", "f64")),
        ("numkit.ntheory:gcd", ("i64", "i64")),
        ("numkit.stats:mean", ("f64[:]",)),
    }
    assert run["stats"]["inferred"] == 0 and run["stats"]["loaded"] == 0
    assert {e["cause"] for e in run["events"]} == {"native-checksum-mismatch"}
    assert not any(path.endswith("numkit.cpu.so") for path in run["mapped"]), (
        "a library whose checksum does not match the header was loaded"
    )


def test_shared_library_missing_in_strict_mode_raises(numkit):
    so_path(numkit, "numkit").unlink()
    run = run_python(
        numkit,
        """
        from numkit import core
        try:
            core.hypot2(3.0, 4.0)
            raised = None
        except _aot.StrictModeError as e:
            raised = str(e)
        report(raised=raised)
    """,
        env={"AOT_STRICT": "1"},
    )
    assert run["raised"] and "numkit.core:hypot2" in run["raised"] and "native-missing" in run["raised"]


# -------------------------------------------------------------------------------- foreign and damaged images


def _rewrite_header(project: Path, **changes) -> None:
    path = image_path(project, "numkit")
    image = serializer.read_image(path)
    header = dict(image.header)
    for key, value in changes.items():
        if key == "features" or key == "triple":
            header["target"] = dict(header["target"], **{key: value})
        else:
            header[key] = value
    serializer.write_image(path, header, image.tables)


FOREIGN = {
    "compiler-version": dict(compiler_version="0.0.1-someone-else"),
    "python-abi": dict(python="cpython-299-linux"),
    "cpu-features": dict(features="+aot-test-feature-no-cpu-has"),
    "target-triple": dict(triple="riscv64-unknown-linux-gnu"),
}

DAMAGE_PROBE = """
    from numkit import core, ntheory, stats
    import numpy as np
    _aot.strict(True)
    try:
        core.hypot2(3.0, 4.0)
        raised = None
    except _aot.StrictModeError as e:
        raised = str(e)
    _aot.strict(False)
    a = np.linspace(0.0, 1.0, 9)
    r = [core.hypot2(3.0, 4.0), ntheory.gcd(84, 36), ntheory.is_even(9), stats.variance(a)]
    p = [core.hypot2.py_func(3.0, 4.0), ntheory.gcd.py_func(84, 36), ntheory.is_even.py_func(9),
         stats.variance.py_func(a)]
    report(raised=raised, r=r, p=p)
"""


def _assert_rejected_cleanly(run, image: Path) -> None:
    assert run["r"][:3] == run["p"][:3] == [25.0, 12, False]
    assert run["r"][3] == pytest.approx(run["p"][3], rel=1e-12)
    assert run["stats"]["loaded"] == 0 and run["stats"]["cured"] == 0
    assert run["stats"]["inferred"] == len(run["events"]) >= 4
    assert run["raised"] is not None, "strict mode must raise for a rejected image"
    assert "numkit.core:hypot2" in run["raised"] and "f64" in run["raised"]
    warnings = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(warnings) == 1, f"expected one warning line:\n{run.stderr}"
    assert str(image) in warnings[0] or image.name in warnings[0]
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("why", sorted(FOREIGN))
def test_foreign_image_rejected_with_one_warning(numkit, why):
    _rewrite_header(numkit, **FOREIGN[why])
    run = run_python(numkit, DAMAGE_PROBE)
    _assert_rejected_cleanly(run, image_path(numkit, "numkit"))
    for e in run["events"]:
        assert e["cause"].startswith("image-incompatible:") and not e["spurious"], e
    assert "image-incompatible:" in run["raised"]


def test_foreign_image_cause_has_the_prefix_once(numkit):
    """``image-incompatible:<why>`` (the cause's text), not ``image-incompatible:image-incompatible:…``."""
    _rewrite_header(numkit, **FOREIGN["compiler-version"])
    run = run_python(numkit, "from numkit import core\ncore.lerp(1.0, 2.0, 0.5)\nreport()")
    (e,) = run["events"]
    assert e["cause"].startswith("image-incompatible:compiler-version"), e["cause"]


@pytest.mark.parametrize("where", ["header", "index", "definitions", "code", "offsets"])
def test_damaged_image_rejected_with_one_warning(numkit, where):
    """Damage in the header or in any table a first call reads rejects the whole image."""
    path = image_path(numkit, "numkit")
    data = bytearray(path.read_bytes())
    image = serializer.open_image(path)
    offset = (
        serializer.PREAMBLE_SIZE + 5
        if where == "header"
        else sum(image.span({"offsets": "code.offsets"}.get(where, where))) // 2
    )
    data[offset] ^= 0x5A
    path.write_bytes(bytes(data))
    run = run_python(numkit, DAMAGE_PROBE)
    _assert_rejected_cleanly(run, path)


def _flip_a_byte_of(path: Path, table: str) -> None:
    """Damage one byte in the middle of ``table`` (its checksum no longer matches)."""
    data = bytearray(path.read_bytes())
    data[sum(serializer.open_image(path).span(table)) // 2] ^= 0x5A
    path.write_bytes(bytes(data))


def _assert_served_from_the_image(run) -> None:
    """DAMAGE_PROBE's calls were answered right, by the image's native code, without a warning."""
    assert run["raised"] is None and run["r"][:3] == run["p"][:3] == [25.0, 12, False]
    assert run["stats"]["loaded"] >= 4 and run["stats"]["inferred"] == run["stats"]["cured"] == 0
    assert not run.stderr.strip()


def test_first_calls_do_not_read_the_methods_table(numkit):
    """Definitions come from the index: damage in the methods table (keys, fingerprints, definitions again,
    for tools) leaves first calls served from the image, and is found where that table is read."""
    path = image_path(numkit, "numkit")
    _flip_a_byte_of(path, "methods")
    _assert_served_from_the_image(run_python(numkit, DAMAGE_PROBE))
    with pytest.raises(serializer.ImageError, match="methods"):
        serializer.read_image(path)


def test_a_first_call_decodes_the_records_of_its_own_module_only(numkit_built):
    """The cost of a first call grows with the modules used, not with the image."""
    from aot.image.contents import ImageContents, entry_edges
    from aot.image.entries import ImageIndex

    index = ImageIndex(serializer.open_image(image_path(numkit_built, "numkit")))
    assert index.decoded == []
    entry = index.entry(("numkit.ntheory:gcd", ("i64", "i64")))
    assert entry is not None and entry.method == "numkit.ntheory:gcd"
    ntheory = [k for k in index.keys if k.startswith("numkit.ntheory:")]
    assert index.decoded == ntheory and len(ntheory) < len(index.keys)
    assert index.definition("numkit.ntheory:gcd") and index.decoded == ntheory
    assert index.entry(("numkit.ntheory:gcd", ("f64", "f64"))) is None
    assert index.entry(("numkit.nothing:here", ("f64",))) is None and index.decoded == ntheory
    full = ImageContents.from_tables(serializer.read_image(image_path(numkit_built, "numkit")).tables)
    assert index.entry_count == full.entry_count == len(index.records)  # the two readers hold the same entries
    for key in full.definitions:
        assert index.definition(key) == full.definitions[key]
        assert index.holds_definition(key, full.definitions[key]) and full.holds_definition(key, index.definition(key))
    for key in full.code:
        lazy, whole = index.entry(key), full.entry(key)
        assert (lazy.index, entry_edges(lazy), lazy.symbol, lazy.state) == (
            whole.index,
            entry_edges(whole),
            whole.symbol,
            whole.state,
        )  # (arrays decode as tuples or lists)
        assert lazy.ir == whole.ir


def test_an_index_that_does_not_say_what_the_tables_say_is_rejected(numkit):
    """Checksums that match, over an index table whose keys are out of order (written by hand)."""
    from aot.image.contents import ImageContents
    from aot.image.entries import INDEXED_TABLES, ImageIndex

    path = image_path(numkit, "numkit")
    image = serializer.read_image(path)
    ((keys, *rest),) = image.tables["index"]
    swapped = keys.split("\n")
    swapped[0], swapped[1] = swapped[1], swapped[0]
    index = [["\n".join(swapped), *rest]]
    serializer.write_image(path, image.header, dict(image.tables, index=index), INDEXED_TABLES)
    with pytest.raises(ValueError, match="index table"):
        ImageIndex(serializer.open_image(path))
    with pytest.raises(ValueError, match="index table"):
        ImageContents.from_tables(serializer.read_image(path).tables)
    run = run_python(numkit, DAMAGE_PROBE)
    _assert_rejected_cleanly(run, path)


def test_damaged_ir_is_found_when_it_is_read(numkit):
    """The typed IR is read only to cure an entry: damage there leaves the intact tables and library in use,
    and rejects the whole image (one warning, no native code from it) once an entry must be cured."""
    path = image_path(numkit, "numkit")
    _flip_a_byte_of(path, "ir")
    _assert_served_from_the_image(run_python(numkit, DAMAGE_PROBE))
    so_path(numkit, "numkit").unlink()  # now every entry needs its IR
    run = run_python(numkit, DAMAGE_PROBE)
    _assert_rejected_cleanly(run, path)
    assert all(e["cause"].startswith("image-incompatible:damaged") for e in run["events"]), run["events"]


def test_full_reads_want_the_index_a_build_would_write(numkit):
    """An index whose strings hold one the records never use (written by hand) is harmless to first calls,
    which read only what records refer to, but full reads (builds, ``aot inspect``) say it does not fit."""
    from aot.image.contents import ImageContents
    from aot.image.entries import INDEXED_TABLES

    path = image_path(numkit, "numkit")
    image = serializer.read_image(path)
    ((keys, starts, definition_starts, strings, constants),) = image.tables["index"]
    assert strings == sorted(strings)
    index = [[keys, starts, definition_starts, strings + ["~ never used"], constants]]
    serializer.write_image(path, image.header, dict(image.tables, index=index), INDEXED_TABLES)
    with pytest.raises(ValueError, match="index table does not fit"):
        ImageContents.from_tables(serializer.read_image(path).tables)
    _assert_served_from_the_image(run_python(numkit, DAMAGE_PROBE))


@pytest.mark.parametrize("damage", ["definitions-not-bytes", "starts-past-the-end", "definitions-missing"])
def test_malformed_definitions_rejected(numkit, damage):
    """Checksums that match, over a definitions table that is not one record of bytes or is missing, or an
    index whose definition starts do not fit it (written by hand); a methods table whose definitions are
    not bytes is found by full reads."""
    from aot.image.contents import ImageContents
    from aot.image.entries import INDEXED_TABLES, ImageIndex

    path = image_path(numkit, "numkit")
    image = serializer.read_image(path)
    tables = dict(image.tables, methods=[[rec[0], rec[1], rec[2].hex()] for rec in image.tables["methods"]])
    ((keys, starts, definition_starts, *refs),) = image.tables["index"]
    ((definitions,),) = image.tables["definitions"]
    if damage == "definitions-not-bytes":
        tables["definitions"] = [[definitions.hex()]]
    elif damage == "definitions-missing":
        del tables["definitions"]
    else:
        tables["index"] = [[keys, starts, definition_starts[:-4] + (len(definitions) + 1).to_bytes(4, "little"), *refs]]
    serializer.write_image(path, image.header, tables, INDEXED_TABLES)
    with pytest.raises((ValueError, serializer.ImageError), match="index table|definitions"):  # first calls
        ImageIndex(serializer.open_image(path))
    with pytest.raises(ValueError):  # what full reads check
        ImageContents.from_tables(serializer.read_image(path).tables)
    run = run_python(numkit, DAMAGE_PROBE)
    _assert_rejected_cleanly(run, path)
    assert all(e["cause"].startswith("image-incompatible:damaged") for e in run["events"]), run["events"]


def _with_call_edges(rec: list, call: int, edit: Any) -> list:
    """Code record ``rec`` with ``edit(edge)`` in place of each call edge (``call``: the kind's number)."""
    return rec[:4] + [[edit(e) if e[0] == call else e for e in rec[4]]] + rec[5:]


@pytest.mark.parametrize("damage", ["call-edge-types-as-text", "callee-out-of-range", "string-out-of-range"])
def test_code_records_that_refer_to_nothing_rejected(numkit, damage):
    """Checksums that match, over code records (written by hand) whose call edges give their callee's
    argument types as text instead of a string number, whose callee is no method key, or whose return type
    is no string: the image is rejected when the records are read, not crashed on later, and never served
    from."""
    from aot.image.contents import ImageContents
    from aot.image.entries import INDEXED_TABLES, ImageIndex

    path = image_path(numkit, "numkit")
    image = serializer.read_image(path)
    strings = image.tables["index"][0][3]
    call = strings.index("call")
    if damage == "call-edge-types-as-text":
        code = [_with_call_edges(rec, call, lambda e: e[:2] + ["(f64)"]) for rec in image.tables["code"]]
    elif damage == "callee-out-of-range":
        code = [_with_call_edges(rec, call, lambda e: [e[0], 10**6, e[2]]) for rec in image.tables["code"]]
    else:
        code = [rec[:2] + [len(strings)] + rec[3:] for rec in image.tables["code"]]
    match = "should name a string, a method key or a constant names none"
    assert code != image.tables["code"]  # (numkit has calls)
    serializer.write_image(path, image.header, dict(image.tables, code=code), INDEXED_TABLES)
    with pytest.raises(ValueError, match=match):  # what full reads check
        ImageContents.from_tables(serializer.read_image(path).tables)
    with pytest.raises(ValueError, match=match):  # what first calls read, entry by entry
        index = ImageIndex(serializer.open_image(path))
        [index.entries(key) for key in index.keys]
    run = run_python(numkit, DAMAGE_PROBE)
    _assert_rejected_cleanly(run, path)


# ---------------------------------------------------------------------------- redefinition in a process

REDEFINE_SQR = '''
import numpy as np
from numkit import core, ntheory, stats

def results():
    return [core.hypot2(3.0, 4.0), core.hypot2(3, 4), ntheory.is_prime(25), ntheory.count_primes(30),
            ntheory.are_twins(41, 43)]

def python():
    return [core.hypot2.py_func(3.0, 4.0), core.hypot2.py_func(3, 4), ntheory.is_prime.py_func(25),
            ntheory.count_primes.py_func(30), ntheory.are_twins.py_func(41, 43)]

before = results()
w0 = _aot.world()
n0 = len(_aot.events())
source = """
@aot.jit(signatures=["f64(f64)", "i64(i64)"])
def sqr(x):
    return x * x + 1
"""
path = __file__.replace(".py", "_sqr.py")
open(path, "w").write(source)
exec(compile(source, path, "exec"), vars(core))   # a new definition of numkit.core:sqr, as a reloaded cell
w1 = _aot.world()
after = results()
report(before=before, after=after, python=python(), w0=w0, w1=w1, n0=n0)
'''


def test_redefinition_invalidates_dependents_through_backedges(numkit):
    run = run_python(
        numkit,
        REDEFINE_SQR.replace(
            "before = results()", "before = results()\n[ntheory.is_prime(7), core.sqr(2), core.sqr(2.0)]"
        ),
    )
    assert run["before"] == [25.0, 25, False, 10, True]
    assert run["after"] == run["python"] == [27.0, 27, True, 11, True]
    assert run["w1"] == run["w0"] + 1
    after = run["events"][run["n0"] :]
    invalidated = {e["method"]: e["cause"] for e in after if e["kind"] == "invalidated"}
    assert invalidated == {
        "numkit.core:hypot2": "edge-changed:numkit.core:sqr",
        "numkit.ntheory:is_prime": "edge-changed:numkit.core:sqr",
        "numkit.ntheory:count_primes": "edge-changed:numkit.core:sqr",
        "numkit.ntheory:are_twins": "edge-changed:numkit.core:sqr",
    }
    assert run["stats"]["invalidated"] == 5  # hypot2 has two instances
    assert not any(e["kind"] == "loaded" for e in after if e["method"] in invalidated), (
        "a stale entry was loaded again from the image"
    )


def test_redefinition_reaches_callers_through_callees_never_called(numkit):
    """Only count_primes was called (loaded from the image) before core.sqr is redefined: is_prime, which
    links them, never ran here, yet count_primes inlines it and must be invalidated (stale: 10, right: 11)."""
    run = run_python(
        numkit,
        REDEFINE_SQR.replace("before = results()", "before = [ntheory.count_primes(30)]")
        .replace("after = results()", "after = [ntheory.count_primes(30)]")
        .replace("python=python()", "python=[ntheory.count_primes.py_func(30)]"),
    )
    assert run["before"] == [10]
    assert run["after"] == run["python"] == [11]


def test_redefinition_of_a_jit_function_in_a_running_script(tmp_path):
    """Re-running ``@aot.jit`` on a same-named function (a notebook cell run again) makes a new world and
    invalidates its callers; nothing else."""
    (tmp_path / "empty").mkdir()
    run = run_python(
        tmp_path / "empty",
        """
        import aot

        @aot.jit
        def g(x: float) -> float:
            return x + 1.0

        @aot.jit
        def h(x: float) -> float:
            return g(x) * 2.0

        @aot.jit
        def k(x: float) -> float:
            return x - 1.0

        before = [h(1.0), k(1.0)]
        w0 = aot.world()

        @aot.jit
        def g(x: float) -> float:
            return x + 10.0

        report(before=before, after=[h(1.0), k(1.0), g(1.0)], python=[h.py_func(1.0), k.py_func(1.0)],
               w0=w0, w1=aot.world())
    """,
    )
    assert run["before"] == [4.0, 0.0]
    assert run["after"] == [22.0, 0.0, 11.0] and run["python"] == [22.0, 0.0]
    assert run["w1"] == run["w0"] + 1
    invalidated = run.events_of("invalidated")
    assert [(e["method"], e["cause"]) for e in invalidated] == [("__main__:h", "edge-changed:__main__:g")]


def test_reloading_an_unchanged_module_invalidates_then_reloads_from_the_image(numkit_built):
    """``importlib.reload(core)`` redefines core's 11 methods (11 new worlds): the loaded callers of core are
    invalidated, and on their next call served from the image again (same sources): nothing inferred."""
    run = run_python(
        numkit_built,
        """
        import importlib
        import numpy as np
        from numkit import core, ntheory, stats
        a = np.linspace(0.0, 1.0, 9)
        def results():
            return [core.hypot2(3.0, 4.0), ntheory.count_primes(30), stats.variance(a), core.lerp(0.0, 1.0, 0.5)]
        before = results()
        w0, n0 = _aot.world(), len(_aot.events())
        importlib.reload(core)
        report(before=before, after=results(), w0=w0, w1=_aot.world(), n0=n0)
    """,
    )
    assert run["before"] == run["after"] == [25.0, 10, pytest.approx(0.1041666666666667, rel=1e-12), 0.5]
    assert run["w1"] == run["w0"] + 11
    after = run["events"][run["n0"] :]
    invalidated = {e["method"] for e in after if e["kind"] == "invalidated"}
    assert {"numkit.core:hypot2", "numkit.ntheory:count_primes", "numkit.stats:variance"} <= invalidated
    assert all(e["cause"].startswith("edge-changed:numkit.core:") for e in after if e["kind"] == "invalidated")
    assert invalidated <= {e["method"] for e in after if e["kind"] == "loaded"}
    assert run["stats"]["inferred"] == 0 and run["llvmlite"] is False


# ------------------------------------------------------------------------------------------ debug reject


def test_debug_reject_flags_the_reinference_spurious(numkit_built, numkit_image):
    run = run_python(numkit_built, ALL, env={"AOT_DEBUG_REJECT": "numkit.core:clamp"})
    clamp = entries_of(numkit_image, "numkit.core:clamp")
    expected = callers_closure(numkit_image, clamp)
    assert_exactly_reinferred(run, expected)
    events = {(e["method"], tuple(e["argtypes"])): e for e in run.events_of("inferred")}
    (key,) = clamp
    assert events[key]["spurious"] is True, "the entry was valid: its reinference is spurious"
    assert all(e["spurious"] for e in events.values()), "identical typed IR: every reinference here is spurious"
    assert run["stats"]["spurious"] == len(events)
    assert_right_results(run)


def test_debug_reject_of_two_methods(numkit_built, numkit_image):
    run = run_python(
        numkit_built,
        """
        from numkit import ntheory, core
        report(r=[ntheory.gcd(84, 36), core.lerp(0.0, 1.0, 0.5), core.sign(-2.0)])
    """,
        env={"AOT_DEBUG_REJECT": "numkit.ntheory:gcd,numkit.core:lerp"},
    )
    assert run["r"] == [12, 0.5, -1.0]
    spurious = {e["method"] for e in run["events"] if e["kind"] == "inferred" and e["spurious"]}
    assert spurious == {"numkit.ntheory:gcd", "numkit.core:lerp"}
    assert run.keys("loaded") == {("numkit.core:sign", ("f64",))}


def test_cpu_features_are_read_only_when_an_image_needs_some(monkeypatch):
    from aot.image import header as loader

    def cpuinfo():
        raise AssertionError("a generic image made the loader read /proc/cpuinfo")

    monkeypatch.setattr(loader, "_host_features", cpuinfo)
    assert loader._missing_features("") == [] and loader._missing_features("-avx512f,-sse4a") == []
    monkeypatch.setattr(loader, "_host_features", lambda: {"sse2", "sse4.1", "64bit"})
    assert loader._missing_features("+sse2,+sse4.1,+64bit,-avx,+avx2,+avx512f") == ["avx2", "avx512f"]


def test_an_entry_closed_in_the_building_world_is_never_bound(numkit):
    """World bounds mean something to the loader: an entry whose ``max_world`` is closed (it was invalid in
    the building world; a build writes none, so here it is written by hand with matching checksums) is not
    bound, and its method is compiled with cause ``invalid-at-build``; the other entries still load."""
    from aot.image.entries import CODE, INDEXED_TABLES

    path = image_path(numkit, "numkit")
    image = serializer.read_image(path)
    keys = image.tables["index"][0][0].split("\n")
    gcd = keys.index("numkit.ntheory:gcd")
    at = CODE.fields.index("max_world")
    code = [rec[:at] + [5] + rec[at + 1 :] if rec[0] == gcd else rec for rec in image.tables["code"]]
    assert code != image.tables["code"]
    serializer.write_image(path, image.header, dict(image.tables, code=code), INDEXED_TABLES)
    run = run_python(
        numkit,
        """
        from numkit import ntheory, core
        report(r=[ntheory.gcd(84, 36), core.sign(-2.0)])
    """,
    )
    assert run["r"] == [12, -1.0]
    causes = {e["method"]: e["cause"] for e in run["events"] if e["kind"] == "inferred"}
    assert causes == {"numkit.ntheory:gcd": "invalid-at-build"}
    assert ("numkit.core:sign", ("f64",)) in run.keys("loaded")
