"""``aot.gpu`` intrinsics in LLVM IR, lowered as the target's hooks say (``aot.targets.base.Target``).

    %i: i64 = intrinsic gpu.global_id, [%0]
        ptx →  %b = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x() … (zext, mul nuw, add nuw: i64)
        cpu →  loads of the module's grid context (set by the grid loop; outside it: RuntimeError)
    gpu.sync_threads()   ptx → call @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)   cpu → RuntimeError
    gpu.shared_array(…)  ptx → an internal global in addrspace(3)                      cpu → RuntimeError

A target with hardware indices names their registers (``gpu_index_register``); one without runs a kernel over an
emulated grid, whose loop (``aot.codegen.gpu.emit_cpu_grid``) stores the indices in the module's grid context.
The operands that must be compile-time constants (an axis, a shape) are resolved by the caller.
"""

from __future__ import annotations

from llvmlite import ir

from ..ir.ops import Intrinsic
from ..types import NONE, ArrayType, ScalarType
from . import types as lt
from .arrays import make_array
from .context import Emitter, ModuleContext
from .types import memory_type, value_type

INDEX_INTRINSICS = frozenset(
    {Intrinsic.THREAD_ID, Intrinsic.BLOCK_ID, Intrinsic.BLOCK_DIM, Intrinsic.GRID_DIM, Intrinsic.GLOBAL_ID}
)
"""The intrinsics whose value is a thread's index, or a size, on one axis."""

GRID_SYMBOL = "aot_grid"
# The emulated grid's context: {i64 active, [3 x i64] thread, block, block_dim, grid_dim}.
GRID_ACTIVE = 0
GRID_FIELDS = {Intrinsic.THREAD_ID: 1, Intrinsic.BLOCK_ID: 2, Intrinsic.BLOCK_DIM: 3, Intrinsic.GRID_DIM: 4}
_DIM3 = ir.ArrayType(lt.I64, 3)
_GRID_TYPE = ir.LiteralStructType([lt.I64, _DIM3, _DIM3, _DIM3, _DIM3])


def index(em: Emitter, fn: Intrinsic, axis: int) -> ir.Value:
    """The i64 value of ``thread_id``, ``block_id``, ``block_dim``, ``grid_dim`` or ``global_id`` on ``axis``."""
    if fn is Intrinsic.GLOBAL_ID:
        block, size, thread = (
            index(em, f, axis) for f in (Intrinsic.BLOCK_ID, Intrinsic.BLOCK_DIM, Intrinsic.THREAD_ID)
        )
        return em.b.add(em.b.mul(block, size, flags=("nuw", "nsw")), thread, flags=("nuw", "nsw"))
    register = em.ctx.target.gpu_index_register(fn, axis)
    if register is None:
        return _read_grid(em, fn, axis)
    return em.b.zext(em.b.call(em.ctx.declare(register, ir.FunctionType(lt.I32, [])), []), lt.I64)


def sync_threads(em: Emitter) -> ir.Value:
    """A barrier for the threads of a block; the value (``i8 0``) stands for None."""
    barrier = em.ctx.target.barrier_intrinsic
    if barrier is None:
        _needs_device(em, "sync_threads()")
    else:
        em.b.call(em.ctx.declare(barrier, ir.FunctionType(ir.VoidType(), [lt.I32])), [ir.Constant(lt.I32, 0)])
    return ir.Constant(value_type(NONE), 0)


def shared_array(em: Emitter, at: ArrayType, dims: tuple[int, ...]) -> ir.Value:
    """A C-ordered array of shape ``dims`` in the block's shared memory: one global per call site."""
    space = em.ctx.target.shared_address_space
    if space is None:
        _needs_device(em, "shared_array()")
        return ir.Constant(value_type(at), None)
    elem = memory_type(at.dtype)
    count = 1
    for d in dims:
        count *= d
    module = em.ctx.module
    number = sum(1 for g in module.global_values if g.name.startswith(f"{em.llfn.name}.shared."))
    gv = ir.GlobalVariable(module, ir.ArrayType(elem, count), f"{em.llfn.name}.shared.{number}", addrspace=space)
    gv.linkage = "internal"
    gv.initializer = ir.Constant(gv.value_type, ir.Undefined)
    gv.align = 16
    data = em.b.addrspacecast(gv, elem.as_pointer())
    strides: list[int] = []
    step = at.dtype.itemsize
    for d in reversed(dims):
        strides.insert(0, step)
        step *= d
    shape = ir.Constant(ir.ArrayType(lt.I64, len(dims)), list(dims))
    return make_array(em.b, at, data, shape, ir.Constant(ir.ArrayType(lt.I64, len(dims)), strides))


def atomic_add(em: Emitter, ptr: ir.Value, value: ir.Value, dtype: ScalarType) -> ir.Value:
    """``*ptr += value`` as one atomic operation; the old value."""
    return em.b.atomic_rmw("fadd" if dtype.is_float else "add", ptr, value, "monotonic")


def grid_context(ctx: ModuleContext) -> ir.GlobalVariable:
    """The module's emulated grid context (internal: only this module's grid loop sets it)."""
    existing = ctx.module.globals.get(GRID_SYMBOL)
    if existing is not None:
        return existing
    gv = ir.GlobalVariable(ctx.module, _GRID_TYPE, GRID_SYMBOL)
    gv.linkage = "internal"
    gv.initializer = ir.Constant(_GRID_TYPE, None)
    return gv


def grid_field(b: ir.IRBuilder, gv: ir.GlobalVariable, field: int, axis: int | None = None) -> ir.Value:
    """A pointer to a field of the grid context (``GRID_ACTIVE`` or one of ``GRID_FIELDS``), on ``axis``."""
    indices = [ir.Constant(lt.I32, 0), ir.Constant(lt.I32, field)]
    if axis is not None:
        indices.append(ir.Constant(lt.I32, axis))
    return b.gep(gv, indices, inbounds=True)


def _read_grid(em: Emitter, fn: Intrinsic, axis: int) -> ir.Value:
    gv = grid_context(em.ctx)
    active = em.b.load(grid_field(em.b, gv, GRID_ACTIVE))
    em.check(
        em.b.icmp_unsigned("==", active, ir.Constant(lt.I64, 0)),
        "RuntimeError",
        f"aot.gpu.{fn.value.split('.', 1)[1]}() can only run inside a kernel launch",
    )
    return em.b.load(grid_field(em.b, gv, GRID_FIELDS[fn], axis))


def _needs_device(em: Emitter, what: str) -> None:
    em.check(
        ir.Constant(lt.I1, 1),
        "RuntimeError",
        f"aot.gpu.{what} needs a CUDA device: barriers and shared memory are not emulated on the CPU",
    )
