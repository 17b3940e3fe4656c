"""The IR: printer and parser are inverses, the verifier accepts what the compiler makes, goldens.

Regenerate the golden files with ``python3 -m pytest tests/test_ir.py --update-goldens`` and review
the diff.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from aot.ir import parse_function, print_function, verify
from aot.runtime import runtime

ROOT = Path(__file__).resolve().parents[1]
import numkit  # noqa: E402
import numkit._workload  # noqa: E402,F401


def all_instances():
    done = runtime().compiler.inferencer.done
    return [
        inst
        for key, inst in sorted(done.items(), key=lambda kv: (kv[0][0], str(kv[0][1])))
        if key[0].startswith("numkit.")
    ]


def test_every_numkit_instance_round_trips_and_verifies():
    instances = all_instances()
    assert len(instances) >= 30
    for inst in instances:
        text = print_function(inst.function)
        parsed = parse_function(text)
        assert print_function(parsed) == text
        assert parsed == inst.function
        verify(inst.function)


def test_untyped_ir_round_trips():
    for module in (numkit.core, numkit.stats, numkit.ntheory):
        for obj in vars(module).values():
            mdef = getattr(obj, "__aot_method__", None)
            if mdef is None or mdef.module != module.__name__:
                continue
            text = print_function(mdef.untyped())
            assert print_function(parse_function(text)) == text
            verify(mdef.untyped())


def _normalised(text: str) -> str:
    from fixture_copies import NUMKIT_COPY

    return text.replace(str(NUMKIT_COPY), "<root>/fixtures/numkit")


@pytest.mark.parametrize(
    "method,argtypes",
    [
        ("numkit.core:clamp", "(f64, f64, f64)"),
        ("numkit.stats:mean", "(f64[:],)"),
        ("numkit.ntheory:fib", "(i64,)"),
        ("numkit.ntheory:gcd", "(i64, i64)"),
        ("numkit.stencil:laplacian5", "(f64[:, :], f64[:, :], f64)"),
    ],
)
def test_golden_typed_ir(method, argtypes, golden):
    matches = [i for i in all_instances() if i.method.key == method and str(i.argtypes) == argtypes]
    assert matches, f"{method}{argtypes} was not compiled by the workload"
    golden(f"{method.replace(':', '.')}.ir", _normalised(print_function(matches[0].function)))


def test_inspect_ir_llvm_asm():
    text = numkit.core.clamp.inspect_ir("f64", "f64", "f64")
    assert text.startswith("func numkit.core:clamp(%x: f64, %lo: f64, %hi: f64) -> f64")
    llvm = numkit.core.clamp.inspect_llvm("f64", "f64", "f64")
    assert "define" in llvm and "fcmp" in llvm
    asm = numkit.core.clamp.inspect_asm("f64", "f64", "f64")
    assert "ret" in asm


def test_every_pass_keeps_every_numkit_function_valid():
    """The verifier after each pass of the pipeline, on the untyped-then-inferred IR of every instance."""
    from aot.passes import pipeline

    for inst in all_instances():
        fn = inst.function
        for name, pass_ in pipeline.PASSES:
            fn = pass_(fn, None)
            verify(fn)
            assert pass_(fn, None) == fn, f"{name} is not idempotent on {inst.method.key}"


def test_views_round_trip_and_verify():
    """``getview`` (slices, ``...``) and the view intrinsics print and parse back, untyped and typed."""
    import numpy as np

    import aot
    from aot.ir import GetView

    @aot.jit
    def views_demo(m, i):
        v = m[1:-1, ::-2]
        w = m[..., i]
        v[0] = w[1:]
        return v.T.shape, m.ravel()[0], m[i].reshape(-1, 1)[0, 0]

    views_demo(np.arange(12.0).reshape(3, 4), 1)
    untyped = views_demo.__aot_method__.untyped()
    text = print_function(untyped)
    assert 'getview %m, "ss", [' in text and 'getview %m, "ei", [%' in text
    assert print_function(parse_function(text)) == text
    done = runtime().compiler.inferencer.done
    (inst,) = [i for k, i in done.items() if k[0].endswith("views_demo")]
    typed = print_function(inst.function)
    assert "intrinsic array.T" in typed and "intrinsic array.ravel" in typed and "intrinsic array.reshape" in typed
    assert any(isinstance(op, GetView) for _, op in inst.function.ops())
    parsed = parse_function(typed)
    assert print_function(parsed) == typed and parsed == inst.function
    verify(inst.function)
