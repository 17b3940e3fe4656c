"""Method definitions and fingerprints: everything that can change a method's compiled code, exactly.

    definition(numkit.core.clamp.py_func, MethodOptions())   →  b'\\xa9…' (same bytes in every process)
    fingerprint(numkit.core.clamp.py_func, MethodOptions())  →  '3f1c…' (a BLAKE2b hash of those bytes)

Included: the bytecode, constants (recursively, nested code objects too), names, argument layout, free
variables, the decorator's options and the compiler version. Left out: line numbers and column tables (so
comments and blank lines change nothing), the docstring, and default values: a method's own code never
reads them (callers fill them in), so a compiled caller that used one records a ``default`` edge on it
(``aot.world.edges``) and only those callers go stale when it changes. Nothing depends on addresses or on
the per-process string hash seed.

An image stores both for every method. Validating an entry compares the *definition* bytes, which is
exact (no collisions) and costs no hashing: this runs on the first call of every prebuilt method, and
encoding a definition is one ``marshal.dumps`` of a tuple of the code object's fields (format 2, which
never writes back-references, so the bytes do not depend on reference counts or on string interning).
The fingerprint is the short name people and build reports see.

Values marshal encodes exactly and type-tagged (``1``, ``1.0``, ``True`` and ``'1'`` all differ) are
encoded as they are; anything else (nested code objects, frozensets, whose iteration order follows the
string hash seed) is first put in a fixed form by ``_canonical``.

Hot path (every prebuilt method's first call encodes its definition),
guarded by ``tests/bench/instructions.py`` and ``tests/bench/test_import_bench.py``: measure before and after
any change here.
"""

from __future__ import annotations

import marshal
import types

TYPE_CHECKING = False  # (not ``typing.TYPE_CHECKING``: ``import aot`` imports no ``typing`` for this module)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

COMPILER_VERSION = "0.12.0"  # 0.12.0: stored typed IR holds binop nowrap (counted loops' adds, aot/frontend/loops.py)

_PLAIN = frozenset((int, float, complex, str, bytes, bool, type(None), type(Ellipsis)))
_plain_types = _PLAIN.issuperset
_MARSHAL_VERSION = 2  # the newest format without back-references (3 added them)


def _plain(values: tuple) -> bool:
    """Whether ``values`` holds only constants marshal encodes exactly (tuples of them included)."""
    for v in values:
        t = type(v)
        if t not in _PLAIN and not (t is tuple and _plain(v)):
            return False
    return True


def _canonical(values: tuple) -> Any:
    """``values`` itself when plain; else a list (which no plain value is) of tagged, fixed forms."""
    if _plain_types(map(type, values)) or _plain(values):  # (the common case in one C-level pass)
        return values
    out: list = []
    for c in values:
        t = type(c)
        if t in _PLAIN:
            out.append(("", c))
        elif t is tuple:
            out.append(("tuple", _canonical(c)))
        elif t is types.CodeType:
            out.append(("code", _code_fields(c, c.co_consts)))
        elif t is frozenset:  # iterated in string-hash order, which differs between processes
            out.append(("frozenset", _canonical(tuple(sorted(c, key=repr)))))
        else:
            out.append((t.__name__, repr(c)))
    return out


def _code_fields(code: types.CodeType, consts: tuple) -> tuple:
    """Everything of a code object that its compiled code depends on (no names of places, no lines)."""
    return (
        code.co_code,
        _canonical(consts),
        code.co_names,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
        code.co_flags,
    )


def definition(py_func: Callable, options: Any = None) -> bytes:
    """The exact encoding of what a fingerprint covers (see the module docstring).

    This runs on the first call of every prebuilt method, so it is one flat tuple (the code's fields, as
    for nested code objects, then the trailer) and one ``marshal.dumps``; constants made only of plain
    values (nearly always) are encoded as they are."""
    code = py_func.__code__
    consts = code.co_consts
    doc = py_func.__doc__
    if doc is not None and consts and consts[0] == doc:
        consts = (None,) + consts[1:]
    return marshal.dumps(
        _code_fields(code, consts) + (_TRAILER if options is None else options.trailer,), _MARSHAL_VERSION
    )


def same_code(py_func: Callable, code: types.CodeType | None, docstring: str | None) -> bool:
    """Whether ``code``, compiled from a function's source as the file reads now (``docstring``: the one it
    has there, or None), is the code ``py_func`` runs: equal in everything a ``definition`` covers of a code
    object (lines, places' names and the docstring left out). What is compiled must be what was imported."""
    if code is None:
        return False
    imported = py_func.__code__
    first = imported.co_consts[0] if imported.co_consts else None
    imported_doc = first if docstring is not None and type(first) is str else py_func.__doc__
    return _code_definition(code, docstring) == _code_definition(imported, imported_doc)


def _code_definition(code: types.CodeType, docstring: str | None) -> bytes:
    consts = code.co_consts
    if docstring is not None and consts and consts[0] == docstring:
        consts = (None,) + consts[1:]
    return marshal.dumps(_code_fields(code, consts), _MARSHAL_VERSION)


def fingerprint(py_func: Callable, options: Any = None) -> str:
    """A method's fingerprint: a 128-bit BLAKE2b hash of its ``definition``."""
    return fingerprint_of(definition(py_func, options))


def fingerprint_of(definition_bytes: bytes | None) -> str:
    from serializer import checksum  # not on the import path: loading compares definitions

    return checksum(definition_bytes or b"", digest_size=16).hexdigest()


def trailer(options_key: str) -> str:
    """The compiler version and the decorator's options (``MethodOptions.trailer``), as encoded last."""
    return f"aot {COMPILER_VERSION}\x1e{options_key}"


_TRAILER = trailer("")
