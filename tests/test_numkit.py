"""The numkit fixture, compiled, against plain Python: every declared signature on several inputs."""

from __future__ import annotations

import numpy as np
import pytest

import numkit
import numkit.arrays  # (not imported by the package: it imports NumPy)
from aot.types import ArrayType, ScalarType, TupleType
from support import check

MODULES = [numkit.core, numkit.stats, numkit.roots, numkit.stencil, numkit.ntheory, numkit.arrays]


def methods():
    for module in MODULES:
        for name, obj in sorted(vars(module).items()):
            if type(obj).__name__ == "Method" and obj.__module__ == module.__name__:
                yield pytest.param(obj, id=f"{module.__name__.split('.')[-1]}.{name}")


def sample(t, rng: np.random.Generator, variant: int):
    if isinstance(t, ScalarType):
        if t.is_float:
            return float([0.5, 2.0, -1.25, 3.75][variant % 4])
        if t.kind == "b":
            return bool(variant % 2)
        return int([1, 7, 12, 20][variant % 4])
    if isinstance(t, ArrayType):
        shape = (9,) if t.ndim == 1 else (6, 5)
        return rng.uniform(-2.0, 2.0, size=shape).astype(np.float64 if t.dtype.is_float else np.int64)
    if isinstance(t, TupleType):
        return tuple(sample(i, rng, variant) for i in t.items)
    raise AssertionError(t)


@pytest.mark.parametrize("method", list(methods()))
def test_numkit_method_matches_python(method):
    dispatcher = method._aot_dispatcher
    if not dispatcher.declared:
        pytest.skip("pure JIT method: exercised through the workload test")
    rng = np.random.default_rng(7)
    for argtypes in dispatcher.declared:
        for variant in range(4):
            args = [sample(t, rng, variant) for t in argtypes]
            check(method, *args, close=True)


def test_numkit_has_enough_methods():
    assert len(list(methods())) >= 30


def test_workload_runs_compiled_and_compiles_every_method():
    import numkit._workload  # noqa: F401  (its import runs the representative calls)

    compiled = [m for p in methods() for m in p.values if m.specializations()]
    assert len(compiled) >= 30
    two = numkit.core.absdiff.specializations()
    assert {str(s.argtypes) for s in two} >= {"(f64, f64)", "(i64, i64)"}
