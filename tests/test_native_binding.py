"""Calls from Python with keywords or left-out defaults run natively (``aot_bind``,
``aot.codegen.cpython.emit_binder``): keywords and defaults are bound by Python's rules in native code —
every call of a method with keyword-only parameters, and for other methods every such call after the first
(which publishes the method's binding) — and every call Python would reject, or that the binder does not
take, reaches the Python fallback, which binds in Python and raises Python's own ``TypeError``. Each result
is compared with ``f.py_func``; each test counts the calls that reached Python.
"""

import math

import numpy as np
import pytest

import aot
from aot.runtime.dispatch import Dispatcher

try:
    from .support import assert_same
except ImportError:  # tests/ is not a package
    from support import assert_same


@pytest.fixture
def python_calls(monkeypatch):
    """The number of calls that reached the Python side of a dispatcher (``call_python``) so far."""
    count = [0]
    original = Dispatcher.call_python

    def counting(self, args, kwargs):
        count[0] += 1
        return original(self, args, kwargs)

    monkeypatch.setattr(Dispatcher, "call_python", counting)
    return count


def same_as_python(f, *args, **kwargs):
    """``f(*args, **kwargs)`` against ``f.py_func``: the same value, or the same TypeError and message."""
    try:
        want = f.py_func(*args, **kwargs)
    except TypeError as err:
        with pytest.raises(TypeError) as info:
            f(*args, **kwargs)
        assert str(info.value) == str(err)
        return
    assert_same(f(*args, **kwargs), want)


@aot.jit
def scaled(x, *, scale=2.0, shift=0.5):
    return x * scale + shift


@aot.jit
def needs_keyword(x, *, k):
    return x + k


@aot.jit
def mixed(a, /, b=1, *, c=3, d):
    return a * 1000 + b * 100 + c * 10 + d


def test_keyword_only_calls_run_natively(python_calls):
    for x in (1.5, -0.0, math.inf):
        same_as_python(scaled, x)  # (the first call compiles, in Python)
    before = python_calls[0]
    for x in (0.0, 1.5, -2.25, math.nan):
        same_as_python(scaled, x)
        same_as_python(scaled, x, scale=3.0)
        same_as_python(scaled, x, shift=-1.0)
        same_as_python(scaled, x, shift=-1.0, scale=0.25)
        same_as_python(scaled, x=x, scale=0.25)
    assert python_calls[0] == before, "calls with keywords or left-out defaults went through Python"


def test_every_call_python_rejects_raises_its_type_error():
    same_as_python(scaled, 1.0)
    same_as_python(needs_keyword, 1.0, k=2.0)
    same_as_python(mixed, 1, d=4)
    for args, kwargs in [
        ((1.0, 3.0), {}),  # a keyword-only argument by position
        ((1.0,), {"scales": 3.0}),  # unknown keyword
        ((1.0,), {"x": 2.0}),  # given twice
        ((), {"scale": 2.0}),  # missing positional argument
    ]:
        same_as_python(scaled, *args, **kwargs)
    same_as_python(needs_keyword, 1.0)  # missing keyword-only argument
    same_as_python(needs_keyword, 1.0, 2.0)
    same_as_python(mixed, a=1, d=4)  # positional-only by keyword
    same_as_python(mixed, 1, 2, 3, d=4)
    same_as_python(mixed, 1)


def test_positional_only_defaults_and_required_keywords(python_calls):
    same_as_python(mixed, 1, d=4)
    same_as_python(needs_keyword, 1.0, k=2.0)
    before = python_calls[0]
    for call in [((1,), {"d": 4}), ((1, 2), {"d": 4}), ((1,), {"d": 4, "c": 5}), ((1,), {"b": 7, "d": 0})]:
        same_as_python(mixed, *call[0], **call[1])
    same_as_python(needs_keyword, 1.0, k=2.0)
    same_as_python(needs_keyword, 2.5, k=-1.0)
    assert python_calls[0] == before


def test_keywords_that_are_not_interned_strings_bind_in_python(python_calls):
    same_as_python(scaled, 1.0)
    before = python_calls[0]
    name = "".join(["sh", "ift"])  # (a new string object, equal to the parameter's name)
    same_as_python(scaled, 1.0, **{name: 4.0})
    assert python_calls[0] == before + 1


@aot.jit
def reassigned(x, *, k=1.0):
    return x * k


def test_reassigned_defaults_are_the_ones_calls_use(python_calls):
    func = reassigned.py_func
    saved = func.__kwdefaults__
    try:
        assert reassigned(2.0) == 2.0
        func.__kwdefaults__ = {"k": 3.0}
        assert reassigned(2.0) == 6.0  # (the binder sees the new dict and sends the call to Python)
        before = python_calls[0]
        assert reassigned(2.0) == 6.0 and reassigned(2.0, k=0.5) == 1.0  # (native again, with the new default)
        assert python_calls[0] == before
        func.__kwdefaults__ = None
        same_as_python(reassigned, 2.0)  # (now a required keyword)
        assert reassigned(2.0, k=2.0) == 4.0
    finally:
        func.__kwdefaults__ = saved
    assert reassigned(2.0) == 2.0


@aot.jit
def typed(x, *, n=3):
    return x * n


def test_several_specializations_are_tried_in_turn(python_calls):
    for x in (2, 2.5, True):
        same_as_python(typed, x)
    before = python_calls[0]
    for x in (7, -1.5, False):
        same_as_python(typed, x)
        same_as_python(typed, x, n=-2)
        same_as_python(typed, x=x, n=0)
    assert python_calls[0] == before
    same_as_python(typed, 1.5, n=2.5)  # (new types: compiled on the way)


@aot.jit
def fill(a, out, *, scale=1.0, start=0):
    for i in range(start, len(a)):
        out[i] = a[i] * scale
    return out.sum()


def test_array_arguments_by_keyword_write_through(python_calls):
    a = np.arange(5.0)
    out = np.zeros(5)
    assert fill(a, out) == 10.0 and out.tolist() == a.tolist()
    assert fill(a[::-1], out) == 10.0 and out.tolist() == a[::-1].tolist()  # (a strided array: compiled now)
    before = python_calls[0]
    for kwargs in ({"scale": 2.0}, {"start": 3}, {"start": 1, "scale": -1.0}):
        got_out, want_out = np.zeros(5), np.zeros(5)
        got = fill(a[::-1], out=got_out, **kwargs)
        want = fill.py_func(a[::-1], out=want_out, **kwargs)
        assert got == want and got_out.tolist() == want_out.tolist()
    assert python_calls[0] == before
    read_only = np.zeros(5)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        fill(a, read_only, scale=2.0)


@aot.jit
def many(
    x,
    *,
    p0=1,
    p1=1,
    p2=1,
    p3=1,
    p4=1,
    p5=1,
    p6=1,
    p7=1,
    p8=1,
    p9=1,
    p10=1,
    p11=1,
    p12=1,
    p13=1,
    p14=1,
    p15=1,
    p16=1,
    p17=1,
    p18=1,
    p19=1,
    p20=1,
    p21=1,
    p22=1,
    p23=1,
    p24=1,
    p25=1,
    p26=1,
    p27=1,
    p28=1,
    p29=1,
    p30=1,
    p31=1,
    p32=1,
):
    return x + p0 + p32


def test_a_method_with_more_parameters_than_the_binder_takes_binds_in_python(python_calls):
    assert many(1) == 3
    before = python_calls[0]
    assert many(1, p32=10) == 12 and many(2) == 4
    assert python_calls[0] == before + 2
    same_as_python(many, 1, 2)


# ------------------------------------------------------------------------ methods without keyword-only parameters


@aot.jit
def shifted(x, shift=0.5, scale=2.0):
    return x * scale + shift


@aot.jit
def posonly_default(a, b=2, /):
    return a * 10 + b


def test_keyword_and_default_calls_of_positional_methods_run_natively(python_calls):
    same_as_python(shifted, 1.5, 0.0, 1.0)  # (compiled; calls with every argument were native already)
    same_as_python(shifted, 1.5)  # (the first call with a default left out publishes the binding)
    before = python_calls[0]
    for x in (0.0, -2.5, math.inf):
        same_as_python(shifted, x)
        same_as_python(shifted, x, 1.0)
        same_as_python(shifted, x, scale=-1.0)
        same_as_python(shifted, x=x, shift=2.0, scale=3.0)
        same_as_python(shifted, x, 0.25, 4.0)
    assert python_calls[0] == before, "calls with keywords or defaults went through Python"
    for args, kwargs in [((1.0,), {"x": 1.0}), ((1.0, 2.0, 3.0, 4.0), {}), ((), {}), ((1.0,), {"bad": 1})]:
        same_as_python(shifted, *args, **kwargs)


def test_several_specializations_of_a_positional_method(python_calls):
    for x in (1, 1.5):
        same_as_python(shifted, x, 1, 2)
        same_as_python(shifted, x, scale=3)
    before = python_calls[0]
    for x in (7, -0.5):
        same_as_python(shifted, x, scale=3)
        same_as_python(shifted, x, 1, scale=2)
    assert python_calls[0] == before


def test_positional_only_parameters_with_defaults(python_calls):
    same_as_python(posonly_default, 1, 5)
    same_as_python(posonly_default, 1)
    before = python_calls[0]
    same_as_python(posonly_default, 3)
    assert python_calls[0] == before
    same_as_python(posonly_default, 1, b=3)  # (positional-only by keyword: Python's TypeError)
    same_as_python(posonly_default, a=1)


@aot.jit
def redefaulted(x, k=1.0):
    return x * k


def test_reassigned_positional_defaults(python_calls):
    func = redefaulted.py_func
    saved = func.__defaults__
    try:
        assert redefaulted(2.0) == 2.0 and redefaulted(2.0, k=3.0) == 6.0
        func.__defaults__ = (5.0,)
        assert redefaulted(2.0) == 10.0
        before = python_calls[0]
        assert redefaulted(2.0) == 10.0 and redefaulted(x=1.0) == 5.0
        assert python_calls[0] == before
        func.__defaults__ = None
        same_as_python(redefaulted, 2.0)  # (now missing)
    finally:
        func.__defaults__ = saved
    assert redefaulted(2.0) == 2.0
