"""Wheels that carry a project's images, and sdists that carry none (for ``aot.build_meta``).

    numkit-0.1.0-py3-none-any.whl  (the inner backend's: sources only)
      → add_images(wheel, {"numkit": Path("…/numkit/__aot__")})
    numkit-0.1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
        (+ numkit/__aot__/numkit.cpu.aotimg, numkit.cpu.so; WHEEL: Root-Is-Purelib false, one Tag line per
         tag of the set; RECORD: every file hashed; METADATA: Requires-Dist: aot==<this version>)

Only what a first call reads goes into the wheel (the image, its library, PTX and cubins): never the build's
lock or its object-file cache. The images' own paths are relative to the package, so the wheel installs
anywhere. The pin on ``aot`` is exact because an image is only valid for the compiler version that wrote it.
On Linux the platform tag is the manylinux one that every ELF file in the wheel allows
(``aot/builder/platform_tag.py``, ``[tool.aot] wheel-platform = "auto"``), else ``linux_<arch>`` with one
line on stderr saying why; ``wheel-platform = "linux"`` keeps ``linux_<arch>`` without looking.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import sys
import sysconfig
import tarfile
import zipfile
from collections.abc import Iterable
from pathlib import Path

# The files of an ``__aot__`` folder that a first call reads; everything else there is the build's own.
SHIPPED_SUFFIXES = (".aotimg", ".so", ".dylib", ".dll", ".ptx", ".cubin")
IMAGE_FOLDER = "__aot__"
_EPOCH_1980 = (1980, 1, 1, 0, 0, 0)  # a zip's earliest date: image files get it, so a rebuild is identical
_AOT_REQUIREMENT = re.compile(r"^Requires-Dist:\s*aot\s*(\[[^\]]*\])?\s*([^;]*)$", re.IGNORECASE)


class PackagingError(Exception):
    """A wheel or sdist that cannot be made as asked (the message names the file and what to do)."""


def interpreter_tag() -> str:
    """``cpXY-cpXY`` (``cpXY-cpXYt`` free-threaded): images are specific to the interpreter's version and ABI."""
    if sys.implementation.name != "cpython":
        raise PackagingError(f"aot images need CPython, not {sys.implementation.name}")
    python = f"cp{sys.version_info.major}{sys.version_info.minor}"
    return f"{python}-{python}{'t' if sysconfig.get_config_var('Py_GIL_DISABLED') else ''}"


def build_platform() -> str:
    """This machine's plain platform tag (``linux_x86_64``, ``macosx_11_0_arm64``, ``win_amd64``)."""
    return re.sub(r"[^\w]", "_", sysconfig.get_platform())


def wheel_tag(files: Iterable[tuple[str, bytes]] = (), wheel_platform: str = "auto") -> tuple[str, str | None]:
    """``(cpXY-cpXY-<platform tags>, why)`` for a wheel holding ``files`` (name in the wheel, bytes): with
    ``wheel_platform`` ``"auto"`` on Linux, the manylinux tags its ELF files allow, or ``linux_<arch>`` and
    why (see the module docstring); otherwise the plain platform and ``None``."""
    platform = build_platform()
    if wheel_platform == "linux" or not platform.startswith("linux_"):
        return f"{interpreter_tag()}-{platform}", None
    from .elf import ElfError, dependencies_of
    from .platform_tag import platform_tag

    libraries = []
    for name, data in files:
        if data[:4] == b"\x7fELF":
            try:
                libraries.append((name, dependencies_of(data)))
            except ElfError as e:
                raise PackagingError(
                    f"{name}: {e}: its platform tag cannot be worked out (a damaged library? rebuild it, or set "
                    f'[tool.aot] wheel-platform = "linux" to tag the wheel {platform} without reading it)'
                ) from None
    tag = platform_tag(platform, libraries)
    return f"{interpreter_tag()}-{tag}", tag.why


def expand_tag(tag: str) -> list[str]:
    """Every tag of a compressed tag set (``cp311-cp311-a.b`` → ``cp311-cp311-a``, ``cp311-cp311-b``): the
    ``Tag:`` lines of a ``WHEEL`` file."""
    python, abi, platform = tag.split("-")
    return [f"{p}-{a}-{pl}" for p in python.split(".") for a in abi.split(".") for pl in platform.split(".")]


def shipped_files(folder: Path) -> list[Path]:
    """The files of one ``__aot__`` folder that go into a wheel, sorted."""
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in SHIPPED_SUFFIXES)


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
    return f"sha256={digest}"


def _wheel_file(text: str, tag: str) -> str:
    """The ``WHEEL`` file with the tags of ``tag`` and ``Root-Is-Purelib: false`` (native code inside)."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith(("Tag:", "Root-Is-Purelib:"))]
    lines.insert(2 if len(lines) >= 2 else len(lines), "Root-Is-Purelib: false")
    lines.extend(f"Tag: {one}" for one in expand_tag(tag))
    return "\n".join(lines) + "\n"


def pin_runtime(metadata: str, version: str) -> str:
    """``METADATA`` whose unconditional requirement on ``aot`` is exactly ``version`` (added when missing),
    keeping the extras it names. Requirements under a marker (an extra, a platform) stay as written."""
    head, sep, body = metadata.partition("\n\n")
    lines = head.splitlines()
    extras = ""
    kept = []
    for line in lines:
        found = _AOT_REQUIREMENT.match(line)
        if found is not None:
            extras = found.group(1) or ""
            continue
        kept.append(line)
    where = max((i + 1 for i, ln in enumerate(kept) if ln.startswith("Requires-Dist:")), default=len(kept))
    kept.insert(where, f"Requires-Dist: aot{extras}=={version}")
    return "\n".join(kept) + ("\n\n" + body if body else "\n")


def add_images(wheel: Path, folders: dict[str, Path], version: str, wheel_platform: str = "auto") -> Path:
    """Rewrite ``wheel`` (the inner backend's) with ``folders`` (package → its ``__aot__`` folder) inside,
    the platform tag (``wheel_tag``) and the pinned runtime; returns the new wheel's path (the old file is
    removed)."""
    name_parts = wheel.name[: -len(".whl")].split("-")
    if len(name_parts) not in (5, 6):
        raise PackagingError(f"{wheel.name}: not a wheel file name")
    with zipfile.ZipFile(wheel) as src:
        infos = src.infolist()
        names = {i.filename for i in infos}
        dist_infos = {n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info")}
        if len(dist_infos) != 1:
            raise PackagingError(f"{wheel.name}: expected one .dist-info folder, found {sorted(dist_infos)}")
        dist_info = dist_infos.pop()
        record_name = f"{dist_info}/RECORD"
        entries: list[tuple[zipfile.ZipInfo, bytes]] = []
        for info in infos:
            path = info.filename
            if path == record_name or f"/{IMAGE_FOLDER}/" in f"/{path}":
                continue  # (the record is written anew; images only as this build wrote them)
            data = src.read(info)
            if path == f"{dist_info}/METADATA":
                data = pin_runtime(data.decode("utf-8"), version).encode("utf-8")
            entries.append((info, data))
    for package, folder in sorted(folders.items()):
        prefix = package.replace(".", "/")
        if f"{prefix}/__init__.py" not in names:
            raise PackagingError(
                f"{wheel.name}: package {package!r} (from [tool.aot] packages) is not in the wheel the inner "
                f"backend built; make the backend include it"
            )
        files = shipped_files(folder)
        if not files:
            raise PackagingError(f"{folder}: no image to put in the wheel (did `aot build` write one?)")
        for file in files:
            info = zipfile.ZipInfo(f"{prefix}/{IMAGE_FOLDER}/{file.name}", date_time=_EPOCH_1980)
            info.external_attr = (0o755 if os.access(file, os.X_OK) else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            entries.append((info, file.read_bytes()))
    # The tag is decided by every native file of the wheel, the inner backend's own extensions included.
    tag, why = wheel_tag(((info.filename, data) for info, data in entries), wheel_platform)
    out = wheel.with_name("-".join(name_parts[:-3]) + f"-{tag}.whl")
    if why is not None:
        sys.stderr.write(f"aot: {out.name}: not tagged manylinux: {why}\n")
    for i, (info, data) in enumerate(entries):
        if info.filename == f"{dist_info}/WHEEL":
            entries[i] = (info, _wheel_file(data.decode("utf-8"), tag).encode("utf-8"))
    # Within the wheel, the .dist-info folder comes last (as the wheel spec recommends), RECORD at its end.
    entries.sort(key=lambda e: (e[0].filename.startswith(f"{dist_info}/"), e[0].filename))
    record = io.StringIO()
    tmp = out.with_name(out.name + ".part")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        for info, data in entries:
            dst.writestr(info, data)
            record.write(f"{info.filename},{_record_hash(data)},{len(data)}\n")
        record.write(f"{record_name},,\n")
        record_info = zipfile.ZipInfo(record_name, date_time=_EPOCH_1980)
        record_info.external_attr = 0o644 << 16
        dst.writestr(record_info, record.getvalue(), zipfile.ZIP_DEFLATED)
    os.replace(tmp, out)
    if out != wheel:
        wheel.unlink()
    return out


def _native(name: str) -> bool:
    return IMAGE_FOLDER in name.split("/") or name.endswith(SHIPPED_SUFFIXES[1:])


def strip_native(sdist: Path) -> list[str]:
    """Remove every image and native file from ``sdist`` (a ``.tar.gz``) in place; returns what was removed.
    An sdist is built from source where it is installed: it carries no native code."""
    with tarfile.open(sdist, "r:gz") as src:
        members = src.getmembers()
        removed = [m.name for m in members if _native(m.name)]
        if not removed:
            return []
        kept = [(m, src.extractfile(m).read() if m.isfile() else None) for m in members if not _native(m.name)]  # type: ignore[union-attr]
    tmp = sdist.with_name(sdist.name + ".part")
    with tarfile.open(tmp, "w:gz", format=tarfile.PAX_FORMAT) as dst:
        for member, data in kept:
            dst.addfile(member, io.BytesIO(data) if data is not None else None)
    os.replace(tmp, sdist)
    return removed
