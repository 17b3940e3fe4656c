"""Helpers shared by the behavioural tests of the compiled subset (SUBSET.md).

The central helper is :func:`check`: it runs the original Python function (``f.py_func``) and the compiled
method ``f`` on independent deep copies of the same arguments and asserts that both give the same result
(type-aware, NaN-aware, sign-of-zero-aware, recursive over tuples) or raise the same exception type, and that
every array argument holds the same contents afterwards.

The helpers at the end (:func:`locate`, :func:`expect_compile_error`, ...) are for the CompileError tests:
they compute the expected ``file:line:col`` of a construct from the function's real source, and check with
``ast`` that a node of the expected kind really starts there (a self-check of the test, independent of the
compiler).
"""

from __future__ import annotations

import array
import ast
import inspect
import math
import re

import numpy as np
import pytest

# Compiled methods must hand back plain Python objects (int, float, bool, None, tuples of them), never NumPy
# scalars.  Plain-Python results are normalised (NumPy scalars -> int/float/bool) before comparing, because
# indexing a NumPy array in plain Python yields NumPy scalars.
COMPILED_RESULTS_MUST_BE_PLAIN = True

_MISSING = object()

# --------------------------------------------------------------------------------------------------------
# Comparing values
# --------------------------------------------------------------------------------------------------------


def normalize(x):
    """NumPy scalars -> the Python scalar of the same kind (recursively through tuples)."""
    if isinstance(x, tuple):
        return tuple(normalize(v) for v in x)
    if type(x) is list:
        return [normalize(v) for v in x]
    if isinstance(x, np.bool_):
        return bool(x)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    return x


def is_plain(x):
    """True when x is built only from int, float, bool, None and tuples (no NumPy scalars, no subclasses)."""
    if x is None:
        return True
    if type(x) in (tuple, list):  # (lists: returned by compiled code as Python lists)
        return all(is_plain(v) for v in x)
    return type(x) in (int, float, bool) or type(x) is np.ndarray  # (arrays returned by compiled code)


def _same_float(a, b, close, rel_tol, signed_zero):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if a == b:
        if signed_zero and a == 0.0:
            return math.copysign(1.0, a) == math.copysign(1.0, b)
        return True
    if close:
        return math.isclose(a, b, rel_tol=rel_tol, abs_tol=0.0)
    return False


def same(a, b, *, close=False, rel_tol=1e-12, signed_zero=True):
    """Type-aware equality: 1 != 1.0, True != 1, NaN == NaN, -0.0 != 0.0 (unless signed_zero=False),
    recursive over tuples.  With close=True floats may differ by rel_tol."""
    a = normalize(a)
    b = normalize(b)
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(
            same(x, y, close=close, rel_tol=rel_tol, signed_zero=signed_zero) for x, y in zip(a, b)
        )
    if isinstance(a, float):
        return _same_float(a, b, close, rel_tol, signed_zero)
    if isinstance(a, np.ndarray):
        return same_array(a, b)
    return a == b


def assert_same(actual, expected, *, what="result", close=False, rel_tol=1e-12, signed_zero=True):
    assert same(actual, expected, close=close, rel_tol=rel_tol, signed_zero=signed_zero), (
        f"{what}: got {actual!r} ({type(actual).__name__}), expected {expected!r} ({type(expected).__name__})"
    )


def same_array(a, b):
    """Same dtype, shape and contents; NaN-aware and sign-of-zero-aware for floating dtypes."""
    a = np.asarray(a)
    b = np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind in "fc":
        nan_a, nan_b = np.isnan(a), np.isnan(b)
        if not np.array_equal(nan_a, nan_b):
            return False
        ok = ~nan_a
        return bool(np.array_equal(a[ok], b[ok]) and np.array_equal(np.signbit(a[ok]), np.signbit(b[ok])))
    return bool(np.array_equal(a, b))


def _buffer_contents(x):
    """Comparable snapshot of a buffer argument after a call."""
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, array.array):
        return np.array(x.tolist(), dtype=np.dtype(x.typecode))
    if isinstance(x, memoryview):
        return np.array(x.tolist())
    raise TypeError(type(x))


# --------------------------------------------------------------------------------------------------------
# Copying arguments
# --------------------------------------------------------------------------------------------------------


def clone_array(a):
    """A deep copy of a NumPy array that keeps its exact layout: same dtype, shape and strides (so a
    ``a[::2]``, ``a[::-1]`` or ``m.T`` view stays a non-contiguous / negative-stride / Fortran-order view)
    and the same writeable flag.  The copy owns fresh memory (a bytearray)."""
    if a.size == 0:
        c = np.empty(a.shape, dtype=a.dtype)
    else:
        lo = sum((n - 1) * s for n, s in zip(a.shape, a.strides) if s < 0)
        hi = sum((n - 1) * s for n, s in zip(a.shape, a.strides) if s > 0) + a.itemsize
        buf = bytearray(hi - lo)
        c = np.ndarray(a.shape, dtype=a.dtype, buffer=buf, offset=-lo, strides=a.strides)
        c[...] = a
    if not a.flags.writeable:
        c.flags.writeable = False
    return c


def clone(x):
    """Deep copy of an argument: tuples recursively, buffers into fresh memory with the same layout."""
    if isinstance(x, tuple):
        return tuple(clone(v) for v in x)
    if isinstance(x, np.ndarray):
        return clone_array(x)
    if isinstance(x, array.array):
        return array.array(x.typecode, x)
    if isinstance(x, memoryview):
        data = bytearray(x.tobytes()) if not x.readonly else bytes(x.tobytes())
        return memoryview(data).cast("B").cast(x.format, x.shape)
    return x


def _buffers(args):
    out = []
    for i, x in enumerate(args):
        if isinstance(x, (np.ndarray, array.array, memoryview)):
            out.append((i, x))
        elif isinstance(x, tuple):
            out.extend((i, y) for _, y in _buffers(x))
    return out


# --------------------------------------------------------------------------------------------------------
# Running both sides
# --------------------------------------------------------------------------------------------------------


class Outcome:
    """What a call did: returned `value`, or raised `error`."""

    def __init__(self, value=None, error=None):
        self.value = value
        self.error = error

    def __repr__(self):
        if self.error is not None:
            return f"raised {type(self.error).__name__}({self.error})"
        return f"returned {self.value!r} ({type(self.value).__name__})"


def outcome(fn, args):
    try:
        return Outcome(value=fn(*args))
    except Exception as e:  # noqa: BLE001 - the point is to capture whatever is raised
        return Outcome(error=e)


def check(f, *args, close=False, rel_tol=1e-12, signed_zero=True, messages=False, raises=None, expect=_MISSING):
    """Run ``f.py_func`` and ``f`` on deep copies of ``args`` and assert they agree.

    - results: :func:`same` (type-aware, NaN-aware; ``close`` allows ``rel_tol`` for transcendental results);
      the compiled result must be made of plain Python objects;
    - exceptions: the exact same type; with ``messages=True`` also the same message (for ``raise``/``assert``
      in user code);
    - every buffer argument (NumPy array, array.array, memoryview) must hold the same contents afterwards.

    ``raises`` / ``expect`` state what the plain-Python side must do (a self-check of the test itself).
    Returns the compiled result.
    """
    py_args = clone(args)
    jit_args = clone(args)
    want = outcome(f.py_func, py_args)

    # Self-checks: the test's belief about plain Python.
    if raises is not None:
        assert want.error is not None and type(want.error) is raises, (
            f"test bug: plain Python {want}, the test expects it to raise {raises.__name__}"
        )
    elif want.error is not None and expect is not _MISSING:
        raise AssertionError(f"test bug: plain Python {want}, the test expects {expect!r}")
    if expect is not _MISSING and want.error is None:
        assert same(want.value, expect, close=close, rel_tol=rel_tol, signed_zero=signed_zero), (
            f"test bug: plain Python returned {want.value!r}, the test expects {expect!r}"
        )

    got = outcome(f, jit_args)
    name = getattr(f.py_func, "__qualname__", "?")
    call = f"{name}{args!r}"

    if want.error is not None:
        assert got.error is not None, f"{call}: plain Python {want}, compiled {got}"
        assert type(got.error) is type(want.error), f"{call}: plain Python {want}, compiled {got}"
        if messages:
            assert str(got.error) == str(want.error), f"{call}: plain Python {want}, compiled {got}"
    else:
        assert got.error is None, f"{call}: plain Python {want}, compiled {got}"
        if COMPILED_RESULTS_MUST_BE_PLAIN:
            assert is_plain(got.value), (
                f"{call}: compiled result {got.value!r} has type {type(got.value).__name__}; "
                "expected plain Python int/float/bool/None/tuple"
            )
        assert same(got.value, want.value, close=close, rel_tol=rel_tol, signed_zero=signed_zero), (
            f"{call}: plain Python {want}, compiled {got}"
        )

    for (i, p), (_, j) in zip(_buffers(py_args), _buffers(jit_args)):
        pc, jc = _buffer_contents(p), _buffer_contents(j)
        assert same_array(jc, pc), f"{call}: argument {i} after the call: plain Python {pc!r}, compiled {jc!r}"
    return got.value


def check_raises(f, *args, exc, messages=False):
    """Both sides raise exactly `exc` (the plain-Python side is checked too)."""
    return check(f, *args, raises=exc, messages=messages)


# --------------------------------------------------------------------------------------------------------
# NumPy reference for fixed-width scalar arithmetic
# --------------------------------------------------------------------------------------------------------

NP_TYPES = {
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "u8": np.uint8,
    "u16": np.uint16,
    "u32": np.uint32,
    "u64": np.uint64,
    "f32": np.float32,
    "f64": np.float64,
    "boolean": np.bool_,
}


def np_binop(op, a, ta, b, tb):
    """(value, dtype) of `a <op> b` computed by NumPy on one-element arrays of the named types (arrays, so
    that overflow wraps silently instead of warning).  Returns a Python scalar."""
    x = np.array([a], dtype=NP_TYPES[ta])
    y = np.array([b], dtype=NP_TYPES[tb])
    with np.errstate(all="ignore"):
        r = op(x, y)
    return normalize(r[0]), r.dtype


# --------------------------------------------------------------------------------------------------------
# CompileError locations
# --------------------------------------------------------------------------------------------------------


def source_file(f):
    return f.py_func.__code__.co_filename


def locate(f, needle, *, nth=0, offset=0):
    """(file, line, col) of the nth occurrence of `needle` in the source of f.py_func (or of f itself when
    it is a plain function).

    line is 1-based, col is 1-based and counts the line's real indentation (as ast's col_offset + 1 does on
    the file's text), offset shifts the column (e.g. ``locate(f, "*args", offset=1)`` for the name)."""
    fn = inspect.unwrap(getattr(f, "py_func", f))
    lines, start = inspect.getsourcelines(fn)
    seen = 0
    for k, text in enumerate(lines):
        pos = text.find(needle)
        while pos >= 0:
            if seen == nth:
                return fn.__code__.co_filename, start + k, pos + 1 + offset
            seen += 1
            pos = text.find(needle, pos + 1)
    raise AssertionError(f"test bug: {needle!r} (occurrence {nth}) not found in the source of {fn.__qualname__}")


_FILE_AST = {}


def _file_ast(path):
    if path not in _FILE_AST:
        with open(path, encoding="utf-8") as fh:
            _FILE_AST[path] = ast.parse(fh.read(), filename=path)
    return _FILE_AST[path]


def assert_node_at(loc, node_type):
    """Self-check of a test: a node of `node_type` starts at loc = (file, line, col) in the file's AST."""
    path, line, col = loc
    for node in ast.walk(_file_ast(path)):
        if (
            isinstance(node, node_type)
            and getattr(node, "lineno", None) == line
            and getattr(node, "col_offset", None) == col - 1
        ):
            return
    raise AssertionError(f"test bug: no {node_type.__name__} node starts at {path}:{line}:{col}")


def prefix(loc):
    path, line, col = loc
    return f"{path}:{line}:{col}: "


def message_lines(err):
    return [ln for ln in str(err).splitlines() if ln.strip()]


def compile_error(f, *args, error_type=None):
    """Call f(*args) and return the CompileError it raises."""
    import aot

    error_type = error_type or aot.CompileError
    with pytest.raises(error_type) as info:
        f(*args)
    return info.value


def assert_clean_error(err):
    """No traceback of the compiler's internals leaks into the error the user sees."""
    import aot

    assert isinstance(err, aot.CompileError)
    cause = err.__cause__
    assert cause is None or isinstance(cause, aot.CompileError), f"CompileError caused by {cause!r}"
    ctx = err.__context__
    assert ctx is None or err.__suppress_context__ or isinstance(ctx, aot.CompileError), (
        f"CompileError raised while handling {ctx!r} (its traceback would be shown to the user)"
    )
    assert "Traceback (most recent call last)" not in str(err)


def expect_compile_error(f, *args, at, node_type=None):
    """f(*args) raises aot.CompileError whose message starts with ``file:line:col: `` of `at`.

    `at` is a (file, line, col) from :func:`locate`; node_type (an ast class) is verified to start there."""
    if node_type is not None:
        assert_node_at(at, node_type)
    err = compile_error(f, *args)
    msg = str(err)
    assert msg.startswith(prefix(at)), f"expected the message to start with {prefix(at)!r}, got:\n{msg}"
    assert len(msg) > len(prefix(at)) + 5, f"no explanation after the location: {msg!r}"
    assert_clean_error(err)
    return err


def mentions_line(msg, line):
    return re.search(rf"(?<![0-9]){line}(?![0-9])", msg) is not None
