"""Typed IR → LLVM IR, one function at a time.

    func demo:add1(%x: f64) -> f64          define i32 @aot_demo__add1_…(ptr %out, double %x) {
      %t1: f64 = binop add %x, %t0    →       %t1 = fadd double %x, 1.0
      ret %t1                                 store double %t1, ptr %out ; ret i32 0

Every compiled function returns a status (0: ok, 1: an exception is set) and writes its result through
``%out``, so errors raised deep in callees reach Python with their type and message. Variables live in
``alloca``s (LLVM's mem2reg makes them SSA). Python's semantics are kept exactly: floor division and
modulo, division by zero, negative indices, shifts, ``**``, and the domain/range errors of ``math``.
A ``range`` loop whose bounds, once checked, make its ``//``/``%`` provably non-negative (passes/ranges.py)
is lowered twice: a copy with ``nsw`` flags and unsigned division behind the check, the original otherwise.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Optional

from llvmlite import ir

from ..ir import (BinOp, BinOpKind, Block, Branch, Call, CmpKind, Compare, Const, Convert, Copy, Function,
                  GetItem, IntrinsicCall, Jump, MakeTuple, Op, Raise, Return, SetItem, Truth,
                  UnaryKind, UnaryOp, Var, uses)
from ..analysis.definite import maybe_unassigned
from ..analysis.ranges import Fact, LoopVersion, loop_versions
from ..targets import Target
from ..types import (BOOL, I64, NONE, ArrayType, ScalarType, TupleType, Type, arith_type,
                     promote)
from . import types as lt
from .types import value_type

_FLOAT_PLAIN = {BinOpKind.ADD: "fadd", BinOpKind.SUB: "fsub", BinOpKind.MUL: "fmul"}
_INT_PLAIN = {BinOpKind.ADD: "add", BinOpKind.SUB: "sub", BinOpKind.MUL: "mul", BinOpKind.AND: "and_",
              BinOpKind.OR: "or_", BinOpKind.XOR: "xor"}
_FCMP = {CmpKind.EQ: "==", CmpKind.NE: "!=", CmpKind.LT: "<", CmpKind.LE: "<=", CmpKind.GT: ">",
         CmpKind.GE: ">="}


@dataclass(frozen=True)
class CodegenOptions:
    boundscheck: bool = True


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
            set_string = self.declare("PyErr_SetString", ir.FunctionType(ir.VoidType(), [lt.PTR, lt.PTR]))
            exc = b.load(b.bitcast(fn.args[0], lt.PTR.as_pointer()))
            b.call(set_string, [exc, fn.args[1]])
        b.ret_void()
        return fn


class FunctionCodegen:
    """Lowers one typed function into ``llfn`` (already declared with the status ABI)."""

    def __init__(self, ctx: ModuleContext, fn: Function, llfn: ir.Function,
                 callee: Callable[[str, tuple[Type, ...]], ir.Function], options: CodegenOptions):
        self.ctx = ctx
        self.fn = fn
        self.llfn = llfn
        self.callee = callee
        self.options = options
        self.slots: dict[str, ir.AllocaInstr] = {}
        self.flags: dict[str, ir.AllocaInstr] = {}
        self.blocks: dict[str, ir.Block] = {}
        defs: dict[str, int] = {}
        for _, op in fn.ops():
            if op.dest_var is not None:
                defs[op.dest_var.name] = defs.get(op.dest_var.name, 0) + 1
        self.consts = {op.dest.name: op.value for _, op in fn.ops()
                       if isinstance(op, Const) and defs[op.dest.name] == 1}
        self.index_only = set() if options.boundscheck else _index_only_temps(fn)
        self.versions = loop_versions(fn)
        self.fact: Optional[Fact] = None  # what passes/ranges proved about the op being lowered
        self.targets: dict[str, ir.Block] = {}  # where the block being lowered jumps to, by IR label

    # ------------------------------------------------------------------ scaffolding
    def lower(self) -> None:
        entry = self.llfn.append_basic_block("entry")
        self.b = ir.IRBuilder(entry)
        for name, t in self.fn.types.items():
            self.slots[name] = self.b.alloca(value_type(t), name=_llname(name))
        for name in sorted(maybe_unassigned(self.fn)):
            if name in self.slots:
                flag = self.b.alloca(lt.I1, name=_llname(name) + ".set")
                self.b.store(ir.Constant(lt.I1, 0), flag)
                self.flags[name] = flag
        for name, arg in zip(self.fn.params, self.llfn.args[1:]):
            self.b.store(arg, self.slots[name])
            if name in self.flags:
                self.b.store(ir.Constant(lt.I1, 1), self.flags[name])
        for block in self.fn.blocks:
            self.blocks[block.label] = self.llfn.append_basic_block(block.label)
        self.b.branch(self.blocks[self.fn.blocks[0].label])
        guarded = [v for v in self.versions if v.checks]
        guards = {v.preheader: (v.header, self.llfn.append_basic_block(v.header + ".guard")) for v in guarded}
        unguarded = {label: v.facts for v in self.versions if not v.checks for label in v.blocks}
        for block in self.fn.blocks:
            targets = self.blocks
            if block.label in guards:  # enter the loop through its guard
                header, guard = guards[block.label]
                targets = {**self.blocks, header: guard}
            self.lower_block(block, self.blocks[block.label], targets, unguarded.get(block.label, {}))
        for v in guarded:
            self.lower_fast_version(v, guards[v.preheader][1])

    def lower_block(self, block: Block, llblock: ir.Block, targets: dict[str, ir.Block],
                    facts: Mapping[tuple[str, int], Fact]) -> None:
        self.b.position_at_end(llblock)
        self.targets = targets
        for i, op in enumerate(block.ops):
            self.fact = facts.get((block.label, i))
            self.op(op)
        self.fact = None

    def lower_fast_version(self, v: LoopVersion, guard: ir.Block) -> None:
        """The guard (the loop's bounds are in range) and a second copy of the loop using ``v.facts``; the copy
        leaves the loop to the same blocks as the original, and variables live in the same slots."""
        copies = {label: self.llfn.append_basic_block(label + ".fast") for label in v.blocks}
        self.b.position_at_end(guard)
        ok: Optional[ir.Value] = None
        for check in v.checks:
            value = self.load(Var(check.var))
            test = self.b.icmp_signed("<=" if check.upper else ">=", value, ir.Constant(value.type, check.bound))
            ok = test if ok is None else self.b.and_(ok, test)
        assert ok is not None
        self.b.cbranch(ok, copies[v.header], self.blocks[v.header])
        blocks = self.fn.block_map()
        for label in v.blocks:
            self.lower_block(blocks[label], copies[label], {**self.blocks, **copies}, v.facts)

    def t(self, var: Var) -> Type:
        return self.fn.types[var.name]

    def load(self, var: Var) -> ir.Value:
        if var.name in self.flags:
            ok = self.b.load(self.flags[var.name])
            with self.b.if_then(self.b.not_(ok), likely=False):
                self.raise_("UnboundLocalError",
                            f"cannot access local variable '{var.name}' where it is not associated with a value")
        return self.b.load(self.slots[var.name])

    def store(self, var: Var, value: ir.Value, src_type: Type) -> None:
        self.b.store(self.coerce(value, src_type, self.t(var)), self.slots[var.name])
        if var.name in self.flags:
            self.b.store(ir.Constant(lt.I1, 1), self.flags[var.name])

    def raise_(self, exc: str, message: str) -> None:
        """Set ``exc(message)`` and return the error status (the block ends here)."""
        if not self.ctx.target.raises_python_exceptions:
            from .gpu import record_error
            record_error(self, exc, message)
            self.b.ret(ir.Constant(lt.STATUS, 1))
            return
        slot = self.ctx.global_pointer(f"PyExc_{exc}")
        self.b.call(self.ctx.raise_function(), [slot.bitcast(lt.PTR), self.ctx.cstring(message)])
        self.b.ret(ir.Constant(lt.STATUS, 1))

    def check(self, failed: ir.Value, exc: str, message: str) -> None:
        """Raise ``exc`` when ``failed`` holds; continue in a fresh block otherwise."""
        with self.b.if_then(failed, likely=False):
            self.raise_(exc, message)

    # ------------------------------------------------------------------ conversions
    def coerce(self, value: ir.Value, src: Type, dst: Type) -> ir.Value:
        if src == dst:
            return value
        if isinstance(src, ScalarType) and isinstance(dst, ScalarType):
            return self.convert_scalar(value, src, dst)
        if isinstance(src, TupleType) and isinstance(dst, TupleType):
            out = ir.Constant(value_type(dst), ir.Undefined)
            for i, (s, d) in enumerate(zip(src.items, dst.items)):
                out = self.b.insert_value(out, self.coerce(self.b.extract_value(value, i), s, d), i)
            return out
        if isinstance(src, ArrayType) and isinstance(dst, ArrayType):
            return value  # same layout in registers; only the static contiguity knowledge differs
        raise TypeError(f"cannot convert {src} to {dst}")

    def convert_scalar(self, v: ir.Value, src: ScalarType, dst: ScalarType) -> ir.Value:
        b = self.b
        if dst.kind == "b":
            return self.truth(v, src)
        if src.kind == "b":
            return b.uitofp(v, value_type(dst)) if dst.is_float else b.zext(v, value_type(dst))
        if src.is_float and dst.is_float:
            return b.fpext(v, value_type(dst)) if dst.bits > src.bits else b.fptrunc(v, value_type(dst))
        if src.is_int and dst.is_float:
            return b.sitofp(v, value_type(dst)) if src.is_signed else b.uitofp(v, value_type(dst))
        if src.is_float and dst.is_int:
            wide = b.fptosi(v, lt.I64) if dst.is_signed or dst.bits < 64 else b.fptoui(v, lt.I64)
            return b.trunc(wide, value_type(dst)) if dst.bits < 64 else wide
        if src.bits == dst.bits:
            return v
        if dst.bits < src.bits:
            return b.trunc(v, value_type(dst))
        return b.sext(v, value_type(dst)) if src.is_signed else b.zext(v, value_type(dst))

    def truth(self, v: ir.Value, t: Type) -> ir.Value:
        if isinstance(t, TupleType):
            return ir.Constant(lt.I1, int(bool(t.items)))
        assert isinstance(t, ScalarType)
        if t.kind == "b":
            return v
        if t.kind == "n":
            return ir.Constant(lt.I1, 0)
        if t.is_float:
            return self.b.fcmp_unordered("!=", v, ir.Constant(v.type, 0.0))
        return self.b.icmp_unsigned("!=", v, ir.Constant(v.type, 0))

    def checked_float_to_int(self, v: ir.Value, src: ScalarType) -> ir.Value:
        """Python's ``int(x)`` for a float: NaN → ValueError, ±inf or out of range → OverflowError."""
        b = self.b
        x = b.fpext(v, lt.F64) if src.bits == 32 else v
        self.check(b.fcmp_unordered("uno", x, x), "ValueError", "cannot convert float NaN to integer")
        in_range = b.and_(b.fcmp_ordered(">=", x, ir.Constant(lt.F64, -9223372036854775808.0)),
                          b.fcmp_ordered("<", x, ir.Constant(lt.F64, 9223372036854775808.0)))
        inf = b.fcmp_ordered("==", self.call_intrinsic("llvm.fabs", [x]), ir.Constant(lt.F64, float("inf")))
        with b.if_then(b.not_(in_range), likely=False):
            with b.if_else(inf) as (is_inf, too_big):
                with is_inf:
                    self.raise_("OverflowError", "cannot convert float infinity to integer")
                with too_big:
                    self.raise_("OverflowError", "int too large to convert to i64 (compiled ints are 64-bit)")
            b.unreachable()
        return b.fptosi(x, lt.I64)

    def call_intrinsic(self, name: str, args: list[ir.Value]) -> ir.Value:
        fnty = ir.FunctionType(args[0].type, [a.type for a in args])
        library = self.ctx.target.llvm_intrinsic_symbol(name, 32 if args[0].type == lt.F32 else 64)
        if library is not None:  # the target cannot lower this intrinsic (llvm.pow on NVPTX)
            return self.b.call(self.ctx.declare(library, fnty), args)
        fn = self.ctx.declare(f"{name}.{_suffix(args[0].type)}", fnty)
        return self.b.call(fn, args)

    # ------------------------------------------------------------------ ops
    def op(self, op: Op) -> None:
        getattr(self, "op_" + type(op).__name__)(op)

    def op_Const(self, op: Const) -> None:
        t = self.t(op.dest)
        self.b.store(self.constant(op.value, t), self.slots[op.dest.name])
        if op.dest.name in self.flags:
            self.b.store(ir.Constant(lt.I1, 1), self.flags[op.dest.name])

    def constant(self, value, t: Type) -> ir.Constant:
        if isinstance(t, TupleType):
            return ir.Constant(value_type(t), [self.constant(v, i) for v, i in zip(value, t.items)])
        assert isinstance(t, ScalarType)
        if t.kind == "n":
            return ir.Constant(lt.I8, 0)
        if t.is_float:
            return ir.Constant(value_type(t), float(value))
        if t.kind == "b":
            return ir.Constant(lt.I1, int(bool(value)))
        return ir.Constant(value_type(t), int(value) & ((1 << t.bits) - 1))

    def op_Copy(self, op: Copy) -> None:
        self.store(op.dest, self.load(op.src), self.t(op.src))

    def op_Convert(self, op: Convert) -> None:
        src, dst = self.t(op.src), self.t(op.dest)
        value = self.load(op.src)
        if isinstance(src, ScalarType) and src.is_float and dst == I64:
            self.store(op.dest, self.checked_float_to_int(value, src), I64)
        else:
            self.store(op.dest, value, src)

    def op_Truth(self, op: Truth) -> None:
        self.store(op.dest, self.truth(self.load(op.src), self.t(op.src)), BOOL)

    def op_MakeTuple(self, op: MakeTuple) -> None:
        t = self.t(op.dest)
        assert isinstance(t, TupleType)
        out = ir.Constant(value_type(t), ir.Undefined)
        for i, (item, it) in enumerate(zip(op.items, t.items)):
            out = self.b.insert_value(out, self.coerce(self.load(item), self.t(item), it), i)
        self.b.store(out, self.slots[op.dest.name])

    def op_UnaryOp(self, op: UnaryOp) -> None:
        src = self.t(op.operand)
        v = self.load(op.operand)
        if op.op is UnaryKind.NOT:
            self.store(op.dest, self.b.not_(self.truth(v, src)), BOOL)
            return
        assert isinstance(src, ScalarType)
        t = arith_type(src)
        v = self.coerce(v, src, t)
        if op.op is UnaryKind.NEG:
            v = self.b.fneg(v) if t.is_float else self.b.neg(v)
        elif op.op is UnaryKind.INVERT:
            v = self.b.not_(v)
        self.store(op.dest, v, t)

    def op_Compare(self, op: Compare) -> None:
        a, b_ = self.t(op.lhs), self.t(op.rhs)
        assert isinstance(a, ScalarType) and isinstance(b_, ScalarType)
        common = promote(a, b_)
        lhs = self.coerce(self.load(op.lhs), a, common)
        rhs = self.coerce(self.load(op.rhs), b_, common)
        pred = _FCMP[op.op]
        if common.is_float:
            result = (self.b.fcmp_unordered(pred, lhs, rhs) if op.op is CmpKind.NE
                      else self.b.fcmp_ordered(pred, lhs, rhs))
        elif common.is_signed:
            result = self.b.icmp_signed(pred, lhs, rhs)
        else:
            result = self.b.icmp_unsigned(pred, lhs, rhs)
        self.store(op.dest, result, BOOL)

    def op_BinOp(self, op: BinOp) -> None:
        rt = self.t(op.dest)
        at, bt = self.t(op.lhs), self.t(op.rhs)
        assert isinstance(rt, ScalarType) and isinstance(at, ScalarType) and isinstance(bt, ScalarType)
        a, b_ = self.load(op.lhs), self.load(op.rhs)
        kind = op.op
        if kind is BinOpKind.TRUEDIV and not (at.is_float or bt.is_float):
            self.check(self.b.icmp_unsigned("==", self.coerce(b_, bt, arith_type(bt)),
                                            ir.Constant(value_type(arith_type(bt)), 0)),
                       "ZeroDivisionError", "division by zero")
        if kind in (BinOpKind.LSHIFT, BinOpKind.RSHIFT):
            self.store(op.dest, self.shift(kind, self.coerce(a, at, rt), self.coerce(b_, bt, rt), rt), rt)
            return
        a, b_ = self.coerce(a, at, rt), self.coerce(b_, bt, rt)
        if rt.kind == "b":
            fn = {BinOpKind.AND: self.b.and_, BinOpKind.OR: self.b.or_, BinOpKind.XOR: self.b.xor}[kind]
            self.store(op.dest, fn(a, b_), rt)
            return
        if self.fact is not None and rt == I64:
            self.store(op.dest, self.proven_int_binop(kind, a, b_, self.fact), rt)
            return
        if rt.is_int and op.dest.name in self.index_only and kind in _NO_WRAP_OPS:
            # boundscheck=False: index arithmetic is promised in range, hence never wraps; saying so
            # lets LLVM prove `a[i, j + 1]` affine in j (vector loads instead of gathers).
            self.store(op.dest, _NO_WRAP_OPS[kind](self.b, a, b_), rt)
            return
        if kind is BinOpKind.ADD and rt.is_int and _loop_counter_add(op):
            # Loop counters and ``start + k`` of unit-step ranges stay inside the range's bounds, so the
            # add cannot wrap; saying so lets LLVM prove index ranges (dropping negative-index fixups).
            self.store(op.dest, self.b.add(a, b_, flags=("nsw",)), rt)
            return
        divisor = self.consts.get(op.rhs.name)
        if kind in (BinOpKind.FLOORDIV, BinOpKind.MOD) and rt.is_int and rt.is_signed \
                and type(divisor) is int and 0 < divisor < 2 ** (rt.bits - 1):
            result = self.floor_by_constant(kind, a, divisor, rt)
            if result is not None:
                self.store(op.dest, result, rt)
                return
        self.store(op.dest, self.float_binop(kind, a, b_) if rt.is_float else self.int_binop(kind, a, b_, rt), rt)

    def proven_int_binop(self, kind: BinOpKind, a: ir.Value, b_: ir.Value, fact: Fact) -> ir.Value:
        """An i64 op whose operands are proven in range (passes/ranges): ``nsw``/``nuw`` flags, or unsigned
        division where the dividend is >= 0 and the divisor >= 1 (then it equals Python's floor division)."""
        if fact is Fact.UNSIGNED_DIVISION:
            return self.b.udiv(a, b_) if kind is BinOpKind.FLOORDIV else self.b.urem(a, b_)
        flags = ("nsw", "nuw") if fact is Fact.NO_WRAP else ("nsw",)
        return getattr(self.b, _INT_PLAIN[kind])(a, b_, flags=flags)

    def floor_by_constant(self, kind: BinOpKind, a: ir.Value, c: int, t: ScalarType) -> Optional[ir.Value]:
        """Python's ``a // c`` and ``a % c`` for a positive constant ``c``, branch-free: a shift or a mask
        for powers of two; otherwise ``~a`` is non-negative when ``a`` is negative and floor division is
        ``~(~a / c)`` there, so one unsigned division (a multiply by LLVM) serves both signs."""
        b = self.b
        if c & (c - 1) == 0:
            k = c.bit_length() - 1
            if kind is BinOpKind.FLOORDIV:
                return b.ashr(a, ir.Constant(a.type, k))
            return b.and_(a, ir.Constant(a.type, c - 1))
        sign = b.ashr(a, ir.Constant(a.type, t.bits - 1))
        # a ^ sign is a or ~a: never negative. The mask says so to LLVM (it changes no value), which
        # then divides with a cheaper multiply, as for any number below 2**(bits-1).
        magnitude = b.and_(b.xor(a, sign), ir.Constant(a.type, (1 << (t.bits - 1)) - 1))
        quotient = b.xor(b.udiv(magnitude, ir.Constant(a.type, c)), sign)
        if kind is BinOpKind.FLOORDIV:
            return quotient
        return b.sub(a, b.mul(quotient, ir.Constant(a.type, c)))

    def float_binop(self, kind: BinOpKind, a: ir.Value, b_: ir.Value) -> ir.Value:
        b = self.b
        zero = ir.Constant(a.type, 0.0)
        if kind in _FLOAT_PLAIN:
            return getattr(b, _FLOAT_PLAIN[kind])(a, b_)
        if kind is BinOpKind.TRUEDIV:
            self.check(b.fcmp_ordered("==", b_, zero), "ZeroDivisionError", "float division by zero")
            return b.fdiv(a, b_)
        if kind in (BinOpKind.FLOORDIV, BinOpKind.MOD):
            message = "float floor division by zero" if kind is BinOpKind.FLOORDIV else "float modulo"
            self.check(b.fcmp_ordered("==", b_, zero), "ZeroDivisionError", message)
            return self.python_float_divmod(a, b_)[0 if kind is BinOpKind.FLOORDIV else 1]
        if kind is BinOpKind.POW:
            return self.float_pow(a, b_)
        raise AssertionError(kind)

    def python_float_divmod(self, a: ir.Value, w: ir.Value) -> tuple[ir.Value, ir.Value]:
        """CPython's ``float_divmod``: floor quotient and a remainder with the divisor's sign."""
        b = self.b
        zero = ir.Constant(a.type, 0.0)
        mod = self.frem(a, w)
        div = b.fdiv(b.fsub(a, mod), w)
        nonzero = b.fcmp_unordered("!=", mod, zero)
        signs_differ = b.xor(b.fcmp_ordered("<", w, zero), b.fcmp_ordered("<", mod, zero))
        adjust = b.and_(nonzero, signs_differ)
        mod_adj = b.select(adjust, b.fadd(mod, w), mod)
        div_adj = b.select(adjust, b.fsub(div, ir.Constant(a.type, 1.0)), div)
        mod_final = b.select(nonzero, mod_adj, self.call_intrinsic("llvm.copysign", [zero, w]))
        floordiv = self.call_intrinsic("llvm.floor", [div_adj])
        floordiv = b.select(b.fcmp_ordered(">", b.fsub(div_adj, floordiv), ir.Constant(a.type, 0.5)),
                            b.fadd(floordiv, ir.Constant(a.type, 1.0)), floordiv)
        div_nonzero = b.fcmp_unordered("!=", div_adj, zero)
        quotient = b.select(div_nonzero, floordiv,
                            self.call_intrinsic("llvm.copysign", [zero, b.fdiv(a, w)]))
        return quotient, mod_final

    def float_pow(self, x: ir.Value, y: ir.Value) -> ir.Value:
        """``x ** y`` on floats with Python's errors (a complex result is a ValueError here)."""
        b = self.b
        r = self.call_intrinsic("llvm.pow", [x, y])
        finite = b.and_(self.is_finite(x), self.is_finite(y))
        zero = ir.Constant(x.type, 0.0)
        with b.if_then(finite, likely=True):
            self.check(b.and_(b.fcmp_ordered("==", x, zero), b.fcmp_ordered("<", y, zero)),
                       "ZeroDivisionError", "0.0 cannot be raised to a negative power")
            self.check(b.fcmp_unordered("uno", r, r), "ValueError",
                       "negative number cannot be raised to a fractional power (the result would be complex)")
            self.check(b.not_(self.is_finite(r)), "OverflowError", "(34, 'Numerical result out of range')")
        return r

    def frem(self, a: ir.Value, b_: ir.Value) -> ir.Value:
        """C's ``fmod``: LLVM's ``frem``, or the target's library function where ``frem`` is inexact (PTX)."""
        library = self.ctx.target.llvm_intrinsic_symbol("frem", 32 if a.type == lt.F32 else 64)
        if library is None:
            return self.b.frem(a, b_)
        return self.b.call(self.ctx.declare(library, ir.FunctionType(a.type, [a.type, a.type])), [a, b_])

    def is_finite(self, v: ir.Value) -> ir.Value:
        return self.b.fcmp_ordered("<", self.call_intrinsic("llvm.fabs", [v]), ir.Constant(v.type, float("inf")))

    def int_binop(self, kind: BinOpKind, a: ir.Value, b_: ir.Value, t: ScalarType) -> ir.Value:
        b = self.b
        if kind in _INT_PLAIN:  # wrapping arithmetic and bitwise ops: one LLVM instruction each
            return getattr(b, _INT_PLAIN[kind])(a, b_)
        if kind in (BinOpKind.FLOORDIV, BinOpKind.MOD):
            zero = ir.Constant(a.type, 0)
            self.check(b.icmp_unsigned("==", b_, zero), "ZeroDivisionError", "integer division or modulo by zero")
            if not t.is_signed:
                return b.udiv(a, b_) if kind is BinOpKind.FLOORDIV else b.urem(a, b_)
            minus_one = b.icmp_signed("==", b_, ir.Constant(a.type, -1))
            safe = b.select(minus_one, ir.Constant(a.type, 1), b_)
            q, r = b.sdiv(a, safe), b.srem(a, safe)
            adjust = b.and_(b.icmp_signed("!=", r, zero), b.icmp_signed("<", b.xor(r, b_), zero))
            if kind is BinOpKind.FLOORDIV:
                q = b.select(adjust, b.sub(q, ir.Constant(a.type, 1)), q)
                return b.select(minus_one, b.neg(a), q)
            r = b.select(adjust, b.add(r, b_), r)
            return b.select(minus_one, zero, r)
        if kind is BinOpKind.POW:
            return self.int_pow(a, b_, t)
        raise AssertionError(kind)

    def int_pow(self, base: ir.Value, exp: ir.Value, t: ScalarType) -> ir.Value:
        """Exponentiation by squaring, wrapping like the other integer ops."""
        b = self.b
        if t.is_signed:
            self.check(b.icmp_signed("<", exp, ir.Constant(exp.type, 0)), "ValueError",
                       "negative exponent in integer ** (use a float base, e.g. 2.0 ** n)")
        result_slot = b.alloca(base.type)
        base_slot = b.alloca(base.type)
        exp_slot = b.alloca(exp.type)
        b.store(ir.Constant(base.type, 1), result_slot)
        b.store(base, base_slot)
        b.store(exp, exp_slot)
        head = b.append_basic_block("pow.head")
        body = b.append_basic_block("pow.body")
        done = b.append_basic_block("pow.done")
        b.branch(head)
        b.position_at_end(head)
        e = b.load(exp_slot)
        b.cbranch(b.icmp_unsigned("!=", e, ir.Constant(e.type, 0)), body, done)
        b.position_at_end(body)
        r, x = b.load(result_slot), b.load(base_slot)
        odd = b.trunc(e, lt.I1)
        b.store(b.select(odd, b.mul(r, x), r), result_slot)
        b.store(b.mul(x, x), base_slot)
        b.store(b.lshr(e, ir.Constant(e.type, 1)), exp_slot)
        b.branch(head)
        b.position_at_end(done)
        return b.load(result_slot)

    def shift(self, kind: BinOpKind, a: ir.Value, n: ir.Value, t: ScalarType) -> ir.Value:
        b = self.b
        bits = ir.Constant(a.type, t.bits)
        if t.is_signed:
            self.check(b.icmp_signed("<", n, ir.Constant(n.type, 0)), "ValueError", "negative shift count")
        big = b.icmp_unsigned(">=", n, bits)
        safe = b.select(big, ir.Constant(a.type, 0), n)
        if kind is BinOpKind.LSHIFT:
            return b.select(big, ir.Constant(a.type, 0), b.shl(a, safe))
        if t.is_signed:
            return b.select(big, b.ashr(a, ir.Constant(a.type, t.bits - 1)), b.ashr(a, safe))
        return b.select(big, ir.Constant(a.type, 0), b.lshr(a, safe))

    # ------------------------------------------------------------------ arrays and tuples
    def element_pointer(self, arr: ir.Value, at: ArrayType, indices: list[tuple[ir.Value, Type]]) -> ir.Value:
        b = self.b
        data = b.extract_value(arr, 0)
        shape = b.extract_value(arr, 1)
        strides = b.extract_value(arr, 2)
        offset: Optional[ir.Value] = None
        for k, (idx, it) in enumerate(indices):
            i = self.coerce(idx, it, I64)
            n = b.extract_value(shape, k)
            if not (isinstance(it, ScalarType) and not it.is_signed):
                i = b.select(b.icmp_signed("<", i, ir.Constant(lt.I64, 0)), b.add(i, n), i)
            if self.options.boundscheck:
                self.check(b.icmp_unsigned(">=", i, n), "IndexError", "index out of range")
            if at.layout == "C":
                offset = i if offset is None else b.add(b.mul(offset, n), i)
            else:
                term = b.mul(i, b.extract_value(strides, k))
                offset = term if offset is None else b.add(offset, term)
        assert offset is not None
        if at.layout == "C":
            return b.gep(data, [offset], inbounds=True)
        raw = b.gep(b.bitcast(data, lt.PTR), [offset], inbounds=True)
        return b.bitcast(raw, data.type)

    def op_GetItem(self, op: GetItem) -> None:
        obj_t = self.t(op.obj)
        obj = self.load(op.obj)
        if isinstance(obj_t, ArrayType):
            ptr = self.element_pointer(obj, obj_t, [(self.load(i), self.t(i)) for i in op.index])
            value = self.b.load(ptr)
            if obj_t.dtype.kind == "b":
                value = self.b.icmp_unsigned("!=", value, ir.Constant(lt.I8, 0))
            self.store(op.dest, value, obj_t.dtype)
            return
        assert isinstance(obj_t, TupleType)
        self.store(op.dest, self.tuple_item(obj, obj_t, op.index[0]), self.t(op.dest))

    def tuple_item(self, tup: ir.Value, tt: TupleType, index: Var) -> ir.Value:
        b = self.b
        n = len(tt.items)
        if type(self.consts.get(index.name)) is int:
            return b.extract_value(tup, self.consts[index.name] % n)
        idx = self.coerce(self.load(index), self.t(index), I64)
        slot = b.alloca(tup.type)
        b.store(tup, slot)
        idx = b.select(b.icmp_signed("<", idx, ir.Constant(lt.I64, 0)), b.add(idx, ir.Constant(lt.I64, n)), idx)
        self.check(b.icmp_unsigned(">=", idx, ir.Constant(lt.I64, n)), "IndexError", "tuple index out of range")
        items = b.bitcast(slot, value_type(tt.items[0]).as_pointer())
        return b.load(b.gep(items, [idx]))

    def op_SetItem(self, op: SetItem) -> None:
        obj_t = self.t(op.obj)
        assert isinstance(obj_t, ArrayType)
        ptr = self.element_pointer(self.load(op.obj), obj_t, [(self.load(i), self.t(i)) for i in op.index])
        value = self.coerce(self.load(op.value), self.t(op.value), obj_t.dtype)
        if obj_t.dtype.kind == "b":
            value = self.b.zext(value, lt.I8)
        self.b.store(value, ptr)

    # ------------------------------------------------------------------ calls and intrinsics
    def op_Call(self, op: Call) -> None:
        argtypes = tuple(self.t(a) for a in op.args)
        fn = self.callee(op.callee, argtypes)
        out = self.b.alloca(fn.args[0].type.pointee if hasattr(fn.args[0].type, "pointee") else lt.I8)
        status = self.b.call(fn, [self.b.bitcast(out, fn.args[0].type)] + [self.load(a) for a in op.args])
        with self.b.if_then(self.b.icmp_unsigned("!=", status, ir.Constant(lt.STATUS, 0)), likely=False):
            self.b.ret(ir.Constant(lt.STATUS, 1))
        if op.dest.name in self.fn.types:
            self.b.store(self.b.load(out), self.slots[op.dest.name])

    def op_IntrinsicCall(self, op: IntrinsicCall) -> None:
        from .intrinsics import lower_intrinsic
        if op.fn.value.startswith("gpu."):
            from .gpu import lower_gpu_intrinsic
            result = lower_gpu_intrinsic(self, op)
        else:
            argtypes = [self.t(a) for a in op.args]
            result = lower_intrinsic(self, op.fn, [self.load(a) for a in op.args], argtypes, self.t(op.dest))
        self.b.store(result, self.slots[op.dest.name])
        if op.dest.name in self.flags:
            self.b.store(ir.Constant(lt.I1, 1), self.flags[op.dest.name])

    # ------------------------------------------------------------------ terminators
    def op_Jump(self, op: Jump) -> None:
        self.b.branch(self.targets[op.target])

    def op_Branch(self, op: Branch) -> None:
        self.b.cbranch(self.load(op.cond), self.targets[op.if_true], self.targets[op.if_false])

    def op_Return(self, op: Return) -> None:
        if op.value is not None and self.fn.return_type != NONE:
            value = self.coerce(self.load(op.value), self.t(op.value), self.fn.return_type)
            self.b.store(value, self.llfn.args[0])
        self.b.ret(ir.Constant(lt.STATUS, 0))

    def op_Raise(self, op: Raise) -> None:
        self.raise_(op.exc, op.message)


_NO_WRAP_OPS = {
    BinOpKind.ADD: lambda b, x, y: b.add(x, y, flags=("nsw",)),
    BinOpKind.SUB: lambda b, x, y: b.sub(x, y, flags=("nsw",)),
    BinOpKind.MUL: lambda b, x, y: b.mul(x, y, flags=("nsw",)),
}


def _index_only_temps(fn: Function) -> set[str]:
    """Temporaries computed by integer arithmetic whose only use is as an array index."""
    used_as_index: dict[str, bool] = {}
    for _, op in fn.ops():
        index_vars = {v.name for v in getattr(op, "index", ())} if isinstance(op, (GetItem, SetItem)) else set()
        for v in uses(op):
            ok = v.name in index_vars and not (isinstance(op, SetItem) and v == op.value) \
                and not (isinstance(op, (GetItem, SetItem)) and v == op.obj)
            used_as_index[v.name] = used_as_index.get(v.name, True) and ok
    return {op.dest.name for _, op in fn.ops()
            if isinstance(op, BinOp) and op.dest.name.isdigit() and used_as_index.get(op.dest.name, False)}


def _loop_counter_add(op: BinOp) -> bool:
    """``$k = $k + 1`` (a loop's trip counter) or ``start + $k`` (a unit-step range's value): no wrap."""
    names = (op.lhs.name, op.rhs.name)
    return (op.dest.name.startswith("$k") and names[0] == op.dest.name) or \
        (names[0].startswith("$start") and names[1].startswith("$k"))


def _llname(name: str) -> str:
    return "v" + name.replace("$", "_")


def _suffix(t: ir.Type) -> str:
    if t == lt.F64:
        return "f64"
    if t == lt.F32:
        return "f32"
    return f"i{t.width}"


def declare_function(module: ir.Module, name: str, fn: Function) -> ir.Function:
    """Declare ``i32 name(ptr out, args…)`` for a typed function (its status-returning ABI)."""
    ret = fn.return_type
    assert ret is not None
    params = [value_type(fn.types[p]) for p in fn.params]
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    fnty = ir.FunctionType(lt.STATUS, [value_type(ret).as_pointer()] + params)
    llfn = ir.Function(module, fnty, name)
    llfn.args[0].add_attribute("noalias")
    return llfn
