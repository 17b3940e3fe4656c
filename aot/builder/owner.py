"""What the builds of every owner share (``aot build``): the build's state, the code entries an image stores,
and ``OwnerBuild``, the one interface each owner's build implements (``cpu.py`` ``CpuBuild``, ``ptx.py``
``PtxBuild``); ``driver.py`` picks the builds of the targets and runs each over the packages.

    build = Build(cfg, jobs, progress)               # one per ``aot build``: its result, the encoded IRs
    CpuBuild(build).build_package(package, strict)   # compile, then write each image (none once failed, strict)
    build.contents(instances, root, world, PTX)      # the entries of an image of that owner
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar, Generic, TypeVar, cast

from ..image.contents import ImageContents, entry_state
from ..image.entries import CodeEntry, edge_to_record
from ..infer import InferredInstance
from ..runtime import runtime
from ..world.edges import EdgeKind
from ..world.fingerprint import fingerprint_of
from ..world.instances import StoredKey, stored_key
from ..world.methods import MAX_WORLD
from ..world.owners import CPU
from ..world.validate import CurrentWorld
from .config import BuildConfig


def image_paths(package_dir: Path, package: str, owner: str = CPU) -> tuple[Path, Path]:
    folder = package_dir / "__aot__"
    return folder / f"{package}.{owner}.aotimg", folder / f"{package}.{owner}.so"


@dataclass
class BuildResult:
    built: int = 0
    reused: int = 0
    failed: int = 0
    seconds: float = 0.0
    images: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    objects_built: int = 0
    objects_reused: int = 0
    objects_early: int = 0  # of those built, how many were sent to the workers while inference went on

    def summary(self) -> dict[str, Any]:
        return {
            "built": self.built,
            "reused": self.reused,
            "failed": self.failed,
            "seconds": round(self.seconds, 3),
            "images": self.images,
        }


@dataclass(frozen=True)
class Package:
    """A package being built: its name, its folder (the images go in its ``__aot__``) and its modules, all
    imported (the workload's excepted)."""

    name: str
    dir: Path
    modules: list[ModuleType]

    @classmethod
    def imported(cls, name: str, module_names: list[str]) -> Package:
        module = sys.modules[name]
        package_dir = Path(module.__file__).resolve().parent  # type: ignore[arg-type]  # a package: it has a file
        return cls(name, package_dir, [sys.modules[m] for m in module_names])

    @property
    def root(self) -> str:
        """The folder the package is in (IR spans are stored relative to it)."""
        return str(self.dir.parent)

    @property
    def folder(self) -> Path:
        return self.dir / "__aot__"


class Build:
    """One ``aot build``, whatever its owners: the config, the worker count, the progress callback, the result
    every owner's build adds to, and each instance's typed IR as images store it, encoded once."""

    def __init__(self, cfg: BuildConfig, jobs: int, progress: Callable[[str, int, int], None] | None):
        self.cfg = cfg
        self.jobs = jobs
        self.progress = progress or (lambda what, done, total: None)
        self.rt = runtime()
        self.result = BuildResult()
        # each instance's typed IR as the image stores it, encoded once (early jobs and the image both need it)
        self._encoded: dict[tuple[str, tuple, str], tuple[InferredInstance, bytes]] = {}

    def contents(
        self,
        instances: dict,
        root: str,
        world: CurrentWorld,
        owner: str = CPU,
        symbols: dict[tuple[str, tuple], str] | None = None,
    ) -> ImageContents:
        """An image's contents for ``owner``: a code entry per instance, and the definitions of the methods
        they are and call. An entry's symbol is its instance's in ``symbols``, or the owner's own name for it."""
        from ..codegen.types import symbol_name

        symbols = symbols or {}
        contents = ImageContents()
        # (a fresh ImageContents holds dicts; image.py types them as read-only mappings, as read images have)
        definitions = cast("dict[str, bytes]", contents.definitions)
        code = cast("dict[StoredKey, CodeEntry]", contents.code)
        for (key, argtypes), inst in sorted(instances.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
            for k in [key] + [e.target for e in inst.edges if e.kind == EdgeKind.CALL]:
                if k not in contents.fingerprints:
                    found = world.definition(k)
                    definitions[k] = found or b""
                    contents.fingerprints[k] = "" if found is None else fingerprint_of(found)
            mdef = self.rt.table.methods.get(key)
            stored = stored_key((key, argtypes))
            symbol = symbols.get((key, argtypes), symbol_name(key, argtypes, owner))
            code[stored] = CodeEntry(
                0,
                key,
                stored[1],
                str(inst.return_type),
                owner,
                getattr(inst, "stored_ir", None) or self._encoded_ir(key, argtypes, inst, root),
                tuple(tuple(edge_to_record(e)) for e in inst.edges),
                symbol,
                1,
                MAX_WORLD,
                entry_state(inst.edges),
                mdef.options.boundscheck if mdef is not None else True,
                0,
            )
        return contents

    def _encoded_ir(self, key: str, argtypes: tuple, inst: InferredInstance, root: str) -> bytes:
        from serializer.irformat import encode_function

        known = self._encoded.get((key, argtypes, root))
        if known is None or known[0] is not inst:  # (not this very instance: another owner's, or inferred anew)
            known = self._encoded[(key, argtypes, root)] = (inst, encode_function(inst.function, root))
        return known[1]


Made = TypeVar("Made")


class OwnerBuild(Generic[Made]):
    """The build of one owner's images. ``compile`` makes, one after the other, what each image of a package
    is made of (``Made``: inferred and compiled, the previous image's valid entries and objects reused where
    the owner keeps them); ``write`` links it and writes it out. With ``strict``, nothing more is written once
    a method failed (in this package or an earlier one)."""

    owner: ClassVar[str]

    def __init__(self, build: Build):
        self.build = build
        self.cfg = build.cfg
        self.rt = build.rt
        self.result = build.result

    def workers(self) -> AbstractContextManager[None]:
        """What the build holds while it runs (``CpuBuild``: the worker processes); nothing by default."""
        return contextlib.nullcontext()

    def build_package(self, package: Package, strict: bool) -> None:
        for made in self.compile(package):
            if strict and self.result.failed:
                return
            self.write(package, made)

    def compile(self, package: Package) -> Iterator[Made]:
        raise NotImplementedError

    def write(self, package: Package, made: Made) -> None:
        raise NotImplementedError
