"""The ``aot`` console script: the command line (``cli.py``), or one line saying what to install.

    $ aot build .          # with only the runtime installed (pip install aot):
    aot build: the compiler is not installed (this is the aot runtime alone): pip install "aot[compiler]"

The command line and the compiler come with the ``compiler`` extra; a package built with aot depends on the
runtime alone, so ``aot`` may be on PATH without them. Exit status 2, as for any unusable input.
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
    if missing:
        name = f"aot {command}" if command else "aot"
        print(f"{name}: {missing} (this is the aot runtime alone): {INSTALL_COMPILER}", file=sys.stderr)
        sys.exit(2)
    from cli import main as cli_main

    cli_main()
