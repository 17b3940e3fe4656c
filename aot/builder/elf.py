"""Symbol sizes from an ELF shared library, read with the standard library only.

    symbol_sizes(Path("numkit/__aot__/numkit.cpu.so"))
        → {"try_aot_numkit_core__sqr_69d9270d2912": 79, "fast_aot_numkit_core__sqr_69d9270d2912": 54, …}

Only defined functions with global or weak binding are listed (the static copies of callees that each
module keeps for inlining are local, and share names across modules). The full symbol table is used when
the file has one, else the dynamic one. Anything that is not a well-formed ELF file gives ``ElfError``;
nothing here trusts an offset before checking it against the file's size.
"""

from __future__ import annotations

import struct
from pathlib import Path

_SHT_SYMTAB = 2
_SHT_DYNSYM = 11
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


def _sections(data: bytes) -> tuple[str, bool, list[tuple[int, int, int, int, int]]]:
    """Every section as (type, offset, size, link, entry size)."""
    end, is64, shoff, shentsize, shnum = _header(data)
    need = 0x40 if is64 else 0x28
    if shnum and (shentsize < need or shoff + shentsize * shnum > len(data)):
        raise ElfError("section headers lie outside the file")
    out = []
    for i in range(shnum):
        base = shoff + i * shentsize
        if is64:
            _, sh_type, _, _, offset, size, link, _, _, entsize = struct.unpack_from(end + "IIQQQQIIQQ", data, base)
        else:
            _, sh_type, _, _, offset, size, link, _, _, entsize = struct.unpack_from(end + "IIIIIIIIII", data, base)
        out.append((sh_type, offset, size, link, entsize))
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
    for _, offset, size, link, entsize in tables:
        if link >= len(sections):
            raise ElfError("symbol table names a missing string table")
        _, str_off, str_size, _, _ = sections[link]
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
