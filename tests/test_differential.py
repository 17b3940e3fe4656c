"""Differential test: compiled ``f(*args)`` against plain Python ``f.py_func(*args)``.

    random program (tests/progen.py) -> temp module file -> import -> @aot.jit entry
    entry(*args) == entry.py_func(*args)   (exact, type-aware, NaN-aware; or the same exception type)

CI runs a bounded number of Hypothesis examples; run longer locally with
``AOT_DIFF_EXAMPLES=5000 python3 -m pytest tests/test_differential.py -x``.  A failure prints the whole
generated module, the arguments and both outcomes; paste the module into a file to reproduce.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import os
import random
import sys
import uuid
import warnings

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import progen

EXAMPLES = int(os.environ.get("AOT_DIFF_EXAMPLES", "40"))
_serial = itertools.count()


@pytest.fixture(scope="module")
def gen_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("aot_diff")


def load_entry(source: str, directory, entry: str = "entry"):
    """Write ``source`` to a fresh file under a unique module name, import it, return ``entry``."""
    name = f"aot_diff_{os.getpid()}_{next(_serial)}_{uuid.uuid4().hex[:8]}"
    path = directory / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return getattr(module, entry)


def check_all(fn, source: str, arg_sets) -> None:
    """Compare compiled and plain Python on every argument tuple; fail with a reproducible report."""
    failures = []
    for args in arg_sets:
        expected = progen.outcome(fn.py_func, args)
        got = progen.outcome(fn, args)
        if not progen.same_outcome(expected, got):
            failures.append(
                f"  args {args!r}:\n    python   {progen.describe(expected)}\n    compiled {progen.describe(got)}"
            )
    if failures:
        pytest.fail(
            "compiled code disagrees with plain Python\n"
            + "\n".join(failures)
            + "\n--- generated module ---\n"
            + source
            + "--- end ---",
            pytrace=False,
        )


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
@given(prog=progen.hypothesis_programs(), data=st.data())
def test_compiled_matches_python(prog, gen_dir, data):
    arg_sets = data.draw(st.lists(progen.hypothesis_args(prog.params), min_size=3, max_size=6), label="arg_sets")
    note(prog.source)
    entry = load_entry(prog.source, gen_dir)
    check_all(entry, prog.source, arg_sets)


# -- fixed seeds of the same generator: deterministic, quick to re-run by id -------------------------


@pytest.mark.parametrize("seed", range(12))
def test_generated_seed(seed, gen_dir):
    prog = progen.generate(progen.RandomChooser(random.Random(seed)))
    rng = random.Random(1000 + seed)
    entry = load_entry(prog.source, gen_dir)
    check_all(entry, prog.source, [progen.random_args(rng, prog.params) for _ in range(8)])


# -- the generator itself (plain Python only: runs whatever the state of the compiler) --------------


def test_generator_stays_in_subset():
    """Programs run fast and never leave int64 or change a variable's type (checked by instrumentation)."""
    tmap = {progen.INT: int, progen.FLOAT: float, progen.BOOL: bool}
    for seed in range(150):
        prog = progen.generate(progen.RandomChooser(random.Random(seed)))
        fn = progen.checked_namespace(prog.source)["entry"]
        rng = random.Random(seed)
        for _ in range(4):
            args = progen.random_args(rng, prog.params)
            kind, value = progen.outcome(fn, args)
            if kind == "raise":
                assert isinstance(
                    value, (ArithmeticError, ValueError, AssertionError, RuntimeError)
                ) and not isinstance(value, (progen.Int64Escape, progen.TypeDrift)), (
                    f"seed {seed} args {args!r}: {value!r}\n{prog.source}"
                )
                continue
            want = prog.ret if isinstance(prog.ret, tuple) else (prog.ret,)
            got = value if isinstance(prog.ret, tuple) else (value,)
            assert tuple(type(v) for v in got) == tuple(tmap[t] for t in want), (
                f"seed {seed}: returned {value!r}, declared {prog.ret}\n{prog.source}"
            )


def test_same_result_is_strict():
    assert progen.same_result(math.nan, -math.nan)
    assert not progen.same_result(0.0, -0.0)
    assert not progen.same_result(1, 1.0)
    assert not progen.same_result(True, 1)
    assert progen.same_result((1, 2.5, False), (1, 2.5, False))
    assert not progen.same_result((1, 2.5), (1, 2.5, 0))


# -- hand-written regressions: corners where a compiler is easily wrong ------------------------------

INF, NAN = math.inf, math.nan

REGRESSIONS = {
    "float_mod_floordiv_signs": (
        """
import aot

@aot.jit
def entry(f0, f1):
    return f0 % f1, f0 // f1, (-f0) % f1
""",
        [
            (-0.0, 5.0),
            (0.0, -5.0),
            (INF, 1.0),
            (-1.0, INF),
            (1.0, INF),
            (5.5, -2.0),
            (-5.5, 2.0),
            (1.0, 0.0),
            (NAN, 1.0),
            (1e300, 1e-300),
        ],
    ),
    "int_floordiv_mod_pow": (
        """
import aot

@aot.jit
def entry(i0, i1):
    return i0 // i1, i0 % i1, i0 ** 2, -i0 // 3, i0 / i1
""",
        [(-7, 2), (7, -3), (-7, -3), (0, 5), (5, 0), (2**31, 7), (-(2**31), -1)],
    ),
    "min_max_nan_and_signed_zero": (
        """
import aot

@aot.jit
def entry(f0, f1):
    return min(f0, f1), max(f0, f1), min(f1, f0), max(f1, f0, 0.0), abs(f0)
""",
        [(NAN, 1.0), (1.0, NAN), (0.0, -0.0), (-0.0, 0.0), (-INF, INF), (-0.0, NAN)],
    ),
    "and_or_return_deciding_operand": (
        """
import aot

@aot.jit
def entry(i0, i1, f0):
    a = i0 and i1
    b = i0 or i1
    c = f0 or 2.5
    d = f0 and 2.5
    return a, b, c, d, not f0, not i0
""",
        [(0, 5, 0.0), (3, 0, -0.0), (-1, 2, NAN), (0, 0, 1.5), (7, 8, -INF)],
    ),
    "loops_negative_steps_and_else": (
        """
import aot

@aot.jit
def entry(i0):
    s = 0
    for k in range(i0 % 17, -1, -1):
        s = s * 3 + k
    for k in range(10, i0 % 7 - 5, -3):
        if k == 4:
            break
        s -= k
    else:
        s += 1000
    w = 0
    while w < 20:
        w += 1
        if w % 3 == 0:
            continue
        if s + w == i0:
            break
        s += w
    else:
        s -= 1
    return s, w
""",
        [(0,), (1,), (5,), (16,), (-3,), (2**31,), (40,)],
    ),
    "math_domain_and_range_errors": (
        """
import math
import aot

@aot.jit
def entry(f0):
    a = math.sqrt(f0)
    b = math.log(f0)
    c = math.exp(f0)
    d = math.sin(f0)
    return a, b, c, d, math.floor(f0)
""",
        [(4.0,), (-1.0,), (0.0,), (-0.0,), (710.0,), (INF,), (NAN,), (1e-300,), (1e300,), (2.5,)],
    ),
    "float_to_int_conversions": (
        """
import math
import aot

@aot.jit
def entry(f0):
    return int(f0), math.floor(f0), math.ceil(f0), math.trunc(f0), round(f0)
""",
        [(0.5,), (1.5,), (2.5,), (-0.5,), (-2.5,), (-3.7,), (NAN,), (INF,), (-INF,), (123456.5,)],
    ),
    "float_pow": (
        """
import aot

@aot.jit
def entry(f0, i0):
    return f0 ** 2, f0 ** 3, f0 ** -1, abs(f0) ** 0.5, i0 ** -1
""",
        [(2.0, 4), (-8.0, -2), (0.0, 1), (-0.0, 1), (1e200, 3), (INF, 1), (NAN, 2), (1.5, 0)],
    ),
    "helpers_chain_and_tuples": (
        """
import math
import aot

K = 7
KT = (3, 0.5)


def h0(i0, f0):
    return (i0 * K) % 101, f0 * KT[1]


def h1(i0):
    a, b = h0(i0, float(i0))
    t = (a, b, a > b)
    if t[2]:
        return t[0] - KT[0]
    return a


@aot.jit
def entry(i0, f0):
    x = h1(i0)
    y, z = h0(x, f0)
    return x, y, z, h0(i0, -f0)[1]
""",
        [(0, 0.0), (5, -1.5), (-9, NAN), (2**31, INF), (101, -0.0)],
    ),
    "comparisons_chained_mixed_and_bool_arith": (
        """
import aot

@aot.jit
def entry(i0, f0):
    b = 0 <= i0 < f0
    c = i0 == f0
    d = (i0 > 3) + (f0 < 1.0) + i0
    return b, c, d, int(f0 != f0), f0 < i0 <= 10
""",
        [(0, 0.0), (1, 1.0), (2, NAN), (-1, -INF), (5, 5.5), (11, 100.0), (3, -0.0)],
    ),
    # CPython's math.hypot is its own algorithm, not libm's hypot: these three differ from glibc's by
    # one ulp, so a compiled hypot has to follow CPython's.
    "math_hypot_matches_cpython": (
        """
import math
import aot

@aot.jit
def entry(f0, f1):
    return math.hypot(f0, f1)
""",
        [
            (68492.0446280365, 36699.67709674842),
            (1.5310237511400702, -0.464256700087853),
            (-0.085302910274687, -0.05375491450898171),
            (3.0, 4.0),
            (INF, NAN),
            (NAN, 1.0),
            (-0.0, 0.0),
        ],
    ),
    "raise_and_assert": (
        """
import aot

@aot.jit
def entry(i0):
    assert i0 != 3, "three"
    if i0 > 10:
        raise ValueError("too big")
    return i0 * 2
""",
        [(0,), (3,), (11,), (-5,)],
    ),
}


@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_regression(name, gen_dir):
    source, arg_sets = REGRESSIONS[name]
    check_all(load_entry(source, gen_dir), source, arg_sets)


def check_views(entry, source: str, arg_sets) -> None:
    """Compare compiled and plain Python (NumPy) on slicing programs: the result, or the exception type, and
    both arrays' contents after the call."""
    import numpy as np

    from support import clone, same_array

    for args in arg_sets:
        py_args, jit_args = clone(args), clone(args)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # (NumPy's "mean of empty slice")
            expected = progen.outcome(entry.py_func, py_args)
        if expected[0] == "ok":
            expected = ("ok", float(expected[1]))
        got = progen.outcome(entry, jit_args)
        same = progen.same_outcome(expected, got) and all(same_array(x, y) for x, y in zip(py_args[:2], jit_args[:2]))
        assert same, (
            f"compiled code disagrees with plain Python on {args!r}:\n    python   {progen.describe(expected)}"
            f"\n    compiled {progen.describe(got)}\n--- generated module ---\n{source}"
        )


@pytest.mark.parametrize("seed", range(int(os.environ.get("AOT_DIFF_VIEW_SEEDS", "40"))))
def test_generated_views_seed(seed, gen_dir):
    """Random slicing programs (``progen.generate_views``) against NumPy, arrays included."""
    prog = progen.generate_views(progen.RandomChooser(random.Random(seed)))
    rng = random.Random(seed)
    check_views(load_entry(prog.source, gen_dir), prog.source, [progen.view_args(rng) for _ in range(6)])


@settings(
    max_examples=max(EXAMPLES // 2, 1),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
@given(data=st.data(), rng=st.randoms(use_true_random=False))
def test_view_programs_match_numpy(gen_dir, data, rng):
    """The same with Hypothesis choosing the program (failures shrink to small programs)."""
    prog = progen.generate_views(progen.HypothesisChooser(data.draw))
    note(prog.source)
    check_views(load_entry(prog.source, gen_dir), prog.source, [progen.view_args(rng) for _ in range(4)])
