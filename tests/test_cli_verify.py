"""``aot verify`` (and ``aot inspect --verify``) after each kind of source edit on a built copy of numkit.

numkit is built once per module; every test edits its own copy of the built project, so the images are
those of the unedited sources and the verdicts show exactly what each edit invalidates.
"""

from __future__ import annotations

import json
import sys

import pytest

import serializer
from aot.world.fingerprint import COMPILER_VERSION
from cli_support import assert_one_line_error, build_copy, copy_built, edit, invoke, run_aot, schema_problems

BOTH = pytest.mark.parametrize("runner", ["subprocess", "clirunner"])


def call(runner: str, *args: str):
    return run_aot(*args) if runner == "subprocess" else invoke(*args)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return build_copy(tmp_path_factory.mktemp("verify") / "numkit")


@pytest.fixture
def project(built, tmp_path):
    return copy_built(built, tmp_path / "numkit")


def stale(project, runner="subprocess") -> dict[tuple[str, tuple[str, ...]], str]:
    """(method, argtypes) → reason of every invalid entry, from ``aot inspect --verify --json``."""
    out = call(runner, "inspect", str(project), "--verify", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert schema_problems(doc, verify=True) == []
    return {
        (e["method"], tuple(e["argtypes"])): e["reason"]
        for image in doc["images"]
        for e in image["entries"]
        if e["status"] == "invalid"
    }


def stale_lines(out) -> list[str]:
    return [line.split() for line in out.stdout.splitlines() if line.lstrip().startswith("stale ")]


# ---------------------------------------------------------------------------------------------- unedited


@BOTH
def test_fresh_build_verifies(runner, project):
    out = call(runner, "verify", str(project))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "all valid" in out.stdout
    assert out.stdout.rstrip().splitlines()[-1].startswith("aot verify: ok: ")
    assert stale(project, runner) == {}


def test_verify_leaves_this_process_as_it_was(project):
    """In-process verification imports the project in a private world and puts everything back."""
    from aot.runtime import state

    before_runtime = state._RUNTIME
    before = {name: mod for name, mod in sys.modules.items() if name.split(".")[0] == "numkit"}
    path = list(sys.path)
    edit(project / "numkit" / "core.py", "SCALE = 2.0", "SCALE = 3.0")
    assert invoke("verify", str(project)).returncode == 1
    assert state._RUNTIME is before_runtime
    assert {name: mod for name, mod in sys.modules.items() if name.split(".")[0] == "numkit"} == before
    assert sys.path == path


def test_private_runtime_puts_the_previous_one_back_even_on_error():
    from aot.runtime import state

    before = state.runtime()
    with pytest.raises(ZeroDivisionError):
        with state.private_runtime() as rt:
            assert state.runtime() is rt and rt is not before
            _ = 1 / 0
    assert state.runtime() is before
    mine = state.Runtime()
    with state.private_runtime(mine) as rt:
        assert rt is mine and state.runtime() is mine
    assert state.runtime() is before


# ---------------------------------------------------------------------------------------------- each kind of edit


@BOTH
def test_callee_edited_invalidates_its_callers(runner, project):
    edit(project / "numkit" / "stats.py", "    return s / n\n", "    return (s + 0.0) / n\n")
    got = stale(project, runner)
    assert got == {
        ("numkit.stats:mean", ("f64[:]",)): "fingerprint-changed",
        ("numkit.stats:mean", ("f64[::1]",)): "fingerprint-changed",
        ("numkit.stats:variance", ("f64[:]",)): "edge-changed:numkit.stats:mean",
        ("numkit.stats:max_abs_dev", ("f64[::1]",)): "edge-changed:numkit.stats:mean",
        ("numkit.stats:standardize", ("f64[:]", "f64[:]")): "edge-changed:numkit.stats:mean",
        ("numkit.stats:std", ("f64[:]",)): "edge-changed:numkit.stats:variance",
    }
    out = call(runner, "verify", str(project))
    assert out.returncode == 1
    lines = stale_lines(out)
    assert len(lines) == 6
    assert ["stale", "numkit.stats:variance(f64[:])", "cpu", "edge-changed:numkit.stats:mean"] in lines
    std = [line for line in lines if line[1] == "numkit.stats:std(f64[:])"][0]
    assert std[3] == "edge-changed:numkit.stats:variance" and "numkit.stats:mean(f64[:]):" in std
    assert "aot verify: FAILED: 6 of 75 entries stale" in out.stdout


@BOTH
def test_constant_changed_invalidates_exactly_its_readers(runner, project):
    edit(project / "numkit" / "ntheory.py", "MAX_FACTORIAL = 20", "MAX_FACTORIAL = 19")
    assert stale(project, runner) == {
        ("numkit.ntheory:factorial", ("i64",)): "edge-changed:numkit.ntheory:MAX_FACTORIAL"
    }
    out = call(runner, "verify", str(project))
    assert out.returncode == 1
    assert stale_lines(out) == [
        ["stale", "numkit.ntheory:factorial(i64)", "cpu", "edge-changed:numkit.ntheory:MAX_FACTORIAL"]
    ]


def test_constant_read_through_a_callee(project):
    """`rescale` reads SCALE only through `scaled`, whose code it inlines: it is stale through that edge."""
    edit(project / "numkit" / "core.py", "SCALE = 2.0", "SCALE = 3.0")  # same size, same second: no stale .pyc
    assert stale(project) == {
        ("numkit.core:scaled", ("f64",)): "edge-changed:numkit.core:SCALE",
        ("numkit.stats:rescale", ("f64[:]", "f64[:]")): "edge-changed:numkit.core:scaled",
    }


@BOTH
def test_unrelated_function_edited_invalidates_only_it(runner, project):
    edit(project / "numkit" / "ntheory.py", "    steps = 0\n", "    steps = 0 * n\n")
    assert stale(project, runner) == {("numkit.ntheory:collatz_len", ("i64",)): "fingerprint-changed"}
    out = call(runner, "verify", str(project))
    assert out.returncode == 1
    assert stale_lines(out) == [["stale", "numkit.ntheory:collatz_len(i64)", "cpu", "fingerprint-changed"]]


@BOTH
def test_comment_and_docstring_edits_change_nothing(runner, project):
    core = project / "numkit" / "core.py"
    edit(core, "import math\n", "import math\n\n# A new comment that moves every line below it.\n\n")
    edit(core, '"""Limit x to the closed interval [lo, hi]."""', '"""Clamp x into [lo, hi] (reworded)."""')
    out = call(runner, "verify", str(project))
    assert out.returncode == 0, out.stdout
    assert stale(project, runner) == {}


def test_a_redefined_signature_and_a_removed_method(project):
    edit(project / "numkit" / "ntheory.py", "def digit_sum(", "def digit_total(")
    got = stale(project)
    assert got == {("numkit.ntheory:digit_sum", ("i64",)): "fingerprint-changed"}


def test_sources_that_do_not_import(project):
    edit(project / "numkit" / "stencil.py", "import aot\n", "import aot\ndef broken(:\n")
    out = run_aot("verify", str(project))
    assert out.returncode == 1
    assert "cannot import numkit" in out.stdout and "SyntaxError" in out.stdout
    reasons = set(stale(project).values())
    assert reasons == {"import-failed:SyntaxError"}


# ---------------------------------------------------------------------------------------------- image problems


def test_missing_native_library_fails(project):
    (project / "numkit" / "__aot__" / "numkit.cpu.so").unlink()
    out = run_aot("verify", str(project))
    assert out.returncode == 1
    assert "native-missing (numkit.cpu.so)" in out.stdout
    table = run_aot("inspect", str(project))
    assert table.returncode == 0 and table.stdout.splitlines()[2].endswith("-")  # size unknown


def test_image_of_another_compiler_version_is_invalid_as_a_whole(project):
    path = project / "numkit" / "__aot__" / "numkit.cpu.aotimg"
    image = serializer.read_image(path)
    serializer.write_image(path, dict(image.header, compiler_version="0.0.1"), image.tables)
    reasons = set(stale(project).values())
    assert reasons == {f"image-incompatible:compiler-version 0.0.1 (this is {COMPILER_VERSION})"}
    assert run_aot("verify", str(project)).returncode == 1


def test_verify_needs_images_and_sources(project, tmp_path):
    image = project / "numkit" / "__aot__" / "numkit.cpu.aotimg"
    loose = tmp_path / "loose.aotimg"
    loose.write_bytes(image.read_bytes())
    assert_one_line_error(run_aot("verify", str(loose)), "outside a <package>/__aot__ folder")
    assert run_aot("inspect", str(loose)).returncode == 0  # listing needs no sources
    assert_one_line_error(invoke("verify", str(project / "numkit" / "core.py")), "not an aot image")
    assert run_aot("clean", str(project)).returncode == 0
    assert_one_line_error(run_aot("verify", str(project)), "no aot images")
    usage = run_aot("verify")
    assert usage.returncode == 2 and "Missing argument 'PATH'" in usage.stderr


def test_a_configured_target_without_an_image_fails(project):
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('targets = ["cpu"]', 'targets = ["cpu", "ptx"]'))
    out = run_aot("verify", str(project))
    assert out.returncode == 1
    assert "numkit: no ptx image" in out.stdout


@BOTH
def test_every_path_kind(runner, project):
    image = project / "numkit" / "__aot__" / "numkit.cpu.aotimg"
    for path in (project, project / "numkit", image.parent, image):
        out = call(runner, "verify", str(path))
        assert out.returncode == 0, (path, out.stdout, out.stderr)


# ---------------------------------------------------------------------------------------------- --import


def test_import_check_passes_on_a_fresh_build(project):
    out = run_aot("verify", str(project), "--import")
    assert out.returncode == 0, out.stdout + out.stderr
    line = [x for x in out.stdout.splitlines() if x.startswith("import check (AOT_STRICT=1):")][0]
    assert "ran workload numkit._workload" in line and " 0 inferred, 0 cured" in line


def test_import_check_fails_on_inference(project):
    edit(project / "numkit" / "core.py", "SCALE = 2.0", "SCALE = 3.0")
    out = invoke("verify", str(project), "--import")
    assert out.returncode == 1
    assert "StrictModeError" in out.stdout and "numkit.core:scaled(f64)" in out.stdout
    assert "_workload.py:" in out.stdout  # where in the workload the inference happened
    assert "import check failed" in out.stdout


def test_import_check_fails_when_the_library_is_gone_even_if_entries_are_valid(project):
    (project / "numkit" / "__aot__" / "numkit.cpu.so").unlink()
    out = run_aot("verify", str(project), "--import")
    assert out.returncode == 1
    assert "import check failed" in out.stdout and "native-missing" in out.stdout
