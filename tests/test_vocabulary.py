"""One home per concept: edge kinds, causes and owners are compared through their homes, never as literals.

    aot/world/edges.py    EdgeKind (and each kind's rule)     aot/world/causes.py   CauseKind, Cause
    aot/world/owners.py   CPU, PTX, Owner

A comparison such as ``kind == "call"``, ``owner != "cpu"`` or ``cause.startswith("edge-changed:")`` anywhere
else in ``aot``, ``serializer``, ``linker`` or ``cli.py`` fails this test, and so does a cause written as text
(``"edge-changed:" + key``): the vocabulary would then live in two places, and a new kind would be missed in one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from aot.world.causes import Cause, CauseKind
from aot.world.edges import RULES, EdgeKind, edge_holds
from aot.world.owners import CPU, PTX, Owner

REPO = Path(__file__).resolve().parents[1]
HOMES = {"aot/world/edges.py", "aot/world/causes.py", "aot/world/owners.py"}
EDGE_KINDS = {k.value for k in EdgeKind}
CAUSE_KINDS = {k.value for k in CauseKind}
OWNERS = {CPU, PTX}
WORDS = EDGE_KINDS | CAUSE_KINDS | OWNERS


def _sources() -> list[Path]:
    files = [REPO / "cli.py"]
    for package in ("aot", "serializer", "linker"):
        files += sorted((REPO / package).rglob("*.py"))
    return [f for f in files if f.relative_to(REPO).as_posix() not in HOMES]


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _literals(node: ast.AST) -> list[str]:
    """The str constants a comparison operand is made of (a tuple or set of them included)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [s for elt in node.elts for s in _literals(elt)]
    return []


def offences(path: Path, where: str | None = None) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    docs = _docstrings(tree)
    where = where or path.relative_to(REPO).as_posix()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for operand in [node.left, *node.comparators]:
                for text in _literals(operand):
                    if text in WORDS:
                        found.append(f"{where}:{node.lineno}: compares with the literal {text!r}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("startswith", "endswith")
            and node.args
        ):
            for text in _literals(node.args[0]):
                if text.rstrip(":") in CAUSE_KINDS | EDGE_KINDS:
                    found.append(f"{where}:{node.lineno}: parses {text!r} out of a text")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            if any(node.value.startswith(kind + ":") for kind in CAUSE_KINDS):
                found.append(f"{where}:{node.lineno}: writes a cause as text ({node.value!r})")
        elif isinstance(node, ast.JoinedStr) and node.values:
            head = node.values[0]
            if isinstance(head, ast.Constant) and any(str(head.value).startswith(k + ":") for k in CAUSE_KINDS):
                found.append(f"{where}:{node.lineno}: writes a cause as text ({head.value!r}…)")
    return found


def test_no_literal_edge_kind_cause_or_owner_outside_their_homes():
    found = [line for path in _sources() for line in offences(path)]
    assert not found, "use aot.world.edges / causes / owners instead:\n" + "\n".join(found)


def test_the_check_catches_what_it_is_for(tmp_path):
    bad = tmp_path / "probe.py"
    bad.write_text(
        "def f(kind, owner, cause, key):\n"
        '    if kind == "call" or owner in ("cpu",):\n'
        '        return cause.startswith("edge-changed:")\n'
        '    return f"edge-changed:{key}", "no-entry:x"\n'
    )
    found = offences(bad, "aot/probe.py")
    text = "\n".join(found)
    for what in (
        "compares with the literal 'call'",
        "compares with the literal 'cpu'",
        "parses 'edge-changed:'",
        "writes a cause as text ('edge-changed:'",
        "writes a cause as text ('no-entry:x')",
    ):
        assert what in text, found


def test_every_edge_kind_has_one_rule():
    assert set(RULES) == set(EdgeKind)


class _Now:
    def __init__(self, values: dict, names: dict, held: set):
        self.values, self.named, self.held = values, names, held

    def names(self, where: str) -> str:
        return self.named.get(where, "<missing>")

    def resolve(self, where: str):
        from aot.world.edges import MISSING

        return self.values.get(where, MISSING)

    def definition_holds(self, key: str) -> bool:
        return key in self.held

    def default(self, key: str, param: str):
        from aot.world.edges import MISSING

        return {"m:f#tol": 1e-8, "m:f#out": None, "m:f#n": 3, "m:f#pair": (1, 2.0)}.get(f"{key}#{param}", MISSING)


@pytest.mark.parametrize(
    "kind, target, value, holds",
    [
        (EdgeKind.GLOBAL, "m:SCALE", 2.0, True),
        (EdgeKind.GLOBAL, "m:SCALE", 2, False),  # an int where a float was folded in
        (EdgeKind.GLOBAL, "m:GONE", 1, False),
        (EdgeKind.GLOBAL, "m:PAIR", [1, 2.0], True),  # a tuple reads back as a list in full reads
        (EdgeKind.LOOKUP, "m:sqrt", "math:sqrt", True),
        (EdgeKind.LOOKUP, "m:sqrt", "m:mysqrt", False),
        (EdgeKind.CALL, "m:g", "(f64)", True),
        (EdgeKind.CALL, "m:h", "(f64)", False),
        (EdgeKind.DEFAULT, "m:f#tol", 1e-8, True),
        (EdgeKind.DEFAULT, "m:f#tol", 1e-6, False),  # the default changed: the callers that used it go stale
        (EdgeKind.DEFAULT, "m:f#out", None, True),
        (EdgeKind.DEFAULT, "m:f#tol", None, False),
        (EdgeKind.DEFAULT, "m:f#out", 0.0, False),
        (EdgeKind.DEFAULT, "m:f#n", 3.0, False),  # a float where an int was filled in
        (EdgeKind.DEFAULT, "m:f#pair", [1, 2.0], True),
        (EdgeKind.DEFAULT, "m:f#gone", 1, False),  # no default (or no parameter) any more
        ("call", "m:g", "(f64)", True),  # a kind read back from an image, as text
        ("deferred", "m:g", "(f64)", False),  # a kind this compiler does not know never holds
    ],
)
def test_edge_rules(kind, target, value, holds):
    now = _Now({"m:SCALE": 2.0, "m:PAIR": (1, 2.0)}, {"m:sqrt": "math:sqrt"}, {"m:g"})
    assert edge_holds(kind, now, target, value) is holds


def test_cause_texts_are_the_events_texts():
    assert str(Cause.edge_changed("pkg.mod:g")) == "edge-changed:pkg.mod:g"
    assert Cause.image_incompatible("python-abi x (this is y)").text == "image-incompatible:python-abi x (this is y)"
    assert str(Cause(CauseKind.NO_ENTRY)) == "no-entry"
    assert f"{CauseKind.REDEFINED}" == "redefined" and f"{EdgeKind.CALL}" == "call"


@pytest.mark.parametrize(
    "text, owner",
    [
        ("cpu", Owner("cpu")),
        ("ptx:sm_80", Owner("ptx", "sm_80")),
        ("ptx:sm_80+ad", Owner("ptx", "sm_80", ("ad",))),
        ("cpu+ad+fwd", Owner("cpu", "", ("ad", "fwd"))),
    ],
)
def test_owner_texts_round_trip(text, owner):
    assert Owner.parse(text) == owner and str(owner) == text


@pytest.mark.parametrize("text", ["", "ptx:", "cpu+", "+ad"])
def test_malformed_owner_texts_are_refused(text):
    with pytest.raises(ValueError):
        Owner.parse(text)


def test_first_call_copies_of_the_cpu_owner_text_match_its_home():
    """The image header and the runtime state keep the ``cpu`` owner's text themselves (importing ``owners`` would add
    a module to every first call); it must stay the home's."""
    from aot.image import header
    from aot.runtime import state

    assert header._CPU == state._CPU == CPU


def test_valid_first_calls_import_no_cause_and_no_invalidation(tmp_path):
    """A built package's valid first calls load from the image and import, of the world's vocabulary, only the
    edge rules: causes and invalidation are made only when something is invalid or stale (each module a first
    call imports costs a tenth of a millisecond)."""
    from buildsupport import FIXTURES, aot_build, copy_project, run_python

    project = copy_project(FIXTURES / "numkit", tmp_path / "numkit")
    done = aot_build(project, "--json")
    assert done.rc == 0, done.stderr[-3000:]
    run = run_python(
        project,
        """
        import numkit.core as core
        r = [core.clamp(5.0, 0.0, 1.0), core.lerp(1.0, 3.0, 0.5)]
        report(r=r, modules=sorted(m for m in _sys.modules if m.startswith("aot.world")))
        """,
        env={"AOT_STRICT": "1"},
    )
    assert run.report["r"] == [1.0, 2.0]
    assert run.report["stats"]["loaded"] == 2 and run.report["stats"]["inferred"] == 0
    imported = set(run.report["modules"])
    assert "aot.world.edges" in imported
    assert not imported & {"aot.world.causes", "aot.world.invalidation", "aot.world.owners"}
