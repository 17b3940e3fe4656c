"""The PTX target: gpukit's kernels compiled for sm_80 and sm_90, checked by ptxas and against plain Python.

    compile_ptx(GPUKIT, "sm_80").ptx  ->  ".visible .entry aot_gpukit_kernels__saxpy_…"   (ptxas accepts it)
    saxpy[8, 128](2.0, x, y)           ==  saxpy.emulate[8, 128](2.0, x, y)                (CPU grid, no GPU)
    block_sum[8, 128](x, total)        ->  NoDeviceError: … needs a CUDA device …

Every test that needs ptxas or a CUDA device is skipped, with the reason, where they are missing.
gpukit is imported from a private copy, so an image someone built into fixtures/ is never picked up.
"""

from __future__ import annotations

import atexit
import importlib
import linecache
import re
import shutil
import sys
import tempfile
import textwrap
import uuid
from pathlib import Path

import numpy as np
import pytest

import aot
from aot import gpu
from aot.codegen.types import symbol_name
from aot.infer import Edge
from aot.ir import parse_function, print_function, verify
from aot.ir.ops import Intrinsic
from aot.runtime import runtime
from aot.runtime.cuda import no_device_reason
from aot.runtime.ptx import PtxCompiler, compile_ptx
from aot.targets import PtxTarget
from aot.types import F32, F64, I64
from linker import LinkerError, find_libdevice, find_ptxas, ptxas_resource_usage

ROOT = Path(__file__).resolve().parents[1]
_COPY = Path(tempfile.mkdtemp(prefix="aot-gpukit-"))
atexit.register(shutil.rmtree, _COPY, True)
shutil.copytree(ROOT / "fixtures" / "gpukit", _COPY / "gpukit", ignore=shutil.ignore_patterns("__aot__", "__pycache__"))
sys.path.insert(0, str(_COPY / "gpukit"))

from gpukit import blocks, kernels, reduce  # noqa: E402

ARCHS = ["sm_80", "sm_90"]
GPUKIT = [
    kernels.saxpy,
    kernels.jacobi2d,
    kernels.histogram,
    kernels.shade,
    kernels.waves,
    kernels.intmix,
    kernels.matmul,
    kernels.scale_strided,
    reduce.block_sum,
    reduce.transpose,
]
NO_PTXAS = "ptxas not found (install the CUDA toolkit or put its bin folder on PATH)"
NO_LIBDEVICE = "libdevice.10.bc not found (CUDA toolkit's nvvm/libdevice)"
NO_DEVICE = no_device_reason()
needs_libdevice = pytest.mark.skipif(find_libdevice() is None, reason=NO_LIBDEVICE)
needs_ptxas = pytest.mark.skipif(find_ptxas() is None, reason=NO_PTXAS)


@pytest.fixture(scope="module")
def compiler():
    return PtxCompiler(runtime().table)


@pytest.fixture(scope="module", params=ARCHS)
def program(request, compiler):
    if find_libdevice() is None:
        pytest.skip(NO_LIBDEVICE)
    return compile_ptx(GPUKIT, request.param, compiler=compiler)


@pytest.fixture(scope="module")
def usage(program):
    if find_ptxas() is None:
        pytest.skip(NO_PTXAS)
    return ptxas_resource_usage(program.ptx, program.arch)


def entry_symbol(k) -> str:
    return symbol_name(k.key, k.signatures()[0], "ptx")


# ------------------------------------------------------------------------------------------ the target


def test_target_names_libdevice_and_its_layout_is_llvms():
    t = PtxTarget(arch="sm_90")
    assert (t.owner, t.triple, t.cpu, t.raises_python_exceptions) == ("ptx", "nvptx64-nvidia-cuda", "sm_90", False)
    assert str(t.target_machine().target_data) == t.data_layout
    assert t.math_symbol(Intrinsic.SIN, F64) == "__nv_sin"
    assert t.math_symbol(Intrinsic.SIN, F32) == "__nv_sinf"
    assert t.overlay(Intrinsic.SQRT, F32) == "__nv_sqrtf"
    assert t.overlay(Intrinsic.FLOOR, F64) is None  # one instruction, no library call
    assert t.overlay(Intrinsic.HYPOT, F64) is None  # aot's own correctly rounded hypot
    assert t.llvm_intrinsic_symbol("llvm.pow", 32) == "__nv_powf"
    assert t.llvm_intrinsic_symbol("frem", 64) == "__nv_fmod"
    assert t.overlay_holds("math.exp(f64)", "__nv_exp") and not t.overlay_holds("math.exp(f32)", "__nv_exp")
    assert PtxTarget(arch="sm_80").cache_key() != t.cache_key()
    with pytest.raises(ValueError, match="sm_80"):
        PtxTarget(arch="compute_80")


# ------------------------------------------------------------------------------------------ PTX


@needs_ptxas
def test_ptxas_accepts_every_gpukit_kernel(program, usage):
    entries = {name for name, u in usage.items() if u["entry"]}
    assert entries == {entry_symbol(k) for k in GPUKIT}
    assert f".target {program.arch}" in program.ptx


def test_kernels_are_entries_and_device_functions_are_funcs_or_inlined(program, compiler):
    ptx = program.ptx
    entries = re.findall(r"^\.visible \.entry (\w+)\(", ptx, re.M)
    assert sorted(entries) == sorted(entry_symbol(k) for k in GPUKIT)
    assert ".extern" not in ptx
    assert re.search(r"^\.visible \.global .*\baot_status;", ptx, re.M)
    # every device function of gpukit, and every kernel's body, is a .func or was inlined away
    kernel_keys = {k.key for k in GPUKIT}
    bodies = {
        symbol_name(key, args, "ptx") + ("_body" if key in kernel_keys else "")
        for key, args in compiler.inferencer.done
    }
    assert any(key.startswith("gpukit.devices:") for key, _ in compiler.inferencer.done)
    for name in bodies:
        mentions = [line for line in ptx.splitlines() if re.search(rf"\b{re.escape(name)}\b", line)]
        assert not any(".entry" in line for line in mentions), name
        assert not mentions or any(".func" in line for line in mentions), name


def test_math_goes_to_libdevice(program):
    llvm_ir = program.llvm_ir
    for name in (
        "__nv_sinf",
        "__nv_cosf",
        "__nv_sqrtf",
        "__nv_expf",
        "__nv_sin",
        "__nv_atan2",
        "__nv_log1p",
        "__nv_tanh",
        "__nv_exp",
    ):
        assert re.search(rf'call (float|double) @"?{name}"?\(', llvm_ir), name
    assert not re.search(r'@"?(sin|sinf|cos|exp|pow|fmod)"?\(', llvm_ir)
    ptx = program.ptx
    assert "__nvvm_reflect" not in ptx and ".extern" not in ptx
    assert "__cudart_sin_cos_coeffs" in ptx  # libdevice's own tables came along


def test_only_used_libdevice_functions_are_kept(program):
    funcs = set(re.findall(r"^(?:\.visible )?\.func\s+(?:\([^)]*\)\s*)?(\w+)", program.ptx, re.M))
    assert 0 < len(funcs) < 10, funcs  # libdevice has about 575 functions; the rest were inlined or dropped
    assert not {"__nv_lgamma", "__nv_erfcinv", "__nv_j0", "__nv_powf"} & funcs


@needs_ptxas
def test_saxpy_and_the_stencil_do_not_spill(usage):
    for k in (kernels.saxpy, kernels.jacobi2d):
        u = usage[entry_symbol(k)]
        assert (u["spills"], u["stack_frame"]) == (0, 0), (k.key, u)
        assert u["registers"] <= 32, (k.key, u)
    assert all(u["spills"] == 0 for u in usage.values())
    for k in (reduce.block_sum, reduce.transpose):
        u = usage[entry_symbol(k)]
        assert u["barriers"] == 1 and u["shared"] > 0, (k.key, u)


@needs_libdevice
def test_ptx_is_reproducible_and_holds_nothing_of_the_build(program, compiler):
    again = compile_ptx(GPUKIT, program.arch, compiler=PtxCompiler(runtime().table))
    assert again.ptx == program.ptx
    for leak in (str(ROOT), str(_COPY), "/tmp", "ModuleID", "site-packages"):
        assert leak not in program.ptx
    assert not re.search(r"0x[0-9a-f]{8,}", program.ptx)


def test_error_table_names_python_exceptions(program):
    assert ("IndexError", "index out of range") in program.errors
    assert re.search(r"atom\.\S*cas\.b32\s+%r\d+, \[aot_status\]", program.ptx)


def test_compile_time_of_gpukit_is_small(program):
    assert program.seconds < 10.0


# ------------------------------------------------------------------------------------------ CPU grid


def _case(name):
    rng = np.random.default_rng(7)
    if name == "saxpy":
        x = rng.standard_normal(1000).astype(np.float32)
        return kernels.saxpy, (blocks(1000, 128), 128), [2.5, x, rng.standard_normal(1000).astype(np.float32)]
    if name == "jacobi2d":
        u = rng.standard_normal((37, 21))
        return kernels.jacobi2d, ((3, 2), (16, 16)), [u, np.zeros_like(u)]
    if name == "histogram":
        x = rng.uniform(-1.5, 1.5, 1400)[::2]  # a strided view: f64[:]
        return kernels.histogram, (6, 128), [x, -1.0, 1.0, np.zeros(kernels.BINS, np.int32)]
    if name == "shade":
        x = rng.uniform(-4, 4, 300)
        return kernels.shade, (3, 128), [x, np.zeros(300)]
    if name == "waves":
        xs, xd = rng.uniform(-3, 3, 250).astype(np.float32), rng.uniform(-3, 3, 333)
        return kernels.waves, (3, 128), [xs, xd, np.zeros(250, np.float32), np.zeros(333)]
    if name == "intmix":
        a, b = rng.integers(-(10**6), 10**6, 200), rng.integers(-40, 40, 200)
        return kernels.intmix, (2, 128), [a, b, np.zeros((200, 4), np.int64)]
    if name == "matmul":
        a = rng.integers(-4, 5, (20, 7)).astype(np.float32)
        b = rng.integers(-4, 5, (7, 13)).astype(np.float32)
        return kernels.matmul, ((2, 1), (16, 16)), [a, b, np.zeros((20, 13), np.float32)]
    if name == "scale_strided":
        return kernels.scale_strided, (3, 64), [np.arange(1000.0), 1.5]
    raise AssertionError(name)


BARRIER_FREE = ["saxpy", "jacobi2d", "histogram", "shade", "waves", "intmix", "matmul", "scale_strided"]


@pytest.mark.skipif(NO_DEVICE is None, reason="a CUDA device is present: launches go to it")
@pytest.mark.parametrize("name", BARRIER_FREE)
def test_cpu_grid_equals_plain_python_over_the_grid(name):
    k, (grid, block), args = _case(name)
    compiled = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    k[grid, block](*compiled)
    k.emulate[grid, block](*args)
    for c, p in zip(compiled, args):
        if isinstance(c, np.ndarray) and c.dtype == np.float32 and name == "waves":
            np.testing.assert_allclose(c, p, rtol=2e-6, atol=2e-6)  # sinf & co. against math.sin rounded
        elif isinstance(c, np.ndarray):
            np.testing.assert_array_equal(c, p)
    if name == "matmul":
        np.testing.assert_array_equal(compiled[2], args[0] @ args[1])
    if name == "histogram":
        assert compiled[3].sum() == np.count_nonzero((args[0] >= -1.0) & (args[0] < 1.0))


def test_emulation_runs_barrier_kernels_with_threads():
    x = np.random.default_rng(3).standard_normal(300)
    total = np.zeros(1)
    reduce.block_sum.emulate[blocks(300, reduce.THREADS), reduce.THREADS](x, total)
    assert total[0] == pytest.approx(x.sum(), rel=1e-12)
    a = np.arange(40 * 24, dtype=np.float32).reshape(40, 24)
    out = np.zeros((24, 40), np.float32)
    reduce.transpose.emulate[(2, 3), (reduce.TILE, reduce.TILE)](a, out)
    np.testing.assert_array_equal(out, a.T)


@pytest.mark.skipif(NO_DEVICE is None, reason="a CUDA device is present: barriers run on it")
@pytest.mark.parametrize("k,what", [(reduce.block_sum, "shared_array()"), (reduce.transpose, "shared_array()")])
def test_barrier_kernels_need_a_device(k, what):
    args = (np.zeros(256), np.zeros(1)) if k is reduce.block_sum else (np.zeros((16, 16), np.float32),) * 2
    with pytest.raises(aot.NoDeviceError) as err:
        k[2, (128 if k is reduce.block_sum else (16, 16))](*args)
    message = str(err.value)
    assert re.match(rf"{re.escape(str(Path(reduce.__file__)))}:\d+:\d+: ", message)
    assert f"aot.gpu.{what}" in message and "needs a CUDA device" in message and ".emulate[" in message


# ------------------------------------------------------------------------------------------ intrinsics


@aot.kernel(signatures=["none(i64[::1])"])
def _out_of_range(out):
    i = gpu.global_id()
    out[i] = i  # no guard: the grid is larger than the array


@aot.jit
def _thread_index_outside() -> int:
    return gpu.thread_id()


@aot.kernel
def _ids(out: aot.i64[:, ::1]):
    i = gpu.global_id(0) + gpu.global_id(1) * gpu.grid_dim(0) * gpu.block_dim(0)
    out[i, 0] = gpu.thread_id(0)
    out[i, 1] = gpu.thread_id(1)
    out[i, 2] = gpu.block_id(0)
    out[i, 3] = gpu.block_id(1)
    out[i, 4] = gpu.block_dim(1)
    out[i, 5] = gpu.grid_dim(1)
    out[i, 6] = gpu.atomic_add(out, (0, 7), 1)


@aot.kernel
def _pure_jit(x, k):
    i = gpu.global_id()
    if i < len(x):
        x[i] = x[i] * k + i


@pytest.mark.skipif(NO_DEVICE is None, reason="a CUDA device is present")
def test_a_kernel_without_signatures_compiles_for_what_it_is_launched_with():
    x, y = np.arange(10.0), np.arange(10.0)
    _pure_jit[2, 8](x, 3)
    _pure_jit.emulate[2, 8](y, 3)
    np.testing.assert_array_equal(x, y)
    assert _pure_jit.signatures() == [(F64[::1], I64)]
    ints = np.arange(10)
    _pure_jit[1, 16](ints, 2)
    assert ints.tolist() == [3 * i for i in range(10)]
    assert len(_pure_jit.signatures()) == 2


def test_find_kernels_lists_a_packages_kernels():
    from aot.runtime.kernel import find_kernels

    assert find_kernels([kernels, reduce]) == sorted(GPUKIT, key=lambda k: k.key)


def test_gpu_functions_outside_a_launch_raise():
    with pytest.raises(RuntimeError, match="inside a kernel launch"):
        gpu.thread_id()
    with pytest.raises(RuntimeError, match="inside a kernel launch"):
        _thread_index_outside()
    with pytest.raises(TypeError, match=r"launch it with _out_of_range\[grid, block\]"):
        _out_of_range(np.zeros(4, np.int64))


@pytest.mark.skipif(NO_DEVICE is None, reason="a CUDA device is present")
def test_ids_of_every_thread_match_plain_python():
    grid, block = (3, 2), (4, 2)
    compiled, emulated = np.zeros((48, 8), np.int64), np.zeros((48, 8), np.int64)
    _ids[grid, block](compiled)
    _ids.emulate[grid, block](emulated)
    np.testing.assert_array_equal(compiled[:, :6], emulated[:, :6])
    assert sorted(compiled[:, 6]) == sorted(emulated[:, 6]) and compiled[0, 7] == 48


@pytest.mark.skipif(NO_DEVICE is None, reason="a CUDA device is present")
def test_an_error_in_a_thread_stops_the_cpu_grid_with_its_exception():
    out = np.zeros(100, np.int64)
    with pytest.raises(IndexError, match="index out of range"):
        _out_of_range[2, 64](out)
    assert out[:100].tolist() == list(range(100))  # threads before the failing one ran


def _compile_error(src: str, *argtypes) -> aot.CompileError:
    name = f"aot_ptx_bad_{uuid.uuid4().hex[:8]}"
    folder = Path(tempfile.mkdtemp(prefix="aot-ptx-"))
    (folder / f"{name}.py").write_text("import aot\nfrom aot import gpu\nN = 4\n\n" + textwrap.dedent(src))
    sys.path.insert(0, str(folder))
    try:
        module = importlib.import_module(name)
        with pytest.raises(aot.CompileError) as err:
            module.k.inspect_ir(*argtypes)
        return err.value
    finally:
        sys.path.remove(str(folder))


@pytest.mark.parametrize(
    "src,message,line",
    [
        (
            "@aot.kernel\ndef k(x: aot.f64[::1]):\n    s = gpu.shared_array(len(x), aot.f64)\n",
            "needs a constant shape",
            7,
        ),
        ("@aot.kernel\ndef k(x: aot.f64[::1]):\n    s = gpu.shared_array((N, 100000), aot.f64)\n", "bytes exceed", 7),
        ("@aot.kernel\ndef k(x: aot.f64[::1]):\n    s = gpu.shared_array(N, x)\n", "dtype must be", 7),
        ("@aot.kernel\ndef k(x: aot.f64[::1]):\n    x[0] = gpu.thread_id(3)\n", "axis must be a constant 0, 1 or 2", 7),
        ("@aot.kernel\ndef k(x: aot.f64[::1], a: int):\n    x[0] = gpu.block_id(a)\n", "axis must be a constant", 7),
        ("@aot.kernel\ndef k(x: aot.i64[::1]):\n    gpu.atomic_add(x, 0, 1.5)\n", "would truncate", 7),
        ("@aot.kernel\ndef k(x: aot.f64[::1]):\n    return x[0]\n", "a kernel returns no value", 7),
        (
            "@aot.kernel\ndef j(x: aot.f64[::1]):\n    pass\n\n@aot.kernel\ndef k(x: aot.f64[::1]):\n    j(x)\n",
            "is a kernel",
            11,
        ),
    ],
)
def test_gpu_misuse_is_a_located_compile_error(src, message, line):
    err = _compile_error(src)
    assert message in str(err)
    assert re.search(rf"aot_ptx_bad_\w+\.py:{line}:\d+: error: ", str(err)), str(err)


def test_constant_shapes_may_be_arithmetic_on_module_constants():
    ir = reduce.transpose.inspect_ir()
    assert "intrinsic gpu.shared_array" in ir
    assert "f32[:, ::1] = intrinsic gpu.shared_array" in ir


def test_typed_ir_of_kernels_verifies_and_round_trips(compiler):
    compiler.infer(kernels.shade.__aot_method__, kernels.shade.signatures()[0])
    compiler.infer(reduce.transpose.__aot_method__, reduce.transpose.signatures()[0])
    for inst in list(compiler.inferencer.done.values()):
        verify(inst.function)
        text = print_function(inst.function)
        assert print_function(parse_function(text)) == text


@needs_libdevice
def test_inspect_ptx_and_llvm():
    ptx = kernels.saxpy.inspect_ptx(arch="sm_90")
    assert ".target sm_90" in ptx and f".entry {entry_symbol(kernels.saxpy)}(" in ptx
    llvm_ir = kernels.saxpy.inspect_llvm()
    assert "ptx_kernel" in llvm_ir and "addrspace(1)" in llvm_ir


def test_missing_libdevice_is_a_clear_linker_error(monkeypatch, compiler):
    monkeypatch.setenv("AOT_LIBDEVICE", "/nonexistent/libdevice.10.bc")
    with pytest.raises(LinkerError, match="libdevice"):
        compile_ptx([kernels.waves], "sm_80", compiler=compiler)


# ------------------------------------------------------------------------------------------ owners and edges


def test_ptx_instances_have_their_own_edges(compiler):
    shade = compiler.infer(kernels.shade.__aot_method__, kernels.shade.signatures()[0])
    calls = {e.target for e in shade.edges if e.kind == "call"}
    assert calls == {
        "gpukit.devices:clamp",
        "gpukit.devices:horner",
        "gpukit.devices:smoothstep",
        "gpukit.devices:gauss",
    }
    waves = compiler.infer(kernels.waves.__aot_method__, kernels.waves.signatures()[0])
    overlays = {(e.target, e.value) for e in waves.edges if e.kind == "overlay"}
    assert ("math.sin(f32)", "__nv_sinf") in overlays and ("math.sin(f64)", "__nv_sin") in overlays
    assert ("math.hypot(f64)", "__nv_hypot") not in overlays
    cpu = runtime().compiler.infer(kernels.waves.__aot_method__, kernels.waves.signatures()[0])
    assert cpu is not waves and not any(e.kind == "overlay" for e in cpu.edges)
    assert Edge("lookup", "aot.gpu:global_id", "aot.gpu:global_id") in waves.edges


EDIT_DEVICE = """
def twice(x):
    return {factor} * x


def plus_one(x):
    return twice(x) + 1.0
"""
EDIT_KERNELS = """
import aot
from aot import gpu

import {dev} as dev


@aot.kernel
def uses_twice(x: aot.f64[::1]):
    i = gpu.global_id()
    if i < len(x):
        x[i] = dev.twice(x[i])


@aot.kernel
def uses_plus_one(x: aot.f64[::1]):
    i = gpu.global_id()
    if i < len(x):
        x[i] = dev.plus_one(x[i])


@aot.kernel
def independent(x: aot.f64[::1]):
    i = gpu.global_id()
    if i < len(x):
        x[i] = x[i] - 1.0
"""


def _edit_package():
    """A module of device functions and a module of kernels calling two of them (fresh names each time)."""
    name = f"aot_ptx_edit_{uuid.uuid4().hex[:8]}"
    folder = Path(tempfile.mkdtemp(prefix="aot-ptx-"))
    (folder / f"{name}_dev.py").write_text(EDIT_DEVICE.format(factor="2.0"))
    (folder / f"{name}_k.py").write_text(EDIT_KERNELS.format(dev=f"{name}_dev"))
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module(f"{name}_dev"), importlib.import_module(f"{name}_k")
    finally:
        sys.path.remove(str(folder))


def _edit_twice(dev):
    """Edit the device function ``twice`` as a user would: change the file, reload the module."""
    Path(dev.__file__).write_text(EDIT_DEVICE.format(factor="3.0"))
    linecache.checkcache(dev.__file__)
    importlib.invalidate_caches()
    folder = str(Path(dev.__file__).parent)
    sys.path.insert(0, folder)
    try:
        importlib.reload(dev)
    finally:
        sys.path.remove(folder)


def test_editing_a_device_function_invalidates_exactly_its_ptx_callers():
    dev, ks = _edit_package()
    compiler = PtxCompiler(runtime().table)
    sig = (F64[::1],)
    for k in (ks.uses_twice, ks.uses_plus_one, ks.independent):
        compiler.infer(k.__aot_method__, sig)
    d, m = dev.__name__, ks.__name__
    callers = {(f"{d}:twice", (F64,)), (f"{d}:plus_one", (F64,)), (f"{m}:uses_twice", sig), (f"{m}:uses_plus_one", sig)}
    assert compiler.inferencer.dependents(f"{d}:twice") == callers
    assert compiler.inferencer.done[(f"{m}:uses_twice", sig)].callees == ((f"{d}:twice", (F64,)),)
    _edit_twice(dev)
    stale = compiler.refresh()
    assert set(stale) == callers
    assert (f"{m}:independent", sig) in compiler.inferencer.done
    again = compiler.infer(ks.uses_twice.__aot_method__, sig)
    twice = compiler.inferencer.done[(f"{d}:twice", (F64,))]
    assert twice.method.py_func is dev.twice and again.callees == ((f"{d}:twice", (F64,)),)


@pytest.mark.skipif(NO_DEVICE is None, reason="a CUDA device is present")
def test_editing_a_device_function_recompiles_exactly_its_callers_on_the_cpu_grid():
    dev, ks = _edit_package()
    d, m = dev.__name__, ks.__name__
    kernels_ = (ks.uses_twice, ks.uses_plus_one, ks.independent)
    for k in kernels_:
        k[1, 4](np.ones(4))
    before = len(aot.events())
    _edit_twice(dev)
    results = []
    for k in kernels_:
        x = np.ones(4)
        k[1, 4](x)
        results.append(float(x[0]))
    assert results == [3.0, 4.0, 0.0]
    new = {(e.method, e.cause, e.owner) for e in aot.events()[before:] if e.kind == "inferred"}
    assert new == {
        (f"{m}:uses_twice", f"edge-changed:{d}:twice", "cpu"),
        (f"{m}:uses_plus_one", f"edge-changed:{d}:plus_one", "cpu"),
    }


# ------------------------------------------------------------------------------------------ a real device


@pytest.mark.skipif(NO_DEVICE is not None, reason=NO_DEVICE or "")
def test_launch_on_the_device_matches_plain_python():
    for name in BARRIER_FREE:
        k, (grid, block), args = _case(name)
        compiled = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        k[grid, block](*compiled)
        k.emulate[grid, block](*args)
        for c, p in zip(compiled, args):
            if isinstance(c, np.ndarray):
                np.testing.assert_allclose(c, p, rtol=1e-5, atol=1e-6)
    x = np.random.default_rng(3).standard_normal(1000)
    total = np.zeros(1)
    reduce.block_sum[blocks(1000, reduce.THREADS), reduce.THREADS](x, total)
    assert total[0] == pytest.approx(x.sum())
    with pytest.raises(IndexError):
        _out_of_range[2, 64](np.zeros(100, np.int64))


def test_arrays_written_by_atomics_need_writable_buffers(compiler):
    from aot.codegen.module import written_params

    inst = compiler.infer(kernels.histogram.__aot_method__, kernels.histogram.signatures()[0])
    assert written_params(inst, compiler.inferencer.done.__getitem__) == frozenset({3})


@pytest.mark.skipif(NO_DEVICE is None, reason="a CUDA device is present")
def test_a_read_only_array_the_kernel_writes_is_refused():
    y = np.zeros(8, np.float32)
    y.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        kernels.saxpy[1, 8](1.0, np.ones(8, np.float32), y)
