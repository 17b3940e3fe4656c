"""Method objects behave like the functions they wrap (issue #24), beyond calls:

    f.__doc__ = "..."              # and __name__, __qualname__, __module__, __annotations__, __dict__
    pickle.dumps(f), copy.copy(f)  # by reference, as a function: a process pool's workers run the image's code
    class C: g = f                 # C().g(x) binds the instance, as the plain function would
    help(f), pydoc, inspect.isroutine(f)

The process-pool and strict-import checks build a copy of fixtures/numkit and run it in fresh interpreters
(``buildsupport``); the rest runs on methods of this module.
"""

import copy
import inspect
import io
import pickle
import pydoc
import subprocess
import sys
import textwrap

import pytest

import aot
from aot.world.fingerprint import fingerprint
from buildsupport import FIXTURES, aot_build, base_env, copy_project, run_python


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
    new = {
        "__doc__": "Doubles.",
        "__name__": "double",
        "__qualname__": "Maths.double",
        "__module__": "maths",
        "__annotations__": {"x": int},
    }
    try:
        for name, value in new.items():
            setattr(m, name, value)
        assert {name: getattr(m, name) for name in new} == new
        assert m.__dict__ == new
        assert (func.__doc__, func.__name__, func.__qualname__, func.__module__) == (
            "Twice x.",
            "renamed",
            "renamed",
            __name__,
        )
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
    run = run_python(
        numkit_built,
        """
        from numkit import core
        core.clamp.__doc__ = "Mine."
        core.clamp.__name__, core.clamp.__annotations__ = "limit", {}
        got = [core.lerp(0.0, 10.0, 0.25), core.clamp(5.0, 0.0, 1.0)]
        report(got=got, docs=[core.lerp.__doc__, core.clamp.__doc__, core.clamp.py_func.__doc__])
    """,
        env={"AOT_STRICT": "1"},
    )
    assert run["got"] == [2.5, 1.0]
    assert run["docs"] == [
        "Interpolate linearly (docstring set at import).",
        "Mine.",
        "Limit x to the closed interval [lo, hi].",
    ]
    assert run["stats"]["loaded"] == 2 and run["stats"]["inferred"] == 0 and run["llvmlite"] is False


# ------------------------------------------------------------------------------------------- pickle and copy


def test_pickle_and_copy_by_reference():
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        data = pickle.dumps(f, protocol)
        assert pickle.loads(data) is f and len(data) < 80, protocol
        assert __name__.encode() in data and b"aot" not in data  # (the module and name: no aot type in it)
    assert pickle.loads(pickle.dumps([f, f, scale])) == [f, f, scale]
    assert copy.copy(f) is f and copy.deepcopy(f) is f and copy.deepcopy({"k": [f]})["k"][0] is f


def _failure(dumps, obj):
    try:
        dumps(obj)
    except Exception as err:
        return type(err), str(err).replace(repr(obj), "<obj>")
    raise AssertionError(f"{obj!r} pickled")


def test_a_method_pickle_cannot_find_by_reference_fails_as_the_function_would():
    """Defined inside a function: the same error, from the C pickler and from the Python one."""
    assert LOCAL_METHOD.__qualname__ == LOCAL_PLAIN.__qualname__ == "_local_pair.<locals>.twice"
    for dumps in (pickle.dumps, pickle._dumps):
        plain, method = _failure(dumps, LOCAL_PLAIN), _failure(dumps, LOCAL_METHOD)
        assert method == plain, dumps
        assert issubclass(method[0], (pickle.PicklingError, AttributeError)) and "<locals>" in method[1]
    assert copy.copy(LOCAL_METHOD) is LOCAL_METHOD  # (copy asks no module: the object itself, as for functions)


def test_a_method_in_a_main_another_process_cannot_import_fails_there_as_the_function_would(tmp_path):
    """Pickled from ``python -c`` (its ``__main__`` has no file), loaded in another interpreter: the same
    AttributeError as for a plain function defined beside it."""
    dump = textwrap.dedent("""
        import pickle, aot
        def plain(x: float) -> float:
            return x + 1.0
        @aot.jit
        def method(x: float) -> float:
            return x + 1.0
        assert pickle.loads(pickle.dumps(method)) is method
        print(pickle.dumps(plain).hex(), pickle.dumps(method).hex())
    """)
    load = textwrap.dedent("""
        import pickle, sys, aot
        for data in sys.argv[1:]:
            try:
                pickle.loads(bytes.fromhex(data))
            except Exception as err:
                print(type(err).__name__ + ":", str(err).replace("'plain'", "'NAME'").replace("'method'", "'NAME'"))
    """)
    env = base_env()
    out = subprocess.run(
        [sys.executable, "-c", dump], capture_output=True, text=True, env=env, cwd=tmp_path, check=True
    ).stdout.split()
    errors = subprocess.run(
        [sys.executable, "-c", load, *out], capture_output=True, text=True, env=env, cwd=tmp_path, check=True
    ).stdout.splitlines()
    assert len(errors) == 2 and errors[0] == errors[1], errors
    assert errors[0].startswith("AttributeError: Can't get attribute 'NAME' on <module '__main__'"), errors


POOL = """
import concurrent.futures
import multiprocessing
import os

import numpy as np

from numkit import core, ntheory, stats


def call_and_report(method, args):
    return os.getpid(), _plain(method(*args)), _aot.stats(), "llvmlite" in _sys.modules


if __name__ == "__main__":
    calls = [(core.lerp, (0.0, 10.0, 0.25)), (ntheory.fib, (20,)), (stats.mean, (np.linspace(0.0, 3.0, 7),)),
             (core.clamp, (5.0, 0.0, 1.0)), (ntheory.gcd, (84, 36))] * 3
    spawn = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=2, mp_context=spawn) as pool:
        mapped = list(pool.map(core.lerp, [0.0, 1.0, -2.0], [10.0, 3.0, 2.0], [0.25, 0.5, 0.75]))
        done = [pool.submit(call_and_report, m, a).result() for m, a in calls]
    workers = {}
    for pid, _, worker_stats, llvmlite in done:  # (each process's last stats: they only grow)
        workers[pid] = (worker_stats, llvmlite)
    report(mapped=mapped, mapped_want=[core.lerp.py_func(*a) for a in zip([0.0, 1.0, -2.0], [10.0, 3.0, 2.0],
                                                                          [0.25, 0.5, 0.75])],
           got=[r for _, r, _, _ in done], want=[_plain(m.py_func(*a)) for m, a in calls],
           workers=list(workers.values()), parent_pid=os.getpid(), pids=sorted(workers))
"""


def test_a_spawned_process_pool_runs_the_prebuilt_code_of_a_method_pickled_by_reference(numkit_built):
    """``ProcessPoolExecutor.map(core.lerp, …)`` and methods passed as arguments: each worker imports numkit
    and runs its own method objects from the image, in strict mode (``AOT_STRICT=1`` reaches the workers
    through the environment), compiling nothing and never importing llvmlite."""
    run = run_python(numkit_built, POOL, env={"AOT_STRICT": "1", "OPENBLAS_NUM_THREADS": "1"})
    assert run["mapped"] == run["mapped_want"] == [2.5, 2.0, 1.0]
    assert run["got"] == run["want"]
    assert run["workers"] and run["parent_pid"] not in run["pids"]
    for worker_stats, llvmlite in run["workers"]:
        assert worker_stats["loaded"] >= 1 and worker_stats["inferred"] == 0 and worker_stats["cured"] == 0
        assert llvmlite is False


# ----------------------------------------------------------------------------------------- as a class attribute


class Plain:
    g = scale.py_func
    s = staticmethod(scale.py_func)


class Compiled:
    g = scale
    s = staticmethod(scale)


def test_as_a_class_attribute_it_binds_the_instance_as_the_function_would():
    assert Compiled.__dict__["g"] is scale and Compiled.g is scale and scale.__get__(None, Compiled) is scale
    assert Compiled.g(2.0, 3.0) == Plain.g(2.0, 3.0) == 6.0
    bound = Compiled().g
    assert bound.__func__ is scale and type(bound.__self__) is Compiled
    assert inspect.signature(bound) == inspect.signature(Plain().g)
    assert str(inspect.signature(bound)) == "(y: float) -> float"
    # The instance is the first argument, a float parameter: plain Python fails on it, and so does the method
    # (the dispatcher's TypeError for an argument it cannot take), never silently returning scale(3.0).
    with pytest.raises(TypeError):
        Plain().g(3.0)
    with pytest.raises(TypeError, match="scale"):
        bound(3.0)
    assert Compiled.s(2.0, 3.0) == Compiled().s(2.0, 3.0) == Plain().s(2.0, 3.0) == 6.0
    assert Compiled.__dict__["s"].__func__ is scale


def test_binding_leaves_plain_calls_native():
    assert scale(2.0, 5.0) == 10.0
    assert scale._aot_vectorcall != 0  # (calls of the object itself are its vectorcall, not ``__get__``)


# ---------------------------------------------------------------------------------------------- help and pydoc


def _body(text: str) -> str:
    """A pydoc page without its title line."""
    return text.split("\n", 2)[2]


def test_help_and_pydoc_show_the_signature_and_docstring():
    assert inspect.isroutine(f) and inspect.ismethoddescriptor(f) and not inspect.isfunction(f)
    page = pydoc.plain(pydoc.render_doc(f))
    assert page == textwrap.dedent(f"""\
        Python Library Documentation: Method in module {__name__}

        f(x: float, y: float = 2.0) -> float
            Add y to x.
        """)
    assert _body(page) == _body(pydoc.plain(pydoc.render_doc(f.py_func)))  # what the plain function shows
    out = io.StringIO()
    pydoc.Helper(output=out)(f)  # help(f)
    assert "f(x: float, y: float = 2.0) -> float\n    Add y to x." in out.getvalue()


def _sections(page: str) -> dict[str, str]:
    sections, name = {}, None
    for line in page.splitlines():
        if line and not line[0].isspace():
            name = line
            sections[name] = ""
        elif name is not None:
            sections[name] += line + "\n"
    return sections


def test_a_modules_pydoc_lists_methods_under_functions():
    import numkit.core  # (from the private copy: nothing is called)

    sections = _sections(pydoc.plain(pydoc.render_doc(numkit.core)))
    functions, data = sections["FUNCTIONS"], sections["DATA"]
    assert "    lerp(a: float, b: float, t: float) -> float\n        Linear interpolation between" in functions
    assert "    clamp(x: f64, lo: f64, hi: f64) -> f64\n" in functions
    assert "EPS = 1e-12" in data and "lerp" not in data and "clamp" not in data
    ours = _sections(pydoc.plain(pydoc.render_doc(sys.modules[__name__])))
    assert "    f(x: float, y: float = 2.0) -> float\n        Add y to x.\n" in ours["FUNCTIONS"]
    assert "f = " not in ours.get("DATA", "")
