"""Helpers for the command-line tests: run ``aot`` as a console script and in-process, build numkit copies,
and check ``aot inspect --json`` against its schema (docs/CI.md) by hand (no jsonschema dependency).

    project = build_copy(tmp_path)                  # fixtures/numkit copied, then `aot build` (~2 s)
    proc = run_aot("verify", str(project))          # subprocess: the installed console script
    result = invoke("inspect", str(project))        # click's CliRunner, same process
    assert schema_problems(json.loads(proc.stdout)) == []
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner

REPO = Path(__file__).resolve().parents[1]
NUMKIT = REPO / "fixtures" / "numkit"
MAX_WORLD = 2**64 - 1


def aot_command() -> list[str]:
    """The console script installed beside this interpreter (``pip install -e .`` in its venv), else the same
    entry point through the interpreter (``python -m`` cannot run a top-level module's click group). Never an
    ``aot`` found on PATH: that may belong to another interpreter or an older install."""
    beside = Path(sys.executable).parent / "aot"
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    return [sys.executable, "-c", "import cli; cli.main()"]


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AOT_") and k != "NO_COLOR"}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    )
    env.update(extra)
    return env


def run_aot(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*aot_command(), *args],
        cwd=str(cwd or REPO),
        env=env or clean_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )


class Invoked:
    """What a CliRunner invocation produced, with stdout and stderr apart whatever the click version."""

    def __init__(self, exit_code: int, stdout: str, stderr: str, exception: BaseException | None):
        self.returncode = exit_code
        self.stdout = stdout
        self.stderr = stderr
        self.exception = exception


def invoke(*args: str) -> Invoked:
    import cli

    try:
        runner = CliRunner(mix_stderr=False)  # click < 8.2
    except TypeError:
        runner = CliRunner()  # click >= 8.2 keeps stderr apart already
    result = runner.invoke(cli.main, list(args), catch_exceptions=True)
    exception = result.exception if not isinstance(result.exception, SystemExit) else None
    return Invoked(result.exit_code, result.stdout, result.stderr, exception)


def copy_numkit(dest: Path) -> Path:
    shutil.copytree(NUMKIT, dest, ignore=shutil.ignore_patterns("__aot__", "__pycache__"))
    return dest


def build_copy(dest: Path) -> Path:
    project = copy_numkit(dest)
    proc = run_aot("build", str(project))
    assert proc.returncode == 0, proc.stderr
    assert (project / "numkit" / "__aot__" / "numkit.cpu.aotimg").is_file()
    return project


def copy_built(built: Path, dest: Path) -> Path:
    """A copy of a built project (images included) to edit, without bytecode caches."""
    shutil.copytree(built, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} should occur once in {path}"
    path.write_text(text.replace(old, new))
    for cache in path.parent.glob("__pycache__"):
        shutil.rmtree(cache)


def assert_one_line_error(out: Any, *needles: str) -> None:
    """Exit status 2, one line on stderr starting with ``aot:``, no traceback, nothing on stdout."""
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("aot: "), lines[0]
    assert "Traceback" not in out.stderr and "Traceback" not in out.stdout
    assert out.stdout == ""
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    if isinstance(out, Invoked):
        assert out.exception is None, out.exception


# ---------------------------------------------------------------------------------------------- schema


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


EDGE_KINDS = {"call", "global", "lookup", "overlay", "plugin"}


def schema_problems(doc: Any, verify: bool = False) -> list[str]:
    """Everything in ``doc`` that differs from the ``aot inspect --json`` schema (docs/CI.md, "The JSON")."""
    out: list[str] = []

    def keys(where: str, obj: Any, required: set[str], optional: set[str] = frozenset(), extra: bool = False):
        if not isinstance(obj, dict):
            out.append(f"{where}: not an object")
            return False
        missing = required - set(obj)
        unknown = set(obj) - required - set(optional)
        if missing:
            out.append(f"{where}: missing {sorted(missing)}")
        if unknown and not extra:
            out.append(f"{where}: unexpected {sorted(unknown)}")
        return not missing

    def typed(where: str, value: Any, check: Any, what: str) -> None:
        if not check(value):
            out.append(f"{where}: expected {what}, found {value!r}")

    if not keys("$", doc, {"format_version", "compiler_version", "python", "images"}):
        return out
    typed("$.format_version", doc["format_version"], _is_int, "int")
    typed("$.compiler_version", doc["compiler_version"], lambda v: isinstance(v, str) and v, "str")
    typed("$.python", doc["python"], lambda v: isinstance(v, str) and v, "str")
    if not isinstance(doc["images"], list):
        out.append("$.images: not a list")
        return out
    for i, image in enumerate(doc["images"]):
        w = f"$.images[{i}]"
        if not keys(w, image, {"path", "owner", "target", "entries"}):
            continue
        typed(f"{w}.path", image["path"], lambda v: isinstance(v, str) and v.endswith(".aotimg"), "path")
        typed(f"{w}.owner", image["owner"], lambda v: isinstance(v, str) and v, "str")
        if keys(f"{w}.target", image["target"], {"triple", "cpu", "features"}):
            for k in ("triple", "cpu", "features"):
                typed(f"{w}.target.{k}", image["target"][k], lambda v: isinstance(v, str), "str")
        if not isinstance(image["entries"], list):
            out.append(f"{w}.entries: not a list")
            continue
        for j, e in enumerate(image["entries"]):
            we = f"{w}.entries[{j}]"
            required = {
                "method",
                "argtypes",
                "rettype",
                "owner",
                "min_world",
                "max_world",
                "edges",
                "symbol",
                "ir_bytes",
                "native_bytes",
            }
            if verify:
                required.add("status")
            optional = {"reason"} if verify else set()
            if not keys(we, e, required, optional):
                continue
            typed(f"{we}.method", e["method"], lambda v: isinstance(v, str) and ":" in v, "pkg.mod:qualname")
            typed(
                f"{we}.argtypes",
                e["argtypes"],
                lambda v: isinstance(v, list) and all(isinstance(t, str) for t in v),
                "[str]",
            )
            typed(f"{we}.rettype", e["rettype"], lambda v: isinstance(v, str) and v, "str")
            typed(f"{we}.owner", e["owner"], lambda v: isinstance(v, str) and v, "str")
            typed(f"{we}.min_world", e["min_world"], lambda v: _is_int(v) and 0 <= v <= MAX_WORLD, "u64")
            typed(f"{we}.max_world", e["max_world"], lambda v: _is_int(v) and 0 <= v <= MAX_WORLD, "u64")
            if _is_int(e["min_world"]) and _is_int(e["max_world"]) and e["min_world"] > e["max_world"]:
                out.append(f"{we}: min_world > max_world")
            typed(f"{we}.symbol", e["symbol"], lambda v: isinstance(v, str) and v, "str")
            typed(f"{we}.ir_bytes", e["ir_bytes"], lambda v: _is_int(v) and v > 0, "positive int")
            typed(f"{we}.native_bytes", e["native_bytes"], lambda v: _is_int(v) and v >= 0, "int >= 0")
            if not isinstance(e["edges"], list):
                out.append(f"{we}.edges: not a list")
            else:
                for k, edge in enumerate(e["edges"]):
                    if keys(f"{we}.edges[{k}]", edge, {"kind", "target"}, extra=True):
                        typed(f"{we}.edges[{k}].kind", edge["kind"], lambda v: v in EDGE_KINDS, "an edge kind")
                        typed(f"{we}.edges[{k}].target", edge["target"], lambda v: isinstance(v, str) and v, "str")
            if verify:
                typed(f"{we}.status", e.get("status"), lambda v: v in ("valid", "invalid"), "valid|invalid")
                if e.get("status") == "invalid":
                    typed(f"{we}.reason", e.get("reason"), lambda v: isinstance(v, str) and v, "str")
                elif "reason" in e:
                    out.append(f"{we}: a reason on a valid entry")
    return out
