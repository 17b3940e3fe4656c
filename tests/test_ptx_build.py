"""``aot build`` of the gpukit fixture for the ``ptx`` owner: per-arch images, PTX and cubins, entries that
round-trip, ``aot inspect --ptx``, and ``aot verify`` after editing a device function."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import serializer
from aot.image.contents import ImageContents
from aot.ir import parse_function, print_function
from linker import find_ptxas
from serializer.irformat import decode_function

ROOT = Path(__file__).resolve().parents[1]
AOT = [sys.executable, "-c", "import cli; cli.main()"]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        AOT + list(args),
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    project = tmp_path_factory.mktemp("gpukit") / "gpukit"
    shutil.copytree(ROOT / "fixtures" / "gpukit", project, ignore=shutil.ignore_patterns("__aot__", "__pycache__"))
    result = run("build", str(project), cwd=project)
    assert result.returncode == 0, result.stderr
    return project


def test_ptx_images_per_arch_with_ptx_and_cubin(built: Path) -> None:
    folder = built / "gpukit" / "__aot__"
    for arch in ("sm_80", "sm_90"):
        image = serializer.read_image(folder / f"gpukit.ptx-{arch}.aotimg")
        assert image.header["owner"] == "ptx"
        assert image.header["target"] == {"triple": "nvptx64-nvidia-cuda", "cpu": arch, "features": ""}
        ptx = (folder / image.header["native"]["file"]).read_text()
        assert f".target {arch}" in ptx and ".entry" in ptx
        if find_ptxas() is not None:
            assert (folder / image.header["cubin"]["file"]).stat().st_size > 0


def test_ptx_entries_round_trip_and_keep_owners_apart(built: Path) -> None:
    folder = built / "gpukit" / "__aot__"
    ptx = ImageContents.from_tables(serializer.read_image(folder / "gpukit.ptx-sm_80.aotimg").tables)
    cpu = ImageContents.from_tables(serializer.read_image(folder / "gpukit.cpu.aotimg").tables)
    assert {e.owner for e in ptx.code.values()} == {"ptx"}
    assert {e.owner for e in cpu.code.values()} == {"cpu"}
    kernels = {e.method for e in ptx.code.values() if e.rettype == "none"}
    assert {"gpukit.kernels:saxpy", "gpukit.kernels:shade", "gpukit.reduce:block_sum"} <= kernels
    for entry in ptx.code.values():
        fn = decode_function(entry.ir, str(built))
        assert print_function(parse_function(print_function(fn))) == print_function(fn)
    waves = next(e for e in ptx.code.values() if e.method == "gpukit.kernels:waves")
    overlays = {(t, v) for kind, t, v in waves.edges if kind == "overlay"}
    assert ("math.sin(f32)", "__nv_sinf") in overlays and ("math.sin(f64)", "__nv_sin") in overlays


def test_inspect_ptx_prints_the_kernel_entry(built: Path) -> None:
    result = run("inspect", str(built), "--ptx", "gpukit.kernels:saxpy", cwd=built)
    assert result.returncode == 0, result.stderr
    assert ".entry aot_gpukit_kernels__saxpy_" in result.stdout


def test_editing_a_device_function_invalidates_exactly_its_kernels(built: Path, tmp_path: Path) -> None:
    project = tmp_path / "gpukit"
    shutil.copytree(built, project)
    devices = project / "gpukit" / "devices.py"
    devices.write_text(devices.read_text().replace("return c0 + x * (c1 + x * c2)", "return c0 + x * (c1 - x * c2)"))
    result = run("verify", str(project), cwd=project)
    assert result.returncode == 1
    stale = {line.split()[1].split("(")[0] for line in result.stdout.splitlines() if line.strip().startswith("stale")}
    assert stale == {"gpukit.devices:horner", "gpukit.kernels:shade"}, result.stdout
