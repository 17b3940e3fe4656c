"""One measurement of importing a generated package and calling each of its methods once, in this process.

    python3 importprobe.py aot   PROJECT CALLS.json     # the prebuilt image (aot.jit as shipped)
    python3 importprobe.py plain PROJECT CALLS.json     # the same modules, aot.jit replaced by identity
    python3 importprobe.py numba PROJECT CALLS.json     # aot.jit replaced by numba.njit(cache=True)
    → one JSON line: {"import": s, "calls": s, "n": methods, "stats": aot.stats(), "llvmlite": bool,
                      "faults": {"import": minor page faults, "calls": …} or null}

What is timed starts after numpy, aot (and numba) are imported and ends after the last call: ``import``
is ``import <package>`` (every module), ``calls`` is one call of every method with arguments built
beforehand. Run it in a fresh interpreter for every measurement (tests/bench/test_import_bench.py does).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def main(mode: str, project: str, calls_path: str, call: bool = True) -> dict:
    sys.path.insert(0, project)
    sys.path.insert(1, str(Path(__file__).resolve().parent))
    import numpy as np

    import aot
    import genpkg

    spec = json.loads(Path(calls_path).read_text())
    package = spec["package"]
    calls = spec["calls"]
    if mode == "plain":

        def identity(func=None, **options):
            return func if func is not None else (lambda f: f)

        aot.jit = identity
    elif mode == "numba":
        import numba

        def njit(func=None, **options):
            if func is None:
                return lambda f: numba.njit(cache=True)(f)
            return numba.njit(cache=True)(func)

        aot.jit = njit
    elif mode != "aot":
        raise SystemExit(f"unknown mode {mode!r}")
    array = np.linspace(0.0, 1.0, 16)
    args = [genpkg.sample_args(codes, array) for _, _, codes in calls]

    # getppid/getpgrp mark the two regions for instruction counts (tests/bench/instructions.py); a system
    # call each, outside what is timed, as are the page-fault counts.
    f0 = _page_faults()
    os.getppid()
    t0 = time.perf_counter()
    __import__(package)
    t1 = time.perf_counter()
    os.getpgrp()
    f1 = _page_faults()
    functions = [getattr(sys.modules[module], name) for module, name, _ in calls]
    f2 = _page_faults()
    os.getppid()
    t2 = time.perf_counter()
    if call:
        for f, a in zip(functions, args):
            f(*a)
    t3 = time.perf_counter()
    os.getpgrp()
    f3 = _page_faults()
    return {
        "import": t1 - t0,
        "calls": t3 - t2,
        "n": len(calls),
        "stats": aot.stats(),
        "llvmlite": "llvmlite" in sys.modules,
        "faults": None if f0 is None else {"import": f1 - f0, "calls": f3 - f2},
    }


def _page_faults():
    """Minor page faults so far (None where ``resource`` is missing). On some virtual machines each costs
    microseconds: fresh memory is a large part of what a first call costs."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not a Unix
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2], sys.argv[3], call=sys.argv[4:] != ["--no-calls"])))
