"""The ``aot`` command line: parse, call the library, print.

    $ aot ir numkit.core:clamp "f64, f64, f64" --llvm
"""
from __future__ import annotations

import importlib
import json
import sys

import click


@click.group()
@click.version_option(package_name="aot")
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
@click.option("--target", "targets", multiple=True, type=click.Choice(["cpu", "ptx"]),
              help="targets to build (default: [tool.aot] targets)")
@click.option("--jobs", "-j", default=1, type=click.IntRange(min=1), help="compile modules in N processes")
@click.option("--strict", is_flag=True, help="write nothing when any method fails to compile")
@click.option("--json", "as_json", is_flag=True, help="end with one JSON summary line on stdout")
def build_command(path: str, targets: tuple[str, ...], jobs: int, strict: bool, as_json: bool) -> None:
    """Build the images of the project at PATH (a folder with a pyproject.toml)."""
    from aot.build.config import ConfigError
    from aot.build.driver import build_project
    from linker import LinkerError

    tty = sys.stderr.isatty() and not as_json

    def progress(what: str, done: int, total: int) -> None:
        if tty:
            width = 30
            filled = int(width * (done + 1) / max(total, 1))
            click.echo(f"\r{what:<24} [{'#' * filled}{'.' * (width - filled)}] {done + 1}/{total}", nl=False,
                       err=True)

    try:
        result = build_project(path, jobs=jobs, strict=strict, progress=progress, targets=targets or None)
    except ConfigError as err:
        click.echo(f"aot: {err}", err=True)
        sys.exit(2)
    except LinkerError as err:
        click.echo(f"aot: {err}", err=True)
        sys.exit(1)
    if tty:
        click.echo("\r" + " " * 70 + "\r", nl=False, err=True)
    for line in result.errors:
        click.echo(line, err=True)
    written = "nothing written (--strict)" if strict and result.failed else ", ".join(result.images) or "no image"
    click.echo(f"aot build: {result.built} built, {result.reused} reused, {result.failed} failed "
               f"in {result.seconds:.2f} s: {written}", err=as_json)
    if as_json:
        click.echo(json.dumps(result.summary()))
    sys.exit(1 if result.failed else 0)
