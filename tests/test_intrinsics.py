"""The intrinsics' descriptors (``aot/intrinsics``): one complete descriptor for every ``Intrinsic``, every
spelling it lists is NumPy's or Python's own, the tables derived from them agree with what the leaf modules
keep, and every op class is typed and lowered. (That every descriptor is used by some test of the suite is
checked at the end of a whole run: ``tests/intrinsic_coverage.py``.)"""

from __future__ import annotations

import builtins
import dataclasses
import math

import numpy as np
import pytest

import aot
from aot.codegen.function import FunctionCodegen
from aot.infer import elementwise, views
from aot.infer.npfuncs import NAN_PLAIN
from aot.infer.transfer import TRANSFER
from aot.intrinsics import registry
from aot.intrinsics.spec import PLAIN, Effect, IntrinsicSpec
from aot.ir import ops
from aot.ir.ops import Intrinsic
from aot.types import F64, I64, ArrayType

SPECS = registry.SPECS


def test_every_intrinsic_has_one_complete_descriptor() -> None:
    assert set(SPECS) == set(Intrinsic)
    for fn, spec in SPECS.items():
        assert isinstance(spec, IntrinsicSpec) and spec.fn is fn
        assert callable(spec.rule) and callable(spec.lower), fn
        assert isinstance(spec.effect, Effect), fn
        lo, hi = spec.arity
        assert lo >= 0 and (hi is None or hi >= lo), fn
        assert spec.bind is None or spec.numpy or spec.methods, f"{fn}: a binding for calls nobody spells"
        assert not spec.keywords or spec.numpy or spec.methods, f"{fn}: keywords for calls nobody spells"
        if spec.allocating:
            assert not spec.device, f"{fn} allocates: kernels cannot call it"
            assert spec.effect is Effect.READS, f"{fn} makes a new array of what it reads"


def test_no_two_descriptors_claim_one_spelling() -> None:
    for field in ("numpy", "methods", "attributes", "python"):
        seen: dict[str, Intrinsic] = {}
        for spec in SPECS.values():
            for name in getattr(spec, field):
                assert name not in seen, f"{field} spelling {name!r}: {seen[name]} and {spec.fn}"
                seen[name] = spec.fn


@pytest.mark.parametrize("spec", [s for s in SPECS.values() if s.numpy], ids=lambda s: s.fn.value)
def test_each_numpy_spelling_is_numpy_s_and_finds_its_descriptor(spec: IntrinsicSpec) -> None:
    for spelling in spec.numpy:
        owner = np
        for part in spelling.split("."):
            owner = getattr(owner, part)
        found = registry.numpy_function(owner)
        assert found is not None and found[1] is spec, spelling


def test_a_user_function_named_like_numpy_s_is_not_numpy_s() -> None:
    def sqrt(x):
        return x

    sqrt.__module__ = "numpy"
    assert registry.numpy_function(sqrt) is None
    assert registry.numpy_function(np.sqrt) == ("sqrt", SPECS[Intrinsic.NP_SQRT])
    assert registry.numpy_function(np.linalg.norm) == ("linalg.norm", SPECS[Intrinsic.NP_NORM])


def test_each_method_and_attribute_is_an_ndarray_s() -> None:
    for spec in SPECS.values():
        for name in spec.methods + spec.attributes:
            assert hasattr(np.ndarray, name), f"{spec.fn}: ndarray has no {name!r}"


def test_each_python_spelling_is_a_builtin_or_a_math_function() -> None:
    for spec in SPECS.values():
        for spelling in spec.python:
            module, _, name = spelling.rpartition(".")
            value = getattr(math if module == "math" else builtins, name)
            assert registry.PYTHON_FUNCTIONS[value] is spec


def test_the_derived_tables_agree_with_the_leaf_modules() -> None:
    """The few facts leaf modules keep for their own code (they cannot import the registry above them) are
    the descriptors' facts."""
    assert views.METHODS == {fn for fn, s in SPECS.items() if s.effect is Effect.VIEWS}
    assert set(elementwise.KIND_OF_INPLACE) == {fn for fn, s in SPECS.items() if s.lower.__name__ == "in_place"}
    assert set(NAN_PLAIN) <= registry.NUMPY and set(NAN_PLAIN.values()) <= registry.NUMPY
    assert registry.ALLOCATING == {fn for fn, s in SPECS.items() if s.allocating}
    assert Intrinsic.NP_ZEROS in registry.ALLOCATING and Intrinsic.NP_CUMPROD in registry.ALLOCATING
    assert registry.ALLOCATIONS <= registry.ALLOCATING
    assert set(elementwise.KIND_OF_INPLACE) | {Intrinsic.ARRAY_SORT, Intrinsic.ATOMIC_ADD} <= registry.WRITES_FIRST


def test_rules_type_the_ir_operands() -> None:
    sqrt, total, shape = SPECS[Intrinsic.NP_SQRT], SPECS[Intrinsic.NP_SUM], SPECS[Intrinsic.SHAPE]
    assert sqrt.rule(sqrt, (I64,), PLAIN) == F64
    assert sqrt.rule(sqrt, (ArrayType(I64, 2, "A"),), PLAIN) == ArrayType(F64, 2, "C")
    assert total.rule(total, (ArrayType(I64, 1, "A"),), PLAIN) == I64
    assert str(shape.rule(shape, (ArrayType(F64, 2, "A"),), PLAIN)) == "(i64, i64)"


_UNTYPED = {ops.LoadGlobal, ops.GetAttr, ops.CallValue}
"""Ops of untyped IR only: inference resolves them (the ``resolve`` pass), so codegen never sees them."""


def _op_classes() -> list[type]:
    return [c for c in vars(ops).values() if isinstance(c, type) and issubclass(c, ops.Op) and c is not ops.Op]


def test_every_op_class_has_a_codegen_handler() -> None:
    missing = [
        c.__name__ for c in _op_classes() if c not in _UNTYPED and not hasattr(FunctionCodegen, "op_" + c.__name__)
    ]
    assert not missing, f"FunctionCodegen has no op_<Name> for {missing}"


_RESOLVED = {ops.Convert, ops.Call}
"""Ops of typed IR only: the ``resolve`` pass makes them (``int(x)``, a call of a compiled method), so
inference never sees them."""


def test_every_op_class_has_a_transfer_rule() -> None:
    """Each non-terminator op class of untyped IR has a rule in the solver's table (``aot.infer.transfer``)."""
    ops_of_untyped_ir = [c for c in _op_classes() if not c.TERMINATOR and c not in _RESOLVED]
    missing = [c.__name__ for c in ops_of_untyped_ir if c not in TRANSFER]
    assert not missing, f"the solver's transfer table has no rule for {missing}"


def test_codegen_lowers_an_intrinsic_by_its_descriptor(monkeypatch: pytest.MonkeyPatch) -> None:
    """Codegen asks the descriptor, nothing else: a descriptor whose lowering is swapped is the one used."""
    cumprod = SPECS[Intrinsic.NP_CUMPROD]
    lowered: list[Intrinsic] = []

    def lower(fc: object, op: ops.IntrinsicCall) -> None:
        lowered.append(op.fn)
        cumprod.lower(fc, op)

    monkeypatch.setitem(SPECS, Intrinsic.NP_CUMPROD, dataclasses.replace(cumprod, lower=lower))

    @aot.jit
    def f(a):
        b = np.cumprod(a)
        b.fill(2.0)
        return b

    a = np.array([1.0, 2.0, 3.0])
    assert list(f(a)) == list(f.py_func(a))
    assert lowered == [Intrinsic.NP_CUMPROD]
