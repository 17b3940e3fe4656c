"""``aot inspect --ir METHOD --until PASS``: the IR right after one pass, inferred again from the sources.

$ aot inspect . --ir 'numkit.core:clamp(f64, f64, f64)' --until resolve
func numkit.core:clamp(%x: f64, %lo: f64, %hi: f64) -> f64  …      (before simplify-cfg: bb4 is still there)
$ aot inspect . --ir clamp --until dce
aot: unknown pass 'dce' (the passes, in order: resolve, simplify-cfg, check-prange)          (exit 2)
"""

from __future__ import annotations

import pytest

from aot.ir import parse_function, print_function, verify
from aot.passes import pipeline
from cli_support import assert_one_line_error, build_copy, invoke, run_aot

CLAMP = "numkit.core:clamp(f64, f64, f64)"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return build_copy(tmp_path_factory.mktemp("until") / "numkit")


def ir(built, method, *until):
    out = invoke("inspect", str(built), "--ir", method, *until)
    assert out.returncode == 0, (out.stderr, out.exception)
    return out.stdout


def test_the_last_pass_gives_the_stored_ir(built):
    last = pipeline.pass_names()[-1]
    assert ir(built, CLAMP, "--until", last) == ir(built, CLAMP)
    assert ir(built, "numkit.stats:mean", "--until", last) == ir(built, "numkit.stats:mean")  # both entries


def test_until_resolve_is_typed_ir_before_the_other_passes(built):
    text = ir(built, CLAMP, "--until", "resolve")
    fn = parse_function(text)
    assert print_function(fn) == text
    verify(fn)
    stored = parse_function(ir(built, CLAMP))
    assert len(fn.blocks) > len(stored.blocks)  # simplify-cfg has not run yet


def test_unknown_pass_is_a_usage_error_listing_the_passes(built):
    out = run_aot("inspect", str(built), "--ir", CLAMP, "--until", "dce")
    assert_one_line_error(out, "unknown pass 'dce'", ", ".join(pipeline.pass_names()))


@pytest.mark.parametrize("args", [("--until", "resolve"), ("--llvm", "clamp", "--until", "resolve")])
def test_until_goes_with_ir(built, args):
    assert_one_line_error(invoke("inspect", str(built), *args), "--until goes with --ir")
