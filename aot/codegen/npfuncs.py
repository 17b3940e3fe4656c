"""LLVM lowering of the NumPy intrinsics (``aot.infer.npfuncs`` types them).

    np.sqrt(x)   →  %r = call double @llvm.sqrt.f64(double %x)        ; NaN for x < 0, as NumPy: no error
    np.minimum   →  NaN-propagating select (the second operand on a tie, as NumPy's loop)
    a.sum()      →  call @aot_np_pairwise_f64_1(...)                   ; NumPy's pairwise summation

``lower_scalar`` lowers one element of a scalar NumPy function: applying a ufunc to whole arrays later is
one loop calling it per element. Reductions walk the array in C order; float sums use NumPy's pairwise
algorithm (blocks of 8 partial sums up to 128 elements, halves above), so that results match NumPy's bit for
bit on 1-D and C-contiguous arrays. The pairwise helper is one internal function per element type, array
rank and mode, emitted once per module.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable

from llvmlite import ir

from ..infer.npfuncs import LIBM as _LIBM
from ..infer.npfuncs import NAN_PLAIN
from ..ir.ops import BinOpKind, Intrinsic
from ..types import BOOL, F64, I64, U32, U64, ArrayType, ScalarType, Type, promote
from . import gil, loops
from . import types as lt
from .context import Emitter, ModuleContext
from .numerics import checked_float_to_int, coerce, convert_scalar, frem, int_binop, is_finite, python_float_divmod
from .types import value_type

_LLVM_UNARY = {
    Intrinsic.NP_EXP2: "llvm.exp2",
    Intrinsic.NP_RINT: "llvm.rint",
    Intrinsic.NP_FLOOR: "llvm.floor",
    Intrinsic.NP_CEIL: "llvm.ceil",
    Intrinsic.NP_TRUNC: "llvm.trunc",
}
REDUCTIONS = frozenset(
    {
        Intrinsic.NP_SUM,
        Intrinsic.NP_PROD,
        Intrinsic.NP_MIN,
        Intrinsic.NP_MAX,
        Intrinsic.NP_MEAN,
        Intrinsic.NP_STD,
        Intrinsic.NP_VAR,
        Intrinsic.NP_ARGMIN,
        Intrinsic.NP_ARGMAX,
        Intrinsic.NP_ALL,
        Intrinsic.NP_ANY,
    }
) | frozenset(NAN_PLAIN)


def lower(em: Emitter, fn: Intrinsic, args: list[ir.Value], argtypes: list[Type], result: Type) -> ir.Value:
    """The value of a NumPy intrinsic (an ``np.`` member of ``Intrinsic``)."""
    assert isinstance(result, ScalarType)
    if fn in REDUCTIONS:
        at = argtypes[0]
        assert isinstance(at, ArrayType)
        ddof = coerce(em, args[1], argtypes[1], result) if len(args) > 1 else None  # (std/var: ddof=)
        return reduce(em, fn, args[0], at, result, ddof)
    if fn is Intrinsic.NP_DOT:
        return _dot(em, args, argtypes, result)
    if fn is Intrinsic.NP_NORM:  # sqrt(x.ravel() @ x.ravel()): the squares summed pairwise, in memory order
        at = argtypes[0]
        assert isinstance(at, ArrayType)
        squares = _float_sum(em, memory_order(em.b, args[0], at), at, result, ir.Constant(value_type(result), 0.0))
        return em.call_intrinsic("llvm.sqrt", [squares])
    if fn in (Intrinsic.NP_SEARCHSORTED, Intrinsic.NP_SEARCHSORTED_RIGHT):
        return searchsorted(em, args, argtypes, right=fn is Intrinsic.NP_SEARCHSORTED_RIGHT)
    if fn is Intrinsic.NP_CAST:
        src = argtypes[0]
        assert isinstance(src, ScalarType)
        return _cast(em, args[0], src, result)
    scalars = [t for t in argtypes if isinstance(t, ScalarType)]
    assert len(scalars) == len(argtypes)
    return lower_scalar(em, fn, args, scalars, result)


def _round(em: Emitter, args: list[ir.Value], types: list[ScalarType], rt: ScalarType) -> ir.Value:
    """``np.round(x, decimals)`` as NumPy computes it: ``rint(x * 10**d) / 10**d`` (``rint(x / 10**-d) * 10**-d``
    for negative ``d``) in ``x``'s float type, ``10**d`` multiplied out from 1.0 as NumPy's ``power_of_ten``
    does; an integer ``x`` is unchanged for ``d >= 0`` and otherwise rounded in f64 and cast back as NumPy
    casts. Decimals beyond a C int raise NumPy's ``OverflowError``."""
    b = em.b
    x, t = args[0], types[0]
    if len(args) == 1:
        return em.call_intrinsic("llvm.rint", [x]) if t.is_float else x
    d = coerce(em, args[1], types[1], I64)
    em.check(
        b.icmp_signed(">", d, ir.Constant(lt.I64, 2**31 - 1)), "OverflowError", "signed integer is greater than maximum"
    )
    em.check(
        b.icmp_signed("<", d, ir.Constant(lt.I64, -(2**31))), "OverflowError", "signed integer is less than minimum"
    )
    negative = b.icmp_signed("<", d, ir.Constant(lt.I64, 0))
    count = b.select(negative, b.neg(d), d)
    # power_of_ten: 1e0 … 1e22 are exact, beyond them each step rounds as NumPy's loop does (1e9, then * 10.)
    pre = b.block
    head, body, done = (em.llfn.append_basic_block(f"round.p10.{part}") for part in ("head", "body", "done"))
    b.branch(head)
    b.position_at_end(head)
    k, power = b.phi(lt.I64), b.phi(lt.F64)
    k.add_incoming(ir.Constant(lt.I64, 0), pre)
    power.add_incoming(ir.Constant(lt.F64, 1.0), pre)
    more = b.and_(b.icmp_signed("<", k, count), b.fcmp_ordered("!=", power, ir.Constant(lt.F64, math.inf)))
    b.cbranch(more, body, done)
    b.position_at_end(body)
    k.add_incoming(b.add(k, ir.Constant(lt.I64, 1)), body)
    power.add_incoming(b.fmul(power, ir.Constant(lt.F64, 10.0)), body)
    b.branch(head)
    b.position_at_end(done)
    ft = value_type(rt) if rt.is_float else lt.F64
    f = power if ft == lt.F64 else b.fptrunc(power, ft)
    value = x if t.is_float else coerce(em, x, t, F64)
    scaled = b.select(negative, b.fdiv(value, f), b.fmul(value, f))
    rounded = em.call_intrinsic("llvm.rint", [scaled])
    back = b.select(negative, b.fmul(rounded, f), b.fdiv(rounded, f))
    if t.is_float:
        return back
    return b.select(negative, numpy_cast(em, back, F64, rt), x)


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
    with b.if_then(bad, likely=False):
        if em.ctx.target.raises_python_exceptions:  # (NumPy's message, with the value)
            b.call(_overflow_function(em.ctx), [em.ctx.cstring(text), value])
            em.error_return()
        else:
            em.raise_("OverflowError", text.replace(" %lld", ""))


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
    convert as before; kernels (no Python exceptions) convert as before."""
    if src == dst or not dst.is_int or not isinstance(src, ScalarType) or src.kind in "bn":
        return coerce(em, value, src, dst)
    if not em.ctx.target.raises_python_exceptions:
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
                if em.ctx.target.raises_python_exceptions:
                    b.call(_overflow_function(em.ctx), [em.ctx.cstring(text), b.fptoui(x, lt.I64)])
                    em.error_return()
                else:
                    em.raise_("OverflowError", text.replace(" %llu", ""))
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


def struct_f32(x: float) -> float:
    """``x`` rounded to single precision."""
    return struct.unpack("f", struct.pack("f", x))[0]


def isnan(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
    return b.fcmp_unordered("uno", v, v)


def _libm(em: Emitter, fn: Intrinsic, t: ScalarType, args: list[ir.Value]) -> ir.Value:
    exact = em.ctx.target.math_intrinsic(fn, t)
    if exact is not None:
        return em.call_intrinsic(exact, args)
    ft = value_type(t)
    return em.b.call(em.ctx.declare(em.ctx.target.math_symbol(fn, t), ir.FunctionType(ft, [ft] * len(args))), args)


def _into_range(b: ir.IRBuilder, v: ir.Value, t: ScalarType) -> ir.Value:
    """An i64 value clamped into the range of the narrower integer type ``t`` (before it is converted)."""
    lo, hi = (-(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1) if t.is_signed else (0, (1 << t.bits) - 1)
    low, high = ir.Constant(v.type, lo), ir.Constant(v.type, hi)
    v = b.select(b.icmp_signed("<", v, low), low, v)
    return b.select(b.icmp_signed(">", v, high), high, v)


def lower_scalar(em: Emitter, fn: Intrinsic, args: list[ir.Value], types: list[ScalarType], rt: ScalarType) -> ir.Value:
    """One element of a NumPy function of scalars, in NumPy's semantics (no exceptions but integer powers)."""
    b = em.b
    if fn in (Intrinsic.NP_ISNAN, Intrinsic.NP_ISINF, Intrinsic.NP_ISFINITE, Intrinsic.NP_SIGNBIT):
        t, x = types[0], args[0]
        if not t.is_float:
            if fn is Intrinsic.NP_SIGNBIT:
                return b.icmp_signed("<", x, ir.Constant(x.type, 0)) if t.is_signed else ir.Constant(lt.I1, 0)
            return ir.Constant(lt.I1, int(fn is Intrinsic.NP_ISFINITE))
        if fn is Intrinsic.NP_ISNAN:
            return isnan(b, x)
        if fn is Intrinsic.NP_ISFINITE:
            return is_finite(em, x)
        if fn is Intrinsic.NP_ISINF:
            return b.fcmp_ordered("==", em.call_intrinsic("llvm.fabs", [x]), ir.Constant(x.type, float("inf")))
        bits = ir.IntType(t.bits)
        return b.icmp_signed("<", b.bitcast(x, bits), ir.Constant(bits, 0))
    if fn is Intrinsic.NP_WHERE:
        test = convert_scalar(em, args[0], types[0], BOOL) if types[0].kind != "b" else args[0]
        return b.select(test, coerce(em, args[1], types[1], rt), coerce(em, args[2], types[2], rt))
    if fn is Intrinsic.NP_ROUND:
        return _round(em, args, types, rt)
    if fn is Intrinsic.NP_CLIP and rt.is_int and rt.bits < 64:  # a Python int bound compares by value (NumPy 2):
        args = [args[0]] + [_into_range(b, v, rt) if t == I64 else v for v, t in zip(args[1:], types[1:])]
    xs = [coerce(em, v, t, rt) for v, t in zip(args, types)]
    x = xs[0]
    if fn is Intrinsic.NP_CLIP:  # NumPy's minimum(maximum(a, lo), hi): NaN anywhere gives NaN
        return _min_max(b, Intrinsic.NP_MINIMUM, _min_max(b, Intrinsic.NP_MAXIMUM, x, xs[1], rt), xs[2], rt)
    if fn in _LIBM:
        return _libm(em, _LIBM[fn], rt, xs)
    if fn in _LLVM_UNARY:
        return em.call_intrinsic(_LLVM_UNARY[fn], [x]) if rt.is_float else x
    if fn in (Intrinsic.NP_RADIANS, Intrinsic.NP_DEGREES):  # NumPy's loops: x * (pi/180), x * (180/pi)
        pi, half_turn = (math.pi, 180.0) if rt.bits == 64 else (float(struct_f32(math.pi)), 180.0)
        factor = pi / half_turn if fn is Intrinsic.NP_RADIANS else half_turn / pi
        return b.fmul(x, ir.Constant(x.type, factor if rt.bits == 64 else float(struct_f32(factor))))
    if fn is Intrinsic.NP_COPYSIGN:
        return em.call_intrinsic("llvm.copysign", xs)
    zero = ir.Constant(x.type, 0.0 if rt.is_float else 0)
    if fn is Intrinsic.NP_ABS:
        if rt.is_float:
            return em.call_intrinsic("llvm.fabs", [x])
        if not rt.is_signed or rt.kind == "b":
            return x
        return b.select(b.icmp_signed("<", x, zero), b.neg(x), x)
    if fn is Intrinsic.NP_SQUARE:
        return b.fmul(x, x) if rt.is_float else b.mul(x, x)
    if fn is Intrinsic.NP_SIGN:
        if rt.is_float:  # -1.0, 0.0 (for both zeros), 1.0, or NaN
            one = ir.Constant(x.type, 1.0)
            above = b.select(b.fcmp_ordered(">", x, zero), one, zero)
            signed = b.select(b.fcmp_ordered("<", x, zero), b.fneg(one), above)
            return b.select(isnan(b, x), x, signed)
        positive = b.zext(b.icmp_signed(">", x, zero) if rt.is_signed else b.icmp_unsigned(">", x, zero), x.type)
        negative = b.zext(b.icmp_signed("<", x, zero), x.type) if rt.is_signed else zero
        return b.sub(positive, negative)
    if fn in (Intrinsic.NP_MINIMUM, Intrinsic.NP_MAXIMUM, Intrinsic.NP_FMIN, Intrinsic.NP_FMAX):
        return _min_max(b, fn, xs[0], xs[1], rt)
    if fn in (Intrinsic.NP_FLOOR_DIVIDE, Intrinsic.NP_REMAINDER, Intrinsic.NP_FMOD, Intrinsic.NP_DIVIDE):
        return _division(em, fn, xs[0], xs[1], rt)
    if fn is Intrinsic.NP_POWER:
        if rt.is_float:
            return em.call_intrinsic("llvm.pow", xs)
        return _int_power(em, xs[0], xs[1], rt)
    raise NotImplementedError(f"intrinsic {fn.value} on the {em.ctx.target.owner} target")


def _less(b: ir.IRBuilder, x: ir.Value, y: ir.Value, t: ScalarType) -> ir.Value:
    if t.is_float:
        return b.fcmp_ordered("<", x, y)
    return b.icmp_signed("<", x, y) if t.is_signed else b.icmp_unsigned("<", x, y)


def _min_max(b: ir.IRBuilder, fn: Intrinsic, x: ir.Value, y: ir.Value, t: ScalarType) -> ir.Value:
    """NumPy's loops: ``minimum(x, y) = x < y ? x : y`` with NaN propagating (so a tie gives y);
    ``fmin(x, y) = y < x ? y : x`` with NaN ignored (a tie gives x); ``maximum`` and ``fmax`` alike."""
    if fn is Intrinsic.NP_MINIMUM:
        r = b.select(_less(b, x, y, t), x, y)
    elif fn is Intrinsic.NP_MAXIMUM:
        r = b.select(_less(b, y, x, t), x, y)
    elif fn is Intrinsic.NP_FMIN:
        r = b.select(_less(b, y, x, t), y, x)
    else:
        r = b.select(_less(b, x, y, t), y, x)
    if not t.is_float:
        return r
    if fn in (Intrinsic.NP_MINIMUM, Intrinsic.NP_MAXIMUM):
        return b.select(isnan(b, x), x, b.select(isnan(b, y), y, r))
    return b.select(isnan(b, y), x, b.select(isnan(b, x), y, r))


def _division(em: Emitter, fn: Intrinsic, x: ir.Value, y: ir.Value, t: ScalarType) -> ir.Value:
    """NumPy's divisions never raise: an integer divided by zero gives 0 (NumPy warns), a float one gives
    ``x / 0`` (inf or NaN) for ``floor_divide`` and ``divide`` and NaN for ``remainder`` and ``fmod``; otherwise
    ``floor_divide``/``remainder`` are Python's floor division and modulo, ``fmod`` C's (the dividend's sign)."""
    b = em.b
    if t.is_float:
        zero = ir.Constant(x.type, 0.0)
        if fn is Intrinsic.NP_DIVIDE:
            return b.fdiv(x, y)
        if fn is Intrinsic.NP_FMOD:
            return frem(em, x, y)
        by_zero = b.fcmp_ordered("==", y, zero)
        quotient, modulo = python_float_divmod(em, x, y)
        if fn is Intrinsic.NP_FLOOR_DIVIDE:
            return b.select(by_zero, b.fdiv(x, y), quotient)
        return b.select(by_zero, frem(em, x, y), modulo)
    zero = ir.Constant(x.type, 0)
    by_zero = b.icmp_unsigned("==", y, zero)
    safe = b.select(by_zero, ir.Constant(x.type, 1), y)
    if fn is Intrinsic.NP_FMOD:
        if t.is_signed:  # (x % -1 is 0, and LLVM's srem of the minimum by -1 is undefined)
            minus_one = b.icmp_signed("==", y, ir.Constant(x.type, -1))
            r = b.srem(x, b.select(minus_one, ir.Constant(x.type, 1), safe))
        else:
            r = b.urem(x, safe)
        return b.select(by_zero, zero, r)
    kind = BinOpKind.FLOORDIV if fn is Intrinsic.NP_FLOOR_DIVIDE else BinOpKind.MOD
    return b.select(by_zero, zero, int_binop(em, kind, x, safe, t))


def _int_power(em: Emitter, base: ir.Value, exponent: ir.Value, t: ScalarType) -> ir.Value:
    """Integer ``power`` by squaring, wrapping as NumPy's does; a negative exponent is NumPy's ValueError."""
    b = em.b
    zero, one = ir.Constant(base.type, 0), ir.Constant(base.type, 1)
    if t.is_signed:
        negative = b.icmp_signed("<", exponent, zero)
        em.check(negative, "ValueError", "Integers to negative integer powers are not allowed.")
    result, acc, e = (entry_alloca(b, em.llfn, base.type) for _ in range(3))
    b.store(one, result)
    b.store(base, acc)
    b.store(exponent, e)
    head, body, done = (em.llfn.append_basic_block(n) for n in ("pow.head", "pow.body", "pow.done"))
    b.branch(head)
    b.position_at_end(head)
    b.cbranch(b.icmp_unsigned("!=", b.load(e), zero), body, done)
    b.position_at_end(body)
    odd = b.trunc(b.load(e), lt.I1)
    b.store(b.select(odd, b.mul(b.load(result), b.load(acc)), b.load(result)), result)
    b.store(b.mul(b.load(acc), b.load(acc)), acc)
    b.store(b.lshr(b.load(e), one), e)
    b.branch(head)
    b.position_at_end(done)
    return b.load(result)


def _cast(em: Emitter, v: ir.Value, src: ScalarType, dst: ScalarType) -> ir.Value:
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


# ------------------------------------------------------------------------------------------ array walks


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


# ------------------------------------------------------------------------------------------ reductions


_BLOCK = 128  # NumPy's PW_BLOCKSIZE


def pairwise_function(
    em: Emitter, at: ArrayType, acc: ScalarType, squares: bool, skip_nan: bool = False
) -> ir.Function:
    """``acc pw(array a, i64 lo, i64 n, acc mean)``: NumPy's pairwise sum of the elements ``lo … lo+n-1`` (C
    order) converted to ``acc`` — of ``(x - mean)**2`` with ``squares`` (the second pass of var/std); with
    ``skip_nan`` a NaN element counts as 0 (``np.nansum`` sums a copy with its NaNs replaced by 0)."""
    nan = "_nan" if skip_nan else ""
    name = f"aot_np_pairwise_{at.dtype.name}_{acc.name}_{at.ndim}{at.layout}{'_sq' if squares else ''}{nan}"
    existing = em.ctx.module.globals.get(name)
    if existing is not None:
        return existing
    ft = value_type(acc)
    fn = ir.Function(em.ctx.module, ir.FunctionType(ft, [value_type(at), lt.I64, lt.I64, ft]), name)
    fn.linkage = "internal"
    arr, lo, n, mean = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    i64 = lambda v: ir.Constant(lt.I64, v)  # noqa: E731

    def item(k: ir.Value) -> ir.Value:
        x = coerce(em_like(b), element(b, arr, at, b.add(lo, k)), at.dtype, acc)
        value = x
        if squares:
            d = b.fsub(x, mean)
            value = b.fmul(d, d)
        return b.select(isnan(b, x), ir.Constant(ft, 0.0), value) if skip_nan else value

    small, medium, large = (fn.append_basic_block(x) for x in ("small", "medium", "large"))
    b.cbranch(b.icmp_signed("<", n, i64(8)), small, medium)
    # n < 8: a plain loop
    b.position_at_end(small)
    total = entry_alloca(b, fn, ft)
    b.store(ir.Constant(ft, -0.0), total)
    loops.counted_loop(
        b, i64(0), n, lambda k: b.store(b.fadd(b.load(total), item(k)), total), counter=entry_alloca(b, fn, lt.I64)
    )
    b.ret(b.load(total))
    # 8 <= n <= 128: eight partial sums, then the tail
    b.position_at_end(medium)
    blocked = fn.append_basic_block("blocked")
    b.cbranch(b.icmp_signed("<=", n, i64(_BLOCK)), blocked, large)
    b.position_at_end(blocked)
    partial = [entry_alloca(b, fn, ft) for _ in range(8)]
    for j, slot in enumerate(partial):
        b.store(item(i64(j)), slot)
    whole = b.sub(n, b.srem(n, i64(8)))
    steps = b.sdiv(whole, i64(8))

    def block(s: ir.Value) -> None:
        base = b.mul(s, i64(8))
        for j, slot in enumerate(partial):
            b.store(b.fadd(b.load(slot), item(b.add(base, i64(j)))), slot)

    loops.counted_loop(b, i64(1), steps, block, counter=entry_alloca(b, fn, lt.I64))
    r = [b.load(slot) for slot in partial]
    res = b.fadd(b.fadd(b.fadd(r[0], r[1]), b.fadd(r[2], r[3])), b.fadd(b.fadd(r[4], r[5]), b.fadd(r[6], r[7])))
    b.store(res, total)
    loops.counted_loop(
        b, whole, n, lambda k: b.store(b.fadd(b.load(total), item(k)), total), counter=entry_alloca(b, fn, lt.I64)
    )
    b.ret(b.load(total))
    # n > 128: two halves, the first a multiple of 8
    b.position_at_end(large)
    half = b.sdiv(n, i64(2))
    half = b.sub(half, b.srem(half, i64(8)))
    first = b.call(fn, [arr, lo, half, mean])
    second = b.call(fn, [arr, b.add(lo, half), b.sub(n, half), mean])
    b.ret(b.fadd(first, second))
    return fn


class _Bare(Emitter):
    """An emitter for code in a helper function, which never raises (only conversions are emitted)."""

    def __init__(self, b: ir.IRBuilder):
        self.b = b


def em_like(b: ir.IRBuilder) -> Emitter:
    return _Bare(b)


def _float_sum(em: Emitter, arr: ir.Value, at: ArrayType, acc: ScalarType, mean: ir.Value | None = None) -> ir.Value:
    """NumPy's sum of the elements as ``acc`` (of their squared deviations from ``mean`` with one): 0 plus
    pairwise sums over the array in its iteration order (``memory_order``). NumPy sums the whole array
    pairwise when its axes merge into one (1-D, contiguous) and when it sums a temporary (the deviations);
    otherwise it goes through buffers, each summed pairwise, the buffers' sums added in order: of 8192
    elements for integers converted to floats, of as many whole innermost rows as fit in 8192 elements for N-D
    views whose axes do not merge. (This matches NumPy 2.x bit for bit on 1-D and contiguous arrays, their
    transposes and views of up to 8192 elements; larger N-D views may differ in the last bits.)"""
    if at.ndim == 1:
        return _buffered_sum(em, arr, at, acc, mean)
    return _over(em, arr, at, value_type(acc), lambda view, vt: _buffered_sum(em, view, vt, acc, mean))


def _buffered_sum(em: Emitter, arr: ir.Value, at: ArrayType, acc: ScalarType, mean: ir.Value | None) -> ir.Value:
    """0 plus the pairwise sums of consecutive buffers of ``arr`` (1-D: its axes merged; N-D: they do not)."""
    b = em.b
    ft = value_type(acc)
    size = size_of(b, arr, at.ndim)
    zero = ir.Constant(ft, 0.0)
    i64 = lambda v: ir.Constant(lt.I64, v)  # noqa: E731
    whole = b.select(b.icmp_signed("<", size, i64(1)), i64(1), size)
    if mean is not None:
        chunk = whole
    elif at.ndim == 1 or at.layout == "C":
        chunk = whole if at.dtype.is_float else i64(_BUFFER)
    else:  # a buffer holds as many whole rows of the innermost axis as fit
        inner = b.extract_value(b.extract_value(arr, 1), at.ndim - 1)
        inner = b.select(b.icmp_signed("<", inner, i64(1)), i64(1), inner)
        rows = b.mul(b.sdiv(i64(_BUFFER), inner), inner)
        chunk = b.select(b.icmp_signed("<", rows, inner), inner, rows)
    pw = pairwise_function(em, at, acc, mean is not None)
    total = entry_alloca(b, em.llfn, ft)
    b.store(zero, total)
    count = b.sdiv(b.add(size, b.sub(chunk, i64(1))), chunk)

    def one(c: ir.Value) -> None:
        lo = b.mul(c, chunk)
        left = b.sub(size, lo)
        n = b.select(b.icmp_signed("<", left, chunk), left, chunk)
        b.store(b.fadd(b.load(total), b.call(pw, [arr, lo, n, mean if mean is not None else zero])), total)

    loops.counted_loop(b, i64(0), count, one, counter=entry_alloca(b, em.llfn, lt.I64))
    return b.load(total)


_BUFFER = 8192  # NumPy's default buffer size (elements)


def _merges(b: ir.IRBuilder, arr: ir.Value, at: ArrayType) -> ir.Value:
    """Whether the axes of ``arr`` (in iteration order) merge into one, as NumPy's iterator coalesces them:
    each axis longer than 1 steps by the extent of the next inner one longer than 1."""
    return _flat_stride(b, arr, at)[0]


def _flat_stride(b: ir.IRBuilder, arr: ir.Value, at: ArrayType) -> tuple[ir.Value, ir.Value]:
    """(whether the axes merge, the stride of the merged axis: that of the innermost axis longer than 1)."""
    shape, strides = b.extract_value(arr, 1), b.extract_value(arr, 2)
    one = ir.Constant(lt.I64, 1)
    ok: ir.Value = ir.Constant(lt.I1, 1)
    seen: ir.Value = ir.Constant(lt.I1, 0)  # an axis longer than 1 was seen (inside this one)
    expected: ir.Value = ir.Constant(lt.I64, 0)  # the stride that axis's extent asks of the next outer one
    step: ir.Value = b.extract_value(strides, at.ndim - 1)
    for k in reversed(range(at.ndim)):
        n, stride = b.extract_value(shape, k), b.extract_value(strides, k)
        long = b.icmp_signed("!=", n, one)
        ok = b.and_(ok, b.or_(b.not_(b.and_(long, seen)), b.icmp_signed("==", stride, expected)))
        step = b.select(b.and_(long, b.not_(seen)), stride, step)
        expected = b.select(long, b.mul(stride, n), expected)
        seen = b.or_(seen, long)
    return ok, step


def _over(
    em: Emitter, arr: ir.Value, at: ArrayType, t: ir.Type, body: Callable[[ir.Value, ArrayType], ir.Value]
) -> ir.Value:
    """``body(view, type)`` emitted for the layouts an array may have at run time, the fastest first: a
    contiguous run of memory (type layout ``C``: vector loads), a 1-D strided view of an N-D array whose axes
    merge (no index arithmetic per element), the array itself. The flat index of an element is the same in
    each, so ``body`` computes the same value."""
    if at.layout == "C":
        return body(arr, at)
    b = em.b
    slot = entry_alloca(b, em.llfn, t)
    if at.ndim == 1:
        merges, flat = None, arr
    else:
        merges, stride = _flat_stride(b, arr, at)
        one_axis = ir.Constant(ir.ArrayType(lt.I64, 1), None)
        flat = ir.Constant(value_type(ArrayType(at.dtype, 1)), ir.Undefined)
        flat = b.insert_value(flat, b.extract_value(arr, 0), 0)
        flat = b.insert_value(flat, b.insert_value(one_axis, size_of(b, arr, at.ndim), 0), 1)
        flat = b.insert_value(flat, b.insert_value(one_axis, stride, 0), 2)

    def flat_body() -> None:
        unit = ir.Constant(lt.I64, at.dtype.itemsize if at.dtype.kind != "b" else 1)
        with b.if_else(b.icmp_signed("==", b.extract_value(b.extract_value(flat, 2), 0), unit)) as (dense, strided):
            with dense:
                b.store(body(flat, ArrayType(at.dtype, 1, "C")), slot)
            with strided:
                b.store(body(flat, ArrayType(at.dtype, 1)), slot)

    if merges is None:
        flat_body()
    else:
        with b.if_else(merges) as (then, otherwise):
            with then:
                flat_body()
            with otherwise:
                b.store(body(arr, at), slot)
    return b.load(slot)


_LANES = 8  # independent partial results of min/max/argmin/argmax (a chain of selects is latency-bound)


def reduce(
    em: Emitter, fn: Intrinsic, arr: ir.Value, at: ArrayType, rt: ScalarType, ddof: ir.Value | None = None
) -> ir.Value:
    b = em.b
    if fn in NAN_PLAIN:  # (np.nansum … of integers and booleans; of floats: aot.codegen.nanreduce)
        assert not at.dtype.is_float
        fn = NAN_PLAIN[fn]
    size = size_of(b, arr, at.ndim)
    name = fn.value.split(".", 1)[1]
    if rt.is_float and fn not in (Intrinsic.NP_MIN, Intrinsic.NP_MAX):
        arr = memory_order(b, arr, at)
    if fn is Intrinsic.NP_SUM and rt.is_float:
        return _float_sum(em, arr, at, rt)
    if fn in (Intrinsic.NP_MEAN, Intrinsic.NP_VAR, Intrinsic.NP_STD):
        n = b.sitofp(size, value_type(rt))
        mean = b.fdiv(_float_sum(em, arr, at, rt), n)
        if fn is Intrinsic.NP_MEAN:
            return mean
        count = n
        if ddof is not None:  # NumPy's max(n - ddof, 0): inf or NaN where nothing is left
            fewer = b.fsub(n, ddof)
            count = b.select(
                b.fcmp_ordered(">", fewer, ir.Constant(fewer.type, 0.0)), fewer, ir.Constant(fewer.type, 0.0)
            )
        var = b.fdiv(_float_sum(em, arr, at, rt, mean), count)
        return em.call_intrinsic("llvm.sqrt", [var]) if fn is Intrinsic.NP_STD else var
    if fn in (Intrinsic.NP_MIN, Intrinsic.NP_MAX):
        what = "minimum" if fn is Intrinsic.NP_MIN else "maximum"
        em.check(
            is_empty(b, size), "ValueError", f"zero-size array to reduction operation {what} which has no identity"
        )
    elif fn in (Intrinsic.NP_ARGMIN, Intrinsic.NP_ARGMAX):
        em.check(is_empty(b, size), "ValueError", f"attempt to get {name} of an empty sequence")
    else:
        return _over(em, arr, at, value_type(rt), lambda view, vt: _accumulate(em, fn, view, vt, size, rt))
    if fn in (Intrinsic.NP_MIN, Intrinsic.NP_MAX):
        arr = memory_order(b, arr, at)  # (any order gives the same value: memory order merges more often)
    return _over(em, arr, at, value_type(rt), lambda view, vt: _extreme(em, fn, view, vt, size))


def is_empty(b: ir.IRBuilder, size: ir.Value) -> ir.Value:
    return b.icmp_signed("==", size, ir.Constant(lt.I64, 0))


def _accumulate(em: Emitter, fn: Intrinsic, arr: ir.Value, at: ArrayType, size: ir.Value, rt: ScalarType) -> ir.Value:
    """Integer sums and products (wrapping, in 64 bits), float products (in order), all and any."""
    b = em.b
    d = at.dtype
    slot = entry_alloca(b, em.llfn, value_type(rt))
    if fn in (Intrinsic.NP_ALL, Intrinsic.NP_ANY):
        b.store(ir.Constant(lt.I1, int(fn is Intrinsic.NP_ALL)), slot)

        def test(k: ir.Value) -> None:
            x = element(b, arr, at, k)
            truth = convert_scalar(em, x, d, BOOL) if d.kind != "b" else x
            b.store(b.and_(b.load(slot), truth) if fn is Intrinsic.NP_ALL else b.or_(b.load(slot), truth), slot)

        loops.counted_loop(b, ir.Constant(lt.I64, 0), size, test, counter=entry_alloca(b, em.llfn, lt.I64))
        return b.load(slot)
    product = fn is Intrinsic.NP_PROD
    b.store(ir.Constant(value_type(rt), (1.0 if rt.is_float else 1) if product else 0), slot)
    step = (b.fmul if rt.is_float else b.mul) if product else b.add

    def accumulate(k: ir.Value) -> None:
        x = coerce(em, element(b, arr, at, k), d, rt)
        b.store(step(b.load(slot), x), slot)

    loops.counted_loop(b, ir.Constant(lt.I64, 0), size, accumulate, counter=entry_alloca(b, em.llfn, lt.I64))
    return b.load(slot)


def _extreme(em: Emitter, fn: Intrinsic, arr: ir.Value, at: ArrayType, size: ir.Value) -> ir.Value:
    """min, max, argmin, argmax of a non-empty array: NaN wins and stays; arg… give the first extreme (the
    first NaN). Contiguous memory and 1-D views take vector loops (``_vector_extreme``, ``_bool_extreme``);
    N-D views whose axes do not merge keep eight lanes of partial results over interleaved elements,
    combined in index order."""
    b = em.b
    d = at.dtype
    smaller = fn in (Intrinsic.NP_MIN, Intrinsic.NP_ARGMIN)
    arg = fn in (Intrinsic.NP_ARGMIN, Intrinsic.NP_ARGMAX)
    kd = d if d.kind != "b" else ScalarType("u1", "u", 1)
    i64 = lambda v: ir.Constant(lt.I64, v)  # noqa: E731

    def better(x: ir.Value, i: ir.Value, best: ir.Value, where: ir.Value, later: bool = True) -> ir.Value:
        """Whether element ``x`` (index ``i``) replaces ``best`` (index ``where``); ``later``: ``i > where``
        is known (within a lane and in the tail), so no tie needs the indices."""
        strictly = _less(b, x, best, kd) if smaller else _less(b, best, x, kd)
        if not arg:  # min/max: an equal later value replaces (which of 0.0 and -0.0 NumPy returns varies)
            if not d.is_float:
                return b.not_(_less(b, best, x, kd) if smaller else _less(b, x, best, kd))
            keep = b.fcmp_ordered("<=" if smaller else ">=", x, best)
            return b.or_(isnan(b, x), b.and_(b.not_(isnan(b, best)), keep))
        if later:
            result = strictly
        else:
            equal = b.fcmp_ordered("==", x, best) if d.is_float else b.icmp_unsigned("==", x, best)
            result = b.or_(strictly, b.and_(equal, b.icmp_signed("<", i, where)))
        if not d.is_float:
            return result
        nan_x, nan_best = isnan(b, x), isnan(b, best)
        earlier_nan = ir.Constant(lt.I1, 0) if later else b.and_(nan_x, b.icmp_signed("<", i, where))
        return b.select(nan_best, earlier_nan, b.or_(result, nan_x))

    if (at.layout == "C" or at.ndim == 1) and d.kind == "b":
        return _bool_extreme(em, fn, arr, at, size)
    if at.layout == "C" or at.ndim == 1:
        return _vector_extreme(em, arr, at, size, smaller, arg, better)
    best = [entry_alloca(b, em.llfn, value_type(d)) for _ in range(_LANES)]
    where = [entry_alloca(b, em.llfn, lt.I64) for _ in range(_LANES)]
    lanes = b.icmp_signed(">=", size, i64(2 * _LANES))
    whole = b.select(lanes, b.mul(b.sdiv(size, i64(_LANES)), i64(_LANES)), i64(1))
    for j in range(_LANES):  # lane j starts at element j (element 0 for all lanes without lanes)
        start = b.select(lanes, i64(j), i64(0))
        b.store(element(b, arr, at, start), best[j])
        b.store(start, where[j])

    def block(s: ir.Value) -> None:
        base = b.mul(s, i64(_LANES))
        for j in range(_LANES):
            i = b.add(base, i64(j))
            x, current, at_ = element(b, arr, at, i), b.load(best[j]), b.load(where[j])
            take = better(x, i, current, at_)
            b.store(b.select(take, x, current), best[j])
            b.store(b.select(take, i, at_), where[j])

    loops.counted_loop(b, i64(1), b.sdiv(whole, i64(_LANES)), block, counter=entry_alloca(b, em.llfn, lt.I64))
    for j in range(1, _LANES):
        x, i, current, at_ = b.load(best[j]), b.load(where[j]), b.load(best[0]), b.load(where[0])
        take = better(x, i, current, at_, later=False)
        b.store(b.select(take, x, current), best[0])
        b.store(b.select(take, i, at_), where[0])

    def tail(k: ir.Value) -> None:
        x, current, at_ = element(b, arr, at, k), b.load(best[0]), b.load(where[0])
        take = better(x, k, current, at_)
        b.store(b.select(take, x, current), best[0])
        b.store(b.select(take, k, at_), where[0])

    loops.counted_loop(b, whole, size, tail, counter=entry_alloca(b, em.llfn, lt.I64))
    return b.load(where[0]) if arg else b.load(best[0])


_VECTOR_BYTES = 256  # a block of the vector loops of min/max/argmin/argmax (several registers: the loop-carried
# compare-and-select of one register is latency-bound; half as much for integers, whose min/max take a cycle)


def _vector_extreme(
    em: Emitter, arr: ir.Value, at: ArrayType, size: ir.Value, smaller: bool, arg: bool, better: Callable[..., ir.Value]
) -> ir.Value:
    """min/max/argmin/argmax of a contiguous run of memory or a 1-D view (not booleans: ``_bool_extreme``),
    in two passes. The extreme value: blocks of elements loaded as one vector, lane ``j`` keeping the extreme
    of elements ``j, L+j, 2L+j, …`` (NaNs are only noted, in a vector of flags, so that the select chain
    stays short), the lanes then reduced, a NaN if any was noted; the tail and arrays shorter than two blocks
    run the scalar rule (``better``). argmin/argmax then look for the first element equal to it, or the first
    NaN (``_find_first``): as NumPy, the first occurrence of the extreme, the first NaN wherever it lies."""
    b = em.b
    d = at.dtype
    n_lanes = _lanes(at, (_VECTOR_BYTES if d.is_float else _VECTOR_BYTES // 2) // d.itemsize)
    i64 = lambda v: ir.Constant(lt.I64, v)  # noqa: E731
    et = b.extract_value(arr, 0).type.pointee
    vt = ir.VectorType(et, n_lanes)
    load_block, _ = _stored(b, arr, at, n_lanes)
    best = entry_alloca(b, em.llfn, et)
    acc = entry_alloca(b, em.llfn, vt)
    nans = entry_alloca(b, em.llfn, ir.VectorType(lt.I1, n_lanes))
    tail_start = entry_alloca(b, em.llfn, lt.I64)
    blocks = b.sdiv(size, i64(n_lanes))

    def beats(x: ir.Value, y: ir.Value) -> ir.Value:  # x strictly better than y (ordered: False with a NaN)
        return _less(b, x, y, d) if smaller else _less(b, y, x, d)

    with b.if_else(b.icmp_signed(">=", blocks, i64(2))) as (vector, scalar):
        with vector:
            first = load_block(i64(0))
            b.store(first, acc)
            if d.is_float:
                b.store(isnan(b, first), nans)

            def step(s: ir.Value) -> None:
                x, current = load_block(s), b.load(acc)
                b.store(b.select(beats(x, current), x, current), acc)
                if d.is_float:
                    b.store(b.or_(b.load(nans), isnan(b, x)), nans)

            loops.counted_loop(b, i64(1), blocks, step, counter=entry_alloca(b, em.llfn, lt.I64))
            lanes = b.load(acc)
            width = n_lanes
            while width > 1:  # halves against halves: which of equal values stays does not matter
                width //= 2
                low, high = (
                    b.shuffle_vector(lanes, lanes, ir.Constant(ir.VectorType(lt.I32, width), list(range(k, k + width))))
                    for k in (0, width)
                )
                lanes = b.select(beats(high, low), high, low)
            value = b.extract_element(lanes, ir.Constant(lt.I32, 0))
            if d.is_float:
                noted = b.bitcast(b.load(nans), ir.IntType(n_lanes))
                nan = b.icmp_unsigned("!=", noted, ir.Constant(ir.IntType(n_lanes), 0))
                value = b.select(nan, ir.Constant(et, math.nan), value)
            b.store(value, best)
            b.store(b.mul(blocks, i64(n_lanes)), tail_start)
        with scalar:
            b.store(element(b, arr, at, i64(0)), best)
            b.store(i64(1), tail_start)

    def tail(k: ir.Value) -> None:
        x, current = element(b, arr, at, k), b.load(best)
        b.store(b.select(better(x, k, current, i64(0)), x, current), best)

    loops.counted_loop(b, b.load(tail_start), size, tail, counter=entry_alloca(b, em.llfn, lt.I64))
    extreme = b.load(best)
    if not arg:
        return extreme
    if d.is_float:  # x == extreme, or x is a NaN (there is one only when the extreme is a NaN)

        def test(x: ir.Value) -> ir.Value:
            return b.or_(b.fcmp_ordered("==", x, _splat(b, extreme, x.type)), isnan(b, x))

    else:

        def test(x: ir.Value) -> ir.Value:
            return b.icmp_unsigned("==", x, _splat(b, extreme, x.type))

    return _find_first(em, arr, at, size, test)


def _splat(b: ir.IRBuilder, v: ir.Value, t: ir.Type) -> ir.Value:
    """``v`` as a value of type ``t``: itself, or in every lane of a vector."""
    if not isinstance(t, ir.VectorType):
        return v
    one = b.insert_element(ir.Constant(t, ir.Undefined), v, ir.Constant(lt.I32, 0))
    return b.shuffle_vector(one, ir.Constant(t, ir.Undefined), ir.Constant(ir.VectorType(lt.I32, t.count), None))


def _lanes(at: ArrayType, contiguous: int) -> int:
    """Lanes of a vector loop: ``contiguous`` for contiguous memory, at most 32 for a strided view (each
    element its own load: more would only lengthen the code)."""
    return contiguous if at.layout == "C" else min(32, contiguous)


def _stored(
    b: ir.IRBuilder, arr: ir.Value, at: ArrayType, n_lanes: int
) -> tuple[Callable[[ir.Value], ir.Value], Callable[[ir.Value], ir.Value]]:
    """(block ``s`` as a vector of ``n_lanes`` stored elements, element ``k`` as stored) of a contiguous array
    (one vector load) or a 1-D view of any stride (the elements loaded one by one into the vector)."""
    data = b.extract_value(arr, 0)
    et = data.type.pointee
    vt = ir.VectorType(et, n_lanes)
    i64 = lambda v: ir.Constant(lt.I64, v)  # noqa: E731
    if at.layout == "C":

        def block(s: ir.Value) -> ir.Value:
            ptr = b.gep(data, [b.mul(s, i64(n_lanes))])
            return b.load(b.bitcast(ptr, vt.as_pointer()), align=at.dtype.itemsize)

        return block, lambda k: b.load(b.gep(data, [k]))
    assert at.ndim == 1
    stride = b.extract_value(b.extract_value(arr, 2), 0)
    raw = b.bitcast(data, lt.PTR)

    def one(k: ir.Value) -> ir.Value:
        return b.load(b.bitcast(b.gep(raw, [b.mul(k, stride)]), data.type))

    def gathered(s: ir.Value) -> ir.Value:
        base = b.gep(raw, [b.mul(b.mul(s, i64(n_lanes)), stride)])
        v = ir.Constant(vt, ir.Undefined)
        for j in range(n_lanes):
            x = b.load(b.bitcast(b.gep(base, [b.mul(i64(j), stride)]), data.type))
            v = b.insert_element(v, x, ir.Constant(lt.I32, j))
        return v

    return gathered, one


def _find_first(
    em: Emitter, arr: ir.Value, at: ArrayType, size: ir.Value, test: Callable[[ir.Value], ir.Value]
) -> ir.Value:
    """The index of the first element of a contiguous array or 1-D view for which ``test`` holds, else
    ``size``. ``test``
    takes a stored element (booleans as their byte) or a vector of them and gives an ``i1`` or a vector of
    them: blocks of up to 64 elements are tested at once, the loop leaving at the first block with a hit."""
    b = em.b
    fn = em.llfn
    i64 = lambda v: ir.Constant(lt.I64, v)  # noqa: E731
    n_lanes = _lanes(at, min(64, _VECTOR_BYTES // at.dtype.itemsize))
    load_block, load_one = _stored(b, arr, at, n_lanes)
    mt = ir.IntType(n_lanes)
    found, index = entry_alloca(b, fn, lt.I64), entry_alloca(b, fn, lt.I64)
    b.store(size, found)
    b.store(i64(0), index)
    blocks = b.sdiv(size, i64(n_lanes))
    head, body, hit, rest, check, one, one_hit, done = (
        fn.append_basic_block("find." + n) for n in ("head", "block", "hit", "rest", "check", "one", "found", "done")
    )
    b.branch(head)
    b.position_at_end(head)
    s = b.load(index)
    b.cbranch(b.icmp_signed("<", s, blocks), body, rest)
    b.position_at_end(body)
    mask = b.bitcast(test(load_block(s)), mt)
    b.store(b.add(s, i64(1)), index)
    b.cbranch(b.icmp_unsigned("!=", mask, ir.Constant(mt, 0)), hit, head)
    b.position_at_end(hit)
    cttz = em.ctx.declare("llvm.cttz.i64", ir.FunctionType(lt.I64, [lt.I64, lt.I1]))
    lane = b.call(cttz, [b.zext(mask, lt.I64) if n_lanes < 64 else mask, ir.Constant(lt.I1, 1)])
    b.store(b.add(b.mul(s, i64(n_lanes)), lane), found)
    b.branch(done)
    b.position_at_end(rest)  # the elements after the last whole block, one by one
    b.store(b.mul(blocks, i64(n_lanes)), index)
    b.branch(check)
    b.position_at_end(check)
    k = b.load(index)
    b.cbranch(b.icmp_signed("<", k, size), one, done)
    b.position_at_end(one)
    b.store(b.add(k, i64(1)), index)
    b.cbranch(test(load_one(k)), one_hit, check)
    b.position_at_end(one_hit)
    b.store(k, found)
    b.branch(done)
    b.position_at_end(done)
    return b.load(found)


def _bool_extreme(em: Emitter, fn: Intrinsic, arr: ir.Value, at: ArrayType, size: ir.Value) -> ir.Value:
    """min/max/argmin/argmax of booleans (contiguous, or a 1-D view): the first element equal to the extreme
    there can be (False for min/argmin, True for max/argmax) ends the search (``_find_first``). min is then
    "no False", argmin the first False or else 0, and so on."""
    b = em.b
    want_true = fn in (Intrinsic.NP_MAX, Intrinsic.NP_ARGMAX)

    def test(x: ir.Value) -> ir.Value:
        return b.icmp_unsigned("!=" if want_true else "==", x, ir.Constant(x.type, None))

    first = _find_first(em, arr, at, size, test)
    missing = b.icmp_signed("==", first, size)
    if fn in (Intrinsic.NP_ARGMIN, Intrinsic.NP_ARGMAX):
        return b.select(missing, ir.Constant(lt.I64, 0), first)
    return b.not_(missing) if want_true else missing


def _dot(em: Emitter, args: list[ir.Value], argtypes: list[Type], rt: ScalarType) -> ir.Value:
    """The inner product of two 1-D arrays of the same length (NumPy's ValueError otherwise), in order."""
    b = em.b
    x, y = args
    xt, yt = argtypes
    assert isinstance(xt, ArrayType) and isinstance(yt, ArrayType)
    n = b.extract_value(b.extract_value(x, 1), 0)
    em.check(
        b.icmp_signed("!=", n, b.extract_value(b.extract_value(y, 1), 0)),
        "ValueError",
        "shapes not aligned: np.dot of 1-D arrays of different lengths",
    )
    total = entry_alloca(b, em.llfn, value_type(rt))
    b.store(ir.Constant(value_type(rt), 0.0 if rt.is_float else 0), total)

    def step(k: ir.Value) -> None:
        p = coerce(em, element(b, x, xt, k), xt.dtype, rt)
        q = coerce(em, element(b, y, yt, k), yt.dtype, rt)
        if rt.is_float:
            b.store(b.fadd(b.load(total), b.fmul(p, q)), total)
        else:
            b.store(b.add(b.load(total), b.mul(p, q)), total)

    loops.counted_loop(b, ir.Constant(lt.I64, 0), n, step, counter=entry_alloca(b, em.llfn, lt.I64))
    return b.load(total)


def searchsorted(em: Emitter, args: list[ir.Value], argtypes: list[Type], right: bool = False) -> ir.Value:
    """``np.searchsorted(a, x)`` (side='left'): the first index whose element is not less than ``x``, in
    NumPy's order where NaN sorts last; ``right``: the first whose element is greater than ``x``."""
    b = em.b
    arr, x = args
    at, xt = argtypes
    assert isinstance(at, ArrayType) and isinstance(xt, ScalarType)
    common = _common(at.dtype, xt)
    key = coerce(em, x, xt, common)
    lo, hi = entry_alloca(b, em.llfn, lt.I64), entry_alloca(b, em.llfn, lt.I64)
    b.store(ir.Constant(lt.I64, 0), lo)
    b.store(b.extract_value(b.extract_value(arr, 1), 0), hi)
    head, body, done = (em.llfn.append_basic_block(n) for n in ("search.head", "search.body", "search.done"))
    b.branch(head)
    b.position_at_end(head)
    b.cbranch(b.icmp_signed("<", b.load(lo), b.load(hi)), body, done)
    b.position_at_end(body)
    mid = b.add(b.load(lo), b.lshr(b.sub(b.load(hi), b.load(lo)), ir.Constant(lt.I64, 1)))
    v = coerce(em, element(b, arr, at, mid), at.dtype, common)
    if right:  # v <= x, NaN the largest: every v <= NaN
        less = b.not_(_less(b, key, v, common))
        if common.is_float:
            less = b.or_(b.and_(less, b.not_(isnan(b, v))), isnan(b, key))
    else:
        less = _less(b, v, key, common)
        if common.is_float:  # NaN is the largest: v < NaN for every number v
            less = b.or_(less, b.and_(isnan(b, key), b.not_(isnan(b, v))))
    b.store(b.select(less, b.add(mid, ir.Constant(lt.I64, 1)), b.load(lo)), lo)
    b.store(b.select(less, b.load(hi), mid), hi)
    b.branch(head)
    b.position_at_end(done)
    return b.load(lo)


def _common(a: ScalarType, b: ScalarType) -> ScalarType:
    t = promote(a, b)
    return I64 if t.kind == "b" else t
