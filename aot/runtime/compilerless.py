"""The runtime without its compiler: a package installed with ``aot`` alone (no llvmlite).

    pip install numkit            # depends on aot (the runtime: msgpack, no llvmlite)
    numkit.core.scaled(2.0)       # a valid entry: loaded from the image, as with the compiler
    # after SCALE changed, the entry is stale and nothing can compile it here:
    # stderr: aot: numkit.core:scaled(f64) runs as plain Python (edge-changed:numkit.core:SCALE): no compiler
    #         is installed (pip install "aot[compiler]")
    aot.events()[-1]              # Event("invalidated", "numkit.core:scaled", ("f64",), cause="edge-changed:…")

An instance that would be inferred or cured runs ``.py_func`` from then on (the dispatcher's ``uncompiled``
set, as for a changed source), with an ``invalidated`` event whose cause is why the image could not serve
it; nothing was reinferred, so nothing is spurious. Strict mode raises ``StrictModeError`` before this is
reached. Not a hot path: it runs once per instance that needed the compiler.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # (not ``typing.TYPE_CHECKING``: importing the runtime imports no ``typing``)
if TYPE_CHECKING:
    from typing import Any

    from ..types import Type
    from ..world.causes import Cause

INSTALL_COMPILER = 'pip install "aot[compiler]"'


def compiler_available() -> bool:
    """Whether llvmlite imports here (asked only when something must be compiled; never cached, so a
    compiler installed into a running session, or a test's import guard lifted, is seen)."""
    try:
        import llvmlite.binding  # noqa: F401
    except ImportError:
        return False
    return True


def run_as_python(dispatcher: Any, rt: Any, argtypes: tuple[Type, ...], cause: Cause) -> None:
    """Calls of ``dispatcher``'s method with ``argtypes`` run ``.py_func`` from now on: ``cause`` kept the
    image from serving them and no compiler is installed. One ``invalidated`` event, one line on stderr."""
    if dispatcher.uncompiled is None:
        dispatcher.uncompiled = set()
    elif argtypes in dispatcher.uncompiled:  # (told once: a valid entry whose code is missing comes back here)
        return
    dispatcher.uncompiled.add(argtypes)
    key = dispatcher.mdef.key
    rt.record("invalidated", key, argtypes, cause=cause)
    print(
        f"aot: {key}({', '.join(map(str, argtypes))}) runs as plain Python ({cause}): "
        f"no compiler is installed ({INSTALL_COMPILER})",
        file=sys.stderr,
    )
