"""An image read for the tools: header, decoded tables and the checks a checksum cannot make.

    image = read_audited(Path("numkit/__aot__/numkit.cpu.aotimg"))
    image.package, image.root        → "numkit", Path("/home/me/proj")   (the folder numkit is imported from)
    image.gate()                     → None, or why this machine's loader would reject the image
    image.native_problem()           → None, or "native-missing (numkit.cpu.so)"
    read_audited(Path("x.aotimg"))   → AuditError: x.aotimg: malformed image: header field native.file is not a
                                       file name in the image's folder: 'a\\x00.so'

A checksum proves a file is the one written, not that what was written makes sense: the header is checked
by the gate's own check (``aot.image.header.header_problem``, fields that are there must be of their type)
and every table record by the codec (``aot.image.contents.ImageContents.from_tables``) before anything uses
them, and any problem is an ``AuditError`` naming the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import serializer
from serializer import ImageError, crc32

from ..image.contents import ImageContents
from ..image.entries import CodeEntry
from ..image.header import header_problem, incompatibility
from ..world.fingerprint import COMPILER_VERSION
from ..world.instances import StoredKey
from .errors import AuditError
from .ptxtext import ptx_functions

_TARGET_STRINGS = ("triple", "cpu", "features")


def describe_entry(entry: CodeEntry) -> str:
    """``numkit.stats:mean(f64[:])``."""
    return f"{entry.method}({', '.join(entry.argtypes)})"


@dataclass
class AuditedImage:
    """One image file, fully read, decoded and checked."""

    path: Path
    header: dict[str, Any]
    contents: ImageContents
    package: str
    root: Path | None  # the folder to put on sys.path to import its package (None: not in <pkg>/__aot__)

    @property
    def owner(self) -> str:
        return str(self.header.get("owner", "?"))

    @property
    def target(self) -> dict[str, str]:
        target = self.header.get("target")
        target = target if isinstance(target, dict) else {}
        return {k: str(target.get(k, "")) for k in _TARGET_STRINGS}

    @property
    def variants(self) -> list[dict[str, Any]]:
        """The CPU variants of an image built with them: name, cpu, required features, library file and size
        (empty without variants)."""
        variants = self.header.get("variants")
        out = []
        for v in variants if isinstance(variants, list) else ():
            if isinstance(v, dict) and isinstance(v.get("target"), dict) and isinstance(v.get("native"), dict):
                target, native = v["target"], v["native"]
                out.append(
                    {
                        "name": v.get("name"),
                        "cpu": target.get("cpu"),
                        "features": target.get("features"),
                        "file": native.get("file"),
                        "size": native.get("size"),
                    }
                )
        return out

    @property
    def compiler_version(self) -> str:
        return str(self.header.get("compiler_version", "?"))

    @property
    def native(self) -> dict[str, Any]:
        native = self.header.get("native")
        return native if isinstance(native, dict) else {}

    @property
    def native_path(self) -> Path | None:
        return self.artifact("native")

    def artifact(self, what: str = "native") -> Path | None:
        """The file the header names under ``what`` (``native``: the code; ``cubin``: a PTX image's cubin)."""
        info = self.header.get(what)
        name = info.get("file") if isinstance(info, dict) else None
        if not isinstance(name, str) or not name or Path(name).name != name:
            return None
        return self.path.parent / name

    def native_problem(self) -> str | None:
        """Why the native artifacts cannot be used as they are (``native-missing``,
        ``native-checksum-mismatch``), naming the file, or None; of an image with CPU variants, each
        variant's library."""
        problem = self._artifact_problem("native")
        variants = self.header.get("variants")
        for variant in variants if isinstance(variants, list) else ():
            if problem is None and isinstance(variant, dict):
                problem = self._artifact_problem("native", variant)
        return problem

    def _artifact_problem(self, what: str, fields: dict[str, Any] | None = None) -> str | None:
        info = (fields if fields is not None else self.header).get(what)
        name = info.get("file") if isinstance(info, dict) else None
        if not isinstance(info, dict) or not isinstance(name, str) or not name or Path(name).name != name:
            return f"native-missing (no {what} file named in the header)"
        path = self.path.parent / name
        try:
            data = path.read_bytes()
        except OSError:
            return f"native-missing ({path.name})"
        if crc32(data) != info.get("crc32"):
            return f"native-checksum-mismatch ({path.name})"
        return None

    def native_sizes(self) -> dict[StoredKey, int | None]:
        """Bytes of machine code per entry (implementation + wrappers), None when unknown: from the
        library's symbols, else as the build stored them (a library exports only what loading needs), and
        None for all when the library is missing or not the one the image names."""
        sizes: dict[str, int] = {}
        path = self.native_path
        usable = path is not None and self._artifact_problem("native") is None
        if usable and path is not None:
            try:
                if path.suffix == ".ptx":
                    text = path.read_text("utf-8", "replace")
                    sizes = {name: len(body.encode()) for name, body in ptx_functions(text).items()}
                else:
                    from ..builder.elf import ElfError, symbol_sizes

                    try:
                        sizes = symbol_sizes(path)
                    except ElfError:
                        sizes = {}
            except OSError:
                sizes = {}
        out: dict[StoredKey, int | None] = {}
        for key, entry in self.contents.code.items():
            parts = [sizes.get(p + entry.symbol) for p in ("", "try_", "fast_")]
            if parts[0] is not None:
                out[key] = sum(p or 0 for p in parts)
            else:
                out[key] = (entry.native_size or None) if usable else None
        return out

    def gate(self) -> str | None:
        """Why this machine would reject the image as a whole, or None: the loader's own gate, for the image's
        owner."""
        return incompatibility(self.header, self.owner)


def read_audited(path: Path) -> AuditedImage:
    """Read and decode an image; every problem is an AuditError naming the file."""
    try:
        image = serializer.read_image(path)
    except ImageError as err:
        raise AuditError(str(err)) from None
    header = image.header
    problem = header_problem(header, complete=False)
    if problem:
        raise AuditError(f"{path}: malformed image: {problem}")
    try:
        contents = ImageContents.from_tables(image.tables)
    except (serializer.RecordError, KeyError, TypeError, ValueError, IndexError, OverflowError) as err:
        version = header.get("compiler_version")
        if version != COMPILER_VERSION:  # (tables are laid out as their compiler version lays them out)
            raise AuditError(
                f"{path}: written by aot {version}, whose tables aot {COMPILER_VERSION} cannot read ({err}); rebuild it"
            ) from None
        raise AuditError(f"{path}: malformed image: {err}") from None
    folder = path.resolve().parent
    package = header.get("package") or path.name.split(".")[0]
    root: Path | None = None
    if folder.name == "__aot__":
        root = folder.parent
        for _ in package.split("."):
            root = root.parent
    return AuditedImage(path, header, contents, package, root)
