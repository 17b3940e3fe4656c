"""Tests of the image container: round trips, determinism, and refusal of every malformed file.

    encode_image({"a": 1}, {"t": [[1, 2]]}) -> bytes; decode_image(bytes) -> Image(header={"a": 1}, ...)
    any byte flipped / file truncated / random bytes -> ImageError naming the file, never anything else
"""

from __future__ import annotations

import hashlib
import os
import stat
import struct
import sys
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
    RecordError,
    RecordSchema,
    decode_image,
    encode_image,
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


def craft(header: bytes, body: bytes, *, version: int = FORMAT_VERSION, magic: bytes = MAGIC) -> bytes:
    """An image with arbitrary header/body bytes but consistent lengths and checksums."""
    pre = struct.pack(
        "<8sIIQ32s32s",
        magic,
        version,
        len(header),
        len(body),
        hashlib.sha256(header).digest(),
        hashlib.sha256(body).digest(),
    )
    return pre + header + body


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


# --------------------------------------------------------------------------- round trip


def test_round_trip(image_path: Path) -> None:
    img = read_image(image_path)
    assert isinstance(img, Image)
    assert img.path == str(image_path)
    assert img.header == HEADER
    assert img.tables == TABLES
    assert read_header(image_path) == HEADER


def test_round_trip_value_model() -> None:
    header = {"none": None, "t": True, "f": False, "neg": -1, "big": 2**64 - 1, "small": -(2**63),
              "x": 0.1, "inf": float("inf"), "s": "héllo ∑", "b": b"\xff\x00", "nested": [[1, [2, "3"]]]}
    tables = {"tuples": [(1, (2, 3)), ["a", {"k": (4,)}]], "empty": []}
    img = decode_image(encode_image(header, tables))
    assert img.header == header
    assert img.header["x"] == 0.1  # float64, not float32
    assert type(img.header["b"]) is bytes and type(img.header["s"]) is str
    assert img.tables == {"tuples": [[1, [2, 3]], ["a", {"k": [4]}]], "empty": []}


def test_floats_are_float64() -> None:
    data = encode_image({"x": 1.0}, {})
    assert b"\xcb\x3f\xf0\x00\x00\x00\x00\x00\x00" in data  # msgpack float64 of 1.0


def test_subclasses_are_stored_as_plain_values() -> None:
    import enum

    class Kind(enum.IntEnum):
        CALL = 3

    class Name(str):
        pass

    img = decode_image(encode_image({Name("k"): Name("v")}, {"t": [[Kind.CALL, bytearray(b"x")]]}))
    assert img.header == {"k": "v"} and type(img.header["k"]) is str
    assert img.tables == {"t": [[3, b"x"]]}


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
    version, hlen, blen = struct.unpack_from("<IIQ", image_bytes, 8)
    assert version == FORMAT_VERSION == 1
    assert PREAMBLE_SIZE == 88
    assert len(image_bytes) == PREAMBLE_SIZE + hlen + blen
    header = image_bytes[PREAMBLE_SIZE : PREAMBLE_SIZE + hlen]
    body = image_bytes[PREAMBLE_SIZE + hlen :]
    assert image_bytes[24:56] == hashlib.sha256(header).digest()
    assert image_bytes[56:88] == hashlib.sha256(body).digest()
    assert msgpack.unpackb(header, raw=False) == HEADER
    assert list(msgpack.unpackb(body, raw=False)) == sorted(TABLES)  # keys sorted on disk


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


def test_encode_error_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(TypeError):
        write_image(tmp_path / "x.aotimg", {"x": object()}, {})
    assert os.listdir(tmp_path) == []


# --------------------------------------------------------------------------- malformed files


def test_truncated_at_every_offset(tmp_path: Path, image_bytes: bytes) -> None:
    p = tmp_path / "t.aotimg"
    for n in range(len(image_bytes)):
        p.write_bytes(image_bytes[:n])
        err = expect_error(p, "truncated")
        with pytest.raises(ImageError):
            read_header(p)
        if n >= PREAMBLE_SIZE:
            assert f"found {n})" in str(err)
            assert f"expected {len(image_bytes)} bytes" in str(err)


def test_truncated_message(tmp_path: Path, image_bytes: bytes) -> None:
    p = tmp_path / "t.aotimg"
    p.write_bytes(image_bytes[:100])
    err = expect_error(p)
    assert str(err) == f"{p}: truncated image (expected {len(image_bytes)} bytes, found 100)"


def test_trailing_data(tmp_path: Path, image_bytes: bytes) -> None:
    p = tmp_path / "t.aotimg"
    p.write_bytes(image_bytes + b"\x00")
    assert "trailing data" in str(expect_error(p, "corrupt"))


def test_every_byte_flipped(tmp_path: Path, image_bytes: bytes) -> None:
    p = tmp_path / "f.aotimg"
    for i in range(len(image_bytes)):
        for mask in (0xFF, 0x01, 0x80):
            bad = bytearray(image_bytes)
            bad[i] ^= mask
            with pytest.raises(ImageError) as info:
                decode_image(bytes(bad), p)
            assert str(info.value).startswith(f"{p}: ")
        p.write_bytes(bytes(bad))
        expect_error(p)


def test_header_flip_is_caught_by_read_header(tmp_path: Path, image_bytes: bytes) -> None:
    hlen = struct.unpack_from("<I", image_bytes, 12)[0]
    p = tmp_path / "f.aotimg"
    header_digest, header_bytes = range(24, 56), range(PREAMBLE_SIZE, PREAMBLE_SIZE + hlen)
    for i in [*header_digest, *header_bytes]:
        bad = bytearray(image_bytes)
        bad[i] ^= 0x01
        p.write_bytes(bytes(bad))
        with pytest.raises(ImageError, match="header checksum mismatch"):
            read_header(p)


def test_wrong_magic(tmp_path: Path, image_bytes: bytes) -> None:
    p = tmp_path / "m.aotimg"
    p.write_bytes(b"\x7fELF" + image_bytes[4:])
    err = expect_error(p, "bad-magic")
    assert str(err) == f"{p}: not an aot image (bad magic bytes)"
    with pytest.raises(ImageError, match="bad magic"):
        read_header(p)
    p.write_bytes(b"hello")
    expect_error(p, "bad-magic")


def test_newer_format_version(tmp_path: Path) -> None:
    p = tmp_path / "v.aotimg"
    # A newer format may change everything after the version field: only magic+version are read.
    p.write_bytes(MAGIC + struct.pack("<I", FORMAT_VERSION + 1) + b"whatever a future format holds")
    for read in (read_image, read_header):
        with pytest.raises(ImageError) as info:
            read(p)
        assert info.value.kind == "format-version"
        assert f"format version {FORMAT_VERSION + 1} is newer than this aot supports ({FORMAT_VERSION})" in str(
            info.value
        )


def test_older_format_version(tmp_path: Path) -> None:
    p = tmp_path / "v.aotimg"
    p.write_bytes(craft(msgpack.packb({}), msgpack.packb({}), version=0))
    err = expect_error(p, "format-version")
    assert f"format version 0 is older than this aot supports ({FORMAT_VERSION})" in str(err)


def test_empty_file(tmp_path: Path) -> None:
    p = tmp_path / "e.aotimg"
    p.write_bytes(b"")
    assert "empty file" in str(expect_error(p, "truncated"))
    with pytest.raises(ImageError, match="empty file"):
        read_header(p)


def test_missing_file(tmp_path: Path) -> None:
    p = tmp_path / "nope.aotimg"
    assert "No such file" in str(expect_error(p, "unreadable"))
    with pytest.raises(ImageError):
        read_header(p)


def test_directory(tmp_path: Path) -> None:
    err = expect_error(tmp_path, "unreadable")
    assert "a directory" in str(err)
    with pytest.raises(ImageError):
        read_header(tmp_path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    p = tmp_path / "fifo.aotimg"
    os.mkfifo(p)
    assert "not a regular file" in str(expect_error(p, "unreadable"))


def test_permission_denied(monkeypatch: pytest.MonkeyPatch, image_path: Path) -> None:
    import serializer.image as image_mod

    def deny(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(image_mod.os, "open", deny)
    assert str(expect_error(image_path, "unreadable")) == f"{image_path}: cannot read image (Permission denied)"
    with pytest.raises(ImageError, match="Permission denied"):
        read_header(image_path)


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root reads unreadable files")
def test_unreadable_file(image_path: Path) -> None:
    image_path.chmod(0)
    try:
        assert "Permission denied" in str(expect_error(image_path, "unreadable"))
    finally:
        image_path.chmod(0o644)


def test_tampered_but_checksummed_payloads() -> None:
    ok = msgpack.packb({})
    cases = {
        "not a map": (msgpack.packb([1, 2]), ok),
        "int key": (b"\x81\x01\x02", ok),
        "ext type": (msgpack.packb({"t": msgpack.ExtType(5, b"x")}), ok),
        "timestamp": (b"\x81\xa1t\xd6\xff\x00\x00\x00\x00", ok),
        "bad utf-8": (b"\x81\xa1t\xa2\xff\xfe", ok),
        "reserved byte": (b"\xc1", ok),
        "extra data": (ok + ok, ok),
        "huge declared array": (b"\x81\xa1t\xdd\xff\xff\xff\xff", ok),
        "deep nesting": (b"\x81\xa1t" + b"\x91" * 100_000 + b"\x00", ok),
        "table not a list": (ok, msgpack.packb({"t": 3})),
        "record not a list": (ok, msgpack.packb({"t": [1]})),
    }
    for why, (header, body) in cases.items():
        with pytest.raises(ImageError, match="malformed") as info:
            decode_image(craft(header, body), "/x/y.aotimg")
        assert str(info.value).startswith("/x/y.aotimg: "), why


def test_error_args_and_str() -> None:
    e = ImageError(Path("/x/y.aotimg"), "truncated image (expected 1234 bytes, found 100)", "truncated")
    assert str(e) == "/x/y.aotimg: truncated image (expected 1234 bytes, found 100)"
    assert (e.path, e.kind) == ("/x/y.aotimg", "truncated")
    assert ImageError(*e.args).args == e.args


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.binary(max_size=512)
    | st.binary(max_size=512).map(lambda rest: MAGIC + struct.pack("<I", FORMAT_VERSION) + rest)
)
def test_random_bytes(data: bytes) -> None:
    with pytest.raises(ImageError):
        decode_image(data, "/r.aotimg")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=512), st.binary(max_size=512))
def test_random_payloads_behind_valid_checksums(header: bytes, body: bytes) -> None:
    """Past the checksums the decoder still never fails with anything but ImageError."""
    try:
        img = decode_image(craft(header, body), "/r.aotimg")
    except ImageError:
        return
    assert isinstance(img.header, dict) and isinstance(img.tables, dict)


values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False)
    | st.text(max_size=8) | st.binary(max_size=8),
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


# --------------------------------------------------------------------------- read_header


def test_read_header_ignores_a_corrupted_body(image_path: Path) -> None:
    data = bytearray(image_path.read_bytes())
    data[-1] ^= 0xFF
    image_path.write_bytes(bytes(data))
    assert read_header(image_path) == HEADER  # only magic, version, lengths and header checked
    assert "body checksum mismatch" in str(expect_error(image_path, "corrupt"))  # the full check


def test_read_header_does_not_read_the_body(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import serializer.image as image_mod

    p = tmp_path / "big.aotimg"
    write_image(p, HEADER, {"blob": [[b"\x00" * 1_000_000]]})
    reads: list[int] = []
    real_fdopen = os.fdopen

    class Spy:
        def __init__(self, f):
            self.f = f

        def read(self, n: int = -1) -> bytes:
            data = self.f.read(n)
            reads.append(len(data))
            return data

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

    monkeypatch.setattr(image_mod.os, "fdopen", lambda fd, mode: Spy(real_fdopen(fd, mode)))
    assert read_header(p) == HEADER
    assert 0 < sum(reads) < 1000


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
        "key": "k", "fingerprint": "f", "options": None, "tags": []}
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
