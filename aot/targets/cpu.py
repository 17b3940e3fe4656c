"""The CPU target: the host triple, a CPU name and its features.

    CpuTarget.host()                → the machine this process runs on (JIT)
    CpuTarget.named("generic")      → portable code for ``aot build`` (``cpu = "generic"``)
    CpuTarget.named("x86-64-v3")    → any LLVM CPU name
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from .base import Target


@lru_cache(maxsize=None)
def _llvm():
    import llvmlite.binding as llvm
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    return llvm


@dataclass(frozen=True)
class CpuTarget(Target):
    OWNER = "cpu"

    @classmethod
    def host(cls, opt: int = 3) -> "CpuTarget":
        llvm = _llvm()
        return cls(llvm.get_process_triple(), llvm.get_host_cpu_name(),
                   llvm.get_host_cpu_features().flatten(), opt)

    @classmethod
    def named(cls, cpu: str, opt: int = 3) -> "CpuTarget":
        if cpu == "native":
            return cls.host(opt)
        llvm = _llvm()
        return cls(llvm.get_process_triple(), cpu, "", opt)

    def target_machine(self, jit: bool = False):
        llvm = _llvm()
        target = llvm.Target.from_triple(self.triple)
        return target.create_target_machine(cpu=self.cpu, features=self.features, opt=self.opt,
                                            reloc="pic" if not jit else "default",
                                            codemodel="jitdefault" if jit else "small")
