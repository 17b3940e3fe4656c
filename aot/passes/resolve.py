"""Resolve names: the solver's fixed point of an untyped function → typed IR holding runtime ops only.

    bb0:                                                  bb0:
      %0: pyobj<math> = loadglobal "math"                   %2: f64 = intrinsic math.sqrt, [%x]
      %1: pyobj<sqrt> = getattr %0, "sqrt"      →           ret %2
      %2: f64 = callvalue %1, [%x]
      ret %2

Inference decides what every name-based op (``loadglobal``, ``getattr``, ``callvalue``) means — it has to,
to type the code — and records it in its ``FixedPoint``: the runtime op each one stands for (a ``const``,
``call``, ``intrinsic``, ``convert`` or ``truth``), or nothing for a compile-time value such as a module.
This pass carries that out: it replaces those ops, drops the blocks inference never reached, turns a branch
on a constant condition into a jump, keeps only the types of runtime values, and gives each parameter
exactly its argument type (a parameter the body widens, say int to float, is copied into a variable of the
wider type, ``%x = copy %x$arg``).

The context is the solver's ``FixedPoint``; without one (IR that is typed already) there is nothing to do.
"""

from __future__ import annotations

from ..infer import FixedPoint
from ..ir import Block, Branch, Copy, Function, Jump, Op, Var
from ..ir.ops import UNTYPED_ONLY
from ..types import BOTTOM, NONE


def run(fn: Function, context: FixedPoint | None = None) -> Function:
    if not isinstance(context, FixedPoint):
        return fn
    types = {name: t for name, t in fn.types.items() if t.is_runtime}
    renamed: dict[str, str] = {}
    params = []
    for p, argtype in zip(fn.params, context.argtypes):
        if types.get(p) != argtype:
            renamed[p] = f"{p}$arg"
            types[renamed[p]] = argtype
        params.append(renamed.get(p, p))
    blocks: list[Block] = []
    for block in fn.blocks:
        if block.label not in context.reached:
            continue
        ops: list[Op] = []
        if block is fn.entry:
            ops.extend(Copy(Var(p), Var(arg), fn.span) for p, arg in renamed.items())
        for index, op in enumerate(block.ops):
            if isinstance(op, Branch) and block.label in context.taken:
                op = Jump(context.taken[block.label], op.span)
            elif isinstance(op, UNTYPED_ONLY) and (block.label, index) in context.meanings:
                op = context.meanings[(block.label, index)]  # type: ignore[assignment]
                if op is None:
                    continue  # a compile-time value: nothing happens at run time
            elif isinstance(op, Copy) and op.dest.name not in types:
                continue  # a compile-time value copied (``dt = a.dtype``, ``f = math.sqrt``): nothing to run
            ops.append(op)
        blocks.append(Block(block.label, ops))
    ret = fn.return_type if fn.return_type is not None and fn.return_type is not BOTTOM else NONE
    return Function(fn.name, tuple(params), blocks, fn.file, fn.span, types, ret)
