"""A function's ``def``, read from its file now, checked to be what Python imported: what is compiled is
what was imported.

    read_source(f, same_code)  →  (f's ``def`` node, SourceInfo("demo.py", line_offset=11, col_offset=0))
                                  (f's ``def`` at line 12 of demo.py, as imported; else SourceChangedError)

The file may have been saved since the import, or during the build. ``parse_source`` parses the ``def`` where
``inspect`` finds it; ``compile_parsed`` compiles it as it would compile where the function was defined (in its
classes and functions, with its module's imports and its ``__future__`` flags; nothing is run); ``same_code``
says whether that is the code object Python imported. When it is not, a ``def`` of the same name anywhere in
the file that compiles to it is taken (lines added above a function move it away from the line its code
remembers); when there is none, ``SourceChangedError``: nothing is compiled from a file that no longer holds
the imported code.
"""

from __future__ import annotations
import __future__

import ast
import inspect
import linecache
import os
from collections.abc import Callable
from dataclasses import dataclass
from types import CodeType
from typing import Any

from ..diagnostics import CompileError, Diagnostic, SourceChangedError, Span
from .unsupported import MESSAGES


@dataclass(frozen=True)
class SourceInfo:
    """Where a function's source text lives: its file, and how to map AST positions to file positions."""

    file: str
    line_offset: int
    col_offset: int

    def span(self, node: ast.AST) -> Span:
        line = getattr(node, "lineno", 1) + self.line_offset
        last: Any = getattr(node, "end_lineno", None) or getattr(node, "lineno", 1)
        end_line = last + self.line_offset
        col = getattr(node, "col_offset", 0) + self.col_offset + 1
        end_col = (getattr(node, "end_col_offset", None) or 0) + self.col_offset + 1
        return Span(self.file, line, col, end_line, end_col)


def parse_source(py_func: Callable) -> tuple[ast.FunctionDef, SourceInfo]:
    """The ``def`` node of ``py_func`` and the mapping of its positions to the file."""
    try:
        lines, first = inspect.getsourcelines(py_func)
    except (OSError, TypeError) as exc:
        raise CompileError(f"cannot compile {py_func.__qualname__}: its source is not available ({exc})") from None
    first_line = lines[0]
    indent = len(first_line) - len(first_line.lstrip())
    text = "".join(ln[indent:] if not indent or ln[:indent].isspace() else ln.lstrip() for ln in lines)
    file = py_func.__code__.co_filename
    tree = ast.parse(text)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            info = SourceInfo(file, max(first, 1) - 1, indent)
            if isinstance(node, ast.AsyncFunctionDef):
                raise CompileError([Diagnostic(info.span(node), MESSAGES[ast.AsyncFunctionDef])])
            return node, info
    raise CompileError(f"cannot compile {py_func.__qualname__}: no 'def' found in its source")


_FUTURE_FLAGS = 0
for _feature in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _feature).compiler_flag


def compile_parsed(py_func: Callable, node: ast.FunctionDef) -> CodeType | None:
    """The code object the parsed ``def`` (``node``, not changed) compiles to where ``py_func`` was defined:
    in the classes and functions its qualified name says (a class mangles private names; an enclosing
    function makes its free variables cells), in a module that binds the same names by ``import``, with the
    ``__future__`` flags of its code. Nothing is run. None when it does not compile. (Its lines may be
    shifted from the file's: what the compiler makes of lines depends on how they follow each other only.)"""
    code = py_func.__code__
    module_source = _module_source(py_func)
    if module_source is None:
        return None
    body: list[ast.stmt] = [node]
    scopes = _enclosing_scopes(py_func.__qualname__)
    free = [name for name in code.co_freevars if name != "__class__"]  # (a class gives ``__class__``)
    if free and not any(kind == "def" for kind, _ in scopes):
        scopes.insert(0, ("def", "_aot_enclosing"))
    innermost_def = max((i for i, (kind, _) in enumerate(scopes) if kind == "def"), default=-1)
    for i in reversed(range(len(scopes))):
        kind, name = scopes[i]
        if kind == "def":
            cells: list[ast.stmt] = [
                _placed(ast.Assign(targets=[_placed(ast.Name(n, ast.Store()))], value=_placed(ast.Constant(None))))
                for n in (free if i == innermost_def else ())
            ]
            body = [
                _placed(
                    ast.FunctionDef(
                        name=name,
                        args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
                        body=cells + body,
                        decorator_list=[],
                        returns=None,
                        type_params=[],  # type: ignore[call-arg]  # (a field from Python 3.12 on)
                    )
                )
            ]
        else:
            body = [
                _placed(ast.ClassDef(name=name, bases=[], keywords=[], body=body, decorator_list=[], type_params=[]))  # type: ignore[call-arg]
            ]
    # The names the module binds by ``import`` change how calls of their attributes compile (CPython 3.11
    # loads the attribute, not a method, of an imported name): the same names are bound by import here.
    imports = module_source[1]
    if imports:
        body.insert(0, _placed(ast.Import(names=[_placed(ast.alias(name=name)) for name in imports])))
    try:
        found: CodeType | None = compile(
            ast.Module(body=body, type_ignores=[]),
            code.co_filename,
            "exec",
            flags=code.co_flags & _FUTURE_FLAGS,
            dont_inherit=True,
        )
    except (SyntaxError, ValueError, TypeError, RecursionError):
        return None
    for name in [name for _, name in scopes] + [node.name]:
        assert found is not None
        found = next((c for c in found.co_consts if type(c) is CodeType and c.co_name == name), None)
        if found is None:
            return None
    return found


def _placed(node: Any) -> Any:
    """A node made here, at the first line (the parsed ``def`` keeps its own positions: nothing walks it)."""
    node.lineno, node.col_offset, node.end_lineno, node.end_col_offset = 1, 0, 1, 0
    return node


_MODULES: dict[str, tuple[list[str], ast.Module, list[str]]] = {}  # file → (its lines as read, tree, imports)


def _module_source(py_func: Callable) -> tuple[ast.Module, list[str]] | None:
    """``py_func``'s module as its file reads now, and the names it binds by ``import`` in its own scope
    (None when it does not parse); parsed once per file and text."""
    filename = py_func.__code__.co_filename
    lines = linecache.getlines(filename, py_func.__globals__)
    known = _MODULES.get(filename)
    if known is not None and known[0] is lines:
        return known[1], known[2]
    try:
        tree = ast.parse("".join(lines))
    except (SyntaxError, ValueError, RecursionError):
        return None
    names: set[str] = set()
    stack: list[ast.AST] = list(tree.body)
    while stack:  # (the module's scope: not inside functions, lambdas or classes)
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update(alias.asname or alias.name.split(".")[0] for alias in node.names if alias.name != "*")
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
    _MODULES[filename] = (lines, tree, sorted(names))
    return tree, _MODULES[filename][2]


def _enclosing_scopes(qualname: str) -> list[tuple[str, str]]:
    """``"f.<locals>.C.g"`` → ``[("def", "f"), ("class", "C")]``: what encloses the function, outermost first."""
    parts = qualname.split(".")[:-1]
    scopes = []
    i = 0
    while i < len(parts):
        if i + 1 < len(parts) and parts[i + 1] == "<locals>":
            scopes.append(("def", parts[i]))
            i += 2
        else:
            scopes.append(("class", parts[i]))
            i += 1
    return scopes


def _is_imported(py_func: Callable, node: ast.FunctionDef, same_code: Callable) -> bool:
    return same_code(py_func, compile_parsed(py_func, node), ast.get_docstring(node, clean=False))


def _imported_def(py_func: Callable, same_code: Callable) -> tuple[ast.FunctionDef, SourceInfo] | None:
    """A ``def`` of ``py_func``'s name anywhere in its file as it reads now that compiles to the code Python
    imported, and where it lies; None when there is none. (Lines added above a function move it away from
    the line its code object remembers, where ``inspect`` looks for it.)"""
    module_source = _module_source(py_func)
    if module_source is None:
        return None
    src = SourceInfo(py_func.__code__.co_filename, 0, 0)  # (the module's tree: lines and columns as in the file)
    name = py_func.__code__.co_name
    for node in ast.walk(module_source[0]):
        if isinstance(node, ast.FunctionDef) and node.name == name and _is_imported(py_func, node, same_code):
            return node, src
    return None


def read_source(
    py_func: Callable, same_code: Callable[[Callable, CodeType | None, str | None], bool] | None = None
) -> tuple[ast.FunctionDef, SourceInfo]:
    """The ``def`` node of ``py_func`` as its file reads now, and the mapping of its positions to the file.

    ``same_code(py_func, code, docstring)`` (``aot.world.fingerprint.same_code``), when given, says whether
    the source as parsed is the code Python imported (``code``: what the parsed ``def`` compiles to): the
    file may have been saved since, and the source is read from it now. ``SourceChangedError`` when not:
    only what runs is ever compiled."""
    try:
        node, src = parse_source(py_func)
    except SyntaxError:  # (what was imported parsed: the file changed)
        if same_code is None:
            raise
        node, src = None, SourceInfo(py_func.__code__.co_filename, py_func.__code__.co_firstlineno - 1, 0)
    if same_code is not None and (node is None or not _is_imported(py_func, node, same_code)):
        found = _imported_def(py_func, same_code)
        if found is None:
            code = py_func.__code__
            where = src.span(node) if node is not None else Span(code.co_filename, code.co_firstlineno, 1)
            raise SourceChangedError(
                [
                    Diagnostic(
                        where,
                        (
                            f"source changed during the build or since the import: {os.path.basename(src.file)} "
                            f"no longer holds the code of {py_func.__qualname__} that Python imported; nothing is "
                            f"compiled from it"
                        ),
                    )
                ]
            )
        node, src = found
    assert node is not None  # (parsed, or found in the file as imported)
    return node, src
