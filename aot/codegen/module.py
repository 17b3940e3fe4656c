"""Assemble LLVM modules from inferred instances, and optimise them.

    module = build_module([root], lookup, target, exported={root.key: "aot_demo__f_…"})
    build_module(…, wrappers=False)  → the code alone: the roots and their callees, no CPython wrappers
    build_module(…, code=False)      → the wrappers alone, calling the roots of another object

A module holds its roots (exported, with their CPython wrappers) and every callee they reach (internal,
so LLVM inlines them), which makes each module self-contained: it links against nothing but the C API
and libm. ``optimize`` runs LLVM's standard O-level pipeline, so loops vectorise where they can.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from llvmlite import ir

from ..analysis.interrupts import poll_edges
from ..infer import InferredInstance
from ..infer.elementwise import selects
from ..infer.views import aliases, holds_array
from ..intrinsics.registry import WRITES_FIRST
from ..ir import Call, GetItem, GetView, Intrinsic, IntrinsicCall, SetItem
from ..targets import Target
from ..types import Type, format_signature
from ..world.instances import InstanceKey
from . import recursion
from .context import ModuleContext
from .cpython import emit_fastcall_wrapper, emit_try_wrapper, emit_vectorcall_entry
from .function import CodegenOptions, FunctionCodegen, declare_function
from .types import symbol_name


@dataclass(frozen=True)
class Export:
    """What a module exports for one root: the implementation, its try-wrapper and its PyMethodDef."""

    key: InstanceKey
    symbol: str

    @property
    def try_symbol(self) -> str:
        return f"try_{self.symbol}"

    @property
    def def_symbol(self) -> str:
        return f"def_{self.symbol}"

    @property
    def vectorcall_symbol(self) -> str:
        return f"vc_{self.symbol}"


"""Intrinsics that store into their first operand: ``atomic_add``, ``a.sort()``, ``a.fill(v)``, ``a += b`` …"""


def written_params(
    inst: InferredInstance, lookup: Callable[[InstanceKey], InferredInstance], _seen: frozenset = frozenset()
) -> frozenset[int]:
    """Indices of array parameters (and of tuples holding arrays) the instance or a callee may store into: they
    need writable buffers."""
    fn = inst.function
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    holders = {n for n, t in fn.types.items() if holds_array(t)}  # arrays, and tuples holding arrays
    written: set[str] = set()
    selected: dict[str, str] = {}  # a[idx], a[:, idx]: a new array, written through only as a[:, idx] = v
    for _, op in fn.ops():
        dest = op.dest_var
        if dest is not None and selects(op, fn.types):
            assert isinstance(op, (GetItem, GetView))
            selected[dest.name] = op.obj.name
            continue
        for src in aliases(op):  # copies, views and tuples write through to what they were made of
            if dest is not None and dest.name in holders and src.name in holders and find(dest.name) != find(src.name):
                parent[find(dest.name)] = find(src.name)
    for _, op in fn.ops():
        if isinstance(op, SetItem):
            written.add(selected.get(op.obj.name, op.obj.name) if not op.index else op.obj.name)
        elif isinstance(op, IntrinsicCall) and op.fn in WRITES_FIRST:
            written.add(op.args[0].name)
        elif isinstance(op, Call):
            key = (op.callee, tuple(fn.types[a.name] for a in op.args))
            if key in _seen or key == inst.key:
                continue
            callee_writes = written_params(lookup(key), lookup, _seen | {inst.key})
            written.update(op.args[i].name for i in callee_writes)
    roots = {find(n) for n in written}
    return frozenset(i for i, p in enumerate(fn.params) if p in holders and find(p) in roots)


def reachable(
    roots: list[InferredInstance], lookup: Callable[[InstanceKey], InferredInstance]
) -> list[InferredInstance]:
    seen: dict[InstanceKey, InferredInstance] = {}
    stack = list(roots)
    while stack:
        inst = stack.pop()
        if inst.key in seen:
            continue
        seen[inst.key] = inst
        stack.extend(lookup(k) for k in inst.callees)
    return list(seen.values())


def build_module(
    name: str,
    roots: list[InferredInstance],
    lookup: Callable[[InstanceKey], InferredInstance],
    target: Target,
    options: Callable[[str], CodegenOptions],
    suffix: str = "",
    wrappers: bool = True,
    data_prefix: str = "",
    code: bool = True,
    private: bool = False,
) -> tuple[ir.Module, list[Export]]:
    """A module of ``roots``: with ``code``, their implementations and every callee they reach (callees
    internal); with ``wrappers``, their CPython wrappers. The two apart (CPU variants: one object of wrappers
    for every variant's code) make two objects that link together: the wrappers then call the roots.
    With ``private`` (and both), the roots' implementations are internal too, as nothing outside the module
    calls them: LLVM keeps no copy of one it inlined into every caller (its wrappers), so the object holds
    each method's code once less."""
    module = ir.Module(name=name)
    ctx = ModuleContext(module, target, data_prefix)
    instances = reachable(roots, lookup) if code else list(roots)
    root_keys = {r.key for r in roots}
    symbols = {inst.key: symbol_name(inst.method.key, inst.argtypes, target.owner) + suffix for inst in instances}
    functions = {}
    for inst in instances:
        llfn = declare_function(module, symbols[inst.key], inst.function)
        if inst.key not in root_keys or (private and code and wrappers):
            llfn.linkage = "internal"
        functions[inst.key] = llfn

    def callee(key: str, argtypes: tuple[Type, ...]) -> ir.Function:
        return functions[(key, argtypes)]

    # Functions on a cycle of calls get a guard (RecursionError, not a crash) where CPython is there to ask.
    by_key = {i.key: i for i in reachable(roots, lookup)}
    loops = recursion.cycles({k: i.callees for k, i in by_key.items()}) if target.has_host_runtime else []
    recursive: dict[InstanceKey, recursion.Recursion] = {}
    polls = target.has_host_runtime and any(poll_edges(i.function) for i in by_key.values())
    for loop in loops if code else ():
        guarded = {key: recursion.declare_guarded(module, functions[key]) for key in loop}
        jump = recursion.jumps(by_key[key].function for key in loop)
        recursive.update({key: recursion.Recursion.of(body, guarded, jump) for key, body in guarded.items()})
    for inst in instances if code else ():
        rec = recursive.get(inst.key)
        body = functions[inst.key] if rec is None else rec.guarded[inst.key]
        FunctionCodegen(ctx, inst.function, body, callee, options(inst.method.key), rec).lower()
        if rec is not None:
            recursion.emit_entry(ctx, functions[inst.key], body, rec.jump)
    exports = []
    for root in roots:
        export = Export(root.key, symbols[root.key])
        if wrappers:
            writes = written_params(root, lookup)
            nogil = any(isinstance(op, IntrinsicCall) and op.fn is Intrinsic.NOGIL for _, op in root.function.ops())
            try_fn = emit_try_wrapper(
                ctx,
                export.try_symbol,
                functions[root.key],
                root.argtypes,
                root.return_type,
                writes,
                nogil,
                copy_recursion_limit=bool(loops),
                install_signal_handler=polls,
            )
            emit_fastcall_wrapper(ctx, export.symbol, try_fn, format_signature(root.return_type, root.argtypes))
            emit_vectorcall_entry(ctx, export.vectorcall_symbol, try_fn)
        exports.append(export)
    hoist_allocas(module)
    return module, exports


def hoist_allocas(module: ir.Module) -> None:
    """Move every fixed-size ``alloca`` into its function's entry block. An ``alloca`` elsewhere takes new stack
    each time it runs: in a loop (a call's result slot, a tuple indexed at run time, a count kept by a helper)
    it grows the stack until the process dies. In the entry block it is one slot of the frame, which LLVM
    also promotes to registers. Emitters may place their slots anywhere; this is the one place that fixes it."""
    for fn in module.functions:
        if not fn.blocks:
            continue
        entry = fn.blocks[0]
        moved: list[ir.Instruction] = []
        for block in fn.blocks[1:]:
            kept = []
            for instr in block.instructions:
                if isinstance(instr, ir.AllocaInstr) and not instr.operands:
                    instr.parent = entry
                    moved.append(instr)
                else:
                    kept.append(instr)
            block.instructions[:] = kept
        entry.instructions[:0] = moved


def optimize(llmod, target_machine, level: int = 3) -> None:
    """LLVM's default pipeline at ``level`` (O3: inlining, loop vectorisation, SLP)."""
    import llvmlite.binding as llvm

    pto = llvm.create_pipeline_tuning_options(speed_level=level)
    pto.loop_vectorization = level >= 2
    pto.slp_vectorization = level >= 2
    pb = llvm.create_pass_builder(target_machine, pto)
    pb.getModulePassManager().run(llmod, pb)
