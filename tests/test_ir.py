"""The IR: printer and parser are inverses, the verifier accepts what the compiler makes, goldens.

Regenerate the golden files with ``python3 -m pytest tests/test_ir.py --update-goldens`` and review
the diff.
"""

from __future__ import annotations

import re
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


# ------------------------------------------------------------------------------------------------ nowrap
def _nowrap_adds(fn):
    """``(lhs, rhs)`` of every flagged add, the names' numbers dropped: ``("$k", "1")`` for ``$k3 + %1``."""
    from aot.ir import BinOp

    def stem(name: str) -> str:
        return name.rstrip("0123456789") or "const"

    return [(stem(op.lhs.name), stem(op.rhs.name)) for _, op in fn.ops() if isinstance(op, BinOp) and op.nowrap]


def test_counted_loops_flag_their_step_and_unit_step_range_items_nowrap():
    """The frontend says on the IR which adds cannot wrap (``aot/frontend/loops.py``): every counted loop's
    ``$k + 1``, and ``start + $k`` of a ``range`` with the constant step 1; nothing else, whatever the
    variables are called."""
    import aot

    @aot.jit
    def loops_demo(a, n, s):
        t = 0.0
        for i in range(2, n):  # step 1: the counter and start + k
            t += a[i]
        for i in range(0, n, s):  # step unknown: the counter only
            t += a[i]
        for i in reversed(range(n)):  # (the reversed index is left unflagged)
            t += a[i]
        for x in a:
            t += x
        t += sum(range(n)) + (s in range(n)) + max(range(1, n + 1))  # (in: no loop; max: item 0 too)
        t += 1.5 in a
        start = 5
        k = n
        t += start + k  # (a user's add: never flagged)
        t += sum([start + k for start in range(3) for k in range(2)])  # (comprehension targets: $start.N, $k.N)
        return t

    fn = loops_demo.__aot_method__.untyped()
    adds = _nowrap_adds(fn)
    assert adds.count(("$start", "$k")) == 1 + 1 + 1 + 2  # for, sum, max (its loop), the comprehension's loops
    assert adds.count(("$start", "const")) == 1  # max(range(…)): its first item
    assert adds.count(("$k", "const")) == 4 + 2 + 4  # every counted loop's step: the fors, the comprehension's,
    assert len(adds) == 16  # sum(range), max, in, and sum over the list
    text = print_function(fn)
    assert re.search(r"binop add, %\$start\.\d+, %\$k\.\d+  @", text)  # (the comprehension's start + k)
    assert text.count(", nowrap  @") == 16
    assert print_function(parse_function(text)) == text and parse_function(text) == fn
    verify(fn)


def test_nowrap_round_trips_and_old_records_decode():
    """``nowrap`` prints as a trailing keyword only when set; text and the stored form read it back, and a
    stored record from before the flag (no field) reads as not set."""
    import msgpack

    from aot.ir import BinOp, BinOpKind, Var
    from serializer.irformat import decode_function, encode_function

    text = (
        'func demo:f(%n: i64) -> i64  file "demo.py" @1:1-3:9\n'
        "bb0:\n"
        "  %0: i64 = const 1  @2:5-2:6\n"
        "  %1: i64 = binop add, %n, %0, nowrap  @2:5-2:10\n"
        "  %2: i64 = binop add, %1, %0  @2:5-2:10\n"
        "  ret %2  @3:5-3:9\n"
    )
    fn = parse_function(text)
    first, second = fn.blocks[0].ops[1:3]
    assert first == BinOp(Var("1"), BinOpKind.ADD, Var("n"), Var("0"), first.span, nowrap=True)
    assert isinstance(second, BinOp) and not second.nowrap
    assert print_function(fn) == text
    verify(fn)
    assert decode_function(encode_function(fn)) == fn
    rec = msgpack.unpackb(encode_function(fn), raw=False)
    for op_rec in rec[6][0][1]:
        if op_rec[0] == "binop":
            del op_rec[5]  # (the flag: a record written before it existed)
    old = decode_function(msgpack.packb(rec, use_bin_type=True))
    assert [op for _, op in old.ops()] == [op for _, op in fn.ops()][:1] + [
        BinOp(op.dest, op.op, op.lhs, op.rhs, op.span) for op in (first, second)
    ] + [fn.blocks[0].ops[3]]


def test_verifier_rejects_nowrap_off_an_add():
    from aot.ir import IRVerifyError

    text = (
        'func demo:f(%n: i64) -> i64  file "demo.py" @1:1-3:9\n'
        "bb0:\n"
        "  %0: i64 = const 1  @2:5-2:6\n"
        "  %1: i64 = binop mul, %n, %0, nowrap  @2:5-2:10\n"
        "  ret %1  @3:5-3:9\n"
    )
    with pytest.raises(IRVerifyError, match="nowrap on binop mul"):
        verify(parse_function(text))
