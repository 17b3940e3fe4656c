"""LLVM lowering of intrinsics: ``math`` functions with Python's errors, and builtins.

    math.sqrt(x)  →  %r = call double @llvm.sqrt.f64(double %x)
                     ; NaN from a non-NaN argument → ValueError("math domain error")
    min(a, b, c)  →  Python's pairwise rule: keep the first, take a later one only if it is smaller

The error rules are CPython's ``math_1``/``math_2``: a NaN result from non-NaN arguments is a domain
error; an infinite result from finite arguments is a range error (``OverflowError``) for the functions
that can overflow, and a domain error for the others (``log(0.0)``).
"""

from __future__ import annotations

from typing import cast

from llvmlite import ir

from ..infer.views import METHODS as VIEW_METHODS
from ..ir.ops import FLOAT_MATH_1, FLOAT_MATH_2, Intrinsic
from ..types import I64, ArrayType, ScalarType, TupleType, Type, arith_type
from . import optional, ufuncs, views, walks
from . import types as lt
from .context import Emitter
from .numerics import checked_float_to_int, coerce, frem, is_finite, python_round
from .types import value_type

_CAN_OVERFLOW = {Intrinsic.EXP, Intrinsic.EXPM1, Intrinsic.SINH, Intrinsic.COSH}
_UNARY_MATH = FLOAT_MATH_1 - {Intrinsic.FABS}
_BINARY_MATH = FLOAT_MATH_2


def _libm(em: Emitter, fn: Intrinsic, t: ScalarType, nargs: int) -> ir.Function:
    ft = value_type(t)
    name = em.ctx.target.math_symbol(fn, t)
    fnty = ir.FunctionType(ft, [ft] * nargs)
    return em.ctx.declare(name, fnty)


def _isnan(em: Emitter, v: ir.Value) -> ir.Value:
    return em.b.fcmp_unordered("uno", v, v)


def _isinf(em: Emitter, v: ir.Value) -> ir.Value:
    return em.b.fcmp_ordered("==", em.call_intrinsic("llvm.fabs", [v]), ir.Constant(v.type, float("inf")))


def lower_intrinsic(em: Emitter, fn: Intrinsic, args: list[ir.Value], argtypes: list[Type], result: Type) -> ir.Value:
    b = em.b
    if fn is Intrinsic.INDEX:  # (an integer or a boolean: aot/infer/constructs.py)
        return coerce(em, args[0], cast(ScalarType, argtypes[0]), cast(ScalarType, result))
    if fn in VIEW_METHODS:
        assert isinstance(result, ArrayType)
        return views.method(em, fn, args, argtypes, result)
    if fn in (Intrinsic.IS_NONE, Intrinsic.IS_NOT_NONE):
        found = optional.is_none(em, args[0], argtypes[0])
        return found if fn is Intrinsic.IS_NONE else b.not_(found)
    if fn is Intrinsic.FLAT_ITEM:  # (for x in a.flat: element k in C order, of any strides)
        at = argtypes[0]
        assert isinstance(at, ArrayType)
        return walks.element(b, args[0], at, args[1])
    if fn in (Intrinsic.LEN, Intrinsic.ITER_LEN):
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
    if fn in (Intrinsic.SIZE, Intrinsic.FLAT_LEN):
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

    if fn in (Intrinsic.RANGE_LEN, Intrinsic.PRANGE_LEN):
        return _range_len(em, args, argtypes)
    if fn is Intrinsic.GCD:
        return _gcd(em, args, argtypes)
    if fn is Intrinsic.NOGIL:
        return ir.Constant(lt.I8, 0)
    scalars = cast("list[ScalarType]", [t for t in argtypes])
    assert all(isinstance(t, ScalarType) for t in scalars)
    if fn in (Intrinsic.MIN, Intrinsic.MAX):
        rt = result
        assert isinstance(rt, ScalarType)
        values = [coerce(em, v, t, rt) for v, t in zip(args, scalars)]
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
        t = arith_type(scalars[0])
        v = coerce(em, args[0], scalars[0], t)
        if t.is_float:
            return em.call_intrinsic("llvm.fabs", [v])
        if not t.is_signed:
            return v
        return b.select(b.icmp_signed("<", v, ir.Constant(v.type, 0)), b.neg(v), v)
    if fn in (Intrinsic.ISNAN, Intrinsic.ISINF, Intrinsic.ISFINITE):
        t = scalars[0]
        if not t.is_float:
            return ir.Constant(lt.I1, int(fn is Intrinsic.ISFINITE))
        v = args[0]
        if fn is Intrinsic.ISNAN:
            return _isnan(em, v)
        if fn is Intrinsic.ISINF:
            return _isinf(em, v)
        return is_finite(em, v)
    if fn in (Intrinsic.FLOOR, Intrinsic.CEIL, Intrinsic.TRUNC):
        t = scalars[0]
        if not t.is_float:
            return coerce(em, args[0], t, I64)
        name = {Intrinsic.FLOOR: "llvm.floor", Intrinsic.CEIL: "llvm.ceil", Intrinsic.TRUNC: "llvm.trunc"}[fn]
        return checked_float_to_int(em, em.call_intrinsic(name, [args[0]]), t)
    if fn is Intrinsic.ROUND and len(args) == 2 and scalars[0].is_float and scalars[0].bits == 32:
        return ufuncs.lower_scalar(em, Intrinsic.NP_ROUND, args, scalars, scalars[0])  # (a NumPy float32's round)
    if fn is Intrinsic.ROUND:
        return python_round(em, args, scalars, result)
    if fn in _UNARY_MATH or fn is Intrinsic.FABS:
        rt = result
        assert isinstance(rt, ScalarType)
        x = coerce(em, args[0], scalars[0], rt)
        llvm_intrinsic = em.ctx.target.math_intrinsic(fn, rt)
        if llvm_intrinsic is not None:
            r = em.call_intrinsic(llvm_intrinsic, [x])
        else:
            r = b.call(_libm(em, fn, rt, 1), [x])
        if fn is Intrinsic.FABS:
            return r
        em.check(b.and_(_isnan(em, r), b.not_(_isnan(em, x))), "ValueError", "math domain error")
        range_error = b.and_(_isinf(em, r), is_finite(em, x))
        if fn in _CAN_OVERFLOW:
            em.check(range_error, "OverflowError", "math range error")
        else:
            em.check(range_error, "ValueError", "math domain error")
        return r
    if fn in _BINARY_MATH:
        rt = result
        assert isinstance(rt, ScalarType)
        x, y = (coerce(em, v, t, rt) for v, t in zip(args, scalars))
        if fn is Intrinsic.COPYSIGN:
            return em.call_intrinsic("llvm.copysign", [x, y])
        if fn is Intrinsic.FMOD:
            # CPython returns x for fmod(finite, ±inf); fmod(x, 0) and fmod(inf, y) are domain errors.
            r = b.select(b.and_(_isinf(em, y), is_finite(em, x)), x, frem(em, x, y))
        elif fn is Intrinsic.POWF:
            r = em.call_intrinsic("llvm.pow", [x, y])
        elif fn is Intrinsic.HYPOT and rt.bits == 64:
            r = _hypot(em, x, y)
        else:
            r = b.call(_libm(em, fn, rt, 2), [x, y])
        both_finite = b.and_(is_finite(em, x), is_finite(em, y))
        no_nan_in = b.not_(b.or_(_isnan(em, x), _isnan(em, y)))
        if fn is Intrinsic.POWF:
            with b.if_then(both_finite):
                em.check(_isnan(em, r), "ValueError", "math domain error")
                zero = ir.Constant(x.type, 0.0)
                em.check(b.and_(_isinf(em, r), b.fcmp_ordered("==", x, zero)), "ValueError", "math domain error")
                em.check(_isinf(em, r), "OverflowError", "math range error")
            return r
        em.check(b.and_(_isnan(em, r), no_nan_in), "ValueError", "math domain error")
        if fn is not Intrinsic.HYPOT:  # CPython's hypot returns inf rather than raising
            em.check(b.and_(_isinf(em, r), both_finite), "OverflowError", "math range error")
        return r
    raise NotImplementedError(f"intrinsic {fn.value} on the {em.ctx.target.owner} target")


def _hypot(em: Emitter, x: ir.Value, y: ir.Value) -> ir.Value:
    """CPython's hypot is correctly rounded (libm's may be an ulp off): square-sum in double-double, then
    one Newton correction of the square root; scaled by powers of two so nothing overflows."""
    b = em.b
    f = lambda v: ir.Constant(lt.F64, v)  # noqa: E731
    ax, ay = em.call_intrinsic("llvm.fabs", [x]), em.call_intrinsic("llvm.fabs", [y])
    hi = em.call_intrinsic("llvm.maxnum", [ax, ay])
    lo = em.call_intrinsic("llvm.minnum", [ax, ay])
    big, small = b.fcmp_ordered(">", hi, f(2.0**500)), b.fcmp_ordered("<", hi, f(2.0**-500))
    scale = b.select(big, f(2.0**-600), b.select(small, f(2.0**600), f(1.0)))
    a, c = b.fmul(hi, scale), b.fmul(lo, scale)
    p1, p2 = b.fmul(a, a), b.fmul(c, c)
    e1 = em.call_intrinsic("llvm.fma", [a, a, b.fneg(p1)])
    e2 = em.call_intrinsic("llvm.fma", [c, c, b.fneg(p2)])
    total = b.fadd(p1, p2)
    tail = b.fadd(b.fadd(e1, e2), b.fadd(b.fsub(p1, total), p2))
    h = em.call_intrinsic("llvm.sqrt", [total])
    residual = b.fadd(em.call_intrinsic("llvm.fma", [b.fneg(h), h, total]), tail)
    h = b.fadd(h, b.fdiv(residual, b.fmul(f(2.0), h)))
    h = b.fdiv(h, scale)
    h = b.select(b.fcmp_ordered("==", hi, f(0.0)), f(0.0), h)
    any_inf = b.or_(_isinf(em, x), _isinf(em, y))
    any_nan = b.or_(_isnan(em, x), _isnan(em, y))
    h = b.select(any_nan, f(float("nan")), h)
    return b.select(any_inf, f(float("inf")), h)


def _range_len(em: Emitter, args: list[ir.Value], argtypes: list[Type]) -> ir.Value:
    """``len(range(start, stop, step))`` without overflow: distances are taken as unsigned 64-bit; at most
    2**63 - 1 (what a loop counter reaches)."""
    b = em.b
    start, stop, step = (coerce(em, v, t, I64) for v, t in zip(args, argtypes))
    zero, one = ir.Constant(lt.I64, 0), ir.Constant(lt.I64, 1)
    em.check(b.icmp_signed("==", step, zero), "ValueError", "range() arg 3 must not be zero")
    up = b.icmp_signed(">", step, zero)
    lo = b.select(up, start, stop)
    hi = b.select(up, stop, start)
    magnitude = b.select(up, step, b.neg(step))
    nonempty = b.icmp_signed("<", lo, hi)
    count = b.add(b.udiv(b.sub(b.sub(hi, lo), one), magnitude), one)
    # More than 2**63 - 1 items (range(-2, 2**63 - 1)): as many as a loop can count (it was negative, and
    # the loop ran zero times).
    count = b.select(b.icmp_signed("<", count, zero), ir.Constant(lt.I64, 2**63 - 1), count)
    return b.select(nonempty, count, zero)


def _gcd(em: Emitter, args: list[ir.Value], argtypes: list[Type]) -> ir.Value:
    """``math.gcd(a, …)``: Euclid's algorithm on the magnitudes, as unsigned 64-bit (``gcd(-2**63, 0)`` is
    2**63, which wraps to -2**63 as every int result beyond i64 does); ``gcd()`` is 0."""
    b = em.b
    zero = ir.Constant(lt.I64, 0)
    result: ir.Value = zero
    for v, t in zip(args, argtypes):
        x = coerce(em, v, cast(ScalarType, t), I64)
        x = b.select(b.icmp_signed("<", x, zero), b.neg(x), x)
        entry = b.block
        head, body, done = (b.append_basic_block(f"gcd.{part}") for part in ("head", "body", "done"))
        b.branch(head)
        b.position_at_end(head)
        pa, pb = b.phi(lt.I64), b.phi(lt.I64)
        pa.add_incoming(result, entry)
        pb.add_incoming(x, entry)
        b.cbranch(b.icmp_unsigned("==", pb, zero), done, body)
        b.position_at_end(body)
        remainder = b.urem(pa, pb)
        pa.add_incoming(pb, body)
        pb.add_incoming(remainder, body)
        b.branch(head)
        b.position_at_end(done)
        result = pa
    return result
