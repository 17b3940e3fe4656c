"""The CUDA driver API through ctypes: find a device, load PTX, copy arrays, launch kernels.

    dev = device()                  # None without a driver or a GPU (callers then use the CPU grid)
    dev.arch                        → "sm_90"
    module = dev.load(ptx_text)     # the driver JIT-compiles PTX for the device (or: the bytes of a cubin)
    dev.launch(module, "aot_gpukit_kernels__saxpy_…", (4, 1, 1), (256, 1, 1), argtypes, args,
               written={2}, errors=program.errors)

Arrays are copied to the device packed in C order (their shape kept, their strides made contiguous) and the
ones the kernel writes are copied back. After the launch the module's ``aot_status`` word says whether a
thread failed; its code names the exception to raise. No third-party binding is needed: only
``libcuda.so.1``, which the GPU driver installs.
"""

from __future__ import annotations

import builtins
import ctypes
from collections.abc import Sequence
from typing import Any

from .. import forksafe
from ..types import ArrayType, ScalarType, TupleType, Type

_COMPUTE_CAPABILITY_MAJOR, _COMPUTE_CAPABILITY_MINOR = 75, 76
_SCALAR_CTYPES = {
    "i8": ctypes.c_int8,
    "i16": ctypes.c_int16,
    "i32": ctypes.c_int32,
    "i64": ctypes.c_int64,
    "u8": ctypes.c_uint8,
    "u16": ctypes.c_uint16,
    "u32": ctypes.c_uint32,
    "u64": ctypes.c_uint64,
    "f32": ctypes.c_float,
    "f64": ctypes.c_double,
    "boolean": ctypes.c_uint8,
}


class CudaError(RuntimeError):
    """A CUDA driver call failed."""


class Device:
    """One GPU with its primary context, current on the calling thread while it is used."""

    def __init__(self, lib: Any, ordinal: int = 0):
        self.lib = lib
        handle = ctypes.c_int()
        self._check("cuDeviceGet", ctypes.byref(handle), ordinal)
        self.handle = handle.value
        major, minor = ctypes.c_int(), ctypes.c_int()
        self._check("cuDeviceGetAttribute", ctypes.byref(major), _COMPUTE_CAPABILITY_MAJOR, self.handle)
        self._check("cuDeviceGetAttribute", ctypes.byref(minor), _COMPUTE_CAPABILITY_MINOR, self.handle)
        self.arch = f"sm_{major.value}{minor.value}"
        self.context = ctypes.c_void_p()
        self._check("cuDevicePrimaryCtxRetain", ctypes.byref(self.context), self.handle)

    def _check(self, name: str, *args: Any) -> None:
        status = getattr(self.lib, name)(*args)
        if status != 0:
            text = ctypes.c_char_p()
            self.lib.cuGetErrorString(status, ctypes.byref(text))
            raise CudaError(f"{name} failed: {text.value.decode() if text.value else status}")

    def _current(self) -> None:
        self._check("cuCtxSetCurrent", self.context)

    def load(self, code: str | bytes) -> ctypes.c_void_p:
        """Load a module: PTX text (the driver compiles it for the device) or the bytes of a cubin or PTX."""
        self._current()
        module = ctypes.c_void_p()
        data = code.encode() if isinstance(code, str) else bytes(code)
        self._check("cuModuleLoadData", ctypes.byref(module), ctypes.c_char_p(data + b"\0"))
        return module

    def launch(
        self,
        module: ctypes.c_void_p,
        symbol: str,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        argtypes: Sequence[Type],
        args: Sequence[Any],
        written: set[int],
        errors: Sequence[tuple[str, str]],
    ) -> None:
        """Run one kernel over the grid and wait for it; raises the first error a thread recorded."""
        self._current()
        function = ctypes.c_void_p()
        self._check("cuModuleGetFunction", ctypes.byref(function), module, symbol.encode())
        status, size = ctypes.c_uint64(), ctypes.c_size_t()
        self._check("cuModuleGetGlobal_v2", ctypes.byref(status), ctypes.byref(size), module, b"aot_status")
        self._check("cuMemsetD32_v2", status, ctypes.c_uint(0), ctypes.c_size_t(1))
        params: list[Any] = []
        buffers: list[tuple[int, int]] = []  # device pointers to free
        copy_back: list[tuple[int, Any, ArrayType, int]] = []
        try:
            for i, (value, t) in enumerate(zip(args, argtypes)):
                self._flatten(value, t, params, buffers, copy_back if i in written else None)
            pointers = (ctypes.c_void_p * max(len(params), 1))(
                *[ctypes.cast(ctypes.pointer(p), ctypes.c_void_p) for p in params]
            )
            self._check("cuLaunchKernel", function, *grid, *block, 0, None, pointers, None)
            self._check("cuCtxSynchronize")
            for dptr, value, t, nbytes in copy_back:
                data = (ctypes.c_char * nbytes)()
                self._check("cuMemcpyDtoH_v2", data, ctypes.c_uint64(dptr), ctypes.c_size_t(nbytes))
                _store(value, t, bytes(data))
            code = ctypes.c_uint32()
            self._check("cuMemcpyDtoH_v2", ctypes.byref(code), status, ctypes.c_size_t(4))
        finally:
            for dptr, _ in buffers:
                self.lib.cuMemFree_v2(ctypes.c_uint64(dptr))
        if code.value:
            exc, message = errors[code.value - 1] if code.value <= len(errors) else ("RuntimeError", "kernel failed")
            raise getattr(builtins, exc, RuntimeError)(message)

    def _flatten(self, value: Any, t: Type, params: list, buffers: list, copy_back: list | None) -> None:
        if isinstance(t, ScalarType):
            params.append(_SCALAR_CTYPES[t.name](value))
        elif isinstance(t, TupleType):
            for item, it in zip(value, t.items):
                self._flatten(item, it, params, buffers, copy_back)
        else:
            assert isinstance(t, ArrayType)
            with memoryview(value) as view:
                data, shape = view.tobytes(), tuple(view.shape or ())
            nbytes = len(data)
            dptr = ctypes.c_uint64()
            self._check("cuMemAlloc_v2", ctypes.byref(dptr), ctypes.c_size_t(max(nbytes, 1)))
            buffers.append((dptr.value, nbytes))
            if nbytes:
                self._check("cuMemcpyHtoD_v2", dptr, data, ctypes.c_size_t(nbytes))
            params.append(ctypes.c_uint64(dptr.value))
            params.extend(ctypes.c_int64(n) for n in shape)
            stride = t.dtype.itemsize
            strides: list[int] = []
            for n in reversed(shape):
                strides.insert(0, stride)
                stride *= n
            params.extend(ctypes.c_int64(s) for s in strides)
            if copy_back is not None:
                copy_back.append((dptr.value, value, t, nbytes))


def _store(target: Any, t: ArrayType, data: bytes) -> None:
    """Write C-ordered bytes back into an array of any layout."""
    with memoryview(target) as view:
        if view.c_contiguous:
            view.cast("B")[:] = data
            return
    import numpy as np  # a strided view needs NumPy to scatter into

    kind = {"i": "i", "u": "u", "f": "f", "b": "b"}[t.dtype.kind]
    dtype = np.bool_ if kind == "b" else np.dtype(f"{kind}{t.dtype.itemsize}")
    arr = np.asarray(target)
    arr[...] = np.frombuffer(data, dtype=dtype).reshape(arr.shape)


_DEVICE: list[Device | None] = []  # the answer of ``device()``, once asked
_FORKED: list[bool] = []  # [True] in a process forked after its parent had a device: CUDA cannot be used there


def device() -> Device | None:
    """The first CUDA device, or None when there is no driver, no device, it cannot be initialised, or this
    process was forked from one that had initialised it."""
    if not _DEVICE:
        _DEVICE.append(None if _FORKED else _open_device())
    return _DEVICE[0]


def _open_device() -> Device | None:
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    count = ctypes.c_int()
    if lib.cuInit(0) != 0 or lib.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value < 1:
        return None
    try:
        return Device(lib)
    except CudaError:
        return None


def _after_fork_in_child() -> None:
    """A CUDA context does not survive a fork: a child of a process that had a device has none."""
    if _DEVICE and _DEVICE[0] is not None:
        _FORKED.append(True)
    _DEVICE.clear()


forksafe.reset_in_child(_after_fork_in_child)


def no_device_reason() -> str | None:
    """Why ``device()`` is None (for skipped tests), or None when there is a device."""
    if _FORKED:
        return "this process was forked after its parent initialised CUDA (use the 'spawn' start method)"
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return "no CUDA driver (libcuda.so.1 cannot be loaded)"
    count = ctypes.c_int()
    status = lib.cuInit(0)
    if status != 0:
        return f"the CUDA driver does not initialise (cuInit returned {status})"
    if lib.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value < 1:
        return "no CUDA device"
    return None if device() is not None else "the CUDA device cannot be used"
