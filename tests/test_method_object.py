"""Method objects behave like the functions they wrap (issue #24), beyond calls:

    f.__doc__ = "..."              # and __name__, __qualname__, __module__, __annotations__, __dict__

The strict-import check builds a copy of fixtures/numkit and runs it in fresh interpreters
(``buildsupport``); the rest runs on methods of this module.
"""
import pytest

import aot
from aot.world.fingerprint import fingerprint
from buildsupport import FIXTURES, aot_build, copy_project, run_python


@aot.jit
def f(x: float, y: float = 2.0) -> float:
    """Add y to x."""
    return x + y


@aot.jit
def renamed(x: float) -> float:
    """Twice x."""
    return 2.0 * x


@aot.jit
def scale(x: float, y: float) -> float:
    return x * y


def _local_pair():
    def twice(x: float) -> float:
        return 2.0 * x
    plain = twice
    return plain, aot.jit(twice)


LOCAL_PLAIN, LOCAL_METHOD = _local_pair()


# ------------------------------------------------------------------------------------------------ attributes

def test_function_attributes_read_the_function_and_can_be_set_on_the_method():
    """Each reads the Python function's until set on the method object; setting one changes what the method
    reports, never the Python function, its fingerprint, the method type or another method."""
    m = renamed
    func = m.py_func
    before = fingerprint(func, m.__aot_method__.options)
    assert (m.__doc__, m.__name__, m.__qualname__, m.__module__) == ("Twice x.", "renamed", "renamed", __name__)
    assert m.__annotations__ == {"x": float, "return": float} and m.__annotations__ is func.__annotations__
    new = {"__doc__": "Doubles.", "__name__": "double", "__qualname__": "Maths.double", "__module__": "maths",
           "__annotations__": {"x": int}}
    try:
        for name, value in new.items():
            setattr(m, name, value)
        assert {name: getattr(m, name) for name in new} == new
        assert m.__dict__ == new
        assert (func.__doc__, func.__name__, func.__qualname__, func.__module__) == (
            "Twice x.", "renamed", "renamed", __name__)
        assert func.__annotations__ == {"x": float, "return": float}
        assert m.__wrapped__ is func and m.py_func is func
        assert fingerprint(func, m.__aot_method__.options) == before
        assert (f.__doc__, f.__name__, f.__annotations__["y"]) == ("Add y to x.", "f", float)
        assert type(m).__doc__.startswith("A compiled method") and type(m).__name__ == "Method"
        assert type(m).__module__ == "aot" and type(m).__annotations__ == {}
        assert m(3.0) == 6.0  # (still the same compiled method)
    finally:
        for name in new:
            delattr(m, name)
    assert (m.__doc__, m.__name__, m.__qualname__, m.__module__) == ("Twice x.", "renamed", "renamed", __name__)
    assert m.__dict__ == {}


def test_the_dict_is_readable_and_writable_as_a_functions():
    m = renamed
    assert m.__dict__ == {}
    try:
        m.__dict__ = {"tag": 1, "__doc__": "From a new dict."}
        assert m.tag == 1 and m.__doc__ == "From a new dict." and vars(m) == {"tag": 1, "__doc__": "From a new dict."}
        with pytest.raises(TypeError):
            m.__dict__ = 3
    finally:
        m.__dict__ = {}
    assert m.__doc__ == "Twice x." and not hasattr(m, "tag")


@pytest.fixture(scope="module")
def numkit_built(tmp_path_factory):
    """A copy of fixtures/numkit, built, whose ``core`` sets a method's docstring at import (as a published
    package does), written before the build as the package would be."""
    project = copy_project(FIXTURES / "numkit", tmp_path_factory.mktemp("methobj") / "numkit")
    core = project / "numkit" / "core.py"
    core.write_text(core.read_text() + '\n\nlerp.__doc__ = "Interpolate linearly (docstring set at import)."\n')
    done = aot_build(project, "--json")
    assert done.rc == 0, done.stderr[-3000:]
    assert done.summary["failed"] == 0
    return project


def test_setting_the_docstring_at_import_or_before_the_first_call_keeps_the_prebuilt_entry(numkit_built):
    """The module sets ``lerp.__doc__`` at import; the probe sets more on ``clamp`` before its first call.
    In strict mode both load from the image: nothing that can be set is part of a fingerprint."""
    run = run_python(numkit_built, """
        from numkit import core
        core.clamp.__doc__ = "Mine."
        core.clamp.__name__, core.clamp.__annotations__ = "limit", {}
        got = [core.lerp(0.0, 10.0, 0.25), core.clamp(5.0, 0.0, 1.0)]
        report(got=got, docs=[core.lerp.__doc__, core.clamp.__doc__, core.clamp.py_func.__doc__])
    """, env={"AOT_STRICT": "1"})
    assert run["got"] == [2.5, 1.0]
    assert run["docs"] == ["Interpolate linearly (docstring set at import).", "Mine.",
                           "Limit x to the closed interval [lo, hi]."]
    assert run["stats"]["loaded"] == 2 and run["stats"]["inferred"] == 0 and run["llvmlite"] is False
