"""NumPy's ufuncs and ``np.round``/``np.where``/``np.clip`` on one scalar (``aot.infer.npfuncs`` types them).

    np.sqrt(x)   →  %r = call double @llvm.sqrt.f64(double %x)        ; NaN for x < 0, as NumPy: no error
    np.minimum   →  NaN-propagating select (the second operand on a tie, as NumPy's loop)
    np.power     →  llvm.pow of floats; of integers by squaring, wrapping (a negative exponent: ValueError)

``lower_scalar`` lowers one element: applying a ufunc to whole arrays is one loop calling it per element
(``aot.codegen.elementwise``). ``isnan`` and ``less`` (NumPy's order of two numbers) serve the reductions too.
"""

from __future__ import annotations

import math
import struct

from llvmlite import ir

from ..infer.npfuncs import LIBM as _LIBM
from ..ir.ops import BinOpKind, Intrinsic
from ..types import BOOL, F64, I64, ScalarType
from . import types as lt
from .casts import numpy_cast
from .context import Emitter
from .numerics import coerce, convert_scalar, frem, int_binop, is_finite, python_float_divmod, truth
from .types import value_type
from .walks import entry_alloca

_LLVM_UNARY = {
    Intrinsic.NP_EXP2: "llvm.exp2",
    Intrinsic.NP_RINT: "llvm.rint",
    Intrinsic.NP_FLOOR: "llvm.floor",
    Intrinsic.NP_CEIL: "llvm.ceil",
    Intrinsic.NP_TRUNC: "llvm.trunc",
}


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


_LOGICAL = {
    Intrinsic.NP_LOGICAL_AND: ir.IRBuilder.and_,
    Intrinsic.NP_LOGICAL_OR: ir.IRBuilder.or_,
    Intrinsic.NP_LOGICAL_XOR: ir.IRBuilder.xor,
}


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
    if fn is Intrinsic.NP_LOGICAL_NOT:  # the truth of each operand (NaN is true, as bool() of it), combined
        return b.not_(truth(em, args[0], types[0]))
    if fn in _LOGICAL:
        return _LOGICAL[fn](b, truth(em, args[0], types[0]), truth(em, args[1], types[1]))
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


def less(b: ir.IRBuilder, x: ir.Value, y: ir.Value, t: ScalarType) -> ir.Value:
    """``x < y`` for numbers of type ``t`` (floats ordered: False where either is NaN; integers by their sign)."""
    if t.is_float:
        return b.fcmp_ordered("<", x, y)
    return b.icmp_signed("<", x, y) if t.is_signed else b.icmp_unsigned("<", x, y)


def _min_max(b: ir.IRBuilder, fn: Intrinsic, x: ir.Value, y: ir.Value, t: ScalarType) -> ir.Value:
    """NumPy's loops: ``minimum(x, y) = x < y ? x : y`` with NaN propagating (so a tie gives y);
    ``fmin(x, y) = y < x ? y : x`` with NaN ignored (a tie gives x); ``maximum`` and ``fmax`` alike."""
    if fn is Intrinsic.NP_MINIMUM:
        r = b.select(less(b, x, y, t), x, y)
    elif fn is Intrinsic.NP_MAXIMUM:
        r = b.select(less(b, y, x, t), x, y)
    elif fn is Intrinsic.NP_FMIN:
        r = b.select(less(b, y, x, t), y, x)
    else:
        r = b.select(less(b, x, y, t), y, x)
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
