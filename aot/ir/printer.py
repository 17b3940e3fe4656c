"""Print functions as text; ``aot.ir.parser.parse_function`` reads the text back to an equal function.

>>> print(print_function(fn))
func demo:add1(%x: f64) -> f64  file "demo.py" @1:1-2:17
bb0:
  %0: i64 = const 1  @2:16-2:17
  %1: f64 = binop add %x, %0  @2:12-2:17
  ret %1  @2:5-2:17
"""

from __future__ import annotations

import json
import math
from typing import Any

from ..diagnostics import Span
from .function import Function
from .ops import Op, Var


def format_span(span: Span) -> str:
    return f"@{span.line}:{span.col}-{span.end_line}:{span.end_col}"


def format_value(value: Any) -> str:
    """Literals as Python would write them, except ``inf``/``nan`` which print bare."""
    if isinstance(value, tuple):
        inner = ", ".join(format_value(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if value is None or isinstance(value, (bool, int)):
        return repr(value)
    if isinstance(value, str):  # (a compile-time string: untyped IR only)
        return json.dumps(value)
    raise TypeError(f"no IR literal for {value!r}")


def format_field(kind: str, value: Any) -> str:
    if kind == "var":
        return str(value)
    if kind == "optvar":
        return "-" if value is None else str(value)
    if kind == "vars":
        return "[" + ", ".join(str(v) for v in value) + "]"
    if kind == "kind":
        return value.value
    if kind == "str":
        return json.dumps(value)
    if kind == "label":
        return value
    if kind == "value":
        return format_value(value)
    raise AssertionError(kind)


def print_op(op: Op, fn: Function | None = None) -> str:
    fields = [
        name if kind == "flag" else format_field(kind, getattr(op, name))  # (a flag: its name, when set)
        for name, kind in zip(op.operand_fields(), op.FIELDS)
        if kind != "flag" or getattr(op, name)
    ]
    body = op.NAME + (" " + ", ".join(fields) if fields else "")
    dest: Var | None = getattr(op, "dest", None)
    if dest is not None:
        typ = fn.types.get(dest.name) if fn is not None else None
        head = f"{dest}: {typ}" if typ is not None else str(dest)
        body = f"{head} = {body}"
    return f"{body}  {format_span(op.span)}"


def print_function(fn: Function) -> str:
    def param(name: str) -> str:
        typ = fn.types.get(name)
        return f"%{name}: {typ}" if typ is not None else f"%{name}"

    ret = f" -> {fn.return_type}" if fn.return_type is not None else ""
    lines = [
        f"func {fn.name}({', '.join(param(p) for p in fn.params)}){ret}"
        f"  file {json.dumps(fn.file)} {format_span(fn.span)}"
    ]
    for block in fn.blocks:
        lines.append(f"{block.label}:")
        lines.extend("  " + print_op(op, fn) for op in block.ops)
    return "\n".join(lines) + "\n"
