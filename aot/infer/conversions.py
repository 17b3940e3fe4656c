"""Typing NumPy's conversions of an array (``aot/intrinsics/conversions.py``), the attributes ``a.strides``
and ``a.nbytes``, and the new matrices ``np.identity``, ``np.tril``, ``np.triu``, ``np.diag`` (``matrix_rule``).

    np.asarray(a)                 of f64[:, :]  → a itself (a ``copy`` op: the same array, as NumPy gives)
    np.asarray(a, np.float32)     of f64[:, :]  → intrinsic np.array (%a) : f32[:, ::1]   (a converted copy)
    np.array(a), np.copy(a)       of f64[:, :]  → a new C-ordered copy: f64[:, ::1]
    np.ascontiguousarray(a)       of f64[:, ::1] → a itself; of f64[:, :] a new C-ordered copy
    a.strides                     of f64[:, :]  → (i64, i64)   NumPy's byte strides

A dtype is a compile-time value (``aot.infer.arrays.dtype_of``), given second by position or as ``dtype=``; it
is kept in the result type, not among the operands. ``np.array(lst)`` / ``np.asarray(lst)`` of a list stay the
list intrinsic (``aot.infer.lists``); only an array argument comes here (``aot.infer.callsites``).
"""

from __future__ import annotations

from collections.abc import Callable

from ..intrinsics.spec import IntrinsicSpec, Site
from ..ir import Intrinsic, IntrinsicCall
from ..ir.ops import CallValue, Copy
from ..types import F64, I64, ArrayType, PyValueType, ScalarType, TupleType, Type
from .arrays import dtype_of
from .instances import Transfer
from .rules import RuleError

_TAKES_DTYPE = {"array": True, "asarray": True, "ascontiguousarray": True, "copy": False}
"""The spellings routed here, and whether NumPy's second positional argument is the dtype (``np.copy``'s is
``order``, which compiled code does not take: its copy is C-ordered)."""


MATRICES = frozenset({Intrinsic.NP_IDENTITY, Intrinsic.NP_TRIL, Intrinsic.NP_TRIU, Intrinsic.NP_DIAG})
"""``np.identity``, ``np.tril``, ``np.triu``, ``np.diag``: new matrices (``matrix_rule``)."""


def routes(spelling: str, fn: Intrinsic, argtypes: tuple[Type, ...]) -> bool:
    """Whether the NumPy call ``np.<spelling>(…)`` is typed here: a conversion of an array, or a new matrix."""
    if fn is Intrinsic.LIST_TO_ARRAY:  # (np.array / np.asarray: of a list, the list intrinsic)
        return bool(argtypes) and isinstance(argtypes[0], ArrayType)
    return fn in (Intrinsic.NP_COPY, Intrinsic.NP_ASCONTIGUOUSARRAY) or fn in MATRICES


def _dtype(name: str, argtypes: tuple[Type, ...], keywords: tuple[str, ...]) -> ScalarType | None:
    """The dtype given (None: the array's), after checking the call's arguments and keywords."""
    if any(k != "dtype" for k in keywords) or len(set(keywords)) != len(keywords):
        raise RuleError(f"{name}() takes (a, dtype) here: no keyword arguments but dtype=")
    most = 2 if _TAKES_DTYPE[name.removeprefix("np.")] else 1
    if not 1 <= len(argtypes) <= most:
        signature = "(a[, dtype])" if most == 2 else "(a) alone (its copy is C-ordered)"
        raise RuleError(f"{name}() takes {signature} here, got {len(argtypes)} arguments")
    if not isinstance(argtypes[0], ArrayType):
        raise RuleError(f"{name}() needs an array (or, for np.array/np.asarray, a list) here, not {argtypes[0]}")
    if len(argtypes) == 1:
        return None
    given = argtypes[1]
    found = dtype_of(given.value) if isinstance(given, PyValueType) else None
    if found is None:
        raise RuleError(
            f"{name}(): the dtype must be a NumPy or aot scalar type (np.float64, np.int64, np.bool_, np.float32 …) "
            f"or a.dtype, not {given}"
        )
    return found


def copy_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """The new C-ordered copy's type: the array's dtype, or the dtype given (``args[1]``, a compile-time
    value)."""
    name = "np." + (site.name or spec.fn.value.removeprefix("np."))
    dtype = _dtype(name, args, site.keywords)
    a = args[0]
    assert isinstance(a, ArrayType)
    return ArrayType(dtype or a.dtype, a.ndim, "C")


def call(
    op: CallValue, spelling: str, argtypes: tuple[Type, ...], spec_of: Callable[[Intrinsic], IntrinsicSpec]
) -> Transfer:
    """``np.asarray(a)``, ``np.array(a)``, ``np.copy(a)``, ``np.ascontiguousarray(a)`` of an array: ``a`` itself
    where NumPy gives ``a`` itself and the compiler knows it (a ``copy`` op, so every stage sees the alias),
    else a new C-ordered copy (converted to the dtype given); ``np.identity`` … a new matrix. ``spec_of`` is
    the registry's ``spec`` (which this module, below the registry, does not import)."""
    name = "np." + spelling
    matrix = _MATRIX_NAMES.get(spelling)
    if matrix is not None:
        spec = spec_of(matrix)
        result = spec.rule(spec, argtypes, Site(spelling, keywords=op.keyword_names))
        runtime = tuple(a for a, t in zip(op.args, argtypes) if not isinstance(t, PyValueType))
        return Transfer(result, IntrinsicCall(op.dest, matrix, runtime, op.span))
    dtype = _dtype(name, argtypes, op.keyword_names)
    a = argtypes[0]
    assert isinstance(a, ArrayType)
    same = dtype is None or dtype == a.dtype
    if same and (spelling == "asarray" or (spelling == "ascontiguousarray" and a.layout == "C")):
        return Transfer(a, Copy(op.dest, op.args[0], op.span))
    fn = {"copy": Intrinsic.NP_COPY, "ascontiguousarray": Intrinsic.NP_ASCONTIGUOUSARRAY}.get(
        spelling, Intrinsic.NP_ARRAY
    )
    spec = spec_of(fn)
    result = spec.rule(spec, argtypes, Site(spelling, keywords=op.keyword_names))
    return Transfer(result, IntrinsicCall(op.dest, fn, op.args[:1], op.span))


def attribute_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """``a.strides``: a tuple of i64, one for each axis; ``a.nbytes``: an i64."""
    a = args[0]
    if not isinstance(a, ArrayType):
        raise RuleError(f"{spec.fn.value.split('.')[1]} is an attribute of arrays, not of {a}")
    return TupleType((I64,) * a.ndim) if spec.fn is Intrinsic.STRIDES else I64


_MATRIX_NAMES = {fn.value.removeprefix("np."): fn for fn in MATRICES}


def _integer(t: Type, name: str, what: str) -> None:
    if not (isinstance(t, ScalarType) and (t.is_int or t.kind == "b")):
        raise RuleError(f"{name}(): {what} must be an integer, not {t}")


def matrix_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """``np.identity(n[, dtype])``: an n x n array (float64 unless a dtype is given); ``np.tril(a[, k])``,
    ``np.triu(a[, k])``: a new array of a 2-D array's shape and dtype; ``np.diag(v[, k])``: of a 1-D array a new
    2-D one, of a 2-D array a new 1-D copy of its ``k``-th diagonal."""
    name = "np." + spec.fn.value.removeprefix("np.")
    keyword = "dtype" if spec.fn is Intrinsic.NP_IDENTITY else "k"
    if any(k != keyword for k in site.keywords) or len(site.keywords) > 1:
        raise RuleError(f"{name}() takes no keyword arguments here but {keyword}=")
    first = "n" if spec.fn is Intrinsic.NP_IDENTITY else "v" if spec.fn is Intrinsic.NP_DIAG else "a"
    if not 1 <= len(args) <= 2:
        raise RuleError(f"{name}() takes ({first}[, {keyword}]) here, got {len(args)} arguments")
    if spec.fn is Intrinsic.NP_IDENTITY:
        _integer(args[0], name, "n")
        if len(args) == 1:
            return ArrayType(F64, 2, "C")
        given = args[1]
        dtype = dtype_of(given.value) if isinstance(given, PyValueType) else None
        if dtype is None:
            raise RuleError(f"{name}(): the dtype must be a NumPy or aot scalar type (np.float64 …), not {given}")
        return ArrayType(dtype, 2, "C")
    a = args[0]
    if len(args) == 2:
        _integer(args[1], name, "k")
    if not isinstance(a, ArrayType):
        raise RuleError(f"{name}() needs an array here, not {a}")
    if spec.fn is Intrinsic.NP_DIAG:
        if a.ndim not in (1, 2):
            raise RuleError(f"{name}(): Input must be 1- or 2-d. (this array is {a.ndim}-D)")
        return ArrayType(a.dtype, 3 - a.ndim, "C")
    if a.ndim != 2:
        raise RuleError(f"{name}() takes a 2-D array here (this one is {a.ndim}-D)")
    return ArrayType(a.dtype, 2, "C")
