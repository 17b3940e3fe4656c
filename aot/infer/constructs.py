"""Compile-time answers of the small constructs: ``isinstance`` from the inferred type, string constants,
and the rules of the intrinsics the frontend's loops use (``iter.len``, ``operator.index``).

    isinstance(x, (int, float))   with x: f64          →  True, folded (the other branch is never compiled)
    MODE == "fast"                with MODE = "fast"   →  True, folded (a string is never a runtime value)

A string is a compile-time value only (``PyValueType`` of the interned text): it may be compared with another
string, tested for truth, named in ``isinstance`` or passed where a constant is expected; anything that
would make it a runtime value is a ``RuleError`` saying so.
"""

from __future__ import annotations

import builtins
import operator
import sys
from typing import Any

from ..intrinsics.spec import IntrinsicSpec, Site
from ..ir.ops import CmpKind, Intrinsic
from ..types import BOOL, F64, I64, NONE, ArrayType, ListType, PyValueType, ScalarType, TupleType, Type, arith_type
from .rules import RuleError

STRINGS_ARE_CONSTANTS = (
    "strings are compile-time constants only in compiled code (messages, comparisons with another string "
    "constant, arguments that must be constants); they cannot be runtime values"
)


def is_string(t: Type) -> bool:
    return isinstance(t, PyValueType) and isinstance(t.value, str)


def string_type(value: str) -> PyValueType:
    """The type of a string constant: the interned text, so equal texts have one type."""
    return PyValueType(sys.intern(value))


# ------------------------------------------------------------------------------------------ intrinsics
def loop_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """The loop intrinsics (``iter.len``, ``operator.index``, ``flat.len``, ``flat.item``)."""
    return intrinsic_type(spec.fn, args[0])


def intrinsic_type(fn: Intrinsic, arg: Type) -> Type:
    if fn in (Intrinsic.FLAT_LEN, Intrinsic.FLAT_ITEM):  # (for x in a.flat: the elements of any array, C order)
        if not isinstance(arg, ArrayType):
            raise RuleError(f"'.flat' is supported on arrays only (iterated by a for loop), not on {_words(arg)}")
        return I64 if fn is Intrinsic.FLAT_LEN else arg.dtype
    if fn is Intrinsic.ITER_LEN:
        if isinstance(arg, TupleType):
            return I64
        if isinstance(arg, (ArrayType, ListType)):  # (an N-D array gives its rows: views, aot/infer/views.py)
            return I64
        raise RuleError(f"cannot iterate over {_words(arg)}: a for loop takes range(), an array, a tuple or a list")
    assert fn is Intrinsic.INDEX
    if isinstance(arg, ScalarType) and (arg.is_int or arg.kind == "b"):
        return arith_type(arg)
    raise RuleError(f"{_words(arg)} cannot be interpreted as an integer (enumerate()'s start must be an int)")


def _words(t: Type) -> str:
    if is_string(t):
        return "a string"
    return f"a value of type {t}"


# ------------------------------------------------------------------------------------------ isinstance
_CLASSES = (int, float, bool, complex, str, tuple, type(None))


def _classes(t: Type) -> tuple[type, ...]:
    """The classes named by ``isinstance``'s second argument (a class or a tuple of them)."""
    if isinstance(t, PyValueType) and t.value in _CLASSES:
        return (t.value,)
    if isinstance(t, TupleType):
        return tuple(c for item in t.items for c in _classes(item))
    raise RuleError(
        "isinstance() in compiled code takes int, float, bool, complex, str, tuple or type(None), "
        "or a tuple of them, as its second argument"
    )


def isinstance_value(value: Type, classes: Type) -> bool:
    """``isinstance(x, classes)`` for every ``x`` of the inferred type ``value``, decided at compile time.

    ``i64`` stands for Python's ``int`` and ``f64`` for ``float`` (a NumPy ``int64`` scalar would not be an
    ``int`` in Python: SUBSET.md lists the difference); other widths are ambiguous and rejected."""
    wanted = _classes(classes)
    if isinstance(value, PyValueType):
        return isinstance(value.value, wanted)
    if value == NONE:
        return type(None) in wanted
    if isinstance(value, TupleType):
        return tuple in wanted
    if isinstance(value, ArrayType):
        return False  # an array is none of the classes above
    if isinstance(value, ScalarType):
        if value == BOOL:
            return bool in wanted or int in wanted
        if value == I64:
            return int in wanted
        if value == F64:
            return float in wanted
        raise RuleError(
            f"isinstance() of a {value} value is ambiguous (Python's answer depends on whether it is a NumPy "
            f"scalar); compare with int or float only on int, float and bool values"
        )
    raise RuleError(f"isinstance() is not supported on {value}")


def isinstance_call(argtypes: tuple[Type, ...]) -> bool:
    if len(argtypes) != 2:
        raise RuleError(f"isinstance() takes 2 arguments, got {len(argtypes)}")
    return isinstance_value(argtypes[0], argtypes[1])


def is_isinstance(callee: Any) -> bool:
    return callee is builtins.isinstance


# ------------------------------------------------------------------------------------------ strings
_COMPARE = {
    CmpKind.EQ: operator.eq,
    CmpKind.NE: operator.ne,
    CmpKind.LT: operator.lt,
    CmpKind.LE: operator.le,
    CmpKind.GT: operator.gt,
    CmpKind.GE: operator.ge,
}


def compare_constants(op: CmpKind, lhs: Type, rhs: Type) -> bool | None:
    """A comparison with a compile-time operand, folded: two strings compare as Python compares them; None
    when no operand is a compile-time value (an ordinary comparison)."""
    if not (isinstance(lhs, PyValueType) or isinstance(rhs, PyValueType)):
        return None
    if is_string(lhs) and is_string(rhs):
        assert isinstance(lhs, PyValueType) and isinstance(rhs, PyValueType)
        return bool(_COMPARE[op](lhs.value, rhs.value))
    if is_string(lhs) or is_string(rhs):
        raise RuleError(f"a string can only be compared with another string constant; {STRINGS_ARE_CONSTANTS}")
    raise RuleError("modules, functions and classes cannot be compared in compiled code")


def tuple_type(items: tuple[Type, ...]) -> TupleType:
    """A tuple holds runtime values or compile-time values (``(int, float)`` for ``isinstance``), not both."""
    t = TupleType(items)
    if not t.is_runtime and any(i.is_runtime for i in items):
        raise RuleError(
            f"a tuple cannot hold both runtime values and compile-time values (modules, functions, classes, "
            f"strings): {t}"
        )
    return t


def not_a_value(t: Type) -> str | None:
    """What to say when the compile-time value of type ``t`` is used as a runtime value, or None."""
    if is_string(t):
        return STRINGS_ARE_CONSTANTS
    return None
