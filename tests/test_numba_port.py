"""Numba code ported with only the import changed (``from aot import njit, prange``): Numba's decorator options
accepted, ignored or refused at decoration with what to write (``aot/runtime/numbacompat.py``), and positional
signature strings in Numba's spelling compiling the same entries as aot's ``signatures=``, in process and in a
built image.
"""

import numpy as np
import pytest

import aot
from aot.runtime.numbacompat import numba_signatures

try:
    from .buildsupport import aot_build, image_contents, pyproject, run_python, write_project
    from .support import check
except ImportError:  # tests/ is not a package
    from buildsupport import aot_build, image_contents, pyproject, run_python, write_project
    from support import check


def _body(a, k):
    s = 0.0
    for i in range(len(a)):
        s += a[i] * k
    return s


ARRAYS = [np.zeros(0), np.array([2.5]), np.arange(7.0)[::-2], np.array([1.0, np.nan, -3.0])]

# ------------------------------------------------------------------------------------------- options


@pytest.mark.parametrize(
    "options",
    [
        dict(cache=True),
        dict(cache=False),
        dict(nopython=True),
        dict(forceobj=False),
        dict(fastmath=True),
        dict(fastmath={"nsz", "arcp"}),
        dict(inline="always"),
        dict(inline="never"),
        dict(error_model="python"),
        dict(locals={"s": aot.f64}),
        dict(boundscheck=None),
        dict(boundscheck=False, cache=True, nogil=True, parallel=True, fastmath=True, nopython=True),
    ],
)
def test_numba_options_accepted_and_results_match_python(options):
    f = aot.njit(**options)(_body)
    for a in ARRAYS:
        for k in (3, -1.5):
            check(f, a, k)


def test_options_decide_nothing_but_aot_own():
    plain = aot.jit(_body)
    ported = aot.njit(cache=True, fastmath=True, inline="always", locals={"s": aot.f64}, nopython=True)(_body)
    ported_ir = ported.inspect_ir("f64[:]", "i64").replace("_body", "")
    assert ported_ir == plain.inspect_ir("f64[:]", "i64").replace("_body", "")
    # boundscheck=None (Numba's default spelled out) keeps aot's checks; False drops them, as before.
    kept = aot.jit(boundscheck=None)(_body)
    assert kept._aot_dispatcher.mdef.options.boundscheck is True
    assert aot.njit(boundscheck=False)(_body)._aot_dispatcher.mdef.options.boundscheck is False


def test_njit_is_jit():
    assert aot.njit is aot.jit and "njit" in aot.__all__


@pytest.mark.parametrize(
    "options, error, words",
    [
        (dict(nopython=False), ValueError, "aot compiles nopython code only"),
        (dict(forceobj=True), ValueError, "no object mode"),
        (dict(cache="yes"), TypeError, "takes True or False"),
        (dict(fastmath={"fast", "bogus"}), ValueError, "a set of"),
        (dict(fastmath="fast"), ValueError, "give True, False"),
        (dict(inline="sometimes"), ValueError, "inline='never' or 'always'"),
        (dict(inline=lambda *a: True), ValueError, "inline='never' or 'always'"),
        (dict(error_model="numpy"), ValueError, "ZeroDivisionError"),
        (dict(error_model="c"), ValueError, "error_model='python'"),
        (dict(locals=[("s", 1)]), TypeError, "dict of local names"),
        (dict(no_cpython_wrapper=True), TypeError, "unknown option no_cpython_wrapper="),
    ],
)
def test_numba_options_refused_at_decoration(options, error, words):
    with pytest.raises(error, match=None) as info:
        aot.njit(**options)
    assert words in str(info.value)
    with pytest.raises(error):  # (the same on the function form)
        aot.jit(_body, **options)


# ---------------------------------------------------------------------------------------- signatures


@pytest.mark.parametrize(
    "numba, aot_text",
    [
        ("float64(float64[:], int64)", "f64(f64[:], i64)"),
        ("f8(f8[:], i8)", "f64(f64[:], i64)"),
        ("void(f4[:, ::1], i4, i2, i1)", "none(f32[:, ::1], i32, i16, i8)"),
        ("u8(u8, u4, u2, u1, uint8, uintp, intp, b1)", "u64(u64, u32, u16, u8, u8, u64, i64, boolean)"),
        ("boolean(int16, int8, uint16, double)", "boolean(i16, i8, u16, f64)"),
        ("float64[::1](float64[::1])", "f64[::1](f64[::1])"),
        ("f8(f8[:, :, :])", "f64(f64[:, :, :])"),
        ("f8(f8[::1, :])", "f64(f64[:, :])"),  # (Fortran order: any strides)
        ("(f8[:],)", "(f64[:])"),
        ("(float64, int32)", "(f64, i32)"),
        ("()", "()"),
        ("UniTuple(float64, 3)(Tuple((float64, int64)))", "(f64, f64, f64)((f64, i64))"),
        ("types.float64(types.int64)", "f64(i64)"),
    ],
)
def test_numba_spelling_translates(numba, aot_text):
    assert numba_signatures(numba) == [aot_text]
    assert numba_signatures([numba, "f4(f4)"]) == [aot_text, "f32(f32)"]


@pytest.mark.parametrize(
    "given, words",
    [
        ("c16(c16[:])", "does not compile complex numbers"),
        ("f8(NPDatetime)", "datetimes"),
        ("f8(Record)", "records"),
        ("f8(optional(f8))", "optional(...) parameters"),
        ("f64(f64[:])", "'f64' is aot's spelling"),
        ("f8(float)", "'float' is aot's spelling"),
        ("f8(foo)", "unknown Numba type 'foo'"),
        ("f8(f8[:, ::1, :])", "only the first or the last dimension"),
        ("f8(f8", "expected ','"),
        ("f8(f8) trailing", "unexpected text"),
        ("f8(f8[1:])", "expected ':' or '::1'"),
        ("void[:](f8)", "arrays of void"),
        ("f8(UniTuple(f8, n))", "tuple's length"),
    ],
)
def test_untranslatable_signatures_refused_at_decoration(given, words):
    with pytest.raises(ValueError) as info:
        aot.njit(given)
    assert words in str(info.value) and repr(given) in str(info.value)


def test_bad_signature_arguments():
    with pytest.raises(ValueError, match="at least one signature"):
        aot.njit([])
    with pytest.raises(TypeError, match="Numba's type objects are not accepted"):
        aot.njit([aot.f64])
    with pytest.raises(TypeError, match="give signatures once"):
        aot.jit("f8(f8)", signatures=["f64(f64)"])
    with pytest.raises(TypeError, match="signature strings in Numba's spelling"):
        aot.jit(3.5)


def test_numba_signatures_compile_the_same_entries_as_aot_ones():
    ported = aot.njit(["f8(f8[:], i8)", "f4(f4[:], f4)"], cache=True)(_body)
    native = aot.jit(signatures=["f64(f64[:], i64)", "f32(f32[:], f32)"])(_body)
    for m in (ported, native):
        for a in ARRAYS:
            check(m, a, 3)
            check(m, a.astype(np.float32), np.float32(0.5).item())
    assert [s.argtypes for s in ported.specializations()] == [s.argtypes for s in native.specializations()]
    assert ported._aot_dispatcher.declared == native._aot_dispatcher.declared
    assert ported.inspect_ir("f64[:]", "i64") == native.inspect_ir("f64[:]", "i64")


def test_args_only_and_void_signatures():
    @aot.njit("(f8[:], f8[:])")
    def smooth(a, out):
        for i in range(1, len(a) - 1):
            out[i] = 0.25 * a[i - 1] + 0.5 * a[i] + 0.25 * a[i + 1]

    @aot.jit("void(f8[:], f8[:])", nopython=True)
    def smooth_void(a, out):
        for i in range(1, len(a) - 1):
            out[i] = 0.25 * a[i - 1] + 0.5 * a[i] + 0.25 * a[i + 1]

    for f in (smooth, smooth_void):
        for a in (np.zeros(0), np.array([1.0]), np.arange(9.0)[::-1], np.array([1.0, np.nan, 2.0, 4.0])):
            check(f, a, np.zeros_like(a))
        assert [str(s.argtypes) for s in f.specializations()] == ["(f64[:], f64[:])"]


def test_an_int_passed_where_numba_declares_a_float_converts():
    @aot.njit("f8(f8, i8)")
    def scale(x, n):
        return x * n

    assert scale(2, 3) == 6.0 and type(scale(2, 3)) is float
    with pytest.raises(TypeError, match="no compiled signature"):
        scale(2.5, 1.5)


def test_numba_tuple_signatures():
    @aot.njit("UniTuple(f8, 2)(Tuple((f8, i8)), f8)")
    def pair(t, x):
        return (t[0] * t[1], x - t[0])

    for args in (((1.5, 2), 3.0), ((-0.0, -4), float("nan"))):
        check(pair, *args)


# ------------------------------------------------------------------------------------------- a build

PORTED = """
from aot import njit, prange


@njit("f8(f8[:], i8)", cache=True, fastmath=True)
def weighted(a, k):
    s = 0.0
    for i in range(len(a)):
        s += a[i] * k
    return s


@njit(["void(f8[:], f8[:])", "void(f4[::1], f4[::1])"], nogil=True, error_model="python")
def double(a, out):
    for i in range(len(a)):
        out[i] = 2 * a[i]


@njit("(i8,)", parallel=True, boundscheck=False, inline="never")
def total(n):
    s = 0
    for i in prange(n):
        s += i
    return s
"""

CALLS = """
import numpy as np
from ported import mod

a = np.arange(5.0)
out = np.zeros(5)
mod.double(a, out)
out32 = np.zeros(5, np.float32)
mod.double(a.astype(np.float32), out32)
report(
    weighted=[mod.weighted(a, 3), mod.weighted.py_func(a, 3)],
    double=out.tolist(),
    double32=out32.tolist(),
    total=[mod.total(10), mod.total.py_func(10)],
)
"""


def test_a_package_with_numba_spelled_signatures_builds_its_image(tmp_path):
    project = write_project(
        tmp_path / "nb",
        {"pyproject.toml": pyproject("ported"), "ported/__init__.py": "", "ported/mod.py": PORTED},
    )
    done = aot_build(project, "--json")
    assert done.rc == 0, done.stderr
    keys = set(image_contents(project, "ported").code)
    assert ("ported.mod:weighted", ("f64[:]", "i64")) in keys
    assert ("ported.mod:double", ("f64[:]", "f64[:]")) in keys
    assert ("ported.mod:double", ("f32[::1]", "f32[::1]")) in keys
    assert ("ported.mod:total", ("i64",)) in keys
    run = run_python(project, CALLS, env={"AOT_STRICT": "1"})
    got = run.report
    assert got["weighted"] == [30.0, 30.0] and got["total"] == [45, 45]
    assert got["double"] == [0.0, 2.0, 4.0, 6.0, 8.0] == got["double32"]
    assert got["stats"]["inferred"] == 0 and not got["llvmlite"]


def test_aot_signatures_may_leave_the_return_type_out():
    f = aot.jit(signatures=["(f64[:], i64)"])(_body)
    for a in ARRAYS:
        check(f, a, 2)
    assert [str(s.argtypes) for s in f.specializations()] == ["(f64[:], i64)"]
    from aot.types import BOTTOM, parse_signature

    assert parse_signature("(f64,)") == (BOTTOM, (aot.f64,))
    assert parse_signature("()") == (BOTTOM, ())
    with pytest.raises(ValueError, match="a list cannot be a parameter"):
        parse_signature("(list[f64],)")
