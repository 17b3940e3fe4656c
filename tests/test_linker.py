"""Tests of the linker: LLVM object files → shared library → ctypes call; PTX → cubin via ptxas.

link_shared([obj(add), obj(twice)], tmp/"lib.so"); ctypes.CDLL(tmp/"lib.so").twice(21) -> 42
link_shared([b"junk"], ...) -> LinkerError with the driver's message and the command to rerun
"""

from __future__ import annotations

import ctypes
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import linker
from linker import (
    LinkerError,
    PtxasError,
    assemble_ptx,
    find_cc,
    find_ptxas,
    link_shared,
    parse_ptxas_verbose,
    ptxas_resource_usage,
)

# --------------------------------------------------------------------------- object files

ADD_IR = """
define i64 @aot_test_add(i64 %a, i64 %b) {
  %c = add i64 %a, %b
  ret i64 %c
}
"""
TWICE_IR = """
declare i64 @aot_test_add(i64, i64)
define i64 @aot_test_twice(i64 %a) {
  %c = call i64 @aot_test_add(i64 %a, i64 %a)
  ret i64 %c
}
"""
MISSING_IR = """
declare i64 @aot_test_nowhere(i64)
define i64 @aot_test_calls_nowhere(i64 %a) {
  %c = call i64 @aot_test_nowhere(i64 %a)
  ret i64 %c
}
"""


def emit_object(ir_text: str) -> bytes:
    import llvmlite.binding as llvm

    # LLVM itself initializes lazily now; llvm.initialize() is deprecated (raises in llvmlite 0.50).
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    module = llvm.parse_assembly(ir_text)
    module.verify()
    machine = llvm.Target.from_default_triple().create_target_machine(reloc="pic", codemodel="default")
    return machine.emit_object(module)


@pytest.fixture(scope="module")
def objects() -> list[bytes]:
    return [emit_object(ADD_IR), emit_object(TWICE_IR)]


@pytest.fixture
def private_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Route tempfile into a folder of our own, to see what the linker leaves behind."""
    t = tmp_path / "tmp"
    t.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(t))
    return t


def have_cc() -> bool:
    try:
        find_cc()
    except LinkerError:
        return False
    return True


needs_cc = pytest.mark.skipif(not have_cc(), reason="no C compiler driver ($CC or cc) on this machine")


# --------------------------------------------------------------------------- find_cc


def test_find_cc_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CC", raising=False)
    if shutil.which("cc") is None:
        pytest.skip("no cc on PATH")
    assert find_cc() == ["cc"]


def test_find_cc_from_env_is_split(monkeypatch: pytest.MonkeyPatch) -> None:
    cc = shutil.which("cc") or pytest.skip("no cc on PATH")
    monkeypatch.setenv("CC", f"'{cc}' -O0")
    assert find_cc() == [cc, "-O0"]


def test_missing_cc_from_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, objects: list[bytes]) -> None:
    monkeypatch.setenv("CC", "aot-no-such-compiler --flag")
    with pytest.raises(LinkerError) as info:
        link_shared(objects, tmp_path / "lib.so")
    msg = str(info.value)
    assert "no C compiler driver found" in msg and "'aot-no-such-compiler'" in msg and "$CC" in msg
    assert info.value.command is None
    assert not (tmp_path / "lib.so").exists()


def test_missing_cc_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder
    with pytest.raises(LinkerError) as info:
        find_cc()
    assert str(info.value) == "no C compiler driver found (looked for 'cc'); install gcc or clang, or set CC"


# --------------------------------------------------------------------------- link_shared


@needs_cc
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="version scripts: GNU-style linkers")
def test_only_the_exports_are_exported(tmp_path: Path, objects: list[bytes]) -> None:
    lib = ctypes.CDLL(str(link_shared(objects, tmp_path / "lib.so", exports=["aot_test_tw*"])))
    lib.aot_test_twice.argtypes = [ctypes.c_int64]
    lib.aot_test_twice.restype = ctypes.c_int64
    assert lib.aot_test_twice(21) == 42
    with pytest.raises(AttributeError):
        _ = lib.aot_test_add  # linked in, not exported


@needs_cc
def test_link_and_call(tmp_path: Path, objects: list[bytes], private_tmp: Path) -> None:
    out = link_shared(objects, tmp_path / "lib.so")
    assert out == tmp_path / "lib.so"
    lib = ctypes.CDLL(str(out))
    lib.aot_test_twice.argtypes = [ctypes.c_int64]
    lib.aot_test_twice.restype = ctypes.c_int64
    lib.aot_test_add.argtypes = [ctypes.c_int64, ctypes.c_int64]
    lib.aot_test_add.restype = ctypes.c_int64
    assert lib.aot_test_twice(21) == 42
    assert lib.aot_test_add(-5, 2) == -3
    assert os.listdir(private_tmp) == []  # the work folder is removed on success
    assert sorted(os.listdir(tmp_path)) == ["lib.so", "tmp"]  # no temporary output left either


@needs_cc
def test_link_is_reproducible(tmp_path: Path, objects: list[bytes]) -> None:
    a = link_shared(objects, tmp_path / "a.so").read_bytes()
    b = link_shared(objects, tmp_path / "b.so").read_bytes()  # another temporary folder
    assert a == b
    assert b"aot-link" not in a and str(tmp_path).encode() not in a


@needs_cc
def test_link_replaces_existing_output(tmp_path: Path, objects: list[bytes]) -> None:
    out = tmp_path / "lib.so"
    out.write_bytes(b"old")
    link_shared(objects, out)
    assert out.read_bytes()[:4] != b"old"


@needs_cc
def test_bad_object_gives_reproducible_command(tmp_path: Path, private_tmp: Path) -> None:
    with pytest.raises(LinkerError) as info:
        link_shared([b"this is not an object file"], tmp_path / "lib.so")
    err = info.value
    msg = str(err)
    assert f"linking {tmp_path / 'lib.so'} failed" in msg
    assert err.command is not None and err.output
    assert err.output.strip().splitlines()[0] in msg  # the driver's own message
    assert f"to reproduce: {err.command_line}" in msg
    assert err.command_line == shlex.join(err.command)
    assert any(arg.endswith("m0.o") for arg in err.command) and "-shared" in err.command
    assert not (tmp_path / "lib.so").exists()
    # the objects were kept, so the command really reproduces the failure
    rerun = subprocess.run(shlex.split(err.command_line), capture_output=True)
    assert rerun.returncode != 0
    work = Path(err.command[err.command.index("-o") + 1]).parent
    assert work.parent == private_tmp and (work / "m0.o").read_bytes() == b"this is not an object file"


@needs_cc
def test_extra_args_follow_the_objects(tmp_path: Path, private_tmp: Path) -> None:
    obj = emit_object(MISSING_IR)
    link_shared([obj], tmp_path / "lazy.so")  # undefined symbols are allowed in a shared library
    with pytest.raises(LinkerError, match="aot_test_nowhere") as info:
        link_shared([obj], tmp_path / "strict.so", extra_args=["-Wl,--no-undefined"])
    assert info.value.command[-1] == "-Wl,--no-undefined"


def test_nothing_to_link(tmp_path: Path) -> None:
    with pytest.raises(LinkerError, match="no object files"):
        link_shared([], tmp_path / "lib.so")
    with pytest.raises(TypeError):
        link_shared(["not bytes"], tmp_path / "lib.so")  # type: ignore[list-item]


@needs_cc
def test_unwritable_output(tmp_path: Path, objects: list[bytes], private_tmp: Path) -> None:
    out = tmp_path / "no-such-folder" / "lib.so"
    with pytest.raises(LinkerError, match=f"cannot write {out}"):
        link_shared(objects, out)
    assert os.listdir(private_tmp) == []


def test_error_text_layout() -> None:
    e = LinkerError("linking x failed", ["cc", "-o", "a b.so", "m0.o"], output="m0.o: bad\nsecond line\n")
    assert str(e) == "linking x failed\n  m0.o: bad\n  second line\nto reproduce: cc -o 'a b.so' m0.o"
    assert str(LinkerError("plain")) == "plain"
    assert LinkerError(*e.args).command == e.command


# --------------------------------------------------------------------------- ptxas

KERNEL_PTX = """
.version 7.0
.target sm_80
.address_size 64

.func (.reg .f32 %r) helper(.reg .f32 %a)
{
    add.f32 %r, %a, %a;
    ret;
}

.visible .entry add_one(.param .u64 p_x, .param .u32 p_n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .f32 %f<3>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [p_x];
    ld.param.u32 %r1, [p_n];
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mad.lo.s32 %r5, %r3, %r4, %r2;
    setp.ge.s32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.s32 %rd3, %r5, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.f32 %f1, [%rd4];
    call (%f2), helper, (%f1);
    st.global.f32 [%rd4], %f2;
DONE:
    ret;
}
"""


def spilling_ptx(n: int = 64) -> str:
    """Load n floats, then store them in reverse: all n live at once (stores may alias the loads)."""
    lines = [
        ".version 7.0",
        ".target sm_80",
        ".address_size 64",
        "",
        ".visible .entry hog(.param .u64 p_in, .param .u64 p_out)",
        "{",
        f"    .reg .f32 %f<{n}>;",
        "    .reg .b64 %rd<3>;",
        "    ld.param.u64 %rd1, [p_in];",
        "    ld.param.u64 %rd2, [p_out];",
        "    cvta.to.global.u64 %rd1, %rd1;",
        "    cvta.to.global.u64 %rd2, %rd2;",
    ]
    lines += [f"    ld.volatile.global.f32 %f{i}, [%rd1+{4 * i}];" for i in range(n)]
    lines += [f"    st.volatile.global.f32 [%rd2+{4 * i}], %f{n - 1 - i};" for i in range(n)]
    lines += ["    ret;", "}", ""]
    return "\n".join(lines)


needs_ptxas = pytest.mark.skipif(
    find_ptxas() is None, reason="ptxas not found (no CUDA toolkit on PATH or in /usr/local/cuda)"
)


@needs_ptxas
def test_assemble_ptx(tmp_path: Path, private_tmp: Path) -> None:
    out = assemble_ptx(KERNEL_PTX, "sm_80", tmp_path / "k.sm_80.cubin")
    data = out.read_bytes()
    assert data[:4] == b"\x7fELF"
    assert b"add_one" in data
    assert os.listdir(private_tmp) == []
    again = assemble_ptx(KERNEL_PTX, "sm_80", tmp_path / "again.cubin").read_bytes()
    assert again == data  # reproducible


@needs_ptxas
def test_invalid_ptx_gives_reproducible_command(tmp_path: Path) -> None:
    bad = KERNEL_PTX.replace("add.f32 %r, %a, %a;", "frobnicate.f32 %r, %a;")
    with pytest.raises(PtxasError) as info:
        assemble_ptx(bad, "sm_80", tmp_path / "bad.cubin")
    err = info.value
    msg = str(err)
    assert "ptxas rejected the PTX for sm_80" in msg
    assert err.command is not None and "-arch=sm_80" in err.command and err.command[-1].endswith("in.ptx")
    assert f"to reproduce: {err.command_line}" in msg
    assert "error" in err.output.lower() and err.output.strip().splitlines()[0] in msg
    assert not (tmp_path / "bad.cubin").exists()
    rerun = subprocess.run(err.command, capture_output=True, text=True)
    assert rerun.returncode != 0
    shutil.rmtree(Path(err.command[-1]).parent)


@needs_ptxas
def test_resource_usage() -> None:
    usage = ptxas_resource_usage(KERNEL_PTX, "sm_80")
    assert set(usage) == {"add_one", "helper"}
    k = usage["add_one"]
    assert k["entry"] is True
    assert 0 < k["registers"] <= 255
    assert k["spills"] == k["spill_stores"] == k["spill_loads"] == 0
    assert usage["helper"]["entry"] is False


@needs_ptxas
def test_resource_usage_reports_spills() -> None:
    usage = ptxas_resource_usage(spilling_ptx(), "sm_80", extra_args=["--maxrregcount", "24"])
    hog = usage["hog"]
    assert hog["registers"] <= 24  # 24 is the lower bound ptxas accepts for sm_80
    assert hog["spills"] > 0 and hog["spills"] == hog["spill_stores"] + hog["spill_loads"]
    assert hog["stack_frame"] > 0


def test_invalid_arch() -> None:
    with pytest.raises(PtxasError, match="invalid GPU architecture 'gpu'"):
        assemble_ptx(KERNEL_PTX, "gpu", Path("never-written.cubin"))


def test_missing_ptxas(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(linker.ptx, "find_ptxas", lambda: None)
    with pytest.raises(PtxasError, match="ptxas not found") as info:
        assemble_ptx(KERNEL_PTX, "sm_80", tmp_path / "k.cubin")
    assert info.value.command is None


def test_find_ptxas_under_cuda_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "cuda" / "bin" / "ptxas"
    fake.parent.mkdir(parents=True)
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "cuda"))
    assert find_ptxas() == str(fake)


def test_parse_ptxas_verbose() -> None:
    text = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'smem_k' for 'sm_80'
ptxas info    : Function properties for smem_k
    24 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem, 360 bytes cmem[0], 8 bytes cmem[2]
ptxas info    : Compile time = 20.689 ms
ptxas info    : Compiling entry function '_Z3fooPf' for 'sm_90'
ptxas info    : Function properties for _Z3fooPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 4 registers
ptxas info    : Function properties for helper
    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
"""
    usage = parse_ptxas_verbose(text)
    assert usage["smem_k"] == {
        "entry": True,
        "registers": 10,
        "barriers": 1,
        "shared": 1024,
        "constant": 368,
        "stack_frame": 24,
        "spill_stores": 8,
        "spill_loads": 12,
        "spills": 20,
    }
    assert usage["_Z3fooPf"]["registers"] == 4 and usage["_Z3fooPf"]["shared"] == 0
    assert usage["helper"]["entry"] is False and usage["helper"]["stack_frame"] == 16
    assert parse_ptxas_verbose("") == {}
