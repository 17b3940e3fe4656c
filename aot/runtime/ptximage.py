"""Kernels from a package's ``ptx`` images: what a CUDA device of some arch loads, or why the kernel compiles.

    choice = select(runtime(), saxpy.__aot_method__, argtypes, "sm_90")
    choice.cause     → None: served from the image; else why it must compile (a ``Cause``)
    choice.kind      → "cubin" (the image of this very arch has one) or "ptx" (the driver compiles the PTX)
    choice.code      → the bytes cuModuleLoadData takes;  choice.symbol → the kernel's ``.entry``
    choice.written, choice.errors    → what ``aot.runtime.cuda.Device.launch`` needs beside them
    choice.stale()   → None while the entry stays valid, else the cause (checked before every launch)

The images are ``<pkg>/__aot__/<pkg>.ptx-<arch>.aotimg`` (``aot.builder.ptx (PtxBuild)``). A device uses
the image of its own arch, its cubin when it has one that matches its checksum, else its PTX; without an
image of its arch, the PTX of the newest image of a lower arch (PTX is forward compatible; a cubin of another
arch is never loaded). The image passes the one gate (``aot.image.header.incompatibility`` for the ``ptx``
owner), must say it is this package's and this arch's, and the kernel's entry is validated like a CPU entry
(``aot.world.validate.Validator``: fingerprints, every edge, overlays, callee entries). Any problem is a
cause: ``image-incompatible:<why>`` for the whole image (said once on stderr), ``no-entry``,
``edge-changed:…``, ``fingerprint-changed``, ``native-missing`` / ``native-checksum-mismatch`` for the code.

Nothing here imports llvmlite: a runtime-only install launches valid kernels from their image.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

from .. import forksafe
from ..image.header import incompatibility
from ..world.causes import NATIVE_CHECKSUM_MISMATCH, NATIVE_MISSING, NO_ENTRY, Cause
from ..world.edges import EdgeKind
from ..world.owners import PTX

CUBIN, PTX_TEXT = "cubin", "ptx"
"""The kinds of code a device loads (``Choice.kind``)."""
_ARTIFACTS = {CUBIN: "cubin", PTX_TEXT: "native"}
"""Each kind's header field, which names its file."""


def arch_number(arch: str) -> int | None:
    """``"sm_90"`` → 90 (``sm_90a`` too); None for anything else."""
    digits = arch[3:].rstrip("af") if arch.startswith("sm_") else ""
    return int(digits) if digits.isdigit() else None


class Choice:
    """What a device loads for one kernel instance, or the cause it must compile (``cause``)."""

    def __init__(self, cause: Cause | None = None, image: PtxImage | None = None, kind: str = "", entry: Any = None):
        self.cause = cause
        self.image = image
        self.kind = kind  # CUBIN or PTX_TEXT
        self.key: tuple[str, tuple[str, ...]] = entry.key if entry is not None else ("", ())
        self.symbol: str = entry.symbol if entry is not None else ""
        self.written: set[int] = image.kernels[self.key] if image is not None else set()
        self.errors: tuple[tuple[str, str], ...] = image.errors if image is not None else ()
        # The world it was decided in and what the names it depends on were bound to then (``stale``).
        self.world, self.watched = image.watch(entry) if image is not None else (0, ())

    @property
    def code(self) -> bytes:
        assert self.image is not None and self.cause is None
        return self.image.code(self.kind)[0]  # type: ignore[return-value]  # (read and checked when chosen)

    def module(self, dev: Any) -> Any:
        """The image's module on ``dev`` (``dev.load``, once per device and kind). A cubin the driver refuses
        (``CudaError``) gives way to the image's PTX, when that is intact; else the error shows."""
        from .cuda import CudaError

        assert self.image is not None
        modules = self.image.modules
        module = modules.get((dev, self.kind))
        if module is None:
            try:
                module = dev.load(self.code)
            except CudaError:
                ptx, problem = self.image.code(PTX_TEXT)
                if self.kind != PTX_TEXT and ptx is not None and problem is None:
                    self.kind = PTX_TEXT
                    return self.module(dev)
                raise
            modules[(dev, self.kind)] = module
        return module

    def stale(self) -> Cause | None:
        """Why the entry no longer serves, or None; asked before every launch. Cheap while nothing was
        redefined (the world is the same) and every name its code and its callees' code looked up or called
        is bound to the very object it was when the entry was decided; else the entry is decided afresh.
        (Constants folded in are not compared again: like compiled code, a kernel keeps the values it was
        loaded or compiled with.)"""
        assert self.image is not None
        resolve = self.image.world.resolve
        if self.image.world.table.world == self.world and all(resolve(t) is v for t, v in self.watched):
            return None
        entry, cause = self.image.check(self.key)
        if cause is None:
            self.world, self.watched = self.image.watch(entry)
        return cause

    def __repr__(self) -> str:
        return f"<ptx choice {self.kind or self.cause}>"


class PtxImage:
    """One ``ptx`` image of a package: gated when opened; entries, launch tables and code read when used."""

    def __init__(self, package: str, arch: str, path: str, world: Any, reject: frozenset[str]):
        self.package, self.arch, self.path = package, arch, path
        self.rejected: str | None = None
        self.header: dict[str, Any] = {}
        self.world, self._reject = world, reject
        self._validator: Any = None
        self._code: dict[str, tuple[bytes | None, Cause | None]] = {}
        self.kernels: dict[tuple[str, tuple[str, ...]], set[int]] = {}
        self.errors: tuple[tuple[str, str], ...] = ()
        self.modules: dict[Any, Any] = {}  # (device, kind) → the module loaded there
        self.lock = threading.Lock()
        forksafe.reset_in_child(self.lock._at_fork_reinit)  # type: ignore[attr-defined]
        from serializer import ImageError, open_image

        try:
            self.file = open_image(path)
        except ImageError as err:
            self.reject(f"damaged ({err.why})")
            return
        self.header = self.file.header
        why = incompatibility(self.header, PTX)
        if why is None and self.header.get("package") != package:
            why = f"package {self.header.get('package')} (this is {package})"
        if why is None and self.header["target"]["cpu"] != arch:
            why = f"arch {self.header['target']['cpu']} (the file is named for {arch})"
        if why is None:
            why = self._read_tables()
        if why is not None:
            self.reject(why)

    def _read_tables(self) -> str | None:
        from serializer import ImageError

        from ..image.entries import ERRORS, KERNELS, ImageIndex
        from ..world.validate import Validator

        try:
            index = ImageIndex(self.file)
            for rec in KERNELS.unpack_all(self.file.table("kernels")):
                written = rec["written"]
                if type(rec["method"]) is not str or not all(type(t) is str for t in rec["argtypes"]):
                    raise ValueError("malformed kernels table")
                if not all(type(i) is int and 0 <= i < len(rec["argtypes"]) for i in written):
                    raise ValueError("malformed kernels table: a written parameter out of range")
                self.kernels[(rec["method"], tuple(rec["argtypes"]))] = set(written)
            errors = ERRORS.unpack_all(self.file.table("errors"))
            if not all(type(e["exception"]) is str and type(e["message"]) is str for e in errors):
                raise ValueError("malformed errors table")
            self.errors = tuple((e["exception"], e["message"]) for e in errors)
        except (ImageError, KeyError, TypeError, ValueError, IndexError, OverflowError) as err:
            return f"damaged: {err}"
        self._validator = Validator(index, self.world, self._reject)
        return None

    def reject(self, why: str) -> None:
        self.rejected = why
        print(
            f"aot: ignoring image {self.path}: image-incompatible:{why}; its kernels compile on demand", file=sys.stderr
        )

    @property
    def validator(self) -> Any:
        return self._validator

    def check(self, key: tuple[str, tuple[str, ...]]) -> tuple[Any, Cause | None]:
        """The entry for ``key`` and why it does not serve (None when it does). Decided afresh each time
        (once per launch): a method may have been redefined, or a helper's module rebound, since."""
        if self.rejected is not None:
            return None, Cause.image_incompatible(self.rejected)
        with self.lock:  # (kernels launched from several threads share the image's validator)
            return self._check(key)

    def _check(self, key: tuple[str, tuple[str, ...]]) -> tuple[Any, Cause | None]:
        self._validator.forget()
        try:
            entry = self._validator.contents.entry(key)
            if entry is None or key not in self.kernels:
                return None, NO_ENTRY
            return entry, self._validator.check(key, entry).cause
        except (ValueError, TypeError, KeyError, IndexError, OverflowError) as err:  # a malformed record
            self.reject(f"damaged: {err}")
            return None, Cause.image_incompatible(self.rejected or "")

    def watch(self, entry: Any) -> tuple[int, tuple[tuple[str, Any], ...]]:
        """The current world, and each name that ``entry`` or an entry it calls (transitively) looks up or
        calls, with the object it is bound to now: while these stay, a valid entry stays valid."""
        world, contents = self.world, self._validator.contents
        targets: set[str] = set()
        seen, stack = {entry.key}, [entry]
        while stack:
            e = stack.pop()
            targets.update(t for kind, t, _ in e.edges if kind in (EdgeKind.LOOKUP, EdgeKind.CALL))
            for callee in e.call_keys:
                found = contents.entry(callee)
                if callee not in seen and found is not None:
                    seen.add(callee)
                    stack.append(found)
        return world.table.world, tuple((t, world.resolve(t)) for t in sorted(targets))

    def code(self, kind: str) -> tuple[bytes | None, Cause | None]:
        """The bytes of the image's PTX (``"ptx"``) or cubin (``"cubin"``) if they match the header's checksum,
        else why not; read once."""
        from serializer import crc32

        if kind not in self._code:
            artifact = self.header.get(_ARTIFACTS[kind])
            data: bytes | None = None
            cause: Cause | None = NATIVE_MISSING
            if artifact is not None and "file" in artifact:
                try:
                    with open(os.path.join(os.path.dirname(self.path), artifact["file"]), "rb") as f:
                        data = f.read()
                except OSError:
                    data = None
                if data and crc32(data) == artifact.get("crc32"):
                    cause = None
                elif data:
                    data, cause = None, NATIVE_CHECKSUM_MISMATCH
                else:
                    data = None
            self._code[kind] = (data, cause)
        return self._code[kind]


class PtxImages:
    """The ``ptx`` images of the process's packages, opened when a kernel is first launched (one per runtime)."""

    def __init__(self, rt: Any):
        from ..world.validate import CurrentWorld

        self.rt = rt
        self.world = CurrentWorld(rt.table)  # (its own: validating before every launch forgets what it knew)
        self.images: dict[str, PtxImage | None] = {}

    def folder(self, package: str) -> str | None:
        file = getattr(sys.modules.get(package), "__file__", None)
        return os.path.join(os.path.dirname(os.path.realpath(file)), "__aot__") if file else None

    def available(self, package: str) -> list[str]:
        """The archs the package has ``ptx`` images for."""
        folder = self.folder(package)
        prefix, suffix = f"{package}.ptx-", ".aotimg"
        try:
            names = os.listdir(folder) if folder else []
        except OSError:
            names = []
        archs = [n[len(prefix) : -len(suffix)] for n in names if n.startswith(prefix) and n.endswith(suffix)]
        return sorted(a for a in archs if arch_number(a) is not None)

    def image(self, package: str, arch: str) -> PtxImage:
        path = os.path.join(self.folder(package) or "", f"{package}.ptx-{arch}.aotimg")
        image = self.images.get(path)
        if image is None:
            image = self.images[path] = PtxImage(package, arch, path, self.world, self.rt.env.debug_reject)
        return image

    def select(self, key: str, argtypes: tuple[str, ...], arch: str) -> Choice:
        """What a device of ``arch`` loads for kernel ``key(argtypes)`` (see the module docstring)."""
        package = key.partition(".")[0].partition(":")[0]
        archs = self.available(package)
        if not archs:
            return Choice(NO_ENTRY)
        here = arch_number(arch)
        if arch in archs:
            image_arch = arch
        else:
            lower = [a for a in archs if here is not None and (arch_number(a) or 0) <= here]
            if not lower:
                return Choice(Cause.image_incompatible(f"no ptx image runs on {arch} (images: {', '.join(archs)})"))
            image_arch = max(lower, key=lambda a: arch_number(a) or 0)
        image = self.image(package, image_arch)
        instance = (key, argtypes)
        entry, cause = image.check(instance)
        if cause is not None or entry is None:
            return Choice(cause or NO_ENTRY)
        kind = PTX_TEXT
        if image_arch == arch and image.code(CUBIN)[1] is None:
            kind = CUBIN
        elif image.code(PTX_TEXT)[1] is not None:
            return Choice(image.code(PTX_TEXT)[1])
        return Choice(None, image, kind, entry)


def ptx_images(rt: Any) -> PtxImages:
    """The process's ``PtxImages`` (one per runtime)."""
    images = rt.__dict__.get("ptx_images")
    if images is None:
        images = rt.__dict__["ptx_images"] = PtxImages(rt)
    return images


def select(rt: Any, mdef: Any, argtypes: tuple[Any, ...], arch: str) -> Choice:
    """``PtxImages.select`` for a kernel's method and argument types (types or their texts)."""
    return ptx_images(rt).select(mdef.key, tuple(map(str, argtypes)), arch)
