"""``aot build``: walk a project's packages, infer every specialization, write images and shared libraries.

    result = build_project("fixtures/numkit", jobs=2)
    result.built, result.reused, result.failed, result.images
        → 12, 54, 0, ['fixtures/numkit/numkit/__aot__/numkit.cpu.aotimg']

The entry point and the steps every owner shares: import the packages, then run the build of each owner
the targets name (``OWNER_BUILDS``: ``cpu.py`` ``CpuBuild``, ``ptx.py`` ``PtxBuild``, each an
``owner.py`` ``OwnerBuild``) over every package, one owner after the other, in that order.
Outputs are written atomically under a lock, so concurrent builds never leave a torn image, and a build
killed in the middle of a write leaves temporary files that the next build removes.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib
import os
import pkgutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from serializer.files import remove_stale_temporaries

from ..runtime import runtime
from ..world.owners import CPU, PTX
from .config import BuildConfig, check_cpu_name, load_config
from .cpu import OBJECT_METHODS as OBJECT_METHODS
from .cpu import CpuBuild
from .owner import Build, OwnerBuild, Package
from .owner import BuildResult as BuildResult
from .owner import image_paths as image_paths
from .ptx import PtxBuild

OWNER_BUILDS: dict[str, type[OwnerBuild[Any]]] = {CPU: CpuBuild, PTX: PtxBuild}
"""Each owner's build, in the order they run (whatever order the targets come in)."""


class BuildError(Exception):
    """The project's own code failed while being imported for the build (one located line, no traceback)."""


def _import_failure(err: BaseException, project: str) -> BuildError:
    """``file:line: error: SyntaxError: …`` naming the user's code, not the build's; for ``sys.exit(3)``,
    ``file:line: error: importing pkg.mod called sys.exit(3)``."""
    import traceback

    if isinstance(err, SyntaxError):
        where = f"{err.filename}:{err.lineno}" + (f":{err.offset}" if err.offset else "")
        return BuildError(f"{where}: error: SyntaxError: {err.msg}")
    frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename.startswith(project)]
    where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else project
    if isinstance(err, SystemExit):
        module = _module_name(frames[-1].filename, project) if frames else "the package"
        code = "" if err.code is None else repr(err.code)
        return BuildError(f"{where}: error: importing {module} called sys.exit({code})")
    return BuildError(f"{where}: error: importing the package raised {type(err).__name__}: {err}")


def _module_name(filename: str, project: str) -> str:
    """``<project>/pkg/mod.py`` → ``pkg.mod`` (``pkg/__init__.py`` → ``pkg``)."""
    parts = list(Path(os.path.relpath(filename, project)).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


@contextmanager
def locked(folder: Path) -> Iterator[None]:
    """The package's output folder, made if need be, held under its lock by this build alone. The temporary
    files that builds killed in the middle of a write left there go first (no one else writes there now)."""
    if folder.exists() and not folder.is_dir():
        raise BuildError(
            f"{folder}: error: the images go in this folder, and it is not a folder but a file; move it away"
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle = open(folder / ".lock", "w")
    except OSError as err:
        raise BuildError(f"{folder}: error: cannot write the images there ({err.strerror or err})") from None
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            remove_stale_temporaries(folder)
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def import_package(name: str, skip: str | None) -> list[str]:
    """Import a package and all its submodules (so every method is defined); the module names."""
    package = importlib.import_module(name)
    names = [name]
    for info in pkgutil.walk_packages(getattr(package, "__path__", []), name + "."):
        if info.name == skip or info.name.split(".")[-1].startswith("__"):
            continue
        importlib.import_module(info.name)
        names.append(info.name)
    return names


def build_project(
    project_dir: str | os.PathLike,
    jobs: int = 1,
    strict: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
    targets: tuple[str, ...] | None = None,
) -> BuildResult:
    """Build the images of a project (see the module docstring). Raises ``ConfigError`` for bad config."""
    started = time.perf_counter()
    cfg = load_config(project_dir)
    check_cpu_name(cfg)
    project = str(Path(project_dir).resolve())
    if project not in sys.path:
        sys.path.insert(0, project)
    rt = runtime()
    rt.building = True
    build = Build(cfg, jobs, progress)
    targets = tuple(targets or cfg.targets)
    owners = [owner_build(build) for owner, owner_build in OWNER_BUILDS.items() if owner in targets]
    with contextlib.ExitStack() as held:
        for owner in owners:
            held.enter_context(owner.workers())  # (warming up while the packages are imported)
        _build(owners, cfg, project, strict)
    build.result.seconds = time.perf_counter() - started
    return build.result


def _build(owners: list[OwnerBuild[Any]], cfg: BuildConfig, project: str, strict: bool) -> None:
    """Import the packages, then build each owner's images of every package (``build_project``)."""
    modules: dict[str, list[str]] = {}
    from .config import ConfigError

    for package in cfg.packages + ((cfg.workload,) if cfg.workload else ()):
        try:
            if package == cfg.workload:
                importlib.import_module(package)
            else:
                modules[package] = import_package(package, cfg.workload)
        except ModuleNotFoundError as err:
            if err.name != package.split(".")[0] and err.name != package:
                raise _import_failure(err, project) from None
            key = "[tool.aot] workload" if package == cfg.workload else "[tool.aot] packages"
            raise ConfigError(
                cfg.pyproject, f"{package!r} cannot be imported from {project} ({err})", key=key
            ) from None
        except (Exception, SystemExit) as err:  # the user's code failed (or called sys.exit) while imported
            raise _import_failure(err, project) from None
    packages = [Package.imported(name, modules[name]) for name in cfg.packages]
    for owner in owners:
        for pkg in packages:
            with locked(pkg.folder):
                owner.build_package(pkg, strict)
