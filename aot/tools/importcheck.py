"""``aot verify --import``: import the packages as a user would, in a fresh interpreter with AOT_STRICT=1.

    check = import_check(select("fixtures/numkit"))
    check.ok, check.summary   → True, "imported numkit (6 modules), ran workload numkit._workload:
                                        64 loaded, 0 inferred, 0 cured, 0 spurious"
    # after SCALE = 2.0 became 3.0:
    check.details             → ["StrictModeError: strict mode: numkit.core:scaled(f64) would be inferred
                                  and compiled at run time (…) (at …/numkit/_workload.py:25)"]

The child is ``aot.tools.importcheck_child``, run with this checkout of ``aot`` first on its path; it
writes its result as JSON into a file of a private temporary folder (its stdout belongs to the project).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .errors import AuditError
from .locate import Selection

CHILD = "aot.tools.importcheck_child"


@dataclass
class ImportCheck:
    ok: bool
    summary: str
    details: list[str]


def import_check(sel: Selection) -> ImportCheck:
    """Import the selected packages (and run the workload) in a fresh interpreter with ``AOT_STRICT=1``."""
    roots: dict[Path, list[str]] = {}
    for image in sel.images:
        if image.root is None:
            raise AuditError(f"{image.path}: cannot import the package of an image outside a <package>/__aot__ folder")
        roots.setdefault(image.root, [])
        if image.package not in roots[image.root]:
            roots[image.root].append(image.package)
    aot_home = str(Path(__file__).resolve().parents[2])
    ok, summaries, details = True, [], []
    for root, packages in roots.items():
        cfg = sel.config_for(root)
        workload = cfg.workload if cfg else None
        env = dict(os.environ, AOT_STRICT="1")
        env.pop("AOT_DEBUG_REJECT", None)
        env["PYTHONPATH"] = os.pathsep.join([aot_home] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        with tempfile.TemporaryDirectory(prefix="aot-import-check-") as tmp:
            out = Path(tmp) / "result.json"
            proc = subprocess.run(
                [sys.executable, "-m", CHILD, str(out), str(root), workload or "", *packages],
                cwd=str(root),
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                errors="replace",
            )
            try:
                result = json.loads(out.read_text())
            except (OSError, ValueError):
                result = {"error": f"the interpreter exited with status {proc.returncode}"}
        stats = result.get("stats") or {}
        modules = len(result.get("imported", []))
        what = f"imported {', '.join(packages)} ({modules} module{'s' if modules != 1 else ''})"
        if result.get("workload"):
            what += f", ran workload {workload}"
        counts = ", ".join(f"{stats.get(k, 0)} {k}" for k in ("loaded", "inferred", "cured", "spurious"))
        summaries.append(f"{what}: {counts}" + ("; llvmlite imported" if result.get("llvmlite") else ""))
        if result.get("error"):
            ok = False
            where = f" (at {result['where']})" if result.get("where") else ""
            details.append(f"{result['error']}{where}")
        for line in proc.stderr.splitlines():
            if line.startswith("aot: ignoring image"):
                ok = False
                details.append(line[len("aot: ") :])
        for event in result.get("events", []):
            ok = False
            details.append(event[len("aot: ") :] if event.startswith("aot: ") else event)
    return ImportCheck(ok, "; ".join(summaries), details)
