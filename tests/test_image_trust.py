"""What a first call trusts an image and its library for, and what it checks (docs/TRUST.md, issue 23).

Each case rewrites a built copy of numkit with its checksums recomputed (``serializer.write_image``), so the
damage reaches past the CRCs, then calls in a fresh interpreter and compares with ``.py_func``:

    the library swapped between its checksum and dlopen       → the checked file is loaded
    another build's library, the header's checksum made to fit → not bound (native-other-build): cured
    a stored symbol naming another entry                      → changes nothing (the builtin is in the slot)
    two entries' argument types swapped                       → no slot names them: cured or compiled
    a header naming a library outside __aot__/                → never loaded (its constructor never runs)
    stored IR that passes its checksum but does not decode    → that entry compiles from source
    header fields of other types                              → the image is rejected with one warning
"""

from __future__ import annotations

import shutil
import subprocess
import textwrap
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack
import pytest

import serializer
from aot.image.entries import INDEXED_TABLES
from aot.image.header import build_identity
from buildsupport import FIXTURES, aot_build, copy_project, image_path, run_python, so_path


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    project = copy_project(FIXTURES / "numkit", tmp_path_factory.mktemp("trust") / "numkit")
    assert aot_build(project).rc == 0
    return project


@pytest.fixture(scope="module")
def other_build(tmp_path_factory) -> Path:
    """numkit with ``sqr`` returning ``x * x + 0.5``: the same entries in the same order, other code."""
    project = copy_project(FIXTURES / "numkit", tmp_path_factory.mktemp("trust") / "numkit")
    core = project / "numkit" / "core.py"
    core.write_text(core.read_text().replace("    return x * x\n", "    return x * x + 0.5\n"))
    assert aot_build(project).rc == 0
    return project


@pytest.fixture
def numkit(built, tmp_path) -> Path:
    return copy_project(built, tmp_path / "numkit", images=True)


def rewrite(project: Path, edit: Callable[[dict, dict], Any], identity: bool = False) -> None:
    """Rewrite numkit's image: ``edit(header, tables)`` changes them in place; checksums are recomputed
    (and with ``identity``, the build identity of the IR too: a forger's rewrite)."""
    path = image_path(project, "numkit")
    image = serializer.read_image(path)
    header, tables = dict(image.header), {k: v for k, v in image.tables.items()}
    edit(header, tables)
    if identity:
        header["build_id"] = build_identity(header["target"], [rec[0] for rec in tables["ir"]])
    serializer.write_image(path, header, tables, INDEXED_TABLES)


def code_index(tables: dict, method: str, argtypes: str) -> int:
    """The position of the code record of ``method(argtypes)`` (``argtypes`` as its signature text)."""
    ((keys, _, _, strings, _),) = tables["index"]
    position = keys.split("\n").index(method)
    return next(i for i, rec in enumerate(tables["code"]) if rec[0] == position and strings[rec[1]] == argtypes)


PROBE = """
    import numpy as np
    from numkit import core, stats, ntheory
    a = np.linspace(0.0, 1.0, 9)
    calls = [(core.sqr, (1.5,)), (core.sqr, (3,)), (core.hypot2, (3.0, 4.0)), (core.lerp, (0.0, 10.0, 0.25)),
             (core.lerp, (0, 10, 0.25)), (core.absdiff, (1.0, 3.5)), (core.absdiff, (3, 10)),
             (stats.std, (a,)), (stats.variance, (a,)), (ntheory.gcd, (84, 36))]
    r = [f(*args) for f, args in calls]
    p = [f.py_func(*args) for f, args in calls]
    report(r=r, p=p, types=[type(x).__name__ for x in r], ptypes=[type(x).__name__ for x in p],
           maps=[l.split()[-1] for l in open("/proc/self/maps") if l.rstrip().endswith(".so") and "numkit" in l])
"""


def assert_right(run) -> None:
    assert run["r"] == run["p"] and run["types"] == run["ptypes"], (run["r"], run["p"])
    assert "Traceback" not in run.stderr, run.stderr


# --------------------------------------------------------------------------------------- the library


def test_a_library_renamed_over_between_checksum_and_load_is_not_what_is_loaded(numkit, other_build):
    """A concurrent build's atomic rename in the window between the checksum and dlopen: the file that was
    checked is the one loaded (the path would name the other build's library by then)."""
    other = so_path(other_build, "numkit")
    run = run_python(
        numkit,
        textwrap.dedent(f"""
        import os
        import importlib
        loader = importlib.import_module("aot.runtime.loader")
        checksum = loader.crc32
        def racing_crc32(data):
            value = checksum(data)
            so = {str(so_path(numkit, "numkit"))!r}
            os.replace(so + ".new", so) if os.path.exists(so + ".new") else None
            return value
        import shutil
        shutil.copy({str(other)!r}, {str(so_path(numkit, "numkit"))!r} + ".new")
        loader.crc32 = racing_crc32
    """)
        + textwrap.dedent(PROBE),
    )
    assert_right(run)
    assert run["stats"]["loaded"] == len(run["events"]) and run["stats"]["cured"] == 0


def test_another_builds_library_with_the_checksum_made_to_fit_is_not_bound(numkit, other_build):
    other = so_path(other_build, "numkit").read_bytes()
    shutil.copy(so_path(other_build, "numkit"), so_path(numkit, "numkit"))

    def fit(header, tables):
        header["native"] = dict(header["native"], crc32=zlib.crc32(other), size=len(other))

    rewrite(numkit, fit)
    run = run_python(numkit, PROBE)
    assert_right(run)
    assert run["stats"]["loaded"] == 0 and {e["cause"] for e in run["events"]} == {"native-other-build"}


# ------------------------------------------------------------------------------------------ the slots


def test_a_symbol_naming_another_entry_runs_no_other_code(numkit):
    """``lerp(0, 10, 0.25)`` converts its ints and calls the specialization's builtin: its PyMethodDef
    comes from the entry's own slot, not from the stored symbol (here clamp's, which gives 0.25)."""

    def other_symbol(header, tables):
        lerp = code_index(tables, "numkit.core:lerp", "(f64, f64, f64)")
        clamp = code_index(tables, "numkit.core:clamp", "(f64, f64, f64)")
        tables["code"][lerp][5] = tables["code"][clamp][5]

    rewrite(numkit, other_symbol)
    run = run_python(numkit, PROBE)
    assert_right(run)
    assert run["stats"]["loaded"] == len(run["events"]) and not run.stderr.strip()


def test_entries_whose_argument_types_were_swapped_are_not_bound_to_each_others_code(numkit):
    def swap(header, tables):
        f = code_index(tables, "numkit.core:absdiff", "(f64, f64)")
        i = code_index(tables, "numkit.core:absdiff", "(i64, i64)")
        tables["code"][f][1], tables["code"][i][1] = tables["code"][i][1], tables["code"][f][1]

    rewrite(numkit, swap)
    run = run_python(numkit, PROBE)
    assert_right(run)
    absdiff = {e["cause"] for e in run["events"] if e["method"] == "numkit.core:absdiff"}
    assert absdiff and not {e["kind"] for e in run["events"] if e["method"] == "numkit.core:absdiff"} & {"loaded"}
    assert absdiff == {"ir-damaged"}, absdiff  # (no slot names them, and their IR is not theirs either)


# ------------------------------------------------------------------------------ a library elsewhere

CONSTRUCTOR = r"""
#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void ran(void) {
    const char *marker = getenv("AOT_TEST_MARKER");
    if (marker) { FILE *f = fopen(marker, "w"); if (f) { fputs("ran", f); fclose(f); } }
}
"""


@pytest.mark.parametrize("strict", [False, True])
def test_a_header_naming_a_library_outside_its_folder_is_never_loaded(numkit, tmp_path, strict):
    if shutil.which("cc") is None:
        pytest.skip("no cc")
    source = tmp_path / "evil.c"
    source.write_text(CONSTRUCTOR)
    evil = numkit.parent / "evil.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(evil), str(source)], check=True)
    data = evil.read_bytes()
    marker = tmp_path / "marker"

    def elsewhere(header, tables):
        header["native"] = {"file": "../../../evil.so", "crc32": zlib.crc32(data), "size": len(data)}

    rewrite(numkit, elsewhere)
    env = {"AOT_TEST_MARKER": str(marker), **({"AOT_STRICT": "1"} if strict else {})}
    run = run_python(
        numkit,
        """
        from numkit import core
        try:
            r = core.sqr(1.5)
        except _aot.StrictModeError as e:
            r = str(e)
        report(r=r)
    """,
        env=env,
    )
    assert not marker.exists(), "a library outside __aot__/ was loaded (its constructor ran)"
    assert (run["r"] == 2.25) if not strict else ("native.file" in run["r"]), run["r"]
    warnings = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(warnings) == 1 and "native.file" in warnings[0], run.stderr


# ------------------------------------------------------------------------------------------ stored IR


def _undecodable(index: int) -> Callable[[dict, dict], None]:
    def edit(header, tables):
        tables["ir"][index] = [msgpack.packb(["not", "a", "function"])]

    return edit


def _another_entrys(index: int, other: int) -> Callable[[dict, dict], None]:
    def edit(header, tables):
        tables["ir"][index] = tables["ir"][other]

    return edit


def _calls_nothing(index: int) -> Callable[[dict, dict], None]:
    """IR that decodes and fits its entry, but calls a method that does not exist: codegen fails."""

    def edit(header, tables):
        from aot.ir import Call, Return
        from aot.ir.function import Block
        from serializer.irformat import decode_function, encode_function

        fn = decode_function(tables["ir"][index][0])
        i, block = next((i, b) for i, b in enumerate(fn.blocks) if isinstance(b.ops[-1], Return) and b.ops[-1].value)
        ret = block.ops[-1]
        fn.blocks[i] = Block(
            block.label, block.ops[:-1] + [Call(ret.value, "numkit.nothing:here", (ret.value,), ret.span), ret]
        )
        tables["ir"][index] = [encode_function(fn)]

    return edit


IR_DAMAGE = {
    "undecodable": _undecodable,
    "another-entrys": lambda i: _another_entrys(i, 0),
    "does-not-compile": _calls_nothing,
}


@pytest.mark.parametrize("identity", [False, True], ids=["as-written", "identity-recomputed"])
@pytest.mark.parametrize("damage", sorted(IR_DAMAGE))
def test_stored_ir_that_passes_its_checksum_but_does_not_decode_or_compile_when_curing(numkit, damage, identity):
    """The library is gone, so entries are cured from their IR: an entry whose IR does not decode, is
    another entry's, or does not compile, is compiled from source instead, never a traceback. (Without the
    build identity recomputed, the IR table is found not to be its build's: the whole image is rejected.)"""

    def edit(header, tables):
        IR_DAMAGE[damage](code_index(tables, "numkit.core:sqr", "(f64)"))(header, tables)

    rewrite(numkit, edit, identity=identity)
    so_path(numkit, "numkit").unlink()
    run = run_python(numkit, PROBE)
    assert_right(run)
    sqr = [e for e in run["events"] if e["method"] == "numkit.core:sqr" and e["argtypes"] == ["f64"]]
    assert sqr and sqr[0]["kind"] == "inferred", run["events"]
    if identity:
        assert sqr[0]["cause"] == "ir-damaged", sqr
        if damage != "does-not-compile":  # (IR that failed to compile once is not used again)
            assert run["stats"]["cured"] >= 5  # (the other entries' IR is used)
    else:
        assert sqr[0]["cause"].startswith("image-incompatible:damaged"), sqr


@pytest.mark.parametrize("damage", sorted(IR_DAMAGE))
def test_stored_ir_of_a_valid_callee_that_does_not_decode_or_compile_when_seeding(numkit, damage):
    """std is edited, so it is reinferred; its callee variance is valid and would seed that inference from
    its stored IR: an IR that does not decode, is another's or does not compile is inferred from source."""

    def edit(header, tables):
        IR_DAMAGE[damage](code_index(tables, "numkit.stats:variance", "(f64[:])"))(header, tables)

    rewrite(numkit, edit, identity=True)
    stats = numkit / "numkit" / "stats.py"
    stats.write_text(
        stats.read_text().replace("    return math.sqrt(variance(a))\n", "    return math.sqrt(variance(a)) + 0.0\n")
    )
    run = run_python(numkit, PROBE)
    assert_right(run)
    std = [e for e in run["events"] if e["method"] == "numkit.stats:std"]
    assert std and std[0]["kind"] == "inferred" and std[0]["cause"] == "fingerprint-changed", std


# -------------------------------------------------------------------------------------------- header

HEADER_DAMAGE = {
    "native-a-list": lambda h: h.update(native=[h["native"]["file"]]),
    "native-file-an-int": lambda h: h.update(native=dict(h["native"], file=7)),
    "crc32-a-string": lambda h: h.update(native=dict(h["native"], crc32=str(h["native"]["crc32"]))),
    "target-a-string": lambda h: h.update(target="x86_64"),
    "features-an-int": lambda h: h.update(target=dict(h["target"], features=1)),
    "build-id-missing": lambda h: h.pop("build_id"),
    "python-a-bool": lambda h: h.update(python=True),
}


@pytest.mark.parametrize("damage", sorted(HEADER_DAMAGE))
def test_header_fields_of_another_type_reject_the_image_cleanly(numkit, damage):
    rewrite(numkit, lambda header, tables: HEADER_DAMAGE[damage](header))
    run = run_python(numkit, PROBE)
    assert_right(run)
    assert run["stats"]["loaded"] == 0 and run["stats"]["inferred"] == len(run["events"])
    assert all(e["cause"].startswith("image-incompatible:damaged: header field") for e in run["events"])
    warnings = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(warnings) == 1 and "header field" in warnings[0], run.stderr
    assert run["maps"] == [], "a library of a rejected image was loaded"
