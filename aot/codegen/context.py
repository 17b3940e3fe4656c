"""What every emitter of one LLVM module shares: the module's context, and the error path of a function.

    ctx = ModuleContext(ir.Module("demo"), CpuTarget.host())
    ctx.cstring("index out of range")     → a private constant, made once per module
    ctx.global_pointer("PyExc_IndexError") → an external data symbol (prefixed in the JIT)
    em.check(failed, "IndexError", "index out of range")
        CPU →  br i1 %failed, label %raise, …     raise: call @aot_raise(@PyExc_IndexError, @.str.0); ret i32 1
        GPU →  br i1 %failed, label %raise, …     raise: cmpxchg @aot_status, 0, <code>; ret i32 1

Every compiled function returns a status (0: ok, 1: an exception is set) and writes its result through a
pointer. On the CPU an error sets a Python exception; on the GPU, where none can be set, the thread stores the
error's code (its index, plus one, in the module's error table ``ctx.errors``) into the global ``aot_status``
word — the first error wins — and the launcher raises the exception after the launch.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from ..targets import Target
from . import types as lt

STATUS_SYMBOL = "aot_status"
"""The device global holding the first error code of a launch (0: none)."""


class ModuleContext:
    """State shared by the functions of one LLVM module: declarations, helpers, constants."""

    def __init__(self, module: ir.Module, target: Target, data_prefix: str = ""):
        self.module = module
        self.target = target
        # In the JIT, data symbols get a private prefix: other llvmlite users in the process (Numba)
        # register the same C API names with other meanings.
        self.data_prefix = data_prefix
        self._strings: dict[str, ir.GlobalVariable] = {}
        self.errors: list[tuple[str, str]] = []  # GPU error codes: (exception, message), code = index + 1

    def declare(self, name: str, fnty: ir.FunctionType) -> ir.Function:
        existing = self.module.globals.get(name)
        if existing is not None:
            return existing
        return ir.Function(self.module, fnty, name)

    def internal_function(self, name: str, fnty: ir.FunctionType) -> tuple[ir.Function, ir.IRBuilder | None]:
        """The module's internal function ``name`` and a builder at its entry when it is made now; (it, None)
        when the module has it already (the runtime's helpers are emitted once per module)."""
        existing = self.module.globals.get(name)
        if existing is not None:
            return existing, None
        fn = ir.Function(self.module, fnty, name)
        fn.linkage = "internal"
        return fn, ir.IRBuilder(fn.append_basic_block("entry"))

    def global_pointer(self, name: str) -> ir.GlobalVariable:
        """An external data symbol holding a pointer (``PyExc_ValueError``) or an object (``PyFloat_Type``)."""
        name = self.data_prefix + name
        existing = self.module.globals.get(name)
        if existing is not None:
            return existing
        gv = ir.GlobalVariable(self.module, lt.PTR, name)
        gv.linkage = "external"
        return gv

    def cstring(self, text: str) -> ir.Constant:
        if text not in self._strings:
            data = bytearray(text.encode("utf-8") + b"\0")
            const = ir.Constant(ir.ArrayType(lt.I8, len(data)), data)
            gv = ir.GlobalVariable(self.module, const.type, f".str.{len(self._strings)}")
            gv.initializer = const
            gv.global_constant = True
            gv.linkage = "private"
            gv.unnamed_addr = True
            self._strings[text] = gv
        return self._strings[text].bitcast(lt.PTR)

    def set_exception(self, b: ir.IRBuilder, exc: str, message: str) -> None:
        """Set ``exc(message)`` as Python's current exception (CPU; the GIL taken for the moment if needed)."""
        slot = self.global_pointer(f"PyExc_{exc}")
        b.call(self.raise_function(), [slot.bitcast(lt.PTR), self.cstring(message)])

    def raise_function(self) -> ir.Function:
        """``void aot_raise(ptr exc_slot, ptr msg)``: sets a Python exception (CPU) — one per module."""
        name = "aot_raise"
        fn = self.module.globals.get(name)
        if fn is not None:
            return fn
        fn = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [lt.PTR, lt.PTR]), name)
        fn.linkage = "internal"
        fn.attributes.add("cold")
        fn.attributes.add("noinline")
        b = ir.IRBuilder(fn.append_basic_block())
        if self.target.raises_python_exceptions:
            from . import gil  # (the thread may not hold the GIL: nogil=True, prange workers)

            set_string = self.declare("PyErr_SetString", ir.FunctionType(ir.VoidType(), [lt.PTR, lt.PTR]))
            token = b.call(gil.acquire_function(self), [])
            exc = b.load(b.bitcast(fn.args[0], lt.PTR.as_pointer()))
            b.call(set_string, [exc, fn.args[1]])
            b.call(gil.release_function(self), [token])
        b.ret_void()
        return fn

    def error_code(self, exc: str, message: str) -> int:
        """The code of an error in this module's error table (where Python exceptions cannot be set)."""
        if (exc, message) not in self.errors:
            self.errors.append((exc, message))
        return self.errors.index((exc, message)) + 1

    def status_word(self) -> ir.GlobalVariable:
        """The module's ``aot_status`` word, in memory every thread sees."""
        existing = self.module.globals.get(STATUS_SYMBOL)
        if existing is not None:
            return existing
        gv = ir.GlobalVariable(self.module, lt.I32, STATUS_SYMBOL, addrspace=self.target.global_address_space)
        gv.initializer = ir.Constant(lt.I32, 0)
        gv.align = 4
        return gv


class Emitter:
    """Emits code into one function (``llfn``, with the status ABI) of a module, through the builder ``b``."""

    b: ir.IRBuilder

    def __init__(self, ctx: ModuleContext, llfn: ir.Function):
        self.ctx = ctx
        self.llfn = llfn

    def raise_(self, exc: str, message: str, with_values: Callable[[], object] | None = None) -> None:
        """Raise ``exc(message)`` and return the error status (the block ends here), as the target raises errors
        (``Target.raises_python_exceptions``): set the Python exception, or record the error's code in the
        module's status word. A function's errors go through here (``check``'s too); the recursion guard and
        the parallel driver, which exist only with the host runtime, call ``ModuleContext.set_exception``.

        ``with_values``, for a message that shows run-time values (NumPy's "Python integer 300 out of bounds
        for uint8"), emits the call that sets the Python exception with them: a target that sets Python
        exceptions calls it instead of setting ``message``; one that records codes records ``message``, the
        text without the values."""
        if not self.ctx.target.raises_python_exceptions:
            code = self.ctx.error_code(exc, message)
            self.b.cmpxchg(
                self.ctx.status_word(), ir.Constant(lt.I32, 0), ir.Constant(lt.I32, code), "monotonic", "monotonic"
            )
            self.error_return()
            return
        if with_values is not None:
            with_values()
        else:
            self.ctx.set_exception(self.b, exc, message)
        self.error_return()

    def error_return(self) -> None:
        """Return the error status (the block ends here); a function holding references releases them first."""
        self.b.ret(ir.Constant(lt.STATUS, 1))

    def check(self, failed: ir.Value, exc: str, message: str) -> None:
        """Raise ``exc`` when ``failed`` holds; continue in a fresh block otherwise."""
        with self.b.if_then(failed, likely=False):
            self.raise_(exc, message)

    def call_intrinsic(self, name: str, args: list[ir.Value]) -> ir.Value:
        """A call of the LLVM intrinsic ``name`` (``llvm.floor``) on ``args``, or of the library function the
        target replaces it with where it cannot lower it exactly (``llvm.pow`` on NVPTX)."""
        fnty = ir.FunctionType(args[0].type, [a.type for a in args])
        library = self.ctx.target.llvm_intrinsic_symbol(name, 32 if args[0].type == lt.F32 else 64)
        if library is not None:
            return self.b.call(self.ctx.declare(library, fnty), args)
        fn = self.ctx.declare(f"{name}.{_suffix(args[0].type)}", fnty)
        return self.b.call(fn, args)


def _suffix(t: ir.Type) -> str:
    if t == lt.F64:
        return "f64"
    if t == lt.F32:
        return "f32"
    return f"i{t.width}"
