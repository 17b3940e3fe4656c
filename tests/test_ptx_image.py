"""Kernels launched on a CUDA device load their code from the package's ``ptx`` image (``aot.runtime.ptximage``):
the cubin of the device's own arch, else a PTX; validated like CPU entries; strict mode and runtime-only
installs. Without a GPU: a stand-in device (``FakeDevice``) records what would be loaded and launched."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

import serializer
from aot.runtime.cuda import no_device_reason
from linker import find_ptxas
from tests.buildsupport import FIXTURES, aot_build, copy_project, run_python

FAKE = """
import importlib
_cuda = importlib.import_module("aot.runtime.cuda")  # (``aot.runtime`` the name is a function)
import numpy as np

class FakeDevice:
    '''A CUDA device that records what is loaded and launched (no GPU needed).'''
    def __init__(self, arch):
        self.arch, self.loads, self.launches = arch, [], []
    def load(self, code):
        self.loads.append(code.encode() if isinstance(code, str) else bytes(code))
        return len(self.loads)
    def launch(self, module, symbol, grid, block, argtypes, args, written, errors):
        self.launches.append(dict(module=module, symbol=symbol, written=sorted(written), errors=len(errors)))

def use(arch):
    dev = FakeDevice(arch)
    _cuda.device = lambda: dev
    return dev

def saxpy(n=8):
    from gpukit import kernels
    x, y = np.ones(n, np.float32), np.ones(n, np.float32)
    kernels.saxpy[1, n](np.float32(2.0), x, y)

def shade(n=8):
    from gpukit import kernels
    kernels.shade[1, n](np.linspace(0, 1, n), np.zeros(n))

def histogram(n=8):
    from gpukit import kernels
    kernels.histogram[1, n](np.linspace(0, 1, n), 0.0, 1.0, np.zeros(16, np.int32))

def folder():
    import gpukit, os
    return os.path.join(os.path.dirname(gpukit.__file__), "__aot__")

def read(name):
    with open(os.path.join(folder(), name), "rb") as f:
        return f.read()

import os
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    project = copy_project(FIXTURES / "gpukit", tmp_path_factory.mktemp("gpukit") / "gpukit")
    done = aot_build(project)
    assert done.rc == 0, done.stderr
    return project


@pytest.fixture
def project(built: Path, tmp_path: Path) -> Path:
    """A copy of the built project to change."""
    return copy_project(built, tmp_path / "gpukit", images=True)


def probe(project: Path, code: str, env: dict[str, str] | None = None, before: str = ""):
    return run_python(project, before + FAKE + textwrap.dedent(code), env=env)


def ptx_events(run) -> list[tuple[str, str, str]]:
    return [(e["kind"], e["method"], e["cause"]) for e in run["events"] if e["owner"] == "ptx"]


@pytest.mark.skipif(find_ptxas() is None, reason="ptxas is not installed: the build writes no cubin")
def test_a_valid_image_launches_its_cubin_and_compiles_nothing(built: Path) -> None:
    run = probe(
        built,
        """
        dev = use("sm_80")
        saxpy(); saxpy(); shade()
        report(loads=len(dev.loads), cubin=dev.loads[0] == read("gpukit.sm_80.cubin"), launches=dev.launches)
        """,
    )
    assert ptx_events(run) == [("loaded", "gpukit.kernels:saxpy", ""), ("loaded", "gpukit.kernels:shade", "")]
    assert run["loads"] == 1 and run["cubin"]  # the package's one module, loaded once for both kernels
    assert not run["llvmlite"] and run["stats"]["inferred"] == 0
    first, _, third = run["launches"]
    assert first["symbol"].startswith("aot_gpukit_kernels__saxpy_") and first["written"] == [2]
    assert third["symbol"].startswith("aot_gpukit_kernels__shade_") and third["written"] == [1]
    assert first["errors"] > 0  # the module's error codes came with it


def test_a_device_without_its_own_image_loads_a_lower_archs_ptx_never_its_cubin(built: Path) -> None:
    run = probe(
        built,
        """
        dev = use("sm_86")
        saxpy()
        report(ptx=dev.loads == [read("gpukit.sm_80.ptx")])
        """,
    )
    assert ptx_events(run) == [("loaded", "gpukit.kernels:saxpy", "")]
    assert run["ptx"] and not run["llvmlite"]


def test_a_damaged_cubin_falls_back_to_the_ptx_of_the_same_image(project: Path) -> None:
    cubin = project / "gpukit" / "__aot__" / "gpukit.sm_80.cubin"
    if cubin.exists():
        cubin.write_bytes(b"\0" * 64)
    run = probe(project, 'dev = use("sm_80"); saxpy(); report(ptx=dev.loads == [read("gpukit.sm_80.ptx")])')
    assert ptx_events(run) == [("loaded", "gpukit.kernels:saxpy", "")] and run["ptx"]


def test_a_device_older_than_every_image_compiles_with_the_cause(built: Path) -> None:
    run = probe(built, 'dev = use("sm_75"); saxpy(); report(ptx=b".target sm_75" in dev.loads[0])')
    [(kind, method, cause)] = ptx_events(run)
    assert (kind, method) == ("inferred", "gpukit.kernels:saxpy")
    assert cause == "image-incompatible:no ptx image runs on sm_75 (images: sm_80, sm_90)"
    assert run["ptx"]


def change_horner(project: Path) -> None:
    """Edit ``gpukit.devices.horner``, the device function ``shade`` calls (``saxpy`` does not)."""
    devices = project / "gpukit" / "devices.py"
    devices.write_text(devices.read_text().replace("return c0 + x * (c1 + x * c2)", "return c0 + x * (c1 - x * c2)"))


def test_a_changed_callee_makes_exactly_its_kernels_stale(project: Path) -> None:
    change_horner(project)
    run = probe(project, 'dev = use("sm_90"); saxpy(); shade(); report()')
    assert ptx_events(run) == [
        ("loaded", "gpukit.kernels:saxpy", ""),
        ("inferred", "gpukit.kernels:shade", "edge-changed:gpukit.devices:horner"),
    ]


def test_a_changed_constant_makes_its_kernel_stale(built: Path) -> None:
    run = probe(
        built,
        """
        dev = use("sm_80")
        saxpy()
        import gpukit.kernels
        gpukit.kernels.BINS = 8
        histogram(); histogram()
        report(loads=len(dev.loads))
        """,
    )
    assert ptx_events(run) == [
        ("loaded", "gpukit.kernels:saxpy", ""),
        ("inferred", "gpukit.kernels:histogram", "edge-changed:gpukit.kernels:BINS"),
    ]
    assert run["loads"] == 2  # the image's module, then the one compiled for BINS = 8


def test_a_loaded_kernel_keeps_the_constants_it_was_loaded_with_like_compiled_code(built: Path) -> None:
    run = probe(
        built,
        """
        dev = use("sm_80")
        histogram()
        import gpukit.kernels
        gpukit.kernels.BINS = 8
        histogram()
        report(loads=len(dev.loads), launches=len(dev.launches))
        """,
    )
    assert ptx_events(run) == [("loaded", "gpukit.kernels:histogram", "")]
    assert run["loads"] == 1 and run["launches"] == 2


def test_a_method_redefined_in_the_process_makes_a_loaded_kernel_compile_again(project: Path) -> None:
    run = probe(
        project,
        """
        import importlib, sys
        sys.dont_write_bytecode = True
        dev = use("sm_80")
        shade()
        import gpukit.devices
        with open(gpukit.devices.__file__) as f:
            text = f.read()
        with open(gpukit.devices.__file__, "w") as f:
            f.write(text.replace("return c0 + x * (c1 + x * c2)", "return c0 + x * (c1 - 2.0 * x * c2)"))
        importlib.reload(gpukit.devices)
        shade()
        report(loads=len(dev.loads))
        """,
    )
    assert ptx_events(run) == [
        ("loaded", "gpukit.kernels:shade", ""),
        ("inferred", "gpukit.kernels:shade", "edge-changed:gpukit.devices:horner"),
    ]
    assert run["loads"] == 2


def test_a_helper_rebound_after_loading_makes_the_kernel_compile_again(built: Path) -> None:
    run = probe(
        built,
        """
        def steep(edge0, edge1, x):
            return x

        dev = use("sm_80")
        shade(); shade()
        import gpukit.kernels
        gpukit.kernels.smoothstep = steep
        shade(); shade()
        report(loads=len(dev.loads), world=_aot.world())
        """,
    )
    assert ptx_events(run) == [
        ("loaded", "gpukit.kernels:shade", ""),
        ("inferred", "gpukit.kernels:shade", "edge-changed:gpukit.kernels:smoothstep"),
    ]
    assert run["loads"] == 2


def test_a_cubin_the_driver_refuses_gives_way_to_the_ptx(built: Path) -> None:
    run = probe(
        built,
        """
        dev = use("sm_80")
        load = dev.load
        def refuse_cubins(code):
            if bytes(code[:4]) == b"\\x7fELF":
                raise _cuda.CudaError("cuModuleLoadData failed: device kernel image is invalid")
            return load(code)
        dev.load = refuse_cubins
        saxpy()
        report(ptx=dev.loads == [read("gpukit.sm_80.ptx")])
        """,
    )
    assert ptx_events(run) == [("loaded", "gpukit.kernels:saxpy", "")] and run["ptx"]


def _damage(path: Path) -> None:
    data = bytearray(path.read_bytes())
    start, end = serializer.open_image(path).span("kernels")
    data[(start + end) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "spoil, why",
    [
        (_damage, "image-incompatible:damaged: "),
        (lambda p: shutil.copy(p.parent / "gpukit.cpu.aotimg", p), "image-incompatible:owner cpu"),
        (lambda p: shutil.copy(p.parent / "gpukit.ptx-sm_90.aotimg", p), "image-incompatible:arch sm_90 (the file"),
    ],
    ids=["damaged", "cpu-image", "other-arch"],
)
def test_a_damaged_or_foreign_image_is_rejected_with_its_cause(project: Path, spoil, why: str) -> None:
    image = project / "gpukit" / "__aot__" / "gpukit.ptx-sm_80.aotimg"
    spoil(image)
    run = probe(project, 'dev = use("sm_80"); saxpy(); saxpy(); report()')
    [(kind, method, cause)] = ptx_events(run)
    assert (kind, method) == ("inferred", "gpukit.kernels:saxpy") and cause.startswith(why), cause
    assert run.stderr.count("aot: ignoring image") == 1 and str(image) in run.stderr


def test_strict_mode_raises_where_a_kernel_would_compile_and_not_where_it_loads(project: Path) -> None:
    change_horner(project)
    run = probe(
        project,
        """
        dev = use("sm_80")
        saxpy()
        try:
            shade()
            raised = None
        except _aot.StrictModeError as err:
            raised = str(err)
        report(raised=raised, launches=len(dev.launches))
        """,
        env={"AOT_STRICT": "1"},
    )
    assert ptx_events(run) == [("loaded", "gpukit.kernels:saxpy", "")]
    assert run["raised"].startswith("strict mode: gpukit.kernels:shade(f64[::1], f64[::1])")
    assert "edge-changed:gpukit.devices:horner" in run["raised"] and run["launches"] == 1


BLOCK_LLVMLITE = "import sys as _s; _s.modules['llvmlite'] = None; _s.modules['llvmlite.binding'] = None\n"


def test_a_runtime_only_install_launches_valid_kernels_and_says_what_to_install_for_stale_ones(project: Path) -> None:
    change_horner(project)
    run = probe(
        project,
        """
        dev = use("sm_80")
        saxpy()
        try:
            shade()
            raised = None
        except _aot.NoCompilerError as err:
            raised = (type(err).__name__, str(err))
        report(raised=raised, launches=len(dev.launches))
        """,
        before=BLOCK_LLVMLITE,
    )
    assert ptx_events(run) == [("loaded", "gpukit.kernels:saxpy", "")]
    name, message = run["raised"]
    assert name == "NoCompilerError" and 'pip install "aot[compiler]"' in message
    assert "edge-changed:gpukit.devices:horner" in message and run["launches"] == 1


def test_without_a_device_kernels_still_run_on_the_cpu_grid(built: Path) -> None:
    run = probe(
        built,
        """
        _cuda.device = lambda: None
        from gpukit import kernels
        x, y = np.arange(8, dtype=np.float32), np.ones(8, np.float32)
        kernels.saxpy[1, 8](np.float32(2.0), x, y)
        report(y=y.tolist())
        """,
    )
    assert run["y"] == [2.0 * i + 1.0 for i in range(8)]
    assert [e["owner"] for e in run["events"]] == ["cpu"]


NO_DEVICE = no_device_reason()


@pytest.mark.skipif(NO_DEVICE is not None, reason=NO_DEVICE or "")
def test_on_a_real_device_kernels_from_the_image_match_plain_python(built: Path) -> None:
    run = run_python(
        built,
        """
        import numpy as np
        from aot.runtime.cuda import device
        from gpukit import blocks, kernels, reduce

        rng = np.random.default_rng(7)
        x, y = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(np.float32)
        got, want = y.copy(), y.copy()
        kernels.saxpy[blocks(1000, 128), 128](np.float32(2.0), x, got)
        kernels.saxpy.emulate[blocks(1000, 128), 128](np.float32(2.0), x, want)
        u = np.linspace(0, 1, 500)
        shaded, expected = np.zeros(500), np.zeros(500)
        kernels.shade[blocks(500, 128), 128](u, shaded)
        kernels.shade.emulate[blocks(500, 128), 128](u, expected)
        z = rng.standard_normal(1000)
        total = np.zeros(1)
        reduce.block_sum[blocks(1000, reduce.THREADS), reduce.THREADS](z, total)
        report(arch=device().arch, saxpy=bool(np.allclose(got, want, rtol=1e-5)),
               shade=bool(np.allclose(shaded, expected)), total=float(total[0]), sum=float(z.sum()))
        """,
    )
    assert run["saxpy"] and run["shade"] and run["total"] == pytest.approx(run["sum"])
    kinds = {e["kind"] for e in run["events"] if e["owner"] == "ptx"}
    served = int(run["arch"][3:].rstrip("af")) >= 80  # the images are for sm_80 and sm_90
    assert kinds == ({"loaded"} if served else {"inferred"}), run["events"]
