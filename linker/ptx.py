"""PTX → cubin with NVIDIA's ``ptxas``, and the per-kernel resource usage it reports.

    assemble_ptx(ptx_text, "sm_80", Path("pkg/__aot__/ptx.sm_80.cubin"))
      runs  ptxas -arch=sm_80 -o /tmp/aot-ptxas-PID-XXXX/out.cubin /tmp/aot-ptxas-PID-XXXX/in.ptx
      ->    Path("pkg/__aot__/ptx.sm_80.cubin")
    ptxas_resource_usage(ptx_text, "sm_80")
      ->    {"add_one": {"entry": True, "registers": 10, "spills": 0, "spill_stores": 0,
                         "spill_loads": 0, "stack_frame": 0, "shared": 0, "constant": 364,
                         "barriers": 0}}

``ptxas`` needs no GPU, only the CUDA toolkit; when it is absent the PTX is still the
product (the driver JIT-compiles it), so callers check ``find_ptxas()`` first.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from linker._files import atomic_write_bytes, remove_stale_work_folders, work_folder
from linker.errors import PtxasError

__all__ = ["assemble_ptx", "find_ptxas", "parse_ptxas_verbose", "ptxas_resource_usage"]

_ARCH = re.compile(r"sm_\d+[af]?\Z")

#: The work folders' names: ``aot-ptxas-<pid>-<random>`` in the temporary directory (see ``linker.shared``).
WORK_PREFIX = "aot-ptxas-"


def find_ptxas() -> str | None:
    """Path of ``ptxas``: on PATH, else under $CUDA_HOME, $CUDA_PATH or /usr/local/cuda; None if absent."""
    found = shutil.which("ptxas")
    if found:
        return found
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    for root in roots:
        if root:
            candidate = Path(root) / "bin" / "ptxas"
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    return None


def _run_ptxas(ptx: str, arch: str, extra_args: Sequence[str]) -> tuple[Path, Path, str]:
    """Assemble in a fresh folder; returns (folder, cubin, ptxas output). The caller removes the folder."""
    if not isinstance(arch, str) or not _ARCH.match(arch):
        raise PtxasError(f"invalid GPU architecture {arch!r} (expected a name such as 'sm_80')")
    ptxas = find_ptxas()
    if ptxas is None:
        raise PtxasError(
            "ptxas not found (looked on PATH, $CUDA_HOME/bin, $CUDA_PATH/bin and /usr/local/cuda/bin); "
            "install the CUDA toolkit or add its bin folder to PATH"
        )
    remove_stale_work_folders(WORK_PREFIX)  # those of runs killed before they could remove their own
    work = work_folder(WORK_PREFIX)
    src, cubin = work / "in.ptx", work / "out.cubin"
    src.write_text(ptx, encoding="utf-8")
    cmd = [ptxas, f"-arch={arch}", *extra_args, "-o", str(cubin), str(src)]
    try:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace")
    except OSError as e:
        raise PtxasError(f"cannot run ptxas ({e.strerror or e}; the input is kept in {work})", cmd) from None
    output = proc.stderr + proc.stdout
    if proc.returncode != 0 or not cubin.is_file():
        raise PtxasError(
            f"ptxas rejected the PTX for {arch} (exit status {proc.returncode}; the input is kept in {work})",
            cmd,
            output=output,
        )
    return work, cubin, output


def assemble_ptx(ptx: str, arch: str, out_path: Path, *, extra_args: Sequence[str] = ()) -> Path:
    """Assemble a PTX module into a cubin for ``arch`` (e.g. ``"sm_80"``) at ``out_path``, atomically."""
    out_path = Path(out_path)
    work, cubin, _ = _run_ptxas(ptx, arch, extra_args)
    try:
        atomic_write_bytes(out_path, cubin.read_bytes())
    except OSError as e:
        raise PtxasError(f"cannot write {out_path} ({e.strerror or e})") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out_path


def ptxas_resource_usage(ptx: str, arch: str, *, extra_args: Sequence[str] = ()) -> dict[str, dict[str, int]]:
    """Registers, spills, stack, shared and constant memory of every function, from ``ptxas -v``."""
    work, _, output = _run_ptxas(ptx, arch, ["-v", *extra_args])
    shutil.rmtree(work, ignore_errors=True)
    return parse_ptxas_verbose(output)


_COMPILING = re.compile(r"Compiling (entry )?function '([^']+)'")
_PROPERTIES = re.compile(r"Function properties for (\S+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_REGISTERS = re.compile(r"Used (\d+) registers")
_BARRIERS = re.compile(r"used (\d+) barriers")
_SHARED = re.compile(r"(\d+) bytes smem")
_CONSTANT = re.compile(r"(\d+) bytes cmem\[\d+\]")


def _blank_usage(entry: bool) -> dict[str, int]:
    return dict(
        entry=entry,
        registers=0,
        spills=0,
        spill_stores=0,
        spill_loads=0,
        stack_frame=0,
        shared=0,
        constant=0,
        barriers=0,
    )


def parse_ptxas_verbose(text: str) -> dict[str, dict[str, int]]:
    """Parse ``ptxas -v`` messages into {function: usage}; ``spills`` is stores + loads in bytes.

    ``entry`` is True for kernels; ``constant`` sums the bytes of every cmem bank.
    Lines that are not understood are ignored (the format drifts between CUDA versions).
    """
    usage: dict[str, dict[str, int]] = {}
    current: str | None = None
    for line in text.splitlines():
        m = _COMPILING.search(line)
        if m:
            current = m.group(2)
            usage.setdefault(current, _blank_usage(bool(m.group(1))))["entry"] = bool(m.group(1))
            continue
        m = _PROPERTIES.search(line)
        if m:
            current = m.group(1)
            usage.setdefault(current, _blank_usage(False))
            continue
        if current is None:
            continue
        u = usage[current]
        m = _FRAME.search(line)
        if m:
            u["stack_frame"], u["spill_stores"], u["spill_loads"] = map(int, m.groups())
            u["spills"] = u["spill_stores"] + u["spill_loads"]
        m = _REGISTERS.search(line)
        if m:
            u["registers"] = int(m.group(1))
            if b := _BARRIERS.search(line):
                u["barriers"] = int(b.group(1))
            if s := _SHARED.search(line):
                u["shared"] = int(s.group(1))
            u["constant"] = sum(int(c) for c in _CONSTANT.findall(line))
    return usage
