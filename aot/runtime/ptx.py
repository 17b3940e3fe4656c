"""Compiling kernels: for the ``ptx`` owner (one linked PTX module per architecture), and for a CPU grid.

    program = compile_ptx([gpukit.kernels.saxpy, gpukit.stencil.jacobi], "sm_80")
    program.ptx                     → PTX text: a ``.entry`` per kernel signature, libdevice linked in
    program.entry("gpukit.kernels:saxpy", (F32, F32C, F32C, F32C)).symbol   → "aot_gpukit_kernels__saxpy_…"
    program.errors                  → (("IndexError", "index out of range"), …): codes 1, 2 … of aot_status

    grid = compile_grid(runtime(), kernel_mdef, argtypes)   # the kernel for every thread, on this CPU
    grid.builtin(*args, (4, 1, 1), (256, 1, 1))

The ``ptx`` owner has its own inference cache (``PtxCompiler.inferencer``), so its instances keep their own
edges: ``math.sin`` resolving to ``__nv_sin`` is an ``overlay`` edge there and not on the CPU. A CPU grid
compiles the ``cpu`` instance of the kernel (the process's JIT compiler infers it) with the GPU indices
read from the grid loop. This module imports llvmlite; ``aot.runtime.kernel`` imports it only to compile.
"""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any

from .. import forksafe
from ..codegen.engine import DATA_PREFIX
from ..codegen.function import CodegenOptions
from ..codegen.gpu import KernelEntry, build_grid_module, build_ptx_module
from ..diagnostics import CompileError, Diagnostic
from ..infer import Inferencer, InferredInstance
from ..intrinsics.registry import spec
from ..ir import BinOp, Compare, GetItem, IntrinsicCall, Return, UnaryOp
from ..passes import pipeline
from ..targets import PtxTarget
from ..types import NONE, ArrayType, Type
from .methodtype import builtin_from_def


@dataclass(frozen=True)
class PtxProgram:
    """One linked PTX module for ``arch`` and what a launcher needs to run its kernels."""

    arch: str
    ptx: str
    kernels: tuple[KernelEntry, ...]
    errors: tuple[tuple[str, str], ...]
    llvm_ir: str  # aot's own module before linking (calls to libdevice still visible)
    seconds: float

    def entry(self, method: str, argtypes: tuple[Type, ...]) -> KernelEntry:
        for k in self.kernels:
            if k.method == method and k.argtypes == tuple(argtypes):
                return k
        raise KeyError(f"{method}({', '.join(map(str, argtypes))}) is not in this PTX module")


def check_kernel(inst: InferredInstance) -> None:
    """A kernel returns nothing: results go into array arguments."""
    if inst.return_type == NONE:
        return
    span = next(
        (op.span for _, op in inst.function.ops() if isinstance(op, Return) and op.value is not None),
        inst.function.span,
    )
    raise CompileError(
        [
            Diagnostic(
                span,
                f"a kernel returns no value, but {inst.method.key} returns "
                f"{inst.return_type}; store results into an array argument",
            )
        ]
    )


def check_no_allocation(inst: InferredInstance, lookup: Any) -> None:
    """Kernels and what they call cannot allocate arrays (no allocator runs on the device)."""
    seen: set = set()
    stack = [inst]
    while stack:
        current = stack.pop()
        if current.key in seen:
            continue
        seen.add(current.key)
        fn = current.function
        for _, op in fn.ops():
            dest = op.dest_var
            if isinstance(op, IntrinsicCall) and not spec(op.fn).device:
                what = spec(op.fn).device_refusal  # (it allocates, or calls the C library)
            elif (
                isinstance(op, (BinOp, UnaryOp, Compare, GetItem))
                or (isinstance(op, IntrinsicCall) and op.fn.value.startswith(("np.", "array.i")))
            ) and isinstance(fn.types.get(dest.name if dest is not None else ""), ArrayType):
                if isinstance(op, GetItem) and not any(isinstance(fn.types.get(v.name), ArrayType) for v in op.index):
                    continue  # (a[i] of an N-D array: a view)
                what = "a whole-array operation makes a new array"  # (aot.infer.elementwise)
            else:
                continue
            raise CompileError(
                [
                    Diagnostic(
                        op.span,
                        f"{what}, which kernels (and the functions they call) cannot do; pass the array in "
                        f"as an argument, or use aot.gpu.shared_array, and loop over the elements",
                    )
                ]
            )
        stack.extend(lookup(key) for key in current.callees)


class PtxCompiler:
    """Inference for the ``ptx`` owner (its own instances and edges), code generation and linking."""

    def __init__(self, table: Any, seed: Any = None, verify: bool = False, invalidation: Any = None):
        self.table = table
        self.inferencer = Inferencer(
            table, seed=seed, overlay=PtxTarget().overlay, passes=partial(pipeline.run, verify=verify)
        )
        if invalidation is not None:  # (the process's ``aot.world.invalidation.Invalidation``)
            invalidation.subscribe(self.forget)

    def forget(self, key: str) -> tuple:
        """Method ``key`` was redefined: drop every ptx instance inferred from it. The kernels' launch caches
        see their instance gone and compile again. (No CPU specialization is named: ptx code is not
        dispatched by method objects.)"""
        self.inferencer.forget(self.inferencer.dependents(key))
        return ()

    def refresh(self) -> dict:
        """Forget every instance that relied on a plain helper whose module now binds its name to another
        function (edited and re-executed: no definition event says so, so a launch looks); {instance: the
        method that changed}. Redefinitions of methods arrive through ``forget``."""
        return forget_stale(self.inferencer, self.table)

    def infer(self, mdef: Any, argtypes: tuple[Type, ...]) -> InferredInstance:
        self.refresh()
        inst = self.inferencer.infer(mdef, tuple(argtypes))
        check_kernel(inst)
        check_no_allocation(inst, self.inferencer.done.__getitem__)
        return inst

    def options_for(self, key: str) -> CodegenOptions:
        mdef = self.table.methods.get(key)
        return CodegenOptions(boundscheck=mdef.options.boundscheck if mdef else True)

    def llvm_module(self, roots: Iterable[tuple[Any, tuple[Type, ...]]], target: PtxTarget):
        """The LLVM module (llvmlite.ir) of the kernels ``roots`` and everything they call."""
        kernels = _unique([self.infer(m, a) for m, a in roots])
        return build_ptx_module("aot_ptx", kernels, lambda k: self.inferencer.done[k], target, self.options_for)

    def compile(self, roots: Iterable[tuple[Any, tuple[Type, ...]]], arch: str, opt: int = 3) -> PtxProgram:
        from linker import link_ptx

        started = time.perf_counter()
        target = PtxTarget(arch=arch, opt=opt)
        module, entries, errors = self.llvm_module(roots, target)
        text = str(module)
        with forksafe.LLVM:
            ptx = link_ptx([text], arch, [e.symbol for e in entries] + ["aot_status"], opt=opt)
        return PtxProgram(arch, ptx, tuple(entries), errors, text, time.perf_counter() - started)


def definition_changed(table: Any, key: str, mdef: Any) -> bool:
    """Whether method ``key`` no longer stands for ``mdef``: defined again (``@aot.jit`` or ``@aot.kernel`` ran
    again), or its module now binds the name to another function (a plain helper edited and re-executed)."""
    if table.methods.get(key) is not mdef:
        return True
    module, _, qualname = key.partition(":")
    value: Any = sys.modules.get(module)
    if value is None or "<" in qualname:
        return False
    for part in qualname.split("."):
        value = getattr(value, part, None)
        if value is None:
            return False  # no longer reachable by name: nothing newer to compare with
    current = getattr(value, "__aot_method__", None) or value
    return current is not mdef and current is not mdef.py_func


def forget_stale(inferencer: Inferencer, table: Any) -> dict:
    """Drop from ``inferencer`` every instance whose method changed, and every instance calling one
    (transitively); returns {dropped instance: the changed method's key}."""
    changed = sorted({key for (key, _), inst in inferencer.done.items() if definition_changed(table, key, inst.method)})
    stale: dict = {}
    for key in changed:
        for inst_key in inferencer.dependents(key):
            stale.setdefault(inst_key, key)
    inferencer.forget(set(stale))
    return stale


def _unique(instances: list[InferredInstance]) -> list[InferredInstance]:
    seen: dict = {}
    for inst in instances:
        seen.setdefault(inst.key, inst)
    return list(seen.values())


def ptx_compiler(rt: Any) -> PtxCompiler:
    """The process's compiler for the ``ptx`` owner (one per runtime, beside its CPU compiler)."""
    compiler = rt.__dict__.get("ptx_compiler")
    if compiler is None:
        compiler = rt.__dict__["ptx_compiler"] = PtxCompiler(
            rt.table, verify=rt.env.verify_passes, invalidation=rt.invalidation
        )
    return compiler


def compile_ptx(
    kernels: Iterable[Any], arch: str = "sm_80", *, compiler: PtxCompiler | None = None, opt: int = 3
) -> PtxProgram:
    """PTX for ``arch`` with every signature of ``kernels`` and the device functions they reach.

    ``kernels``: ``@aot.kernel`` objects (their declared signatures, and those launched so far) or
    ``(method, argtypes)`` pairs. Raises ``CompileError`` for code outside the subset and
    ``linker.LinkerError`` when libdevice is needed but missing.
    """
    from .state import runtime

    roots: list[tuple[Any, tuple[Type, ...]]] = []
    for k in kernels:
        if isinstance(k, tuple):
            roots.append((k[0], tuple(k[1])))
        else:
            roots.extend((k.__aot_method__, sig) for sig in k.signatures())
    return (compiler or ptx_compiler(runtime())).compile(roots, arch, opt)


# ------------------------------------------------------------------------------------------ CPU grid


@dataclass
class GridKernel:
    """A kernel compiled to run over a whole grid on this CPU."""

    instance: InferredInstance
    builtin: Any  # builtin(*args, grid3, block3)
    reached: tuple[tuple[str, Any], ...]  # (key, MethodDef) of the kernel and everything it calls


def reached_methods(inst: InferredInstance, lookup: Any) -> tuple[tuple[str, Any], ...]:
    """(key, MethodDef) of the instance's method and of every method its code reaches."""
    out = {inst.method.key: inst.method}
    stack, seen = [inst], {inst.key}
    while stack:
        for key in stack.pop().callees:
            if key not in seen:
                seen.add(key)
                callee = lookup(key)
                out.setdefault(key[0], callee.method)
                stack.append(callee)
    return tuple(sorted(out.items(), key=lambda kv: kv[0]))


def forget_changed(inferencer: Inferencer, table: Any, reached: tuple[tuple[str, Any], ...]) -> str | None:
    """Check only the methods a compiled kernel reached (cheap enough for every launch): drop what relied on
    the changed ones from ``inferencer``; the first changed method's key, or None."""
    changed = [key for key, mdef in reached if definition_changed(table, key, mdef)]
    for key in changed:
        inferencer.forget(inferencer.dependents(key))
    return changed[0] if changed else None


_grid_names = itertools.count(1)  # module and symbol names unique in the process's JIT


def compile_grid(rt: Any, mdef: Any, argtypes: tuple[Type, ...]) -> GridKernel:
    """The ``cpu`` instance of a kernel and its grid loop, compiled into this process."""
    compiler = rt.compiler
    inst = compiler.infer(mdef, tuple(argtypes))
    check_kernel(inst)
    n = next(_grid_names)
    module, def_symbol = build_grid_module(
        f"aot_grid_{n}",
        inst,
        compiler.lookup,
        compiler.target,
        compiler.options_for,
        suffix=f"_g{n}",
        data_prefix=DATA_PREFIX,
    )
    compiler.engine.add(module)
    return GridKernel(
        inst, builtin_from_def(compiler.engine.address(def_symbol)), reached_methods(inst, compiler.lookup)
    )
