"""Whole-array operations in LLVM IR: one loop applying a scalar lowering to every element of a new array.

    %r: f64[::1] = binop mul %a, %2      →  broadcast shape; allocate; for i: r[i] = a[i] * 2.0

``lower`` broadcasts its operands (NumPy's rules: ``ValueError`` for shapes that do not broadcast), allocates the
result (``aot.codegen.arrays.allocate``) and fills it in C order. When every array operand is contiguous and of
the result's shape — the common case — one flat loop over plain element pointers runs, which LLVM vectorises as
it does a hand-written loop; otherwise nested loops read each operand through its strides (a broadcast axis
with stride 0). The element functions are the scalar ones: ``aot.codegen.npfuncs.lower_scalar`` for ufuncs and
for ``/ // % **`` (NumPy's semantics: no ZeroDivisionError), plain wrapping arithmetic for ``+ - *``.
``inplace`` is ``a op= b``: the result computed as a new array, then copied into ``a`` by slice assignment
(``aot.codegen.views.assign``: broadcasting, the cast back), so that an operand overlapping ``a`` reads its
old values, as in NumPy.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from ..ir.ops import BinOpKind, CmpKind, Intrinsic, UnaryKind
from ..types import ArrayType, ScalarType, Type
from . import arrays, npfuncs, views
from . import types as lt
from .context import Emitter
from .numerics import coerce, compare
from .types import memory_type

Element = Callable[[list[ir.Value]], ir.Value]
"""Computes one result element from the operands' elements (each of its operand's element type)."""

_NUMPY_OF = {
    BinOpKind.TRUEDIV: Intrinsic.NP_DIVIDE,
    BinOpKind.FLOORDIV: Intrinsic.NP_FLOOR_DIVIDE,
    BinOpKind.MOD: Intrinsic.NP_REMAINDER,
    BinOpKind.POW: Intrinsic.NP_POWER,
}
_FLOAT = {BinOpKind.ADD: "fadd", BinOpKind.SUB: "fsub", BinOpKind.MUL: "fmul"}
_INT = {
    BinOpKind.ADD: "add",
    BinOpKind.SUB: "sub",
    BinOpKind.MUL: "mul",
    BinOpKind.AND: "and_",
    BinOpKind.OR: "or_",
    BinOpKind.XOR: "xor",
}


def element_type(t: Type) -> ScalarType:
    if isinstance(t, ArrayType):
        return t.dtype
    assert isinstance(t, ScalarType)
    return t


def binop_element(em: Emitter, kind: BinOpKind, types: list[Type], rt: ScalarType) -> Element:
    """One element of ``a op b`` in NumPy's semantics, computed in (and giving) ``rt``."""
    ts = [element_type(t) for t in types]

    def one(values: list[ir.Value]) -> ir.Value:
        if kind in _NUMPY_OF:
            return npfuncs.lower_scalar(em, _NUMPY_OF[kind], values, ts, rt)
        x, y = (coerce(em, v, t, rt) for v, t in zip(values, ts))
        name = _FLOAT[kind] if rt.is_float else _INT[kind]
        return getattr(em.b, name)(x, y)

    return one


def compare_element(em: Emitter, op: CmpKind, types: list[Type], common: ScalarType) -> Element:
    ts = [element_type(t) for t in types]

    def one(values: list[ir.Value]) -> ir.Value:
        x, y = (coerce(em, v, t, common) for v, t in zip(values, ts))
        return compare(em, op, x, y, common)

    return one


def unary_element(em: Emitter, op: UnaryKind, rt: ScalarType) -> Element:
    def one(values: list[ir.Value]) -> ir.Value:
        (x,) = values
        if op is UnaryKind.NEG:
            return em.b.fneg(x) if rt.is_float else em.b.neg(x)
        if op is UnaryKind.INVERT:
            return em.b.not_(x)
        return x

    return one


def ufunc_element(em: Emitter, fn: Intrinsic, types: list[Type], rt: ScalarType) -> Element:
    ts = [element_type(t) for t in types]
    return lambda values: npfuncs.lower_scalar(em, fn, values, ts, rt)


def cast_element(em: Emitter, src: ScalarType, dst: ScalarType) -> Element:
    """``a.astype(dst)``: NumPy's C casts (wrapping between integers). A float to an integer truncates; NaN,
    infinities and values out of range are undefined in C, and give what NumPy gives on x86-64: the conversion
    goes through i32 for i32 and narrower types, through i64 for the rest, and one out of that range gives the
    range's minimum (truncated to the type); u64 takes values up to 2**64 as they are."""

    def one(values: list[ir.Value]) -> ir.Value:
        (x,) = values
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

    return one


def lower(
    em: Emitter,
    operands: list[tuple[ir.Value, Type]],
    result: ArrayType,
    element: Element,
    hold: Callable[[ir.Value], None] | None = None,
    reusable: list[bool] | None = None,
) -> ir.Value:
    """A new array (a new reference) of the operands broadcast, each element ``element(operand elements)``.
    ``hold(array)`` is called once it is allocated, before it is filled (so that an error raised while filling,
    such as an integer power's, releases it). ``reusable[k]``: operand ``k`` is a temporary no other code reads
    (an expression's intermediate result), whose memory is written in place of a new array when it is the
    only reference to it and already of the result's dtype and shape (NumPy's temporary elision: ``a * 2.0 +
    b`` allocates once)."""
    b = em.b
    nd = result.ndim
    one = ir.Constant(lt.I64, 1)
    shape: list[ir.Value] = [one] * nd
    bad: ir.Value = ir.Constant(lt.I1, 0)
    parts: list[tuple[ir.Value, list[ir.Value], list[ir.Value]] | None] = []
    for value, t in operands:
        if not isinstance(t, ArrayType):
            parts.append(None)
            continue
        data, dims, strides = views.parts(em, value, t)
        parts.append((data, dims, strides))
        lead = nd - t.ndim
        for k, n in enumerate(dims):
            current = shape[lead + k]
            differ = b.and_(b.icmp_signed("!=", n, current), b.icmp_signed("!=", current, one))
            bad = b.or_(bad, b.and_(differ, b.icmp_signed("!=", n, one)))
            shape[lead + k] = b.select(b.icmp_signed("==", current, one), n, current)
    em.check(bad, "ValueError", "operands could not be broadcast together (their shapes differ)")
    out = _reuse_or_allocate(em, operands, reusable or [False] * len(operands), result, shape)
    if hold is not None:
        hold(out)
    out_data = b.extract_value(out, arrays.DATA)
    fast: ir.Value = ir.Constant(lt.I1, 1)
    for (_, t), got in zip(operands, parts):
        if got is None:
            continue
        assert isinstance(t, ArrayType)
        if t.ndim != nd:
            fast = ir.Constant(lt.I1, 0)
            continue
        data, dims, strides = got
        for n, m in zip(dims, shape):
            fast = b.and_(fast, b.icmp_signed("==", n, m))
        if t.layout != "C":
            fast = b.and_(fast, views.is_contiguous(em, dims, strides, t.dtype))
    scalars = [value if got is None else None for (value, _), got in zip(operands, parts)]

    def store(ptr: ir.Value, v: ir.Value) -> None:
        b.store(b.zext(v, lt.I8) if result.dtype.kind == "b" else v, ptr)

    def load(ptr: ir.Value, t: ArrayType) -> ir.Value:
        v = b.load(ptr)
        return b.icmp_unsigned("!=", v, ir.Constant(lt.I8, 0)) if t.dtype.kind == "b" else v

    with b.if_else(fast) as (dense, strided):
        with dense:
            size: ir.Value = one
            for n in shape:
                size = b.mul(size, n)
            typed = [
                None if got is None else b.bitcast(got[0], memory_type(element_type(t)).as_pointer())
                for (_, t), got in zip(operands, parts)
            ]

            def flat(i: ir.Value) -> None:
                values = [
                    s if p is None else load(b.gep(p, [i], inbounds=True), t)  # type: ignore[arg-type]
                    for s, p, (_, t) in zip(scalars, typed, operands)
                ]
                store(b.gep(out_data, [i], inbounds=True), element(values))

            arrays._loop(em, ir.Constant(lt.I64, 0), size, flat, "ewise")
        with strided:
            aligned: list[list[ir.Value] | None] = []
            for (_, t), got in zip(operands, parts):
                if got is None:
                    aligned.append(None)
                    continue
                assert isinstance(t, ArrayType)
                _, dims, strides = got
                zero = ir.Constant(lt.I64, 0)
                missing = [zero] * (nd - t.ndim)
                aligned.append(
                    missing + [b.select(b.icmp_signed("==", n, one), zero, s) for n, s in zip(dims, strides)]
                )
            out_strides = views.c_strides(em, shape, result.dtype)

            def nested(idx: list[ir.Value]) -> None:
                values = []
                for s, got, st, (_, t) in zip(scalars, parts, aligned, operands):
                    if got is None or st is None:
                        values.append(s)
                    else:
                        assert isinstance(t, ArrayType)
                        values.append(load(views.element(em, got[0], st, idx), t))
                store(views.element(em, out_data, out_strides, idx), element(values))

            views.nd_loop(em, shape, nested)
    return out


def _reuse_or_allocate(
    em: Emitter, operands: list[tuple[ir.Value, Type]], reusable: list[bool], result: ArrayType, shape: list[ir.Value]
) -> ir.Value:
    b = em.b
    candidates = [
        value
        for (value, t), ok in zip(operands, reusable)
        if ok and isinstance(t, ArrayType) and t.layout == "C" and t.dtype == result.dtype and t.ndim == result.ndim
    ]
    if not candidates or not arrays.refcounted(em.ctx):
        return arrays.allocate(em, result, shape)[0]
    value = candidates[0]
    owner = b.extract_value(value, arrays.OWNER)
    with b.goto_entry_block():
        slot = b.alloca(value.type, name="ewise.out")
        sole = b.alloca(lt.I1, name="ewise.sole")
    b.store(ir.Constant(lt.I1, 0), sole)
    with b.if_then(b.icmp_unsigned("!=", owner, ir.Constant(lt.PTR, None))):  # (memory compiled code owns)
        alone: ir.Value = b.icmp_signed("==", b.load(b.bitcast(owner, lt.I64.as_pointer())), ir.Constant(lt.I64, 1))
        for n, m in zip(arrays.shape_of(b, value, result.ndim), shape):
            alone = b.and_(alone, b.icmp_signed("==", n, m))
        b.store(alone, sole)
    with b.if_else(b.load(sole)) as (reuse, fresh):
        with reuse:
            arrays.incref(em.ctx, b, value, result)  # (the result is a new reference, as a new array is)
            b.store(value, slot)
        with fresh:
            b.store(arrays.allocate(em, result, shape)[0], slot)
    return b.load(slot)


def inplace(
    em: Emitter, kind: BinOpKind, target: ir.Value, tt: ArrayType, value: ir.Value, vt: Type, computed: ArrayType
) -> None:
    """``target op= value``: the result (of dtype ``computed.dtype``) into ``target``, cast to its dtype."""
    temp = lower(em, [(target, tt), (value, vt)], computed, binop_element(em, kind, [tt, vt], computed.dtype))
    views.assign(em, target, tt, temp, computed)
    arrays.decref(em.ctx, em.b, temp, computed)
