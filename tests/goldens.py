"""Golden files (``tests/golden/``): compare a test's output with the reviewed copy.

    golden("numkit.core.clamp.ir", text)     # the ``golden`` fixture (conftest): passes, or fails with the diff

A missing or different golden file fails the test; only ``python3 -m pytest --update-goldens`` writes them,
so a deleted golden cannot quietly come back as whatever the compiler prints today. Review the diff.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE_FLAG = "--update-goldens"


def check_golden(path: Path, text: str, update: bool) -> None:
    """Fail unless ``path`` holds exactly ``text``; with ``update``, write ``text`` there instead."""
    if update:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return
    if not path.exists():
        pytest.fail(
            f"golden file {path} is missing: write it with 'python3 -m pytest {UPDATE_FLAG}' and review it",
            pytrace=False,
        )
    expected = path.read_text()
    if text != expected:
        diff = "".join(
            difflib.unified_diff(expected.splitlines(True), text.splitlines(True), f"{path} (golden)", "(this run)")
        )
        pytest.fail(
            f"output differs from golden file {path} (if the change is intended, rewrite it with "
            f"'python3 -m pytest {UPDATE_FLAG}' and review the diff):\n{diff}",
            pytrace=False,
        )
