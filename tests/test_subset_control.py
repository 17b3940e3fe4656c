"""Control flow, tuples, calls, recursion, module constants, raise/assert, staticmethods and decorated
sources in the compiled subset (SUBSET.md); every test compares with plain Python (``f.py_func``).

PYTEST_DONT_REWRITE: the methods below contain ``assert`` statements whose messages are compared with plain
Python; pytest's assertion rewriting would change the plain-Python messages, so it is off in this module.
"""

import numpy as np
import pytest

import aot

try:
    from .support import check
except ImportError:  # tests/ is not a package
    from support import check

# ======================================================================================================
# Module-level constants read by methods
# ======================================================================================================

LIMIT = 10
NEG_OFFSET = -3
SCALE = 2.5
ENABLED = True
DISABLED = False
PAIR = (3, 4.5)
TRIPLE = (1, 2, 3)
BIG = 2**63 - 1
HUGE_STEP = 2**62


def identity_decorator(fn):
    return fn


def tagging_decorator(tag):
    def wrap(fn):
        fn.tag = tag
        return fn

    return wrap


# ======================================================================================================
# if / elif / else
# ======================================================================================================


@aot.jit
def sign(x):
    if x > 0:
        return 1
    elif x < 0:
        return -1
    else:
        return 0


@aot.jit
def classify(x):
    if x < 10:
        if x < 0:
            r = 0
        else:
            r = 1
    elif x < 100:
        r = 2
    elif x < 1000:
        r = 3
    else:
        r = 4
    return r


@aot.jit
def if_without_else(x):
    y = x
    if x < 0:
        y = -x
    return y


@aot.jit
def pass_statement(x):
    if x > 0:
        pass
    else:
        x = 0
    return x


@pytest.mark.parametrize("x", [-5, 0, 5, -0.5, 0.0, -0.0, 0.5, float("nan"), float("inf")])
def test_if_elif_else(x):
    check(sign, x)


@pytest.mark.parametrize("x", [-1, 0, 9, 10, 99, 100, 999, 1000, 5000])
def test_nested_if_and_elif_chain(x):
    check(classify, x)


@pytest.mark.parametrize("x", [-3, 0, 3, -2.5])
def test_if_without_else(x):
    check(if_without_else, x)


@pytest.mark.parametrize("x", [-3, 0, 3])
def test_pass_statement(x):
    check(pass_statement, x)


# ======================================================================================================
# while
# ======================================================================================================


@aot.jit
def gcd(a, b):
    while b != 0:
        a, b = b, a % b
    return a


@aot.jit
def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


@aot.jit
def while_never_runs(n):
    k = 0
    while n < 0:
        k += 1
        n += 1
    return k


@aot.jit
def while_true_break(n):
    i = 0
    while True:
        i += 1
        if i * i > n:
            break
    return i


@aot.jit
def newton_sqrt(x):
    g = x
    while abs(g * g - x) > 1e-12 * x:
        g = 0.5 * (g + x / g)
    return g


@pytest.mark.parametrize("a,b", [(12, 18), (17, 5), (0, 7), (7, 0), (-12, 18), (12, -18), (1071, 462)])
def test_while_gcd(a, b):
    check(gcd, a, b)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 27, 97])
def test_while_with_if_inside(n):
    check(collatz_steps, n)


@pytest.mark.parametrize("n", [0, 5, -3])
def test_while_that_never_or_sometimes_runs(n):
    check(while_never_runs, n)


@pytest.mark.parametrize("n", [0, 1, 15, 16, 1000])
def test_while_true_with_break(n):
    check(while_true_break, n)


@pytest.mark.parametrize("x", [2.0, 10.0, 1e6])
def test_while_float_iteration(x):
    check(newton_sqrt, x)


# ======================================================================================================
# for over range(...)
# ======================================================================================================


@aot.jit
def range1(n):
    s = 0
    c = 0
    for i in range(n):
        s = s * 3 + i
        c += 1
    return s, c


@aot.jit
def range2(a, b):
    s = 0
    c = 0
    for i in range(a, b):
        s = s * 3 + i
        c += 1
    return s, c


@aot.jit
def range3(a, b, step):
    s = 0
    c = 0
    for i in range(a, b, step):
        s = s * 3 + i
        c += 1
    return s, c


@aot.jit
def range_step_overflow_guard(stop, step):
    c = 0
    for i in range(0, stop, step):
        c += 1
        if c > 10:
            break
    return c


@aot.jit
def loop_variable_after_loop(n):
    last = -1
    for i in range(n):
        last = i
    return last + i


@aot.jit
def loop_variable_reassigned_inside(n):
    s = 0
    for i in range(n):
        s += i
        i = 100
        s += i
    return s


@aot.jit
def range_bound_evaluated_once(n):
    c = 0
    for i in range(n):
        n = n - 1
        c += 1
    return c


@pytest.mark.parametrize("n", [0, 1, 5, -3])
def test_for_range_one_argument(n):
    check(range1, n)


@pytest.mark.parametrize("a,b", [(0, 5), (3, 8), (5, 5), (8, 3), (-4, 2), (-2, -6)])
def test_for_range_two_arguments(a, b):
    check(range2, a, b)


@pytest.mark.parametrize(
    "a,b,step",
    [
        (0, 10, 3),
        (0, 10, 1),
        (0, 10, 20),
        (10, 0, -1),
        (10, 0, -3),
        (10, -10, -7),
        (0, 10, -1),
        (10, 0, 2),
        (5, 5, -1),
        (-3, 3, 2),
        (3, -3, -2),
    ],
)
def test_for_range_three_arguments_including_negative_step(a, b, step):
    check(range3, a, b, step)


def test_for_range_zero_step_raises_value_error():
    check(range3, 0, 10, 0, raises=ValueError)
    check(range3, 0, 0, 0, raises=ValueError)


def test_for_range_large_step_does_not_wrap_around():
    # range(0, 2**63-1, 2**62) has 2 elements; an index that wraps past int64 would keep looping.
    check(range_step_overflow_guard, BIG, HUGE_STEP, expect=2)
    check(range_step_overflow_guard, -BIG, -HUGE_STEP, expect=2)


@pytest.mark.parametrize("n", [1, 4])
def test_loop_variable_keeps_last_value_after_loop(n):
    check(loop_variable_after_loop, n)


def test_reassigning_loop_variable_does_not_change_iteration():
    check(loop_variable_reassigned_inside, 5)


def test_range_bound_is_evaluated_once():
    check(range_bound_evaluated_once, 6, expect=6)


# ======================================================================================================
# for / while with else, break, continue, nested loops, early return
# ======================================================================================================


@aot.jit
def find_divisor(n):
    for d in range(2, n):
        if n % d == 0:
            break
    else:
        d = 0
    return d


@aot.jit
def while_else(n):
    i = 0
    found = -1
    while i < n:
        if i * i == n:
            found = i
            break
        i += 1
    else:
        found = -2
    return found


@aot.jit
def sum_skipping_multiples_of_three(n):
    s = 0
    for i in range(n):
        if i % 3 == 0:
            continue
        s += i
    return s


@aot.jit
def while_continue(n):
    i = 0
    s = 0
    while i < n:
        i += 1
        if i % 2 == 0:
            continue
        s += i
    return s


@aot.jit
def nested_loops(n, m):
    s = 0
    for i in range(n):
        for j in range(m):
            if j > i:
                break
            s += i * 10 + j
    return s


@aot.jit
def nested_break_continue_else(n):
    count = 0
    for i in range(2, n):
        for j in range(2, i):
            if i % j == 0:
                break
        else:
            count += 1
            continue
        count += 100
    return count


@aot.jit
def first_square_above(limit):
    for i in range(limit):
        if i * i > limit:
            return i
    return -1


@aot.jit
def early_return_in_while(x):
    while True:
        if x > 100:
            return x
        x = x * 2 + 1


@pytest.mark.parametrize("n", [2, 3, 4, 9, 17, 25, 49])
def test_for_else_and_break(n):
    check(find_divisor, n)


@pytest.mark.parametrize("n", [0, 1, 4, 5, 16, 17])
def test_while_else_and_break(n):
    check(while_else, n)


@pytest.mark.parametrize("n", [0, 1, 10, 31])
def test_continue_in_for(n):
    check(sum_skipping_multiples_of_three, n)


@pytest.mark.parametrize("n", [0, 1, 10])
def test_continue_in_while(n):
    check(while_continue, n)


@pytest.mark.parametrize("n,m", [(0, 3), (3, 0), (4, 4), (5, 2)])
def test_nested_loops_inner_break(n, m):
    check(nested_loops, n, m)


@pytest.mark.parametrize("n", [2, 3, 10, 30])
def test_nested_loops_with_else_break_continue(n):
    check(nested_break_continue_else, n)


@pytest.mark.parametrize("limit", [0, 1, 10, 100])
def test_early_return_from_for(limit):
    check(first_square_above, limit)


@pytest.mark.parametrize("x", [0, 1, 101, -0.5])
def test_early_return_from_while(x):
    check(early_return_in_while, x)


# ======================================================================================================
# None
# ======================================================================================================


@aot.jit
def no_return(arr, x):
    arr[0] = x


@aot.jit
def bare_return(arr, x):
    if x > 0:
        arr[0] = x
        return
    arr[1] = x


@aot.jit
def return_none_explicitly(x):
    y = x + 1
    return None


def test_function_without_return_gives_none():
    assert check(no_return, np.zeros(2), 3.5) is None


@pytest.mark.parametrize("x", [1.0, -1.0])
def test_bare_return_gives_none(x):
    assert check(bare_return, np.zeros(2), x) is None


def test_return_none_explicitly():
    assert check(return_none_explicitly, 3) is None


# ======================================================================================================
# Tuples
# ======================================================================================================


@aot.jit
def swap(a, b):
    a, b = b, a
    return a, b


@aot.jit
def rotate3(a, b, c):
    a, b, c = b, c, a
    return a, b, c


@aot.jit
def unpack_argument(t):
    x, y, z = t
    return x * 100 + y * 10 + z


@aot.jit
def tuple_sum3(t):
    return t[0] + t[1] + t[2]


@aot.jit
def tuple_last(t):
    return t[-1]


@aot.jit
def tuple_runtime_index(t, i):
    return t[i]


@aot.jit
def tuple_runtime_index_loop(t):
    s = 0
    for i in range(len(t)):
        s = s * 10 + t[i]
    return s


@aot.jit
def make_pair(a, b):
    return a + b, a - b


@aot.jit
def mixed_tuple(n):
    return n, n * 0.5, n > 0


@aot.jit
def tuple_local(a, b):
    t = (a, b, a * b)
    u = t
    return u[2] - u[0]


@aot.jit
def divmod_like(a, b):
    return a // b, a % b


@aot.jit
def uses_tuple_from_call(a, b):
    q, r = divmod_like(a, b)
    return q * b + r


@aot.jit
def tuple_passed_through(t):
    return t


@aot.jit
def single_element_tuple(x):
    return (x,)


@pytest.mark.parametrize("a,b", [(1, 2), (1.5, -2.5), (True, False)])
def test_swap_by_tuple_assignment(a, b):
    check(swap, a, b)


def test_swap_of_mixed_types_unifies_int_and_float():
    # SUBSET.md: a local has one type, and int and float assigned to one name unify to float.
    assert swap.py_func(1, 2.5) == (2.5, 1)
    result = swap(1, 2.5)
    assert result == (2.5, 1.0) and all(type(v) is float for v in result)


def test_rotate_three():
    check(rotate3, 1, 2, 3, expect=(2, 3, 1))


def test_unpack_tuple_argument():
    check(unpack_argument, (1, 2, 3), expect=123)
    check(unpack_argument, (1.5, 2, 3), expect=173.0)


@pytest.mark.parametrize("t", [(1, 2, 3), (1.5, 2, 3), (1, 2.5, True)])
def test_tuple_argument_constant_index(t):
    check(tuple_sum3, t)


def test_tuple_negative_constant_index():
    check(tuple_last, (1, 2.5, 7), expect=7)


@pytest.mark.parametrize("i", [0, 1, 2, -1, -3])
def test_homogeneous_tuple_runtime_index(i):
    check(tuple_runtime_index, (10, 20, 30), i)
    check(tuple_runtime_index, (1.5, -2.5, 3.5), i)


@pytest.mark.parametrize("i", [3, -4, 100])
def test_tuple_runtime_index_out_of_range_raises_index_error(i):
    check(tuple_runtime_index, (10, 20, 30), i, raises=IndexError)


def test_tuple_runtime_index_in_loop():
    check(tuple_runtime_index_loop, (1, 2, 3, 4), expect=1234)


@pytest.mark.parametrize("a,b", [(7, 3), (2.5, 0.5), (-1, 4)])
def test_returning_a_tuple(a, b):
    r = check(make_pair, a, b)
    assert type(r) is tuple


@pytest.mark.parametrize("n", [0, 3, -2])
def test_returning_a_heterogeneous_tuple(n):
    check(mixed_tuple, n)


def test_tuple_as_local():
    check(tuple_local, 3, 4, expect=9)


@pytest.mark.parametrize("a,b", [(17, 5), (-17, 5), (17, -5)])
def test_tuple_returned_by_callee_unpacked_in_caller(a, b):
    check(uses_tuple_from_call, a, b, expect=a)


def test_tuple_passed_through_unchanged():
    check(tuple_passed_through, (1, 2.5, False), expect=(1, 2.5, False))


def test_single_element_tuple():
    check(single_element_tuple, 4, expect=(4,))


# ======================================================================================================
# Calls to other methods and to undecorated helpers, recursion
# ======================================================================================================


@aot.jit
def square(x):
    return x * x


@aot.jit
def sum_of_squares(a, b):
    return square(a) + square(b)


def plain_helper_cube(x):
    return x * x * x


def plain_helper_calls_helper(x):
    return plain_helper_cube(x) + square(x)


@aot.jit
def uses_plain_helper(x):
    return plain_helper_cube(x) + 1


@aot.jit
def uses_helper_chain(x):
    return plain_helper_calls_helper(x) * 2


@aot.jit
def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)


@aot.jit
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


@aot.jit
def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


@aot.jit
def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


def plain_is_odd(n):
    if n == 0:
        return False
    return is_even_via_plain(n - 1)


@aot.jit
def is_even_via_plain(n):
    if n == 0:
        return True
    return plain_is_odd(n - 1)


@aot.jit
def ackermann(m, n):
    if m == 0:
        return n + 1
    if n == 0:
        return ackermann(m - 1, 1)
    return ackermann(m - 1, ackermann(m, n - 1))


@aot.jit
def raises_in_callee(x):
    if x < 0:
        raise ValueError("negative input")
    return x


@aot.jit
def calls_raising_callee(x):
    return raises_in_callee(x) + 1


@aot.jit
def zero_division_in_callee(a, b):
    return floor_div_helper(a, b) + 1


def floor_div_helper(a, b):
    return a // b


@pytest.mark.parametrize("a,b", [(3, 4), (1.5, 2), (-2, -2.5)])
def test_call_to_other_jit_method(a, b):
    check(sum_of_squares, a, b)


@pytest.mark.parametrize("x", [2, -3, 1.5])
def test_call_to_undecorated_helper(x):
    check(uses_plain_helper, x)


@pytest.mark.parametrize("x", [2, -3, 0.5])
def test_call_chain_through_undecorated_helpers(x):
    check(uses_helper_chain, x)


@pytest.mark.parametrize("n", [0, 1, 5, 20])
def test_recursive_factorial(n):
    check(fact, n)


@pytest.mark.parametrize("n", [0, 1, 2, 10, 20])
def test_recursive_fibonacci(n):
    check(fib, n)


@pytest.mark.parametrize("n", [0, 1, 10, 101])
def test_mutual_recursion(n):
    check(is_even, n)
    check(is_odd, n)


@pytest.mark.parametrize("n", [0, 1, 7, 50])
def test_mutual_recursion_through_undecorated_helper(n):
    check(is_even_via_plain, n)


@pytest.mark.parametrize("m,n", [(0, 0), (1, 2), (2, 3), (3, 3)])
def test_deep_nested_recursion(m, n):
    check(ackermann, m, n)


@pytest.mark.parametrize("x", [5, -5])
def test_exception_propagates_from_callee(x):
    check(calls_raising_callee, x, messages=True)


def test_zero_division_propagates_from_undecorated_helper():
    check(zero_division_in_callee, 1, 0, raises=ZeroDivisionError)
    check(zero_division_in_callee, 7, 2, expect=4)


# ======================================================================================================
# Module-level constants
# ======================================================================================================


@aot.jit
def below_limit(x):
    return x < LIMIT


@aot.jit
def scaled(x):
    return x * SCALE + NEG_OFFSET


@aot.jit
def gated(x):
    if ENABLED:
        x = x + 1
    if DISABLED:
        x = x * 100
    return x


@aot.jit
def pair_constant(x):
    a, b = PAIR
    return a * x + b


@aot.jit
def triple_constant_indexed(i):
    return TRIPLE[i] + TRIPLE[0]


@aot.jit
def returns_constant_tuple():
    return PAIR


@aot.jit
def loop_to_limit():
    s = 0
    for i in range(LIMIT):
        s += i
    return s


@pytest.mark.parametrize("x", [5, 10, 15, 9.5])
def test_module_int_constant(x):
    check(below_limit, x)


@pytest.mark.parametrize("x", [0, 2, -1.5])
def test_module_float_and_negative_int_constants(x):
    check(scaled, x)


@pytest.mark.parametrize("x", [0, 7, 1.5])
def test_module_bool_constants(x):
    check(gated, x)


@pytest.mark.parametrize("x", [0, 2, -1.0])
def test_module_tuple_constant_unpacked(x):
    check(pair_constant, x)


@pytest.mark.parametrize("i", [0, 1, 2, -1])
def test_module_tuple_constant_indexed(i):
    check(triple_constant_indexed, i)


def test_module_tuple_constant_returned():
    check(returns_constant_tuple, expect=(3, 4.5))


def test_module_constant_as_loop_bound():
    check(loop_to_limit, expect=45)


# ======================================================================================================
# raise and assert
# ======================================================================================================


@aot.jit
def validate(x):
    if x < 0:
        raise ValueError("x must be non-negative")
    return x * 2


@aot.jit
def raise_kind(k):
    if k == 0:
        raise ValueError("value problem")
    if k == 1:
        raise TypeError("type problem")
    if k == 2:
        raise IndexError("index problem")
    if k == 3:
        raise ZeroDivisionError("division problem")
    if k == 4:
        raise OverflowError("overflow problem")
    if k == 5:
        raise RuntimeError("runtime problem")
    if k == 6:
        raise ArithmeticError("arithmetic problem")
    if k == 7:
        raise NotImplementedError("not implemented")
    if k == 8:
        raise KeyError("key problem")
    if k == 9:
        raise AssertionError("assertion problem")
    return k


@aot.jit
def raise_in_loop(n):
    s = 0
    for i in range(n):
        s += i
        if s > 10:
            raise RuntimeError("sum exceeded ten")
    return s


@aot.jit
def assert_with_message(x):
    assert x > 0, "x must be positive"
    return x


@aot.jit
def assert_without_message(x):
    assert x != 3
    return x + 1


@aot.jit
def assert_in_helper_chain(x):
    return assert_with_message(x) + assert_without_message(x)


@pytest.mark.parametrize("x", [1, 0, -1, 2.5, -0.5])
def test_raise_value_error_with_message(x):
    check(validate, x, messages=True)


def test_raise_value_error_exact_message():
    with pytest.raises(ValueError, match="^x must be non-negative$"):
        validate(-1)


EXC_BY_KIND = [
    ValueError,
    TypeError,
    IndexError,
    ZeroDivisionError,
    OverflowError,
    RuntimeError,
    ArithmeticError,
    NotImplementedError,
    KeyError,
    AssertionError,
]


@pytest.mark.parametrize("k", range(len(EXC_BY_KIND)), ids=[e.__name__ for e in EXC_BY_KIND])
def test_raise_builtin_exception_classes(k):
    check(raise_kind, k, raises=EXC_BY_KIND[k], messages=True)


def test_no_raise_when_condition_false():
    check(raise_kind, 42, expect=42)


@pytest.mark.parametrize("n", [3, 10])
def test_raise_inside_loop(n):
    check(raise_in_loop, n, messages=True)


@pytest.mark.parametrize("x", [1, 0, -2, 0.5, -0.5])
def test_assert_with_message(x):
    check(assert_with_message, x, messages=True)


def test_assert_with_message_exact_text():
    with pytest.raises(AssertionError) as info:
        assert_with_message(0)
    assert str(info.value) == "x must be positive"


@pytest.mark.parametrize("x", [1, 3, 4])
def test_assert_without_message(x):
    check(assert_without_message, x, messages=True)


def test_assert_without_message_has_empty_message():
    with pytest.raises(AssertionError) as info:
        assert_without_message(3)
    assert str(info.value) == ""


@pytest.mark.parametrize("x", [5, -5, 3])
def test_assert_through_calls(x):
    check(assert_in_helper_chain, x, messages=True)


# ======================================================================================================
# Indented sources: staticmethods in a class body, other decorators, blocks
# ======================================================================================================


class Geometry:
    @staticmethod
    @aot.jit
    def area(w, h):
        return w * h

    @staticmethod
    @aot.jit
    def perimeter(w, h):
        s = 0
        for side in range(2):
            s += w + h
        return s


class Outer:
    class Inner:
        @staticmethod
        @aot.jit
        def deep(x):
            if x > 0:
                return x * 3
            return -x


@aot.jit
@identity_decorator
def decorated_twice(x):
    return x + 100


@aot.jit
@tagging_decorator("numeric")
@identity_decorator
def decorated_with_arguments(x):
    return x * 3


if True:

    @aot.jit
    def defined_in_if_block(x):
        return x - 1


@aot.jit
def with_docstring(x):
    """A docstring is not a string value."""
    return x * 2


@pytest.mark.parametrize("w,h", [(2, 3), (1.5, 4)])
def test_staticmethod_in_class_body(w, h):
    check(Geometry.area, w, h)
    check(Geometry.perimeter, w, h)


@pytest.mark.parametrize("x", [4, -4])
def test_doubly_nested_class_staticmethod(x):
    check(Outer.Inner.deep, x)


def test_other_decorators_in_source_are_ignored():
    check(decorated_twice, 1, expect=101)
    check(decorated_with_arguments, 2, expect=6)


def test_function_defined_inside_if_block():
    check(defined_in_if_block, 1, expect=0)


def test_docstring_is_allowed():
    check(with_docstring, 21, expect=42)
