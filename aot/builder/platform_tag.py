"""A wheel's Linux platform tag worked out from its shared libraries (PEP 600 ``manylinux_X_Y_<arch>``).

    platform_tag("linux_x86_64", [("numkit/__aot__/numkit.cpu.so", deps)])
        → PlatformTag(tags=("manylinux_2_17_x86_64", "manylinux2014_x86_64"), why=None)
    (a library needing GLIBC_2.34)  → PlatformTag(tags=("manylinux_2_34_x86_64",), why=None)
    (a library needing libgomp.so.1) → PlatformTag(tags=("linux_x86_64",),
                                                  why="numkit/__aot__/x.so needs libgomp.so.1, which …")

A wheel may say ``manylinux_X_Y`` when every library in it needs nothing of the system beyond what the
manylinux policy guarantees on a glibc X.Y or newer: only the libraries of the policy's list (glibc's own,
the dynamic loader, and the few others every distribution has), and of them only symbol versions the
policy allows. The tag's glibc is the highest ``GLIBC_x.y`` any library requires, never lower than the
architecture's baseline (2.17: what manylinux2014 guarantees, and the oldest glibc aot's libraries are
tagged for). Libraries other than glibc's are held to the versions every manylinux glibc provides
(manylinux2014's libstdc++, libgcc_s, zlib): a requirement newer than those is not judged here and keeps the
plain ``linux_<arch>`` tag, as does anything outside the list, a musl libc (musllinux is not worked out
here) or a library of another architecture; ``why`` then says which library and what, in one line.
Platforms other than Linux keep their tag. This is a policy over ``aot/builder/elf.py``'s reading only.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from .elf import Dependencies

#: The oldest glibc a tag names per architecture (manylinux2014's), and the architectures tagged at all.
BASELINE_GLIBC: dict[str, tuple[int, int]] = {
    arch: (2, 17) for arch in ("x86_64", "i686", "aarch64", "armv7l", "ppc64", "ppc64le", "s390x")
}
#: PEP 600's legacy aliases still worth adding (``manylinux1`` and ``manylinux2010`` lie below every baseline).
LEGACY_ALIASES: dict[tuple[int, int], str] = {(2, 17): "manylinux2014"}

# glibc's own libraries and the dynamic loaders: their symbol versions are GLIBC_x.y (GLIBC_PRIVATE never).
_GLIBC_LIBRARIES = frozenset(
    {
        "libc.so.6",
        "libm.so.6",
        "libdl.so.2",
        "librt.so.1",
        "libpthread.so.0",
        "libanl.so.1",
        "libnsl.so.1",
        "libutil.so.1",
        "libresolv.so.2",
        "libmvec.so.1",
        "ld-linux-x86-64.so.2",
        "ld-linux.so.2",
        "ld-linux-aarch64.so.1",
        "ld-linux-armhf.so.3",
        "ld64.so.1",
        "ld64.so.2",
    }
)
# The other libraries of the manylinux policy's list (auditwheel's, PEP 599's and later): present on every
# manylinux system, with the symbol versions below at most.
_OTHER_LIBRARIES = frozenset(
    {
        "libgcc_s.so.1",
        "libstdc++.so.6",
        "libatomic.so.1",
        "libz.so.1",
        "libexpat.so.1",
        "libX11.so.6",
        "libXext.so.6",
        "libXrender.so.1",
        "libICE.so.6",
        "libSM.so.6",
        "libGL.so.1",
        "libgobject-2.0.so.0",
        "libgthread-2.0.so.0",
        "libglib-2.0.so.0",
    }
)
# The newest version of each non-glibc namespace that manylinux2014 (so every later policy) provides;
# a namespace missing here is never vouched for.
_OTHER_VERSIONS: dict[str, tuple[int, ...]] = {
    "GLIBCXX": (3, 4, 19),
    "CXXABI": (1, 3, 7),
    "GCC": (4, 8, 0),
    "ZLIB": (1, 2, 5, 2),
}
_OTHER_NAMES = frozenset({"CXXABI_TM_1"})  # (named versions every manylinux libstdc++ has)
# Libraries in the list only from a later glibc on, and version names that stand for a glibc.
_LIBRARY_SINCE: dict[str, tuple[int, int]] = {"libmvec.so.1": (2, 24)}
_GLIBC_NAMES: dict[str, tuple[int, int]] = {"GLIBC_ABI_DT_RELR": (2, 36)}


class PlatformTag(NamedTuple):
    """The platform tags of a wheel (more than one: a compressed tag set, newest spelling first) and, when
    the plain ``linux_<arch>`` tag was kept, the one-line reason."""

    tags: tuple[str, ...]
    why: str | None = None

    def __str__(self) -> str:
        return ".".join(self.tags)


def _version(text: str) -> tuple[int, ...] | None:
    parts = text.split(".")
    if not all(p.isdigit() for p in parts):
        return None
    return tuple(int(p) for p in parts)


def _glibc_needed(name: str, library: str, versions: tuple[str, ...]) -> tuple[tuple[int, int], str | None]:
    """The glibc that a library's requirements of one glibc file need, or why they cannot be vouched for."""
    need = _LIBRARY_SINCE.get(library, (0, 0))
    for version in versions:
        space, _, number = version.partition("_")
        found = _GLIBC_NAMES.get(version) or (_version(number) if space == "GLIBC" else None)
        if found is None:
            return need, f"{name} needs {version} of {library}, which no manylinux policy provides"
        major, minor = (*found, 0)[:2]  # (GLIBC_2.2.5 is glibc 2.2)
        need = max(need, (major, minor))
    return need, None


def _other_allowed(name: str, library: str, versions: tuple[str, ...]) -> str | None:
    """None when every version required of ``library`` (not glibc's) is one manylinux2014 provides, else why."""
    for version in versions:
        if version in _OTHER_NAMES:
            continue
        space, _, number = version.partition("_")
        newest = _OTHER_VERSIONS.get(space)
        found = _version(number)
        if newest is None or found is None:
            return f"{name} needs {version} of {library}, a version not vouched for on every manylinux system"
        if found > newest:
            allowed = f"{space}_{'.'.join(map(str, newest))}"
            return f"{name} needs {version} of {library}, newer than manylinux2014's ({allowed})"
    return None


def platform_tag(platform: str, libraries: Iterable[tuple[str, Dependencies]]) -> PlatformTag:
    """The platform tags of a wheel built on ``platform`` (``linux_x86_64``: ``sysconfig``'s, with ``-`` and
    ``.`` as ``_``) holding ``libraries`` (each its name in the wheel and its ``Dependencies``)."""
    if not platform.startswith("linux_"):
        return PlatformTag((platform,))
    arch = platform[len("linux_") :]
    plain = (platform,)
    glibc = BASELINE_GLIBC.get(arch)
    if glibc is None:
        return PlatformTag(plain, f"no manylinux baseline is known here for the architecture {arch!r}")
    for name, deps in libraries:
        if deps.machine != arch:
            return PlatformTag(plain, f"{name} is built for {deps.machine}, not {arch}")
        for library in (*deps.needed, *(f for f in deps.versions if f not in deps.needed)):
            if library.startswith(("libc.musl-", "ld-musl-")):
                return PlatformTag(plain, f"{name} needs the musl libc ({library}); musllinux tags are not worked out")
            if library in _GLIBC_LIBRARIES:
                need, why = _glibc_needed(name, library, deps.versions.get(library, ()))
                glibc = max(glibc, need)
            elif library in _OTHER_LIBRARIES:
                why = _other_allowed(name, library, deps.versions.get(library, ()))
            else:
                why = f"{name} needs {library}, which is not in the manylinux policy's list of system libraries"
            if why is not None:
                return PlatformTag(plain, why)
    tags = [f"manylinux_{glibc[0]}_{glibc[1]}_{arch}"]
    if glibc in LEGACY_ALIASES:
        tags.append(f"{LEGACY_ALIASES[glibc]}_{arch}")
    return PlatformTag(tuple(tags))
