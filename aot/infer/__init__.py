"""Type inference: the lattice rules (``rules``) and the interprocedural worklist solver (``solver``)."""

from ..world.edges import Edge
from .rules import RuleError
from .solver import FixedPoint, Inferencer, InferredInstance, MethodSource, MethodTable, const_type, is_constant

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
