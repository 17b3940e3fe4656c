"""``aot inspect`` and ``aot clean`` on a built copy of numkit, through the console script and CliRunner."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess

import pytest

import serializer
from aot.builder.elf import ElfError, symbol_sizes, symbol_sizes_of
from aot.image.contents import ImageContents
from aot.tools.report import Style, signature
from aot.world.fingerprint import COMPILER_VERSION
from cli_support import (
    aot_command,
    assert_one_line_error,
    build_copy,
    clean_env,
    copy_built,
    invoke,
    run_aot,
    schema_problems,
)

BOTH = pytest.mark.parametrize("runner", ["subprocess", "clirunner"])


def call(runner: str, *args: str):
    return run_aot(*args) if runner == "subprocess" else invoke(*args)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return build_copy(tmp_path_factory.mktemp("inspect") / "numkit")


@pytest.fixture(scope="module")
def image_path(built):
    return built / "numkit" / "__aot__" / "numkit.cpu.aotimg"


@pytest.fixture(scope="module")
def doc(built):
    proc = run_aot("inspect", str(built), "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def entries_of(doc):
    return [e for image in doc["images"] for e in image["entries"]]


# ---------------------------------------------------------------------------------------------- the table


@BOTH
def test_table_lists_every_entry_with_aligned_columns(runner, built, doc):
    out = call(runner, "inspect", str(built))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    heading = lines[0]
    assert re.match(
        r"\S*numkit\.cpu\.aotimg: cpu \S+ \(generic\), aot "
        + re.escape(COMPILER_VERSION)
        + r", cpython-\S+, \d+ entries\Z",
        heading,
    ), heading
    entries = entries_of(doc)
    assert heading.endswith(f", {len(entries)} entries")
    header = lines[1]
    assert header.split() == ["method", "signature", "owner", "world", "edges", "native"]
    rows = lines[2:]
    assert len(rows) == len(entries)
    owner_col = header.index("owner")
    for row, entry in zip(rows, entries):
        assert row.split()[0] == entry["method"]
        assert row[owner_col : owner_col + 3] == "cpu", row  # every column starts where its heading does
        assert "1..∞" in row or "1..open" in row
        assert re.search(r"\d+ B\Z", row), row  # the native size, right-aligned at the end
    assert "\x1b[" not in out.stdout  # no colour when stdout is not a terminal


def test_table_abbreviates_long_signatures_and_json_keeps_them(built, doc):
    out = run_aot("inspect", str(built))
    solve = [line for line in out.stdout.splitlines() if "numkit.stencil:jacobi_solve" in line]
    assert len(solve) == 1
    assert "…+2) → f64" in solve[0] or "...+2) -> f64" in solve[0], solve[0]
    full = [e for e in entries_of(doc) if e["method"] == "numkit.stencil:jacobi_solve"][0]
    assert full["argtypes"] == ["f64[:, :]", "f64[:, :]", "f64[:, :]", "f64", "i64"]


def test_signature_abbreviation_rules():
    style = Style(unicode=False)
    assert signature(("f64", "f64"), "f64", 40, style) == "(f64, f64) -> f64"
    short = signature(tuple(["f64[:, :]"] * 6), "none", 40, style)
    assert len(short) <= 40 and short.endswith("...+4) -> none"), short
    assert signature(("a" * 50,), "f64", 20, style) == "(" + "a" * 50 + ") -> f64"  # one type is never cut


def test_table_is_coloured_on_a_terminal(built):
    pty = pytest.importorskip("pty")
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [*aot_command(), "inspect", str(built), "--verify"],
        stdout=slave,
        stderr=subprocess.PIPE,
        env=clean_env(),
        stdin=subprocess.DEVNULL,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the terminal's other side is closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(timeout=120) == 0, proc.stderr.read()
    text = b"".join(chunks).decode()
    assert "\x1b[32mvalid" in text and "\x1b[0m" in text


@BOTH
def test_path_kinds_all_name_the_same_image(runner, built, image_path):
    for path in (built, built / "pyproject.toml", built / "numkit", image_path.parent, image_path):
        out = call(runner, "inspect", str(path), "--json")
        assert out.returncode == 0, (path, out.stderr)
        images = json.loads(out.stdout)["images"]
        assert [i["path"] for i in images] == [str(image_path.resolve())], path


# ---------------------------------------------------------------------------------------------- JSON


def test_json_matches_the_spec_schema(doc):
    assert schema_problems(doc) == []
    assert "status" not in entries_of(doc)[0]
    image = doc["images"][0]
    assert image["owner"] == "cpu" and image["target"]["cpu"] == "generic"
    entries = entries_of(doc)
    assert len(entries) >= 60
    assert all(e["max_world"] == 2**64 - 1 for e in entries)
    assert all(e["native_bytes"] > 0 for e in entries)  # from the library's ELF symbol table
    byname = {(e["method"], tuple(e["argtypes"])): e for e in entries}
    scaled = byname[("numkit.core:scaled", ("f64",))]
    assert {"kind": "global", "target": "numkit.core:SCALE", "value": 2.0} in scaled["edges"]
    variance = byname[("numkit.stats:variance", ("f64[:]",))]
    assert {"kind": "call", "target": "numkit.stats:mean", "value": "(f64[:])"} in variance["edges"]


@BOTH
def test_json_with_verify_has_status(runner, built):
    out = call(runner, "inspect", str(built), "--json", "--verify")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)  # exactly one JSON object on stdout
    assert schema_problems(doc, verify=True) == []
    assert {e["status"] for e in entries_of(doc)} == {"valid"}


def test_schema_checker_catches_mistakes(doc):
    bad = copy.deepcopy(doc)
    entry = bad["images"][0]["entries"][0]
    entry["max_world"] = -1
    del entry["symbol"]
    bad["images"][0]["extra"] = 1
    bad["images"][0]["entries"][1]["edges"].append({"kind": "nonsense", "target": ""})
    problems = schema_problems(bad)
    assert any("missing ['symbol']" in p for p in problems)
    assert any("unexpected ['extra']" in p for p in problems)
    assert any("edge kind" in p for p in problems)
    assert schema_problems(doc, verify=True)  # no status without --verify


# ---------------------------------------------------------------------------------------------- code


@BOTH
def test_ir_of_every_specialization_or_of_one(runner, built):
    out = call(runner, "inspect", str(built), "--ir", "numkit.stats:mean")
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("func numkit.stats:mean(") == 2
    assert "# numkit.stats:mean(f64[::1]) -> f64 [cpu]" in out.stdout
    one = call(runner, "inspect", str(built), "--ir", "numkit.stats:mean(f64[:])")
    assert one.returncode == 0, one.stderr
    assert one.stdout.startswith("func numkit.stats:mean(%a: f64[:]) -> f64")
    assert one.stdout.count("func ") == 1
    short = call(runner, "inspect", str(built), "--ir", "stats:mean( f64[:] )")
    assert short.stdout == one.stdout


def test_llvm_and_asm_from_the_stored_ir(built, doc):
    symbol = [e for e in entries_of(doc) if e["method"] == "numkit.core:clamp"][0]["symbol"]
    llvm = run_aot("inspect", str(built), "--llvm", "numkit.core:clamp")
    assert llvm.returncode == 0, llvm.stderr
    assert "define " in llvm.stdout and f"@{symbol}(" in llvm.stdout
    assert "target triple" in llvm.stdout
    asm = invoke("inspect", str(built), "--asm", "numkit.core:clamp(f64, f64, f64)")
    assert asm.returncode == 0, asm.stderr
    assert f"{symbol}:" in asm.stdout
    # A caller's module holds its callees' code too (rebuilt from their stored IR, nothing inferred).
    caller = run_aot("inspect", str(built), "--llvm", "numkit.stats:std")
    assert caller.returncode == 0, caller.stderr
    assert "define" in caller.stdout


def test_ptx_of_an_image_without_ptx_entries_is_a_one_line_error(built):
    assert_one_line_error(run_aot("inspect", str(built), "--ptx", "numkit.stats:mean"), "no PTX entries")


def _write_ptx_image(image_path, dest):
    """A PTX image made from the CPU one (same entries, owner ptx) with a hand-written PTX module."""
    image = serializer.read_image(image_path)
    contents = ImageContents.from_tables(image.tables)
    contents.code = {k: e._replace(owner="ptx") for k, e in contents.code.items()}
    symbol = contents.code[("numkit.stats:mean", ("f64[:]",))].symbol
    ptx = (
        ".version 8.0\n.target sm_80\n.address_size 64\n\n"
        f".visible .func (.param .b32 r) {symbol}(\n\t.param .b64 p0\n)\n{{\n\tret;\n}}\n\n"
        ".visible .entry other_kernel()\n{\n\t{\n\tret;\n\t}\n}\n"
    )
    folder = dest / "numkit" / "__aot__"
    folder.mkdir(parents=True)
    (folder / "numkit.ptx.ptx").write_text(ptx)
    import zlib

    header = dict(
        image.header,
        owner="ptx",
        target={"triple": "nvptx64-nvidia-cuda", "cpu": "sm_80", "features": ""},
        native={"file": "numkit.ptx.ptx", "crc32": zlib.crc32(ptx.encode()), "size": len(ptx)},
    )
    header.pop("runtime", None)
    serializer.write_image(folder / "numkit.ptx.aotimg", header, contents.to_tables())
    return folder / "numkit.ptx.aotimg", symbol


def test_ptx_of_a_ptx_image(tmp_path, image_path):
    ptx_image, symbol = _write_ptx_image(image_path, tmp_path)
    out = run_aot("inspect", str(ptx_image), "--ptx", "numkit.stats:mean(f64[:])")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f".visible .func (.param .b32 r) {symbol}(") and out.stdout.rstrip().endswith("}")
    assert "other_kernel" not in out.stdout
    doc = json.loads(run_aot("inspect", str(ptx_image), "--json").stdout)
    assert schema_problems(doc) == []
    assert doc["images"][0]["owner"] == "ptx"
    sizes = {(e["method"], tuple(e["argtypes"])): e["native_bytes"] for e in entries_of(doc)}
    assert sizes[("numkit.stats:mean", ("f64[:]",))] > 0
    assert_one_line_error(run_aot("inspect", str(ptx_image), "--llvm", "numkit.stats:mean"), "no cpu entry")


# ---------------------------------------------------------------------------------------------- bad input


@BOTH
def test_bad_input_is_one_line_and_exit_2(runner, built, tmp_path, image_path):
    damaged = tmp_path / "damaged.aotimg"
    data = bytearray(image_path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    truncated = tmp_path / "truncated.aotimg"
    truncated.write_bytes(image_path.read_bytes()[:1000])
    empty = tmp_path / "empty_dir"
    empty.mkdir()
    cases = [
        (("inspect", str(tmp_path / "nope")), "no such file or folder"),
        (("inspect", str(built / "numkit" / "core.py")), "not an aot image"),
        (("inspect", str(built / "numkit" / "__aot__" / "numkit.cpu.so")), "not an aot image"),
        (("inspect", str(damaged)), "checksum mismatch"),
        (("inspect", str(truncated)), "truncated image"),
        (("inspect", str(empty)), "not an aot image, an __aot__ folder"),
        (("inspect", str(built), "--ir", "numkit.stats:meen"), "did you mean numkit.stats:mean?"),
        (("inspect", str(built), "--llvm", "nothing_like_it"), "no entry for method 'nothing_like_it'"),
        (("inspect", str(built), "--ir", "mean(f64)"), "the images hold numkit.stats:mean(f64[::1])"),
        (("inspect", str(built), "--asm", "mean(f6x)"), "unknown type name 'f6x'"),
        (("inspect", str(built), "--ir", "numkit.stats:mean(f64[:]"), "expected METHOD or METHOD(argtypes)"),
        (("inspect", str(built), "--ir", "mean", "--llvm", "mean"), "only one of"),
        (("inspect", str(built), "--ir", "mean", "--json"), "cannot be combined"),
        (("verify", str(tmp_path / "nope")), "no such file or folder"),
        (("verify", str(damaged)), "checksum mismatch"),
        (("clean", str(tmp_path / "nope")), "no such file or folder"),
    ]
    for args, needle in cases:
        assert_one_line_error(call(runner, *args), needle)


def test_an_image_of_another_compiler_version_whose_tables_this_one_cannot_read(tmp_path, image_path):
    """Tables are laid out as their compiler version lays them out: an older image is named as such, with
    the fix (rebuild), rather than called malformed."""
    image = serializer.read_image(image_path)
    first = image.tables["code"][0]
    old = [first[:1] + [["f64"], "f64", "cpu", []] + first[5:]]  # text where 0.7.0 writes string numbers
    path = tmp_path / "pkg" / "__aot__" / "old.aotimg"
    path.parent.mkdir(parents=True)
    serializer.write_image(
        path, dict(image.header, compiler_version="0.6.0"), dict(image.tables, code=old, ir=image.tables["ir"][:1])
    )
    for out in (run_aot("inspect", str(path)), invoke("inspect", str(path), "--json")):
        assert_one_line_error(out, "written by aot 0.6.0", f"aot {COMPILER_VERSION} cannot read", "rebuild it")


def test_tampered_records_with_valid_checksums(tmp_path, image_path):
    image = serializer.read_image(image_path)
    folder = tmp_path / "pkg" / "__aot__"
    folder.mkdir(parents=True)
    first = image.tables["code"][0]  # method, argtypes, rettype, owner, edges, symbol, …
    one_ir = image.tables["ir"][:1]
    cases = {
        "short-record": dict(image.tables, code=[[0, ["f64"]]], ir=one_ir),
        "bad-index": dict(image.tables, code=[[999] + first[1:]], ir=one_ir),
        "bad-types": dict(image.tables, code=[[0, [1, 2]] + first[2:]], ir=one_ir),
        "bad-edges": dict(image.tables, code=[first[:4] + [[["call"]]] + first[5:]], ir=one_ir),
        "huge-index": dict(image.tables, code=[[2**64 - 1] + first[1:]], ir=one_ir),
        "ir-not-bytes": dict(image.tables, code=[first], ir=[[2**40]]),  # bytes(2**40) = 1 TiB
        "ir-missing": dict(image.tables, code=[first], ir=[]),
    }
    for name, tables in cases.items():
        path = folder / f"{name}.aotimg"
        serializer.write_image(path, image.header, tables)
        assert_one_line_error(run_aot("inspect", str(path)), "malformed image")
        assert_one_line_error(invoke("inspect", str(path), "--json"), "malformed image")


def test_a_header_field_of_the_wrong_type_is_a_damaged_image(tmp_path, image_path):
    """The header's checksum proves it is the one written, not that it makes sense: a field the tools read that
    is of the wrong type (a library name with a NUL byte, a target that is not a map, …) makes the image
    malformed, said in one line, never a traceback."""
    image = serializer.read_image(image_path)
    header, native = image.header, image.header["native"]
    folder = tmp_path / "numkit" / "__aot__"
    folder.mkdir(parents=True)
    shutil.copy(image_path.with_suffix(".so"), folder / "numkit.cpu.so")
    cases = {
        "nul-in-file-name": dict(header, native=dict(native, file="numkit.cpu\0.so")),
        "file-in-another-folder": dict(header, native=dict(native, file="../numkit.cpu.so")),
        "file-not-a-string": dict(header, native=dict(native, file=7)),
        "crc-not-an-integer": dict(header, native=dict(native, crc32=str(native["crc32"]))),
        "native-not-a-map": dict(header, native=["numkit.cpu.so"]),
        "target-not-a-map": dict(header, target="x86_64"),
        "triple-not-a-string": dict(header, target=dict(header["target"], triple=64)),
        "python-not-a-string": dict(header, python=311),
        "owner-not-a-string": dict(header, owner=["cpu"]),
        "package-not-a-name": dict(header, package="../numkit"),
    }
    for name, damaged in cases.items():
        path = folder / f"{name}.aotimg"
        serializer.write_image(path, damaged, image.tables)
        for command in ("inspect", "verify"):
            assert_one_line_error(invoke(command, str(path)), "malformed image: header")
        path.unlink()
    path = folder / "numkit.cpu.aotimg"
    serializer.write_image(path, cases["nul-in-file-name"], image.tables)
    for command in ("inspect", "verify"):
        assert_one_line_error(run_aot(command, str(path)), "malformed image: header field native.file")
        assert_one_line_error(run_aot(command, str(tmp_path / "numkit")), "malformed image: header field native.file")


def test_project_without_images(tmp_path):
    from cli_support import copy_numkit

    project = copy_numkit(tmp_path / "numkit")
    assert_one_line_error(run_aot("inspect", str(project)), "no aot images", "aot build")
    (project / "pyproject.toml").write_text('[tool.aot]\npackages = ["numkit"]\ntargets = ["gpu"]\n')
    assert_one_line_error(run_aot("inspect", str(project)), "unknown target 'gpu'", "pyproject.toml")


# ---------------------------------------------------------------------------------------------- native sizes


def test_elf_symbol_sizes_match_nm(image_path):
    so = image_path.with_suffix(".so")
    sizes = symbol_sizes(so)
    assert sizes and all(v >= 0 for v in sizes.values())
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("no nm to compare with")
    listing = subprocess.run([nm, "-D", "-S", "--defined-only", "-g", str(so)], capture_output=True, text=True).stdout
    expected = {}
    for line in listing.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "TW":
            expected[parts[3]] = int(parts[1], 16)
    assert sizes == expected


def test_elf_reader_rejects_garbage():
    for data in (b"", b"not an elf file at all", b"\x7fELF" + b"\x02\x01" + b"\0" * 10):
        with pytest.raises(ElfError):
            symbol_sizes_of(data)
    header = bytearray(b"\x7fELF\x02\x01\x01" + b"\0" * 57)
    header[0x28:0x30] = (10**9).to_bytes(8, "little")  # section headers far past the end
    header[0x3A:0x3E] = (64).to_bytes(2, "little") + (3).to_bytes(2, "little")
    with pytest.raises(ElfError):
        symbol_sizes_of(bytes(header))


# ---------------------------------------------------------------------------------------------- clean


@BOTH
def test_clean_removes_images_and_native_code_only(runner, built, tmp_path):
    project = copy_built(built, tmp_path / "numkit")
    folder = project / "numkit" / "__aot__"
    (folder / "notes.txt").write_text("mine")
    out = call(runner, "clean", str(project))
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]
    assert "numkit.cpu.aotimg" in out.stdout and out.stdout.rstrip().endswith("removed")
    (folder / "notes.txt").unlink()
    again = call(runner, "clean", str(project))
    assert again.returncode == 0 and "0 files removed" in again.stdout
    assert not folder.exists()  # an empty __aot__ folder goes too
    assert (project / "numkit" / "core.py").is_file()


def test_clean_one_image_file(built, tmp_path):
    project = copy_built(built, tmp_path / "numkit")
    image = project / "numkit" / "__aot__" / "numkit.cpu.aotimg"
    (image.parent / "other.cpu.aotimg").write_bytes(b"x")
    out = run_aot("clean", str(image))
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in image.parent.iterdir() if p.name != ".lock") == ["other.cpu.aotimg"]
    assert_one_line_error(run_aot("clean", str(project / "numkit" / "core.py")), "not an aot image")
