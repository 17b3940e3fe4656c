"""Packaging: ``aot.build_meta`` wheels carry the images, a runtime-only install runs them, uninstall is clean.

Everything runs offline: wheels are built with ``pip wheel --no-build-isolation --no-deps`` (this checkout's
``aot`` first on ``PYTHONPATH``), installed with ``pip install --no-index --no-deps``. "Without the compiler"
means ``sys.modules["llvmlite"] = None`` in the child: any import of llvmlite fails there.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from textwrap import dedent

import pytest

import aot
import serializer
from aot.builder.config import ConfigError, load_config
from aot.builder.wheel import build_platform, expand_tag, interpreter_tag, pin_runtime, strip_native
from aot.image.contents import ImageContents
from buildsupport import FIXTURES, REPO, base_env, copy_project, run_python

_SETUPTOOLS = tuple(int(p) for p in __import__("setuptools").__version__.split(".")[:2])
# The tests that build wheels (pip wheel, without network or build isolation) need them buildable here.
builds_wheels = pytest.mark.skipif(
    _SETUPTOOLS < (70, 1) and importlib.util.find_spec("wheel") is None,
    reason="setuptools < 70.1 needs the `wheel` package to build wheels (pip install -e '.[test]' installs it)",
)

NO_COMPILER = "import sys\nsys.modules['llvmlite'] = None  # no compiler in this interpreter\n"
_PLATFORM = build_platform()
# numkit's library needs no glibc symbol newer than 2.17 (no threads): on Linux its wheel is manylinux2014.
_LINUX_TAGS = "manylinux_2_17_{0}.manylinux2014_{0}".format(_PLATFORM[len("linux_") :])
TAG = f"{interpreter_tag()}-{_LINUX_TAGS if _PLATFORM.startswith('linux_') else _PLATFORM}"
PYPROJECT_BACKEND = 'build-backend = "aot.build_meta"'


def _pip(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = base_env({"PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"})
    return subprocess.run(
        [sys.executable, "-m", "pip", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=600
    )


def _project(dst: Path, backend: str | None = None, manifest: str | None = None) -> Path:
    """A copy of numkit whose build backend is ``aot.build_meta`` (inner: ``backend``, when given)."""
    project = copy_project(FIXTURES / "numkit", dst)
    text = (project / "pyproject.toml").read_text()
    assert PYPROJECT_BACKEND in text  # (numkit is built with aot.build_meta)
    if backend is not None:
        text = text.replace("[tool.aot]\n", f'[tool.aot]\nbackend = "{backend}"\n')
    (project / "pyproject.toml").write_text(text)
    if manifest is not None:
        (project / "MANIFEST.in").write_text(manifest)
    return project


def _wheel(project: Path, out: Path) -> Path:
    done = _pip("wheel", str(project), "--no-build-isolation", "--no-deps", "--no-index", "-w", str(out))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (wheel,) = out.glob("*.whl")
    return wheel


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(project, wheel): numkit built into a wheel by ``aot.build_meta``."""
    root = tmp_path_factory.mktemp("pkg")
    project = _project(root / "numkit-src")
    return project, _wheel(project, root / "dist")


def _install_target(wheel: Path, target: Path) -> Path:
    done = _pip("install", "--no-index", "--no-deps", "--target", str(target), str(wheel))
    assert done.returncode == 0, done.stderr[-3000:]
    return target


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


# ------------------------------------------------------------------------------------------ the wheel


@builds_wheels
def test_wheel_holds_the_images_with_a_platform_tag(built):
    _, wheel = built
    assert wheel.name == f"numkit-0.1.0-{TAG}.whl"
    assert TAG.startswith(f"cp{sys.version_info.major}{sys.version_info.minor}-cp") and "none" not in TAG
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        shipped = sorted(n for n in names if "/__aot__/" in n)
        assert shipped == ["numkit/__aot__/numkit.cpu.aotimg", "numkit/__aot__/numkit.cpu.so"]  # no lock, no cache
        assert {"numkit/__init__.py", "numkit/core.py"} <= names
        meta = z.read("numkit-0.1.0.dist-info/WHEEL").decode()
        assert [ln for ln in meta.splitlines() if ln.startswith("Tag:")] == [f"Tag: {t}" for t in expand_tag(TAG)]
        assert "Root-Is-Purelib: false" in meta.splitlines()
        assert "py3-none-any" not in meta
        metadata = z.read("numkit-0.1.0.dist-info/METADATA").decode().splitlines()
        assert f"Requires-Dist: aot=={aot.__version__}" in metadata  # the runtime the image was built for
        assert not any(line.startswith("Requires-Dist: llvmlite") for line in metadata)
        record = z.read("numkit-0.1.0.dist-info/RECORD").decode().splitlines()
        listed = {}
        for line in record:
            path, digest, size = line.rsplit(",", 2)
            listed[path] = (digest, size)
        assert set(listed) == names
        for name in names - {"numkit-0.1.0.dist-info/RECORD"}:
            data = z.read(name)
            expect = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert listed[name] == (expect, str(len(data))), name


@builds_wheels
def test_wheel_images_hold_no_absolute_path(built):
    project, wheel = built
    needles = {str(project).encode(), str(project.parent).encode(), str(REPO).encode(), os.getcwd().encode()}
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if "/__aot__/" in name:
                data = z.read(name)
                for needle in needles:
                    assert needle not in data, f"{name} holds the build's path {needle!r}"


@builds_wheels
def test_rebuilt_wheel_is_identical(built, tmp_path):
    project, wheel = built
    again = _wheel(project, tmp_path / "again")
    with zipfile.ZipFile(wheel) as a, zipfile.ZipFile(again) as b:
        for name in a.namelist():
            if "/__aot__/" in name:
                assert a.read(name) == b.read(name), name


@builds_wheels
def test_inner_backend_is_configurable(tmp_path):
    project = _project(tmp_path / "p", backend="setuptools.build_meta:__legacy__")
    wheel = _wheel(project, tmp_path / "dist")
    assert wheel.name.endswith(f"-{TAG}.whl")
    with zipfile.ZipFile(wheel) as z:
        assert "numkit/__aot__/numkit.cpu.so" in z.namelist()


@pytest.mark.skipif(importlib.util.find_spec("hatchling") is None, reason="hatchling is not installed")
def test_hatchling_as_the_inner_backend(tmp_path):
    project = _project(tmp_path / "p", backend="hatchling.build")
    text = (project / "pyproject.toml").read_text()
    text = text.replace('[tool.setuptools.packages.find]\ninclude = ["numkit*"]\n', "")
    (project / "pyproject.toml").write_text(text + '\n[tool.hatch.build.targets.wheel]\npackages = ["numkit"]\n')
    (project / ".gitignore").write_text("__aot__/\n")  # (hatchling leaves ignored files out: aot adds the images)
    wheel = _wheel(project, tmp_path / "dist")
    assert wheel.name == f"numkit-0.1.0-{TAG}.whl"
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        assert {"numkit/__aot__/numkit.cpu.aotimg", "numkit/__aot__/numkit.cpu.so", "numkit/core.py"} <= set(names)
        assert f"Tag: {expand_tag(TAG)[0]}" in z.read("numkit-0.1.0.dist-info/WHEEL").decode().splitlines()


@builds_wheels
@pytest.mark.skipif(
    importlib.util.find_spec("build") is None,
    reason="the `build` package is not installed here (pip install build): `python -m build` is not tried",
)
@pytest.mark.parametrize("args", [("--wheel",), ()], ids=["wheel", "sdist-then-wheel"])
def test_python_m_build_goes_through_the_backend(tmp_path, args):
    """``python -m build --wheel`` builds the wheel from the project; without ``--wheel`` from its sdist."""
    project = _project(tmp_path / "p")
    out = tmp_path / "dist"
    done = subprocess.run(
        [sys.executable, "-m", "build", *args, "--no-isolation", "--outdir", str(out), str(project)],
        capture_output=True,
        text=True,
        env=base_env(),
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (wheel,) = out.glob("*.whl")
    assert wheel.name == f"numkit-0.1.0-{TAG}.whl"
    with zipfile.ZipFile(wheel) as z:
        assert {"numkit/__aot__/numkit.cpu.aotimg", "numkit/__aot__/numkit.cpu.so"} <= set(z.namelist())
        meta = z.read("numkit-0.1.0.dist-info/WHEEL").decode().splitlines()
        assert [ln for ln in meta if ln.startswith("Tag:")] == [f"Tag: {t}" for t in expand_tag(TAG)]
    assert [p.name for p in out.glob("*.tar.gz")] == ([] if args else ["numkit-0.1.0.tar.gz"])


def test_backend_setting_is_checked(tmp_path):
    project = _project(tmp_path / "p", backend="not a backend")
    with pytest.raises(ConfigError, match=r"\[tool\.aot\] backend: must name a PEP 517 backend"):
        load_config(project)
    assert load_config(FIXTURES / "numkit").backend == "setuptools.build_meta"


@builds_wheels
def test_a_failed_aot_build_makes_no_wheel(tmp_path):
    project = _project(tmp_path / "p")
    core = project / "numkit" / "core.py"
    core.write_text(core.read_text() + "\n\n@aot.jit\ndef broken(n: int) -> int:\n    yield n\n")
    out = tmp_path / "dist"
    done = _pip("wheel", str(project), "--no-build-isolation", "--no-deps", "--no-index", "-w", str(out))
    assert done.returncode != 0
    assert "aot build failed" in done.stdout + done.stderr and "yield" in done.stdout + done.stderr
    assert not list(out.glob("*.whl"))


def _hook(project: Path, call: str) -> str:
    code = f"import aot.build_meta as b; print(repr({call}))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=project, env=base_env())
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@builds_wheels
def test_editable_build_writes_the_images_in_place(tmp_path):
    project = _project(tmp_path / "p")
    out = tmp_path / "dist"
    out.mkdir()
    name = eval(_hook(project, f"b.build_editable({str(out)!r})"))
    assert (out / name).is_file() and name.startswith("numkit-0.1.0")
    assert (project / "numkit" / "__aot__" / "numkit.cpu.aotimg").is_file()
    with zipfile.ZipFile(out / name) as z:
        assert not [n for n in z.namelist() if "__aot__" in n]  # (imported from the project folder)


def test_build_requirements_add_the_compiler(tmp_path):
    project = _project(tmp_path / "p")
    wheel_requires = eval(_hook(project, "b.get_requires_for_build_wheel()"))
    assert f"aot[compiler]=={aot.__version__}" in wheel_requires
    sdist_requires = eval(_hook(project, "b.get_requires_for_build_sdist()"))
    assert not any(r.startswith("aot") for r in sdist_requires)


# ------------------------------------------------------------------------------------------ sdists


@builds_wheels
def test_sdist_carries_no_native_code_and_builds_images_when_installed(tmp_path):
    # A MANIFEST.in that would ship the images (built beforehand): the sdist must still hold none.
    project = _project(tmp_path / "p", manifest="recursive-include numkit/__aot__ *\n")
    assert (
        subprocess.run(
            [sys.executable, "-c", "import sys, cli; sys.argv[0] = 'aot'; cli.main()", "build", str(project)],
            env=base_env(),
            capture_output=True,
        ).returncode
        == 0
    )
    dist = tmp_path / "sdist"
    dist.mkdir()
    name = eval(_hook(project, f"b.build_sdist({str(dist)!r})"))
    sdist = dist / name
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
    assert any(n.endswith("numkit/core.py") for n in names)
    assert not [n for n in names if "__aot__" in n or n.endswith(".so")]
    wheel = _wheel(sdist, tmp_path / "from-sdist")  # pip unpacks it and calls aot.build_meta: images built there
    assert wheel.name.endswith(f"-{TAG}.whl")
    with zipfile.ZipFile(wheel) as z:
        assert "numkit/__aot__/numkit.cpu.aotimg" in z.namelist()


def test_strip_native_leaves_a_clean_sdist_alone(tmp_path):
    sdist = tmp_path / "x-1.tar.gz"
    src = tmp_path / "x-1"
    (src / "x").mkdir(parents=True)
    (src / "x" / "__init__.py").write_text("")
    with tarfile.open(sdist, "w:gz") as tar:
        tar.add(src, arcname="x-1")
    before = sdist.read_bytes()
    assert strip_native(sdist) == []
    assert sdist.read_bytes() == before


def test_pin_runtime():
    meta = "Metadata-Version: 2.1\nName: p\nRequires-Dist: numpy\nRequires-Dist: aot[foo]>=0.1\n"
    meta += "Requires-Dist: aot[compiler]; extra == 'dev'\n\nLong description\n"
    pinned = pin_runtime(meta, "9.9.9")
    lines = pinned.splitlines()
    assert "Requires-Dist: aot[foo]==9.9.9" in lines
    assert "Requires-Dist: aot[foo]>=0.1" not in lines
    assert "Requires-Dist: aot[compiler]; extra == 'dev'" in lines  # under a marker: left as written
    assert pinned.endswith("\n\nLong description\n")
    assert "Requires-Dist: aot==1.0" in pin_runtime("Metadata-Version: 2.1\nName: p\n", "1.0").splitlines()


# ------------------------------------------------------------------------------------------ installed


@pytest.fixture(scope="module")
def installed(built, tmp_path_factory):
    """The wheel installed with ``pip install --target``, then moved elsewhere (a relocated site-packages)."""
    _, wheel = built
    first = _install_target(wheel, tmp_path_factory.mktemp("first") / "site")
    moved = tmp_path_factory.mktemp("elsewhere") / "lib" / "site-packages"
    moved.parent.mkdir(parents=True)
    shutil.move(str(first), str(moved))
    return moved


def _copy_site(installed: Path, dst: Path) -> Path:
    shutil.copytree(installed, dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


@builds_wheels
def test_installed_wheel_runs_prebuilt_code_without_the_compiler(installed):
    run = run_python(
        installed,
        NO_COMPILER
        + dedent("""
        import numpy as np
        import numkit
        import numkit._workload
        a = np.linspace(-1.0, 2.0, 11)
        report(where=numkit.__file__, mean=numkit.stats.mean(a), mean_py=numkit.stats.mean.py_func(a),
               fib=numkit.ntheory.fib(30), fib_py=numkit.ntheory.fib.py_func(30))
        """),
        env={"AOT_STRICT": "1"},
    )
    assert run["where"].startswith(str(installed))
    assert run["stats"]["inferred"] == 0 and run["stats"]["cured"] == 0 and run["stats"]["invalidated"] == 0
    assert run["stats"]["loaded"] >= 60
    assert run["mean"] == run["mean_py"] and run["fib"] == run["fib_py"] == 832040


@builds_wheels
def test_stale_entry_without_the_compiler_runs_python(installed, tmp_path):
    site = _copy_site(installed, tmp_path / "site")
    core = site / "numkit" / "core.py"
    core.write_text(core.read_text().replace("SCALE = 2.0", "SCALE = 3.0"))
    code = NO_COMPILER + dedent("""
        import numpy as np
        import numkit
        a = np.linspace(-1.0, 2.0, 7)
        out = np.zeros(7)
        numkit.stats.rescale(a, out)
        again = np.zeros(7)
        numkit.stats.rescale(a, again)
        want = np.zeros(7)
        numkit.stats.rescale.py_func(a, want)
        report(scaled=numkit.core.scaled(2.0), mean=numkit.stats.mean(a), out=out, again=again, want=want)
        """)
    run = run_python(site, code)
    assert run["scaled"] == 6.0
    assert run["out"] == run["want"] == run["again"]
    invalidated = run.events_of("invalidated")
    causes = {(e["method"], e["cause"]) for e in invalidated}
    assert causes == {
        ("numkit.stats:rescale", "edge-changed:numkit.core:scaled"),
        ("numkit.core:scaled", "edge-changed:numkit.core:SCALE"),
    }
    assert not any(e["spurious"] for e in run["events"])
    assert run["stats"]["inferred"] == 0 and run["stats"]["loaded"] >= 1  # mean: still its prebuilt code
    lines = [ln for ln in run.stderr.splitlines() if ln.startswith("aot:")]
    assert len(lines) == 2 and all('pip install "aot[compiler]"' in ln for ln in lines), run.stderr

    strict = run_python(site, code, env={"AOT_STRICT": "1"}, check=False)
    assert strict.rc != 0
    assert "StrictModeError" in strict.stderr and "edge-changed:numkit.core:scaled" in strict.stderr


@builds_wheels
def test_missing_library_without_the_compiler_runs_python(installed, tmp_path):
    site = _copy_site(installed, tmp_path / "site")
    (site / "numkit" / "__aot__" / "numkit.cpu.so").unlink()
    run = run_python(
        site,
        NO_COMPILER + "import numkit\nreport(fib=numkit.ntheory.fib(20), fib_py=numkit.ntheory.fib.py_func(20))\n",
    )
    assert run["fib"] == run["fib_py"] == 6765
    assert [(e["kind"], e["cause"]) for e in run["events"]] == [("invalidated", "native-missing")]


@builds_wheels
def test_nothing_is_written_into_site_packages_at_run_time(installed, tmp_path):
    site = _copy_site(installed, tmp_path / "site")
    core = site / "numkit" / "core.py"
    core.write_text(core.read_text().replace("SCALE = 2.0", "SCALE = 3.0"))
    (site / "numkit" / "__aot__" / "numkit.cpu.so").unlink()  # every entry cured, scaled reinferred
    before = {p: p.stat().st_mtime_ns for p in site.rglob("*") if "__pycache__" not in p.parts}
    run = run_python(
        site,
        "import numkit, numkit._workload\nreport(scaled=numkit.core.scaled(1.0))\n",
        env={"PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert run["scaled"] == 3.0 and run["stats"]["inferred"] >= 1 and run["stats"]["cured"] >= 1
    after = {p: p.stat().st_mtime_ns for p in site.rglob("*") if "__pycache__" not in p.parts}
    assert after == before


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.submodule_search_locations, name
    return Path(list(spec.submodule_search_locations)[0])


def _in_venv(python: str, *args: str, env: dict[str, str] | None = None, cwd: Path) -> subprocess.CompletedProcess:
    """Run in the fresh venv: no PYTHONPATH (nothing of this checkout), no aot switches but ``env``."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("AOT_", "PYTHON"))}
    clean.update(PYTHONDONTWRITEBYTECODE="1", **(env or {}))
    return subprocess.run([python, *args], capture_output=True, text=True, cwd=cwd, env=clean, timeout=600)


def _venv_pip(python: str, *args: str) -> subprocess.CompletedProcess:
    """This interpreter's pip acting on the venv of ``python`` (which has no pip), with nothing of this checkout
    on the path: a PYTHONPATH naming the checkout would show pip its ``aot.egg-info`` (what ``pip install -e``
    leaves there) as aot already installed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AOT_", "PYTHON"))}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    return subprocess.run(
        [sys.executable, "-m", "pip", "--python", python, *args], capture_output=True, text=True, env=env, timeout=600
    )


def isolated_venv(root: Path) -> tuple[str, Path]:
    """(python, site-packages) of a new venv at ``root / "venv"`` that sees nothing of the interpreter running
    the suite (no ``--system-site-packages``: inside a venv that would mean the *base* interpreter's, which
    need not have aot's requirements) but numpy and msgpack, linked from this interpreter. It has no pip of its
    own: ``_venv_pip`` installs into it."""
    if tuple(int(p) for p in __import__("pip").__version__.split(".")[:2]) < (22, 3):
        pytest.skip("pip < 22.3 has no --python option (to install into a venv that has no pip of its own)")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    site = Path(
        _in_venv(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))", cwd=root).stdout.strip()
    )
    deps = root / "deps"
    deps.mkdir()
    for name in ("numpy", "msgpack"):
        folder = _package_dir(name)
        (deps / name).symlink_to(folder, target_is_directory=True)
        libs = folder.parent / f"{name}.libs"  # (where a manylinux wheel keeps its vendored libraries)
        if libs.is_dir():
            (deps / libs.name).symlink_to(libs, target_is_directory=True)
    (site / "deps.pth").write_text(f"{deps}\n")
    return python, site


@builds_wheels
def test_uninstall_removes_every_file(built, tmp_path):
    _, wheel = built
    python, _ = isolated_venv(tmp_path)  # (aot itself comes from this checkout, through base_env's PYTHONPATH)
    venv = tmp_path / "venv"
    before = _files(venv)
    done = _venv_pip(python, "install", "--no-index", "--no-deps", str(wheel))
    assert done.returncode == 0, done.stderr[-3000:]
    added = _files(venv) - before
    assert any(p.endswith("numkit/__aot__/numkit.cpu.so") for p in added), sorted(added)
    assert any(p.endswith("numkit/__aot__/numkit.cpu.aotimg") for p in added)
    run = subprocess.run(
        [python, "-c", NO_COMPILER + "import numkit, aot; numkit.ntheory.fib(10); print(aot.stats()['loaded'])"],
        capture_output=True,
        text=True,
        env=base_env({"AOT_STRICT": "1", "PYTHONDONTWRITEBYTECODE": "1"}),
        cwd=tmp_path,
    )
    assert run.returncode == 0 and run.stdout.strip() == "1", run.stderr
    done = _venv_pip(python, "uninstall", "-y", "numkit")
    assert done.returncode == 0, done.stderr[-3000:]
    left = _files(venv) - before
    assert left == set()
    assert not [p for p in venv.rglob("numkit*")]


# ------------------------------------------------------------------------------------------ runtime alone


@pytest.mark.parametrize(
    ("blocked", "argv", "says"),
    [
        ("llvmlite", ["build", "."], "aot build: the compiler is not installed"),
        ("llvmlite", ["ir", "m:f", "f64"], "aot ir: the compiler is not installed"),
        ("click", ["inspect", "."], "aot inspect: the command line is not installed"),
        ("click", [], "aot: the command line is not installed"),
    ],
)
def test_console_without_the_compiler_says_what_to_install(tmp_path, blocked, argv, says):
    code = f"import sys; sys.modules[{blocked!r}] = None; sys.argv = ['aot', *{argv!r}]\n"
    code += "from aot.console import main; main()"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=base_env())
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f'{says} (this is the aot runtime alone): pip install "aot[compiler]"']


def test_console_with_the_compiler_is_the_command_line(tmp_path):
    code = "import sys; sys.argv = ['aot', '--version']\nfrom aot.console import main; main()"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=base_env())
    assert done.returncode == 0 and aot.__version__ in done.stdout


def test_runtime_distribution_needs_no_compiler():
    text = (REPO / "pyproject.toml").read_text()
    import tomllib

    project = tomllib.loads(text)["project"]
    assert not any(d.startswith(("llvmlite", "click")) for d in project["dependencies"])
    compiler = project["optional-dependencies"]["compiler"]
    assert any(d.startswith("llvmlite") for d in compiler) and any(d.startswith("click") for d in compiler)
    assert "aot[compiler]" in project["optional-dependencies"]["test"]
    assert project["scripts"]["aot"] == "aot.console:main"


def test_import_aot_leaves_gpu_kernels_and_the_compiler_for_later(tmp_path):
    code = dedent(
        """
        import sys
        import aot
        first = sorted(m for m in ("aot.gpu", "aot.runtime.kernel", "aot.runtime.compilerless", "llvmlite")
                       if m in sys.modules)
        from aot import NoDeviceError, kernel
        print(first, aot.gpu.__name__, kernel.__module__, NoDeviceError.__name__, "aot.gpu" in sys.modules)
        try:
            aot.no_such_name
        except AttributeError as err:
            print(err)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=base_env())
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "[] aot.gpu aot.runtime.kernel NoDeviceError True",
        "module 'aot' has no attribute 'no_such_name'",
    ]


# ------------------------------------------------------------------------------------------ a fresh venv
#
# The whole journey of a user without the compiler: aot's own wheel (the runtime: no llvmlite, no click) and
# numkit's wheel installed into a virtual environment made without the system's site-packages, where llvmlite
# and click cannot be imported at all. NumPy and msgpack (which pip would download) are the only things it
# sees of this interpreter's packages: links to them in a folder that a .pth file names.

# Each entry type of numkit's image → arguments that select exactly that entry from Python (an "A" layout
# gets a strided view, so that a C-contiguous entry of the same method cannot take the call).
CALL_EVERY_ENTRY = """
import json, math, sys
import numpy as np
import aot
from aot.types import ArrayType, ScalarType, TupleType, parse_type

def sample(t, rng):
    if isinstance(t, ScalarType):
        if t.is_float:
            return float(rng.choice([0.5, 2.0, -1.25, 3.75]))
        return bool(rng.integers(2)) if t.kind == "b" else int(rng.choice([1, 7, 12, 20]))
    if isinstance(t, ArrayType):
        shape = (9,) if t.ndim == 1 else (6, 5)
        dtype = np.float64 if t.dtype.is_float else np.int64
        values = rng.uniform(-2.0, 2.0, size=shape) if t.dtype.is_float else rng.integers(0, 4, size=shape)
        if t.layout == "C":
            return np.ascontiguousarray(values, dtype=dtype)
        wide = np.zeros(shape[:-1] + (2 * shape[-1],), dtype=dtype)
        wide[..., ::2] = values
        return wide[..., ::2]
    if isinstance(t, TupleType):
        return tuple(sample(i, rng) for i in t.items)
    raise AssertionError(t)

def same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.allclose(a, b, rtol=1e-12, atol=0.0, equal_nan=True) and np.shape(a) == np.shape(b)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12)
    return a == b and type(a) is type(b)

def copied(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]

import importlib
entries = json.loads(sys.argv[1])
results = []
for i, (key, argtypes) in enumerate(entries):
    module, name = key.split(":")
    method = importlib.import_module(module)
    for part in name.split("."):
        method = getattr(method, part)
    rng = np.random.default_rng(i)
    args = [sample(parse_type(t), rng) for t in argtypes]
    py_args = copied(args)
    try:
        want = method.py_func(*py_args)
    except Exception as err:
        want = type(err).__name__
    try:
        got = method(*args)
    except Exception as err:
        got = type(err).__name__
    declared = [[str(t) for t in signature] for signature in method._aot_dispatcher.declared]
    selectable = not declared or list(argtypes) in declared  # (else only compiled callers call it)
    results.append([key, argtypes, bool(same(got, want) and all(map(same, args, py_args))), selectable])
loaded = sorted({(e.method, tuple(e.argtypes)) for e in aot.events() if e.kind == "loaded"})
print(json.dumps({"results": results, "stats": aot.stats(), "loaded": loaded,
                  "compiler": [m for m in ("llvmlite", "click") if m in sys.modules]}))
"""


@pytest.fixture(scope="module")
def fresh_venv(built, tmp_path_factory):
    """(python, bin folder, site-packages, files before the installs): aot's runtime wheel and numkit's wheel
    installed into a venv without the system site-packages (no llvmlite, no click there)."""
    _, numkit_wheel = built
    root = tmp_path_factory.mktemp("fresh")
    source = root / "aot-src"  # (a copy: building in the checkout would leave build/ and *.egg-info there)
    source.mkdir()
    for name in ("aot", "serializer", "linker"):
        shutil.copytree(REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("cli.py", "pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    done = _pip("wheel", str(source), "--no-build-isolation", "--no-deps", "--no-index", "-w", str(root / "dist"))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (aot_wheel,) = (root / "dist").glob("aot-*.whl")
    assert aot_wheel.name == f"aot-{aot.__version__}-py3-none-any.whl"  # the runtime is pure Python

    python, site = isolated_venv(root)
    venv = root / "venv"
    before = _files(venv)
    for wheel in (aot_wheel, numkit_wheel):
        done = _venv_pip(python, "install", "--no-index", "--no-deps", str(wheel))
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return python, venv / "bin", site, before


@builds_wheels
def test_fresh_venv_has_the_runtime_and_no_compiler(fresh_venv, tmp_path):
    python, _, site, _ = fresh_venv
    probe = (
        "import importlib.util as u, aot\n"
        "print(aot.__file__)\n"
        "print(sorted(m for m in ('llvmlite', 'click', 'numpy', 'msgpack') if u.find_spec(m)))"
    )
    run = _in_venv(python, "-c", probe, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    where, visible = run.stdout.splitlines()
    assert where.startswith(str(site)) and visible == "['msgpack', 'numpy']"


@builds_wheels
def test_fresh_venv_runs_every_prebuilt_entry_without_the_compiler(fresh_venv, tmp_path):
    """Strict mode, every entry of the installed image called once with arguments of exactly its types, each
    result (and each argument it wrote into) equal to plain Python's, each entry loaded, nothing inferred."""
    python, _, site, _ = fresh_venv
    image = site / "numkit" / "__aot__" / "numkit.cpu.aotimg"
    contents = ImageContents.from_tables(serializer.read_image(image).tables)
    entries = sorted({(e.method, tuple(e.argtypes)) for e in contents.code.values()})
    assert len(entries) >= 60
    script = tmp_path / "call_every_entry.py"
    script.write_text(dedent(CALL_EVERY_ENTRY))
    run = _in_venv(python, str(script), json.dumps(entries), env={"AOT_STRICT": "1"}, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    wrong = [(key, argtypes) for key, argtypes, ok, _ in report["results"] if not ok]
    assert wrong == []
    assert [tuple(r[:2]) for r in report["results"]] == [(k, list(a)) for k, a in entries]
    # Every entry Python can select ran its prebuilt code (a method with declared signatures converts its
    # arguments to them: its other entries serve compiled callers, inside their native code).
    selectable = {(key, tuple(argtypes)) for key, argtypes, _, python in report["results"] if python}
    assert len(selectable) >= 60
    assert {(k, tuple(a)) for k, a in report["loaded"]} >= selectable
    stats = report["stats"]
    assert stats["inferred"] == stats["cured"] == stats["invalidated"] == stats["spurious"] == 0
    assert report["compiler"] == []


@builds_wheels
def test_fresh_venv_aot_verify_import_checks_the_installed_package(fresh_venv, tmp_path):
    """The CI recipe's test step, with what the wheel installs: ``aot verify --import numkit`` runs with the
    runtime alone (no click) and finds the installed package by name."""
    python, bin_dir, _, _ = fresh_venv
    run = _in_venv(str(bin_dir / "aot"), "verify", "--import", "numkit", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert "numkit/__aot__/numkit.cpu.aotimg: " in lines[0] and lines[0].endswith(" entries, all valid")
    assert "0 inferred, 0 cured, 0 spurious" in lines[1] and lines[-1].startswith("aot verify: ok")
    missing = _in_venv(str(bin_dir / "aot"), "verify", "no_such_package", cwd=tmp_path)
    assert missing.returncode == 2
    assert missing.stderr.strip() == "aot: no_such_package: no such file or folder, nor an installed package"
    build = _in_venv(str(bin_dir / "aot"), "build", ".", cwd=tmp_path)
    assert build.returncode == 2 and 'pip install "aot[compiler]"' in build.stderr


@builds_wheels
def test_fresh_venv_aot_verify_names_a_stale_installed_entry(fresh_venv, tmp_path):
    """An installed source edited after the build: ``aot verify --import`` (runtime alone) names the stale
    entries and their causes, and the strict import the first call that would have compiled; exit 1."""
    _, bin_dir, site, _ = fresh_venv
    core = site / "numkit" / "core.py"
    text = core.read_text()
    # (3.00: a size of its own, so that the .pyc pip wrote is stale even within the second it was written)
    core.write_text(text.replace("SCALE = 2.0", "SCALE = 3.00"))
    try:
        run = _in_venv(str(bin_dir / "aot"), "verify", "--import", "numkit", cwd=tmp_path)
    finally:
        core.write_text(text)
    assert run.returncode == 1, run.stdout + run.stderr
    stale = [ln.split() for ln in run.stdout.splitlines() if ln.strip().startswith("stale")]
    assert sorted((s[1].split("(")[0], s[-1]) for s in stale) == [
        ("numkit.core:scaled", "edge-changed:numkit.core:SCALE"),
        ("numkit.stats:rescale", "edge-changed:numkit.core:scaled"),
    ]
    assert "StrictModeError" in run.stdout and "aot verify: FAILED" in run.stdout


@builds_wheels
def test_fresh_venv_uninstall_leaves_nothing(fresh_venv, tmp_path):
    python, _, _, before = fresh_venv
    venv = Path(python).parents[1]
    for name in ("numkit", "aot"):
        done = _venv_pip(python, "uninstall", "-y", name)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert _files(venv) - before == set()
    assert not [p for p in venv.rglob("numkit*")] and not [p for p in venv.rglob("aot*")]
