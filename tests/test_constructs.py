"""The small constructs (SUBSET.md, "Beyond the floor"): enumerate, zip, reversed, for over tuples, loop
targets that unpack, ``in`` on tuples and ranges, sum/min/max/any/all over iterables, divmod, pow,
isinstance folded at compile time, strings as compile-time constants; every result is compared with plain
Python (``f.py_func``), and every neighbour left out is a clean CompileError at its ``file:line:col``.

PYTEST_DONT_REWRITE: assert messages of compiled methods are compared with plain Python.
"""

import ast
import math

import numpy as np
import pytest

import aot

try:
    from .support import check, expect_compile_error, locate
except ImportError:  # tests/ is not a package
    from support import check, expect_compile_error, locate

NAN = float("nan")
INF = float("inf")

ARRAYS = [
    np.array([], dtype=np.float64),
    np.array([2.5]),
    np.array([3.0, -1.0, 4.0, 1.5, -5.0, 9.0]),
    np.arange(10.0)[::-2],  # negative strides
    np.array([1.0, NAN, -2.0]),
    np.array([NAN, 1.0]),
]
ARRAY_IDS = ["empty", "one", "six", "negstride", "nan-mid", "nan-first"]
MODE = "fast"
OTHER_MODE = "slow"
LIMITS = (1, 5, 10)


# ======================================================================================================
# enumerate
# ======================================================================================================


@aot.jit
def enum_weighted(a):
    s = 0.0
    for i, x in enumerate(a):
        s += x * i
    return s


@aot.jit
def enum_start(a, start):
    s = 0.0
    last = -1
    for i, x in enumerate(a, start):
        s += x * i
        last = i
    return s, last


@aot.jit
def enum_start_keyword(a):
    last = 0
    for i, x in enumerate(a, start=-3):
        last = i
    return last


@aot.jit
def enum_tuple_target(a):
    s = 0.0
    for pair in enumerate(a):
        s += pair[0] + pair[1]
    return s


@aot.jit
def enum_range(n):
    s = 0
    for i, v in enumerate(range(n, 0, -3)):
        s += i * 100 + v
    return s


@aot.jit
def enum_break_else(a, limit):
    found = -1
    for i, x in enumerate(a):
        if x > limit:
            found = i
            break
        if x < 0:
            continue
    else:
        found = -2
    return found


@pytest.mark.parametrize("a", ARRAYS, ids=ARRAY_IDS)
def test_enumerate_arrays(a):
    check(enum_weighted, a)
    for start in (0, 1, -7):
        check(enum_start, a, start)
    check(enum_start_keyword, a)
    check(enum_tuple_target, a)
    for limit in (0.0, 2.0, 100.0):
        check(enum_break_else, a, limit)


@pytest.mark.parametrize("n", [0, 1, 2, 10, -4])
def test_enumerate_range(n):
    check(enum_range, n)


def test_enumerate_bool_start_and_tuple():
    check(enum_start, np.array([1.0, 2.0]), True)
    check(enum_tuple_target, (1.5, 2.5, 3.5))


@aot.jit
def enum_float_start(a):
    s = 0.0
    for i, x in enumerate(a, 1.5):
        s += i
    return s


@aot.jit
def enum_not_iterable(x):
    s = 0
    for i, v in enumerate(x):
        s += i
    return s


def test_enumerate_float_start_is_a_compile_error():
    err = expect_compile_error(enum_float_start, np.arange(2.0), at=locate(enum_float_start, "1.5"))
    assert "cannot be interpreted as an integer" in str(err)


def test_enumerate_of_a_number_is_a_compile_error():
    err = expect_compile_error(
        enum_not_iterable, 5, at=locate(enum_not_iterable, "enumerate(x)", offset=10), node_type=ast.Name
    )
    assert "cannot iterate" in str(err)


# ======================================================================================================
# zip
# ======================================================================================================


@aot.jit
def zip_dot(a, b):
    s = 0.0
    for x, y in zip(a, b):
        s += x * y
    return s


@aot.jit
def zip_three(a, n, t):
    s = 0.0
    count = 0
    for x, i, v in zip(a, range(n), t):
        s += x * i - v
        count += 1
    return s, count


@aot.jit
def enum_zip(a, b):
    s = 0.0
    for i, (x, y) in enumerate(zip(a, b), 1):
        s += i * (x - y)
    return s


@aot.jit
def zip_nested_pairs(a, b):
    s = 0.0
    for p, y in zip(enumerate(a), b):
        s += p[0] * y + p[1]
    return s


@aot.jit
def zip_write(a, out):
    for k, (x, y) in enumerate(zip(a, a[::1] if False else a)):
        out[k] = x + y


@pytest.mark.parametrize("a", ARRAYS, ids=ARRAY_IDS)
def test_zip_stops_at_the_shortest(a):
    for b in (np.arange(3.0), np.arange(8.0)[::-1], np.array([], dtype=np.float64)):
        check(zip_dot, a, b)
        check(enum_zip, a, b)
        check(zip_nested_pairs, a, b)
    for n in (0, 2, 9):
        check(zip_three, a, n, (1.0, 2.0, 3.0, 4.0))


@aot.jit
def zip_value(a, b):
    z = zip(a, b)
    return 0


def test_zip_as_a_value_is_a_compile_error():
    err = expect_compile_error(zip_value, np.arange(2.0), np.arange(2.0), at=locate(zip_value, "zip(a, b)"))
    assert "for loop" in str(err)


@aot.jit
def zip_strict(a, b):
    s = 0.0
    for x, y in zip(a, b, strict=True):
        s += x
    return s


def test_zip_strict_is_a_compile_error():
    expect_compile_error(zip_strict, np.arange(2.0), np.arange(2.0), at=locate(zip_strict, "True"))


@aot.jit
def unpack_too_many(a, b):
    s = 0.0
    for x, y, z in zip(a, b):
        s += x
    return s


def test_unpacking_the_wrong_count_is_a_compile_error():
    err = expect_compile_error(
        unpack_too_many, np.arange(2.0), np.arange(2.0), at=locate(unpack_too_many, "x, y, z"), node_type=ast.Tuple
    )
    assert "cannot unpack 2 values into 3 names" in str(err)


# ======================================================================================================
# reversed
# ======================================================================================================


@aot.jit
def rev_range(a, b, c):
    s = 0
    n = 0
    for i in reversed(range(a, b, c)):
        s = s * 3 + i
        n += 1
    return s, n


@aot.jit
def rev_range1(n):
    out = 0
    for i in reversed(range(n)):
        out = out * 10 + i
    return out


@aot.jit
def rev_array(a):
    s = 0.0
    first = 0.0
    for k, x in enumerate(reversed(a)):
        s = s * 0.5 + x
        if k == 0:
            first = x
    return s, first


@pytest.mark.parametrize(
    "args", [(0, 10, 1), (0, 10, 3), (10, 0, -3), (5, 5, 1), (-7, 8, 4), (3, -9, -2), (0, 1, 5), (2, 1, 1)]
)
def test_reversed_range(args):
    check(rev_range, *args)


def test_reversed_range_zero_step_raises():
    check(rev_range, 0, 5, 0, raises=ValueError)


@aot.jit
def huge_ranges(a, b):
    n = 0
    s = 0
    for i in range(a, b):
        n += 1
        if n > 3:
            break
    for i, v in enumerate(range(a, b, 3)):
        s += i
        if i > 3:
            break
    for v, w in zip(range(a, b), range(b, a, -1)):
        s = (s + v % 1000 - w % 1000) % 1000
        n += 1
        if n > 7:
            break
    return n, s


def test_ranges_longer_than_int64_still_loop():
    # (their length does not fit in an i64: loops once stopped before the first iteration)
    for a, b in ((-26, 2**63 - 1), (-(2**63), 2**63 - 1), (-(2**63), 0), (0, 2**63 - 1)):
        check(huge_ranges, a, b)


@aot.jit
def rev_first(a, b, c):
    for i in reversed(range(a, b, c)):
        return i
    return 0


def test_reversed_of_a_range_too_long_to_count_raises():
    err = pytest.raises(OverflowError, rev_range, -(2**63), 2**63 - 1, 1)
    assert "2**63 - 1 items" in str(err.value)
    for args in ((2**63 - 3, 2**63 - 1, 1), (-(2**63), -(2**63) + 2, 1), (2**63 - 1, -(2**63), -(2**62))):
        check(rev_first, *args)


@pytest.mark.parametrize("n", [0, 1, 7, -2])
def test_reversed_range_one_argument(n):
    check(rev_range1, n)


@pytest.mark.parametrize("a", ARRAYS, ids=ARRAY_IDS)
def test_reversed_array(a):
    check(rev_array, a)


def test_reversed_tuple():
    check(rev_array, (1.0, 2.0, 4.0))


@aot.jit
def rev_enumerate(a):
    s = 0.0
    for i, x in reversed(enumerate(a)):
        s += x
    return s


def test_reversed_enumerate_is_a_compile_error():
    err = expect_compile_error(
        rev_enumerate, np.arange(2.0), at=locate(rev_enumerate, "enumerate(a)", nth=1), node_type=ast.Call
    )
    assert "reversed() of enumerate()" in str(err)


@aot.jit
def iterate_2d(a):
    s = 0.0
    for row in a:
        s += 1.0
    return s


@aot.jit
def enumerate_2d(a):
    s = 0.0
    for i, row in enumerate(a):
        s += row[0] * i + row[-1]
    for j, row in enumerate(reversed(a)):
        s -= row[0] * j
    for row, col in zip(a, a.T):
        s += row[0] * col[-1]
    return s


@pytest.mark.parametrize(
    "a",
    [np.zeros((2, 2)), np.arange(12.0).reshape(4, 3), np.arange(12.0).reshape(3, 4).T, np.ones((0, 3))],
    ids=["zeros", "C", "F", "empty"],
)
def test_iterating_a_2d_array_gives_its_rows(a):
    check(enumerate_2d, a)


# ======================================================================================================
# for over tuples
# ======================================================================================================


@aot.jit
def over_display(x, limit):
    s = 0.0
    for v in (1, 2.5, x, -4):
        if v > limit:
            break
        if v < 0:
            continue
        s += v
    else:
        s = -s
    return s


@aot.jit
def over_tuple_arg(t):
    s = 0
    for v in t:
        s = s * 2 + v
    return s


@aot.jit
def over_tuple_pairs(t):
    s = 0.0
    for a, b in t:
        s += a * b
    return s


@aot.jit
def over_empty_display(x):
    s = x
    for v in ():
        s = 100
    else:
        s += 1
    return s


@aot.jit
def over_display_unpack(x):
    s = 0.0
    for i, (a, b) in enumerate(((1, 2.0), (x, 3.0))):
        s += i * a * b
    for a, b in ((1, 2), (3, x)):
        s += a - b
    return s


@pytest.mark.parametrize("x,limit", [(3.0, 10.0), (7.5, 5.0), (0.5, 0.0), (NAN, 3.0), (-1.0, 2.0)])
def test_for_over_a_tuple_display(x, limit):
    check(over_display, x, limit)


def test_for_over_tuples():
    for t in ((5,), (1, 0, 1, 1), (-3, 2)):
        check(over_tuple_arg, t)
    check(over_tuple_pairs, ((1.0, 2.0), (3.0, -4.0)))
    check(over_empty_display, 4)
    check(over_display_unpack, 2)


# ======================================================================================================
# in / not in
# ======================================================================================================


@aot.jit
def in_display(k):
    return k in (1, 2, 3), k not in (2, 4.5), k in (LIMITS[0], LIMITS[2])


@aot.jit
def in_range(x, a, b, c):
    return x in range(a, b, c), x not in range(a, b, c), x in range(a, b), x in range(b)


@aot.jit
def in_tuple_arg(x, t):
    return x in t, x not in t


@aot.jit
def in_array(x, a):
    return x in a


@aot.jit
def in_zip(x, a):
    return (x, x) in zip(a, a)


@aot.jit
def in_branch(k):
    if k in (0, 1):
        return 10
    elif k not in range(-5, 5, 2):
        return 20
    return 30


@pytest.mark.parametrize("k", [0, 1, 2, 3, 4.5, -1, True, NAN, 2.0])
def test_in_tuple_display(k):
    check(in_display, k)


@pytest.mark.parametrize(
    "x", [0, 1, 2, 3, 9, 10, -1, -9, -10, 2**62, -(2**63), 2**63 - 1, 2.0, 2.5, NAN, INF, -0.0, True]
)
@pytest.mark.parametrize("abc", [(0, 10, 1), (0, 10, 3), (10, -10, -2), (-10, 0, -1), (3, 3, 1), (1, 10, 2**62)])
def test_in_range(x, abc):
    check(in_range, x, *abc)


def test_in_range_zero_step_raises():
    check(in_range, 1, 0, 5, 0, raises=ValueError)


def test_in_tuple_argument_and_array():
    for x in (1, 5, 2.0, NAN):
        check(in_tuple_arg, x, (1, 2, 3))
        check(in_array, x, np.array([2.0, 5.0]))
        check(in_array, x, np.array([], dtype=np.float64))


def test_in_branch():
    for k in range(-7, 7):
        check(in_branch, k)


def test_in_zip_compares_tuples_item_by_item():
    for x in (1.0, 0.5, np.nan):
        check(in_zip, x, np.arange(2.0))
    check(in_zip, 1.0, np.zeros(0))


@aot.jit
def in_chain(x, t):
    return 0 < x in t


@aot.jit
def in_mid_chain(x, t):
    return x in t < 5


def test_in_ending_a_chain():
    for x in (-1, 0, 1, 2, 3):
        check(in_chain, x, (1, 2, -1))


def test_in_inside_a_chain_is_a_compile_error():
    expect_compile_error(in_mid_chain, 1, (1, 2), at=locate(in_mid_chain, "x in t < 5"), node_type=ast.Compare)


@aot.jit
def over_empty_tuple(t):
    s = 0
    for v in t:
        s += v
    return s


def test_iterating_an_empty_tuple_argument_is_a_compile_error():
    err = expect_compile_error(over_empty_tuple, (), at=locate(over_empty_tuple, "t:"), node_type=ast.Name)
    assert "empty tuple" in str(err)


# ======================================================================================================
# sum / min / max / any / all, divmod, pow, abs
# ======================================================================================================


@aot.jit
def reduce_array(a):
    return sum(a), sum(a, 10.0), any(a), all(a)


@aot.jit
def min_max_array(a):
    return min(a), max(a)


@aot.jit
def reduce_range(n):
    return sum(range(n)), sum(range(n, 0, -2), 1), any(range(n)), all(range(1, n)), min(range(n, 2 * n)), max(range(n))


@aot.jit
def reduce_tuple(t):
    return (
        sum(t),
        min(t),
        max(t),
        min((t[0], t[-1])),
        max((3,)),
        sum((t[0], 1.5, t[1]), 1),
        any((0, t[0])),
        all((t[0], 0.0)),
    )


@aot.jit
def reduce_zip(a, b):
    s = 0.0
    for x, y in zip(a, b):
        s += x * y
    return s == sum(a) or any(reversed(b)), max(enumerate(a))


@pytest.mark.parametrize("a", ARRAYS[1:], ids=ARRAY_IDS[1:])
def test_reductions_of_arrays(a):
    check(reduce_array, a)
    check(min_max_array, a)


def test_sum_of_an_empty_float_array_is_a_float_zero():
    # (SUBSET.md: the sum's variable joins int 0 and the float items, so it is 0.0 where Python gives 0)
    empty = np.array([], dtype=np.float64)
    assert reduce_array.py_func(empty)[0] == 0 and reduce_array(empty) == (0.0, 10.0, False, True)
    assert type(reduce_array(empty)[0]) is float


def test_min_of_an_empty_array_raises_pythons_message():
    check(min_max_array, np.array([], dtype=np.float64), raises=ValueError, messages=True)


def test_reductions_of_bool_and_int_arrays():
    for a in (np.array([True, False, True]), np.array([0, 0]), np.array([3, -1, 2], dtype=np.int64)):
        check(reduce_array, a)
        check(min_max_array, a)


@pytest.mark.parametrize("n", [1, 2, 5, 10])
def test_reductions_of_ranges(n):
    check(reduce_range, n)


def test_reductions_of_tuples():
    for t in ((1, 2, 3), (4.5, -1.0), (NAN, 1.0), (1.0, NAN, -1.0)):
        check(reduce_tuple, t)


def test_min_max_of_tuples_of_pairs_is_a_compile_error():
    expect_compile_error(reduce_zip, np.arange(2.0), np.arange(2.0), at=locate(reduce_zip, "max(enumerate(a))"))


@aot.jit
def div_mod(a, b):
    return divmod(a, b), abs(a - b)


@aot.jit
def power(a, b):
    return pow(a, b)


@pytest.mark.parametrize(
    "a,b", [(7, 2), (-7, 2), (7, -2), (0, 3), (7, 0), (2, -1), (7.5, 2.0), (-7.5, 2.0), (1.0, 0.0), (-0.0, 3.0)]
)
def test_divmod_abs(a, b):
    check(div_mod, a, b)


@pytest.mark.parametrize("a,b", [(7, 2), (-3, 3), (0, 0), (2.0, -1), (-8.0, 2.0), (0.0, -1.0), (2, 0.5)])
def test_pow_with_two_arguments(a, b):
    check(power, a, b)


@aot.jit
def min_keyword(a):
    return min(a, default=0.0)


def test_min_with_a_keyword_is_a_compile_error():
    expect_compile_error(min_keyword, np.arange(2.0), at=locate(min_keyword, "0.0"), node_type=ast.Constant)


# ======================================================================================================
# while with tuple-unpacking assignments
# ======================================================================================================


@aot.jit
def fib_pair(n):
    a, b = 0, 1
    while n > 0:
        a, b = b, a + b
        n -= 1
    return a


@aot.jit
def gcd_loop(a, b):
    while b:
        a, b = b, a % b
    return abs(a)


def test_while_with_tuple_assignments():
    for n in (0, 1, 2, 10, 50):
        check(fib_pair, n)
    for a, b in ((12, 18), (0, 5), (-12, 8), (7, 0), (17, 5)):
        check(gcd_loop, a, b)


# ======================================================================================================
# isinstance
# ======================================================================================================


@aot.jit
def kind_of(x):
    if isinstance(x, bool):
        return 0
    if isinstance(x, int):
        return 1
    if not isinstance(x, (float, int)):
        return 2
    return 3


@aot.jit
def kind_branch_types(x):
    if isinstance(x, float):
        return math.floor(x)  # (compiled only for floats: the branch is decided at compile time)
    return x


@aot.jit
def kind_of_aggregate(a, t):
    return isinstance(a, (int, float)), isinstance(t, tuple), isinstance(t, int), isinstance(None, int)


@pytest.mark.parametrize("x", [True, 3, -2, 2.5, NAN, (1, 2)])
def test_isinstance(x):
    check(kind_of, x)


def test_isinstance_decides_the_branch_at_compile_time():
    for x in (3, 2.5, -1.5, True):
        check(kind_branch_types, x)
    check(kind_of_aggregate, np.arange(2.0), (1, 2.0))


@aot.jit
def kind_of_f32(x: aot.f32):
    return isinstance(x, float)


@aot.jit
def kind_of_list(x):
    return isinstance(x, np.ndarray)


def test_isinstance_ambiguous_or_unsupported_is_a_compile_error():
    err = expect_compile_error(kind_of_f32, 1.0, at=locate(kind_of_f32, "isinstance(x, float)"), node_type=ast.Call)
    assert "ambiguous" in str(err)
    err = expect_compile_error(
        kind_of_list, 1, at=locate(kind_of_list, "isinstance(x, np.ndarray)"), node_type=ast.Call
    )
    assert "second argument" in str(err)


# ======================================================================================================
# strings as compile-time constants
# ======================================================================================================


@aot.jit
def mode_switch(x):
    if MODE == "fast":
        x = x + 1
    if MODE != OTHER_MODE and "a" < "b":
        x = x * 2
    if not MODE:
        x = -x
    return x


@aot.jit
def string_checks(x):
    label = "positive"
    assert x >= 0, "x must not be negative"
    if label == "negative":
        raise ValueError("unreachable")
    if x > 10:
        raise ValueError("too large")
    return x


@aot.jit
def string_local_compare(x):
    unit = "m"
    if unit in ("m", "km"):
        return x
    return -x


def test_strings_fold_at_compile_time():
    for x in (0, 3, -2):
        check(mode_switch, x)
    for x in (0, 5, 11, -1):
        check(string_checks, x, messages=True)


@aot.jit
def string_arithmetic(x):
    return x + "abc"


@aot.jit
def string_passed(x):
    return mode_switch("x")


@aot.jit
def string_chosen(x):
    s = "a" if x > 0 else "b"
    return x


@aot.jit
def string_compared_with_number(x):
    return x == "abc"


def test_strings_as_runtime_values_are_compile_errors():
    for f, needle, node in (
        (string_arithmetic, 'x + "abc"', ast.BinOp),
        (string_passed, 'mode_switch("x")', ast.Call),
        (string_compared_with_number, 'x == "abc"', ast.Compare),
    ):
        err = expect_compile_error(f, 1, at=locate(f, needle), node_type=node)
        assert "compile-time constants" in str(err), str(err)
    err = expect_compile_error(string_chosen, 1, at=locate(string_chosen, '"a" if x > 0 else "b"'), node_type=ast.IfExp)
    assert "compile-time constants" in str(err)


def test_string_in_tuple_display_compares_as_constants():
    check(string_local_compare, 2)


# ======================================================================================================
# math constants
# ======================================================================================================


@aot.jit
def math_constants():
    return math.pi, math.e, math.tau, math.inf, -math.inf, math.nan != math.nan


def test_math_constants():
    check(math_constants)


# ======================================================================================================
# what inference records and what resolve leaves
# ======================================================================================================


def test_a_string_global_is_an_edge_that_holds_while_its_text_is_the_same():
    from aot.runtime.state import runtime
    from aot.types import I64
    from aot.world.edges import MISSING, EdgeKind, edge_holds

    inst = runtime().compiler.infer(mode_switch.__aot_method__, (I64,))
    globals_read = {(e.target.split(":")[1], e.value) for e in inst.edges if e.kind == EdgeKind.GLOBAL}
    assert globals_read == {("MODE", "fast"), ("OTHER_MODE", "slow")}

    class Now:
        def resolve(self, where):
            return {"m:MODE": "fast", "m:NUMBER": 1}.get(where, MISSING)

    assert edge_holds(EdgeKind.GLOBAL, Now(), "m:MODE", "fast")
    assert not edge_holds(EdgeKind.GLOBAL, Now(), "m:MODE", "slow")
    assert not edge_holds(EdgeKind.GLOBAL, Now(), "m:NUMBER", "1")


def test_compile_time_values_leave_no_runtime_ops():
    for text in (mode_switch.inspect_ir("i64"), kind_of.inspect_ir("f64"), string_local_compare.inspect_ir("i64")):
        body = text.split("\n", 1)[1]
        assert '"' not in body, text  # (no string is left)
        assert "loadglobal" not in body and "callvalue" not in body and " = cmp " not in body, text


@aot.jit
def module_in_a_local(x):
    m = math
    kinds = (int, float)
    return m.sqrt(x) if isinstance(x, kinds) else 0.0


@aot.jit
def module_in_a_tuple(x):
    t = (x, math)
    return t[0]


def test_a_module_held_in_a_local():
    check(module_in_a_local, 4.0)
    check(module_in_a_local, 2)
    err = expect_compile_error(module_in_a_tuple, 1.0, at=locate(module_in_a_tuple, "(x, math)"), node_type=ast.Tuple)
    assert "cannot hold both" in str(err)


def test_untyped_ir_with_a_string_prints_and_parses_back():
    from aot.ir import parse_function, print_function

    fn = string_local_compare.__aot_method__.untyped()
    text = print_function(fn)
    assert '"km"' in text
    assert print_function(parse_function(text)) == text


# ======================================================================================================
# tuples of mixed types in every position
# ======================================================================================================

MIXED = (1, 2.5, True)


def mixed_helper(t):
    a, (b, c) = t
    return (c, b, a)


@aot.jit
def mixed_positions(x, a):
    t = (x, 2.5, True)
    u = t if x > 0 else (0, -1.0, False)
    n = ((x, 1.5), (a, MIXED))
    v = mixed_helper((x, (u[1], n[0][1])))
    for i, (p, q, r) in enumerate((t, u, MIXED)):
        if r:
            v = (q * i, u[1] + p, v[2])
    return u, v, n[0], n[1][1][2], len(n), MIXED, n[1][1]


def test_mixed_tuples_as_values_everywhere():
    for x in (3, -2, 0):
        for a in (np.arange(3.0), np.zeros(0)):
            check(mixed_positions, x, a)


# ======================================================================================================
# a built image: the constructs' IR and a string global's edge
# ======================================================================================================

CKIT_CORE = """
    import aot

    MODE = "fast"


    @aot.jit(signatures=["f64(f64[:], i64)"])
    def weighted(a, start):
        s = 0.0
        for i, (x, y) in enumerate(zip(a, reversed(a)), start):
            if MODE == "fast" and isinstance(x, float):
                s += i * x * y
        return s


    @aot.jit(signatures=["boolean(i64)"])
    def small(k):
        return k in (1, 2, 3) or k in range(10, 20, 3)
"""


def test_a_built_image_holds_the_constructs_and_a_string_edge(tmp_path):
    from buildsupport import pyproject, write_project
    from cli_support import edit, run_aot

    root = write_project(
        tmp_path / "proj",
        {"pyproject.toml": pyproject("ckit"), "ckit/__init__.py": "from . import core\n", "ckit/core.py": CKIT_CORE},
    )
    out = run_aot("build", str(root))
    assert out.returncode == 0, out.stdout + out.stderr
    out = run_aot("verify", str(root))
    assert out.returncode == 0 and "all valid" in out.stdout, out.stdout + out.stderr
    edit(root / "ckit" / "core.py", 'MODE = "fast"', 'MODE = "slow"')
    out = run_aot("verify", str(root))
    assert out.returncode == 1, out.stdout + out.stderr
    assert "edge-changed:ckit.core:MODE" in out.stdout and "1 of 2 entries stale" in out.stdout, out.stdout


# ======================================================================================================
# math.gcd
# ======================================================================================================


@aot.jit
def gcds(a, b, c):
    return math.gcd(a, b), math.gcd(a), math.gcd(), math.gcd(a, b, c), math.gcd(True, b)


@pytest.mark.parametrize(
    "a,b,c", [(12, 18, 8), (0, 0, 0), (-12, 8, -6), (7, 0, 5), (2**62, 2**61, 0), (-(2**63) + 1, 3, 9), (1, -1, 1)]
)
def test_gcd(a, b, c):
    check(gcds, a, b, c)


@aot.jit
def gcd_of_float(x):
    return math.gcd(x, 2)


def test_gcd_of_a_float_is_a_compile_error():
    err = expect_compile_error(gcd_of_float, 1.5, at=locate(gcd_of_float, "math.gcd(x, 2)"), node_type=ast.Call)
    assert "integers" in str(err)
