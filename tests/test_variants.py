"""CPU variants in one image (``[tool.aot.cpu] variants``, docs/CPU_VARIANTS.md, issue 18 item 3).

the choice (``usable_variants``), with this CPU's flags made up   → the best it runs; an override first;
                                                                     one line for a name it cannot use
/proc/cpuinfo texts of x86-64 and aarch64 machines (``cpu_features``) → their features in LLVM's spelling;
                                                                     each machine's best level; none: unknown
the levels of the other architecture                              → a ConfigError naming this machine's
every level's features, given to LLVM                             → accepted (no "not a recognized feature")
a built package with v2 and v3 libraries (on aarch64: armv8-a and → the best bound, results of py_func,
armv8.2-a)                                                           AOT_CPU_VARIANT picks another
a CPU without AVX2 (its flags made up in the child)               → the v3 library is never loaded
the best variant's library deleted                                → the next-best, one line; all deleted:
                                                                     cured from the IR, never a crash
"""

from __future__ import annotations

import json
import platform
from pathlib import Path
from typing import Any

import pytest

import serializer
from aot.builder.config import ConfigError, load_config
from aot.image import header as header_mod
from aot.image.header import cpu_features, header_problem, incompatibility, new_header, usable_variants
from aot.targets.cpu import CPU_LEVELS, CpuTarget, levels_for, stderr_of, triple_arch
from buildsupport import aot_build, aot_cli, image_path, pyproject, run_python, write_project

VARIANTS = ["x86-64-v2", "x86-64-v3"]


def _flags(*llvm_names: str) -> set[str]:
    """A CPU's features as ``_host_features`` gives them: in LLVM's spelling (read from /proc/cpuinfo's
    names by ``cpu_features``, tested below)."""
    return set(llvm_names)


X86 = "x86_64-unknown-linux-gnu"
ARM = "aarch64-unknown-linux-gnu"


def _variant_header(names: list[str], triple: str = X86) -> dict[str, Any]:
    """The header a build with these variants writes for ``triple`` (libraries made up)."""
    variants = []
    for name in names:
        t = CpuTarget.variant(name, triple=triple)
        target = {"triple": t.triple, "cpu": t.cpu, "features": t.features}
        native = {"file": f"pkg.cpu.{name}.so", "crc32": 1, "size": 1}
        variants.append({"name": name, "target": target, "native": native, "build_id": f"id-{name}"})
    first = variants[0]
    header = new_header("cpu", first["target"], "pkg", native=first["native"])
    header["build_id"] = first["build_id"]
    header["variants"] = variants
    return header


def _chosen(header: dict[str, Any], wanted: str | None = None) -> tuple[list[str], str | None]:
    libraries, note = usable_variants(header, wanted)
    return [lib["variant"] for lib in libraries], note


# --------------------------------------------------------------------------------------------- the choice
ALL = ["x86-64-v2", "x86-64-v3", "x86-64-v4"]


@pytest.mark.parametrize(
    ("cpu", "best_first"),
    [
        (CPU_LEVELS["x86-64-v4"], ["x86-64-v4", "x86-64-v3", "x86-64-v2"]),
        (CPU_LEVELS["x86-64-v3"], ["x86-64-v3", "x86-64-v2"]),
        (CPU_LEVELS["x86-64-v3"][:-1], ["x86-64-v2"]),  # (no xsave: not a v3)
        (CPU_LEVELS["x86-64-v2"] + ("avx512f",), ["x86-64-v2"]),
    ],
)
def test_the_best_variant_this_cpu_runs_comes_first(monkeypatch, cpu, best_first) -> None:
    monkeypatch.setattr(header_mod, "_HOST", [_flags(*cpu)])
    header = _variant_header(ALL)
    assert incompatibility(header) is None
    assert _chosen(header) == (best_first, None)


def test_a_cpu_below_every_variant_rejects_the_image(monkeypatch) -> None:
    monkeypatch.setattr(header_mod, "_HOST", [_flags("sse3", "cx16")])
    header = _variant_header(ALL)
    assert (incompatibility(header) or "").startswith("cpu-features missing here:")
    assert _chosen(header) == ([], None)


def test_the_listed_order_does_not_decide(monkeypatch) -> None:
    monkeypatch.setattr(header_mod, "_HOST", [_flags(*CPU_LEVELS["x86-64-v4"])])
    header = _variant_header(["x86-64-v2", "x86-64-v4", "x86-64-v3"])
    assert _chosen(header)[0] == ["x86-64-v4", "x86-64-v3", "x86-64-v2"]


def test_an_override_this_cpu_runs_comes_first(monkeypatch) -> None:
    monkeypatch.setattr(header_mod, "_HOST", [_flags(*CPU_LEVELS["x86-64-v4"])])
    assert _chosen(_variant_header(ALL), "x86-64-v2") == (["x86-64-v2", "x86-64-v4", "x86-64-v3"], None)


def test_an_override_this_cpu_cannot_run_is_one_line_and_the_best(monkeypatch) -> None:
    monkeypatch.setattr(header_mod, "_HOST", [_flags(*CPU_LEVELS["x86-64-v3"])])
    order, note = _chosen(_variant_header(ALL), "x86-64-v4")
    assert order == ["x86-64-v3", "x86-64-v2"]
    assert note == "AOT_CPU_VARIANT=x86-64-v4 cannot be used (this CPU lacks its features): using x86-64-v3"


def test_an_unknown_override_names_the_variants(monkeypatch) -> None:
    monkeypatch.setattr(header_mod, "_HOST", [_flags(*CPU_LEVELS["x86-64-v3"])])
    order, note = _chosen(_variant_header(VARIANTS), "znver9")
    assert order == ["x86-64-v3", "x86-64-v2"]
    assert note == "AOT_CPU_VARIANT=znver9 cannot be used (the image has x86-64-v2, x86-64-v3): using x86-64-v3"


def test_unknown_cpu_flags_allow_only_the_most_portable(monkeypatch) -> None:
    monkeypatch.setattr(header_mod, "_HOST", [None])
    assert _chosen(_variant_header(ALL), "x86-64-v4")[0] == ["x86-64-v2"]


def test_no_flags_are_read_when_no_variant_needs_any(monkeypatch) -> None:
    def unread() -> None:
        raise AssertionError("/proc/cpuinfo was read")

    monkeypatch.setattr(header_mod, "_HOST", [])
    monkeypatch.setattr(header_mod, "_read_host_features", unread)
    assert _chosen(_variant_header(["generic", "x86-64"])) == (["generic", "x86-64"], None)


def test_an_image_without_variants_is_its_own_library() -> None:
    header = new_header("cpu", {"triple": "x", "cpu": "generic", "features": ""}, "pkg")
    assert usable_variants(header, "x86-64-v3") == ([header], None)


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (lambda v: v.clear(), "header field variants is empty"),
        (lambda v: v.append("x86-64-v4"), "header field variants[2] is a str"),
        (lambda v: v[1].pop("build_id"), "header field variants[1].build_id is missing"),
        (lambda v: v[1]["target"].update(features=1), "header field variants[1].target.features is a int"),
        (lambda v: v[1]["native"].update(file="../x.so"), "header field variants[1].native.file is not a file name"),
        (lambda v: v[1]["target"].update(triple="aarch64"), "header field variants[1].target.triple is not the"),
    ],
)
def test_malformed_variants_are_damage(damage, problem) -> None:
    header = _variant_header(VARIANTS)
    damage(header["variants"])
    assert (header_problem(header) or "").startswith(problem)
    assert (incompatibility(header) or "").startswith("damaged: " + problem)


# ------------------------------------------------------------------------------ reading /proc/cpuinfo
# Abridged from real machines (the lines that matter here, and a few that do not): two processors of an x86-64
# laptop with AVX2 and no AVX-512, and one processor of each aarch64 machine.
X86_CPUINFO = """\
processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Core(TM) i7-8565U CPU @ 1.80GHz
flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ss \
ht tm pbe syscall nx pdpe1gb rdtscp lm constant_tsc pni pclmulqdq dtes64 monitor ssse3 sdbg fma cx16 xtpr pdcm \
pcid sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx f16c rdrand lahf_lm abm 3dnowprefetch fsgsbase bmi1 avx2 \
smep bmi2 erms invpcid mpx rdseed adx smap clflushopt xsaveopt xsavec xgetbv1 xsaves
vmx flags\t: vnmi preemption_timer invvpid ept_x_only ept_ad ept_1gb flexpriority tsc_offset vtpr mtf vapic ept
bugs\t\t: spectre_v1 spectre_v2 spec_store_bypass swapgs itlb_multihit srbds mmio_stale_data retbleed
bogomips\t: 3999.93

processor\t: 1
vendor_id\t: GenuineIntel
flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr
"""


def _arm_cpuinfo(features: str, part: str) -> str:
    return (
        f"processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: {features}\nCPU implementer\t: 0x41\n"
        f"CPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: {part}\nCPU revision\t: 1\n\n"
    )


ARM_CPUINFO = {
    # Raspberry Pi 4 (Cortex-A72): Armv8.0
    "cortex-a72": _arm_cpuinfo("fp asimd evtstrm crc32 cpuid", "0xd08"),
    # Graviton2 (Neoverse-N1): Armv8.2
    "neoverse-n1": _arm_cpuinfo(
        "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs",
        "0xd0c",
    ),
    # Graviton3 (Neoverse-V1): Armv8.4 with SVE, without SVE2
    "neoverse-v1": _arm_cpuinfo(
        "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma lrcpc dcpop "
        "sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs paca pacg dcpodp svei8mm svebf16 "
        "i8mm bf16 dgh rng",
        "0xd40",
    ),
    # Graviton4 (Neoverse-V2): Armv9.0 with SVE2
    "neoverse-v2": _arm_cpuinfo(
        "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma lrcpc dcpop "
        "sha3 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm sb paca pacg dcpodp sve2 sveaes svepmull "
        "svebitperm svesha3 flagm2 frint svei8mm svebf16 i8mm bf16 dgh rng bti",
        "0xd4f",
    ),
}
ARM_LEVELS = ["armv8-a", "armv8.2-a", "armv8.2-a+sve", "armv9-a"]


def test_x86_cpuinfo_is_read_in_llvms_spelling() -> None:
    features = cpu_features(X86_CPUINFO)
    assert features is not None
    assert {"sse3", "sse4.1", "sse4.2", "64bit", "sahf", "lzcnt", "bmi", "avx2", "fma", "cx16"} <= features
    assert "avx512f" not in features and "vnmi" not in features  # (the vmx flags line is not the CPU's)
    assert set(CPU_LEVELS["x86-64-v3"]) <= features
    assert sorted(set(CPU_LEVELS["x86-64-v4"]) - features) == [
        "avx512bw",
        "avx512cd",
        "avx512dq",
        "avx512f",
        "avx512vl",
    ]


def test_aarch64_cpuinfo_is_read_in_llvms_spelling() -> None:
    n1 = cpu_features(ARM_CPUINFO["neoverse-n1"])
    assert n1 is not None
    assert {"fp-armv8", "neon", "fullfp16", "crc", "lse", "rdm", "dotprod", "rcpc", "aes", "sha2"} <= n1
    assert not {"sve", "sve2", "i8mm", "bf16", "jsconv"} & n1
    v2 = cpu_features(ARM_CPUINFO["neoverse-v2"])
    assert v2 is not None
    assert {"sve", "sve2", "i8mm", "bf16", "jsconv", "complxnum", "lse2", "rcpc-immo", "sve2-bitperm"} <= v2
    # fullfp16 is scalar and vector half precision: a CPU listing only the scalar half lacks it
    assert "fullfp16" not in (cpu_features("Features\t: fp asimd fphp") or set())


@pytest.mark.parametrize(
    ("cpu", "best_first"),
    [
        ("cortex-a72", ["armv8-a"]),
        ("neoverse-n1", ["armv8.2-a", "armv8-a"]),
        ("neoverse-v1", ["armv8.2-a+sve", "armv8.2-a", "armv8-a"]),
        ("neoverse-v2", ["armv9-a", "armv8.2-a+sve", "armv8.2-a", "armv8-a"]),
    ],
)
def test_each_aarch64_machine_runs_its_levels_best_first(monkeypatch, cpu: str, best_first: list[str]) -> None:
    monkeypatch.setattr(header_mod, "_HOST", [cpu_features(ARM_CPUINFO[cpu])])
    header = _variant_header(ARM_LEVELS, ARM)
    assert header_mod._missing_features(header["target"]["features"]) == []  # (the gate's: the most portable)
    assert _chosen(header) == (best_first, None)


def test_a_variant_needing_sve_is_never_listed_on_a_cpu_without_it(monkeypatch) -> None:
    monkeypatch.setattr(header_mod, "_HOST", [cpu_features(ARM_CPUINFO["neoverse-n1"])])
    header = _variant_header(["armv8.2-a", "armv9-a", "armv8.2-a+sve"], ARM)
    assert _chosen(header) == (["armv8.2-a"], None)
    order, note = _chosen(header, "armv9-a")
    assert order == ["armv8.2-a"]
    assert note == "AOT_CPU_VARIANT=armv9-a cannot be used (this CPU lacks its features): using armv8.2-a"
    assert header_mod._missing_features(header["variants"][1]["target"]["features"]) == ["sve", "sve2"]


def test_sve_without_sve2_is_not_armv9(monkeypatch) -> None:
    monkeypatch.setattr(header_mod, "_HOST", [cpu_features(ARM_CPUINFO["neoverse-v1"])])
    order, note = _chosen(_variant_header(ARM_LEVELS, ARM), "armv9-a")
    assert order == ["armv8.2-a+sve", "armv8.2-a", "armv8-a"]
    assert note == "AOT_CPU_VARIANT=armv9-a cannot be used (this CPU lacks its features): using armv8.2-a+sve"


def test_an_aarch64_override_this_cpu_runs_comes_first(monkeypatch) -> None:
    monkeypatch.setattr(header_mod, "_HOST", [cpu_features(ARM_CPUINFO["neoverse-v2"])])
    order, note = _chosen(_variant_header(ARM_LEVELS, ARM), "armv8-a")
    assert order == ["armv8-a", "armv9-a", "armv8.2-a+sve", "armv8.2-a"] and note is None


@pytest.mark.parametrize(
    "text",
    [
        "",
        "processor\t: 0\nBogoMIPS\t: 50.00\nCPU part\t: 0xd0c\n",  # (no line of features)
        "processor\t: 0\nFeatures\t:\n",  # (a line listing nothing)
        "processor\t: 0\nflags\t\t:   \n",
        "Features fp asimd\n",  # (no colon: not the line)
    ],
)
def test_a_cpuinfo_without_features_leaves_them_unknown(monkeypatch, text: str) -> None:
    assert cpu_features(text) is None
    monkeypatch.setattr(header_mod, "_HOST", [cpu_features(text)])
    header = _variant_header(ARM_LEVELS, ARM)
    assert header_mod._missing_features(header["target"]["features"]) == []  # (the gate lets it through)
    assert _chosen(header, "armv9-a") == (
        ["armv8-a"],
        "AOT_CPU_VARIANT=armv9-a cannot be used (this CPU lacks its features): using armv8-a",
    )


def test_this_machines_features_are_read_as_its_cpuinfo_text_says() -> None:
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
    except OSError:
        pytest.skip("no /proc/cpuinfo here")
    assert header_mod._read_host_features() == cpu_features(text)


@pytest.mark.parametrize(
    ("level", "cpu"), [("x86-64-v4", None), ("armv9-a", "neoverse-v2"), ("armv8.2-a+sve", "neoverse-v1")]
)
def test_each_top_level_is_read_from_a_cpu_of_it(level: str, cpu: str | None) -> None:
    """Every feature a level requires has its name in /proc/cpuinfo (one that the reading knows)."""
    if cpu is None:
        flags = " ".join(
            {"sse3": "pni", "sahf": "lahf_lm", "lzcnt": "abm", "bmi": "bmi1"}.get(f, f.replace(".", "_"))
            for f in CPU_LEVELS[level]
        )
        text = "flags\t\t: " + flags
    else:
        text = ARM_CPUINFO[cpu]
    assert set(CPU_LEVELS[level]) <= (cpu_features(text) or set())


# ------------------------------------------------------------------------------- levels per architecture
def test_each_architecture_builds_its_own_levels() -> None:
    assert levels_for(X86) == ("generic", "x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4")
    assert levels_for(ARM) == ("generic", *ARM_LEVELS)
    assert levels_for("arm64-apple-macosx14.0.0") == levels_for(ARM)
    assert set(levels_for(X86)) | set(levels_for(ARM)) == set(CPU_LEVELS)
    with pytest.raises(ValueError, match=r"cpu variant 'armv9-a' is not a level of x86_64-unknown-linux-gnu"):
        CpuTarget.variant("armv9-a", triple=X86)
    arm = CpuTarget.variant("armv8.2-a", triple=ARM)
    assert (arm.cpu, arm.features) == ("generic", "+fp-armv8,+neon,+crc,+dotprod,+fullfp16,+lse,+rcpc,+rdm")
    assert CpuTarget.variant("x86-64-v3", triple=X86).cpu == "x86-64-v3"


def test_a_level_of_another_architecture_is_a_configuration_error(tmp_path: Path) -> None:
    from aot.builder.config import check_cpu_name

    host = CpuTarget.named("generic").triple
    other = "armv8.2-a" if triple_arch(host) == "x86_64" else "x86-64-v3"
    (tmp_path / "pyproject.toml").write_text(pyproject("pkg") + f"[tool.aot.cpu]\nvariants = ['generic', '{other}']\n")
    cfg = load_config(tmp_path)  # (reading it is fine: aot inspect reads images of any architecture)
    with pytest.raises(ConfigError) as err:
        check_cpu_name(cfg)
    here = ", ".join(repr(name) for name in levels_for(host))
    assert str(err.value).endswith(
        f"[tool.aot.cpu] variants: cpu variant {other!r} is not a level of this machine ({host}): it builds {here}"
    )


TINY = """\
define void @axpy(double %a, ptr %x, ptr %y, i64 %n) {
entry:
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %px = getelementptr double, ptr %x, i64 %i
  %py = getelementptr double, ptr %y, i64 %i
  %xi = load double, ptr %px
  %yi = load double, ptr %py
  %m = fmul fast double %a, %xi
  %s = fadd fast double %m, %yi
  store double %s, ptr %py
  %next = add i64 %i, 1
  %more = icmp slt i64 %next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}
"""
ELF_MACHINE = {"x86_64": 62, "aarch64": 183}


@pytest.mark.parametrize("level", [name for name in CPU_LEVELS if name != "generic"])
def test_llvm_accepts_every_levels_features(level: str) -> None:
    import llvmlite.binding as llvm

    triple = X86 if level in levels_for(X86) else ARM
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    try:
        llvm.Target.from_triple(triple)
    except RuntimeError as e:
        pytest.skip(f"this llvmlite cannot emit code for {triple}: {e}")
    target = CpuTarget.variant(level, triple=triple)
    made: list[bytes] = []

    def emit() -> None:
        tm = target.target_machine()
        module = llvm.parse_assembly(f'target triple = "{triple}"\n' + TINY)
        module.triple = triple
        module.data_layout = str(tm.target_data)
        made.append(tm.emit_object(module))

    warnings = stderr_of(emit)
    if warnings is None:
        pytest.skip("no file descriptor 2 to read LLVM's warnings from")
    assert "not a recognized" not in warnings, warnings
    assert made and made[0][:4] == b"\x7fELF"
    assert int.from_bytes(made[0][18:20], "little") == ELF_MACHINE[triple_arch(triple)]


# ------------------------------------------------------------------------------------------ configuration
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("variants = []", "[tool.aot.cpu] variants: must name at least one cpu variant"),
        ("variants = 'x86-64-v3'", "[tool.aot.cpu] variants: must be an array of strings"),
        ("variants = ['x86-64-v9']", "[tool.aot.cpu] variants: unknown cpu variant 'x86-64-v9' (expected one of"),
        ("variants = ['x86-64-v2', 'x86-64-v2']", "[tool.aot.cpu] variants: cpu variant 'x86-64-v2' is listed twice"),
        ("cpu = 'x86-64-v3'\nvariants = ['x86-64-v2']", "[tool.aot.cpu] variants: cannot be given with cpu"),
    ],
)
def test_bad_variants_are_configuration_errors(tmp_path: Path, text: str, expected: str) -> None:
    (tmp_path / "pyproject.toml").write_text(pyproject("pkg") + "[tool.aot.cpu]\n" + text + "\n")
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path)
    assert expected in str(err.value)


def test_variants_are_read_in_their_order(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(pyproject("pkg") + "[tool.aot.cpu]\nvariants = ['x86-64-v3', 'generic']\n")
    assert load_config(tmp_path).cpu.variants == ("x86-64-v3", "generic")


# ---------------------------------------------------------------------------------------- a built package
SOURCE = """\
    import aot

    @aot.jit
    def axpy(a: float, x: aot.f64[::1], y: aot.f64[::1]) -> float:
        s = 0.0
        for i in range(x.shape[0]):
            y[i] = a * x[i] + y[i]
            s += y[i]
        return s

    @aot.jit
    def poly(x: float) -> float:
        return ((0.5 * x + 1.25) * x - 3.0) * x + 0.125

    @aot.jit
    def total(n: int) -> float:
        s = 0.0
        for i in range(n):
            s += poly(i * 0.5)
        return s
    """

CALLS = """
import numpy as np
import vk
x = np.linspace(-1.0, 3.0, 37)
got = [vk.axpy(1.5, x, np.ones(37)), vk.poly(0.75), vk.total(50)]
want = [vk.axpy.py_func(1.5, x, np.ones(37)), vk.poly.py_func(0.75), vk.total.py_func(50)]
"""


# The two levels the built package has, on this machine's architecture: the most portable that needs features,
# and the next (the tests that need a CPU running the second skip where it does not).
BUILT = {"x86_64": ("x86-64-v2", "x86-64-v3"), "aarch64": ("armv8-a", "armv8.2-a")}
MACHINE = {"AMD64": "x86_64", "arm64": "aarch64"}.get(platform.machine(), platform.machine())
LOW, HIGH = BUILT.get(MACHINE, BUILT["x86_64"])
PAIR = [LOW, HIGH]


def _best_here(project: Path) -> str:
    return usable_variants(serializer.read_image(image_path(project, "vk")).header)[0][0]["variant"]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    if MACHINE not in BUILT:
        pytest.skip(f"no CPU levels are offered for {MACHINE}")
    project = write_project(
        tmp_path_factory.mktemp("variants") / "vk",
        {
            "pyproject.toml": pyproject("vk") + f"\n[tool.aot.cpu]\nvariants = {json.dumps(PAIR)}\n",
            "vk/__init__.py": SOURCE,
        },
    )
    done = aot_build(project, "--json")
    assert done.rc == 0, done.stderr
    return project


def _fresh_copy(built: Path, tmp_path: Path) -> Path:
    import shutil

    copy = tmp_path / "vk"
    shutil.copytree(built, copy, ignore=shutil.ignore_patterns("__pycache__", "_probes"))
    return copy


def test_one_image_lists_a_library_per_variant(built: Path) -> None:
    folder = built / "vk" / "__aot__"
    header = serializer.read_image(image_path(built, "vk")).header
    assert [v["name"] for v in header["variants"]] == PAIR
    assert [v["native"]["file"] for v in header["variants"]] == [f"vk.cpu.{n}.so" for n in PAIR]
    assert header["native"] == header["variants"][0]["native"]  # (the gate's: the most portable)
    assert len({v["build_id"] for v in header["variants"]}) == 2
    assert sorted(p.name for p in folder.glob("*.so")) == [f"vk.cpu.{n}.so" for n in PAIR]
    required = {f[1:] for f in header["variants"][1]["target"]["features"].split(",")}
    assert required == set(CPU_LEVELS[HIGH]) and required > {f[1:] for f in header["target"]["features"].split(",")}


def test_the_best_variant_is_bound_and_gives_py_funcs_results(built: Path) -> None:
    run = run_python(built, CALLS + "report(got=got, want=want)")
    assert run["got"] == run["want"]
    assert run["stats"]["loaded"] == 3 and run["stats"]["cured"] == 0 and run["stats"]["inferred"] == 0
    assert run["stats"]["variant"] == _best_here(built)
    assert not run["llvmlite"]


@pytest.mark.parametrize("name", PAIR)
def test_aot_cpu_variant_picks_one_this_cpu_runs(built: Path, name: str) -> None:
    if name != LOW and _best_here(built) == LOW:
        pytest.skip(f"this CPU does not run {HIGH}")
    run = run_python(built, CALLS + "report(got=got, want=want)", env={"AOT_CPU_VARIANT": name})
    assert run["got"] == run["want"]
    assert run["stats"]["variant"] == name and run["stats"]["loaded"] == 3
    assert "AOT_CPU_VARIANT" not in run.stderr


def test_an_unknown_aot_cpu_variant_is_one_line_and_the_best(built: Path) -> None:
    run = run_python(built, CALLS + "report(got=got, want=want)", env={"AOT_CPU_VARIANT": "pentium"})
    assert run["got"] == run["want"] and run["stats"]["loaded"] == 3
    assert run["stats"]["variant"] == _best_here(built)
    lines = [line for line in run.stderr.splitlines() if "AOT_CPU_VARIANT" in line]
    assert len(lines) == 1 and f"AOT_CPU_VARIANT=pentium cannot be used (the image has {LOW}, {HIGH})" in lines[0]


def test_a_variant_this_cpu_lacks_is_never_loaded(built: Path) -> None:
    """The child's CPU is made one without AVX2 (its flags are set before the first call), and the v3
    library is asked for: its constructor would say if it were loaded."""
    code = f"""
    import aot.image.header as h
    h._HOST[:] = [{sorted(_flags(*CPU_LEVELS[LOW]))!r}]
    {CALLS.strip().replace(chr(10), chr(10) + "    ")}
    import os
    maps = open(f"/proc/{{os.getpid()}}/maps").read()
    report(got=got, want=want, high_mapped="vk.cpu.{HIGH}.so" in maps)
    """
    run = run_python(built, code, env={"AOT_CPU_VARIANT": HIGH})
    assert run["got"] == run["want"]
    assert run["stats"]["variant"] == LOW and run["stats"]["loaded"] == 3
    assert not run["high_mapped"]
    assert f"AOT_CPU_VARIANT={HIGH} cannot be used (this CPU lacks its features): using {LOW}" in run.stderr


def test_a_missing_library_falls_back_to_the_next_best(built: Path, tmp_path: Path) -> None:
    project = _fresh_copy(built, tmp_path)
    best = _best_here(project)
    if best == LOW:
        pytest.skip(f"this CPU runs only {LOW}: there is no next-best")
    (project / "vk" / "__aot__" / f"vk.cpu.{best}.so").unlink()
    run = run_python(project, CALLS + "report(got=got, want=want)")
    assert run["got"] == run["want"]
    assert run["stats"]["variant"] == LOW
    assert run["stats"]["loaded"] == 3 and run["stats"]["cured"] == 0
    assert f"the {best} library cannot be used (native-missing): using {LOW}" in run.stderr


def test_a_damaged_library_falls_back_too(built: Path, tmp_path: Path) -> None:
    project = _fresh_copy(built, tmp_path)
    best = _best_here(project)
    if best == LOW:
        pytest.skip(f"this CPU runs only {LOW}: there is no next-best")
    so = project / "vk" / "__aot__" / f"vk.cpu.{best}.so"
    so.write_bytes(so.read_bytes()[:-1] + b"\x01")
    run = run_python(project, CALLS + "report(got=got, want=want)")
    assert run["got"] == run["want"] and run["stats"]["variant"] == LOW
    assert "native-checksum-mismatch" in run.stderr


def test_every_library_missing_cures_from_the_ir(built: Path, tmp_path: Path) -> None:
    project = _fresh_copy(built, tmp_path)
    for so in (project / "vk" / "__aot__").glob("*.so"):
        so.unlink()
    run = run_python(project, CALLS + "report(got=got, want=want)")
    assert run["got"] == run["want"]
    assert run["stats"]["variant"] is None and run["stats"]["loaded"] == 0
    assert {e["cause"] for e in run["events"]} == {"native-missing"}


def test_a_rebuild_reuses_every_variants_objects_byte_for_byte(built: Path, tmp_path: Path) -> None:
    project = _fresh_copy(built, tmp_path)
    folder = project / "vk" / "__aot__"
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.suffix in (".so", ".aotimg")}
    for p in folder.iterdir():
        if p.suffix in (".so", ".aotimg"):
            p.unlink()
    assert aot_build(project).rc == 0
    after = {p.name: p.read_bytes() for p in folder.iterdir() if p.suffix in (".so", ".aotimg")}
    assert after == before


def test_dropping_variants_removes_their_libraries(built: Path, tmp_path: Path) -> None:
    project = _fresh_copy(built, tmp_path)
    (project / "pyproject.toml").write_text(pyproject("vk"))
    assert aot_build(project).rc == 0
    folder = project / "vk" / "__aot__"
    assert sorted(p.name for p in folder.glob("*.so")) == ["vk.cpu.so"]
    assert "variants" not in serializer.read_image(image_path(project, "vk")).header
    run = run_python(project, CALLS + "report(got=got, want=want)")
    assert run["got"] == run["want"] and run["stats"]["variant"] is None and run["stats"]["loaded"] == 3


def test_inspect_says_which_variants(built: Path) -> None:
    done = aot_cli("inspect", str(built), "--json")
    assert done.rc == 0, done.stderr
    (image,) = json.loads(done.stdout)["images"]
    assert [v["name"] for v in image["variants"]] == PAIR
    assert image["variants"][1]["file"] == f"vk.cpu.{HIGH}.so"
    text = aot_cli("inspect", str(built)).stdout
    assert f"variants {LOW}, {HIGH}" in text


def test_verify_names_a_missing_variant_library(built: Path, tmp_path: Path) -> None:
    project = _fresh_copy(built, tmp_path)
    assert aot_cli("verify", str(project)).rc == 0
    (project / "vk" / "__aot__" / f"vk.cpu.{HIGH}.so").unlink()
    done = aot_cli("verify", str(project))
    assert done.rc == 1
    assert f"native-missing (vk.cpu.{HIGH}.so)" in done.stdout + done.stderr
