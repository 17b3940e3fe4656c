"""``aot.prange``: a ``range`` whose iterations may run on several threads (``@aot.jit(parallel=True)``).

    @aot.jit(parallel=True)
    def total(a: aot.f64[:]) -> float:
        s = 0.0
        for i in aot.prange(len(a)):   # plain Python, or a method without parallel=True: exactly range
            s += a[i]
        return s

Run as Python (``.py_func``) ``prange(...)`` is ``range(...)``. The frontend recognises this object (and
``numba.prange``) by identity when it lowers a ``for`` loop; nothing here imports the compiler.
"""

from __future__ import annotations

TYPE_CHECKING = False  # (not ``typing.TYPE_CHECKING``: ``import aot`` imports no ``typing``)
if TYPE_CHECKING:
    from typing import Any


class prange:  # noqa: N801  (named as the builtin it stands for)
    """``prange(stop)``, ``prange(start, stop[, step])``: ``range`` with permission to run in parallel."""

    __slots__ = ()

    def __new__(cls, *args: Any) -> range:  # type: ignore[misc]
        return range(*args)


def is_prange(value: Any) -> bool:
    """Whether ``value`` (a global's value) is ``aot.prange`` or ``numba.prange``."""
    if value is prange:
        return True
    module = getattr(value, "__module__", None) or ""
    return getattr(value, "__name__", None) == "prange" and module.split(".")[0] == "numba"
