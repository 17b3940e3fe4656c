"""GPU kernels as LLVM modules: PTX entry points, and kernels run over a grid on the CPU.

    @aot.kernel saxpy(f32, f32[::1], f32[::1])
        ptx →  define ptx_kernel void @aot_…(float %a, ptr addrspace(1) %x.data, i64 %x.shape0, i64 %x.stride0, …)
        cpu →  define i32 @grid_aot_…(ptr %out, float %a, {…} %x, {…} %y, {i64, i64, i64} %grid, {…} %block)
               (every block, every thread, x fastest: set the ids, call the kernel's body, stop at an error)

The kernel's body and its callees are ordinary functions (``aot.codegen.function``), whose ``aot.gpu``
intrinsics lower as the target says (``aot.codegen.gpu_intrinsics``). On the GPU an error cannot raise a Python
exception: it stores its code into the module's ``aot_status`` word (``aot.codegen.context``), and the launcher
raises it after the launch from the error table ``build_ptx_module`` returns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from llvmlite import ir

from ..ir.ops import Intrinsic
from ..types import I64, NONE, ArrayType, ScalarType, TupleType, Type, format_signature
from . import types as lt
from .arrays import make_array
from .context import ModuleContext
from .cpython import emit_fastcall_wrapper, emit_try_wrapper
from .function import FunctionCodegen, declare_function
from .gpu_intrinsics import GRID_ACTIVE, GRID_FIELDS, grid_context, grid_field
from .module import hoist_allocas, reachable, written_params
from .types import memory_type, symbol_name, value_type

DIM3_TYPE = TupleType((I64, I64, I64))


# ------------------------------------------------------------------------------------------ entry points


def kernel_params(t: Type, global_space: int) -> list[ir.Type]:
    """How a kernel argument is passed: scalars as themselves (booleans as bytes), an array as its data
    pointer (in the address space ``global_space``), then its shape, then its byte strides; a tuple as its
    items, flattened."""
    if isinstance(t, ScalarType):
        return [lt.I8 if t.kind in "bn" else value_type(t)]
    if isinstance(t, ArrayType):
        return [memory_type(t.dtype).as_pointer(global_space)] + [lt.I64] * (2 * t.ndim)
    assert isinstance(t, TupleType)
    return [p for item in t.items for p in kernel_params(item, global_space)]


def _rebuild(b: ir.IRBuilder, t: Type, params: list[ir.Value]) -> ir.Value:
    """The register value of a kernel argument from its flattened parameters (consumed from the front)."""
    if isinstance(t, ScalarType):
        p = params.pop(0)
        if t.kind == "b":
            return b.icmp_unsigned("!=", p, ir.Constant(lt.I8, 0))
        return p
    if isinstance(t, ArrayType):
        data = b.addrspacecast(params.pop(0), memory_type(t.dtype).as_pointer())
        dims = ir.ArrayType(lt.I64, t.ndim)
        shape, strides = ir.Constant(dims, ir.Undefined), ir.Constant(dims, ir.Undefined)
        for k in range(t.ndim):
            shape = b.insert_value(shape, params.pop(0), k)
        for k in range(t.ndim):
            strides = b.insert_value(strides, params.pop(0), k)
        return make_array(b, t, data, shape, strides)  # no owner: kernels borrow every array
    assert isinstance(t, TupleType)
    out = ir.Constant(value_type(t), ir.Undefined)
    for k, item in enumerate(t.items):
        out = b.insert_value(out, _rebuild(b, item, params), k)
    return out


def emit_ptx_kernel(ctx: ModuleContext, name: str, body: ir.Function, argtypes: tuple[Type, ...]) -> ir.Function:
    """``define ptx_kernel void @name(flattened args…)``: rebuild the arguments, run the body."""
    params = [p for t in argtypes for p in kernel_params(t, ctx.target.global_address_space)]
    fn = ir.Function(ctx.module, ir.FunctionType(ir.VoidType(), params), name)
    fn.calling_convention = "ptx_kernel"
    for arg, ty in zip(fn.args, params):
        if isinstance(ty, ir.PointerType):
            arg.add_attribute("noundef")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    flat = list(fn.args)
    values = [_rebuild(b, t, flat) for t in argtypes]
    out = b.alloca(body.args[0].type.pointee)
    b.call(body, [out] + values)  # an error has already been recorded in aot_status
    b.ret_void()
    return fn


def emit_cpu_grid(ctx: ModuleContext, name: str, body: ir.Function, argtypes: tuple[Type, ...]) -> ir.Function:
    """``i32 name(ptr out, args…, grid, block)``: the kernel's body for every thread, x fastest (the
    status ABI, so the CPython wrappers of ``aot.codegen.cpython`` can call it)."""
    dim3 = value_type(DIM3_TYPE)
    fnty = ir.FunctionType(lt.STATUS, [lt.I8.as_pointer()] + [value_type(t) for t in argtypes] + [dim3, dim3])
    fn = ir.Function(ctx.module, fnty, name)
    args = list(fn.args[1 : 1 + len(argtypes)])
    grid, block = fn.args[-2], fn.args[-1]
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    gv = grid_context(ctx)
    out = b.alloca(body.args[0].type.pointee)
    for axis in range(3):
        b.store(b.extract_value(block, axis), grid_field(b, gv, GRID_FIELDS[Intrinsic.BLOCK_DIM], axis))
        b.store(b.extract_value(grid, axis), grid_field(b, gv, GRID_FIELDS[Intrinsic.GRID_DIM], axis))
    b.store(ir.Constant(lt.I64, 1), grid_field(b, gv, GRID_ACTIVE))
    failed = fn.append_basic_block("failed")
    done = fn.append_basic_block("done")
    # Loops from the outside in: block z, y, x, then thread z, y, x; (sizes, axis, the index's field).
    block_id, thread_id = GRID_FIELDS[Intrinsic.BLOCK_ID], GRID_FIELDS[Intrinsic.THREAD_ID]
    loops = [
        (grid, 2, block_id),
        (grid, 1, block_id),
        (grid, 0, block_id),
        (block, 2, thread_id),
        (block, 1, thread_id),
        (block, 0, thread_id),
    ]

    def nest(level: int, exit_block: ir.Block) -> None:
        if level == len(loops):
            status = b.call(body, [out] + args)
            ok = fn.append_basic_block("ok")
            b.cbranch(b.icmp_unsigned("!=", status, ir.Constant(lt.STATUS, 0)), failed, ok)
            b.position_at_end(ok)
            return
        dims, axis, field = loops[level]
        count = b.extract_value(dims, axis)
        before = b.block
        head = fn.append_basic_block(f"l{level}.head")
        latch = fn.append_basic_block(f"l{level}.latch")
        b.branch(head)
        b.position_at_end(head)
        i = b.phi(lt.I64)
        i.add_incoming(ir.Constant(lt.I64, 0), before)
        body_block = fn.append_basic_block(f"l{level}.body")
        b.cbranch(b.icmp_unsigned("<", i, count), body_block, exit_block)
        b.position_at_end(body_block)
        b.store(i, grid_field(b, gv, field, axis))
        nest(level + 1, latch)
        if level + 1 == len(loops):
            b.branch(latch)  # an inner loop leaves through this latch by itself
        b.position_at_end(latch)
        i.add_incoming(b.add(i, ir.Constant(lt.I64, 1), flags=("nuw",)), latch)
        b.branch(head)

    nest(0, done)
    b.position_at_end(done)
    b.store(ir.Constant(lt.I64, 0), grid_field(b, gv, GRID_ACTIVE))
    b.ret(ir.Constant(lt.STATUS, 0))
    b.position_at_end(failed)
    b.store(ir.Constant(lt.I64, 0), grid_field(b, gv, GRID_ACTIVE))
    b.ret(ir.Constant(lt.STATUS, 1))
    return fn


# ------------------------------------------------------------------------------------------ modules


@dataclass(frozen=True)
class KernelEntry:
    """A kernel instance in a PTX module: its method, argument types and ``.entry`` name."""

    method: str
    argtypes: tuple[Type, ...]
    symbol: str


def _lower_all(
    ctx: ModuleContext, roots: list, lookup: Callable, options: Callable, suffix: str = "", body_suffix: str = ""
) -> dict:
    """Declare and lower every instance the roots reach, all internal; the roots' symbols get
    ``body_suffix`` (their entry points take the plain name)."""
    owner = ctx.target.owner
    convergent = ctx.target.barrier_intrinsic is not None  # a barrier in a callee must not be moved across branches
    root_keys = {r.key for r in roots}
    functions = {}
    instances = reachable(roots, lookup)
    for inst in instances:
        name = symbol_name(inst.method.key, inst.argtypes, owner) + suffix
        llfn = declare_function(ctx.module, name + (body_suffix if inst.key in root_keys else ""), inst.function)
        llfn.linkage = "internal"
        if convergent:
            llfn.attributes.add("convergent")
        functions[inst.key] = llfn

    def callee(key: str, argtypes: tuple[Type, ...]) -> ir.Function:
        return functions[(key, argtypes)]

    for inst in instances:
        FunctionCodegen(ctx, inst.function, functions[inst.key], callee, options(inst.method.key)).lower()
    return functions


def build_ptx_module(
    name: str, kernels: list, lookup: Callable, target: Any, options: Callable
) -> tuple[ir.Module, list[KernelEntry], tuple[tuple[str, str], ...]]:
    """One LLVM module for the ``ptx`` owner: every kernel's entry point, body and device functions.

    Returns the module, the kernel entries (in the order given) and the error table (code = index + 1).
    """
    module = ir.Module(name=name)
    module.triple = target.triple
    module.data_layout = target.data_layout
    ctx = ModuleContext(module, target)
    functions = _lower_all(ctx, kernels, lookup, options, body_suffix="_body")
    ctx.status_word()  # always there, so a launcher can look it up
    entries = []
    for inst in kernels:
        symbol = symbol_name(inst.method.key, inst.argtypes, target.owner)
        emit_ptx_kernel(ctx, symbol, functions[inst.key], inst.argtypes)
        entries.append(KernelEntry(inst.method.key, inst.argtypes, symbol))
    hoist_allocas(module)
    return module, entries, tuple(ctx.errors)


def build_grid_module(
    name: str, kernel: Any, lookup: Callable, target: Any, options: Callable, suffix: str, data_prefix: str = ""
) -> tuple[ir.Module, str]:
    """A CPU module running ``kernel`` over a grid: returns it and the symbol of its ``PyMethodDef``,
    a builtin taking the kernel's arguments, then the grid and block as 3-tuples."""
    module = ir.Module(name=name)
    ctx = ModuleContext(module, target, data_prefix)
    functions = _lower_all(ctx, [kernel], lookup, options, suffix=suffix, body_suffix="_body")
    symbol = "grid_" + symbol_name(kernel.method.key, kernel.argtypes, target.owner) + suffix
    grid = emit_cpu_grid(ctx, symbol, functions[kernel.key], kernel.argtypes)
    argtypes = tuple(kernel.argtypes) + (DIM3_TYPE, DIM3_TYPE)
    try_fn = emit_try_wrapper(ctx, f"try_{symbol}", grid, argtypes, NONE, written_params(kernel, lookup))
    emit_fastcall_wrapper(ctx, symbol, try_fn, format_signature(NONE, argtypes))
    hoist_allocas(module)
    return module, f"def_{symbol}"
