"""Typing lists: ``[a, b]``, ``[]``, ``lst.append(x)``, ``lst.pop([i])``, ``lst[i]``, ``len(lst)`` and
``np.array(lst)`` / ``np.asarray(lst)``.

    list_type(Intrinsic.LIST_NEW, (f64, f64))     → list[f64]
    list_type(Intrinsic.LIST_NEW, ())             → list[bottom]  (the variable's later appends type it)
    list_type(Intrinsic.LIST_APPEND, (list[bottom], f64)) → list[f64]

A list holds one item type: a number, a tuple, an array or a list. The frontend assigns ``lst.append(x)``'s
result (the list itself) back to ``lst``, so the variable's type is the join of its literal and its appends:
that is how ``out = []`` gets its item type. Items of another type are a ``CompileError``, an int put into a
list of floats too (Python would keep the int, and the list returned to Python would differ), and so is a
list whose item type is never known.
"""

from __future__ import annotations

from typing import Any

from ..frontend.lists import METHODS
from ..intrinsics.spec import IntrinsicSpec, Site
from ..ir.ops import Intrinsic
from ..types import (
    BOTTOM,
    NONE,
    ArrayType,
    ListType,
    OptionalType,
    PyValueType,
    ScalarType,
    TupleType,
    Type,
    list_item_join,
)
from .rules import RuleError

STORES = frozenset({Intrinsic.LIST_APPEND})
"""What gives ``[]`` its item type. A list appended to only where the solver never goes (``if DEBUG:`` with a
constant ``DEBUG = False``) stays ``list[bottom]``: always empty, so its length, its truth and the list itself
are right; anything that needs its item (``lst[i]``, a loop over it) is a ``CompileError``."""
_ONE_TYPE = (
    "a list holds one type, and Python would keep each item's own (convert it: 1.0 or float(x) in a list "
    "of floats, int(x) in a list of ints)"
)
UNTYPED = (
    "an empty list never gets an item type here: append to it in this function (out = [] then "
    "out.append(0.0)), or start it from a literal holding one value of the type"
)


def _item(t: Type, what: str) -> Type:
    """``t`` as the item of a list, or a ``RuleError``."""
    if isinstance(t, ScalarType) and t.is_numeric:
        return t
    if isinstance(t, (ArrayType, ListType)):
        return t
    if isinstance(t, TupleType) and t.is_runtime and all(_item(i, what) for i in t.items):
        return t
    if isinstance(t, OptionalType):
        raise RuleError(f"{what}: a value that may be None cannot be put in a list; test it with 'is None' first")
    words = t.value if isinstance(t, PyValueType) else t
    raise RuleError(f"{what}: a list holds numbers, tuples, arrays or lists, not {words}")


def stored_item(item: Type, value: Type, what: str) -> Type:
    """The list's item type once ``value`` is stored into a list of ``item`` (``bottom``: not known yet)."""
    value = _item(value, what)
    joined = list_item_join(item, value)
    if joined is None:
        raise RuleError(f"{what}: this list holds {item}, not {value}; {_ONE_TYPE}")
    return joined


def list_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    return list_type(spec.fn, args)


def sorted_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    return sorted_type(args)


def unpack_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """``a, b = x`` (operands: ``x`` and the count, a constant in ``site.consts``): none, checked now for a tuple
    (the op is then dropped: ``aot.infer.transfer.intrinsic_call``), at run time for a list or a 1-D array."""
    count = site.consts[1] if len(site.consts) > 1 else None
    if type(count) is int:
        unpack_checked(args[0], count)
    return NONE


def list_type(fn: Intrinsic, args: tuple[Type, ...]) -> Type:
    if fn is Intrinsic.LIST_NEW:
        item: Type = BOTTOM
        for t in args:
            t = _item(t, "a list display")
            joined = list_item_join(item, t)
            if joined is None:
                raise RuleError(f"the items of a list must have one type, not {item} and {t}; {_ONE_TYPE}")
            item = joined
        return ListType(item)
    lst = args[0]
    name = fn.value.split(".", 1)[1]
    if not isinstance(lst, ListType):
        raise RuleError(f"{name}() is a list method; this is a value of type {lst}")
    if fn is Intrinsic.LIST_APPEND:
        if len(args) != 2:
            raise RuleError(f"list.append() takes exactly one argument ({len(args) - 1} given)")
        return ListType(stored_item(lst.item, args[1], "list.append()"))
    if lst.item is BOTTOM:
        raise RuleError(UNTYPED)
    if fn is Intrinsic.LIST_POP:
        if len(args) > 2:
            raise RuleError(f"list.pop() takes at most one argument ({len(args) - 1} given)")
        if len(args) == 2 and not (isinstance(args[1], ScalarType) and (args[1].is_int or args[1].kind == "b")):
            raise RuleError(f"list indices must be integers, not {args[1]}")
        return lst.item
    if fn is Intrinsic.LIST_REVERSE:
        if len(args) != 1:
            raise RuleError(f"list.reverse() takes no arguments ({len(args) - 1} given)")
        return NONE
    if fn in (Intrinsic.LIST_SORT, Intrinsic.LIST_SORTED):
        what = "list.sort()" if fn is Intrinsic.LIST_SORT else "sorted()"
        if len(args) != 1:
            raise RuleError(f"{what} takes no other arguments here (key= and reverse= are not supported)")
        if not (isinstance(lst.item, ScalarType) and lst.item.is_numeric):
            raise RuleError(f"{what} of a list of {lst.item} is not supported; lists of numbers are sorted")
        return NONE if fn is Intrinsic.LIST_SORT else lst
    assert fn is Intrinsic.LIST_TO_ARRAY
    return array_type(lst)


def array_type(lst: ListType) -> ArrayType:
    """``np.array(lst)``: 1-D of the items' type, N-D from a list of lists (or of arrays) of one length."""
    dims = 1
    item = lst.item
    while isinstance(item, ListType):
        item, dims = item.item, dims + 1
    if isinstance(item, ArrayType):
        dims, item = dims + item.ndim, item.dtype
    if not isinstance(item, ScalarType):
        raise RuleError(f"np.array() of a {lst} is not supported; it takes a list of numbers, lists or arrays")
    return ArrayType(item, dims, "C")


def slice_type(lst: ListType, spec: str, index: tuple[Type, ...]) -> ListType:
    """``lst[start:stop:step]``: a new list of the same type (bounds and step integers, or left out)."""
    if spec != "s":
        raise RuleError("a list takes one index or one slice (lst[i], lst[a:b:c]); '...' and several are for arrays")
    for t in index:
        if t != NONE and not (isinstance(t, ScalarType) and (t.is_int or t.kind == "b")):
            raise RuleError(f"slice indices of a list must be integers or None, not {t}")
    if lst.item is BOTTOM:
        raise RuleError(UNTYPED)
    return lst


def getitem_type(lst: ListType, index: tuple[Type, ...]) -> Type:
    if not index:  # (lst[a:b] = v, lst[a:b] += v: the frontend's target is the slice)
        raise RuleError("assigning to a slice of a list is not supported; assign its items one by one")
    if len(index) != 1 or not (isinstance(index[0], ScalarType) and (index[0].is_int or index[0].kind == "b")):
        got = ", ".join(map(str, index))
        raise RuleError(f"list indices must be integers (one index), not {got}")
    if lst.item is BOTTOM:
        raise RuleError(UNTYPED)
    return lst.item


def setitem_check(lst: ListType, index: tuple[Type, ...], value: Type) -> None:
    getitem_type(lst, index)
    if stored_item(lst.item, value, "storing into a list") != lst.item:
        raise RuleError(f"storing into a list: this list holds {lst.item}, not {value}")


def untyped(t: Type) -> bool:
    """Whether ``t`` holds a list whose item type is not known."""
    if isinstance(t, ListType):
        return t.item is BOTTOM or untyped(t.item)
    return isinstance(t, TupleType) and any(untyped(i) for i in t.items)


def attribute_message(attr: str) -> str:
    """Why ``lst.attr`` is refused: only ``append``/``pop``, called on a local variable, are compiled."""
    if attr == "sort":
        return "list.sort() takes no arguments here (key= and reverse= are not supported); sort the list, then loop"
    if attr in METHODS:  # (the methods the frontend lowers)
        return (
            f"list.{attr}() is compiled when called on a local variable (name.{attr}(…)); assign the list "
            "to a name first"
        )
    return (
        f"lists have no method '{attr}' in compiled code (append, pop, sort and reverse; len(), indexing and loops "
        "work)"
    )


def unpack_checked(t: Type, count: Any) -> bool:
    """``a, b = x``: whether ``x`` (of type ``t``) is known now to hold ``count`` items (a tuple), else whether
    its length is checked at run time (a list, a 1-D array); a ``RuleError`` when it cannot be unpacked."""
    assert type(count) is int
    if isinstance(t, TupleType):
        if len(t.items) != count:
            raise RuleError(f"cannot unpack {len(t.items)} values into {count} names (Python raises ValueError here)")
        return True
    if isinstance(t, ListType) or (isinstance(t, ArrayType) and t.ndim == 1):
        return False
    if isinstance(t, ArrayType):
        raise RuleError(f"unpacking the rows of a {t.ndim}-D array is not supported; index it (a[0], a[1])")
    raise RuleError(f"cannot unpack a value of type {t}")


def sorted_type(args: tuple[Type, ...]) -> Type:
    """``sorted(lst)``: a new list of the same type (lists of numbers only)."""
    if len(args) != 1 or not isinstance(args[0], ListType):
        raise RuleError("sorted() takes one list here (make one first: sorted([x for x in a]))")
    return list_type(Intrinsic.LIST_SORTED, args)
