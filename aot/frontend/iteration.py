"""What Python iterates over, desugared into the counted loops of ``lower.py``.

    for i, (x, y) in enumerate(zip(a, b), 1):     $n = min(iter.len a, iter.len b); $k from 0 to $n:
        s += i * x * y                       →      i = $start + $k; x = a[$k]; y = b[$k]   (no tuple is built)

An iterable becomes a ``Plan``: its trip count, computed once before the loop, and the item of iteration
``$k``: a variable, or a nested tuple of them for ``enumerate``/``zip``, bound straight to a target that
unpacks it. ``range`` (forwards or ``reversed``), 1-D arrays and tuples are counted with ``range.len`` and
``iter.len``; ``a.flat`` (an array of any shape, C order) with ``flat.len`` and ``flat.item``;
``enumerate(it, start)`` adds ``start + $k``; ``zip`` stops at the shortest. A tuple display
``for x in (a, 1.5, b)`` is unrolled (its items may differ in type). The same plans give ``x in range(…)``
(arithmetic, no loop), ``x in (a, b)`` (short-circuit ``==``), ``x in t`` and ``sum min max any all`` over
an iterable. Plain ``for i in range(…)`` and ``for x in a`` keep ``lower.py``'s own shapes, which
``aot/analysis/ranges.py`` recognises.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol, TypeAlias

from ..diagnostics import Span
from ..ir import (
    BinOp,
    BinOpKind,
    Block,
    Branch,
    Builder,
    CmpKind,
    Compare,
    Copy,
    GetItem,
    IntrinsicCall,
    MakeTuple,
    Raise,
    Truth,
    Var,
)
from ..ir.ops import Intrinsic
from . import lists, loops


class Lowering(Protocol):
    """What this module uses of ``lower.Lowering`` (which imports this module)."""

    b: Builder
    loops: list[Any]
    globals: dict[str, Any]
    locals: set[str]

    def span(self, node: ast.AST) -> Span: ...
    def error(self, node: ast.AST, message: str) -> None: ...
    def hidden(self, stem: str) -> Var: ...
    def const(self, value: Any, node: ast.AST) -> Var: ...
    def is_builtin(self, name: str) -> bool: ...
    def expr(self, node: ast.expr) -> Var: ...
    def stmts(self, stmts: list[ast.stmt]) -> None: ...
    def assign(self, target: ast.expr, value: Var, node: ast.AST) -> None: ...
    def counted_loop(self, node: ast.For, count: Var, value: Callable[[Var], Item], span: Span) -> None: ...


@dataclass
class Loop:
    """Where ``break`` and ``continue`` go in the innermost loop."""

    break_to: Block
    continue_to: Block
    parallel: bool = False  # a ``prange`` loop whose iterations run on threads


def const_int(node: ast.expr | None) -> int | None:
    """The value of an int literal, negated or not (``range``'s constant step)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = const_int(node.operand)
        return None if inner is None else -inner
    return None


Item: TypeAlias = "Var | tuple[Item, ...]"

ITERATORS = ("enumerate", "zip", "reversed")
REDUCTIONS = ("sum", "min", "max", "any", "all")
UNROLL_LIMIT = 32  # the most items of a tuple display a for loop is unrolled over


def _empty_message(name: str) -> str:
    """This interpreter's message for ``min(())`` / ``max(())`` (it changed in Python 3.12)."""
    try:
        (min if name == "min" else max)(())
    except ValueError as exc:
        return str(exc)
    raise AssertionError  # pragma: no cover


@dataclass
class Plan:
    """An iterable: the number of items, and item ``k`` (built inside the loop, from the counter)."""

    count: Var
    item: Callable[[Var], Item]


def builtin_call(low: Lowering, node: ast.expr, names: tuple[str, ...]) -> str | None:
    """The name when ``node`` calls one of the builtins ``names`` (not shadowed), else None."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in names
        and low.is_builtin(node.func.id)
    ):
        return node.func.id
    return None


# ---------------------------------------------------------------------------------------------- plans
def plan(low: Lowering, node: ast.expr) -> Plan | None:
    """The plan of iterating over ``node``, its operands evaluated now; None after an error (reported)."""
    span = low.span(node)
    name = builtin_call(low, node, ("range", *ITERATORS))
    if name is None and is_flat(low, node):  # a.flat: the elements of an array of any shape, in C order
        assert isinstance(node, ast.Attribute)
        array = low.b.emit_value(lambda d: Copy(d, low.expr(node.value), span))
        size = low.b.emit_value(lambda d: IntrinsicCall(d, Intrinsic.FLAT_LEN, (array,), span))
        return Plan(size, lambda k: low.b.emit_value(lambda d: IntrinsicCall(d, Intrinsic.FLAT_ITEM, (array, k), span)))
    if name is None:
        seq = low.b.emit_value(lambda d: Copy(d, low.expr(node), span))
        count = low.b.emit_value(lambda d: IntrinsicCall(d, Intrinsic.ITER_LEN, (seq,), span))
        return Plan(count, lambda k: low.b.emit_value(lambda d: GetItem(d, seq, (k,), span)))
    assert isinstance(node, ast.Call)
    if any(isinstance(a, ast.Starred) for a in node.args):
        low.error(node, f"{name}() with *arguments is not supported; pass each iterable")
        return None
    if name == "range":
        return range_plan(low, node, reverse=False)
    if name == "enumerate":
        return enumerate_plan(low, node)
    if name == "zip":
        return zip_plan(low, node)
    return reversed_plan(low, node)


def is_flat(low: Lowering, node: ast.expr) -> bool:
    """Whether ``node`` is ``x.flat`` (NumPy's flat iterator of an array; not a ``flat`` of a module)."""
    if not (isinstance(node, ast.Attribute) and node.attr == "flat"):
        return False
    base = node.value
    return not (
        isinstance(base, ast.Name) and base.id not in low.locals and isinstance(low.globals.get(base.id), ModuleType)
    )


def range_operands(low: Lowering, call: ast.Call) -> tuple[Var, Var, Var, int | None] | None:
    """``start, stop, step`` of ``range(…)`` evaluated in order (hidden copies), and the step if constant."""
    if call.keywords or not 1 <= len(call.args) <= 3:
        low.error(call, "range() takes 1 to 3 positional arguments")
        return None
    args = call.args
    step_const = const_int(args[2]) if len(args) == 3 else 1
    if step_const == 0:
        low.error(args[2], "range() arg 3 must not be zero")
        return None
    span = low.span(call)
    start = low.hidden("start")
    low.b.emit(Copy(start, low.const(0, call) if len(args) == 1 else low.expr(args[0]), span))
    stop = low.hidden("stop")
    low.b.emit(Copy(stop, low.expr(args[-1] if len(args) < 3 else args[1]), span))
    step = low.hidden("step")
    low.b.emit(Copy(step, low.expr(args[2]) if len(args) == 3 else low.const(1, call), span))
    return start, stop, step, step_const


def range_plan(low: Lowering, call: ast.Call, reverse: bool) -> Plan | None:
    operands = range_operands(low, call)
    if operands is None:
        return None
    start, stop, step, step_const = operands
    span = low.span(call)
    b = low.b
    count = b.emit_value(lambda d: IntrinsicCall(d, Intrinsic.RANGE_LEN, (start, stop, step), span))
    last = None
    if reverse:
        # (range.len stops at 2**63 - 1: where it may have, the last item is unknown; Python has no limit)
        limit = low.const(2**63 - 1, call)
        too_long = b.emit_value(lambda d: Compare(d, CmpKind.EQ, count, limit, span))
        fail, ok = b.new_block(), b.new_block()
        b.terminate(Branch(too_long, fail.label, ok.label, span))
        b.set_block(fail)
        b.terminate(Raise("OverflowError", "reversed() of a range of 2**63 - 1 items or more", span))
        b.set_block(ok)
        one = low.const(1, call)
        last = b.emit_value(lambda d: BinOp(d, BinOpKind.SUB, count, one, span))

    def item(k: Var) -> Var:
        if last is not None:  # reversed: item count-1-k of the range (its add left unflagged, as it was)
            k = b.emit_value(lambda d: BinOp(d, BinOpKind.SUB, last, k, span))
        return loops.range_value(low, start, step, step_const == 1, k, span, nowrap=last is None)

    return Plan(count, item)


def enumerate_plan(low: Lowering, call: ast.Call) -> Plan | None:
    args = list(call.args)
    for kw in call.keywords:
        if kw.arg == "start" and len(args) == 1:
            args.append(kw.value)
        else:
            low.error(kw.value, "enumerate() takes an iterable and a start: enumerate(a) or enumerate(a, start)")
            return None
    if not 1 <= len(args) <= 2:
        low.error(call, "enumerate() takes an iterable and a start: enumerate(a) or enumerate(a, start)")
        return None
    inner = plan(low, args[0])
    if inner is None:
        return None
    span = low.span(call)
    if len(args) == 2:
        given = low.expr(args[1])
        start = low.b.emit_value(lambda d: IntrinsicCall(d, Intrinsic.INDEX, (given,), low.span(args[1])))
    else:
        start = low.const(0, call)

    def item(k: Var) -> Item:
        index = low.b.emit_value(lambda d: BinOp(d, BinOpKind.ADD, start, k, span))
        return (index, inner.item(k))

    return Plan(inner.count, item)


def zip_plan(low: Lowering, call: ast.Call) -> Plan | None:
    if call.keywords:
        low.error(call.keywords[0].value, "zip() keyword arguments are not supported; zip stops at the shortest")
        return None
    if not call.args:
        low.error(call, "zip() needs at least one iterable here")
        return None
    plans = [plan(low, a) for a in call.args]
    if any(p is None for p in plans):
        return None
    parts = [p for p in plans if p is not None]
    span = low.span(call)
    count = parts[0].count
    if len(parts) > 1:
        counts = tuple(p.count for p in parts)
        count = low.b.emit_value(lambda d: IntrinsicCall(d, Intrinsic.MIN, counts, span))
    return Plan(count, lambda k: tuple(p.item(k) for p in parts))


def reversed_plan(low: Lowering, call: ast.Call) -> Plan | None:
    if call.keywords or len(call.args) != 1:
        low.error(call, "reversed() takes one argument: a range, a 1-D array or a tuple")
        return None
    arg = call.args[0]
    inner = builtin_call(low, arg, ("range", *ITERATORS))
    if inner == "range":
        assert isinstance(arg, ast.Call)
        return range_plan(low, arg, reverse=True)
    if inner is not None:
        low.error(arg, f"reversed() of {inner}() is not supported (Python cannot reverse it either)")
        return None
    span = low.span(call)
    b = low.b
    seq = b.emit_value(lambda d: Copy(d, low.expr(arg), span))
    count = b.emit_value(lambda d: IntrinsicCall(d, Intrinsic.ITER_LEN, (seq,), span))
    one = low.const(1, call)
    last = b.emit_value(lambda d: BinOp(d, BinOpKind.SUB, count, one, span))

    def item(k: Var) -> Var:
        index = b.emit_value(lambda d: BinOp(d, BinOpKind.SUB, last, k, span))
        return b.emit_value(lambda d: GetItem(d, seq, (index,), span))

    return Plan(count, item)


# ---------------------------------------------------------------------------------------------- targets
def check_target(low: Lowering, target: ast.expr) -> bool:
    """Whether ``target`` is a name or a (nested) tuple of names; reports what it is not."""
    if isinstance(target, ast.Name):
        return True
    if isinstance(target, (ast.Tuple, ast.List)):
        ok = True
        for elt in target.elts:
            if isinstance(elt, ast.Starred):
                low.error(elt, "starred loop targets are not supported; unpack each element")
                ok = False
            else:
                ok = check_target(low, elt) and ok
        return ok
    low.error(target, "a loop target must be a name or a tuple of names (for i, x in enumerate(a))")
    return False


def bind(low: Lowering, target: ast.expr, item: Item) -> None:
    """Assign ``item`` to ``target`` (checked by ``check_target``), unpacking without building tuples."""
    span = low.span(target)
    if isinstance(item, tuple):
        if isinstance(target, ast.Name):
            item = materialize(low, item, span)
        else:
            assert isinstance(target, (ast.Tuple, ast.List))
            if len(target.elts) != len(item):
                low.error(
                    target,
                    f"cannot unpack {len(item)} values into {len(target.elts)} names (Python raises ValueError here)",
                )
                return
            for elt, part in zip(target.elts, item):
                bind(low, elt, part)
            return
    if isinstance(target, ast.Name):
        low.b.emit(Copy(Var(target.id), item, span))
    else:
        low.assign(target, item, target)


def materialize(low: Lowering, item: Item, span: Span) -> Var:
    if isinstance(item, Var):
        return item
    parts = tuple(materialize(low, part, span) for part in item)
    return low.b.emit_value(lambda d: MakeTuple(d, parts, span))


# ---------------------------------------------------------------------------------------------- for
def lower_for(low: Lowering, node: ast.For) -> bool:
    """``for`` over what ``lower.py``'s own two shapes do not cover; False to leave the loop to them."""
    simple = isinstance(node.target, ast.Name)
    it = node.iter
    if simple and builtin_call(low, it, ITERATORS) is None and not isinstance(it, ast.Tuple) and not is_flat(low, it):
        return False
    if not check_target(low, node.target):
        return True
    if isinstance(it, ast.Tuple) and len(it.elts) <= UNROLL_LIMIT and not _has_starred(it):
        unrolled(low, node, it)
        return True
    p = plan(low, it)
    if p is not None:
        low.counted_loop(node, p.count, p.item, low.span(it))
    return True


def _has_starred(node: ast.Tuple) -> bool:
    return any(isinstance(e, ast.Starred) for e in node.elts)


def unrolled(low: Lowering, node: ast.For, display: ast.Tuple) -> None:
    """``for x in (a, b, c)``: the items are evaluated first, then the body runs once per item."""
    items = [low.expr(e) for e in display.elts]
    b = low.b
    if not items:  # the body never runs
        low.stmts(node.orelse)
        return
    steps = [b.new_block() for _ in items]
    orelse, end = b.new_block(), b.new_block()
    b.jump(steps[0])
    for i, value in enumerate(items):
        following = steps[i + 1] if i + 1 < len(items) else orelse
        b.set_block(steps[i])
        bind(low, node.target, value)
        low.loops.append(Loop(end, following))
        low.stmts(node.body)
        low.loops.pop()
        b.jump(following)
    b.set_block(orelse)
    low.stmts(node.orelse)
    b.jump(end)
    b.set_block(end)


# ---------------------------------------------------------------------------------------------- in
def contains(low: Lowering, value: Var, container: ast.expr, node: ast.Compare) -> Var:
    """``value in container`` as a boolean variable (Python's ``==`` per item, stopping at the first)."""
    span = low.span(node)
    b = low.b
    result = low.hidden("in")
    if builtin_call(low, container, ("range",)) is not None:
        assert isinstance(container, ast.Call)
        return range_contains(low, value, container, result)
    if isinstance(container, ast.Tuple) and not _has_starred(container):
        items = [low.expr(e) for e in container.elts]
        end = b.new_block()
        b.emit(Copy(result, low.const(False, node), span))
        for item in items:
            equal = b.emit_value(lambda d, item=item: Compare(d, CmpKind.EQ, value, item, span))  # type: ignore[misc]
            rest = b.new_block()
            found = b.new_block()
            b.terminate(Branch(equal, found.label, rest.label, span))
            b.set_block(found)
            b.emit(Copy(result, low.const(True, node), span))
            b.jump(end)
            b.set_block(rest)
        b.jump(end)
        b.set_block(end)
        return result
    p = plan(low, container)
    if p is None:
        return low.const(False, node)
    b.emit(Copy(result, low.const(False, node), span))
    loop = loops.CountedLoop(low, p.count, span, node)
    loop.start()
    found, end = loop.enter(2, exit=1)
    item = loop.next(lambda k: materialize(low, p.item(k), span))
    equal = b.emit_value(lambda d: Compare(d, CmpKind.EQ, value, item, span))
    b.terminate(Branch(equal, found.label, loop.head.label, span))
    b.set_block(found)
    b.emit(Copy(result, low.const(True, node), span))
    b.jump(end)
    b.set_block(end)
    return result


def range_contains(low: Lowering, value: Var, call: ast.Call, result: Var) -> Var:
    """``x in range(a, b, s)`` without a loop: inside the bounds on the side the step goes, and congruent to
    ``a`` modulo ``s`` (``x % s == a % s``: no difference is taken, so nothing can wrap)."""
    operands = range_operands(low, call)
    if operands is None:
        return low.const(False, call)
    start, stop, step, step_const = operands
    span = low.span(call)
    b = low.b
    if step_const is None:  # (a zero step raises ValueError, as range() does)
        b.emit_value(lambda d: IntrinsicCall(d, Intrinsic.RANGE_LEN, (start, stop, step), span))
    end = b.new_block()
    b.emit(Copy(result, low.const(False, call), span))

    def test(cond: Var) -> None:
        rest = b.new_block()
        b.terminate(Branch(cond, rest.label, end.label, span))
        b.set_block(rest)

    def side(up: bool) -> None:
        lo, hi = (start, stop) if up else (stop, start)
        test(b.emit_value(lambda d: Compare(d, CmpKind.LE if up else CmpKind.LT, lo, value, span)))
        test(b.emit_value(lambda d: Compare(d, CmpKind.LT if up else CmpKind.LE, value, hi, span)))
        # (also with a step of 1: a float is in the range only when it is a whole number)
        x_mod = b.emit_value(lambda d: BinOp(d, BinOpKind.MOD, value, step, span))
        a_mod = b.emit_value(lambda d: BinOp(d, BinOpKind.MOD, start, step, span))
        test(b.emit_value(lambda d: Compare(d, CmpKind.EQ, x_mod, a_mod, span)))
        b.emit(Copy(result, low.const(True, call), span))
        b.jump(end)

    if step_const is not None:
        side(step_const > 0)
    else:
        zero = low.const(0, call)
        positive = b.emit_value(lambda d: Compare(d, CmpKind.GT, step, zero, span))
        up, down = b.new_block(), b.new_block()
        b.terminate(Branch(positive, up.label, down.label, span))
        b.set_block(up)
        side(True)
        b.set_block(down)
        side(False)
    b.set_block(end)
    return result


# ---------------------------------------------------------------------------------------------- builtins
def reduction(low: Lowering, name: str, node: ast.Call) -> Var:
    """``sum(it[, start])``, ``min(it)``, ``max(it)``, ``any(it)``, ``all(it)`` over a range, a 1-D array,
    a tuple, ``enumerate``/``zip``/``reversed``: Python's loop, item by item."""
    span = low.span(node)
    b = low.b
    if node.keywords:
        low.error(node.keywords[0].value, f"{name}() keyword arguments are not supported here")
        return low.const(0, node)
    limit = 2 if name == "sum" else 1
    if not 1 <= len(node.args) <= limit:
        low.error(node, f"{name}() takes {'an iterable and a start' if name == 'sum' else 'one iterable'} here")
        return low.const(0, node)
    if isinstance(node.args[0], ast.Tuple) and not _has_starred(node.args[0]):
        return display_reduction(low, name, node, node.args[0])
    p = plan(low, lists.generator_as_list(node.args[0]))  # (a generator expression: iterated as its list)
    if p is None:
        return low.const(0, node)
    result = low.hidden(name)
    loop = loops.CountedLoop(low, p.count, span, node)
    one = loop.one
    if name == "sum":
        b.emit(Copy(result, low.expr(node.args[1]) if len(node.args) == 2 else low.const(0, node), span))
        loop.start()
    elif name in ("any", "all"):
        b.emit(Copy(result, low.const(name == "all", node), span))
        loop.start()
    else:  # min / max: the first item, then every later one that is smaller (larger)
        zero = low.const(0, node)
        empty = b.emit_value(lambda d: Compare(d, CmpKind.LE, p.count, zero, span))
        fail, ok = b.new_block(), b.new_block()
        b.terminate(Branch(empty, fail.label, ok.label, span))
        b.set_block(fail)
        b.terminate(Raise("ValueError", _empty_message(name), span))
        b.set_block(ok)
        b.emit(Copy(result, materialize(low, p.item(zero), span), span))
        loop.start(one)
    (end,) = loop.enter(1, exit=0)
    head = loop.head
    item = loop.next(lambda k: materialize(low, p.item(k), span))
    if name == "sum":
        b.emit(BinOp(result, BinOpKind.ADD, result, item, span))
        b.jump(head)
    elif name in ("any", "all"):
        truth = b.emit_value(lambda d: Truth(d, item, span))
        decided = b.new_block()
        if name == "any":
            b.terminate(Branch(truth, decided.label, head.label, span))
        else:
            b.terminate(Branch(truth, head.label, decided.label, span))
        b.set_block(decided)
        b.emit(Copy(result, low.const(name == "any", node), span))
        b.jump(end)
    else:
        better = b.emit_value(lambda d: Compare(d, CmpKind.LT if name == "min" else CmpKind.GT, item, result, span))
        take = b.new_block()
        b.terminate(Branch(better, take.label, head.label, span))
        b.set_block(take)
        b.emit(Copy(result, item, span))
        b.jump(head)
    b.set_block(end)
    return result


def display_reduction(low: Lowering, name: str, node: ast.Call, display: ast.Tuple) -> Var:
    """A reduction of a tuple display, item by item without a loop (its items may differ in type):
    ``min``/``max`` are the intrinsics of several arguments."""
    span = low.span(node)
    b = low.b
    items = [low.expr(e) for e in display.elts]
    if name in ("min", "max"):
        if not items:
            b.terminate(Raise("ValueError", _empty_message(name), span))
            b.set_block(b.new_block())  # (unreachable: what follows still lowers)
            return low.const(0, node)
        if len(items) == 1:
            return items[0]
        fn = Intrinsic.MIN if name == "min" else Intrinsic.MAX
        return b.emit_value(lambda d: IntrinsicCall(d, fn, tuple(items), span))
    result = low.hidden(name)
    if name == "sum":
        b.emit(Copy(result, low.expr(node.args[1]) if len(node.args) == 2 else low.const(0, node), span))
        for item in items:
            b.emit(BinOp(result, BinOpKind.ADD, result, item, span))
        return result
    end = b.new_block()
    b.emit(Copy(result, low.const(name == "all", node), span))
    for item in items:
        truth = b.emit_value(lambda d, item=item: Truth(d, item, span))  # type: ignore[misc]
        decided, rest = b.new_block(), b.new_block()
        if name == "any":
            b.terminate(Branch(truth, decided.label, rest.label, span))
        else:
            b.terminate(Branch(truth, rest.label, decided.label, span))
        b.set_block(decided)
        b.emit(Copy(result, low.const(name == "any", node), span))
        b.jump(end)
        b.set_block(rest)
    b.jump(end)
    b.set_block(end)
    return result


def simple_builtin(low: Lowering, name: str, node: ast.Call) -> Var | None:
    """``divmod(a, b)``, ``pow(a, b)``, ``min``/``max`` of one iterable, the reductions; None when the call
    is left to ``lower.py`` (``min(a, b)``, the other builtins)."""
    if name in ("divmod", "pow"):
        if node.keywords or len(node.args) != 2 or any(isinstance(a, ast.Starred) for a in node.args):
            three = " (pow() with a modulus is not supported)" if name == "pow" else ""
            low.error(node, f"{name}() takes two positional arguments here{three}")
            return low.const(0, node)
        lhs, rhs = low.expr(node.args[0]), low.expr(node.args[1])
        span = low.span(node)
        if name == "pow":
            return low.b.emit_value(lambda d: BinOp(d, BinOpKind.POW, lhs, rhs, span))
        quotient = low.b.emit_value(lambda d: BinOp(d, BinOpKind.FLOORDIV, lhs, rhs, span))
        remainder = low.b.emit_value(lambda d: BinOp(d, BinOpKind.MOD, lhs, rhs, span))
        return low.b.emit_value(lambda d: MakeTuple(d, (quotient, remainder), span))
    if name in ITERATORS:
        low.error(node, f"{name}() can only be iterated over: use it in a for loop, or in sum/min/max/any/all")
        return low.const(0, node)
    if name in ("min", "max") and (len(node.args) != 1 or node.keywords):
        if node.keywords:
            low.error(node.keywords[0].value, f"{name}() keyword arguments (key=, default=) are not supported")
            return low.const(0, node)
        return None
    if name in REDUCTIONS:
        if len(node.args) == 1 and isinstance(node.args[0], ast.Starred):
            return None
        return reduction(low, name, node)
    return None
