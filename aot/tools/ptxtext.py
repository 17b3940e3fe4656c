"""The functions a PTX module defines, by name, as text.

    ptx_functions(".visible .entry k(\\n.param .u64 a\\n)\\n{\\n\\tret;\\n}\\n")
      → {"k": ".visible .entry k(\\n.param .u64 a\\n)\\n{\\n\\tret;\\n}\\n"}

Declarations (a directive ended by ``;`` before any body) are left out. ``aot inspect`` uses the text for a
kernel's native size and for ``--ptx METHOD``.
"""

from __future__ import annotations

import re

_PTX_FUNCTION = re.compile(
    r"^[ \t]*(?:\.(?:visible|weak|extern)[ \t]+)*\.(?:entry|func)[ \t]+"
    r"(?:\([^)]*\)[ \t]*)?([A-Za-z_$%][\w$%]*)",
    re.M,
)


def ptx_functions(text: str) -> dict[str, str]:
    """The text of each function defined in a PTX module, from its directive to its closing brace."""
    out: dict[str, str] = {}
    for match in _PTX_FUNCTION.finditer(text):
        start = match.start()
        body = text.find("{", match.end())
        semicolon = text.find(";", match.end())
        if body < 0 or (0 <= semicolon < body):
            continue  # a declaration
        depth, i = 0, body
        while i < len(text):
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        out[match.group(1)] = text[start : i + 1].strip("\n") + "\n"
    return out
