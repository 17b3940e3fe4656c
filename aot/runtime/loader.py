"""Loading prebuilt images on a method's first call: find, gate, validate, bind — without llvmlite.

    image = loader.image_for("numkit.stats")      # the package's image, mapped and gated once, or None
    entry, cause = image.find("numkit.stats:mean", ("f64[:]",))   # validated depth-first over edges
    image.bind(entry)  →  (try_ address, vectorcall address)      # from the library's entry table

Importing a package reads none of this: a method's first call does. The image is found through its
module's own ``__file__`` (never the current directory): ``<top package>/__aot__/<package>.cpu.aotimg``
beside ``<package>.cpu.so``. Opening it checks the header and the table directory, and the header is the
gate (format and compiler version, Python ABI, target, CPU features). Each table is checksummed when it is
first read: the index and code tables on the first call (then only the records of the modules
used are decoded, ``aot.world.image.ImageIndex``), the typed IR only if an entry must be cured. A rejected
or damaged image is reported once, as one line, and none of its native code is ever executed. The shared
library is loaded only after its checksum matches the header, and entries are bound by index into its
``aot_entries`` table.
"""
from __future__ import annotations

import ctypes
import os
import sys
from typing import TYPE_CHECKING, Any, Optional

from serializer import crc32

from ..world.causes import (NATIVE_CHECKSUM_MISMATCH, NATIVE_MISSING, NATIVE_UNLOADABLE, NO_ENTRY, Cause,
                             CauseKind)
from ..world.fingerprint import COMPILER_VERSION
from ..world.owners import CPU

if TYPE_CHECKING:  # validation machinery loads on the first call that needs an image entry
    from ..world.image import CodeEntry, ImageContents
    from ..world.validate import Validator

_dlsym = ctypes.CDLL(None).dlsym
_dlsym.restype = ctypes.c_void_p
_dlsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p]


def python_abi() -> str:
    return f"{sys.implementation.cache_tag}-{sys.platform}"


def _host_features() -> Optional[set[str]]:
    """CPU flags of this machine (Linux), in LLVM's spelling, or None when unknown."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return flags | {f.replace("_", ".") for f in flags}
    except OSError:
        return None
    return None


_FEATURE_ALIASES = {"sse4.1": "sse4_1", "sse4.2": "sse4_2", "avx512f": "avx512f", "cx16": "cx16",
                    "64bit": "lm", "lzcnt": "abm"}


def _missing_features(features: str) -> list[str]:
    required = [f[1:] for f in features.split(",") if f.startswith("+")]
    if not required:  # (a generic build: no need to read /proc/cpuinfo, which takes a good part of a ms)
        return []
    host = _host_features()
    if host is None:
        return []
    missing = []
    for name in required:
        if name in host or _FEATURE_ALIASES.get(name) in host:
            continue
        missing.append(name)
    return missing


class PackageImage:
    """One package's CPU image: its header now, its body and library when first needed."""

    def __init__(self, package: str, path: str, header: dict[str, Any], rt: Any, file: Any = None):
        self.package = package
        self.path = path
        self.header = header
        self.rt = rt
        self.file = file  # the image as read (serializer.ImageFile): its tables decode when first asked for
        self.root = os.path.dirname(os.path.dirname(os.path.dirname(path)))  # <root>/<pkg>/__aot__/<image>
        self._contents: Optional["ImageContents"] = None
        self._validator: Optional["Validator"] = None
        self._lib: Any = None
        self._entry_table: Any = None  # (see ``_read_entry_table``)
        self.native_problem: Optional[Cause] = None
        self.rejected: Optional[str] = None  # why the whole image is rejected (see ``rejection``)

    # ------------------------------------------------------------------ body
    @property
    def contents(self) -> Optional["ImageContents"]:
        """What the image holds (None once it is rejected: a record found damaged rejects it all)."""
        if self.rejected is not None:
            return None
        if self._contents is None:
            from serializer import ImageError

            from ..world.image import ImageContents
            try:
                self._contents = ImageContents.from_image_file(self.file)
            except (ImageError, KeyError, TypeError, ValueError, IndexError, OverflowError) as err:
                self.reject(f"damaged: {err}")
        return self._contents

    def reject(self, why: str) -> None:
        """Reject the whole image (``why`` becomes the cause ``image-incompatible:<why>``), saying so once."""
        self.rejected = why
        print(f"aot: ignoring image {self.path}: {self.rejection}; its methods compile on demand", file=sys.stderr)

    @property
    def rejection(self) -> Cause:
        """The cause of every instance of a rejected image."""
        return Cause(CauseKind.IMAGE_INCOMPATIBLE, self.rejected or "")

    @property
    def validator(self) -> Optional["Validator"]:
        contents = self.contents
        if contents is None:
            return None
        if self._validator is None:
            from ..world.validate import Validator
            self._validator = Validator(contents, self.rt.current_world, self.rt.env.debug_reject)
        return self._validator

    def find(self, key: str, argtypes: tuple[str, ...]) -> tuple[Optional["CodeEntry"], Optional[Cause]]:
        """The entry for ``key(argtypes)`` and why it is not valid (None when it is)."""
        validator = (self._validator or self.validator) if self.rejected is None else None
        if validator is None:
            return None, self.rejection
        try:
            instance = (key, argtypes)
            entry = validator.contents.entry(instance)
            if entry is None:
                return None, NO_ENTRY
            return entry, validator.check(instance, entry).cause
        except (ValueError, TypeError, KeyError, IndexError, OverflowError) as err:  # a malformed record
            self.reject(f"damaged: {err}")
            return None, self.rejection

    def callees(self, entry: "CodeEntry") -> set[str]:
        """Method keys of every entry ``entry`` reaches through calls: its native code inlines them all."""
        contents = self.contents
        seen: set = set()
        stack = list(entry.call_keys)
        while stack:
            key = stack.pop()
            if key in seen:
                continue
            seen.add(key)
            callee = contents.entry(key) if contents is not None else None
            if callee is not None:
                stack.extend(callee.call_keys)
        return {k for k, _ in seen}

    def instance(self, entry: "CodeEntry", method: Any):
        """The inferred instance ``entry`` stores, to cure it from; None when the image's IR is damaged
        (which rejects the image: the IR table is checksummed when first read)."""
        from ..world.image import instance_from_entry
        try:
            entry.ir
        except ValueError as err:
            self.reject(f"damaged: {err}")
            return None
        return instance_from_entry(entry, method, self.root)

    # ------------------------------------------------------------------ native code
    def _load_checked(self) -> tuple[Any, Optional[Cause]]:
        """Load the library the header names if its bytes match their checksum; else why not."""
        from serializer import map_file
        native = self.header.get("native") or {}
        so = os.path.join(os.path.dirname(self.path), str(native.get("file", "")))
        try:  # mapped, not read: no copy of the library into fresh memory just to checksum it
            with open(so, "rb") as f, map_file(f, whole=True) as data:
                matches = crc32(data) == native.get("crc32")
        except (OSError, ValueError):  # missing, unreadable, or empty
            return None, NATIVE_MISSING
        if not matches:
            return None, NATIVE_CHECKSUM_MISMATCH
        try:
            return ctypes.CDLL(str(so)), None
        except OSError:
            return None, NATIVE_UNLOADABLE

    @property
    def lib(self) -> Any:
        """The shared library, loaded only if it exists and matches the checksum in the header."""
        if self._lib is None and self.native_problem is None:
            self._lib, self.native_problem = self._load_checked()
        return self._lib

    def address(self, symbol: str) -> Optional[int]:
        lib = self.lib
        if lib is None:
            return None
        return _dlsym(lib._handle, symbol.encode()) or None

    def bind(self, entry: "CodeEntry") -> Optional[tuple[int, int]]:
        """``(try_, vectorcall)`` addresses of an entry's native code, or None (cure it): read from the
        library's entry table (``aot.builder.objects.emit_entry_table``) at the entry's index. Its ``def_``
        (the builtin's PyMethodDef) is looked up by name only if the builtin is asked for."""
        table = self._entry_table if self._entry_table is not None else self._read_entry_table()
        i = 2 * entry.index
        if i + 1 >= len(table) or not table[i]:
            return None
        return table[i], table[i + 1] or 0

    def _read_entry_table(self) -> Any:
        """Every entry's two addresses, read in place from the library (which is never unloaded): each is
        made an int when its entry is bound. Empty when the library or its table is unusable."""
        self._entry_table = ()
        count_at, table_at = self.address("aot_entry_count"), self.address("aot_entries")
        contents = self.contents
        if count_at and table_at and contents is not None:
            count = ctypes.c_int64.from_address(count_at).value
            if count == len(contents.code):  # a library of another build would disagree
                table = (ctypes.c_void_p * (2 * count)).from_address(table_at)
                self._entry_table = memoryview(table).cast("B").cast("P")
        return self._entry_table


class Loader:
    """Finds and gates images per package; one per runtime."""

    def __init__(self, rt: Any):
        self.rt = rt
        self.images: dict[str, Optional[PackageImage]] = {}
        self._by_module: dict[str, Optional[PackageImage]] = {}  # module name → its package's image

    def image_for(self, module_name: str) -> Optional[PackageImage]:
        """The image of the package ``module_name`` belongs to (opened on first use), or None."""
        image = self._by_module.get(module_name, self)
        if image is self:
            package = module_name.partition(".")[0]
            if package not in self.images:
                self.images[package] = self._open(package)
            image = self._by_module[module_name] = self.images[package]
        return image

    def _open(self, package: str) -> Optional[PackageImage]:
        module = sys.modules.get(package)
        file = getattr(module, "__file__", None)
        if not file:
            return None
        # os.path, not pathlib: the first call of a method may be the first thing to need either
        path = os.path.join(os.path.dirname(os.path.realpath(file)), "__aot__", f"{package}.cpu.aotimg")
        if not os.path.exists(path):
            return None
        from serializer import ImageError, open_image
        try:
            image_file = open_image(path)  # mapped; the header and the table directory are checked
        except ImageError as err:
            image = PackageImage(package, path, {}, self.rt)
            image.reject(f"damaged ({err.why})")
            return image
        image = PackageImage(package, path, image_file.header, self.rt, image_file)
        why = self.incompatibility(image_file.header)
        if why:
            image.reject(why)
        return image

    @staticmethod
    def incompatibility(header: dict[str, Any]) -> Optional[str]:
        if header.get("compiler_version") != COMPILER_VERSION:
            return f"compiler-version {header.get('compiler_version')} (this is {COMPILER_VERSION})"
        if header.get("python") != python_abi():
            return f"python-abi {header.get('python')} (this is {python_abi()})"
        if header.get("owner") != CPU:
            return f"owner {header.get('owner')}"
        target = header.get("target") or {}
        if not isinstance(target, dict):
            return "no target"
        triple = str(target.get("triple", ""))
        machine = os.uname().machine
        if not triple.startswith(machine):
            return f"target {triple} (this machine is {machine})"
        missing = _missing_features(str(target.get("features", "")))
        if missing:
            return f"cpu-features missing here: {','.join(missing[:5])}"
        return None
