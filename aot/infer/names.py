"""The transfer rules of names: a global (``load_global``), an attribute (``get_attr``), and what a named
Python value is to compiled code (``classify``).

    N = 8           → load_global N: i64, a constant folded in          (a ``global`` edge)
    math.sqrt       → getattr %math "sqrt": a compile-time value        (a ``lookup`` edge), called next
    a.shape         → getattr %a "shape": the intrinsic array.shape
    a.sum           → a NumPy method bound to ``a`` (``npfuncs.BoundMethod``), called next

Each rule gives a ``Transfer`` (``aot.infer.instances``): the type, the op's meaning (a constant, an
intrinsic, or None for a compile-time value the op only names) and the edges the resolution relied on.
"""

from __future__ import annotations

import math
from typing import Any

from ..intrinsics import registry
from ..intrinsics.spec import PLAIN, Effect
from ..ir import Const, GetAttr, IntrinsicCall, LoadGlobal, Op
from ..types import BOTTOM, I64, ArrayType, ListType, PyValueType, ScalarType, describe
from ..world.edges import Edge, EdgeKind
from . import arrays, constructs, lists, npfuncs, views
from .body import BodyState
from .instances import Transfer, const_type, is_constant
from .rules import RuleError

_MISSING = object()


def load_global(body: BodyState, op: LoadGlobal, label: str, index: int) -> Transfer:
    value = body.frame.method.resolve_name(op.name)
    if value is _MISSING or value is NameError:
        raise RuleError(f"name '{op.name}' is not defined")
    module = getattr(body.frame.method, "module", "?")
    return classify(body, value, f"{module}:{op.name}", op)


def classify(body: BodyState, value: Any, where: str, op: Op) -> Transfer:
    """The type of a named Python value, the edge it records and how the op resolves."""
    dest = op.dest_var
    assert dest is not None
    if isinstance(value, str):  # a compile-time constant only (aot/infer/constructs.py)
        return Transfer(constructs.string_type(value), None, (Edge(EdgeKind.GLOBAL, where, value),))
    if is_constant(value):
        if dest.name in body.single_def:
            body.consts[dest.name] = value
        edge = Edge(EdgeKind.GLOBAL, where, value)
        return Transfer(const_type(value), Const(dest, value, op.span), (edge,))  # type: ignore[arg-type]
    numpy_scalar = npfuncs.scalar_value(value)
    if numpy_scalar is not None:  # np.float32(1e-7) at module level: folded like a float, with its type
        if dest.name in body.single_def:
            body.consts[dest.name] = numpy_scalar[1]
            body.typed_consts.add(dest.name)
        edge = Edge(EdgeKind.GLOBAL, where, npfuncs.scalar_text(value))
        return Transfer(numpy_scalar[0], Const(dest, numpy_scalar[1], op.span), (edge,))
    if isinstance(value, (int, float, str, bytes, list, dict, set, tuple)) or (
        hasattr(value, "__array__") and not isinstance(value, type)  # (NumPy's scalar types have one)
    ):
        kind = type(value).__name__
        raise RuleError(
            f"'{where.split(':', 1)[1]}' is a {kind}; compiled code can only read int, float, "
            f"bool and tuples of them from globals (pass other values as arguments)"
        )
    if not _is_compile_time_value(value):
        raise RuleError(
            f"'{where.split(':', 1)[1]}' is a {type(value).__name__} object; compiled code can "
            f"only use modules, functions, types and int/float/bool constants from globals"
        )
    intrinsic = body.inf.table.intrinsic_for(value)
    method = body.inf.table.method_for(value) if intrinsic is None else None
    edge = Edge(EdgeKind.LOOKUP, where, method.key if method is not None else describe(value))
    return Transfer(PyValueType(value), None, (edge,))  # (compile-time only)


def get_attr(body: BodyState, op: GetAttr, label: str, index: int) -> Transfer:
    obj = body.t(op.obj)
    if obj is BOTTOM:
        return Transfer(BOTTOM)
    method = registry.METHODS.get(op.attr) if isinstance(obj, ArrayType) else None
    if isinstance(obj, ArrayType) and (
        op.attr == "dtype" or (method is not None and method.fn in registry.ALLOCATIONS)
    ):  # compile-time values: a dtype, a method until it is called
        if op.attr == "dtype":
            return Transfer(PyValueType(arrays.ArrayDtype.get(obj.dtype)), None)
        return Transfer(PyValueType(arrays.ArrayMethod.get(op.attr, op.obj.name)), None)
    if isinstance(obj, ArrayType):
        if method is not None and method.effect is Effect.VIEWS:  # called by call_value, which finds the
            return Transfer(PyValueType(method.fn), None)  # array through this op
        if op.attr in views.NOT_VIEWS:
            raise RuleError(views.NOT_VIEWS[op.attr])
        numpy_attr = numpy_array_attr(body, op, obj)
        if numpy_attr is not None:
            return numpy_attr
        attribute = registry.ATTRIBUTES.get(op.attr)
        if attribute is None:
            raise RuleError(
                f"arrays have no attribute '{op.attr}' in compiled code (use shape, size, ndim, dtype, "
                f"itemsize, T, reshape, ravel, or the methods {', '.join(registry.BOUND_METHODS)})"
            )
        meaning = IntrinsicCall(op.dest, attribute.fn, (op.obj,), op.span)
        return Transfer(attribute.rule(attribute, (obj,), PLAIN), meaning)
    if isinstance(obj, PyValueType) and isinstance(obj.value, type(math)):
        container = obj.value
        value = getattr(container, op.attr, _MISSING)
        if value is _MISSING:
            raise RuleError(f"module {getattr(container, '__name__', '?')} has no attribute '{op.attr}'")
        owner = getattr(container, "__name__", "?")
        return classify(body, value, f"{owner}:{op.attr}", op)
    if isinstance(obj, ListType):
        raise RuleError(lists.attribute_message(op.attr))
    what = user_words(obj.value) if isinstance(obj, PyValueType) else f"a {obj} value"
    raise RuleError(
        f"attribute access on {what} is not supported; only arrays (shape, size, ndim) "
        f"and modules have attributes in compiled code"
    )


def numpy_array_attr(body: BodyState, op: GetAttr, obj: ArrayType) -> Transfer | None:
    """``a.itemsize`` (a constant), ``a.dtype`` (a compile-time value) and ``a.sum`` … (a method, called
    next); None for the other attributes (``aot.infer.npfuncs``)."""
    if op.attr == "itemsize":
        if op.dest.name in body.single_def:
            body.consts[op.dest.name] = obj.dtype.itemsize
        return Transfer(I64, Const(op.dest, obj.dtype.itemsize, op.span))
    if op.attr in registry.BOUND_METHODS:
        return Transfer(PyValueType(npfuncs.bound_method(registry.BOUND_METHODS[op.attr].fn, op.obj)), None)
    return None


def _is_compile_time_value(value: Any) -> bool:
    """Modules, functions, builtins, methods and types may be named in compiled code (never passed)."""
    if isinstance(value, (type(math), type, ScalarType)) or callable(getattr(value, "__aot_method__", None)):
        return True
    if registry.numpy_function(value) is not None or arrays.dtype_of(value) is not None:
        return True
    if getattr(value, "__aot_method__", None) is not None:
        return True
    return isinstance(value, (type(describe), type(len)))


def user_words(value: Any) -> str:
    """A compile-time object as a user would name it: ``the class Point``, ``the function f``."""
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if isinstance(value, type):
        return f"the class {name}"
    if callable(value) and name:
        return f"the function {name}"
    return f"a {type(value).__name__} object"
