"""Layering: the import graph of ``aot``, ``serializer``, ``linker`` and ``cli`` has no cycle, no module imports
from a later layer than its own (``LAYERS``), and the runtime stays lean.

    aot.codegen.function → aot.codegen.gpu → aot.codegen.function     (a cycle: the test names it and fails)
    aot.image.audited → aot.tools.errors                              (from a later layer: the test names it)

The graph is read statically with ``ast`` from every ``.py`` file: every import counts, those inside functions
and under ``if TYPE_CHECKING:`` too, since each one is a dependency a reader has to follow. ``from pkg import
name`` depends on the module ``pkg.name`` when there is one, else on ``pkg`` itself; importing a module does not
count as depending on its parent packages.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("aot", "serializer", "linker")
MODULES = ("cli",)  # top-level modules beside the packages

# The layers, first to last: a module imports only from its own layer and the ones before it. A module is in the
# layer of the most specific name that covers it (``serializer.irformat`` is not in ``serializer``'s layer).
LAYERS: tuple[tuple[str, ...], ...] = (
    # the base every stage shares: spans and errors, types, binary layouts, argument binding, fork locks, the
    # image container, and the namespaces user code calls as plain Python (``aot.prange``, ``aot.gpu``)
    ("aot.diagnostics", "aot.types", "aot.abi", "aot.binding", "aot.forksafe", "aot.parallel", "aot.gpu", "serializer"),
    # the world, pure Python: methods, definitions and fingerprints, edges and their rules, validation
    ("aot.world",),
    # the compiler, one layer (the no-cycle test orders its packages): source → IR → typed IR → LLVM IR, IR as msgpack
    (
        "aot.ir",
        "aot.frontend",
        "aot.infer",
        "aot.passes",
        "aot.analysis",
        "aot.intrinsics",
        "aot.targets",
        "aot.codegen",
        "serializer.irformat",
    ),
    # the programs outside Python the compiler's output goes through: the C compiler driver, libdevice, ptxas
    ("linker",),
    # the image, pure Python: header and gate, entries as the first call reads them, the full contents
    ("aot.image",),
    # the runtime: method objects, dispatch, first calls, loading images, compiling in process
    ("aot.runtime",),
    # the public API (``aot/__init__.py``)
    ("aot",),
    # ``aot build``: configuration, the build, object files, wheels
    ("aot.builder",),
    # what reads built images: ``aot inspect``, ``aot verify``, ``aot clean``
    ("aot.tools",),
    # the entry points: the command line, the console script, the PEP 517 backend
    ("cli", "aot.console", "aot.build_meta"),
)
UPWARD_ALLOWED = {
    ("aot.gpu", "aot.ir.ops"): "annotations, and the intrinsic of each function, imported only to compile",
    ("aot.world.methods", "aot.frontend"): "a method lowers its own source (``untyped``), only to compile",
    ("aot.world.methods", "aot.ir"): "annotations only (``Function``)",
    ("aot.world.methods", "aot.ir.ops"): "annotations only (``Intrinsic``)",
    ("aot.world.edges", "aot.targets.ptx"): "the overlay edge's rule asks the ptx target, only for ptx entries",
    ("aot.world.validate", "aot.image.contents"): "annotations only (``ImageReader``, what it validates)",
    ("aot.world.validate", "aot.image.entries"): "annotations only (``CodeEntry``, what it validates)",
}
"""Imports from a later layer, each with why it cannot go down: ``(importer, imported): reason``."""
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
    for name in MODULES:
        modules[name] = ROOT / f"{name}.py"
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


def layer_of(module: str, layers: tuple[tuple[str, ...], ...] = LAYERS) -> int | None:
    """The index of ``module``'s layer: that of the longest name in ``layers`` that is the module or a package
    above it; None when none is."""
    found, longest = None, -1
    for index, layer in enumerate(layers):
        for name in layer:
            if (module == name or module.startswith(name + ".")) and len(name) > longest:
                found, longest = index, len(name)
    return found


def upward_imports(
    graph: dict[str, set[str]],
    layers: tuple[tuple[str, ...], ...] = LAYERS,
    allowed: Collection[tuple[str, str]] = UPWARD_ALLOWED,
) -> list[str]:
    """``importer → imported`` for every import from a later layer that ``allowed`` does not list."""
    found = []
    for importer in sorted(graph):
        own = layer_of(importer, layers)
        for imported in sorted(graph[importer]):
            theirs = layer_of(imported, layers)
            if own is not None and theirs is not None and theirs > own and (importer, imported) not in allowed:
                found.append(f"{importer} → {imported}")
    return found


def test_no_module_imports_from_a_later_layer() -> None:
    found = upward_imports(import_graph())
    assert not found, "imports from a later layer (LAYERS): " + ", ".join(found)


def test_every_allowed_upward_import_is_still_one() -> None:
    graph = import_graph()
    stale = [
        f"{importer} → {imported}"
        for importer, imported in UPWARD_ALLOWED
        if imported not in graph.get(importer, ()) or not upward_imports({importer: {imported}}, allowed=())
    ]
    assert not stale, "UPWARD_ALLOWED lists imports that are gone or go down now: " + ", ".join(stale)


def test_the_layers_place_every_package_and_module() -> None:
    """Each ``aot`` subpackage and top-level module (and ``aot`` itself, ``serializer``, ``linker``, ``cli``) is
    named in ``LAYERS``: a new folder must be placed."""
    units = {".".join(m.split(".")[:2]) if m.startswith("aot.") else m.split(".")[0] for m in import_graph()}
    named = {name for layer in LAYERS for name in layer}
    assert not units - named, "not placed in LAYERS: " + ", ".join(sorted(units - named))


def test_upward_imports_names_each_pair() -> None:
    layers = (("a",), ("b", "a.late"), ("c",))
    graph = {"a.x": {"b.y", "a.late"}, "a.late": {"c"}, "b.y": {"a.x"}, "c": {"a.x", "b.y"}}
    assert layer_of("a.late.z", layers) == 1 and layer_of("d", layers) is None
    assert upward_imports(graph, layers, allowed=()) == ["a.late → c", "a.x → a.late", "a.x → b.y"]
    assert upward_imports(graph, layers, allowed={("a.x", "b.y")}) == ["a.late → c", "a.x → a.late"]


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
