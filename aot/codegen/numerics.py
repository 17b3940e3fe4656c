"""Python's numeric rules in LLVM IR: conversions, ``//``, ``%``, ``**``, shifts and ``round``, with CPython's errors.

    a // b   (i64)  →  sdiv, minus one where the remainder's sign differs from b's; b == 0 → ZeroDivisionError
    a % 8    (i64)  →  %r = and i64 %a, 7       (a positive constant divisor needs no division)
    x ** y   (f64)  →  call @llvm.pow.f64 (__nv_pow on PTX); 0.0 ** -1.0 → ZeroDivisionError
    round(x, 2)     →  snprintf "%.*f" then strtod: the exact decimal value of x correctly rounded (as CPython)

Each function emits through an ``Emitter`` (its builder and its error path). Integers wrap at their width, as
everywhere in compiled code (SUBSET.md); every error is the one CPython raises, with its message.
"""

from __future__ import annotations

import math

from llvmlite import ir

from ..ir import BinOpKind, CmpKind
from ..ir.ops import Intrinsic
from ..types import F64, I64, ArrayType, ListType, ScalarType, TupleType, Type, arith_type, promote
from . import optional
from . import types as lt
from .context import Emitter
from .types import value_type

FLOAT_PLAIN_OPS = {BinOpKind.ADD: "fadd", BinOpKind.SUB: "fsub", BinOpKind.MUL: "fmul"}
"""Float ops that are one LLVM instruction each (IEEE arithmetic, no Python error), by the builder's method names."""
WRAPPING_INT_OPS = {
    BinOpKind.ADD: "add",
    BinOpKind.SUB: "sub",
    BinOpKind.MUL: "mul",
    BinOpKind.AND: "and_",
    BinOpKind.OR: "or_",
    BinOpKind.XOR: "xor",
}
"""Integer ops that are one LLVM instruction each, by the builder's method names (they wrap at the type's width)."""


_PREDICATES = {CmpKind.EQ: "==", CmpKind.NE: "!=", CmpKind.LT: "<", CmpKind.LE: "<=", CmpKind.GT: ">", CmpKind.GE: ">="}


def compare(em: Emitter, op: CmpKind, lhs: ir.Value, rhs: ir.Value, t: ScalarType) -> ir.Value:
    """``lhs op rhs`` of two values of type ``t`` (an i1): NaN compares unequal to everything."""
    pred = _PREDICATES[op]
    if t.is_float:
        return em.b.fcmp_unordered(pred, lhs, rhs) if op is CmpKind.NE else em.b.fcmp_ordered(pred, lhs, rhs)
    if t.is_signed:
        return em.b.icmp_signed(pred, lhs, rhs)
    return em.b.icmp_unsigned(pred, lhs, rhs)


def tuples_equal(em: Emitter, x: ir.Value, xt: TupleType, y: ir.Value, yt: TupleType) -> ir.Value:
    """``x == y`` of two tuples (an i1): of one length and equal item by item (numbers compared in their
    promoted type, nested tuples alike), as Python compares them; Python first tests identity, so a tuple
    holding the very same NaN object equals itself there (``aot.infer.rules.tuple_equality_check``)."""
    b = em.b
    if len(xt.items) != len(yt.items):
        return ir.Constant(ir.IntType(1), 0)
    result: ir.Value = ir.Constant(ir.IntType(1), 1)
    for k, (it, jt) in enumerate(zip(xt.items, yt.items)):
        u, v = b.extract_value(x, k), b.extract_value(y, k)
        if isinstance(it, TupleType) and isinstance(jt, TupleType):
            same = tuples_equal(em, u, it, v, jt)
        else:
            assert isinstance(it, ScalarType) and isinstance(jt, ScalarType)
            common = promote(it, jt)
            same = compare(em, CmpKind.EQ, coerce(em, u, it, common), coerce(em, v, jt, common), common)
        result = b.and_(result, same)
    return result


# ------------------------------------------------------------------------------------------ conversions


def coerce(em: Emitter, value: ir.Value, src: Type, dst: Type) -> ir.Value:
    if src == dst:
        return value
    if optional.is_optional_pair(src, dst):
        return optional.convert(em, value, src, dst, coerce)
    if isinstance(src, ScalarType) and isinstance(dst, ScalarType):
        return convert_scalar(em, value, src, dst)
    if isinstance(src, TupleType) and isinstance(dst, TupleType):
        out = ir.Constant(value_type(dst), ir.Undefined)
        for i, (s, d) in enumerate(zip(src.items, dst.items)):
            out = em.b.insert_value(out, coerce(em, em.b.extract_value(value, i), s, d), i)
        return out
    if isinstance(src, ArrayType) and isinstance(dst, ArrayType):
        return value  # same layout in registers; only the static contiguity knowledge differs
    if isinstance(src, ListType) and isinstance(dst, ListType):
        return value  # (one pointer: an empty list's item type, or its arrays' layout, is all that differs)
    raise TypeError(f"cannot convert {src} to {dst}")


def convert_scalar(em: Emitter, v: ir.Value, src: ScalarType, dst: ScalarType) -> ir.Value:
    b = em.b
    if dst.kind == "b":
        return truth(em, v, src)
    if src.kind == "b":
        return b.uitofp(v, value_type(dst)) if dst.is_float else b.zext(v, value_type(dst))
    if src.is_float and dst.is_float:
        return b.fpext(v, value_type(dst)) if dst.bits > src.bits else b.fptrunc(v, value_type(dst))
    if src.is_int and dst.is_float:
        return b.sitofp(v, value_type(dst)) if src.is_signed else b.uitofp(v, value_type(dst))
    if src.is_float and dst.is_int:
        wide = b.fptosi(v, lt.I64) if dst.is_signed or dst.bits < 64 else b.fptoui(v, lt.I64)
        return b.trunc(wide, value_type(dst)) if dst.bits < 64 else wide
    if src.bits == dst.bits:
        return v
    if dst.bits < src.bits:
        return b.trunc(v, value_type(dst))
    return b.sext(v, value_type(dst)) if src.is_signed else b.zext(v, value_type(dst))


def truth(em: Emitter, v: ir.Value, t: Type) -> ir.Value:
    if isinstance(t, TupleType):
        return ir.Constant(lt.I1, int(bool(t.items)))
    assert isinstance(t, ScalarType)
    if t.kind == "b":
        return v
    if t.kind == "n":
        return ir.Constant(lt.I1, 0)
    if t.is_float:
        return em.b.fcmp_unordered("!=", v, ir.Constant(v.type, 0.0))
    return em.b.icmp_unsigned("!=", v, ir.Constant(v.type, 0))


def checked_float_to_int(em: Emitter, v: ir.Value, src: ScalarType) -> ir.Value:
    """Python's ``int(x)`` for a float: NaN → ValueError, ±inf or out of range → OverflowError."""
    b = em.b
    x = b.fpext(v, lt.F64) if src.bits == 32 else v
    em.check(b.fcmp_unordered("uno", x, x), "ValueError", "cannot convert float NaN to integer")
    in_range = b.and_(
        b.fcmp_ordered(">=", x, ir.Constant(lt.F64, -9223372036854775808.0)),
        b.fcmp_ordered("<", x, ir.Constant(lt.F64, 9223372036854775808.0)),
    )
    inf = b.fcmp_ordered("==", em.call_intrinsic("llvm.fabs", [x]), ir.Constant(lt.F64, float("inf")))
    with b.if_then(b.not_(in_range), likely=False):
        with b.if_else(inf) as (is_inf, too_big):
            with is_inf:
                em.raise_("OverflowError", "cannot convert float infinity to integer")
            with too_big:
                em.raise_("OverflowError", "int too large to convert to i64 (compiled ints are 64-bit)")
        b.unreachable()
    return b.fptosi(x, lt.I64)


# ------------------------------------------------------------------------------------------ integers


def int_binop(em: Emitter, kind: BinOpKind, a: ir.Value, b_: ir.Value, t: ScalarType) -> ir.Value:
    b = em.b
    if kind in WRAPPING_INT_OPS:  # wrapping arithmetic and bitwise ops: one LLVM instruction each
        return getattr(b, WRAPPING_INT_OPS[kind])(a, b_)
    if kind in (BinOpKind.FLOORDIV, BinOpKind.MOD):
        zero = ir.Constant(a.type, 0)
        em.check(b.icmp_unsigned("==", b_, zero), "ZeroDivisionError", "integer division or modulo by zero")
        if not t.is_signed:
            return b.udiv(a, b_) if kind is BinOpKind.FLOORDIV else b.urem(a, b_)
        minus_one = b.icmp_signed("==", b_, ir.Constant(a.type, -1))
        safe = b.select(minus_one, ir.Constant(a.type, 1), b_)
        q, r = b.sdiv(a, safe), b.srem(a, safe)
        adjust = b.and_(b.icmp_signed("!=", r, zero), b.icmp_signed("<", b.xor(r, b_), zero))
        if kind is BinOpKind.FLOORDIV:
            q = b.select(adjust, b.sub(q, ir.Constant(a.type, 1)), q)
            return b.select(minus_one, b.neg(a), q)
        r = b.select(adjust, b.add(r, b_), r)
        return b.select(minus_one, zero, r)
    if kind is BinOpKind.POW:
        return int_pow(em, a, b_, t)
    raise AssertionError(kind)


def check_true_division(em: Emitter, divisor: ir.Value, t: ScalarType) -> None:
    """``a / b`` on integers (its result is a float): ZeroDivisionError when ``b`` is zero."""
    wide = arith_type(t)
    em.check(
        em.b.icmp_unsigned("==", coerce(em, divisor, t, wide), ir.Constant(value_type(wide), 0)),
        "ZeroDivisionError",
        "division by zero",
    )


def floor_by_constant(em: Emitter, kind: BinOpKind, a: ir.Value, c: int, t: ScalarType) -> ir.Value | None:
    """Python's ``a // c`` and ``a % c`` for a positive constant ``c``, branch-free: a shift or a mask
    for powers of two; otherwise ``~a`` is non-negative when ``a`` is negative and floor division is
    ``~(~a / c)`` there, so one unsigned division (a multiply by LLVM) serves both signs."""
    b = em.b
    if c & (c - 1) == 0:
        k = c.bit_length() - 1
        if kind is BinOpKind.FLOORDIV:
            return b.ashr(a, ir.Constant(a.type, k))
        return b.and_(a, ir.Constant(a.type, c - 1))
    sign = b.ashr(a, ir.Constant(a.type, t.bits - 1))
    # a ^ sign is a or ~a: never negative. The mask says so to LLVM (it changes no value), which
    # then divides with a cheaper multiply, as for any number below 2**(bits-1).
    magnitude = b.and_(b.xor(a, sign), ir.Constant(a.type, (1 << (t.bits - 1)) - 1))
    quotient = b.xor(b.udiv(magnitude, ir.Constant(a.type, c)), sign)
    if kind is BinOpKind.FLOORDIV:
        return quotient
    return b.sub(a, b.mul(quotient, ir.Constant(a.type, c)))


def int_pow(em: Emitter, base: ir.Value, exp: ir.Value, t: ScalarType) -> ir.Value:
    """Exponentiation by squaring, wrapping like the other integer ops."""
    b = em.b
    if t.is_signed:
        em.check(
            b.icmp_signed("<", exp, ir.Constant(exp.type, 0)),
            "ValueError",
            "negative exponent in integer ** (use a float base, e.g. 2.0 ** n)",
        )
    result_slot = b.alloca(base.type)
    base_slot = b.alloca(base.type)
    exp_slot = b.alloca(exp.type)
    b.store(ir.Constant(base.type, 1), result_slot)
    b.store(base, base_slot)
    b.store(exp, exp_slot)
    head = b.append_basic_block("pow.head")
    body = b.append_basic_block("pow.body")
    done = b.append_basic_block("pow.done")
    b.branch(head)
    b.position_at_end(head)
    e = b.load(exp_slot)
    b.cbranch(b.icmp_unsigned("!=", e, ir.Constant(e.type, 0)), body, done)
    b.position_at_end(body)
    r, x = b.load(result_slot), b.load(base_slot)
    odd = b.trunc(e, lt.I1)
    b.store(b.select(odd, b.mul(r, x), r), result_slot)
    b.store(b.mul(x, x), base_slot)
    b.store(b.lshr(e, ir.Constant(e.type, 1)), exp_slot)
    b.branch(head)
    b.position_at_end(done)
    return b.load(result_slot)


def shift(em: Emitter, kind: BinOpKind, a: ir.Value, n: ir.Value, t: ScalarType) -> ir.Value:
    b = em.b
    bits = ir.Constant(a.type, t.bits)
    if t.is_signed:
        em.check(b.icmp_signed("<", n, ir.Constant(n.type, 0)), "ValueError", "negative shift count")
    big = b.icmp_unsigned(">=", n, bits)
    safe = b.select(big, ir.Constant(a.type, 0), n)
    if kind is BinOpKind.LSHIFT:
        return b.select(big, ir.Constant(a.type, 0), b.shl(a, safe))
    if t.is_signed:
        return b.select(big, b.ashr(a, ir.Constant(a.type, t.bits - 1)), b.ashr(a, safe))
    return b.select(big, ir.Constant(a.type, 0), b.lshr(a, safe))


# ------------------------------------------------------------------------------------------ floats


def float_binop(em: Emitter, kind: BinOpKind, a: ir.Value, b_: ir.Value) -> ir.Value:
    b = em.b
    zero = ir.Constant(a.type, 0.0)
    if kind in FLOAT_PLAIN_OPS:
        return getattr(b, FLOAT_PLAIN_OPS[kind])(a, b_)
    if kind is BinOpKind.TRUEDIV:
        em.check(b.fcmp_ordered("==", b_, zero), "ZeroDivisionError", "float division by zero")
        return b.fdiv(a, b_)
    if kind in (BinOpKind.FLOORDIV, BinOpKind.MOD):
        message = "float floor division by zero" if kind is BinOpKind.FLOORDIV else "float modulo"
        em.check(b.fcmp_ordered("==", b_, zero), "ZeroDivisionError", message)
        return python_float_divmod(em, a, b_)[0 if kind is BinOpKind.FLOORDIV else 1]
    if kind is BinOpKind.POW:
        return float_pow(em, a, b_)
    raise AssertionError(kind)


def python_float_divmod(em: Emitter, a: ir.Value, w: ir.Value) -> tuple[ir.Value, ir.Value]:
    """CPython's ``float_divmod``: floor quotient and a remainder with the divisor's sign."""
    b = em.b
    zero = ir.Constant(a.type, 0.0)
    mod = frem(em, a, w)
    div = b.fdiv(b.fsub(a, mod), w)
    nonzero = b.fcmp_unordered("!=", mod, zero)
    signs_differ = b.xor(b.fcmp_ordered("<", w, zero), b.fcmp_ordered("<", mod, zero))
    adjust = b.and_(nonzero, signs_differ)
    mod_adj = b.select(adjust, b.fadd(mod, w), mod)
    div_adj = b.select(adjust, b.fsub(div, ir.Constant(a.type, 1.0)), div)
    mod_final = b.select(nonzero, mod_adj, em.call_intrinsic("llvm.copysign", [zero, w]))
    floordiv = em.call_intrinsic("llvm.floor", [div_adj])
    floordiv = b.select(
        b.fcmp_ordered(">", b.fsub(div_adj, floordiv), ir.Constant(a.type, 0.5)),
        b.fadd(floordiv, ir.Constant(a.type, 1.0)),
        floordiv,
    )
    div_nonzero = b.fcmp_unordered("!=", div_adj, zero)
    quotient = b.select(div_nonzero, floordiv, em.call_intrinsic("llvm.copysign", [zero, b.fdiv(a, w)]))
    return quotient, mod_final


def float_pow(em: Emitter, x: ir.Value, y: ir.Value) -> ir.Value:
    """``x ** y`` on floats with Python's errors (a complex result is a ValueError here)."""
    b = em.b
    r = em.call_intrinsic("llvm.pow", [x, y])
    finite = b.and_(is_finite(em, x), is_finite(em, y))
    zero = ir.Constant(x.type, 0.0)
    with b.if_then(finite, likely=True):
        em.check(
            b.and_(b.fcmp_ordered("==", x, zero), b.fcmp_ordered("<", y, zero)),
            "ZeroDivisionError",
            "0.0 cannot be raised to a negative power",
        )
        em.check(
            b.fcmp_unordered("uno", r, r),
            "ValueError",
            "negative number cannot be raised to a fractional power (the result would be complex)",
        )
        em.check(b.not_(is_finite(em, r)), "OverflowError", "(34, 'Numerical result out of range')")
    return r


def frem(em: Emitter, a: ir.Value, b_: ir.Value) -> ir.Value:
    """C's ``fmod``: LLVM's ``frem``, or the target's library function where ``frem`` is inexact (PTX)."""
    library = em.ctx.target.llvm_intrinsic_symbol("frem", 32 if a.type == lt.F32 else 64)
    if library is None:
        return em.b.frem(a, b_)
    return em.b.call(em.ctx.declare(library, ir.FunctionType(a.type, [a.type, a.type])), [a, b_])


def is_finite(em: Emitter, v: ir.Value) -> ir.Value:
    return em.b.fcmp_ordered("<", em.call_intrinsic("llvm.fabs", [v]), ir.Constant(v.type, float("inf")))


# ------------------------------------------------------------------------------------------ round


def python_round(em: Emitter, args: list[ir.Value], scalars: list[ScalarType], result: Type) -> ir.Value:
    """``round(x)`` → int, halves to even; ``round(x, n)`` → float via scaling (exact for ordinary inputs)."""
    b = em.b
    t = scalars[0]
    if len(args) == 1:
        if not t.is_float:
            return coerce(em, args[0], t, I64)
        return checked_float_to_int(em, em.call_intrinsic("llvm.roundeven", [args[0]]), t)
    ndigits = coerce(em, args[1], scalars[1], I64)
    if not t.is_float and em.ctx.target.has_host_runtime:
        return _round_int(em, coerce(em, args[0], t, I64), ndigits)
    if t.is_float and em.ctx.target.has_host_runtime:
        return _round_float(em, args[0], ndigits)
    # A device (no C library formatting): by scaling, exact for ordinary inputs.
    if not t.is_float:
        # round(int, n): unchanged for n >= 0; otherwise to a multiple of 10**-n, halves to even.
        x = coerce(em, args[0], t, I64)
        xf = b.sitofp(x, lt.F64)
        p = b.call(_library_pow(em), [ir.Constant(lt.F64, 10.0), b.sitofp(b.neg(ndigits), lt.F64)])
        rounded = b.fptosi(b.fmul(em.call_intrinsic("llvm.roundeven", [b.fdiv(xf, p)]), p), lt.I64)
        return b.select(b.icmp_signed(">=", ndigits, ir.Constant(lt.I64, 0)), x, rounded)
    x = args[0]
    ft = x.type
    powf = b.call(_library_pow(em), [ir.Constant(lt.F64, 10.0), b.sitofp(_iabs(em, ndigits), lt.F64)])
    if ft != lt.F64:
        powf = b.fptrunc(powf, ft)
    positive = b.icmp_signed(">=", ndigits, ir.Constant(lt.I64, 0))
    scaled = b.select(positive, b.fmul(x, powf), b.fdiv(x, powf))
    # Python rounds the exact decimal value of x. The scaled value may have been rounded onto a half
    # (2.675 * 100 == 267.5 in floats, but 2.675 is really 2.67499…): the fused multiply-add gives the
    # exact rounding error, whose sign decides such halves.
    error = b.select(
        positive,
        em.call_intrinsic("llvm.fma", [x, powf, b.fneg(scaled)]),
        em.call_intrinsic("llvm.fma", [b.fneg(scaled), powf, x]),
    )
    down = em.call_intrinsic("llvm.floor", [scaled])
    is_half = b.fcmp_ordered("==", b.fsub(scaled, down), ir.Constant(ft, 0.5))
    nudged = b.select(b.fcmp_ordered(">", error, ir.Constant(ft, 0.0)), em.call_intrinsic("llvm.ceil", [scaled]), down)
    exact_half = b.fcmp_ordered("==", error, ir.Constant(ft, 0.0))
    r = b.select(b.and_(is_half, b.not_(exact_half)), nudged, em.call_intrinsic("llvm.roundeven", [scaled]))
    back = b.select(positive, b.fdiv(r, powf), b.fmul(r, powf))
    # Non-finite inputs, or scaling that overflows, leave x unchanged (as CPython does).
    keep = b.or_(b.not_(is_finite(em, x)), b.not_(is_finite(em, scaled)))
    return b.select(keep, x, back)


_ROUND_BUFFER = 720
"""Bytes for the text of a rounded double: ``%.323f`` of 1e308, or ``%.616e``, with sign and NUL."""


def _round_float(em: Emitter, x: ir.Value, n: ir.Value) -> ir.Value:
    """``round(x, n)`` of a double exactly as CPython computes it: the decimal value of ``x`` correctly rounded
    to ``n`` digits (halves to even), through the C library's exact formatting and ``strtod``. ``n >= 0``:
    ``"%.*f"``; ``n < 0``: ``"%.*e"`` with ``P = E + n`` digits after the point, ``E`` the decimal exponent of
    ``x`` read from ``"%.40e"`` (whose 41 digits never carry into the next exponent nor hide a value above a
    half for any double); ``P == -1`` rounds to 0 or ``10**-n`` by the leading digits. NaN and infinities
    round to themselves; ``n > 323`` gives ``x``, ``n < -308`` a signed zero; a result beyond the doubles raises
    CPython's ``OverflowError``."""
    b = em.b
    ctx = em.ctx
    snprintf = ctx.declare("snprintf", ir.FunctionType(lt.I32, [lt.PTR, lt.I64, lt.PTR], var_arg=True))
    strtod = ctx.declare("strtod", ir.FunctionType(lt.F64, [lt.PTR, lt.PTR]))
    strtol = ctx.declare("strtol", ir.FunctionType(lt.I64, [lt.PTR, lt.PTR, lt.I32]))
    memcmp = ctx.declare("memcmp", ir.FunctionType(lt.I32, [lt.PTR, lt.PTR, lt.I64]))
    with b.goto_entry_block():
        slot = b.alloca(lt.F64, name="round.value")
        text = b.alloca(ir.ArrayType(lt.I8, _ROUND_BUFFER), name="round.text")
    buf = b.gep(text, [ir.Constant(lt.I64, 0), ir.Constant(lt.I64, 0)])
    size = ir.Constant(lt.I64, _ROUND_BUFFER)
    null = ir.Constant(lt.PTR, None)

    def show(fmt: str, *values: ir.Value) -> None:
        b.call(snprintf, [buf, size, ctx.cstring(fmt), *values])

    def i32(v: ir.Value) -> ir.Value:
        return b.trunc(v, lt.I32)

    b.store(x, slot)
    zero = ir.Constant(lt.I64, 0)
    signed_zero = em.call_intrinsic("llvm.copysign", [ir.Constant(lt.F64, 0.0), x])
    with b.if_then(is_finite(em, x)):
        with b.if_else(b.icmp_signed(">=", n, zero)) as (places, tens):
            with places:
                with b.if_then(b.icmp_signed("<=", n, ir.Constant(lt.I64, 323))):
                    show("%.*f", i32(n), x)
                    b.store(b.call(strtod, [buf, null]), slot)
            with tens:
                with b.if_else(b.icmp_signed("<", n, ir.Constant(lt.I64, -308))) as (tiny, ordinary):
                    with tiny:
                        b.store(signed_zero, slot)
                    with ordinary:
                        show("%.40e", em.call_intrinsic("llvm.fabs", [x]))
                        exponent = b.call(
                            strtol, [b.gep(buf, [ir.Constant(lt.I64, 43)]), null, ir.Constant(lt.I32, 10)]
                        )
                        digits = b.add(exponent, n)
                        with b.if_else(b.icmp_signed(">=", digits, zero)) as (enough, fewer):
                            with enough:
                                show("%.*e", i32(digits), x)
                                rounded = b.call(strtod, [buf, null])
                                em.check(
                                    b.fcmp_ordered(
                                        "==", em.call_intrinsic("llvm.fabs", [rounded]), ir.Constant(lt.F64, math.inf)
                                    ),
                                    "OverflowError",
                                    "rounded value too large to represent",
                                )
                                b.store(rounded, slot)
                            with fewer:  # (|x| < 10**-n: 0 or 10**-n, by the leading digit and the rest)
                                lead = b.load(buf)
                                rest = b.call(
                                    memcmp,
                                    [
                                        b.gep(buf, [ir.Constant(lt.I64, 2)]),
                                        ctx.cstring("0" * 40),
                                        ir.Constant(lt.I64, 40),
                                    ],
                                )
                                five = ir.Constant(lt.I8, ord("5"))
                                above = b.or_(
                                    b.icmp_unsigned(">", lead, five),
                                    b.and_(
                                        b.icmp_unsigned("==", lead, five),
                                        b.icmp_signed("!=", rest, ir.Constant(lt.I32, 0)),
                                    ),
                                )
                                up = b.and_(b.icmp_signed("==", digits, ir.Constant(lt.I64, -1)), above)
                                b.store(signed_zero, slot)
                                with b.if_then(up):
                                    show("1e%lld", b.neg(n))
                                    power = b.call(strtod, [buf, null])
                                    b.store(em.call_intrinsic("llvm.copysign", [power, x]), slot)
    return b.load(slot)


def _round_int(em: Emitter, x: ir.Value, n: ir.Value) -> ir.Value:
    """``round(x, n)`` of an int as CPython computes it: ``x`` for ``n >= 0``, else the nearest multiple of
    ``10**-n`` (halves to even), wrapped to 64 bits as all int results are (``10**19`` is beyond them: there
    the result is 0 or +-10**19 wrapped)."""
    b = em.b

    def i64(v: int) -> ir.Constant:
        return ir.Constant(lt.I64, v)

    k = b.neg(n)
    power: ir.Value = i64(1)
    for j in range(1, 19):
        power = b.select(b.icmp_signed("==", k, i64(j)), i64(10**j), power)
    q, r = b.sdiv(x, power), b.srem(x, power)
    negative = b.icmp_signed("<", r, i64(0))  # (floor division: the remainder takes the divisor's sign)
    q = b.select(negative, b.sub(q, i64(1)), q)
    r = b.select(negative, b.add(r, power), r)
    twice = b.shl(r, i64(1))
    odd = b.icmp_signed("!=", b.and_(q, i64(1)), i64(0))
    up = b.or_(b.icmp_signed(">", twice, power), b.and_(b.icmp_signed("==", twice, power), odd))
    rounded = b.mul(b.select(up, b.add(q, i64(1)), q), power)
    wrapped = (10**19 + 2**63) % 2**64 - 2**63  # (10**19 as an i64)
    half = 5 * 10**18
    nineteen = b.select(
        b.icmp_signed(">", x, i64(half)),
        i64(wrapped),
        b.select(b.icmp_signed("<", x, i64(-half)), i64(-wrapped), i64(0)),
    )
    rounded = b.select(b.icmp_signed("==", k, i64(19)), nineteen, rounded)
    rounded = b.select(b.icmp_unsigned(">", k, i64(19)), i64(0), rounded)  # (k < 0 too: n was -2**63)
    return b.select(b.icmp_signed(">=", n, i64(0)), x, rounded)


def _iabs(em: Emitter, v: ir.Value) -> ir.Value:
    return em.b.select(em.b.icmp_signed("<", v, ir.Constant(lt.I64, 0)), em.b.neg(v), v)


def _library_pow(em: Emitter) -> ir.Function:
    """The C library's ``pow`` on f64 (libdevice's ``__nv_pow`` on PTX)."""
    return em.ctx.declare(em.ctx.target.math_symbol(Intrinsic.POWF, F64), ir.FunctionType(lt.F64, [lt.F64, lt.F64]))
