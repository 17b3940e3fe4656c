"""Typed IR in its own compact msgpack form (positional, never pickle).

    data = encode_function(fn, root="/proj")      # bytes; file paths stored relative to root
    decode_function(data, root="/proj") == fn

A function is ``[name, params, file, span, [[var, type]…], return type, blocks]``; a block is
``[label, ops]``; an op is ``[opname, dest, field…, span]`` in the field order the printer uses (a ``flag``
field a boolean, always written; a record without it, from before it was added, reads as not set). Types are
their signature strings; constants are msgpack values, tuples restored from the variable's type.
"""

from __future__ import annotations

import os
from typing import Any

import msgpack

from aot.diagnostics import Span
from aot.ir import OPS_BY_NAME, Block, Function, Var
from aot.ir.ops import KIND_ENUMS, Op
from aot.types import TupleType, Type, parse_type


def _relative(path: str, root: str) -> str:
    try:
        rel = os.path.relpath(path, root)
    except ValueError:
        return os.path.basename(path)
    return os.path.basename(path) if rel.startswith("..") else rel.replace(os.sep, "/")


def _span(span: Span) -> list[int]:
    return [span.line, span.col, span.end_line, span.end_col]


def _encode_field(kind: str, value: Any) -> Any:
    if kind in ("var", "optvar"):
        return None if value is None else value.name
    if kind == "vars":
        return [v.name for v in value]
    if kind == "kind":
        return value.value
    if kind == "value":
        return list(value) if isinstance(value, tuple) else value
    if kind == "flag":
        return bool(value)
    return value


def _decode_field(kind: str, value: Any, cls: type[Op]) -> Any:
    if kind in ("var", "optvar"):
        return None if value is None else Var(value)
    if kind == "vars":
        return tuple(Var(v) for v in value)
    if kind == "kind":
        return KIND_ENUMS[cls](value)
    if kind == "flag":
        return bool(value)
    return value


def _tuplify(value: Any, t: Type | None) -> Any:
    if isinstance(t, TupleType) and isinstance(value, list):
        return tuple(_tuplify(v, it) for v, it in zip(value, t.items))
    return value


def function_to_record(fn: Function, root: str) -> list:
    blocks = []
    for block in fn.blocks:
        ops = []
        for op in block.ops:
            rec: list[Any] = [op.NAME]
            dest = getattr(op, "dest", None)
            rec.append(dest.name if dest is not None else None)
            rec.extend(_encode_field(kind, getattr(op, name)) for name, kind in zip(op.operand_fields(), op.FIELDS))
            rec.append(_span(op.span))
            ops.append(rec)
        blocks.append([block.label, ops])
    return [
        fn.name,
        list(fn.params),
        _relative(fn.file, root),
        _span(fn.span),
        [[name, str(t)] for name, t in sorted(fn.types.items())],
        str(fn.return_type),
        blocks,
    ]


def function_from_record(rec: list, root: str) -> Function:
    name, params, file, span, types, ret, blocks = rec[:7]
    path = os.path.join(root, file) if root else file
    typemap = {n: parse_type(t) for n, t in types}
    fn = Function(name, tuple(params), [], path, Span(path, *span), typemap, parse_type(ret))
    for label, ops in blocks:
        block = Block(label)
        for op_rec in ops:
            cls = OPS_BY_NAME[op_rec[0]]
            values: dict[str, Any] = {}
            if op_rec[1] is not None:
                values["dest"] = Var(op_rec[1])
            for (fname, kind), raw in zip(zip(cls.operand_fields(), cls.FIELDS), op_rec[2:-1]):
                values[fname] = _decode_field(kind, raw, cls)  # (fields missing at the end keep their defaults)
            if "value" in values and op_rec[1] is not None:
                values["value"] = _tuplify(values["value"], typemap.get(op_rec[1]))
            values["span"] = Span(path, *op_rec[-1])
            block.ops.append(cls(**values))
        fn.blocks.append(block)
    return fn


def encode_function(fn: Function, root: str = "") -> bytes:
    return msgpack.packb(function_to_record(fn, root), use_bin_type=True)


def decode_function(data: bytes, root: str = "") -> Function:
    limit = len(data)
    rec = msgpack.unpackb(
        data,
        raw=False,
        strict_map_key=True,
        max_str_len=limit,
        max_bin_len=limit,
        max_array_len=limit,
        max_map_len=limit,
    )
    return function_from_record(rec, root)
