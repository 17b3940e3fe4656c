"""Type inference: the lattice rules (``rules``), the transfer rule of each op (``transfer``), one body's
fixed point (``body``) and the interprocedural solver (``solver``); what they make is in ``instances``."""

from ..world.edges import Edge
from .instances import FixedPoint, InferredInstance, MethodSource, MethodTable, const_type, is_constant
from .rules import RuleError
from .solver import Inferencer

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
