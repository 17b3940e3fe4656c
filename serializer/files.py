"""Atomic file writes, and the private work folders of the linker and the PTX assembler.

    atomic_write_bytes(Path("pkg/__aot__/cpu.so"), b"\\x7fELF...", mode=0o755)
      ->  pkg/__aot__/cpu.so holds exactly those bytes, or (on failure) its old content
    work_folder("aot-link-")                       ->  Path("/tmp/aot-link-4242-k3j2l1x0")   (4242: this pid)
    remove_stale_temporaries(Path("pkg/__aot__"))  ->  [Path("pkg/__aot__/.cpu.so.4141.0a1b2c3d.tmp")]
    remove_stale_work_folders("aot-link-")         ->  [Path("/tmp/aot-link-4141-x8w7v6u5")]

A process killed in the middle of a write (SIGKILL runs no cleanup) leaves its temporary file beside the
target, and one killed while linking leaves its work folder; both names hold the writer's pid so that a
later build can tell them from the work of a process still running, and remove them.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from pathlib import Path

__all__ = ["atomic_write_bytes", "remove_stale_temporaries", "remove_stale_work_folders", "work_folder"]

# ".<name>.<pid>.<8 hex>.tmp", as atomic_write_bytes names its temporary files.
_TEMPORARY = re.compile(r"\..+\.(\d+)\.[0-9a-f]{8}\.tmp\Z")


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


def _running(pid: int) -> bool:
    """Whether a process ``pid`` runs (as far as this process can see: True when it cannot tell)."""
    if os.name != "posix":  # (elsewhere os.kill ends the process instead of asking about it)
        return True
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process (EPERM), or an answer we cannot read: assume it runs
        return True
    return True


def _age(path: Path) -> float:
    try:
        return time.time() - path.lstat().st_mtime
    except OSError:
        return 0.0


def remove_stale_temporaries(folder: Path, older_than: float = 600.0) -> list[Path]:
    """Remove the temporary files of interrupted atomic writes in ``folder``: those whose writer is no longer
    running, or that nothing has written for ``older_than`` seconds (a pid may be reused). The removed files.

    Call it while holding the folder's lock, which every writer into it holds: then no write is under way
    there, and the test of the writer's pid only guards against a writer that does not lock."""
    removed: list[Path] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        match = _TEMPORARY.match(name)
        path = folder / name
        if match is None or (_running(int(match.group(1))) and _age(path) < older_than):
            continue
        try:
            path.unlink()
            removed.append(path)
        except OSError:
            pass
    return removed


def work_folder(prefix: str) -> Path:
    """A fresh private folder in the temporary directory, ``<prefix><pid>-<random>``."""
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-"))


def remove_stale_work_folders(prefix: str, older_than: float = 3600.0) -> list[Path]:
    """Remove this user's ``work_folder(prefix)`` folders whose process is no longer running and that are
    older than ``older_than`` seconds; the removed folders.

    Both conditions must hold: a process in another pid namespace that shares the temporary directory (a
    container) looks dead from here, and nothing locks these folders, so only age tells that its work is over.
    A failed link keeps its folder so that the printed command reproduces it; this removes it an hour later."""
    removed: list[Path] = []
    pattern = re.compile(re.escape(prefix) + r"(\d+)-[^/]+\Z")
    root = Path(tempfile.gettempdir())
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    uid = os.getuid() if hasattr(os, "getuid") else None
    for entry in entries:
        match = pattern.match(entry.name)
        if match is None:
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not entry.is_dir(follow_symlinks=False) or (uid is not None and info.st_uid != uid):
            continue
        if time.time() - info.st_mtime < older_than or _running(int(match.group(1))):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        if not os.path.exists(entry.path):
            removed.append(Path(entry.path))
    return removed
