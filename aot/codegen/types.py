"""How IR types are laid out in LLVM.

f64 → double      i32 → i32      boolean → i1 (i8 in memory)
f64[:, :] → {ptr, [2 x i64], [2 x i64], ptr, ptr}   (data, shape, byte strides, owner, parent: see arrays.py)
(f64, i64) → {double, i64}
list[f64] → ptr   (its block: lists.py)
"""

from __future__ import annotations

import hashlib

from llvmlite import ir

from ..types import ArrayType, ListType, OptionalType, ScalarType, TupleType, Type

I1 = ir.IntType(1)
I8 = ir.IntType(8)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
F32 = ir.FloatType()
F64 = ir.DoubleType()
PTR = I8.as_pointer()
STATUS = I32
"""Every compiled function returns a status: 0 ok, 1 an exception is set."""


def value_type(t: Type) -> ir.Type:
    """The LLVM type of a value of type ``t`` in registers."""
    if isinstance(t, ScalarType):
        if t.kind == "b":
            return I1
        if t.kind == "n":
            return I8
        if t.kind == "f":
            return F32 if t.bits == 32 else F64
        return ir.IntType(t.bits)
    if isinstance(t, ArrayType):
        return ir.LiteralStructType(
            [memory_type(t.dtype).as_pointer(), ir.ArrayType(I64, t.ndim), ir.ArrayType(I64, t.ndim), PTR, PTR]
        )
    if isinstance(t, TupleType):
        return ir.LiteralStructType([value_type(i) for i in t.items])
    if isinstance(t, ListType):  # (a pointer to its counted block: aot.codegen.lists)
        return PTR
    if isinstance(t, OptionalType):  # (aot.codegen.optional)
        return ir.LiteralStructType([I1, value_type(t.inner)])
    raise TypeError(f"no LLVM type for {t}")


def memory_type(t: ScalarType) -> ir.Type:
    """The LLVM type of an array element in memory (booleans are bytes)."""
    return I8 if t.kind == "b" else value_type(t)


def symbol_name(key: str, argtypes: tuple[Type, ...], owner: str = "cpu") -> str:
    """A stable, readable symbol for a code instance: ``aot_numkit_core__clamp_3f2a…``."""
    readable = "".join(ch if ch.isalnum() else "_" for ch in key.replace(":", "__"))
    digest = hashlib.sha256(f"{owner}|{key}|{argtypes}".encode()).hexdigest()[:12]
    return f"aot_{readable}_{digest}"
