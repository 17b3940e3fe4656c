"""SHA-256 without paying for OpenSSL at import: CPython's own implementation for small inputs (a header,
a fingerprint), hashlib's (faster on large inputs) for the rest, imported when first needed.

    sha256(b"abc").hexdigest()  →  'ba7816bf…'
"""
from __future__ import annotations

from typing import Any

try:  # CPython 3.12+
    from _sha2 import sha256 as _small_sha256
except ImportError:  # pragma: no cover - CPython 3.10/3.11
    try:
        from _sha256 import sha256 as _small_sha256
    except ImportError:  # pragma: no cover - other implementations
        _small_sha256 = None

_LARGE = 1 << 16


def sha256(data: bytes = b"") -> Any:
    """A sha256 hash object (``update``, ``digest``, ``hexdigest``) seeded with ``data``."""
    if _small_sha256 is not None and len(data) < _LARGE:
        return _small_sha256(data)
    import hashlib
    return hashlib.sha256(data)
