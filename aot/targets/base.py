"""What a code generation target is: a small interface with documented defaults.

    target = CpuTarget.host()
    tm = target.target_machine()          # llvmlite TargetMachine for this triple/cpu/features
    target.math_symbol(Intrinsic.SIN, F64) → "sin"      (PTX: "__nv_sin")
    target.math_intrinsic(Intrinsic.SQRT, F64) → "llvm.sqrt"   (PTX: None, libdevice's __nv_sqrt instead)
    target.gpu_index_register(Intrinsic.THREAD_ID, 0) → None  (PTX: "llvm.nvvm.read.ptx.sreg.tid.x")

A target is a frozen value with a ``cache_key()``; owners (``cpu``, ``ptx``) partition compiled code.
Code generation never asks which target it has: where targets differ, it calls one of the hooks below, and a
new target overrides the hooks that differ from these defaults (those of a C-ABI CPU with a libm, whose
``aot.gpu`` kernels run over an emulated grid). The hooks only answer with names and numbers, so this package
does not import llvmlite.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..ir.ops import Intrinsic
from ..types import ScalarType


@dataclass(frozen=True)
class Target:
    """Defaults suit a C-ABI target with a libm; subclasses override what differs."""

    triple: str
    cpu: str
    features: str
    opt: int = 3
    OWNER: ClassVar[str] = "abstract"

    @property
    def owner(self) -> str:
        return self.OWNER

    def cache_key(self) -> str:
        return f"{self.owner}|{self.triple}|{self.cpu}|{self.features}|O{self.opt}"

    def math_symbol(self, fn: Intrinsic, t: ScalarType) -> str:
        """The external function implementing a ``math`` intrinsic for values of type ``t``."""
        name = fn.value.split(".", 1)[1]
        name = {"fabs": "fabs", "pow": "pow"}.get(name, name)
        return name + ("f" if t.bits == 32 else "")

    def overlay(self, fn: Intrinsic, t: ScalarType) -> str | None:
        """A symbol an intrinsic resolves to only on this owner (recorded as an edge), or None."""
        return None

    def llvm_intrinsic_symbol(self, name: str, bits: int) -> str | None:
        """A library function replacing the LLVM operation ``name`` (``llvm.pow``, ``frem``) on floats of
        ``bits`` bits, where the target cannot lower it exactly; None to use LLVM's."""
        return None

    def math_intrinsic(self, fn: Intrinsic, t: ScalarType) -> str | None:
        """The LLVM intrinsic (``llvm.sqrt``, without its type suffix) that computes a ``math`` function exactly on
        this target, or None to call ``math_symbol``'s function. By default ``sqrt`` and ``fabs``, which are
        exact in IEEE arithmetic and which LLVM vectorises; a target whose ``overlay`` names a function for an
        intrinsic must return None for it, so that the code calls what the instance's edge recorded."""
        return _EXACT_LLVM_MATH.get(fn)

    # ------------------------------------------------------------------ errors and the host runtime
    @property
    def raises_python_exceptions(self) -> bool:
        """How compiled code raises an error. True (the default): it sets the Python exception, its message
        formatted with the run-time values where NumPy's has them ("Python integer 300 out of bounds for
        uint8"), and returns status 1. False (a device): it records the error's code (the exception and its
        message without the values, in the module's error table) in the module's status word, the first error
        winning, and returns status 1; the launcher raises it after the launch. Codegen asks this through
        ``aot.codegen.context.Emitter.raise_`` (and the module's ``aot_raise`` helper); what else a device lacks
        is ``has_host_runtime``."""
        return True

    @property
    def has_host_runtime(self) -> bool:
        """Whether compiled code runs in the Python process with aot's runtime around it: the C library
        (``malloc``/``free``, so that arrays and lists are allocated and reference-counted and copies go
        through temporaries; ``snprintf``/``strtod``, so that ``round(x, n)`` is CPython's), the CPython API
        (Ctrl-C polled at loops' back edges, recursion guarded by ``sys.getrecursionlimit()``) and aot's own
        threads (``prange`` loops run on a pool). True by default; False on a device, whose kernels allocate
        nothing (owners are NULL), round by scaling, poll no signal, guard no recursion and run ``prange``
        serially."""
        return True

    @property
    def checks_stores_as_numpy(self) -> bool:
        """Whether a number stored into an integer array is checked as NumPy 2 checks it (a Python int or
        float that does not fit raises ``OverflowError``, NaN ``ValueError``: ``aot.codegen.casts.store_convert``).
        True by default; False on a device, where stores convert plainly (integers wrap), without a check."""
        return True

    # ------------------------------------------------------------------ aot.gpu intrinsics and memory
    def gpu_index_register(self, fn: Intrinsic, axis: int) -> str | None:
        """The LLVM intrinsic (``i32 ()``) reading ``aot.gpu.thread_id``, ``block_id``, ``block_dim`` or ``grid_dim``
        on ``axis`` (0: x) from the hardware, or None where kernels run over an emulated grid whose loop stores
        the indices in the module (the default; outside a launch they raise ``RuntimeError``)."""
        return None

    @property
    def barrier_intrinsic(self) -> str | None:
        """The LLVM intrinsic (``void (i32 0)``) of ``aot.gpu.sync_threads()``, or None where threads have no
        barrier (the default: calling it raises ``RuntimeError``). Functions of a target with barriers are
        ``convergent``: LLVM must not move a call that may reach one across branches."""
        return None

    @property
    def global_address_space(self) -> int:
        """The LLVM address space of memory every thread sees: kernel array arguments and the error status word."""
        return 0

    @property
    def shared_address_space(self) -> int | None:
        """The LLVM address space of ``aot.gpu.shared_array`` (memory shared by a block's threads), or None where
        there is none (the default: calling it raises ``RuntimeError``)."""
        return None


_EXACT_LLVM_MATH = {Intrinsic.SQRT: "llvm.sqrt", Intrinsic.FABS: "llvm.fabs"}
