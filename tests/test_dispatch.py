"""Calling methods from Python: dispatch, argument errors, specializations, strict mode and events."""

from __future__ import annotations

import numpy as np
import pytest

import aot
from aot.runtime import runtime


@aot.jit
def add(x, y):
    return x + y


@aot.jit
def scaled(x, factor=2.0):
    return x * factor


@aot.jit(signatures=["f64(f64[:])"])
def total(a):
    t = 0.0
    for v in a:
        t += v
    return t


@aot.jit
def unseen(x):
    return x - 1


def test_arity_and_keyword_errors_are_python_type_errors():
    with pytest.raises(TypeError, match=r"^add\(\) missing 1 required positional argument: 'y'$"):
        add(1)
    with pytest.raises(TypeError, match=r"^add\(\) takes 2 positional arguments but 3 were given$"):
        add(1, 2, 3)
    assert add(x=1, y=2) == 3
    assert scaled(1.5) == 3.0 and scaled(1.5, 3.0) == 4.5


def test_values_compiled_code_cannot_take():
    with pytest.raises(TypeError, match="cannot take a str"):
        add("a", 1)
    with pytest.raises(TypeError, match="cannot take a list"):
        total([1.0, 2.0])
    with pytest.raises(TypeError, match=r"no compiled signature takes \(i64\[::1\]\)"):
        total(np.arange(3))


def test_declared_signatures_convert_and_specializations_report():
    assert total(np.array([1.0, 2.0, 3.0])) == 6.0
    assert total(np.array([1.0, 2.0, 3.0, 4.0])[::2]) == 4.0
    specs = total.specializations()
    assert [str(s.argtypes) for s in specs] == ["(f64[:],)"] and specs[0].origin == "jit"
    assert specs[0].builtin(np.array([2.0])) == 2.0  # each specialization is a real builtin
    assert type(specs[0].builtin).__name__ == "builtin_function_or_method"
    assert add(1, 2) == 3 and add(1.5, 2) == 3.5  # one method, two specializations
    assert {str(s.argtypes) for s in add.specializations()} >= {"(i64, i64)", "(f64, i64)"}


def test_strict_mode_forbids_compiling_and_events_say_why():
    before = len(aot.events())
    aot.strict(True)
    try:
        with pytest.raises(aot.StrictModeError, match=r"unseen\(i64\)"):
            unseen(3)
    finally:
        aot.strict(False)
    assert unseen(3) == 2
    new = aot.events()[before:]
    assert [(e.kind, e.method, e.argtypes, e.cause) for e in new] == [
        ("inferred", "test_dispatch:unseen", ("i64",), "no-entry")
    ]
    assert aot.stats()["inferred"] >= 1


def test_world_grows_with_each_definition():
    world = aot.world()

    @aot.jit
    def local(x):
        return x

    assert aot.world() == world + 1 and local(4) == 4
    assert runtime().table.methods[local.__aot_method__.key] is local.__aot_method__


@aot.jit
def native_after_first_call(x):
    return x * 3


def test_native_vectorcall_is_set_by_the_first_call_and_follows_the_specializations():
    """A new method object has no vectorcall: its first call runs in Python (``MethodBase.__call__``).
    One specialization is the vectorcall itself; several go through the native dispatcher."""
    f = native_after_first_call
    assert f._aot_vectorcall == 0
    assert f(2) == 6
    (only,) = f.specializations()
    assert f._aot_vectorcall == only.vectorcall_address != 0
    assert f(2.5) == 7.5
    assert len(f.specializations()) == 2
    dispatcher = f._aot_vectorcall
    assert dispatcher not in {s.vectorcall_address for s in f.specializations()}
    assert f(4) == 12 and f(0.5) == 1.5 and f.py_func(4) == 12
    with pytest.raises(TypeError, match="cannot take a str"):
        f("x")
    assert callable(f) and f.__name__ == "native_after_first_call" and f.__wrapped__ is f.py_func


def test_a_method_object_reads_as_its_function_does():
    """Names, module, docstring and the wrapped function come from the Python function (its slots hold the
    definition and the function: no instance dict is made at import); attributes of one's own go in a dict
    made when first set, as on a function, and win over the function's; functools.wraps copies them."""
    import functools

    f = half
    assert (f.__name__, f.__qualname__, f.__module__) == ("half", "half", __name__)
    assert f.__wrapped__ is f.py_func and f.__doc__ == "Half of x."
    assert type(f).__module__ == "aot" and repr(type(f)) == "<class 'aot.Method'>"
    assert not hasattr(f, "no_such_attribute")
    with pytest.raises(AttributeError, match="no_such_attribute"):
        _ = f.no_such_attribute
    copy = functools.wraps(f)(lambda *args: f(*args))
    assert (copy.__qualname__, copy.__module__, copy(3.0)) == ("half", __name__, 1.5)
    g = third
    g.tag, g.__qualname__ = "mine", "renamed"
    try:
        assert (
            g.tag == "mine" and g.__qualname__ == "renamed" and g.__dict__ == {"tag": "mine", "__qualname__": "renamed"}
        )
        assert g.__module__ == __name__ and half.__qualname__ == "half"
    finally:
        del g.tag, g.__qualname__
    assert g.__qualname__ == "third"


@aot.jit
def half(x: float) -> float:
    """Half of x."""
    return x / 2.0


@aot.jit
def third(y: float) -> float:
    return y / 3.0


def test_first_calls_share_the_types_of_scalar_arguments_and_declarations():
    # A thousand first calls must not leave a thousand copies of "(f64,)" behind for the garbage collector.
    from aot.runtime.signatures import declared_signatures, scalar_types

    assert half(3.0) == half.py_func(3.0) and third(3.0) == third.py_func(3.0)
    a, b = half.__aot_method__.dispatcher, third.__aot_method__.dispatcher
    assert a.declared == ((aot.f64,),) and a.declared is b.declared
    assert a.specs[0].argtypes is b.specs[0].argtypes
    assert scalar_types((float, int)) == ((aot.f64, aot.i64), ("f64", "i64"), ((aot.f64, aot.i64),))
    assert scalar_types((float, int)) is scalar_types((float, int))
    assert scalar_types((float, np.ndarray)) is None and scalar_types((str,)) is None
    assert scalar_types(()) == ((), (), ((),))

    # an unhashable annotation is no crash: the method is simply not declared by it
    def odd(x: [1]):
        return x  # noqa: E704

    assert declared_signatures(odd, None) == ()
    # the same array type for arrays of one format and layout, whatever their sizes
    assert aot.types.typeof(np.zeros(3)) is aot.types.typeof(np.ones(7))
    assert str(aot.types.typeof(np.zeros((2, 3))[:, ::2])) == "f64[:, :]"


@aot.jit
def doubled(x):
    return x + x


def test_events_are_event_tuples_and_stats_count_them():
    before, inferred = len(aot.events()), aot.stats()["inferred"]
    assert doubled(21) == 42
    new = aot.events()[before:]
    assert [type(e) for e in new] == [aot.Event]
    assert (new[0].kind, new[0].method, new[0].argtypes, new[0].cause) == (
        "inferred",
        f"{__name__}:doubled",
        ("i64",),
        "no-entry",
    )
    assert aot.stats()["inferred"] == inferred + 1


def test_importing_makes_no_dispatcher_the_first_call_does():
    from aot.runtime.dispatch import dispatcher_of

    @aot.jit(signatures=["f64(f64)"])
    def quarter(x):
        return x / 4.0

    mdef = quarter.__aot_method__
    assert mdef.dispatcher is None and mdef.method is quarter and mdef.signatures == ["f64(f64)"]
    assert quarter(2.0) == quarter.py_func(2.0) == 0.5
    d = mdef.dispatcher
    assert d is not None and d is dispatcher_of(mdef) is quarter._aot_dispatcher and d.declared == ((aot.f64,),)
    assert quarter.specializations()[0].argtypes == (aot.f64,)
    from aot.world import MethodTable

    assert dispatcher_of(MethodTable().define(lambda x: x)) is None  # a plain callee has none


@aot.jit
def eighth(x: float) -> float:
    return x / 8.0


def test_concurrent_first_calls_share_one_dispatcher(monkeypatch):
    """Eight threads make eighth's dispatcher at the same moment (each waits, inside the constructor, for the
    others): the first one stored is the one every thread's call runs on, and one thread compiles."""
    import threading

    from aot.runtime import dispatch

    made, used = [], []
    inside = threading.Barrier(8, timeout=10)

    class Racing(dispatch.Dispatcher):
        __slots__ = ()

        def __init__(self, mdef):
            super().__init__(mdef)
            made.append(self)
            inside.wait()

        def call_python(self, args, kwargs):
            used.append(self)
            return super().call_python(args, kwargs)

    monkeypatch.setattr(dispatch, "Dispatcher", Racing)
    out = []
    threads = [threading.Thread(target=lambda: out.append(eighth(4.0))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == [eighth.py_func(4.0)] * 8 and len(made) == 8
    kept = eighth.__aot_method__.dispatcher
    assert kept in made and all(d is kept for d in used), "two threads ran on different dispatchers"
    assert eighth._aot_dispatcher is kept and kept.obj is eighth and eighth(8.0) == 1.0
    # and one of them compiled it: the others took its specialization (not one each)
    assert len(kept.specs) == 1
    assert [e.kind for e in aot.events() if e.method == f"{__name__}:eighth"] == ["inferred"]


@aot.jit
def identity_of_any(x):
    return x


def test_an_unsigned_specialization_never_takes_a_python_int():
    """A specialization inferred for a NumPy unsigned scalar would convert a Python int as a declared u64
    parameter does (wrapping -1 to 2**64 - 1); Python's types say i64, so the int gets its own specialization."""
    assert identity_of_any(np.uint64(3)) == 3
    assert identity_of_any(-1) == -1 and identity_of_any(7) == 7
    assert identity_of_any(np.uint64(2**63 + 5)) == 2**63 + 5
    assert identity_of_any((np.uint8(200), 1)) == (200, 1) and identity_of_any((-3, 1)) == (-3, 1)
    kinds = sorted(str(s.argtypes) for s in identity_of_any.specializations())
    assert len(kinds) == 4, kinds


@aot.jit(signatures=["f64(f64[::1], i64)"])
def first_of_contiguous(a, k):
    return a[k]


@pytest.mark.parametrize(
    "bad, named",
    [
        ((np.zeros((2, 2)), 1), "argument 'a' is f64[:, ::1], where f64[::1] is declared"),
        ((np.zeros(4)[::2], 1), "argument 'a' is f64[:], where f64[::1] is declared (a C-contiguous array"),
        ((np.zeros(3, dtype=np.int32), 0), "argument 'a' is i32[::1]"),
        ((np.zeros(3), 1.5), "argument 'k' is f64, where i64 is declared"),
    ],
)
def test_a_call_no_declared_signature_takes_names_the_argument(bad, named):
    with pytest.raises(TypeError, match="no compiled signature takes") as info:
        first_of_contiguous(*bad)
    assert named in str(info.value)
