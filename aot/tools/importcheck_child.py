"""The import check's child: what a user's ``import`` does, measured in a fresh interpreter.

    AOT_STRICT=1 python -m aot.tools.importcheck_child RESULT.json ROOT WORKLOAD PACKAGE...
      → RESULT.json: {"error": null, "imported": ["numkit", "numkit.core", …], "workload": "numkit._workload",
                      "stats": {"loaded": 64, "inferred": 0, …}, "events": [], "llvmlite": false}

Only the standard library and ``aot`` itself are imported (this package's ``__init__`` imports nothing), so
that what it measures is what a user's process does. WORKLOAD is ``""`` when there is none. An error (a
StrictModeError above all) is recorded with the last frame of the project's code it came from, never
raised: the parent reads the file, and a missing file means the interpreter itself failed.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import sys
import traceback
from typing import Any

import aot  # (already imported by ``python -m aot.tools.importcheck_child``)


def run(root: str, workload: str, packages: list[str]) -> dict[str, Any]:
    """Import ``packages`` and all their submodules (but not the workload), then the workload, from ``root``."""
    sys.path.insert(0, root)
    result: dict[str, Any] = {"error": None, "imported": []}
    try:
        for name in packages:
            package = importlib.import_module(name)
            result["imported"].append(name)
            for info in pkgutil.walk_packages(getattr(package, "__path__", []), name + "."):
                if info.name == workload or info.name.split(".")[-1].startswith("__"):
                    continue
                importlib.import_module(info.name)
                result["imported"].append(info.name)
        if workload:
            result["workload"] = workload
            importlib.import_module(workload)
    except BaseException as err:  # the project's code: a SystemExit or a KeyboardInterrupt is a result too
        result["error"] = (type(err).__name__ + ": " + str(err)).strip()
        home = os.path.dirname(os.path.abspath(aot.__file__))
        frames = [
            f
            for f in traceback.extract_tb(err.__traceback__)
            if not f.filename.startswith("<") and not os.path.abspath(f.filename).startswith(home + os.sep)
        ]
        if frames:
            result["where"] = f"{frames[-1].filename}:{frames[-1].lineno}"
    try:
        result["stats"] = aot.stats()
        result["events"] = [str(e) for e in aot.events() if e.kind != "loaded"]
    except Exception:
        pass
    result["llvmlite"] = "llvmlite" in sys.modules
    return result


def main(argv: list[str]) -> None:
    out, root, workload, packages = argv[0], argv[1], argv[2], argv[3:]
    result = run(root, workload, packages)
    with open(out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main(sys.argv[1:])
