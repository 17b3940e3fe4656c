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
wider type, ``%x = copy %x$arg``). A call may stand for the constants of the defaults it fills in, then the
call; an op that reads an optional variable a None test narrowed reads it through a ``convert`` first, and
one that reads it untested where Python would raise ``TypeError`` on None, or answer without it (``==``,
truth), first tests it (a branch to a ``raise`` or to the constant answer).

The context is the solver's ``FixedPoint``; without one (IR that is typed already) there is nothing to do.
"""

from __future__ import annotations

from ..infer import FixedPoint
from ..infer.optional import checked_blocks, unwrap_uses
from ..ir import Block, Branch, Copy, Function, Jump, Op, Raise, Var
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
        label = block.label  # (the block the ops go to: the None tests of ``checks`` split it)
        if block is fn.entry:
            ops.extend(Copy(Var(p), Var(arg), fn.span) for p, arg in renamed.items())
        last = context.cut.get(block.label)
        for index, op in enumerate(block.ops):
            if last is not None and index > last:  # (after a call that never returns)
                ops.append(Raise("SystemError", "a call that never returns returned", op.span))
                break
            meant: tuple[Op, ...] = (op,)
            if isinstance(op, Branch) and block.label in context.taken:
                meant = (Jump(context.taken[block.label], op.span),)
            elif (block.label, index) in context.meanings:  # (name-based ops, and what inference folded)
                meaning = context.meanings[(block.label, index)]
                if meaning is None:
                    continue  # a compile-time value: nothing happens at run time
                meant = meaning if isinstance(meaning, tuple) else (meaning,)  # (a call after its defaults)
            unwraps = context.unwraps.get((block.label, index))
            checks = context.checks.get((block.label, index))
            join = None
            if checks is not None:  # (None used untested: test, then what Python does, or the op on the values)
                closing, outcomes, label_after, join = checked_blocks(checks, block.label, index, op, types)
                blocks.append(Block(label, [*ops, *closing]))
                blocks.extend(outcomes)
                label, ops = label_after, []
            for one in meant:  # (optionals the op reads as narrowed by None tests: read out first)
                dest = one.dest_var
                if dest is not None and (
                    (dest.name in fn.types and not fn.types[dest.name].is_runtime)
                    or (isinstance(one, Copy) and dest.name not in types)
                ):
                    continue  # a compile-time value held in a variable (a string, a module, ``dt = a.dtype``)
                ops.extend(unwrap_uses(one, unwraps, block.label, index, types) if unwraps else (one,))
            if join is not None:  # (where the op's result and the constant None gave meet)
                blocks.append(Block(label, [*ops, Jump(join, op.span)]))
                label, ops = join, []
        blocks.append(Block(label, ops))
    ret = fn.return_type if fn.return_type is not None and fn.return_type is not BOTTOM else NONE
    return Function(fn.name, tuple(params), blocks, fn.file, fn.span, types, ret)
