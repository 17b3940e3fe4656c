"""The type lattice against its laws, and the signature syntax."""

from __future__ import annotations

import itertools

import pytest

from aot.types import (
    BOOL,
    BOTTOM,
    F32,
    F64,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    ArrayType,
    TupleType,
    format_signature,
    join,
    parse_signature,
    parse_type,
    widen,
)

SCALARS = [BOOL, I8, I16, I32, I64, U8, U16, U32, U64, F32, F64]
SAMPLES = SCALARS + [
    BOTTOM,
    ArrayType(F64, 1, "C"),
    ArrayType(F64, 1, "A"),
    ArrayType(I64, 2, "A"),
    TupleType((I64, F64)),
    TupleType((F64, F64)),
    TupleType((I64,)),
]


def test_join_is_commutative():
    for a, b in itertools.product(SAMPLES, repeat=2):
        assert join(a, b) == join(b, a), (a, b)


def test_join_is_idempotent_and_bottom_is_identity():
    for a in SAMPLES:
        assert join(a, a) == a
        assert join(BOTTOM, a) == a


def test_join_is_associative_where_defined():
    for a, b, c in itertools.product(SAMPLES, repeat=3):
        ab, bc = join(a, b), join(b, c)
        left = None if ab is None else join(ab, c)
        right = None if bc is None else join(a, bc)
        if left is not None and right is not None:
            assert left == right, (a, b, c)


def test_join_is_an_upper_bound():
    for a, b in itertools.product(SAMPLES, repeat=2):
        j = join(a, b)
        if j is not None:
            assert join(a, j) == j and join(b, j) == j, (a, b)


def test_int_and_float_unify_other_conflicts_do_not():
    assert join(I64, F64) == F64
    assert join(BOOL, I64) == I64
    assert join(ArrayType(F64, 1), F64) is None
    assert join(TupleType((I64,)), TupleType((I64, I64))) is None


def test_widening_terminates():
    """A chain that grows every round, (boolean, boolean) < (u8, boolean) < (u8, u8) < … < (f64, f64), is cut
    off by widening after its limit of rounds, where join would still have gone on."""
    climb = [BOOL, U8, I8, U16, I16, U32, I32, U64, I64, F32, F64]
    chain = [TupleType((climb[(k + 1) // 2], climb[k // 2])) for k in range(2 * len(climb) - 1)]
    assert all(join(a, b) == b != a for a, b in zip(chain, chain[1:]))
    t = chain[0]
    for rounds, new in enumerate(chain[1:]):
        widened = widen(t, new, rounds, limit=8)
        if widened is None:
            break
        t = widened
    else:
        pytest.fail("widening never gave up on a chain that grows every round")
    assert rounds == 8 and join(t, new) == new  # stopped by the limit, not by a conflict


@pytest.mark.parametrize(
    "text", ["f64(f64[:], i64)", "none(f64[:, ::1], f64[:, :])", "(f64, i64)(f64)", "boolean(u8, i8)", "f32()"]
)
def test_signature_round_trip(text):
    ret, args = parse_signature(text)
    assert parse_signature(format_signature(ret, args)) == (ret, args)


@pytest.mark.parametrize("bad", ["f65", "f64[", "f64[::1, :]", "f64(", "f64(i64", "(f64"])
def test_bad_type_strings_are_clear_errors(bad):
    with pytest.raises(ValueError, match="bad type"):
        parse_signature(bad) if "(" in bad[1:] else parse_type(bad)
