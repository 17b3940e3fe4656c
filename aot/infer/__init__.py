"""Type inference: the lattice rules (``rules``), the transfer rule of each op (``transfer``), one body's
fixed point (``body``) and the interprocedural solver (``solver``); what they make is in ``instances``."""

from typing import TYPE_CHECKING, Any

from ..world.edges import Edge
from .instances import FixedPoint, InferredInstance, MethodSource, MethodTable, const_type, is_constant
from .rules import RuleError

if TYPE_CHECKING:
    from .solver import Inferencer


def __getattr__(name: str) -> Any:
    """``Inferencer`` is imported when first asked for: the solver reaches the intrinsics' lowerings, hence
    llvmlite, and a runtime-only install reads instances (``InferredInstance``, to check stored IR) without it."""
    if name == "Inferencer":
        from .solver import Inferencer

        return Inferencer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Edge",
    "FixedPoint",
    "InferredInstance",
    "Inferencer",
    "MethodSource",
    "MethodTable",
    "RuleError",
    "const_type",
    "is_constant",
]
