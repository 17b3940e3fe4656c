"""The PEP 517 build backend of packages built with aot: wheels carry their images.

    [build-system]
    requires = ["aot[compiler]", "setuptools>=61"]
    build-backend = "aot.build_meta"

    [tool.aot]
    backend = "setuptools.build_meta"     # the backend that builds the wheel's Python files (the default)

    $ pip wheel .        → numkit-0.1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
                           with numkit/__aot__/ inside

``build_wheel`` runs ``aot build --strict`` on the project, has the inner backend build its wheel, then puts
each package's image and library in it with the interpreter's tag, the platform's (on Linux the manylinux
tag its libraries allow, ``[tool.aot] wheel-platform``) and an exact requirement on the ``aot`` runtime
(``aot.builder.wheel``). ``build_sdist`` is the inner backend's, without any native file: a
wheel built from that sdist builds its images where it is built. ``build_editable`` builds the images in
place, then hands over. Every other hook is the inner backend's, and the build requirements add the compiler.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = [
    "build_editable",
    "build_sdist",
    "build_wheel",
    "get_requires_for_build_editable",
    "get_requires_for_build_sdist",
    "get_requires_for_build_wheel",
]

_BUILD = "import sys, cli; sys.argv[0] = 'aot'; cli.main()"


def _version() -> str:
    from . import __version__

    return __version__


def compiler_requirement() -> str:
    """What a build needs besides the inner backend's requirements: this very aot, with its compiler."""
    return f"aot[compiler]=={_version()}"


def _inner() -> Any:
    """The inner backend's module (or object, for ``module:object``), named by ``[tool.aot] backend``."""
    from .builder.config import load_config

    name = load_config(Path.cwd()).backend
    module_name, _, attr = name.partition(":")
    backend: Any = importlib.import_module(module_name)
    for part in filter(None, attr.split(".")):
        backend = getattr(backend, part)
    return backend


def _build_images() -> dict[str, Path]:
    """``aot build --strict`` on the project (the current folder, as PEP 517 says); package → ``__aot__``."""
    from .builder.config import load_config
    from .builder.wheel import PackagingError

    project = Path.cwd()
    done = subprocess.run(
        [sys.executable, "-c", _BUILD, "build", str(project), "--strict", "--json"],
        cwd=project,
        capture_output=True,
        text=True,
    )
    sys.stderr.write(done.stderr)
    if done.returncode != 0:
        raise PackagingError(f"aot build failed (exit {done.returncode}); nothing was packaged (see above)")
    images = [Path(p) for p in json.loads(done.stdout.strip().splitlines()[-1])["images"]]
    folders: dict[str, Path] = {}
    for package in load_config(project).packages:
        tail = (*package.split("."), "__aot__")
        found = [p.parent for p in images if p.parent.parts[-len(tail) :] == tail]
        if not found:
            raise PackagingError(f"aot build wrote no image for package {package!r}")
        folders[package] = found[0]
    return folders


def _requires(hook: str, config_settings: dict[str, Any] | None) -> list[str]:
    inner = _inner()
    get = getattr(inner, hook, None)
    return list(get(config_settings)) if get is not None else []


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    return [*_requires("get_requires_for_build_wheel", config_settings), compiler_requirement()]


def get_requires_for_build_editable(config_settings: dict[str, Any] | None = None) -> list[str]:
    return [*_requires("get_requires_for_build_editable", config_settings), compiler_requirement()]


def get_requires_for_build_sdist(config_settings: dict[str, Any] | None = None) -> list[str]:
    return _requires("get_requires_for_build_sdist", config_settings)


def build_wheel(
    wheel_directory: str, config_settings: dict[str, Any] | None = None, metadata_directory: str | None = None
) -> str:
    from .builder.config import load_config
    from .builder.wheel import add_images

    folders = _build_images()
    inner = _inner()
    name = inner.build_wheel(wheel_directory, config_settings, metadata_directory)
    platform = load_config(Path.cwd()).wheel_platform
    return add_images(Path(wheel_directory) / name, folders, _version(), platform).name


def build_sdist(sdist_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    from .builder.wheel import strip_native

    name = _inner().build_sdist(sdist_directory, config_settings)
    strip_native(Path(sdist_directory) / name)
    return name


def build_editable(
    wheel_directory: str, config_settings: dict[str, Any] | None = None, metadata_directory: str | None = None
) -> str:
    """The images built in place (an editable install imports the package from here), then the inner
    backend's editable wheel as it is: it holds no native code."""
    inner = _inner()
    if not hasattr(inner, "build_editable"):
        raise RuntimeError(f"the inner backend {inner.__name__} cannot build editable wheels")
    _build_images()
    return inner.build_editable(wheel_directory, config_settings, metadata_directory)
