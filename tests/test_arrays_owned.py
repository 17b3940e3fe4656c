"""Arrays owned by compiled code (issue #16): allocation, copies, returning arrays, reference counting.

Every compiled result is checked against the same function run as plain Python (``support.check``: same dtype,
shape and contents, NaN- and sign-of-zero-aware); the memory tests count live blocks with ``tracemalloc``
(the allocator's ``PyMem_RawMalloc`` is traced).
"""

import array
import ast
import gc
import os
import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path

import numpy
import numpy as np
import pytest

import aot

try:
    from .support import check, check_raises, expect_compile_error, locate
except ImportError:  # tests/ is not a package
    from support import check, check_raises, expect_compile_error, locate

np_alias = np  # compiled code names NumPy through its globals, under any name
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's overflow warnings (plain Python side)


# ------------------------------------------------------------------------------------------ allocation


@aot.jit
def zeros1(n):
    return np.zeros(n)


@aot.jit
def zeros2(n, m):
    return np.zeros((n, m), np.int32)


@aot.jit
def ones_typed(n):
    return np.ones(n, np.float32), np.ones(n, np.int64), np.ones(n, np.bool_), np.ones((n, 2), np.uint8)


@aot.jit
def builtin_dtypes(n):
    return np.zeros(n, float), np.zeros(n, int), np.ones(n, bool)


@aot.jit
def other_names(n):
    return np_alias.zeros(n, numpy.int16), numpy.ones(n)


@aot.jit
def empty_then_fill(n):
    a = np.empty(n)
    for i in range(n):
        a[i] = i * 1.5
    return a


@aot.jit
def full_of(n, value):
    return np.full(n, value)


@aot.jit
def full_typed(n, value):
    return np.full((2, n), value, np.float32)


@pytest.mark.parametrize("n", [0, 1, 5, 17])
def test_zeros_ones_empty_full(n):
    check(zeros1, n)
    check(zeros2, n, 3)
    check(zeros2, 2, n)
    check(ones_typed, n)
    check(builtin_dtypes, n)
    check(other_names, n)
    check(empty_then_fill, n)
    check(full_of, n, 2.5)
    check(full_of, n, -7)
    check(full_of, n, True)
    check(full_of, n, float("nan"))
    check(full_typed, n, -1e30)


def test_negative_dimensions_raise_value_error():
    check_raises(zeros1, -1, exc=ValueError, messages=True)
    check_raises(zeros2, 2, -3, exc=ValueError, messages=True)
    check_raises(full_of, -2, 1.0, exc=ValueError, messages=True)


@aot.jit
def likes(a):
    return np.empty_like(a).shape, np.zeros_like(a), np.ones_like(a), np.full_like(a, 3), np.zeros_like(a, np.int8)


@aot.jit
def like_dtype_of(a, b):
    return np.ones(len(b), a.dtype), np.full_like(b, 0.75, a.dtype)


ARRAYS = [
    np.zeros(0),
    np.array([2.5]),
    np.arange(10.0)[::-2],
    np.arange(12.0).reshape(3, 4).T,
    np.arange(6, dtype=np.int64),
    np.array([True, False, True]),
    np.arange(6, dtype=np.float32).reshape(2, 3)[:, ::-1],
]


@pytest.mark.parametrize("a", ARRAYS, ids=lambda a: f"{a.dtype}{a.shape}{a.strides}")
def test_like_functions_and_copy(a):
    check(likes, a)
    check(copy_of, a)
    if a.ndim == 1:
        check(copy_then_write, a)


@aot.jit
def dtype_in_a_local(a, n):
    dt = a.dtype
    f = np.full
    return f(n, 1, dt)


@pytest.mark.parametrize("a", [np.arange(3, dtype=np.int32), np.array([1.5, -0.0]), np.array([True])])
def test_dtype_of_an_argument(a):
    check(like_dtype_of, a, np.arange(4.0))
    check(dtype_in_a_local, a, 3)
    check(dtype_in_a_local, a, 0)


# ------------------------------------------------------------------------------------ arange, linspace, eye


@aot.jit
def arange1(n):
    return np.arange(n)


@aot.jit
def arange2(a, b):
    return np.arange(a, b)


@aot.jit
def arange3(a, b, s):
    return np.arange(a, b, s)


@aot.jit
def arange_f32(a, b, s):
    return np.arange(a, b, s, np.float32)


@aot.jit
def arange_as_float(n):
    return np.arange(0, n, 1, numpy.float64)


@pytest.mark.parametrize(
    "args",
    [(0, 5, 1), (5, 0, -1), (3, 3, 1), (0, 10, 3), (10, -10, -4), (0.0, 1.0, 0.1), (1.0, 0.0, -0.3), (-2, 2.5, 0.5)],
)
def test_arange(args):
    check(arange1, int(args[1]))
    check(arange2, args[0], args[1])
    check(arange3, *args)
    check(arange_f32, *args)
    check(arange_as_float, int(abs(args[1])))


def test_arange_errors():
    check_raises(arange3, 0, 5, 0, exc=ZeroDivisionError)
    check_raises(arange3, 0.0, 5.0, 0.0, exc=ZeroDivisionError)
    check_raises(arange2, 0.0, float("nan"), exc=ValueError, messages=True)
    check(arange1, -3)


@aot.jit
def linspace2(a, b):
    return np.linspace(a, b)


@aot.jit
def linspace3(a, b, n):
    return np.linspace(a, b, n)


@aot.jit
def linspace4(a, b, n, endpoint):
    return np.linspace(a, b, n, endpoint)


@pytest.mark.parametrize(
    "a,b", [(0.0, 1.0), (-3, 7), (1.0, 1.0), (2.5, -1.25), (0.0, 5e-324), (0.0, float("nan")), (1e308, -1e308)]
)
@pytest.mark.parametrize("n", [0, 1, 2, 7])
def test_linspace(a, b, n):
    check(linspace2, a, b)
    check(linspace3, a, b, n)
    check(linspace4, a, b, n, False)
    check(linspace4, a, b, n, True)


def test_linspace_negative_count():
    check_raises(linspace3, 0.0, 1.0, -1, exc=ValueError)


@aot.jit
def eye1(n):
    return np.eye(n)


@aot.jit
def eye3(n, m, k):
    return np.eye(n, m, k), np.eye(n, None, k), np.eye(n, m, k, np.int64)


@pytest.mark.parametrize("n", [0, 1, 4])
@pytest.mark.parametrize("k", [-5, -1, 0, 2, 9])
def test_eye(n, k):
    check(eye1, n)
    check(eye3, n, 3, k)
    check(eye3, n, 6, k)


# --------------------------------------------------------------------------------------------- copies


@aot.jit
def copy_of(a):
    return a.copy()


@aot.jit
def copy_then_write(a):
    b = a.copy()
    if b.size > 0 and b.ndim == 1:
        b[0] = b[len(b) - 1]
    return b, a


def test_copy_owns_new_memory():
    a = np.arange(5.0)
    b = copy_of(a)
    assert not np.shares_memory(a, b) and b.flags.c_contiguous and b.flags.writeable and b.flags.owndata is False
    b[0] = 99.0
    assert a[0] == 0.0


# ------------------------------------------------------------------------------------- returning arrays


@aot.jit
def identity(a):
    return a


@aot.jit
def through_locals(a, flag):
    b = a
    c = np.zeros(len(a))
    if flag:
        c = b
    return c


@aot.jit
def pair(a, n):
    b = np.arange(n)
    return (a, n, b, (b, 1.5))


def test_return_a_gives_the_same_memory():
    a = np.arange(6.0)
    r = identity(a)
    assert isinstance(r, np.ndarray) and np.shares_memory(a, r) and r.flags.writeable
    r[1] = -1.0
    assert a[1] == -1.0
    v = np.arange(10.0)[::-3]
    rv = identity(v)
    assert np.shares_memory(v, rv) and rv.strides == v.strides and rv.tolist() == v.tolist()
    ro = np.arange(3.0)
    ro.flags.writeable = False
    assert not identity(ro).flags.writeable
    check(identity, np.zeros((0, 3)))
    check(identity, np.array([[1, 2], [3, 4]], dtype=np.int16).T)


def test_borrowed_memory_outlives_the_argument():
    r = identity(np.arange(1000.0))  # the argument dies with this statement
    gc.collect()
    assert r.tolist() == list(np.arange(1000.0))
    buf = array.array("d", [1.0, 2.0])
    ra = identity(buf)
    del buf
    assert ra.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("flag", [True, False])
def test_aliasing_through_locals_and_tuples(flag):
    a = np.arange(4.0)
    check(through_locals, a, flag)
    assert np.shares_memory(through_locals(a, flag), a) is flag
    check(pair, a, 3)
    r = pair(a, 3)
    assert np.shares_memory(r[0], a) and r[2] is not r[3][0] and np.shares_memory(r[2], r[3][0])


@aot.jit
def make_scratch(n):
    out = np.empty(n)
    for i in range(n):
        out[i] = i
    return out


@aot.jit
def use_scratch(n):
    s = make_scratch(n)
    t = make_scratch(n + 1)
    total = 0.0
    for i in range(n):
        total += s[i] * t[i + 1]
    return total, t


@pytest.mark.parametrize("n", [0, 1, 9])
def test_arrays_returned_between_compiled_methods(n):
    check(use_scratch, n)


def test_returned_memory_stays_valid_after_compiled_references_die():
    rs = [use_scratch(50)[1] for _ in range(20)]
    junk = [np.ones(51) * 7 for _ in range(20)]
    gc.collect()
    assert all(r.tolist() == list(range(51)) for r in rs) and len(junk) == 20


# -------------------------------------------------------------------------------------------- no leaks


@aot.jit
def churn(n, rounds):
    total = 0.0
    for r in range(rounds):
        a = np.zeros(n)
        b = a.copy()
        c = (a, b)
        d = c[1]
        d[0] = r
        e = np.full_like(d, 2.0)
        total += d[0] + e[0] + make_scratch(n)[n - 1]
    return total


@aot.jit
def fails_after_allocating(n):
    a = np.zeros(n)
    b = (a, np.ones(n))
    if n > 3:
        raise ValueError("too big")
    return b


@aot.jit
def fails_in_callee(n):
    keep = np.zeros(n)
    t = fails_after_allocating(n)
    return keep, t


def _live_bytes() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def test_allocating_in_a_loop_does_not_leak():
    churn(10, 2), fails_after_allocating(2), fails_in_callee(1), pair(np.zeros(2), 2), copy_of(np.zeros(3))
    tracemalloc.start()
    try:
        start = _live_bytes()
        for _ in range(300):
            churn(1000, 4)  # ~ 4 x 3 x 8 kB per call
            r = pair(np.zeros(100), 100)
            del r
            with pytest.raises(ValueError):
                fails_after_allocating(1000)
            with pytest.raises(ValueError):
                fails_in_callee(1000)
            copy_of(np.arange(1000.0))
        grown = _live_bytes() - start
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, f"{grown} bytes still live after 300 rounds"


def test_returned_arrays_are_freed_when_python_drops_them():
    zeros1(1)
    tracemalloc.start()
    try:
        start = _live_bytes()
        held = [zeros1(100_000) for _ in range(5)]
        assert _live_bytes() - start >= 5 * 800_000
        del held
        assert _live_bytes() - start < 64 * 1024
    finally:
        tracemalloc.stop()


# ------------------------------------------------------------------------------------------- no NumPy


def test_without_numpy_a_returned_array_is_a_buffer(tmp_path):
    script = textwrap.dedent(
        """
        import sys, array, gc
        sys.modules["numpy"] = None  # NumPy cannot be imported
        import aot

        @aot.jit
        def ident(a):
            return a

        @aot.jit
        def dup(a):
            b = a.copy()
            b[0] = 5.0
            return b

        src = array.array("d", [1.0, 2.0, 3.0])
        r = ident(src)
        c = dup(src)
        m = memoryview(c)
        assert type(c).__name__ == "ArrayMemory", type(c)
        assert m.format == "d" and m.shape == (3,) and not m.readonly and m.tolist() == [5.0, 2.0, 3.0]
        assert memoryview(r).tolist() == [1.0, 2.0, 3.0] and src.tolist() == [1.0, 2.0, 3.0]
        m[1] = 9.0
        del m, c
        gc.collect()
        print("ok", "numpy" in sys.modules and sys.modules["numpy"] is not None)
        """
    )
    path = tmp_path / "nonumpy.py"
    path.write_text(script)
    env = {**os.environ, "PYTHONPATH": str(Path(aot.__file__).resolve().parents[1])}
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ok", "False"]


# ------------------------------------------------------------------------------------- compile errors


@aot.jit
def bad_shape(x):
    return np.zeros(x)


@aot.jit
def zero_d():
    return np.zeros(())


@aot.jit
def bad_dtype(n):
    return np.zeros(n, np.complex128)


@aot.jit
def keyword_dtype(n):
    return np.zeros(n, dtype=np.int64)


@aot.jit
def keyword_dtypes(n, a):
    return (
        np.ones(n, dtype=np.float32),
        np.full((n, 2), 7, dtype=np.int32),
        np.zeros_like(a, dtype=np.int64),
        np.arange(n, dtype=np.float64),
        np.arange(1, n, 2, dtype=np.int32),
    )


@aot.jit
def keyword_dtype_misplaced(n):
    return np.eye(n, dtype=np.int64)


@pytest.mark.parametrize("n", [0, 1, 5])
def test_dtype_given_as_a_keyword(n):
    check(keyword_dtype, n)
    check(string_dtype, n)
    check(keyword_dtypes, n, np.linspace(0.0, 1.0, 3))


def test_dtype_keyword_where_earlier_arguments_are_left_out_is_a_compile_error():
    err = expect_compile_error(
        keyword_dtype_misplaced, 3, at=locate(keyword_dtype_misplaced, "np.eye(n, dtype=np.int64)"), node_type=ast.Call
    )
    assert "by position" in str(err)


@aot.jit
def int_arange_of_floats(n):
    return np.arange(0.5, n, 1, np.int64)


@aot.jit
def like_of_scalar(n):
    return np.zeros_like(n)


@aot.jit
def copy_with_args(a):
    return a.copy(1)


@aot.jit
def float_count(n):
    return np.linspace(0, 1, n)


@aot.jit
def string_dtype(n):
    return np.zeros(n, "float64"), np.ones((n, 2), dtype="int32"), np.arange(n, dtype="f4")


@aot.jit
def too_many(n):
    return np.zeros(n, np.int64, 3)


@aot.jit
def returns_a_dtype(a):
    return a.dtype


@pytest.mark.parametrize(
    "f,args,needle,node,words",
    [
        (bad_shape, (2.5,), "np.zeros(x)", ast.Call, "the shape must be an int or a tuple of ints"),
        (zero_d, (), "np.zeros(())", ast.Call, "0-d arrays are not supported"),
        (bad_dtype, (3,), "np.zeros(n, np.complex128)", ast.Call, "the dtype must be"),
        (int_arange_of_floats, (3,), "np.arange", ast.Call, "integer dtype"),
        (like_of_scalar, (3,), "np.zeros_like", ast.Call, "must be an array"),
        (copy_with_args, (np.zeros(2),), "a.copy(1)", ast.Call, "takes no arguments"),
        (float_count, (2.0,), "np.linspace", ast.Call, "num must be an integer"),
        (too_many, (2,), "np.zeros", ast.Call, "takes (shape, dtype=float) here (by position)"),
        (returns_a_dtype, (np.zeros(1),), "return a.dtype", ast.Return, "cannot be returned"),
    ],
    ids=lambda v: getattr(v, "__name__", None) if callable(v) else None,
)
def test_unsupported_forms_are_located_compile_errors(f, args, needle, node, words):
    err = expect_compile_error(f, *args, at=locate(f, needle), node_type=node)
    assert words in str(err)


def test_kernels_cannot_allocate():
    from aot.runtime import runtime
    from aot.runtime.ptx import PtxCompiler

    @aot.kernel
    def k(x: aot.f64[::1]):
        t = np.zeros(4)
        x[0] = t[0]

    with pytest.raises(aot.CompileError, match="allocates an array, which kernels"):
        PtxCompiler(runtime().table).infer(k.__aot_method__, (aot.f64[::1],))
    with pytest.raises(aot.CompileError, match="allocates an array, which kernels"):
        k[1, 1](np.zeros(2))  # (on the CPU grid, or on a device: the same rule)


def test_typed_ir_names_the_intrinsics():
    text = use_scratch.inspect_ir("i64")
    assert "intrinsic np.empty" not in text  # (make_scratch's body is its own instance)
    assert "call " in text
    text = make_scratch.inspect_ir("i64")
    assert "f64[::1] = intrinsic np.empty, [%n]" in text


@aot.jit
def write_through_result(a):
    b = identity(a)
    b[0] = 42.0
    t = (a, 1)
    c = t[0]
    c[1] = 43.0


def test_writes_through_a_returned_alias_need_a_writable_argument():
    a = np.zeros(3)
    check(write_through_result, a)
    ro = np.zeros(3)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        write_through_result(ro)
    assert ro.tolist() == [0.0, 0.0, 0.0]
