"""The one error of the audit tools: bad input, said in one line.

raise AuditError("pkg/__aot__/x.aotimg: malformed image:\\n header python is int")
str(err)  →  "pkg/__aot__/x.aotimg: malformed image: header python is int"   (``aot`` exits with 2)
"""

from __future__ import annotations


class AuditError(Exception):
    """Bad input to an audit command (no such path, not an image, a damaged image, a bad configuration, an
    unknown method); the message is one line, and ``aot`` exits with status 2."""

    def __init__(self, message: str):
        super().__init__(" ".join(message.split()))
