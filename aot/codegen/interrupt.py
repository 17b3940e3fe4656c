"""Ctrl-C in compiled loops: a signal handler that raises a flag, and polls of it at loops' back edges.

    signal ─▶ aot_on_signal: aot_interrupt += 1, then the handler it replaced (Python's): Python's own flag
    loop back edge (``aot.analysis.interrupts``):  if (aot_interrupt != seen) { seen = aot_interrupt;
                                                       if (aot_interrupted(in_chunk)) → error }
    aot_interrupted, on the main thread: aot_interrupt = 0; PyErr_CheckSignals() (GIL held for the moment)

Python runs a signal's handler only between bytecodes of its main thread, so a long compiled loop held Ctrl-C
until it ended. Now the loop looks at a flag once per iteration of every loop but innermost counted ones (which
run to their end and are polled by the loop around them). On the main thread, ``PyErr_CheckSignals`` runs the
Python handlers: Python's default raises ``KeyboardInterrupt``, and the function unwinds as from any error,
releasing what it holds; a handler that does not raise lets the loop go on. Other threads leave the flag to
the main thread, but for the chunks of a ``prange`` loop whose chunk on the main thread raised: they stop at
their next poll (``aot_interrupt_abort``), and the loop raises that chunk's exception.

The handler is installed by a module's CPython wrappers on their first call (holding the GIL) for every signal
whose handler is then Python's (the one SIGINT has), in front of it: each signal still reaches Python's
handler, and with it the user's. A handler Python installs later (``signal.signal`` after that first call)
replaces this one for its signal, and loops no longer see that signal (they run to their end, as before).

Every symbol here is ``linkonce_odr`` and hidden: the objects of one library (CPU variants: code and wrappers
apart) share one flag and one handler; each library, and each module the JIT adds, installs its own in front
of the last, and the handlers chain by tail calls.
"""

from __future__ import annotations

from llvmlite import ir

from . import gil, loops, recursion
from . import types as lt
from .context import ModuleContext

FLAG = "aot_interrupt"
ABORT = "aot_interrupt_abort"
_NSIG = 65
_SA_SIGINFO = 4  # (Linux: x86-64, aarch64)
_SIGINT = 2
# glibc's struct sigaction (x86-64, aarch64): handler, 128-byte mask, int flags, restorer: 152 bytes
_SIGACTION = ir.LiteralStructType([lt.PTR, ir.ArrayType(lt.I64, 16), lt.I32, lt.I32, lt.PTR])
_HANDLER = ir.FunctionType(ir.VoidType(), [lt.I32, lt.PTR, lt.PTR])


def _shared(ctx: ModuleContext, name: str, t: ir.Type) -> ir.GlobalVariable:
    gv = ctx.module.globals.get(name)
    if gv is None:
        gv = ir.GlobalVariable(ctx.module, t, name)
        gv.initializer = ir.Constant(t, None)
        gv.linkage = "linkonce_odr"
        gv.visibility = "hidden"
    return gv


def _shared_function(ctx: ModuleContext, name: str, fnty: ir.FunctionType) -> tuple[ir.Function, ir.IRBuilder | None]:
    fn = ctx.module.globals.get(name)
    if fn is not None:
        return fn, None
    fn = ir.Function(ctx.module, fnty, name)
    fn.linkage = "linkonce_odr"
    fn.visibility = "hidden"
    return fn, ir.IRBuilder(fn.append_basic_block("entry"))


def poll(em, in_chunk: bool) -> None:
    """At a back edge (``em``: the function's emitter): look at the flag; when it moved since this call of the
    function last looked, ask ``aot_interrupted`` and unwind if it says the function must stop. (The flag
    counts signals; a thread other than the main one leaves it to the main thread, and looks again only at the
    next signal.)"""
    b, ctx = em.b, em.ctx
    with b.goto_entry_block():
        seen = b.alloca(lt.I32, name="signals.seen")
        b.store(ir.Constant(lt.I32, 0), seen)
    count = b.load_atomic(_shared(ctx, FLAG, lt.I32), "monotonic", 4)
    moved = b.icmp_unsigned("!=", count, b.load(seen))
    if in_chunk:
        aborted = b.load_atomic(_shared(ctx, ABORT, lt.I32), "monotonic", 4)
        moved = b.or_(moved, b.icmp_unsigned("!=", aborted, ir.Constant(lt.I32, 0)))
    with b.if_then(moved, likely=False):
        b.store(count, seen)
        stop = b.call(_interrupted_function(ctx), [ir.Constant(lt.I1, in_chunk)])
        with b.if_then(stop, likely=False):
            em.error_return()


def _interrupted_function(ctx: ModuleContext) -> ir.Function:
    """``i1 aot_interrupted(i1 in_chunk)``: whether the loop must stop (with the exception set, or, in a
    chunk of a ``prange`` loop, because another chunk raised)."""
    fn, b = _shared_function(ctx, "aot_interrupted", ir.FunctionType(lt.I1, [lt.I1]))
    if b is None:
        return fn
    fn.attributes.add("cold")
    fn.attributes.add("noinline")
    (in_chunk,) = fn.args
    zero = ir.Constant(lt.I32, 0)
    flag, abort = _shared(ctx, FLAG, lt.I32), _shared(ctx, ABORT, lt.I32)
    aborted = b.icmp_unsigned("!=", b.load_atomic(abort, "monotonic", 4), zero)
    with b.if_then(b.and_(in_chunk, aborted)):
        b.ret(ir.Constant(lt.I1, 1))
    on_main, _, _ = recursion.main_stack(ctx, b, recursion.stack_pointer(b))
    with b.if_then(b.not_(on_main)):  # (only the main thread runs Python's handlers: the flag stays for it)
        b.ret(ir.Constant(lt.I1, 0))
    b.store_atomic(zero, flag, "monotonic", 4)
    token = b.call(gil.acquire_function(ctx), [])
    check = ctx.declare("PyErr_CheckSignals", ir.FunctionType(lt.I32, []))
    failed = b.icmp_signed("!=", b.call(check, []), zero)
    b.call(gil.release_function(ctx), [token])
    with b.if_then(b.and_(failed, in_chunk)):
        b.store_atomic(ir.Constant(lt.I32, 1), abort, "monotonic", 4)
    b.ret(failed)
    return fn


def clear_abort(ctx: ModuleContext, b: ir.IRBuilder) -> None:
    """After a ``prange`` loop's join: its chunks have stopped; the next loop starts afresh."""
    b.store_atomic(ir.Constant(lt.I32, 0), _shared(ctx, ABORT, lt.I32), "monotonic", 4)


def _handler_function(ctx: ModuleContext) -> ir.Function:
    """``void aot_on_signal(i32 sig, ptr info, ptr context)``: count the signal in the flag, then call the
    handler this one replaced (its three arguments: a one-argument handler ignores the other two) as a tail
    call."""
    fn, b = _shared_function(ctx, "aot_on_signal", _HANDLER)
    if b is None:
        return fn
    sig, info, context = fn.args
    b.atomic_rmw("add", _shared(ctx, FLAG, lt.I32), ir.Constant(lt.I32, 1), "monotonic")
    previous = _shared(ctx, "aot_signal_previous", ir.ArrayType(lt.PTR, _NSIG))
    before = b.load(b.gep(previous, [ir.Constant(lt.I64, 0), b.zext(sig, lt.I64)]))  # (set for each sig here)
    real = b.icmp_unsigned(">", b.ptrtoint(before, lt.I64), ir.Constant(lt.I64, 1))  # (not SIG_DFL, SIG_IGN)
    with b.if_then(real):
        b.call(b.bitcast(before, _HANDLER.as_pointer()), [sig, info, context], tail=True)
        b.ret_void()
    b.ret_void()
    return fn


def install_once(ctx: ModuleContext, b: ir.IRBuilder) -> None:
    """In a CPython wrapper, holding the GIL: install the handler the first time."""
    installed = _shared(ctx, "aot_signals_installed", lt.I32)
    with b.if_then(b.icmp_unsigned("==", b.load(installed), ir.Constant(lt.I32, 0)), likely=False):
        b.store(ir.Constant(lt.I32, 1), installed)
        b.call(_install_function(ctx), [])


def _install_function(ctx: ModuleContext) -> ir.Function:
    """``void aot_install_signals()``: for each signal whose handler is SIGINT's (Python's), put
    ``aot_on_signal`` in front of it, keeping its mask and flags."""
    fn, b = _shared_function(ctx, "aot_install_signals", ir.FunctionType(ir.VoidType(), []))
    if b is None:
        return fn
    fn.attributes.add("cold")
    fn.attributes.add("noinline")
    i32 = lambda v: ir.Constant(lt.I32, v)  # noqa: E731
    sigaction = ctx.declare("sigaction", ir.FunctionType(lt.I32, [lt.I32, lt.PTR, lt.PTR]))
    current = b.alloca(_SIGACTION, name="current")
    mine = b.alloca(_SIGACTION, name="mine")
    null = ir.Constant(lt.PTR, None)
    b.call(sigaction, [i32(_SIGINT), null, b.bitcast(current, lt.PTR)])
    python = b.load(b.gep(current, [i32(0), i32(0)]))
    with b.if_then(b.icmp_unsigned("<=", b.ptrtoint(python, lt.I64), ir.Constant(lt.I64, 1))):
        b.ret_void()  # (SIGINT is not Python's: an embedding without signal handlers)
    previous = _shared(ctx, "aot_signal_previous", ir.ArrayType(lt.PTR, _NSIG))
    handler = b.bitcast(_handler_function(ctx), lt.PTR)
    slot = b.alloca(lt.I32, name="sig")

    def take_over(sig: ir.Value) -> None:
        got = b.icmp_signed("==", b.call(sigaction, [sig, null, b.bitcast(current, lt.PTR)]), i32(0))
        ours = b.icmp_unsigned("==", b.load(b.gep(current, [i32(0), i32(0)])), python)
        with b.if_then(b.and_(got, ours)):
            b.store(python, b.gep(previous, [ir.Constant(lt.I64, 0), b.zext(sig, lt.I64)]))
            b.store(b.load(current), mine)
            b.store(handler, b.gep(mine, [i32(0), i32(0)]))
            flags = b.gep(mine, [i32(0), i32(2)])
            b.store(b.or_(b.load(flags), i32(_SA_SIGINFO)), flags)
            b.call(sigaction, [sig, b.bitcast(mine, lt.PTR), null])

    loops.counted_loop(b, i32(1), i32(_NSIG), take_over, "sig", counter=slot)  # signals 1 … _NSIG-1
    b.ret_void()
    return fn
