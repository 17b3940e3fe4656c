"""Functions outside the compiled subset, whose diagnostics are kept as a golden file (test_diagnostics)."""
import aot


class Point:
    x = 1.0


@aot.jit
def uses_a_list(n):
    xs = [n, n + 0.5]
    return xs


@aot.jit
def three_problems(x):
    try:
        y = x + 1
    except ValueError:
        y = 0
    s = f"{x}"
    return lambda z: z


@aot.jit
def conflicting_types(flag):
    v = 1
    if flag:
        v = (1, 2)
    return v


@aot.jit
def reads_an_object(x):
    return x + Point.x


def helper_with_yield(n):
    yield n


@aot.jit
def calls_a_bad_helper(n):
    return helper_with_yield(n)


@aot.jit
def unknown_name(x):
    return x + undefined_thing  # noqa: F821
