"""GPU code in LLVM IR: ``aot.gpu`` intrinsics, PTX kernel entry points, and kernels run over a CPU grid.

    %i: i64 = intrinsic gpu.global_id, [%0]
        ptx →  %b = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x() … (zext, mul nuw, add nuw: i64)
        cpu →  loads of the module's grid context (set by the grid loop; outside it: RuntimeError)
    @aot.kernel saxpy(f32, f32[::1], f32[::1])
        ptx →  define ptx_kernel void @aot_…(float %a, ptr addrspace(1) %x.data, i64 %x.shape0, i64 %x.stride0, …)
        cpu →  define i32 @grid_aot_…(ptr %out, float %a, {…} %x, {…} %y, {i64, i64, i64} %grid, {…} %block)
               (every block, every thread, x fastest: set the ids, call the kernel's body, stop at an error)

On the GPU an error (``IndexError`` from a bounds check, a ``math`` domain error …) cannot raise a Python
exception: the thread stores the error's code (its index, plus one, in the module's error table) into the
global ``aot_status`` word — the first error wins — and returns status 1. The launcher reads the word
after the launch and raises the exception there.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Optional

from llvmlite import ir

from ..infer.rules import fold_int_binop
from ..ir import BinOp, Const, IntrinsicCall, MakeTuple, Var
from ..ir.ops import Intrinsic
from ..types import I64, NONE, ArrayType, ScalarType, TupleType, Type, format_signature
from . import types as lt
from .types import memory_type, symbol_name, value_type

if TYPE_CHECKING:
    from .function import FunctionCodegen, ModuleContext

STATUS_SYMBOL = "aot_status"
"""The device global holding the first error code of a launch (0: none)."""
GRID_SYMBOL = "aot_grid"
GLOBAL = 1  # NVPTX address spaces
SHARED = 3

_SREGS = {Intrinsic.THREAD_ID: "tid", Intrinsic.BLOCK_ID: "ctaid", Intrinsic.BLOCK_DIM: "ntid",
          Intrinsic.GRID_DIM: "nctaid"}
# The CPU grid context: {i64 active, [3 x i64] thread, block, block_dim, grid_dim}.
_GRID_FIELDS = {Intrinsic.THREAD_ID: 1, Intrinsic.BLOCK_ID: 2, Intrinsic.BLOCK_DIM: 3, Intrinsic.GRID_DIM: 4}
_DIM3 = ir.ArrayType(lt.I64, 3)
_GRID_TYPE = ir.LiteralStructType([lt.I64, _DIM3, _DIM3, _DIM3, _DIM3])
DIM3_TYPE = TupleType((I64, I64, I64))


def is_ptx(ctx: "ModuleContext") -> bool:
    return ctx.target.owner == "ptx"


# ------------------------------------------------------------------------------------------ intrinsics

def lower_gpu_intrinsic(cg: "FunctionCodegen", op: IntrinsicCall) -> ir.Value:
    """The value of an ``aot.gpu`` intrinsic (``i8 0`` for ``sync_threads``, whose type is none)."""
    fn = op.fn
    if fn in _SREGS or fn is Intrinsic.GLOBAL_ID:
        axis = constant_value(cg, op.args[0]) if op.args else 0
        read = _read_sreg if is_ptx(cg.ctx) else _read_grid
        if fn is Intrinsic.GLOBAL_ID:
            block, size, thread = (read(cg, f, axis) for f in
                                   (Intrinsic.BLOCK_ID, Intrinsic.BLOCK_DIM, Intrinsic.THREAD_ID))
            return cg.b.add(cg.b.mul(block, size, flags=("nuw", "nsw")), thread, flags=("nuw", "nsw"))
        return read(cg, fn, axis)
    if fn is Intrinsic.ATOMIC_ADD:
        return _atomic_add(cg, op)
    if fn is Intrinsic.SYNC_THREADS:
        if is_ptx(cg.ctx):
            barrier = cg.ctx.declare("llvm.nvvm.barrier.cta.sync.aligned.all",
                                     ir.FunctionType(ir.VoidType(), [lt.I32]))
            cg.b.call(barrier, [ir.Constant(lt.I32, 0)])
        else:
            _needs_device(cg, "sync_threads()")
        return ir.Constant(value_type(NONE), 0)
    if fn is Intrinsic.SHARED_ARRAY:
        at = cg.t(op.dest)
        assert isinstance(at, ArrayType)
        shape = constant_value(cg, op.args[0])
        dims = shape if isinstance(shape, tuple) else (shape,)
        if not is_ptx(cg.ctx):
            _needs_device(cg, "shared_array()")
            return ir.Constant(value_type(at), ir.Undefined)
        return _shared_array(cg, at, dims)
    raise NotImplementedError(f"intrinsic {fn.value} on the {cg.ctx.target.owner} target")


def constant_value(cg: "FunctionCodegen", var: Var) -> Any:
    """A compile-time operand (an axis, a shape): a constant, or a tuple built of constants."""
    if var.name in cg.consts:
        return cg.consts[var.name]
    for _, op in cg.fn.ops():
        if isinstance(op, MakeTuple) and op.dest == var:
            return tuple(constant_value(cg, v) for v in op.items)
        if isinstance(op, Const) and op.dest == var:
            return op.value
        if isinstance(op, BinOp) and op.dest == var:
            value = fold_int_binop(op.op, constant_value(cg, op.lhs), constant_value(cg, op.rhs))
            if value is not None:
                return value
    raise AssertionError(f"{var} is not a compile-time constant")


def _read_sreg(cg: "FunctionCodegen", fn: Intrinsic, axis: int) -> ir.Value:
    name = f"llvm.nvvm.read.ptx.sreg.{_SREGS[fn]}.{'xyz'[axis]}"
    return cg.b.zext(cg.b.call(cg.ctx.declare(name, ir.FunctionType(lt.I32, [])), []), lt.I64)


def grid_context(ctx: "ModuleContext") -> ir.GlobalVariable:
    """The module's CPU grid context (internal: only this module's grid loop sets it)."""
    existing = ctx.module.globals.get(GRID_SYMBOL)
    if existing is not None:
        return existing
    gv = ir.GlobalVariable(ctx.module, _GRID_TYPE, GRID_SYMBOL)
    gv.linkage = "internal"
    gv.initializer = ir.Constant(_GRID_TYPE, None)
    return gv


def _grid_field(b: ir.IRBuilder, gv: ir.GlobalVariable, field: int, axis: Optional[int] = None) -> ir.Value:
    indices = [ir.Constant(lt.I32, 0), ir.Constant(lt.I32, field)]
    if axis is not None:
        indices.append(ir.Constant(lt.I32, axis))
    return b.gep(gv, indices, inbounds=True)


def _read_grid(cg: "FunctionCodegen", fn: Intrinsic, axis: int) -> ir.Value:
    gv = grid_context(cg.ctx)
    active = cg.b.load(_grid_field(cg.b, gv, 0))
    cg.check(cg.b.icmp_unsigned("==", active, ir.Constant(lt.I64, 0)), "RuntimeError",
             f"aot.gpu.{fn.value.split('.', 1)[1]}() can only run inside a kernel launch")
    return cg.b.load(_grid_field(cg.b, gv, _GRID_FIELDS[fn], axis))


def _needs_device(cg: "FunctionCodegen", what: str) -> None:
    cg.check(ir.Constant(lt.I1, 1), "RuntimeError",
             f"aot.gpu.{what} needs a CUDA device: barriers and shared memory are not emulated on the CPU")


def _atomic_add(cg: "FunctionCodegen", op: IntrinsicCall) -> ir.Value:
    arr_var, index_var, value_var = op.args
    at = cg.t(arr_var)
    assert isinstance(at, ArrayType)
    it = cg.t(index_var)
    index = cg.load(index_var)
    if isinstance(it, TupleType):
        indices = [(cg.b.extract_value(index, k), t) for k, t in enumerate(it.items)]
    else:
        indices = [(index, it)]
    ptr = cg.element_pointer(cg.load(arr_var), at, indices)
    value = cg.coerce(cg.load(value_var), cg.t(value_var), at.dtype)
    return cg.b.atomic_rmw("fadd" if at.dtype.is_float else "add", ptr, value, "monotonic")


def _shared_array(cg: "FunctionCodegen", at: ArrayType, dims: tuple[int, ...]) -> ir.Value:
    elem = memory_type(at.dtype)
    count = 1
    for d in dims:
        count *= d
    index = sum(1 for g in cg.ctx.module.global_values if g.name.startswith(f"{cg.llfn.name}.shared."))
    gv = ir.GlobalVariable(cg.ctx.module, ir.ArrayType(elem, count), f"{cg.llfn.name}.shared.{index}",
                           addrspace=SHARED)
    gv.linkage = "internal"
    gv.initializer = ir.Constant(gv.value_type, ir.Undefined)
    gv.align = 16
    data = cg.b.addrspacecast(gv, elem.as_pointer())
    strides, step = [], at.dtype.itemsize
    for d in reversed(dims):
        strides.insert(0, step)
        step *= d
    out = ir.Constant(value_type(at), ir.Undefined)
    out = cg.b.insert_value(out, data, 0)
    out = cg.b.insert_value(out, ir.Constant(ir.ArrayType(lt.I64, len(dims)), list(dims)), 1)
    return cg.b.insert_value(out, ir.Constant(ir.ArrayType(lt.I64, len(dims)), strides), 2)


# ------------------------------------------------------------------------------------------ errors

def record_error(cg: "FunctionCodegen", exc: str, message: str) -> None:
    """On the GPU: store this error's code into ``aot_status`` unless an earlier error did."""
    ctx = cg.ctx
    if (exc, message) not in ctx.errors:
        ctx.errors.append((exc, message))
    code = ctx.errors.index((exc, message)) + 1
    cg.b.cmpxchg(status_word(ctx), ir.Constant(lt.I32, 0), ir.Constant(lt.I32, code), "monotonic", "monotonic")


def status_word(ctx: "ModuleContext") -> ir.GlobalVariable:
    existing = ctx.module.globals.get(STATUS_SYMBOL)
    if existing is not None:
        return existing
    gv = ir.GlobalVariable(ctx.module, lt.I32, STATUS_SYMBOL, addrspace=GLOBAL)
    gv.initializer = ir.Constant(lt.I32, 0)
    gv.align = 4
    return gv


# ------------------------------------------------------------------------------------------ entry points

def kernel_params(t: Type) -> list[ir.Type]:
    """How a kernel argument is passed: scalars as themselves (booleans as bytes), an array as its global
    data pointer, then its shape, then its byte strides; a tuple as its items, flattened."""
    if isinstance(t, ScalarType):
        return [lt.I8 if t.kind in "bn" else value_type(t)]
    if isinstance(t, ArrayType):
        return [memory_type(t.dtype).as_pointer(GLOBAL)] + [lt.I64] * (2 * t.ndim)
    assert isinstance(t, TupleType)
    return [p for item in t.items for p in kernel_params(item)]


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
        out = ir.Constant(value_type(t), ir.Undefined)
        out = b.insert_value(out, data, 0)
        return b.insert_value(b.insert_value(out, shape, 1), strides, 2)
    assert isinstance(t, TupleType)
    out = ir.Constant(value_type(t), ir.Undefined)
    for k, item in enumerate(t.items):
        out = b.insert_value(out, _rebuild(b, item, params), k)
    return out


def emit_ptx_kernel(ctx: "ModuleContext", name: str, body: ir.Function, argtypes: tuple[Type, ...]) -> ir.Function:
    """``define ptx_kernel void @name(flattened args…)``: rebuild the arguments, run the body."""
    params = [p for t in argtypes for p in kernel_params(t)]
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


def emit_cpu_grid(ctx: "ModuleContext", name: str, body: ir.Function, argtypes: tuple[Type, ...]) -> ir.Function:
    """``i32 name(ptr out, args…, grid, block)``: the kernel's body for every thread, x fastest (the
    status ABI, so the CPython wrappers of ``aot.codegen.cpython`` can call it)."""
    dim3 = value_type(DIM3_TYPE)
    fnty = ir.FunctionType(lt.STATUS, [lt.I8.as_pointer()] + [value_type(t) for t in argtypes] + [dim3, dim3])
    fn = ir.Function(ctx.module, fnty, name)
    args = list(fn.args[1:1 + len(argtypes)])
    grid, block = fn.args[-2], fn.args[-1]
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    gv = grid_context(ctx)
    out = b.alloca(body.args[0].type.pointee)
    for axis in range(3):
        b.store(b.extract_value(block, axis), _grid_field(b, gv, 3, axis))
        b.store(b.extract_value(grid, axis), _grid_field(b, gv, 4, axis))
    b.store(ir.Constant(lt.I64, 1), _grid_field(b, gv, 0))
    failed = fn.append_basic_block("failed")
    done = fn.append_basic_block("done")
    # Loops from the outside in: block z, y, x, then thread z, y, x.
    loops = [(grid, 2, 2), (grid, 1, 2), (grid, 0, 2), (block, 2, 1), (block, 1, 1), (block, 0, 1)]

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
        b.store(i, _grid_field(b, gv, field, axis))
        nest(level + 1, latch)
        if level + 1 == len(loops):
            b.branch(latch)  # an inner loop leaves through this latch by itself
        b.position_at_end(latch)
        i.add_incoming(b.add(i, ir.Constant(lt.I64, 1), flags=("nuw",)), latch)
        b.branch(head)

    nest(0, done)
    b.position_at_end(done)
    b.store(ir.Constant(lt.I64, 0), _grid_field(b, gv, 0))
    b.ret(ir.Constant(lt.STATUS, 0))
    b.position_at_end(failed)
    b.store(ir.Constant(lt.I64, 0), _grid_field(b, gv, 0))
    b.ret(ir.Constant(lt.STATUS, 1))
    return fn


# ------------------------------------------------------------------------------------------ modules

@dataclass(frozen=True)
class KernelEntry:
    """A kernel instance in a PTX module: its method, argument types and ``.entry`` name."""

    method: str
    argtypes: tuple[Type, ...]
    symbol: str


def _lower_all(ctx: "ModuleContext", roots: list, lookup: Callable, options: Callable, suffix: str = "",
               body_suffix: str = "") -> dict:
    """Declare and lower every instance the roots reach, all internal; the roots' symbols get
    ``body_suffix`` (their entry points take the plain name)."""
    from .function import FunctionCodegen, declare_function
    from .module import reachable
    owner = ctx.target.owner
    root_keys = {r.key for r in roots}
    functions = {}
    instances = reachable(roots, lookup)
    for inst in instances:
        name = symbol_name(inst.method.key, inst.argtypes, owner) + suffix
        llfn = declare_function(ctx.module, name + (body_suffix if inst.key in root_keys else ""), inst.function)
        llfn.linkage = "internal"
        if is_ptx(ctx):
            llfn.attributes.add("convergent")  # a barrier in a callee must not be moved across branches
        functions[inst.key] = llfn

    def callee(key: str, argtypes: tuple[Type, ...]) -> ir.Function:
        return functions[(key, argtypes)]

    for inst in instances:
        FunctionCodegen(ctx, inst.function, functions[inst.key], callee, options(inst.method.key)).lower()
    return functions


def build_ptx_module(name: str, kernels: list, lookup: Callable, target: Any,
                     options: Callable) -> tuple[ir.Module, list[KernelEntry], tuple[tuple[str, str], ...]]:
    """One LLVM module for the ``ptx`` owner: every kernel's entry point, body and device functions.

    Returns the module, the kernel entries (in the order given) and the error table (code = index + 1).
    """
    from .function import ModuleContext
    module = ir.Module(name=name)
    module.triple = target.triple
    module.data_layout = target.data_layout
    ctx = ModuleContext(module, target)
    functions = _lower_all(ctx, kernels, lookup, options, body_suffix="_body")
    status_word(ctx)  # always there, so a launcher can look it up
    entries = []
    for inst in kernels:
        symbol = symbol_name(inst.method.key, inst.argtypes, "ptx")
        emit_ptx_kernel(ctx, symbol, functions[inst.key], inst.argtypes)
        entries.append(KernelEntry(inst.method.key, inst.argtypes, symbol))
    return module, entries, tuple(ctx.errors)


def build_grid_module(name: str, kernel: Any, lookup: Callable, target: Any, options: Callable, suffix: str,
                      data_prefix: str = "") -> tuple[ir.Module, str]:
    """A CPU module running ``kernel`` over a grid: returns it and the symbol of its ``PyMethodDef``,
    a builtin taking the kernel's arguments, then the grid and block as 3-tuples."""
    from .cpython import emit_fastcall_wrapper, emit_try_wrapper
    from .function import ModuleContext
    from .module import written_params
    module = ir.Module(name=name)
    ctx = ModuleContext(module, target, data_prefix)
    functions = _lower_all(ctx, [kernel], lookup, options, suffix=suffix, body_suffix="_body")
    symbol = "grid_" + symbol_name(kernel.method.key, kernel.argtypes, target.owner) + suffix
    grid = emit_cpu_grid(ctx, symbol, functions[kernel.key], kernel.argtypes)
    argtypes = tuple(kernel.argtypes) + (DIM3_TYPE, DIM3_TYPE)
    try_fn = emit_try_wrapper(ctx, f"try_{symbol}", grid, argtypes, NONE, written_params(kernel, lookup))
    emit_fastcall_wrapper(ctx, symbol, try_fn, format_signature(NONE, argtypes))
    return module, f"def_{symbol}"
