"""Typed IR → LLVM IR, one function at a time.

    func demo:add1(%x: f64) -> f64          define i32 @aot_demo__add1_…(ptr %out, double %x) {
      %t1: f64 = binop add %x, %t0    →       %t1 = fadd double %x, 1.0
      ret %t1                                 store double %t1, ptr %out ; ret i32 0

Every compiled function returns a status (0: ok, 1: an exception is set) and writes its result through
``%out``, so errors raised deep in callees reach Python with their type and message (``context``). Variables
live in ``alloca``s (LLVM's mem2reg makes them SSA). Python's semantics are kept exactly: its numeric rules
(``numerics``), negative indices, and the domain/range errors of ``math`` (``intrinsics``).
A ``range`` loop whose bounds, once checked, make its ``//``/``%`` provably non-negative (analysis/ranges.py)
is lowered twice: a copy with ``nsw`` flags and unsigned division behind the check, the original otherwise.
Variables holding arrays count their references (``arrays``: incref on store, decref of the old value and of
every such variable when the function returns, normally or with an error).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from llvmlite import ir

from ..analysis.definite import maybe_unassigned
from ..analysis.interrupts import poll_edges
from ..analysis.ranges import Fact, LoopVersion, loop_versions
from ..infer import elementwise as elementwise_rules
from ..infer.rules import fold_int_binop
from ..infer.views import INT_INDEX
from ..intrinsics.registry import ELEMENTWISE, spec
from ..ir import (
    BinOp,
    BinOpKind,
    Block,
    Branch,
    Call,
    CmpKind,
    Compare,
    Const,
    Convert,
    Copy,
    Function,
    GetItem,
    GetView,
    IntrinsicCall,
    Jump,
    MakeTuple,
    Op,
    Raise,
    Return,
    SetItem,
    Truth,
    UnaryKind,
    UnaryOp,
    Var,
    uses,
)
from ..ir.ops import Intrinsic
from ..types import BOOL, I64, NONE, ArrayType, ListType, ScalarType, TupleType, Type, arith_type, promote
from . import (
    arrays,
    casts,
    elementwise,
    gpu_intrinsics,
    interrupt,
    lists,
    parallel,
    recursion,
    views,
)
from . import types as lt
from .context import ModuleContext
from .elementwise import Element
from .lowering import Lowerer
from .numerics import (
    WRAPPING_INT_OPS,
    check_true_division,
    checked_float_to_int,
    coerce,
    compare,
    float_binop,
    floor_by_constant,
    int_binop,
    shift,
    truth,
    tuples_equal,
)
from .recursion import Recursion
from .types import value_type


@dataclass(frozen=True)
class CodegenOptions:
    boundscheck: bool = True


class FunctionCodegen(Lowerer):
    """Lowers one typed function into ``llfn`` (already declared with the status ABI)."""

    def __init__(
        self,
        ctx: ModuleContext,
        fn: Function,
        llfn: ir.Function,
        callee: Callable[[str, tuple[Type, ...]], ir.Function],
        options: CodegenOptions,
        recursion: Recursion | None = None,
    ):
        super().__init__(ctx, llfn)
        self.fn = fn
        self.callee = callee
        self.options = options
        self.recursion = recursion  # a function on a cycle of calls: its depth and guard (codegen/recursion.py)
        # Back edges that look for a signal (Ctrl-C: codegen/interrupt.py), where errors are Python's.
        self.poll_edges = poll_edges(fn) if ctx.target.has_host_runtime else frozenset()
        self.in_chunk = False  # (the outlined body of a prange loop: codegen/parallel.py sets it)
        self.label = ""  # the IR block being lowered
        self.slots: dict[str, ir.AllocaInstr] = {}
        self.flags: dict[str, ir.AllocaInstr] = {}
        self.blocks: dict[str, ir.Block] = {}
        defs: dict[str, int] = {}
        for _, op in fn.ops():
            if op.dest_var is not None:
                defs[op.dest_var.name] = defs.get(op.dest_var.name, 0) + 1
        self.consts = {
            op.dest.name: op.value for _, op in fn.ops() if isinstance(op, Const) and defs[op.dest.name] == 1
        }
        self.index_only = set() if options.boundscheck else _index_only_temps(fn)
        read: dict[str, int] = {}
        for _, op in fn.ops():
            for v in uses(op):
                read[v.name] = read.get(v.name, 0) + 1
        self.read_once = {n for n, k in read.items() if k == 1 and n.isdigit() and defs.get(n) == 1}
        """Temporaries defined once and read once (an expression's intermediate result)."""
        self.fused = _fused_temporaries(fn, self.read_once)
        self.deferred: dict[str, tuple[tuple[Var, ...], Element]] = {}
        """Whole-array operations whose loop is their one reader's (``a * 2.0 + b``: one loop, one array)."""
        self.versions = loop_versions(fn)
        self.parallel = parallel.for_function(self)  # prange loops: outlined, run on threads
        if self.parallel is not None:
            self.versions = self.parallel.outer_versions
        self.fact: Fact | None = None  # what analysis/ranges proved about the op being lowered
        self.targets: dict[str, ir.Block] = {}  # where the block being lowered jumps to, by IR label
        # Variables whose values hold array references (counted), and the block releasing them on errors.
        counted = arrays.refcounted(ctx)
        self.owned = {n for n, t in fn.types.items() if counted and arrays.owns_references(t)}
        self.plain_counts: set[str] = set()  # (in a prange body: variables holding only arrays of the iteration,
        self.plain_calls: set[int] = set()  # whose count changes stay plain: aot.codegen.parallel)
        self.unwind: ir.Block | None = None
        self.places = _selection_places(fn)
        """``a[:, idx]`` as an assignment's target: the getview's result, written by ``setitem v, []`` (and read
        by ``getitem v, []`` in ``a[:, idx] += x``) through the getview's operands; the getview makes nothing."""

    # ------------------------------------------------------------------ scaffolding
    def lower(self) -> None:
        entry = self.llfn.append_basic_block("entry")
        self.b = ir.IRBuilder(entry)
        for name, t in self.fn.types.items():
            self.slots[name] = self.b.alloca(value_type(t), name=_llname(name))
            if name in self.owned:
                self.b.store(ir.Constant(value_type(t), None), self.slots[name])
        for name in sorted(maybe_unassigned(self.fn)):
            if name in self.slots:
                flag = self.b.alloca(lt.I1, name=_llname(name) + ".set")
                self.b.store(ir.Constant(lt.I1, 0), flag)
                self.flags[name] = flag
        if self.recursion is not None:  # (before any reference is taken: nothing to release yet)
            recursion.emit_check(self, self.recursion)
        for name, arg in zip(self.fn.params, self.llfn.args[1:]):
            self.b.store(arg, self.slots[name])
            if name in self.owned:  # arguments are borrowed: the parameter's slot holds its own reference
                arrays.incref(self.ctx, self.b, arg, self.fn.types[name])
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
            if self.parallel is not None and self.parallel.lower_block(block.label, self.blocks[block.label], targets):
                continue
            self.lower_block(block, self.blocks[block.label], targets, unguarded.get(block.label, {}))
        for v in guarded:
            self.lower_fast_version(v, guards[v.preheader][1])

    def lower_block(
        self, block: Block, llblock: ir.Block, targets: dict[str, ir.Block], facts: Mapping[tuple[str, int], Fact]
    ) -> None:
        self.b.position_at_end(llblock)
        self.targets = targets
        self.label = block.label
        for i, op in enumerate(block.ops):
            self.fact = facts.get((block.label, i))
            self.op(op)
        self.fact = None

    def lower_fast_version(self, v: LoopVersion, guard: ir.Block) -> None:
        """The guard (the loop's bounds are in range) and a second copy of the loop using ``v.facts``; the copy
        leaves the loop to the same blocks as the original, and variables live in the same slots."""
        copies = {label: self.llfn.append_basic_block(label + ".fast") for label in v.blocks}
        self.b.position_at_end(guard)
        ok: ir.Value | None = None
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
                self.raise_(
                    "UnboundLocalError",
                    f"cannot access local variable '{var.name}' where it is not associated with a value",
                )
        return self.b.load(self.slots[var.name])

    def store(self, var: Var, value: ir.Value, src_type: Type) -> None:
        self.assign(var.name, coerce(self, value, src_type, self.t(var)))

    def assign(self, name: str, value: ir.Value, fresh: bool = False) -> None:
        """Store ``value`` into variable ``name``'s slot; a counted variable takes a reference to it (``fresh``:
        the value is a new reference already, which the slot takes over) and drops the one to its old value."""
        if name in self.owned:
            t = self.fn.types[name]
            if not fresh:
                self.counted(name, arrays.incref(self.ctx, self.b, value, t))
            old = self.b.load(self.slots[name])
            self.b.store(value, self.slots[name])
            self.counted(name, arrays.decref(self.ctx, self.b, old, t))
        else:
            self.b.store(value, self.slots[name])
        if name in self.flags:
            self.b.store(ir.Constant(lt.I1, 1), self.flags[name])

    def release_all(self) -> None:
        """Drop the reference every counted variable holds (unassigned ones hold none)."""
        for name in sorted(self.owned):
            self.counted(name, arrays.decref(self.ctx, self.b, self.b.load(self.slots[name]), self.fn.types[name]))

    def counted(self, name: str, calls: list[ir.CallInstr]) -> None:
        if name in self.plain_counts:
            self.plain_calls.update(id(c) for c in calls)

    def error_return(self) -> None:
        if not self.owned:
            super().error_return()
            return
        if self.unwind is None:
            self.unwind = self.llfn.append_basic_block("unwind")
            here = self.b.block
            self.b.position_at_end(self.unwind)
            self.release_all()
            self.b.ret(ir.Constant(lt.STATUS, 1))
            self.b.position_at_end(here)
        self.b.branch(self.unwind)

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
            self.store(op.dest, checked_float_to_int(self, value, src), I64)
        else:
            self.store(op.dest, value, src)

    def truth(self, value: ir.Value, t: Type) -> ir.Value:
        """Python's truth test (``numerics.truth``; a list is true when it has items)."""
        if isinstance(t, ListType):
            return self.b.icmp_signed("!=", lists.length(self.b, value), ir.Constant(lt.I64, 0))
        return truth(self, value, t)

    def op_Truth(self, op: Truth) -> None:
        self.store(op.dest, self.truth(self.load(op.src), self.t(op.src)), BOOL)

    def op_MakeTuple(self, op: MakeTuple) -> None:
        t = self.t(op.dest)
        assert isinstance(t, TupleType)
        out = ir.Constant(value_type(t), ir.Undefined)
        for i, (item, it) in enumerate(zip(op.items, t.items)):
            out = self.b.insert_value(out, coerce(self, self.load(item), self.t(item), it), i)
        self.assign(op.dest.name, out)

    def literal(self, *operands: Var) -> tuple[bool, ...]:
        """Which operands are Python literals (a frontend temporary holding a constant), which adapt to an
        array's dtype as in inference (``aot.infer.elementwise``)."""
        return tuple(v.name.isdigit() and v.name in self.consts for v in operands)

    def elementwise(self, op: Op, operands: tuple[Var, ...], element: Element) -> None:
        """A whole-array operation: its new array goes into ``op.dest``'s slot before it is filled. One whose
        result is an operand of the next (``fused``) emits nothing: its element function runs inside its
        reader's loop, on its own operands (broadcasting all of them together gives the same shape)."""
        dest_t = self.t(op.dest)  # type: ignore[attr-defined]
        assert isinstance(dest_t, ArrayType)
        name = op.dest.name  # type: ignore[attr-defined]
        if name in self.fused:
            self.deferred[name] = (operands, element)
            return
        operands, element = self.expand(operands, element)
        pairs = [(self.load(v), self.t(v)) for v in operands]
        reusable = [v.name in self.read_once and v.name != name for v in operands]
        if name in self.owned and all(v.name != name for v in operands):
            hold = lambda out: self.assign(name, out, fresh=True)  # noqa: E731
            elementwise.lower(self, pairs, dest_t, element, hold, reusable)
        else:
            self.assign(name, elementwise.lower(self, pairs, dest_t, element, None, reusable), fresh=True)

    def expand(self, operands: tuple[Var, ...], element: Element) -> tuple[tuple[Var, ...], Element]:
        """``operands`` with each deferred one replaced by its own operands, and the element function over
        those (composed with the deferred ones' element functions)."""
        if not any(v.name in self.deferred for v in operands):
            return operands, element
        leaves: list[Var] = []
        parts: list[tuple[int, int, Element | None]] = []
        for v in operands:
            if v.name in self.deferred:
                inner, inner_element = self.expand(*self.deferred[v.name])
                parts.append((len(leaves), len(inner), inner_element))
                leaves.extend(inner)
            else:
                parts.append((len(leaves), 1, None))
                leaves.append(v)

        def composed(values: list[ir.Value]) -> ir.Value:
            args = [values[at] if inner is None else inner(values[at : at + n]) for at, n, inner in parts]
            return element(args)

        return tuple(leaves), composed

    def op_UnaryOp(self, op: UnaryOp) -> None:
        src = self.t(op.operand)
        if isinstance(src, ArrayType):
            rt = self.t(op.dest)
            assert isinstance(rt, ArrayType)
            self.elementwise(op, (op.operand,), elementwise.unary_element(self, op.op, rt.dtype))
            return
        v = self.load(op.operand)
        if op.op is UnaryKind.NOT:
            self.store(op.dest, self.b.not_(self.truth(v, src)), BOOL)
            return
        assert isinstance(src, ScalarType)
        t = arith_type(src)
        v = coerce(self, v, src, t)
        if op.op is UnaryKind.NEG:
            v = self.b.fneg(v) if t.is_float else self.b.neg(v)
        elif op.op is UnaryKind.INVERT:
            v = self.b.not_(v)
        self.store(op.dest, v, t)

    def op_Compare(self, op: Compare) -> None:
        a, b_ = self.t(op.lhs), self.t(op.rhs)
        if isinstance(a, ArrayType) or isinstance(b_, ArrayType):
            common = elementwise_rules.compare_operand_dtype(a, b_, *self.literal(op.lhs, op.rhs))
            self.elementwise(op, (op.lhs, op.rhs), elementwise.compare_element(self, op.op, [a, b_], common))
            return
        if isinstance(a, TupleType) and isinstance(b_, TupleType):  # (== and != only: aot.infer.rules)
            same = tuples_equal(self, self.load(op.lhs), a, self.load(op.rhs), b_)
            self.store(op.dest, same if op.op is CmpKind.EQ else self.b.not_(same), BOOL)
            return
        assert isinstance(a, ScalarType) and isinstance(b_, ScalarType)
        common = promote(a, b_)
        lhs = coerce(self, self.load(op.lhs), a, common)
        rhs = coerce(self, self.load(op.rhs), b_, common)
        self.store(op.dest, compare(self, op.op, lhs, rhs, common), BOOL)

    def op_BinOp(self, op: BinOp) -> None:
        rt = self.t(op.dest)
        at, bt = self.t(op.lhs), self.t(op.rhs)
        if isinstance(rt, ArrayType):
            elementwise.check_python_ints(self, [(self.load(op.lhs), at), (self.load(op.rhs), bt)])
            self.elementwise(op, (op.lhs, op.rhs), elementwise.binop_element(self, op.op, [at, bt], rt.dtype))
            return
        assert isinstance(rt, ScalarType) and isinstance(at, ScalarType) and isinstance(bt, ScalarType)
        a, b_ = self.load(op.lhs), self.load(op.rhs)
        kind = op.op
        if kind is BinOpKind.TRUEDIV and not (at.is_float or bt.is_float):
            check_true_division(self, b_, bt)
        if kind in (BinOpKind.LSHIFT, BinOpKind.RSHIFT):
            self.store(op.dest, shift(self, kind, coerce(self, a, at, rt), coerce(self, b_, bt, rt), rt), rt)
            return
        a, b_ = coerce(self, a, at, rt), coerce(self, b_, bt, rt)
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
        if kind is BinOpKind.ADD and rt.is_int and op.nowrap:
            # Loop counters and ``start + k`` of unit-step ranges stay inside the range's bounds, so the
            # add cannot wrap (the frontend's ``nowrap``: aot/frontend/loops.py); saying so lets LLVM
            # prove index ranges (dropping negative-index fixups).
            self.store(op.dest, self.b.add(a, b_, flags=("nsw",)), rt)
            return
        divisor = self.consts.get(op.rhs.name)
        if (
            kind in (BinOpKind.FLOORDIV, BinOpKind.MOD)
            and rt.is_int
            and rt.is_signed
            and type(divisor) is int
            and 0 < divisor < 2 ** (rt.bits - 1)
        ):
            result = floor_by_constant(self, kind, a, divisor, rt)
            if result is not None:
                self.store(op.dest, result, rt)
                return
        self.store(op.dest, float_binop(self, kind, a, b_) if rt.is_float else int_binop(self, kind, a, b_, rt), rt)

    def proven_int_binop(self, kind: BinOpKind, a: ir.Value, b_: ir.Value, fact: Fact) -> ir.Value:
        """An i64 op whose operands are proven in range (analysis/ranges): ``nsw``/``nuw`` flags, or unsigned
        division where the dividend is >= 0 and the divisor >= 1 (then it equals Python's floor division)."""
        if fact is Fact.UNSIGNED_DIVISION:
            return self.b.udiv(a, b_) if kind is BinOpKind.FLOORDIV else self.b.urem(a, b_)
        flags = ("nsw", "nuw") if fact is Fact.NO_WRAP else ("nsw",)
        return getattr(self.b, WRAPPING_INT_OPS[kind])(a, b_, flags=flags)

    # ------------------------------------------------------------------ arrays and tuples
    def element_pointer(self, arr: ir.Value, at: ArrayType, indices: list[tuple[ir.Value, Type]]) -> ir.Value:
        b = self.b
        data = b.extract_value(arr, 0)
        shape = b.extract_value(arr, 1)
        strides = b.extract_value(arr, 2)
        offset: ir.Value | None = None
        for k, (idx, it) in enumerate(indices):
            i = coerce(self, idx, it, I64)
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

    def advanced(self, obj: Var, spec: str, index: tuple[Var, ...]) -> elementwise_rules.Advanced | None:
        """How ``obj[…]`` selects with an index array or list, or None (``aot.infer.elementwise.advanced``; a
        mask, ``a[mask]``, is None too)."""
        obj_t, types = self.t(obj), tuple(self.t(v) for v in index)
        if not isinstance(obj_t, ArrayType) or elementwise_rules.is_mask(obj_t, types):
            return None
        return elementwise_rules.advanced(obj_t, spec, types)

    def select_advanced(self, dest: Var, obj: Var, plan: elementwise_rules.Advanced, index: tuple[Var, ...]) -> None:
        """``dest = obj[…idx…]``: a new array, held by ``dest`` while it is filled (an index out of bounds
        releases it)."""
        obj_t = self.t(obj)
        assert isinstance(obj_t, ArrayType)
        args = (self.load(obj), obj_t, plan, [(self.load(v), self.t(v)) for v in index])
        name = dest.name
        if name in self.owned and all(v.name != name for v in (obj, *index)):
            elementwise.gather(self, *args, lambda out: self.assign(name, out, fresh=True))
        else:
            self.assign(name, elementwise.gather(self, *args, None), fresh=True)

    def op_GetItem(self, op: GetItem) -> None:
        if op.obj.name in self.places and not op.index:  # (``a[:, idx] += x`` reads the selection)
            view = self.places[op.obj.name]
            plan = self.advanced(view.obj, view.spec, view.index)
            assert plan is not None
            self.select_advanced(op.dest, view.obj, plan, view.index)
            return
        plan = self.advanced(op.obj, INT_INDEX * len(op.index), op.index)
        if plan is not None:
            self.select_advanced(op.dest, op.obj, plan, op.index)
            return
        obj_t = self.t(op.obj)
        obj = self.load(op.obj)
        dest_t = self.t(op.dest)
        if isinstance(obj_t, ArrayType) and len(op.index) == 1 and isinstance(self.t(op.index[0]), ArrayType):
            it = self.t(op.index[0])  # a[mask]: a new array
            assert isinstance(dest_t, ArrayType) and isinstance(it, ArrayType)
            index = self.load(op.index[0])
            name = op.dest.name
            if name in self.owned and name not in (op.obj.name, op.index[0].name):
                hold = lambda out: self.assign(name, out, fresh=True)  # noqa: E731
                elementwise.select(self, obj, obj_t, index, it, dest_t, hold)
            else:
                self.assign(name, elementwise.select(self, obj, obj_t, index, it, dest_t, None), fresh=True)
            return
        if isinstance(obj_t, ArrayType) and isinstance(dest_t, ArrayType):  # a[i] of an N-D array
            index = [(self.load(i), self.t(i)) for i in op.index]
            self.store(op.dest, views.index_view(self, obj, obj_t, index, dest_t), dest_t)
            return
        if isinstance(obj_t, ListType):
            at = op.index[0]
            self.store(op.dest, lists.get_item(self, obj, obj_t, self.load(at), self.t(at)), obj_t.item)
            return
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
        idx = coerce(self, self.load(index), self.t(index), I64)
        slot = b.alloca(tup.type)
        b.store(tup, slot)
        idx = b.select(b.icmp_signed("<", idx, ir.Constant(lt.I64, 0)), b.add(idx, ir.Constant(lt.I64, n)), idx)
        self.check(b.icmp_unsigned(">=", idx, ir.Constant(lt.I64, n)), "IndexError", "tuple index out of range")
        items = b.bitcast(slot, value_type(tt.items[0]).as_pointer())
        return b.load(b.gep(items, [idx]))

    def op_SetItem(self, op: SetItem) -> None:
        obj_t = self.t(op.obj)
        if isinstance(obj_t, ListType):
            at = op.index[0]
            value = coerce(self, self.load(op.value), self.t(op.value), obj_t.item)
            lists.set_item(self, self.load(op.obj), obj_t, self.load(at), self.t(at), value)
            return
        assert isinstance(obj_t, ArrayType)
        view = self.places.get(op.obj.name) if not op.index else None
        obj, spec, subscript = (
            (view.obj, view.spec, view.index) if view is not None else (op.obj, INT_INDEX * len(op.index), op.index)
        )
        plan = self.advanced(obj, spec, subscript)
        if plan is not None:  # a[idx] = v, a[[k, p]] = v, a[i, idx] = v, a[:, idx] = v
            target_t = self.t(obj)
            assert isinstance(target_t, ArrayType)
            items = [(self.load(v), self.t(v)) for v in subscript]
            elementwise.scatter(self, self.load(obj), target_t, plan, items, self.load(op.value), self.t(op.value))
            return
        it = self.t(op.index[0]) if len(op.index) == 1 else None
        if isinstance(it, ArrayType):  # a[mask] = v
            obj, index, value = self.load(op.obj), self.load(op.index[0]), self.load(op.value)
            elementwise.assign_selection(self, obj, obj_t, index, it, value, self.t(op.value))
            return
        if len(op.index) < obj_t.ndim:  # assignment to a view: a[1:-1] = 0.0, a[i] = row
            index = [(self.load(i), self.t(i)) for i in op.index]
            target = ArrayType(obj_t.dtype, obj_t.ndim - len(index), obj_t.layout)
            view = views.index_view(self, self.load(op.obj), obj_t, index, target)
            views.assign(self, view, target, self.load(op.value), self.t(op.value))
            return
        ptr = self.element_pointer(self.load(op.obj), obj_t, [(self.load(i), self.t(i)) for i in op.index])
        value = casts.store_convert(self, self.load(op.value), self.t(op.value), obj_t.dtype)
        if obj_t.dtype.kind == "b":
            value = self.b.zext(value, lt.I8)
        self.b.store(value, ptr)

    def op_GetView(self, op: GetView) -> None:
        if op.dest.name in self.places:  # (an assignment's target: written by its setitem)
            return
        plan = self.advanced(op.obj, op.spec, op.index)
        if plan is not None:  # a[:, idx]: a new array
            self.select_advanced(op.dest, op.obj, plan, op.index)
            return
        obj_t, dest_t = self.t(op.obj), self.t(op.dest)
        index = [(self.load(i), self.t(i)) for i in op.index]
        if isinstance(obj_t, ListType):  # lst[a:b:c]: a new list
            self.assign(op.dest.name, views.list_slice(self, self.load(op.obj), obj_t, index), fresh=True)
            return
        assert isinstance(obj_t, ArrayType) and isinstance(dest_t, ArrayType)
        self.store(op.dest, views.get_view(self, self.load(op.obj), obj_t, op.spec, index, dest_t), dest_t)

    # ------------------------------------------------------------------ calls and intrinsics
    def op_Call(self, op: Call) -> None:
        argtypes = tuple(self.t(a) for a in op.args)
        fn = self.callee(op.callee, argtypes)
        out = self.b.alloca(fn.args[0].type.pointee if hasattr(fn.args[0].type, "pointee") else lt.I8)  # (hoisted)
        args = [self.b.bitcast(out, fn.args[0].type)] + [self.load(a) for a in op.args]
        rec = self.recursion
        body = rec.guarded.get((op.callee, argtypes)) if rec is not None else None
        if rec is not None and body is not None and self.b.function is self.llfn:  # (not from a prange body)
            status = recursion.guarded_call(self.b, body, args, rec.depth, rec.guard)
        else:
            status = self.b.call(fn, args)
        with self.b.if_then(self.b.icmp_unsigned("!=", status, ir.Constant(lt.STATUS, 0)), likely=False):
            self.error_return()
        if op.dest.name in self.fn.types:
            self.assign(op.dest.name, self.b.load(out), fresh=True)  # a result is a new reference

    def op_IntrinsicCall(self, op: IntrinsicCall) -> None:
        spec(op.fn).lower(self, op)  # (its descriptor's lowering: aot/intrinsics, aot/codegen/lowering.py)

    def list_intrinsic(self, op: IntrinsicCall) -> None:
        """``len(lst)``, and the intrinsics of ``aot.codegen.lists``: ``append`` changes the list in place
        (its result is the list, assigned back to the list's own variable: nothing to count), the others
        give a new reference."""
        argtypes = [self.t(a) for a in op.args]
        args = [self.load(a) for a in op.args]
        if op.fn in (Intrinsic.LEN, Intrinsic.ITER_LEN):
            self.store(op.dest, lists.length(self.b, args[0]), I64)
            return
        if op.fn in (Intrinsic.LIST_SORT, Intrinsic.LIST_REVERSE):  # (in place; its value is None)
            lst_t = argtypes[0]
            assert isinstance(lst_t, ListType)
            (lists.sort if op.fn is Intrinsic.LIST_SORT else lists.reverse)(self, args[0], lst_t)
            self.store(op.dest, ir.Constant(lt.I8, 0), NONE)
            return
        if op.fn is Intrinsic.UNPACK:  # (a list or a 1-D array: its length, checked now)
            n = (
                lists.length(self.b, args[0])
                if isinstance(argtypes[0], ListType)
                else arrays.shape_of(self.b, args[0], 1)[0]
            )
            lists.check_unpack(self, n, self.constant_value(op.args[1]))
            self.store(op.dest, ir.Constant(lt.I8, 0), NONE)
            return
        if op.fn is Intrinsic.LIST_APPEND:
            lst_t = argtypes[0]
            assert isinstance(lst_t, ListType)
            item_t = self.t(op.dest)
            assert isinstance(item_t, ListType)  # (the variable's type: the appended value converts to its item)
            lists.append(self, args[0], item_t, coerce(self, args[1], argtypes[1], item_t.item))
            if op.dest != op.args[0]:
                self.store(op.dest, args[0], lst_t)
            return
        self.assign(op.dest.name, lists.lower(self, op.fn, args, argtypes, self.t(op.dest), op.span), fresh=True)

    def gpu_intrinsic(self, op: IntrinsicCall) -> ir.Value:
        """The value of an ``aot.gpu`` intrinsic (``i8 0`` for ``sync_threads``, whose type is none); its axis
        or shape is a compile-time constant, and an atomic add's target an element of an array."""
        fn = op.fn
        if fn in gpu_intrinsics.INDEX_INTRINSICS:
            return gpu_intrinsics.index(self, fn, self.constant_value(op.args[0]) if op.args else 0)
        if fn is Intrinsic.ATOMIC_ADD:
            arr_var, index_var, value_var = op.args
            at = self.t(arr_var)
            assert isinstance(at, ArrayType)
            it = self.t(index_var)
            index = self.load(index_var)
            if isinstance(it, TupleType):
                indices = [(self.b.extract_value(index, k), t) for k, t in enumerate(it.items)]
            else:
                indices = [(index, it)]
            ptr = self.element_pointer(self.load(arr_var), at, indices)
            value = coerce(self, self.load(value_var), self.t(value_var), at.dtype)
            return gpu_intrinsics.atomic_add(self, ptr, value, at.dtype)
        if fn is Intrinsic.SYNC_THREADS:
            return gpu_intrinsics.sync_threads(self)
        if fn is Intrinsic.SHARED_ARRAY:
            at = self.t(op.dest)
            assert isinstance(at, ArrayType)
            shape = self.constant_value(op.args[0])
            return gpu_intrinsics.shared_array(self, at, shape if isinstance(shape, tuple) else (shape,))
        raise NotImplementedError(f"intrinsic {fn.value} on the {self.ctx.target.owner} target")

    def constant_value(self, var: Var) -> Any:
        """A compile-time operand (an axis, a shape): a constant, or a tuple built of constants."""
        if var.name in self.consts:
            return self.consts[var.name]
        for _, op in self.fn.ops():
            if isinstance(op, MakeTuple) and op.dest == var:
                return tuple(self.constant_value(v) for v in op.items)
            if isinstance(op, Const) and op.dest == var:
                return op.value
            if isinstance(op, BinOp) and op.dest == var:
                value = fold_int_binop(op.op, self.constant_value(op.lhs), self.constant_value(op.rhs))
                if value is not None:
                    return value
        raise AssertionError(f"{var} is not a compile-time constant")

    # ------------------------------------------------------------------ terminators
    def op_Jump(self, op: Jump) -> None:
        if (self.label, op.target) in self.poll_edges:
            interrupt.poll(self, self.in_chunk)
        self.b.branch(self.targets[op.target])

    def op_Branch(self, op: Branch) -> None:
        cond = self.load(op.cond)
        arms = [self.targets[op.if_true], self.targets[op.if_false]]
        for k, target in enumerate((op.if_true, op.if_false)):
            if (self.label, target) in self.poll_edges:  # (only on that edge: the other may be an inner loop's)
                here = self.b.block
                self.b.position_at_end(self.llfn.append_basic_block(f"{self.label}.poll"))
                arms[k] = self.b.block
                interrupt.poll(self, self.in_chunk)
                self.b.branch(self.targets[target])
                self.b.position_at_end(here)
        self.b.cbranch(cond, arms[0], arms[1])

    def op_Return(self, op: Return) -> None:
        ret = self.fn.return_type
        if ret != NONE:
            assert ret is not None  # typed IR
            if op.value is None:  # (a bare ``return`` of a function returning an optional: aot.codegen.optional)
                value = coerce(self, ir.Constant(lt.I8, 0), NONE, ret)
            else:
                value = coerce(self, self.load(op.value), self.t(op.value), ret)
            if self.owned and arrays.owns_references(ret):  # the caller owns the result
                arrays.incref(self.ctx, self.b, value, ret)
            self.b.store(value, self.llfn.args[0])
        self.release_all()
        self.b.ret(ir.Constant(lt.STATUS, 0))

    def op_Raise(self, op: Raise) -> None:
        self.raise_(op.exc, op.message)


_NO_WRAP_OPS = {
    BinOpKind.ADD: lambda b, x, y: b.add(x, y, flags=("nsw",)),
    BinOpKind.SUB: lambda b, x, y: b.sub(x, y, flags=("nsw",)),
    BinOpKind.MUL: lambda b, x, y: b.mul(x, y, flags=("nsw",)),
}


def _selection_places(fn: Function) -> dict[str, GetView]:
    """The getviews selecting with an index array (``a[:, idx]``) whose result an assignment writes."""
    written = {op.obj.name for _, op in fn.ops() if isinstance(op, SetItem) and not op.index}
    out = {}
    for _, op in fn.ops():
        if isinstance(op, GetView) and op.dest.name in written and isinstance(fn.types.get(op.obj.name), ArrayType):
            obj_t = fn.types[op.obj.name]
            assert isinstance(obj_t, ArrayType)
            if elementwise_rules.advanced(obj_t, op.spec, tuple(fn.types[v.name] for v in op.index)) is not None:
                out[op.dest.name] = op
    return out


def _index_only_temps(fn: Function) -> set[str]:
    """Temporaries computed by integer arithmetic whose only use is as an array index."""
    used_as_index: dict[str, bool] = {}
    for _, op in fn.ops():
        index_vars = {v.name for v in getattr(op, "index", ())} if isinstance(op, (GetItem, SetItem)) else set()
        for v in uses(op):
            ok = (
                v.name in index_vars
                and not (isinstance(op, SetItem) and v == op.value)
                and not (isinstance(op, (GetItem, SetItem)) and v == op.obj)
            )
            used_as_index[v.name] = used_as_index.get(v.name, True) and ok
    return {
        op.dest.name
        for _, op in fn.ops()
        if isinstance(op, BinOp) and op.dest.name.isdigit() and used_as_index.get(op.dest.name, False)
    }


def _llname(name: str) -> str:
    return "v" + name.replace("$", "_")


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


def _elementwise_op(op: Op, types: Mapping[str, Type]) -> bool:
    """Whether ``op`` is lowered by ``FunctionCodegen.elementwise`` (one loop over a scalar element function)."""
    dest = op.dest_var
    if dest is None or not isinstance(types.get(dest.name), ArrayType):
        return False
    if isinstance(op, (BinOp, UnaryOp, Compare)):
        return True
    return isinstance(op, IntrinsicCall) and (op.fn is Intrinsic.ARRAY_ASTYPE or op.fn in ELEMENTWISE)


def _fused_temporaries(fn: Function, read_once: set[str]) -> set[str]:
    """The temporaries of whole-array operations read once, by a whole-array operation later in the same
    block, with only operations that define other temporaries and write no memory in between (so that every
    operand still holds its value when the reader's loop runs)."""
    out: set[str] = set()
    pure = (Const, BinOp, UnaryOp, Compare, GetItem, GetView)
    for block in fn.blocks:
        ops = block.ops
        for i, op in enumerate(ops):
            dest = op.dest_var
            if dest is None or dest.name not in read_once or not _elementwise_op(op, fn.types):
                continue
            for later in ops[i + 1 :]:
                if dest in uses(later):
                    if _elementwise_op(later, fn.types):
                        out.add(dest.name)
                    break
                inner = later.dest_var
                if not (
                    (isinstance(later, pure) or _elementwise_op(later, fn.types))
                    and inner is not None
                    and inner.name.isdigit()
                ):
                    break
    return out
