"""Size arithmetic, checked: the one home of the products and sums that turn the dimensions of a *new* shape
into an element count or a byte size.

A shape that comes from the user (``np.zeros((m, n))``, ``a.reshape(m, n)``) or from combining arrays
(broadcasting, concatenation) can describe more elements than an ``int64`` counts. An unchecked multiply wraps,
and the wrapped size passes every later test: ``np.zeros(0).reshape(2**32, 2**32)`` would "match" the size 0,
and indexing the view reads and writes far outside its memory. So every such product and sum goes through
here, with LLVM's ``llvm.smul.with.overflow`` / ``llvm.sadd.with.overflow``, and its caller raises NumPy's error
when the result does not fit:

    too_big = sizes.shape_overflows(em, dims, itemsize)     # i1
    total, wrapped = sizes.checked_sum(em, [n0, n1, n2])     # i64, i1

Sizes of arrays that already exist need no check: NumPy (and this allocator) never make an array whose size
does not fit, and a view has at most its base's elements.
"""

from __future__ import annotations

from llvmlite import ir

from . import types as lt
from .context import Emitter

TOO_BIG = "array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum possible size."
"""NumPy's message for a shape whose byte size does not fit (``ValueError``)."""

_PAIR = ir.LiteralStructType([lt.I64, lt.I1])


def _with_overflow(em: Emitter, op: str, x: ir.Value, y: ir.Value) -> tuple[ir.Value, ir.Value]:
    fn = em.ctx.declare(f"llvm.{op}.with.overflow.i64", ir.FunctionType(_PAIR, [lt.I64, lt.I64]))
    pair = em.b.call(fn, [x, y])
    return em.b.extract_value(pair, 0), em.b.extract_value(pair, 1)


def checked_product(em: Emitter, values: list[ir.Value], start: int = 1) -> tuple[ir.Value, ir.Value]:
    """(``start`` × the product of ``values``, whether any step overflowed ``int64``)."""
    product: ir.Value = ir.Constant(lt.I64, start)
    overflow: ir.Value = ir.Constant(lt.I1, 0)
    for v in values:
        product, wrapped = _with_overflow(em, "smul", product, v)
        overflow = em.b.or_(overflow, wrapped)
    return product, overflow


def checked_sum(em: Emitter, values: list[ir.Value], start: ir.Value | None = None) -> tuple[ir.Value, ir.Value]:
    """(``start`` (0) + the sum of ``values``, whether any step overflowed ``int64``)."""
    total: ir.Value = ir.Constant(lt.I64, 0) if start is None else start
    overflow: ir.Value = ir.Constant(lt.I1, 0)
    for v in values:
        total, wrapped = _with_overflow(em, "sadd", total, v)
        overflow = em.b.or_(overflow, wrapped)
    return total, overflow


def shape_overflows(em: Emitter, dims: list[ir.Value], itemsize: int) -> ir.Value:
    """Whether a C-ordered array of non-negative ``dims`` would need more bytes than an ``int64`` counts, as
    NumPy decides it: the non-zero dimensions times the item size (an empty array of absurd other dimensions
    is still refused, since its strides would wrap)."""
    b = em.b
    one = ir.Constant(lt.I64, 1)
    nonzero = [b.select(b.icmp_signed("==", d, ir.Constant(lt.I64, 0)), one, d) for d in dims]
    return checked_product(em, nonzero, itemsize)[1]
