"""Structure-aware fuzzing of a built image and its library (issue 23): right results or a clean rejection.

    AOT_FUZZ_MUTANTS=3000 AOT_FUZZ_SEED=7 python3 -m pytest -q tests/test_fuzz_image.py     # a long run
    python3 tests/test_fuzz_image.py 3000 7                                           # the same, with figures

A small package (``fuzzpkg``: two signatures per method, calls across modules, mutual recursion, module
constants, int→float conversions) is built once, with a second build whose ``sq`` differs (another build's
library). Each mutant is a copy of the built package with one to three mutations, then imported in a fresh
interpreter that calls every method and compares with ``.py_func``. The outcome must be right results,
with or without warnings and events with causes; never a wrong value, an exception Python would not raise,
a traceback from inside aot or a crash (a signal).

Mutations decode the image's tables, change a field and write the image again with every container
checksum recomputed (``serializer.write_image``), so that they reach past the CRCs: fields of code records
(argument types, return type, method, edges and their numbers, symbol, state, flags) changed, swapped
between records or given another type; the index (keys, where methods start, strings, constants); the
definitions; header fields (values and types, the library's name and checksum); the typed IR (bytes flipped,
truncated, extended, swapped between records); the raw bytes of any table, offsets included, with that
table's checksum recomputed; records dropped or duplicated; and the library (another build's, with the
header's checksum made to fit or not; truncated; bytes flipped; deleted). Each mutant runs in one of three
scenarios: as built, with the library deleted (every entry is cured from its IR) or with a caller edited
(its callees' entries seed its reinference from their IR).

What is not recomputed is what stands for integrity rather than damage: the library's checksum in the
header (a library rewritten with its checksum made to fit is a forgery: its code could do anything) and the
build identity (a hash of the IR). Two forger's mutations are made anyway, because their outcome must still
be clean: another build's library with the header's checksum made to fit (the build identity it carries
differs), and IR truncated, extended with garbage, replaced or swapped between records with the build
identity recomputed (it no longer decodes, or is not its entry's).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import struct
import subprocess
import sys
import time
import zlib
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import msgpack
import pytest

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]  # (as a script)

import serializer  # noqa: E402
from aot.image.entries import INDEXED_TABLES  # noqa: E402
from aot.image.header import build_identity  # noqa: E402
from buildsupport import aot_build, base_env, pyproject, write_project  # noqa: E402

FUZZPKG = {
    "pyproject.toml": pyproject("fuzzpkg"),
    "fuzzpkg/__init__.py": "from . import a, b\n",
    "fuzzpkg/a.py": """\
        import math

        import aot

        K = 3
        SCALE = 2.5
        STEPS = (1.0, 2.0)


        @aot.jit(signatures=["f64(f64)", "i64(i64)"])
        def sq(x):
            return x * x


        @aot.jit
        def poly(x: float) -> float:
            return SCALE * sq(x) + K * x + STEPS[1]


        @aot.jit(signatures=["f64(f64, f64)", "i64(i64, i64)"])
        def diff(u, v):
            return abs(u - v)


        @aot.jit
        def fact(n: int) -> int:
            r = 1
            for i in range(2, n + 1):
                r *= i
            return r


        @aot.jit
        def root(x: float) -> float:
            return math.sqrt(x) + sq(x)
        """,
    "fuzzpkg/b.py": """\
        import aot

        from . import a
        from .a import fact, poly


        @aot.jit
        def combo(x: float, n: int) -> float:
            return poly(x) + fact(n) + a.diff(x, 1.0)


        @aot.jit
        def even(n: int) -> bool:
            if n == 0:
                return True
            return odd(n - 1)


        @aot.jit
        def odd(n: int) -> bool:
            if n == 0:
                return False
            return even(n - 1)


        @aot.jit
        def lerp(u: float, v: float, t: float) -> float:
            return u + (v - u) * t


        @aot.jit
        def clamp(x: float, lo: float, hi: float) -> float:
            if x < lo:
                return lo
            if x > hi:
                return hi
            return x
        """,
}

# Calls in a fresh interpreter: every method, both signatures, ints converted to floats (twice: the second
# call goes through the specialization's builtin), each result compared with plain Python's.
PROBE = """\
import json, sys, traceback
out = {"bad": [], "aot_traceback": None}
try:
    import aot
    from fuzzpkg import a, b
    calls = [(a.sq, (1.5,)), (a.sq, (7,)), (a.poly, (2.0,)), (a.diff, (1.0, 3.5)), (a.diff, (3, 10)),
             (a.fact, (10,)), (a.root, (4.0,)), (b.combo, (2.0, 5)), (b.even, (10,)), (b.odd, (7,)),
             (b.lerp, (0.0, 10.0, 0.25)), (b.lerp, (0, 10, 0.25)), (b.lerp, (0, 10, 0.5)),
             (b.clamp, (1.5, 0.0, 1.0)), (b.clamp, (2, 0, 1)), (b.clamp, (3, 0, 1)), (a.sq, (2.5,))]
    for f, args in calls:
        try:
            got = ("value", f(*args))
        except Exception as e:
            got = ("raised", type(e).__name__, "".join(traceback.format_exception(e))[-2000:])
        if f in (b.clamp, b.lerp):  # (declared float parameters: ints are converted, as Python would not)
            args = tuple(map(float, args))
        try:
            want = ("value", f.py_func(*args))
        except Exception as e:
            want = ("raised", type(e).__name__, "")
        if got[:2] != want[:2] or type(got[-1]) is not type(want[-1]):
            out["bad"].append([f.__name__, repr(args), repr(got), repr(want)])
    out["events"] = [[e.kind, e.method, list(e.argtypes), e.cause] for e in aot.events()]
except BaseException:
    out["aot_traceback"] = traceback.format_exc()[-3000:]
print(json.dumps(out))
"""

SCENARIOS = ("as-built", "no-library", "caller-edited")


def build(root: Path, sq_body: str = "x * x") -> Path:
    project = write_project(root, FUZZPKG)
    a = project / "fuzzpkg" / "a.py"
    a.write_text(a.read_text().replace("    return x * x\n", f"    return {sq_body}\n"))
    done = aot_build(project)
    assert done.rc == 0, done.stderr
    return project


def folder_of(project: Path) -> Path:
    return project / "fuzzpkg" / "__aot__"


# ------------------------------------------------------------------------------------------- mutations


class Mutant:
    """A copy of the built project being mutated: its image as decoded tables, written back at the end."""

    def __init__(self, project: Path, other: Path, rng: random.Random):
        self.project, self.other, self.rng = project, other, rng
        self.image = folder_of(project) / "fuzzpkg.cpu.aotimg"
        self.so = folder_of(project) / "fuzzpkg.cpu.so"
        decoded = serializer.read_image(self.image)
        self.header: dict = json.loads(json.dumps(decoded.header))
        self.tables: dict = {k: v for k, v in decoded.tables.items() if not k.endswith(".offsets")}
        self.forged_identity = False
        self.raw: list[Callable[[bytes], bytes]] = []  # byte-level edits of the written image
        self.done: list[str] = []

    def write(self) -> None:
        if self.forged_identity and isinstance(self.header.get("target"), dict):
            self.header["build_id"] = build_identity(
                self.header["target"], [r[0] for r in self.tables.get("ir", []) if r and type(r[0]) is bytes]
            )
        indexed = [t for t in INDEXED_TABLES if t in self.tables]
        serializer.write_image(self.image, self.header, self.tables, indexed)
        for edit in self.raw:
            self.image.write_bytes(edit(self.image.read_bytes()))


def _other_value(rng: random.Random, value: Any) -> Any:
    """A value of another type, or a nearby one of the same type."""
    choices: list[Any] = [None, True, False, 0, -1, 2**63 - 1, 1.5, "", "x", "f64", "(f64)", b"\x00", [], [0], {}]
    if type(value) is int:
        choices += [value + 1, value - 1, value * 2 + 7, -value - 1]
    if type(value) is str:
        choices += [value + "x", value[:-1], value.upper(), value.replace("f64", "i64")]
    if type(value) is list and value:
        choices += [value[:-1], value + value[:1], list(reversed(value))]
    return rng.choice(choices)


def m_code_field(m: Mutant) -> None:
    code = m.tables["code"]
    rec = m.rng.choice(code)
    field = m.rng.randrange(len(rec))
    if field == 4 and rec[4] and m.rng.random() < 0.7:  # an edge: one of its numbers, or the edge list
        edges = rec[4]
        how = m.rng.choice(["number", "drop", "duplicate", "swap-kinds"])
        e = m.rng.randrange(len(edges))
        if how == "number":
            edges[e] = list(edges[e])
            edges[e][m.rng.randrange(3)] = _other_value(m.rng, edges[e][0])
        elif how == "drop":
            del edges[e]
        elif how == "duplicate":
            edges.append(edges[e])
        else:
            other = m.rng.choice(code)
            if other[4]:
                edges[e] = list(m.rng.choice(other[4]))
        m.done.append(f"code-edge-{how}")
        return
    if field == 5 and m.rng.random() < 0.6:
        rec[5] = m.rng.choice(code)[5]  # another entry's symbol
        m.done.append("code-symbol-of-another")
        return
    if field in (0, 1, 2, 3, 8) and m.rng.random() < 0.6:  # a number naming a key or string: another valid one
        strings = m.tables["index"][0][3]
        keys = m.tables["index"][0][0].split("\n")
        rec[field] = m.rng.randrange(len(keys) if field == 0 else len(strings))
        m.done.append(f"code-field-{field}-renumbered")
        return
    rec[field] = _other_value(m.rng, rec[field])
    m.done.append(f"code-field-{field}")


def m_swap_fields(m: Mutant) -> None:
    code = m.tables["code"]
    i, j = m.rng.randrange(len(code)), m.rng.randrange(len(code))
    field = m.rng.choice([0, 1, 2, 4, 5, 8])
    code[i][field], code[j][field] = code[j][field], code[i][field]
    m.done.append(f"swap-field-{field}")


def m_index(m: Mutant) -> None:
    index = m.tables["index"][0]
    what = m.rng.choice(["keys", "code-starts", "definition-starts", "string", "constant", "field-type"])
    if what == "keys":
        keys = index[0].split("\n")
        i = m.rng.randrange(len(keys))
        keys[i] = m.rng.choice([keys[i] + "x", keys[i].replace(":", "."), keys[(i + 1) % len(keys)]])
        index[0] = "\n".join(keys)
    elif what in ("code-starts", "definition-starts"):
        blob = bytearray(index[1 if what == "code-starts" else 2])
        if blob:
            at = m.rng.randrange(len(blob) // 4) * 4
            value = struct.unpack_from("<I", blob, at)[0]
            struct.pack_into("<I", blob, at, m.rng.choice([value + 1, max(value - 1, 0), 0, 2**32 - 1]))
        index[1 if what == "code-starts" else 2] = bytes(blob)
    elif what == "string":
        strings = index[3]
        i = m.rng.randrange(len(strings))
        s = strings[i]
        strings[i] = m.rng.choice(
            [
                s.replace("f64", "i64"),
                s.replace("i64", "f64"),
                s + "x",
                "call",
                "global",
                "lookup",
                "(f64, f64)",
                "boolean",
                "invalid",
                strings[(i + 1) % len(strings)],
            ]
        )
    elif what == "constant":
        constants = index[4]
        if constants:
            i = m.rng.randrange(len(constants))
            constants[i] = _other_value(m.rng, constants[i])
    else:
        i = m.rng.randrange(len(index))
        index[i] = _other_value(m.rng, index[i])
    m.done.append(f"index-{what}")


def m_definitions(m: Mutant) -> None:
    blob = bytearray(m.tables["definitions"][0][0])
    blob[m.rng.randrange(len(blob))] ^= 1 << m.rng.randrange(8)
    m.tables["definitions"][0][0] = bytes(blob)
    m.done.append("definitions-byte")


HEADER_PATHS = [
    ("compiler_version",),
    ("python",),
    ("owner",),
    ("package",),
    ("target",),
    ("target", "triple"),
    ("target", "cpu"),
    ("target", "features"),
    ("native",),
    ("native", "file"),
    ("native", "crc32"),
    ("native", "size"),
    ("build_id",),
]


def m_header(m: Mutant) -> None:
    path = m.rng.choice(HEADER_PATHS)
    holder = m.header
    for key in path[:-1]:
        holder = holder.get(key) if isinstance(holder, dict) else None
    if not isinstance(holder, dict):
        return
    if m.rng.random() < 0.15:
        holder.pop(path[-1], None)
        m.done.append(f"header-{'.'.join(path)}-dropped")
        return
    holder[path[-1]] = _other_value(m.rng, holder.get(path[-1]))
    m.done.append(f"header-{'.'.join(path)}")


def m_library_name(m: Mutant) -> None:
    folder = folder_of(m.project)
    name = m.rng.choice(
        [
            "../x.so",
            "",
            ".",
            "..",
            "a/b.so",
            "fuzzpkg.cpu.aotimg",
            "fuzzpkg.cpu.objects",
            "missing.so",
            "nul\x00.so",
            "/etc/passwd",
            "../../fuzzpkg/__aot__/fuzzpkg.cpu.so",
            "fuzzpkg.cpu.so/",
            ".lock",
        ]
    )
    native = m.header.setdefault("native", {})
    if isinstance(native, dict):
        native["file"] = name
        target = folder / name if "\x00" not in name else None
        if target is not None and target.is_file() and m.rng.random() < 0.7:  # the checksum made to fit
            data = target.read_bytes()
            native["crc32"], native["size"] = zlib.crc32(data), len(data)
    m.done.append("library-name")


def m_ir(m: Mutant) -> None:
    ir = m.tables["ir"]
    i = m.rng.randrange(len(ir))
    data = bytearray(ir[i][0])
    how = m.rng.choice(
        [
            "flip",
            "truncate",
            "extend",
            "swap",
            "garbage",
            "forged-truncate",
            "forged-extend",
            "forged-swap",
            "forged-garbage",
        ]
    )
    if how.endswith("flip"):
        for _ in range(m.rng.randint(1, 3)):
            data[m.rng.randrange(len(data))] ^= 1 << m.rng.randrange(8)
    elif how.endswith("truncate"):
        data = data[: m.rng.randrange(len(data))]
    elif how.endswith("extend"):
        data += bytes(m.rng.randrange(256) for _ in range(m.rng.randint(1, 8)))
    elif how.endswith("swap"):
        j = m.rng.randrange(len(ir))
        data = bytearray(ir[j][0])
        if i != j:
            ir[j] = [bytes(ir[i][0])]
    else:
        data = bytearray(
            msgpack.packb(
                m.rng.choice([[1, 2, 3], ["f", [], "x", [1, 1, 1, 1], [], "f64", []], {"a": 1}, "text", None])
            )
        )
    ir[i] = [bytes(data)]
    if how.startswith("forged"):
        m.forged_identity = True
    m.done.append(f"ir-{how}")


def m_records(m: Mutant) -> None:
    table = m.rng.choice(["code", "ir", "methods", "index", "definitions"])
    rows = m.tables.get(table)
    how = m.rng.choice(["drop-record", "duplicate-record", "drop-table"])
    if how == "drop-table":
        m.tables.pop(table, None)
    elif rows:
        i = m.rng.randrange(len(rows))
        if how == "drop-record":
            del rows[i]
        else:
            rows.insert(i, rows[i])
    m.done.append(f"{table}-{how}")


def m_segment_bytes(m: Mutant) -> None:
    """A byte of a table's segment flipped in the written file (offsets tables too), and that table's
    checksum in the directory recomputed, so that the segment is read and decoded."""
    rng_state = m.rng.random()

    def edit(data: bytes) -> bytes:
        rng = random.Random(rng_state)
        magic, version, header_len, dir_len, header_crc, dir_crc = struct.unpack_from("<8sIIQII", data)
        start = 32 + header_len
        directory = msgpack.unpackb(data[start : start + dir_len])
        segments, at = [], start + dir_len
        for _name, length, _crc, *_rest in directory:
            segments.append(bytearray(data[at : at + length]))
            at += length
        k = rng.randrange(len(segments))
        if not segments[k]:
            return data
        segments[k][rng.randrange(len(segments[k]))] ^= 1 << rng.randrange(8)
        directory[k][2] = zlib.crc32(segments[k])
        new_dir = msgpack.packb(directory)
        head = struct.pack("<8sIIQII", magic, version, header_len, len(new_dir), header_crc, zlib.crc32(new_dir))
        return head + data[32:start] + new_dir + b"".join(segments)

    m.raw.append(edit)
    m.done.append("segment-byte")


def m_library(m: Mutant) -> None:
    how = m.rng.choice(["other-build", "other-build-fitted", "truncate", "flip", "delete"])
    other = folder_of(m.other) / "fuzzpkg.cpu.so"
    if how.startswith("other-build"):
        shutil.copy(other, m.so)
        if how.endswith("fitted") and isinstance(m.header.get("native"), dict):
            data = other.read_bytes()
            m.header["native"]["crc32"], m.header["native"]["size"] = zlib.crc32(data), len(data)
    elif how == "truncate":
        data = m.so.read_bytes()
        m.so.write_bytes(data[: m.rng.randrange(len(data))])
    elif how == "flip":
        data = bytearray(m.so.read_bytes())
        for _ in range(m.rng.randint(1, 4)):
            data[m.rng.randrange(len(data))] ^= 1 << m.rng.randrange(8)
        m.so.write_bytes(bytes(data))
    else:
        m.so.unlink()
    m.done.append(f"library-{how}")


MUTATIONS: list[tuple[Callable[[Mutant], None], int]] = [
    (m_code_field, 6),
    (m_swap_fields, 3),
    (m_index, 4),
    (m_definitions, 1),
    (m_header, 3),
    (m_library_name, 2),
    (m_ir, 4),
    (m_records, 2),
    (m_segment_bytes, 3),
    (m_library, 3),
]


# --------------------------------------------------------------------------------------------- one mutant


def make_mutant(built: Path, other: Path, work: Path, seed: int) -> tuple[Path, list[str], str]:
    rng = random.Random(seed)
    project = work / f"m{seed}"
    shutil.copytree(built, project, ignore=shutil.ignore_patterns("__pycache__"))
    m = Mutant(project, other, rng)
    functions, weights = zip(*MUTATIONS)
    for mutate in rng.choices(functions, weights, k=rng.choice([1, 1, 1, 2, 3])):
        try:
            mutate(m)
        except (IndexError, KeyError, TypeError, AttributeError, ValueError, OSError):
            pass  # (a mutation that does not apply to what an earlier one left: a library deleted already)
    try:
        m.write()
    except (TypeError, ValueError, serializer.ImageError):
        m.done.append("unwritable")  # (nothing an image can hold: a tool would never write it either)
    scenario = rng.choice(SCENARIOS)
    if scenario == "no-library" and m.so.exists():
        m.so.unlink()
    elif scenario == "caller-edited":
        b = project / "fuzzpkg" / "b.py"
        b.write_text(b.read_text().replace("a.diff(x, 1.0)", "a.diff(x, 2.0)"))
    return project, m.done, scenario


def run_mutant(built: Path, other: Path, work: Path, seed: int) -> dict[str, Any]:
    project, done, scenario = make_mutant(built, other, work, seed)
    proc = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        cwd=str(work),
        env=base_env(path=[project]),
        timeout=300,
    )
    result: dict[str, Any] = {"seed": seed, "mutations": done, "scenario": scenario, "rc": proc.returncode}
    lines = proc.stdout.strip().splitlines()
    try:
        out = json.loads(lines[-1])
    except (IndexError, ValueError):
        out = None
    problems = []
    if proc.returncode < 0:
        problems.append(f"crash: signal {-proc.returncode}")
    elif out is None:
        problems.append(f"no report (rc={proc.returncode}): {proc.stderr[-1500:]}")
    else:
        if out["aot_traceback"]:
            problems.append(f"traceback: {out['aot_traceback']}")
        for name, args, got, want in out["bad"]:
            problems.append(f"{name}{args}: got {got[:400]}, Python gives {want[:200]}")
        if "Traceback" in proc.stderr:
            problems.append(f"traceback on stderr: {proc.stderr[-1500:]}")
        result["causes"] = sorted({e[3].split(":")[0] for e in out.get("events", []) if e[3]})
        result["loaded"] = sum(e[0] == "loaded" for e in out.get("events", []))
    result["warned"] = bool(proc.stderr.strip())
    result["problems"] = problems
    shutil.rmtree(project, ignore_errors=True)
    return result


def fuzz(built: Path, other: Path, work: Path, count: int, seed: int, jobs: int = 2) -> list[dict[str, Any]]:
    seeds = [seed * 1_000_003 + i for i in range(count)]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda s: run_mutant(built, other, work, s), seeds))


def summary(results: list[dict[str, Any]], seconds: float) -> str:
    kinds = Counter(k for r in results for k in r["mutations"])
    causes = Counter(c for r in results for c in r.get("causes", []))
    bad = [r for r in results if r["problems"]]
    served = sum(1 for r in results if not r["problems"] and not r["warned"] and not r.get("causes"))
    return (
        f"{len(results)} mutants in {seconds:.0f} s: {len(bad)} wrong, {served} served from the image "
        f"without a word, {len(results) - len(bad) - served} rejected cleanly (warnings or causes)\n"
        f"  scenarios: {dict(Counter(r['scenario'] for r in results))}\n"
        f"  mutations: {dict(sorted(kinds.items()))}\n  causes: {dict(sorted(causes.items()))}"
    )


# ------------------------------------------------------------------------------------------------ the test


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("fuzz")
    return build(root / "built"), build(root / "other", "x * x + 1")


def test_mutated_images_give_right_results_or_a_clean_rejection(builds, tmp_path):
    """Seeded and bounded (about a minute here; ``AOT_FUZZ_MUTANTS`` and ``AOT_FUZZ_SEED`` for more)."""
    count = int(os.environ.get("AOT_FUZZ_MUTANTS", "250"))
    seed = int(os.environ.get("AOT_FUZZ_SEED", "23"))
    started = time.monotonic()
    results = fuzz(*builds, tmp_path, count, seed)
    print(summary(results, time.monotonic() - started))
    bad = [r for r in results if r["problems"]]
    assert not bad, "\n\n".join(
        f"seed {r['seed']} ({r['scenario']}, {r['mutations']}):\n" + "\n".join(r["problems"]) for r in bad[:5]
    )


if __name__ == "__main__":  # python3 tests/test_fuzz_image.py COUNT [SEED]
    import tempfile

    n, first = int(sys.argv[1]) if len(sys.argv) > 1 else 1000, int(sys.argv[2]) if len(sys.argv) > 2 else 23
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        pair = build(base / "built"), build(base / "other", "x * x + 1")
        (base / "work").mkdir()
        t0 = time.monotonic()
        found = fuzz(*pair, base / "work", n, first)
        print(summary(found, time.monotonic() - t0))
        for r in [r for r in found if r["problems"]][:20]:
            print(
                f"\nseed {r['seed']} ({r['scenario']}, {r['mutations']}):\n"
                + "\n".join(p[:3000] for p in r["problems"])
            )
