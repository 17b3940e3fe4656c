"""The ``[tool.aot]`` table of a project's ``pyproject.toml`` as frozen, validated values.

    # /p/pyproject.toml
    [project]
    name = "num-kit"
    [tool.aot]
    targets = ["cpu", "ptx"]
    [tool.aot.cpu]
    opt = 2

    load_config("/p")  ->  BuildConfig(project_dir=Path("/p"), packages=("num_kit",),
                                       targets=("cpu", "ptx"), workload=None,
                                       cpu=CpuConfig(cpu="generic", opt=2),
                                       ptx=PtxConfig(arch=("sm_80", "sm_90")))
    targets = ["gpu"]  ->  ConfigError: /p/pyproject.toml: [tool.aot] targets: unknown target 'gpu'
                                        (expected 'cpu' or 'ptx')

Every key is checked for its type and value, unknown keys are errors (a typo must not
silently fall back to a default), and every error names the file and the key.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..world.owners import TARGETS

__all__ = [
    "DEFAULT_ARCH",
    "KNOWN_TARGETS",
    "WHEEL_PLATFORMS",
    "BuildConfig",
    "ConfigError",
    "CpuConfig",
    "PtxConfig",
    "check_cpu_name",
    "load_config",
]

#: In canonical order; a config's targets are kept in this order whatever the file says.
KNOWN_TARGETS: tuple[str, ...] = TARGETS
DEFAULT_ARCH: tuple[str, ...] = ("sm_80", "sm_90")

_ARCH = re.compile(r"sm_\d+[af]?\Z")
_CPU_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*\Z")
DEFAULT_BACKEND = "setuptools.build_meta"
#: ``[tool.aot] wheel-platform``: "auto" tags Linux wheels manylinux where their libraries allow
#: (``aot/builder/platform_tag.py``); "linux" keeps the plain ``linux_<arch>`` tag.
WHEEL_PLATFORMS: tuple[str, ...] = ("auto", "linux")
_BACKEND_NAME = re.compile(r"[A-Za-z_][\w.]*(:[A-Za-z_][\w.]*)?\Z")  # module or module:object (PEP 517)
_KEY_VERSION = "aot.build.config/1"  # bump when the meaning of a field changes


class ConfigError(Exception):
    """A missing or invalid setting; the message names the file and, when there is one, the key.

    ``key`` is written as in the file's terms, e.g. ``"[tool.aot.cpu] opt"``.
    """

    def __init__(self, path: str | Path, why: str, key: str | None = None) -> None:
        super().__init__(str(path), why, key)
        self.path = str(path)
        self.why = why
        self.key = key

    def __str__(self) -> str:
        if self.key:
            return f"{self.path}: {self.key}: {self.why}"
        return f"{self.path}: {self.why}"


def _digest(content: dict[str, Any]) -> str:
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


@dataclass(frozen=True)
class CpuConfig:
    """``[tool.aot.cpu]``: the LLVM cpu to compile for and the optimization level.

    ``"native"`` is resolved to the build machine's cpu by the CPU target, not here.
    """

    cpu: str = "generic"
    opt: int = 3
    # ``variants``: one library per CPU level in one image (``aot.targets.cpu.CPU_LEVELS``); empty: ``cpu``
    variants: tuple[str, ...] = ()

    def content(self) -> dict[str, Any]:
        out: dict[str, Any] = {"cpu": self.cpu, "opt": self.opt}
        if self.variants:
            out["variants"] = list(self.variants)
        return out

    def cache_key(self) -> str:
        return _digest({"v": _KEY_VERSION, "kind": "cpu", **self.content()})


@dataclass(frozen=True)
class PtxConfig:
    """``[tool.aot.ptx]``: the GPU architectures to emit cubins for."""

    arch: tuple[str, ...] = DEFAULT_ARCH

    def content(self) -> dict[str, Any]:
        return {"arch": list(self.arch)}

    def cache_key(self) -> str:
        return _digest({"v": _KEY_VERSION, "kind": "ptx", **self.content()})


@dataclass(frozen=True)
class BuildConfig:
    """Everything ``aot build`` takes from ``pyproject.toml``."""

    project_dir: Path
    packages: tuple[str, ...]
    targets: tuple[str, ...] = ("cpu",)
    workload: str | None = None
    cpu: CpuConfig = field(default_factory=CpuConfig)
    ptx: PtxConfig = field(default_factory=PtxConfig)
    # The PEP 517 backend ``aot.build_meta`` hands the Python files to (no part of the images' content).
    backend: str = DEFAULT_BACKEND
    # How ``aot.build_meta`` tags a wheel's platform (``WHEEL_PLATFORMS``; no part of the images' content).
    wheel_platform: str = "auto"

    @property
    def pyproject(self) -> Path:
        return self.project_dir / "pyproject.toml"

    def content(self) -> dict[str, Any]:
        """The canonical content; the project's location is left out so a moved project keeps its key."""
        return {
            "packages": list(self.packages),
            "targets": list(self.targets),
            "workload": self.workload,
            "cpu": self.cpu.content(),
            "ptx": self.ptx.content(),
        }

    def cache_key(self) -> str:
        return _digest({"v": _KEY_VERSION, "kind": "build", **self.content()})


# --------------------------------------------------------------------------- loading


def _toml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "table"
    return "date/time"


def _found(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return _toml_type(value)
    return f"{_toml_type(value)} {value!r}" if not isinstance(value, bool) else f"boolean {str(value).lower()}"


class _Table:
    """One TOML table being validated: every read is checked, every key must be read."""

    def __init__(self, path: Path, name: str, data: Any, allowed: tuple[str, ...]) -> None:
        self.path, self.name, self.allowed = path, name, allowed
        if not isinstance(data, dict):
            raise ConfigError(path, f"must be a table, found {_found(data)}", f"[{name}]")
        self.data = data
        for key in data:
            if key not in allowed:
                close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.5)
                hint = f"did you mean {close[0]!r}?" if close else f"expected one of: {', '.join(allowed)}"
                raise ConfigError(path, f"unknown key ({hint})", self.key(key))

    def key(self, key: str) -> str:
        return f"[{self.name}] {key}"

    def error(self, key: str, why: str) -> ConfigError:
        return ConfigError(self.path, why, self.key(key))

    def string_list(self, key: str, what: str, check: Any) -> tuple[str, ...] | None:
        """A non-empty array of distinct strings, each passed to ``check`` (returns an error text or None)."""
        if key not in self.data:
            return None
        value = self.data[key]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(key, f"must be an array of strings, found {_found(value)}")
        if not value:
            raise self.error(key, f"must name at least one {what}")
        seen: set[str] = set()
        for v in value:
            why = check(v)
            if why:
                raise self.error(key, why)
            if v in seen:
                raise self.error(key, f"{what} {v!r} is listed twice")
            seen.add(v)
        return tuple(value)


def _check_module_name(name: str) -> str | None:
    if all(part.isidentifier() for part in name.split(".")):
        return None
    return f"{name!r} is not an importable module name (expected names such as 'numkit' or 'numkit.sub')"


def _check_target(name: str) -> str | None:
    if name in KNOWN_TARGETS:
        return None
    return f"unknown target {name!r} (expected 'cpu' or 'ptx')"


def _check_arch(name: str) -> str | None:
    if _ARCH.match(name):
        return None
    return f"invalid GPU architecture {name!r} (expected names such as 'sm_80' or 'sm_90')"


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(path, "not found (aot needs a project folder with a pyproject.toml)") from None
    except OSError as e:
        raise ConfigError(path, f"cannot read ({e.strerror or e})") from None
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10: tomli comes with aot[compiler]; the runtime alone reads no TOML
        try:
            import tomli as tomllib
        except ImportError:
            raise ConfigError(path, 'needs tomli on Python 3.10: pip install "aot[compiler]"') from None
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ConfigError(path, f"invalid TOML: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(path, f"invalid TOML: {e}") from None


def _default_packages(path: Path, doc: dict[str, Any]) -> tuple[str, ...]:
    key = "[tool.aot] packages"
    project = doc.get("project")
    if project is None or (isinstance(project, dict) and "name" not in project):
        raise ConfigError(path, "not set, and there is no [project] name to default to", key)
    if not isinstance(project, dict):
        raise ConfigError(path, f"must be a table, found {_found(project)}", "[project]")
    name = project["name"]
    if not isinstance(name, str):
        raise ConfigError(path, f"must be a string, found {_found(name)}", "[project] name")
    package = name.replace("-", "_")
    if not package.isidentifier():
        raise ConfigError(
            path, f"not set, and the project name {name!r} is not a package name; set packages = [...]", key
        )
    return (package,)


def load_config(project_dir: str | os.PathLike[str]) -> BuildConfig:
    """Read and validate ``<project_dir>/pyproject.toml`` (``project_dir`` may also be that file)."""
    given = Path(project_dir)
    if given.name == "pyproject.toml" and not given.is_dir():
        given = given.parent
    project = given.resolve()
    path = project / "pyproject.toml"
    doc = _read_toml(path)

    tool = doc.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(path, f"must be a table, found {_found(tool)}", "[tool]")
    aot = _Table(
        path,
        "tool.aot",
        tool.get("aot", {}),
        ("packages", "targets", "workload", "cpu", "ptx", "backend", "wheel-platform"),
    )

    packages = aot.string_list("packages", "package", _check_module_name) or _default_packages(path, doc)
    targets = aot.string_list("targets", "target", _check_target) or ("cpu",)
    targets = tuple(t for t in KNOWN_TARGETS if t in targets)

    workload = aot.data.get("workload")
    if workload is not None:
        if not isinstance(workload, str):
            raise aot.error("workload", f"must be a module name (a string), found {_found(workload)}")
        why = _check_module_name(workload)
        if why:
            raise aot.error("workload", why)

    backend = aot.data.get("backend", DEFAULT_BACKEND)
    if not isinstance(backend, str) or not _BACKEND_NAME.match(backend):
        raise aot.error(
            "backend", f"must name a PEP 517 backend such as 'setuptools.build_meta', found {_found(backend)}"
        )

    wheel_platform = aot.data.get("wheel-platform", WHEEL_PLATFORMS[0])
    if wheel_platform not in WHEEL_PLATFORMS:
        raise aot.error(
            "wheel-platform",
            f"must be 'auto' (manylinux where the libraries allow) or 'linux' (the plain linux_<arch> tag), "
            f"found {_found(wheel_platform)}",
        )

    for sub in ("cpu", "ptx"):
        if sub in aot.data and not isinstance(aot.data[sub], dict):
            raise aot.error(
                sub,
                f"must be a table ([tool.aot.{sub}]), found {_found(aot.data[sub])}; "
                f"write its keys under a [tool.aot.{sub}] heading",
            )

    cpu_table = _Table(path, "tool.aot.cpu", aot.data.get("cpu", {}), ("cpu", "opt", "variants"))
    cpu_name = cpu_table.data.get("cpu", "generic")
    if not isinstance(cpu_name, str):
        raise cpu_table.error("cpu", f"must be a string, found {_found(cpu_name)}")
    if not _CPU_NAME.match(cpu_name):
        raise cpu_table.error(
            "cpu", f"invalid cpu name {cpu_name!r} (expected 'generic', 'native' or an LLVM cpu such as 'x86-64-v3')"
        )
    opt = cpu_table.data.get("opt", 3)
    if isinstance(opt, bool) or not isinstance(opt, int) or not 0 <= opt <= 3:
        raise cpu_table.error("opt", f"must be an integer from 0 to 3, found {_found(opt)}")

    variants = _cpu_variants(cpu_table)

    ptx_table = _Table(path, "tool.aot.ptx", aot.data.get("ptx", {}), ("arch",))
    arch = ptx_table.string_list("arch", "architecture", _check_arch) or DEFAULT_ARCH

    return BuildConfig(
        project_dir=project,
        packages=packages,
        targets=targets,
        workload=workload,
        cpu=CpuConfig(cpu=cpu_name, opt=opt, variants=variants),
        ptx=PtxConfig(arch=arch),
        backend=backend,
        wheel_platform=wheel_platform,
    )


def _cpu_variants(table: _Table) -> tuple[str, ...]:
    """``[tool.aot.cpu] variants``: CPU levels (``CPU_LEVELS``), at least one, each once; not with ``cpu``."""
    from ..targets.cpu import CPU_LEVELS

    if "variants" not in table.data:
        return ()
    if table.data.get("cpu") is not None:  # (the key, not the owner)
        raise table.error("variants", "cannot be given with cpu (each variant is the cpu of its library)")

    def check(name: str) -> str | None:
        known = ", ".join(repr(n) for n in CPU_LEVELS)
        return None if name in CPU_LEVELS else f"unknown cpu variant {name!r} (expected one of {known})"

    return table.string_list("variants", "cpu variant", check) or ()


def check_cpu_name(cfg: BuildConfig) -> None:
    """``[tool.aot.cpu] cpu`` must be a CPU LLVM knows for this machine's triple (the one a build compiles for).

    ``load_config`` only checks the spelling: asking LLVM imports llvmlite, which the commands that read a
    configuration without compiling (``aot inspect``, ``aot verify``) never need. ``aot build`` calls this
    before it imports anything of the project, so an unknown name is a ConfigError, not an abort in LLVM."""
    from ..targets.cpu import CpuTarget, known_cpu_names, level_cpu, levels_for

    triple = CpuTarget.named("generic").triple
    for variant in cfg.cpu.variants:
        if variant not in levels_for(triple):  # (a variant is built for this machine's architecture only)
            here = ", ".join(repr(name) for name in levels_for(triple))
            raise ConfigError(
                cfg.pyproject,
                f"cpu variant {variant!r} is not a level of this machine ({triple}): it builds {here}",
                "[tool.aot.cpu] variants",
            )
        cpu = level_cpu(variant)
        if cpu != "generic" and known_cpu_names(triple) and cpu not in known_cpu_names(triple):
            raise ConfigError(
                cfg.pyproject, f"cpu variant {variant!r} is not a cpu of {triple}", "[tool.aot.cpu] variants"
            )
    name = cfg.cpu.cpu
    if name in ("generic", "native"):
        return
    known = known_cpu_names(triple)
    if not known or name in known:  # (an LLVM that does not list its CPUs: it has the last word)
        return
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}?" if close else "'generic', 'native' or a name 'llc -mcpu=help' lists"
    raise ConfigError(cfg.pyproject, f"unknown cpu {name!r} for {triple} ({hint})", "[tool.aot.cpu] cpu")
