"""The CPU target: the host triple, a CPU name and its features.

CpuTarget.host()                → the machine this process runs on (JIT)
CpuTarget.named("generic")      → portable code for ``aot build`` (``cpu = "generic"``)
CpuTarget.named("x86-64-v3")    → any LLVM CPU name
known_cpu_names("x86_64-unknown-linux-gnu")  → frozenset({"generic", "x86-64-v3", "skylake", …})
CpuTarget.variant("x86-64-v3")  → that level with the features it requires spelled out (``+avx2,…``), which
                                  the image's gate checks before its library is bound
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import dataclass
from functools import cache

from .base import Target


@cache
def _llvm():
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    return llvm


@cache
def known_cpu_names(triple: str) -> frozenset[str]:
    """The CPU names LLVM knows for ``triple``; empty when it does not say.

    LLVM only warns about a CPU name it does not know ("is not a recognized processor") and goes on, to abort
    the process later in code generation for some of them. Asked for a target machine for the CPU ``help``, it
    prints the names instead, as ``llc -mcpu=help`` does, on the process's stderr: they are read back from a
    temporary file put in place of file descriptor 2 meanwhile."""
    llvm = _llvm()
    target = llvm.Target.from_triple(triple)
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no stderr to borrow: the names are unknown, and LLVM has the last word
        return frozenset()
    with tempfile.TemporaryFile() as capture:
        os.dup2(capture.fileno(), 2)
        try:
            target.create_target_machine(cpu="help")
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        capture.seek(0)
        text = capture.read().decode("utf-8", "replace")
    names: set[str] = set()
    listing = False
    for line in text.splitlines():  # "Available CPUs for this target:", "", "  name  - Select …", "", …
        if line.startswith("Available CPUs"):
            listing = True
        elif listing and line.strip():
            names.add(line.split()[0])
        elif listing and names:
            break
    return frozenset(names)


_V2 = ("cx16", "popcnt", "sahf", "sse3", "sse4.1", "sse4.2", "ssse3")
_V3 = _V2 + ("avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave")
_V4 = _V3 + ("avx512bw", "avx512cd", "avx512dq", "avx512f", "avx512vl")
CPU_LEVELS: dict[str, tuple[str, ...]] = {
    "generic": (),
    "x86-64": (),
    "x86-64-v2": _V2,
    "x86-64-v3": _V3,
    "x86-64-v4": _V4,
}
"""The CPU variants an image can hold (``[tool.aot.cpu] variants``), each with the features it requires in
LLVM's spelling: the x86-64 psABI microarchitecture levels."""


@dataclass(frozen=True)
class CpuTarget(Target):
    OWNER = "cpu"

    @classmethod
    def host(cls, opt: int = 3) -> CpuTarget:
        llvm = _llvm()
        return cls(llvm.get_process_triple(), llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten(), opt)

    @classmethod
    def named(cls, cpu: str, opt: int = 3) -> CpuTarget:
        if cpu == "native":
            return cls.host(opt)
        llvm = _llvm()
        return cls(llvm.get_process_triple(), cpu, "", opt)

    @classmethod
    def variant(cls, name: str, opt: int = 3) -> CpuTarget:
        """The CPU variant ``name`` (a key of ``CPU_LEVELS``), its required features explicit."""
        return cls(_llvm().get_process_triple(), name, ",".join("+" + f for f in CPU_LEVELS[name]), opt)

    def target_machine(self, jit: bool = False):
        llvm = _llvm()
        target = llvm.Target.from_triple(self.triple)
        return target.create_target_machine(
            cpu=self.cpu,
            features=self.features,
            opt=self.opt,
            reloc="pic" if not jit else "default",
            codemodel="jitdefault" if jit else "small",
        )
