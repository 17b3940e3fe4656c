"""The CPU target: the host triple, a CPU name and its features.

CpuTarget.host()                → the machine this process runs on (JIT)
CpuTarget.named("generic")      → portable code for ``aot build`` (``cpu = "generic"``)
CpuTarget.named("x86-64-v3")    → any LLVM CPU name
known_cpu_names("x86_64-unknown-linux-gnu")  → frozenset({"generic", "x86-64-v3", "skylake", …})
CpuTarget.variant("x86-64-v3")  → that level with the features it requires spelled out (``+avx2,…``), which
                                  the image's gate checks before its library is bound
levels_for("aarch64-unknown-linux-gnu")  → ("generic", "armv8-a", "armv8.2-a", "armv8.2-a+sve", "armv9-a"):
                                  the levels a build for that triple can make
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from .base import Target


@cache
def _llvm():
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    llvm.initialize_native_asmparser()  # (module asm: the objects' .symver lines, aot.builder.objects)
    return llvm


def stderr_of(call: Callable[[], object]) -> str | None:
    """What ``call`` writes on file descriptor 2 (where LLVM prints its warnings, past Python's ``sys.stderr``),
    read back from a temporary file put in its place meanwhile; None when there is no descriptor 2 to borrow
    (``call`` is not made)."""
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:
        return None
    with tempfile.TemporaryFile() as capture:
        os.dup2(capture.fileno(), 2)
        try:
            call()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        capture.seek(0)
        return capture.read().decode("utf-8", "replace")


@cache
def known_cpu_names(triple: str) -> frozenset[str]:
    """The CPU names LLVM knows for ``triple``; empty when it does not say.

    LLVM only warns about a CPU name it does not know ("is not a recognized processor") and goes on, to abort
    the process later in code generation for some of them. Asked for a target machine for the CPU ``help``, it
    prints the names instead, as ``llc -mcpu=help`` does, on the process's stderr: they are read back from a
    temporary file put in place of file descriptor 2 meanwhile."""
    llvm = _llvm()
    target = llvm.Target.from_triple(triple)
    text = stderr_of(lambda: target.create_target_machine(cpu="help"))
    if text is None:  # no stderr to borrow: the names are unknown, and LLVM has the last word
        return frozenset()
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
_A80 = ("fp-armv8", "neon")
_A82 = _A80 + ("crc", "dotprod", "fullfp16", "lse", "rcpc", "rdm")
_A82_SVE = _A82 + ("sve",)
_A90 = _A82_SVE + ("sve2",)
CPU_LEVELS: dict[str, tuple[str, ...]] = {
    "generic": (),
    "x86-64": (),
    "x86-64-v2": _V2,
    "x86-64-v3": _V3,
    "x86-64-v4": _V4,
    "armv8-a": _A80,
    "armv8.2-a": _A82,
    "armv8.2-a+sve": _A82_SVE,
    "armv9-a": _A90,
}
"""The CPU variants an image can hold (``[tool.aot.cpu] variants``), each with the features it requires in LLVM's
spelling: the x86-64 psABI microarchitecture levels, and a ladder of aarch64 levels. ``armv8-a`` is the baseline
every aarch64 Linux machine has (FP and Advanced SIMD); ``armv8.2-a`` adds what every Cortex-A55/A76 and Neoverse-N1
class core has (Graviton2, Ampere Altra, Raspberry Pi 5, Apple M1): CRC32, the dot product, half precision, LSE
atomics, RCpc loads and rounding doubling multiplies (more than the architecture makes mandatory at v8.2, which is
CRC32, LSE and RDM only); ``armv8.2-a+sve`` adds SVE (Neoverse-V1: Graviton3; not A64FX, which lacks the dot product
and RCpc); ``armv9-a`` adds SVE2 as well (Neoverse-N2/V2: Graviton4, Grace; Cortex-A510/A710 and later). Only
features the kernel reports (``/proc/cpuinfo``'s ``Features``) are required, so the image's gate can check each; the
aarch64 levels are LLVM's ``generic`` CPU with these features, the x86-64 levels LLVM's CPUs of their names."""

_LEVEL_ARCH = {name: "x86_64" for name in ("x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4")} | {
    name: "aarch64" for name in ("armv8-a", "armv8.2-a", "armv8.2-a+sve", "armv9-a")
}
_ARCH_NAMES = {"amd64": "x86_64", "arm64": "aarch64"}  # (a triple's or a machine's other spellings)


def triple_arch(triple: str) -> str:
    """The architecture of a target triple (``x86_64``, ``aarch64``; ``arm64-apple-darwin`` is ``aarch64``)."""
    arch = triple.split("-", 1)[0]
    return _ARCH_NAMES.get(arch, arch)


def levels_for(triple: str) -> tuple[str, ...]:
    """The CPU levels a build for ``triple`` can make (``generic``, and those of its architecture)."""
    arch = triple_arch(triple)
    return tuple(name for name in CPU_LEVELS if _LEVEL_ARCH.get(name, arch) == arch)


def level_cpu(name: str) -> str:
    """The LLVM CPU a CPU level is compiled for: the level itself on x86-64 (LLVM's CPUs ``x86-64-v3`` …),
    ``generic`` with the level's features on aarch64 (LLVM names cores there, not levels)."""
    return "generic" if _LEVEL_ARCH.get(name) == "aarch64" else name


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
    def variant(cls, name: str, opt: int = 3, triple: str | None = None) -> CpuTarget:
        """The CPU variant ``name`` (a key of ``CPU_LEVELS``) for ``triple`` (this process's by default), its
        required features explicit. A level of another architecture is a ValueError naming those it has."""
        triple = triple or _llvm().get_process_triple()
        if name not in levels_for(triple):
            raise ValueError(
                f"cpu variant {name!r} is not a level of {triple} (its levels: {', '.join(levels_for(triple))})"
            )
        return cls(triple, level_cpu(name), ",".join("+" + f for f in CPU_LEVELS[name]), opt)

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
