"""Every entry of the selected images against the project's sources as they are now.

    report = verify_sources(select("fixtures/numkit"))
    report.ok                      → True
    # after MAX_ITER = 100 became 200 in numkit/core.py:
    report.stale[0].verdict.cause.text → "edge-changed:numkit.core:MAX_ITER"

Validating against the current sources means importing them: the packages of the images are imported
afresh in this process, in a private world (a runtime of its own, in build mode so that nothing is loaded
or compiled, and a private bytecode cache so a stale ``.pyc`` cannot hide an edit), and everything is put
back afterwards.
"""

from __future__ import annotations

import importlib
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..image.entries import CodeEntry
from ..world.causes import Cause, CauseKind
from ..world.instances import StoredKey
from ..world.validate import Verdict
from .audited import AuditedImage, describe_entry
from .errors import AuditError
from .locate import Selection


@dataclass(frozen=True)
class EntryResult:
    image: AuditedImage
    entry: CodeEntry
    verdict: Verdict

    @property
    def cause(self) -> Cause:
        """Why the entry is invalid (only asked of invalid entries, whose verdicts always name a cause)."""
        cause = self.verdict.cause
        assert cause is not None, f"{describe_entry(self.entry)} is valid: it has no cause"
        return cause


@dataclass
class VerifyReport:
    results: list[EntryResult]
    import_errors: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # image-level: missing images, unusable native code

    @property
    def stale(self) -> list[EntryResult]:
        return [r for r in self.results if not r.verdict.valid]

    @property
    def ok(self) -> bool:
        return not self.stale and not self.import_errors and not self.problems

    def verdict(self, image: AuditedImage, key: StoredKey) -> Verdict | None:
        for r in self.results:
            if r.image is image and r.entry.key == key:
                return r.verdict
        return None

    def root_cause(self, result: EntryResult) -> str | None:
        """For an entry invalid because a callee entry is: the first entry down that chain that is invalid
        for a reason of its own, as ``method(argtypes): cause`` (None when the entry is that one)."""
        by_key = {r.entry.key: r for r in self.results if r.image is result.image}
        current, seen = result, {result.entry.key}
        while current.cause.kind is CauseKind.EDGE_CHANGED:
            callee = current.cause.detail
            following = [
                by_key[k]
                for k in current.entry.call_keys
                if k[0] == callee and k in by_key and not by_key[k].verdict.valid and k not in seen
            ]
            if not following:
                break
            current = following[0]
            seen.add(current.entry.key)
        if current is result or current.entry.method == result.cause.detail:
            return None  # the cause already names it
        return f"{describe_entry(current.entry)}: {current.verdict.cause}"


def _under(name: str, packages: set[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


@contextmanager
def current_sources(root: Path, packages: list[str], skip: str | None = None) -> Iterator[tuple[Any, dict]]:
    """Import ``packages`` (and their submodules, but not ``skip``) from ``root`` afresh, in a private
    runtime in build mode; yields ``(runtime, {package: import error})`` and puts everything back after."""
    from ..builder.driver import import_package
    from ..runtime.state import private_runtime

    tops = {p.split(".")[0] for p in packages}
    saved_modules = {n: m for n, m in sys.modules.items() if _under(n, tops)}
    saved_path, saved_prefix = list(sys.path), sys.pycache_prefix
    cache = tempfile.TemporaryDirectory(prefix="aot-audit-pyc-")
    try:
        for name in saved_modules:
            del sys.modules[name]
        with private_runtime() as rt:
            rt.building = True  # calls run as plain Python: nothing here loads an image or compiles
            sys.path.insert(0, str(root))
            sys.pycache_prefix = cache.name
            importlib.invalidate_caches()
            errors: dict[str, str] = {}
            for package in packages:
                try:
                    import_package(package, skip)
                except (Exception, SystemExit) as err:  # the project's own code: anything can happen
                    errors[package] = f"{type(err).__name__}: {err}".strip()
            yield rt, errors
    finally:
        for name in [n for n in sys.modules if _under(n, tops)]:
            del sys.modules[name]
        sys.modules.update(saved_modules)
        sys.path[:] = saved_path
        sys.pycache_prefix = saved_prefix
        importlib.invalidate_caches()
        cache.cleanup()


def verify_sources(sel: Selection) -> VerifyReport:
    """Check every entry of the selected images against the sources as they are now."""
    from ..world.validate import CurrentWorld, Validator

    report = VerifyReport([], problems=list(sel.missing))
    by_root: dict[Path | None, list[AuditedImage]] = {}
    for image in sel.images:
        by_root.setdefault(image.root, []).append(image)
    for root, images in by_root.items():
        if root is None:
            raise AuditError(
                f"{images[0].path}: cannot verify an image outside a <package>/__aot__ folder (its sources are unknown)"
            )
        cfg = sel.config_for(root)
        packages = sorted({image.package for image in images})
        with current_sources(root, packages, cfg.workload if cfg else None) as (rt, errors):
            for package, message in sorted(errors.items()):
                report.import_errors.append(f"cannot import {package} from {root}: {message}")
            for image in images:
                gate = image.gate()
                failed = errors.get(image.package)
                validator = Validator(image.contents, CurrentWorld(rt.table))
                for key, entry in image.contents.code.items():
                    if gate:
                        verdict = Verdict(False, Cause.image_incompatible(gate))
                    elif failed:
                        verdict = Verdict(False, Cause(CauseKind.IMPORT_FAILED, failed.split(":")[0]))
                    else:
                        verdict = validator.check(key)
                    report.results.append(EntryResult(image, entry, verdict))
                problem = image.native_problem() if not gate else None
                if problem:
                    report.problems.append(
                        f"{image.path}: {problem}: its entries would be compiled again from their IR at first call"
                    )
    return report
