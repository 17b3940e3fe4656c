"""The typed IR: ops in basic blocks, a builder, a printer and a parser that are inverses, a verifier, and
control-flow-graph helpers (``cfg``)."""

from .builder import Builder
from .cfg import block_successors, natural_loop, predecessors, reachable, successor_map
from .function import Block, Function
from .ops import *  # noqa: F401,F403 - the op classes are the IR's vocabulary
from .ops import ALL_OPS, OPS_BY_NAME, Op, Var, successors, uses
from .parser import IRParseError, parse_function
from .printer import print_function, print_op
from .verifier import IRVerifyError, verify

__all__ = [
    "ALL_OPS",
    "OPS_BY_NAME",
    "Block",
    "Builder",
    "Function",
    "IRParseError",
    "IRVerifyError",
    "Op",
    "Var",
    "block_successors",
    "natural_loop",
    "parse_function",
    "predecessors",
    "print_function",
    "print_op",
    "reachable",
    "successor_map",
    "successors",
    "uses",
    "verify",
]
