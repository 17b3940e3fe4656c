"""LLVM lowering of the NumPy intrinsics whose result is a number (``aot.infer.npfuncs`` types them).

    np.sqrt(x), np.minimum(x, y) …   → ``aot.codegen.ufuncs.lower_scalar`` (one element)
    np.int32(x)                      → ``aot.codegen.casts.call_numpy_type``
    a.sum(), np.dot(a, b), np.linalg.norm(a), np.searchsorted(a, x)
                                     → ``aot.codegen.reductions``

``lower`` is the entry ``aot.codegen.lowering`` calls; the modules above are where each family is lowered, and
what whole-array operations (``elementwise``), axis reductions (``nparrays``) and stores (``views``) call
directly. The array walks they share are ``aot.codegen.walks``.
"""

from __future__ import annotations

from llvmlite import ir

from ..ir.ops import Intrinsic
from ..types import ArrayType, ScalarType, Type
from . import reductions
from .casts import call_numpy_type
from .context import Emitter
from .numerics import coerce
from .ufuncs import lower_scalar


def lower(em: Emitter, fn: Intrinsic, args: list[ir.Value], argtypes: list[Type], result: Type) -> ir.Value:
    """The value of a NumPy intrinsic (an ``np.`` member of ``Intrinsic``)."""
    assert isinstance(result, ScalarType)
    if fn in reductions.REDUCTIONS:
        at = argtypes[0]
        assert isinstance(at, ArrayType)
        ddof = coerce(em, args[1], argtypes[1], result) if len(args) > 1 else None  # (std/var: ddof=)
        return reductions.reduce(em, fn, args[0], at, result, ddof)
    if fn is Intrinsic.NP_DOT:
        return reductions.dot(em, args, argtypes, result)
    if fn is Intrinsic.NP_NORM:
        at = argtypes[0]
        assert isinstance(at, ArrayType)
        return reductions.norm(em, args[0], at, result)
    if fn in (Intrinsic.NP_SEARCHSORTED, Intrinsic.NP_SEARCHSORTED_RIGHT):
        return reductions.searchsorted(em, args, argtypes, right=fn is Intrinsic.NP_SEARCHSORTED_RIGHT)
    if fn is Intrinsic.NP_CAST:
        src = argtypes[0]
        assert isinstance(src, ScalarType)
        return call_numpy_type(em, args[0], src, result)
    scalars = [t for t in argtypes if isinstance(t, ScalarType)]
    assert len(scalars) == len(argtypes)
    return lower_scalar(em, fn, args, scalars, result)
