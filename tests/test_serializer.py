"""Tests of the image container: round trips, determinism, lazy tables, and refusal of every malformed file.

encode_image({"a": 1}, {"t": [[1, 2]]}) -> bytes; decode_image(bytes) -> Image(header={"a": 1}, ...)
open_image(p).table("t") -> [[1, 2]], checking and decoding no other table
any byte flipped / file truncated / random bytes -> ImageError naming the file, never anything else
"""

from __future__ import annotations

import os
import stat
import struct
import sys
import zlib
from collections.abc import Mapping
from pathlib import Path

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from serializer import (
    FORMAT_VERSION,
    MAGIC,
    PREAMBLE_SIZE,
    Image,
    ImageError,
    ImageFile,
    RecordError,
    RecordSchema,
    decode_image,
    encode_image,
    open_image,
    read_header,
    read_image,
    record,
    write_image,
)

HEADER = {
    "compiler_version": "0.1.0",
    "python": "cpython-311",
    "target": {"triple": "x86_64-unknown-linux-gnu", "cpu": "generic", "features": ""},
    "owner": "cpu",
    "tables": ["edges", "instances", "methods"],
}
TABLES = {
    "methods": [["pkg.mod:f", "ab" * 16, None], ["pkg.mod:g", "cd" * 16, {"boundscheck": True}]],
    "instances": [[0, ["f64[:]", "i64"], "f64", 0, 2**64 - 1, b"\x00\x01ir"]],
    "edges": [[0, "call", 1], [0, "global", "pkg.mod:N", -(2**63), 1.5]],
}


def crc(data: bytes) -> int:
    """The container's checksum: zlib's CRC-32, unsigned."""
    return zlib.crc32(data) & 0xFFFFFFFF


def craft_raw(
    header: bytes, directory: bytes, rest: bytes = b"", *, version: int = FORMAT_VERSION, magic: bytes = MAGIC
) -> bytes:
    """An image with arbitrary header/directory/segment bytes but consistent lengths and checksums."""
    pre = struct.pack("<8sIIQII", magic, version, len(header), len(directory), crc(header), crc(directory))
    return pre + header + directory + rest


def craft(header: bytes, segments: Mapping[str, bytes] | None = None, **kw) -> bytes:
    """An image of arbitrary header and segment bytes, with a consistent directory (in the given order)."""
    segments = segments or {}
    directory = msgpack.packb([[name, len(seg), crc(seg)] for name, seg in segments.items()])
    return craft_raw(header, directory, b"".join(segments.values()), **kw)


class Layout:
    """Where each part of an image lies, parsed here independently of serializer."""

    def __init__(self, data: bytes) -> None:
        magic, self.version, hlen, dlen, self.header_crc, self.dir_crc = struct.unpack_from("<8sIIQII", data)
        assert magic == MAGIC
        self.header = range(32, 32 + hlen)
        self.directory = range(32 + hlen, 32 + hlen + dlen)
        self.base = 32 + hlen + dlen
        self.entries = msgpack.unpackb(data[self.directory.start : self.directory.stop], raw=False)
        self.segments: dict[str, range] = {}
        pos = self.base
        for name, length, _ in self.entries:
            self.segments[name] = range(pos, pos + length)
            pos += length
        self.total = pos


def flip(data: bytes, i: int, mask: int = 0x01) -> bytes:
    bad = bytearray(data)
    bad[i] ^= mask
    return bytes(bad)


@pytest.fixture
def image_bytes() -> bytes:
    return encode_image(HEADER, TABLES)


@pytest.fixture
def image_path(tmp_path: Path) -> Path:
    p = tmp_path / "cpu.aotimg"
    write_image(p, HEADER, TABLES)
    return p


def expect_error(path: Path, kind: str | None = None) -> ImageError:
    with pytest.raises(ImageError) as info:
        read_image(path)
    err = info.value
    assert str(err).startswith(f"{path}: ")
    if kind is not None:
        assert err.kind == kind, str(err)
    return err


# A package's image: small index tables and a large table of typed IR that an import never decodes.
BIG_TABLES = {
    "methods": [[f"pkg.mod:f{i}", "ab" * 16, None] for i in range(200)],
    "code": [[i, f"f{i}", ["f64", "i64"], "f64", b"\x00" * 16] for i in range(2000)],
    "ir": [[i, os.urandom(500)] for i in range(1000)],
}


@pytest.fixture
def big_path(tmp_path: Path) -> Path:
    p = tmp_path / "pkg.cpu.aotimg"
    write_image(p, HEADER, BIG_TABLES)
    return p


# --------------------------------------------------------------------------- round trip


def test_round_trip(image_path: Path) -> None:
    img = read_image(image_path)
    assert isinstance(img, Image)
    assert img.path == str(image_path)
    assert img.header == HEADER
    assert img.tables == TABLES
    assert read_header(image_path) == HEADER
    f = open_image(image_path)
    assert isinstance(f, ImageFile)
    assert (f.path, f.header, f.names) == (str(image_path), HEADER, tuple(sorted(TABLES)))
    assert {name: f.table(name) for name in f.names} == TABLES


def test_round_trip_value_model() -> None:
    header = {
        "none": None,
        "t": True,
        "f": False,
        "neg": -1,
        "big": 2**64 - 1,
        "small": -(2**63),
        "x": 0.1,
        "inf": float("inf"),
        "s": "héllo ∑",
        "b": b"\xff\x00",
        "nested": [[1, [2, "3"]]],
    }
    tables = {"tuples": [(1, (2, 3)), ["a", {"k": (4,)}]], "empty": []}
    img = decode_image(encode_image(header, tables))
    assert img.header == header
    assert img.header["x"] == 0.1  # float64, not float32
    assert type(img.header["b"]) is bytes and type(img.header["s"]) is str
    assert img.tables == {"tuples": [[1, [2, 3]], ["a", {"k": [4]}]], "empty": []}


def test_empty_image() -> None:
    data = encode_image({}, {})
    assert decode_image(data) == Image("<bytes>", {}, {})
    f = ImageFile.from_bytes(data)
    assert (f.path, f.header, f.names) == ("<bytes>", {}, ())


def test_floats_are_float64() -> None:
    data = encode_image({"x": 1.0}, {})
    assert b"\xcb\x3f\xf0\x00\x00\x00\x00\x00\x00" in data  # msgpack float64 of 1.0


def test_subclasses_are_stored_as_plain_values() -> None:
    import enum

    class Kind(enum.IntEnum):
        CALL = 3

    class Name(str):
        pass

    img = decode_image(encode_image({Name("k"): Name("v")}, {Name("t"): [[Kind.CALL, bytearray(b"x")]]}))
    assert img.header == {"k": "v"} and type(img.header["k"]) is str
    assert img.tables == {"t": [[3, b"x"]]} and all(type(name) is str for name in img.tables)


@pytest.mark.parametrize(
    "header, tables, exc",
    [
        ({"x": object()}, {}, TypeError),
        ({"x": {1, 2}}, {}, TypeError),
        ({1: "x"}, {}, TypeError),
        ({"x": {"a": {2: 1}}}, {}, TypeError),
        ({"x": 2**64}, {}, ValueError),
        ({"x": -(2**63) - 1}, {}, ValueError),
        ({}, {"t": [[object()]]}, TypeError),
        ({}, {"t": [1, 2]}, TypeError),
        ({}, {"t": "not a list"}, TypeError),
        ({}, {1: []}, TypeError),
        ([], {}, TypeError),
        ({}, [], TypeError),
    ],
)
def test_encode_rejects_what_an_image_cannot_hold(header, tables, exc) -> None:
    with pytest.raises(exc):
        encode_image(header, tables)


def test_encode_error_says_where() -> None:
    with pytest.raises(TypeError, match=r"tables\.t\[0\]\[1\]: object"):
        encode_image({}, {"t": [[1, object()]]})


# --------------------------------------------------------------------------- determinism


def test_deterministic_bytes(image_bytes: bytes) -> None:
    assert encode_image(HEADER, TABLES) == image_bytes


def test_dict_order_does_not_matter() -> None:
    h1 = {"a": 1, "b": {"x": 1, "y": 2}, "c": [{"p": 1, "q": 2}]}
    h2 = {"c": [{"q": 2, "p": 1}], "b": {"y": 2, "x": 1}, "a": 1}
    t1 = {"m": [[1]], "e": [[{"z": 1, "a": 2}]]}
    t2 = {"e": [[{"a": 2, "z": 1}]], "m": [[1]]}
    assert encode_image(h1, t1) == encode_image(h2, t2)


def test_tuples_and_lists_encode_alike() -> None:
    assert encode_image({"a": (1, 2)}, {"t": [(1, (2,))]}) == encode_image({"a": [1, 2]}, {"t": [[1, [2]]]})


def test_written_files_are_identical(tmp_path: Path) -> None:
    a, b = tmp_path / "a.aotimg", tmp_path / "b.aotimg"
    write_image(a, HEADER, TABLES)
    write_image(b, dict(reversed(list(HEADER.items()))), dict(reversed(list(TABLES.items()))))
    assert a.read_bytes() == b.read_bytes()


def test_layout(image_bytes: bytes) -> None:
    assert image_bytes[:8] == MAGIC and len(MAGIC) == 8
    version, hlen, dlen, hcrc, dcrc = struct.unpack_from("<IIQII", image_bytes, 8)
    assert version == FORMAT_VERSION == 2
    assert PREAMBLE_SIZE == 32
    header = image_bytes[32 : 32 + hlen]
    directory = image_bytes[32 + hlen : 32 + hlen + dlen]
    assert hcrc == crc(header) and dcrc == crc(directory)
    assert msgpack.unpackb(header, raw=False) == HEADER
    entries = msgpack.unpackb(directory, raw=False)
    assert [name for name, _, _ in entries] == sorted(TABLES)  # tables sorted on disk
    pos = 32 + hlen + dlen
    for name, length, seg_crc in entries:  # segments back to back, in directory order
        segment = image_bytes[pos : pos + length]
        assert len(segment) == length and crc(segment) == seg_crc
        assert msgpack.unpackb(segment, raw=False) == TABLES[name]
        pos += length
    assert pos == len(image_bytes)  # the file ends right after the last segment
    assert craft(header, {n: _pack_rows(TABLES[n]) for n in sorted(TABLES)}) == image_bytes


def _pack_rows(rows: list) -> bytes:
    return msgpack.packb(rows, use_bin_type=True, use_single_float=False)


# --------------------------------------------------------------------------- writing


def test_write_is_atomic_and_leaves_no_temp_files(tmp_path: Path) -> None:
    p = tmp_path / "cpu.aotimg"
    write_image(p, {"v": 1}, {})
    write_image(p, {"v": 2}, {})  # replaces
    assert read_header(p) == {"v": 2}
    assert sorted(os.listdir(tmp_path)) == ["cpu.aotimg"]


def test_write_respects_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_image(tmp_path / "x.aotimg", {}, {})
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "x.aotimg").stat().st_mode) == 0o644


def test_write_failure_names_the_file(tmp_path: Path) -> None:
    p = tmp_path / "missing-folder" / "cpu.aotimg"
    with pytest.raises(ImageError) as info:
        write_image(p, {}, {})
    assert str(info.value).startswith(f"{p}: cannot write image")
    assert info.value.kind == "unwritable"


def test_encode_error_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(TypeError):
        write_image(tmp_path / "x.aotimg", {"x": object()}, {})
    assert os.listdir(tmp_path) == []


# --------------------------------------------------------------------------- lazy tables


def test_open_image_decodes_tables_on_demand(big_path: Path) -> None:
    f = open_image(big_path)
    assert f.names == ("code", "ir", "methods")
    assert f.has("ir") and not f.has("nope")
    assert f.table("code") == [list(r) for r in BIG_TABLES["code"]]
    assert f.table("methods") == [list(r) for r in BIG_TABLES["methods"]]
    assert f.table("ir") == [list(r) for r in BIG_TABLES["ir"]]


def test_table_touches_only_its_segment(monkeypatch: pytest.MonkeyPatch, big_path: Path) -> None:
    """The file is mapped, not read; the "ir" segment is neither checksummed nor decoded."""
    import serializer as image_mod

    layout = Layout(big_path.read_bytes())
    ir, code, methods = (len(layout.segments[n]) for n in ("ir", "code", "methods"))
    assert ir > 500_000
    crcs: list[int] = []
    unpacked: list[int] = []
    reads: list[int] = []
    real_crc32, real_unpackb, real_fdopen = image_mod.crc32, image_mod.msgpack.unpackb, os.fdopen

    def spy_crc32(data):
        crcs.append(len(data))
        return real_crc32(data)

    def spy_unpackb(data, **kw):
        unpacked.append(len(data))
        return real_unpackb(data, **kw)

    monkeypatch.setattr(image_mod, "crc32", spy_crc32)
    monkeypatch.setattr(image_mod.msgpack, "unpackb", spy_unpackb)
    monkeypatch.setattr(image_mod.os, "fdopen", lambda fd, *a, **kw: ReadSpy(real_fdopen(fd, *a, **kw), reads))
    f = open_image(big_path)
    assert reads == []  # mapped: no copy of the file
    hlen, dlen = len(layout.header), len(layout.directory)
    assert crcs == [hlen, dlen] and unpacked == [hlen, dlen]
    f.table("methods")
    f.table("code")
    assert crcs == unpacked == [hlen, dlen, methods, code]
    assert f.table("code") is f.table("code")  # cached: no second check or decode
    assert crcs == unpacked == [hlen, dlen, methods, code]
    assert reads == []
    f.table("ir")
    assert crcs == unpacked == [hlen, dlen, methods, code, ir]


def test_corrupted_ir_does_not_stop_the_index_tables(big_path: Path) -> None:
    data = big_path.read_bytes()
    ir = Layout(data).segments["ir"]
    big_path.write_bytes(flip(data, ir.start + len(ir) // 2))
    f = open_image(big_path)  # header, directory and segment bounds are fine
    assert f.table("code") == [list(r) for r in BIG_TABLES["code"]]
    assert f.table("methods") == [list(r) for r in BIG_TABLES["methods"]]
    with pytest.raises(ImageError) as info:
        f.table("ir")
    assert info.value.kind == "corrupt"
    assert str(info.value) == f"{big_path}: table 'ir' checksum mismatch (the file is corrupted or was modified)"
    with pytest.raises(ImageError):
        f.table("ir")  # a failed table is not cached
    assert "table 'ir' checksum mismatch" in str(expect_error(big_path, "corrupt"))
    assert read_header(big_path) == HEADER


@pytest.mark.parametrize("name", sorted(TABLES))
def test_each_segment_is_checked_on_its_own(tmp_path: Path, image_bytes: bytes, name: str) -> None:
    p = tmp_path / "s.aotimg"
    seg = Layout(image_bytes).segments[name]
    for i in (seg.start, seg.stop - 1):
        p.write_bytes(flip(image_bytes, i))
        f = open_image(p)
        for other in sorted(TABLES):
            if other == name:
                with pytest.raises(ImageError, match=f"table '{name}' checksum mismatch") as info:
                    f.table(other)
                assert info.value.kind == "corrupt"
            else:
                assert f.table(other) == TABLES[other]
        assert f"table '{name}' checksum mismatch" in str(expect_error(p, "corrupt"))


def test_missing_table(image_path: Path) -> None:
    f = open_image(image_path)
    with pytest.raises(ImageError) as info:
        f.table("ir")
    assert str(info.value) == f"{image_path}: missing table 'ir'"
    assert info.value.kind == "malformed"


def test_tables_still_answer_after_all_are_decoded(image_bytes: bytes) -> None:
    f = ImageFile.from_bytes(bytearray(image_bytes), Path("/x/y.aotimg"))
    assert f.path == "/x/y.aotimg"
    first = {name: f.table(name) for name in f.names}
    assert {name: f.table(name) for name in f.names} == first == TABLES
    assert all(f.table(name) is first[name] for name in f.names)


def test_directory_corruption(tmp_path: Path, image_bytes: bytes) -> None:
    layout = Layout(image_bytes)
    p = tmp_path / "d.aotimg"
    for i in [*layout.directory, 28, 29, 30, 31]:
        p.write_bytes(flip(image_bytes, i))
        for read in (open_image, read_image):
            with pytest.raises(ImageError) as info:
                read(p)
            assert str(info.value) == f"{p}: directory checksum mismatch (the file is corrupted or was modified)"
            assert info.value.kind == "corrupt"
        assert read_header(p) == HEADER  # the header is checked on its own


# --------------------------------------------------------------------------- malformed files


def test_truncated_at_every_offset(tmp_path: Path, image_bytes: bytes) -> None:
    p = tmp_path / "t.aotimg"
    layout = Layout(image_bytes)
    for n in range(len(image_bytes)):
        p.write_bytes(image_bytes[:n])
        err = expect_error(p, "truncated")
        with pytest.raises(ImageError) as info:
            open_image(p)
        assert info.value.kind == "truncated"
        if n < layout.base:  # too short for the header and directory: read_header sees it too
            with pytest.raises(ImageError) as info:
                read_header(p)
            assert info.value.kind == "truncated"
            if n >= PREAMBLE_SIZE:
                assert str(err) == f"{p}: truncated image (expected at least {layout.base} bytes, found {n})"
                assert str(info.value) == str(err)
        else:  # only segments missing: the header is still readable, the directory tells the full size
            assert read_header(p) == HEADER
            assert str(err) == f"{p}: truncated image (expected {len(image_bytes)} bytes, found {n})"


def test_truncated_message(tmp_path: Path, image_bytes: bytes) -> None:
    p = tmp_path / "t.aotimg"
    p.write_bytes(image_bytes[:20])
    assert str(expect_error(p)) == f"{p}: truncated image (expected at least 32 bytes, found 20)"
    p.write_bytes(image_bytes[:100])
    base = Layout(image_bytes).base
    assert str(expect_error(p)) == f"{p}: truncated image (expected at least {base} bytes, found 100)"
    p.write_bytes(image_bytes[:-1])
    n = len(image_bytes)
    assert str(expect_error(p)) == f"{p}: truncated image (expected {n} bytes, found {n - 1})"


def test_trailing_data(tmp_path: Path, image_bytes: bytes) -> None:
    p = tmp_path / "t.aotimg"
    p.write_bytes(image_bytes + b"\x00")
    n = len(image_bytes)
    err = expect_error(p, "corrupt")
    assert str(err) == f"{p}: trailing data after the image (expected {n} bytes, found {n + 1})"
    with pytest.raises(ImageError, match="trailing data"):
        open_image(p)
    assert read_header(p) == HEADER


def test_every_byte_flipped(tmp_path: Path, image_bytes: bytes) -> None:
    p = tmp_path / "f.aotimg"
    for i in range(len(image_bytes)):
        for mask in (0xFF, 0x01, 0x80):
            bad = flip(image_bytes, i, mask)
            with pytest.raises(ImageError) as info:
                decode_image(bad, p)
            assert str(info.value).startswith(f"{p}: ")
        p.write_bytes(bad)
        expect_error(p)


def test_header_flip_is_caught_by_read_header(tmp_path: Path, image_bytes: bytes) -> None:
    p = tmp_path / "f.aotimg"
    for i in [*range(24, 28), *Layout(image_bytes).header]:
        p.write_bytes(flip(image_bytes, i))
        for read in (read_header, open_image, read_image):
            with pytest.raises(ImageError, match="header checksum mismatch") as info:
                read(p)
            assert info.value.kind == "corrupt"


def test_wrong_magic(tmp_path: Path, image_bytes: bytes) -> None:
    p = tmp_path / "m.aotimg"
    p.write_bytes(b"\x7fELF" + image_bytes[4:])
    err = expect_error(p, "bad-magic")
    assert str(err) == f"{p}: not an aot image (bad magic bytes)"
    with pytest.raises(ImageError, match="bad magic"):
        read_header(p)
    with pytest.raises(ImageError, match="bad magic"):
        open_image(p)
    p.write_bytes(b"hello")
    expect_error(p, "bad-magic")


def test_newer_format_version(tmp_path: Path) -> None:
    p = tmp_path / "v.aotimg"
    # A newer format may change everything after the version field: only magic+version are read.
    p.write_bytes(MAGIC + struct.pack("<I", FORMAT_VERSION + 1) + b"whatever a future format holds")
    for read in (read_image, read_header, open_image):
        with pytest.raises(ImageError) as info:
            read(p)
        assert info.value.kind == "format-version"
        assert f"format version {FORMAT_VERSION + 1} is newer than this aot supports ({FORMAT_VERSION})" in str(
            info.value
        )


def test_older_format_version(tmp_path: Path) -> None:
    p = tmp_path / "v.aotimg"
    p.write_bytes(craft(msgpack.packb({}), version=1))
    err = expect_error(p, "format-version")
    assert f"format version 1 is older than this aot supports ({FORMAT_VERSION})" in str(err)
    assert "rebuild the image with 'aot build'" in str(err)


def test_empty_file(tmp_path: Path) -> None:
    p = tmp_path / "e.aotimg"
    p.write_bytes(b"")
    assert "empty file" in str(expect_error(p, "truncated"))
    for read in (read_header, open_image):
        with pytest.raises(ImageError, match="empty file"):
            read(p)


def test_missing_file(tmp_path: Path) -> None:
    p = tmp_path / "nope.aotimg"
    assert "No such file" in str(expect_error(p, "unreadable"))
    for read in (read_header, open_image):
        with pytest.raises(ImageError):
            read(p)


def test_directory(tmp_path: Path) -> None:
    err = expect_error(tmp_path, "unreadable")
    assert "a directory" in str(err)
    for read in (read_header, open_image):
        with pytest.raises(ImageError):
            read(tmp_path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    p = tmp_path / "fifo.aotimg"
    os.mkfifo(p)
    assert "not a regular file" in str(expect_error(p, "unreadable"))
    with pytest.raises(ImageError, match="not a regular file"):
        read_header(p)


def test_permission_denied(monkeypatch: pytest.MonkeyPatch, image_path: Path) -> None:
    import serializer as image_mod

    def deny(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(image_mod.os, "open", deny)
    assert str(expect_error(image_path, "unreadable")) == f"{image_path}: cannot read image (Permission denied)"
    for read in (read_header, open_image):
        with pytest.raises(ImageError, match="Permission denied"):
            read(image_path)


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root reads unreadable files")
def test_unreadable_file(image_path: Path) -> None:
    image_path.chmod(0)
    try:
        assert "Permission denied" in str(expect_error(image_path, "unreadable"))
    finally:
        image_path.chmod(0o644)


def test_tampered_but_checksummed_headers() -> None:
    cases = {
        "not a map": msgpack.packb([1, 2]),
        "int key": b"\x81\x01\x02",
        "bytes key": b"\x81\xc4\x01k\x02",
        "ext type": msgpack.packb({"t": msgpack.ExtType(5, b"x")}),
        "timestamp": b"\x81\xa1t\xd6\xff\x00\x00\x00\x00",
        "bad utf-8": b"\x81\xa1t\xa2\xff\xfe",
        "reserved byte": b"\xc1",
        "extra data": msgpack.packb({}) * 2,
        "empty": b"",
        "huge declared array": b"\x81\xa1t\xdd\xff\xff\xff\xff",
        "deep nesting": b"\x81\xa1t" + b"\x91" * 100_000 + b"\x00",
    }
    for why, header in cases.items():
        with pytest.raises(ImageError, match="malformed header") as info:
            decode_image(craft(header), "/x/y.aotimg")
        assert str(info.value).startswith("/x/y.aotimg: "), why
        assert info.value.kind == "malformed", why


def test_tampered_but_checksummed_directories() -> None:
    ok = msgpack.packb({})
    seg = msgpack.packb([[1]])
    cases = {
        "not an array": (msgpack.packb({"t": 1}), seg),
        "entry not a list": (msgpack.packb(["t"]), seg),
        "entry too short": (msgpack.packb([["t", len(seg)]]), seg),
        "name not a str": (msgpack.packb([[b"t", len(seg), crc(seg)]]), seg),
        "length not an int": (msgpack.packb([["t", float(len(seg)), crc(seg)]]), seg),
        "length a bool": (msgpack.packb([["t", True, crc(b"\x90")]]), b"\x90"),
        "negative length": (msgpack.packb([["t", -1, 0], ["u", len(seg) + 1, crc(seg)]]), seg),
        "checksum too large": (msgpack.packb([["t", len(seg), 2**32]]), seg),
        "checksum negative": (msgpack.packb([["t", len(seg), -1]]), seg),
        "unsorted": (msgpack.packb([["u", 1, crc(b"\x90")], ["t", 1, crc(b"\x90")]]), b"\x90\x90"),
        "repeated": (msgpack.packb([["t", 1, crc(b"\x90")], ["t", 1, crc(b"\x90")]]), b"\x90\x90"),
        "ext type": (msgpack.packb([msgpack.ExtType(1, b"")]), b""),
        "extra data": (msgpack.packb([]) * 2, b""),
        "empty": (b"", b""),
    }
    for why, (directory, rest) in cases.items():
        with pytest.raises(ImageError, match="malformed directory") as info:
            ImageFile.from_bytes(craft_raw(ok, directory, rest), "/x/y.aotimg")
        assert str(info.value).startswith("/x/y.aotimg: "), why
        assert info.value.kind == "malformed", why


def test_directory_lengths_must_tile_the_file() -> None:
    ok = msgpack.packb({})
    seg = msgpack.packb([[1]])
    too_long = craft_raw(ok, msgpack.packb([["t", len(seg) + 1, crc(seg)]]), seg)
    with pytest.raises(ImageError, match=r"truncated image \(expected") as info:
        ImageFile.from_bytes(too_long)
    assert info.value.kind == "truncated"
    too_short = craft_raw(ok, msgpack.packb([["t", len(seg) - 1, crc(seg)]]), seg)
    with pytest.raises(ImageError, match="trailing data") as info:
        ImageFile.from_bytes(too_short)
    assert info.value.kind == "corrupt"
    huge = craft_raw(ok, msgpack.packb([["t", 2**64 - 1, 0]]), seg)
    with pytest.raises(ImageError, match="truncated") as info:
        decode_image(huge)
    # extra trailing fields in an entry are ignored, like a record's
    extended = craft_raw(ok, msgpack.packb([["t", len(seg), crc(seg), "from a newer aot"]]), seg)
    assert decode_image(extended).tables == {"t": [[1]]}


def test_tampered_but_checksummed_tables() -> None:
    ok = msgpack.packb({})
    cases = {
        "table not a list": msgpack.packb(3),
        "table a map": msgpack.packb({"a": [1]}),
        "record not a list": msgpack.packb([1]),
        "one record not a list": msgpack.packb([[1], [2], "3"]),
        "int key": b"\x91\x91\x81\x01\x02",
        "ext type": msgpack.packb([[msgpack.ExtType(5, b"x")]]),
        "bad utf-8": b"\x91\x91\xa2\xff\xfe",
        "extra data": msgpack.packb([]) * 2,
        "empty": b"",
        "huge declared array": b"\xdd\xff\xff\xff\xff",
        "deep nesting": b"\x91" * 100_000 + b"\x00",
    }
    for why, seg in cases.items():
        data = craft(ok, {"a": msgpack.packb([[1]]), "t": seg})
        f = ImageFile.from_bytes(data, "/x/y.aotimg")  # the container is fine ...
        assert f.table("a") == [[1]]
        with pytest.raises(ImageError, match="malformed table 't'") as info:
            f.table("t")  # ... the table is not
        assert str(info.value).startswith("/x/y.aotimg: "), why
        assert info.value.kind == "malformed", why
        with pytest.raises(ImageError, match="malformed table 't'"):
            decode_image(data, "/x/y.aotimg")


def test_error_args_and_str() -> None:
    e = ImageError(Path("/x/y.aotimg"), "truncated image (expected 1234 bytes, found 100)", "truncated")
    assert str(e) == "/x/y.aotimg: truncated image (expected 1234 bytes, found 100)"
    assert (e.path, e.kind) == ("/x/y.aotimg", "truncated")
    assert ImageError(*e.args).args == e.args


def _open_all(data: bytes) -> None:
    """Decode everything both ways; only ImageError may escape."""
    try:
        decode_image(data, "/r.aotimg")
    except ImageError as e:
        assert e.path == "/r.aotimg"
    try:
        f = ImageFile.from_bytes(data, "/r.aotimg")
    except ImageError:
        return
    assert isinstance(f.header, dict) and all(type(n) is str for n in f.names)
    for name in f.names:
        try:
            rows = f.table(name)
        except ImageError:
            continue
        assert type(rows) is list and all(type(r) is list for r in rows)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.binary(max_size=512) | st.binary(max_size=512).map(lambda rest: MAGIC + struct.pack("<I", FORMAT_VERSION) + rest)
)
def test_random_bytes(data: bytes) -> None:
    with pytest.raises(ImageError):
        decode_image(data, "/r.aotimg")
    with pytest.raises(ImageError):
        ImageFile.from_bytes(data, "/r.aotimg")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=256), st.binary(max_size=256), st.binary(max_size=256))
def test_random_payloads_behind_valid_checksums(header: bytes, directory: bytes, rest: bytes) -> None:
    """Past the checksums the decoder still never fails with anything but ImageError."""
    _open_all(craft_raw(header, directory, rest))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=4), st.binary(max_size=128), max_size=4))
def test_random_segments_behind_a_valid_directory(segments: dict) -> None:
    _open_all(craft(msgpack.packb({}), dict(sorted(segments.items()))))


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_random_damage_to_a_valid_image(data) -> None:
    """Flip, cut, insert or overwrite bytes of a real image: always ImageError, never another exception."""
    image = encode_image(HEADER, TABLES)
    i = data.draw(st.integers(0, len(image) - 1))
    how = data.draw(st.sampled_from(["flip", "cut", "insert", "overwrite"]))
    if how == "flip":
        bad = flip(image, i, data.draw(st.integers(1, 255)))
    elif how == "cut":
        bad = image[:i] + image[i + data.draw(st.integers(1, 16)) :]
    elif how == "insert":
        bad = image[:i] + data.draw(st.binary(min_size=1, max_size=8)) + image[i:]
    else:
        chunk = data.draw(st.binary(min_size=1, max_size=8))
        bad = image[:i] + chunk + image[i + len(chunk) :]
    if bad == image:
        return
    with pytest.raises(ImageError):
        decode_image(bad, "/r.aotimg")
    _open_all(bad)


values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=8)
    | st.binary(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=50, deadline=None)
@given(
    st.dictionaries(st.text(max_size=6), values, max_size=5),
    st.dictionaries(st.text(max_size=6), st.lists(st.lists(values, max_size=4), max_size=4), max_size=4),
)
def test_random_round_trip(header: dict, tables: dict) -> None:
    data = encode_image(header, tables)
    img = decode_image(data)
    assert img.header == header and img.tables == tables
    assert encode_image(img.header, img.tables) == data
    f = ImageFile.from_bytes(data)
    assert f.names == tuple(sorted(tables))
    assert all(f.table(name) == rows for name, rows in tables.items())


# --------------------------------------------------------------------------- read_header


class ReadSpy:
    """Wraps the file ``serializer`` opens, recording how many bytes each read returns."""

    def __init__(self, f, reads: list[int]) -> None:
        self.f = f
        self.reads = reads

    def read(self, n: int = -1) -> bytes:
        data = self.f.read(n)
        self.reads.append(len(data))
        return data

    def fileno(self) -> int:
        return self.f.fileno()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.f.close()


def test_read_header_ignores_damaged_tables(image_path: Path) -> None:
    data = bytearray(image_path.read_bytes())
    data[-1] ^= 0xFF  # the last segment
    image_path.write_bytes(bytes(data))
    assert read_header(image_path) == HEADER  # only magic, version, lengths and header checked
    last = sorted(TABLES)[-1]
    assert f"table '{last}' checksum mismatch" in str(expect_error(image_path, "corrupt"))  # the full check


def test_read_header_does_not_read_past_the_header(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import serializer as image_mod

    p = tmp_path / "big.aotimg"
    write_image(p, HEADER, {"blob": [[b"\x00" * 1_000_000]], **{f"t{i}": [[i]] for i in range(1000)}})
    reads: list[int] = []
    real_fdopen = os.fdopen
    monkeypatch.setattr(image_mod.os, "fdopen", lambda fd, *a, **kw: ReadSpy(real_fdopen(fd, *a, **kw), reads))
    assert read_header(p) == HEADER
    assert reads == [PREAMBLE_SIZE, len(Layout(p.read_bytes()).header)]  # not one byte of the directory


def test_read_header_of_an_image_cut_inside_the_directory(tmp_path: Path, image_bytes: bytes) -> None:
    p = tmp_path / "t.aotimg"
    layout = Layout(image_bytes)
    p.write_bytes(image_bytes[: layout.base - 1])
    with pytest.raises(ImageError) as info:
        read_header(p)
    assert str(info.value) == f"{p}: truncated image (expected at least {layout.base} bytes, found {layout.base - 1})"


# --------------------------------------------------------------------------- records

METHODS = record("methods", "key", "fingerprint", ("options", None), ("tags", []))


def test_record_pack_unpack() -> None:
    obj = {"key": "pkg.mod:f", "fingerprint": "ab", "options": {"x": 1}, "tags": ["t"]}
    rec = METHODS.pack(obj)
    assert rec == ["pkg.mod:f", "ab", {"x": 1}, ["t"]]
    assert METHODS.unpack(rec) == obj
    assert METHODS.fields == ("key", "fingerprint", "options", "tags")


def test_record_pack_fills_defaults() -> None:
    assert METHODS.pack({"key": "k", "fingerprint": "f"}) == ["k", "f", None, []]


def test_record_unpack_newer_and_older_records() -> None:
    assert METHODS.unpack(["k", "f", None, [], "from a newer aot", 7]) == {
        "key": "k",
        "fingerprint": "f",
        "options": None,
        "tags": [],
    }
    older = METHODS.unpack(("k", "f"))
    assert older == {"key": "k", "fingerprint": "f", "options": None, "tags": []}
    older["tags"].append("x")  # defaults are copied, never shared
    assert METHODS.unpack(["k", "f"])["tags"] == []


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: METHODS.pack({"key": "k"}), "missing fields \\['fingerprint'\\]"),
        (lambda: METHODS.pack({"key": "k", "fingerprint": "f", "typo": 1}), "unknown fields \\['typo'\\]"),
        (lambda: METHODS.unpack(["k"]), "record has 1 fields, needs at least 2"),
        (lambda: METHODS.unpack({"key": "k"}), "must be a list"),
        (lambda: METHODS.unpack_all([["k", "f"], ["k"]]), "record 1 of methods"),
    ],
)
def test_record_errors(call, match) -> None:
    with pytest.raises(RecordError, match=match):
        call()


def test_record_schema_rules() -> None:
    with pytest.raises(ValueError, match="after appended field"):
        record("t", ("a", 0), "b")
    with pytest.raises(ValueError, match="duplicate"):
        record("t", "a", ("a", 0))
    with pytest.raises(TypeError):
        record("t", 3)
    assert record("t", "a", ("b", 1)) == RecordSchema("t", ("a",), (("b", 1),))


def test_image_records(tmp_path: Path) -> None:
    p = tmp_path / "r.aotimg"
    write_image(p, {}, {"methods": METHODS.pack_all([{"key": "k", "fingerprint": "f"}]), "bad": [["k"]]})
    img = read_image(p)
    assert img.records(METHODS) == [{"key": "k", "fingerprint": "f", "options": None, "tags": []}]
    bad_schema = record("bad", "key", "fingerprint")
    with pytest.raises(ImageError, match=r"r\.aotimg: record 0 of bad: record has 1 fields"):
        img.records(bad_schema)
    with pytest.raises(ImageError, match="missing table 'nope'"):
        img.records(record("nope", "a"))


def test_tables_decode_as_tuples_for_readers_that_only_look(big_path: Path) -> None:
    f = open_image(big_path)
    as_tuples = f.table("code", tuples=True)
    assert type(as_tuples) is tuple and all(type(r) is tuple for r in as_tuples)
    assert as_tuples[0] == (0, "f0", ("f64", "i64"), "f64", b"\x00" * 16)  # nested arrays too
    assert len(as_tuples) == len(BIG_TABLES["code"])
    assert f.table("code", tuples=True) is as_tuples  # cached per form
    assert f.table("code") == [list(r) for r in BIG_TABLES["code"]]
    assert f.table("methods", tuples=True) == tuple(tuple(r) for r in BIG_TABLES["methods"])


# ---------------------------------------------------------------------------- indexed tables (per record)


def _to_tuples(value):
    return tuple(_to_tuples(v) for v in value) if isinstance(value, (list, tuple)) else value


ROWS = [[i, f"pkg.m{i % 3}:f{i}", ["f64"] * (i % 4), b"\x00" * i, {"k": i}] for i in range(40)]


def test_an_indexed_table_is_stored_as_it_would_be_and_read_record_by_record() -> None:
    tables = {"a": ROWS, "b": [[1]], "empty": []}
    data = encode_image(HEADER, tables, indexed=("a", "empty"))
    plain = encode_image(HEADER, tables)
    f, g = ImageFile.from_bytes(data), ImageFile.from_bytes(plain)
    assert f.names == ("a", "a.offsets", "b", "empty", "empty.offsets")
    assert bytes(data[slice(*f.span("a"))]) == bytes(plain[slice(*g.span("a"))])  # the same segment
    assert decode_image(data).tables == decode_image(plain).tables == tables  # offsets are layout, not content
    records = f.records("a")
    assert len(records) == 40 and len(f.records("empty")) == 0
    assert [records[i] for i in range(40)] == [_to_tuples(r) for r in ROWS]
    assert records.run(3, 17) == tuple(_to_tuples(r) for r in ROWS[3:17])
    with pytest.raises(IndexError):
        records[40]
    with pytest.raises(IndexError):
        records.run(5, 5)


def test_records_of_a_table_written_without_offsets_are_worked_out() -> None:
    """A tool that rewrites an image from its decoded tables drops the offsets: records still read."""
    f = ImageFile.from_bytes(encode_image(HEADER, {"a": ROWS}))
    assert f.records("a").run(0, 40) == tuple(_to_tuples(r) for r in ROWS)


def test_indexing_a_table_that_is_not_there_is_an_error() -> None:
    with pytest.raises(ValueError, match="not there"):
        encode_image(HEADER, {"a": ROWS}, indexed=("b",))
    with pytest.raises(ValueError, match="named like"):
        encode_image(HEADER, {"a": ROWS, "a.offsets": [[1]]}, indexed=("a",))


def _with_offsets(offsets: list[int] | bytes) -> bytes:
    """An image whose table ``a`` (ROWS) has these offsets, under valid checksums."""
    segment = msgpack.packb(ROWS)
    blob = offsets if isinstance(offsets, bytes) else struct.pack(f"<{len(offsets)}I", *offsets)
    return craft(msgpack.packb({}), {"a": segment, "a.offsets": msgpack.packb([[blob]])})


def test_offsets_that_do_not_fit_their_table_are_refused_cleanly() -> None:
    good = ImageFile.from_bytes(encode_image({}, {"a": ROWS}, indexed=("a",))).table("a.offsets")[0][0]
    offsets = list(struct.unpack(f"<{len(good) // 4}I", good))
    assert ImageFile.from_bytes(_with_offsets(offsets)).records("a")[7] == _to_tuples(ROWS[7])
    for bad in (
        offsets[:-1],
        offsets + [offsets[-1]],
        [offsets[0] + 1] + offsets[1:],
        offsets[:-1] + [offsets[-1] + 1],
        b"\x00\x01\x02",
        b"",
    ):
        with pytest.raises(ImageError, match="malformed table 'a.offsets'"):
            ImageFile.from_bytes(_with_offsets(bad)).records("a")
    # Offsets that fit the table as a whole but cut records apart: found when those records are read.
    shifted = offsets[:5] + [offsets[5] + 1] + offsets[6:]
    records = ImageFile.from_bytes(_with_offsets(shifted)).records("a")
    assert records[2] == _to_tuples(ROWS[2])
    for i in (4, 5):
        with pytest.raises(ImageError, match="malformed table 'a'"):
            records[i]
    backwards = offsets[:5] + [offsets[7]] + offsets[6:]
    with pytest.raises(ImageError, match="records 5 to 5 lie outside it"):
        ImageFile.from_bytes(_with_offsets(backwards)).records("a")[5]


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.lists(
            st.one_of(
                st.integers(-5, 10**6),
                st.text(max_size=5),
                st.binary(max_size=8),
                st.lists(st.integers(0, 3), max_size=3),
            ),
            max_size=4,
        ),
        max_size=30,
    ),
    st.data(),
)
def test_runs_of_records_read_back_what_was_written(rows, data) -> None:
    f = ImageFile.from_bytes(encode_image({}, {"t": rows}, indexed=("t",)))
    records = f.records("t")
    assert len(records) == len(rows)
    if rows:
        i = data.draw(st.integers(0, len(rows) - 1))
        j = data.draw(st.integers(i + 1, len(rows)))
        assert records.run(i, j) == tuple(_to_tuples(r) for r in rows[i:j])


def test_the_package_exports_what_it_lists() -> None:
    import serializer

    assert all(hasattr(serializer, name) for name in serializer.__all__)


@pytest.mark.parametrize("size", [0, 10, 255, 256, 65535, 65536])  # bin 8, 16 and 32 and their edges
def test_a_blob_is_found_in_place_not_decoded(tmp_path: Path, size: int) -> None:
    """``blob`` says where a one-bin table's bytes lie in the mapped file: they compare equal to what was
    written, and nothing was copied to find them."""
    payload = bytes(range(256)) * (size // 256) + bytes(size % 256)
    path = tmp_path / "blob.aotimg"
    write_image(path, {"v": 1}, {"blob": [[payload]], "other": [[1, 2]]})
    image = open_image(path)
    source, start, end = image.blob("blob")
    assert source[start:end] == payload and end - start == size
    assert image.span("blob")[1] == end  # (the bytes end the table)


def test_a_blob_of_an_image_in_another_buffer_is_still_bytes() -> None:
    import array

    data = encode_image({}, {"blob": [[b"abc" * 50]]})
    source, start, end = ImageFile.from_bytes(array.array("B", data)).blob("blob")
    assert source[start:end] == b"abc" * 50


@pytest.mark.parametrize("table", [[[1, 2]], [[b"x", b"y"]], [[b"x"], [b"y"]], [], [["text"]]])
def test_a_table_that_is_not_one_bin_is_no_blob(table: list) -> None:
    image = ImageFile.from_bytes(encode_image({}, {"t": table}))
    with pytest.raises(ImageError, match="not one record of one bin"):
        image.blob("t")
    with pytest.raises(ImageError, match="missing table"):
        image.blob("nothing")


def test_a_damaged_blob_is_found_by_its_checksum(tmp_path: Path) -> None:
    path = tmp_path / "blob.aotimg"
    write_image(path, {}, {"blob": [[b"abcdef" * 100]]})
    data = bytearray(path.read_bytes())
    start, end = ImageFile.from_bytes(bytes(data)).span("blob")
    data[end - 1] ^= 0xFF
    with pytest.raises(ImageError, match="checksum"):
        ImageFile.from_bytes(bytes(data)).blob("blob")
