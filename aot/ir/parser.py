"""Read the text that ``aot.ir.printer`` writes back into a ``Function`` (the two are inverses).

>>> parse_function(print_function(fn)) == fn
True
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from ..diagnostics import Span
from ..types import Type, parse_type
from .function import Block, Function
from .ops import KIND_ENUMS, OPS_BY_NAME, Op, Var


class IRParseError(ValueError):
    """Text that is not printed IR; says which line."""


_SPAN = r"@(\d+):(\d+)-(\d+):(\d+)"
_HEADER_TAIL = re.compile(r"^(?: -> (.+?))?  file (\"(?:[^\"\\]|\\.)*\") " + _SPAN + "$")
_OP = re.compile(r"^  (?:%(\S+?)(?:: (.+?))? = )?([a-z]+)(?: (.*?))?  " + _SPAN + "$")
_LABEL = re.compile(r"^([\w.]+):$")
_TOKEN = re.compile(r'\s*(%[\w.$]+|"(?:[^"\\]|\\.)*"|[\[\](),]|-?inf|nan|-?[\d.]+(?:e[+-]?\d+)?|[\w.$-]+)')


def _span(file: str, groups: tuple[str, ...]) -> Span:
    a, b, c, d = (int(g) for g in groups)
    return Span(file, a, b, c, d)


def split_top(text: str) -> list[str]:
    """Split on commas outside brackets: ``"%a: f64[:, :], %b: i64"`` → two parts."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    tail = text[start:].strip()
    if tail:
        parts.append(tail)
    return parts


class _Operands:
    def __init__(self, text: str, where: str):
        self.tokens = [m for m in _TOKEN.findall(text)]
        self.pos = 0
        self.where = where

    def fail(self, what: str) -> IRParseError:
        return IRParseError(f"{self.where}: {what}")

    def next(self) -> str:
        if self.pos >= len(self.tokens):
            raise self.fail("missing operand")
        tok = self.tokens[self.pos]
        self.pos += 1
        return tok

    def peek(self, ahead: int = 0) -> str | None:
        at = self.pos + ahead
        return self.tokens[at] if at < len(self.tokens) else None

    def flag(self, name: str, after: bool) -> bool:
        """Whether ``name`` comes next (a ``flag`` field, printed only when set; ``, name`` ``after`` other
        fields); reads it if so."""
        ahead = 1 if after else 0
        if (not after or self.peek() == ",") and self.peek(ahead) == name:
            self.pos += ahead + 1
            return True
        return False

    def var(self) -> Var:
        tok = self.next()
        if not tok.startswith("%"):
            raise self.fail(f"expected a variable, found {tok!r}")
        return Var(tok[1:])

    def value(self) -> Any:
        tok = self.next()
        if tok == "(":
            items = []
            while self.peek() != ")":
                items.append(self.value())
                if self.peek() == ",":
                    self.next()
            self.next()
            return tuple(items)
        if tok.startswith('"'):
            return sys.intern(json.loads(tok))
        if tok in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[tok]
        if tok in ("inf", "-inf", "nan"):
            return float(tok)
        if re.fullmatch(r"-?\d+", tok):
            return int(tok)
        try:
            return float(tok)
        except ValueError:
            raise self.fail(f"bad literal {tok!r}") from None

    def field(self, kind: str, cls: type[Op]) -> Any:
        if kind == "var":
            return self.var()
        if kind == "optvar":
            if self.peek() == "-":
                self.next()
                return None
            return self.var()
        if kind == "vars":
            if self.next() != "[":
                raise self.fail("expected '['")
            out = []
            while self.peek() != "]":
                out.append(self.var())
                if self.peek() == ",":
                    self.next()
            self.next()
            return tuple(out)
        if kind == "kind":
            tok = self.next()
            try:
                return KIND_ENUMS[cls](tok)
            except (KeyError, ValueError):
                raise self.fail(f"unknown kind {tok!r} for {cls.NAME}") from None
        if kind == "str":
            return json.loads(self.next())
        if kind == "label":
            return self.next()
        if kind == "value":
            return self.value()
        raise AssertionError(kind)

    def comma(self) -> None:
        if self.next() != ",":
            raise self.fail("expected ','")

    def end(self) -> None:
        if self.peek() is not None:
            raise self.fail(f"unexpected {self.peek()!r}")


def _parse_header(line: str):
    """``func NAME(PARAMS) -> RET  file "F" @span`` → (NAME, PARAMS, match of the tail), brackets balanced."""
    if not line.startswith("func "):
        return None
    open_at = line.find("(")
    depth = 0
    for i in range(open_at, len(line)):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(line[i], 0)
        if depth == 0:
            tail = _HEADER_TAIL.match(line[i + 1 :])
            return (line[5:open_at], line[open_at + 1 : i], tail) if tail else None
    return None


def parse_function(text: str) -> Function:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise IRParseError("empty text")
    head = _parse_header(lines[0])
    if head is None:
        raise IRParseError(f"line 1: not a function header: {lines[0]!r}")
    name, params_text, tail = head
    ret_text, file_text = tail.group(1, 2)
    file = json.loads(file_text)
    types: dict[str, Type] = {}
    params: list[str] = []
    for part in split_top(params_text):
        pname, _, ptype = part.partition(": ")
        params.append(pname.lstrip("%"))
        if ptype:
            types[params[-1]] = parse_type(ptype)
    fn = Function(
        name,
        tuple(params),
        [],
        file,
        _span(file, tail.groups()[2:6]),
        types,
        parse_type(ret_text) if ret_text else None,
    )
    block: Block | None = None
    for lineno, line in enumerate(lines[1:], start=2):
        label = _LABEL.match(line)
        if label:
            block = Block(label.group(1))
            fn.blocks.append(block)
            continue
        m = _OP.match(line)
        if not m or block is None:
            raise IRParseError(f"line {lineno}: not an op: {line!r}")
        dest, dtype, opname, rest = m.group(1, 2, 3, 4)
        cls = OPS_BY_NAME.get(opname)
        if cls is None:
            raise IRParseError(f"line {lineno}: unknown op {opname!r}")
        reader = _Operands(rest or "", f"line {lineno}")
        values: dict[str, Any] = {}
        printed = False  # (whether a field came before: a comma then precedes the next)
        for fname, kind in zip(cls.operand_fields(), cls.FIELDS):
            if kind == "flag":
                values[fname] = reader.flag(fname, printed)
                printed = printed or values[fname]
                continue
            if printed:
                reader.comma()
            values[fname] = reader.field(kind, cls)
            printed = True
        reader.end()
        if dest is not None:
            values["dest"] = Var(dest)
            if dtype:
                types[dest] = parse_type(dtype)
        values["span"] = _span(file, m.groups()[4:8])
        block.ops.append(cls(**values))
    return fn
