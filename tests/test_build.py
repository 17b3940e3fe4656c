"""``aot build`` end to end: the image of fixtures/numkit, its tables, damage, reproducibility, concurrency,
failures, incremental rebuilds and configuration errors (README.md "Build", docs/CI.md; issue 3).

    aot build <copy of fixtures/numkit> --json
      → numkit/__aot__/numkit.cpu.aotimg + numkit.cpu.so; last stdout line {"built": 75, "reused": 0, ...}
    rm -rf numkit/__aot__ && aot build …   → the same bytes (also with --jobs 2, also in another folder)
    edit ntheory.gcd && aot build …        → built == gcd + its transitive callers, the rest reused

Every build runs the command line of this checkout in a subprocess; the packages built are imported only
in fresh interpreters (``buildsupport.run_python``), never in the test process.
"""

from __future__ import annotations

import os
import platform
import random
import re
import shutil
import sys
import zlib
from pathlib import Path

import pytest

import serializer
from aot.image.contents import ImageContents
from aot.image.entries import INDEXED_TABLES, slot_text
from aot.ir import parse_function, print_function
from aot.types import parse_type
from aot.world.fingerprint import COMPILER_VERSION, fingerprint_of
from aot.world.methods import MAX_WORLD
from buildsupport import (
    CALL_AND_REPORT,
    CALLS,
    CLI,
    COMPARE,
    FIXTURES,
    REPO,
    aot_build,
    aot_build_popen,
    aot_cli,
    base_env,
    callers_closure,
    copy_project,
    entries_of,
    image_contents,
    image_path,
    pyproject,
    readers_of,
    run_python,
    so_path,
    write_project,
)
from serializer.irformat import decode_function

SUMMARY_KEYS = {"built", "reused", "failed", "seconds", "images"}


def aot_files(project: Path, package: str = "numkit") -> dict[str, bytes]:
    """Every file ``aot build`` wrote for a package (the image, the shared libraries), by name."""
    folder = project / package / "__aot__"
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file() and not p.name.startswith(".")}


# ------------------------------------------------------------------------------------------ the cold build


@pytest.fixture(scope="module")
def cold(tmp_path_factory):
    """numkit built once, with ``--jobs 1 --json``: (project, the build's Done)."""
    project = copy_project(FIXTURES / "numkit", tmp_path_factory.mktemp("build") / "numkit")
    done = aot_build(project, "--jobs", "1", "--json", env=base_env({"PYTHONHASHSEED": "1"}))
    assert done.rc == 0, done.stderr
    return project, done


@pytest.fixture(scope="module")
def project(cold) -> Path:
    return cold[0]


@pytest.fixture(scope="module")
def image(project):
    return serializer.read_image(image_path(project, "numkit"))


@pytest.fixture(scope="module")
def contents(image) -> ImageContents:
    return ImageContents.from_tables(image.tables)


@pytest.fixture(scope="module")
def current(project):
    """What a fresh interpreter (with another hash seed) says about numkit's methods now."""
    run = run_python(
        project,
        """
        import numkit
        import numkit.arrays  # (not imported by the package)
        from aot.runtime import runtime
        from aot.world.fingerprint import definition, fingerprint
        rt = runtime()
        ours = {k: m for k, m in rt.table.methods.items() if k.startswith("numkit.")}
        report(fingerprints={k: fingerprint(m.py_func, m.options) for k, m in ours.items()},
               definitions={k: definition(m.py_func, m.options).hex() for k, m in ours.items()})
    """,
        env={"PYTHONHASHSEED": "4711"},
    )
    return run


def test_cold_build_summary(cold, contents):
    project, done = cold
    summary = done.summary
    assert set(summary) == SUMMARY_KEYS, "the --json line has exactly the keys docs/CI.md lists"
    assert type(summary["built"]) is int and type(summary["reused"]) is int and type(summary["failed"]) is int
    assert type(summary["seconds"]) is float and summary["seconds"] > 0
    assert summary["built"] == len(contents.code) >= 61 and summary["reused"] == 0 and summary["failed"] == 0
    assert [Path(p).resolve() for p in summary["images"]] == [image_path(project, "numkit").resolve()]
    assert re.search(rf"{summary['built']} built, 0 reused, 0 failed", done.stderr + done.stdout)


def test_image_and_library_are_written_beside_the_package(project):
    files = aot_files(project)
    assert "numkit.cpu.aotimg" in files and "numkit.cpu.so" in files
    assert files["numkit.cpu.so"][:4] == b"\x7fELF" or sys.platform == "darwin"
    assert not [p for p in (project / "numkit" / "__aot__").iterdir() if p.name.endswith(".tmp")]


def test_image_header(project, image):
    h = image.header
    assert h["compiler_version"] == COMPILER_VERSION
    assert h["python"] == f"{sys.implementation.cache_tag}-{sys.platform}"
    assert h["owner"] == "cpu" and h["package"] == "numkit"
    assert {"triple", "cpu", "features"} <= set(h["target"]) and h["target"]["cpu"] == "generic"
    so = so_path(project, "numkit").read_bytes()
    assert h["native"]["file"] == "numkit.cpu.so"
    assert h["native"]["crc32"] == zlib.crc32(so) and h["native"]["size"] == len(so)
    assert image_path(project, "numkit").read_bytes()[:8] == serializer.MAGIC


def test_methods_table_holds_every_method_with_its_fingerprint(image, current):
    methods = image.tables["methods"]
    keys = [rec[0] for rec in methods]
    assert keys == sorted(keys) and len(keys) == len(set(keys))
    stored = {rec[0]: rec[1] for rec in methods}
    now = current["fingerprints"]
    assert len(now) >= 61
    assert set(now) == set(stored), "every method of the package, and only those, has a record"
    assert stored == now, "fingerprints must be the same in every process (another hash seed here)"
    assert all(re.fullmatch(r"[0-9a-f]{16,64}", fp) for fp in stored.values())
    definitions = {rec[0]: rec[2] for rec in methods}
    assert {k: d.hex() for k, d in definitions.items()} == current["definitions"], (
        "what validation compares must be the same in every process too"
    )
    assert all(fingerprint_of(definitions[k]) == fp for k, fp in stored.items())


def test_code_entries(project, image, contents):
    so = so_path(project, "numkit").read_bytes()
    symbols = set()
    assert len(image.tables["code"]) == len(contents.code)
    for (method, argtypes), e in contents.code.items():
        where = f"{method}{argtypes}"
        assert method in contents.fingerprints, where
        assert e.owner == "cpu", where
        types = [parse_type(t) for t in argtypes]
        assert [str(t) for t in types] == list(argtypes), where
        assert str(parse_type(e.rettype)) == e.rettype, where
        assert e.min_world <= e.max_world == MAX_WORLD == 2**64 - 1, where
        assert e.state in ("valid-no-outside-edges", "needs-revalidation"), where
        assert (e.state == "valid-no-outside-edges") == (not e.edges), f"{where}: state must match its edges"
        for kind, target, value in e.edges:
            assert kind in ("call", "global", "lookup"), where
            assert re.fullmatch(r"[\w.]+:[\w.]+", target), (where, target)
            if kind == "call":  # value: the callee's argument types, as signature text "(f64, i64)"
                assert re.fullmatch(r"\(.*\)", value), (where, target, value)
        for callee in e.call_keys:
            assert callee in contents.code, f"{where} calls {callee}, which has no entry"
        assert e.symbol and e.symbol not in symbols, where
        symbols.add(e.symbol)
        for prefix in ("def_", "try_"):  # (its PyMethodDef is in the entry table too)
            assert f"{prefix}{e.symbol}".encode() not in so, f"{where}: bound through the entry table, not by name"
        assert slot_text(method, argtypes).encode() in so, f"{where}: no slot of the entry table names it"
        assert e.native_size > 0, f"{where}: no native size (from the object files' symbols)"
        fn = decode_function(e.ir)
        assert len(fn.params) == len(argtypes) and fn.return_type == parse_type(e.rettype), where
        assert not os.path.isabs(fn.file) and fn.file.startswith("numkit/"), (where, fn.file)
        text = print_function(fn)
        assert print_function(parse_function(text)) == text, f"{where}: IR print/parse round trip"


def test_entries_cover_declared_recorded_and_callee_specializations(contents):
    code = contents.code
    assert ("numkit.core:sqr", ("f64",)) in code and ("numkit.core:sqr", ("i64",)) in code  # signatures=
    assert ("numkit.core:clamp", ("f64", "f64", "f64")) in code  # annotations
    assert ("numkit.stats:minmax", ("f64[::1]",)) in code  # the workload
    assert ("numkit.core:weighted3", ("(f64, f64, f64)",)) in code
    assert ("numkit.stats:mean", ("f64[::1]",)) in code  # only reached by max_abs_dev's inference
    assert code[("numkit.core:clamp", ("f64", "f64", "f64"))].rettype == "f64"
    assert code[("numkit.stats:minmax", ("f64[::1]",))].rettype == "(f64, f64)"


def test_edges(contents):
    code = contents.code
    assert ("global", "numkit.core:EPS", 1e-12) in code[("numkit.core:almost_equal", ("f64", "f64"))].edges
    assert ("global", "numkit.core:WEIGHTS", [0.25, 0.5, 0.25]) in code[
        ("numkit.core:weighted3", ("(f64, f64, f64)",))
    ].edges
    even = code[("numkit.ntheory:is_even", ("i64",))]
    odd = code[("numkit.ntheory:is_odd", ("i64",))]
    assert ("numkit.ntheory:is_odd", ("i64",)) in set(even.call_keys)
    assert ("numkit.ntheory:is_even", ("i64",)) in set(odd.call_keys)
    assert set(code[("numkit.stats:std", ("f64[:]",))].call_keys) == {("numkit.stats:variance", ("f64[:]",))}
    assert code[("numkit.core:lerp", ("f64", "f64", "f64"))].edges == ()


def test_objects_group_each_modules_methods(project):
    # Object files live beside the image (for incremental builds), one per module or per group of
    # OBJECT_METHODS methods of a larger module, so that an edit recompiles a few methods only.
    from aot.builder.driver import OBJECT_METHODS

    cache = serializer.read_image(image_path(project, "numkit").with_suffix(".objects"))
    names = {m for m in ImageContents.from_tables(cache.tables).objects if m.startswith("numkit.")}
    assert {n.split("#")[0] for n in names} == {
        "numkit.arrays",
        "numkit.core",
        "numkit.ntheory",
        "numkit.roots",
        "numkit.stats",
        "numkit.stencil",
    }
    assert any("#" in n for n in names) and OBJECT_METHODS == 6


def test_objects_hold_each_methods_code_once_per_entry_point(project, contents):
    # The build's time goes to LLVM, about in proportion to the functions it optimises and emits: an object
    # keeps no separate copy of an implementation that its wrappers inlined (it is internal, not exported),
    # and the builtin's entry (fast_) calls the try-wrapper rather than holding a third copy of the code.
    from aot.builder.elf import symbol_sizes_of

    cache = serializer.read_image(image_path(project, "numkit").with_suffix(".objects"))
    sizes: dict[str, int] = {}
    for name, (_, obj) in ImageContents.from_tables(cache.tables).objects.items():
        if name.startswith("numkit."):
            sizes.update(symbol_sizes_of(obj))
    fast, tried = [], []
    for (method, argtypes), e in contents.code.items():
        where = f"{method}{argtypes}"
        assert e.symbol not in sizes, f"{where}: its implementation is exported from its object"
        assert f"vc_{e.symbol}" in sizes and f"try_{e.symbol}" in sizes, where
        fast.append(sizes[f"fast_{e.symbol}"])
        tried.append(sizes[f"try_{e.symbol}"])
    assert max(fast) <= 96 < max(tried), "fast_ is a call of try_, whatever the method's size"


def test_image_reads_back_identically(project, image):
    path = image_path(project, "numkit")
    again = serializer.read_image(path)
    assert again.header == image.header and again.tables == image.tables
    assert serializer.encode_image(image.header, image.tables, INDEXED_TABLES) == path.read_bytes()
    assert serializer.read_header(path) == image.header
    assert ImageContents.from_tables(image.tables).to_tables() == image.tables


# --------------------------------------------------------------------------------------------- damage


def _damaged(data: bytes, how: str, rng: random.Random) -> bytes:
    if how.startswith("truncated-"):
        return data[: int(how.split("-")[1]) if how.split("-")[1] != "half" else len(data) // 2]
    if how in ("flip-code", "flip-index"):  # in a table the first call of any method reads
        offset = sum(serializer.ImageFile.from_bytes(data).span(how.split("-")[1])) // 2
        return data[:offset] + bytes([data[offset] ^ 0x10]) + data[offset + 1 :]
    if how.startswith("flip-"):
        offset = {
            "magic": 3,
            "version": 9,
            "lengths": 14,
            "digest": 40,
            "header": serializer.PREAMBLE_SIZE + 3,
            "body": len(data) // 2,
            "last": len(data) - 1,
        }[how.split("-")[1]]
        out = bytearray(data)
        out[offset] ^= 0x10
        return bytes(out)
    if how == "random":
        return bytes(rng.getrandbits(8) for _ in range(len(data)))
    if how == "random-after-magic":
        return data[:12] + bytes(rng.getrandbits(8) for _ in range(len(data) - 12))
    if how == "wrong-magic":
        return b"\x89AOTIMX\n" + data[8:]
    if how == "elf":
        return b"\x7fELF\x02\x01\x01\x00" + data[8:]
    if how == "newer-version":
        return data[:8] + (serializer.FORMAT_VERSION + 1).to_bytes(4, "little") + data[12:]
    if how == "trailing":
        return data + b"\0"
    raise AssertionError(how)


DAMAGE = {
    "truncated-0": "truncated",
    "truncated-5": "truncated",
    "truncated-60": "truncated",
    f"truncated-{serializer.PREAMBLE_SIZE + 7}": "truncated",
    "truncated-half": "truncated",
    "flip-magic": "bad-magic",
    "flip-version": "format-version",
    "flip-lengths": ("truncated", "corrupt"),
    "flip-digest": "corrupt",
    "flip-header": "corrupt",
    "flip-body": "corrupt",
    "flip-last": "corrupt",
    "random": "bad-magic",
    "random-after-magic": ("truncated", "corrupt"),
    "wrong-magic": "bad-magic",
    "elf": "bad-magic",
    "newer-version": "format-version",
    "trailing": "corrupt",
}


@pytest.mark.parametrize("how", sorted(DAMAGE))
def test_damaged_image_is_rejected_by_read_image(project, tmp_path, how):
    data = image_path(project, "numkit").read_bytes()
    bad = tmp_path / "numkit.cpu.aotimg"
    bad.write_bytes(_damaged(data, how, random.Random(how)))
    with pytest.raises(serializer.ImageError) as info:
        serializer.read_image(bad)
    kinds = DAMAGE[how] if isinstance(DAMAGE[how], tuple) else (DAMAGE[how],)
    assert info.value.kind in kinds, (how, info.value.kind, str(info.value))
    assert str(bad) in str(info.value), "the error names the file"
    if how == "newer-version":
        assert "newer" in str(info.value)


def test_every_sampled_byte_flip_is_caught(project, tmp_path):
    data = image_path(project, "numkit").read_bytes()
    rng = random.Random(20240601)
    bad = tmp_path / "x.aotimg"
    for offset in sorted(rng.sample(range(len(data)), 150)):
        out = bytearray(data)
        out[offset] ^= 1 << rng.randrange(8)
        bad.write_bytes(bytes(out))
        with pytest.raises(serializer.ImageError):
            serializer.read_image(bad)


IMPORT_PROBE = """
    from numkit import core, ntheory, stats
    import numpy as np
    a = np.linspace(0.0, 1.0, 9)
    r = [core.hypot2(3.0, 4.0), ntheory.gcd(84, 36), ntheory.is_odd(9), stats.std(a)]
    st = _aot.stats()
    p = [core.hypot2.py_func(3.0, 4.0), ntheory.gcd.py_func(84, 36), ntheory.is_odd.py_func(9),
         stats.std.py_func(a)]
    report(r=r, p=p, stats=st)
"""


@pytest.mark.parametrize("how", ["truncated-half", "flip-code", "flip-index", "random", "wrong-magic", "newer-version"])
def test_damaged_image_is_rejected_at_import_with_one_warning(project, tmp_path, how):
    copy = copy_project(project, tmp_path / "numkit", images=True)
    path = image_path(copy, "numkit")
    path.write_bytes(_damaged(path.read_bytes(), how, random.Random(how)))
    run = run_python(copy, IMPORT_PROBE)
    assert run["r"][:3] == run["p"][:3] == [25.0, 12, True]
    assert run["r"][3] == pytest.approx(run["p"][3], rel=1e-12)
    assert run["stats"]["loaded"] == 0 and run["stats"]["cured"] == 0 and run["stats"]["inferred"] == 4
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "numkit.cpu.aotimg" in lines[0], run.stderr


# ---------------------------------------------------------------------------------------- reproducibility


def test_rebuild_after_removing_the_images_is_byte_identical(project, tmp_path):
    """``rm -rf __aot__`` and build again (here in another folder, so the path must not matter either, and
    with another string hash seed)."""
    before = aot_files(project)
    again = copy_project(project, tmp_path / "again", images=True)
    shutil.rmtree(again / "numkit" / "__aot__")
    done = aot_build(again, "--json", env=base_env({"PYTHONHASHSEED": "2"}))
    assert done.rc == 0 and done.summary["built"] == len(image_contents(project, "numkit").code), done.stderr
    assert aot_files(again) == before


def test_jobs_2_gives_the_same_bytes_as_jobs_1(project, tmp_path):
    before = aot_files(project)
    other = copy_project(FIXTURES / "numkit", tmp_path / "a-longer-folder-name" / "numkit")
    done = aot_build(other, "--jobs", "2", "--json", env=base_env({"PYTHONHASHSEED": "3"}))
    assert done.rc == 0, done.stderr
    assert aot_files(other) == before


EARLY_FILES = {
    "pyproject.toml": pyproject("early"),
    "early/__init__.py": "from . import a, b, c\n",
    "early/a.py": """\
        import aot

        @aot.jit(signatures=["f64(f64)"])
        def scale(x):
            return x * 2
        """,
    "early/b.py": """\
        import aot
        from . import a

        @aot.jit
        def twice(n: int) -> int:
            return a.scale(n) + a.scale(n + 1)  # scale(i64): an instance of a.py's methods found only now
        """,
    "early/c.py": """\
        import aot

        @aot.jit
        def half(x: float) -> float:
            return x / 2.0
        """,
}

EARLY_PROBE = """
from aot.builder.driver import build_project
counts = []
for _ in range(2):
    r = build_project(PROJECT, jobs=2)
    counts.append([r.objects_built, r.objects_early, r.failed])
report(counts=counts)
"""


@pytest.mark.parametrize("variants", [None, '["x86-64-v2", "x86-64-v3"]'])
def test_jobs_2_compiles_while_inferring_and_gives_the_same_bytes(tmp_path, variants):
    # With workers, a module's objects are sent to them as soon as its last root is inferred; b.py then adds
    # an instance to a.py's object, so a.py's early job is not the final one and is made again.
    files = dict(EARLY_FILES)
    if variants is not None:
        if platform.machine() not in ("x86_64", "AMD64"):
            pytest.skip("the variants offered are x86-64 levels")
        files["pyproject.toml"] += f"\n[tool.aot.cpu]\nvariants = {variants}\n"
    project = write_project(tmp_path / "two" / "early", files)
    run = run_python(project, EARLY_PROBE.replace("PROJECT", repr(str(project))))
    (built, early, failed), (rebuilt, early_again, _) = run["counts"]
    assert failed == 0 and built == 4, "a, b, c and the runtime object"
    assert early == 1, "b's early job is taken; a's is not its final one; c (the last module) is sent at the end"
    assert rebuilt == early_again == 0, "nothing changed: nothing built, nothing sent early"
    alone = write_project(tmp_path / "one" / "early", files)
    done = aot_build(alone, "--jobs", "1", "--json")
    assert done.rc == 0, done.stderr
    assert aot_files(alone, "early") == aot_files(project, "early")
    out = run_python(project, "import early; report(r=[early.b.twice(3), early.a.scale(1.5)])")
    assert out["r"] == [14, 3.0] and out["stats"]["loaded"] == 2


def test_no_absolute_path_of_the_build_machine_in_the_outputs(project):
    needles = {str(project), str(project.parent), str(project.resolve()), str(REPO), "pytest-of-"}
    if len(Path.home().parts) > 1:
        needles.add(str(Path.home()) + os.sep)
    for name, data in aot_files(project).items():
        for needle in needles:
            assert needle.encode() not in data, f"{name} contains {needle!r}"


# ---------------------------------------------------------------------------------------------- concurrency


def test_two_concurrent_builds_leave_a_valid_image(tmp_path):
    project = copy_project(FIXTURES / "numkit", tmp_path / "numkit")
    first = aot_build_popen(project, "--json")
    second = aot_build_popen(project, "--json")
    outs = [p.communicate(timeout=300) for p in (first, second)]
    for p, (_, err) in zip((first, second), outs):
        assert p.returncode == 0, err
    summaries = [__import__("json").loads(out.strip().splitlines()[-1]) for out, _ in outs]
    entries = len(image_contents(project, "numkit").code)
    assert all(s["built"] + s["reused"] == entries and s["failed"] == 0 for s in summaries)
    image = serializer.read_image(image_path(project, "numkit"))
    assert image.header["native"]["crc32"] == zlib.crc32(so_path(project, "numkit").read_bytes())
    assert not [p.name for p in (project / "numkit" / "__aot__").iterdir() if p.name.endswith(".tmp")]
    run = run_python(project, CALLS + COMPARE + CALL_AND_REPORT, env={"AOT_STRICT": "1"})
    assert run["stats"]["inferred"] == 0 and run["stats"]["loaded"] >= 60 and run["mismatches"] == []


def test_what_a_killed_build_leaves_behind_the_next_build_removes(tmp_path):
    """Issue #23: a build killed (SIGKILL: no cleanup runs) while linking leaves its link folder in the
    temporary directory, and one killed while writing leaves a ``.*.tmp`` file in ``__aot__`` (which would
    travel in a wheel). The next build removes both once their process is gone; never the work of a process
    still running: a link folder needs a dead owner and an hour of age, a temporary file a dead writer or ten
    minutes of age (the build holds the folder's lock while it looks)."""
    import signal
    import subprocess
    import time

    project = write_project(tmp_path / "fp", GOODPKG)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    mark = tmp_path / "linking"
    slow_cc = tmp_path / "slow-cc.sh"
    slow_cc.write_text(f"#!/bin/sh\ntouch '{mark}'\nexec sleep 120\n")
    killed = subprocess.Popen(
        [sys.executable, "-c", CLI, "build", str(project)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env=base_env({"TMPDIR": str(tmp), "CC": f"sh {slow_cc}"}),
    )
    try:
        deadline = time.monotonic() + 240
        while not mark.exists() and killed.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert mark.exists(), "the build never reached the link step"
    finally:
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait()
    left = list(tmp.glob("aot-link-*"))
    assert [p.name.startswith(f"aot-link-{killed.pid}-") for p in left] == [True], left
    dead, alive = killed.pid, os.getpid()
    hours_ago = time.time() - 2 * 3600

    def planted(path: Path, old: bool) -> Path:
        path.mkdir() if path.suffix != ".tmp" else path.write_bytes(b"half an image")
        if old:
            os.utime(path, (hours_ago, hours_ago))
        return path

    os.utime(left[0], (hours_ago, hours_ago))
    folder = project / "failpkg" / "__aot__"
    folder.mkdir(exist_ok=True)
    gone = [
        left[0],
        planted(folder / f".failpkg.cpu.aotimg.{dead}.0123abcd.tmp", old=False),
        planted(folder / f".failpkg.cpu.so.{alive}.89abcdef.tmp", old=True),
    ]
    kept = [
        planted(tmp / f"aot-link-{dead}-young", old=False),
        planted(tmp / f"aot-link-{alive}-running", old=True),
        planted(folder / f".failpkg.cpu.so.{alive}.01234567.tmp", old=False),
    ]
    done = aot_build(project, env=base_env({"TMPDIR": str(tmp)}))
    assert done.rc == 0, done.stderr[-2000:]
    assert [p for p in gone if p.exists()] == []
    assert [p for p in kept if not p.exists()] == []
    assert sorted(p.name for p in tmp.glob("aot-link-*")) == sorted(p.name for p in kept if p.parent == tmp)


# ------------------------------------------------------------------------------------------ failing methods

FAILPKG = {
    "pyproject.toml": pyproject("failpkg"),
    "failpkg/__init__.py": "from . import bad, good\n",
    "failpkg/good.py": """\
        import aot


        @aot.jit
        def add(x: float, y: float) -> float:
            return x + y
        """,
    "failpkg/bad.py": """\
        import aot


        @aot.jit
        def twice(x: float) -> float:
            return 2.0 * x


        @aot.jit
        def broken(n: int) -> int:
            total = 0
            try:
                total = n + 1
            except ValueError:
                total = 0
            return total
        """,
}


GOODPKG = {name: text for name, text in FAILPKG.items() if name != "failpkg/bad.py"}
GOODPKG["failpkg/__init__.py"] = "from . import good\n"


def test_a_failing_method_is_reported_and_the_rest_still_build(tmp_path):
    project = write_project(tmp_path / "fp", FAILPKG)
    done = aot_build(project, "--json")
    assert done.rc == 1
    bad = (project / "failpkg" / "bad.py").resolve()
    line = bad.read_text().splitlines().index("    try:") + 1
    errors = [s for s in done.stderr.splitlines() if ": error: " in s]
    assert len(errors) == 1, done.stderr
    assert re.match(rf"(.*[/\\])?failpkg[/\\]bad\.py:{line}:5: error: .*try", errors[0]), errors[0]
    assert done.summary["failed"] == 1 and done.summary["built"] == 2
    assert len(done.summary["images"]) == 1
    contents = image_contents(project, "failpkg")
    assert set(contents.code) == {("failpkg.good:add", ("f64", "f64")), ("failpkg.bad:twice", ("f64",))}
    run = run_python(
        project,
        """
        from failpkg import good, bad
        report(r=[good.add(1.0, 2.0), bad.twice(4.0), bad.broken.py_func(1)])
    """,
        env={"AOT_STRICT": "1"},
    )
    assert run["r"] == [3.0, 8.0, 2] and run["stats"]["loaded"] == 2


def test_strict_build_with_a_failing_method_writes_nothing(tmp_path):
    project = write_project(tmp_path / "fp", FAILPKG)
    done = aot_build(project, "--strict", "--json")
    assert done.rc == 1
    assert any(": error: " in s for s in done.stderr.splitlines())
    assert done.summary["failed"] == 1 and done.summary["images"] == []
    folder = project / "failpkg" / "__aot__"
    assert not folder.exists() or not [p for p in folder.iterdir() if not p.name.startswith(".")]


def test_strict_build_with_a_failing_method_keeps_the_previous_image(tmp_path):
    project = write_project(tmp_path / "fp", GOODPKG)
    assert aot_build(project).rc == 0
    before = aot_files(project, "failpkg")
    write_project(project, {name: FAILPKG[name] for name in ("failpkg/__init__.py", "failpkg/bad.py")})
    done = aot_build(project, "--strict")
    assert done.rc == 1
    assert aot_files(project, "failpkg") == before


# ------------------------------------------------------------------------------------------- incremental


@pytest.fixture
def built_copy(project, tmp_path) -> Path:
    return copy_project(project, tmp_path / "numkit", images=True)


def test_no_change_rebuild_reuses_everything(built_copy, contents):
    before = aot_files(built_copy)
    done = aot_build(built_copy, "--json")
    assert done.rc == 0, done.stderr
    assert done.summary["built"] == 0 and done.summary["reused"] == len(contents.code)
    assert aot_files(built_copy) == before


def _changed_entries(old: ImageContents, new: ImageContents) -> set:
    return {
        k
        for k in old.code
        if k not in new.code or old.code[k].ir != new.code[k].ir or old.code[k].edges != new.code[k].edges
    }


@pytest.mark.parametrize(
    "method, module, old, new",
    [
        ("numkit.ntheory:gcd", "ntheory", "        a, b = b, a % b\n", "        a, b = b, a - (a // b) * b\n"),
        ("numkit.core:sqr", "core", "    return x * x\n", "    return x * x + 0\n"),
    ],
)
def test_editing_one_method_rebuilds_exactly_it_and_its_callers(built_copy, contents, method, module, old, new):
    path = built_copy / "numkit" / f"{module}.py"
    text = path.read_text()
    assert text.count(old) == 1
    path.write_text(text.replace(old, new))
    expected = callers_closure(contents, entries_of(contents, method))
    done = aot_build(built_copy, "--json")
    assert done.rc == 0, done.stderr
    assert done.summary["built"] == len(expected), f"expected to rebuild {sorted(expected)}"
    assert done.summary["reused"] == len(contents.code) - len(expected)
    after = image_contents(built_copy, "numkit")
    assert set(after.code) == set(contents.code)
    assert _changed_entries(contents, after) <= expected
    assert after.fingerprints[method] != contents.fingerprints[method]
    reached = {k[0].split(":")[0] for k in expected}
    for name, (key, obj) in contents.objects.items():
        if name.startswith("numkit.") and name not in reached:
            assert after.objects[name] == (key, obj), f"the object of {name} should have been reused"
    run = run_python(built_copy, CALLS + COMPARE + CALL_AND_REPORT, env={"AOT_STRICT": "1"})
    assert run["stats"]["inferred"] == 0 and run["mismatches"] == []


def test_editing_a_module_constant_rebuilds_exactly_its_readers(built_copy, contents):
    path = built_copy / "numkit" / "core.py"
    path.write_text(path.read_text().replace("EPS = 1e-12\n", "EPS = 1e-9\n"))
    readers = readers_of(contents, "numkit.core:EPS")
    expected = callers_closure(contents, readers)
    done = aot_build(built_copy, "--json")
    assert done.rc == 0, done.stderr
    assert done.summary["built"] == len(expected) and done.summary["reused"] == len(contents.code) - len(expected)
    after = image_contents(built_copy, "numkit")
    assert _changed_entries(contents, after) == readers, "exactly the readers fold in the new value"
    for key in readers:
        assert ("global", "numkit.core:EPS", 1e-9) in after.code[key].edges


def test_incremental_rebuild_equals_a_clean_build(built_copy, contents, tmp_path):
    """After edits (a method and a constant), the incremental image and libraries are byte for byte those of
    a build from scratch of the same sources."""
    ntheory = built_copy / "numkit" / "ntheory.py"
    ntheory.write_text(ntheory.read_text().replace("        a, b = b, a % b\n", "        a, b = b, a - (a // b) * b\n"))
    core = built_copy / "numkit" / "core.py"
    core.write_text(core.read_text().replace("EPS = 1e-12\n", "EPS = 1e-9\n"))
    incremental = aot_build(built_copy, "--json")
    assert incremental.rc == 0 and 0 < incremental.summary["built"] < len(contents.code) // 2, incremental.stdout
    clean = copy_project(built_copy, tmp_path / "clean")
    assert aot_build(clean).rc == 0
    assert aot_files(built_copy) == aot_files(clean)


def test_incremental_rebuild_fails_like_a_clean_build_when_a_tuple_constant_becomes_a_list(built_copy):
    core = built_copy / "numkit" / "core.py"
    core.write_text(core.read_text().replace("WEIGHTS = (0.25, 0.5, 0.25)\n", "WEIGHTS = [0.25, 0.5, 0.25]\n"))
    done = aot_build(built_copy, "--json")
    assert done.rc == 1 and done.summary["failed"] == 3, (done.summary, done.stderr)
    assert "'WEIGHTS' is a list" in done.stderr


@pytest.mark.parametrize("damage", ["foreign-compiler-version", "truncated", "library-deleted"])
def test_a_rebuild_over_a_foreign_or_damaged_previous_output(built_copy, project, damage):
    path = image_path(built_copy, "numkit")
    if damage == "foreign-compiler-version":
        old = serializer.read_image(path)
        serializer.write_image(path, dict(old.header, compiler_version="0.0.1-other"), old.tables)
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[:1000])
    else:
        so_path(built_copy, "numkit").unlink()
    done = aot_build(built_copy, "--json")
    assert done.rc == 0, done.stderr
    entries = len(image_contents(project, "numkit").code)
    if damage == "library-deleted":  # the entries and object files in the image are still good: relink only
        assert done.summary["built"] == 0 and done.summary["reused"] == entries
    else:  # nothing of another compiler's (or a damaged) image is reused
        assert done.summary["built"] == entries and done.summary["reused"] == 0
    assert aot_files(built_copy) == aot_files(project)


# ---------------------------------------------------------------------------------------- errors of usage


@pytest.mark.parametrize(
    "toml, key",
    [
        ('[tool.aot]\npackages = ["failpkg"]\n\n[tool.aot.cpu]\nopt = 7\n', "[tool.aot.cpu] opt"),
        ('[tool.aot]\npackages = ["failpkg"]\ntargets = ["gpu"]\n', "[tool.aot] targets"),
        ('[tool.aot]\npakages = ["failpkg"]\n', "pakages"),
        ('[tool.aot]\npackages = "failpkg"\n', "[tool.aot] packages"),
        ('[tool.aot]\npackages = ["failpkg"]\n\n[tool.aot.cpu]\ncpu = "x86-64-v99"\n', "[tool.aot.cpu] cpu"),  # (#23)
    ],
)
def test_configuration_error_exits_2_naming_key_and_file(tmp_path, toml, key):
    project = write_project(tmp_path / "fp", FAILPKG)
    (project / "pyproject.toml").write_text('[project]\nname = "failpkg"\n\n' + toml)
    done = aot_build(project, "--json")
    assert done.rc == 2, (done.stdout, done.stderr)
    assert key in done.stderr and str((project / "pyproject.toml").resolve()) in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not (project / "failpkg" / "__aot__").exists()


def test_a_configured_package_that_does_not_exist_exits_2(tmp_path):
    project = write_project(tmp_path / "fp", GOODPKG)
    (project / "pyproject.toml").write_text('[project]\nname = "failpkg"\n\n[tool.aot]\npackages = ["nosuchpkg"]\n')
    done = aot_build(project)
    assert done.rc == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "nosuchpkg" in done.stderr and "packages" in done.stderr and "pyproject.toml" in done.stderr


def test_a_package_that_fails_to_import_is_one_clear_error(tmp_path):
    project = write_project(tmp_path / "fp", dict(FAILPKG, **{"failpkg/bad.py": "import aot\n\ndef broken(:\n"}))
    done = aot_build(project)
    assert done.rc == 1, done.stderr[-2000:]
    assert re.search(r'bad\.py(:|", line )3\b', done.stderr) and "SyntaxError" in done.stderr
    assert "driver.py" not in done.stderr and "click" not in done.stderr, done.stderr[-2000:]
    assert not image_path(project, "failpkg").exists()


def test_a_package_that_calls_sys_exit_at_import_is_one_clear_error(tmp_path):
    """Issue #23: ``sys.exit(3)`` in a module of the package ended the build with status 3 and no word."""
    project = write_project(
        tmp_path / "fp",
        dict(
            GOODPKG,
            **{"failpkg/__init__.py": "from . import good, quits\n", "failpkg/quits.py": "import sys\n\nsys.exit(3)\n"},
        ),
    )
    done = aot_build(project)
    assert done.rc == 1, (done.rc, done.stderr[-2000:])
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert re.search(r"quits\.py:3: error: importing failpkg\.quits called sys\.exit\(3\)\Z", lines[0]), lines[0]
    assert not image_path(project, "failpkg").exists()


def test_an_aot_file_where_the_output_folder_goes_is_one_clear_error(tmp_path):
    """Issue #23: a file named ``__aot__`` in the package ended the build in a FileExistsError traceback."""
    project = write_project(tmp_path / "fp", GOODPKG)
    blocker = project / "failpkg" / "__aot__"
    blocker.write_text("not a folder\n")
    done = aot_build(project)
    assert done.rc == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and str(blocker.resolve()) in lines[0] and "not a folder" in lines[0], lines
    assert blocker.read_text() == "not a folder\n"


def test_missing_project_file_exits_2(tmp_path):
    done = aot_build(tmp_path / "nowhere")
    assert done.rc == 2 and "pyproject.toml" in done.stderr and "Traceback" not in done.stderr


def test_missing_linker_is_a_clear_error(tmp_path):
    project = write_project(tmp_path / "fp", GOODPKG)
    done = aot_cli("build", str(project), env=base_env({"CC": "aot-test-no-such-cc"}))
    assert done.rc != 0 and "Traceback" not in done.stderr
    assert "aot-test-no-such-cc" in done.stderr and re.search(r"install|set CC", done.stderr), done.stderr
    assert not image_path(project, "failpkg").exists()


def test_array_returning_entries_load_in_strict_mode_without_llvmlite(project):
    """numkit.arrays returns new arrays and tuples holding them: ordinary entries, bound with no llvmlite, and
    the memory they return stays valid and is freed when Python drops it."""
    run = run_python(
        project,
        """
        import gc, tracemalloc
        import numpy as np
        from numkit import arrays
        a = np.linspace(-1.0, 2.0, 16)
        got = dict(
            centered=arrays.centered(a),
            outer=arrays.outer(a, a[::-1]),
            rescaled=arrays.rescaled(a),
            squares=arrays.squares(5),
        )
        want = dict(
            centered=arrays.centered.py_func(a),
            outer=arrays.outer.py_func(a, a[::-1]),
            rescaled=arrays.rescaled.py_func(a),
            squares=arrays.squares.py_func(5),
        )
        def norm(x):
            if isinstance(x, tuple):
                return [norm(i) for i in x]
            return [x.dtype.str, x.tolist()] if isinstance(x, np.ndarray) else float(x)
        ok = {k: norm(got[k]) == norm(want[k]) for k in got}
        same = arrays.scale_in_place(a, 2.0)
        shares = bool(np.shares_memory(same, a))
        tracemalloc.start()
        arrays.outer(a, a)
        start = tracemalloc.get_traced_memory()[0]
        for _ in range(200):
            arrays.outer(a, a), arrays.rescaled(a), arrays.moving_average(a, 4)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - start
        report(ok=ok, shares=shares, grown=grown, dtype=str(got["squares"].dtype))
        """,
        env={"AOT_STRICT": "1"},
    )
    assert run["stats"]["inferred"] == 0 and run["stats"]["loaded"] >= 5 and not run["llvmlite"], run
    assert all(run["ok"].values()) and run["shares"] and run["dtype"] == "int64", run
    assert run["grown"] < 32 * 1024, run
