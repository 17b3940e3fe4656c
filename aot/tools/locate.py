"""What a PATH argument of ``aot inspect``/``verify``/``clean`` stands for: image files, and the project.

    locate("fixtures/numkit")         → ([…/numkit/__aot__/numkit.cpu.aotimg], BuildConfig(…), [])
    locate("fixtures/numkit/numkit")  → ([…/numkit/__aot__/numkit.cpu.aotimg], None, [])
    select("fixtures/numkit").images[0].package   → "numkit"    (every image read and checked)
    locate("README.md")               → ([README.md], None, [])  (reading it says it is not an image)

PATH is an image file, an ``__aot__`` folder, a package folder or a project folder (one with a
``pyproject.toml``, whose ``[tool.aot]`` table says which images to expect); where no such file or folder
exists, a top-level package name stands for the folder it is installed in (``aot verify --import numkit``
checks the installed wheel; the name is looked up on ``sys.path``, nothing of the package is run).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..builder.config import BuildConfig, ConfigError, load_config
from ..world.owners import PTX
from .audited import AuditedImage, read_audited
from .errors import AuditError

IMAGE_SUFFIX = ".aotimg"


@dataclass
class Selection:
    """The images a PATH argument stands for, and the project around them when there is one."""

    given: str
    images: list[AuditedImage]
    config: BuildConfig | None = None
    missing: list[str] = field(default_factory=list)  # images the project's configuration expects

    def config_for(self, root: Path | None) -> BuildConfig | None:
        if self.config is not None and (root is None or self.config.project_dir == root):
            return self.config
        if root is not None and (root / "pyproject.toml").is_file():
            try:
                return load_config(root)
            except ConfigError:
                return None
        return None


def image_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*" + IMAGE_SUFFIX) if p.is_file())


def package_dir(project: Path, package: str) -> Path:
    return project.joinpath(*package.split("."))


def project_config(folder: Path) -> BuildConfig:
    """The configuration of the project at ``folder``; a bad one is an AuditError."""
    try:
        return load_config(folder)
    except ConfigError as err:
        raise AuditError(str(err)) from None


def locate(path: str | os.PathLike) -> tuple[list[Path], BuildConfig | None, list[str]]:
    """The image files PATH stands for (not read yet), the project configuration, and expected images that
    are missing. Raises AuditError for a path that is none of the four accepted kinds."""
    given = os.fspath(path)
    p = Path(given)
    if not p.exists():
        installed = installed_package(given)
        if installed is None:
            raise AuditError(f"{given}: no such file or folder, nor an installed package")
        p = installed
    if p.is_file() and p.name == "pyproject.toml":
        p = p.parent
    if p.is_file():
        return [p], None, []
    if not p.is_dir():
        raise AuditError(f"{given}: not a file or folder")
    if p.name == "__aot__":
        return image_files(p), None, []
    if (p / "pyproject.toml").is_file():
        from ..builder.driver import image_paths

        cfg = project_config(p)
        files, missing = [], []
        for package in cfg.packages:
            pkg_dir = package_dir(cfg.project_dir, package)
            if not pkg_dir.is_dir():
                raise AuditError(
                    f"{cfg.pyproject}: [tool.aot] packages: package {package!r} is not a folder "
                    f"of the project ({pkg_dir} does not exist)"
                )
            for target in cfg.targets:
                if target == PTX:  # one image per configured architecture
                    wanted = [pkg_dir / "__aot__" / f"{package}.ptx-{arch}{IMAGE_SUFFIX}" for arch in cfg.ptx.arch]
                else:
                    wanted = [image_paths(pkg_dir, package, target)[0]]
                for image in wanted:
                    if image.is_file():
                        files.append(image)
                    else:
                        missing.append(f"{package}: no {target} image ({image} does not exist)")
        return files, cfg, missing
    if (p / "__aot__").is_dir() or (p / "__init__.py").is_file():
        return image_files(p / "__aot__"), None, []
    raise AuditError(
        f"{given}: not an aot image, an __aot__ folder, a package folder or a project folder "
        f"(a folder with a pyproject.toml)"
    )


def installed_package(name: str) -> Path | None:
    """The folder of the top-level package ``name`` as ``import name`` would find it, or None (not a name, not
    found, or a plain module). Only finders run: none of the package's code."""
    if not name.isidentifier():
        return None
    from importlib.util import find_spec

    try:
        spec = find_spec(name)
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(locations[0]) if locations else None


def aot_folders(given: Path) -> set[Path]:
    """The __aot__ folders a folder argument stands for (all of the project's packages for a project)."""
    if given.is_file():
        given = given.parent
    if given.name == "__aot__":
        return {given}
    if (given / "pyproject.toml").is_file():
        cfg = project_config(given)
        return {package_dir(cfg.project_dir, p) / "__aot__" for p in cfg.packages}
    return {given / "__aot__"}


def select(path: str | os.PathLike) -> Selection:
    """Read every image PATH stands for. No image at all is an AuditError (nothing to audit)."""
    files, cfg, missing = locate(path)
    if not files:
        raise AuditError(f"{os.fspath(path)}: no aot images (build them with 'aot build')")
    return Selection(os.fspath(path), [read_audited(f) for f in files], cfg, missing)
