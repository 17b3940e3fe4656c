"""Walking an array's elements in emitted code: the helpers the NumPy lowerings share.

    element(b, arr, at, k)          → the element at flat index k (C order) of an array of any strides
    size_of(b, arr, ndim)           → the product of the shape
    memory_order(b, arr, at)        → the array's axes reordered as NumPy's iterator walks it in memory
    is_empty(b, size)               → size == 0
    entry_alloca(b, fn, t)          → a stack slot in fn's entry block (a loop must not grow the stack)

Used by the reductions (``aot.codegen.reductions``, ``nanreduce``), the scalar ufuncs (``aot.codegen.ufuncs``),
whole-array operations (``elementwise``), ``nparrays`` and ``intrinsics``. They emit no errors.
"""

from __future__ import annotations

from llvmlite import ir

from ..types import ArrayType
from . import types as lt


def entry_alloca(b: ir.IRBuilder, fn: ir.Function, t: ir.Type) -> ir.Value:
    """A stack slot made in ``fn``'s entry block (a loop must not grow the stack)."""
    here = b.block
    b.position_at_start(fn.entry_basic_block)
    slot = b.alloca(t)
    b.position_at_end(here)
    return slot


def size_of(b: ir.IRBuilder, arr: ir.Value, ndim: int) -> ir.Value:
    shape = b.extract_value(arr, 1)
    size: ir.Value = ir.Constant(lt.I64, 1)
    for k in range(ndim):
        size = b.mul(size, b.extract_value(shape, k))
    return size


def memory_order(b: ir.IRBuilder, arr: ir.Value, at: ArrayType) -> ir.Value:
    """The array with its axes reordered as NumPy's iterator walks it for a reduction whose result depends on
    the order (float sums and products): by decreasing absolute stride, ties and zero strides (broadcast axes)
    left in C order. A C-ordered array is unchanged; a transposed or Fortran-ordered one is then walked in
    memory order, as NumPy does."""
    if at.ndim < 2:
        return arr
    shape = [b.extract_value(b.extract_value(arr, 1), k) for k in range(at.ndim)]
    strides = [b.extract_value(b.extract_value(arr, 2), k) for k in range(at.ndim)]
    magnitude = [_abs_i64(b, s) for s in strides]
    for _ in range(at.ndim - 1):  # bubble passes: swapping only on a strictly larger stride keeps it stable
        for k in range(at.ndim - 1):
            swap = b.icmp_signed("<", magnitude[k], magnitude[k + 1])
            zero = ir.Constant(lt.I64, 0)  # (a zero stride, a broadcast axis, orders nothing: NumPy keeps it)
            swap = b.and_(swap, b.icmp_signed("!=", magnitude[k], zero))
            for axis in (shape, strides, magnitude):
                axis[k], axis[k + 1] = b.select(swap, axis[k + 1], axis[k]), b.select(swap, axis[k], axis[k + 1])
    for field, values in ((1, shape), (2, strides)):
        packed = b.extract_value(arr, field)
        for k, v in enumerate(values):
            packed = b.insert_value(packed, v, k)
        arr = b.insert_value(arr, packed, field)
    return arr


def _abs_i64(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
    return b.select(b.icmp_signed("<", v, ir.Constant(lt.I64, 0)), b.neg(v), v)


def element(b: ir.IRBuilder, arr: ir.Value, at: ArrayType, k: ir.Value) -> ir.Value:
    """The element at flat index ``k`` (C order) of an array of any strides, as a value of its dtype (of a
    contiguous array, layout ``C``, the ``k``-th in memory)."""
    if at.layout == "C":
        value = b.load(b.gep(b.extract_value(arr, 0), [k]))
        return b.icmp_unsigned("!=", value, ir.Constant(lt.I8, 0)) if at.dtype.kind == "b" else value
    shape, strides = b.extract_value(arr, 1), b.extract_value(arr, 2)
    offset: ir.Value = ir.Constant(lt.I64, 0)
    rest = k
    for d in reversed(range(at.ndim)):
        if d:
            n = b.extract_value(shape, d)
            index, rest = b.urem(rest, n), b.udiv(rest, n)
        else:
            index = rest
        offset = b.add(offset, b.mul(index, b.extract_value(strides, d)))
    data = b.extract_value(arr, 0)
    ptr = b.bitcast(b.gep(b.bitcast(data, lt.PTR), [offset]), data.type)
    value = b.load(ptr)
    if at.dtype.kind == "b":
        value = b.icmp_unsigned("!=", value, ir.Constant(lt.I8, 0))
    return value


def is_empty(b: ir.IRBuilder, size: ir.Value) -> ir.Value:
    return b.icmp_signed("==", size, ir.Constant(lt.I64, 0))
