r"""The aot image container: a checksummed, versioned msgpack file.

    write_image(p, {"compiler_version": "0.1.0"}, {"methods": [("pkg.mod:f", 3)]})
    read_header(p)        ->  {"compiler_version": "0.1.0"}
    read_image(p).tables  ->  {"methods": [["pkg.mod:f", 3]]}
    p.write_bytes(p.read_bytes()[:100]); read_image(p)
                          ->  ImageError: p: truncated image (expected 134 bytes, found 100)

On-disk layout (all integers little-endian)::

    offset  size  field
    0       8     MAGIC (b"\x89AOTIMG\n")         } the only part every future format
    8       4     format version (u32)            } keeps: checked before anything else
    12      4     header length H in bytes (u32)
    16      8     body length B in bytes (u64)
    24      32    sha256 of the header bytes
    56      32    sha256 of the body bytes
    88      H     header: msgpack map, str keys
    88+H    B     body: msgpack map, table name -> list of records (each a list)
    88+H+B        end of file (trailing bytes are an error)

The header is small and read on its own at import time (``read_header``); the body is
only read, checksummed and decoded by ``read_image``.  Encoding is canonical: map keys
are sorted, tuples become lists, floats are float64, so equal input gives identical
bytes.  Decoding never trusts the file: every malformed input raises ``ImageError``
naming the file, and msgpack runs with size limits derived from the bytes at hand.
"""

from __future__ import annotations

import os
import stat
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple, Union

import msgpack

from .digest import sha256

from .files import atomic_write_bytes

from serializer.records import RecordError, RecordSchema

__all__ = [
    "FORMAT_VERSION",
    "MAGIC",
    "PREAMBLE_SIZE",
    "Image",
    "ImageError",
    "decode_image",
    "encode_image",
    "read_header",
    "read_image",
    "write_image",
]

PathLike = Union[str, "os.PathLike[str]"]

#: Bumped on any change a reader of the previous version could not decode.  Additions
#: of trailing record fields or of new tables do not bump it (records are only extended).
FORMAT_VERSION = 1

#: PNG-style: the high-bit byte catches 7-bit transfers, the newline catches
#: line-ending conversion, and the ASCII in between makes the file recognizable.
MAGIC = b"\x89AOTIMG\n"

_PREAMBLE = struct.Struct("<8sIIQ32s32s")
#: Bytes before the header: magic, version, two lengths, two digests.
PREAMBLE_SIZE = _PREAMBLE.size  # 88
_VERSION_END = len(MAGIC) + 4  # magic + version: stable across format versions

_MAX_U32 = 2**32 - 1
_MIN_INT = -(2**63)
_MAX_INT = 2**64 - 1

_Value = Union[None, bool, int, float, str, bytes, list, dict]


class ImageError(Exception):
    """A file that is not a valid, loadable image; the message names the file.

    ``kind`` is a short machine-readable reason: ``unreadable``, ``bad-magic``,
    ``format-version``, ``truncated``, ``corrupt`` or ``malformed`` (and ``unwritable``
    from ``write_image``).
    """

    def __init__(self, path: PathLike, why: str, kind: str = "malformed") -> None:
        super().__init__(os.fspath(path), why, kind)
        self.path = os.fspath(path)
        self.why = why
        self.kind = kind

    def __str__(self) -> str:
        return f"{self.path}: {self.why}"


class Image(NamedTuple):
    """A decoded image: its header map and its tables of positional records."""

    path: str
    header: dict[str, Any]
    tables: dict[str, list[list[Any]]]

    def records(self, schema: RecordSchema) -> list[dict[str, Any]]:
        """Unpack the table named ``schema.table``; a bad or missing table is an ImageError."""
        rows = self.tables.get(schema.table)
        if rows is None:
            raise ImageError(self.path, f"missing table {schema.table!r}", "malformed")
        try:
            return schema.unpack_all(rows)
        except RecordError as e:
            raise ImageError(self.path, str(e), "malformed") from None


# --------------------------------------------------------------------------- encoding


def _canonical(value: Any, where: str) -> _Value:
    """Exact builtin types only, dicts with sorted str keys, tuples as lists."""
    if value is None or value is True or value is False:
        return value
    if isinstance(value, int):
        if not _MIN_INT <= value <= _MAX_INT:
            raise ValueError(f"{where}: integer {value} does not fit in 64 bits")
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, (list, tuple)):
        return [_canonical(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        items = []
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f"{where}: map key {k!r} is not a str")
            items.append((str.__str__(k), v))
        items.sort(key=lambda kv: kv[0])
        return {k: _canonical(v, f"{where}.{k}") for k, v in items}
    raise TypeError(
        f"{where}: {type(value).__name__} cannot be stored in an image "
        "(only None, bool, int, float, str, bytes, list, tuple and str-keyed dicts)"
    )


def _pack(obj: _Value) -> bytes:
    return msgpack.packb(obj, use_bin_type=True, use_single_float=False, strict_types=True)


def encode_image(header: Mapping[str, Any], tables: Mapping[str, Any]) -> bytes:
    """The bytes of an image file; identical for equal input whatever the dict order.

    Raises TypeError/ValueError for values an image cannot hold (a programming error,
    not a file problem): anything but None, bool, 64-bit int, float, str, bytes,
    list/tuple and dicts with str keys.
    """
    if not isinstance(header, Mapping):
        raise TypeError(f"header must be a mapping, not {type(header).__name__}")
    if not isinstance(tables, Mapping):
        raise TypeError(f"tables must be a mapping, not {type(tables).__name__}")
    for name, rows in tables.items():
        if not isinstance(name, str):
            raise TypeError(f"table name {name!r} is not a str")
        if not isinstance(rows, (list, tuple)):
            raise TypeError(f"table {name!r} must be a list of records, not {type(rows).__name__}")
        for i, row in enumerate(rows):
            if not isinstance(row, (list, tuple)):
                raise TypeError(f"table {name!r} record {i} must be a list, not {type(row).__name__}")
    header_bytes = _pack(_canonical(header, "header"))
    body_bytes = _pack(_canonical(tables, "tables"))
    if len(header_bytes) > _MAX_U32:
        raise ValueError(f"image header is too large ({len(header_bytes)} bytes)")
    preamble = _PREAMBLE.pack(
        MAGIC,
        FORMAT_VERSION,
        len(header_bytes),
        len(body_bytes),
        sha256(header_bytes).digest(),
        sha256(body_bytes).digest(),
    )
    return preamble + header_bytes + body_bytes


def write_image(path: PathLike, header: Mapping[str, Any], tables: Mapping[str, Any]) -> None:
    """Encode and write atomically: a reader sees the old file or the new one, never a mix.

    The bytes go to a temporary file in the same folder, are fsynced, and the file is
    renamed over ``path``.  OS failures raise ImageError naming ``path``.
    """
    data = encode_image(header, tables)
    target = Path(path)
    try:
        atomic_write_bytes(target, data)
    except OSError as e:
        raise ImageError(target, f"cannot write image ({e.strerror or e})", "unwritable") from e
    _fsync_dir(target.parent)


def _fsync_dir(folder: Path) -> None:
    """Make the rename durable; best effort (not every platform can open a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# --------------------------------------------------------------------------- decoding


class _Preamble(NamedTuple):
    version: int
    header_len: int
    body_len: int
    header_sha: bytes
    body_sha: bytes

    @property
    def total(self) -> int:
        return PREAMBLE_SIZE + self.header_len + self.body_len


def _check_magic_and_version(path: str, head: bytes) -> None:
    """``head`` is the first (up to) 12 bytes of the file."""
    if not head:
        raise ImageError(path, "empty file, not an aot image", "truncated")
    magic = head[: len(MAGIC)]
    if magic != MAGIC[: len(magic)]:
        raise ImageError(path, "not an aot image (bad magic bytes)", "bad-magic")
    if len(head) < _VERSION_END:
        raise ImageError(
            path, f"truncated image (expected at least {PREAMBLE_SIZE} bytes, found {len(head)})", "truncated"
        )
    (version,) = struct.unpack_from("<I", head, len(MAGIC))
    if version > FORMAT_VERSION:
        raise ImageError(
            path,
            f"format version {version} is newer than this aot supports ({FORMAT_VERSION}); "
            "upgrade aot or rebuild the image",
            "format-version",
        )
    if version < FORMAT_VERSION:
        raise ImageError(
            path,
            f"format version {version} is older than this aot supports ({FORMAT_VERSION}); "
            "rebuild the image with 'aot build'",
            "format-version",
        )


def _parse_preamble(path: str, head: bytes, file_size: int) -> _Preamble:
    """Validate magic, version and lengths against the real file size."""
    _check_magic_and_version(path, head[:_VERSION_END])
    if len(head) < PREAMBLE_SIZE:
        raise ImageError(
            path, f"truncated image (expected at least {PREAMBLE_SIZE} bytes, found {len(head)})", "truncated"
        )
    _, version, header_len, body_len, header_sha, body_sha = _PREAMBLE.unpack_from(head)
    pre = _Preamble(version, header_len, body_len, header_sha, body_sha)
    if file_size < pre.total:
        raise ImageError(path, f"truncated image (expected {pre.total} bytes, found {file_size})", "truncated")
    if file_size > pre.total:
        raise ImageError(
            path, f"trailing data after the image (expected {pre.total} bytes, found {file_size})", "corrupt"
        )
    return pre


def _decode_map(path: str, what: str, data: bytes, digest: bytes) -> dict[str, Any]:
    """Checksum, then msgpack-decode with limits no larger than the data itself."""
    if sha256(data).digest() != digest:
        raise ImageError(path, f"{what} checksum mismatch (the file is corrupted or was modified)", "corrupt")
    n = len(data)
    try:
        obj = msgpack.unpackb(
            data,
            raw=False,
            strict_map_key=True,
            use_list=True,
            max_str_len=n,
            max_bin_len=n,
            max_array_len=n,
            max_map_len=n // 2,
            max_ext_len=0,
            ext_hook=_reject_ext,
            object_pairs_hook=_str_keyed_map,
        )
    except Exception as e:  # msgpack raises ValueError, TypeError, UnicodeError, StackError, ...
        raise ImageError(path, f"malformed {what}: {type(e).__name__}: {e}", "malformed") from None
    if not isinstance(obj, dict):
        raise ImageError(path, f"malformed {what}: expected a map, found {type(obj).__name__}", "malformed")
    return obj


def _reject_ext(code: int, data: bytes) -> Any:
    raise ValueError(f"msgpack extension type {code} is not allowed in an image")


def _str_keyed_map(pairs: list) -> dict:
    """Maps decode only with str keys. With ext types rejected and raw=False, every other decoded value
    is already None, bool, int, float, str, bytes, list or such a map: nothing needs walking afterwards."""
    for k, _ in pairs:
        if not isinstance(k, str):
            raise ValueError(f"map key {k!r} is not a str")
    return dict(pairs)


def _open_regular(path: str) -> tuple[BinaryIO, int]:
    """Open for reading without ever blocking (a FIFO), and refuse anything but a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise ImageError(path, f"cannot read image ({e.strerror or e})", "unreadable") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            raise ImageError(path, f"cannot read image ({kind})", "unreadable")
        return os.fdopen(fd, "rb"), st.st_size
    except BaseException:
        os.close(fd)
        raise


def decode_image(data: bytes, path: PathLike = "<bytes>") -> Image:
    """Fully validate and decode image bytes; ``path`` only names them in errors."""
    p = os.fspath(path)
    data = bytes(data)
    pre = _parse_preamble(p, data[:PREAMBLE_SIZE], len(data))
    header_end = PREAMBLE_SIZE + pre.header_len
    header = _decode_map(p, "header", data[PREAMBLE_SIZE:header_end], pre.header_sha)
    tables = _decode_map(p, "body", data[header_end:], pre.body_sha)
    for name, rows in tables.items():
        if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
            raise ImageError(p, f"malformed body: table {name!r} is not a list of records", "malformed")
    return Image(p, header, tables)


def read_image(path: PathLike) -> Image:
    """Read, fully validate (magic, version, lengths, both checksums) and decode an image."""
    p = os.fspath(path)
    f, _ = _open_regular(p)
    with f:
        try:
            data = f.read()
        except OSError as e:
            raise ImageError(p, f"cannot read image ({e.strerror or e})", "unreadable") from None
    return decode_image(data, p)


def read_header(path: PathLike) -> dict[str, Any]:
    """Validate magic, version, lengths and the header's checksum; decode the header only.

    Cheap enough for import time: the body is neither read nor checksummed, so a file
    whose body is damaged still yields its header here.  ``read_image`` is the full check.
    """
    p = os.fspath(path)
    f, size = _open_regular(p)
    with f:
        try:
            head = f.read(PREAMBLE_SIZE)
            pre = _parse_preamble(p, head, size)
            header_bytes = f.read(pre.header_len)
        except OSError as e:
            raise ImageError(p, f"cannot read image ({e.strerror or e})", "unreadable") from None
    if len(header_bytes) != pre.header_len:  # the file shrank under us
        raise ImageError(
            p, f"truncated image (expected {pre.total} bytes, found {PREAMBLE_SIZE + len(header_bytes)})", "truncated"
        )
    return _decode_map(p, "header", header_bytes, pre.header_sha)
