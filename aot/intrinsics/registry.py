"""Every intrinsic's descriptor, and the tables the stages ask, each derived from the descriptors (never kept
by hand): a new intrinsic is in all of them once its descriptor is written.

    spec(Intrinsic.NP_SUM).lower(fc, op)          codegen
    spec(Intrinsic.NP_SUM).rule(s, (f64[:],), PLAIN) → f64      inference
    numpy_function(np.amin)                     → ("amin", SPECS[NP_MIN])
    ALLOCATING, EFFECTS, ELEMENTWISE …          the allocation, race-check and fusion questions

Nothing in ``aot.infer`` or ``aot.codegen`` reads these tables while it is being imported (this module imports
their leaf modules, and ``aot.infer``'s package imports the solver). The families are the modules beside this
one: ``python`` (``math``, builtins, loops), ``numpy``, ``arrays``, ``lists``, ``gpu``.
"""

from __future__ import annotations

import builtins
import math
import sys
from typing import Any

from ..infer import npfuncs
from ..ir.ops import Intrinsic
from . import arrays, binning, comparisons, conversions, gpu, lists, numpy, python, shapes, totals
from .spec import Effect, IntrinsicSpec

SPECS: dict[Intrinsic, IntrinsicSpec] = {
    s.fn: s
    for family in (python, numpy, arrays, lists, gpu, shapes, binning, conversions, comparisons, totals)
    for s in family.SPECS
}
"""Every intrinsic's descriptor (``tests/test_intrinsics.py``: one for each, complete)."""


def spec(fn: Intrinsic) -> IntrinsicSpec:
    """The descriptor of ``fn``."""
    return SPECS[fn]


def _of(family: Any) -> frozenset[Intrinsic]:
    return frozenset(s.fn for s in family.SPECS)


ALLOCATIONS = frozenset(s.fn for s in arrays.SPECS if s.bind is not None and s.allocating)
"""``np.zeros`` and the other allocations, ``a.copy()``: their dtype a compile-time value."""
LISTS = _of(lists)
NUMPY = frozenset(fn for fn, s in SPECS.items() if s.numpy) - LISTS
"""What a NumPy function object may stand for in ``numpy_call`` (``aot.infer.callsites``): every intrinsic NumPy
spells, but lists' (``np.array(lst)``, typed only of a list); views and allocations are routed before it."""

ALLOCATING = frozenset(fn for fn, s in SPECS.items() if s.allocating)
"""Intrinsics that give a new array owned by compiled code (a new reference)."""
EFFECTS: dict[Intrinsic, Effect] = {fn: s.effect for fn, s in SPECS.items()}
"""What each intrinsic does to the elements of its array operands (the ``prange`` race check)."""
WRITES_FIRST = frozenset(fn for fn, s in SPECS.items() if s.effect in (Effect.WRITES, Effect.UPDATES))
"""The intrinsics that write into their first operand (an array a function is given then is written)."""
ELEMENTWISE = frozenset(
    fn
    for fn, s in SPECS.items()
    if s.rule
    in (
        npfuncs.float_ufunc,
        npfuncs.same_ufunc,
        npfuncs.predicate_ufunc,
        npfuncs.binary_ufunc,
        npfuncs.float_binary_ufunc,
        npfuncs.where_type,
        npfuncs.clip_type,
    )
)
"""The NumPy intrinsics that apply a function of numbers to every element (ufuncs, ``np.where``,
``np.clip``): an array operand makes one loop, which the next such operation may fuse into."""

ATTRIBUTES: dict[str, IntrinsicSpec] = {name: s for s in SPECS.values() for name in s.attributes}
"""``a.shape``, ``a.T`` …: array attributes that are intrinsics."""
METHODS: dict[str, IntrinsicSpec] = {name: s for s in SPECS.values() for name in s.methods}
"""``a.sum()``, ``a.reshape(…)``, ``a.copy()`` …: array methods that are intrinsics."""
BOUND_METHODS = {name: s for name, s in METHODS.items() if s.fn not in ALLOCATIONS and s.effect is not Effect.VIEWS}
"""``a.sum()``, ``a.cumsum()``, ``a.sort()`` …: read as ``aot.infer.npfuncs.BoundMethod`` until called (the
others: allocations are ``ArrayMethod``s, views the intrinsic itself)."""

_NUMPY_NAMES: dict[str, tuple[str, IntrinsicSpec]] = {}
for _s in SPECS.values():
    for _spelling in _s.numpy:
        _module, _, _name = _spelling.rpartition(".")
        _NUMPY_NAMES.setdefault(_name, ("numpy." + _module if _module else "numpy", _s))
# (a name NumPy gives two meanings is found by its module: ``np.sort`` is a function, ``a.sort`` a method)


def numpy_function(value: Any) -> tuple[str, IntrinsicSpec] | None:
    """The spelling and descriptor of a NumPy function object (``np.sqrt``, ``np.linalg.norm``), or None. The
    object is known by its own name (``np.abs`` is ``absolute``), and must be NumPy's: a ufunc, or a function
    of its module (not a user's function named ``sqrt`` bound in its place). NumPy is never imported here."""
    np = sys.modules.get("numpy")
    name = getattr(value, "__name__", None)
    if np is None or not isinstance(name, str) or name not in _NUMPY_NAMES:
        return None
    module, found = _NUMPY_NAMES[name]
    if not isinstance(value, np.ufunc) and _numpy_attribute(np, module, name) is not value:
        return None
    return (name if module == "numpy" else module[len("numpy.") :] + "." + name), found


def _numpy_attribute(np: Any, module: str, name: str) -> Any:
    owner = np
    for part in module.split(".")[1:]:
        owner = getattr(owner, part, None)
    return getattr(owner, name, None)


def _python_functions() -> dict[Any, IntrinsicSpec]:
    found: dict[Any, IntrinsicSpec] = {}
    for s in SPECS.values():
        for spelling in s.python:
            module, _, name = spelling.rpartition(".")
            found[getattr(math if module == "math" else builtins, name)] = s
    return found


PYTHON_FUNCTIONS = _python_functions()
"""``math.sqrt``, ``abs`` … (the objects) → their descriptors."""
