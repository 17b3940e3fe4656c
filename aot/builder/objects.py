"""Object files from stored typed IR: one per Python module, compiled in worker processes.

    job = ObjectJob("numkit.core", target, [StoredInstance(…), …])
    data = compile_object(job.encode())     # → ELF object bytes (in a worker, or here)

A job carries everything as msgpack: the typed IR of the module's instances (exported, with their CPython
wrappers) and of the callees they reach in other modules (internal copies, so LLVM can inline them).
Its ``cache_key`` changes exactly when the object would, so unchanged modules are reused as they are.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import msgpack

from ..world.instances import StoredKey


@dataclass(frozen=True)
class StoredInstance:
    method: str
    argtypes: tuple[str, ...]
    rettype: str
    ir: bytes
    calls: tuple[StoredKey, ...]
    boundscheck: bool
    exported: bool

    def record(self) -> list:
        return [
            self.method,
            list(self.argtypes),
            self.rettype,
            self.ir,
            [[k, list(t)] for k, t in self.calls],
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
    cpu: str
    features: str
    opt: int
    instances: tuple[StoredInstance, ...]
    runtime: bool = False  # the object holding the shared dispatcher and the entry table
    # (runtime object) every code entry in the image's order: its symbol and its slot text (``slot_text``)
    entries: tuple[tuple[str, str], ...] = ()
    build_info: str = ""  # (runtime object) what the library says it is (``build_info``)

    def encode(self) -> bytes:
        return msgpack.packb(
            [
                self.module,
                self.triple,
                self.cpu,
                self.features,
                self.opt,
                [i.record() for i in self.instances],
                self.runtime,
                [list(e) for e in self.entries],
                self.build_info,
            ],
            use_bin_type=True,
        )

    @classmethod
    def decode(cls, data: bytes) -> ObjectJob:
        m, triple, cpu, features, opt, insts, runtime, entries, info = msgpack.unpackb(data, raw=False)
        return cls(
            m,
            triple,
            cpu,
            features,
            opt,
            tuple(StoredInstance.from_record(r) for r in insts),
            runtime,
            tuple((symbol, text) for symbol, text in entries),
            info,
        )

    def cache_key(self) -> str:
        return hashlib.sha256(self.encode()).hexdigest()


ENTRY_TABLE, ENTRY_COUNT, ENTRY_KEYS, BUILD_ID = "aot_entries", "aot_entry_count", "aot_entry_keys", "aot_build_id"
DISPATCHER = "aot_dispatch"  # the native dispatcher of method objects with several specializations
ENTRY_WORDS = 5  # words per entry in ``aot_entries``: try_, vc_, def_, and where its slot text starts and ends


def emit_entry_table(module, entries: tuple[tuple[str, str], ...], info: str = "") -> None:
    """``aot_entries``: per code entry, in the image's order, the addresses of ``try_<symbol>``,
    ``vc_<symbol>`` and ``def_<symbol>`` (its PyMethodDef) and where its slot text (``slot_text``) starts
    and ends in ``aot_entry_keys`` (the texts back to back, UTF-8, NUL-terminated; positions in characters);
    ``aot_entry_count``; and ``aot_build_id`` (``build_info``). Loading binds
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
    identity = info.encode() + b"\0"
    _constant(module, ir.ArrayType(ir.IntType(8), len(identity)), BUILD_ID, bytearray(identity))


def _constant(module, ltype, name: str, value) -> None:
    from llvmlite import ir

    gv = ir.GlobalVariable(module, ltype, name)
    gv.initializer = ir.Constant(ltype, value)
    gv.global_constant = True


class _KeyOnly:
    """The method side of an instance rebuilt from storage: only its key is needed for code generation."""

    def __init__(self, key: str):
        self.key = key


def compile_object(payload: bytes) -> bytes:
    """Code generation for one job (runs in a worker process: imports llvmlite there, not in the driver)."""
    from llvmlite import ir

    from serializer.irformat import decode_function

    from ..codegen.context import ModuleContext
    from ..codegen.cpython import emit_dispatcher
    from ..codegen.function import CodegenOptions
    from ..codegen.module import build_module, optimize
    from ..infer.solver import InferredInstance
    from ..targets import CpuTarget
    from ..types import parse_type

    job = ObjectJob.decode(payload)
    target = CpuTarget(job.triple, job.cpu, job.features, job.opt)
    tm = target.target_machine(jit=False)
    instances = {}
    options = {}
    for s in job.instances:
        argtypes = tuple(parse_type(t) for t in s.argtypes)
        callees = tuple((k, tuple(parse_type(t) for t in ts)) for k, ts in s.calls)
        inst = InferredInstance(_KeyOnly(s.method), argtypes, decode_function(s.ir), parse_type(s.rettype), (), callees)  # type: ignore[arg-type]
        instances[inst.key] = (inst, s.exported)
        options[s.method] = CodegenOptions(boundscheck=s.boundscheck)
    roots = [inst for inst, exported in instances.values() if exported]
    if job.runtime:
        module = ir.Module(name=job.module)
        emit_dispatcher(ModuleContext(module, target), DISPATCHER)
        emit_entry_table(module, job.entries, job.build_info)
    else:
        module, _ = build_module(
            job.module, roots, lambda k: instances[k][0], target, lambda key: options.get(key, CodegenOptions())
        )
    module.triple = target.triple
    module.data_layout = str(tm.target_data)
    import llvmlite.binding as llvm

    llmod = llvm.parse_assembly(str(module))
    llmod.name = job.module
    llmod.verify()
    optimize(llmod, tm, target.opt)
    return tm.emit_object(llmod)
