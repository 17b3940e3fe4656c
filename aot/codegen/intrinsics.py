"""LLVM lowering of intrinsics: ``math`` functions with Python's errors, and builtins.

    math.sqrt(x)  →  %r = call double @llvm.sqrt.f64(double %x)
                     ; NaN from a non-NaN argument → ValueError("math domain error")
    min(a, b, c)  →  Python's pairwise rule: keep the first, take a later one only if it is smaller

The error rules are CPython's ``math_1``/``math_2``: a NaN result from non-NaN arguments is a domain
error; an infinite result from finite arguments is a range error (``OverflowError``) for the functions
that can overflow, and a domain error for the others (``log(0.0)``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from llvmlite import ir

from ..ir.ops import Intrinsic
from ..types import F64, I64, ArrayType, ScalarType, TupleType, Type, arith_type
from . import types as lt
from .types import value_type

if TYPE_CHECKING:
    from .function import FunctionCodegen

_CAN_OVERFLOW = {Intrinsic.EXP, Intrinsic.EXPM1, Intrinsic.SINH, Intrinsic.COSH}
_LLVM_NATIVE = {Intrinsic.SQRT: "llvm.sqrt", Intrinsic.FABS: "llvm.fabs"}
_UNARY_MATH = {
    Intrinsic.SQRT, Intrinsic.EXP, Intrinsic.LOG, Intrinsic.LOG2, Intrinsic.LOG10, Intrinsic.LOG1P,
    Intrinsic.EXPM1, Intrinsic.SIN, Intrinsic.COS, Intrinsic.TAN, Intrinsic.ASIN, Intrinsic.ACOS,
    Intrinsic.ATAN, Intrinsic.SINH, Intrinsic.COSH, Intrinsic.TANH,
}
_BINARY_MATH = {Intrinsic.ATAN2, Intrinsic.HYPOT, Intrinsic.FMOD, Intrinsic.POWF, Intrinsic.COPYSIGN}


def _libm(cg: "FunctionCodegen", fn: Intrinsic, t: ScalarType, nargs: int) -> ir.Function:
    ft = value_type(t)
    name = cg.ctx.target.math_symbol(fn, t)
    fnty = ir.FunctionType(ft, [ft] * nargs)
    return cg.ctx.declare(name, fnty)


def _isnan(cg: "FunctionCodegen", v: ir.Value) -> ir.Value:
    return cg.b.fcmp_unordered("uno", v, v)


def _isinf(cg: "FunctionCodegen", v: ir.Value) -> ir.Value:
    return cg.b.fcmp_ordered("==", cg.call_intrinsic("llvm.fabs", [v]), ir.Constant(v.type, float("inf")))


def lower_intrinsic(cg: "FunctionCodegen", fn: Intrinsic, args: list[ir.Value], argtypes: list[Type],
                    result: Type) -> ir.Value:
    b = cg.b
    if fn is Intrinsic.LEN:
        t = argtypes[0]
        if isinstance(t, TupleType):
            return ir.Constant(lt.I64, len(t.items))
        return b.extract_value(b.extract_value(args[0], 1), 0)
    if fn is Intrinsic.SHAPE:
        shape = b.extract_value(args[0], 1)
        at = argtypes[0]
        assert isinstance(at, ArrayType)
        out = ir.Constant(value_type(result), ir.Undefined)
        for k in range(at.ndim):
            out = b.insert_value(out, b.extract_value(shape, k), k)
        return out
    if fn is Intrinsic.SIZE:
        at = argtypes[0]
        assert isinstance(at, ArrayType)
        shape = b.extract_value(args[0], 1)
        size: ir.Value = ir.Constant(lt.I64, 1)
        for k in range(at.ndim):
            size = b.mul(size, b.extract_value(shape, k))
        return size
    if fn is Intrinsic.NDIM:
        at = argtypes[0]
        assert isinstance(at, ArrayType)
        return ir.Constant(lt.I64, at.ndim)

    if fn is Intrinsic.RANGE_LEN:
        return _range_len(cg, args, argtypes)
    scalars = [t for t in argtypes]
    assert all(isinstance(t, ScalarType) for t in scalars)
    if fn in (Intrinsic.MIN, Intrinsic.MAX):
        rt = result
        assert isinstance(rt, ScalarType)
        values = [cg.coerce(v, t, rt) for v, t in zip(args, scalars)]
        best = values[0]
        for v in values[1:]:
            if rt.is_float:
                better = b.fcmp_ordered("<" if fn is Intrinsic.MIN else ">", v, best)
            elif rt.is_signed:
                better = b.icmp_signed("<" if fn is Intrinsic.MIN else ">", v, best)
            else:
                better = b.icmp_unsigned("<" if fn is Intrinsic.MIN else ">", v, best)
            best = b.select(better, v, best)
        return best
    if fn is Intrinsic.ABS:
        t = arith_type(scalars[0])  # type: ignore[arg-type]
        v = cg.coerce(args[0], scalars[0], t)
        if t.is_float:
            return cg.call_intrinsic("llvm.fabs", [v])
        if not t.is_signed:
            return v
        return b.select(b.icmp_signed("<", v, ir.Constant(v.type, 0)), b.neg(v), v)
    if fn in (Intrinsic.ISNAN, Intrinsic.ISINF, Intrinsic.ISFINITE):
        t = scalars[0]
        if not t.is_float:  # type: ignore[union-attr]
            return ir.Constant(lt.I1, int(fn is Intrinsic.ISFINITE))
        v = args[0]
        if fn is Intrinsic.ISNAN:
            return _isnan(cg, v)
        if fn is Intrinsic.ISINF:
            return _isinf(cg, v)
        return cg.is_finite(v)
    if fn in (Intrinsic.FLOOR, Intrinsic.CEIL, Intrinsic.TRUNC):
        t = scalars[0]
        if not t.is_float:  # type: ignore[union-attr]
            return cg.coerce(args[0], t, I64)
        name = {Intrinsic.FLOOR: "llvm.floor", Intrinsic.CEIL: "llvm.ceil", Intrinsic.TRUNC: "llvm.trunc"}[fn]
        return cg.checked_float_to_int(cg.call_intrinsic(name, [args[0]]), t)  # type: ignore[arg-type]
    if fn is Intrinsic.ROUND:
        return _round(cg, args, scalars, result)  # type: ignore[arg-type]
    if fn in _UNARY_MATH or fn is Intrinsic.FABS:
        rt = result
        assert isinstance(rt, ScalarType)
        x = cg.coerce(args[0], scalars[0], rt)
        if fn in _LLVM_NATIVE and cg.ctx.target.owner == "cpu":
            r = cg.call_intrinsic(_LLVM_NATIVE[fn], [x])
        else:
            r = b.call(_libm(cg, fn, rt, 1), [x])
        if fn is Intrinsic.FABS:
            return r
        cg.check(b.and_(_isnan(cg, r), b.not_(_isnan(cg, x))), "ValueError", "math domain error")
        range_error = b.and_(_isinf(cg, r), cg.is_finite(x))
        if fn in _CAN_OVERFLOW:
            cg.check(range_error, "OverflowError", "math range error")
        else:
            cg.check(range_error, "ValueError", "math domain error")
        return r
    if fn in _BINARY_MATH:
        rt = result
        assert isinstance(rt, ScalarType)
        x, y = (cg.coerce(v, t, rt) for v, t in zip(args, scalars))
        if fn is Intrinsic.COPYSIGN:
            return cg.call_intrinsic("llvm.copysign", [x, y])
        if fn is Intrinsic.FMOD:
            # CPython returns x for fmod(finite, ±inf); fmod(x, 0) and fmod(inf, y) are domain errors.
            r = b.select(b.and_(_isinf(cg, y), cg.is_finite(x)), x, cg.frem(x, y))
        elif fn is Intrinsic.POWF:
            r = cg.call_intrinsic("llvm.pow", [x, y])
        elif fn is Intrinsic.HYPOT and rt.bits == 64:
            r = _hypot(cg, x, y)
        else:
            r = b.call(_libm(cg, fn, rt, 2), [x, y])
        both_finite = b.and_(cg.is_finite(x), cg.is_finite(y))
        no_nan_in = b.not_(b.or_(_isnan(cg, x), _isnan(cg, y)))
        if fn is Intrinsic.POWF:
            with b.if_then(both_finite):
                cg.check(_isnan(cg, r), "ValueError", "math domain error")
                zero = ir.Constant(x.type, 0.0)
                cg.check(b.and_(_isinf(cg, r), b.fcmp_ordered("==", x, zero)), "ValueError", "math domain error")
                cg.check(_isinf(cg, r), "OverflowError", "math range error")
            return r
        cg.check(b.and_(_isnan(cg, r), no_nan_in), "ValueError", "math domain error")
        if fn is not Intrinsic.HYPOT:  # CPython's hypot returns inf rather than raising
            cg.check(b.and_(_isinf(cg, r), both_finite), "OverflowError", "math range error")
        return r
    raise NotImplementedError(f"intrinsic {fn.value} on the {cg.ctx.target.owner} target")


def _round(cg: "FunctionCodegen", args: list[ir.Value], scalars: list[ScalarType], result: Type) -> ir.Value:
    """``round(x)`` → int, halves to even; ``round(x, n)`` → float via scaling (exact for ordinary inputs)."""
    b = cg.b
    t = scalars[0]
    if len(args) == 1:
        if not t.is_float:
            return cg.coerce(args[0], t, I64)
        return cg.checked_float_to_int(cg.call_intrinsic("llvm.roundeven", [args[0]]), t)
    ndigits = cg.coerce(args[1], scalars[1], I64)
    if not t.is_float:
        # round(int, n): unchanged for n >= 0; otherwise to a multiple of 10**-n, halves to even.
        x = cg.coerce(args[0], t, I64)
        xf = b.sitofp(x, lt.F64)
        p = b.call(_pow(cg), [ir.Constant(lt.F64, 10.0), b.sitofp(b.neg(ndigits), lt.F64)])
        rounded = b.fptosi(b.fmul(cg.call_intrinsic("llvm.roundeven", [b.fdiv(xf, p)]), p), lt.I64)
        return b.select(b.icmp_signed(">=", ndigits, ir.Constant(lt.I64, 0)), x, rounded)
    x = args[0]
    ft = x.type
    powf = b.call(_pow(cg), [ir.Constant(lt.F64, 10.0), b.sitofp(_iabs(cg, ndigits), lt.F64)])
    if ft != lt.F64:
        powf = b.fptrunc(powf, ft)
    positive = b.icmp_signed(">=", ndigits, ir.Constant(lt.I64, 0))
    scaled = b.select(positive, b.fmul(x, powf), b.fdiv(x, powf))
    # Python rounds the exact decimal value of x. The scaled value may have been rounded onto a half
    # (2.675 * 100 == 267.5 in floats, but 2.675 is really 2.67499…): the fused multiply-add gives the
    # exact rounding error, whose sign decides such halves.
    error = b.select(positive, cg.call_intrinsic("llvm.fma", [x, powf, b.fneg(scaled)]),
                     cg.call_intrinsic("llvm.fma", [b.fneg(scaled), powf, x]))
    down = cg.call_intrinsic("llvm.floor", [scaled])
    is_half = b.fcmp_ordered("==", b.fsub(scaled, down), ir.Constant(ft, 0.5))
    nudged = b.select(b.fcmp_ordered(">", error, ir.Constant(ft, 0.0)),
                      cg.call_intrinsic("llvm.ceil", [scaled]), down)
    exact_half = b.fcmp_ordered("==", error, ir.Constant(ft, 0.0))
    r = b.select(b.and_(is_half, b.not_(exact_half)), nudged, cg.call_intrinsic("llvm.roundeven", [scaled]))
    back = b.select(positive, b.fdiv(r, powf), b.fmul(r, powf))
    # Non-finite inputs, or scaling that overflows, leave x unchanged (as CPython does).
    keep = b.or_(b.not_(cg.is_finite(x)), b.not_(cg.is_finite(scaled)))
    return b.select(keep, x, back)


def _hypot(cg: "FunctionCodegen", x: ir.Value, y: ir.Value) -> ir.Value:
    """CPython's hypot is correctly rounded (libm's may be an ulp off): square-sum in double-double, then
    one Newton correction of the square root; scaled by powers of two so nothing overflows."""
    b = cg.b
    f = lambda v: ir.Constant(lt.F64, v)  # noqa: E731
    ax, ay = cg.call_intrinsic("llvm.fabs", [x]), cg.call_intrinsic("llvm.fabs", [y])
    hi = cg.call_intrinsic("llvm.maxnum", [ax, ay])
    lo = cg.call_intrinsic("llvm.minnum", [ax, ay])
    big, small = b.fcmp_ordered(">", hi, f(2.0 ** 500)), b.fcmp_ordered("<", hi, f(2.0 ** -500))
    scale = b.select(big, f(2.0 ** -600), b.select(small, f(2.0 ** 600), f(1.0)))
    a, c = b.fmul(hi, scale), b.fmul(lo, scale)
    p1, p2 = b.fmul(a, a), b.fmul(c, c)
    e1 = cg.call_intrinsic("llvm.fma", [a, a, b.fneg(p1)])
    e2 = cg.call_intrinsic("llvm.fma", [c, c, b.fneg(p2)])
    total = b.fadd(p1, p2)
    tail = b.fadd(b.fadd(e1, e2), b.fadd(b.fsub(p1, total), p2))
    h = cg.call_intrinsic("llvm.sqrt", [total])
    residual = b.fadd(cg.call_intrinsic("llvm.fma", [b.fneg(h), h, total]), tail)
    h = b.fadd(h, b.fdiv(residual, b.fmul(f(2.0), h)))
    h = b.fdiv(h, scale)
    h = b.select(b.fcmp_ordered("==", hi, f(0.0)), f(0.0), h)
    any_inf = b.or_(_isinf(cg, x), _isinf(cg, y))
    any_nan = b.or_(_isnan(cg, x), _isnan(cg, y))
    h = b.select(any_nan, f(float("nan")), h)
    return b.select(any_inf, f(float("inf")), h)


def _range_len(cg: "FunctionCodegen", args: list[ir.Value], argtypes: list[Type]) -> ir.Value:
    """``len(range(start, stop, step))`` without overflow: distances are taken as unsigned 64-bit."""
    b = cg.b
    start, stop, step = (cg.coerce(v, t, I64) for v, t in zip(args, argtypes))
    zero, one = ir.Constant(lt.I64, 0), ir.Constant(lt.I64, 1)
    cg.check(b.icmp_signed("==", step, zero), "ValueError", "range() arg 3 must not be zero")
    up = b.icmp_signed(">", step, zero)
    lo = b.select(up, start, stop)
    hi = b.select(up, stop, start)
    magnitude = b.select(up, step, b.neg(step))
    nonempty = b.icmp_signed("<", lo, hi)
    count = b.add(b.udiv(b.sub(b.sub(hi, lo), one), magnitude), one)
    return b.select(nonempty, count, zero)


def _iabs(cg: "FunctionCodegen", v: ir.Value) -> ir.Value:
    return cg.b.select(cg.b.icmp_signed("<", v, ir.Constant(lt.I64, 0)), cg.b.neg(v), v)


def _pow(cg: "FunctionCodegen") -> ir.Function:
    """The C library's ``pow`` on f64 (libdevice's ``__nv_pow`` on PTX)."""
    return cg.ctx.declare(cg.ctx.target.math_symbol(Intrinsic.POWF, F64), ir.FunctionType(lt.F64, [lt.F64, lt.F64]))
