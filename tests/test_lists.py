"""Lists as values in compiled code (issue #17, items 2 and 3): displays, ``[]`` typed by its appends,
``append``/``pop``/``len``/indexing/iteration/``in``, comprehensions, ``np.array(list)``, lists returned to
Python, generator expressions in reductions.

Every compiled result is checked against the same function run as plain Python (``support.check``: type-aware,
so a list of floats is not a list of ints, NaN-aware, arrays by dtype, shape and contents); the memory test
counts live blocks with ``tracemalloc`` (lists come from the arrays' allocator, ``PyMem_Raw*``, which it traces).
"""

import ast
import gc
import math
import tracemalloc

import numpy as np
import pytest

import aot

try:
    from .support import check, check_raises, compile_error, expect_compile_error, locate
except ImportError:  # tests/ is not a package
    from support import check, check_raises, compile_error, expect_compile_error, locate

NAN = float("nan")
FLOATS = [np.zeros(0), np.array([2.5]), np.array([1.0, -3.0, NAN, 4.5, 0.0, 7.25]), np.linspace(-2.0, 3.0, 40)]
SIZES = [0, 1, 2, 7, 100]


# ------------------------------------------------------------------------------------------ displays


@aot.jit
def display_floats(x, y):
    return [x, y, x * y]


@aot.jit
def display_ints(n):
    return [n, n + 1, -n]


@aot.jit
def display_bools(x):
    return [x > 0, x < 0, True]


@aot.jit
def display_tuples(x, n):
    return [(x, n), (x + 1.0, n * 2)]


@aot.jit
def display_nested(x):
    return [[x, x + 1.0], [x * 2.0], []]


@pytest.mark.parametrize("x", [0.0, -1.5, 2.25, NAN, math.inf])
def test_displays_are_returned_as_python_lists(x):
    assert check(display_floats, x, 2.0) is not None
    check(display_bools, x)
    check(display_tuples, x, 3)
    check(display_nested, x)
    check(display_ints, 5)


# ------------------------------------------------------------------------------------- [] and append


@aot.jit
def halves(n):
    out = []
    for i in range(n):
        out.append(i * 0.5)
    return out


@aot.jit
def pairs(n):
    out = []
    for i in range(n):
        out.append((i, i * i))
    return out


@aot.jit
def filtered(a, limit):
    out = []
    for x in a:
        if x < limit:
            out.append(x)
    return out


@aot.jit
def aliased(n):
    a = []
    b = a
    for i in range(n):
        b.append(i)  # (a list is shared by reference)
    a.append(-1)
    return a, b, len(a)


@pytest.mark.parametrize("n", SIZES)
def test_empty_list_takes_its_type_from_append(n):
    check(halves, n)
    check(pairs, n)
    check(aliased, n)


@pytest.mark.parametrize("a", FLOATS, ids=lambda a: f"len{a.size}")
def test_append_with_nan_and_conditions(a):
    check(filtered, a, 2.0)
    check(filtered, a, NAN)


# ------------------------------------------------------------------------------- indexing, len, pop


@aot.jit
def index_both_ways(n, i):
    xs = [k * 1.5 for k in range(n)]
    return xs[i], xs[-1 - i] if n else 0.0, len(xs)


@aot.jit
def assign_item(n, i, v):
    xs = [float(k) for k in range(n)]
    xs[i] = v
    xs[-1] += 1.0
    return xs


@aot.jit
def pop_all(n):
    xs = [k for k in range(n)]
    total = 0
    while xs:
        total = (total * 3 + xs.pop()) % 1000003
    return total, xs


@aot.jit
def pop_at(n, i):
    xs = [k * k for k in range(n)]
    v = xs.pop(i)
    return v, xs


@aot.jit
def pop_empty():
    xs = [1.0]
    xs.pop()
    return xs.pop()


@pytest.mark.parametrize("n", [1, 2, 7])
@pytest.mark.parametrize("i", [0, 1, -1, -2, 6, 7, -8])
def test_indexing_and_assignment_with_python_errors(n, i):
    check(index_both_ways, n, i, messages=True)
    check(assign_item, n, i, 9.5, messages=True)
    check(pop_at, n, i, messages=True)


@pytest.mark.parametrize("n", SIZES)
def test_pop_until_empty(n):
    check(pop_all, n)
    check_raises(index_both_ways, 0, 0, exc=IndexError, messages=True)


def test_pop_from_empty_list_is_an_index_error():
    check_raises(pop_empty, exc=IndexError, messages=True)


# ---------------------------------------------------------------------------------------- iteration


@aot.jit
def iterate(n):
    xs = [k * 0.25 for k in range(n)]
    s = 0.0
    for i, x in enumerate(xs):
        s += i * x
    for x, y in zip(xs, reversed(xs)):
        s += x - y
    return s, sum(xs, 0.0), min(xs) if xs else -1.0, 2.0 in xs, 3.3 not in xs


@aot.jit
def tuples_iterated(n):
    ps = [(k, k * 0.5) for k in range(n)]
    s = 0.0
    for i, x in ps:
        s += i * x
    return s, ps


@pytest.mark.parametrize("n", SIZES)
def test_iteration_enumerate_zip_reversed_in(n):
    check(iterate, n)
    check(tuples_iterated, n)


# ----------------------------------------------------------------------------------- comprehensions


@aot.jit
def squares(a):
    return [x * x for x in a]


@aot.jit
def comp_range(n):
    return [i * 3 for i in range(1, n, 2) if i % 3 != 0]


@aot.jit
def comp_nested(n):
    return [(i, j) for i in range(n) for j in range(i) if (i + j) % 2 == 0]


@aot.jit
def comp_enumerate(a):
    return [i * x for i, x in enumerate(a) if x == x]


@aot.jit
def comp_zip(a, b):
    return [x - y for x, y in zip(a, b)]


@aot.jit
def comp_does_not_leak_its_target(a):
    x = -1.0
    ys = [x + 1.0 for x in a]
    return x, ys


@aot.jit
def comp_of_lists(n):
    return [[j for j in range(i)] for i in range(n)]


@pytest.mark.parametrize("a", FLOATS, ids=lambda a: f"len{a.size}")
def test_comprehensions_over_arrays(a):
    check(squares, a)
    check(comp_enumerate, a)
    check(comp_zip, a, a[::-1].copy())
    check(comp_does_not_leak_its_target, a)


@pytest.mark.parametrize("n", SIZES[:4])
def test_comprehensions_over_ranges(n):
    check(comprehension_target_shadows_a_global, n)
    check(comp_range, n)
    check(comp_nested, n)
    check(comp_of_lists, n)


@aot.jit
def generator_reductions(a):
    return (
        sum((x * x for x in a), 0.0),
        max(abs(x) for x in a) if len(a) else 0.0,
        any(x > 2.0 for x in a),
        all(x == x for x in a),
    )


@pytest.mark.parametrize("a", FLOATS, ids=lambda a: f"len{a.size}")
def test_generator_expressions_in_reductions(a):
    check(generator_reductions, a)


# -------------------------------------------------------------------------------------- np.array(list)


@aot.jit
def as_array(n):
    return np.array([k * 0.5 for k in range(n)])


@aot.jit
def as_int_array(a):
    return np.asarray([int(x) for x in a if x == x])


@aot.jit
def as_matrix(n, m):
    return np.array([[i * m + j for j in range(m)] for i in range(n)])


@aot.jit
def rows_as_matrix(a, n):
    rows = []
    for k in range(n):
        row = a[::-1].copy()
        row[0] = k
        rows.append(row)
    return np.array(rows)


@aot.jit
def ragged(n):
    return np.array([[j for j in range(i)] for i in range(n)])


@pytest.mark.parametrize("n", SIZES)
def test_np_array_of_a_list(n):
    check(as_array, n)
    check(as_matrix, max(n, 1), 3)
    check(rows_as_matrix, np.arange(4.0), max(n, 1))


@pytest.mark.parametrize("a", FLOATS[1:], ids=lambda a: f"len{a.size}")
def test_np_asarray_of_ints(a):
    check(as_int_array, a)


def test_np_array_of_an_empty_list_has_the_item_dtype():  # (documented: NumPy would give float64 for [])
    r = as_int_array(np.array([NAN]))
    assert r.dtype == np.int64 and r.shape == (0,)


def test_ragged_lists_are_a_value_error():
    with pytest.raises(ValueError, match="inhomogeneous"):
        ragged(3)


# -------------------------------------------------------------------------------------- arrays in lists


@aot.jit
def arrays_in_a_list(n):
    rows = []
    for i in range(n):
        rows.append(np.full(3, i * 1.0))
    rows[0] = rows[-1]
    last = rows.pop()
    return rows, last


@aot.jit
def list_between_functions(n):
    xs = halves(n)
    xs.append(99.0)
    return xs, len(halves(n))


@pytest.mark.parametrize("n", [1, 2, 5])
def test_lists_of_arrays_and_lists_from_calls(n):
    check(arrays_in_a_list, n)
    check(list_between_functions, n)


# ------------------------------------------------------------------------------------------- memory


def _live_bytes() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


@aot.jit
def churn(n):
    total = 0.0
    for _ in range(n):
        xs = [k * 1.0 for k in range(100)]
        rows = [np.zeros(10) for _ in range(5)]
        rows.append(np.ones(3))
        ys = [[x] for x in xs]
        xs.sort()
        total += xs.pop() + len(rows) + len(ys) + len(sorted(xs))
    return total


@aot.jit
def fails_holding_lists(n):
    xs = [np.zeros(10) for _ in range(n)]
    return xs[n]  # IndexError: everything held is released


def test_building_lists_in_a_loop_does_not_leak():
    churn(2), display_nested(1.0), arrays_in_a_list(3)
    with pytest.raises(IndexError):
        fails_holding_lists(2)
    tracemalloc.start()
    try:
        start = _live_bytes()
        for _ in range(200):
            churn(5)
            r = arrays_in_a_list(4)
            del r
            display_nested(2.0)
            with pytest.raises(IndexError):
                fails_holding_lists(20)
        grown = _live_bytes() - start
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, f"{grown} bytes still live after 200 rounds"


def test_returned_lists_of_arrays_keep_their_arrays_alive():
    rows, last = arrays_in_a_list(3)
    gc.collect()
    assert [r.tolist() for r in rows] == [[2.0] * 3, [1.0] * 3] and last.tolist() == [2.0] * 3


# ----------------------------------------------------------------------------------------- refusals


@aot.jit
def never_typed(n):
    out = []
    return len(out) + n


@aot.jit
def mixed_items(n):
    return [n, 1.5]


@aot.jit
def int_into_floats(n):
    out = [0.5]
    out.append(n)
    return out


@aot.jit
def list_argument(xs):
    return len(xs)


@pytest.mark.parametrize(
    "f, args, needle, node, words",
    [
        (never_typed, (1,), "[]", ast.List, "never gets an item type"),
        (mixed_items, (1,), "[n, 1.5]", ast.List, "one type"),
        (int_into_floats, (1,), "out.append(n)", ast.Call, "this list holds f64, not i64"),
    ],
    ids=["untyped", "mixed", "int-into-floats"],
)
def test_unsupported_list_forms_are_located_compile_errors(f, args, needle, node, words):
    err = expect_compile_error(f, *args, at=locate(f, needle), node_type=node)
    assert words in str(err)


def test_a_list_argument_is_a_type_error():
    with pytest.raises(TypeError, match="cannot take a list argument"):
        list_argument([1.0, 2.0])


def test_lists_in_prange_and_kernels_are_refused():
    from aot.runtime import runtime
    from aot.runtime.ptx import PtxCompiler

    @aot.jit(parallel=True)
    def in_prange(n):
        xs = [1.0]
        s = 0.0
        for i in aot.prange(n):
            s += xs[0] * i
        return s

    err = compile_error(in_prange, 4)  # (a list made in the iteration is fine: tests/test_parallel_arrays.py)
    assert "lists made before a prange loop are not supported in it" in str(err)

    @aot.kernel
    def k(x: aot.f64[::1]):
        t = [1.0, 2.0]
        x[0] = t[0]

    with pytest.raises(aot.CompileError, match="makes a list, which kernels"):
        PtxCompiler(runtime().table).infer(k.__aot_method__, (aot.f64[::1],))


def test_a_declared_list_parameter_is_refused():
    @aot.jit(signatures=["f64(list[f64])"])
    def first(xs):
        return xs[0]

    with pytest.raises(TypeError, match="cannot take a list argument"):
        first([1.0])
    with pytest.raises(aot.types.SignatureError, match="a list cannot be a parameter"):
        aot.types.parse_signature("f64(i64, (f64, list[f64]))")
    assert str(aot.types.parse_signature("list[list[bottom]](f64)")[0]) == "list[list[bottom]]"


DEBUG = False


@aot.jit
def appended_only_in_dead_code(n):
    out = []
    for i in range(n):
        if DEBUG:
            out.append(i * 1.0)
    ys = [x for x in range(n) if DEBUG]
    return out, len(out), ys, not ys


def test_a_list_appended_to_only_in_dead_code_is_empty():
    check(appended_only_in_dead_code, 3)


def fill(xs, n):
    for i in range(n):
        xs.append(i * 2.0)
    return len(xs)


@aot.jit
def callee_appends(n):
    xs = [0.5]
    k = fill(xs, n)  # (the callee changes the caller's list: it is shared)
    return k, xs, sum(xs, 0.0)


@pytest.mark.parametrize("n", [0, 1, 6])
def test_a_list_passed_to_a_compiled_call_is_shared(n):
    check(callee_appends, n)


@aot.jit
def other_method(n):
    xs = [1.0]
    xs.extend([2.0])
    return xs


@aot.jit
def append_on_an_item(n):
    rows = [[1.0], [2.0]]
    rows[0].append(3.0)
    return rows


def test_other_list_methods_are_compile_errors():
    assert "no method 'extend'" in str(expect_compile_error(other_method, 1, at=locate(other_method, "xs.extend")))
    err = expect_compile_error(append_on_an_item, 1, at=locate(append_on_an_item, "rows[0].append"))
    assert "called on a local variable" in str(err)


@aot.jit
def unpack_list(n):
    xs = [k * 1.5 for k in range(n)]
    a, b = xs
    return a, b


@aot.jit
def unpack_array_and_tuple(a, t):
    x, y, z = a
    p, q = t
    (u, v), w = (p, q), x
    return x + y + z, p, q, u, v, w


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_unpacking_a_list_checks_its_length(n):
    check(unpack_list, n, messages=True)


@pytest.mark.parametrize("a", [np.arange(3.0), np.arange(2.0), np.arange(5.0)], ids=lambda a: f"len{a.size}")
def test_unpacking_an_array_checks_its_length(a):
    check(unpack_array_and_tuple, a, (1, 2.5), messages=True)


@aot.jit
def unpack_tuple_wrongly(t):
    a, b = t
    return a


def test_unpacking_a_tuple_of_another_length_is_a_compile_error():
    err = expect_compile_error(unpack_tuple_wrongly, (1, 2, 3), at=locate(unpack_tuple_wrongly, "a, b"))
    assert "cannot unpack 3 values into 2 names" in str(err)


SCALE = 3.0


@aot.jit
def comprehension_target_shadows_a_global(n):
    ys = [SCALE * 2.0 for SCALE in range(n)]  # (its own SCALE, as in Python 3)
    return ys, SCALE


@aot.jit
def sorts(a, n):
    xs = [x for x in a]
    ys = sorted(xs)
    xs.sort()
    ks = [(k * 7919) % 13 - 6 for k in range(n)]
    ks.sort()
    bs = sorted([k % 3 == 0 for k in range(n)])
    return xs, ys, ks, sorted(ks), bs


SORT_CASES = [
    np.zeros(0),
    np.array([2.5]),
    np.array([3.0, -1.0, 0.0, -0.0, 2.0, 0.0, -0.0, 1e300, -math.inf, 7.0]),
    np.random.default_rng(5).normal(size=200),
    np.repeat(np.array([0.0, -0.0]), 40),  # (stability: equal items keep their order, signs included)
]


@pytest.mark.parametrize("a", SORT_CASES, ids=lambda a: f"len{a.size}")
@pytest.mark.parametrize("n", [0, 1, 13, 100])
def test_sorted_and_sort_match_python(a, n):
    check(sorts, a, n)


def test_sorting_a_list_with_nan_is_a_value_error():
    with pytest.raises(ValueError, match="holding NaN"):
        sorts(np.array([1.0, NAN, 0.0]), 3)


# ------------------------------------------------------------------------------------------ slices


@aot.jit
def list_slices(n, start, stop, step):
    lst = [i * 1.5 for i in range(n)]
    part = lst[start:stop:step]
    part.append(-1.0)  # (a new list: lst is unchanged)
    return part, lst[::-1], lst[1:], lst[:start], len(lst)


@aot.jit
def nested_slice(n):
    rows = [[i, i * i] for i in range(n)]
    tail = rows[1:]
    tail[0][0] = 99 if tail else 0  # (the same inner lists: the change shows in rows too)
    return rows, tail


@aot.jit
def assign_list_slice(n):
    lst = [float(i) for i in range(n)]
    lst[1:3] = [0.0, 0.0]
    return lst


@pytest.mark.parametrize("n", SIZES)
def test_list_slices_are_new_lists(n):
    for start, stop, step in [(0, n, 1), (1, -1, 2), (-100, 100, 3), (n, 0, -1), (-1, -5, -2), (5, 2, 1)]:
        check(list_slices, n, start, stop, step)
    check_raises(list_slices, n, 0, n, 0, exc=ValueError)
    check(nested_slice, n)


def test_assigning_to_a_list_slice_is_a_clean_error():
    at = locate(assign_list_slice, "lst[1:3]")
    err = expect_compile_error(assign_list_slice, 4, at=at, node_type=ast.Subscript)
    assert "slice of a list" in str(err)
