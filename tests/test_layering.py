"""Layering: the import graph of ``aot``, ``serializer`` and ``linker`` has no cycle, and the runtime stays lean.

    aot.codegen.function → aot.codegen.gpu → aot.codegen.function     (a cycle: the test names it and fails)

The graph is read statically with ``ast`` from every ``.py`` file: every import counts, those inside functions
and under ``if TYPE_CHECKING:`` too, since each one is a dependency a reader has to follow. ``from pkg import
name`` depends on the module ``pkg.name`` when there is one, else on ``pkg`` itself; importing a module does not
count as depending on its parent packages.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("aot", "serializer", "linker")
LEAN = ("aot/runtime", "aot/world", "serializer")
"""Folders whose modules must not import llvmlite when they are imported (a valid image loads without it)."""
LLVMLITE_ALLOWED = {"aot.runtime.jit"}  # the runtime's compiler: imported only to compile


def _modules() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _imported_names(module: str, path: Path, tree: ast.AST) -> Iterator[tuple[str, str | None]]:
    """(module, imported name or None) for each import in ``tree``, relative ones resolved."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                if not is_package:
                    base.pop()
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                yield target, alias.name


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        deps = set()
        for target, name in _imported_names(module, path, ast.parse(path.read_text(), str(path))):
            if name is not None and f"{target}.{name}" in modules:
                deps.add(f"{target}.{name}")
            elif target in modules:
                deps.add(target)
        graph[module] = deps - {module}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph``, as the path that leaves a module and comes back to it; None if there is none."""
    finished: set[str] = set()  # modules from which no cycle can be reached
    for start in sorted(graph):
        if start in finished:
            continue
        path, successors = [start], [iter(sorted(graph[start]))]
        while path:
            nxt = next(successors[-1], None)
            if nxt is None:
                finished.add(path.pop())
                successors.pop()
            elif nxt in path:
                return path[path.index(nxt) :] + [nxt]
            elif nxt not in finished:
                path.append(nxt)
                successors.append(iter(sorted(graph.get(nxt, ()))))
    return None


def test_the_import_graph_has_no_cycle() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " → ".join(cycle or [])


def test_the_graph_resolves_relative_imports_and_sees_imports_in_functions() -> None:
    graph = import_graph()
    assert {"aot", "aot.codegen.function", "serializer", "linker"} <= graph.keys()
    # from . import types as lt; from ..ir import (…); from ..analysis.definite import maybe_unassigned
    assert {"aot.codegen.types", "aot.ir", "aot.analysis.definite"} <= graph["aot.codegen.function"]
    assert "aot.codegen.module" in graph["aot.builder.objects"]  # imported inside compile_object()


def test_find_cycle_names_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def _module_level(tree: ast.Module) -> Iterator[ast.stmt]:
    """The statements that run when the module is imported: not those in functions or under TYPE_CHECKING."""
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            pending.extend(node.orelse)
            continue
        yield node
        for field in ("body", "orelse", "finalbody", "handlers"):
            pending.extend(getattr(node, field, ()))


def test_the_lean_packages_import_llvmlite_only_to_compile() -> None:
    offenders = []
    for module, path in _modules().items():
        if not any(path.is_relative_to(ROOT / folder) for folder in LEAN) or module in LLVMLITE_ALLOWED:
            continue
        tree = ast.parse(path.read_text(), str(path))
        for node in _module_level(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            if any(n == "llvmlite" or n.startswith("llvmlite.") for n in names):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, "llvmlite imported at module level: " + ", ".join(offenders)


def _compares_target_kinds(node: ast.AST) -> bool:
    """``x.owner == "cpu"``, ``is_ptx(ctx)``, ``isinstance(target, PtxTarget)``."""
    if isinstance(node, ast.Compare):
        return any(isinstance(c, ast.Constant) and c.value in ("cpu", "ptx") for c in [node.left, *node.comparators])
    if isinstance(node, ast.Call):
        text = ast.unparse(node)
        return text.startswith("is_ptx(") or text.startswith("isinstance(") and "Target" in text
    return False


def test_codegen_asks_targets_through_their_hooks() -> None:
    """Where targets differ, codegen calls a hook of ``aot.targets.base.Target``: it compares no owner names
    and asks no ``isinstance`` of a target class."""
    found = [
        f"{path.name}:{node.lineno}: {ast.unparse(node)}"
        for path in sorted((ROOT / "aot" / "codegen").glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if _compares_target_kinds(node)
    ]
    assert not found, "target kinds compared in codegen: " + "; ".join(found)


def test_importing_the_runtime_imports_no_heavy_standard_module() -> None:
    """docs/PACKAGING.md: ``import aot`` costs a few milliseconds; it must not import ``inspect``, ``typing``,
    ``dataclasses``, ``ast`` or ``pathlib`` (nor ``re``, ``enum``, ``contextlib``), which only compiling needs;
    nor ``collections``, ``functools``, ``weakref`` or ``operator``, which cost about 2 ms together and which
    the first call imports when it needs them (``-S``: not even ``site`` has imported them)."""
    import subprocess
    import sys

    heavy = ("inspect", "typing", "dataclasses", "ast", "pathlib", "re", "enum", "contextlib")
    heavy += ("collections", "functools", "weakref", "operator")
    probe = f"import sys; import aot; print(','.join(m for m in {heavy!r} if m in sys.modules))"
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-S", "-c", f"import sys; sys.path.insert(0, {str(root)!r}); {probe}"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "", f"import aot imported {done.stdout.strip()}"
