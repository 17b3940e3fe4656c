"""What a code generation target is: a small interface with documented defaults.

    target = CpuTarget.host()
    tm = target.target_machine()          # llvmlite TargetMachine for this triple/cpu/features
    target.math_symbol(Intrinsic.SIN, F64) → "sin"      (PTX: "__nv_sin")

A target is a frozen value with a ``cache_key()``; owners (``cpu``, ``ptx``) partition compiled code.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Optional

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

    def overlay(self, fn: Intrinsic, t: ScalarType) -> Optional[str]:
        """A symbol an intrinsic resolves to only on this owner (recorded as an edge), or None."""
        return None

    def llvm_intrinsic_symbol(self, name: str, bits: int) -> Optional[str]:
        """A library function replacing the LLVM operation ``name`` (``llvm.pow``, ``frem``) on floats of
        ``bits`` bits, where the target cannot lower it exactly; None to use LLVM's."""
        return None

    @property
    def raises_python_exceptions(self) -> bool:
        """Whether compiled code sets Python exceptions (CPU) or only returns an error status (GPU)."""
        return True
