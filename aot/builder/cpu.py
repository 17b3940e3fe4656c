"""The ``cpu`` owner's build (``OwnerBuild``): per package, ``<package>/__aot__/<package>.cpu.aotimg``
(msgpack: methods, code entries with typed IR and edges), its object files (``<package>.cpu.objects``) and
``<package>.cpu.so``, or ``<package>.cpu.<variant>.so`` per ``[tool.aot.cpu] variants``.

An entry of the previous image whose method fingerprint and edges still hold is reused without inference; an
object file whose inputs are unchanged is reused without code generation; everything else is built, in
parallel processes with ``jobs > 1`` (which start on a module's objects as soon as its roots are inferred:
``_EarlyJobs``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import serializer
from serializer import ImageError, crc32

from ..abi import BINDER_SYMBOL
from ..diagnostics import CompileError
from ..image.contents import ImageContents, instance_from_entry
from ..image.entries import INDEXED_TABLES, slot_text
from ..image.header import build_identity, build_info, new_header
from ..infer import InferredInstance
from ..runtime.dispatch import dispatcher_of
from ..world.instances import stored_key
from ..world.owners import CPU
from ..world.validate import CurrentWorld, Validator
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
from .owner import OwnerBuild, Package, image_paths

RUNTIME_OBJECT = "aot_runtime"


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


class CpuImage(NamedTuple):
    """A package's CPU image, compiled (``CpuBuild.compile``): its file, its header so far, its contents and
    its libraries' object files, to link and write (``CpuBuild.write``)."""

    path: Path
    header: dict[str, Any]
    contents: ImageContents
    libraries: list[Library]


class CpuBuild(OwnerBuild[CpuImage]):
    owner = CPU
    _pool: ProcessPoolExecutor | None = None

    @contextmanager
    def workers(self) -> Iterator[None]:
        """With ``jobs > 1``, the worker processes that make object files, started now and warming up (they
        import llvmlite and the code generator) while this process imports and infers."""
        jobs = self.build.jobs
        if jobs <= 1:
            yield
            return
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for _ in range(jobs):
                pool.submit(warm_up)
            self._pool = pool
            try:
                yield
            finally:
                self._pool = None

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

    def compile(self, package: Package) -> Iterator[CpuImage]:
        """Infer every root of the package (reusing the previous image's valid entries), then make each
        library's object files (reusing the previous build's where their job is unchanged)."""
        rt = self.rt
        root = package.root
        image_path, so_path = image_paths(package.dir, package.name)
        targets = self.targets()
        target = targets[0][1]
        header = new_header(CPU, _target_map(target), package.name)
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
        roots = self.roots(package.name)
        early = _EarlyJobs(self._pool, target, targets, previous)
        for i, (mdef, argtypes) in enumerate(roots):
            self.build.progress(f"infer {package.name}", i, len(roots))
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
        contents = self.build.contents(instances, root, world)
        irs = [e.ir for e in contents.ordered()]
        libraries = []
        for name, t in targets:
            path = so_path if name is None else so_path.with_suffix(f".{name}.so")
            libraries.append(Library(name, t, path, build_identity(_target_map(t), irs)))
        header["build_id"] = libraries[0].build_id
        self.objects(package.name, instances, libraries, contents, previous, early)
        yield CpuImage(image_path, header, contents, libraries)

    def write(self, package: Package, image: CpuImage) -> None:
        """Link each library, then write the image and its object files (and remove the libraries of an
        earlier configuration)."""
        from linker import link_shared

        image_path, header, contents, libraries = image
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
        for stale in [image_path.with_suffix(".so"), *image_path.parent.glob(f"{package.name}.{CPU}.*.so")]:
            if stale not in ours:
                stale.unlink(missing_ok=True)
        serializer.write_image(image_path, header, contents.to_tables(), INDEXED_TABLES)
        serializer.write_image(image_path.with_suffix(".objects"), header, contents.object_tables())
        self.result.images.append(str(image_path))

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
                self.build.progress(f"codegen {package}", i, len(todo))
                results[job.module] = future.result()
        else:
            for i, job in enumerate(todo):
                self.build.progress(f"codegen {package}", i, len(todo))
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

    def send(self, builder: CpuBuild, module: str, done: dict, reused: set, root: str, world: CurrentWorld) -> None:
        if self.pool is None:
            return
        groups = object_groups(k for k in done if k[0].split(":")[0] == module)
        reach = set().union(*(builder.reachable(exported, done) for _, exported in groups))
        if reach <= reused:  # (all served from the previous image: the last build's objects, most likely)
            return
        contents = builder.build.contents({k: done[k] for k in reach}, root, world)
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
