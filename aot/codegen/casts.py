"""Conversions between numbers as NumPy makes them, and NumPy's checks on a store into an integer array.

    numpy_cast(em, x, F64, I32)        → NumPy's C cast of one element (``a.astype``; integers wrap, a float out
                                         of range gives what NumPy gives on x86-64)
    call_numpy_type(em, x, F64, I32)   → ``np.int32(x)``: NaN and infinity raise, as int() does, and a Python
                                         number out of the type's range raises ``OverflowError``
    store_convert(em, v, I64, U8)      → ``a[i] = v``'s conversion, with NumPy 2's checks (``OverflowError``
                                         "Python integer 300 out of bounds for uint8" …)
    check_int_fits(em, v, U8)          → the range check of a Python int beside an integer array

Errors go through ``Emitter.raise_``: NumPy's messages carry the value where Python exceptions are set.
"""

from __future__ import annotations

import math

from llvmlite import ir

from ..types import F64, I64, U32, U64, ScalarType, Type
from . import gil
from . import types as lt
from .context import Emitter, ModuleContext
from .numerics import checked_float_to_int, coerce, convert_scalar

NUMPY_NAME = {
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
}
_C_LONG = "Python int too large to convert to C long"


def check_int_fits(em: Emitter, value: ir.Value, dtype: ScalarType) -> None:
    """NumPy 2's check of a Python int (an ``i64``) converted to the integer dtype ``dtype``: OverflowError when
    it does not fit. (Also ``aot.codegen.elementwise.check_python_ints``'.)"""
    if dtype == I64:
        return
    if dtype.is_signed:
        lo, hi = -(1 << (dtype.bits - 1)), (1 << (dtype.bits - 1)) - 1
    else:
        lo, hi = 0, (1 << dtype.bits) - 1
    b = em.b
    if hi < (1 << 63) - 1:  # (one unsigned compare: value - lo beyond hi - lo)
        bad = b.icmp_unsigned(">", b.sub(value, ir.Constant(lt.I64, lo)), ir.Constant(lt.I64, hi - lo))
    else:
        bad = b.icmp_signed("<", value, ir.Constant(lt.I64, lo))
    text = f"Python integer %lld out of bounds for {NUMPY_NAME.get(dtype.name, dtype.name)}"
    with b.if_then(bad, likely=False):  # (NumPy's message, with the value)
        em.raise_(
            "OverflowError",
            text.replace(" %lld", ""),
            lambda: b.call(_overflow_function(em.ctx), [em.ctx.cstring(text), value]),
        )


def _overflow_function(ctx: ModuleContext) -> ir.Function:
    """``void aot_int_overflow(ptr format, i64)``: ``OverflowError`` with the value in its message (holding the GIL
    for the moment it takes: ``aot.codegen.gil``)."""
    fn, b = ctx.internal_function("aot_int_overflow", ir.FunctionType(ir.VoidType(), [lt.PTR, lt.I64]))
    if b is None:
        return fn
    fn.attributes.add("cold")
    fn.attributes.add("noinline")
    token = b.call(gil.acquire_function(ctx), [])
    exc = b.load(b.bitcast(ctx.global_pointer("PyExc_OverflowError"), lt.PTR.as_pointer()))
    b.call(ctx.declare("PyErr_Format", ir.FunctionType(lt.PTR, [lt.PTR, lt.PTR], var_arg=True)), [exc, *fn.args])
    b.call(gil.release_function(ctx), [token])
    b.ret_void()
    return fn


def store_convert(em: Emitter, value: ir.Value, src: Type, dst: ScalarType) -> ir.Value:
    """``value`` (of ``src``) converted for a store into an element of ``dst``, as NumPy 2 stores it: a Python
    int (``i64``) or float (``f64``) goes through Python's ``int()`` (NaN → ValueError, ±inf → OverflowError, the
    integer beyond C long → OverflowError) and must fit ``dst`` (OverflowError); a NumPy scalar of another
    type (``i8`` … ``u64`` but ``i64``, ``f32``) stored into a signed dtype is checked the same way, and into an
    unsigned dtype cast as ``astype`` casts it. Stores of the same type, bools, and into float or bool dtypes
    convert as before; so does every store where the target does not check them (``checks_stores_as_numpy``:
    kernels)."""
    if src == dst or not dst.is_int or not isinstance(src, ScalarType) or src.kind in "bn":
        return coerce(em, value, src, dst)
    if not em.ctx.target.checks_stores_as_numpy:
        return coerce(em, value, src, dst)
    weak = src in (I64, F64)
    if not weak and not dst.is_signed:
        return numpy_cast(em, value, src, dst)
    b = em.b
    if src.is_float:
        x = b.fpext(value, lt.F64) if src.bits == 32 else value
        em.check(b.fcmp_unordered("uno", x, x), "ValueError", "cannot convert float NaN to integer")
        inf = b.fcmp_ordered("==", em.call_intrinsic("llvm.fabs", [x]), ir.Constant(lt.F64, math.inf))
        em.check(inf, "OverflowError", "cannot convert float infinity to integer")
        top = 18446744073709551616.0 if dst in (U32, U64) else 9223372036854775808.0  # (NumPy's u32: to 2**64)
        fits = b.and_(
            b.fcmp_ordered(">=", x, ir.Constant(lt.F64, -9223372036854775808.0)),
            b.fcmp_ordered("<", x, ir.Constant(lt.F64, top)),
        )
        em.check(b.not_(fits), "OverflowError", _C_LONG)
        if dst == U64:  # (0 <= x < 2**64, or a negative integer that does not fit)
            negative = b.fcmp_ordered("<=", x, ir.Constant(lt.F64, -1.0))
            check_int_fits(em, b.select(negative, b.fptosi(x, lt.I64), ir.Constant(lt.I64, 0)), U64)
            return b.fptoui(x, lt.I64)
        if dst == U32:  # (2**63 <= x < 2**64: out of bounds, the value shown unsigned)
            high = b.fcmp_ordered(">=", x, ir.Constant(lt.F64, 9223372036854775808.0))
            with b.if_then(high, likely=False):
                text = "Python integer %llu out of bounds for uint32"
                em.raise_(
                    "OverflowError",
                    text.replace(" %llu", ""),
                    lambda: b.call(_overflow_function(em.ctx), [em.ctx.cstring(text), b.fptoui(x, lt.I64)]),
                )
        n = b.fptosi(x, lt.I64)
    elif src == U64:  # (a NumPy uint64 into a signed dtype: beyond C long first)
        em.check(b.icmp_signed("<", value, ir.Constant(lt.I64, 0)), "OverflowError", _C_LONG)
        n = value
    else:
        n = coerce(em, value, src, I64)
    check_int_fits(em, n, dst)
    return coerce(em, n, I64, dst)


def numpy_cast(em: Emitter, x: ir.Value, src: ScalarType, dst: ScalarType) -> ir.Value:
    """NumPy's C cast of one element (``a.astype``; integers wrap). A float to an integer truncates; NaN,
    infinities and values out of range are undefined in C, and give what NumPy gives on x86-64: the conversion
    goes through i32 for i32 and narrower types, through i64 for the rest, and one out of that range gives the
    range's minimum (truncated to the type); u64 takes values up to 2**64 as they are."""
    if not (src.is_float and dst.is_int):
        return coerce(em, x, src, dst)
    b = em.b
    wide = b.fpext(x, lt.F64) if src.bits == 32 else x
    bits = 32 if dst.bits < 32 or (dst.bits == 32 and dst.is_signed) else 64
    it = ir.IntType(bits)
    inside = b.and_(
        b.fcmp_ordered(">=", wide, ir.Constant(lt.F64, -(2.0 ** (bits - 1)))),
        b.fcmp_ordered("<", wide, ir.Constant(lt.F64, 2.0 ** (bits - 1))),
    )
    safe = b.select(inside, wide, ir.Constant(lt.F64, 0.0))  # (fptosi of NaN or of 1e300 is poison)
    as_int = b.select(inside, b.fptosi(safe, it), ir.Constant(it, -(2 ** (bits - 1))))
    if dst.bits == 64 and not dst.is_signed:
        high = b.and_(
            b.fcmp_ordered(">=", wide, ir.Constant(lt.F64, 2.0**63)),
            b.fcmp_ordered("<", wide, ir.Constant(lt.F64, 2.0**64)),
        )
        as_int = b.select(high, b.fptoui(b.select(high, wide, ir.Constant(lt.F64, 0.0)), it), as_int)
    return as_int if dst.bits == bits else b.trunc(as_int, ir.IntType(dst.bits))


def call_numpy_type(em: Emitter, v: ir.Value, src: ScalarType, dst: ScalarType) -> ir.Value:
    """``np.int32(x)`` and the other integer types: a float truncates (NaN and infinity raise, as int() does),
    and a value out of the type's range raises ``OverflowError``, as NumPy does for a Python number."""
    b = em.b
    if src.is_float:
        wide = checked_float_to_int(em, v, src)
        wide_t = I64
    elif src.kind == "b" or src == I64:
        wide, wide_t = v, src
    else:  # a fixed-width NumPy integer converts as NumPy's casts do: wrapping
        return convert_scalar(em, v, src, dst)
    if wide_t == I64 and dst != I64:
        lo = 0 if not dst.is_signed else -(1 << (dst.bits - 1))
        hi = (1 << dst.bits) - 1 if not dst.is_signed else (1 << (dst.bits - 1)) - 1
        out = b.icmp_signed("<", wide, ir.Constant(lt.I64, lo))
        if dst.bits < 64:
            out = b.or_(out, b.icmp_signed(">", wide, ir.Constant(lt.I64, hi)))
        em.check(out, "OverflowError", f"Python integer out of bounds for {dst.name}")
    return convert_scalar(em, wide, wide_t, dst)
