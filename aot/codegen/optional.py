"""Optional values in LLVM: ``f64?`` is ``{i1 is_none, double value}`` (``aot.infer.optional`` says where a
variable is optional and where a None test narrowed it).

    %tol: f64? = copy %c (f64)        →  store {i1 0, double %c}
    %tol: f64? = copy %none (none)    →  store {i1 1, double 0.0}
    %t.some: f64 = convert %tol       →  extractvalue %tol, 1      (only where a None test proved a value)
    %b = intrinsic is_none, [%tol]    →  extractvalue %tol, 0
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from ..types import NONE, OptionalType, Type
from . import types as lt
from .context import Emitter
from .types import value_type


def is_optional_pair(src: Type, dst: Type) -> bool:
    """Whether converting ``src`` to ``dst`` involves an optional (``convert`` below does it)."""
    return isinstance(src, OptionalType) or isinstance(dst, OptionalType)


def convert(
    em: Emitter, value: ir.Value, src: Type, dst: Type, coerce: Callable[[Emitter, ir.Value, Type, Type], ir.Value]
) -> ir.Value:
    """``value`` of type ``src`` as a ``dst``, where one of them is optional (``coerce`` converts the values)."""
    b = em.b
    if isinstance(dst, OptionalType):
        if isinstance(src, OptionalType):
            flag, inner = b.extract_value(value, 0), coerce(em, b.extract_value(value, 1), src.inner, dst.inner)
        elif src == NONE:
            flag, inner = ir.Constant(lt.I1, 1), ir.Constant(value_type(dst.inner), None)
        else:
            flag, inner = ir.Constant(lt.I1, 0), coerce(em, value, src, dst.inner)
        out = b.insert_value(ir.Constant(value_type(dst), ir.Undefined), flag, 0)
        return b.insert_value(out, inner, 1)
    assert isinstance(src, OptionalType)
    if dst == NONE:
        return ir.Constant(lt.I8, 0)
    return coerce(em, b.extract_value(value, 1), src.inner, dst)  # (narrowed: a None test proved a value)


def is_none(em: Emitter, value: ir.Value, t: Type) -> ir.Value:
    """``x is None`` on a value of type ``t``: the flag of an optional, else known from the type."""
    if isinstance(t, OptionalType):
        return em.b.extract_value(value, 0)
    return ir.Constant(lt.I1, 1 if t == NONE else 0)
