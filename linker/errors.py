"""Errors of external tools, each carrying the command line that reproduces it.

LinkerError("linking /p/cpu.so failed (exit status 1)", ["cc", "-shared", "-o", "/t/tmp.so", "/t/m0.o"],
            output="/t/m0.o: file not recognized: file format not recognized")
str(...)  ->  "linking /p/cpu.so failed (exit status 1)
                 /t/m0.o: file not recognized: file format not recognized
               to reproduce: cc -shared -o /t/tmp.so /t/m0.o"
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

__all__ = ["LinkerError", "PtxasError", "ToolError"]


class ToolError(Exception):
    """An external tool was missing or failed; ``command`` reproduces the failure."""

    def __init__(self, message: str, command: Sequence[str] | None = None, output: str = "") -> None:
        super().__init__(message, list(command) if command is not None else None, output)
        self.message = message
        self.command: list[str] | None = list(command) if command is not None else None
        self.output = output

    @property
    def command_line(self) -> str | None:
        """The command as one shell-quoted line, ready to paste into a terminal."""
        return shlex.join(self.command) if self.command is not None else None

    def __str__(self) -> str:
        parts = [self.message]
        out = self.output.strip()
        if out:
            parts.extend("  " + line for line in out.splitlines())
        if self.command is not None:
            parts.append(f"to reproduce: {self.command_line}")
        return "\n".join(parts)


class LinkerError(ToolError):
    """The C compiler driver was missing, or linking object files failed."""


class PtxasError(ToolError):
    """``ptxas`` was missing, or rejected a PTX module."""
