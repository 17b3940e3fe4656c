"""Python source → untyped IR (``lower_function``), rejecting what SUBSET.md leaves out."""

from .lower import BUILTIN_EXCEPTIONS, lower_function
from .source import parse_source

__all__ = ["BUILTIN_EXCEPTIONS", "lower_function", "parse_source"]
