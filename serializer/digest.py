"""aot's two kinds of digest: CRC-32 for the integrity of files, BLAKE2b for identities.

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
"""
from __future__ import annotations

from typing import Any
from zlib import crc32 as _crc32

__all__ = ["DIGEST_SIZE", "checksum", "crc32"]

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
