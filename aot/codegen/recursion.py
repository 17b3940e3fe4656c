"""Recursion that ends in ``RecursionError``, never in a crash: the guard of the functions on a cycle of the
call graph.

Only functions that can reach themselves (``cycles``: the strongly connected components of the module's call
graph with a cycle; a module holds every callee it reaches, so every cycle is in it) are guarded, and only on
targets that raise Python exceptions. Every other function is compiled as before and costs nothing more. A
guarded function has two definitions:

    i32 @f(ptr out, args…)                                  the entry: its ABI, unchanged (wrappers and other
                                                            functions call it); starts a guard, calls
    i32 @f.guarded(ptr out, args…, i64 depth, ptr guard)    the body; calls on its cycle pass depth + 1

    guard = { i64 limit, i64 floor, jmp_buf }               on the entry's stack, for the whole recursion

At each guarded call the body checks, before anything else, ``depth > guard.limit`` (Python's limit,
``sys.getrecursionlimit()``: each module's CPython wrappers copy it into ``aot_recursion_limit`` while they
hold the GIL) and ``sp < guard.floor`` (the thread's stack). Either raises Python's ``RecursionError``. So the
limit that binds first wins: Python's depth, or the thread's stack. ``floor`` starts 64 KiB below the entry
(a thread entering compiled code has that much); a recursion that goes deeper asks once for the thread's real
stack (``aot_stack_floor``: ``pthread_getattr_np``; the first thread to ask keeps its answer for later entries,
since for the main thread glibc reads ``/proc/self/maps``) and may go on until 64 KiB above its end.

How the error unwinds depends on the cycle:
- **jump** (its functions hold no counted references: scalars, tuples of scalars): the entry ``_setjmp``s
  into the guard and the failing body ``_longjmp``s back to it, so no frame between has anything to release.
  The bodies then never fail as far as LLVM can see, and a call on the cycle keeps no status check: this is
  what keeps the guard's cost to a compare or two per call (``tests/bench/test_recursion_bench.py``).
- **return** (otherwise): the error returns through every frame as any other error does, releasing what each
  holds.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from llvmlite import ir

from ..world.instances import InstanceKey
from . import types as lt
from .context import ModuleContext

_JMP_BUF_WORDS = 64  # (glibc's jmp_buf: 200 bytes on x86-64, 312 on aarch64)
GUARD = ir.LiteralStructType([lt.I64, lt.I64, ir.ArrayType(lt.I64, _JMP_BUF_WORDS)])
"""``{limit, floor, jmp_buf}``: the depth at which the recursion stops, the lowest stack address it may use,
and (jump cycles) where its error lands."""
LIMIT_SYMBOL = "aot_recursion_limit"
DEFAULT_LIMIT = 1000  # (CPython's default, until a wrapper has copied the interpreter's)
_START = 64 * 1024  # bytes below the entry that need no look at the thread's stack
_MARGIN = 64 * 1024  # bytes kept above the end of the stack: the error's own path runs there
_ATTR_BYTES = 128  # room for a pthread_attr_t (56 or 64 bytes on Linux)


def cycles(edges: dict[InstanceKey, Iterable[InstanceKey]]) -> list[frozenset[InstanceKey]]:
    """The cycles of ``edges`` (caller → callees) as their instances: Tarjan's strongly connected components,
    iteratively; a component counts when it has two members or one that calls itself."""
    index: dict[InstanceKey, int] = {}
    low: dict[InstanceKey, int] = {}
    on_stack: set[InstanceKey] = set()
    stack: list[InstanceKey] = []
    found: list[frozenset[InstanceKey]] = []
    for root in edges:
        if root in index:
            continue
        work: list[tuple[InstanceKey, list[InstanceKey]]] = [(root, list(edges.get(root, ())))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, pending = work[-1]
            if pending:
                nxt = pending.pop()
                if nxt not in edges:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, list(edges.get(nxt, ()))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in edges.get(node, ()):
                    found.append(frozenset(component))
    return found


def declare_guarded(module: ir.Module, public: ir.Function) -> ir.Function:
    """``public.guarded``: the body's definition, ``public``'s parameters then ``i64 depth, ptr guard``."""
    fnty = ir.FunctionType(lt.STATUS, [*public.function_type.args, lt.I64, GUARD.as_pointer()])
    fn = ir.Function(module, fnty, public.name + ".guarded")
    fn.linkage = "internal"
    fn.args[0].add_attribute("noalias")
    return fn


def limit_global(ctx: ModuleContext) -> ir.GlobalVariable:
    """``aot_recursion_limit``: one per library (a definition in each object, merged when linked)."""
    existing = ctx.module.globals.get(LIMIT_SYMBOL)
    if existing is not None:
        return existing
    gv = ir.GlobalVariable(ctx.module, lt.I64, LIMIT_SYMBOL)
    gv.initializer = ir.Constant(lt.I64, DEFAULT_LIMIT)
    gv.linkage = "linkonce_odr"
    gv.visibility = "hidden"
    return gv


def copy_limit(ctx: ModuleContext, b: ir.IRBuilder) -> None:
    """In a CPython wrapper, holding the GIL: ``aot_recursion_limit = Py_GetRecursionLimit()``."""
    get = ctx.declare("Py_GetRecursionLimit", ir.FunctionType(lt.I32, []))
    b.store_atomic(b.sext(b.call(get, []), lt.I64), limit_global(ctx), "monotonic", 8)


def _stack_pointer(b: ir.IRBuilder) -> ir.Value:
    """An address in the current frame (a byte of it), as an integer."""
    with b.goto_entry_block():
        here = b.alloca(lt.I8, name="frame")
    return b.ptrtoint(here, lt.I64)


def _field(b: ir.IRBuilder, guard: ir.Value, k: int) -> ir.Value:
    return b.gep(guard, [ir.Constant(lt.I32, 0), ir.Constant(lt.I32, k)])


def _jump_buffer(b: ir.IRBuilder, guard: ir.Value) -> ir.Value:
    return b.bitcast(_field(b, guard, 2), lt.PTR)


def emit_entry(ctx: ModuleContext, public: ir.Function, guarded: ir.Function, jump: bool) -> None:
    """Define ``public``: a guard on its stack (with ``jump``, the place its error lands), then the body at
    depth 1."""
    b = ir.IRBuilder(public.append_basic_block("entry"))
    guard = b.alloca(GUARD, name="guard")
    b.store(b.load_atomic(limit_global(ctx), "monotonic", 8), _field(b, guard, 0))
    b.store(b.sub(_stack_pointer(b), ir.Constant(lt.I64, _START)), _field(b, guard, 1))
    if jump:
        public.attributes.add("noinline")  # (a caller holding the _setjmp would lose optimisations)
        setjmp = ctx.declare("_setjmp", ir.FunctionType(lt.I32, [lt.PTR]))
        setjmp.attributes.add("returns_twice")
        landed = b.icmp_signed("!=", b.call(setjmp, [_jump_buffer(b, guard)]), ir.Constant(lt.I32, 0))
        with b.if_then(landed, likely=False):  # (the exception is set)
            b.ret(ir.Constant(lt.STATUS, 1))
    b.ret(b.call(guarded, [*public.args, ir.Constant(lt.I64, 1), guard]))


def emit_check(em, rec: Recursion) -> None:
    """At the start of a guarded body (``em``: its emitter): ``RecursionError`` past the limit or the stack."""
    b = em.b
    _fail(em, rec, b.icmp_signed(">", rec.depth, b.load(_field(b, rec.guard, 0))), "maximum recursion depth exceeded")
    sp = _stack_pointer(b)
    with b.if_then(b.icmp_unsigned("<", sp, b.load(_field(b, rec.guard, 1))), likely=False):
        overflow = b.call(_stack_floor_function(em.ctx), [rec.guard, sp])
        _fail(em, rec, overflow, "maximum recursion depth exceeded (the thread's stack is used up)")


def _fail(em, rec: Recursion, failed: ir.Value, message: str) -> None:
    if not rec.jump:
        em.check(failed, "RecursionError", message)
        return
    b, ctx = em.b, em.ctx
    with b.if_then(failed, likely=False):
        slot = ctx.global_pointer("PyExc_RecursionError")
        b.call(ctx.raise_function(), [slot.bitcast(lt.PTR), ctx.cstring(message)])
        longjmp = ctx.declare("_longjmp", ir.FunctionType(ir.VoidType(), [lt.PTR, lt.I32]))
        longjmp.attributes.add("noreturn")
        b.call(longjmp, [_jump_buffer(b, rec.guard), ir.Constant(lt.I32, 1)])
        b.unreachable()


def guarded_call(
    b: ir.IRBuilder, callee: ir.Function, args: list[ir.Value], depth: ir.Value, guard: ir.Value
) -> ir.Value:
    return b.call(callee, [*args, b.add(depth, ir.Constant(lt.I64, 1)), guard])


def jumps(functions: Iterable) -> bool:
    """Whether a cycle of these typed functions unwinds its error by a jump: none holds counted references
    (arrays, lists, tuples of them), so no frame has anything to release."""
    from .arrays import owns_references

    return not any(owns_references(t) for fn in functions for t in fn.types.values())


def _stack_floor_function(ctx: ModuleContext) -> ir.Function:
    """``i1 aot_stack_floor(ptr guard, i64 sp)``: the guard's floor made the thread's real one (its stack's
    lowest address plus the margin) the first time a recursion passes the start; whether ``sp`` is below it.
    The first thread to look keeps its floor in ``aot_stack_owner``/``aot_stack_low`` for later entries."""
    fn, b = ctx.internal_function("aot_stack_floor", ir.FunctionType(lt.I1, [GUARD.as_pointer(), lt.I64]))
    if b is None:
        return fn
    fn.attributes.add("cold")
    fn.attributes.add("noinline")
    guard, sp = fn.args
    floor_ptr = _field(b, guard, 1)
    zero = ir.Constant(lt.I64, 0)

    def cached(name: str) -> ir.GlobalVariable:
        gv = ctx.module.globals.get(name)
        if gv is None:
            gv = ir.GlobalVariable(ctx.module, lt.I64, name)
            gv.initializer = zero
            gv.linkage = "internal"
        return gv

    owner, low, ready = cached("aot_stack_owner"), cached("aot_stack_low"), cached("aot_stack_ready")
    self_fn = ctx.declare("pthread_self", ir.FunctionType(lt.I64, []))
    me = b.call(self_fn, [])
    slot = b.alloca(lt.I64, name="low")
    known = b.and_(
        b.icmp_unsigned("!=", b.load_atomic(ready, "acquire", 8), zero),
        b.icmp_unsigned("==", b.load_atomic(owner, "monotonic", 8), me),
    )
    with b.if_else(known) as (then, otherwise):
        with then:
            b.store(b.load_atomic(low, "monotonic", 8), slot)
        with otherwise:
            attr = b.alloca(ir.ArrayType(lt.I8, _ATTR_BYTES), name="attr")
            attr_ptr = b.bitcast(attr, lt.PTR)
            where = b.alloca(lt.PTR, name="stack")
            size = b.alloca(lt.I64, name="size")
            getattr_np = ctx.declare("pthread_getattr_np", ir.FunctionType(lt.I32, [lt.I64, lt.PTR]))
            getstack = ctx.declare(
                "pthread_attr_getstack", ir.FunctionType(lt.I32, [lt.PTR, lt.PTR.as_pointer(), lt.I64.as_pointer()])
            )
            destroy = ctx.declare("pthread_attr_destroy", ir.FunctionType(lt.I32, [lt.PTR]))
            b.store(zero, slot)  # (unknown: the start stays the floor)
            ok = b.icmp_signed("==", b.call(getattr_np, [me, attr_ptr]), ir.Constant(lt.I32, 0))
            with b.if_then(ok):
                got = b.icmp_signed("==", b.call(getstack, [attr_ptr, where, size]), ir.Constant(lt.I32, 0))
                with b.if_then(got):
                    b.store(b.ptrtoint(b.load(where), lt.I64), slot)
                    claimed = b.extract_value(b.cmpxchg(owner, zero, me, "monotonic", "monotonic"), 1)
                    with b.if_then(claimed):
                        b.store_atomic(b.load(slot), low, "monotonic", 8)
                        b.store_atomic(ir.Constant(lt.I64, 1), ready, "release", 8)
                b.call(destroy, [attr_ptr])
    lowest = b.load(slot)
    floor = b.select(
        b.icmp_unsigned("==", lowest, zero), b.load(floor_ptr), b.add(lowest, ir.Constant(lt.I64, _MARGIN))
    )
    b.store(floor, floor_ptr)
    b.ret(b.icmp_unsigned("<", sp, floor))
    return fn


@dataclass(frozen=True)
class Recursion:
    """What a guarded body is lowered with: its depth and guard (its last two parameters), the guarded
    definitions of its cycle, by instance key (a call to one of them passes the depth on), and how its error
    unwinds."""

    depth: ir.Value
    guard: ir.Value
    guarded: dict[InstanceKey, ir.Function]
    jump: bool  # (its cycle's error unwinds by a jump to the entry: ``jumps``)

    @classmethod
    def of(cls, fn: ir.Function, guarded: dict[InstanceKey, ir.Function], jump: bool) -> Recursion:
        return cls(fn.args[-2], fn.args[-1], guarded, jump)
