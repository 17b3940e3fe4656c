"""aot: ahead-of-time (and just-in-time) compilation of a Python package's numeric functions.

import aot

@aot.jit
def norm2(a: aot.f64[:]) -> float:
    s = 0.0
    for x in a:
        s += x * x
    return s
"""

from __future__ import annotations

from .diagnostics import CompileError
from .parallel import prange
from .runtime import Event, StrictModeError, jit, runtime
from .runtime import jit as njit  # (what Numba users write: ``from aot import njit, prange``)
from .types import BOOL as boolean
from .types import F32 as f32
from .types import F64 as f64
from .types import I8 as i8
from .types import I16 as i16
from .types import I32 as i32
from .types import I64 as i64
from .types import U8 as u8
from .types import U16 as u16
from .types import U32 as u32
from .types import U64 as u64

__version__ = "0.12.0"

__all__ = [
    "CompileError",
    "Event",
    "NoCompilerError",
    "NoDeviceError",
    "StrictModeError",
    "boolean",
    "events",
    "f32",
    "f64",
    "gpu",
    "i8",
    "i16",
    "i32",
    "i64",
    "jit",
    "kernel",
    "njit",
    "prange",
    "stats",
    "strict",
    "u8",
    "u16",
    "u32",
    "u64",
    "world",
]


TYPE_CHECKING = False  # (not ``typing.TYPE_CHECKING``: importing aot imports no ``typing`` of its own)
if TYPE_CHECKING:
    from . import gpu
    from .runtime.kernel import NoCompilerError, NoDeviceError, kernel

# Imported when first used, not by ``import aot``: a package of CPU methods needs neither (see _LAZY).
_LAZY = {
    "gpu": ("aot.gpu", None),
    "kernel": ("aot.runtime.kernel", "kernel"),
    "NoDeviceError": ("aot.runtime.kernel", "NoDeviceError"),
    "NoCompilerError": ("aot.runtime.kernel", "NoCompilerError"),
}


def __getattr__(name: str) -> object:
    """``aot.gpu``, ``aot.kernel``, ``aot.NoDeviceError`` and ``aot.NoCompilerError``, imported on first use
    (PEP 562)."""
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'aot' has no attribute {name!r}")
    import importlib

    module = importlib.import_module(where[0])
    value = module if where[1] is None else getattr(module, where[1])
    globals()[name] = value
    return value


def world() -> int:
    """The current world: grows by one each time a method is defined or redefined."""
    return runtime().table.world


def events() -> list[Event]:
    """Everything the runtime did to method instances in this process, oldest first."""
    return runtime().events


def stats() -> dict:
    """Counts of events by kind: loaded, inferred, cured, invalidated, spurious; and ``variant``, the CPU
    variant of the prebuilt libraries bound (None when no image with variants is used)."""
    return runtime().stats()


def strict(on: bool = True) -> None:
    """Forbid (or allow again) inference and compilation at run time."""
    runtime().strict = on
