"""The object ``aot inspect --json`` prints (its schema: docs/CI.md): every entry of the selected images.

inspect_json(select("fixtures/numkit"))
  → {"format_version": 2, "compiler_version": "0.12.0", "python": "cpython-311-linux",
     "images": [{"path": "/…/numkit.cpu.aotimg", "owner": "cpu", "target": {…},
                 "entries": [{"method": "numkit.core:absdiff", "argtypes": ["f64", "f64"], …}, …]}]}
dumps(_)   → the same as strict JSON (a non-finite constant of an edge becomes "nan", "inf" or "-inf")
"""

from __future__ import annotations

import json
import math
from typing import Any

import serializer

from ..image.contents import entry_edges
from ..image.entries import CodeEntry
from ..image.header import python_abi
from ..world.fingerprint import COMPILER_VERSION
from ..world.validate import Verdict
from .audited import AuditedImage
from .locate import Selection
from .verify import VerifyReport


def _json_value(value: Any) -> Any:
    """Constants of edges as strict JSON: non-finite floats become strings, tuples lists."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if value != value else ("inf" if value > 0 else "-inf")
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    if isinstance(value, bytes):
        return value.hex()
    return value


def entry_json(image: AuditedImage, entry: CodeEntry, native: int | None, verdict: Verdict | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "method": entry.method,
        "argtypes": list(entry.argtypes),
        "rettype": entry.rettype,
        "owner": entry.owner,
        "min_world": entry.min_world,
        "max_world": entry.max_world,
        "edges": [{"kind": e.kind, "target": e.target, "value": _json_value(e.value)} for e in entry_edges(entry)],
        "symbol": entry.symbol,
        "ir_bytes": len(entry.ir),
        "native_bytes": native or 0,
    }
    if verdict is not None:
        out["status"] = "valid" if verdict.valid else "invalid"
        if not verdict.valid:
            out["reason"] = str(verdict.cause)
    return out


def inspect_json(sel: Selection, report: VerifyReport | None = None) -> dict[str, Any]:
    """The object ``aot inspect --json`` prints (its schema: docs/CI.md, "The JSON")."""
    images = []
    for image in sel.images:
        sizes = image.native_sizes()
        entries = [
            entry_json(image, entry, sizes.get(key), report.verdict(image, key) if report is not None else None)
            for key, entry in image.contents.code.items()
        ]
        shown: dict[str, Any] = {"path": str(image.path.resolve()), "owner": image.owner, "target": image.target}
        if image.variants:  # (``[tool.aot.cpu] variants``: one library each)
            shown["variants"] = image.variants
        images.append({**shown, "entries": entries})
    return {
        "format_version": serializer.FORMAT_VERSION,
        "compiler_version": COMPILER_VERSION,
        "python": python_abi(),
        "images": images,
    }


def dumps(obj: Any) -> str:
    return json.dumps(obj, allow_nan=False, ensure_ascii=False)
