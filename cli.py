"""The ``aot`` command line: parse, call the library, print.

    $ aot ir numkit.core:clamp "f64, f64, f64" --llvm
"""
from __future__ import annotations

import importlib
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
