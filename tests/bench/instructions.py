"""Instruction counts of importing a generated package and calling each method once: figures that do not
move with the machine's load (wall-clock times on a small shared machine move by half from run to run).

    python3 tests/bench/instructions.py PROJECT CALLS.json
    → import: aot 31.4 M, plain 16.6 M instructions: +14.9 k per method
      calls:  aot 142.8 M, plain 7.7 M instructions: +135.1 k per method

PROJECT and CALLS.json are what tests/bench/genpkg.py makes (the import benchmark builds them in its
temporary folder; ``genpkg.generate`` makes them anywhere). Each mode runs ``importprobe.py`` once under
Valgrind's callgrind, counting the instructions of the two regions importprobe marks (``import`` and
``calls``), with address randomisation off, a fixed hash seed and one BLAS thread, so that a run repeats
to the instruction. Instructions are not time: page faults, cache misses and the kernel are not in them.
They say which change made the work smaller, which a timing on a busy machine cannot.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PROBE = Path(__file__).resolve().parent / "importprobe.py"


def count(mode: str, project: str, calls: str) -> dict[str, int]:
    """Instructions of the ``import`` and ``calls`` regions of one probe run in ``mode``."""
    if shutil.which("valgrind") is None:
        raise SystemExit("instructions.py needs valgrind (callgrind)")
    env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as work:
        out = Path(work) / "cg.out"
        command = [
            "valgrind",
            "--tool=callgrind",
            "--zero-before=getppid",
            "--dump-before=getpgrp",
            f"--callgrind-out-file={out}",
            sys.executable,
            str(PROBE),
            mode,
            project,
            calls,
        ]
        if shutil.which("setarch"):
            command = ["setarch", "-R", *command]
        subprocess.run(
            [sys.executable, str(PROBE), mode, project, calls], env=env, check=True, capture_output=True
        )  # warms the bytecode caches
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(done.stderr[-3000:])
        parts = sorted(Path(work).glob("cg.out.*"), key=lambda p: int(p.suffix[1:]))
        totals = [int(re.search(r"^summary: (\d+)", p.read_text(), re.M).group(1)) for p in parts]
    if len(totals) != 2:
        raise SystemExit(f"expected two marked regions, found {len(totals)}")
    return {"import": totals[0], "calls": totals[1], "n": json.loads(done.stdout.splitlines()[-1])["n"]}


def main(project: str, calls: str) -> None:
    aot, plain = count("aot", project, calls), count("plain", project, calls)
    n = aot["n"]
    for region in ("import", "calls"):
        print(
            f"{region + ':':7s} aot {aot[region] / 1e6:.1f} M, plain {plain[region] / 1e6:.1f} M instructions: "
            f"+{(aot[region] - plain[region]) / n / 1e3:.1f} k per method"
        )


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    main(sys.argv[1], sys.argv[2])
