"""Holding the GIL for a moment from any native thread: how compiled code sets Python exceptions when it
may run without the GIL (``nogil=True`` bodies, the threads of a ``prange`` loop).

    tok = aot_gil_acquire()      0: this thread holds the GIL already (nothing to undo)
    PyErr_SetString(…)           1, 2: a Python thread that had released it (PyGILState_Ensure gave 0 / 1)
    aot_gil_release(tok)         3: a thread CPython does not know (a worker): it gets a thread state, which
                                    stays (PyEval_SaveThread) so the exception set on it is kept until the
                                    worker hands it over (``aot.codegen.parallel``) and deletes the state

Both are internal to each module and cost nothing unless called (errors only).
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir

from . import types as lt

ModuleContext = Any  # (``aot.codegen.context.ModuleContext``, which calls in here: not imported)

_KEEP_NEW_STATE = 3


def acquire_function(ctx: ModuleContext) -> ir.Function:
    """``i32 aot_gil_acquire()``: hold the GIL; the token says how to give it back."""
    fn, b = ctx.internal_function("aot_gil_acquire", ir.FunctionType(lt.I32, []))
    if b is None:
        return fn
    fn.attributes.add("noinline")
    check = ctx.declare("PyGILState_Check", ir.FunctionType(lt.I32, []))
    this_state = ctx.declare("PyGILState_GetThisThreadState", ir.FunctionType(lt.PTR, []))
    ensure = ctx.declare("PyGILState_Ensure", ir.FunctionType(lt.I32, []))
    with b.if_then(b.icmp_signed("!=", b.call(check, []), ir.Constant(lt.I32, 0))):
        b.ret(ir.Constant(lt.I32, 0))
    known = b.icmp_unsigned("!=", b.call(this_state, []), ir.Constant(lt.PTR, None))
    state = b.call(ensure, [])
    b.ret(b.select(known, b.add(state, ir.Constant(lt.I32, 1)), ir.Constant(lt.I32, _KEEP_NEW_STATE)))
    return fn


def release_function(ctx: ModuleContext) -> ir.Function:
    """``void aot_gil_release(i32 token)``: undo ``aot_gil_acquire``."""
    fn, b = ctx.internal_function("aot_gil_release", ir.FunctionType(ir.VoidType(), [lt.I32]))
    if b is None:
        return fn
    fn.attributes.add("noinline")
    token = fn.args[0]
    release = ctx.declare("PyGILState_Release", ir.FunctionType(ir.VoidType(), [lt.I32]))
    save = ctx.declare("PyEval_SaveThread", ir.FunctionType(lt.PTR, []))
    with b.if_then(b.icmp_signed("==", token, ir.Constant(lt.I32, _KEEP_NEW_STATE))):
        b.call(save, [])
        b.ret_void()
    with b.if_then(b.icmp_signed("!=", token, ir.Constant(lt.I32, 0))):
        b.call(release, [b.sub(token, ir.Constant(lt.I32, 1))])
    b.ret_void()
    return fn
