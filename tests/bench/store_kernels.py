"""Store loops for ``test_stores_bench.py``: 1e6 element stores, narrowing (i64 values into an i32 array: each
store checks the value fits) and not (i64 into i64, f64 into f64: no check)."""

import aot


@aot.jit
def narrowing(out, n):  # out: i32[:]
    for i in range(n):
        out[i] = i * 3 - n


@aot.jit
def same_width(out, n):  # out: i64[:]
    for i in range(n):
        out[i] = i * 3 - n


@aot.jit
def same_float(out, n):  # out: f64[:]
    for i in range(n):
        out[i] = i * 0.5
