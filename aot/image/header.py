"""An image's header: the one value a build writes (``new_header``) and the one gate every reader asks.

    header = new_header(CPU, target)                        # the builder, for any owner
    header["build_id"] = build_identity(header["target"], irs)
    incompatibility(header)         → None, or why this process cannot use the image (``compiler-version …``,
                                      ``python-abi …``, ``target …``, ``cpu-features missing here: …``,
                                      ``damaged: header field native.file is missing``)
    usable_variants(header, "x86-64-v3")  → (the libraries this CPU can run, best first, each as a header of
                                      its own; a line for stderr when the named variant cannot be had)
    header_problem(header, complete=False)   → what the tools cannot read in a header, or None
    cpu_features(cpuinfo_text)      → the CPU features a /proc/cpuinfo text lists (x86's ``flags``, aarch64's
                                      ``Features``) in LLVM's spelling: {"sse4.1", "avx2", …}, {"neon", "lse",
                                      "dotprod", …}; None when it lists none (unknown)

The header says which compiler wrote the image, for which Python ABI, owner and target, and which native
artifacts lie beside it (``native``: the library or the PTX; ``cubin``: a PTX image's cubin), each a bare
file name in the image's own folder with its checksum. ``FIELDS`` names every field with its type: the gate
reads nothing it has not checked (msgpack decodes exact types: a bool is no int here). The loader asks the
gate for CPU images, ``aot.runtime.ptximage`` for ptx images; the tools ask it for images of any owner (a ptx
image's target is chosen per device when a kernel is launched, so it has no target checks).

A CPU image built with ``[tool.aot.cpu] variants`` lists them (``variants``: per variant its ``name``, its
``target`` with the features it requires, its library as ``native`` and its ``build_id``); the top-level
``target``, ``native`` and ``build_id`` are those of its most portable variant, so the gate asks what every
variant needs, and ``usable_variants`` which of them this CPU runs (CPU flags are read only when a variant
requires features).

A CPU image and its library share a build identity (``build_identity``: a hash of the target and of every
entry's typed IR, in order); the library says it as ``build_info`` (its ``aot_build_id`` symbol).

Hot path (the gate runs on each package's first call),
guarded by ``tests/bench/instructions.py`` and ``tests/bench/test_import_bench.py``: measure before and after
any change here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from typing import Any

from ..world.fingerprint import COMPILER_VERSION

# The ``cpu`` owner's text, ``aot.world.owners.CPU`` (a test ties the two): importing that module here would
# add a module to every package's first calls.
_CPU = "cpu"

# Every header field with its type, and the fields of its maps (``package`` and the artifacts' ``size`` are
# for the tools).
FIELDS: dict[str, type] = {
    "compiler_version": str,
    "python": str,
    "owner": str,
    "package": str,
    "target": dict,
    "native": dict,
    "cubin": dict,
    "build_id": str,
    "variants": list,
}
_MAPS: dict[str, dict[str, type]] = {
    "target": {"triple": str, "cpu": str, "features": str},
    "native": {"file": str, "crc32": int, "size": int},
    "cubin": {"file": str, "crc32": int, "size": int},
}
_VARIANT: dict[str, type] = {"name": str, "target": dict, "native": dict, "build_id": str}
ARTIFACTS = ("native", "cubin")
"""The header fields that name a file in the image's folder."""

# What every image must have for a loader to use it, and what a CPU image adds: its library and the build
# identity the library must also say.
_REQUIRED = {"compiler_version": (), "python": (), "owner": (), "target": ("triple", "cpu", "features")}
_CPU_REQUIRED = {**_REQUIRED, "native": ("file", "crc32"), "build_id": ()}


def python_abi() -> str:
    """The Python ABI an image is built for and loaded by: ``cpython-311-linux``."""
    return f"{sys.implementation.cache_tag}-{sys.platform}"


def new_header(owner: str, target: Mapping[str, str], package: str, **artifacts: Any) -> dict[str, Any]:
    """The header of an image this compiler writes for ``owner`` and ``target`` (``triple``, ``cpu``,
    ``features``); ``artifacts`` are ``native=…``, ``cubin=…`` (each ``{"file", "crc32", "size"}``)."""
    header: dict[str, Any] = {
        "compiler_version": COMPILER_VERSION,
        "python": python_abi(),
        "owner": owner,
        "package": package,
        "target": {"triple": target["triple"], "cpu": target["cpu"], "features": target["features"]},
    }
    header.update(artifacts)
    return header


def bare_file_name(name: str) -> bool:
    """Whether ``name`` names a file in the folder it is joined to, and nothing else: no separator, no
    ``.`` or ``..``, no NUL (only a library in the image's own folder is ever loaded)."""
    return (
        bool(name)
        and name not in (".", "..")
        and "/" not in name
        and "\\" not in name
        and "\0" not in name
        and (os.altsep is None or os.altsep not in name)
    )


def _type_name(value: Any) -> str:
    return "missing" if value is None else "a " + type(value).__name__


def header_problem(header: Any, complete: bool = True) -> str | None:
    """What is malformed in a header, or None: a field of another type, a file that is not a bare name in
    the image's folder, a package that is not a package name; and, when ``complete`` (a loader's check), a
    field the image's owner needs that is missing. Once per image: readers then take the fields as what
    they are."""
    if type(header) is not dict:
        return "the header is not a map"
    fields: dict[str, Any] = header
    value: Any
    if complete:
        required = _CPU_REQUIRED if fields.get("owner") == _CPU else _REQUIRED
        for name, needed in required.items():
            value = fields.get(name)
            if value is None:
                return f"header field {name} is missing"
            for field in needed:
                if type(value) is dict and value.get(field) is None:
                    return f"header field {name}.{field} is missing"
    for name, kind in FIELDS.items():
        value = fields.get(name)
        if value is None:
            continue
        if type(value) is not kind:
            return f"header field {name} is {_type_name(value)}"
        checked: Any = value  # (of its type)
        for field, inner_kind in _MAPS.get(name, {}).items():
            inner = checked.get(field)
            if inner is not None and type(inner) is not inner_kind:
                return f"header field {name}.{field} is {_type_name(inner)}"
        if name in ARTIFACTS and "file" in checked and not bare_file_name(checked["file"]):
            return f"header field {name}.file is not a file name in the image's folder: {checked['file']!r}"
    variants = fields.get("variants")
    if variants is not None:
        problem = _variants_problem(variants, fields.get("target"))
        if problem is not None:
            return problem
    package = fields.get("package")
    if package is not None and not all(part.isidentifier() for part in package.split(".")):
        return f"header field package is not a package name: {package!r}"
    return None


def _variants_problem(variants: list, target: Any) -> str | None:
    """What is malformed in a header's ``variants`` (each complete, of the image's triple), or None."""
    if not variants:
        return "header field variants is empty"
    for i, variant in enumerate(variants):
        where = f"variants[{i}]"
        if type(variant) is not dict:
            return f"header field {where} is {_type_name(variant)}"
        for name, kind in _VARIANT.items():
            value: Any = variant.get(name)
            if type(value) is not kind:
                return f"header field {where}.{name} is {_type_name(value)}"
            for field, inner_kind in _MAPS.get(name, {}).items():
                inner: Any = variant[name].get(field)
                if type(inner) is not inner_kind:
                    return f"header field {where}.{name}.{field} is {_type_name(inner)}"
        if not bare_file_name(variant["native"]["file"]):
            return f"header field {where}.native.file is not a file name in the image's folder"
        if type(target) is dict and variant["target"]["triple"] != target.get("triple"):
            return f"header field {where}.target.triple is not the image's"
    return None


def incompatibility(header: dict[str, Any], owner: str = _CPU) -> str | None:
    """Why an image with this header cannot be used here by ``owner`` (``damaged: …`` for a malformed
    header), or None. The one gate."""
    if header.get("compiler_version") != COMPILER_VERSION:  # (another version's header may hold anything)
        return f"compiler-version {header.get('compiler_version')} (this is {COMPILER_VERSION})"
    problem = header_problem(header)
    if problem is not None:
        return f"damaged: {problem}"
    if header["python"] != python_abi():
        return f"python-abi {header['python']} (this is {python_abi()})"
    if header["owner"] != owner:
        return f"owner {header['owner']}"
    if owner != _CPU:
        return None
    triple = header["target"]["triple"]
    machine = os.uname().machine
    if not triple.startswith(machine):
        return f"target {triple} (this machine is {machine})"
    missing = _missing_features(header["target"]["features"])
    if missing:
        return f"cpu-features missing here: {','.join(missing[:5])}"
    return None


def usable_variants(header: dict[str, Any], wanted: str | None = None) -> tuple[list[dict[str, Any]], str | None]:
    """The libraries of a CPU image (the gate passed) this CPU can run, best first (the variant requiring the
    most features; ``wanted``, ``AOT_CPU_VARIANT``, first when this CPU runs it), each as the header of
    an image of that one library (``target``, ``native``, ``build_id`` its own; ``variant`` its name); the
    header itself for an image without variants. And a line for stderr when ``wanted`` names no variant of
    the image or one this CPU cannot run (it falls back to the best), else None. A variant whose features
    the CPU lacks is never listed."""
    variants = header.get("variants")
    if variants is None:
        return [header], None
    usable = []
    for i, variant in enumerate(variants):
        features = variant["target"]["features"]
        if "+" not in features:  # (no flags read for a variant requiring none)
            runs = True
        elif _host_features() is None:  # (flags unknown: only the variant the gate passed, the most portable)
            runs = features == header["target"]["features"]
        else:
            runs = not _missing_features(features)
        if runs:
            lib = {"target": variant["target"], "native": variant["native"], "build_id": variant["build_id"]}
            usable.append((-features.count("+"), i, dict(header, **lib, variant=variant["name"])))
    usable.sort(key=lambda u: (u[0], u[1]))
    best = [u[2] for u in usable]
    note = None
    if wanted:
        chosen = [h for h in best if h["variant"] == wanted]
        if chosen:
            best.remove(chosen[0])
            best.insert(0, chosen[0])
        else:
            names = [v["name"] for v in variants]
            why = "this CPU lacks its features" if wanted in names else f"the image has {', '.join(names)}"
            fallback = best[0]["variant"] if best else "none"
            note = f"AOT_CPU_VARIANT={wanted} cannot be used ({why}): using {fallback}"
    return best, note


def build_info(header: Mapping[str, Any]) -> str:
    """What the library of the image with this header says it is (its ``aot_build_id``): the image's build
    identity (``build_identity``) and the target, one per line."""
    target = header["target"]
    return f"{header['build_id']}\n{target['triple']}\n{target['cpu']}\n{target['features']}"


def build_identity(target: Mapping[str, Any], irs: Any) -> str:
    """The build identity an image and its library share: a hash of the target and of every entry's typed
    IR, in order (what the native code was generated from). Content-derived, so builds stay reproducible;
    loading compares it with the library's before binding (``build_info``), and with the IR it reads before
    curing from it."""
    from serializer import checksum  # (BLAKE2b: not imported on the way to binding prebuilt code)

    digest = checksum(f"{target.get('triple')}\n{target.get('cpu')}\n{target.get('features')}".encode(), digest_size=16)
    for ir in irs:
        digest.update(len(ir).to_bytes(8, "little"))
        digest.update(ir)
    return digest.hexdigest()


# ---------------------------------------------------------------------------------------------- CPU features
_HOST: list = []  # the flags once read: [set or None]


def _host_features() -> set[str] | None:
    """CPU features of this machine (Linux), in LLVM's spelling, or None when unknown (read once)."""
    if not _HOST:
        _HOST.append(_read_host_features())
    return _HOST[0]


def _read_host_features() -> set[str] | None:
    try:
        with open("/proc/cpuinfo") as f:
            return _features_of(f)  # (reads up to the first processor's features only)
    except OSError:
        return None


def cpu_features(cpuinfo: str) -> set[str] | None:
    """The CPU features a ``/proc/cpuinfo`` text lists, in LLVM's spelling (``sse4.1``, ``lse``, ``dotprod``), or
    None when it lists none: x86's ``flags`` line or aarch64's ``Features`` line, the first processor's (the
    kernel lists on each processor of an aarch64 machine the features all of them have)."""
    return _features_of(cpuinfo.splitlines())


def _features_of(lines: Iterable[str]) -> set[str] | None:
    for line in lines:
        key, colon, value = line.partition(":")
        key = key.strip()
        if colon and key in _KERNEL_NAMES:
            listed = set(value.split())
            if not listed:  # (a line listing nothing says nothing: as if there were none)
                return None
            named = _KERNEL_NAMES[key]
            # The kernel's names, most of which are LLVM's too (``avx2``, ``sve2``, ``i8mm``), ``sse4_1`` as
            # ``sse4.1``, and the LLVM names of those spelled otherwise when all of their kernel names are listed.
            return (
                listed
                | {name.replace("_", ".") for name in listed}
                | {llvm for llvm, kernel in named.items() if all(k in listed for k in kernel)}
            )
    return None


# The LLVM features the kernel names otherwise (each with the kernel's names, all of which it needs), by the
# cpuinfo line that lists them: x86's ``flags``, aarch64's ``Features`` (the HWCAP names of the Linux kernel's
# Documentation/arch/arm64/elf_hwcaps.rst). Every feature of ``aot.targets.cpu.CPU_LEVELS`` is read (a test
# checks it).
_KERNEL_NAMES: dict[str, dict[str, tuple[str, ...]]] = {
    "flags": {
        "64bit": ("lm",),
        "lzcnt": ("abm",),
        "sse3": ("pni",),
        "bmi": ("bmi1",),
        "sahf": ("lahf_lm",),
    },
    "Features": {
        "fp-armv8": ("fp",),
        "neon": ("asimd",),
        "fullfp16": ("fphp", "asimdhp"),
        "crc": ("crc32",),
        "lse": ("atomics",),
        "rdm": ("asimdrdm",),
        "dotprod": ("asimddp",),
        "rcpc": ("lrcpc",),
        "rcpc-immo": ("ilrcpc",),
        "aes": ("aes", "pmull"),
        "sha2": ("sha1", "sha2"),
        "fp16fml": ("asimdfhm",),
        "jsconv": ("jscvt",),
        "complxnum": ("fcma",),
        "ccpp": ("dcpop",),
        "ccdp": ("dcpodp",),
        "pauth": ("paca", "pacg"),
        "frint3264": ("frint",),
        "rand": ("rng",),
        "lse2": ("uscat",),
        "f32mm": ("svef32mm",),
        "f64mm": ("svef64mm",),
        "sve2-aes": ("sveaes", "svepmull"),
        "sve2-bitperm": ("svebitperm",),
        "sve2-sha3": ("svesha3",),
        "sve2-sm4": ("svesm4",),
    },
}


def _missing_features(features: str) -> list[str]:
    """The features (``+name`` items of an LLVM feature string) this CPU lacks; none when its features are
    unknown."""
    required = [f[1:] for f in features.split(",") if f.startswith("+")]
    if not required:  # (a generic build: no need to read /proc/cpuinfo, which takes a good part of a ms)
        return []
    host = _host_features()
    if host is None:
        return []
    return [name for name in required if name not in host]
