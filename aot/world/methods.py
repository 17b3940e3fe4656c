"""Methods and the method table.

    >>> table = MethodTable()
    >>> m = table.define(py_func)            # key 'pkg.mod:qualname', world grows by one
    >>> table.method_for(helper_function)     # plain functions become methods on first use

A ``MethodDef`` is one definition of a module-level function: its key, the Python function, the options
given to ``@aot.jit``, and (lazily) its untyped IR. Name lookups go through the function's own closure
cells, globals and builtins, exactly as Python resolves them when the function runs.
"""

from __future__ import annotations

import builtins
import types as pytypes

from .fingerprint import trailer

TYPE_CHECKING = False  # (not ``typing.TYPE_CHECKING``: ``import aot`` imports no ``typing`` for this module)
if TYPE_CHECKING:  # the IR and the frontend load only when something is compiled or validated
    from collections.abc import Callable
    from typing import Any

    from ..ir import Function
    from ..ir.ops import Intrinsic

MAX_WORLD = 2**64 - 1
"""The upper bound of an open-ended world range (a code instance valid from its world on)."""

MISSING = NameError  # sentinel for "name not found" (a class, so it's never a user constant)


class MethodOptions:
    """Options of ``@aot.jit`` that change the compiled code (part of the fingerprint): ``boundscheck``,
    ``kernel``, ``parallel`` (``prange`` loops run on threads: ``aot.codegen.parallel``) and ``nogil`` (the
    wrappers release the GIL around the native body). Immutable, compared and hashed by its fields.

    (Written out, not a frozen dataclass: ``import aot`` makes some, and would import ``dataclasses``.)"""

    __slots__ = ("boundscheck", "kernel", "parallel", "nogil", "trailer")
    boundscheck: bool
    kernel: bool
    parallel: bool
    nogil: bool
    trailer: bytes

    def __init__(self, boundscheck: bool = True, kernel: bool = False, parallel: bool = False, nogil: bool = False):
        setattr_ = object.__setattr__
        setattr_(self, "boundscheck", boundscheck)
        setattr_(self, "kernel", kernel)
        setattr_(self, "parallel", parallel)
        setattr_(self, "nogil", nogil)
        # What a method's definition ends with (``aot.world.fingerprint``), made once per options value.
        setattr_(self, "trailer", trailer(self.cache_key()))

    def _fields(self) -> tuple[bool, bool, bool, bool]:
        return (self.boundscheck, self.kernel, self.parallel, self.nogil)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MethodOptions) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (
            f"MethodOptions(boundscheck={self.boundscheck}, kernel={self.kernel}, parallel={self.parallel}, "
            f"nogil={self.nogil})"
        )

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: method options are immutable")

    def cache_key(self) -> str:
        key = f"boundscheck={int(self.boundscheck)},kernel={int(self.kernel)}"
        extra = [name for name in ("parallel", "nogil") if getattr(self, name)]  # (only when set: older keys hold)
        return key + "".join(f",{name}=1" for name in extra)


def method_key(py_func: Callable) -> str:
    return f"{py_func.__module__}:{py_func.__qualname__}"


class MethodDef:
    """One definition of a method (a redefinition makes a new ``MethodDef`` under the same key): its
    ``key``, ``py_func``, ``options``, the ``world`` it was defined in, the runtime's ``dispatcher`` of the
    method object (made on its first call), the ``@aot.jit`` object ``method`` of this definition (None for
    other callees and kernels) and its ``signatures=`` strings (parsed when first needed)."""

    __slots__ = ("key", "py_func", "options", "world", "dispatcher", "method", "signatures", "_untyped")

    def __init__(
        self,
        key: str,
        py_func: Callable,
        options: MethodOptions | None = None,
        world: int = 0,
        dispatcher: Any = None,
        method: Any = None,
        signatures: Any = None,
    ):
        self.key = key
        self.py_func = py_func
        self.options = options if options is not None else MethodOptions()
        self.world = world
        self.dispatcher = dispatcher
        self.method = method
        self.signatures = signatures
        self._untyped: Function | None = None

    def __repr__(self) -> str:
        return f"MethodDef({self.key!r}, world={self.world})"

    @property
    def module(self) -> str:
        return self.key.split(":", 1)[0]

    def untyped(self) -> Function:
        if self._untyped is None:
            from ..frontend import lower_function
            from .fingerprint import same_code

            self._untyped = lower_function(self.py_func, self.key, same_code, self.options)
        return self._untyped

    def resolve_name(self, name: str) -> Any:
        code = self.py_func.__code__
        if name in code.co_freevars and self.py_func.__closure__:
            cell = self.py_func.__closure__[code.co_freevars.index(name)]
            try:
                return cell.cell_contents
            except ValueError:
                return MISSING
        globals_ = self.py_func.__globals__
        if name in globals_:
            return globals_[name]
        return getattr(builtins, name, MISSING)


class MethodTable:
    """Every method of the process by key; the world counter grows with each definition."""

    def __init__(self) -> None:
        self.world = 1
        self.methods: dict[str, MethodDef] = {}
        self._intrinsics: dict[int, Intrinsic] | None = None  # aot.gpu's functions, when first asked

    def define(
        self,
        py_func: Callable,
        options: MethodOptions | None = None,
        key: str | None = None,
        method: Any = None,
        signatures: Any = None,
    ) -> MethodDef:
        """A new definition under ``key`` (``pkg.mod:qualname`` of ``py_func`` when not given), of the
        ``@aot.jit`` object ``method`` with its ``signatures`` when it is one."""
        self.world += 1
        mdef = MethodDef(key or method_key(py_func), py_func, options, self.world, None, method, signatures)
        self.methods[mdef.key] = mdef
        return mdef

    def method_for(self, obj: Any) -> MethodDef | None:
        """The method a called object stands for: an ``@aot.jit`` object, or a plain Python function."""
        mdef = getattr(obj, "__aot_method__", None)
        if isinstance(mdef, MethodDef):
            return mdef
        if isinstance(obj, pytypes.FunctionType):
            found = self.methods.get(method_key(obj))
            if found is not None and found.py_func is obj:
                return found
            return self.define(obj)
        return None

    @property
    def intrinsics(self) -> dict[int, Intrinsic]:
        if self._intrinsics is None:
            from .. import gpu

            self._intrinsics = {id(f): i for f, i in gpu.intrinsic_functions().items()}
        return self._intrinsics

    def intrinsic_for(self, obj: Any) -> Intrinsic | None:
        return self.intrinsics.get(id(obj))
