"""The ``prange`` loops of a ``parallel=True`` method, and whether their iterations may run at once.

    s = 0.0
    for i in aot.prange(n):     → ParallelLoop(header="bb1", body="bb2", exit="bb4", counter="$k3", count="5",
        t = a[i] * 2.0                          private={"i", "t", …}, shared={"a", "$start1", …},
        out[i] = t                              reductions=(Reduction("s", "add"),))
        s += t

The frontend marks such a loop by its trip count (``intrinsic prange.len``) and keeps its shape (``$k`` from
0 to the count, the header compares and branches). Iterations are independent when every variable the body
assigns is either private to an iteration (assigned before it is read in that iteration, and not read after
the loop) or a reduction (``s += …``, ``s -= …``, ``s *= …``, ``s = min(s, …)``, ``s = max(s, …)`` and nothing else
reads ``s`` in the body), and
when every array the body writes is touched, on some axis, only at the loop variable plus a loop-invariant
offset (so iterations touch disjoint elements). Anything else is a ``CompileError`` naming the variable.
``aot.codegen.parallel`` outlines each outermost such loop; a ``prange`` nested in one runs serially.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..diagnostics import CompileError, Diagnostic, Span
from ..ir import (
    BinOp,
    BinOpKind,
    Branch,
    Call,
    CmpKind,
    Compare,
    Const,
    Convert,
    Copy,
    Function,
    GetItem,
    IntrinsicCall,
    Jump,
    MakeTuple,
    Op,
    Raise,
    Return,
    SetItem,
    Truth,
    UnaryOp,
    successors,
    uses,
)
from ..ir.ops import Intrinsic
from ..types import ArrayType, ListType, ScalarType

# The ops a prange body may hold, and the intrinsics that may take an array there (they only read it). An op or
# an array intrinsic not listed (one added later, that might write an array) is refused in a prange body.
_KNOWN_OPS = (
    Const, Copy, BinOp, UnaryOp, Compare, Truth, Convert, Call, IntrinsicCall, MakeTuple, GetItem, SetItem, Jump,
    Branch, Return, Raise,
)  # fmt: skip
_READS_ARRAYS = frozenset({Intrinsic.LEN, Intrinsic.SHAPE, Intrinsic.SIZE, Intrinsic.NDIM})
_REDUCING = {BinOpKind.ADD: "add", BinOpKind.SUB: "add", BinOpKind.MUL: "mul"}
_SELECTING = {Intrinsic.MIN: "min", Intrinsic.MAX: "max"}


@dataclass(frozen=True)
class Reduction:
    var: str
    kind: str  # "add" (``+=``, ``-=``: partial sums start at 0), "mul" (``*=``: products start at 1), or
    # "min" / "max" (``s = min(s, …)``: each chunk starts from the value before the loop)


@dataclass(frozen=True)
class ParallelLoop:
    header: str
    body: str
    exit: str
    blocks: frozenset[str]
    counter: str
    count: str
    shared: tuple[str, ...]  # read in the body, assigned outside it: copied into each chunk
    private: tuple[str, ...]  # assigned in the body (the counter included): one copy per chunk
    reductions: tuple[Reduction, ...]


def parallel_loops(fn: Function) -> list[ParallelLoop]:
    """The outermost ``prange`` loops of a typed function that passed ``check``."""
    loops, _ = _analyse(fn)
    return loops


def check(fn: Function) -> None:
    """``CompileError`` listing every way an iteration of a ``prange`` loop could race with another."""
    _, problems = _analyse(fn)
    if problems:
        raise CompileError(problems)


def run(fn: Function, context: Any = None) -> Function:
    """The pipeline's ``check-prange`` pass: ``fn`` unchanged once ``check`` holds."""
    check(fn)
    return fn


# ------------------------------------------------------------------------------------------ analysis


def _analyse(fn: Function) -> tuple[list[ParallelLoop], list[Diagnostic]]:
    blocks = fn.block_map()
    succs = {b.label: (successors(b.ops[-1]) if b.ops else ()) for b in fn.blocks}
    found: list[tuple[str, str, str, str, str, frozenset[str], IntrinsicCall]] = []
    for _, op in fn.ops():
        if isinstance(op, IntrinsicCall) and op.fn is Intrinsic.PRANGE_LEN:
            shape = _loop_shape(fn, op.dest.name, succs)
            if shape is not None:
                found.append((*shape, op))
    if not found:
        return [], []
    outermost = [f for f in found if not any(f[0] != g[0] and f[0] in g[5] for g in found)]
    live_out = _liveness(fn, {label: list(s) for label, s in succs.items()})
    loops: list[ParallelLoop] = []
    problems: list[Diagnostic] = []
    for header, body, exit_, counter, count, loop_blocks, len_op in outermost:
        loop, errors = _classify(fn, blocks, succs, live_out, header, body, exit_, counter, count, loop_blocks, len_op)
        loops.append(loop)
        problems.extend(errors)
    return loops, problems


def _loop_shape(
    fn: Function, count: str, succs: dict[str, tuple[str, ...]]
) -> tuple[str, str, str, str, str, frozenset[str]] | None:
    """(header, body, exit, counter, count, blocks) of the counted loop whose trip count is ``count``."""
    for block in fn.blocks:
        if len(block.ops) != 2:
            continue
        cmp, br = block.ops
        if (
            isinstance(cmp, Compare)
            and cmp.op is CmpKind.LT
            and cmp.rhs.name == count
            and isinstance(br, Branch)
            and br.cond == cmp.dest
        ):
            # The loop: what the body reaches without passing the header (the frontend lets nothing but the
            # header leave a prange loop: no break, no return; a raise ends the iteration where it is).
            header, body = block.label, br.if_true
            loop = {header, body}
            stack = [body]
            while stack:
                for s in succs.get(stack.pop(), ()):
                    if s not in loop:
                        loop.add(s)
                        stack.append(s)
            return header, body, br.if_false, cmp.lhs.name, count, frozenset(loop)
    return None


def _liveness(fn: Function, succs: dict[str, list[str]]) -> dict[str, set[str]]:
    """Live variables on entry to each block over the edges ``succs``."""
    use_def: dict[str, tuple[set[str], set[str]]] = {}
    for block in fn.blocks:
        used: set[str] = set()
        defined: set[str] = set()
        for op in block.ops:
            used.update(v.name for v in uses(op) if v.name not in defined)
            if op.dest_var is not None:
                defined.add(op.dest_var.name)
        use_def[block.label] = (used, defined)
    live: dict[str, set[str]] = {label: set() for label in use_def}
    changed = True
    while changed:
        changed = False
        for block in reversed(fn.blocks):
            used, defined = use_def[block.label]
            out: set[str] = set()
            for s in succs.get(block.label, ()):
                out |= live.get(s, set())
            new = used | (out - defined)
            if new != live[block.label]:
                live[block.label] = new
                changed = True
    return live


def _classify(
    fn: Function,
    blocks: dict,
    succs: dict[str, tuple[str, ...]],
    live_in: dict[str, set[str]],
    header: str,
    body: str,
    exit_: str,
    counter: str,
    count: str,
    loop_blocks: frozenset[str],
    len_op: IntrinsicCall,
) -> tuple[ParallelLoop, list[Diagnostic]]:
    problems: list[Diagnostic] = []
    ops = [op for b in fn.blocks if b.label in loop_blocks for op in b.ops]
    defs: dict[str, list[Op]] = {}
    for op in ops:
        if op.dest_var is not None:
            defs.setdefault(op.dest_var.name, []).append(op)
    used = {v.name for op in ops for v in uses(op)}
    where = len_op.span

    def say(span: Span, message: str) -> None:
        problems.append(Diagnostic(span, message))

    for label in loop_blocks:  # (the frontend rejects break and return; a nested loop's exits stay inside)
        for s in succs[label]:
            if s not in loop_blocks and not (label == header and s == exit_):
                say(where, "a prange loop may only be left when its iterations are done")
    # Within one iteration: the header starts it, a jump back to the header ends it.
    iteration = {label: [s for s in succs[label] if s in loop_blocks and s != header] for label in loop_blocks}
    iteration[header] = [body]
    sub = Function(fn.name, fn.params, [b for b in fn.blocks if b.label in loop_blocks], fn.file, fn.span, fn.types)
    carried = _liveness(sub, iteration)[header] & set(defs) - {counter}
    reductions = []
    for name in sorted(carried):
        kind, why = _reduction(fn, name, defs, ops)
        if kind is None:
            say(_first_use(ops, name, where), f"{_shown(name)} {why}")
        else:
            reductions.append(Reduction(name, kind))
    reduced = {r.var for r in reductions}
    for name in sorted((live_in.get(exit_, set()) & set(defs)) - reduced - {counter}):
        say(
            defs[name][-1].span,
            f"{_shown(name)} is assigned in the prange loop and read after it: which iteration's value it would "
            f"hold is not defined; keep it inside the loop, or make it a reduction (s += …)",
        )
    _check_arrays(fn, ops, defs, counter, len_op, say)
    for op in ops:  # (a list is shared by reference and grows in place: no iteration may touch one)
        if any(isinstance(fn.types.get(v.name), ListType) for v in (*uses(op), op.dest_var) if v is not None):
            say(op.span, "lists are not supported in a prange loop; use range, or write into an array")
            break
    private = tuple(sorted(set(defs) - reduced))
    shared = tuple(sorted(used - set(defs)))
    loop = ParallelLoop(header, body, exit_, loop_blocks, counter, count, shared, private, tuple(reductions))
    return loop, problems


def _shown(name: str) -> str:
    return f"'{name}'" if name[:1].isidentifier() else "a value"


def _first_use(ops: list[Op], name: str, default: Span) -> Span:
    for op in ops:
        if any(v.name == name for v in uses(op)):
            return op.span
    return default


def _reduction(fn: Function, name: str, defs: dict[str, list[Op]], ops: list[Op]) -> tuple[str | None, str]:
    """The reduction ``name`` is in the loop ("add" or "mul"), or None and why not."""
    race = (
        "is read in the prange loop before it is assigned in the same iteration, so its value would come "
        "from another iteration running at the same time; only reductions (s += …, s -= …, s *= …, "
        "s = min(s, …), s = max(s, …)) may carry a value from one iteration to the next"
    )
    t = fn.types.get(name)
    if not isinstance(t, ScalarType) or t.kind not in "iuf":
        return None, race
    kinds = set()
    updates: list[Op] = []
    for op in defs[name]:
        src = op.src.name if isinstance(op, Copy) else None
        update = defs.get(src, [None])[0] if src is not None and len(defs.get(src, ())) == 1 else None
        if isinstance(update, IntrinsicCall) and update.fn in _SELECTING:
            # ``s = min(s, e)``: s first, so that ties and NaNs pick as the serial loop does
            if len(update.args) != 2 or update.args[0].name != name or update.args[1].name == name:
                return None, race + f"; write s = {update.fn.value}(s, …)"
            kinds.add(_SELECTING[update.fn])
            updates.append(update)
            continue
        if not isinstance(update, BinOp) or update.op not in _REDUCING:
            return None, race
        if not (update.lhs.name == name) ^ (update.rhs.name == name) or (
            update.op is BinOpKind.SUB and update.rhs.name == name
        ):
            return None, race
        kinds.add(_REDUCING[update.op])
        updates.append(update)
    if len(kinds) != 1:
        return None, "is updated in several ways in the prange loop (+/-, *, min, max); a reduction uses one of them"
    readers = [op for op in ops if any(v.name == name for v in uses(op))]
    if any(all(op is not u for u in updates) for op in readers):
        return None, (
            "is a reduction of the prange loop (s += …) and may not be read in the loop otherwise: "
            "its value there would depend on how iterations are split between threads"
        )
    return kinds.pop(), ""


# ------------------------------------------------------------------------------------------ arrays


def _check_arrays(fn: Function, ops: list[Op], defs: dict[str, list[Op]], counter: str, len_op: IntrinsicCall, say):
    """Arrays written in the body are touched only at the loop variable (plus an invariant) on some axis;
    calls get no arrays (they could write them)."""
    step = len_op.args[2].name

    def canon(name: str, seen: frozenset = frozenset()) -> Any:
        if name == counter:
            return ("iter",)
        if name not in defs:
            return ("inv", name)
        found = defs[name]
        if len(found) != 1 or name in seen:
            return ("unknown", name)
        op = found[0]
        seen = seen | {name}
        if isinstance(op, Const):
            return ("const", repr(op.value))
        if isinstance(op, Copy):
            return canon(op.src.name, seen)
        if isinstance(op, BinOp):
            return (op.op.value, canon(op.lhs.name, seen), canon(op.rhs.name, seen))
        return ("unknown", name)

    def invariant(c: Any) -> bool:
        if c[0] in ("inv", "const"):
            return True
        if c[0] in ("iter", "unknown"):
            return False
        return invariant(c[1]) and invariant(c[2])

    def injective(c: Any) -> bool:
        if c == ("iter",):
            return True
        if c[0] == "add":
            return (injective(c[1]) and invariant(c[2])) or (invariant(c[1]) and injective(c[2]))
        if c[0] == "sub":
            return injective(c[1]) and invariant(c[2])
        if c[0] == "mul":  # (only by the range's own step, which is never 0)
            return (injective(c[1]) and c[2] == ("inv", step)) or (c[1] == ("inv", step) and injective(c[2]))
        return False

    parent: dict[str, str] = {}  # arrays copied one to another are one array (``b = a``)

    def root(x: str) -> str:
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    for _, op in fn.ops():
        if isinstance(op, Copy) and isinstance(fn.types.get(op.dest.name), ArrayType):
            parent[root(op.dest.name)] = root(op.src.name)
    accesses: dict[str, list[tuple[GetItem | SetItem, tuple]]] = {}
    for op in ops:
        if not isinstance(op, _KNOWN_OPS) or (
            isinstance(op, IntrinsicCall)
            and op.fn not in _READS_ARRAYS
            and any(isinstance(fn.types.get(a.name), ArrayType) for a in op.args)
        ):  # (something that may write an array, unknown to this check: refused rather than risked)
            what = op.fn.value if isinstance(op, IntrinsicCall) else op.NAME
            say(op.span, f"{what} on an array is not supported in a prange loop yet; use range")
            continue
        if isinstance(op, (GetItem, SetItem)) and isinstance(fn.types.get(op.obj.name), ArrayType):
            accesses.setdefault(root(op.obj.name), []).append((op, tuple(canon(v.name) for v in op.index)))
        elif isinstance(op, Call):
            arrays = [a.name for a in op.args if isinstance(fn.types.get(a.name), ArrayType)]
            if arrays:
                say(
                    op.span,
                    f"a call in a prange loop may not be passed an array ('{arrays[0]}'): the callee could write "
                    f"it from several threads at once; write the work inline, or use range",
                )
    for name, found in accesses.items():
        writes = [(op, idx) for op, idx in found if isinstance(op, SetItem)]
        if not writes:
            continue
        name = writes[0][0].obj.name  # (as the source names it)
        if any(op.obj.name in defs for op, _ in found):
            say(writes[0][0].span, f"the array '{name}' is assigned in the prange loop and written there; use range")
            continue
        ndim = len(writes[0][1])
        axes = [
            d
            for d in range(ndim)
            if injective(writes[0][1][d]) and all(len(idx) == ndim and idx[d] == writes[0][1][d] for _, idx in found)
        ]
        if axes:
            continue
        if not any(injective(c) for _, idx in writes for c in idx):
            say(
                writes[0][0].span,
                f"'{name}' is written at an index that is not the prange loop variable (plus a loop-invariant "
                f"offset): two iterations could write the same element; use range",
            )
        else:
            read = next((op for op, idx in found if idx != writes[0][1]), writes[0][0])
            say(
                read.span,
                f"'{name}' is written in the prange loop and also touched at another index here: that element may "
                f"belong to another iteration running at the same time; use range, or write to another array",
            )
