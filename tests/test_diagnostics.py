"""Diagnostics as users see them (``CompileError.render()``: the line and a caret), kept as a golden file.

Regenerate with ``python3 -m pytest tests/test_diagnostics.py --update-goldens`` and review the diff.
"""

from __future__ import annotations

from pathlib import Path

import aot
import diag_samples

SAMPLES = [
    ("uses_a_list", (3,)),
    ("three_problems", (1.0,)),
    ("conflicting_types", (True,)),
    ("reads_an_object", (1.0,)),
    ("calls_a_bad_helper", (2,)),
    ("unknown_name", (1.0,)),
]


def render_all() -> str:
    here = str(Path(diag_samples.__file__).resolve().parent)
    out = []
    for name, args in SAMPLES:
        try:
            getattr(diag_samples, name)(*args)
        except aot.CompileError as err:
            text = err.render() + ("\n" + str(err).splitlines()[-1] if err.chain[1:] else "")
            out.append(f"== {name}\n{text.replace(here, '<tests>')}\n")
        else:
            out.append(f"== {name}\n(no error)\n")
    return "\n".join(out)


def test_diagnostics_golden(golden):
    golden("diagnostics.txt", render_all())


def test_every_sample_fails_with_a_location_in_its_own_file():
    for name, args in SAMPLES:
        try:
            getattr(diag_samples, name)(*args)
        except aot.CompileError as err:
            assert all(str(d).startswith(diag_samples.__file__) for d in err.diagnostics), err
        else:
            raise AssertionError(f"{name} compiled")
