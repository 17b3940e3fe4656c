"""GPU intrinsics for kernels (``aot.gpu``), and their plain-Python meaning over an emulated grid.

    @aot.kernel
    def saxpy(a: aot.f32, x: aot.f32[::1], y: aot.f32[::1]):
        i = aot.gpu.global_id(0)          # blockIdx.x * blockDim.x + threadIdx.x
        if i < len(x):
            y[i] = a * x[i] + y[i]

    saxpy[4, 256](2.0, x, y)              # compiled: on the GPU, or over the whole grid on the CPU
    saxpy.emulate[4, 256](2.0, x, y)      # plain Python: saxpy.py_func once per thread, ids set here

Compiled code resolves these functions to intrinsics (``gpu.thread_id`` … in ``aot.ir.ops.Intrinsic``);
ids are ``int`` (i64). As plain Python they only work inside an emulated launch (``emulate_grid``), which
runs the threads of a block one after another, or — when the kernel has barriers or shared memory — as
Python threads meeting at each ``sync_threads()``; anywhere else they raise ``RuntimeError``.
"""

from __future__ import annotations

import array
import itertools
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .types import ScalarType

if TYPE_CHECKING:
    from .ir.ops import Intrinsic

__all__ = [
    "atomic_add",
    "block_dim",
    "block_id",
    "emulate_grid",
    "global_id",
    "grid_dim",
    "launch_dims",
    "shared_array",
    "sync_threads",
    "thread_id",
]

Dim3 = tuple[int, int, int]


class _Aborted(Exception):
    """Another thread of the block failed, so the barrier can never be passed."""


class _BlockBarrier:
    """``__syncthreads`` for Python threads: waits for every thread of the block that has not returned."""

    def __init__(self, threads: int):
        self.cond = threading.Condition()
        self.live = threads
        self.arrived = 0
        self.generation = 0
        self.broken = False

    def wait(self) -> None:
        with self.cond:
            if self.broken:
                raise _Aborted
            generation = self.generation
            self.arrived += 1
            if self.arrived >= self.live:
                self._release()
                return
            while generation == self.generation and not self.broken:
                self.cond.wait()
            if self.broken:
                raise _Aborted

    def leave(self) -> None:
        with self.cond:
            self.live -= 1
            if self.arrived and self.arrived >= self.live:
                self._release()

    def abort(self) -> None:
        with self.cond:
            self.broken = True
            self.cond.notify_all()

    def _release(self) -> None:
        self.arrived = 0
        self.generation += 1
        self.cond.notify_all()


@dataclass
class _Block:
    """What the threads of one emulated block share."""

    barrier: _BlockBarrier | None
    atomics: threading.Lock
    lock: threading.Lock = field(default_factory=threading.Lock)
    shared: list = field(default_factory=list)


@dataclass
class _Thread:
    """The indices of one emulated thread."""

    tid: Dim3
    bid: Dim3
    bdim: Dim3
    gdim: Dim3
    block: _Block
    shared_calls: int = 0


_current = threading.local()  # the emulated GPU thread running on this Python thread, if any


def _thread(name: str) -> _Thread:
    ctx = getattr(_current, "thread", None)
    if ctx is None:
        raise RuntimeError(
            f"aot.gpu.{name}() can only run inside a kernel launch: kernel[grid, block](…), "
            f"or kernel.emulate[grid, block](…) for plain Python"
        )
    return ctx


def _axis(axis: Any, name: str) -> int:
    if type(axis) is not int or not 0 <= axis <= 2:
        raise ValueError(f"aot.gpu.{name}(): axis must be 0, 1 or 2, not {axis!r}")
    return axis


def thread_id(axis: int = 0) -> int:
    """Index of the calling thread within its block along ``axis`` (0: x, 1: y, 2: z)."""
    return _thread("thread_id").tid[_axis(axis, "thread_id")]


def block_id(axis: int = 0) -> int:
    """Index of the calling thread's block within the grid along ``axis``."""
    return _thread("block_id").bid[_axis(axis, "block_id")]


def block_dim(axis: int = 0) -> int:
    """Number of threads per block along ``axis``."""
    return _thread("block_dim").bdim[_axis(axis, "block_dim")]


def grid_dim(axis: int = 0) -> int:
    """Number of blocks in the grid along ``axis``."""
    return _thread("grid_dim").gdim[_axis(axis, "grid_dim")]


def global_id(axis: int = 0) -> int:
    """``block_id(axis) * block_dim(axis) + thread_id(axis)``."""
    ctx = _thread("global_id")
    a = _axis(axis, "global_id")
    return ctx.bid[a] * ctx.bdim[a] + ctx.tid[a]


def sync_threads() -> None:
    """Wait until every thread of the block has reached this point (``__syncthreads``)."""
    ctx = _thread("sync_threads")
    if ctx.block.barrier is None:
        raise RuntimeError("aot.gpu.sync_threads() in a launch emulated without barriers")
    ctx.block.barrier.wait()


def atomic_add(array: Any, index: Any, value: Any) -> Any:
    """``array[index] += value`` as one indivisible step; returns the element's previous value."""
    ctx = _thread("atomic_add")
    with ctx.block.atomics:
        old = array[index]
        array[index] = old + value
        return old


def shared_array(shape: Any, dtype: ScalarType) -> Any:
    """An array shared by the threads of a block (``__shared__``); ``shape`` and ``dtype`` are constants."""
    ctx = _thread("shared_array")
    dims = _shape(shape)
    if not isinstance(dtype, ScalarType) or not dtype.is_numeric:
        raise TypeError(f"aot.gpu.shared_array(): dtype must be a type such as aot.f32, not {dtype!r}")
    block = ctx.block
    with block.lock:
        k = ctx.shared_calls
        ctx.shared_calls += 1
        if k == len(block.shared):
            block.shared.append(_zeros(dims, dtype))
        return block.shared[k]


def _shape(shape: Any) -> tuple[int, ...]:
    dims = shape if isinstance(shape, tuple) else (shape,)
    if not dims or not all(type(d) is int and d > 0 for d in dims):
        raise ValueError(f"aot.gpu.shared_array(): shape must be a positive int or a tuple of them, not {shape!r}")
    return dims


_TYPECODES = {
    "i8": "b",
    "i16": "h",
    "i32": "i",
    "i64": "q",
    "u8": "B",
    "u16": "H",
    "u32": "I",
    "u64": "Q",
    "f32": "f",
    "f64": "d",
    "boolean": "B",
}


def _zeros(dims: tuple[int, ...], dtype: ScalarType) -> Any:
    try:
        import numpy as np
    except ImportError:
        n = 1
        for d in dims:
            n *= d
        view = memoryview(array.array(_TYPECODES[dtype.name], bytes(n * dtype.itemsize))).cast("B")
        # typeshed types cast() per literal format code; this one is computed
        return view.cast("?" if dtype.kind == "b" else _TYPECODES[dtype.name], dims)  # type: ignore[call-overload]
    np_name = "bool" if dtype.kind == "b" else {"i": "int", "u": "uint", "f": "float"}[dtype.kind] + str(dtype.bits)
    return np.zeros(dims, dtype=np_name)


# ---------------------------------------------------------------------------------------- launches


def launch_dims(value: Any, what: str) -> Dim3:
    """``grid``/``block`` of a launch as three positive ints: ``4`` → (4, 1, 1), ``(8, 2)`` → (8, 2, 1)."""
    dims = value if isinstance(value, tuple) else (value,)
    if not 1 <= len(dims) <= 3 or not all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in dims):
        raise ValueError(f"the {what} of a launch must be a positive int or a tuple of 1 to 3 of them, not {value!r}")
    return tuple(dims) + (1,) * (3 - len(dims))


def _order(dims: Dim3) -> list[Dim3]:
    """Every index of a 3-D range, x fastest (the order of CUDA's linear thread index)."""
    return [(x, y, z) for z, y, x in itertools.product(range(dims[2]), range(dims[1]), range(dims[0]))]


def emulate_grid(py_func: Callable, grid: Any, block: Any, args: Sequence[Any], barriers: bool = True) -> None:
    """Run ``py_func(*args)`` once per thread of the grid, in plain Python, with ``aot.gpu`` ids set.

    Without ``barriers`` the threads run one after another (x fastest). With them, each block's threads
    run as Python threads that meet at ``sync_threads()``. The first error (lowest block, then thread)
    is raised once the block stops.
    """
    gdim, bdim = launch_dims(grid, "grid"), launch_dims(block, "block")
    atomics = threading.Lock()
    threads = _order(bdim)
    for bid in _order(gdim):
        if not barriers:
            blk = _Block(None, atomics)
            for tid in threads:
                _run(py_func, args, _Thread(tid, bid, bdim, gdim, blk))
            continue
        blk = _Block(_BlockBarrier(len(threads)), atomics)
        errors: list[BaseException | None] = [None] * len(threads)

        def body(k: int, ctx: _Thread, blk: _Block, errors: list[BaseException | None]) -> None:
            try:
                _run(py_func, args, ctx)
            except _Aborted:
                pass
            except BaseException as exc:  # re-raised in the launching thread
                errors[k] = exc
                assert blk.barrier is not None
                blk.barrier.abort()
            finally:
                assert blk.barrier is not None
                blk.barrier.leave()

        workers = [
            threading.Thread(target=body, args=(k, _Thread(tid, bid, bdim, gdim, blk), blk, errors), daemon=True)
            for k, tid in enumerate(threads)
        ]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        for error in errors:
            if error is not None:
                raise error


def _run(py_func: Callable, args: Sequence[Any], ctx: _Thread) -> None:
    previous = getattr(_current, "thread", None)
    _current.thread = ctx
    try:
        py_func(*args)
    finally:
        _current.thread = previous


def intrinsic_functions() -> dict[Callable, Intrinsic]:
    """The functions of this namespace that compiled code resolves to intrinsics."""
    from .ir.ops import Intrinsic  # the IR loads only when something is compiled

    return {
        thread_id: Intrinsic.THREAD_ID,
        block_id: Intrinsic.BLOCK_ID,
        block_dim: Intrinsic.BLOCK_DIM,
        grid_dim: Intrinsic.GRID_DIM,
        global_id: Intrinsic.GLOBAL_ID,
        sync_threads: Intrinsic.SYNC_THREADS,
        atomic_add: Intrinsic.ATOMIC_ADD,
        shared_array: Intrinsic.SHARED_ARRAY,
    }
