"""The ``aot`` command line: parse, call the library, print.

$ aot ir numkit.core:clamp "f64, f64, f64" --llvm
$ aot build fixtures/numkit && aot verify fixtures/numkit && aot inspect fixtures/numkit --verify
"""

from __future__ import annotations

import importlib
import json
import shutil
import sys
from typing import NoReturn

import click

from aot import __version__ as aot_version


@click.group()
@click.version_option(version=aot_version, prog_name="aot")
def main() -> None:
    """Precompile the numeric functions of Python packages."""


@main.command("ir")
@click.argument("method")
@click.argument("argtypes", default="")
@click.option("--llvm", "stage", flag_value="llvm", help="print the optimised LLVM IR")
@click.option("--asm", "stage", flag_value="asm", help="print the assembly")
def ir_command(method: str, argtypes: str, stage: str | None) -> None:
    """Print the typed IR of METHOD (pkg.mod:function) for ARGTYPES ("f64, i64[:]")."""
    from aot import CompileError
    from aot.ir.parser import split_top

    module_name, _, name = method.partition(":")
    try:
        obj = getattr(importlib.import_module(module_name), name)
        types = split_top(argtypes)
        show = {"llvm": obj.inspect_llvm, "asm": obj.inspect_asm}.get(stage or "", obj.inspect_ir)
        click.echo(show(*types), nl=False)
    except (ImportError, AttributeError) as err:
        click.echo(f"aot: cannot find {method}: {err}", err=True)
        sys.exit(2)
    except (CompileError, TypeError, ValueError) as err:
        click.echo(f"aot: {err}", err=True)
        sys.exit(1)


@main.command("build")
@click.argument("path", default=".", type=click.Path(file_okay=False))
@click.option(
    "--target",
    "targets",
    multiple=True,
    type=click.Choice(["cpu", "ptx"]),
    help="targets to build (default: [tool.aot] targets)",
)
@click.option("--jobs", "-j", default=1, type=click.IntRange(min=1), help="compile modules in N processes")
@click.option("--strict", is_flag=True, help="write nothing when any method fails to compile")
@click.option("--json", "as_json", is_flag=True, help="end with one JSON summary line on stdout")
def build_command(path: str, targets: tuple[str, ...], jobs: int, strict: bool, as_json: bool) -> None:
    """Build the images of the project at PATH (a folder with a pyproject.toml)."""
    from aot.builder.config import ConfigError
    from aot.builder.driver import BuildError, build_project
    from linker import LinkerError

    tty = sys.stderr.isatty() and not as_json

    def progress(what: str, done: int, total: int) -> None:
        if tty:
            width = 30
            filled = int(width * (done + 1) / max(total, 1))
            click.echo(f"\r{what:<24} [{'#' * filled}{'.' * (width - filled)}] {done + 1}/{total}", nl=False, err=True)

    try:
        result = build_project(path, jobs=jobs, strict=strict, progress=progress, targets=targets or None)
    except ConfigError as err:
        click.echo(f"aot: {err}", err=True)
        sys.exit(2)
    except (LinkerError, BuildError) as err:
        click.echo(f"aot: {err}" if isinstance(err, LinkerError) else str(err), err=True)
        sys.exit(1)
    if tty:
        click.echo("\r" + " " * 70 + "\r", nl=False, err=True)
    for line in result.errors:
        click.echo(line, err=True)
    written = "nothing written (--strict)" if strict and result.failed else ", ".join(result.images) or "no image"
    click.echo(
        f"aot build: {result.built} built, {result.reused} reused, {result.failed} failed "
        f"in {result.seconds:.2f} s: {written}",
        err=as_json,
    )
    if as_json:
        click.echo(json.dumps(result.summary()))
    sys.exit(1 if result.failed else 0)


def _fail(message: str) -> NoReturn:
    """A one-line error on stderr and exit status 2 (bad input: never a traceback)."""
    click.echo(f"aot: {message}", err=True)
    sys.exit(2)


def _style():
    from aot.tools.report import terminal_style

    return terminal_style()


def _signature_width() -> int:
    from aot.tools.report import SIGNATURE_WIDTH

    if not sys.stdout.isatty():
        return SIGNATURE_WIDTH
    columns = shutil.get_terminal_size((120, 24)).columns
    return max(24, min(64, columns - 80))


@main.command("inspect")
@click.argument("path")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object (its schema: docs/CI.md)")
@click.option("--verify", is_flag=True, help="check every entry against the current sources")
@click.option("--ir", "ir_method", metavar="METHOD", help="print the stored typed IR of METHOD")
@click.option("--llvm", "llvm_method", metavar="METHOD", help="print the LLVM IR of METHOD (from the stored IR)")
@click.option("--asm", "asm_method", metavar="METHOD", help="print the assembly of METHOD (from the stored IR)")
@click.option("--ptx", "ptx_method", metavar="METHOD", help="print the PTX of METHOD")
@click.option(
    "--until",
    metavar="PASS",
    help="with --ir: the IR right after pass PASS (resolve, simplify-cfg …), inferred again from the current sources",
)
def inspect_command(
    path: str,
    as_json: bool,
    verify: bool,
    ir_method: str | None,
    llvm_method: str | None,
    asm_method: str | None,
    ptx_method: str | None,
    until: str | None,
) -> None:
    """List the entries of the images at PATH (an image, an __aot__ folder, a package or a project).

    METHOD is pkg.mod:function, optionally with argument types: 'numkit.stats:mean(f64[:])'. The exit
    status is 0 whatever --verify finds (use 'aot verify' to fail a CI job); 2 for bad input."""
    from aot.tools.errors import AuditError
    from aot.tools.inspect import dumps, inspect_json
    from aot.tools.locate import select
    from aot.tools.report import format_table
    from aot.tools.showcode import show_code
    from aot.tools.verify import verify_sources

    stages = [
        (s, m)
        for s, m in (("ir", ir_method), ("llvm", llvm_method), ("asm", asm_method), ("ptx", ptx_method))
        if m is not None
    ]
    if len(stages) > 1:
        _fail("give only one of --ir, --llvm, --asm, --ptx")
    if stages and (as_json or verify):
        _fail(f"--{stages[0][0]} cannot be combined with --json or --verify")
    if until is not None and not (stages and stages[0][0] == "ir"):
        _fail("--until goes with --ir METHOD")
    try:
        sel = select(path)
        if stages:
            stage, method = stages[0]
            click.echo(show_code(sel, method, stage, until=until), nl=False)
            return
        report = verify_sources(sel) if verify else None
        for missing in sel.missing:
            click.echo(f"aot: note: {missing}", err=True)
        if as_json:
            click.echo(dumps(inspect_json(sel, report)))
        else:
            click.echo(format_table(sel, report, _style(), _signature_width()), nl=False)
    except AuditError as err:
        _fail(str(err))


@main.command("verify")
@click.argument("path")
@click.option(
    "--import",
    "import_",
    is_flag=True,
    help="also import the packages (and run the workload) in a fresh interpreter with AOT_STRICT=1",
)
def verify_command(path: str, import_: bool) -> None:
    """Exit 0 when every entry of the images at PATH is valid against the current sources, else 1.

    PATH: a project, a package folder, an __aot__ folder, an image, or the name of an installed package."""
    from aot.tools.errors import AuditError
    from aot.tools.report import run_verify

    try:
        text, ok = run_verify(path, import_, _style())
    except AuditError as err:
        _fail(str(err))
    click.echo(text, nl=False)
    sys.exit(0 if ok else 1)


@main.command("clean")
@click.argument("path")
def clean_command(path: str) -> None:
    """Remove the images (and their native code) of PATH: a project, a package, an __aot__ folder or an image."""
    from aot.tools.clean import clean
    from aot.tools.errors import AuditError

    try:
        removed = clean(path)
    except AuditError as err:
        _fail(str(err))
    for file in removed:
        click.echo(f"removed {file}")
    click.echo(f"aot clean: {len(removed)} file{'s' if len(removed) != 1 else ''} removed")
