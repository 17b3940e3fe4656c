"""What one corpus entry is, and how it is judged (used by ``run.py`` in its child processes).

A corpus module holds ``@aot.jit`` functions written as a numeric package would write them, and next to each
one a function ``<name>_cases(rng)`` that returns its inputs: a list whose items are tuples of positional
arguments or :class:`call` objects (for keyword arguments).  ``rng`` is a NumPy generator seeded from the
entry's name, so the inputs are the same on every run.  A module may set ``TOLERANCE = {"name": rel_tol}`` for
entries whose floating-point results may differ in the last bits (reductions summed in another order,
transcendental functions from another libm).

Judging an entry: each case runs ``f.py_func`` and ``f`` on independent copies of the same arguments (the
copies keep the arrays' layout, negative strides included); the results must agree (type-aware after NumPy
scalars are made plain, NaN-aware, floats within the tolerance, arrays with the same dtype and shape), an
exception on the Python side must be matched by the same exception type, and every array argument must hold
the same contents afterwards.  The first case that does not agree decides the entry's status.
"""

from __future__ import annotations

import ast
import inspect
import math
import os
import re
import textwrap
import traceback
import zlib

import numpy as np

import aot
from support import clone, normalize

OK = "ok"
COMPILE_ERROR = "compile-error"
WRONG = "wrong"
CRASH = "crash"
SKIPPED = "skipped"

# Default tolerance for floats: relative, plus an absolute floor for results that cancel to about zero.
REL_TOL = 1e-9
ABS_TOL = 1e-12

_AOT_DIR = os.path.dirname(os.path.abspath(aot.__file__))
_ROOT = os.path.dirname(_AOT_DIR) + os.sep


class call:
    """One case's arguments, when it passes some of them by keyword: ``call(x, 3, alpha=0.5)``."""

    def __init__(self, *args, **kwargs):
        self.args = args
        self.kwargs = kwargs

    def __repr__(self):
        parts = [_short(a) for a in self.args] + [f"{k}={_short(v)}" for k, v in self.kwargs.items()]
        return "(" + ", ".join(parts) + ")"


def _short(x):
    if isinstance(x, np.ndarray):
        return f"array({x.dtype}, shape={x.shape}, strides={x.strides})"
    return repr(x)


def as_call(case):
    return case if isinstance(case, call) else call(*case)


def entries(module):
    """``(name, method, cases_function)`` for every ``@aot.jit`` method defined in ``module``, in source order.
    A method without a ``<name>_cases`` function is an error of the corpus."""
    found = []
    for name, obj in vars(module).items():
        py = getattr(obj, "py_func", None)
        if py is None or py.__module__ != module.__name__:
            continue
        cases = getattr(module, f"{name}_cases", None)
        if cases is None:
            raise LookupError(f"{module.__name__}.{name} has no {name}_cases(rng) next to it")
        found.append((py.__code__.co_firstlineno, name, obj, cases))
    return [(name, obj, cases) for _, name, obj, cases in sorted(found, key=lambda t: t[0])]


def rng_for(qualname):
    return np.random.default_rng(zlib.crc32(qualname.encode()))


def missing_aot_names(method):
    """``aot.X`` names the function's source uses that this aot does not have (``aot.prange`` before the
    parallel work lands): such an entry cannot run even as plain Python, so it is skipped."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(method.py_func)))
    used = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "aot"
    }
    return sorted(n for n in used if not hasattr(aot, n))


# ------------------------------------------------------------------------------------------ comparing


def _same_float(a, b, rel_tol):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return a == b or abs(a - b) <= max(ABS_TOL, rel_tol * max(abs(a), abs(b)))


def _same_array(a, b, rel_tol):
    if not isinstance(a, np.ndarray) or not isinstance(b, np.ndarray):
        return False
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind not in "fc":
        return bool(np.array_equal(a, b))
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    if not np.array_equal(nan_a, nan_b):
        return False
    x, y = a[~nan_a], b[~nan_b]
    inf = np.isinf(x) | np.isinf(y)
    if not np.array_equal(x[inf], y[inf]):
        return False
    x, y = x[~inf], y[~inf]
    with np.errstate(all="ignore"):
        return bool(np.all((x == y) | (np.abs(x - y) <= np.maximum(ABS_TOL, rel_tol * np.maximum(abs(x), abs(y))))))


def same(got, want, rel_tol=REL_TOL):
    """The compiled result ``got`` agrees with the plain-Python result ``want``."""
    got, want = normalize(got), normalize(want)
    if isinstance(want, np.ndarray) or isinstance(got, np.ndarray):
        return _same_array(got, want, rel_tol)
    if type(got) is not type(want):
        return False
    if isinstance(want, tuple):
        return len(got) == len(want) and all(same(g, w, rel_tol) for g, w in zip(got, want))
    if isinstance(want, float):
        return _same_float(got, want, rel_tol)
    return bool(got == want)


def _arrays(values):
    """The arrays among the arguments (through tuples), in order."""
    out = []
    for v in values:
        if isinstance(v, np.ndarray):
            out.append(v)
        elif isinstance(v, tuple):
            out.extend(_arrays(v))
    return out


def _outcome(fn, c):
    try:
        return fn(*c.args, **c.kwargs), None
    except Exception as e:  # noqa: BLE001 - whatever either side raises is part of its behaviour
        return None, e


def _first_line(err):
    text = str(err).strip().splitlines()
    line = text[0] if text else ""
    if line.startswith(_ROOT):
        line = os.path.relpath(line.split(":", 1)[0], _ROOT) + ":" + line.split(":", 1)[1]
    return f"{type(err).__name__}: {line}"


# ------------------------------------------------------------------------------------------ blockers

ALLOCATION = {
    "empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like", "arange", "linspace",
    "eye", "identity",
}  # fmt: skip
SCALAR_TYPES = {"float64", "float32", "int64", "int32", "int16", "int8", "uint8", "uint64", "bool_", "intp"}
ARRAY_METHODS = {
    "copy", "astype", "sum", "mean", "std", "var", "min", "max", "argmin", "argmax", "cumsum", "sort", "fill",
    "reshape", "ravel", "any", "all", "prod", "dot", "T",
}  # fmt: skip

# (pattern on the error's first line, category): the first that matches names the blocker.  A NumPy function
# named in the error's call chain ("while compiling m:f -> numpy:full") comes before them; the code at the
# error's location (np.X, math.X, an array method) after them (see blocker()).
CATEGORIES = [
    (r"slices are not supported", "slices"),
    (r"keyword arguments are not supported", "keyword arguments in calls"),
    (r"keyword-only parameters", "keyword-only parameters"),
    (r"\*args|\*\*kwargs|star-arguments", "star arguments"),
    (r"lists are not supported|list comprehensions", "lists as values"),
    (r"None cannot be passed|cannot take a NoneType|'is' comparison|'is not' comparison", "None and 'is None'"),
    (r"cannot be passed to compiled code|compiled code cannot take", "argument types"),
    (r"'in' comparison|'not in' comparison", "'in' operator"),
    (r"' is an? (float|int|uint|bool|complex)\w*;", "NumPy scalar globals (np.float32(...))"),
    (r"[Ee]llipsis", "ellipsis (...)"),
    (r"'@' operator", "matrix multiplication (@)"),
    (r"loop target must be a single name", "unpacking for-targets (enumerate, zip)"),
    (r"calls to isinstance\(\)", "isinstance"),
    (r"calls to (enumerate|zip|reversed|sorted|sum|any|all)\(\)", "other builtins"),
    (r"on whole arrays|on arrays", "whole-array arithmetic"),
    (r"cannot return|a function returns one type", "returning arrays"),
    (r"strings are not supported|f-strings", "strings"),
    (r"attribute access on", "attributes"),
]


def _code_at(first_line):
    """The source text from an error's ``file:line:col`` to the end of that line ('' when unknown)."""
    m = re.match(r"(.+?):(\d+):(\d+): ", first_line)
    if not m:
        return ""
    try:
        with open(m.group(1), encoding="utf-8") as fh:
            lines = fh.read().splitlines()
        return lines[int(m.group(2)) - 1][int(m.group(3)) - 1 :]
    except (OSError, IndexError):
        return ""


def blocker(err):
    """``(category, what)`` of a compile error: what kind of construct blocked the entry, and its name."""
    text = str(err)
    first = text.strip().splitlines()[0] if text.strip() else ""
    chain = re.search(r"-> numpy[.\w]*:(\w+)", text)
    code = _code_at(first)
    np_name = chain.group(1) if chain else None
    method = re.search(r"arrays have no attribute '(\w+)'", first)
    if np_name is None and method:
        return "array methods", f".{method.group(1)}()"
    if np_name is None:
        for pattern, name in CATEGORIES:
            if re.search(pattern, first):
                return name, ""
        m = re.match(r"np\.(\w+)", code)
        np_name = m.group(1) if m else None
    if np_name is not None:
        if np_name in ALLOCATION:
            return "array allocation", f"np.{np_name}"
        if np_name in SCALAR_TYPES:
            return "NumPy scalar types", f"np.{np_name}"
        if np_name in ("inf", "nan", "pi", "e", "newaxis"):
            return "NumPy constants", f"np.{np_name}"
        return "NumPy ufuncs and functions", f"np.{np_name}"
    m = re.match(r"math\.(\w+)", code)
    if m:
        return "other math functions", f"math.{m.group(1)}"
    m = re.match(r"[\w\]\)]+\.(\w+)\b", code)
    if m and m.group(1) in ARRAY_METHODS:
        return "array methods", f".{m.group(1)}()"
    if code.startswith("aot.prange") or "prange" in first:
        return "prange", ""
    rest = re.sub(r"^.*?:\d+:\d+: (error: )?", "", first)
    return re.sub(r"'[^']*'", "'…'", rest)[:60], ""


def all_blockers(err):
    """The distinct ``(category, what)`` of every diagnostic in a compile error's message (the front end
    reports all it finds at once; inference stops at its first), the first one first."""
    lines = str(err).strip().splitlines()
    chain = [ln for ln in lines if ln.strip().startswith("while compiling")]
    found = []
    for ln in lines:
        if re.match(r"\S.*?:\d+:\d+: ", ln):
            b = blocker("\n".join([ln, *chain]))
            if b not in found:
                found.append(b)
    return found or [blocker(err)]


def _is_internal(err):
    """An exception that escaped the compiler itself (not one that compiled code raised as Python would):
    its innermost frame lies in llvmlite, in the compiler's stages (aot/ outside aot/runtime/) or in the
    runtime's in-process compiler (aot/runtime/jit.py).  An exception raised by native code surfaces in the
    runtime frame that called it."""
    frames = traceback.extract_tb(err.__traceback__)
    if not frames:
        return False
    last = os.path.abspath(frames[-1].filename)
    if "llvmlite" in last:
        return True
    if not last.startswith(_AOT_DIR + os.sep):
        return False
    rel = os.path.relpath(last, _AOT_DIR).replace(os.sep, "/")
    return not rel.startswith("runtime/") or rel == "runtime/jit.py"


def _unsupported_argument(err):
    text = str(err)
    return isinstance(err, TypeError) and ("cannot be passed to compiled code" in text or "cannot take a" in text)


def judge(qualname, method, cases_fn, rel_tol=REL_TOL):
    """Run one entry over its cases: ``(status, message, cases_run, error)``; ``error`` is the compile error
    (for :func:`blocker` and :func:`all_blockers`), else None."""
    missing = missing_aot_names(method)
    if missing:
        needs = ", ".join(f"aot.{n}" for n in missing)
        return SKIPPED, f"needs {needs}, which this aot does not have", 0, None
    cases = [as_call(c) for c in cases_fn(rng_for(qualname))]
    if not cases:
        raise ValueError(f"{qualname}: no cases")
    for k, c in enumerate(cases):
        py_c = call(*clone(c.args), **{n: clone(v) for n, v in c.kwargs.items()})
        jit_c = call(*clone(c.args), **{n: clone(v) for n, v in c.kwargs.items()})
        want, want_err = _outcome(method.py_func, py_c)
        got, got_err = _outcome(method, jit_c)
        where = f"case {k} {c!r}"
        if isinstance(got_err, aot.CompileError) or _unsupported_argument(got_err):
            return COMPILE_ERROR, _first_line(got_err), k, got_err
        if got_err is not None and _is_internal(got_err):
            return CRASH, f"internal error: {_first_line(got_err)} ({where})", k, None
        if want_err is not None:
            if got_err is None or type(got_err) is not type(want_err):
                got_text = "returned " + _short(got) if got_err is None else "raised " + _first_line(got_err)
                return WRONG, f"Python raised {_first_line(want_err)}, compiled {got_text} ({where})", k, None
        elif got_err is not None:
            return WRONG, f"compiled raised {_first_line(got_err)}, Python returned {_short(want)} ({where})", k, None
        elif not same(got, want, rel_tol):
            return WRONG, f"result {_short(normalize(got))} != Python's {_short(normalize(want))} ({where})", k, None
        py_arrays = _arrays(py_c.args) + _arrays(tuple(py_c.kwargs.values()))
        jit_arrays = _arrays(jit_c.args) + _arrays(tuple(jit_c.kwargs.values()))
        for i, (p, j) in enumerate(zip(py_arrays, jit_arrays)):
            if not _same_array(np.asarray(j), np.asarray(p), rel_tol):
                return WRONG, f"array argument {i} differs after the call ({where})", k, None
    return OK, "", len(cases), None
