"""An image read for the tools: header, decoded tables and the checks a checksum cannot make.

    image = read_audited(Path("numkit/__aot__/numkit.cpu.aotimg"))
    image.package, image.root        → "numkit", Path("/home/me/proj")   (the folder numkit is imported from)
    image.gate()                     → None, or why this machine's loader would reject the image
    image.native_problem()           → None, or "native-missing (numkit.cpu.so)"
    read_audited(Path("x.aotimg"))   → AuditError: x.aotimg: malformed image: header native file 'a\\x00.so' is not
                                       a file name

A checksum proves a file is the one written, not that what was written makes sense: the header fields
the tools read and every table record are checked for their types before anything uses them, and any
problem is an ``AuditError`` naming the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import serializer
from serializer import ImageError, crc32

from ..runtime.loader import bare_file_name
from ..world.edges import EdgeKind
from ..world.fingerprint import COMPILER_VERSION
from ..world.image import CodeEntry, ImageContents
from ..world.instances import StoredKey
from .errors import AuditError
from .ptxtext import ptx_functions

# What the tools read from a header, by the type a build writes: strings, tables of strings, and the
# tables naming an artifact in the image's folder (``native``: the code, ``cubin``: a PTX image's cubin).
_HEADER_STRINGS = ("compiler_version", "python", "owner", "package")
_TARGET_STRINGS = ("triple", "cpu", "features")
_ARTIFACTS = ("native", "cubin", "runtime")


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
        """The file the header names under ``what`` (``native``: the code; ``runtime``: the dispatcher)."""
        info = self.header.get(what)
        name = info.get("file") if isinstance(info, dict) else None
        if not isinstance(name, str) or not name or Path(name).name != name:
            return None
        return self.path.parent / name

    def native_problem(self) -> str | None:
        """Why the native artifacts cannot be used as they are (``native-missing``,
        ``native-checksum-mismatch``), naming the file, or None."""
        return self._artifact_problem("native")

    def _artifact_problem(self, what: str) -> str | None:
        path = self.artifact(what)
        if path is None:
            return f"native-missing (no {what} file named in the header)"
        try:
            data = path.read_bytes()
        except OSError:
            return f"native-missing ({path.name})"
        if crc32(data) != self.header[what].get("crc32"):
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
        from ..runtime.loader import Loader

        return Loader.incompatibility(self.header, self.owner)


def read_audited(path: Path) -> AuditedImage:
    """Read and decode an image; every problem is an AuditError naming the file."""
    try:
        image = serializer.read_image(path)
    except ImageError as err:
        raise AuditError(str(err)) from None
    header = image.header
    problem = header_problem(header)
    if problem:
        raise AuditError(f"{path}: malformed image: header {problem}")
    try:
        problem = _tables_problem(image.tables)
        if problem:
            raise AuditError(f"{path}: malformed image: {problem}")
        contents = ImageContents.from_tables(image.tables)
    except (serializer.RecordError, KeyError, TypeError, ValueError, IndexError, OverflowError) as err:
        version = header.get("compiler_version")
        if version != COMPILER_VERSION:  # (tables are laid out as their compiler version lays them out)
            raise AuditError(
                f"{path}: written by aot {version}, whose tables aot {COMPILER_VERSION} cannot read ({err}); rebuild it"
            ) from None
        raise AuditError(f"{path}: malformed image: {err}") from None
    for entry in contents.code.values():
        problem = _entry_problem(entry)
        if problem:
            raise AuditError(f"{path}: malformed image: code entry {entry.index}: {problem}")
    folder = path.resolve().parent
    package = header.get("package") or path.name.split(".")[0]
    root: Path | None = None
    if folder.name == "__aot__":
        root = folder.parent
        for _ in package.split("."):
            root = root.parent
    return AuditedImage(path, header, contents, package, root)


def _kind(value: Any) -> str:
    return type(value).__name__


def header_problem(header: dict[str, Any]) -> str | None:
    """What is wrong with the header fields the tools read (each may be missing, never of another type), or
    None. A file name must be a plain name in the image's folder: it is opened, and a NUL byte or a ``/`` in
    it would fail there or point elsewhere."""
    for key in _HEADER_STRINGS:
        if key in header and not isinstance(header[key], str):
            return f"{key} is {_kind(header[key])}, not a string"
    package = header.get("package")
    if package and not all(part.isidentifier() for part in package.split(".")):
        return f"package {package!r} is not a package name"
    target = header.get("target")
    if target is not None:
        if not isinstance(target, dict):
            return f"target is {_kind(target)}, not a map"
        for key in _TARGET_STRINGS:
            if key in target and not isinstance(target[key], str):
                return f"target {key} is {_kind(target[key])}, not a string"
    for what in _ARTIFACTS:
        info = header.get(what)
        if info is None:
            continue
        if not isinstance(info, dict):
            return f"{what} is {_kind(info)}, not a map"
        name = info.get("file")
        if name is not None:
            if not isinstance(name, str):
                return f"{what} file is {_kind(name)}, not a string"
            if not bare_file_name(name):
                return f"{what} file {name!r} is not a file name"
        for key in ("crc32", "size"):
            value = info.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                return f"{what} {key} is {_kind(value)}, not an integer"
    return None


def _tables_problem(tables: dict[str, Any]) -> str | None:
    """Checks ``ImageContents.from_tables`` relies on: a code record's method is an index into the methods
    table, and the ``ir`` table holds the bytes of one function per code record."""
    from ..world.image import CODE, IR, METHODS

    methods = METHODS.unpack_all(tables.get("methods", []))
    if not all(isinstance(m["key"], str) and isinstance(m["fingerprint"], str) for m in methods):
        return "a method key or fingerprint is not a string"
    if not all(isinstance(m["definition"], bytes) for m in methods):
        return "a method definition is not bytes"
    code = CODE.unpack_all(tables.get("code", []))
    for i, rec in enumerate(code):
        method = rec["method"]
        if isinstance(method, bool) or not isinstance(method, int) or not 0 <= method < len(methods):
            return f"code entry {i}: method index {method!r} is not an index into the {len(methods)} methods"
        if not isinstance(rec["edges"], list):
            return f"code entry {i}: its edges are not a list"
    irs = IR.unpack_all(tables.get("ir", []))
    if len(irs) != len(code):
        return f"{len(irs)} IR records for {len(code)} code entries"
    for i, rec in enumerate(irs):
        if not isinstance(rec["ir"], bytes):
            return f"code entry {i}: ir is {type(rec['ir']).__name__}, not bytes"
    return None


def _entry_problem(entry: CodeEntry) -> str | None:
    """What is wrong with the field types of a decoded entry (the file's checksum only proves it is intact)."""
    strings = {
        "method": entry.method,
        "rettype": entry.rettype,
        "owner": entry.owner,
        "symbol": entry.symbol,
        "state": entry.state,
    }
    for name, value in strings.items():
        if not isinstance(value, str):
            return f"{name} is {type(value).__name__}, not a string"
    if not all(isinstance(t, str) for t in entry.argtypes):
        return "argtypes are not all strings"
    for name, number in (
        ("min_world", entry.min_world),
        ("max_world", entry.max_world),
        ("native_size", entry.native_size),
    ):
        if isinstance(number, bool) or not isinstance(number, int):
            return f"{name} is {type(number).__name__}, not an integer"
    for edge in entry.edges:
        if len(edge) != 3 or not isinstance(edge[0], str) or not isinstance(edge[1], str):
            return f"malformed edge {list(edge)!r}"
        if edge[0] == EdgeKind.CALL and not isinstance(edge[2], str):
            return f"malformed call edge {list(edge)!r}"
    return None
