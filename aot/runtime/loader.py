"""Loading prebuilt images on a method's first call: find, gate, validate, bind — without llvmlite.

    image = loader.image_for("numkit.stats")      # the package's image, mapped and gated once, or None
    entry, cause = image.find("numkit.stats:mean", ("f64[:]",))   # validated depth-first over edges
    image.bind(entry)  →  (try_ address, vectorcall address)      # from the library's entry table

Importing a package reads none of this: a method's first call does. The image is found through its
module's own ``__file__`` (never the current directory): ``<top package>/__aot__/<package>.cpu.aotimg``
beside ``<package>.cpu.so``. Opening it checks the header and the table directory, and the header is the
gate (every header field the loader reads has its type; format and compiler version, Python ABI, target,
CPU features). Each table is checksummed when it is first read: the index and code tables on the first
call (then only the records of the modules used are decoded, ``aot.world.image.ImageIndex``), the typed IR
only if an entry must be cured. A rejected or damaged image is reported once, as one line, and none of its
native code is ever executed.

The shared library must be a bare file name in the image's own folder. It is loaded only after its
checksum matches the header, and through the very descriptor it was checksummed from (a build renaming
another library over it meanwhile changes nothing); then it must say it is of the image's build (its
``aot_build_id``). Entries are bound by index into its ``aot_entries`` table, each only to a slot that says
it holds that entry's key and argument types.

Hot path (every prebuilt method's first call),
guarded by ``tests/bench/instructions.py`` and ``tests/bench/test_import_bench.py``: measure before and after
any change here.
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import TYPE_CHECKING, Any

from serializer import crc32

from ..world.fingerprint import COMPILER_VERSION
from ..world.image import build_info

if TYPE_CHECKING:  # validation machinery loads on the first call that needs an image entry
    from ..world.causes import Cause
    from ..world.image import CodeEntry, ImageContents
    from ..world.validate import Validator

# The ``cpu`` owner's text, ``aot.world.owners.CPU`` (a test ties the two): importing that module, or
# ``aot.world.causes``, here would add a module to every package's first calls (a tenth of a millisecond);
# causes are imported where one is made, which a valid entry never needs.
_CPU = "cpu"


def _cause(name: str) -> Cause:
    """The cause ``aot.world.causes.<name>``."""
    from ..world import causes

    return getattr(causes, name)


_dlsym = ctypes.CDLL(None).dlsym
_dlsym.restype = ctypes.c_void_p
_dlsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p]


def python_abi() -> str:
    return f"{sys.implementation.cache_tag}-{sys.platform}"


def _host_features() -> set[str] | None:
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


_FEATURE_ALIASES = {
    "sse4.1": "sse4_1",
    "sse4.2": "sse4_2",
    "avx512f": "avx512f",
    "cx16": "cx16",
    "64bit": "lm",
    "lzcnt": "abm",
}


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


# Every header field an image of any owner has, with its type (msgpack decodes exact types: a bool is no int
# here), and those a CPU image adds: its library, and the build identity the library must also carry.
_HEADER_FIELDS = {"compiler_version": str, "python": str, "owner": str, "target": dict}
_CPU_HEADER_FIELDS = {"native": dict, "build_id": str}
_HEADER_MAPS = {"target": {"triple": str, "cpu": str, "features": str}, "native": {"file": str, "crc32": int}}


def header_problem(header: Any) -> str | None:
    """What is malformed in an image's header (a field missing or of another type, a library that is not a
    bare file name in the image's folder), or None. Once per image: the gate and the loader then read the
    fields as what they are."""
    if type(header) is not dict:
        return "the header is not a map"
    fields = _HEADER_FIELDS if header.get("owner") != _CPU else {**_HEADER_FIELDS, **_CPU_HEADER_FIELDS}
    for name, kind in fields.items():
        value = header.get(name)
        if type(value) is not kind:
            return f"header field {name} is {'missing' if value is None else 'a ' + type(value).__name__}"
        for field, kind in _HEADER_MAPS.get(name, {}).items():
            inner = value.get(field)
            if type(inner) is not kind:
                return f"header field {name}.{field} is {'missing' if inner is None else 'a ' + type(inner).__name__}"
    if "native" in fields and not bare_file_name(header["native"]["file"]):
        return f"header field native.file is not a file name in the image's folder: {header['native']['file']!r}"
    return None


def bare_file_name(name: str) -> bool:
    """Whether ``name`` names a file in the folder it is joined to, and nothing else: no separator, no
    ``.`` or ``..``, no NUL (only a library in the image's own folder is ever loaded)."""
    return (
        bool(name)
        and name not in (".", "..")
        and "/" not in name
        and "\\" not in name
        and "\0" not in name
        and (os.altsep is None or os.altsep not in name)
    )


class PackageImage:
    """One package's CPU image: its header now, its body and library when first needed."""

    def __init__(self, package: str, path: str, header: dict[str, Any], rt: Any, file: Any = None):
        self.package = package
        self.path = path
        self.header = header
        self.rt = rt
        self.file = file  # the image as read (serializer.ImageFile): its tables decode when first asked for
        self.root = os.path.dirname(os.path.dirname(os.path.dirname(path)))  # <root>/<pkg>/__aot__/<image>
        self._contents: ImageContents | None = None
        self._validator: Validator | None = None
        self._lib: Any = None
        self._native_file: Any = None  # the library's file, open for as long as the library is loaded
        self._entry_table: Any = None  # (see ``_read_entry_table``)
        self._slot_texts = ""  # what each slot of the entry table says it holds (``_read_entry_table``)
        self.native_problem: Cause | None = None
        self.ir_problem: str | None = None  # why its stored IR is not used (``distrust_ir``)
        self._bad_ir: set[int] = set()  # entries whose own IR is not used (``instance``)
        self.rejected: str | None = None

    # ------------------------------------------------------------------ body
    @property
    def contents(self) -> ImageContents | None:
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
        from ..world.causes import Cause

        return Cause.image_incompatible(self.rejected or "")

    @property
    def validator(self) -> Validator | None:
        contents = self.contents
        if contents is None:
            return None
        if self._validator is None:
            from ..world.validate import Validator

            self._validator = Validator(contents, self.rt.current_world, self.rt.env.debug_reject)
        return self._validator

    def find(self, key: str, argtypes: tuple[str, ...]) -> tuple[CodeEntry | None, Cause | None]:
        """The entry for ``key(argtypes)`` and why it is not valid (None when it is)."""
        validator = (self._validator or self.validator) if self.rejected is None else None
        if validator is None:
            return None, self.rejection
        try:
            instance = (key, argtypes)
            entry = validator.contents.entry(instance)
            if entry is None:
                return None, _cause("NO_ENTRY")
            return entry, validator.check(instance, entry).cause
        except (ValueError, TypeError, KeyError, IndexError, OverflowError) as err:  # a malformed record
            self.reject(f"damaged: {err}")
            return None, self.rejection

    def callees(self, entry: CodeEntry) -> set[str]:
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

    def instance(self, entry: CodeEntry, method: Any):
        """The inferred instance ``entry`` stores, to cure it or seed an inference from, its IR decoded and
        checked now; None when there is none to use: the image's IR table is damaged or not its build's
        (which rejects the image), or this entry's IR does not decode or fit the entry, or the image's IR
        failed to compile once (``distrust_ir``): the entry is then compiled from source."""
        from ..world.image import check_stored, instance_from_entry

        if self.ir_problem is not None or entry.index in self._bad_ir:
            return None
        try:
            _ = entry.ir  # (decoded and checked now)
        except ValueError as err:
            self.reject(f"damaged: {err}")
            return None
        try:
            instance = instance_from_entry(entry, method, self.root)
            check_stored(instance, entry)
        except Exception as err:  # (ValueError from the check; anything from types no parser expects)
            self._bad_ir.add(entry.index)
            print(
                f"aot: ignoring the typed IR of {entry.method}({', '.join(entry.argtypes)}) in {self.path}: "
                f"{err}; it compiles from source",
                file=sys.stderr,
            )
            return None
        return instance

    def distrust_ir(self, err: BaseException) -> None:
        """Stored IR of this image failed to compile: none of it is used again (said once)."""
        if self.ir_problem is None:
            self.ir_problem = f"{type(err).__name__}: {err}"
            print(
                f"aot: ignoring the typed IR in {self.path}: it does not compile ({self.ir_problem}); "
                f"its entries compile from source",
                file=sys.stderr,
            )

    # ------------------------------------------------------------------ native code
    def _load_checked(self) -> tuple[Any, Cause | None]:
        """Load the library the header names if its bytes match their checksum and it says it is of this
        image's build; else why not. It is loaded through the descriptor its bytes were checksummed from
        (``/proc/self/fd/N``), which stays open, so that the number never names another library."""
        from serializer import ImageError, map_file, open_regular

        native = self.header["native"]  # (its fields' types are checked by the gate: ``header_problem``)
        so = os.path.join(os.path.dirname(self.path), native["file"])
        try:  # mapped, not read: no copy of the library into fresh memory just to checksum it
            f = open_regular(so)
        except ImageError:  # missing, unreadable, or not a regular file
            return None, _cause("NATIVE_MISSING")
        try:
            with map_file(f, whole=True) as data:
                matches = crc32(data) == native["crc32"]
        except (OSError, ValueError):  # (empty)
            f.close()
            return None, _cause("NATIVE_MISSING")
        if not matches:
            f.close()
            return None, _cause("NATIVE_CHECKSUM_MISMATCH")
        fd_path = f"/proc/self/fd/{f.fileno()}"
        try:
            lib = ctypes.CDLL(fd_path if os.path.exists(fd_path) else so)
        except OSError:
            f.close()
            return None, _cause("NATIVE_UNLOADABLE")
        self._native_file = f
        at = _dlsym(lib._handle, b"aot_build_id")
        if not at or ctypes.string_at(at) != build_info(self.header).encode():
            return None, _cause("NATIVE_OTHER_BUILD")  # (loaded, and never used)
        return lib, None

    @property
    def lib(self) -> Any:
        """The shared library, loaded only if it exists, matches the checksum in the header and says it is of
        this image's build."""
        if self._lib is None and self.native_problem is None:
            self._lib, self.native_problem = self._load_checked()
        return self._lib

    def address(self, symbol: str) -> int | None:
        lib = self.lib
        if lib is None:
            return None
        return _dlsym(lib._handle, symbol.encode()) or None

    def bind(self, entry: CodeEntry) -> Any:
        """``(try_, vectorcall, PyMethodDef)`` addresses of an entry's native code, read from the library's
        entry table (``aot.builder.objects.emit_entry_table``) at the entry's index, if that slot says it
        holds the entry's key and argument types; else why not (a cause: cure it)."""
        table = self._entry_table if self._entry_table is not None else self._read_entry_table()
        if not table:
            return self.native_problem or _cause("NATIVE_MISSING")
        i = 5 * entry.index  # (within the table: it has a slot for every code record of this image's build)
        if self._slot_texts[table[i + 3] : table[i + 4]] != entry.method + entry.signature:  # (``slot_text``)
            return _cause("NATIVE_SLOT_MISMATCH")
        return table[i], table[i + 1], table[i + 2]

    def _read_entry_table(self) -> Any:
        """Every entry's addresses and where its slot text lies, read in place from the library (which is
        never unloaded): each is made an int when its entry is bound; and the slot texts (one copy). Empty
        when the library or its table is unusable."""
        self._entry_table = ()
        count_at, table_at = self.address("aot_entry_count"), self.address("aot_entries")
        keys_at = self.address("aot_entry_keys")
        contents = self.contents
        if count_at and table_at and keys_at and contents is not None:
            count = ctypes.c_int64.from_address(count_at).value
            if count == len(contents.code):  # a library of another build would disagree
                table = memoryview((ctypes.c_void_p * (5 * count)).from_address(table_at)).cast("B").cast("P")
                try:
                    self._slot_texts = ctypes.string_at(keys_at).decode()
                except UnicodeDecodeError:
                    return self._entry_table  # (no slot says anything: none is bound)
                self._entry_table = table
        return self._entry_table


class Loader:
    """Finds and gates images per package; one per runtime."""

    def __init__(self, rt: Any):
        self.rt = rt
        self.images: dict[str, PackageImage | None] = {}
        self._by_module: dict[str, PackageImage | None] = {}  # module name → its package's image

    def image_for(self, module_name: str) -> PackageImage | None:
        """The image of the package ``module_name`` belongs to (opened on first use), or None."""
        image: Any = self._by_module.get(module_name, self)  # (``self``: not looked up yet)
        if image is self:
            package = module_name.partition(".")[0]
            if package not in self.images:
                self.images[package] = self._open(package)
            image = self._by_module[module_name] = self.images[package]
        return image

    def _open(self, package: str) -> PackageImage | None:
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
    def incompatibility(header: dict[str, Any], owner: str = _CPU) -> str | None:
        """Why an image with this header cannot be used here by ``owner`` (``damaged: …`` for a malformed
        header), or None. The one gate: the loader asks it for CPU images, the tools for images of any owner
        (a ptx image's target is chosen per device when a kernel is launched, so it has no target checks)."""
        if header.get("compiler_version") != COMPILER_VERSION:  # (another version's header may hold anything)
            return f"compiler-version {header.get('compiler_version')} (this is {COMPILER_VERSION})"
        problem = header_problem(header)
        if problem is not None:
            return f"damaged: {problem}"
        if header.get("python") != python_abi():
            return f"python-abi {header.get('python')} (this is {python_abi()})"
        if header.get("owner") != owner:
            return f"owner {header.get('owner')}"
        if owner != _CPU:
            return None
        target = header["target"]
        triple = target["triple"]
        machine = os.uname().machine
        if not triple.startswith(machine):
            return f"target {triple} (this machine is {machine})"
        missing = _missing_features(target["features"])
        if missing:
            return f"cpu-features missing here: {','.join(missing[:5])}"
        return None
