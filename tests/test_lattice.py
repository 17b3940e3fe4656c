"""The type lattice against its laws, over generated elements, and widening in the solver.

    join(a, b) == join(b, a);  join(a, a) == a;  join(join(a, b), c) == join(a, join(b, c));  a <= join(a, b)
    widening cuts off any sequence after its limit of rounds of growth, in the solver too

``join`` returns None where two types conflict: the lattice's top, which absorbs everything (``join*``
below), so the laws hold for every pair and triple, conflicts included.
"""

from __future__ import annotations

import importlib.util
import math
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

import aot
from aot.infer import solver
from aot.types import (
    BOOL,
    BOTTOM,
    F32,
    F64,
    I8,
    I16,
    I32,
    I64,
    NONE,
    U8,
    U16,
    U32,
    U64,
    ArrayType,
    PyValueType,
    TupleType,
    Type,
    join,
    widen,
)

NUMBERS = [BOOL, U8, I8, U16, I16, U32, I32, U64, I64, F32, F64]  # the order join climbs, least first
LIMIT = 8  # widen's default limit

scalars = st.sampled_from(NUMBERS + [NONE])
arrays = st.builds(ArrayType, st.sampled_from(NUMBERS), st.integers(1, 3), st.sampled_from("CA"))
pyvalues = st.sampled_from([PyValueType(math), PyValueType(len), PyValueType(math.sqrt)])
types = st.recursive(
    st.one_of(st.just(BOTTOM), scalars, arrays, pyvalues),
    lambda inner: st.lists(inner, max_size=3).map(lambda items: TupleType(tuple(items))),
    max_leaves=8,
)


def join_star(a: Type | None, b: Type | None) -> Type | None:
    """``join`` with None as the top element: a conflict stays a conflict."""
    return None if a is None or b is None else join(a, b)


def leq(a: Type, b: Type) -> bool:
    return join(a, b) == b


@given(types, types)
def test_join_is_commutative(a, b):
    assert join(a, b) == join(b, a)


@given(types)
def test_join_is_idempotent_and_bottom_is_its_identity(a):
    assert join(a, a) == a
    assert join(BOTTOM, a) == a == join(a, BOTTOM)


@given(types, types, types)
def test_join_is_associative(a, b, c):
    assert join_star(join(a, b), c) == join_star(a, join(b, c))


@given(types, types)
def test_join_is_the_least_upper_bound(a, b):
    j = join(a, b)
    if j is None:
        return
    assert leq(a, j) and leq(b, j)


@given(types, types, types)
def test_join_is_least_among_upper_bounds(a, b, c):
    if leq(a, c) and leq(b, c):
        j = join(a, b)
        assert j is not None and leq(j, c)


@given(st.lists(types, max_size=30))
def test_widening_sequences_terminate_within_the_limit(sequence):
    """Whatever arrives, round after round, the widened value grows in at most ``LIMIT`` rounds and always
    covers what it joined (or gives up with None)."""
    t: Type = BOTTOM
    growths = 0
    for rounds, new in enumerate(sequence):
        widened = widen(t, new, rounds)
        if widened is None:
            assert join(t, new) is None or rounds >= LIMIT
            return
        assert leq(t, widened) and leq(new, widened)
        if widened != t:
            growths += 1
            assert rounds < LIMIT
        t = widened
    assert growths <= LIMIT


# ------------------------------------------------------------------------------------- in the solver


def _shift_source(width: int) -> str:
    """A recursive function whose return type is a tuple of ``width`` items; each round of inference turns
    one more item from boolean into int (``(1, t[0], t[1], …)``), so the type grows for ``width + 1`` rounds."""
    items = ", ".join(f"t[{i}]" for i in range(width - 1))
    return (
        f"@aot.jit\n"
        f"def shift{width}(n):\n"
        f"    if n == 0:\n"
        f"        return ({', '.join(['False'] * width)},)\n"
        f"    t = shift{width}(n - 1)\n"
        f"    return (1, {items})\n\n\n"
    )


@pytest.fixture(scope="module")
def shifts(tmp_path_factory):
    """A module (a real file: the frontend reads a function's source) with shift7 and shift8."""
    path = tmp_path_factory.mktemp("lattice") / "lattice_shifts.py"
    path.write_text("import aot\n\n\n" + _shift_source(LIMIT - 1) + _shift_source(LIMIT))
    spec = importlib.util.spec_from_file_location("lattice_shifts", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


@pytest.fixture
def widenings(monkeypatch):
    """Every call the solver makes to ``widen``: (rounds, old, new, result)."""
    calls = []

    def recording(old, new, rounds, limit=LIMIT):
        result = widen(old, new, rounds, limit)
        calls.append((rounds, old, new, result))
        return result

    monkeypatch.setattr(solver, "widen", recording)
    return calls


def test_a_return_type_that_grows_below_the_limit_settles(shifts, widenings):
    f = shifts.shift7
    assert f(3) == f.py_func(3) == (1, 1, 1, False, False, False, False)
    assert max(rounds for rounds, *_ in widenings) == LIMIT - 1


def test_a_return_type_that_grows_every_round_reaches_the_widening_limit(shifts, widenings):
    f = shifts.shift8
    with pytest.raises(aot.CompileError, match="the return type of this recursive function does not settle"):
        f(3)
    rounds, old, new, result = widenings[-1]
    assert rounds == LIMIT and result is None and join(old, new) == new != old  # widening, not a conflict
