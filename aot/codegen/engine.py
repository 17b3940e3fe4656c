"""The in-process JIT: LLVM modules compiled into this process with MCJIT.

    engine = JitEngine(CpuTarget.host())
    llmod = engine.add(module)                 # verify, optimise, compile, resolve C API symbols
    engine.address("try_aot_demo__f_…")        # → an int usable as a C function pointer

External symbols (the CPython C API, libm) are resolved through this process's own symbol table, once.
"""

from __future__ import annotations

import ctypes

import llvmlite.binding as llvm
from llvmlite import ir

from .. import forksafe
from ..targets.cpu import CpuTarget
from .module import optimize

_process = ctypes.PyDLL(None)
DATA_PREFIX = "aotjit."


_ZERO = ctypes.c_void_p(0)  # what a weak data symbol the process lacks reads as (``__libc_stack_end`` off glibc)


def _resolve(name: str, is_data: bool, weak: bool = False) -> int:
    if llvm.address_of_symbol(name):
        return llvm.address_of_symbol(name)
    if weak and is_data:
        try:
            return _resolve(name, is_data)
        except RuntimeError:
            llvm.add_symbol(name, ctypes.addressof(_ZERO))
            return ctypes.addressof(_ZERO)
    try:
        if is_data:
            address = ctypes.addressof(ctypes.c_char.in_dll(_process, name.removeprefix(DATA_PREFIX)))
        else:
            # (a symbol the process has is never at NULL: its address is an int, not None)
            address = ctypes.cast(getattr(_process, name), ctypes.c_void_p).value  # type: ignore[assignment]
    except (AttributeError, ValueError):
        raise RuntimeError(f"symbol {name} needed by compiled code is not in this process") from None
    llvm.add_symbol(name, address)
    return address


class JitEngine:
    def __init__(self, target: CpuTarget):
        self.target = target
        self.tm = target.target_machine(jit=True)
        self.ee = llvm.create_mcjit_compiler(llvm.parse_assembly(""), self.tm)
        self.modules: list = []

    def parse(self, module: ir.Module):
        module.triple = self.target.triple
        module.data_layout = str(self.tm.target_data)
        llmod = llvm.parse_assembly(str(module))
        llmod.verify()
        return llmod

    def add(self, module: ir.Module, optimized: bool = True):
        with forksafe.LLVM:
            llmod = self.parse(module)
            for gv in module.global_values:
                if isinstance(gv, ir.GlobalVariable):
                    if gv.initializer is None:
                        _resolve(gv.name, is_data=True, weak=gv.linkage == "extern_weak")
                elif gv.is_declaration and not gv.name.startswith("llvm."):
                    _resolve(gv.name, is_data=False)
            if optimized:
                optimize(llmod, self.tm, self.target.opt)
            self.ee.add_module(llmod)
            self.ee.finalize_object()
            self.modules.append(llmod)
            return llmod

    def address(self, name: str) -> int:
        address = self.ee.get_function_address(name) or self.ee.get_global_value_address(name)
        if not address:
            raise RuntimeError(f"compiled symbol {name} not found")
        return address

    def assembly(self, llmod) -> str:
        return self.tm.emit_assembly(llmod)
