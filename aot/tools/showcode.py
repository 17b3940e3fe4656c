"""The code of an image's entries, regenerated from their stored typed IR: ``aot inspect --ir/--llvm/--asm/--ptx``.

    show_code(sel, "numkit.stats:mean(f64[:])", "ir")     → "func numkit.stats:mean(%a: f64[:]) -> f64  file …"
    show_code(sel, "mean", "llvm")                         → "; numkit.stats:mean(f64[::1]) -> f64 [cpu]\\n
                                                               ; ModuleID = …"   (one per entry of mean)
    find_entries(sel, "numkit.stats:meen")                 → AuditError: … (did you mean numkit.stats:mean?)

Nothing is inferred: the LLVM IR and assembly are what the build generated from the same stored IR (with
the callees it reaches), for the image's own target; PTX is cut from the image's PTX file. METHOD is a key,
``mod:name`` or a bare name, with optional argument types: ``numkit.stats:mean(f64[:])``.
"""

from __future__ import annotations

import difflib
from typing import Any

from ..image.contents import instance_from_entry
from ..image.entries import CodeEntry
from ..world.instances import stored_key
from ..world.owners import CPU, PTX
from .audited import AuditedImage, describe_entry
from .errors import AuditError
from .locate import Selection
from .ptxtext import ptx_functions

PTX_STAGE = "ptx"  # (the stage that shows a ptx image's code)
STAGES = ("ir", "llvm", "asm", PTX_STAGE)
_COMMENT = {"ir": "#", "llvm": ";", "asm": "#", "ptx": "//"}


def parse_method_spec(spec: str) -> tuple[str, tuple[str, ...] | None]:
    """``"pkg.mod:f(f64, i64[:])"`` → ``("pkg.mod:f", ("f64", "i64[:]"))``; without types, ``None``."""
    from ..ir.parser import split_top
    from ..types import SignatureError, parse_type

    text = spec.strip()
    if "(" not in text:
        return text, None
    name, _, rest = text.partition("(")
    if not rest.endswith(")"):
        raise AuditError(f"{spec!r}: expected METHOD or METHOD(argtypes), e.g. 'numkit.stats:mean(f64[:])'")
    inner = rest[:-1].strip()
    try:
        types = tuple(str(parse_type(t)) for t in split_top(inner)) if inner else ()
    except (SignatureError, ValueError) as err:
        raise AuditError(f"{spec!r}: {err}") from None
    return name.strip(), types


def find_entries(sel: Selection, spec: str, owners: set[str] | None = None) -> list[tuple[AuditedImage, CodeEntry]]:
    """The entries ``spec`` names (a key, ``mod:name`` or a bare name, with optional argument types)."""
    name, argtypes = parse_method_spec(spec)
    pool = [(image, entry) for image in sel.images for entry in image.contents.code.values()]
    keys = sorted({entry.method for _, entry in pool})
    matched = [k for k in keys if k == name]
    if not matched:
        matched = [k for k in keys if k.endswith("." + name) or k.split(":", 1)[-1] == name]
    if not matched:
        names = {k: k for k in keys}
        names.update({k.split(":", 1)[-1]: k for k in keys})
        close = difflib.get_close_matches(name, list(names), n=1, cutoff=0.6)
        hint = f" (did you mean {names[close[0]]}?)" if close else ""
        raise AuditError(f"no entry for method {name!r} in {sel.given}{hint}")
    if len(matched) > 1:
        raise AuditError(f"{name!r} is ambiguous: {', '.join(matched)}")
    found = [(image, entry) for image, entry in pool if entry.method == matched[0]]
    if owners is not None:
        kept = [(image, entry) for image, entry in found if entry.owner in owners]
        if not kept:
            have = ", ".join(sorted({entry.owner for _, entry in found}))
            raise AuditError(f"{matched[0]} has no {'/'.join(sorted(owners))} entry in {sel.given} (only {have})")
        found = kept
    if argtypes is not None:
        chosen = [(image, entry) for image, entry in found if entry.argtypes == argtypes]
        if not chosen:
            have = "; ".join(describe_entry(entry) for _, entry in found)
            raise AuditError(f"no entry for {matched[0]}({', '.join(argtypes)}) in {sel.given}; the images hold {have}")
        found = chosen
    return found


def _stored_instances(image: AuditedImage, entry: CodeEntry) -> tuple[Any, dict]:
    """The entry and every entry it reaches, as inferred instances rebuilt from their stored IR."""
    root = str(image.root) if image.root is not None else ""
    instances: dict[tuple, Any] = {}
    stack = [entry.key]
    while stack:
        key = stack.pop()
        if key in instances:
            continue
        stored = image.contents.code.get(key)
        if stored is None:
            raise AuditError(
                f"{image.path}: {describe_entry(entry)} calls {key[0]}({', '.join(key[1])}), "
                f"which the image does not hold"
            )
        try:
            instance = instance_from_entry(stored, root=root)
            _ = instance.function  # (decoded now, to say which entry is damaged)
        except Exception as err:  # damaged IR bytes: msgpack, record or type errors
            raise AuditError(
                f"{image.path}: the stored IR of {describe_entry(stored)} is damaged ({type(err).__name__}: {err})"
            ) from None
        instances[key] = instance
        stack.extend(stored.call_keys)
    return instances[entry.key], instances


def _llvm_module(image: AuditedImage, entry: CodeEntry, opt: int) -> tuple[Any, Any]:
    """The optimised LLVM module the build compiles for ``entry`` (with its callees), and the target machine."""
    import llvmlite.binding as llvm

    from ..codegen.function import CodegenOptions
    from ..codegen.module import build_module, optimize
    from ..targets import CpuTarget

    root, instances = _stored_instances(image, entry)
    boundscheck = {e.method: e.boundscheck for e in image.contents.code.values()}
    target = CpuTarget(image.target["triple"], image.target["cpu"] or "generic", image.target["features"], opt)
    try:
        tm = target.target_machine(jit=False)
    except Exception as err:
        raise AuditError(f"{image.path}: cannot generate code for target {image.target['triple']} ({err})") from None
    try:
        module, _ = build_module(
            entry.method.replace(":", "."),
            [root],
            lambda k: instances[stored_key(k)],
            target,
            lambda key: CodegenOptions(boundscheck=boundscheck.get(key, True)),
        )
        module.triple = target.triple
        module.data_layout = str(tm.target_data)
        llmod = llvm.parse_assembly(str(module))
        llmod.name = entry.method
        llmod.verify()
    except Exception as err:  # IR that decodes but does not make sense (a tampered image), or a codegen bug
        first = (str(err).strip().splitlines() or [""])[0]
        raise AuditError(
            f"{image.path}: cannot generate code from the stored IR of {describe_entry(entry)} "
            f"({type(err).__name__}: {first})"
        ) from None
    optimize(llmod, tm, opt)
    return llmod, tm


def _ptx_text(image: AuditedImage, entry: CodeEntry) -> str:
    path = image.native_path
    if path is None or not path.is_file():
        raise AuditError(f"{image.path}: its PTX file is missing ({path or 'none named in the header'})")
    text = path.read_text("utf-8", "replace")
    functions = ptx_functions(text)
    for name in (entry.symbol, f"try_{entry.symbol}", entry.method.split(":")[-1]):
        if name in functions:
            return functions[name]
    return text


def _ir_after(sel: Selection, image: AuditedImage, entry: CodeEntry, until: str) -> str:
    """The entry's typed IR right after pass ``until``, inferred again from the sources as they are now."""
    from ..diagnostics import CompileError
    from ..ir.printer import print_function
    from ..passes import pipeline
    from ..types import parse_type
    from .verify import current_sources

    if image.root is None:
        raise AuditError(f"{image.path}: the sources of an image outside a <package>/__aot__ folder are unknown")
    cfg = sel.config_for(image.root)
    with current_sources(image.root, [image.package], cfg.workload if cfg else None) as (rt, errors):
        try:
            argtypes = tuple(parse_type(t) for t in entry.argtypes)
            return print_function(pipeline.ir_after(rt.table, entry.method, argtypes, until))
        except (LookupError, CompileError) as err:
            why = errors.get(image.package) or str(err)
            raise AuditError(f"cannot infer {describe_entry(entry)} from {image.root}: {why}") from None


def _opt_for(sel: Selection, image: AuditedImage) -> int:
    cfg = sel.config_for(image.root)
    return cfg.cpu.opt if cfg is not None else 3


def show_code(sel: Selection, spec: str, stage: str, opt: int | None = None, until: str | None = None) -> str:
    """The typed IR, LLVM IR, assembly or PTX of the entries ``spec`` names, from the stored IR only; with
    ``until`` (a pass name, IR only), their IR right after that pass, inferred again from the current sources."""
    if stage not in STAGES or (until is not None and stage != "ir"):
        raise ValueError(stage)
    if until is not None:
        from ..passes import pipeline

        try:
            pipeline.check_pass_name(until)
        except pipeline.UnknownPass as err:
            raise AuditError(str(err)) from None
    if stage == PTX_STAGE:
        owners = {image.owner for image in sel.images} | {e.owner for i in sel.images for e in i.contents.code.values()}
        if PTX not in owners:
            raise AuditError(
                f"{sel.given}: no PTX entries (the images hold {', '.join(sorted(owners))} code; "
                f"build with 'aot build --target ptx')"
            )
        found = find_entries(sel, spec, {PTX})
    elif stage in ("llvm", "asm"):
        found = find_entries(sel, spec, {CPU})
    else:
        found = find_entries(sel, spec)
    parts = []
    for image, entry in found:
        if stage == "ir" and until is not None:
            text = _ir_after(sel, image, entry, until)
        elif stage == "ir":
            from ..ir.printer import print_function

            _, instances = _stored_instances(image, entry)
            text = print_function(instances[entry.key].function)
        elif stage == PTX_STAGE:
            text = _ptx_text(image, entry)
        else:
            level = opt if opt is not None else _opt_for(sel, image)
            llmod, tm = _llvm_module(image, entry, level)
            text = str(llmod) if stage == "llvm" else tm.emit_assembly(llmod)
        if len(found) > 1:
            mark = _COMMENT[stage]
            text = f"{mark} {describe_entry(entry)} -> {entry.rettype} [{entry.owner}]\n{text}"
        parts.append(text if text.endswith("\n") else text + "\n")
    return "\n".join(parts)
