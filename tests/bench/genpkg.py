"""Generate a project of many small numeric methods for the build and import benchmarks.

    info = generate(Path("/tmp/p"), methods=1000, modules=20)
    /tmp/p/pyproject.toml                      [tool.aot] packages = ["benchpkg"]
    /tmp/p/benchpkg/__init__.py                imports every module
    /tmp/p/benchpkg/m00.py … m19.py            50 methods each, a few module constants
    info.calls      → [("benchpkg.m03", "f0153", ("f", "i")), …]   one call per method ("f" float,
                      "i" small int, "a" 1-D float64 array)
    info.edit(root) → rewrites one method's body (a method with callers in other modules) and
                      returns the number of entries a rebuild must build: it and its transitive callers

    $ python3 tests/bench/genpkg.py /tmp/p 1000 20     # the same from the command line

The methods are what a numeric package holds: scalar formulas, Horner polynomials, clamps, integer and
float loops, array reductions, readers of module constants, and callers of methods in earlier modules
(a module imports only modules before it, so there are no import cycles). Every method declares its
signature (annotations, or ``signatures=``), so ``aot build`` needs no workload. Generation is
deterministic: the same arguments give the same files byte for byte.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = "benchpkg"

# Each template: (kind, argument codes, source with {name} and {c0}…{c3} constants, callee slot or None).
# Argument codes: "f" float (f64), "i" int (i64), "a" f64[:] array. Kinds "unary" take and return one float
# and are what callers call.
_TEMPLATES: list[tuple[str, str, str]] = [
    (
        "unary",
        "f",
        """\
@aot.jit
def {name}(x: float) -> float:
    return (({c0} * x + {c1}) * x - {c2}) * x + {c3}
""",
    ),
    (
        "unary",
        "f",
        """\
@aot.jit(signatures=["f64(f64)"])
def {name}(x):
    if x < -{c0}:
        return -{c0}
    if x > {c1}:
        return {c1}
    return x * {c2}
""",
    ),
    (
        "unary",
        "f",
        """\
@aot.jit
def {name}(x: float) -> float:
    return x * GAIN + OFFSET * {c0}
""",
    ),
    (
        "unary",
        "f",
        """\
@aot.jit
def {name}(x: float) -> float:
    return math.sqrt(x * x + {c0}) - {c1}
""",
    ),
    (
        "binary",
        "ff",
        """\
@aot.jit
def {name}(x: float, y: float) -> float:
    return x * {c0} + y * {c1} - {c2}
""",
    ),
    (
        "binary",
        "ff",
        """\
@aot.jit(signatures=["f64(f64, f64)"])
def {name}(x, y):
    d = x - y
    if d < 0.0:
        d = -d
    return d * {c0} + min(x, y)
""",
    ),
    (
        "intloop",
        "i",
        """\
@aot.jit
def {name}(n: int) -> int:
    s = 0
    for k in range(n):
        s += (k * {i0} + {i1}) % {i2}
    return s
""",
    ),
    (
        "intloop",
        "ii",
        """\
@aot.jit
def {name}(a: int, b: int) -> int:
    a = abs(a) + {i0}
    b = abs(b) + {i1}
    while b != 0:
        a, b = b, a % b
    return a
""",
    ),
    (
        "floatloop",
        "fi",
        """\
@aot.jit
def {name}(x: float, n: int) -> float:
    acc = 0.0
    for k in range(n):
        acc = acc * {c0} + x / (k + 1)
        if acc > LIMIT:
            acc = LIMIT
    return acc
""",
    ),
    (
        "array",
        "a",
        """\
@aot.jit(signatures=["f64(f64[:])"])
def {name}(a):
    s = 0.0
    for i in range(len(a)):
        s += a[i] * {c0} - {c1}
    return s
""",
    ),
    (
        "array",
        "a",
        """\
@aot.jit
def {name}(a: aot.f64[:]) -> float:
    best = a[0]
    for i in range(1, len(a)):
        if a[i] > best:
            best = a[i]
    return best * GAIN
""",
    ),
]

_CALLERS: list[str] = [
    """\
@aot.jit
def {name}(x: float) -> float:
    return {callee0}(x) * {c0} + {c1}
""",
    """\
@aot.jit
def {name}(x: float, y: float) -> float:
    return {callee0}(x) + {callee1}(y) * {c0}
""",
]


@dataclass
class Method:
    module: int
    name: str
    kind: str
    args: str
    source: str
    callees: list[tuple[int, str]] = field(default_factory=list)


@dataclass
class Generated:
    root: Path
    package: str
    methods: list[Method]

    @property
    def calls(self) -> list[tuple[str, str, str]]:
        return [(f"{self.package}.m{m.module:02d}", m.name, m.args) for m in self.methods]

    def callers_of(self, target: Method) -> set[str]:
        """Names of every method that reaches ``target`` through calls (not ``target`` itself)."""
        by_callee: dict[str, set[str]] = {}
        for m in self.methods:
            for _, callee in m.callees:
                by_callee.setdefault(callee, set()).add(m.name)
        out: set[str] = set()
        stack = [target.name]
        while stack:
            for caller in by_callee.get(stack.pop(), ()):
                if caller not in out:
                    out.add(caller)
                    stack.append(caller)
        return out

    def edit_target(self) -> Method:
        """A unary method called from another module, with few callers (a typical one-method edit)."""
        candidates = []
        for m in self.methods:
            callers = self.callers_of(m)
            if m.kind == "unary" and callers and "GAIN" not in m.source:
                outside = any(c.module != m.module for c in self.methods if c.name in callers)
                if outside:
                    candidates.append((len(callers), m.module, m.name, m))
        candidates.sort(key=lambda c: c[:3])
        return candidates[0][3]

    def edit(self, root: Path | None = None) -> int:
        """Change the edited method's body in the files under ``root`` (default: where it was generated);
        the number of entries a rebuild must build (the method and its transitive callers)."""
        root = Path(root or self.root)
        target = self.edit_target()
        path = root / self.package / f"m{target.module:02d}.py"
        text = path.read_text()
        head = f"def {target.name}("
        start = text.index(head)
        body = text.index("    return ", start)
        text = text[:body] + "    x = x + 0.5\n" + text[body:]
        path.write_text(text)
        return 1 + len(self.callers_of(target))


def _constants(rng: random.Random) -> dict[str, str]:
    values = {f"c{k}": f"{rng.randint(1, 400) / 100:.2f}" for k in range(4)}
    values.update(i0=str(rng.randint(2, 9)), i1=str(rng.randint(0, 9)), i2=str(rng.randint(11, 97)))
    return values


def generate(
    root: Path, methods: int = 1000, modules: int = 20, package: str = PACKAGE, seed: int = 20240601
) -> Generated:
    """Write ``root/pyproject.toml`` and ``root/<package>/`` (see the module docstring)."""
    if modules < 1 or methods < modules:
        raise ValueError("need at least one method per module")
    rng = random.Random(seed)
    root = Path(root)
    pkg = root / package
    pkg.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(
        f'[project]\nname = "{package}"\nversion = "0.1.0"\n\n[tool.aot]\npackages = ["{package}"]\ntargets = ["cpu"]\n'
    )
    per_module = [methods // modules + (1 if k < methods % modules else 0) for k in range(modules)]
    all_methods: list[Method] = []
    unary: list[Method] = []  # callable from later methods
    counter = 0
    for mod in range(modules):
        module_methods: list[Method] = []
        for _ in range(per_module[mod]):
            name = f"f{counter:04d}"
            counter += 1
            consts = _constants(rng)
            if unary and rng.random() < 0.25:
                two = rng.random() < 0.4
                callees = [rng.choice(unary) for _ in range(2 if two else 1)]
                refs = {}
                for k, callee in enumerate(callees):
                    refs[f"callee{k}"] = callee.name if callee.module == mod else f"m{callee.module:02d}.{callee.name}"
                source = _CALLERS[1 if two else 0].format(name=name, **consts, **refs)
                m = Method(
                    mod,
                    name,
                    "unary" if not two else "binary",
                    "f" if not two else "ff",
                    source,
                    [(c.module, c.name) for c in callees],
                )
            else:
                kind, args, template = _TEMPLATES[rng.randrange(len(_TEMPLATES))]
                m = Method(mod, name, kind, args, template.format(name=name, **consts))
            if m.kind == "unary" and m.args == "f":
                unary.append(m)
            module_methods.append(m)
            all_methods.append(m)
        imports = sorted({c_mod for m in module_methods for c_mod, _ in m.callees if c_mod != mod})
        lines = [
            f'"""Generated module {mod} of {package}: {len(module_methods)} methods."""',
            "",
            "import math",
            "",
            "import aot",
            "",
        ]
        if imports:
            lines.append("from . import " + ", ".join(f"m{k:02d}" for k in imports))
            lines.append("")
        lines += [
            f"GAIN = {1.0 + mod / 100:.2f}",
            f"OFFSET = {0.5 + mod / 50:.2f}",
            f"LIMIT = {100.0 + mod:.1f}",
            "",
            "",
        ]
        text = "\n".join(lines) + "\n\n".join(m.source for m in module_methods)
        (pkg / f"m{mod:02d}.py").write_text(text)
    (pkg / "__init__.py").write_text(
        f'"""{package}: {methods} generated methods over {modules} modules (tests/bench/genpkg.py)."""\n\n'
        + "from . import "
        + ", ".join(f"m{k:02d}" for k in range(modules))
        + "\n"
    )
    return Generated(root, package, all_methods)


def sample_args(codes: str, array) -> tuple:
    """The arguments of one benchmark call: floats 0.75, ints 9, arrays ``array``."""
    return tuple(0.75 if c == "f" else 9 if c == "i" else array for c in codes)


if __name__ == "__main__":
    out = generate(Path(sys.argv[1]), *(int(a) for a in sys.argv[2:4]))
    print(f"{len(out.methods)} methods in {out.root / out.package}")
