"""The counted loop of codegen (``aot.codegen.loops.counted_loop``): ``for i in range(start, stop): body(i)``.

    counted_loop(b, start, stop, body, "fill")                  # the counter a phi
    counted_loop(b, start, stop, body, "loop", counter=slot)    # the counter kept in an entry-block slot

First the loop on its own: small LLVM functions built here with ``counted_loop`` (both counter forms, nested
loops, a body with branches of its own, an i32 counter, one slot shared by two loops), run through the JIT and
compared with the same loops in Python. Then the compiled code that emits it, compared with plain Python
through ``support.check``: array fills, reductions (the pairwise sum's block and tail loops, NaN-ignoring ones),
NumPy functions of arrays, elementwise operations and index arrays, lists, the native binder of keyword
arguments, and the chunks of the parallel driver.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

import numpy as np
import pytest
from llvmlite import ir

import aot
from aot.codegen import loops
from aot.codegen import types as lt
from aot.codegen.engine import JitEngine
from aot.targets.cpu import CpuTarget
from support import check

RANGES = [(0, 0), (0, 1), (0, 7), (3, 11), (-5, 4), (6, 2), (-3, -3), (10, 100)]

# ======================================================================================================
# The loop alone: LLVM functions built with counted_loop, run through the JIT
# ======================================================================================================

Build = Callable[[ir.IRBuilder, ir.Value, ir.Value, ir.Value], None]
"""Emits a loop between ``start`` and ``stop`` adding into the i64 slot ``acc`` (the function's result)."""


def _function(module: ir.Module, name: str, build: Build, width: int = 64) -> ir.Function:
    """``i64 name(iN start, iN stop)``: ``acc = 0``, ``build(b, start, stop, acc)``, ``return acc``."""
    t = ir.IntType(width)
    fn = ir.Function(module, ir.FunctionType(lt.I64, [t, t]), name)
    start, stop = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    acc = b.alloca(lt.I64, name="acc")
    b.store(ir.Constant(lt.I64, 0), acc)
    build(b, start, stop, acc)
    b.ret(b.load(acc))
    return fn


def _add(b: ir.IRBuilder, acc: ir.Value, value: ir.Value) -> None:
    b.store(b.add(b.load(acc), value), acc)


def _squares(b: ir.IRBuilder, start: ir.Value, stop: ir.Value, acc: ir.Value) -> None:
    loops.counted_loop(b, start, stop, lambda i: _add(b, acc, b.mul(i, i)), "squares")


def _squares_in_memory(b: ir.IRBuilder, start: ir.Value, stop: ir.Value, acc: ir.Value) -> None:
    with b.goto_entry_block():
        slot = b.alloca(lt.I64, name="i")
    loops.counted_loop(b, start, stop, lambda i: _add(b, acc, b.mul(i, i)), counter=slot)


def _odd_pairs(b: ir.IRBuilder, start: ir.Value, stop: ir.Value, acc: ir.Value) -> None:
    """sum(i * j + 1 for i in range(start, stop) for j in range(0, i) if (i + j) % 2): nested loops, one
    counter a phi and the other a slot, and a body with blocks of its own."""
    with b.goto_entry_block():
        slot = b.alloca(lt.I64, name="j")

    def inner(i: ir.Value, j: ir.Value) -> None:
        odd = b.trunc(b.add(i, j), ir.IntType(1))
        with b.if_then(odd):
            _add(b, acc, b.add(b.mul(i, j), ir.Constant(lt.I64, 1)))

    def outer(i: ir.Value) -> None:
        loops.counted_loop(b, ir.Constant(lt.I64, 0), i, lambda j: inner(i, j), "inner", counter=slot)

    loops.counted_loop(b, start, stop, outer, "outer")


def _narrow(b: ir.IRBuilder, start: ir.Value, stop: ir.Value, acc: ir.Value) -> None:
    """An i32 counter (the loop takes the type of ``start``): sum(3 * i + 1)."""
    with b.goto_entry_block():
        slot = b.alloca(ir.IntType(32), name="k")

    def body(k: ir.Value) -> None:
        _add(b, acc, b.add(b.mul(b.sext(k, lt.I64), ir.Constant(lt.I64, 3)), ir.Constant(lt.I64, 1)))

    loops.counted_loop(b, start, stop, body, "narrow", counter=slot)


def _shared_slot(b: ir.IRBuilder, start: ir.Value, stop: ir.Value, acc: ir.Value) -> None:
    """Two loops one after the other on one slot: sum(i) + sum(2 * i + 5) over range(start, stop)."""
    with b.goto_entry_block():
        slot = b.alloca(lt.I64, name="c")
    loops.counted_loop(b, start, stop, lambda i: _add(b, acc, i), "first", counter=slot)
    double = lambda i: _add(b, acc, b.add(b.add(i, i), ir.Constant(lt.I64, 5)))  # noqa: E731
    loops.counted_loop(b, start, stop, double, "second", counter=slot)


CASES: dict[str, tuple[Build, int, Callable[[int, int], int]]] = {
    "squares": (_squares, 64, lambda s, e: sum(i * i for i in range(s, e))),
    "squares_in_memory": (_squares_in_memory, 64, lambda s, e: sum(i * i for i in range(s, e))),
    "odd_pairs": (
        _odd_pairs,
        64,
        lambda s, e: sum(i * j + 1 for i in range(s, e) for j in range(0, i) if (i + j) % 2),
    ),
    "narrow": (_narrow, 32, lambda s, e: sum(3 * i + 1 for i in range(s, e))),
    "shared_slot": (_shared_slot, 64, lambda s, e: sum(i for i in range(s, e)) + sum(2 * i + 5 for i in range(s, e))),
}


@pytest.fixture(scope="module", params=[False, True], ids=["unoptimized", "optimized"])
def compiled(request) -> dict[str, Callable[[int, int], int]]:
    """Every case of ``CASES`` compiled into one module (as emitted, or after LLVM's pipeline), as callables."""
    module = ir.Module(name="loops_test")
    for name, (build, width, _) in CASES.items():
        _function(module, name, build, width)
    engine = JitEngine(CpuTarget.host())
    engine.add(module, optimized=request.param)
    out = {}
    for name, (_, width, _) in CASES.items():
        arg = ctypes.c_int64 if width == 64 else ctypes.c_int32
        out[name] = ctypes.CFUNCTYPE(ctypes.c_int64, arg, arg)(engine.address(name))
    out["_engine"] = engine  # (keeps the code alive)
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_counted_loop_runs_range(compiled, case):
    expected = CASES[case][2]
    for start, stop in RANGES:
        assert compiled[case](start, stop) == expected(start, stop), (case, start, stop)


def test_the_loop_makes_no_alloca_and_names_its_blocks():
    """The loop itself adds no stack slot (a phi, or the caller's slot in the entry block), and its blocks are
    ``name.head``, ``name.body``, ``name.done``."""
    module = ir.Module(name="loops_shape")
    fn = _function(module, "odd_pairs", _odd_pairs)
    allocas = [(block.name, i.name) for block in fn.blocks for i in block.instructions if i.opname == "alloca"]
    assert allocas == [("entry", "acc"), ("entry", "j")]
    names = [block.name for block in fn.blocks]
    for tag in ("outer", "inner"):
        assert {f"{tag}.head", f"{tag}.body", f"{tag}.done"} <= set(names)
    assert names.index("outer.body") < names.index("inner.head")  # (the inner loop's blocks come when built)


# ======================================================================================================
# Compiled code that emits the loop, compared with plain Python
# ======================================================================================================

SIZES = [0, 1, 5, 8, 9, 127, 128, 129, 1000, 1031]

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy warns where it gives NaN (an empty mean)


def _floats(n: int, nans: bool = False) -> np.ndarray:
    a = np.cos(np.arange(n) * 0.7) * 10.0 + 0.25
    if nans and n:
        a[::3] = np.nan
    return a


# ---------------------------------------------------------------------------------------- array fills


@aot.jit
def fills(n, v):
    return np.ones(n), np.full((n, 3), v), np.arange(2, n + 2), np.linspace(0.0, 1.0, n), np.zeros(n)


@aot.jit
def identity(n):
    return np.eye(n)


@aot.jit
def copies(a):
    return a.copy(), a.flatten()


def test_array_fills():
    for n in SIZES:
        check(fills, n, 2.5)
    for n in (0, 1, 4):
        check(identity, n)
    base = np.arange(24.0).reshape(4, 6)
    for a in (base, base[::2, ::-3], base.T, np.zeros((0, 3))):
        check(copies, a)


# ---------------------------------------------------------------------------------------- reductions


@aot.jit
def reductions(a):
    return np.sum(a), np.mean(a), np.prod(a[:5])


@aot.jit
def inner_product(a, b):
    return np.dot(a, b)


@aot.jit
def extremes(a):
    return np.min(a), np.max(a), np.argmin(a), np.argmax(a)


@aot.jit
def nan_reductions(a):
    return np.nansum(a), np.nanmax(a), np.nanargmin(a)


@aot.jit
def search(a, x):
    return np.searchsorted(a, x)


def test_reductions():
    for n in SIZES:
        a = _floats(n)
        check(reductions, a)
        check(reductions, a[::-2])
        check(inner_product, a, a[::-1], close=True)  # (NumPy's BLAS adds in another order)
        if n:
            check(extremes, a)
            check(extremes, a[::3])
            check(nan_reductions, _floats(n, nans=True) if n > 1 else a)
            check(search, np.sort(a), 0.5)
    check(extremes, np.zeros(0))  # (ValueError, as NumPy's)


# --------------------------------------------------------------------------------- NumPy functions of arrays


@aot.jit
def array_functions(a):
    return np.cumsum(a), np.diff(a), np.unique(a), np.sort(a), np.flatnonzero(a > 0.0)


@aot.jit
def counts(k):
    return np.bincount(k)


@aot.jit
def joined(a, n):
    parts = [a[:n], a[n:] * 2.0, a]
    return np.concatenate(parts)


@aot.jit
def products(m, x):
    return np.dot(m, m.T), np.outer(x, x), np.sum(m, axis=0), np.sort(m, axis=1)


def test_numpy_functions_of_arrays():
    for n in SIZES:
        a = np.round(_floats(n)) + 0.0  # (no -0.0: which zero np.unique keeps is a sort order detail)
        check(array_functions, a)
        check(joined, a, n // 2)
        check(counts, (np.arange(n) * 7) % 5)
    m = np.arange(12.0).reshape(3, 4) % 5.0
    check(products, m, np.array([1.0, -2.0, 0.5]))


# ----------------------------------------------------------------------------------------- elementwise


@aot.jit
def combined(a, b):
    return a * 2.0 + b


@aot.jit
def selections(a, idx):
    return a[a > 1.0], a[idx]


@aot.jit
def assigned(a, idx):
    a[a < 0.0] = 0.0
    a[idx] = -1.0


def test_elementwise_and_index_arrays():
    for n in SIZES:
        a, b = _floats(n), _floats(n)[::-1].copy()
        check(combined, a, b)
        idx = (np.arange(n) * 5) % max(n, 1)
        check(selections, a, idx)
        check(assigned, a, idx)
    check(combined, np.arange(6.0).reshape(2, 3), np.arange(3.0))  # (broadcast: nested loops)


# ---------------------------------------------------------------------------------------------- lists


@aot.jit
def list_walks(n):
    xs = [k * 1.5 for k in range(n)]
    xs.reverse()
    rows = [np.full(2, k * 1.0) for k in range(n)]  # (freed at the end: each item's reference dropped)
    return np.array(xs), xs[::2], len(rows)


@aot.jit
def from_lists(n, m):
    rows = [[i * m + j for j in range(m)] for i in range(n)]
    arrays = [np.full(m, i * 0.5) for i in range(n)]
    return np.array(rows), np.array(arrays)


def test_lists():
    for n in (0, 1, 2, 7, 40):
        check(list_walks, n)
    for n, m in ((1, 1), (1, 3), (4, 5)):
        check(from_lists, n, m)


# ----------------------------------------------------------------------------------- keyword arguments


@aot.jit
def weighted(a, *, start=0.0, step=1, scale=1.0):
    t = start
    for i in range(0, len(a), step):
        t += a[i] * scale
    return t


def test_the_binder_walks_the_parameters():
    a = _floats(20)
    for kwargs in ({}, {"start": 2.0}, {"step": 3}, {"scale": -0.5, "start": 1.0}, {"step": 2, "scale": 3.0}):
        assert weighted(a, **kwargs) == weighted.py_func(a, **kwargs), kwargs
    with pytest.raises(TypeError):
        weighted(a, stride=2)


# ------------------------------------------------------------------------------------ parallel chunks


@aot.jit(parallel=True)
def parallel_total(a):
    s = 0.0
    m = -1.0e300
    for i in aot.prange(len(a)):
        s += a[i] * 2.0
        m = max(m, a[i])
    return s, m


@aot.jit(parallel=True)
def parallel_fill(out):
    for i in aot.prange(len(out)):
        out[i] = i * 3


@pytest.mark.parametrize("threads", [1, 2, 3, 7])
def test_parallel_chunks(threads, monkeypatch):
    monkeypatch.setenv("AOT_NUM_THREADS", str(threads))
    for n in (0, 1, 2, 5, 64, 1000):
        a = np.arange(n) % 17 * 0.5  # (exact sums in any order)
        check(parallel_total, a)
        check(parallel_fill, np.zeros(n, dtype=np.int64))
