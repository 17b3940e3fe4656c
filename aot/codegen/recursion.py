"""Recursion that ends in ``RecursionError``, never in a crash: the guard of the functions on a cycle of the
call graph.

Only functions that can reach themselves (``cycles``: the strongly connected components of the module's call
graph with a cycle; a module holds every callee it reaches, so every cycle is in it) are guarded, and only on
targets that raise Python exceptions. Every other function is compiled as before and costs nothing more. A
guarded function has two definitions:

    i32 @f(ptr out, args…)                                  the entry: its ABI, unchanged (wrappers and other
                                                            functions call it); starts a guard, calls
    i32 @f.guarded(ptr out, args…, i64 depth, ptr guard)    the body; calls on its cycle pass depth + 1

    guard = { i64 limit, i64 floor, i64 entry, jmp_buf }    on the entry's stack, for the whole recursion

At each guarded call the body checks, before anything else, ``depth > guard.limit`` (Python's limit,
``sys.getrecursionlimit()``: each module's CPython wrappers copy it into ``aot_recursion_limit`` while they
hold the GIL) and ``sp < guard.floor`` (the thread's stack). Either raises Python's ``RecursionError``. So the
limit that binds first wins: Python's depth, or the thread's stack. ``floor`` starts 64 KiB below the entry
(a thread entering compiled code has that much); a recursion that goes deeper works out once where the
thread's stack ends (``aot_stack_floor``) and may go on until 64 KiB above that.

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
GUARD = ir.LiteralStructType([lt.I64, lt.I64, lt.I64, ir.ArrayType(lt.I64, _JMP_BUF_WORDS)])
"""``{limit, floor, entry, jmp_buf}``: the depth at which the recursion stops, the lowest stack address it
may use, the entry's stack pointer, and (jump cycles) where its error lands."""
LIMIT_SYMBOL = "aot_recursion_limit"
DEFAULT_LIMIT = 1000  # (CPython's default, until a wrapper has copied the interpreter's)
_START = 64 * 1024  # bytes below the entry that need no look at the thread's stack
_MARGIN = 64 * 1024  # bytes kept above the end of the stack: the error's own path runs there
_RLIMIT_STACK = 3  # (Linux, every architecture)
_BIGGEST = 1 << 32  # a stack limit above this (RLIM_INFINITY among them) is not taken as the stack's size
_UNLIMITED = 8 << 20  # the stack size taken when the limit is not one: 8 MiB
_ATTR_WORDS = 16  # room for a pthread_attr_t (56 or 64 bytes on Linux)
_USED = 256 * 1024  # stack a thread is taken to have used before it entered compiled code


def cycles(edges: dict[InstanceKey, Iterable[InstanceKey]]) -> list[tuple[InstanceKey, ...]]:
    """The cycles of ``edges`` (caller → callees) as their instances, in the order of ``edges`` (so that a
    build's output does not depend on hashing): Tarjan's strongly connected components, iteratively; a
    component counts when it has two members or one that calls itself."""
    index: dict[InstanceKey, int] = {}
    low: dict[InstanceKey, int] = {}
    on_stack: set[InstanceKey] = set()
    stack: list[InstanceKey] = []
    found: list[tuple[InstanceKey, ...]] = []
    order = {key: n for n, key in enumerate(edges)}
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
                    found.append(tuple(sorted(component, key=order.__getitem__)))
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


def stack_pointer(b: ir.IRBuilder) -> ir.Value:
    """An address in the current frame (a byte of it: its slot is hoisted into the frame), as an integer."""
    return b.ptrtoint(b.alloca(lt.I8, name="frame"), lt.I64)


def _field(b: ir.IRBuilder, guard: ir.Value, k: int) -> ir.Value:
    return b.gep(guard, [ir.Constant(lt.I32, 0), ir.Constant(lt.I32, k)])


def _jump_buffer(b: ir.IRBuilder, guard: ir.Value) -> ir.Value:
    return b.bitcast(_field(b, guard, 3), lt.PTR)


def emit_entry(ctx: ModuleContext, public: ir.Function, guarded: ir.Function, jump: bool) -> None:
    """Define ``public``: a guard on its stack (with ``jump``, the place its error lands), then the body at
    depth 1."""
    b = ir.IRBuilder(public.append_basic_block("entry"))
    guard = b.alloca(GUARD, name="guard")
    b.store(b.load_atomic(limit_global(ctx), "monotonic", 8), _field(b, guard, 0))
    sp = stack_pointer(b)
    b.store(b.sub(sp, ir.Constant(lt.I64, _START)), _field(b, guard, 1))
    b.store(sp, _field(b, guard, 2))
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
    sp = stack_pointer(b)
    with b.if_then(b.icmp_unsigned("<", sp, b.load(_field(b, rec.guard, 1))), likely=False):
        overflow = b.call(_stack_floor_function(em.ctx), [rec.guard, sp])
        _fail(em, rec, overflow, "maximum recursion depth exceeded (the thread's stack is used up)")


def _fail(em, rec: Recursion, failed: ir.Value, message: str) -> None:
    if not rec.jump:
        em.check(failed, "RecursionError", message)
        return
    b, ctx = em.b, em.ctx
    with b.if_then(failed, likely=False):
        ctx.set_exception(b, "RecursionError", message)
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


def main_stack(ctx: ModuleContext, b: ir.IRBuilder, sp: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(whether ``sp`` is on the main thread's stack, that stack's top, its size): the top is glibc's
    ``__libc_stack_end``, the size ``getrlimit(RLIMIT_STACK)`` (8 MiB when unlimited). A system call: for
    cold paths only."""
    i64 = lambda v: ir.Constant(lt.I64, v)  # noqa: E731
    limits = b.alloca(ir.ArrayType(lt.I64, 2), name="rlimit")
    getrlimit = ctx.declare("getrlimit", ir.FunctionType(lt.I32, [lt.I32, lt.PTR]))
    rc = b.call(getrlimit, [ir.Constant(lt.I32, _RLIMIT_STACK), b.bitcast(limits, lt.PTR)])
    size = b.load(b.gep(limits, [i64(0), i64(0)]))
    known = b.and_(b.icmp_signed("==", rc, ir.Constant(lt.I32, 0)), b.icmp_unsigned("<=", size, i64(_BIGGEST)))
    size = b.select(known, size, i64(_UNLIMITED))  # (RLIM_INFINITY, or too large to trust)
    end = ctx.global_pointer("__libc_stack_end")
    end.linkage = "extern_weak"  # (glibc's: elsewhere NULL, and no thread is taken for the main one)
    with b.goto_entry_block():
        top_slot = b.alloca(lt.I64, name="top")
    b.store(i64(0), top_slot)
    with b.if_then(b.icmp_unsigned("!=", b.ptrtoint(end, lt.I64), i64(0))):
        b.store(b.ptrtoint(b.load(end), lt.I64), top_slot)
    top = b.load(top_slot)
    on_main = b.and_(b.icmp_unsigned("<=", sp, top), b.icmp_unsigned(">", sp, b.sub(top, size)))
    return on_main, top, size


def _stack_floor_function(ctx: ModuleContext) -> ir.Function:
    """``i1 aot_stack_floor(ptr guard, i64 sp)``: the guard's floor made the thread's own the first time a
    recursion passes the start (the lowest address of the thread's stack plus the margin); whether ``sp`` is
    below it.

    The main thread's stack ends ``getrlimit(RLIMIT_STACK)`` below ``__libc_stack_end`` (its top): a system
    call, where glibc's ``pthread_getattr_np`` would read ``/proc/self/maps`` each time. Another thread's
    stack is what ``pthread_getattr_np`` says (bound to glibc's first version of it when built into an image:
    ``aot.builder.objects``, so a library keeps its manylinux tag); should it fail, the thread is taken to have
    the main thread's size, 256 KiB of it used before the entry."""
    fn, b = ctx.internal_function("aot_stack_floor", ir.FunctionType(lt.I1, [GUARD.as_pointer(), lt.I64]))
    if b is None:
        return fn
    fn.attributes.add("cold")
    fn.attributes.add("noinline")
    guard, sp = fn.args
    i64 = lambda v: ir.Constant(lt.I64, v)  # noqa: E731
    zero32 = ir.Constant(lt.I32, 0)
    on_main, top, size = main_stack(ctx, b, sp)
    low = b.alloca(lt.I64, name="low")
    with b.if_else(on_main) as (main, other):
        with main:
            b.store(b.sub(top, size), low)
        with other:
            entry = b.load(_field(b, guard, 2))
            b.store(b.add(b.sub(entry, size), i64(_USED)), low)  # (unless the thread says better)
            attr = b.bitcast(b.alloca(ir.ArrayType(lt.I64, _ATTR_WORDS), name="attr"), lt.PTR)
            where = b.alloca(lt.PTR, name="stack")
            length = b.alloca(lt.I64, name="size")
            getattr_np = ctx.declare("pthread_getattr_np", ir.FunctionType(lt.I32, [lt.I64, lt.PTR]))
            getstack = ctx.declare(
                "pthread_attr_getstack", ir.FunctionType(lt.I32, [lt.PTR, lt.PTR.as_pointer(), lt.I64.as_pointer()])
            )
            destroy = ctx.declare("pthread_attr_destroy", ir.FunctionType(lt.I32, [lt.PTR]))
            me = b.call(ctx.declare("pthread_self", ir.FunctionType(lt.I64, [])), [])
            with b.if_then(b.icmp_signed("==", b.call(getattr_np, [me, attr]), zero32)):
                with b.if_then(b.icmp_signed("==", b.call(getstack, [attr, where, length]), zero32)):
                    b.store(b.ptrtoint(b.load(where), lt.I64), low)
                b.call(destroy, [attr])
    floor = b.add(b.load(low), i64(_MARGIN))
    b.store(floor, _field(b, guard, 1))
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
