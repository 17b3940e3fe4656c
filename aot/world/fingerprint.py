"""Method fingerprints: a stable hash of everything that can change a method's compiled code.

    fingerprint(numkit.core.clamp.py_func, MethodOptions())  →  '3f1c…' (same in every process)

Included: the bytecode, constants (recursively, nested code objects too), names, argument layout, free
variables, default values, the decorator's options and the compiler version. Left out: line numbers and
column tables (so comments and blank lines change nothing) and the docstring. Nothing depends on
addresses or on the per-process string hash seed.
"""
from __future__ import annotations

import hashlib
import types
from typing import Any, Callable

COMPILER_VERSION = "0.1.0"


def _feed(h: "hashlib._Hash", value: Any) -> None:
    if isinstance(value, types.CodeType):
        h.update(b"code(")
        h.update(value.co_code)
        for part in (value.co_argcount, value.co_posonlyargcount, value.co_kwonlyargcount, value.co_flags):
            h.update(str(part).encode() + b",")
        for seq in (value.co_names, value.co_varnames, value.co_freevars, value.co_cellvars):
            h.update(repr(tuple(seq)).encode())
        for const in value.co_consts:
            _feed(h, const)
        h.update(b")")
    elif isinstance(value, (tuple, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, frozenset) else value
        h.update(b"(")
        for item in items:
            _feed(h, item)
        h.update(b")")
    elif isinstance(value, float):
        h.update(b"f" + value.hex().encode())
    else:
        h.update(type(value).__name__.encode() + b":" + repr(value).encode())


def fingerprint(py_func: Callable, options: Any = None) -> str:
    code = py_func.__code__
    h = hashlib.sha256()
    h.update(f"aot {COMPILER_VERSION}|".encode())
    consts = code.co_consts
    doc = py_func.__doc__
    if doc is not None and consts and consts[0] == doc:
        code = code.replace(co_consts=(None,) + consts[1:])
    _feed(h, code)
    _feed(h, tuple(py_func.__defaults__ or ()))
    h.update(repr(options.cache_key() if options is not None else "").encode())
    return h.hexdigest()[:32]
