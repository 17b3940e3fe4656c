"""Everything outside the compiled subset (SUBSET.md, "Not supported") must raise ``aot.CompileError`` on the
first call, with a message that starts with ``file:line:col: `` of the offending construct (line and column
1-based, the column being ast's ``col_offset + 1`` on the file's text), reports every error of the function
(one line each), leaks no traceback of the compiler's internals, and leaves ``f.py_func`` usable.

Expected locations are computed from the real source (``support.locate``) and verified against the file's
AST (``support.assert_node_at``), so they do not depend on hard-coded line numbers.
"""
import ast
import asyncio
import contextlib
import math

import numpy as np
import pytest

import aot

try:
    from .support import (
        assert_clean_error,
        assert_node_at,
        compile_error,
        expect_compile_error,
        locate,
        mentions_line,
        message_lines,
        prefix,
    )
except ImportError:  # tests/ is not a package
    from support import (
        assert_clean_error,
        assert_node_at,
        compile_error,
        expect_compile_error,
        locate,
        mentions_line,
        message_lines,
        prefix,
    )


class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y


ORIGIN = Point(1.0, 2.0)
CONTEXT = contextlib.nullcontext()
COUNTER = 0


# ======================================================================================================
# Functions with one unsupported construct each
# ======================================================================================================


@aot.jit
def attr_on_object(v):
    return ORIGIN.x + v


@aot.jit
def attr_on_float(x):
    y = x * 2.0
    return y.real


@aot.jit
def class_instantiation(v):
    p = Point(v, v)
    return v


@aot.jit
def class_in_body(v):
    class Local:
        pass
    return v


@aot.jit
def generator_yield(n):
    for i in range(n):
        yield i


@aot.jit
def generator_yield_from(n):
    yield from range(n)
    return n


@aot.jit
def try_except(x):
    try:
        y = 1.0 / x
    except ZeroDivisionError:
        y = 0.0
    return y


@aot.jit
def try_finally(x):
    y = 0.0
    try:
        y = x * 2.0
    finally:
        y = y + 1.0
    return y


@aot.jit
def with_statement(x):
    with CONTEXT:
        x = x + 1
    return x


@aot.jit
def global_statement(x):
    global COUNTER
    COUNTER = x
    return x


@aot.jit
def nested_def_with_nonlocal(n):
    total = 0

    def add(k):
        nonlocal total
        total += k
    for i in range(n):
        add(i)
    return total


def make_accumulator():
    total = 0

    @aot.jit
    def accumulate(x):
        nonlocal total
        total += x
        return total
    return accumulate


@aot.jit
def list_display(x):
    xs = [x, x + 0.5]
    return x


@aot.jit
def empty_list(x):
    xs = []
    return x


@aot.jit
def dict_display(x):
    d = {1: x}
    return x


@aot.jit
def set_display(x):
    s = {x, 2}
    return x


@aot.jit
def string_value(x):
    s = 'abc'
    return s


@aot.jit
def star_args(x, *args):
    return x


@aot.jit
def star_kwargs(x, **kwargs):
    return x


@aot.jit
def call_sorted(a):
    b = sorted(a)
    return len(a)


@aot.jit
def call_print(x):
    print(x)
    return x


@aot.jit
def call_open(n):
    if n > 1000000:
        fh = open(n)
    return n


@aot.jit
def call_sum(a):
    return sum(a, start=1.0)


@aot.jit
def call_pow_modulus(a, b):
    q = pow(a, b, 5)
    return a


@aot.jit
def call_isinstance(x):
    if isinstance(x, list):
        return x
    return x


@aot.jit
def call_math_gamma(x):
    return math.gamma(x)


@aot.jit
def call_numpy_function(a):
    return np.percentile(a, 50.0)  # (np.sum, np.median … compile: tests/test_npfuncs.py, test_nparrays.py)


@aot.jit
async def async_def(x):
    return x + 1


@aot.jit
def lambda_expr(x):
    f = lambda y: y + 1
    return x


@aot.jit
def set_comprehension(n):
    xs = {i for i in range(n)}
    return n


@aot.jit
def dict_comprehension(n):
    xs = {i: i for i in range(n)}
    return n


@aot.jit
def f_string(x):
    s = f"{x}"
    return x


@aot.jit
def int_then_array(a):
    x = 0
    x = a
    return len(a)


@aot.jit
def int_then_tuple(a):
    x = 1
    x = (a, a)
    return a


@aot.jit
def two_errors(x):
    try:
        y = x
    except ValueError:
        y = 0
    g = lambda z: z
    return y


@aot.jit
def three_errors(x):
    xs = {x}
    print(x)
    s = f"{x}"
    return x


def helper_with_try(x):
    try:
        return x + 1
    except ValueError:
        return 0


@aot.jit
def calls_bad_helper(x):
    return helper_with_try(x) * 2


class Holder:
    @staticmethod
    @aot.jit
    def indented_error(x):
        if x > 0:
            return {x}
        return x


@aot.jit
def docstring_only(x):
    """Docstrings are fine; only strings used as values are rejected."""
    return x + 1


# ======================================================================================================
# Locations: each test names the construct and where the error must point
# ======================================================================================================


def test_attribute_access_on_object_is_rejected():
    expect_compile_error(attr_on_object, 1.0, at=locate(attr_on_object, "ORIGIN.x"), node_type=ast.Attribute)


def test_attribute_access_on_float_is_rejected():
    expect_compile_error(attr_on_float, 1.0, at=locate(attr_on_float, "y.real"), node_type=ast.Attribute)


def test_class_instantiation_is_rejected():
    expect_compile_error(class_instantiation, 1.0, at=locate(class_instantiation, "Point(v, v)"),
                         node_type=ast.Call)


def test_class_definition_in_body_is_rejected():
    expect_compile_error(class_in_body, 1.0, at=locate(class_in_body, "class Local"), node_type=ast.ClassDef)


def test_yield_is_rejected():
    expect_compile_error(generator_yield, 3, at=locate(generator_yield, "yield i"), node_type=ast.Yield)


def test_yield_from_is_rejected():
    expect_compile_error(generator_yield_from, 3, at=locate(generator_yield_from, "yield from"),
                         node_type=ast.YieldFrom)


def test_try_except_is_rejected():
    expect_compile_error(try_except, 2.0, at=locate(try_except, "try:"), node_type=ast.Try)


def test_try_finally_is_rejected():
    expect_compile_error(try_finally, 2.0, at=locate(try_finally, "try:"), node_type=ast.Try)


def test_with_is_rejected():
    expect_compile_error(with_statement, 1, at=locate(with_statement, "with CONTEXT"), node_type=ast.With)


def test_global_is_rejected():
    expect_compile_error(global_statement, 1, at=locate(global_statement, "global COUNTER"), node_type=ast.Global)


def test_nonlocal_in_jitted_closure_is_rejected():
    with pytest.raises(aot.CompileError) as info:
        acc = make_accumulator()
        acc(1)
    at = locate(make_accumulator, "nonlocal total")
    assert_node_at(at, ast.Nonlocal)
    msg = str(info.value)
    assert msg.startswith(prefix(at)), f"expected {prefix(at)!r} at the start of:\n{msg}"
    assert_clean_error(info.value)


def test_closure_over_mutable_state_in_body_is_rejected():
    # An inner function that rebinds a variable of the method (nonlocal).  The first error is either the
    # inner def (nested functions are outside the subset) or its nonlocal statement.
    at_def = locate(nested_def_with_nonlocal, "def add")
    at_nonlocal = locate(nested_def_with_nonlocal, "nonlocal total")
    assert_node_at(at_def, ast.FunctionDef)
    assert_node_at(at_nonlocal, ast.Nonlocal)
    err = compile_error(nested_def_with_nonlocal, 3)
    msg = str(err)
    assert msg.startswith(prefix(at_def)) or msg.startswith(prefix(at_nonlocal)), msg
    assert_clean_error(err)


def test_list_display_is_rejected():
    expect_compile_error(list_display, 1, at=locate(list_display, "[x, x + 0.5]"), node_type=ast.List)


def test_empty_list_is_rejected():
    expect_compile_error(empty_list, 1, at=locate(empty_list, "[]"), node_type=ast.List)


def test_dict_display_is_rejected():
    expect_compile_error(dict_display, 1, at=locate(dict_display, "{1: x}"), node_type=ast.Dict)


def test_set_display_is_rejected():
    expect_compile_error(set_display, 1, at=locate(set_display, "{x, 2}"), node_type=ast.Set)


def test_string_value_is_rejected():
    err = expect_compile_error(string_value, 1, at=locate(string_value, "return s"), node_type=ast.Return)
    assert "compile-time constants only" in str(err)


def test_star_args_is_rejected():
    expect_compile_error(star_args, 1, 2, at=locate(star_args, "*args", offset=1), node_type=ast.arg)


def test_star_kwargs_is_rejected():
    expect_compile_error(star_kwargs, 1, at=locate(star_kwargs, "**kwargs", offset=2), node_type=ast.arg)


def test_call_to_sorted_is_rejected():
    expect_compile_error(call_sorted, np.arange(3.0), at=locate(call_sorted, " sorted(a)", offset=1),
                         node_type=ast.Call)


def test_call_to_print_is_rejected():
    expect_compile_error(call_print, 1, at=locate(call_print, " print(x)", offset=1), node_type=ast.Call)


def test_call_to_open_is_rejected():
    expect_compile_error(call_open, 1, at=locate(call_open, " open(n)", offset=1), node_type=ast.Call)


def test_call_to_sum_is_rejected():
    expect_compile_error(call_sum, np.arange(3.0), at=locate(call_sum, "1.0"), node_type=ast.Constant)


def test_call_to_pow_with_a_modulus_is_rejected():
    expect_compile_error(
        call_pow_modulus, 7, 2, at=locate(call_pow_modulus, " pow(a, b, 5)", offset=1), node_type=ast.Call
    )


def test_call_to_isinstance_is_rejected():
    expect_compile_error(call_isinstance, 1, at=locate(call_isinstance, " isinstance(x, list)", offset=1),
                         node_type=ast.Call)


def test_call_to_unlisted_math_function_is_rejected():
    expect_compile_error(call_math_gamma, 2.5, at=locate(call_math_gamma, "math.gamma(x)"), node_type=ast.Call)


def test_call_to_numpy_function_is_rejected():
    expect_compile_error(call_numpy_function, np.arange(3.0), at=locate(call_numpy_function, "np.percentile(a, 50.0)"),
                         node_type=ast.Call)


def test_async_def_is_rejected():
    at = locate(async_def, "async def async_def")
    assert at[2] == 1
    expect_compile_error(async_def, 1, at=at, node_type=ast.AsyncFunctionDef)


def test_lambda_is_rejected():
    expect_compile_error(lambda_expr, 1, at=locate(lambda_expr, "lambda y"), node_type=ast.Lambda)


def test_set_comprehension_is_rejected():
    expect_compile_error(set_comprehension, 3, at=locate(set_comprehension, "{i for"), node_type=ast.SetComp)


def test_dict_comprehension_is_rejected():
    expect_compile_error(dict_comprehension, 3, at=locate(dict_comprehension, "{i: i for"), node_type=ast.DictComp)


def test_f_string_is_rejected():
    expect_compile_error(f_string, 1, at=locate(f_string, 'f"{x}"'), node_type=ast.JoinedStr)


# ======================================================================================================
# Type conflicts name both places
# ======================================================================================================


def _check_conflict(f, args, first_needle, second_needle):
    first = locate(f, first_needle)
    second = locate(f, second_needle)
    assert_node_at(first, ast.Name)
    assert_node_at(second, ast.Name)
    err = compile_error(f, *args)
    msg = str(err)
    assert msg.startswith(prefix(second)) or msg.startswith(prefix(first)), (
        f"expected the message to start with {prefix(second)!r} (or {prefix(first)!r}):\n{msg}"
    )
    assert mentions_line(msg, first[1]) and mentions_line(msg, second[1]), (
        f"the message should name both lines {first[1]} and {second[1]}:\n{msg}"
    )
    assert_clean_error(err)


def test_local_assigned_int_then_array_is_a_type_conflict_naming_both_lines():
    _check_conflict(int_then_array, (np.zeros(3),), "x = 0", "x = a")


def test_local_assigned_int_then_tuple_is_a_type_conflict_naming_both_lines():
    _check_conflict(int_then_tuple, (2,), "x = 1", "x = (a, a)")


# ======================================================================================================
# Several errors, helpers, indented sources
# ======================================================================================================


def test_all_errors_of_a_function_are_reported_together():
    at_try = locate(two_errors, "try:")
    at_lambda = locate(two_errors, "lambda z")
    assert_node_at(at_try, ast.Try)
    assert_node_at(at_lambda, ast.Lambda)
    err = compile_error(two_errors, 1)
    lines = message_lines(err)
    assert any(ln.startswith(prefix(at_try)) for ln in lines), str(err)
    assert any(ln.startswith(prefix(at_lambda)) for ln in lines), str(err)
    assert str(err).startswith(prefix(at_try)), "errors are listed in source order"
    assert_clean_error(err)


def test_three_errors_each_on_its_own_line():
    locs = [locate(three_errors, "{x}"), locate(three_errors, " print(x)", offset=1), locate(three_errors, 'f"{x}"')]
    for loc, kind in zip(locs, (ast.Set, ast.Call, ast.JoinedStr)):
        assert_node_at(loc, kind)
    err = compile_error(three_errors, 1)
    lines = message_lines(err)
    for loc in locs:
        assert sum(ln.startswith(prefix(loc)) for ln in lines) == 1, f"{prefix(loc)!r} once in:\n{err}"
    located = [ln for ln in lines if ln.startswith(locs[0][0] + ":")]
    assert len(located) >= 3


def test_error_in_undecorated_helper_points_into_helper_and_names_the_call_chain():
    at = locate(helper_with_try, "try:")
    assert_node_at(at, ast.Try)
    err = compile_error(calls_bad_helper, 1)
    msg = str(err)
    assert any(ln.startswith(prefix(at)) for ln in message_lines(err)), msg
    assert "calls_bad_helper" in msg and "helper_with_try" in msg, msg
    assert_clean_error(err)


def test_error_column_in_indented_source_counts_the_indentation():
    at = locate(Holder.indented_error, "{x}")
    assert at[2] == 20
    expect_compile_error(Holder.indented_error, 1, at=at, node_type=ast.Set)


def test_docstring_is_not_a_string_value():
    assert docstring_only(1) == 2


# ======================================================================================================
# Every unsupported function: clean error, repeatable, and the original function still works
# ======================================================================================================


def _run_py(f, args):
    r = f.py_func(*args)
    if hasattr(r, "__next__"):          # generator
        return list(r)
    if asyncio.iscoroutine(r):          # async def
        return asyncio.run(r)
    return r


CASES = [
    # (method, arguments, what plain Python returns)
    (attr_on_object, (1.0,), 2.0),
    (attr_on_float, (1.5,), 3.0),
    (class_instantiation, (1.0,), 1.0),
    (class_in_body, (1.0,), 1.0),
    (generator_yield, (3,), [0, 1, 2]),
    (generator_yield_from, (3,), [0, 1, 2]),
    (try_except, (0.0,), 0.0),
    (try_finally, (2.0,), 5.0),
    (with_statement, (1,), 2),
    (global_statement, (0,), 0),
    (nested_def_with_nonlocal, (4,), 6),
    (list_display, (1,), 1),
    (empty_list, (1,), 1),
    (dict_display, (1,), 1),
    (set_display, (1,), 1),
    (string_value, (1,), "abc"),
    (star_args, (1, 2), 1),
    (star_kwargs, (1,), 1),
    (call_sorted, (np.arange(3.0),), 3),
    (call_print, (1,), 1),
    (call_open, (1,), 1),
    (call_sum, (np.arange(4.0),), 7.0),
    (call_pow_modulus, (7, 2), 7),
    (call_isinstance, (1,), 1),
    (call_math_gamma, (5.0,), 24.0),
    (call_numpy_function, (np.arange(4.0),), 1.5),
    (async_def, (1,), 2),
    (lambda_expr, (1,), 1),
    (set_comprehension, (3,), 3),
    (dict_comprehension, (3,), 3),
    (f_string, (1,), 1),
    (int_then_array, (np.zeros(3),), 3),
    (int_then_tuple, (2,), 2),
    (two_errors, (1,), 1),
    (three_errors, (1,), 1),
    (calls_bad_helper, (1,), 4),
]
CASE_IDS = [c[0].py_func.__name__ for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_unsupported_raises_clean_compile_error(case):
    f, args, _ = case
    err = compile_error(f, *args)
    assert_clean_error(err)
    path = f.py_func.__code__.co_filename
    for ln in message_lines(err)[:1]:
        assert ln.startswith(path + ":"), f"the message should start with {path}:line:col:, got {ln!r}"


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_unsupported_raises_again_on_second_call(case):
    f, args, _ = case
    first = str(compile_error(f, *args))
    second = str(compile_error(f, *args))
    assert first == second


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_py_func_still_works_after_compile_error(case):
    f, args, expected = case
    compile_error(f, *args)
    assert _run_py(f, args) == expected


def test_compile_error_is_raised_on_call_not_on_decoration():
    # This module decorated every function above at import without an error; the first call raises.
    assert list_display.py_func(5) == 5
    with pytest.raises(aot.CompileError):
        list_display(5)
