"""What is compiled is what was imported (docs/ARCHITECTURE.md, "How it works"; issue 23): a method's source
file saved after Python imported it is never compiled.

    import sqpkg.m; <m.py saved: x * x becomes x * x + 1.0>; m.sq(3.0)
        → 9.0, as m.sq.py_func(3.0): an "invalidated" event with cause "source-changed", one stderr line
    aot build while m.py is saved                → m.sq fails: "m.py:N:1: error: source changed …", exit 1

The source a method is compiled from is read from its file when it is compiled (``inspect`` re-reads a
file that changed), while validation and stored definitions use the imported code: the parsed ``def`` is
compiled where the function was defined and compared with the imported code, line numbers left out.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from buildsupport import aot_build, aot_cli, image_contents, pyproject, run_python, write_project

V1 = "    return x * x\n"
V2 = "    return x * x + 1.0\n"

SQPKG = {
    "pyproject.toml": pyproject("sqpkg"),
    "sqpkg/__init__.py": "from . import m\n",
    "sqpkg/m.py": """\
        import math

        import aot

        SCALE = 2.0


        @aot.jit
        def sq(x: float) -> float:
            \"\"\"The square.\"\"\"
            return x * x


        @aot.jit
        def twice_sq(x: float) -> float:
            return SCALE * sq(x) + math.fabs(0.0)


        @aot.jit
        def cube(x: float) -> float:
            return x * x * x
        """,
}


def source(project: Path) -> Path:
    return project / "sqpkg" / "m.py"


def save(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, (old, text)
    path.write_text(text.replace(old, new))


@pytest.fixture
def project(tmp_path) -> Path:
    return write_project(tmp_path / "sq", SQPKG)


SAVE_THEN_CALL = f"""
    import pathlib
    from sqpkg import m
    path = pathlib.Path(m.__file__)
    path.write_text(path.read_text().replace({V1!r}, {V2!r}))   # saved after the import
    r = [m.sq(3.0), m.sq(3.0), m.twice_sq(3.0), m.cube(2.0)]
    p = [m.sq.py_func(3.0), m.twice_sq.py_func(3.0), m.cube.py_func(2.0)]
    report(r=r, p=p)
"""


def _assert_ran_python(run, where: Path) -> None:
    """sq and twice_sq (whose code would inline sq) ran as plain Python, cube was compiled: right answers,
    one ``invalidated`` event with cause ``source-changed`` each, one warning line each."""
    assert run["r"] == [9.0, 9.0, 18.0, 8.0] and run["p"] == [9.0, 18.0, 8.0]
    changed = [e for e in run["events"] if e["cause"] == "source-changed"]
    assert {(e["method"], tuple(e["argtypes"])) for e in changed} == {
        ("sqpkg.m:sq", ("f64",)),
        ("sqpkg.m:twice_sq", ("f64",)),
    }
    assert all(e["kind"] == "invalidated" and not e["spurious"] for e in changed), changed
    warnings = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(warnings) == 2 and all("runs as plain Python" in w and "source changed" in w for w in warnings), (
        run.stderr
    )
    assert str(where) in warnings[0] and "Traceback" not in run.stderr


def test_a_file_saved_after_the_import_is_not_compiled(project):
    """(a) Without an image: the first calls would compile the new text (sq(3.0) == 10.0)."""
    run = run_python(project, SAVE_THEN_CALL)
    _assert_ran_python(run, source(project).resolve())
    assert run["stats"]["inferred"] == 1  # cube, whose source is what was imported


def test_a_file_saved_after_the_import_in_strict_mode_raises(project):
    run = run_python(project, SAVE_THEN_CALL.replace("r = [", "_aot.strict(True)\n    r = ["), check=False)
    assert run.rc == 1 and "StrictModeError" in run.stderr and "sqpkg.m:sq(f64)" in run.stderr


def test_a_stale_entry_is_not_reinferred_from_a_file_that_changed_back(project):
    """(b) Built at V1; imported at V2 (the entry is stale), then the file is V1 again: reinference would
    compile V1 (9.0 where Python gives 10.0) and flag it spurious, since that is the stored IR."""
    assert aot_build(project).rc == 0
    save(source(project), V1, V2)
    run = run_python(
        project,
        f"""
        import pathlib
        from sqpkg import m
        path = pathlib.Path(m.__file__)
        path.write_text(path.read_text().replace({V2!r}, {V1!r}))   # and back, after the import
        report(r=[m.sq(3.0), m.cube(2.0)], p=[m.sq.py_func(3.0), m.cube.py_func(2.0)])
    """,
    )
    assert run["r"] == run["p"] == [10.0, 8.0]
    (event,) = [e for e in run["events"] if e["method"] == "sqpkg.m:sq"]
    assert (event["kind"], event["cause"], event["spurious"]) == ("invalidated", "source-changed", False)
    assert run.keys("loaded") == {("sqpkg.m:cube", ("f64",))}


WORKLOAD_SAVES = f"""\
    import pathlib
    from sqpkg import m
    path = pathlib.Path(m.__file__)
    path.write_text(path.read_text().replace({V1!r}, {V2!r}))   # saved while the build runs
    """


def test_a_file_saved_during_the_build_fails_its_methods(project):
    """(c) The workload runs after the packages are imported, and saves m.py: the build would compile the
    new text under the imported definition, then exit 0; with the file back as it was, `aot verify` would
    exit 0 and a strict import would load code for a source that no longer exists."""
    write_project(project, {"sqpkg/_workload.py": WORKLOAD_SAVES})
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + 'workload = "sqpkg._workload"\n')
    done = aot_build(project, "--json")
    assert done.rc == 1, done.stdout + done.stderr
    path = source(project).resolve()
    line = path.read_text().splitlines().index("def sq(x: float) -> float:") + 1
    errors = sorted({s for s in done.stderr.splitlines() if ": error: " in s})
    assert errors and all(s.startswith(f"{path}:{line}:1: error: source changed") for s in errors), done.stderr
    contents = image_contents(project, "sqpkg")
    assert set(contents.code) == {("sqpkg.m:cube", ("f64",))}, "something of what changed was written"
    save(source(project), V2, V1)  # the file as it was imported by the build
    assert aot_cli("verify", str(project)).rc == 0  # (what the image holds is right)
    run = run_python(
        project,
        """
        from sqpkg import m
        try:
            r = m.sq(3.0)
        except _aot.StrictModeError as e:
            r = str(e)
        report(r=r, c=m.cube(2.0))
    """,
        env={"AOT_STRICT": "1"},
    )
    assert "sqpkg.m:sq(f64)" in run["r"] and "no-entry" in run["r"] and run["c"] == 8.0


def test_editing_only_comments_docstrings_and_blank_lines_after_the_import_still_compiles(project):
    """What fingerprints leave out (lines, docstrings) is left out of the comparison too."""
    run = run_python(
        project,
        """
        import pathlib
        from sqpkg import m
        path = pathlib.Path(m.__file__)
        text = path.read_text().replace('\"\"\"The square.\"\"\"', '\"\"\"Another docstring.\"\"\"\\n    # a comment')
        path.write_text("# a new first line\\n\\n" + text)
        report(r=[m.sq(3.0), m.twice_sq(3.0)])
    """,
    )
    assert run["r"] == [9.0, 18.0] and run["stats"]["inferred"] == 2 and not run.stderr.strip()


CLOSURES = """\
    import math
    import aot

    def make(k):
        def scale(x):
            return k * math.sqrt(x)
        return scale

    scale3 = make(3.0)


    @aot.jit
    def use(x: float) -> float:
        return scale3(x) + 2.0 * x
    """


def test_functions_in_classes_and_closures_compile_as_imported(tmp_path):
    """The parsed ``def`` is compiled where it was defined (in an enclosing function, with its cells), with
    the module's imports (``math.sqrt`` compiles otherwise): no false alarm for a callee that is a closure."""
    project = write_project(
        tmp_path / "cl", {**SQPKG, "sqpkg/__init__.py": "from . import m, cl\n", "sqpkg/cl.py": CLOSURES}
    )
    run = run_python(project, "from sqpkg import cl\nreport(r=cl.use(4.0), p=cl.use.py_func(4.0))")
    assert run["r"] == run["p"] == 14.0 and run["stats"]["inferred"] == 1 and not run.stderr.strip()


FORMS = '''\
from __future__ import annotations
import functools
import math as m


def deco(f):
    return f


@deco
@functools.lru_cache(maxsize=(lambda: 3)())
def decorated(x: float, y=lambda: 2) -> float:
    """Doc."""
    if x > 1:
        pass
    return m.sqrt(x) * 2.0 + 1


def outer():
    a = 1.0
    b = 2

    def inner(x):
        return x + a * b
    return inner


class C:
    def method(self, x):
        return self.__private + x + len(__class__.__name__)

    @staticmethod
    def static(x):
        return x - 1


def text(x):
    return "a"


def odd_string(x):
    """text
 less indented line"""
    return x
'''


def _forms(tmp_path, name):
    import importlib
    import sys

    (tmp_path / f"{name}.py").write_text(FORMS)
    sys.path.insert(0, str(tmp_path))
    try:
        module = importlib.import_module(name)
    finally:
        sys.path.remove(str(tmp_path))
    return module, [
        module.decorated.__wrapped__,
        module.outer(),
        module.outer,
        module.C.method,
        module.C.static,
        module.text,
        module.odd_string,
    ]


def _as_imported(funcs) -> list[bool]:
    import ast

    from aot.frontend.source import compile_parsed, parse_source
    from aot.world.fingerprint import same_code

    out = []
    for f in funcs:
        node, src = parse_source(f)
        out.append(same_code(f, compile_parsed(f, node), ast.get_docstring(node, clean=False)))
    return out


def test_the_parsed_def_compiles_to_the_imported_code_in_every_form(tmp_path):
    """Decorators, defaults, future flags, module imports, closures, class bodies (mangling, ``__class__``),
    docstrings: unchanged source compares equal; each body edit is seen, and only docstring edits are not."""
    module, funcs = _forms(tmp_path, "aot_forms_unchanged")
    assert _as_imported(funcs) == [True] * len(funcs)
    path = Path(module.__file__)
    path.write_text(
        FORMS.replace('"""Doc."""', '"""Other doc."""')
        .replace("x + a * b", "x + a * b + 0")
        .replace("x - 1", "x - 2")
        .replace('"a"', '"b"')
    )
    assert _as_imported(funcs) == [True, False, False, True, False, False, True]
