"""The pass pipeline: resolve first, the verifier after every pass, IR after a named pass, every fixture.

    pipeline.run(solved, fixed_point)                      → typed IR (resolve, simplify-cfg)
    pipeline.run(solved, fixed_point, until="resolve")     → the IR right after resolve
    pipeline.run(..., verify=True) with a broken pass      → IRVerifyError: after pass 'drop-returns': …

Every fixture method (numkit's workload, mutual, gpukit's kernels and device functions) is inferred again
through a pipeline that checks each pass: the verifier accepts its output, its output prints and parses
back to itself, it left its input alone, and running it again gives the same function.
"""

from __future__ import annotations

import importlib
import math
import pkgutil
import shutil
import sys
from pathlib import Path

import pytest

import aot
import numkit  # noqa: F401 - from the private copy (fixture_copies)
import numkit._workload  # noqa: F401 - compiles what the goldens and these tests look at
from aot.infer import FixedPoint, Inferencer
from aot.ir import Block, Function, IRVerifyError, parse_function, print_function, verify
from aot.ir.ops import UNTYPED_ONLY, Return
from aot.passes import pipeline, resolve
from aot.runtime import runtime
from aot.runtime.dispatch import dispatcher_of
from aot.runtime.kernel import find_kernels
from aot.targets import PtxTarget
from aot.types import F64, I64

ROOT = Path(__file__).resolve().parents[1]
math_sqrt = math.sqrt  # a module global naming a function: resolved at compile time


def solve(f, *argtypes) -> tuple[Function, FixedPoint]:
    """The solver's fixed point of ``f`` (an @aot.jit function): what it hands the pipeline."""
    seen: list[tuple[Function, FixedPoint]] = []

    def keep(fn, fixed_point):
        seen.append((fn.copy(), fixed_point))
        return pipeline.run(fn, fixed_point)

    Inferencer(runtime().table, passes=keep).infer(f.__aot_method__, argtypes)
    return seen[-1]  # callees come first


@aot.jit
def branchy(x, n):
    if n > 0:
        y = math_sqrt(abs(x))
    else:
        y = float(n)
    while True:
        return y + len((1, 2))


def count(fn: Function, kind) -> int:
    return sum(isinstance(op, kind) for _, op in fn.ops())


# ----------------------------------------------------------------------------------------- the pipeline


def test_passes_are_named_and_resolve_comes_first():
    assert pipeline.pass_names() == ("resolve", "simplify-cfg", "check-prange")
    assert pipeline.PASSES[0][1] is resolve.run


def test_the_solver_rewrites_nothing_resolve_does():
    solved, fixed_point = solve(branchy, F64, I64)
    assert count(solved, UNTYPED_ONLY) >= 4  # the solver's IR still names globals, math.sqrt, abs, float, len
    assert any(not t.is_runtime for t in solved.types.values())  # and types them as compile-time values
    assert fixed_point.taken  # `while True` branches one way only
    resolved = resolve.run(solved, fixed_point)
    assert count(resolved, UNTYPED_ONLY) == 0
    assert all(t.is_runtime for t in resolved.types.values())
    verify(resolved)


def test_until_stops_after_the_named_pass():
    solved, fixed_point = solve(branchy, F64, I64)
    after_resolve = pipeline.run(solved, fixed_point, until="resolve")
    assert after_resolve == resolve.run(solved, fixed_point)
    done = pipeline.run(solved, fixed_point)
    assert pipeline.run(solved, fixed_point, until="simplify-cfg") == done
    assert len(done.blocks) < len(after_resolve.blocks)  # simplify-cfg merged what resolve left
    assert done == runtime().compiler.infer(branchy.__aot_method__, (F64, I64)).function


def test_an_unknown_pass_name_lists_the_passes():
    solved, fixed_point = solve(branchy, F64, I64)
    names = r"\(the passes, in order: resolve, simplify-cfg, check-prange\)"
    with pytest.raises(pipeline.UnknownPass, match=r"unknown pass 'dce' " + names):
        pipeline.run(solved, fixed_point, until="dce")


def test_resolve_without_a_fixed_point_leaves_typed_ir_alone():
    typed = runtime().compiler.infer(branchy.__aot_method__, (F64, I64)).function
    assert resolve.run(typed, None) is typed


def test_the_pipeline_runs_once_per_final_instance_not_per_round_of_a_recursion():
    calls = []
    inferencer = Inferencer(runtime().table, passes=lambda fn, fp: calls.append(fn.name) or pipeline.run(fn, fp))
    inferencer.infer(numkit.ntheory.fib.__aot_method__, (I64,))
    assert calls.count("numkit.ntheory:fib") == 1


# ----------------------------------------------------------------------------------------- the verifier


def drop_returns(fn: Function, context: object = None) -> Function:
    """A deliberately broken pass: blocks that returned now end without a terminator."""
    return fn.with_blocks([Block(b.label, [op for op in b.ops if not isinstance(op, Return)]) for b in fn.blocks])


BROKEN = pipeline.PASSES + (("drop-returns", drop_returns),)


def test_verify_names_the_pass_that_broke_the_ir():
    solved, fixed_point = solve(branchy, F64, I64)
    with pytest.raises(IRVerifyError, match=r"after pass 'drop-returns': .*branchy: bb\d+: does not end in a term"):
        pipeline.run(solved, fixed_point, verify=True, passes=BROKEN)
    pipeline.run(solved, fixed_point, passes=BROKEN)  # without verify, nothing checks


def test_the_suite_verifies_after_every_pass(monkeypatch):
    """The runtime of the test suite (AOT_VERIFY_PASSES=1 from conftest) catches a broken pass."""
    assert runtime().env.verify_passes

    @aot.jit
    def fresh(x):
        return x + 1.0

    monkeypatch.setattr(pipeline, "PASSES", BROKEN)
    with pytest.raises(IRVerifyError, match="after pass 'drop-returns'"):
        fresh(1.0)


def test_a_return_the_declared_type_covers_verifies():
    """``return False`` beside ``return 1`` returns i64: the verifier accepts the boolean (codegen converts)
    and rejects a value the declared type does not cover."""
    text = (
        'func t:f(%n: i64) -> {ret}  file "t.py" @1:1-3:2\n'
        "bb0:\n"
        "  %0: boolean = const False  @2:1-2:2\n"
        "  ret %0  @2:1-2:6\n"
    )
    verify(parse_function(text.format(ret="i64")))
    verify(parse_function(text.format(ret="boolean")))
    with pytest.raises(IRVerifyError, match="returns boolean, declared"):
        verify(parse_function(text.format(ret="(i64,)")))


# ----------------------------------------------------------------------------------------- every fixture


def checking_pipeline(fn: Function, fixed_point: FixedPoint) -> Function:
    """The pipeline, with every pass checked on its way."""
    for name, pass_ in pipeline.PASSES:
        before = fn.copy()
        out = pass_(fn, fixed_point)
        where = f"{name} on {fn.name}"
        assert fn == before, f"{where} changed its input"
        assert pass_(fn, fixed_point) == out, f"{where} gives another function the second time"
        try:
            verify(out)
        except IRVerifyError as err:
            raise AssertionError(f"after pass {name!r}: {err}") from None
        text = print_function(out)
        assert print_function(parse_function(text)) == text and parse_function(text) == out, where
        fn = out
    return fn


def import_fixture(name: str, tmp_path_factory) -> object:
    """A fixture package imported from a private copy (never an image someone built into fixtures/)."""
    if name not in sys.modules:
        copy = tmp_path_factory.mktemp(name)
        shutil.copytree(
            ROOT / "fixtures" / name / name, copy / name, ignore=shutil.ignore_patterns("__aot__", "__pycache__")
        )
        sys.path.insert(0, str(copy))
    return importlib.import_module(name)


def declared_roots(package) -> list:
    """(method, argtypes) of every declared signature of the package's kernels and jit methods."""
    modules = [package] + [
        importlib.import_module(info.name) for info in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
    ]
    roots = [(k.__aot_method__, sig) for k in find_kernels(modules) for sig in k.signatures()]
    for module in modules:
        for obj in vars(module).values():
            mdef = getattr(obj, "__aot_method__", None)
            if mdef is not None and mdef.module == module.__name__ and dispatcher_of(mdef) is not None:
                roots.extend((mdef, sig) for sig in dispatcher_of(mdef).declared)
    return roots


def test_every_pass_on_every_numkit_instance():
    done = runtime().compiler.inferencer.done
    keys = sorted((k for k in done if k[0].startswith("numkit.")), key=lambda k: (k[0], str(k[1])))
    assert len(keys) >= 30
    inferencer = Inferencer(runtime().table, passes=checking_pipeline)
    for key in keys:
        inst = inferencer.infer(done[key].method, key[1])
        assert inst.function == done[key].function  # the same typed IR as the runtime's own pipeline


@pytest.mark.parametrize("name,overlay", [("mutual", None), ("gpukit", PtxTarget().overlay)])
def test_every_pass_on_every_declared_fixture_method(name, overlay, tmp_path_factory):
    roots = declared_roots(import_fixture(name, tmp_path_factory))
    assert len(roots) >= 3
    inferencer = Inferencer(runtime().table, passes=checking_pipeline, overlay=overlay)
    for mdef, argtypes in roots:
        assert inferencer.infer(mdef, argtypes).function.is_typed
