"""The ``aot`` console script: the command line (``cli.py``), or one line saying what to install.

    $ aot build .          # with only the runtime installed (pip install aot):
    aot build: the compiler is not installed (this is the aot runtime alone): pip install "aot[compiler]"
    $ aot verify --import numkit     # the installed wheel's images, and a strict import: works there too

The command line and the compiler come with the ``compiler`` extra; a package built with aot depends on the
runtime alone, so ``aot`` may be on PATH without them. Exit status 2, as for any unusable input. One command
runs with the runtime alone: ``aot verify [--import] PATH``, which reads images and validates them (pure
Python), so that a wheel is checked where it is installed, with what it installs (the CI recipe's test step).
"""

from __future__ import annotations

import sys

from .runtime.compilerless import INSTALL_COMPILER, compiler_available

# The commands that compile (the others read images, and need only the command line itself).
_COMPILING = ("build", "ir")


def main() -> None:
    args = sys.argv[1:]
    command = next((a for a in args if not a.startswith("-")), "")
    try:
        import click  # noqa: F401
    except ImportError:
        missing = "the command line is not installed"
    else:
        missing = "" if command not in _COMPILING or compiler_available() else "the compiler is not installed"
    if missing == "the command line is not installed" and command == "verify":
        sys.exit(_verify(args[args.index("verify") + 1 :]))
    if missing:
        name = f"aot {command}" if command else "aot"
        print(f"{name}: {missing} (this is the aot runtime alone): {INSTALL_COMPILER}", file=sys.stderr)
        sys.exit(2)
    from cli import main as cli_main

    cli_main()


def _verify(args: list[str]) -> int:
    """``aot verify [--import] PATH`` without click: the same report and exit status as the command line's."""
    import argparse

    from .tools.errors import AuditError
    from .tools.report import run_verify, terminal_style

    parser = argparse.ArgumentParser(prog="aot verify", description="Check images against the current sources.")
    parser.add_argument("path", help="a project, package folder, __aot__ folder, image, or installed package name")
    parser.add_argument("--import", dest="import_", action="store_true", help="also import in a strict interpreter")
    options = parser.parse_args(args)
    try:
        text, ok = run_verify(options.path, options.import_, terminal_style())
    except AuditError as err:
        print(f"aot: {err}", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0 if ok else 1
