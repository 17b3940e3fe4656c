"""Text for the audit commands: the ``aot inspect`` table and the ``aot verify`` report.

    sel = select("fixtures/numkit")
    print(format_table(sel, verify_sources(sel)))
    numkit/__aot__/numkit.cpu.aotimg: cpu x86_64-unknown-linux-gnu (generic), aot 0.12.0, cpython-311-linux, 75 entries
      method               signature           owner  world  edges  native  status   reason
      numkit.core:absdiff  (f64, f64) → f64    cpu    1..∞       1   187 B  valid
      numkit.core:scaled   (f64) → f64         cpu    1..∞       1    55 B  invalid  edge-changed: numkit.core:SCALE
      …

Columns are aligned, long argument lists are shortened to fit (``(f64[:, :], f64[:, :], …+2) → f64``; the
JSON output has them in full), and colour is only used when the caller asks for it (a terminal).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..world.causes import Cause
from ..world.methods import MAX_WORLD
from .audited import AuditedImage, describe_entry
from .importcheck import ImportCheck
from .locate import Selection
from .verify import VerifyReport

_GREEN, _RED, _BOLD, _DIM, _RESET = "\x1b[32m", "\x1b[31m", "\x1b[1m", "\x1b[2m", "\x1b[0m"

SIGNATURE_WIDTH = 44
"""Width of the signature column when the output is not a terminal (CI logs: stable across machines)."""


class Style:
    """Colours and the characters to draw with (``unicode=False``: plain ASCII)."""

    def __init__(self, color: bool = False, unicode: bool = True):
        self.color = color
        self.arrow = "→" if unicode else "->"
        self.infinity = "∞" if unicode else "open"
        self.ellipsis = "…" if unicode else "..."

    def paint(self, text: str, code: str) -> str:
        return f"{code}{text}{_RESET}" if self.color and text else text


def terminal_style() -> Style:
    """The style for standard output: colours on a terminal unless ``NO_COLOR`` is set, Unicode when its
    encoding is UTF-8."""
    encoding = (getattr(sys.stdout, "encoding", None) or "ascii").lower().replace("-", "")
    return Style(color=sys.stdout.isatty() and not os.environ.get("NO_COLOR"), unicode=encoding.startswith("utf"))


def show_path(path: Path) -> str:
    """Relative to the working directory when below it (shorter in logs), else absolute."""
    try:
        rel = os.path.relpath(path.resolve(), Path.cwd())
    except ValueError:
        return str(path)
    return rel if not rel.startswith("..") else str(path.resolve())


def world_bounds(min_world: int, max_world: int, style: Style) -> str:
    upper = style.infinity if max_world == MAX_WORLD else str(max_world)
    return f"{min_world}..{upper}"


def signature(argtypes: tuple[str, ...], rettype: str, width: int, style: Style) -> str:
    """``(f64, i64[:]) → f64``, with trailing argument types replaced by ``…+N`` when too wide."""
    tail = f") {style.arrow} {rettype}"
    full = "(" + ", ".join(argtypes) + tail
    if len(full) <= width:
        return full
    shown: list[str] = []
    for i, t in enumerate(argtypes):
        more = f"{style.ellipsis}+{len(argtypes) - i - 1}"
        candidate = "(" + ", ".join(shown + [t, more]) + tail
        if len(candidate) > width and shown:
            break
        shown.append(t)
    rest = len(argtypes) - len(shown)
    return "(" + ", ".join(shown + ([f"{style.ellipsis}+{rest}"] if rest else [])) + tail


def native_size(size: int | None) -> str:
    if size is None:
        return "-"
    if size >= 10 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size} B"


def image_heading(image: AuditedImage) -> str:
    target = image.target
    cpu = f" ({target['cpu']})" if target["cpu"] else ""
    features = f" [{target['features']}]" if target["features"] else ""
    if image.variants:  # (each variant's features are those of its level)
        cpu, features = f" variants {', '.join(str(v['name']) for v in image.variants)}", ""
    count = len(image.contents.code)
    return (
        f"{show_path(image.path)}: {image.owner} {target['triple']}{cpu}{features}, "
        f"aot {image.compiler_version}, {image.header.get('python', '?')}, "
        f"{count} entr{'y' if count == 1 else 'ies'}"
    )


def _pretty_cause(cause: Cause | None) -> str:
    """``edge-changed:numkit.core:mean`` → ``edge-changed: numkit.core:mean`` (easier to read in a table)."""
    assert cause is not None, "only an invalid verdict is shown with its cause, and it always has one"
    return f"{cause.kind}: {cause.detail}" if cause.detail else str(cause.kind)


def format_table(
    sel: Selection,
    report: VerifyReport | None = None,
    style: Style | None = None,
    signature_width: int = SIGNATURE_WIDTH,
) -> str:
    style = style or Style()
    lines: list[str] = []
    valid = invalid = 0
    for n, image in enumerate(sel.images):
        if n:
            lines.append("")
        lines.append(style.paint(image_heading(image), _BOLD))
        sizes = image.native_sizes()
        header = ["method", "signature", "owner", "world", "edges", "native"]
        rows: list[list[str]] = []
        statuses: list[bool | None] = []
        for key, entry in image.contents.code.items():
            row = [
                entry.method,
                signature(entry.argtypes, entry.rettype, signature_width, style),
                entry.owner,
                world_bounds(entry.min_world, entry.max_world, style),
                str(len(entry.edges)),
                native_size(sizes.get(key)),
            ]
            verdict = report.verdict(image, key) if report is not None else None
            if verdict is not None:
                row += ["valid" if verdict.valid else "invalid", "" if verdict.valid else _pretty_cause(verdict.cause)]
                valid += verdict.valid
                invalid += not verdict.valid
            statuses.append(None if verdict is None else verdict.valid)
            rows.append(row)
        if report is not None:
            header += ["status", "reason"]
        widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
        right = {4, 5}  # numbers are right-aligned

        def cells(row: list[str], widths: list[int] = widths, right: set[int] = right) -> list[str]:
            return [c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(row)]

        lines.append(style.paint("  " + "  ".join(cells(header)).rstrip(), _DIM))
        for row, status in zip(rows, statuses):
            out = cells(row)
            if status is not None:
                out[6] = style.paint(out[6], _GREEN if status else _RED)
            lines.append(("  " + "  ".join(out)).rstrip())
    if report is not None:
        lines.append("")
        summary = f"{valid} valid, {invalid} invalid"
        lines.append(style.paint(summary, _RED if invalid else _GREEN))
        lines.extend(report.import_errors)
        lines.extend(report.problems)
    return "\n".join(lines) + "\n"


def run_verify(path: str, import_: bool, style: Style | None = None) -> tuple[str, bool]:
    """What ``aot verify PATH [--import]`` prints, and whether everything holds (AuditError for bad input).
    The command line (``cli.py``) and the runtime alone (``aot.console``, without click) both run it."""
    from .importcheck import import_check
    from .locate import select
    from .verify import verify_sources

    sel = select(path)
    report = verify_sources(sel)
    check = import_check(sel) if import_ else None
    return format_verify(report, check, style)


def format_verify(
    report: VerifyReport, check: ImportCheck | None = None, style: Style | None = None
) -> tuple[str, bool]:
    """The ``aot verify`` report and whether everything holds."""
    style = style or Style()
    lines: list[str] = []
    images: dict[int, tuple[AuditedImage, int, int]] = {}
    for r in report.results:
        image, total, n_stale = images.get(id(r.image), (r.image, 0, 0))
        images[id(r.image)] = (image, total + 1, n_stale + (not r.verdict.valid))
    for image, total, n_stale in images.values():
        state = style.paint("all valid", _GREEN) if not n_stale else style.paint(f"{n_stale} stale", _RED)
        lines.append(f"{show_path(image.path)}: {total} entries, {state}")
    stale = report.stale
    if stale:
        names = [describe_entry(r.entry) for r in stale]
        width = max(len(n) for n in names)
        for r, name in zip(stale, names):
            root = report.root_cause(r)
            why = str(r.verdict.cause) + (f"  (because {root})" if root else "")
            lines.append(f"  stale  {name.ljust(width)}  {r.entry.owner}  {why}")
    for message in report.import_errors + report.problems:
        lines.append(style.paint("error: ", _RED) + message)
    ok = report.ok
    if check is not None:
        lines.append(f"import check (AOT_STRICT=1): {check.summary}")
        for detail in check.details:
            lines.append(style.paint("error: ", _RED) + detail)
        ok = ok and check.ok
    total = len(report.results)
    if ok:
        lines.append(style.paint(f"aot verify: ok: {total} entries valid", _GREEN))
    else:
        what = [f"{len(stale)} of {total} entries stale"] if stale else []
        problems = len(report.import_errors) + len(report.problems)
        if problems:
            what.append(f"{problems} problem{'s' if problems != 1 else ''}")
        if check is not None and not check.ok:
            what.append("import check failed")
        lines.append(style.paint("aot verify: FAILED: " + ", ".join(what), _RED))
    return "\n".join(lines) + "\n", ok
