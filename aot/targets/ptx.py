"""The PTX target: NVIDIA GPUs through LLVM's NVPTX back end, with libdevice as the maths library.

    target = PtxTarget(arch="sm_80")
    target.triple                              → "nvptx64-nvidia-cuda"
    target.math_symbol(Intrinsic.SIN, F64)     → "__nv_sin"      (F32: "__nv_sinf")
    target.overlay(Intrinsic.SQRT, F32)        → "__nv_sqrtf"    (an edge of each instance using it)
    target.target_machine()                    → an NVPTX TargetMachine emitting ``.target sm_80``

Compiled code on the GPU raises no Python exceptions: an error stores its code in the module's status
word and returns status 1 (see ``aot.codegen.context``). Importing this module does not import llvmlite.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import ClassVar

from ..ir.ops import FLOAT_MATH_1, FLOAT_MATH_2, Intrinsic
from ..types import F32, F64, ScalarType
from .base import Target

PTX_TRIPLE = "nvptx64-nvidia-cuda"
PTX_DATA_LAYOUT = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
"""LLVM's layout for 64-bit NVPTX (generic pointers are 64-bit; addrspace 6 pointers are 32-bit)."""

_LIBDEVICE_MATH = (FLOAT_MATH_1 | FLOAT_MATH_2) - {Intrinsic.COPYSIGN}
_ARCH = re.compile(r"sm_(\d+)[af]?\Z")

# LLVM operations NVPTX cannot lower exactly (it has no pow; its frem is x - trunc(x / y) * y, which is
# not C's fmod): libdevice implements them instead.
_LLVM_TO_LIBDEVICE = {"llvm.pow": "pow", "frem": "fmod"}
_SPECIAL_REGISTERS = {
    Intrinsic.THREAD_ID: "tid",
    Intrinsic.BLOCK_ID: "ctaid",
    Intrinsic.BLOCK_DIM: "ntid",
    Intrinsic.GRID_DIM: "nctaid",
}


@cache
def _llvm():
    import llvmlite.binding as llvm

    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    return llvm


@dataclass(frozen=True)
class PtxTarget(Target):
    """One GPU architecture (``sm_80``, ``sm_90`` …); ``cpu`` is always the arch."""

    triple: str = PTX_TRIPLE
    cpu: str = ""
    features: str = ""
    opt: int = 3
    arch: str = "sm_80"
    OWNER: ClassVar[str] = "ptx"

    def __post_init__(self) -> None:
        if not isinstance(self.arch, str) or not _ARCH.match(self.arch):
            raise ValueError(f"invalid GPU architecture {self.arch!r} (expected a name such as 'sm_80')")
        if int(_ARCH.match(self.arch).group(1)) < 60:  # type: ignore[union-attr]
            raise ValueError(f"GPU architecture {self.arch} is too old: aot needs sm_60 or newer (atomic adds on f64)")
        object.__setattr__(self, "cpu", self.arch)

    @property
    def data_layout(self) -> str:
        return PTX_DATA_LAYOUT

    def math_symbol(self, fn: Intrinsic, t: ScalarType) -> str:
        """libdevice's function for a ``math`` intrinsic: ``__nv_sin`` (f64), ``__nv_sinf`` (f32)."""
        name = fn.value.split(".", 1)[1]
        return f"__nv_{name}" + ("f" if t.bits == 32 else "")

    def overlay(self, fn: Intrinsic, t: ScalarType) -> str | None:
        """The libdevice function a ``math`` intrinsic computing in ``t`` calls on this owner, else None
        (``floor``, ``copysign``, ``isnan`` … are single instructions; f64 ``hypot`` is aot's own)."""
        if fn not in _LIBDEVICE_MATH or not t.is_float or (fn is Intrinsic.HYPOT and t.bits == 64):
            return None
        return self.math_symbol(fn, t)

    def overlay_holds(self, target: str, symbol: str) -> bool:
        """Whether an ``overlay`` edge (``"math.sin(f64)"`` → ``"__nv_sin"``) still resolves the same way."""
        name, _, rest = target.partition("(")
        t = {"f32": F32, "f64": F64}.get(rest.rstrip(")"))
        try:
            fn = Intrinsic(name)
        except ValueError:
            return False
        return t is not None and self.overlay(fn, t) == symbol

    def llvm_intrinsic_symbol(self, name: str, bits: int) -> str | None:
        """The libdevice function replacing an LLVM intrinsic NVPTX cannot select (``llvm.pow``), or None."""
        base = _LLVM_TO_LIBDEVICE.get(name)
        if base is None:
            return None
        return f"__nv_{base}" + ("f" if bits == 32 else "")

    def math_intrinsic(self, fn: Intrinsic, t: ScalarType) -> str | None:
        """None: ``sqrt`` and ``fabs`` are libdevice's too, as the instances' ``overlay`` edges recorded."""
        return None

    @property
    def raises_python_exceptions(self) -> bool:
        """False: an error stores its code in the module's status word (no Python on the device)."""
        return False

    @property
    def has_host_runtime(self) -> bool:
        """False: kernels run on the device, without the C library, CPython or aot's threads."""
        return False

    @property
    def checks_stores_as_numpy(self) -> bool:
        """False: a store into an integer array converts plainly (integers wrap, floats truncate), unchecked."""
        return False

    def gpu_index_register(self, fn: Intrinsic, axis: int) -> str | None:
        """NVVM's special register: ``llvm.nvvm.read.ptx.sreg.tid.x`` for ``thread_id(0)``."""
        return f"llvm.nvvm.read.ptx.sreg.{_SPECIAL_REGISTERS[fn]}.{'xyz'[axis]}"

    @property
    def barrier_intrinsic(self) -> str | None:
        return "llvm.nvvm.barrier.cta.sync.aligned.all"  # barrier 0, all threads of the block

    @property
    def global_address_space(self) -> int:
        return 1

    @property
    def shared_address_space(self) -> int | None:
        return 3

    def target_machine(self):
        llvm = _llvm()
        target = llvm.Target.from_triple(self.triple)
        return target.create_target_machine(cpu=self.arch, features=self.features, opt=self.opt)
