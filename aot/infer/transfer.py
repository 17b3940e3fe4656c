"""The transfer rules: for each op class of untyped IR, the rule that gives the type of its result.

    TRANSFER[type(op)](body, op, label, index)   → Transfer(type, meaning, edges, callee, overlay)

``TRANSFER`` (at the end) is the one table: a reader finds every op class there and its rule. A rule reads
its operands' types from the body (``BodyState.t``), checks them, and gives a ``Transfer``
(``aot.infer.instances``): the type of the result (``BOTTOM`` while an operand has none yet, or when the op
has no result) and, when the op stands for something else at run time (a compile-time comparison folded to
a constant, ``a += b`` on an array, ``x == None``), that meaning. Rules raise ``RuleError`` for what compiled
code cannot do; the final sweep reports it (``aot.infer.body``). The rules of names are in
``aot.infer.names``, the rule of calls in ``aot.infer.callsites``; the lattice rules they all apply are in
``aot.infer.rules`` and the modules next to it (``elementwise``, ``views``, ``lists``, ``optional`` …).

The ops with operands share three checks, in this order: an operand without a type yet waits
(``_operands``); a compile-time value (a module, a function) is no operand (``_no_compile_time_values``);
an optional operand reads as its value, tested at run time (``_narrowed``). Each rule makes them in the
order the op needs (a comparison of dtypes folds before the second, a None test before the third).
"""

from __future__ import annotations

from typing import Any

from ..intrinsics import registry
from ..intrinsics.spec import PLAIN, Site
from ..ir import (
    BinOp,
    BinOpKind,
    Branch,
    Call,
    Compare,
    Const,
    Convert,
    Copy,
    GetAttr,
    GetItem,
    GetView,
    Intrinsic,
    IntrinsicCall,
    Jump,
    LoadGlobal,
    MakeTuple,
    Op,
    Raise,
    Return,
    SetItem,
    Truth,
    UnaryKind,
    UnaryOp,
    uses,
)
from ..ir.ops import CallValue
from ..types import BOTTOM, NONE, ArrayType, ListType, OptionalType, PyValueType, TupleType, Type
from . import constructs, elementwise, lists, npfuncs, optional, rules, views
from .body import BodyState, Rule
from .callsites import call_value
from .instances import NO_TYPE, SAME, Transfer, const_type
from .names import get_attr, load_global
from .rules import RuleError


# ------------------------------------------------------------------------------------- shared checks
def _operands(body: BodyState, op: Op) -> list[Type] | None:
    """The types of the op's operands; None while one has no type yet (the op waits for it)."""
    operands = [body.t(v) for v in uses(op)]
    return None if any(t is BOTTOM for t in operands) else operands


def _no_compile_time_values(operands: list[Type]) -> None:
    """A module, a function or a class is no operand of this op (``x + math``)."""
    if any(isinstance(t, PyValueType) for t in operands):
        bad = next(t for t in operands if isinstance(t, PyValueType))
        raise RuleError(constructs.not_a_value(bad) or f"{bad.value!r} is not a value compiled code can use here")


def _narrowed(body: BodyState, op: Op, operands: list[Type], label: str, index: int) -> list[Type]:
    """The operands again, each optional one as its value: the op tests it at run time, None doing what
    Python does (``optional.none_checks``); ``RuleError`` where Python's None would not work."""
    if not any(isinstance(t, OptionalType) for t in operands):
        return operands
    ops = body.blocks[label].ops
    after = ops[index + 1] if index + 1 < len(ops) else None
    augmented = (  # (``x op= y``: the frontend's binop and copy back, both with the statement's span)
        isinstance(op, BinOp)
        and isinstance(after, Copy)
        and (after.src, after.dest, after.span) == (op.dest, op.lhs, op.span)
    )
    checks = optional.none_checks(op, {v.name: t for v, t in zip(uses(op), operands)}, augmented)
    if checks is None:
        used, maybe = next((v, t) for v, t in zip(uses(op), operands) if isinstance(t, OptionalType))
        assert isinstance(maybe, OptionalType)
        raise RuleError(optional.unnarrowed_message(used.name, maybe))
    body.checked[(label, index)] = checks
    return [body.t(v) for v in uses(op)]


def _checked_operands(body: BodyState, op: Op, label: str, index: int) -> list[Type] | None:
    """The three checks in order, for the ops that need nothing between them."""
    operands = _operands(body, op)
    if operands is None:
        return None
    _no_compile_time_values(operands)
    return _narrowed(body, op, operands, label, index)


# ------------------------------------------------------------------------------------- the rules
def const(body: BodyState, op: Const, label: str, index: int) -> Transfer:
    t = constructs.string_type(op.value) if isinstance(op.value, str) else const_type(op.value)
    if t is None:
        raise RuleError(f"constant {op.value!r} is not supported")
    if op.dest.name in body.single_def:
        body.consts[op.dest.name] = op.value
    return Transfer(t)


def copy(body: BodyState, op: Copy, label: str, index: int) -> Transfer:
    return Transfer(body.t(op.src))


def binop(body: BodyState, op: BinOp, label: str, index: int) -> Transfer:
    operands = _checked_operands(body, op, label, index)
    if operands is None:
        return NO_TYPE
    if elementwise.involves_array(*operands):
        return _array_binop(body, op, label, index)
    negative = False
    if op.op is BinOpKind.POW:
        exponent = body.consts.get(op.rhs.name)
        negative = isinstance(exponent, int) and exponent < 0
    lhs, rhs = body.t(op.lhs), body.t(op.rhs)
    return Transfer(rules.binop_type(op.op, lhs, rhs, body.is_literal(op.lhs), body.is_literal(op.rhs), negative))


def _array_binop(body: BodyState, op: BinOp, label: str, index: int) -> Transfer:
    """``a op b`` with an array operand: a new array; ``a op= b`` on an array name writes ``a`` in place
    (the frontend lowers ``a op= b`` to a binop and a copy into ``a`` with the statement's span, which
    ``a = a op b`` never gives its binop)."""
    a, b = body.t(op.lhs), body.t(op.rhs)
    ops = body.blocks[label].ops
    after = ops[index + 1] if index + 1 < len(ops) else None
    if (
        isinstance(a, ArrayType)
        and isinstance(after, Copy)
        and after.src == op.dest
        and after.dest == op.lhs
        and after.span == op.span
    ):
        if op.op not in elementwise.INPLACE:
            raise RuleError(f"'{op.op.value}=' on an array is not supported; loop over the elements")
        result = elementwise.inplace_type(op.op, a, b, body.is_literal(op.rhs))
        fn = elementwise.INPLACE[op.op]
        return Transfer(result, IntrinsicCall(op.dest, fn, (op.lhs, op.rhs), op.span))
    return Transfer(elementwise.binop_type(op.op, a, b, body.is_literal(op.lhs), body.is_literal(op.rhs)))


def unaryop(body: BodyState, op: UnaryOp, label: str, index: int) -> Transfer:
    operands = _operands(body, op)
    if operands is None:
        return NO_TYPE
    if op.op is not UnaryKind.NOT:  # (``not`` of a compile-time value folds)
        _no_compile_time_values(operands)
    _narrowed(body, op, operands, label, index)
    if op.op is UnaryKind.NOT and isinstance(body.t(op.operand), PyValueType):
        return body.folded(op.dest, not body.t(op.operand).value, label, index)  # type: ignore[attr-defined]
    if isinstance(body.t(op.operand), ArrayType):
        return Transfer(elementwise.unary_type(op.op, body.t(op.operand)))  # type: ignore[arg-type]
    result = rules.unary_type(op.op, body.t(op.operand))
    value: Any = body.consts.get(op.operand.name)  # a number when the test below passes
    if op.op in (UnaryKind.NEG, UnaryKind.POS) and type(value) in (int, float) and op.dest.name in body.single_def:
        body.consts[op.dest.name] = -value if op.op is UnaryKind.NEG else value
    elif op.op is UnaryKind.NOT and type(value) is bool and op.dest.name in body.single_def:
        body.consts[op.dest.name] = not value  # (``not isinstance(…)`` decides a branch)
    return Transfer(result)


def compare(body: BodyState, op: Compare, label: str, index: int) -> Transfer:
    operands = _operands(body, op)
    if operands is None:
        return NO_TYPE
    folded = npfuncs.compile_time_compare(op.op, *operands)
    if folded is not None:  # (dtypes compared; compile-time values are operands here)
        return body.folded(op.dest, folded, label, index)
    operands = _narrowed(body, op, operands, label, index)
    folded = constructs.compare_constants(op.op, body.t(op.lhs), body.t(op.rhs))
    if folded is not None:
        return body.folded(op.dest, folded, label, index)
    if elementwise.involves_array(*operands):
        return Transfer(elementwise.compare_type(op.op, body.t(op.lhs), body.t(op.rhs)))
    return Transfer(rules.compare_type(op.op, body.t(op.lhs), body.t(op.rhs)))


def truth(body: BodyState, op: Truth, label: str, index: int) -> Transfer:
    operands = _operands(body, op)
    if operands is None:
        return NO_TYPE
    _narrowed(body, op, operands, label, index)
    if not body.t(op.src).is_runtime:  # (a string, a module, a tuple of classes)
        src = body.t(op.src)
        value = bool(src.value if isinstance(src, PyValueType) else src.items)  # type: ignore[attr-defined]
        return body.folded(op.dest, value, label, index)
    if op.src.name in body.consts and op.dest.name in body.single_def:
        body.consts[op.dest.name] = bool(body.consts[op.src.name])
    else:
        body.consts.pop(op.dest.name, None)  # (a None test no longer constant: optional.py)
    return Transfer(rules.truth_type(body.t(op.src)))


def make_tuple(body: BodyState, op: MakeTuple, label: str, index: int) -> Transfer:
    operands = _operands(body, op)
    if operands is None:
        return NO_TYPE
    _narrowed(body, op, operands, label, index)  # (compile-time values may be items: ``(int, float)``)
    return Transfer(constructs.tuple_type(tuple(body.t(v) for v in op.items)))


def get_view(body: BodyState, op: GetView, label: str, index: int) -> Transfer:
    """``a[…]`` with slices: the layout of the view depends on which slice bounds are missing and on
    constant steps."""
    if _checked_operands(body, op, label, index) is None:
        return NO_TYPE
    infos = []
    k = 0
    for c in op.spec:
        if c == views.SLICE:
            start, stop, step = op.index[k : k + 3]
            value = NONE if body.t(step) == NONE else body.constant_of(step)
            step_value = 1 if value is NONE else value if type(value) is int else None
            infos.append(views.SliceInfo(body.t(start) == NONE, body.t(stop) == NONE, step_value))
        k += {views.SLICE: 3, views.INT_INDEX: 1}.get(c, 0)
    obj_t = body.t(op.obj)
    index_types = tuple(body.t(v) for v in op.index)
    if isinstance(obj_t, ListType):  # lst[a:b:c]: a new list
        return Transfer(lists.slice_type(obj_t, op.spec, index_types))
    if isinstance(obj_t, ArrayType):  # a[:, idx], a[1:, [k, p]]: a new array (written through by setitem)
        selected = elementwise.subscript_type(obj_t, op.spec, index_types)
        if selected is not None:
            return Transfer(selected)
    return Transfer(views.view_type(body.t(op.obj), op.spec, index_types, tuple(infos)))


def get_item(body: BodyState, op: GetItem, label: str, index: int) -> Transfer:
    if _checked_operands(body, op, label, index) is None:
        return NO_TYPE
    obj_t = body.t(op.obj)
    if isinstance(obj_t, ArrayType):  # a[mask], a[idx], a[[k, p]], a[idx, j]: a new array
        selected = elementwise.subscript_type(obj_t, "i" * len(op.index), tuple(body.t(v) for v in op.index))
        if selected is not None:
            return Transfer(selected)
    if isinstance(obj_t, ArrayType) and len(op.index) < obj_t.ndim:  # a[i] of an N-D array: a view
        return Transfer(views.index_view_type(obj_t, tuple(body.t(v) for v in op.index)))
    if isinstance(obj_t, ListType):
        return Transfer(lists.getitem_type(obj_t, tuple(body.t(v) for v in op.index)))
    const_index = None
    if isinstance(body.t(op.obj), TupleType) and len(op.index) == 1:
        value = body.consts.get(op.index[0].name)
        const_index = value if type(value) is int else None
    return Transfer(rules.getitem_type(body.t(op.obj), tuple(body.t(v) for v in op.index), const_index))


def set_item(body: BodyState, op: SetItem, label: str, index: int) -> Transfer:
    if _checked_operands(body, op, label, index) is None:
        return NO_TYPE
    obj_t = body.t(op.obj)
    if isinstance(obj_t, ArrayType) and elementwise.selection_assign_check(
        obj_t, "i" * len(op.index), tuple(body.t(v) for v in op.index), body.t(op.value)
    ):
        return NO_TYPE
    if isinstance(obj_t, ArrayType) and len(op.index) < obj_t.ndim:  # assignment to a view
        target = views.index_view_type(obj_t, tuple(body.t(v) for v in op.index))
        views.assign_check(target, body.t(op.value))
        return NO_TYPE
    if isinstance(obj_t, ListType):
        lists.setitem_check(obj_t, tuple(body.t(v) for v in op.index), body.t(op.value))
        return NO_TYPE
    rules.setitem_check(body.t(op.obj), tuple(body.t(v) for v in op.index), body.t(op.value))
    return NO_TYPE


def intrinsic_call(body: BodyState, op: IntrinsicCall, label: str, index: int) -> Transfer:
    """An intrinsic the frontend named (``len``, ``list.append``, ``x is None`` …): its descriptor's rule
    (``aot/intrinsics``), after the special cases below."""
    operands = _operands(body, op)
    if operands is None:
        return NO_TYPE
    _no_compile_time_values(operands)
    if op.fn in optional.NONE_TESTS:
        return _none_test(body, op, operands)
    operands = _narrowed(body, op, operands, label, index)
    if op.fn is Intrinsic.UNPACK:
        unpack = registry.spec(Intrinsic.UNPACK)  # (checks the count: a tuple's now, others' at run time)
        unpack.rule(unpack, tuple(operands), Site(consts=(None, body.consts.get(op.args[1].name))))
        if isinstance(operands[0], TupleType):  # (a tuple of the right length: nothing happens at run time)
            return Transfer(BOTTOM, None)  # (no type: the op is dropped)
        return Transfer(NONE)
    if op.fn is Intrinsic.LIST_SORT and isinstance(operands[0], ArrayType):  # ``a.sort()`` of an array
        result = npfuncs.method_type(registry.spec(Intrinsic.ARRAY_SORT), operands[0], tuple(operands[1:]))
        return Transfer(result, IntrinsicCall(op.dest, Intrinsic.ARRAY_SORT, op.args, op.span))
    found = registry.spec(op.fn)
    return Transfer(found.rule(found, tuple(operands), PLAIN))  # (its descriptor's rule: aot/intrinsics)


def _none_test(body: BodyState, op: IntrinsicCall, operands: list[Type]) -> Transfer:
    """``x is None``, ``x == None`` (as ``is``; not on arrays) …: a constant when the type decides it."""
    meaning: Any = SAME
    if op.fn in optional.IS_FORM:  # ``x == None``: ``x is None`` (not on arrays)
        optional.equality_check(op.fn, operands[0], op.args[0].name)
        meaning = IntrinsicCall(op.dest, optional.IS_FORM[op.fn], op.args, op.span)
    test_spec = registry.spec(op.fn)
    result = test_spec.rule(test_spec, (operands[0],), PLAIN)
    known = optional.none_test_type(op.fn, operands[0])[1]
    if known is None:
        body.consts.pop(op.dest.name, None)
    elif op.dest.name in body.single_def:
        body.consts[op.dest.name] = known
    return Transfer(result, meaning)


def return_(body: BodyState, op: Return, label: str, index: int) -> Transfer:
    """No type: the final sweep joins the returned values (``BodyState.finish``)."""
    _operands(body, op)
    return NO_TYPE


def no_type(body: BodyState, op: Op, label: str, index: int) -> Transfer:
    """Jumps, branches and raises: no result; their operands are checked like any op's (``Call`` and ``Convert``
    alike, which inference never sees)."""
    _checked_operands(body, op, label, index)
    return NO_TYPE


TRANSFER: dict[type[Op], Rule] = {
    # constants and names
    Const: const,
    Copy: copy,
    LoadGlobal: load_global,  # aot.infer.names
    GetAttr: get_attr,  # aot.infer.names
    CallValue: call_value,  # aot.infer.callsites
    # arithmetic and tests
    BinOp: binop,
    UnaryOp: unaryop,
    Compare: compare,
    Truth: truth,
    # tuples, subscripts, views
    MakeTuple: make_tuple,
    GetItem: get_item,
    SetItem: set_item,
    GetView: get_view,
    # intrinsics the frontend named
    IntrinsicCall: intrinsic_call,
    # terminators
    Return: return_,
    Jump: no_type,
    Branch: no_type,
    Raise: no_type,
    # typed IR only: ``resolve`` makes them after inference (the meanings of ``int(x)`` and of calls)
    Convert: no_type,
    Call: no_type,
}
"""Op class → its transfer rule, for every op class."""
