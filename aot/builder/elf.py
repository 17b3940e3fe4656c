"""What ELF shared libraries hold, read with the standard library only: symbol sizes and dependencies.

    symbol_sizes(Path("numkit/__aot__/numkit.cpu.so"))
        → {"try_aot_numkit_core__sqr_69d9270d2912": 79, "fast_aot_numkit_core__sqr_69d9270d2912": 54, …}
    dependencies(Path("numkit/__aot__/numkit.cpu.so"))
        → Dependencies(machine="x86_64", needed=("libc.so.6",), versions={"libc.so.6": ("GLIBC_2.2.5",)})

Symbol sizes: only defined functions with global or weak binding are listed (the static copies of callees
that each module keeps for inlining are local, and share names across modules). The full symbol table is
used when the file has one, else the dynamic one. Dependencies: the ``DT_NEEDED`` entries of the dynamic
section, in order, and the symbol versions required of each file (``.gnu.version_r``), what a wheel's
platform tag is decided from (``aot/builder/platform_tag.py``). Anything that is not a well-formed ELF file
gives ``ElfError``; nothing here trusts an offset or a count before checking it against the file's size.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import NamedTuple

_SHT_SYMTAB = 2
_SHT_DYNAMIC = 6
_SHT_DYNSYM = 11
_SHT_GNU_VERNEED = 0x6FFFFFFE
_ET_DYN = 3
_DT_NULL = 0
_DT_NEEDED = 1
# e_machine → the architecture's name in wheel platform tags (``ppc64`` is ``ppc64le`` when little-endian).
_MACHINES = {3: "i686", 20: "ppc", 21: "ppc64", 22: "s390x", 40: "armv7l", 62: "x86_64", 183: "aarch64", 243: "riscv64"}
_STT_FUNC = 2
_STB_GLOBAL = 1
_STB_WEAK = 2
_SHN_UNDEF = 0


class ElfError(ValueError):
    """The bytes are not an ELF file this reader understands (the message says why)."""


def _header(data: bytes) -> tuple[str, bool, int, int, int]:
    """(byte order, 64-bit, section header offset, entry size, count)."""
    if data[:4] != b"\x7fELF":
        raise ElfError("not an ELF file")
    if len(data) < 0x40:
        raise ElfError("truncated ELF header")
    cls, order = data[4], data[5]
    if cls not in (1, 2) or order not in (1, 2):
        raise ElfError("unknown ELF class or byte order")
    end = "<" if order == 1 else ">"
    if cls == 2:
        (shoff,) = struct.unpack_from(end + "Q", data, 0x28)
        shentsize, shnum = struct.unpack_from(end + "HH", data, 0x3A)
    else:
        (shoff,) = struct.unpack_from(end + "I", data, 0x20)
        shentsize, shnum = struct.unpack_from(end + "HH", data, 0x2E)
    return end, cls == 2, shoff, shentsize, shnum


def _sections(data: bytes) -> tuple[str, bool, list[tuple[int, int, int, int, int, int]]]:
    """Every section as (type, offset, size, link, info, entry size)."""
    end, is64, shoff, shentsize, shnum = _header(data)
    need = 0x40 if is64 else 0x28
    if shnum and (shentsize < need or shoff + shentsize * shnum > len(data)):
        raise ElfError("section headers lie outside the file")
    out = []
    for i in range(shnum):
        base = shoff + i * shentsize
        if is64:
            _, sh_type, _, _, offset, size, link, info, _, entsize = struct.unpack_from(end + "IIQQQQIIQQ", data, base)
        else:
            _, sh_type, _, _, offset, size, link, info, _, entsize = struct.unpack_from(end + "IIIIIIIIII", data, base)
        out.append((sh_type, offset, size, link, info, entsize))
    return end, is64, out


def _name(strtab: bytes, index: int) -> str:
    if index >= len(strtab):
        return ""
    stop = strtab.find(b"\0", index)
    return strtab[index : stop if stop >= 0 else len(strtab)].decode("utf-8", "replace")


def symbol_sizes_of(data: bytes) -> dict[str, int]:
    """Sizes in bytes of the defined global/weak functions of an ELF image (see the module docstring)."""
    end, is64, sections = _sections(data)
    tables = [s for s in sections if s[0] == _SHT_SYMTAB] or [s for s in sections if s[0] == _SHT_DYNSYM]
    sizes: dict[str, int] = {}
    for _, offset, size, link, _, entsize in tables:
        if link >= len(sections):
            raise ElfError("symbol table names a missing string table")
        _, str_off, str_size, _, _, _ = sections[link]
        if offset + size > len(data) or str_off + str_size > len(data):
            raise ElfError("symbol table lies outside the file")
        strtab = data[str_off : str_off + str_size]
        entsize = entsize or (24 if is64 else 16)
        if entsize < (24 if is64 else 16):
            raise ElfError("symbol entries are too small")
        for base in range(offset, offset + size - entsize + 1, entsize):
            if is64:
                name, info, _, shndx, _, st_size = struct.unpack_from(end + "IBBHQQ", data, base)
            else:
                name, _, st_size, info, _, shndx = struct.unpack_from(end + "IIIBBH", data, base)
            if info & 0xF != _STT_FUNC or info >> 4 not in (_STB_GLOBAL, _STB_WEAK) or shndx == _SHN_UNDEF:
                continue
            sizes[_name(strtab, name)] = st_size
    return sizes


def symbol_sizes(path: str | Path) -> dict[str, int]:
    """``symbol_sizes_of`` the file at ``path``; OSError when it cannot be read."""
    return symbol_sizes_of(Path(path).read_bytes())


class Dependencies(NamedTuple):
    """What a shared library needs of the system: its architecture (a wheel tag's name for it, or
    ``"machine N"``), the files named by ``DT_NEEDED`` in order, and per file the symbol versions required
    of it (``GLIBC_2.17``, ``GLIBCXX_3.4.19``, …; sorted)."""

    machine: str
    needed: tuple[str, ...]
    versions: dict[str, tuple[str, ...]]


def _string_table(data: bytes, sections: list[tuple[int, int, int, int, int, int]], link: int, what: str) -> bytes:
    if link >= len(sections):
        raise ElfError(f"{what} names a missing string table")
    _, offset, size, _, _, _ = sections[link]
    if offset + size > len(data):
        raise ElfError(f"the string table of the {what} lies outside the file")
    return data[offset : offset + size]


def _needed(data: bytes, end: str, is64: bool, sections: list[tuple[int, int, int, int, int, int]]) -> list[str]:
    """The ``DT_NEEDED`` names of every dynamic section, up to its ``DT_NULL``."""
    names: list[str] = []
    fmt, step = (end + "qQ", 16) if is64 else (end + "iI", 8)
    for _, offset, size, link, _, _ in (s for s in sections if s[0] == _SHT_DYNAMIC):
        if offset + size > len(data):
            raise ElfError("the dynamic section lies outside the file")
        strtab = _string_table(data, sections, link, "dynamic section")
        for base in range(offset, offset + size - step + 1, step):
            tag, value = struct.unpack_from(fmt, data, base)
            if tag == _DT_NULL:
                break
            if tag == _DT_NEEDED:
                if value >= len(strtab):
                    raise ElfError("a DT_NEEDED entry names a string outside its table")
                names.append(_name(strtab, value))
    return names


def _version_needs(data: bytes, end: str, sections: list[tuple[int, int, int, int, int, int]]) -> dict[str, set[str]]:
    """File → the version names required of it, from every ``.gnu.version_r`` section (Elf_Verneed records,
    each with a chain of Elf_Vernaux; both 16 bytes in either class)."""
    out: dict[str, set[str]] = {}
    for _, offset, size, link, count, _ in (s for s in sections if s[0] == _SHT_GNU_VERNEED):
        if offset + size > len(data):
            raise ElfError("the version requirements (.gnu.version_r) lie outside the file")
        strtab = _string_table(data, sections, link, "version requirements")
        stop = offset + size
        here = offset
        for _ in range(count):
            if here + 16 > stop:
                raise ElfError("a version requirement lies outside its section")
            _, aux_count, file_at, aux, following = struct.unpack_from(end + "HHIII", data, here)
            if file_at >= len(strtab):
                raise ElfError("a version requirement names a file outside its string table")
            names = out.setdefault(_name(strtab, file_at), set())
            at = here + aux
            for _ in range(aux_count):
                if at + 16 > stop:
                    raise ElfError("a version requirement's entry lies outside its section")
                _, _, _, name_at, aux_next = struct.unpack_from(end + "IHHII", data, at)
                if name_at >= len(strtab):
                    raise ElfError("a version requirement names a version outside its string table")
                names.add(_name(strtab, name_at))
                if aux_next == 0:
                    break
                at += aux_next
            if following == 0:
                break
            here += following
    return out


def dependencies_of(data: bytes) -> Dependencies:
    """``Dependencies`` of an ELF image (see the module docstring). A shared library without a dynamic
    section (its section headers stripped) is an ``ElfError``: its dependencies cannot be known."""
    end, is64, sections = _sections(data)
    e_type, e_machine = struct.unpack_from(end + "HH", data, 0x10)
    machine = _MACHINES.get(e_machine, f"machine {e_machine}")
    if machine == "ppc64" and end == "<":
        machine = "ppc64le"
    if e_type == _ET_DYN and not any(s[0] == _SHT_DYNAMIC for s in sections):
        raise ElfError("a shared library without a dynamic section (were its section headers stripped?)")
    versions = {name: tuple(sorted(v)) for name, v in sorted(_version_needs(data, end, sections).items())}
    return Dependencies(machine, tuple(_needed(data, end, is64, sections)), versions)


def dependencies(path: str | Path) -> Dependencies:
    """``dependencies_of`` the file at ``path``; OSError when it cannot be read."""
    return dependencies_of(Path(path).read_bytes())
