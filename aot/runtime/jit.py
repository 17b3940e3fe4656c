"""Compiling specializations in this process: infer, generate LLVM, JIT, bind.

    compiled = runtime().compiler.compile(mdef, (F64, I64))
    compiled.try_address     # the try_ wrapper, for the method's native dispatch table
    compiled.def_address     # its PyMethodDef: a real builtin function (METH_FASTCALL) on demand

This is the only runtime module that imports llvmlite (through ``aot.codegen``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from llvmlite import ir

from .. import abi
from ..codegen.context import ModuleContext
from ..codegen.cpython import emit_dispatcher
from ..codegen.engine import DATA_PREFIX, JitEngine
from ..codegen.function import CodegenOptions
from ..codegen.module import build_module, optimize
from ..infer import Inferencer, InferredInstance
from ..passes import pipeline
from ..targets import CpuTarget
from ..types import Type
from ..world import MethodDef
from ..world.instances import StoredKey, stored_key


@dataclass
class Compiled:
    """A specialization compiled in this process."""

    instance: InferredInstance
    try_address: int
    def_address: int
    symbol: str
    vectorcall_address: int = 0


class Compiler:
    def __init__(self, rt):
        self.rt = rt
        self.target = CpuTarget.host()
        self.engine = JitEngine(self.target)
        self.inferencer = Inferencer(rt.table, seed=rt.seed, passes=partial(pipeline.run, verify=rt.env.verify_passes))
        self._dispatcher: int | None = None
        self._modules = 0
        rt.invalidation.subscribe(self.forget)

    def forget(self, key: str) -> set[StoredKey]:
        """Method ``key`` was redefined: drop every instance inferred from it (``Invalidation`` asks)."""
        stale = self.inferencer.dependents(key)
        self.inferencer.forget(stale)
        return {stored_key(key) for key in stale}

    def dispatcher_address(self) -> int:
        """The native vectorcall of method objects (compiled once per process)."""
        if self._dispatcher is None:
            module = ir.Module(name="aot_runtime")
            emit_dispatcher(ModuleContext(module, self.target, DATA_PREFIX))
            self.engine.add(module)
            self._dispatcher = self.engine.address("aot_dispatch")
        return self._dispatcher

    def binder_address(self) -> int:
        """The native binder of methods with keyword-only parameters (``emit_dispatcher`` makes it too)."""
        self.dispatcher_address()
        return self.engine.address(abi.BINDER_SYMBOL)

    def infer(self, mdef: MethodDef, argtypes: tuple[Type, ...]) -> InferredInstance:
        return self.inferencer.infer(mdef, argtypes)

    def lookup(self, key) -> InferredInstance:
        return self.inferencer.done[key]

    def options_for(self, key: str) -> CodegenOptions:
        mdef = self.rt.table.methods.get(key)
        return CodegenOptions(boundscheck=mdef.options.boundscheck if mdef else True)

    def module_for(self, inst: InferredInstance, suffix: str = "") -> tuple[ir.Module, list]:
        self.inferencer.complete([inst], self._method)
        self._modules += 1
        return build_module(
            f"aot_jit_{self._modules}",
            [inst],
            self.lookup,
            self.target,
            self.options_for,
            suffix=suffix,
            data_prefix=DATA_PREFIX,
        )

    def compile(self, mdef: MethodDef, argtypes: tuple[Type, ...]) -> Compiled:
        return self._generate(self.infer(mdef, argtypes), mdef)

    def reachable_keys(self, inst: InferredInstance) -> set[str]:
        """Method keys of every callee the instance's code relied on (it inlines them all)."""
        out: set[str] = set()
        stack = list(inst.callees)
        seen = set()
        while stack:
            key = stack.pop()
            if key in seen:
                continue
            seen.add(key)
            out.add(key[0])
            callee = self.inferencer.done.get(key)
            if callee is not None:
                stack.extend(callee.callees)
        return out

    def cure(self, inst: InferredInstance, mdef: MethodDef) -> Compiled:
        """Native code for an instance whose stored IR is valid: code generation only, no inference."""
        self.inferencer.done.setdefault(inst.key, inst)
        return self._generate(inst, mdef)

    def _generate(self, inst: InferredInstance, mdef: MethodDef) -> Compiled:
        """Generate, JIT and bind the native code of an inferred (or stored) instance."""
        module, exports = self.module_for(inst, suffix=f"_w{mdef.world}")
        self.engine.add(module)
        export = exports[0]
        return Compiled(
            inst,
            self.engine.address(export.try_symbol),
            self.engine.address(export.def_symbol),
            export.symbol,
            self.engine.address(export.vectorcall_symbol),
        )

    def forget_stored(self) -> bool:
        """Drop every instance made from an image's stored IR (``stored_ir``) and every instance that relied
        on one, after such IR failed to compile; whether there was any."""
        done = self.inferencer.done
        stored = {k for k, inst in done.items() if hasattr(type(inst), "stored_ir")}
        if not stored:
            return False
        stale, grew = set(stored), True
        while grew:
            callers = {k for k, inst in done.items() if k not in stale and any(c in stale for c in inst.callees)}
            stale |= callers
            grew = bool(callers)
        self.inferencer.forget(stale)
        self.inferencer.partial.clear()
        return True

    def _method(self, key: str):
        mdef = self.rt.table.methods.get(key)
        if mdef is None:
            func = self.rt.current_world.function_for(key)
            mdef = self.rt.table.method_for(func) if func is not None else None
        return mdef

    def llvm_ir(self, mdef: MethodDef, argtypes: tuple[Type, ...], optimized: bool = True) -> str:
        module, _ = self.module_for(self.infer(mdef, argtypes))
        llmod = self.engine.parse(module)
        if optimized:
            optimize(llmod, self.engine.tm, self.target.opt)
        return str(llmod)

    def assembly(self, mdef: MethodDef, argtypes: tuple[Type, ...]) -> str:
        module, _ = self.module_for(self.infer(mdef, argtypes))
        llmod = self.engine.parse(module)
        optimize(llmod, self.engine.tm, self.target.opt)
        return self.engine.assembly(llmod)
