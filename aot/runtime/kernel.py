"""``@aot.kernel``: GPU kernels, launched over a grid of blocks of threads.

    @aot.kernel
    def saxpy(a: aot.f32, x: aot.f32[::1], y: aot.f32[::1]):
        i = aot.gpu.global_id(0)
        if i < len(x):
            y[i] = a * x[i] + y[i]

    saxpy[4, 256](2.0, x, y)          # on the CUDA device when there is one, else compiled over the grid here
    saxpy.emulate[4, 256](2.0, x, y)  # plain Python: saxpy.py_func once per thread (the reference)
    saxpy.inspect_ptx()               # PTX of the declared signature, for sm_80
    saxpy(2.0, x, y)                  # TypeError: kernels are launched with kernel[grid, block](…)

On a device, a kernel comes from its package's ``ptx`` image when its entry there is valid (a ``loaded`` event,
owner ``ptx``; ``aot.runtime.ptximage`` chooses the cubin or the PTX), else it is compiled now (``inferred``
with the cause; ``StrictModeError`` in strict mode, ``NoCompilerError`` where no compiler is installed).

Without a device, a kernel runs compiled for this CPU: its ``cpu`` instance inside a loop over every block
and thread (x fastest), the ``aot.gpu`` ids read from that loop; the first thread that raises stops the
launch with its exception. Barriers cannot be run that way, so a kernel reaching ``sync_threads()`` or
``shared_array()`` raises ``NoDeviceError`` there (``emulate`` runs it, with Python threads).
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .. import forksafe, gpu
from ..diagnostics import CompileError, Span
from ..types import ArrayType, Type, accepts, parse_type, typeof
from ..world import MethodOptions, method_key

if TYPE_CHECKING:
    from ..world.causes import Cause
from .signatures import convert, convertible, declared_signatures
from .state import ReadOnlyBufferError, runtime

MAX_BLOCK_THREADS = 1024


class NoDeviceError(RuntimeError):
    """A kernel needs a CUDA device (it uses barriers or shared memory) and there is none."""


class NoCompilerError(RuntimeError):
    """A kernel must be compiled for the CUDA device (its ptx image does not serve it) and no compiler is
    installed (a runtime-only install)."""


class _OnDevice:
    """A kernel ready on one device: its module, ``.entry`` symbol, written parameters and error codes;
    ``stale()`` says why it no longer serves (checked before each launch), or None."""

    __slots__ = ("module", "symbol", "written", "errors", "stale")

    def __init__(self, module: Any, symbol: str, written: set[int], errors: tuple, stale: Callable):
        self.module, self.symbol, self.written, self.errors, self.stale = module, symbol, written, errors, stale


def device_only_use(inst: Any, lookup: Callable) -> tuple[str, Span, str] | None:
    """The first ``sync_threads()``/``shared_array()`` the instance reaches: (what, where, in which method)."""
    from ..ir.ops import Intrinsic, IntrinsicCall

    device_only = {Intrinsic.SYNC_THREADS: "sync_threads()", Intrinsic.SHARED_ARRAY: "shared_array()"}
    seen, stack = {inst.key}, [inst]
    while stack:
        i = stack.pop()
        for _, op in i.function.ops():
            if isinstance(op, IntrinsicCall) and op.fn in device_only:
                return device_only[op.fn], op.span, i.method.key
        for key in i.callees:
            if key not in seen:
                seen.add(key)
                stack.append(lookup(key))
    return None


class Kernel:
    """An ``@aot.kernel`` (see the module docstring); ``__aot_method__`` is its method in the world."""

    __name__: str  # (and the function's other attributes: functools.update_wrapper)

    def __init__(self, py_func: Callable, signatures: Sequence[str] | None = None, boundscheck: bool = True):
        if not inspect.isfunction(py_func):
            raise TypeError(f"@aot.kernel needs a Python function, not {type(py_func).__name__}")
        rt = runtime()
        redefining = method_key(py_func) in rt.table.methods
        self.__aot_method__ = rt.table.define(py_func, MethodOptions(boundscheck=boundscheck, kernel=True))
        if redefining:
            rt.redefine(self.__aot_method__.key)
        functools.update_wrapper(self, py_func)
        self.py_func = py_func
        self.declared: list[tuple[Type, ...]] = list(declared_signatures(py_func, signatures))
        self.launched: dict[tuple[Type, ...], None] = {}  # signatures first seen at a launch (pure JIT)
        self._grid: dict[tuple[Type, ...], Any] = {}
        self._device: dict[tuple[str, tuple[Type, ...]], Any] = {}
        self._threads: dict[tuple[Type, ...], bool] = {}
        self._lock = threading.Lock()  # a CPU grid's module has one grid context: one launch at a time
        forksafe.reset_in_child(self._lock._at_fork_reinit)  # type: ignore[attr-defined]

    @property
    def key(self) -> str:
        return self.__aot_method__.key

    def __repr__(self) -> str:
        return f"<aot kernel {self.key}>"

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError(f"{self.key} is a kernel: launch it with {self.__name__}[grid, block](…)")

    def __getitem__(self, config: Any) -> Callable[..., None]:
        grid, block = _config(config)
        return functools.partial(self.launch, grid, block)

    @property
    def emulate(self) -> _Emulation:
        """``kernel.emulate[grid, block](*args)``: the kernel in plain Python, once per thread."""
        return _Emulation(self)

    def signatures(self) -> list[tuple[Type, ...]]:
        """Declared signatures, then those first seen at launches."""
        return list(dict.fromkeys(list(self.declared) + list(self.launched)))

    # ------------------------------------------------------------------ launching
    def launch(self, grid: Any, block: Any, *args: Any) -> None:
        gdim, bdim = gpu.launch_dims(grid, "grid"), gpu.launch_dims(block, "block")
        if bdim[0] * bdim[1] * bdim[2] > MAX_BLOCK_THREADS:
            raise ValueError(f"a block has at most {MAX_BLOCK_THREADS} threads, not {bdim}")
        argtypes, args = self._bind(args)
        rt = runtime()
        if rt.building:  # `aot build` runs workloads as plain Python and records what they launch
            self.emulate[gdim, bdim](*args)
            return
        from .cuda import device

        dev = device()
        if dev is not None:
            self._launch_device(dev, gdim, bdim, argtypes, args)
        else:
            self._launch_cpu(gdim, bdim, argtypes, args)

    def _bind(self, args: tuple) -> tuple[tuple[Type, ...], tuple]:
        try:
            actual = tuple(typeof(a) for a in args)
        except TypeError as err:
            raise TypeError(f"{self.key}: {err}") from None
        if not self.declared:
            self.launched.setdefault(actual)
            return actual, tuple(convert(a, t) for a, t in zip(args, actual))
        exact = [d for d in self.declared if len(d) == len(actual) and all(accepts(t, a) for a, t in zip(actual, d))]
        for declared in exact + self.declared:
            if len(declared) == len(actual) and all(convertible(a, d) for a, d in zip(actual, declared)):
                return declared, tuple(convert(a, t) for a, t in zip(args, declared))
        sigs = ", ".join("(" + ", ".join(map(str, d)) + ")" for d in self.declared)
        raise TypeError(f"{self.key}: no declared signature takes ({', '.join(map(str, actual))}); declared: {sigs}")

    def _launch_cpu(self, gdim: tuple, bdim: tuple, argtypes: tuple[Type, ...], args: tuple) -> None:
        from ..world import owners
        from .ptx import check_no_allocation, forget_changed, forget_stale

        rt = runtime()
        with self._lock:
            spec = self._grid.get(argtypes)
            if spec is None:  # a first compile: anything the process inferred before may be stale
                forget_stale(rt.compiler.inferencer, rt.table)
            changed = None if spec is None else forget_changed(rt.compiler.inferencer, rt.table, spec.reached)
            if spec is None or rt.compiler.inferencer.done.get(spec.instance.key) is not spec.instance:
                cause = _cause(changed, self.key)
                inst = rt.compiler.infer(self.__aot_method__, argtypes)
                check_no_allocation(inst, rt.compiler.lookup)  # as on the device
                use = device_only_use(inst, rt.compiler.lookup)
                if use is not None:
                    what, span, where = use
                    inside = "" if where == self.key else f" (in {where})"
                    raise NoDeviceError(
                        f"{span}: {self.key} uses aot.gpu.{what}{inside}, which needs a CUDA device, and this "
                        f"machine has none: barriers and shared memory are not emulated by the compiled CPU "
                        f"grid. Run it where a GPU is present, or in plain Python with "
                        f"{self.__name__}.emulate[grid, block](…)"
                    )
                rt.check_strict(self.key, argtypes, cause)
                from .ptx import compile_grid

                spec = compile_grid(rt, self.__aot_method__, argtypes)
                rt.record("inferred", self.key, argtypes, owner=owners.CPU, cause=cause)
                self._grid[argtypes] = spec
            try:
                spec.builtin(*args, gdim, bdim)
            except TypeError as err:
                if "do not match the compiled signature" not in str(err):
                    raise
                for value, t in zip(args, argtypes):  # the types matched: a read-only buffer it writes to
                    if isinstance(t, ArrayType) and memoryview(value).readonly:
                        raise ReadOnlyBufferError(
                            f"{self.key}: assignment destination is read-only (the kernel writes to this array)"
                        ) from None
                raise

    def _launch_device(self, dev: Any, gdim: tuple, bdim: tuple, argtypes: tuple[Type, ...], args: tuple) -> None:
        with self._lock:
            on_device = self._device.get((dev.arch, argtypes))
            cause = None if on_device is None else on_device.stale()
            if on_device is None or cause is not None:
                on_device = self._load_device(dev, argtypes, cause)
                self._device[(dev.arch, argtypes)] = on_device
        dev.launch(on_device.module, on_device.symbol, gdim, bdim, argtypes, args, on_device.written, on_device.errors)

    def _load_device(self, dev: Any, argtypes: tuple[Type, ...], cause: Cause | None) -> _OnDevice:
        """The kernel for this device: from the package's ptx image when its entry is valid (``loaded``), else
        compiled now (``inferred`` with ``cause``: why the image did not serve, or what changed since)."""
        from ..world import owners
        from .ptximage import select

        rt = runtime()
        if cause is None:
            choice = select(rt, self.__aot_method__, argtypes, dev.arch)
            if choice.cause is None:
                module = choice.module(dev)  # (the package's whole module, loaded once per device)
                rt.record("loaded", self.key, argtypes, owner=owners.PTX)
                return _OnDevice(module, choice.symbol, choice.written, choice.errors, choice.stale)
            cause = choice.cause
        rt.check_strict(self.key, argtypes, cause)
        from .compilerless import INSTALL_COMPILER, compiler_available

        if not compiler_available():
            raise NoCompilerError(
                f"{self.key}({', '.join(map(str, argtypes))}) cannot be launched on the CUDA device: its ptx image "
                f"does not serve it ({cause}) and no compiler is installed to compile it ({INSTALL_COMPILER})"
            )
        from ..codegen.module import written_params
        from .ptx import forget_changed, ptx_compiler, reached_methods

        compiler = ptx_compiler(rt)
        compiler.refresh()
        program = compiler.compile([(self.__aot_method__, argtypes)], dev.arch)
        inst = compiler.inferencer.done[(self.key, argtypes)]
        rt.record("inferred", self.key, argtypes, owner=owners.PTX, cause=cause)
        lookup = compiler.inferencer.done.__getitem__
        reached = reached_methods(inst, lookup)

        def stale() -> Cause | None:
            changed = forget_changed(compiler.inferencer, rt.table, reached)
            if changed is None and compiler.inferencer.done.get(inst.key) is inst:
                return None
            return _cause(changed, self.key)

        entry = program.entry(self.key, argtypes)
        return _OnDevice(dev.load(program.ptx), entry.symbol, set(written_params(inst, lookup)), program.errors, stale)

    # ------------------------------------------------------------------ inspection
    def _types(self, argtypes: Sequence[Any]) -> tuple[Type, ...]:
        if argtypes:
            return tuple(parse_type(a) if isinstance(a, str) else a for a in argtypes)
        sigs = self.signatures()
        if len(sigs) == 1:
            return sigs[0]
        raise TypeError("give the argument types, e.g. k.inspect_ptx('f32', 'f32[::1]')")

    def inspect_ir(self, *argtypes: Any, owner: str = "ptx") -> str:
        """The typed IR of this kernel's ``ptx`` (or ``cpu``) instance."""
        from ..ir import print_function

        rt = runtime()
        types = self._types(argtypes)
        from ..world import owners

        if owner == owners.CPU:
            return print_function(rt.compiler.infer(self.__aot_method__, types).function)
        from .ptx import ptx_compiler

        return print_function(ptx_compiler(rt).infer(self.__aot_method__, types).function)

    def inspect_llvm(self, *argtypes: Any, arch: str = "sm_80") -> str:
        """aot's LLVM IR of the kernel and its device functions, before libdevice is linked in."""
        from ..targets import PtxTarget
        from .ptx import ptx_compiler

        module, _, _ = ptx_compiler(runtime()).llvm_module(
            [(self.__aot_method__, self._types(argtypes))], PtxTarget(arch=arch)
        )
        return str(module)

    def inspect_ptx(self, *argtypes: Any, arch: str = "sm_80") -> str:
        """The linked, optimised PTX of this kernel for ``arch``."""
        from .ptx import compile_ptx

        return compile_ptx([(self.__aot_method__, self._types(argtypes))], arch).ptx

    def uses_barriers(self, argtypes: Sequence[Any]) -> bool:
        """Whether the kernel reaches ``sync_threads()`` or ``shared_array()`` for these argument types."""
        types = self._types(argtypes)
        if types not in self._threads:
            rt = runtime()
            try:
                inst = rt.compiler.infer(self.__aot_method__, types)
                self._threads[types] = device_only_use(inst, rt.compiler.lookup) is not None
            except CompileError:
                self._threads[types] = True  # outside the subset: threads are always right
        return self._threads[types]


class _Emulation:
    def __init__(self, kernel: Kernel):
        self.kernel = kernel

    def __getitem__(self, config: Any) -> Callable[..., None]:
        grid, block = _config(config)

        def run(*args: Any) -> None:
            try:
                types = tuple(typeof(a) for a in args)
            except TypeError:
                types = None
            threads = True if types is None else self.kernel.uses_barriers(types)
            gpu.emulate_grid(self.kernel.py_func, grid, block, args, barriers=threads)

        return run


def _cause(changed: str | None, key: str) -> Cause:
    """Why a kernel is compiled: the first time (``changed`` None), or because a method it reaches changed."""
    from ..world.causes import NO_ENTRY, REDEFINED, Cause

    if changed is None:
        return NO_ENTRY
    return REDEFINED if changed == key else Cause.edge_changed(changed)


def _config(config: Any) -> tuple[Any, Any]:
    if not isinstance(config, tuple) or len(config) != 2:
        raise TypeError("launch a kernel with kernel[grid, block](…): two launch dimensions")
    return config


def find_kernels(modules: Iterable[Any]) -> list[Kernel]:
    """The kernels defined in ``modules`` (module objects), by key: what a ``ptx`` build compiles."""
    found = {
        obj.key: obj
        for module in modules
        for obj in vars(module).values()
        if isinstance(obj, Kernel) and obj.__module__ == module.__name__
    }
    return [found[k] for k in sorted(found)]


def kernel(func: Callable | None = None, *, signatures: Sequence[str] | None = None, boundscheck: bool = True) -> Any:
    """Make a module-level function a GPU kernel (see the module docstring)."""
    if func is not None:
        return Kernel(func, signatures, boundscheck)
    return lambda f: Kernel(f, signatures, boundscheck)
