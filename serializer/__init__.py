r"""The aot image format: a versioned msgpack container of separately checksummed record tables, its
records, whose fields are only ever appended, and the checksums that guard aot's files.

    write_image(p, {"compiler_version": "0.1.0"}, {"methods": [["pkg.mod:f", "ab12"]]})
    read_image(p)  ->  Image(path=p, header={"compiler_version": "0.1.0"},
                             tables={"methods": [["pkg.mod:f", "ab12"]]})
    open_image(p).table("methods")  ->  [["pkg.mod:f", "ab12"]]   (only that table checked and decoded)

One module: a package's first call reads its image through it, and there each module imported costs
about a tenth of a millisecond of its own (``irformat``, the typed IR's encoding, and ``files`` are read
by builds and tools only). Nothing here unpickles; every malformed file is an ImageError.

The container
-------------

    write_image(p, {"compiler_version": "0.1.0"}, {"methods": [("pkg.mod:f", 3)], "ir": [...]})
    read_header(p)                    ->  {"compiler_version": "0.1.0"}
    open_image(p).table("methods")    ->  [["pkg.mod:f", 3]]      (the "ir" table left undecoded)
    read_image(p).tables              ->  {"ir": [...], "methods": [["pkg.mod:f", 3]]}
    p.write_bytes(p.read_bytes()[:-1]); read_image(p)
                                      ->  ImageError: p: truncated image (expected 1234 bytes, found 1233)

On-disk layout (all integers little-endian)::

    offset  size  field
    0       8     MAGIC (b"\x89AOTIMG\n")         } the only part every future format
    8       4     format version (u32)            } keeps: checked before anything else
    12      4     header length H in bytes (u32)
    16      8     directory length D in bytes (u64)
    24      4     CRC-32 of the header bytes (u32)
    28      4     CRC-32 of the directory bytes (u32)
    32      H     header: msgpack map, str keys
    32+H    D     directory: msgpack array of [table name, length, CRC-32], sorted by name
    32+H+D  ...   the tables' segments, in directory order, back to back; each a msgpack
                  array of records (each a list)
    end           right after the last segment (trailing bytes are an error)

Each table is its own checksummed segment, so a reader pays only for the tables it uses:

* ``read_header`` (a quick compatibility check) reads the preamble and the header and nothing
  else; a file whose directory or segments are damaged still yields its header.
* ``open_image`` maps the file, checks the header and directory checksums and that the segments
  tile the rest of the file exactly; ``ImageFile.table(name)`` then checksums and decodes that one
  segment (the first call of a method decodes the small index tables, never the typed IR), and
  ``ImageFile.verify()`` checks every segment's checksum without decoding any.
* ``read_image`` / ``decode_image`` check and decode everything.
* ``ImageFile.blob(name)`` tells where the bytes of a table that is one record of one ``bin`` lie in the
  file, checked but not copied (the method definitions a first call compares).
* A table written ``indexed`` (``encode_image(..., indexed=[name])``) gets a companion table
  ``<name>.offsets``: one record holding a ``bin`` of little-endian u32s, where each record starts in
  the table's segment and then where the last one ends. ``ImageFile.records(name)`` then decodes runs of
  records on demand, never the rest of the table (a first call reads the records of one module).

Checksums are CRC-32 (``crc32``): they detect damage, not tampering (whoever can
rewrite a table can rewrite its checksum).  Encoding is canonical: map keys and tables are sorted,
tuples become lists, floats are float64, so equal input gives identical bytes.  Decoding never
trusts the file: every malformed input raises ``ImageError`` naming the file, and msgpack runs with
size limits derived from the bytes at hand.

Records
-------

Positional records whose fields are only ever appended.

    METHODS = record("methods", "key", "fingerprint", ("options", None))
    METHODS.pack({"key": "pkg.mod:f", "fingerprint": "ab12"})
        ->  ["pkg.mod:f", "ab12", None]
    METHODS.unpack(["pkg.mod:f", "ab12"])
        ->  {"key": "pkg.mod:f", "fingerprint": "ab12", "options": None}
    METHODS.unpack(["pkg.mod:f", "ab12", None, "a field from a newer aot"])
        ->  the same dict: unknown trailing fields are ignored

A record is stored as a list, not a map, so an image does not repeat field names
thousands of times.  The price is a rule: a field is never removed, renamed or
reordered; a new one is appended with a default.  Then an older reader ignores the
fields it does not know and a newer reader fills the ones an older image lacks.

Checksums
---------

aot's two kinds of digest: CRC-32 for the integrity of files, BLAKE2b for identities.

    crc32(b"abc")                 →  891568578 (0x352441c2)
    checksum(b"abc").hexdigest()  →  'bddd813c…'

``crc32`` guards aot's files (an image's header, directory and each table; the native library an image
names). It detects the damage a checksum is for (a truncated copy, a flipped bit, a partial write) at
several GB/s, in C, from ``zlib`` (a module every Python has). A cryptographic hash there would cost about
four times as much and protect nothing more: whoever can rewrite a table can rewrite the checksum stored
next to it. Precompile caches make the same choice (Julia's pkgimages are checked with CRC32c).

``checksum`` (BLAKE2b, 32-byte digest) is for identities that must not collide by accident across many
inputs: method fingerprints (``aot.world.fingerprint``), which decide whether compiled code is reused.
It comes from ``_blake2`` (importing it costs a few hundred microseconds, where OpenSSL's ``_hashlib``
costs milliseconds) and is about twice as fast as CPython's own SHA-256.

Hot path (a package's first call maps and checks its image),
guarded by ``tests/bench/instructions.py`` and ``tests/bench/test_import_bench.py``: measure before and after
any change here.
"""

from __future__ import annotations

import copy
import os
import stat
import struct
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO
from zlib import crc32 as _crc32

import msgpack

if TYPE_CHECKING:  # (annotations only: typing's unions cost an import of this module a tenth of a ms)
    from pathlib import Path

    PathLike = str | os.PathLike[str]
    _Value = None | bool | int | float | str | bytes | list | dict

__all__ = [
    "DIGEST_SIZE",
    "FORMAT_VERSION",
    "MAGIC",
    "OFFSETS",
    "PREAMBLE_SIZE",
    "Image",
    "ImageError",
    "ImageFile",
    "RecordError",
    "RecordSchema",
    "Records",
    "checksum",
    "crc32",
    "decode_image",
    "encode_image",
    "map_file",
    "open_image",
    "open_regular",
    "read_header",
    "read_image",
    "record",
    "write_image",
]


# ---------------------------------------------------------------------------------------- checksums
DIGEST_SIZE = 32


def crc32(data: bytes) -> int:
    """The CRC-32 (zlib's, as an unsigned 32-bit int) of ``data`` (any bytes-like object)."""
    return _crc32(data) & 0xFFFFFFFF


def checksum(data: bytes = b"", digest_size: int = DIGEST_SIZE) -> Any:
    """A BLAKE2b hash object (``update``, ``digest``, ``hexdigest``) seeded with ``data``. The hash module
    is imported on first use: loading an image needs CRC-32 only."""
    try:
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - an interpreter without the _blake2 module
        from hashlib import blake2b
    return blake2b(data, digest_size=digest_size)


# ------------------------------------------------------------------------------------------ records
class RecordError(ValueError):
    """A record (or a dict to pack) that does not fit its schema."""


class RecordSchema:
    """The field order of one table (made at import, cheaply; ``record`` checks names).

    ``required`` fields were there from the first format; ``optional`` ones were
    appended later and carry the default that records written before them get.
    """

    __slots__ = ("table", "required", "optional")

    def __init__(self, table: str, required: tuple[str, ...], optional: tuple[tuple[str, Any], ...] = ()):
        self.table = table
        self.required = required
        self.optional = optional

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RecordSchema) and (self.table, self.required, self.optional) == (
            other.table,
            other.required,
            other.optional,
        )

    def __hash__(self) -> int:
        return hash((self.table, self.required))

    def __repr__(self) -> str:
        return f"RecordSchema({self.table!r}, {self.required!r}, {self.optional!r})"

    def check(self) -> RecordSchema:
        names = self.fields
        if not all(isinstance(n, str) and n for n in names):
            raise TypeError(f"{self.table}: field names must be non-empty strings: {names!r}")
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"{self.table}: duplicate field names {dup}")
        return self

    @property
    def fields(self) -> tuple[str, ...]:
        return self.required + tuple(name for name, _ in self.optional)

    def pack(self, obj: Mapping[str, Any]) -> list[Any]:
        """The record for ``obj`` (all fields, in order); unknown keys are an error."""
        unknown = set(obj) - set(self.fields)
        if unknown:
            raise RecordError(f"{self.table}: unknown fields {sorted(map(str, unknown))}")
        missing = [n for n in self.required if n not in obj]
        if missing:
            raise RecordError(f"{self.table}: missing fields {missing}")
        out = [obj[n] for n in self.required]
        out.extend(obj.get(name, default) for name, default in self.optional)
        return out

    def unpack(self, rec: Sequence[Any]) -> dict[str, Any]:
        """The dict for a stored record: extra trailing fields ignored, missing optional ones defaulted."""
        if not isinstance(rec, (list, tuple)):
            raise RecordError(f"{self.table}: a record must be a list, found {type(rec).__name__}")
        n = len(self.required)
        if len(rec) < n:
            raise RecordError(f"{self.table}: record has {len(rec)} fields, needs at least {n}")
        out = dict(zip(self.required, rec))
        for i, (name, default) in enumerate(self.optional, start=n):
            out[name] = rec[i] if i < len(rec) else copy.deepcopy(default)
        return out

    def pack_all(self, objs: Iterable[Mapping[str, Any]]) -> list[list[Any]]:
        return [self.pack(o) for o in objs]

    def unpack_all(self, recs: Iterable[Sequence[Any]]) -> list[dict[str, Any]]:
        out = []
        for i, r in enumerate(recs):
            try:
                out.append(self.unpack(r))
            except RecordError as e:
                raise RecordError(f"record {i} of {e}") from None
        return out


def record(table: str, *fields: str | tuple[str, Any]) -> RecordSchema:
    """A schema from field specs: ``"name"`` is required, ``("name", default)`` was appended later.

    Required fields must all come before the first appended one.
    """
    required: list[str] = []
    optional: list[tuple[str, Any]] = []
    for f in fields:
        if isinstance(f, str):
            if optional:
                raise ValueError(f"{table}: required field {f!r} after appended field {optional[-1][0]!r}")
            required.append(f)
        elif isinstance(f, tuple) and len(f) == 2 and isinstance(f[0], str):
            optional.append((f[0], f[1]))
        else:
            raise TypeError(f"{table}: a field is 'name' or ('name', default), not {f!r}")
    return RecordSchema(table, tuple(required), tuple(optional)).check()


# ---------------------------------------------------------------------------------------- the container
#: Bumped on any change a reader of the previous version could not decode.  Additions
#: of trailing record fields or of new tables do not bump it (records are only extended).
FORMAT_VERSION = 2

#: The companion table of an indexed table ``t`` (see ``encode_image``) is named ``t + OFFSETS``.
OFFSETS = ".offsets"

#: PNG-style: the high-bit byte catches 7-bit transfers, the newline catches
#: line-ending conversion, and the ASCII in between makes the file recognizable.
MAGIC = b"\x89AOTIMG\n"

_PREAMBLE = struct.Struct("<8sIIQII")
#: Bytes before the header: magic, version, two lengths, two CRC-32s.
PREAMBLE_SIZE = _PREAMBLE.size  # 32
_VERSION_END = len(MAGIC) + 4  # magic + version: stable across format versions

_MAX_U32 = 2**32 - 1
_U32 = struct.calcsize("I")  # the size of a native unsigned int (a memoryview of offsets is cast to it)
_unpackb = msgpack.unpackb
_MIN_INT = -(2**63)
_MAX_INT = 2**64 - 1


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


class Image:
    """A decoded image: its header map and its tables of positional records."""

    __slots__ = ("path", "header", "tables")

    def __init__(self, path: str, header: dict[str, Any], tables: dict[str, list[list[Any]]]) -> None:
        self.path = path
        self.header = header
        self.tables = tables

    def __iter__(self):
        return iter((self.path, self.header, self.tables))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Image) and tuple(self) == tuple(other)

    def __repr__(self) -> str:
        return f"Image(path={self.path!r}, header={self.header!r}, tables={self.tables!r})"

    def records(self, schema: RecordSchema) -> list[dict[str, Any]]:
        """Unpack the table named ``schema.table``; a bad or missing table is an ImageError."""
        rows = self.tables.get(schema.table)
        if rows is None:
            raise ImageError(self.path, f"missing table {schema.table!r}", "malformed")
        return _unpack_records(self.path, schema, rows)


def _unpack_records(path: str, schema: RecordSchema, rows: list[list[Any]]) -> list[dict[str, Any]]:
    try:
        return schema.unpack_all(rows)
    except RecordError as e:
        raise ImageError(path, str(e), "malformed") from None


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


def encode_image(header: Mapping[str, Any], tables: Mapping[str, Any], indexed: Iterable[str] = ()) -> bytes:
    """The bytes of an image file; identical for equal input whatever the dict order.

    ``indexed`` names tables whose records can be decoded one at a time (``ImageFile.records``): each gets
    a companion table ``<name>.offsets`` holding where every record starts.

    Raises TypeError/ValueError for values an image cannot hold (a programming error,
    not a file problem): anything but None, bool, 64-bit int, float, str, bytes,
    list/tuple and dicts with str keys.
    """
    if not isinstance(header, Mapping):
        raise TypeError(f"header must be a mapping, not {type(header).__name__}")
    if not isinstance(tables, Mapping):
        raise TypeError(f"tables must be a mapping, not {type(tables).__name__}")
    named = []
    for name, rows in tables.items():
        if not isinstance(name, str):
            raise TypeError(f"table name {name!r} is not a str")
        if not isinstance(rows, (list, tuple)):
            raise TypeError(f"table {name!r} must be a list of records, not {type(rows).__name__}")
        for i, row in enumerate(rows):
            if not isinstance(row, (list, tuple)):
                raise TypeError(f"table {name!r} record {i} must be a list, not {type(row).__name__}")
        named.append((str.__str__(name), rows))
    indexed = set(indexed)
    missing = indexed - {name for name, _ in named}
    if missing:
        raise ValueError(f"cannot index tables that are not there: {sorted(missing)}")
    header_bytes = _pack(_canonical(header, "header"))
    if len(header_bytes) > _MAX_U32:
        raise ValueError(f"image header is too large ({len(header_bytes)} bytes)")
    segments = []
    for name, rows in named:
        if name in indexed:
            segment, offsets = _indexed_segment(name, rows)
            segments += [(name, segment), (name + OFFSETS, _pack([[offsets]]))]
        else:
            segments.append((name, _pack(_canonical(rows, f"tables.{name}"))))
    segments.sort(key=lambda ns: ns[0])
    names = [name for name, _ in segments]
    if len(set(names)) != len(names):
        raise ValueError(f"a table is named like another's offsets: {names}")
    directory = _pack([[name, len(seg), crc32(seg)] for name, seg in segments])
    preamble = _PREAMBLE.pack(
        MAGIC, FORMAT_VERSION, len(header_bytes), len(directory), crc32(header_bytes), crc32(directory)
    )
    return b"".join([preamble, header_bytes, directory, *(seg for _, seg in segments)])


def _indexed_segment(name: str, rows: Any) -> tuple[bytes, bytes]:
    """A table's segment (the same bytes as packing it whole) and its offsets: where each record starts in
    the segment, then where the last one ends, as little-endian u32s."""
    header = _array_header(len(rows))
    records = [_pack(_canonical(row, f"tables.{name}[{i}]")) for i, row in enumerate(rows)]
    offsets, at = [], len(header)
    for rec in records:
        offsets.append(at)
        at += len(rec)
    offsets.append(at)
    if at > _MAX_U32:
        raise ValueError(f"table {name!r} is too large to index ({at} bytes)")
    return b"".join([header, *records]), struct.pack(f"<{len(offsets)}I", *offsets)


def _array_header(n: int) -> bytes:
    """The msgpack header of an array of ``n`` items."""
    if n < 16:
        return bytes([0x90 | n])
    if n < 2**16:
        return b"\xdc" + struct.pack(">H", n)
    return b"\xdd" + struct.pack(">I", n)


def write_image(
    path: PathLike, header: Mapping[str, Any], tables: Mapping[str, Any], indexed: Iterable[str] = ()
) -> None:
    """Encode and write atomically: a reader sees the old file or the new one, never a mix.

    The bytes go to a temporary file in the same folder, are fsynced, and the file is
    renamed over ``path``.  OS failures raise ImageError naming ``path``.
    """
    from pathlib import Path  # writers only: readers (every first call of a method) never import pathlib

    from .files import atomic_write_bytes

    data = encode_image(header, tables, indexed)
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


class _Preamble:
    __slots__ = ("version", "header_len", "dir_len", "header_crc", "dir_crc")

    def __init__(self, version: int, header_len: int, dir_len: int, header_crc: int, dir_crc: int):
        self.version, self.header_len, self.dir_len = version, header_len, dir_len
        self.header_crc, self.dir_crc = header_crc, dir_crc

    @property
    def segments_start(self) -> int:
        """Where the first table's segment starts: the end of the directory."""
        return PREAMBLE_SIZE + self.header_len + self.dir_len


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
    """Validate magic, version, and that the file holds at least the header and the directory."""
    _check_magic_and_version(path, head[:_VERSION_END])
    if len(head) < PREAMBLE_SIZE:
        raise ImageError(
            path, f"truncated image (expected at least {PREAMBLE_SIZE} bytes, found {len(head)})", "truncated"
        )
    _, version, header_len, dir_len, header_crc, dir_crc = _PREAMBLE.unpack_from(head)
    pre = _Preamble(version, header_len, dir_len, header_crc, dir_crc)
    if file_size < pre.segments_start:
        raise ImageError(
            path, f"truncated image (expected at least {pre.segments_start} bytes, found {file_size})", "truncated"
        )
    return pre


def _check_crc(path: str, what: str, data: Any, expected: int) -> None:
    if crc32(data) != expected:
        raise ImageError(path, f"{what} checksum mismatch (the file is corrupted or was modified)", "corrupt")


def _unpack(path: str, what: str, data: Any, tuples: bool = False) -> Any:
    """msgpack-decode with limits no larger than the data itself; no ext types, str map keys only.
    Arrays decode as lists, or as tuples with ``tuples``."""
    n = len(data)
    try:
        return msgpack.unpackb(
            data,
            raw=False,
            strict_map_key=True,
            use_list=not tuples,
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


def _decode_header(path: str, data: Any, expected_crc: int) -> dict[str, Any]:
    _check_crc(path, "header", data, expected_crc)
    obj = _unpack(path, "header", data)
    if type(obj) is not dict:
        raise ImageError(path, f"malformed header: expected a map, found {type(obj).__name__}", "malformed")
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


def open_regular(path: str) -> BinaryIO:
    """Open unbuffered for reading without ever blocking (a FIFO), and refuse anything but a regular file
    (ImageError). The loader opens a native library with it too, and loads it through this descriptor."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise ImageError(path, f"cannot read image ({e.strerror or e})", "unreadable") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            raise ImageError(path, f"cannot read image ({kind})", "unreadable")
        return os.fdopen(fd, "rb", buffering=0)
    except BaseException:
        os.close(fd)
        raise


def _read_exact(f: BinaryIO, n: int) -> bytes:
    """Up to ``n`` bytes (fewer only at the end of the file), without reading past them."""
    first = f.read(n) or b""
    if len(first) == n or not first:
        return first
    chunks = [first]
    n -= len(first)
    while n > 0:
        chunk = f.read(n)
        if not chunk:
            break
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


class ImageFile:
    """An image (bytes, or the read-only mapping ``open_image`` makes) whose tables are checksummed and
    decoded one at a time, on demand.

    ``open_image`` (or ``ImageFile.from_bytes``) has already checked magic, version, lengths, the
    header and directory checksums, and that the segments tile the file; ``table(name)`` checks and
    decodes that table's segment only, once (the result is cached and shared by later calls).
    A mapped file must not be truncated in place while it is in use (it would fault on access, as a
    shared library would): ``write_image`` never does that, it renames a new file over the old one.
    """

    __slots__ = ("path", "header", "names", "_data", "_segments", "_cache", "_verified")

    def __init__(
        self,
        path: str,
        header: dict[str, Any],
        names: tuple[str, ...],
        data: Any,
        segments: dict[str, tuple[int, int, int]],
    ) -> None:
        self.path = path
        self.header = header
        self.names = names
        self._data = data  # a memoryview of the whole file (a mapping costs no memory of its own)
        self._segments = segments  # name -> (start, end, crc)
        self._cache: dict[tuple[str, bool], Any] = {}  # (name, tuples) -> rows
        self._verified = False  # every table's checksum checked already (``verify``)

    @classmethod
    def from_bytes(cls, data: bytes, path: PathLike = "<bytes>") -> ImageFile:
        """Check the container around the tables (not the tables themselves); ``path`` names errors."""
        p = os.fspath(path)
        view = memoryview(data).cast("B")  # bytes, or a read-only mapping of the file: never copied
        size = len(view)
        pre = _parse_preamble(p, bytes(view[:PREAMBLE_SIZE]), size)
        header_end = PREAMBLE_SIZE + pre.header_len
        start = pre.segments_start
        header_bytes = view[PREAMBLE_SIZE:header_end]
        dir_bytes = view[header_end:start]
        header = _decode_header(p, header_bytes, pre.header_crc)
        _check_crc(p, "directory", dir_bytes, pre.dir_crc)
        directory = _unpack(p, "directory", dir_bytes)
        if type(directory) is not list:
            raise ImageError(
                p, f"malformed directory: expected an array, found {type(directory).__name__}", "malformed"
            )
        segments: dict[str, tuple[int, int, int]] = {}
        names: list[str] = []
        for i, entry in enumerate(directory):
            # [name, length, crc]; like records, an entry may gain trailing fields an older reader ignores
            if not (
                type(entry) is list
                and len(entry) >= 3
                and type(entry[0]) is str
                and type(entry[1]) is int
                and entry[1] >= 0
                and type(entry[2]) is int
                and 0 <= entry[2] <= _MAX_U32
            ):
                raise ImageError(p, f"malformed directory: entry {i} is not [name, length, checksum]", "malformed")
            name, length, crc = entry[0], entry[1], entry[2]
            if names and name <= names[-1]:
                raise ImageError(p, f"malformed directory: table {name!r} is out of order or repeated", "malformed")
            names.append(name)
            segments[name] = (start, start + length, crc)
            start += length
        if size < start:
            raise ImageError(p, f"truncated image (expected {start} bytes, found {size})", "truncated")
        if size > start:
            raise ImageError(p, f"trailing data after the image (expected {start} bytes, found {size})", "corrupt")
        return cls(p, header, tuple(names), view, segments)

    def has(self, name: str) -> bool:
        return name in self._segments

    def span(self, name: str) -> tuple[int, int]:
        """Where a table's bytes lie in the file, ``(start, end)`` (for tools and tests)."""
        start, end, _ = self._segments[name]
        return start, end

    def verify(self) -> None:
        """Check every table's checksum now, decoding nothing (about 0.25 ms per MB): an image damaged
        anywhere is rejected as a whole, even where a reader would never look."""
        for name, (start, end, crc) in self._segments.items():
            _check_crc(self.path, f"table {name!r}", self._data[start:end], crc)
        self._verified = True

    def table(self, name: str, tuples: bool = False) -> Any:
        """The records of one table: its checksum checked, decoded once, then cached.

        ``tuples``: every array decodes as a tuple (the table as a tuple of tuples). Readers that only
        look use this: tuples of strings and numbers drop out of the garbage collector's work after its
        first pass, lists stay in it for as long as they live."""
        rows = self._cache.get((name, tuples))
        if rows is not None:
            return rows
        seg = self._segments.get(name)
        if seg is None:
            raise ImageError(self.path, f"missing table {name!r}", "malformed")
        start, end, crc = seg
        what = f"table {name!r}"
        data = self._data[start:end]
        if not self._verified:
            _check_crc(self.path, what, data, crc)
        rows = _unpack(self.path, what, data, tuples)
        # Every decoded array is exactly a list (or exactly a tuple), so a type set is the whole check.
        kind = tuple if tuples else list
        if type(rows) is not kind or not set(map(type, rows)) <= {kind}:
            raise ImageError(self.path, f"malformed {what}: not a list of records", "malformed")
        self._cache[(name, tuples)] = rows
        return rows

    def blob(self, name: str) -> tuple[Any, int, int]:
        """Where the bytes of a table that is one record of one ``bin`` (``[[b"..."]]``) lie, checksummed
        but neither decoded nor copied: ``(source, start, end)``, where ``source`` is what the image was
        read from (its mapping, for ``open_image``), whose slices are bytes. For bytes a reader compares in
        place (a slice of a mapping compares at C speed; a memoryview compares item by item, five times
        slower) rather than keeps a copy of."""
        seg = self._segments.get(name)
        if seg is None:
            raise ImageError(self.path, f"missing table {name!r}", "malformed")
        start, end, crc = seg
        data = self._data[start:end]
        if not self._verified:
            _check_crc(self.path, f"table {name!r}", data, crc)
        head = bytes(data[:7])  # fixarray(1), fixarray(1), then bin 8, 16 or 32 with its big-endian length
        width = {0xC4: 1, 0xC5: 2, 0xC6: 4}.get(head[2]) if len(head) > 3 and head[:2] == b"\x91\x91" else None
        if width is not None and len(head) >= 3 + width:
            at = 3 + width
            if at + int.from_bytes(head[3:at], "big") == len(data):
                source = self._data.obj
                if isinstance(source, (bytes, bytearray)) or type(source).__module__ == "mmap":
                    return source, start + at, end
                return bytes(data[at:]), 0, end - start - at  # (another buffer: its slices may not be bytes)
        raise ImageError(self.path, f"malformed table {name!r}: not one record of one bin", "malformed")

    def records(self, name: str) -> Records:
        """The records of an indexed table (see ``encode_image``), each decoded only when asked for.

        The table's checksum and its offsets are checked now. A table written without offsets (by a tool
        that rewrote the image) is decoded whole once, and its offsets worked out from that."""
        if not self.has(name + OFFSETS):
            data, blob = _indexed_segment(name, self.table(name))  # the same bytes: encoding is canonical
        else:
            offsets_table = self.table(name + OFFSETS, tuples=True)
            start, end, crc = self._segments[name]
            data = self._data[start:end]
            if not self._verified:
                _check_crc(self.path, f"table {name!r}", data, crc)
            one = len(offsets_table) == 1 and len(offsets_table[0]) == 1
            blob = offsets_table[0][0] if one else None  # type: ignore[assignment]  # (its type is checked next)
            if type(blob) is not bytes or not blob or len(blob) % 4:
                raise ImageError(self.path, f"malformed table {name + OFFSETS!r}", "malformed")
        count = len(blob) // 4 - 1
        if sys.byteorder == "little" and _U32 == 4:
            offsets: Any = memoryview(blob).cast("I")
        else:  # pragma: no cover - a big-endian machine
            offsets = struct.unpack(f"<{count + 1}I", blob)
        header = _array_header(count)
        if offsets[0] != len(header) or bytes(data[: len(header)]) != header or offsets[count] != len(data):
            raise ImageError(
                self.path, f"malformed table {name + OFFSETS!r}: it does not fit table {name!r}", "malformed"
            )
        return Records(self.path, name, data, offsets)

    def __repr__(self) -> str:
        return f"ImageFile(path={self.path!r}, names={self.names!r})"


class Records:
    """The records of one table, by position, decoded when asked for and not kept (the caller keeps what it
    uses): ``r[i]`` is record ``i`` (a tuple), ``r.run(i, j)`` records ``i`` to ``j - 1``. Made by
    ``ImageFile.records``."""

    __slots__ = ("path", "what", "_data", "_offsets", "_count")

    def __init__(self, path: str, name: str, data: Any, offsets: Any) -> None:
        self.path = path
        self.what = f"table {name!r}"
        self._data = data  # the table's bytes: an array header, then its records back to back
        self._offsets = offsets  # where each record starts, then where the last one ends
        self._count = len(offsets) - 1

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, i: int) -> tuple:
        return self.run(i, i + 1)[0]

    def run(self, i: int, j: int) -> tuple:
        """Records ``i`` to ``j - 1``, decoded by one msgpack call (as fast, per record, as a whole table)."""
        offsets, count = self._offsets, self._count
        if not 0 <= i < j <= count:
            raise IndexError(f"{self.what} has no records {i} to {j - 1}")
        start, end = offsets[i], offsets[j]
        if not offsets[0] <= start < end <= offsets[count]:
            raise ImageError(self.path, f"malformed {self.what}: records {i} to {j - 1} lie outside it", "malformed")
        try:  # (limits: msgpack's defaults are the size of the bytes at hand)
            run = _unpackb(
                b"".join((_array_header(j - i), self._data[start:end])),
                use_list=False,
                ext_hook=_reject_ext,
                object_pairs_hook=_str_keyed_map,
            )
        except Exception as e:  # msgpack raises ValueError, TypeError, UnicodeError, StackError, ...
            raise ImageError(
                self.path, f"malformed {self.what} records {i} to {j - 1}: {type(e).__name__}: {e}", "malformed"
            ) from None
        if not all(map(tuple.__instancecheck__, run)):
            raise ImageError(
                self.path, f"malformed {self.what}: a record among {i} to {j - 1} is not a list", "malformed"
            )
        return run


def decode_image(data: bytes, path: PathLike = "<bytes>") -> Image:
    """Fully validate and decode image bytes; ``path`` only names them in errors."""
    return _decode_all(ImageFile.from_bytes(data, path))


def _decode_all(f: ImageFile) -> Image:
    """Every table checked; all but the offsets of indexed ones decoded (they tell how the file is laid
    out, not what it holds)."""
    f.verify()
    return Image(
        f.path,
        f.header,
        {name: f.table(name) for name in f.names if not (name.endswith(OFFSETS) and f.has(name[: -len(OFFSETS)]))},
    )


def map_file(f: BinaryIO, whole: bool = False) -> Any:
    """A read-only mapping of the whole of an open, non-empty file. ``whole``: the caller reads all of it
    next (a checksum of a library), so its pages are read in at once where the system can (Linux);
    otherwise each page comes in when first read (an image, whose IR a first call does not read)."""
    import mmap

    populate = getattr(mmap, "MAP_POPULATE", 0) if whole else 0
    if populate:
        return mmap.mmap(f.fileno(), 0, flags=mmap.MAP_SHARED | populate, prot=mmap.PROT_READ)
    return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def open_image(path: PathLike) -> ImageFile:
    """Map the file (read-only); check magic, version, lengths, header and directory; decode tables on
    demand. Mapping, not reading: the pages come straight from the page cache, with no copy into fresh
    memory (which costs more than the checksum on some virtual machines)."""
    p = os.fspath(path)
    f = open_regular(p)
    with f:
        try:
            size = os.fstat(f.fileno()).st_size
            data: Any = map_file(f) if size else b""
        except (OSError, ValueError) as e:
            raise ImageError(p, f"cannot read image ({getattr(e, 'strerror', None) or e})", "unreadable") from None
    return ImageFile.from_bytes(data, p)


def read_image(path: PathLike) -> Image:
    """Read, fully validate (magic, version, lengths, every checksum) and decode an image."""
    return _decode_all(open_image(path))


def read_header(path: PathLike) -> dict[str, Any]:
    """Validate magic, version, lengths and the header's checksum; decode the header only.

    Cheap enough for import time: only the preamble and the header are read; the directory
    and the tables are neither read nor checksummed, so a file whose tables are damaged
    still yields its header here (a file too short to hold the directory is "truncated").
    ``open_image`` checks the directory, ``read_image`` everything.
    """
    p = os.fspath(path)
    f = open_regular(p)
    with f:
        try:
            size = os.fstat(f.fileno()).st_size
            head = _read_exact(f, PREAMBLE_SIZE)
            pre = _parse_preamble(p, head, size)
            header_bytes = _read_exact(f, pre.header_len)
        except OSError as e:
            raise ImageError(p, f"cannot read image ({e.strerror or e})", "unreadable") from None
    if len(header_bytes) != pre.header_len:  # the file shrank under us
        raise ImageError(
            p,
            f"truncated image (expected at least {pre.segments_start} bytes, "
            f"found {PREAMBLE_SIZE + len(header_bytes)})",
            "truncated",
        )
    return _decode_header(p, header_bytes, pre.header_crc)
