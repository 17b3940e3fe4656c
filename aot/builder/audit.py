"""Auditing built images: what ``aot inspect``, ``aot verify`` and ``aot clean`` do, without the printing.

    sel = select("fixtures/numkit")       # a project, a package folder, an __aot__ folder or an image file
    report = verify_sources(sel)          # every entry checked against the sources as they are now
    report.stale[0].verdict               → Verdict(valid=False, cause="edge-changed:numkit.stats:mean")
    inspect_json(sel, report)["images"][0]["entries"][0]["method"]   → "numkit.core:absdiff"
    show_code(sel, "numkit.stats:mean(f64[:])", "llvm")              → "; ModuleID = …"  (no inference)

Validating against the current sources means importing them: the packages of the images are imported
afresh in this process, in a private world (a runtime of its own, in build mode so that nothing is loaded
or compiled, and a private bytecode cache so a stale ``.pyc`` cannot hide an edit), and everything is put
back afterwards. ``import_check`` does what a user's process does instead: a fresh interpreter with
``AOT_STRICT=1`` imports the packages and runs the configured workload.

Every problem with the input (a path that does not exist, a file that is not an image, a damaged image, a
bad configuration, an unknown method) is an ``AuditError`` whose message is one line.
"""
from __future__ import annotations

import difflib
import importlib
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional

import serializer
from serializer import ImageError, crc32

from ..runtime.loader import python_abi
from ..world.fingerprint import COMPILER_VERSION
from ..world.image import CodeEntry, ImageContents, InstanceKey, entry_edges
from ..world.validate import Verdict
from .config import BuildConfig, ConfigError, load_config

STAGES = ("ir", "llvm", "asm", "ptx")
IMAGE_SUFFIX = ".aotimg"
# What `aot clean` removes from an __aot__ folder: images, their native artifacts, the build lock and the
# temporary files of an interrupted write. Anything else there is left alone.
_CLEANABLE = re.compile(r"(.+\.(aotimg|so|ptx|cubin|objects)|\.lock|\..+\.tmp)\Z")


class AuditError(Exception):
    """Bad input to an audit command; the message is one line (``aot`` exits with status 2)."""

    def __init__(self, message: str):
        super().__init__(" ".join(message.split()))


# ---------------------------------------------------------------------------------------------- images

@dataclass
class AuditedImage:
    """One image file, fully read and decoded."""

    path: Path
    header: dict[str, Any]
    contents: ImageContents
    package: str
    root: Optional[Path]  # the folder to put on sys.path to import its package (None: not in <pkg>/__aot__)

    @property
    def owner(self) -> str:
        return str(self.header.get("owner", "?"))

    @property
    def target(self) -> dict[str, str]:
        target = self.header.get("target")
        target = target if isinstance(target, dict) else {}
        return {k: str(target.get(k, "")) for k in ("triple", "cpu", "features")}

    @property
    def compiler_version(self) -> str:
        return str(self.header.get("compiler_version", "?"))

    @property
    def native(self) -> dict[str, Any]:
        native = self.header.get("native")
        return native if isinstance(native, dict) else {}

    @property
    def native_path(self) -> Optional[Path]:
        return self.artifact("native")

    def artifact(self, what: str = "native") -> Optional[Path]:
        """The file the header names under ``what`` (``native``: the code; ``runtime``: the dispatcher)."""
        info = self.header.get(what)
        name = info.get("file") if isinstance(info, dict) else None
        if not isinstance(name, str) or not name or Path(name).name != name:
            return None
        return self.path.parent / name

    def native_problem(self) -> Optional[str]:
        """Why the native artifacts cannot be used as they are (``native-missing``,
        ``native-checksum-mismatch``), naming the file, or None."""
        return self._artifact_problem("native")

    def _artifact_problem(self, what: str) -> Optional[str]:
        path = self.artifact(what)
        if path is None:
            return f"native-missing (no {what} file named in the header)"
        try:
            data = path.read_bytes()
        except OSError:
            return f"native-missing ({path.name})"
        if crc32(data) != self.header[what].get("crc32"):
            return f"native-checksum-mismatch ({path.name})"
        return None

    def native_sizes(self) -> dict[InstanceKey, Optional[int]]:
        """Bytes of machine code per entry (implementation + wrappers), None when unknown: from the
        library's symbols, else as the build stored them (a library exports only what loading needs), and
        None for all when the library is missing or not the one the image names."""
        sizes: dict[str, int] = {}
        path = self.native_path
        usable = path is not None and self._artifact_problem("native") is None
        if usable:
            try:
                if path.suffix == ".ptx":
                    text = path.read_text("utf-8", "replace")
                    sizes = {name: len(body.encode()) for name, body in ptx_functions(text).items()}
                else:
                    from .elf import ElfError, symbol_sizes
                    try:
                        sizes = symbol_sizes(path)
                    except ElfError:
                        sizes = {}
            except OSError:
                sizes = {}
        out: dict[InstanceKey, Optional[int]] = {}
        for key, entry in self.contents.code.items():
            parts = [sizes.get(p + entry.symbol) for p in ("", "try_", "fast_")]
            if parts[0] is not None:
                out[key] = sum(p or 0 for p in parts)
            else:
                out[key] = (entry.native_size or None) if usable else None
        return out

    def gate(self) -> Optional[str]:
        """Why this machine would reject the image as a whole (the loader's file gate), or None."""
        if self.owner == "cpu":
            from ..runtime.loader import Loader
            return Loader.incompatibility(self.header)
        if self.compiler_version != COMPILER_VERSION:
            return f"compiler-version {self.compiler_version} (this is {COMPILER_VERSION})"
        if self.header.get("python") != python_abi():
            return f"python-abi {self.header.get('python')} (this is {python_abi()})"
        return None


def read_audited(path: Path) -> AuditedImage:
    """Read and decode an image; every problem is an AuditError naming the file."""
    try:
        image = serializer.read_image(path)
    except ImageError as err:
        raise AuditError(str(err)) from None
    try:
        problem = _tables_problem(image.tables)
        if problem:
            raise AuditError(f"{path}: malformed image: {problem}")
        contents = ImageContents.from_tables(image.tables)
    except (serializer.RecordError, KeyError, TypeError, ValueError, IndexError, OverflowError) as err:
        version = image.header.get("compiler_version")
        if version != COMPILER_VERSION:  # (tables are laid out as their compiler version lays them out)
            raise AuditError(f"{path}: written by aot {version}, whose tables aot {COMPILER_VERSION} cannot "
                             f"read ({err}); rebuild it") from None
        raise AuditError(f"{path}: malformed image: {err}") from None
    for entry in contents.code.values():
        problem = _entry_problem(entry)
        if problem:
            raise AuditError(f"{path}: malformed image: code entry {entry.index}: {problem}")
    header = image.header
    folder = path.resolve().parent
    package = header.get("package")
    if not isinstance(package, str) or not package:
        package = path.name.split(".")[0]
    root: Optional[Path] = None
    if folder.name == "__aot__":
        root = folder.parent
        for _ in package.split("."):
            root = root.parent
    return AuditedImage(path, header, contents, package, root)


def _tables_problem(tables: dict[str, Any]) -> Optional[str]:
    """Checks ``ImageContents.from_tables`` relies on: a code record's method is an index into the methods
    table, and the ``ir`` table holds the bytes of one function per code record."""
    from ..world.image import CODE, IR, METHODS
    methods = METHODS.unpack_all(tables.get("methods", []))
    if not all(isinstance(m["key"], str) and isinstance(m["fingerprint"], str) for m in methods):
        return "a method key or fingerprint is not a string"
    if not all(isinstance(m["definition"], bytes) for m in methods):
        return "a method definition is not bytes"
    code = CODE.unpack_all(tables.get("code", []))
    for i, rec in enumerate(code):
        method = rec["method"]
        if isinstance(method, bool) or not isinstance(method, int) or not 0 <= method < len(methods):
            return f"code entry {i}: method index {method!r} is not an index into the {len(methods)} methods"
        if not isinstance(rec["edges"], list):
            return f"code entry {i}: its edges are not a list"
    irs = IR.unpack_all(tables.get("ir", []))
    if len(irs) != len(code):
        return f"{len(irs)} IR records for {len(code)} code entries"
    for i, rec in enumerate(irs):
        if not isinstance(rec["ir"], bytes):
            return f"code entry {i}: ir is {type(rec['ir']).__name__}, not bytes"
    return None


def _entry_problem(entry: CodeEntry) -> Optional[str]:
    """What is wrong with the field types of a decoded entry (the file's checksum only proves it is intact)."""
    strings = {"method": entry.method, "rettype": entry.rettype, "owner": entry.owner, "symbol": entry.symbol,
               "state": entry.state}
    for name, value in strings.items():
        if not isinstance(value, str):
            return f"{name} is {type(value).__name__}, not a string"
    if not all(isinstance(t, str) for t in entry.argtypes):
        return "argtypes are not all strings"
    for name, value in (("min_world", entry.min_world), ("max_world", entry.max_world),
                        ("native_size", entry.native_size)):
        if isinstance(value, bool) or not isinstance(value, int):
            return f"{name} is {type(value).__name__}, not an integer"
    for edge in entry.edges:
        if len(edge) != 3 or not isinstance(edge[0], str) or not isinstance(edge[1], str):
            return f"malformed edge {list(edge)!r}"
        if edge[0] == "call" and not isinstance(edge[2], str):
            return f"malformed call edge {list(edge)!r}"
    return None


@dataclass
class Selection:
    """The images a PATH argument stands for, and the project around them when there is one."""

    given: str
    images: list[AuditedImage]
    config: Optional[BuildConfig] = None
    missing: list[str] = field(default_factory=list)  # images the project's configuration expects

    def config_for(self, root: Optional[Path]) -> Optional[BuildConfig]:
        if self.config is not None and (root is None or self.config.project_dir == root):
            return self.config
        if root is not None and (root / "pyproject.toml").is_file():
            try:
                return load_config(root)
            except ConfigError:
                return None
        return None


def _image_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*" + IMAGE_SUFFIX) if p.is_file())


def _package_dir(project: Path, package: str) -> Path:
    return project.joinpath(*package.split("."))


def locate(path: str | os.PathLike) -> tuple[list[Path], Optional[BuildConfig], list[str]]:
    """The image files PATH stands for (not read yet), the project configuration, and expected images that
    are missing. Raises AuditError for a path that is none of the four accepted kinds."""
    given = os.fspath(path)
    p = Path(given)
    if not p.exists():
        raise AuditError(f"{given}: no such file or folder")
    if p.is_file() and p.name == "pyproject.toml":
        p = p.parent
    if p.is_file():
        return [p], None, []
    if not p.is_dir():
        raise AuditError(f"{given}: not a file or folder")
    if p.name == "__aot__":
        return _image_files(p), None, []
    if (p / "pyproject.toml").is_file():
        from .driver import image_paths
        try:
            cfg = load_config(p)
        except ConfigError as err:
            raise AuditError(str(err)) from None
        files, missing = [], []
        for package in cfg.packages:
            pkg_dir = _package_dir(cfg.project_dir, package)
            if not pkg_dir.is_dir():
                raise AuditError(f"{cfg.pyproject}: [tool.aot] packages: package {package!r} is not a folder "
                                 f"of the project ({pkg_dir} does not exist)")
            for target in cfg.targets:
                if target == "ptx":  # one image per configured architecture
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
        return _image_files(p / "__aot__"), None, []
    raise AuditError(f"{given}: not an aot image, an __aot__ folder, a package folder or a project folder "
                     f"(a folder with a pyproject.toml)")


def select(path: str | os.PathLike) -> Selection:
    """Read every image PATH stands for. No image at all is an AuditError (nothing to audit)."""
    files, cfg, missing = locate(path)
    if not files:
        raise AuditError(f"{os.fspath(path)}: no aot images (build them with 'aot build')")
    return Selection(os.fspath(path), [read_audited(f) for f in files], cfg, missing)


# ---------------------------------------------------------------------------------------------- verify

@dataclass(frozen=True)
class EntryResult:
    image: AuditedImage
    entry: CodeEntry
    verdict: Verdict


@dataclass
class VerifyReport:
    results: list[EntryResult]
    import_errors: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # image-level: missing images, unusable native code

    @property
    def stale(self) -> list[EntryResult]:
        return [r for r in self.results if not r.verdict.valid]

    @property
    def ok(self) -> bool:
        return not self.stale and not self.import_errors and not self.problems

    def verdict(self, image: AuditedImage, key: InstanceKey) -> Optional[Verdict]:
        for r in self.results:
            if r.image is image and r.entry.key == key:
                return r.verdict
        return None

    def root_cause(self, result: EntryResult) -> Optional[str]:
        """For an entry invalid because a callee entry is: the first entry down that chain that is invalid
        for a reason of its own, as ``method(argtypes): cause`` (None when the entry is that one)."""
        by_key = {r.entry.key: r for r in self.results if r.image is result.image}
        current, seen = result, {result.entry.key}
        while current.verdict.cause.startswith("edge-changed:"):
            callee = current.verdict.cause.split(":", 1)[1]
            following = [by_key[k] for k in current.entry.call_keys
                         if k[0] == callee and k in by_key and not by_key[k].verdict.valid and k not in seen]
            if not following:
                break
            current = following[0]
            seen.add(current.entry.key)
        if current is result or current.entry.method == result.verdict.cause.split(":", 1)[1]:
            return None  # the cause already names it
        return f"{describe_entry(current.entry)}: {current.verdict.cause}"


def describe_entry(entry: CodeEntry) -> str:
    return f"{entry.method}({', '.join(entry.argtypes)})"


def _under(name: str, packages: set[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


@contextmanager
def current_sources(root: Path, packages: list[str], skip: Optional[str] = None) -> Iterator[tuple[Any, dict]]:
    """Import ``packages`` (and their submodules, but not ``skip``) from ``root`` afresh, in a private
    runtime in build mode; yields ``(runtime, {package: import error})`` and puts everything back after."""
    from ..runtime import state
    from .driver import import_package
    tops = {p.split(".")[0] for p in packages}
    saved_modules = {n: m for n, m in sys.modules.items() if _under(n, tops)}
    saved_runtime, saved_path, saved_prefix = state._RUNTIME, list(sys.path), sys.pycache_prefix
    cache = tempfile.TemporaryDirectory(prefix="aot-audit-pyc-")
    for name in saved_modules:
        del sys.modules[name]
    rt = state.Runtime()
    rt.building = True  # calls run as plain Python: nothing here loads an image or compiles
    state._RUNTIME = rt
    sys.path.insert(0, str(root))
    sys.pycache_prefix = cache.name
    importlib.invalidate_caches()
    errors: dict[str, str] = {}
    try:
        for package in packages:
            try:
                import_package(package, skip)
            except (Exception, SystemExit) as err:  # the project's own code: anything can happen
                errors[package] = f"{type(err).__name__}: {err}".strip()
        yield rt, errors
    finally:
        for name in [n for n in sys.modules if _under(n, tops)]:
            del sys.modules[name]
        sys.modules.update(saved_modules)
        state._RUNTIME = saved_runtime
        sys.path[:] = saved_path
        sys.pycache_prefix = saved_prefix
        importlib.invalidate_caches()
        cache.cleanup()


def verify_sources(sel: Selection) -> VerifyReport:
    """Check every entry of the selected images against the sources as they are now."""
    from ..world.validate import CurrentWorld, Validator
    report = VerifyReport([], problems=list(sel.missing))
    by_root: dict[Optional[Path], list[AuditedImage]] = {}
    for image in sel.images:
        by_root.setdefault(image.root, []).append(image)
    for root, images in by_root.items():
        if root is None:
            raise AuditError(f"{images[0].path}: cannot verify an image outside a <package>/__aot__ folder "
                             f"(its sources are unknown)")
        cfg = sel.config_for(root)
        packages = sorted({image.package for image in images})
        with current_sources(root, packages, cfg.workload if cfg else None) as (rt, errors):
            for package, message in sorted(errors.items()):
                report.import_errors.append(f"cannot import {package} from {root}: {message}")
            for image in images:
                gate = image.gate()
                failed = errors.get(image.package)
                validator = Validator(image.contents, CurrentWorld(rt.table))
                for key, entry in image.contents.code.items():
                    if gate:
                        verdict = Verdict(False, f"image-incompatible:{gate}")
                    elif failed:
                        verdict = Verdict(False, f"import-failed:{failed.split(':')[0]}")
                    else:
                        verdict = validator.check(key)
                    report.results.append(EntryResult(image, entry, verdict))
                problem = image.native_problem() if not gate else None
                if problem:
                    report.problems.append(f"{image.path}: {problem}: its entries would be compiled again "
                                           f"from their IR at first call")
    return report


# ---------------------------------------------------------------------------------------------- import check

# Runs in a fresh interpreter (AOT_STRICT=1): only the standard library and `aot` itself, so that what it
# measures is what a user's `import` does. argv: result file, project root, workload or "", packages...
_IMPORT_CHECK = r"""
import importlib, json, os, pkgutil, sys, traceback
out, root, workload, packages = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
sys.path.insert(0, root)
result = {"error": None, "imported": []}
try:
    import aot
    for name in packages:
        package = importlib.import_module(name)
        result["imported"].append(name)
        for info in pkgutil.walk_packages(getattr(package, "__path__", []), name + "."):
            if info.name == workload or info.name.split(".")[-1].startswith("__"):
                continue
            importlib.import_module(info.name)
            result["imported"].append(info.name)
    if workload:
        result["workload"] = workload
        importlib.import_module(workload)
except BaseException as err:
    result["error"] = (type(err).__name__ + ": " + str(err)).strip()
    home = os.path.dirname(os.path.abspath(aot.__file__)) if "aot" in sys.modules else "<none>"
    frames = [f for f in traceback.extract_tb(err.__traceback__)
              if not f.filename.startswith("<") and not os.path.abspath(f.filename).startswith(home + os.sep)]
    if frames:
        result["where"] = f"{frames[-1].filename}:{frames[-1].lineno}"
try:
    result["stats"] = aot.stats()
    result["events"] = [str(e) for e in aot.events() if e.kind != "loaded"]
except Exception:
    pass
result["llvmlite"] = "llvmlite" in sys.modules
with open(out, "w") as f:
    json.dump(result, f)
"""


@dataclass
class ImportCheck:
    ok: bool
    summary: str
    details: list[str]


def import_check(sel: Selection) -> ImportCheck:
    """Import the selected packages (and run the workload) in a fresh interpreter with ``AOT_STRICT=1``."""
    roots: dict[Path, list[str]] = {}
    for image in sel.images:
        if image.root is None:
            raise AuditError(f"{image.path}: cannot import the package of an image outside a "
                             f"<package>/__aot__ folder")
        roots.setdefault(image.root, [])
        if image.package not in roots[image.root]:
            roots[image.root].append(image.package)
    aot_home = str(Path(__file__).resolve().parents[2])
    ok, summaries, details = True, [], []
    for root, packages in roots.items():
        cfg = sel.config_for(root)
        workload = cfg.workload if cfg else None
        env = dict(os.environ, AOT_STRICT="1")
        env.pop("AOT_DEBUG_REJECT", None)
        env["PYTHONPATH"] = os.pathsep.join([aot_home] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                                                           if p])
        with tempfile.TemporaryDirectory(prefix="aot-import-check-") as tmp:
            out = Path(tmp) / "result.json"
            proc = subprocess.run([sys.executable, "-c", _IMPORT_CHECK, str(out), str(root), workload or "",
                                   *packages], cwd=str(root), env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, errors="replace")
            try:
                result = json.loads(out.read_text())
            except (OSError, ValueError):
                result = {"error": f"the interpreter exited with status {proc.returncode}"}
        stats = result.get("stats") or {}
        modules = len(result.get("imported", []))
        what = f"imported {', '.join(packages)} ({modules} module{'s' if modules != 1 else ''})"
        if result.get("workload"):
            what += f", ran workload {workload}"
        counts = ", ".join(f"{stats.get(k, 0)} {k}" for k in ("loaded", "inferred", "cured", "spurious"))
        summaries.append(f"{what}: {counts}" + ("; llvmlite imported" if result.get("llvmlite") else ""))
        if result.get("error"):
            ok = False
            where = f" (at {result['where']})" if result.get("where") else ""
            details.append(f"{result['error']}{where}")
        for line in proc.stderr.splitlines():
            if line.startswith("aot: ignoring image"):
                ok = False
                details.append(line[len("aot: "):])
        for event in result.get("events", []):
            ok = False
            details.append(event[len("aot: "):] if event.startswith("aot: ") else event)
    return ImportCheck(ok, "; ".join(summaries), details)


# ---------------------------------------------------------------------------------------------- JSON

def _json_value(value: Any) -> Any:
    """Constants of edges as strict JSON: non-finite floats become strings, tuples lists."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if value != value else ("inf" if value > 0 else "-inf")
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    if isinstance(value, bytes):
        return value.hex()
    return value


def entry_json(image: AuditedImage, entry: CodeEntry, native: Optional[int],
               verdict: Optional[Verdict]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "method": entry.method, "argtypes": list(entry.argtypes), "rettype": entry.rettype,
        "owner": entry.owner, "min_world": entry.min_world, "max_world": entry.max_world,
        "edges": [{"kind": e.kind, "target": e.target, "value": _json_value(e.value)} for e in entry_edges(entry)],
        "symbol": entry.symbol, "ir_bytes": len(entry.ir), "native_bytes": native or 0,
    }
    if verdict is not None:
        out["status"] = "valid" if verdict.valid else "invalid"
        if not verdict.valid:
            out["reason"] = verdict.cause
    return out


def inspect_json(sel: Selection, report: Optional[VerifyReport] = None) -> dict[str, Any]:
    """The object ``aot inspect --json`` prints (SPEC.md §5)."""
    images = []
    for image in sel.images:
        sizes = image.native_sizes()
        entries = [entry_json(image, entry, sizes.get(key),
                              report.verdict(image, key) if report is not None else None)
                   for key, entry in image.contents.code.items()]
        images.append({"path": str(image.path.resolve()), "owner": image.owner, "target": image.target,
                       "entries": entries})
    return {"format_version": serializer.FORMAT_VERSION, "compiler_version": COMPILER_VERSION,
            "python": python_abi(), "images": images}


def dumps(obj: Any) -> str:
    return json.dumps(obj, allow_nan=False, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------- code

def parse_method_spec(spec: str) -> tuple[str, Optional[tuple[str, ...]]]:
    """``"pkg.mod:f(f64, i64[:])"`` → ``("pkg.mod:f", ("f64", "i64[:]"))``; without types, ``None``."""
    from ..ir.parser import split_top
    from ..types import SignatureError, parse_type
    text = spec.strip()
    if "(" not in text:
        return text, None
    name, _, rest = text.partition("(")
    if not rest.endswith(")"):
        raise AuditError(f"{spec!r}: expected METHOD or METHOD(argtypes), e.g. 'numkit.stats:mean(f64[:])'")
    inner = rest[:-1].strip()
    try:
        types = tuple(str(parse_type(t)) for t in split_top(inner)) if inner else ()
    except (SignatureError, ValueError) as err:
        raise AuditError(f"{spec!r}: {err}") from None
    return name.strip(), types


def find_entries(sel: Selection, spec: str, owners: Optional[set[str]] = None) -> list[tuple[AuditedImage, CodeEntry]]:
    """The entries ``spec`` names (a key, ``mod:name`` or a bare name, with optional argument types)."""
    name, argtypes = parse_method_spec(spec)
    pool = [(image, entry) for image in sel.images for entry in image.contents.code.values()]
    keys = sorted({entry.method for _, entry in pool})
    matched = [k for k in keys if k == name]
    if not matched:
        matched = [k for k in keys if k.endswith("." + name) or k.split(":", 1)[-1] == name]
    if not matched:
        names = {k: k for k in keys}
        names.update({k.split(":", 1)[-1]: k for k in keys})
        close = difflib.get_close_matches(name, list(names), n=1, cutoff=0.6)
        hint = f" (did you mean {names[close[0]]}?)" if close else ""
        raise AuditError(f"no entry for method {name!r} in {sel.given}{hint}")
    if len(matched) > 1:
        raise AuditError(f"{name!r} is ambiguous: {', '.join(matched)}")
    found = [(image, entry) for image, entry in pool if entry.method == matched[0]]
    if owners is not None:
        kept = [(image, entry) for image, entry in found if entry.owner in owners]
        if not kept:
            have = ", ".join(sorted({entry.owner for _, entry in found}))
            raise AuditError(f"{matched[0]} has no {'/'.join(sorted(owners))} entry in {sel.given} "
                             f"(only {have})")
        found = kept
    if argtypes is not None:
        chosen = [(image, entry) for image, entry in found if entry.argtypes == argtypes]
        if not chosen:
            have = "; ".join(describe_entry(entry) for _, entry in found)
            raise AuditError(f"no entry for {matched[0]}({', '.join(argtypes)}) in {sel.given}; "
                             f"the images hold {have}")
        found = chosen
    return found


def _stored_instances(image: AuditedImage, entry: CodeEntry) -> tuple[Any, dict]:
    """The entry and every entry it reaches, as inferred instances rebuilt from their stored IR."""
    from serializer.irformat import decode_function

    from ..infer.solver import InferredInstance
    from ..types import parse_type
    from .objects import _KeyOnly
    root = str(image.root) if image.root is not None else ""
    instances: dict[tuple, Any] = {}
    stack = [entry.key]
    while stack:
        key = stack.pop()
        if key in instances:
            continue
        stored = image.contents.code.get(key)
        if stored is None:
            raise AuditError(f"{image.path}: {describe_entry(entry)} calls {key[0]}({', '.join(key[1])}), "
                             f"which the image does not hold")
        try:
            function = decode_function(stored.ir, root)
            argtypes = tuple(parse_type(t) for t in stored.argtypes)
            callees = tuple((k, tuple(parse_type(t) for t in ts)) for k, ts in stored.call_keys)
            rettype = parse_type(stored.rettype)
        except Exception as err:  # damaged IR bytes: msgpack, record or type errors
            raise AuditError(f"{image.path}: the stored IR of {describe_entry(stored)} is damaged "
                             f"({type(err).__name__}: {err})") from None
        instances[key] = InferredInstance(_KeyOnly(stored.method), argtypes, function, rettype,  # type: ignore
                                          entry_edges(stored), callees)
        stack.extend(stored.call_keys)
    return instances[entry.key], instances


def _llvm_module(image: AuditedImage, entry: CodeEntry, opt: int) -> tuple[Any, Any]:
    """The optimised LLVM module the build compiles for ``entry`` (with its callees), and the target machine."""
    import llvmlite.binding as llvm

    from ..codegen.function import CodegenOptions
    from ..codegen.module import build_module, optimize
    from ..targets import CpuTarget
    root, instances = _stored_instances(image, entry)
    boundscheck = {e.method: e.boundscheck for e in image.contents.code.values()}
    target = CpuTarget(image.target["triple"], image.target["cpu"] or "generic", image.target["features"], opt)
    try:
        tm = target.target_machine(jit=False)
    except Exception as err:
        raise AuditError(f"{image.path}: cannot generate code for target {image.target['triple']} "
                         f"({err})") from None
    try:
        module, _ = build_module(entry.method.replace(":", "."), [root],
                                 lambda k: instances[(k[0], tuple(map(str, k[1])))], target,
                                 lambda key: CodegenOptions(boundscheck=boundscheck.get(key, True)))
        module.triple = target.triple
        module.data_layout = str(tm.target_data)
        llmod = llvm.parse_assembly(str(module))
        llmod.name = entry.method
        llmod.verify()
    except Exception as err:  # IR that decodes but does not make sense (a tampered image), or a codegen bug
        first = (str(err).strip().splitlines() or [""])[0]
        raise AuditError(f"{image.path}: cannot generate code from the stored IR of {describe_entry(entry)} "
                         f"({type(err).__name__}: {first})") from None
    optimize(llmod, tm, opt)
    return llmod, tm


_PTX_FUNCTION = re.compile(r"^[ \t]*(?:\.(?:visible|weak|extern)[ \t]+)*\.(?:entry|func)[ \t]+"
                           r"(?:\([^)]*\)[ \t]*)?([A-Za-z_$%][\w$%]*)", re.M)


def ptx_functions(text: str) -> dict[str, str]:
    """The text of each function defined in a PTX module, from its directive to its closing brace."""
    out: dict[str, str] = {}
    for match in _PTX_FUNCTION.finditer(text):
        start = match.start()
        body = text.find("{", match.end())
        semicolon = text.find(";", match.end())
        if body < 0 or (0 <= semicolon < body):
            continue  # a declaration
        depth, i = 0, body
        while i < len(text):
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        out[match.group(1)] = text[start:i + 1].strip("\n") + "\n"
    return out


def _ptx_text(image: AuditedImage, entry: CodeEntry) -> str:
    path = image.native_path
    if path is None or not path.is_file():
        raise AuditError(f"{image.path}: its PTX file is missing ({path or 'none named in the header'})")
    text = path.read_text("utf-8", "replace")
    functions = ptx_functions(text)
    for name in (entry.symbol, f"try_{entry.symbol}", entry.method.split(":")[-1]):
        if name in functions:
            return functions[name]
    return text


_COMMENT = {"ir": "#", "llvm": ";", "asm": "#", "ptx": "//"}


def show_code(sel: Selection, spec: str, stage: str, opt: Optional[int] = None) -> str:
    """The typed IR, LLVM IR, assembly or PTX of the entries ``spec`` names, from the stored IR only."""
    if stage not in STAGES:
        raise ValueError(stage)
    if stage == "ptx":
        owners = {image.owner for image in sel.images} | {e.owner for i in sel.images for e in i.contents.code.values()}
        if "ptx" not in owners:
            raise AuditError(f"{sel.given}: no PTX entries (the images hold {', '.join(sorted(owners))} code; "
                             f"build with 'aot build --target ptx')")
        found = find_entries(sel, spec, {"ptx"})
    elif stage in ("llvm", "asm"):
        found = find_entries(sel, spec, {"cpu"})
    else:
        found = find_entries(sel, spec)
    parts = []
    for image, entry in found:
        if stage == "ir":
            from ..ir.printer import print_function
            _, instances = _stored_instances(image, entry)
            text = print_function(instances[entry.key].function)
        elif stage == "ptx":
            text = _ptx_text(image, entry)
        else:
            level = opt if opt is not None else _opt_for(sel, image)
            llmod, tm = _llvm_module(image, entry, level)
            text = str(llmod) if stage == "llvm" else tm.emit_assembly(llmod)
        if len(found) > 1:
            mark = _COMMENT[stage]
            text = f"{mark} {describe_entry(entry)} -> {entry.rettype} [{entry.owner}]\n{text}"
        parts.append(text if text.endswith("\n") else text + "\n")
    return "\n".join(parts)


def _opt_for(sel: Selection, image: AuditedImage) -> int:
    cfg = sel.config_for(image.root)
    return cfg.cpu.opt if cfg is not None else 3


# ---------------------------------------------------------------------------------------------- clean

def clean(path: str | os.PathLike) -> list[Path]:
    """Remove the images PATH stands for, with their native artifacts; the removed files.

    Damaged images are removed too (nothing is read); an ``__aot__`` folder left empty is removed."""
    files, _, _ = locate(path)
    folders: set[Path] = set()
    removed: list[Path] = []
    given = Path(os.fspath(path))
    if given.is_file() and given.name != "pyproject.toml":
        # One image: it and the artifacts of the same package and owner (<pkg>.<owner>.*).
        if not given.name.endswith(IMAGE_SUFFIX):
            raise AuditError(f"{given}: not an aot image ({IMAGE_SUFFIX} file)")
        stem = given.name[:-len(IMAGE_SUFFIX)]
        targets = [p for p in given.parent.iterdir() if p.name.startswith(stem + ".") and _CLEANABLE.match(p.name)]
        folders.add(given.parent)
    else:
        for folder in {f.parent for f in files} | _aot_folders(given):
            folders.add(folder)
        targets = [p for folder in folders if folder.is_dir()
                   for p in folder.iterdir() if p.is_file() and _CLEANABLE.match(p.name)]
    for target in sorted(set(targets)):
        try:
            target.unlink()
        except FileNotFoundError:
            continue
        except OSError as err:
            raise AuditError(f"{target}: cannot remove ({err.strerror or err})") from None
        if target.name != ".lock":
            removed.append(target)
    for folder in folders:
        try:
            folder.rmdir()  # only when empty
        except OSError:
            pass
    return removed


def _aot_folders(given: Path) -> set[Path]:
    """The __aot__ folders a folder argument stands for (all of the project's packages for a project)."""
    if given.is_file():
        given = given.parent
    if given.name == "__aot__":
        return {given}
    if (given / "pyproject.toml").is_file():
        try:
            cfg = load_config(given)
        except ConfigError as err:
            raise AuditError(str(err)) from None
        return {_package_dir(cfg.project_dir, p) / "__aot__" for p in cfg.packages}
    return {given / "__aot__"}
