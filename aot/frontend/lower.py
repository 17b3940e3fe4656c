"""Python AST → untyped IR.

    def f(x):            func demo:f(%x)  file "demo.py" @1:1-2:17
        return x + 1  →  bb0:
                           %0 = const 1  @2:16-2:17
                           %1 = binop add %x, %0  @2:12-2:17
                           ret %1  @2:5-2:17

Names that are not locals become ``loadglobal`` (resolved later against the function's globals, so that
every lookup becomes an edge). Loops over ``range`` and over arrays become explicit counters; ``and``/``or``
and chained comparisons become branches, so short-circuiting is exact. Everything outside SUBSET.md is
reported — every problem of the function at once — as a ``CompileError`` with its ``file:line:col``.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable
from functools import partial
from types import CodeType
from typing import Any

from ..diagnostics import DiagnosticSink, Span
from ..ir import (
    BinOp,
    BinOpKind,
    Block,
    Branch,
    Builder,
    CmpKind,
    Compare,
    Const,
    Copy,
    Function,
    GetAttr,
    GetItem,
    GetView,
    Intrinsic,
    IntrinsicCall,
    Jump,
    LoadGlobal,
    MakeTuple,
    Raise,
    Return,
    SetItem,
    Truth,
    UnaryKind,
    UnaryOp,
    Var,
)
from ..ir.ops import CallValue
from ..parallel import is_prange
from . import iteration, lists, loops, unsupported
from .source import SourceInfo, read_source

_BINOPS = {
    ast.Add: BinOpKind.ADD,
    ast.Sub: BinOpKind.SUB,
    ast.Mult: BinOpKind.MUL,
    ast.Div: BinOpKind.TRUEDIV,
    ast.FloorDiv: BinOpKind.FLOORDIV,
    ast.Mod: BinOpKind.MOD,
    ast.Pow: BinOpKind.POW,
    ast.LShift: BinOpKind.LSHIFT,
    ast.RShift: BinOpKind.RSHIFT,
    ast.BitAnd: BinOpKind.AND,
    ast.BitOr: BinOpKind.OR,
    ast.BitXor: BinOpKind.XOR,
}
_UNARY = {ast.USub: UnaryKind.NEG, ast.UAdd: UnaryKind.POS, ast.Invert: UnaryKind.INVERT, ast.Not: UnaryKind.NOT}
_CMPS = {
    ast.Eq: CmpKind.EQ,
    ast.NotEq: CmpKind.NE,
    ast.Lt: CmpKind.LT,
    ast.LtE: CmpKind.LE,
    ast.Gt: CmpKind.GT,
    ast.GtE: CmpKind.GE,
}

BUILTIN_EXCEPTIONS = frozenset(
    name for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, BaseException)
)


SUPPORTED_BUILTINS = frozenset({"abs", "min", "max", "int", "float", "bool", "len", "range", "round", "sorted"})
SUPPORTED_BUILTINS |= {"isinstance", "divmod", "pow", *iteration.ITERATORS, *iteration.REDUCTIONS}


def _assigned_names(fn: ast.FunctionDef) -> set[str]:
    """Names Python treats as locals of ``fn``: parameters and every name bound in its body."""
    names = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
    scoped = {id(n) for c in ast.walk(fn) if isinstance(c, ast.comprehension) for n in ast.walk(c.target)}
    for node in ast.walk(fn):
        if node is fn:
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and id(node) not in scoped:
            names.add(node.id)  # (a comprehension's targets are its own, as in Python 3: frontend/lists.py)
    return names


_Loop = iteration.Loop


class Lowering:
    """State of lowering one function: the builder, the loop stack, the locals and the diagnostics."""

    def __init__(self, key: str, node: ast.FunctionDef, src: SourceInfo, globals_: dict[str, Any], options: Any = None):
        self.node = node
        # ``prange`` loops: "parallel" (``parallel=True``), "kernel" (rejected), else "serial" (as ``range``)
        kernel, parallel = getattr(options, "kernel", False), getattr(options, "parallel", False)
        self.prange_mode = "kernel" if kernel else "parallel" if parallel else "serial"
        self.nogil = bool(getattr(options, "nogil", False)) and not kernel
        self.src = src
        self.globals = globals_
        self.sink = DiagnosticSink()
        self.locals = _assigned_names(node)
        params = tuple(a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs)
        self.b = Builder(key, params, src.file, src.span(node))
        self.loops: list[_Loop] = []
        self.displays: set[Var] = set()  # tuple displays: unpacking one needs no length check
        self._hidden = 0
        self._check_signature(node)

    # ------------------------------------------------------------------ helpers
    def span(self, node: ast.AST) -> Span:
        return self.src.span(node)

    def error(self, node: ast.AST, message: str) -> None:
        self.sink.error(self.span(node), message)

    def hidden(self, stem: str) -> Var:
        """A variable no Python name can clash with (loop counters, and/or results …)."""
        self._hidden += 1
        return Var(f"${stem}{self._hidden}")

    def const(self, value: Any, node: ast.AST) -> Var:
        return self.b.emit_value(lambda d: Const(d, value, self.span(node)))

    def is_builtin(self, name: str) -> bool:
        """Whether ``name`` in this function means the builtin of that name (not shadowed)."""
        return name not in self.locals and name not in self.globals and hasattr(builtins, name)

    def _check_signature(self, node: ast.FunctionDef) -> None:
        args = node.args
        if args.vararg is not None:
            self.error(args.vararg, "*args is not supported; declare each parameter")
        if args.kwarg is not None:
            self.error(args.kwarg, "**kwargs is not supported; declare each parameter")

    # ------------------------------------------------------------------ statements
    def lower(self) -> Function:
        body = self.node.body
        if (
            body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            body = body[1:]
        if self.nogil:  # (the wrappers release the GIL: ``aot.codegen.cpython``)
            self.b.emit_value(lambda d: IntrinsicCall(d, Intrinsic.NOGIL, (), self.span(self.node)))
        self.stmts(body)
        if not self.b.terminated:
            self.b.terminate(Return(None, self.span(self.node)))
        self.sink.raise_if_any()
        return self.b.finish()

    def stmts(self, stmts: list[ast.stmt]) -> None:
        for stmt in stmts:
            self.stmt(stmt)

    def stmt(self, node: ast.stmt) -> None:
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is None:
            self.error(node, unsupported.message(node, "statements"))
            return
        method(node)

    def stmt_Pass(self, node: ast.Pass) -> None:
        pass

    def stmt_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a string used as a comment
        self.expr(node.value)

    def stmt_Assign(self, node: ast.Assign) -> None:
        if isinstance(node.value, ast.List) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            lists.display(self, node.value, Var(node.targets[0].id))  # (``out = []``: typed by out's appends)
            return
        value = self.expr(node.value)
        for target in node.targets:
            self.assign(target, value, node)

    def stmt_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is None:
            return
        self.assign(node.target, self.expr(node.value), node)

    def stmt__Append(self, node: lists._Append) -> None:
        lists.append_statement(self, node)

    def stmt_AugAssign(self, node: ast.AugAssign) -> None:
        op = _BINOPS.get(type(node.op))
        if op is None:
            self.error(node, "this augmented assignment is not supported")
            return
        span = self.span(node)
        target = node.target
        if isinstance(target, ast.Name):
            current = self.name_load(target.id, target)
            result = self.b.emit_value(lambda d: BinOp(d, op, current, self.expr(node.value), span))
            self.b.emit(Copy(Var(target.id), result, span))
        elif isinstance(target, ast.Subscript):
            obj, index = self.subscript(target)
            current = self.b.emit_value(lambda d: GetItem(d, obj, index, self.span(target)))
            rhs = self.expr(node.value)
            result = self.b.emit_value(lambda d: BinOp(d, op, current, rhs, span))
            self.b.emit(SetItem(obj, index, result, span))
        else:
            self.error(target, "only names and array elements can be targets of augmented assignment")

    def assign(self, target: ast.expr, value: Var, node: ast.AST) -> None:
        span = self.span(node)
        if isinstance(target, ast.Name):
            self.b.emit(Copy(Var(target.id), value, span))
        elif isinstance(target, ast.Tuple):
            if value not in self.displays:  # (a list or an array may hold another number of items)
                count = self.const(len(target.elts), target)
                self.b.emit_value(lambda d: IntrinsicCall(d, Intrinsic.UNPACK, (value, count), span))
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Starred):
                    self.error(elt, "starred assignment is not supported; unpack each element")
                    continue
                idx = self.const(i, elt)
                span = self.span(elt)
                item = self.b.emit_value(lambda d, idx=idx, span=span: GetItem(d, value, (idx,), span))  # type: ignore[misc]
                self.assign(elt, item, elt)
        elif isinstance(target, ast.Subscript):
            obj, index = self.subscript(target)
            self.b.emit(SetItem(obj, index, value, span))
        elif isinstance(target, ast.Attribute):
            self.error(target, "assigning to attributes is not supported; only array elements can be set")
        else:
            self.error(target, f"cannot assign to {type(target).__name__}")

    def stmt_Return(self, node: ast.Return) -> None:
        if any(loop.parallel for loop in self.loops):
            self.error(node, "'return' inside a prange loop is not supported; return after the loop")
        value = self.expr(node.value) if node.value is not None else None
        self.b.terminate(Return(value, self.span(node)))

    def condition(self, node: ast.expr) -> Var:
        value = self.expr(node)
        return self.b.emit_value(lambda d: Truth(d, value, self.span(node)))

    def branch(self, node: ast.expr, if_true: Block, if_false: Block) -> None:
        """Branch on the truth of ``node``. ``and``/``or``/``not`` become branches (short-circuiting exactly as
        Python evaluates them), so each operand's test decides an edge of its own: in ``if x is not None and
        x > 0:`` the body is reached only through edges where ``x`` is known to hold a value."""
        if isinstance(node, ast.BoolOp):
            for value in node.values[:-1]:
                rest = self.b.new_block()
                if isinstance(node.op, ast.And):
                    self.branch(value, rest, if_false)
                else:
                    self.branch(value, if_true, rest)
                self.b.set_block(rest)
            self.branch(node.values[-1], if_true, if_false)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            self.branch(node.operand, if_false, if_true)
        else:
            cond = self.condition(node)
            self.b.terminate(Branch(cond, if_true.label, if_false.label, self.span(node)))

    def stmt_If(self, node: ast.If) -> None:
        then, other, end = self.b.new_block(), self.b.new_block(), self.b.new_block()
        self.branch(node.test, then, other)
        self.b.set_block(then)
        self.stmts(node.body)
        self.b.jump(end)
        self.b.set_block(other)
        self.stmts(node.orelse)
        self.b.jump(end)
        self.b.set_block(end)

    def stmt_While(self, node: ast.While) -> None:
        head, body, orelse, end = (self.b.new_block() for _ in range(4))
        self.b.jump(head)
        self.b.set_block(head)
        self.branch(node.test, body, orelse)
        self.loop_body(node, body, head, end)
        self.b.set_block(orelse)
        self.stmts(node.orelse)
        self.b.jump(end)
        self.b.set_block(end)

    def loop_body(
        self, node: ast.While | ast.For, body: Block, cont: Block, end: Block, parallel: bool = False
    ) -> None:
        self.b.set_block(body)
        self.loops.append(_Loop(end, cont, parallel))
        self.stmts(node.body)
        self.loops.pop()
        self.b.jump(cont)

    def stmt_Break(self, node: ast.Break) -> None:
        if self.loops[-1].parallel:
            self.error(
                node, "'break' out of a prange loop is not supported (its iterations run in parallel); use range"
            )
            return
        self.b.terminate(Jump(self.loops[-1].break_to.label, self.span(node)))

    def stmt_Continue(self, node: ast.Continue) -> None:
        self.b.terminate(Jump(self.loops[-1].continue_to.label, self.span(node)))

    def stmt_For(self, node: ast.For) -> None:
        if iteration.lower_for(self, node):  # enumerate, zip, reversed, tuple displays, unpacking targets
            return
        if not isinstance(node.target, ast.Name):
            self.error(node.target, "the loop target must be a single name")
            return
        it = node.iter
        if (
            isinstance(it, ast.Call)
            and isinstance(it.func, ast.Name)
            and it.func.id == "range"
            and self.is_builtin("range")
        ):
            self.for_range(node, it)
        elif isinstance(it, ast.Call) and self.is_prange_call(it.func):
            if self.prange_mode == "kernel":
                self.error(it, "prange is not supported in kernels; a kernel's threads are its parallelism")
                return
            self.for_range(node, it, parallel=self.prange_mode == "parallel")
        else:
            self.for_sequence(node)

    def is_prange_call(self, func: ast.expr) -> bool:
        """Whether ``func`` names ``aot.prange`` or ``numba.prange`` (a global, or an attribute of one)."""
        path: list[str] = []
        while isinstance(func, ast.Attribute):
            path.append(func.attr)
            func = func.value
        if not isinstance(func, ast.Name) or func.id in self.locals or func.id not in self.globals:
            return False
        value = self.globals[func.id]
        for attr in reversed(path):
            value = getattr(value, attr, None)
        return is_prange(value)

    def for_range(self, node: ast.For, call: ast.Call, parallel: bool = False) -> None:
        """``for i in range(a, b, s)``: the trip count is computed once (overflow-free, in codegen), then
        ``i = a + k * s`` for ``k`` in ``0 … count-1`` — bounds evaluated once, as Python does."""
        span = self.span(call)
        if call.keywords or not 1 <= len(call.args) <= 3 or any(isinstance(a, ast.Starred) for a in call.args):
            self.error(call, "range() takes 1 to 3 positional arguments")
            return
        args = call.args
        step_const = _const_int(args[2]) if len(args) == 3 else 1
        if step_const == 0:
            self.error(args[2], "range() arg 3 must not be zero")
            return
        start = self.hidden("start")
        self.b.emit(Copy(start, self.const(0, call) if len(args) == 1 else self.expr(args[0]), span))
        stop = self.expr(args[-1] if len(args) < 3 else args[1])
        step = self.hidden("step")
        self.b.emit(Copy(step, self.expr(args[2]) if len(args) == 3 else self.const(1, call), span))
        length = Intrinsic.PRANGE_LEN if parallel else Intrinsic.RANGE_LEN
        count = self.b.emit_value(lambda d: IntrinsicCall(d, length, (start, stop, step), span))
        value = partial(loops.range_value, self, start, step, step_const == 1, span=span)
        self.counted_loop(node, count, value, span, parallel)

    def for_sequence(self, node: ast.For) -> None:
        """``for x in a`` (a 1-D array or a tuple): ``x = a[k]`` for ``k`` in ``0 … len(a)-1``."""
        span = self.span(node.iter)
        seq = self.b.emit_value(lambda d: Copy(d, self.expr(node.iter), span))
        length = self.b.emit_value(lambda d: IntrinsicCall(d, Intrinsic.LEN, (seq,), span))
        self.counted_loop(node, length, lambda k: self.b.emit_value(lambda d: GetItem(d, seq, (k,), span)), span)

    def counted_loop(
        self, node: ast.For, count: Var, value: Callable[[Var], iteration.Item], span: Span, parallel: bool = False
    ) -> None:
        """A ``for`` loop as a counted loop (``loops.CountedLoop``: ``$k`` from 0 to ``count``): each iteration
        binds the target to ``value($k)`` and steps ``$k`` before the body; ``else`` runs when the items are
        done."""
        loop = loops.CountedLoop(self, count, span, node.iter)
        loop.start()
        orelse, end = loop.enter(2, exit=0)
        loop.next(lambda k: iteration.bind(self, node.target, value(k)))
        self.loop_body(node, self.b.block, loop.head, end, parallel)
        self.b.set_block(orelse)
        self.stmts(node.orelse)
        self.b.jump(end)
        self.b.set_block(end)

    def stmt_Raise(self, node: ast.Raise) -> None:
        exc = node.exc
        message = ""
        cls_node = exc
        if isinstance(exc, ast.Call):
            cls_node = exc.func
            if exc.keywords or len(exc.args) > 1:
                self.error(exc, "raise takes an exception class with at most one constant message")
                return
            if exc.args:
                arg = exc.args[0]
                if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                    self.error(arg, "the exception message must be a constant string")
                    return
                message = arg.value
        if (
            exc is None
            or not isinstance(cls_node, ast.Name)
            or cls_node.id not in BUILTIN_EXCEPTIONS
            or not self.is_builtin(cls_node.id)
        ):
            self.error(node, 'raise needs a builtin exception class, e.g. raise ValueError("message")')
            return
        if node.cause is not None:
            self.error(node.cause, "'raise … from …' is not supported")
            return
        self.b.terminate(Raise(cls_node.id, message, self.span(node)))

    def stmt_Assert(self, node: ast.Assert) -> None:
        message = ""
        if node.msg is not None:
            if not (isinstance(node.msg, ast.Constant) and isinstance(node.msg.value, str)):
                self.error(node.msg, "the assert message must be a constant string")
                return
            message = node.msg.value
        fail, ok = self.b.new_block(), self.b.new_block()
        self.branch(node.test, ok, fail)
        self.b.set_block(fail)
        self.b.terminate(Raise("AssertionError", message, self.span(node)))
        self.b.set_block(ok)

    # ------------------------------------------------------------------ expressions
    def expr(self, node: ast.expr) -> Var:
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            self.error(node, unsupported.message(node, "expressions"))
            return self.const(0, node)
        return method(node)

    def expr_Constant(self, node: ast.Constant) -> Var:
        value = node.value
        if isinstance(value, (bool, int, float)) or value is None:
            if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
                self.error(node, "integer constant does not fit in 64 bits")
                return self.const(0, node)
            return self.const(value, node)
        if isinstance(value, str):
            return self.const(value, node)  # a compile-time value only (aot/infer/constructs.py)
        else:
            self.error(node, f"constants of type {type(value).__name__} are not supported")
        return self.const(0, node)

    def name_load(self, name: str, node: ast.AST) -> Var:
        if name in self.locals:
            return Var(name)
        return self.b.emit_value(lambda d: LoadGlobal(d, name, self.span(node)))

    def expr_Name(self, node: ast.Name) -> Var:
        return self.name_load(node.id, node)

    def expr_BinOp(self, node: ast.BinOp) -> Var:
        op = _BINOPS.get(type(node.op))
        lhs, rhs = self.expr(node.left), self.expr(node.right)
        if op is None:  # ``a @ b``: NumPy's inner product of two 1-D arrays (aot.infer.npfuncs)
            return self.b.emit_value(lambda d: IntrinsicCall(d, Intrinsic.NP_DOT, (lhs, rhs), self.span(node)))
        return self.b.emit_value(lambda d: BinOp(d, op, lhs, rhs, self.span(node)))

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Var:
        operand = self.expr(node.operand)
        return self.b.emit_value(lambda d: UnaryOp(d, _UNARY[type(node.op)], operand, self.span(node)))

    def expr_BoolOp(self, node: ast.BoolOp) -> Var:
        """``a or b`` is ``a`` when ``a`` is true, else ``b`` (and dually for ``and``), with short-circuit."""
        result = self.hidden("bool")
        span = self.span(node)
        end = self.b.new_block()
        for value_node in node.values[:-1]:
            self.b.emit(Copy(result, self.expr(value_node), span))
            truth = self.b.emit_value(lambda d: Truth(d, result, span))
            rest = self.b.new_block()
            if isinstance(node.op, ast.Or):
                self.b.terminate(Branch(truth, end.label, rest.label, span))
            else:
                self.b.terminate(Branch(truth, rest.label, end.label, span))
            self.b.set_block(rest)
        self.b.emit(Copy(result, self.expr(node.values[-1]), span))
        self.b.jump(end)
        self.b.set_block(end)
        return result

    def expr_Compare(self, node: ast.Compare) -> Var:
        result = self.hidden("cmp")
        span = self.span(node)
        end = self.b.new_block() if len(node.ops) > 1 else None
        lhs = self.expr(node.left)
        for i, (op, comparator) in enumerate(zip(node.ops, node.comparators)):
            if isinstance(op, (ast.In, ast.NotIn)) and i == len(node.ops) - 1:
                found = iteration.contains(self, lhs, comparator, node)
                if isinstance(op, ast.NotIn):
                    found = self.b.emit_value(lambda d, f=found: UnaryOp(d, UnaryKind.NOT, f, span))  # type: ignore[misc]
                self.b.emit(Copy(result, found, span))
                break
            kind = _CMPS.get(type(op))
            if isinstance(op, (ast.In, ast.NotIn)):
                self.error(node, f"'{_op_text(op)}' inside a chained comparison is not supported; split it with 'and'")
                return self.const(False, node)
            rhs = self.expr(comparator)
            if isinstance(op, (ast.Is, ast.IsNot)):
                tested = self.none_test(
                    node, op, lhs, rhs, node.left if i == 0 else node.comparators[i - 1], comparator
                )
                if tested is None:
                    return self.const(False, node)
                self.b.emit(IntrinsicCall(result, tested[0], (tested[1],), span))
            elif kind in (CmpKind.EQ, CmpKind.NE) and (
                _is_none(comparator) or _is_none(node.left if i == 0 else node.comparators[i - 1])
            ):  # ``x == None``: ``x is None`` (aot.infer.optional), so it narrows as ``is`` does
                tested_var = lhs if _is_none(comparator) else rhs
                fn = Intrinsic.EQ_NONE if kind is CmpKind.EQ else Intrinsic.NE_NONE
                self.b.emit(IntrinsicCall(result, fn, (tested_var,), span))
            elif kind is None:
                self.error(
                    node, f"the '{_op_text(op)}' comparison is not supported; compare numbers with < <= == != >= >"
                )
                return self.const(False, node)
            else:
                self.b.emit(Compare(result, kind, lhs, rhs, span))
            if end is not None and i < len(node.ops) - 1:
                rest = self.b.new_block()
                self.b.terminate(Branch(result, rest.label, end.label, span))
                self.b.set_block(rest)
            lhs = rhs
        if end is not None:
            self.b.jump(end)
            self.b.set_block(end)
        return result

    def none_test(
        self, node: ast.Compare, op: ast.cmpop, lhs: Var, rhs: Var, left: ast.expr, right: ast.expr
    ) -> tuple[Intrinsic, Var] | None:
        """``x is None`` / ``x is not None`` (either side None): the intrinsic and the tested value."""
        if _is_none(right):
            tested = lhs
        elif _is_none(left):
            tested = rhs
        else:
            word = "is" if isinstance(op, ast.Is) else "is not"
            self.error(node, f"'{word}' is only supported against None (x {word} None); compare numbers with == or !=")
            return None
        return (Intrinsic.IS_NONE if isinstance(op, ast.Is) else Intrinsic.IS_NOT_NONE), tested

    def expr_IfExp(self, node: ast.IfExp) -> Var:
        result = self.hidden("ifexp")
        span = self.span(node)
        then, other, end = self.b.new_block(), self.b.new_block(), self.b.new_block()
        self.branch(node.test, then, other)
        for block, value in ((then, node.body), (other, node.orelse)):
            self.b.set_block(block)
            self.b.emit(Copy(result, self.expr(value), span))
            self.b.jump(end)
        self.b.set_block(end)
        return result

    def expr_Tuple(self, node: ast.Tuple) -> Var:
        items = tuple(self.expr(e) for e in node.elts)
        display = self.b.emit_value(lambda d: MakeTuple(d, items, self.span(node)))
        self.displays.add(display)
        return display

    def expr_List(self, node: ast.List) -> Var:
        return lists.display(self, node)

    def expr_ListComp(self, node: ast.ListComp) -> Var:
        return lists.comprehension(self, node)

    def expr_Attribute(self, node: ast.Attribute) -> Var:
        obj = self.expr(node.value)
        return self.b.emit_value(lambda d: GetAttr(d, obj, node.attr, self.span(node)))

    def index(self, node: ast.expr) -> tuple[Var, ...]:
        if isinstance(node, ast.Tuple):
            return tuple(self.expr(e) for e in node.elts)
        return (self.expr(node),)

    def expr_Subscript(self, node: ast.Subscript) -> Var:
        if _has_slices(node):
            return self.subscript(node)[0]  # the view itself
        obj, index = self.subscript(node)
        return self.b.emit_value(lambda d: GetItem(d, obj, index, self.span(node)))

    def subscript(self, node: ast.Subscript) -> tuple[Var, tuple[Var, ...]]:
        """The object and the integer indices of ``obj[…]``; with slices or ``...`` the object is the view
        (a ``getview``) and the indices are none: ``a[1:-1] = 0.0`` assigns to the whole view."""
        obj = self.expr(node.value)
        if not _has_slices(node):
            return obj, self.index(node.slice)
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        spec, index = "", []
        for e in items:
            if isinstance(e, ast.Slice):
                spec += "s"
                for part in (e.lower, e.upper, e.step):
                    index.append(self.const(None, e) if part is None else self.expr(part))
            elif _is_ellipsis(e):
                spec += "e"
            else:
                spec += "i"
                index.append(self.expr(e))
        view = self.b.emit_value(lambda d: GetView(d, obj, spec, tuple(index), self.span(node)))
        return view, ()

    def expr_Call(self, node: ast.Call) -> Var:
        if (
            isinstance(node.func, ast.Name)
            and self.is_builtin(node.func.id)
            and node.func.id not in SUPPORTED_BUILTINS
            and node.func.id not in BUILTIN_EXCEPTIONS
        ):
            self.error(node, f"calls to {node.func.id}() are not supported in compiled code")
            return self.const(0, node)
        if isinstance(node.func, ast.Name) and node.func.id in SUPPORTED_BUILTINS and self.is_builtin(node.func.id):
            desugared = iteration.simple_builtin(self, node.func.id, node)
            if desugared is not None:
                return desugared
        method = lists.method_call(self, node)  # ``name.append(x)``, ``name.pop()``
        if method is not None:
            return method
        for kw in node.keywords:
            if kw.arg is None:
                self.error(kw.value, "**kwargs in calls is not supported; pass each keyword argument by name")
        func = self.expr(node.func)
        args = tuple(self.expr(a) for a in node.args)
        keywords = tuple(kw for kw in node.keywords if kw.arg is not None)
        args += tuple(self.expr(kw.value) for kw in keywords)
        names = ",".join(kw.arg for kw in keywords)  # type: ignore[misc]  # (None filtered out above)
        return self.b.emit_value(lambda d: CallValue(d, func, args, self.span(node), keywords=names))


def _is_ellipsis(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is Ellipsis


def _has_slices(node: ast.Subscript) -> bool:
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    return any(isinstance(e, ast.Slice) or _is_ellipsis(e) for e in items)


def _op_text(op: ast.cmpop) -> str:
    return {ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}.get(type(op), "?")


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


_const_int = iteration.const_int


def lower_function(
    py_func: Callable,
    key: str,
    same_code: Callable[[Callable, CodeType | None, str | None], bool] | None = None,
    options: Any = None,
) -> Function:
    """The untyped IR of ``py_func``, named ``key``; raises ``CompileError`` listing every unsupported construct.

    ``same_code(py_func, code, docstring)`` (``aot.world.fingerprint.same_code``), when given, says whether
    the source as parsed is the code Python imported; ``SourceChangedError`` when not (``source.read_source``:
    only what runs is ever compiled). ``options`` (the method's ``MethodOptions``) decide what ``prange``
    means (``parallel``; rejected in kernels) and whether the IR starts with the ``nogil`` marker."""
    node, src = read_source(py_func, same_code)
    globals_ = dict(getattr(py_func, "__globals__", {}))
    code = py_func.__code__
    for name in code.co_freevars:
        globals_.setdefault(name, None)  # closure cells shadow builtins just like globals do
    return Lowering(key, node, src, globals_, options).lower()
