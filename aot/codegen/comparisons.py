"""NumPy's comparisons of whole arrays in emitted code: ``np.isclose``, ``np.allclose`` and ``np.array_equal``
(their types: ``aot.infer.comparisons``, which says which arguments are the op's operands).

    np.isclose(a, b, rtol, atol, equal_nan)   per element, as NumPy: ``b`` made a float (f32 stays f32, others
                                              f64), then ``|a - b| <= atol + rtol * |b|`` where ``b`` is
                                              finite, or ``a == b`` (so infinities are close only to
                                              themselves), or (``equal_nan``) both NaN; Python numbers adapt
                                              to an array's float type as NumPy's do. Arrays: one loop over
                                              the operands broadcast (``FunctionCodegen.elementwise``)
    np.allclose(...)                          every element of that (its bool array made, read, released)
    np.array_equal(a1, a2, equal_nan)         False for other shapes; else every pair equal in the promoted
                                              type (or, ``equal_nan``, both NaN)
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from ..ir import IntrinsicCall
from ..types import BOOL, F64, I64, ArrayType, ScalarType, Type, promote
from . import arrays, elementwise, ufuncs
from . import types as lt
from .context import Emitter
from .lowering import Lowerer
from .numerics import coerce
from .types import value_type
from .walks import element, entry_alloca, size_of

_I64 = lambda v: ir.Constant(lt.I64, v)  # noqa: E731
_PYTHON = (F64, I64, BOOL)  # (the types Python's float, int and bool arrive as: NumPy's weak scalars)


def _dtype(t: Type) -> ScalarType:
    return elementwise.element_type(t)


def _weak(t: Type) -> bool:
    return not isinstance(t, ArrayType) and t in _PYTHON


def _types(at: Type, bt: Type) -> tuple[ScalarType, ScalarType]:
    """NumPy's types for ``isclose(a, b)``: ``b``'s float type (``yt``), and the type ``a - b`` and ``a == b``
    are computed in (``ct``)."""
    xd, yd = _dtype(at), _dtype(bt)
    yt = yd if yd.is_float else F64
    if _weak(at) and _weak(bt):
        return yt, F64
    if _weak(at):
        return yt, yt
    if _weak(bt):
        return yt, (xd if xd.is_float else F64)
    return yt, promote(xd, yt)


def _close(
    em: Emitter, x: ir.Value, at: Type, y: ir.Value, bt: Type, rtol: ir.Value, atol: ir.Value, nan: ir.Value | None
) -> ir.Value:
    """One element of ``np.isclose`` (an i1); ``rtol`` and ``atol`` f64 values, ``nan`` an i1 or None (False)."""
    b = em.b
    yt, ct = _types(at, bt)
    yf = coerce(em, y, _dtype(bt), yt)
    if isinstance(bt, ArrayType):  # (NumPy: atol + rtol * |b| in b's float type, the Python floats adapting)
        tol = b.fadd(coerce(em, atol, F64, yt), b.fmul(coerce(em, rtol, F64, yt), em.call_intrinsic("llvm.fabs", [yf])))
        tol = coerce(em, tol, yt, ct)
    else:
        tol = coerce(em, b.fadd(atol, b.fmul(rtol, em.call_intrinsic("llvm.fabs", [coerce(em, yf, yt, F64)]))), F64, ct)
    xc, yc = coerce(em, x, _dtype(at), ct), coerce(em, yf, yt, ct)
    near = b.fcmp_ordered("<=", em.call_intrinsic("llvm.fabs", [b.fsub(xc, yc)]), tol)
    finite = b.fcmp_ordered("<", em.call_intrinsic("llvm.fabs", [yf]), ir.Constant(value_type(yt), float("inf")))
    result = b.or_(b.and_(near, finite), b.fcmp_ordered("==", xc, yc))
    if nan is not None:
        result = b.or_(result, b.and_(nan, b.and_(ufuncs.isnan(b, xc), ufuncs.isnan(b, yc))))
    return result


def _truth(em: Emitter, v: ir.Value, t: Type) -> ir.Value:
    assert isinstance(t, ScalarType)
    return v if t.kind == "b" else em.b.icmp_signed("!=", v, ir.Constant(v.type, 0))


def _tolerances(fc: Lowerer, op: IntrinsicCall) -> tuple[ir.Value, ir.Value, ir.Value | None]:
    """``rtol``, ``atol`` (f64; NumPy's defaults for a missing one, or an array or bool standing for it) and
    ``equal_nan`` (an i1, or None when not given)."""
    found = []
    for k, default in ((2, 1e-05), (3, 1e-08)):
        if len(op.args) > k and isinstance(fc.t(op.args[k]), ScalarType) and fc.t(op.args[k]) != BOOL:
            found.append(coerce(fc, fc.load(op.args[k]), fc.t(op.args[k]), F64))
        else:
            found.append(ir.Constant(lt.F64, default))
    nan = _truth(fc, fc.load(op.args[4]), fc.t(op.args[4])) if len(op.args) > 4 else None
    return found[0], found[1], nan


def isclose(fc: Lowerer, op: IntrinsicCall) -> None:
    """``np.isclose``: a bool of two numbers, else a new bool array (``FunctionCodegen.elementwise``)."""
    rtol, atol, nan = _tolerances(fc, op)
    a, b = op.args[0], op.args[1]
    at, bt = fc.t(a), fc.t(b)
    if not isinstance(fc.t(op.dest), ArrayType):
        fc.assign(op.dest.name, _close(fc, fc.load(a), at, fc.load(b), bt, rtol, atol, nan))
        return
    fc.elementwise(op, (a, b), lambda values: _close(fc, values[0], at, values[1], bt, rtol, atol, nan))


def allclose(fc: Lowerer, op: IntrinsicCall) -> None:
    """``np.allclose``: whether every element of ``np.isclose`` holds."""
    rtol, atol, nan = _tolerances(fc, op)
    x, y = fc.load(op.args[0]), fc.load(op.args[1])
    at, bt = fc.t(op.args[0]), fc.t(op.args[1])
    if not (isinstance(at, ArrayType) or isinstance(bt, ArrayType)):
        fc.assign(op.dest.name, _close(fc, x, at, y, bt, rtol, atol, nan))
        return
    made = ArrayType(BOOL, max(t.ndim for t in (at, bt) if isinstance(t, ArrayType)), "C")
    close = elementwise.lower(fc, [(x, at), (y, bt)], made, lambda v: _close(fc, v[0], at, v[1], bt, rtol, atol, nan))
    fc.assign(op.dest.name, _every(fc, lambda k: element(fc.b, close, made, k), size_of(fc.b, close, made.ndim)))
    arrays.decref(fc.ctx, fc.b, close, made)


def _every(em: Emitter, holds: Callable[[ir.Value], ir.Value], size: ir.Value) -> ir.Value:
    """Whether ``holds(k)`` for every flat index ``k`` below ``size`` (an i1; the loop stops at the first that
    does not)."""
    b = em.b
    slot = entry_alloca(b, em.llfn, lt.I1)
    b.store(ir.Constant(lt.I1, 1), slot)
    index = entry_alloca(b, em.llfn, lt.I64)
    b.store(_I64(0), index)
    head, body, done = (em.llfn.append_basic_block(f"every.{part}") for part in ("head", "body", "done"))
    b.branch(head)
    b.position_at_end(head)
    k = b.load(index)
    b.cbranch(b.and_(b.load(slot), b.icmp_signed("<", k, size)), body, done)
    b.position_at_end(body)
    b.store(holds(k), slot)
    b.store(b.add(k, _I64(1)), index)
    b.branch(head)
    b.position_at_end(done)
    return b.load(slot)


def array_equal(fc: Lowerer, op: IntrinsicCall) -> None:
    """``np.array_equal``: False for arrays of other shapes, else whether every pair of elements is equal."""
    b = fc.b
    x, y = fc.load(op.args[0]), fc.load(op.args[1])
    at, bt = fc.t(op.args[0]), fc.t(op.args[1])
    nan = _truth(fc, fc.load(op.args[2]), fc.t(op.args[2])) if len(op.args) > 2 else None
    common = promote(_dtype(at), _dtype(bt))

    def equal(u: ir.Value, v: ir.Value) -> ir.Value:
        u, v = coerce(fc, u, _dtype(at), common), coerce(fc, v, _dtype(bt), common)
        if not common.is_float:
            return b.icmp_unsigned("==", u, v)
        same = b.fcmp_ordered("==", u, v)
        if nan is None:
            return same
        return b.or_(same, b.and_(nan, b.and_(ufuncs.isnan(b, u), ufuncs.isnan(b, v))))

    if not isinstance(at, ArrayType) and not isinstance(bt, ArrayType):
        fc.assign(op.dest.name, equal(x, y))
        return
    if not (isinstance(at, ArrayType) and isinstance(bt, ArrayType)) or at.ndim != bt.ndim:
        fc.assign(op.dest.name, ir.Constant(lt.I1, 0))
        return
    shapes = zip(arrays.shape_of(b, x, at.ndim), arrays.shape_of(b, y, bt.ndim))
    same_shape: ir.Value = ir.Constant(lt.I1, 1)
    for m, n in shapes:
        same_shape = b.and_(same_shape, b.icmp_signed("==", m, n))
    size = b.select(same_shape, size_of(b, x, at.ndim), _I64(0))  # (other shapes: no element is compared)
    every = _every(fc, lambda k: equal(element(b, x, at, k), element(b, y, bt, k)), size)
    fc.assign(op.dest.name, b.and_(same_shape, every))
