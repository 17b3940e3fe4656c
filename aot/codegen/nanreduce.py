"""NumPy's NaN-ignoring full reductions of float arrays: ``np.nansum``, ``nanmean``, ``nanvar``, ``nanstd``,
``nanmin``, ``nanmax``, ``nanargmin``, ``nanargmax`` (of integer and boolean arrays they are the plain ones:
``aot.codegen.reductions.reduce``).

NumPy computes them on a copy with its NaNs replaced (by 0 for sums, by ±inf for ``nanarg…``), a copy laid out
as the array is in memory, which it then reduces as one contiguous run. So do these:

    nansum   0 + the pairwise sum (``reductions.pairwise_function``) over the array in memory order, NaN as 0
    nanmean  nansum / count of the numbers (divided in f64, then rounded to the array's type, as NumPy does)
    nanvar   pairwise sum of (x - nanmean)**2 over the numbers, / (count - ddof); NaN when that is <= 0
    nanmin   the least number (NaN when there is none; an empty array raises ValueError)
    nanargmin the C-order index of the first least element, NaN counting as +inf (an array of NaNs only
             raises "All-NaN slice encountered", an empty one NumPy's argmin error)
"""

from __future__ import annotations

from typing import cast

from llvmlite import ir

from ..infer.npfuncs import NAN_PLAIN
from ..ir.ops import Intrinsic
from ..types import F64, ArrayType, ScalarType, Type
from . import loops, reductions, ufuncs, walks
from . import types as lt
from .context import Emitter
from .numerics import coerce
from .types import value_type

_I64 = lambda v: ir.Constant(lt.I64, v)  # noqa: E731


def handles(fn: Intrinsic, argtypes: list[Type]) -> bool:
    """Whether ``fn(*args)`` is a NaN-ignoring reduction of a float array (of others: the plain reduction)."""
    return fn in NAN_PLAIN and isinstance(argtypes[0], ArrayType) and argtypes[0].dtype.is_float


def lower(em: Emitter, fn: Intrinsic, args: list[ir.Value], argtypes: list[Type], result: Type) -> ir.Value:
    """``np.<fn>(a)`` / ``np.<fn>(a, ddof=k)`` of a float array ``a``."""
    at = argtypes[0]
    assert isinstance(at, ArrayType) and isinstance(result, ScalarType)
    ddof = coerce(em, args[1], cast(ScalarType, argtypes[1]), result) if len(args) > 1 else None
    return nan_reduce(em, fn, args[0], at, result, ddof)


def nan_reduce(
    em: Emitter, fn: Intrinsic, arr: ir.Value, at: ArrayType, rt: ScalarType, ddof: ir.Value | None
) -> ir.Value:
    """``np.<fn>(a)`` of a float array ``a`` (``ddof``: of ``nanvar``/``nanstd``, already of type ``rt``)."""
    b = em.b
    size = walks.size_of(b, arr, at.ndim)
    if fn in (Intrinsic.NP_NANMIN, Intrinsic.NP_NANMAX):
        what = "fmin" if fn is Intrinsic.NP_NANMIN else "fmax"
        em.check(
            walks.is_empty(b, size),
            "ValueError",
            f"zero-size array to reduction operation {what} which has no identity",
        )
        return _extreme(em, fn is Intrinsic.NP_NANMIN, arr, at, size)
    if fn in (Intrinsic.NP_NANARGMIN, Intrinsic.NP_NANARGMAX):
        name = "argmin" if fn is Intrinsic.NP_NANARGMIN else "argmax"
        em.check(walks.is_empty(b, size), "ValueError", f"attempt to get {name} of an empty sequence")
        where = _arg_extreme(em, fn is Intrinsic.NP_NANARGMIN, arr, at, size)
        em.check(b.icmp_signed("<", where, _I64(0)), "ValueError", "All-NaN slice encountered")
        return where
    ordered = walks.memory_order(b, arr, at)  # (NumPy reduces a copy laid out as the array is in memory)
    total = _pairwise(em, ordered, at, rt, None, size)
    if fn is Intrinsic.NP_NANSUM:
        return total
    count = _count_numbers(em, arr, at, size)
    mean = _divided(em, total, count, rt)
    if fn is Intrinsic.NP_NANMEAN:
        return mean
    assert fn in (Intrinsic.NP_NANVAR, Intrinsic.NP_NANSTD)
    squares = _pairwise(em, ordered, at, rt, mean, size)
    dof = b.sitofp(count, value_type(F64))
    if ddof is not None:
        dof = b.fsub(dof, coerce(em, ddof, rt, F64))
    var = _divided(em, squares, dof, rt)
    nan = ir.Constant(value_type(rt), float("nan"))
    var = b.select(b.fcmp_unordered("ule", dof, ir.Constant(dof.type, 0.0)), nan, var)  # (NumPy: dof <= 0 is NaN)
    return em.call_intrinsic("llvm.sqrt", [var]) if fn is Intrinsic.NP_NANSTD else var


def _pairwise(
    em: Emitter, arr: ir.Value, at: ArrayType, rt: ScalarType, mean: ir.Value | None, size: ir.Value
) -> ir.Value:
    """0 plus the pairwise sum over all elements (NaN as 0) of ``x``, or of ``(x - mean)**2`` given ``mean``."""
    pw = reductions.pairwise_function(em, at, rt, mean is not None, skip_nan=True)
    zero = ir.Constant(value_type(rt), 0.0)  # (of no elements the pairwise sum is -0.0: 0 + -0.0 is 0.0)
    return em.b.fadd(zero, em.b.call(pw, [arr, _I64(0), size, mean if mean is not None else zero]))


def _count_numbers(em: Emitter, arr: ir.Value, at: ArrayType, size: ir.Value) -> ir.Value:
    """How many elements are not NaN (i64)."""
    b = em.b
    slot = walks.entry_alloca(b, em.llfn, lt.I64)
    b.store(_I64(0), slot)

    def one(k: ir.Value) -> None:
        x = walks.element(b, arr, at, k)
        b.store(b.add(b.load(slot), b.zext(b.not_(ufuncs.isnan(b, x)), lt.I64)), slot)

    loops.counted_loop(b, _I64(0), size, one, counter=walks.entry_alloca(b, em.llfn, lt.I64))
    return b.load(slot)


def _divided(em: Emitter, total: ir.Value, count: ir.Value, rt: ScalarType) -> ir.Value:
    """``total / count`` as NumPy's ``_divide_by_count`` computes it: in f64 (a float32 sum over an integer
    count promotes), then rounded to ``rt``; 0 / 0 is NaN."""
    b = em.b
    wide = coerce(em, total, rt, F64)
    by = count if count.type == value_type(F64) else b.sitofp(count, value_type(F64))
    return coerce(em, b.fdiv(wide, by), F64, rt)


def _extreme(em: Emitter, smaller: bool, arr: ir.Value, at: ArrayType, size: ir.Value) -> ir.Value:
    """The least (``smaller``) or greatest number of a non-empty array, NaN when it holds no number."""
    b = em.b
    d = at.dtype
    slot = walks.entry_alloca(b, em.llfn, value_type(d))
    b.store(ir.Constant(value_type(d), float("nan")), slot)

    def one(k: ir.Value) -> None:
        x, best = walks.element(b, arr, at, k), b.load(slot)
        beats = b.fcmp_ordered("<" if smaller else ">", x, best)
        take = b.and_(b.not_(ufuncs.isnan(b, x)), b.or_(ufuncs.isnan(b, best), beats))
        b.store(b.select(take, x, best), slot)

    loops.counted_loop(b, _I64(0), size, one, counter=walks.entry_alloca(b, em.llfn, lt.I64))
    return b.load(slot)


def _arg_extreme(em: Emitter, smaller: bool, arr: ir.Value, at: ArrayType, size: ir.Value) -> ir.Value:
    """The C-order index of the first least (``smaller``) or greatest element, a NaN counting as +inf (as -inf
    for the greatest), as NumPy's ``argmin`` of the copy with its NaNs replaced finds it; -1 when every element
    is NaN."""
    b = em.b
    d = at.dtype
    ft = value_type(d)
    inf = ir.Constant(ft, float("inf") if smaller else float("-inf"))
    best = walks.entry_alloca(b, em.llfn, ft)
    where = walks.entry_alloca(b, em.llfn, lt.I64)
    numbers = walks.entry_alloca(b, em.llfn, lt.I1)
    b.store(inf, best)
    b.store(_I64(0), where)
    b.store(ir.Constant(lt.I1, 0), numbers)

    def one(k: ir.Value) -> None:
        x = walks.element(b, arr, at, k)
        number = b.not_(ufuncs.isnan(b, x))
        x = b.select(number, x, inf)
        beats = b.fcmp_ordered("<" if smaller else ">", x, b.load(best))
        b.store(b.select(beats, x, b.load(best)), best)
        b.store(b.select(beats, k, b.load(where)), where)
        b.store(b.or_(b.load(numbers), number), numbers)

    loops.counted_loop(b, _I64(0), size, one, counter=walks.entry_alloca(b, em.llfn, lt.I64))
    return b.select(b.load(numbers), b.load(where), _I64(-1))
