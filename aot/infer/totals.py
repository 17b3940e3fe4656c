"""The type rule of ``np.nanprod``: the product of a whole array, NaN counting as 1.

np.nanprod(a)   → np.prod's type: a float array's own dtype; int64 of signed integers and booleans,
                  uint64 of unsigned ones (the lowering is in ``aot.codegen.totals``)
"""

from __future__ import annotations

from ..intrinsics.spec import IntrinsicSpec, Site
from ..ir.ops import Intrinsic
from ..types import BOOL, F64, I64, NONE, ArrayType, ScalarType, Type, promote
from .npfuncs import reduction_type
from .rules import RuleError


def nanprod_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """``np.nanprod(a)`` of an array of numbers (of the whole array: ``axis=`` is refused by the keywords)."""
    if len(args) != 1:
        raise RuleError(
            f"np.nanprod() takes one array here (of the whole array), got {len(args)} arguments; "
            "for a product along an axis, loop over the lines"
        )
    a = args[0]
    if not (isinstance(a, ArrayType) and a.dtype.is_numeric):
        raise RuleError(f"np.nanprod() needs an array of numbers here, not {a}")
    return reduction_type(Intrinsic.NP_PROD, a, "nanprod")


def _weak(t: ScalarType) -> bool:
    return t in (F64, I64)  # (the types Python's float and int arrive as: NumPy's weak scalars)


def trapezoid_types(y: ArrayType, d: ScalarType, d_weak: bool) -> tuple[ScalarType, ScalarType]:
    """(the type of ``d * (y[1:] + y[:-1])``, the result's) for ``d`` of type ``d`` (weak: a Python number)."""
    yd = y.dtype
    if d_weak:
        product = (yd if yd.is_float else F64) if d.is_float else yd
    else:
        product = promote(d, yd)
    return product, (product if product.is_float else F64)


def bind_trapezoid(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> tuple[Type, tuple[int, ...]]:
    """``np.trapezoid(y, x=None, dx=1.0)`` of a 1-D array ``y`` of numbers (not booleans); ``x`` None or a 1-D
    array of numbers, ``dx`` a number; ``axis=`` refused (1-D only)."""
    params = ("y", "x", "dx")
    positional = len(args) - len(site.keywords)
    if positional > len(params) or "axis" in site.keywords:
        raise RuleError("np.trapezoid() takes (y, x=None, dx=1.0) of a 1-D y here; axis= is not supported")
    names = list(params[:positional]) + list(site.keywords)
    if len(set(names)) != len(names) or "y" not in names:
        raise RuleError("np.trapezoid() takes (y, x=None, dx=1.0): give y once")
    where = {n: k for k, n in enumerate(names)}
    y = args[where["y"]]
    if not (isinstance(y, ArrayType) and y.dtype.is_numeric and y.dtype != BOOL):
        raise RuleError(f"np.trapezoid(): y must be an array of numbers here (not booleans), not {y}")
    if y.ndim != 1:
        raise RuleError(f"np.trapezoid() is supported for a 1-D y here, not {y.ndim}-D; loop over its lines")
    x = args[where["x"]] if "x" in where else NONE
    if x != NONE:
        if not (isinstance(x, ArrayType) and x.dtype.is_numeric and x.dtype != BOOL and x.ndim == 1):
            raise RuleError(f"np.trapezoid(): x must be None or a 1-D array of numbers (not booleans) here, not {x}")
        return trapezoid_types(y, x.dtype, False)[1], (where["y"], where["x"])
    if "dx" in where:
        dx = args[where["dx"]]
        if not (isinstance(dx, ScalarType) and dx.is_numeric and dx != BOOL):
            raise RuleError(f"np.trapezoid(): dx must be a number here, not {dx}")
        return trapezoid_types(y, dx, _weak(dx))[1], (where["y"], where["dx"])
    return trapezoid_types(y, F64, True)[1], (where["y"],)


def trapezoid_rule(spec: IntrinsicSpec, args: tuple[Type, ...], site: Site) -> Type:
    """Of the IR op's operands too, where a number second is ``dx``."""
    if len(args) == 2 and not site.keywords and isinstance(args[1], ScalarType):
        site = Site(site.name, site.literal, ("dx",), site.consts)
    return bind_trapezoid(spec, args, site)[0]
