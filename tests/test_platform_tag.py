"""manylinux platform tags for wheels, worked out from their libraries' ELF dependencies.

    dependencies(Path("pkg/__aot__/pkg.cpu.so"))  → Dependencies("x86_64", ("libc.so.6",), {"libc.so.6": (…)})
    platform_tag("linux_x86_64", [(name, deps)])   → manylinux_2_17_x86_64.manylinux2014_x86_64
                                                      (or linux_x86_64 and a one-line reason)

The reader is checked against ``readelf`` on libraries aot built, and on ELF files made here byte by byte
(``make_elf``: any class, byte order, machine, dependencies), whole and damaged; the policy on hand-made
dependencies; the wheel's file name, ``WHEEL`` tags and ``RECORD`` through ``add_images`` on a small wheel.
"""

from __future__ import annotations

import base64
import hashlib
import re
import shutil
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from aot.builder import wheel as wheelmod
from aot.builder.config import ConfigError, load_config
from aot.builder.elf import Dependencies, ElfError, dependencies, dependencies_of
from aot.builder.platform_tag import platform_tag
from aot.builder.wheel import PackagingError, add_images, expand_tag, interpreter_tag
from buildsupport import aot_build, pyproject, write_project

# ---------------------------------------------------------------------------------------------- ELF files


def make_elf(
    needed: list[str],
    versions: dict[str, list[str]] | None = None,
    *,
    machine: int = 62,
    is64: bool = True,
    little: bool = True,
    e_type: int = 3,
    dynamic: bool = True,
) -> bytes:
    """A minimal ELF file whose sections are a string table, a dynamic section with ``needed`` as DT_NEEDED
    and a ``.gnu.version_r`` requiring ``versions`` (file → version names); no code, no program headers."""
    end = "<" if little else ">"
    versions = versions or {}
    strtab = bytearray(b"\0")

    def string(text: str) -> int:
        at = len(strtab)
        strtab.extend(text.encode() + b"\0")
        return at

    dyn_fmt = end + ("qQ" if is64 else "iI")
    dyn = b"".join(struct.pack(dyn_fmt, 1, string(name)) for name in needed) + struct.pack(dyn_fmt, 0, 0)
    verneed = bytearray()
    files = list(versions.items())
    for i, (file, names) in enumerate(files):
        size = 16 + 16 * len(names)
        verneed += struct.pack(end + "HHIII", 1, len(names), string(file), 16, size if i + 1 < len(files) else 0)
        for j, name in enumerate(names):
            verneed += struct.pack(end + "IHHII", 0, 0, j + 2, string(name), 16 if j + 1 < len(names) else 0)
    head = 0x40 if is64 else 0x34
    sections = [(3, bytes(strtab), 0, 0)]  # (type, bytes, link, info)
    if dynamic:
        sections.append((6, dyn, 1, 0))
    if files:
        sections.append((0x6FFFFFFE, bytes(verneed), 1, len(files)))
    body = bytearray()
    placed = []
    for sh_type, data, link, info in sections:
        placed.append((sh_type, head + len(body), len(data), link, info))
        body += data + b"\0" * (-len(data) % 8)
    shoff = head + len(body)
    shentsize = 0x40 if is64 else 0x28
    ident = b"\x7fELF" + bytes([2 if is64 else 1, 1 if little else 2, 1]) + b"\0" * 9
    if is64:
        header = ident + struct.pack(end + "HHIQQQIHHHHHH", e_type, machine, 1, 0, 0, shoff, 0, head, 0, 0,
                                     shentsize, len(placed) + 1, 0)  # fmt: skip
    else:
        header = ident + struct.pack(end + "HHIIIIIHHHHHH", e_type, machine, 1, 0, 0, shoff, 0, head, 0, 0,
                                     shentsize, len(placed) + 1, 0)  # fmt: skip
    shdrs = b"\0" * shentsize
    for sh_type, offset, size, link, info in placed:
        fields = (0, sh_type, 0, 0, offset, size, link, info, 8, 0)
        shdrs += struct.pack(end + ("IIQQQQIIQQ" if is64 else "IIIIIIIIII"), *fields)
    return bytes(header) + bytes(body) + shdrs


def deps(needed: list[str], versions: dict[str, list[str]] | None = None, machine: str = "x86_64") -> Dependencies:
    return Dependencies(machine, tuple(needed), {k: tuple(sorted(v)) for k, v in (versions or {}).items()})


def test_reader_reads_what_was_written():
    data = make_elf(
        ["libm.so.6", "libc.so.6", "ld-linux-x86-64.so.2"],
        {"libc.so.6": ["GLIBC_2.34", "GLIBC_2.2.5"], "libm.so.6": ["GLIBC_2.29"]},
    )
    assert dependencies_of(data) == Dependencies(
        "x86_64",
        ("libm.so.6", "libc.so.6", "ld-linux-x86-64.so.2"),
        {"libc.so.6": ("GLIBC_2.2.5", "GLIBC_2.34"), "libm.so.6": ("GLIBC_2.29",)},
    )


@pytest.mark.parametrize(
    "machine, is64, little, name",
    [(3, False, True, "i686"), (21, True, False, "ppc64"), (21, True, True, "ppc64le"), (183, True, True, "aarch64"),
     (40, False, True, "armv7l"), (22, True, False, "s390x"), (4242, True, True, "machine 4242")],
)  # fmt: skip
def test_reader_reads_every_class_byte_order_and_machine(machine, is64, little, name):
    data = make_elf(["libc.so.6"], {"libc.so.6": ["GLIBC_2.17"]}, machine=machine, is64=is64, little=little)
    assert dependencies_of(data) == Dependencies(name, ("libc.so.6",), {"libc.so.6": ("GLIBC_2.17",)})


def test_reader_stops_at_dt_null_and_reads_files_without_versions():
    data = make_elf(["libz.so.1"])
    assert dependencies_of(data) == Dependencies("x86_64", ("libz.so.1",), {})


def test_a_shared_library_without_a_dynamic_section_is_an_error():
    with pytest.raises(ElfError, match="without a dynamic section"):
        dependencies_of(make_elf([], dynamic=False))
    assert dependencies_of(make_elf([], dynamic=False, e_type=1)).needed == ()  # (an object file needs nothing)


def test_damaged_elf_files_are_clear_errors_never_crashes():
    whole = make_elf(["libc.so.6", "libm.so.6"], {"libc.so.6": ["GLIBC_2.17", "GLIBC_2.28"]})
    for cut in range(len(whole)):
        try:
            dependencies_of(whole[:cut])
        except ElfError as e:
            assert str(e)
    for at in range(len(whole)):  # every byte set to 0xff in turn: the right answer or ElfError
        damaged = bytearray(whole)
        damaged[at] = 0xFF
        try:
            dependencies_of(bytes(damaged))
        except ElfError as e:
            assert str(e)
    for garbage in (b"", b"\x7fELF", b"MZ\x90\x00" + b"\0" * 100, b"\x7fELF\x03\x01" + b"\0" * 80):
        with pytest.raises(ElfError):
            dependencies_of(garbage)


def test_damage_inside_the_version_requirements_is_named():
    data = bytearray(make_elf(["libc.so.6"], {"libc.so.6": ["GLIBC_2.17"]}))
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    (verneed,) = struct.unpack_from("<Q", data, shoff + 3 * 0x40 + 24)  # (section 3's sh_offset)
    struct.pack_into("<I", data, verneed + 8, 10**6)  # vn_aux: its first entry far past the section's end
    with pytest.raises(ElfError, match="a version requirement's entry lies outside its section"):
        dependencies_of(bytes(data))
    struct.pack_into("<I", data, verneed + 8, 16)
    struct.pack_into("<I", data, verneed + 4, 10**6)  # vn_file: a name past the string table's end
    with pytest.raises(ElfError, match="names a file outside its string table"):
        dependencies_of(bytes(data))
    data = bytearray(make_elf(["libc.so.6"]))
    dynamic_header = struct.unpack_from("<Q", data, 0x28)[0] + 2 * 0x40
    struct.pack_into("<Q", data, dynamic_header + 24, 10**9)  # sh_offset far past the end
    with pytest.raises(ElfError, match="dynamic section lies outside"):
        dependencies_of(bytes(data))


# ---------------------------------------------------------------------------------------------- the policy


def tag(*libraries: Dependencies, platform: str = "linux_x86_64") -> tuple[str, str | None]:
    found = platform_tag(platform, [(f"pkg/__aot__/lib{i}.so", d) for i, d in enumerate(libraries)])
    return str(found), found.why


def test_old_glibc_versions_get_the_baseline_and_its_legacy_alias():
    assert tag(deps(["libc.so.6"], {"libc.so.6": ["GLIBC_2.2.5", "GLIBC_2.3.4"]})) == (
        "manylinux_2_17_x86_64.manylinux2014_x86_64",
        None,
    )
    assert tag() == ("manylinux_2_17_x86_64.manylinux2014_x86_64", None)  # (no library: nothing needed)
    assert tag(deps(["libc.so.6"]), platform="linux_aarch64") == (
        "linux_aarch64",
        "pkg/__aot__/lib0.so is built for x86_64, not aarch64",
    )


def test_the_highest_glibc_version_of_every_library_is_the_tag():
    a = deps(["libc.so.6"], {"libc.so.6": ["GLIBC_2.2.5", "GLIBC_2.8"]})
    needs = {"libm.so.6": ["GLIBC_2.29"], "libc.so.6": ["GLIBC_2.34"], "ld-linux-x86-64.so.2": ["GLIBC_2.3"]}
    b = deps(["libm.so.6", "libc.so.6", "ld-linux-x86-64.so.2"], needs)
    assert tag(a, b) == ("manylinux_2_34_x86_64", None)  # (no legacy alias above 2.17)
    assert tag(deps(["libc.so.6"], {"libc.so.6": ["GLIBC_2.10"]})) == (
        "manylinux_2_17_x86_64.manylinux2014_x86_64",
        None,
    )
    assert tag(deps(["libc.so.6"], {"libc.so.6": ["GLIBC_ABI_DT_RELR", "GLIBC_2.2.5"]}))[0] == "manylinux_2_36_x86_64"
    assert tag(deps(["libmvec.so.1", "libc.so.6"]))[0] == "manylinux_2_24_x86_64"  # (in the list from 2.24 on)


@pytest.mark.parametrize(
    "library, says",
    [
        (deps(["libc.so.6", "libgomp.so.1"]), "needs libgomp.so.1, which is not in the manylinux policy's list"),
        (deps(["libc.so.6"], {"libc.so.6": ["GLIBC_PRIVATE"]}), "needs GLIBC_PRIVATE of libc.so.6"),
        (deps(["libstdc++.so.6"], {"libstdc++.so.6": ["GLIBCXX_3.4.30"]}), "needs GLIBCXX_3.4.30 of libstdc++.so.6"),
        (deps(["libatomic.so.1"], {"libatomic.so.1": ["LIBATOMIC_1.0"]}), "needs LIBATOMIC_1.0 of libatomic.so.1"),
        (deps(["libc.musl-x86_64.so.1"]), "needs the musl libc (libc.musl-x86_64.so.1); musllinux tags are not"),
        (deps(["libc.so.6"], {"libfoo.so.2": ["FOO_1"]}), "needs libfoo.so.2, which is not in the manylinux"),
    ],
)
def test_what_manylinux_does_not_allow_keeps_the_linux_tag_and_says_why(library, says):
    found, why = tag(deps(["libc.so.6"]), library)
    assert found == "linux_x86_64"
    assert why is not None and "\n" not in why and why.startswith("pkg/__aot__/lib1.so ") and says in why


def test_libraries_of_the_list_within_manylinux2014_versions_are_allowed():
    cxx = deps(["libstdc++.so.6", "libgcc_s.so.1", "libc.so.6"], {"libstdc++.so.6": ["GLIBCXX_3.4.19", "CXXABI_1.3.7",
               "CXXABI_TM_1"], "libgcc_s.so.1": ["GCC_4.2.0"], "libc.so.6": ["GLIBC_2.14"]})  # fmt: skip
    assert tag(cxx, deps(["libz.so.1", "libGL.so.1"])) == ("manylinux_2_17_x86_64.manylinux2014_x86_64", None)


def test_other_platforms_keep_their_tag_and_unknown_architectures_say_so():
    assert tag(platform="macosx_11_0_arm64") == ("macosx_11_0_arm64", None)
    assert tag(platform="win_amd64") == ("win_amd64", None)
    found, why = tag(platform="linux_sparc64")
    assert found == "linux_sparc64" and why == "no manylinux baseline is known here for the architecture 'sparc64'"


# ---------------------------------------------------------------------------------------------- real libraries


def _readelf_glibc(library: Path) -> tuple[int, int]:
    """The highest GLIBC_x.y that ``readelf -V`` lists among the library's version requirements."""
    out = subprocess.run(["readelf", "-V", "-W", str(library)], capture_output=True, text=True, check=True).stdout
    found = [tuple(int(p) for p in v.split(".")) for v in re.findall(r"Name: GLIBC_([\d.]+)", out)]
    return max((v + (0,))[:2] for v in found)  # type: ignore[return-value]


@pytest.fixture(scope="module")
def parallel_library(tmp_path_factory) -> Path:
    """The library of a package with a ``prange`` loop (threads: pthread_create, glibc's newest symbols)."""
    root = write_project(
        tmp_path_factory.mktemp("par") / "parpkg",
        {
            "pyproject.toml": pyproject("parpkg"),
            "parpkg/__init__.py": """
                import numpy as np
                import aot


                @aot.jit(parallel=True)
                def total(a: aot.f64[:]) -> float:
                    s = 0.0
                    for i in aot.prange(len(a)):
                        s += a[i]
                    return s


                @aot.jit
                def ordered(a: aot.f64[:]):
                    return np.sort(a)
            """,
        },
    )
    done = aot_build(root)
    assert done.rc == 0, done.stderr
    (library,) = (root / "parpkg" / "__aot__").glob("*.so")
    return library


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("readelf") is None, reason="needs Linux, readelf"
)
def test_a_library_built_by_aot_is_tagged_with_its_highest_glibc_version(parallel_library):
    found = dependencies(parallel_library)
    out = subprocess.run(["readelf", "-d", "-W", str(parallel_library)], capture_output=True, text=True).stdout
    assert found.needed == tuple(re.findall(r"\(NEEDED\)\s+Shared library: \[(.*?)\]", out))
    glibc = _readelf_glibc(parallel_library)
    result = platform_tag(f"linux_{found.machine}", [("parpkg/__aot__/parpkg.cpu.so", found)])
    assert result.why is None
    expected = max(glibc, (2, 17))
    assert result.tags[0] == f"manylinux_{expected[0]}_{expected[1]}_{found.machine}"
    assert (len(result.tags) == 2) == (expected == (2, 17))


@pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("cc") is None, reason="needs Linux and cc")
def test_a_library_linked_against_libgomp_keeps_the_linux_tag(tmp_path):
    source = tmp_path / "omp.c"
    source.write_text("int omp_get_max_threads(void);\nint threads(void) { return omp_get_max_threads(); }\n")
    library = tmp_path / "libomp_user.so"
    done = subprocess.run(["cc", "-shared", "-fPIC", "-o", str(library), str(source), "-lgomp"], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot link against libgomp here: {done.stderr.decode(errors='replace')[-300:]}")
    found = dependencies(library)
    assert "libgomp.so.1" in found.needed
    result = platform_tag(f"linux_{found.machine}", [("pkg/__aot__/libomp_user.so", found)])
    assert result.tags == (f"linux_{found.machine}",)
    assert result.why == (
        "pkg/__aot__/libomp_user.so needs libgomp.so.1, which is not in the manylinux policy's list of system libraries"
    )


# ---------------------------------------------------------------------------------------------- wheels


def _inner_wheel(root: Path, extra: dict[str, bytes] | None = None) -> Path:
    """A pure wheel as an inner backend builds it (pkg + dist-info), and the package's ``__aot__`` folder."""
    files = {
        "pkg/__init__.py": b"",
        **(extra or {}),
        "pkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n",
        "pkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    wheel = root / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
        z.writestr("pkg-1.0.dist-info/RECORD", "")
    return wheel


def _images(root: Path, library: bytes) -> Path:
    folder = root / "pkg" / "__aot__"
    folder.mkdir(parents=True)
    (folder / "pkg.cpu.aotimg").write_bytes(b"an image")
    (folder / "pkg.cpu.so").write_bytes(library)
    return folder


def _wheel_and_record(wheel: Path) -> tuple[list[str], dict[str, str]]:
    with zipfile.ZipFile(wheel) as z:
        tags = [
            ln[len("Tag: ") :]
            for ln in z.read("pkg-1.0.dist-info/WHEEL").decode().splitlines()
            if ln.startswith("Tag:")
        ]
        record = {}
        for line in z.read("pkg-1.0.dist-info/RECORD").decode().splitlines():
            path, digest, _ = line.rsplit(",", 2)
            record[path] = digest
        data = z.read("pkg-1.0.dist-info/WHEEL")
        digest = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert record["pkg-1.0.dist-info/WHEEL"] == digest
    return tags, record


@pytest.fixture
def on_linux_x86_64(monkeypatch):
    monkeypatch.setattr(wheelmod, "build_platform", lambda: "linux_x86_64")


def test_wheel_name_and_wheel_file_carry_the_manylinux_tag_set(tmp_path, on_linux_x86_64, capsys):
    library = make_elf(["libc.so.6"], {"libc.so.6": ["GLIBC_2.2.5"]})
    out = add_images(_inner_wheel(tmp_path), {"pkg": _images(tmp_path, library)}, "9.9")
    interp = interpreter_tag()
    assert out.name == f"pkg-1.0-{interp}-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
    tags, record = _wheel_and_record(out)
    assert tags == [f"{interp}-manylinux_2_17_x86_64", f"{interp}-manylinux2014_x86_64"]
    assert "pkg/__aot__/pkg.cpu.so" in record
    assert capsys.readouterr().err == ""


def test_a_refused_wheel_is_tagged_linux_with_one_line_on_stderr(tmp_path, on_linux_x86_64, capsys):
    library = make_elf(["libc.so.6"], {"libc.so.6": ["GLIBC_2.34"]})
    # The inner backend's own extension needs a library outside the policy: it decides for the whole wheel.
    extension = make_elf(["libgomp.so.1", "libc.so.6"])
    inner = _inner_wheel(tmp_path, {"pkg/_ext.cpython-311-x86_64-linux-gnu.so": extension})
    out = add_images(inner, {"pkg": _images(tmp_path, library)}, "9.9")
    assert out.name == f"pkg-1.0-{interpreter_tag()}-linux_x86_64.whl"
    assert _wheel_and_record(out)[0] == [f"{interpreter_tag()}-linux_x86_64"]
    err = capsys.readouterr().err
    assert err == (
        f"aot: {out.name}: not tagged manylinux: pkg/_ext.cpython-311-x86_64-linux-gnu.so needs libgomp.so.1, "
        "which is not in the manylinux policy's list of system libraries\n"
    )


def test_wheel_platform_linux_keeps_the_plain_tag_without_reading(tmp_path, on_linux_x86_64, capsys):
    out = add_images(_inner_wheel(tmp_path), {"pkg": _images(tmp_path, b"\x7fELF damaged")}, "9.9", "linux")
    assert out.name == f"pkg-1.0-{interpreter_tag()}-linux_x86_64.whl"
    assert capsys.readouterr().err == ""


def test_a_damaged_library_fails_the_wheel_clearly(tmp_path, on_linux_x86_64):
    inner = _inner_wheel(tmp_path)
    with pytest.raises(PackagingError) as info:
        add_images(inner, {"pkg": _images(tmp_path, b"\x7fELF damaged")}, "9.9")
    assert str(info.value).startswith("pkg/__aot__/pkg.cpu.so: truncated ELF header: its platform tag cannot be")
    assert 'wheel-platform = "linux"' in str(info.value)
    assert inner.exists() and not list(tmp_path.glob("*manylinux*"))


def test_other_platforms_are_unchanged(tmp_path, monkeypatch):
    monkeypatch.setattr(wheelmod, "build_platform", lambda: "macosx_11_0_arm64")
    out = add_images(_inner_wheel(tmp_path), {"pkg": _images(tmp_path, b"not ELF")}, "9.9")
    assert out.name == f"pkg-1.0-{interpreter_tag()}-macosx_11_0_arm64.whl"


def test_expand_tag():
    assert expand_tag("cp311-cp311-a_x.b_x") == ["cp311-cp311-a_x", "cp311-cp311-b_x"]
    assert expand_tag("cp311-cp311-linux_x86_64") == ["cp311-cp311-linux_x86_64"]


# ---------------------------------------------------------------------------------------------- configuration


def test_wheel_platform_setting(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "pkg"\n')
    assert load_config(tmp_path).wheel_platform == "auto"
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "pkg"\n[tool.aot]\nwheel-platform = "linux"\n')
    assert load_config(tmp_path).wheel_platform == "linux"
    for bad, found in (('"manylinux"', "string 'manylinux'"), ("true", "boolean true"), ('["auto"]', "array")):
        (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "pkg"\n[tool.aot]\nwheel-platform = {bad}\n')
        with pytest.raises(ConfigError) as info:
            load_config(tmp_path)
        assert info.value.key == "[tool.aot] wheel-platform"
        assert str(info.value).endswith(
            f"[tool.aot] wheel-platform: must be 'auto' (manylinux where the libraries allow) or 'linux' "
            f"(the plain linux_<arch> tag), found {found}"
        )
