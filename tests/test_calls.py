"""Calls as Python writes them (SUBSET.md, "Beyond the floor"): keyword arguments, defaults, keyword-only and
positional-only parameters, ``None`` arguments and optional values narrowed by ``is None`` tests — between
compiled methods (bound at compile time) and from Python (bound per call shape). Every result is compared
with plain Python (``f.py_func``); every call Python rejects is rejected with Python's message.
"""

import ast
import math

import numpy as np
import pytest

import aot

try:
    from .support import assert_same, check, compile_error, expect_compile_error, locate
except ImportError:  # tests/ is not a package
    from support import assert_same, check, compile_error, expect_compile_error, locate

FLOATS = (0.0, 1.5, -2.25, 1e300, math.inf, math.nan)
INTS = (0, 1, -7, 2**62)


def check_kw(f, *args, **kwargs):
    """``f(*args, **kwargs)`` from Python against ``f.py_func``: the same value, or the same error and message."""
    try:
        want = f.py_func(*args, **kwargs)
    except TypeError as err:
        with pytest.raises(TypeError) as info:
            f(*args, **kwargs)
        assert str(info.value) == str(err)
        return None
    got = f(*args, **kwargs)
    assert_same(got, want)
    return got


# ======================================================================================================
# Keyword arguments and defaults between compiled methods
# ======================================================================================================


@aot.jit
def affine(x, factor=2.0, *, offset=0.5):
    return x * factor + offset


@aot.jit
def affine_calls(x):
    return (
        affine(x),
        affine(x, 3.0),
        affine(x, offset=1.0),
        affine(x, offset=-1.0, factor=4.0),
        affine(factor=0.5, x=x),
        affine(x=x),
    )


def test_keywords_and_defaults_between_methods():
    for x in FLOATS:
        check(affine_calls, x)
    for x in INTS:
        check(affine_calls, x)


def int_default(n, k=3):
    return n * k


def bool_default(x, flag=True):
    if flag:
        return x + 1
    return x - 1


def tuple_default(x, pair=(1, 2.5)):
    return x * pair[0] + pair[1]


def none_default(x, extra=None):
    if extra is None:
        return x
    return x + extra


def negative_default(x, shift=-3):
    return x + shift


@aot.jit
def defaults_of_each_kind(x, n):
    return (
        int_default(n),
        int_default(n, k=-1),
        bool_default(x),
        bool_default(x, flag=False),
        tuple_default(x),
        tuple_default(x, pair=(2, -1.0)),
        none_default(x),
        none_default(x, 2.0),
        none_default(x, extra=None),
        negative_default(n),
    )


def test_constant_defaults_of_every_kind_are_filled_in():
    for x, n in [(0.0, 0), (1.5, 1), (-2.5, -9), (math.nan, 2**40)]:
        check(defaults_of_each_kind, x, n)


def positional_only(a, b, /, c=10):
    return a - b + c


def keyword_only(a, *, lo, hi=100):
    return min(max(a, lo), hi)


@aot.jit
def special_parameters(a, b):
    return positional_only(a, b), positional_only(a, b, c=-1), keyword_only(a, lo=b), keyword_only(a, hi=b, lo=-b)


def test_positional_only_and_keyword_only_parameters():
    for a, b in [(0, 0), (5, 3), (-4, 7), (200, 1)]:
        check(special_parameters, a, b)


@aot.jit
def total(a, *, start=0.0, step=1):
    t = start
    for i in range(0, len(a), step):
        t += a[i]
    return t


@aot.jit
def totals(a):
    return total(a), total(a, start=1.5), total(a, step=2), total(step=3, a=a, start=-1.0)


def test_keywords_with_array_arguments():
    base = np.arange(7.0) - 3.0
    for a in (np.zeros(0), np.array([2.5]), base, base[::-1], base[::-2], np.array([1.0, math.nan])):
        check(totals, a)


def keyword_fills_out(a, out, *, scale=1.0):
    for i in range(len(a)):
        out[i] = a[i] * scale


@aot.jit
def fill_through_keywords(a, out):
    keyword_fills_out(a, out=out, scale=-2.0)


def test_keyword_arguments_write_through_to_arrays():
    for n in (0, 1, 5):
        check(fill_through_keywords, np.arange(float(n)), np.zeros(n))
    check(fill_through_keywords, np.arange(6.0)[::-1], np.zeros(6)[::-1])


def recursive_with_default(n, acc=1):
    if n <= 1:
        return acc
    return recursive_with_default(n - 1, acc=acc * n)


@aot.jit
def factorial(n):
    return recursive_with_default(n)


def test_recursion_through_keywords_and_defaults():
    for n in (0, 1, 5, 20):
        check(factorial, n)


# ------------------------------------------------------------------ calls Python rejects: CompileErrors


def target(x, y=1.0, *, z=2.0):
    return x + y + z


def posonly_target(a, /, b=1):
    return a + b


@aot.jit
def unknown_keyword(x):
    return target(x, w=1.0)


@aot.jit
def duplicate_argument(x):
    return target(x, x=2.0)


@aot.jit
def missing_argument(x):
    return target(y=x)


@aot.jit
def too_many_positional(x):
    return target(x, x, x)


@aot.jit
def missing_keyword_only(x):
    return keyword_only(x)


@aot.jit
def positional_only_by_keyword(x):
    return posonly_target(a=x)


@pytest.mark.parametrize(
    "caller",
    [
        unknown_keyword,
        duplicate_argument,
        missing_argument,
        too_many_positional,
        missing_keyword_only,
        positional_only_by_keyword,
    ],
)
def test_calls_python_rejects_are_compile_errors_with_pythons_message(caller):
    with pytest.raises(TypeError) as python:
        caller.py_func(1.0)
    needle = {missing_keyword_only: "return keyword_only(", positional_only_by_keyword: "return posonly_target("}
    at = locate(caller, needle.get(caller, "return target("), offset=len("return "))
    err = expect_compile_error(caller, 1.0, at=at, node_type=ast.Call)
    assert str(python.value) in str(err)


NOT_A_CONSTANT = np.zeros(3)


def array_default(x, table=NOT_A_CONSTANT):
    return x


@aot.jit
def uses_array_default(x):
    return array_default(x)


@aot.jit
def passes_the_array(x, t):
    return array_default(x, table=t)


def test_a_default_that_is_not_a_constant_is_a_compile_error_only_when_used():
    at = locate(uses_array_default, "return array_default(", offset=len("return "))
    err = expect_compile_error(uses_array_default, 1.0, at=at)
    assert "default value of parameter 'table'" in str(err) and "pass 'table'" in str(err)
    check(passes_the_array, 1.5, np.ones(2))


@aot.jit
def keyword_to_builtin(x):
    return round(x, ndigits=2)


@aot.jit
def double_star_call(x):
    kw = x
    return target(x, **kw)


def test_keywords_to_builtins_and_double_star_calls_are_compile_errors():
    err = expect_compile_error(keyword_to_builtin, 1.25, at=locate(keyword_to_builtin, "round("))
    assert "takes no keyword arguments in compiled code" in str(err)
    err = expect_compile_error(double_star_call, 1.0, at=locate(double_star_call, "kw)", nth=0))
    assert "**kwargs in calls" in str(err)


# ======================================================================================================
# From Python: keywords, defaults, keyword-only parameters, None
# ======================================================================================================


@aot.jit
def solve(x, tol=1e-8, *, scale=1.0, shift=None):
    y = x * scale + tol
    if shift is not None:
        y += shift
    return y


def test_calls_from_python_bind_like_python():
    for x in (0.0, -1.5, math.nan, 3):
        check_kw(solve, x)
        check_kw(solve, x, 0.5)
        check_kw(solve, x, tol=2.0)
        check_kw(solve, x, scale=-2.0, tol=0.25)
        check_kw(solve, tol=1.0, x=x)
        check_kw(solve, x, shift=1.0)
        check_kw(solve, x, shift=None)
        check_kw(solve, x, 0.5, scale=2.0, shift=-4)


def test_calls_from_python_that_python_rejects_raise_its_type_error():
    check_kw(solve)
    check_kw(solve, 1.0, 2.0, 3.0)
    check_kw(solve, 1.0, bad=2.0)
    check_kw(solve, 1.0, x=2.0)
    check_kw(solve, 1.0, 2.0, 3.0, shift=1.0)
    assert len(solve.specializations()) >= 1  # (the rejected calls compiled nothing new)


@aot.jit
def kwonly_only(a, *, k):
    return a * k


def test_keyword_only_parameters_cannot_be_passed_by_position_from_python():
    check_kw(kwonly_only, 2.0, k=3.0)
    check_kw(kwonly_only, 2.0, 3.0)  # TypeError, as in Python: not taken natively by position
    check_kw(kwonly_only, 2.0, k=3.0)
    check_kw(kwonly_only, 2.0)


@aot.jit
def changing_default(x, k=2.0):
    return x * k


def test_a_default_reassigned_at_run_time_is_the_one_python_calls_use():
    assert changing_default(3.0) == 6.0
    old = changing_default.py_func.__defaults__
    try:
        changing_default.py_func.__defaults__ = (10.0,)
        check_kw(changing_default, 3.0)
        assert changing_default(3.0) == 30.0
        changing_default.py_func.__defaults__ = (None,)
        with pytest.raises(aot.CompileError):  # (x * None: compiled code says what to write instead)
            changing_default(3.0)
    finally:
        changing_default.py_func.__defaults__ = old


@aot.jit
def accepts_none(x, y):
    if y is None:
        return -x
    return x + y


def test_none_passed_from_python_specialises():
    for x in (0.0, 2.5, math.nan):
        check(accepts_none, x, None)
        check(accepts_none, x, 1.0)
        check(accepts_none, x, -3)
    kinds = {tuple(map(str, s.argtypes)) for s in accepts_none.specializations()}
    assert ("f64", "none") in kinds and ("f64", "f64") in kinds


# ======================================================================================================
# Optional values: `x is None` narrowing
# ======================================================================================================


@aot.jit
def tolerance(x, tol=None):
    if tol is None:
        tol = 1e-3
    return x * tol


@aot.jit
def tolerances(x):
    return tolerance(x), tolerance(x, 2.0), tolerance(x, None), tolerance(x, tol=-1)


def test_if_none_then_assign_is_narrowed():
    for x in FLOATS + INTS:
        check(tolerances, x)
        check_kw(tolerance, x)
        check_kw(tolerance, x, tol=0.5)


@aot.jit
def smallest_square(a):
    best = None
    for v in a:
        s = (v - 0.5) * (v - 0.5)
        if best is None or s < best:
            best = s
    if best is None:
        return -1.0
    return best


def test_a_variable_none_until_a_loop_assigns_it():
    base = np.linspace(-2.0, 3.0, 9)
    for a in (np.zeros(0), np.array([4.0]), base, base[::-1], base[::-3], np.array([math.nan, 1.0])):
        check(smallest_square, a)


@aot.jit
def first_above(a, limit):
    found = None
    for i in range(len(a)):
        if a[i] > limit:
            found = i
            break
    if found is not None and found > 0:
        return found
    if None is found:
        return -1
    return 0


def test_is_not_none_and_none_on_the_left():
    a = np.array([0.5, 3.0, -1.0, 7.5])
    for limit in (-10.0, 0.0, 2.0, 100.0, math.nan):
        check(first_above, a, limit)
    check(first_above, np.zeros(0), 0.0)
    check(first_above, a[::-1], 1.0)


@aot.jit
def clip(x, lo=None, hi=None):
    if lo is not None and x < lo:
        x = lo
    if hi is not None:
        if x > hi:
            x = hi
    return x


@aot.jit
def clips(x):
    return clip(x), clip(x, 0.0), clip(x, hi=1.0), clip(x, -1.0, 1.0), clip(x, lo=None, hi=None)


def test_optional_parameters_in_every_combination():
    for x in FLOATS + (-0.5,):
        check(clips, x)
    for lo in (None, -1.0):
        for hi in (None, 2.0):
            for x in (-5.0, 0.5, 9.0, math.nan):
                check_kw(clip, x, lo=lo, hi=hi)


@aot.jit
def optional_out(a, out=None):
    t = 0.0
    for i in range(len(a)):
        t += a[i]
        if out is not None:
            out[i] = t
    return t


def test_an_optional_array_argument():
    a = np.arange(5.0) - 2.0
    for arr in (np.zeros(0), np.array([1.5]), a, a[::-1]):
        check(optional_out, arr, None)
        check(optional_out, arr, np.zeros(len(arr)))
    check(optional_out, a, np.zeros(10)[::-2])


@aot.jit
def reassigned_after_test(x, y=None):
    if y is None:
        y = 2.0
    y = None
    if y is None:
        return x
    return x + y


def test_a_variable_set_to_none_again():
    for x in (1.0, -2.0):
        check(reassigned_after_test, x)
        check(reassigned_after_test, x, 3.0)


# ------------------------------------------------------------------ optionals used without a test


@aot.jit
def used_without_test(x, flag):
    y = None
    if flag:
        y = 2.0
    return x * y


@aot.jit
def returns_none_or_value(x):
    if x > 0:
        return x
    return None


@aot.jit
def identity_test(x, y):
    return x is y


@aot.jit
def optional_passed_on(x, flag):
    y = None
    if flag:
        y = x
    return tolerance(x, y)


def test_arithmetic_on_an_optional_without_a_test_raises_pythons_type_error():
    check(used_without_test, 1.5, True)
    check(used_without_test, 1.5, False, raises=TypeError, messages=True)


def test_passing_an_optional_on_without_a_test_is_a_compile_error():
    err = expect_compile_error(optional_passed_on, 1.0, True, at=locate(optional_passed_on, "tolerance("))
    assert "'y' may be None here" in str(err)


def test_returning_none_on_some_paths_returns_an_optional():  # (tests/test_optional_returns.py: the rest)
    for x in (1.0, -1.0, 0.0, math.nan):
        check(returns_none_or_value, x)


def test_is_between_two_values_is_a_compile_error():
    err = expect_compile_error(identity_test, 1.0, 2.0, at=locate(identity_test, "x is y"))
    assert "only supported against None" in str(err)


def test_optional_ir_reads_the_value_only_where_a_test_proved_it():
    text = tolerance.inspect_ir("f64", "none")
    assert "f64? = copy" in text and "convert %tol" in text
    assert "is_none" not in text.split("ret")[-1]
    # The f64 instance never sees None: no optional at all.
    assert "?" not in tolerance.inspect_ir("f64", "f64")


def test_compile_errors_leave_py_func_usable():
    err = compile_error(optional_passed_on, 2.0, False)
    assert "may be None" in str(err)
    assert optional_passed_on.py_func(2.0, True) == 4.0


# ======================================================================================================
# aot.binding against CPython's own binding, shape by shape
# ======================================================================================================


def _sig_a(x, y=2.0, *, tol=None, k):
    return (x, y, tol, k)


def _sig_b(a, b, /, c, d=4, *, e=5):
    return (a, b, c, d, e)


def _sig_c():
    return ()


def _sig_d(only):
    return (only,)


@pytest.mark.parametrize("func", [_sig_a, _sig_b, _sig_c, _sig_d])
def test_binding_agrees_with_python_on_every_call_shape(func):
    from itertools import combinations

    from aot.binding import Parameters

    params = Parameters(func)
    names = list(params.params) + ["zz"]
    for npos in range(len(params.params) + 2):
        for nkw in range(3):
            for keywords in combinations(names, nkw):
                args = tuple(range(npos))
                kwargs = {name: 100 + i for i, name in enumerate(keywords)}
                try:
                    want = func(*args, **kwargs)
                except TypeError as err:
                    plan = params.plan(npos, tuple(keywords))
                    assert plan == str(err), (npos, keywords)
                    assert params.bind(args, kwargs) is None
                    continue
                assert params.bind(args, kwargs) == want, (npos, keywords)


# ======================================================================================================
# Kernels: device functions called with keywords, defaults and None
# ======================================================================================================


def _device_scaled(v, factor=2.0, *, shift=None):
    if shift is None:
        shift = 0.5
    return v * factor + shift


@aot.kernel(signatures=["none(f64[::1], f64[::1])"])
def _keyword_kernel(x, out):
    from_gpu = aot.gpu.global_id()
    if from_gpu < len(x):
        v = x[from_gpu]
        out[from_gpu] = _device_scaled(v) + _device_scaled(v, shift=-1.0) + _device_scaled(factor=-1.0, v=v)


def test_kernels_call_device_functions_with_keywords_defaults_and_none():
    x = np.arange(13.0) - 4.0
    got, want = np.zeros(13), np.zeros(13)
    _keyword_kernel[2, 8](x, got)  # (the CPU grid without a device)
    _keyword_kernel.emulate[2, 8](x, want)
    np.testing.assert_array_equal(got, want)


def test_kernels_with_keyword_calls_compile_to_ptx():
    from aot.runtime.ptx import compile_ptx

    program = compile_ptx([_keyword_kernel], "sm_80")
    assert ".visible .entry" in program.ptx


# ======================================================================================================
# Calls that never return (every path of the callee raises)
# ======================================================================================================


def _always_raises(x):
    if True:
        raise ValueError("always")
    return x


def _raises_after_constant_tests(x):
    assert False or 0, "never holds"
    return x + 1


@aot.jit
def uses_a_value_never_returned(x):
    y = _always_raises(x)
    return y * 2


@aot.jit
def uses_an_assertion_helper(x, flag):
    if flag:
        return _raises_after_constant_tests(x) - 1
    return x


def test_the_value_of_a_call_that_never_returns_is_never_used():
    for x in (0, 3, -5):
        check(uses_a_value_never_returned, x, messages=True)
        check(uses_an_assertion_helper, x, True, messages=True)
        check(uses_an_assertion_helper, x, False)
    text = uses_a_value_never_returned.inspect_ir("i64")
    assert "binop mul" not in text  # (never runs: not compiled)
