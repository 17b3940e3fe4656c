"""What the frontend says of a construct SUBSET.md leaves out: the construct, then what to write instead.

    with open(p) as f:  →  demo.py:2:5: error: 'with' is not supported in compiled code

``MESSAGES`` holds one message per node type; ``message`` falls back to naming the node type. Both the
lowering (``lower.py``) and the parsing of a ``def`` (``source.py``: ``async def``) say them.
"""

from __future__ import annotations

import ast

MESSAGES: dict[type, str] = {
    ast.Try: "try/except is not supported; check the condition before the operation instead",
    ast.With: "'with' is not supported in compiled code",
    ast.AsyncWith: "'async with' is not supported in compiled code",
    ast.AsyncFor: "'async for' is not supported in compiled code",
    ast.AsyncFunctionDef: "async functions are not supported in compiled code",
    ast.Global: "'global' is not supported; pass the value as an argument or return it",
    ast.Nonlocal: "'nonlocal' (a closure over mutable state) is not supported; pass the value as an argument",
    ast.FunctionDef: "nested functions are not supported; define the helper at module level",
    ast.ClassDef: "classes are not supported in compiled code",
    ast.Import: "imports inside compiled functions are not supported; import at module level",
    ast.ImportFrom: "imports inside compiled functions are not supported; import at module level",
    ast.Delete: "'del' is not supported in compiled code",
    ast.Lambda: "lambdas are not supported; define a module-level function instead",
    ast.SetComp: "set comprehensions are not supported in compiled code",
    ast.DictComp: "dict comprehensions are not supported in compiled code",
    ast.GeneratorExp: "generator expressions are only supported inside sum/min/max/any/all; use a list comprehension",
    ast.Dict: "dicts are not supported as values in compiled code",
    ast.Set: "sets are not supported as values in compiled code",
    ast.JoinedStr: "f-strings are not supported; strings are not values in compiled code",
    ast.Yield: "generators ('yield') are not supported in compiled code",
    ast.YieldFrom: "generators ('yield from') are not supported in compiled code",
    ast.Await: "'await' is not supported in compiled code",
    ast.NamedExpr: "assignment expressions (':=') are not supported; assign in a statement",
    ast.Starred: "star-arguments are not supported; pass each argument",
    ast.Slice: "a slice can only be written inside brackets, as in a[1:-1]",
}
"""The message for each unsupported node type."""
if hasattr(ast, "Match"):
    MESSAGES[ast.Match] = "'match' is not supported; use if/elif"
if hasattr(ast, "TryStar"):
    MESSAGES[ast.TryStar] = "try/except* is not supported in compiled code"


def message(node: ast.AST, kind: str) -> str:
    """What to say of ``node``, a statement or expression (``kind``: ``"statements"``, ``"expressions"``) the
    frontend does not lower."""
    return MESSAGES.get(type(node), f"'{type(node).__name__}' {kind} are not supported")
