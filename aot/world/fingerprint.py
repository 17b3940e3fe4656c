"""Method fingerprints: a stable hash of everything that can change a method's compiled code.

    fingerprint(numkit.core.clamp.py_func, MethodOptions())  →  '3f1c…' (same in every process)

Included: the bytecode, constants (recursively, nested code objects too), names, argument layout, free
variables, default values, the decorator's options and the compiler version. Left out: line numbers and
column tables (so comments and blank lines change nothing) and the docstring. Nothing depends on
addresses or on the per-process string hash seed.
"""
from __future__ import annotations

import types
from typing import Any, Callable

from serializer.digest import sha256

COMPILER_VERSION = "0.1.0"


def _consts(consts: tuple) -> str:
    """Constants as text; nested code objects hashed separately, frozensets in a fixed order."""
    parts = []
    for c in consts:
        if isinstance(c, types.CodeType):
            parts.append("code:" + _code_digest(c))
        elif isinstance(c, frozenset):  # their repr order follows the per-process string hash seed
            parts.append("frozenset:" + repr(sorted(c, key=repr)))
        elif isinstance(c, float):
            parts.append("float:" + c.hex())
        else:
            parts.append(type(c).__name__ + ":" + repr(c))
    return "\x1f".join(parts)


def _code_digest(code: types.CodeType, consts: "tuple | None" = None) -> str:
    h = sha256(code.co_code)
    h.update(repr((code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount, code.co_flags,
                   code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars)).encode())
    h.update(_consts(code.co_consts if consts is None else consts).encode())
    return h.hexdigest()


def fingerprint(py_func: Callable, options: Any = None) -> str:
    code = py_func.__code__
    consts = code.co_consts
    doc = py_func.__doc__
    if doc is not None and consts and consts[0] == doc:
        consts = (None,) + consts[1:]
    h = sha256(f"aot {COMPILER_VERSION}|".encode())
    h.update(_code_digest(code, consts).encode())
    h.update(_consts(tuple(py_func.__defaults__ or ())).encode())
    h.update(repr(options.cache_key() if options is not None else "").encode())
    return h.hexdigest()[:32]
