"""The counted loop of codegen: ``for i in range(start, stop): body(i)`` emitted with an ``IRBuilder``.

    counted_loop(b, zero, n, lambda i: store(i), "fill")                   # the counter is a phi
    counted_loop(b, zero, n, lambda i: store(i), "loop", counter=slot)     # the counter is kept in ``slot``

Every helper that walks ``range(start, stop)`` one by one (filling a new array, a reduction, a copy, the
binder's walks over parameters, the parallel driver's walks over chunks) emits it here. Loops of another
shape keep their own code: nested walks over every axis of a shape (``views.nd_loop``), loops that leave
early or are entered conditionally, ``while`` loops, the GPU's grid loops.

The loop makes no ``alloca`` (one inside a loop takes new stack at each iteration): its counter is a phi of
the loop's head block, or a slot the caller made in the function's entry block (``walks.entry_alloca``,
``IRBuilder.goto_entry_block``; ``module.hoist_allocas`` moves any fixed-size ``alloca`` there as well).
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir


def counted_loop(
    b: ir.IRBuilder,
    start: ir.Value,
    stop: ir.Value,
    body: Callable[[ir.Value], None],
    name: str = "loop",
    *,
    counter: ir.Value | None = None,
) -> None:
    """``for i in range(start, stop): body(i)``, ``i`` of ``start``'s integer type (signed ``<``, step 1).

    The loop's blocks, appended to ``b``'s function, are ``name.head`` (the test), ``name.body`` and
    ``name.done``; ``b`` is left at the end of ``name.done``. ``body`` is called once, positioned in
    ``name.body``, with the counter's value; it may add blocks of its own (the step to the next value is
    emitted where it leaves ``b``), but must leave ``b`` in an unterminated block.

    ``counter``: None keeps the counter in a phi of the head block. A pointer to a slot of ``start``'s type
    (made by the caller in the entry block, never inside a loop) keeps it in memory instead: ``start`` is
    stored there before the loop, the head loads it, and ``i + 1`` is stored back after the body. A slot may
    serve several loops one after the other."""
    pre = b.block
    if counter is not None:
        b.store(start, counter)
    head = b.append_basic_block(f"{name}.head")
    inside = b.append_basic_block(f"{name}.body")
    done = b.append_basic_block(f"{name}.done")
    b.branch(head)
    b.position_at_end(head)
    phi = b.phi(start.type) if counter is None else None
    if phi is not None:
        phi.add_incoming(start, pre)
    i = phi if phi is not None else b.load(counter)
    b.cbranch(b.icmp_signed("<", i, stop), inside, done)
    b.position_at_end(inside)
    body(i)
    following = b.add(i, ir.Constant(start.type, 1))
    if phi is not None:
        phi.add_incoming(following, b.block)
    else:
        b.store(following, counter)
    b.branch(head)
    b.position_at_end(done)


def while_loop(
    b: ir.IRBuilder, fn: ir.Function, test: Callable[[], ir.Value], body: Callable[[], None], name: str
) -> None:
    """``while test(): body()`` in ``fn``, its blocks named ``name.test``, ``name.body``, ``name.done``."""
    head, inside, done = (fn.append_basic_block(f"{name}.{part}") for part in ("test", "body", "done"))
    b.branch(head)
    b.position_at_end(head)
    b.cbranch(test(), inside, done)
    b.position_at_end(inside)
    body()
    b.branch(head)
    b.position_at_end(done)
