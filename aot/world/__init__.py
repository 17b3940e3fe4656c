"""The world: methods, their definitions over time, instances, edges and validation (pure Python)."""

from .methods import MethodDef, MethodOptions, MethodTable, method_key

__all__ = ["MethodDef", "MethodOptions", "MethodTable", "method_key"]
