"""Loading prebuilt images on a method's first call: find, gate, validate, bind — without llvmlite.

    image = loader.image_for("numkit.stats")      # the package's image, mapped and gated once, or None
    entry, cause = image.find("numkit.stats:mean", ("f64[:]",))   # validated depth-first over edges
    image.bind(entry)  →  (try_ address, vectorcall address)      # from the library's entry table

Importing a package reads none of this: a method's first call does. The image is found through its
module's own ``__file__`` (never the current directory): ``<top package>/__aot__/<package>.cpu.aotimg``
beside ``<package>.cpu.so``. Opening it checks the header and the table directory, and the header is the
gate (every header field the loader reads has its type; format and compiler version, Python ABI, target,
CPU features). Each table is checksummed when it is first read: the index and code tables on the first
call (then only the records of the modules used are decoded, ``aot.image.entries.ImageIndex``), the typed IR
only if an entry must be cured. A rejected or damaged image is reported once, as one line, and none of its
native code is ever executed.

An image built with CPU variants has a library per variant: the best one this CPU runs is loaded
(``AOT_CPU_VARIANT`` names another it runs; ``aot.image.header.usable_variants``), the next-best when its
library cannot be used; a variant whose features this CPU lacks is never loaded.

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

from ..image.header import build_info, incompatibility, usable_variants

if TYPE_CHECKING:  # validation machinery loads on the first call that needs an image entry
    from ..image.entries import CodeEntry, ImageIndex
    from ..world.causes import Cause
    from ..world.validate import Validator

# Causes (``aot.world.causes``) are imported where one is made, which a valid entry never needs: importing
# that module here would add a module to every package's first calls (a tenth of a millisecond).


def _cause(name: str) -> Cause:
    """The cause ``aot.world.causes.<name>``."""
    from ..world import causes

    return getattr(causes, name)


_dlsym = ctypes.CDLL(None).dlsym
_dlsym.restype = ctypes.c_void_p
_dlsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p]


class PackageImage:
    """One package's CPU image: its header now, its body and library when first needed."""

    def __init__(self, package: str, path: str, header: dict[str, Any], rt: Any, file: Any = None):
        self.package = package
        self.path = path
        self.header = header
        self.rt = rt
        self.file = file  # the image as read (serializer.ImageFile): its tables decode when first asked for
        self.root = os.path.dirname(os.path.dirname(os.path.dirname(path)))  # <root>/<pkg>/__aot__/<image>
        self._contents: ImageIndex | None = None
        self._validator: Validator | None = None
        self._lib: Any = None
        self._native_file: Any = None  # the library's file, open for as long as the library is loaded
        self._entry_table: Any = None  # (see ``_read_entry_table``)
        self._slot_texts = ""  # what each slot of the entry table says it holds (``_read_entry_table``)
        self.native_problem: Cause | None = None
        self.ir_problem: str | None = None  # why its stored IR is not used (``distrust_ir``)
        self._bad_ir: set[int] = set()  # entries whose own IR is not used (``instance``)
        self.rejected: str | None = None
        # the libraries this CPU runs, best first, each as the header of an image of that library alone
        # (``usable_variants``); and the CPU variant of the one loaded
        self.libraries: list[dict[str, Any]] = [header]
        self.variant: str | None = None

    # ------------------------------------------------------------------ body
    @property
    def contents(self) -> ImageIndex | None:
        """What the image holds (None once it is rejected: a record found damaged rejects it all)."""
        if self.rejected is not None:
            return None
        if self._contents is None:
            from serializer import ImageError

            from ..image.entries import ImageIndex

            try:
                self._contents = ImageIndex(self.file)
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
        from ..image.contents import check_stored, instance_from_entry

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
    def _load_checked(self, header: dict[str, Any]) -> tuple[Any, Cause | None]:
        """Load the library ``header`` names if its bytes match their checksum and it says it is of this
        image's build; else why not. It is loaded through the descriptor its bytes were checksummed from
        (``/proc/self/fd/N``), which stays open, so that the number never names another library."""
        from serializer import ImageError, map_file, open_regular

        native = header["native"]  # (its fields' types are checked by the gate: ``header_problem``)
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
        if not at or ctypes.string_at(at) != build_info(header).encode():
            return None, _cause("NATIVE_OTHER_BUILD")  # (loaded, and never used)
        return lib, None

    @property
    def lib(self) -> Any:
        """The shared library, loaded only if it exists, matches the checksum in the header and says it is of
        this image's build: of an image with variants, the first of ``libraries`` that does (the best this
        CPU runs; the next-best, said once on stderr, when one cannot be used)."""
        if self._lib is None and self.native_problem is None:
            problems: list[str] = []
            for header in self.libraries:
                lib, problem = self._load_checked(header)
                if lib is not None:
                    self._lib, self.variant = lib, header.get("variant")
                    if problems:
                        print(f"aot: {self.path}: {'; '.join(problems)}: using {self.variant}", file=sys.stderr)
                    break
                problems.append(f"the {header.get('variant')} library cannot be used ({problem})")
                if self.native_problem is None:
                    self.native_problem = problem
            else:
                return None
            self.native_problem = None
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
            if count == contents.entry_count:  # a library of another build would disagree
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
        why = incompatibility(image_file.header)
        if why:
            image.reject(why)
        elif "variants" in image_file.header:
            image.libraries, note = usable_variants(image_file.header, self.rt.env.cpu_variant)
            if note is not None:
                print(f"aot: {path}: {note}", file=sys.stderr)
        return image
