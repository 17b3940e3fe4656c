"""Source spans and compile errors.

    >>> span = Span("/p/m.py", 12, 5, 12, 9)
    >>> str(Diagnostic(span, "lists are not supported; use an array argument"))
    '/p/m.py:12:5: error: lists are not supported; use an array argument'

Every IR op carries a ``Span``; every error the compiler reports for user code is a ``Diagnostic``
collected into a ``CompileError`` (one line per problem, all problems of a function at once).
"""

from __future__ import annotations

TYPE_CHECKING = False  # (not ``typing.TYPE_CHECKING``: ``import aot`` imports no ``typing`` or ``collections``)
if TYPE_CHECKING:
    from collections.abc import Iterable

_set = object.__setattr__


class _Frozen:
    """Assignment refused, as on a frozen dataclass. ``Span`` and ``Diagnostic`` are written out rather than
    made dataclasses: ``import aot`` makes them, and making a dataclass costs about half a millisecond (and
    importing ``dataclasses`` and ``inspect``). Fields in ``__match_args__``, in order; equal and hashed by them."""

    __slots__ = ()
    __match_args__: tuple[str, ...] = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r} of {type(self).__name__}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r} of {type(self).__name__}")

    def _fields(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__match_args__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._fields() == other._fields()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__match_args__)
        return f"{type(self).__name__}({fields})"

    def __getstate__(self) -> tuple:
        return self._fields()

    def __setstate__(self, state: tuple) -> None:
        for name, value in zip(self.__match_args__, state):
            object.__setattr__(self, name, value)


class Span(_Frozen):
    """A region of a source file: 1-based lines, 1-based columns (end column exclusive)."""

    __slots__ = __match_args__ = ("file", "line", "col", "end_line", "end_col")
    file: str
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, file: str, line: int, col: int, end_line: int = 0, end_col: int = 0) -> None:
        _set(self, "file", file)
        _set(self, "line", line)
        _set(self, "col", col)
        _set(self, "end_line", end_line)
        _set(self, "end_col", end_col)

    def _fields(self) -> tuple:
        return (self.file, self.line, self.col, self.end_line, self.end_col)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"

    def short(self) -> str:
        """The position without the file, as printed in IR dumps: ``12:5``."""
        return f"{self.line}:{self.col}"


UNKNOWN_SPAN = Span("<unknown>", 0, 0)


class Diagnostic(_Frozen):
    """One problem at one place, with what to write instead folded into the message."""

    __slots__ = __match_args__ = ("span", "message", "severity")
    span: Span
    message: str
    severity: str

    def __init__(self, span: Span, message: str, severity: str = "error") -> None:
        _set(self, "span", span)
        _set(self, "message", message)
        _set(self, "severity", severity)

    def _fields(self) -> tuple:
        return (self.span, self.message, self.severity)

    def __str__(self) -> str:
        return f"{self.span}: {self.severity}: {self.message}"

    def render(self) -> str:
        """The one-line form followed by the source line and a caret under the offending code."""
        text = str(self)
        import linecache

        source = linecache.getline(self.span.file, self.span.line).rstrip("\n")
        if not source or self.span.col <= 0:
            return text
        width = 1
        if self.span.end_line == self.span.line and self.span.end_col > self.span.col:
            width = self.span.end_col - self.span.col
        return f"{text}\n    {source}\n    {' ' * (self.span.col - 1)}{'^' * width}"


class CompileError(Exception):
    """Code the compiler does not support. ``str(e)`` starts with ``file:line:col:``."""

    def __init__(self, diagnostics: Iterable[Diagnostic] | str, chain: tuple[str, ...] = ()):
        if isinstance(diagnostics, str):
            diagnostics = [Diagnostic(UNKNOWN_SPAN, diagnostics)]
        self.diagnostics: tuple[Diagnostic, ...] = tuple(diagnostics)
        self.chain = chain
        super().__init__(self._message())

    def _message(self) -> str:
        lines = [str(d) for d in self.diagnostics]
        if len(self.chain) > 1:
            lines.append("  while compiling " + " -> ".join(self.chain))
        return "\n".join(lines)

    def with_chain(self, caller: str) -> CompileError:
        """The same error (of the same class), noting that ``caller`` called the function that failed."""
        return type(self)(self.diagnostics, (caller, *self.chain))

    def render(self) -> str:
        return "\n".join(d.render() for d in self.diagnostics)


class SourceChangedError(CompileError):
    """A method's source file no longer holds the code Python imported: nothing is compiled from it (the
    build fails the method; a call at run time runs ``.py_func``)."""


class DiagnosticSink:
    """Collects diagnostics so a pass can report every problem before giving up."""

    def __init__(self) -> None:
        self.items: list[Diagnostic] = []

    def error(self, span: Span, message: str) -> None:
        diag = Diagnostic(span, message)
        if diag not in self.items:
            self.items.append(diag)

    def __bool__(self) -> bool:
        return bool(self.items)

    def raise_if_any(self) -> None:
        if self.items:
            ordered = sorted(self.items, key=lambda d: (d.span.file, d.span.line, d.span.col))
            raise CompileError(ordered)
