"""Object files from stored typed IR: one per Python module, compiled in worker processes.

    job = ObjectJob("numkit.core", triple, ((cpu, features, info), …), opt, [StoredInstance(…), …])
    objects = compile_object(job.encode())  # → ELF object bytes per CPU variant (in a worker, or here)

A job carries everything as msgpack: the typed IR of the module's instances (exported, with their CPython
wrappers) and of the callees they reach in other modules (internal copies, so LLVM can inline them), and
the CPU variants it is compiled for: its LLVM module is made once, then optimised and emitted per variant.
With several variants the CPython wrappers (most of the machine code, and no faster on a newer CPU) are an
object of their own, compiled once for the most portable variant and linked into every variant's library;
each variant compiles only the methods' code.
Its ``cache_key`` changes exactly when the objects would, so unchanged modules are reused as they are.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import msgpack

from .. import forksafe
from ..world.instances import StoredKey


@dataclass(frozen=True)
class StoredInstance:
    """A job's copy of a code entry: what code generation needs of it (``instance_from_entry`` rebuilds the
    instance; a job carries no edges)."""

    method: str
    argtypes: tuple[str, ...]
    rettype: str
    ir: bytes
    call_keys: tuple[StoredKey, ...]
    boundscheck: bool
    exported: bool
    edges = ()  # (not a field)

    def record(self) -> list:
        return [
            self.method,
            list(self.argtypes),
            self.rettype,
            self.ir,
            [[k, list(t)] for k, t in self.call_keys],
            self.boundscheck,
            self.exported,
        ]

    @classmethod
    def from_record(cls, rec: list) -> StoredInstance:
        return cls(
            rec[0],
            tuple(rec[1]),
            rec[2],
            bytes(rec[3]),
            tuple((k, tuple(t)) for k, t in rec[4]),
            bool(rec[5]),
            bool(rec[6]),
        )


@dataclass(frozen=True)
class ObjectJob:
    module: str
    triple: str
    # per CPU variant (one object each, in this order): its cpu, its features, and (runtime object) what its
    # library says it is (``build_info``)
    variants: tuple[tuple[str, str, str], ...]
    opt: int
    instances: tuple[StoredInstance, ...]
    runtime: bool = False  # the object holding the shared dispatcher and the entry table
    # (runtime object) every code entry in the image's order: its symbol and its slot text (``slot_text``)
    entries: tuple[tuple[str, str], ...] = ()

    def encode(self) -> bytes:
        return msgpack.packb(
            [
                self.module,
                self.triple,
                [list(v) for v in self.variants],
                self.opt,
                [i.record() for i in self.instances],
                self.runtime,
                [list(e) for e in self.entries],
            ],
            use_bin_type=True,
        )

    @classmethod
    def decode(cls, data: bytes) -> ObjectJob:
        m, triple, variants, opt, insts, runtime, entries = msgpack.unpackb(data, raw=False)
        return cls(
            m,
            triple,
            tuple((cpu, features, info) for cpu, features, info in variants),
            opt,
            tuple(StoredInstance.from_record(r) for r in insts),
            runtime,
            tuple((symbol, text) for symbol, text in entries),
        )

    def cache_key(self) -> str:
        return hashlib.sha256(self.encode()).hexdigest()


ENTRY_TABLE, ENTRY_COUNT, ENTRY_KEYS, BUILD_ID = "aot_entries", "aot_entry_count", "aot_entry_keys", "aot_build_id"
DISPATCHER = "aot_dispatch"  # the native dispatcher of method objects with several specializations
ENTRY_WORDS = 5  # words per entry in ``aot_entries``: try_, vc_, def_, and where its slot text starts and ends


def emit_entry_table(module, entries: tuple[tuple[str, str], ...]) -> None:
    """``aot_entries``: per code entry, in the image's order, the addresses of ``try_<symbol>``,
    ``vc_<symbol>`` and ``def_<symbol>`` (its PyMethodDef) and where its slot text (``slot_text``) starts
    and ends in ``aot_entry_keys`` (the texts back to back, UTF-8, NUL-terminated; positions in characters);
    ``aot_entry_count``; ``aot_build_id`` (``build_info``) is added per variant (``_add_build_id``). Loading binds
    an entry by indexing this table (one read of the whole table per library, no name looked up), and only
    when the slot says it holds that entry's key and argument types: never by position alone."""
    from llvmlite import ir

    from ..codegen.cpython import try_function_type, vectorcall_function_type

    ptr = ir.IntType(8).as_pointer()
    i64 = ir.IntType(64)
    words = []
    start = 0
    for symbol, text in entries:
        for name, ftype in ((f"try_{symbol}", try_function_type()), (f"vc_{symbol}", vectorcall_function_type())):
            words.append(ir.Function(module, ftype, name).bitcast(ptr))
        words.append(ir.GlobalVariable(module, ir.IntType(8), f"def_{symbol}"))  # (its type matters not here)
        # (where the text starts and ends in characters: loading slices the texts decoded, not their bytes)
        words += [ir.Constant(i64, start).inttoptr(ptr), ir.Constant(i64, start + len(text)).inttoptr(ptr)]
        start += len(text)
    keys = "".join(text for _, text in entries).encode() + b"\0"
    _constant(module, ir.ArrayType(ptr, len(words)), ENTRY_TABLE, words)
    _constant(module, i64, ENTRY_COUNT, len(entries))
    _constant(module, ir.ArrayType(ir.IntType(8), len(keys)), ENTRY_KEYS, bytearray(keys))


def _constant(module, ltype, name: str, value) -> None:
    from llvmlite import ir

    gv = ir.GlobalVariable(module, ltype, name)
    gv.initializer = ir.Constant(ltype, value)
    gv.global_constant = True


def warm_up() -> None:
    """What every job needs first, done before the jobs come (in a worker, while the build infers)."""
    from ..codegen import cpython, module  # noqa: F401  (llvmlite, and the code generator)
    from ..targets.cpu import _llvm

    _llvm()


def compile_object(payload: bytes) -> list[bytes]:
    """Code generation for one job: an object per CPU variant, and with several variants (and methods) one
    more, last, of the CPython wrappers every variant's library links (runs in a worker process: imports
    llvmlite there, not in the driver). The LLVM module is made once (it does not depend on the CPU); each
    variant parses, optimises and emits it with its own target machine."""
    from llvmlite import ir

    from ..codegen.context import ModuleContext
    from ..codegen.cpython import emit_dispatcher
    from ..codegen.function import CodegenOptions
    from ..codegen.module import build_module
    from ..image.contents import instance_from_entry
    from ..targets import CpuTarget

    job = ObjectJob.decode(payload)
    targets = [CpuTarget(job.triple, cpu, features, job.opt) for cpu, features, _ in job.variants]
    instances = {}
    options = {}
    for s in job.instances:
        inst = instance_from_entry(s)
        instances[inst.key] = (inst, s.exported)
        options[s.method] = CodegenOptions(boundscheck=s.boundscheck)
    roots = [inst for inst, exported in instances.values() if exported]
    split = len(targets) > 1 and not job.runtime
    wrappers = None
    if job.runtime:
        module = ir.Module(name=job.module)
        emit_dispatcher(ModuleContext(module, targets[0]), DISPATCHER)
        emit_entry_table(module, job.entries)
    else:
        lookup = lambda k: instances[k][0]  # noqa: E731
        choose = lambda key: options.get(key, CodegenOptions())  # noqa: E731
        module, _ = build_module(job.module, roots, lookup, targets[0], choose, wrappers=not split, private=not split)
        if split:
            wrappers, _ = build_module(job.module + "@wrappers", roots, lookup, targets[0], choose, code=False)
    # The data layout is in the text the parser reads: it gives loads, stores and allocas their alignments
    # there (set after parsing, it would leave them the defaults', and the vectoriser another cost model).
    # The variants of one triple share it.
    layout = str(targets[0].target_machine(jit=False).target_data)
    module.triple, module.data_layout = job.triple, layout
    text = str(module)  # (once: each variant parses it)
    objects: list[bytes] = []
    for target, (_, _, info) in zip(targets, job.variants):
        objects.append(_emit(text, target, job.module, info if job.runtime else None, verify=not objects))
    if wrappers is not None:
        wrappers.triple, wrappers.data_layout = job.triple, layout
        objects.append(_emit(str(wrappers), targets[0], job.module + "@wrappers", None, verify=True))
    return objects


def _emit(text: str, target, name: str, build_id: str | None, verify: bool) -> bytes:
    """LLVM IR ``text`` compiled for ``target``: parsed, optimised, emitted as an object file (with
    ``aot_build_id`` when ``build_id`` is given)."""
    import llvmlite.binding as llvm

    from ..codegen.module import optimize

    with forksafe.LLVM:
        tm = target.target_machine(jit=False)
        llmod = llvm.parse_assembly(first_glibc_versions(text, target.triple))
        llmod.name = name
        if llmod.data_layout != str(tm.target_data):  # (the variants of one triple share one: never here)
            raise ValueError(f"{target.cpu}: data layout {tm.target_data} is not the module's {llmod.data_layout}")
        if build_id is not None:
            _add_build_id(llmod, build_id)
        if verify:
            llmod.verify()
        optimize(llmod, tm, target.opt)
        return tm.emit_object(llmod)


_FIRST_GLIBC = {"x86_64": "GLIBC_2.2.5", "aarch64": "GLIBC_2.17"}
"""The version of glibc's first symbols, by architecture."""
_REVERSIONED = ("pthread_getattr_np", "pthread_attr_getstack")
"""Functions compiled code calls that later glibcs gave a new default version (2.32, 2.34) without changing
what they do for it: an object binds to their first version, so that its library runs on, and keeps the
manylinux tag of, the oldest glibc it needs otherwise (``aot.builder.platform_tag``)."""


def first_glibc_versions(text: str, triple: str) -> str:
    """LLVM IR ``text`` with a ``.symver`` for each of ``_REVERSIONED`` it declares, on a glibc ``triple``."""
    base = _FIRST_GLIBC.get(triple.split("-", 1)[0]) if triple.endswith("-gnu") else None
    if base is None:
        return text
    lines = [f'module asm ".symver {f},{f}@{base}"' for f in _REVERSIONED if f'declare i32 @"{f}"(' in text]
    return text + "".join(f"\n{line}" for line in lines) + ("\n" if lines else "")


def _add_build_id(llmod, info: str) -> None:
    """``aot_build_id`` (``build_info``) into a parsed runtime module: the one part of it each variant has
    its own."""
    import llvmlite.binding as llvm
    from llvmlite import ir

    module = ir.Module()
    identity = info.encode() + b"\0"
    _constant(module, ir.ArrayType(ir.IntType(8), len(identity)), BUILD_ID, bytearray(identity))
    module.triple = llmod.triple
    module.data_layout = llmod.data_layout
    llmod.link_in(llvm.parse_assembly(str(module)))
