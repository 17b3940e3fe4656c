"""``aot build``: walk a project's packages, infer every specialization, write images and shared libraries.

    result = build_project("fixtures/numkit", jobs=2)
    result.built, result.reused, result.failed, result.images
        → 12, 54, 0, ['fixtures/numkit/numkit/__aot__/numkit.cpu.aotimg']

Per package and target: ``<package>/__aot__/<package>.cpu.aotimg`` (msgpack: methods, code entries with
typed IR and edges, object files) and ``<package>.cpu.so``. An entry of the previous image whose method
fingerprint and edges still hold is reused without inference; an object file whose inputs are unchanged
is reused without code generation; everything else is built, in parallel processes with ``jobs > 1``
(which start on a module's objects as soon as its roots are inferred: ``_EarlyJobs``).
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
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, cast

import serializer
from serializer import ImageError, crc32
from serializer.files import remove_stale_temporaries

from ..abi import BINDER_SYMBOL
from ..diagnostics import CompileError
from ..image.contents import ImageContents, entry_state, instance_from_entry
from ..image.entries import INDEXED_TABLES, CodeEntry, edge_to_record, slot_text
from ..image.header import build_identity, build_info, new_header
from ..infer.solver import InferredInstance
from ..runtime import runtime
from ..runtime.dispatch import dispatcher_of
from ..world.edges import EdgeKind
from ..world.fingerprint import fingerprint_of
from ..world.instances import StoredKey, stored_key
from ..world.methods import MAX_WORLD
from ..world.owners import CPU, PTX
from ..world.validate import CurrentWorld, Validator
from .config import BuildConfig, check_cpu_name, load_config
from .objects import (
    BUILD_ID,
    DISPATCHER,
    ENTRY_COUNT,
    ENTRY_KEYS,
    ENTRY_TABLE,
    ObjectJob,
    StoredInstance,
    compile_object,
    warm_up,
)

RUNTIME_OBJECT = "aot_runtime"


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


class _Builder:
    def __init__(self, cfg: BuildConfig, jobs: int, progress: Callable[[str, int, int], None] | None):
        self.cfg = cfg
        self.jobs = jobs
        self._pool: ProcessPoolExecutor | None = None
        self.progress = progress or (lambda what, done, total: None)
        self.rt = runtime()
        self.result = BuildResult()
        # each instance's typed IR as the image stores it, encoded once (early jobs and the image both need it)
        self._encoded: dict[tuple[str, tuple, str], tuple[InferredInstance, bytes]] = {}

    # ------------------------------------------------------------------ per package
    def targets(self) -> list[tuple[str | None, Any]]:
        """The CPU targets of a package's libraries: ``(variant name, target)`` per ``[tool.aot.cpu] variants``,
        the most portable first (fewest required features; the header's own target), or ``(None, target)``
        for the one ``cpu``."""
        from ..targets import CpuTarget

        cpu = self.cfg.cpu
        if not cpu.variants:
            return [(None, CpuTarget.named(cpu.cpu, cpu.opt))]
        named = [(name, CpuTarget.variant(name, cpu.opt)) for name in cpu.variants]
        return sorted(named, key=lambda nt: nt[1].features.count("+"))  # (stable: ties keep the listed order)

    def build_package(self, package: str) -> tuple[Path, dict[str, Any], ImageContents, list[Library]] | None:
        rt = self.rt
        module = sys.modules[package]
        package_dir = Path(module.__file__).resolve().parent  # type: ignore[arg-type]  # a package: it has a file
        root = str(package_dir.parent)
        image_path, so_path = image_paths(package_dir, package)
        targets = self.targets()
        target = targets[0][1]
        header = new_header(CPU, _target_map(target), package)
        previous = self.previous_contents(image_path, header)
        world = CurrentWorld(rt.table)
        validator = Validator(previous, world) if previous is not None else None
        reused: set[tuple[str, tuple]] = set()

        def seed(method: Any, argtypes: tuple) -> InferredInstance | None:
            if validator is None or previous is None:  # (both None, or neither)
                return None
            key = stored_key((method.key, argtypes))
            if key in previous.code and validator.check(key).valid:
                reused.add((method.key, argtypes))
                return instance_from_entry(previous.code[key], method, root)
            return None

        from ..infer import Inferencer
        from ..passes import pipeline

        inferencer = Inferencer(rt.table, seed=seed, passes=partial(pipeline.run, verify=rt.env.verify_passes))
        roots = self.roots(package)
        early = _EarlyJobs(self._pool, target, targets, previous)
        for i, (mdef, argtypes) in enumerate(roots):
            self.progress(f"infer {package}", i, len(roots))
            try:
                inferencer.infer(mdef, argtypes)
            except CompileError as err:
                self.result.failed += 1
                self.result.errors.extend(str(d) for d in err.diagnostics)
            module_name = mdef.key.split(":")[0]
            if i + 1 < len(roots) and roots[i + 1][0].key.split(":")[0] != module_name:  # (roots come by module)
                early.send(self, module_name, inferencer.done, reused, root, world)
        self.complete(inferencer, world)
        instances = {k: v for k, v in inferencer.done.items()}
        self.result.reused += sum(1 for k in instances if k in reused)
        self.result.built += sum(1 for k in instances if k not in reused)
        contents = self.contents(instances, root, world)
        irs = [e.ir for e in contents.ordered()]
        libraries = []
        for name, t in targets:
            path = so_path if name is None else so_path.with_suffix(f".{name}.so")
            libraries.append(Library(name, t, path, build_identity(_target_map(t), irs)))
        header["build_id"] = libraries[0].build_id
        self.objects(package, instances, libraries, contents, previous, early)
        return image_path, header, contents, libraries

    def complete(self, inferencer: Any, world: CurrentWorld) -> None:
        """Make sure every callee of every instance is known (reused roots bring their callees' keys only)."""

        def resolve(key: str) -> Any:
            method = self.rt.table.methods.get(key)
            if method is None:
                func = world.function_for(key)
                method = self.rt.table.method_for(func) if func is not None else None
            return method

        inferencer.complete(list(inferencer.done.values()), resolve)

    def previous_contents(self, image_path: Path, header: dict) -> ImageContents | None:
        if not image_path.exists():
            return None
        try:
            image = serializer.read_image(image_path)
        except ImageError:
            return None
        if any(image.header.get(k) != v for k, v in header.items()):
            return None
        try:
            contents = ImageContents.from_tables(image.tables)
            if image.header.get("build_id") != build_identity(header["target"], [e.ir for e in contents.ordered()]):
                return None  # its IR is not what its build wrote: nothing of it is reused
            try:
                cache = serializer.read_image(image_path.with_suffix(".objects"))
                if all(cache.header.get(k) == v for k, v in header.items()):
                    contents.objects = ImageContents.from_tables(cache.tables).objects
            except ImageError:
                pass  # no reusable objects: every module is compiled again
            return contents
        except (serializer.RecordError, KeyError, TypeError, ValueError, IndexError, OverflowError):
            return None

    def roots(self, package: str) -> list[tuple[Any, tuple]]:
        out = []
        for key, mdef in sorted(self.rt.table.methods.items()):
            if key.split(":")[0].split(".")[0] != package:
                continue
            dispatcher = dispatcher_of(mdef)
            if dispatcher is None:  # not an @aot.jit method
                continue
            seen = set()
            try:
                declared = list(dispatcher.declared)
            except TypeError as err:  # a malformed `signatures=` string
                code = mdef.py_func.__code__
                self.result.failed += 1
                self.result.errors.append(f"{code.co_filename}:{code.co_firstlineno}: error: {err}")
                continue
            for argtypes in declared + list(dispatcher.recorded or ()):
                if argtypes not in seen:
                    seen.add(argtypes)
                    out.append((mdef, argtypes))
        return out

    def contents(self, instances: dict, root: str, world: CurrentWorld) -> ImageContents:
        from ..codegen.types import symbol_name

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
            code[stored] = CodeEntry(
                0,
                key,
                stored[1],
                str(inst.return_type),
                CPU,
                getattr(inst, "stored_ir", None) or self._encoded_ir(key, argtypes, inst, root),
                tuple(tuple(edge_to_record(e)) for e in inst.edges),
                symbol_name(key, argtypes, CPU),
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

    def objects(
        self,
        package: str,
        instances: dict,
        libraries: list[Library],
        contents: ImageContents,
        previous: ImageContents | None,
        early: _EarlyJobs,
    ) -> None:
        """Each library's object files (``Library.objects``), made by jobs that compile a module for every
        library at once; an object whose job is unchanged is taken from the previous build, one whose job
        was sent early (``_EarlyJobs``) from that job's result."""
        target = libraries[0].target
        variants = tuple((lib.target.cpu, lib.target.features, "") for lib in libraries)
        jobs = self.code_jobs(object_groups(instances), instances, contents, target, variants)
        jobs.append(
            ObjectJob(
                RUNTIME_OBJECT,
                target.triple,
                tuple((lib.target.cpu, lib.target.features, build_info(lib.header_fields())) for lib in libraries),
                target.opt,
                (),
                True,
                tuple((e.symbol, slot_text(e.method, e.argtypes)) for e in contents.ordered()),
            )
        )
        results: dict[str, list[bytes]] = {}
        todo = []
        for job in jobs:
            cached = _cached_objects(job, previous, [lib.name for lib in libraries])
            if cached is not None:
                results[job.module] = cached
                self.result.objects_reused += 1
            else:
                todo.append(job)
        pool = self._pool
        if pool is not None and (len(todo) > 2 or early.sent):  # (a few objects are made sooner here)
            futures = [early.take(job) or pool.submit(compile_object, job.encode()) for job in todo]
            self.result.objects_early += early.used
            early.drop()  # (sent for jobs that turned out otherwise: an instance came or changed since)
            for i, (job, future) in enumerate(zip(todo, futures)):
                self.progress(f"codegen {package}", i, len(todo))
                results[job.module] = future.result()
        else:
            for i, job in enumerate(todo):
                self.progress(f"codegen {package}", i, len(todo))
                results[job.module] = compile_object(job.encode())
        self.result.objects_built += len(todo)
        for job in jobs:
            made = results[job.module]
            for name, obj in zip(_object_names(job, [lib.name for lib in libraries]), made):
                contents.objects[name] = (job.cache_key(), obj)
            for lib, obj in zip(libraries, made):
                lib.objects.append(obj)
                lib.objects.extend(made[len(libraries) :])  # (the wrappers every variant links)

    def code_jobs(
        self,
        groups: list[tuple[str, set]],
        instances: dict,
        contents: ImageContents,
        target: Any,
        variants: tuple[tuple[str, str, str], ...],
    ) -> list[ObjectJob]:
        """The job of each group of methods (``object_groups``): its instances and every callee they reach,
        from their code entries in ``contents``."""
        jobs = []
        for module_name, exported in groups:
            reach = self.reachable(exported, instances)
            stored = []
            for key, argtypes in sorted(reach, key=lambda k: (k[0], str(k[1]))):
                entry = contents.code[stored_key((key, argtypes))]
                stored.append(
                    StoredInstance(
                        key,
                        entry.argtypes,
                        entry.rettype,
                        entry.ir,
                        entry.call_keys,
                        entry.boundscheck,
                        (key, argtypes) in exported,
                    )
                )
            jobs.append(ObjectJob(module_name, target.triple, variants, target.opt, tuple(stored)))
        return jobs

    @contextmanager
    def workers(self) -> Iterator[None]:
        """With ``jobs > 1``, the worker processes that make object files, started now and warming up (they
        import llvmlite and the code generator) while this process imports and infers."""
        if self.jobs <= 1:
            yield
            return
        with ProcessPoolExecutor(max_workers=self.jobs) as pool:
            for _ in range(self.jobs):
                pool.submit(warm_up)
            self._pool = pool
            try:
                yield
            finally:
                self._pool = None

    @staticmethod
    def reachable(keys: set, instances: dict) -> set:
        out = set()
        stack = list(keys)
        while stack:
            k = stack.pop()
            if k in out or k not in instances:
                continue
            out.add(k)
            stack.extend(instances[k].callees)
        return out


def _object_names(job: ObjectJob, variants: list[str | None]) -> list[str]:
    """What a job's objects are kept under for incremental builds: one per library (``module@variant``, or
    ``module`` without variants), and its wrappers' (``compile_object``)."""
    wrappers = [f"{job.module}@wrappers"] if len(variants) > 1 and not job.runtime else []
    return [job.module if name is None else f"{job.module}@{name}" for name in variants] + wrappers


def _cached_objects(job: ObjectJob, previous: ImageContents | None, variants: list[str | None]) -> list[bytes] | None:
    """The objects the previous build made from this very job (the same cache key), or None."""
    if previous is None:
        return None
    key = job.cache_key()
    old = [previous.objects.get(name) for name in _object_names(job, variants)]
    if all(o is not None and o[0] == key for o in old):
        return [o[1] for o in old if o is not None]
    return None


class _EarlyJobs:
    """Object jobs sent to the workers while this process still infers, so that both work at once: when the
    last root of a module is inferred, that module's jobs as they stand then (its instances so far and the
    callees they reach). A job's objects depend on its payload alone, so the build's final job takes the
    result of an early one that is the same job (the same cache key); an early job that turned out otherwise
    (an instance of its module came later, from a caller in another module) is dropped. Without workers, for
    a module whose instances all came from the previous image, or for a job whose objects the previous build
    left, none is sent."""

    def __init__(self, pool: ProcessPoolExecutor | None, target: Any, targets: list[tuple[str | None, Any]], previous):
        self.pool = pool
        self.target = target
        self.variants = tuple((t.cpu, t.features, "") for _, t in targets)
        self.names = [name for name, _ in targets]
        self.previous = previous
        self.sent: dict[str, Future] = {}  # cache key → its objects
        self.used = 0

    def send(self, builder: _Builder, module: str, done: dict, reused: set, root: str, world: CurrentWorld) -> None:
        if self.pool is None:
            return
        groups = object_groups(k for k in done if k[0].split(":")[0] == module)
        reach = set().union(*(builder.reachable(exported, done) for _, exported in groups))
        if reach <= reused:  # (all served from the previous image: the last build's objects, most likely)
            return
        contents = builder.contents({k: done[k] for k in reach}, root, world)
        for job in builder.code_jobs(groups, done, contents, self.target, self.variants):
            key = job.cache_key()
            if key not in self.sent and _cached_objects(job, self.previous, self.names) is None:
                self.sent[key] = self.pool.submit(compile_object, job.encode())

    def take(self, job: ObjectJob) -> Future | None:
        """The early job that is ``job``, if one was sent."""
        future = self.sent.pop(job.cache_key(), None)
        self.used += future is not None
        return future

    def drop(self) -> None:
        """Cancel the early jobs no final job took (those already running finish, unused)."""
        for future in self.sent.values():
            future.cancel()
        self.sent.clear()


def _target_map(target: Any) -> dict[str, str]:
    return {"triple": target.triple, "cpu": target.cpu, "features": target.features}


@dataclass
class Library:
    """One shared library of a package's CPU image: a CPU variant (``name``; None without variants), its
    target, its file, its build identity and its object files."""

    name: str | None
    target: Any
    path: Path
    build_id: str
    objects: list[bytes] = field(default_factory=list)

    def header_fields(self) -> dict[str, Any]:
        """What the image's header says of this library (its ``variants`` item once ``native`` is added)."""
        fields = {"target": _target_map(self.target), "build_id": self.build_id}
        return fields if self.name is None else {"name": self.name, **fields}


LINK_FLAGS: tuple[str, ...] = ("-Wl,-Bsymbolic", "-Wl,--strip-all") if sys.platform.startswith("linux") else ()
"""References inside the library bind to its own definitions at link time: its pointers to its own
functions (the entry table, the PyMethodDefs) become relative relocations, which loading applies without
looking a single name up. The full symbol table is left out (``EXPORTS`` are in the dynamic one): the
library is checksummed on every first call."""

EXPORTS: tuple[str, ...] = (
    (ENTRY_TABLE, ENTRY_COUNT, ENTRY_KEYS, BUILD_ID, DISPATCHER, BINDER_SYMBOL)
    if sys.platform.startswith("linux")
    else ()
)
"""What the library exports: the entry table (entries are bound through it, not by name: it holds each
entry's ``PyMethodDef`` too), its slot texts, the build identity, and the native dispatcher and binder. The
dynamic symbol table, checksummed and mapped on every first call, is then a small fraction of what exporting
every function made it; ``add_native_sizes`` keeps the functions' sizes in the image instead."""


def add_native_sizes(contents: ImageContents, objects: list[bytes]) -> None:
    """Give each entry its machine code size (implementation and wrappers), read from the symbol tables of
    the object files the library is linked from (``aot inspect`` reports it)."""
    from .elf import ElfError, symbol_sizes_of

    sizes: dict[str, int] = {}
    for obj in objects:
        try:
            sizes.update(symbol_sizes_of(obj))
        except ElfError:  # not ELF (another platform): sizes stay unknown
            return
    for key, entry in list(contents.code.items()):
        size = sum(sizes.get(prefix + entry.symbol, 0) for prefix in ("", "try_", "fast_"))
        contents.code[key] = entry._replace(native_size=size)  # type: ignore[index]


OBJECT_METHODS = 6
"""Methods per object file: a module's methods are split in groups this size, so that editing one
method recompiles a few, not the whole module (and the groups compile in parallel)."""


def object_groups(instances: Iterable[tuple[str, tuple]]) -> list[tuple[str, set]]:
    """Instances grouped into object files: ``pkg.mod`` for a small module, ``pkg.mod#k`` for the k-th
    group of methods of a larger one (by method key, so an edit moves no method to another group)."""
    by_module: dict[str, dict[str, list]] = {}
    for key, argtypes in instances:
        by_module.setdefault(key.split(":")[0], {}).setdefault(key, []).append((key, argtypes))
    groups = []
    for module in sorted(by_module):
        methods = sorted(by_module[module])
        if len(methods) <= OBJECT_METHODS:
            groups.append((module, {i for m in methods for i in by_module[module][m]}))
            continue
        for k in range(0, len(methods), OBJECT_METHODS):
            chunk = methods[k : k + OBJECT_METHODS]
            groups.append((f"{module}#{k // OBJECT_METHODS}", {i for m in chunk for i in by_module[module][m]}))
    return groups


def build_project(
    project_dir: str | os.PathLike,
    jobs: int = 1,
    strict: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
    targets: tuple[str, ...] | None = None,
) -> BuildResult:
    """Build the images of a project (see the module docstring). Raises ``ConfigError`` for bad config."""
    from linker import link_shared

    started = time.perf_counter()
    cfg = load_config(project_dir)
    check_cpu_name(cfg)
    project = str(Path(project_dir).resolve())
    if project not in sys.path:
        sys.path.insert(0, project)
    rt = runtime()
    rt.building = True
    builder = _Builder(cfg, jobs, progress)
    targets = tuple(targets or cfg.targets)
    with builder.workers() if CPU in targets else contextlib.nullcontext():  # (warming up meanwhile)
        _build(builder, cfg, project, targets, strict, link_shared)
    builder.result.seconds = time.perf_counter() - started
    return builder.result


def _build(
    builder: _Builder, cfg: BuildConfig, project: str, targets: tuple[str, ...], strict: bool, link_shared: Any
) -> None:
    """Import the packages, then build their images for ``targets`` (``build_project``)."""
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
    for package in cfg.packages if CPU in targets else ():
        package_dir = Path(sys.modules[package].__file__).resolve().parent  # type: ignore[arg-type]  # (a package)
        with locked(package_dir / "__aot__"):
            built = builder.build_package(package)
            if built is None:
                continue
            if builder.result.failed and strict:
                continue
            image_path, header, contents, libraries = built
            variants = []
            for lib in libraries:
                link_shared(lib.objects, lib.path, extra_args=LINK_FLAGS, exports=EXPORTS)
                data = lib.path.read_bytes()
                native = {"file": lib.path.name, "crc32": crc32(data), "size": len(data)}
                variants.append({**lib.header_fields(), "native": native})
            add_native_sizes(contents, libraries[0].objects)
            image_path.with_suffix(".rt.so").unlink(missing_ok=True)  # what images of aot 0.1 needed
            header = dict(header, native=variants[0]["native"])
            if libraries[0].name is not None:
                header["variants"] = variants
            ours = {lib.path for lib in libraries}  # (libraries of an earlier configuration go)
            for stale in [image_path.with_suffix(".so"), *image_path.parent.glob(f"{package}.cpu.*.so")]:
                if stale not in ours:
                    stale.unlink(missing_ok=True)
            serializer.write_image(image_path, header, contents.to_tables(), INDEXED_TABLES)
            serializer.write_image(image_path.with_suffix(".objects"), header, contents.object_tables())
            builder.result.images.append(str(image_path))
    if PTX in targets:
        for package in cfg.packages:
            package_dir = Path(sys.modules[package].__file__).resolve().parent  # type: ignore[arg-type]  # (a package)
            with locked(package_dir / "__aot__"):
                build_ptx(builder, package, package_dir, [sys.modules[m] for m in modules[package]], strict)


def build_ptx(builder: _Builder, package: str, package_dir: Path, modules: list, strict: bool) -> None:
    """The ``ptx`` images of a package: per configured arch, ``<pkg>.ptx-<arch>.aotimg`` with the kernel and
    device-function entries and the launch tables (``launch_tables``), ``<pkg>.<arch>.ptx`` and, when ptxas is
    installed, ``<pkg>.<arch>.cubin``."""
    from linker import LinkerError, PtxasError, assemble_ptx, find_ptxas
    from linker._files import atomic_write_bytes

    from ..codegen.types import symbol_name
    from ..runtime.kernel import find_kernels
    from ..runtime.ptx import PtxCompiler, compile_ptx

    kernels = find_kernels(modules)
    if not kernels:
        return
    rt = builder.rt
    root = str(package_dir.parent)
    compiler = PtxCompiler(rt.table, verify=rt.env.verify_passes)
    world = CurrentWorld(rt.table)
    for arch in builder.cfg.ptx.arch:
        try:
            program = compile_ptx(kernels, arch, compiler=compiler, opt=builder.cfg.cpu.opt)
        except CompileError as err:
            builder.result.failed += 1
            builder.result.errors.extend(str(d) for d in err.diagnostics)
            return
        except LinkerError as err:
            builder.result.failed += 1
            builder.result.errors.append(f"{package}: {err}")
            return
        if strict and builder.result.failed:
            return
        entry_symbols = {(k.method, k.argtypes): k.symbol for k in program.kernels}
        instances = {k: v for k, v in compiler.inferencer.done.items()}
        contents = builder.contents(instances, root, world)
        code = cast("dict[StoredKey, CodeEntry]", contents.code)  # (a dict: _Builder.contents made it)
        for key in instances:
            strs = stored_key(key)
            entry = code[strs]
            code[strs] = CodeEntry(
                entry.index,
                entry.method,
                entry.argtypes,
                entry.rettype,
                PTX,
                entry.ir,
                entry.edges,
                entry_symbols.get(key, symbol_name(key[0], key[1], PTX)),
                entry.min_world,
                entry.max_world,
                entry.state,
                entry.boundscheck,
                0,
            )
        builder.result.built += len(instances)
        folder = package_dir / "__aot__"
        ptx_path = folder / f"{package}.{arch}.ptx"
        data = program.ptx.encode()
        atomic_write_bytes(ptx_path, data)
        header = new_header(
            PTX,
            {"triple": "nvptx64-nvidia-cuda", "cpu": arch, "features": ""},
            package,
            native={"file": ptx_path.name, "crc32": crc32(data), "size": len(data)},
        )
        if find_ptxas() is not None:
            cubin_path = folder / f"{package}.{arch}.cubin"
            try:
                assemble_ptx(program.ptx, arch, cubin_path)
                cubin = cubin_path.read_bytes()
                header["cubin"] = {"file": cubin_path.name, "crc32": crc32(cubin), "size": len(cubin)}
            except PtxasError as err:
                builder.result.failed += 1
                builder.result.errors.append(f"{package}: {err}")
        image_path = folder / f"{package}.ptx-{arch}.aotimg"
        tables = dict(contents.to_tables(), **launch_tables(program, compiler.inferencer.done))
        serializer.write_image(image_path, header, tables, INDEXED_TABLES)
        builder.result.images.append(str(image_path))


def launch_tables(program: Any, done: dict) -> dict[str, list]:
    """A ``ptx`` image's ``kernels`` and ``errors`` tables (``aot.image.entries.KERNELS``, ``ERRORS``): each
    kernel's written parameters, and the module's error codes, so that a launch from the image needs no
    inference."""
    from ..codegen.module import written_params
    from ..image.entries import ERRORS, KERNELS

    kernels = [
        KERNELS.pack(
            {
                "method": k.method,
                "argtypes": [str(t) for t in k.argtypes],
                "written": sorted(written_params(done[(k.method, k.argtypes)], done.__getitem__)),
            }
        )
        for k in sorted(program.kernels, key=lambda k: (k.method, [str(t) for t in k.argtypes]))
    ]
    return {"kernels": kernels, "errors": [ERRORS.pack({"exception": e, "message": m}) for e, m in program.errors]}
