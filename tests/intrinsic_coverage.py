"""Every intrinsic's descriptor is used by some test: at the end of a whole run of the suite (``pytest`` with no
selection), each ``Intrinsic`` must have been typed by its descriptor's rule or lowered by its lowering in this
process, or the run fails naming those that were not.

The descriptors are shared objects (``aot.intrinsics.registry.SPECS``); ``record()`` wraps each one's rule,
binding and lowering in place, so that every path that reaches a descriptor counts. Compiles in other
processes (builds with ``--jobs``, the command line) are not seen, so each intrinsic needs one test that
compiles it in the test process (most do: ``aot.jit`` compiles where it is called).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from aot.intrinsics.registry import SPECS
from aot.ir.ops import Intrinsic

USED: set[Intrinsic] = set()


def _recording(fn: Intrinsic, inner: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        USED.add(fn)
        return inner(*args, **kwargs)

    call.__name__ = inner.__name__
    return call


def record() -> None:
    """Wrap every descriptor's functions to note their use (once per process)."""
    for fn, spec in SPECS.items():
        for field in ("rule", "lower", "bind"):
            inner = getattr(spec, field)
            if inner is not None and not hasattr(inner, "__wrapped_intrinsic__"):
                wrapped = _recording(fn, inner)
                wrapped.__wrapped_intrinsic__ = fn  # type: ignore[attr-defined]
                object.__setattr__(spec, field, wrapped)  # (frozen: the one shared descriptor, changed in place)


def whole_run(config: pytest.Config) -> bool:
    """Whether this run is the whole suite: its test paths, with nothing selected or deselected."""
    option = config.option
    return (
        config.args_source is pytest.Config.ArgsSource.TESTPATHS
        and not option.keyword
        and not option.markexpr
        and not getattr(option, "deselect", None)
        and not getattr(option, "lf", False)
        and not getattr(option, "exitfirst", False)
    )


def unused() -> list[str]:
    return sorted(fn.value for fn in set(SPECS) - USED)
