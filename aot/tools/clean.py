"""``aot clean``: remove the images a PATH stands for, with their native artifacts.

    clean("fixtures/numkit")   → [Path(".../numkit/__aot__/numkit.cpu.aotimg"), Path(".../numkit.cpu.so"), …]
    clean("pkg/__aot__/pkg.cpu.aotimg")   → that image and pkg.cpu.* beside it, nothing of another owner

Nothing is read, so damaged images go too; an ``__aot__`` folder left empty is removed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .errors import AuditError
from .locate import IMAGE_SUFFIX, aot_folders, locate

# What `aot clean` removes from an __aot__ folder: images, their native artifacts, the build lock and the
# temporary files of an interrupted write. Anything else there is left alone.
_CLEANABLE = re.compile(r"(.+\.(aotimg|so|ptx|cubin|objects)|\.lock|\..+\.tmp)\Z")


def clean(path: str | os.PathLike) -> list[Path]:
    """Remove the images PATH stands for, with their native artifacts; the removed files.

    Damaged images are removed too (nothing is read); an ``__aot__`` folder left empty is removed."""
    files, _, _ = locate(path)
    folders: set[Path] = set()
    removed: list[Path] = []
    given = Path(os.fspath(path))
    if given.is_file() and given.name != "pyproject.toml":
        # One image: it and the artifacts of the same package and owner (<pkg>.<owner>.*).
        if not given.name.endswith(IMAGE_SUFFIX):
            raise AuditError(f"{given}: not an aot image ({IMAGE_SUFFIX} file)")
        stem = given.name[: -len(IMAGE_SUFFIX)]
        targets = [p for p in given.parent.iterdir() if p.name.startswith(stem + ".") and _CLEANABLE.match(p.name)]
        folders.add(given.parent)
    else:
        for folder in {f.parent for f in files} | aot_folders(given):
            folders.add(folder)
        targets = [
            p
            for folder in folders
            if folder.is_dir()
            for p in folder.iterdir()
            if p.is_file() and _CLEANABLE.match(p.name)
        ]
    for target in sorted(set(targets)):
        try:
            target.unlink()
        except FileNotFoundError:
            continue
        except OSError as err:
            raise AuditError(f"{target}: cannot remove ({err.strerror or err})") from None
        if target.name != ".lock":
            removed.append(target)
    for folder in folders:
        try:
            folder.rmdir()  # only when empty
        except OSError:
            pass
    return removed
