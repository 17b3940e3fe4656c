"""Lists in the frontend: displays, ``append``/``pop`` on a local list, and list comprehensions.

    out = [x, 2.0]          →  %out = intrinsic list.new %x, %1        (straight into the variable)
    out.append(v)           →  %out = intrinsic list.append %out, %v   (the list, assigned back to itself)
    [f(x) for x in a if p]  →  $list = []; for x' in a: if p': $list.append(f(x'))

Assigning ``append``'s result back to the list's variable is what types ``out = []``: the variable's type is
the join of its display and its appends (``aot.infer.lists``). A comprehension is lowered as the loop Python
runs, through ``lower.py``'s ``for`` (so over everything a ``for`` takes: ``range``, arrays, tuples, lists,
``enumerate``/``zip``/``reversed``), its targets renamed so that they do not leak into the function, as in
Python 3. A generator expression given to ``sum min max any all`` is iterated as the list it would make.
"""

from __future__ import annotations

import ast
import copy
from typing import Any, Protocol

from ..diagnostics import Span
from ..ir import Builder, IntrinsicCall, Var
from ..ir.ops import Intrinsic

METHODS = {
    "append": Intrinsic.LIST_APPEND,
    "pop": Intrinsic.LIST_POP,
    "sort": Intrinsic.LIST_SORT,
    "reverse": Intrinsic.LIST_REVERSE,
}


class Lowering(Protocol):
    """What this module uses of ``lower.Lowering``."""

    b: Builder
    locals: set[str]

    def span(self, node: ast.AST) -> Span: ...
    def error(self, node: ast.AST, message: str) -> None: ...
    def hidden(self, stem: str) -> Var: ...
    def const(self, value: Any, node: ast.AST) -> Var: ...
    def expr(self, node: ast.expr) -> Var: ...
    def stmt(self, node: ast.stmt) -> None: ...


def display(low: Lowering, node: ast.List, dest: Var | None = None) -> Var:
    """``[a, b, …]`` (into ``dest`` when given: ``out = []`` takes its item type from ``out``'s appends)."""
    if any(isinstance(e, ast.Starred) for e in node.elts):
        low.error(node, "starred items in a list display are not supported; append each item")
    items = tuple(low.expr(e) for e in node.elts if not isinstance(e, ast.Starred))
    span = low.span(node)
    if dest is None:
        return low.b.emit_value(lambda d: IntrinsicCall(d, Intrinsic.LIST_NEW, items, span))
    low.b.emit(IntrinsicCall(dest, Intrinsic.LIST_NEW, items, span))
    return dest


def method_call(low: Lowering, node: ast.Call) -> Var | None:
    """``name.append(x)`` / ``name.pop([i])`` / ``name.sort()`` / ``name.reverse()`` on a local variable; None
    for any other call."""
    func = node.func
    if not (
        isinstance(func, ast.Attribute)
        and func.attr in METHODS
        and isinstance(func.value, ast.Name)
        and func.value.id in low.locals
    ):
        return None
    if func.attr == "sort" and (node.args or node.keywords):  # (an array's a.sort(axis); a list's is refused
        return None  # by its type: aot.infer.lists.attribute_message)
    span = low.span(node)
    if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
        low.error(node, f"list.{func.attr}() takes its arguments by position here")
        return low.const(None, node)
    lst = Var(func.value.id)
    args = tuple(low.expr(a) for a in node.args)
    if func.attr == "append":
        low.b.emit(IntrinsicCall(lst, Intrinsic.LIST_APPEND, (lst, *args), span))
        return low.const(None, node)
    return low.b.emit_value(lambda d: IntrinsicCall(d, METHODS[func.attr], (lst, *args), span))


class _Append(ast.stmt):
    """A comprehension's ``$list.append(value)``, the innermost statement of the loops it becomes."""

    _fields = ("value",)
    value: ast.expr
    into: Var


def append_statement(low: Lowering, node: _Append) -> None:
    value = low.expr(node.value)
    low.b.emit(IntrinsicCall(node.into, Intrinsic.LIST_APPEND, (node.into, value), low.span(node)))


class _Rename(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]):
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id in self.names:
            node.id = self.names[node.id]
        return node


def _renamed(node: Any, names: dict[str, str]) -> Any:
    return _Rename(names).visit(copy.deepcopy(node)) if names else node


def comprehension(low: Lowering, node: ast.ListComp) -> Var:
    """``[elt for t in it if c …]``: the loops Python runs, appending to a hidden list."""
    result = low.hidden("list")
    low.b.emit(IntrinsicCall(result, Intrinsic.LIST_NEW, (), low.span(node)))
    names: dict[str, str] = {}
    loops: list[tuple[ast.comprehension, Any, Any, list[Any]]] = []  # (generator, target, iterable, ifs)
    for gen in node.generators:
        if gen.is_async:
            low.error(gen, "async comprehensions are not supported in compiled code")
            return result
        it = _renamed(gen.iter, names)  # (the first iterable is evaluated in the enclosing scope)
        for target in ast.walk(gen.target):
            if isinstance(target, ast.Name):
                fresh = low.hidden(target.id + ".").name
                names[target.id] = fresh
                low.locals.add(fresh)
        loops.append((gen, _renamed(gen.target, names), it, [_renamed(c, names) for c in gen.ifs]))
    append = _Append()
    append.value, append.into = _renamed(node.elt, names), result
    body: list[ast.stmt] = [ast.copy_location(append, node.elt)]
    for _, target, it, ifs in reversed(loops):
        for cond in reversed(ifs):
            body = [ast.copy_location(ast.If(test=cond, body=body, orelse=[]), cond)]
        loop = ast.For(target=target, iter=it, body=body, orelse=[], type_comment=None)
        body = [ast.copy_location(loop, node)]
    low.stmt(body[0])
    return result


def generator_as_list(node: ast.expr) -> ast.expr:
    """A generator expression given to a reduction, as the list comprehension it iterates like."""
    if isinstance(node, ast.GeneratorExp):
        return ast.copy_location(ast.ListComp(elt=node.elt, generators=node.generators), node)
    return node
