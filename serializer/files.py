"""Atomic file writes, shared by the image writer, the linker and the PTX assembler.

    atomic_write_bytes(Path("pkg/__aot__/cpu.so"), b"\\x7fELF...", mode=0o755)
      ->  pkg/__aot__/cpu.so holds exactly those bytes, or (on failure) its old content
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["atomic_write_bytes"]


def atomic_write_bytes(path: Path, data: bytes, *, mode: int = 0o666) -> None:
    """Write via a temporary file in the same folder, fsync, and rename over ``path``.

    ``mode`` is filtered by the umask, like any file the user creates.  Raises OSError.
    """
    tmp = path.parent / f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
