"""The hot path: the files whose speed ``import aot`` or a method's first call pays, listed once, here.

Each of them says so in its docstring (a paragraph that begins ``Hot path``) and names the benchmark under
``tests/bench/`` that guards it; no other file says it is on the hot path. Everywhere else is written plainly.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("aot", "serializer", "linker", "cli.py")  # where a file may say it is on the hot path

HOT_PATH = (
    "aot/runtime/firstcall.py",
    "aot/runtime/dispatch.py",
    "aot/runtime/signatures.py",
    "aot/runtime/method.py",
    "aot/runtime/loader.py",
    "aot/runtime/methodtype.py",
    "aot/runtime/state.py",
    "aot/image/header.py",
    "aot/image/entries.py",
    "aot/world/validate.py",
    "aot/world/fingerprint.py",
    "serializer/__init__.py",
)

_CLAIM = re.compile(r"^Hot path\b", re.MULTILINE)
_BENCHMARK = re.compile(r"``(tests/bench/[\w/]+\.py)``")


def _docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text(), str(path))) or ""


def _source_files() -> list[Path]:
    files: list[Path] = []
    for name in SOURCES:
        path = ROOT / name
        files.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    return files


def test_each_hot_path_file_says_so_and_names_a_benchmark_that_exists() -> None:
    problems = []
    for name in HOT_PATH:
        path = ROOT / name
        if not path.is_file():
            problems.append(f"{name}: no such file")
            continue
        doc = _docstring(path)
        benchmarks = _BENCHMARK.findall(doc)
        if not _CLAIM.search(doc):
            problems.append(f"{name}: its docstring does not say it is on the hot path")
        if not benchmarks:
            problems.append(f"{name}: its docstring names no benchmark under tests/bench/")
        problems += [f"{name}: names {b}, which does not exist" for b in benchmarks if not (ROOT / b).is_file()]
    assert not problems, "; ".join(problems)


def test_no_file_outside_the_list_says_it_is_on_the_hot_path() -> None:
    listed = {ROOT / name for name in HOT_PATH}
    claims = [
        str(path.relative_to(ROOT))
        for path in _source_files()
        if path not in listed and _CLAIM.search(_docstring(path))
    ]
    assert not claims, "on the hot path by their docstring, but not in HOT_PATH: " + ", ".join(claims)
