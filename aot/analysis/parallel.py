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
when every shared array the body writes is touched, on some axis, only at the loop variable plus a
loop-invariant offset (so iterations touch disjoint elements). Anything else is a ``CompileError`` naming the
variable. ``aot.codegen.parallel`` outlines each outermost such loop; a ``prange`` nested in one runs serially.

Arrays: each array variable has its origins (``_Origin``): made in this iteration (private: written, reduced,
passed to calls freely), or a shared array (made before the loop, a parameter) and the region of it the
variable covers, one entry per axis of the shared array:

    for i in prange(n):
        row = x[i]            row: x, region (i, whole)        → reading it whole reads x at (i, whole)
        tmp = np.zeros(m)     tmp: private
        tmp[:] = row * row    (a write to a private array)
        out[i, :] = tmp       out at (i, whole): written        → every touch of out has i on axis 0: fine
        s += out.sum()        out at (whole, whole): read       → a race with that write: CompileError

Every touch of a shared array in the body (an element read or written, a whole-array read or write through
a view; making a view touches nothing) is recorded with its region; a shared array written in the body must
have one axis where every touch has the same injective index (``r = out[1:]``: ``r[i]`` is ``out[1 + i]``,
injective too, but not the same index as ``out[i]``). Calls may not be given shared arrays: the callee could
write them, and it counts references with plain operations (``aot.codegen.arrays``: only the outlined bodies
count atomically).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..diagnostics import CompileError, Diagnostic, Span
from ..intrinsics.registry import EFFECTS
from ..intrinsics.spec import Effect
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
    GetView,
    IntrinsicCall,
    Jump,
    MakeTuple,
    Op,
    Raise,
    Return,
    SetItem,
    Truth,
    UnaryOp,
    Var,
    successor_map,
    uses,
)
from ..ir.ops import Intrinsic
from ..types import NONE, ArrayType, ListType, ScalarType, TupleType

# The ops a prange body may hold, and the intrinsics that may take an array there (they only read it). An op or
# an array intrinsic not listed (one added later, that might write an array) is refused in a prange body.
_KNOWN_OPS = (
    Const, Copy, BinOp, UnaryOp, Compare, Truth, Convert, Call, IntrinsicCall, MakeTuple, GetItem, SetItem, GetView,
    Jump, Branch, Return, Raise,
)  # fmt: skip
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
    borrowed: tuple[str, ...] = ()  # private variables only ever holding views of shared arrays (which outlive
    # the loop: their references need no counting, ``_borrowed_views``)
    own: tuple[str, ...] = ()  # variables only ever holding arrays (lists) made in the iteration: no other
    # thread counts their references


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
    succs = successor_map(fn.blocks)
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
    own_arrays = _check_arrays(fn, ops, defs, counter, len_op, say)
    own = _private_lists(fn, defs)
    for op in ops:  # (a list is shared by reference and grows in place: only a list made in the iteration)
        names = [v.name for v in (*uses(op), op.dest_var) if v is not None]
        if any(isinstance(fn.types.get(n), ListType) and n not in own for n in names):
            say(
                op.span,
                "lists made before a prange loop are not supported in it (a list grows in place, shared by every "
                "iteration); use range, make the list in the iteration, or pass an array",
            )
            break
    private = tuple(sorted(set(defs) - reduced))
    shared = tuple(sorted(used - set(defs)))
    borrowed = tuple(sorted(_borrowed_views(fn, defs)))
    loop = ParallelLoop(
        header, body, exit_, loop_blocks, counter, count, shared, private, tuple(reductions), borrowed,
        tuple(sorted(own_arrays | own)),
    )  # fmt: skip
    return loop, problems


def _borrowed_views(fn: Function, defs: dict[str, list[Op]]) -> set[str]:
    """The array variables of the body assigned only views (``x[i]``, ``x[:, j]``, ``v[1:]``, ``b = v``) of
    shared arrays or of such views: never a new array. A shared array is held by the function for the whole
    loop (the body assigns no shared variable), so these views need no counted reference of their own."""
    types = fn.types

    def plain_index(index: tuple[Var, ...]) -> bool:  # (no index array or list: a view, not a new array)
        return all(isinstance(types.get(v.name), ScalarType) or types.get(v.name) == NONE for v in index)

    names = {n for n in defs if isinstance(types.get(n), ArrayType)}
    own = set(names)
    changed = True
    while changed:  # (the greatest solution: ``v = v[1:]`` in a loop of the body refers to itself)
        changed = False
        for name in sorted(own):
            for op in defs[name]:
                if isinstance(op, Copy):
                    base = op.src.name
                elif isinstance(op, (GetItem, GetView)) and plain_index(op.index):
                    base = op.obj.name
                else:
                    base = None
                if base is None or not isinstance(types.get(base), ArrayType) or (base in defs and base not in own):
                    own.discard(name)
                    changed = True
                    break
    return own


_LIST_MAKERS = frozenset({Intrinsic.LIST_NEW, Intrinsic.LIST_SORTED})
_LIST_UPDATES = frozenset({Intrinsic.LIST_APPEND, Intrinsic.LIST_SORT})


def _private_lists(fn: Function, defs: dict[str, list[Op]]) -> set[str]:
    """The list variables of the body that only ever hold lists made in the same iteration (a display, a
    comprehension, ``sorted(…)``, and what ``append`` gives back: the list itself)."""
    names = {n for n in defs if isinstance(fn.types.get(n), ListType)}
    own = set(names)
    changed = True
    while changed:  # (the greatest solution: a list appended to in a loop of the body refers to itself)
        changed = False
        for name in sorted(own):
            for op in defs[name]:
                if isinstance(op, IntrinsicCall) and op.fn in _LIST_MAKERS:
                    continue
                if isinstance(op, IntrinsicCall) and op.fn in _LIST_UPDATES and op.args and op.args[0].name in own:
                    continue
                if isinstance(op, Copy) and op.src.name in own:
                    continue
                own.discard(name)
                changed = True
                break
    return own


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

# What an array operation does with its array operands: ``Effect`` of its descriptor (aot/intrinsics/spec.py).
_METADATA, _READS, _VIEWS, _WRITES = Effect.METADATA, Effect.READS, Effect.VIEWS, Effect.WRITES

# The elements of a shared array a view (or an access) covers, one entry per axis of the array: an index on
# that axis (``canon``'s expression: the loop variable, an invariant, …), ``("axis", whole)`` for an axis the
# view keeps (whole, or a slice of it; ``("axis", False, ((start, step), …))`` slices whose starts and steps
# are loop-invariant, and ``("shift", ((start, step), …), index)`` one element of them), ``_SOME`` for one
# element not known; None when not known at all.
_WHOLE = ("axis", True)
_PART = ("axis", False)
_SOME = ("some",)


@dataclass(frozen=True)
class _Origin:
    """Which array a variable is: ``root`` None for an array made in this iteration (private to it), "" when
    not known, else the shared array's name and the ``region`` of it the variable covers."""

    root: str | None
    region: tuple | None = None


_PRIVATE = _Origin(None)
_UNKNOWN = _Origin("")


def _check_arrays(
    fn: Function, ops: list[Op], defs: dict[str, list[Op]], counter: str, len_op: IntrinsicCall, say
) -> set[str]:
    """Arrays made in an iteration are its own; a shared array (made before the loop) written in the body is
    touched, on some axis, only at the loop variable (plus an invariant) by every access to it there, through
    whichever views; calls get no shared arrays (they could write them). The variables of the body that only
    ever hold arrays made in the iteration (tuples of them too)."""
    regions = _ArrayRegions(fn, ops, defs, counter, len_op.args[2].name, say)
    regions.solve(False)
    regions.solve(True)
    regions.record_touches()
    own = regions.own()
    regions.check_writes()
    return own


class _ArrayRegions:
    """The arrays of one ``prange`` loop: what each variable may be (``origins``: made in the iteration, or a
    region of a shared array), every touch of a shared array in the body, and the races among them (``say``)."""

    def __init__(
        self,
        fn: Function,
        ops: list[Op],
        defs: dict[str, list[Op]],
        counter: str,
        step: str,
        say: Callable[[Span, str], None],
    ) -> None:
        self.fn = fn
        self.types = fn.types
        self.ops = ops  # the loop's ops
        self.defs = defs  # their assignments, by variable
        self.counter = counter  # the loop variable
        self.step = step  # the range's step (never 0)
        self.say = say
        # The assignments before (and after) the loop, by variable.
        self.outside: dict[str, list[Op]] = {}
        inside_ops = {id(op) for op in ops}
        for _, op in fn.ops():
            if op.dest_var is not None and id(op) not in inside_ops:
                self.outside.setdefault(op.dest_var.name, []).append(op)
        # The origins of each array variable outside the loop (False) and in the body (True): ``solve``.
        self.tables: dict[bool, dict[str, frozenset[_Origin]]] = {False: {}, True: {}}
        # Every touch of a shared array in the body, by its root: (op, the region it touches, whether it
        # writes, the variable it goes through).
        self.touches: dict[str, list[tuple[Op, tuple | None, bool, str]]] = {}

    # ------------------------------------------------------------------ indices

    def canon(self, name: str, seen: frozenset = frozenset()) -> Any:
        """The index ``name`` as an expression of the loop variable (``("iter",)``), invariants (``("inv",
        name)``), constants and arithmetic on them; ``("unknown", name)`` for anything else."""
        if name == self.counter:
            return ("iter",)
        if name not in self.defs:
            return ("inv", name)
        found = self.defs[name]
        if len(found) != 1 or name in seen:
            return ("unknown", name)
        op = found[0]
        seen = seen | {name}
        if isinstance(op, Const):
            return ("const", repr(op.value))
        if isinstance(op, Copy):
            return self.canon(op.src.name, seen)
        if isinstance(op, BinOp):
            return (op.op.value, self.canon(op.lhs.name, seen), self.canon(op.rhs.name, seen))
        return ("unknown", name)

    def invariant(self, c: Any) -> bool:
        """Whether the index expression ``c`` has the same value in every iteration."""
        if c[0] in ("inv", "const", "before"):
            return True
        if c[0] in ("iter", "unknown", "axis", "some", "shift"):
            return False
        return self.invariant(c[1]) and self.invariant(c[2])

    def injective(self, c: Any) -> bool:
        """Whether the index expression ``c`` has a different value in every iteration."""
        injective, invariant, step = self.injective, self.invariant, self.step
        if c == ("iter",):
            return True
        if c[0] == "shift":  # (start + step * c of a slice, and so on)
            return injective(c[2])
        if c[0] == "add":
            return (injective(c[1]) and invariant(c[2])) or (invariant(c[1]) and injective(c[2]))
        if c[0] == "sub":
            return injective(c[1]) and invariant(c[2])
        if c[0] == "mul":  # (only by the range's own step, which is never 0)
            return (injective(c[1]) and c[2] == ("inv", step)) or (c[1] == ("inv", step) and injective(c[2]))
        return False

    def ndim(self, name: str) -> int:
        """The number of axes of the array variable ``name`` (0 for anything else)."""
        t = self.types.get(name)
        return t.ndim if isinstance(t, ArrayType) else 0

    def whole(self, var: str) -> list:
        """Every element of the array variable ``var``: whole on each of its axes."""
        return [_WHOLE] * self.ndim(var)

    # ------------------------------------------------------------------ regions

    def index_regions(self, obj: str, spec: str, index: tuple[Var, ...], inside: bool = True) -> list | None:
        """What ``obj[…]`` selects on each of ``obj``'s axes (``spec`` as ``GetView``'s; ``"i" * n`` for
        ``GetItem``): an index, or ``("axis", whole)``; None for an index array. (Before the loop, an index is
        the value its variable had then: a name the body may assign again means something else there.)"""
        types, canon, invariant = self.types, self.canon, self.invariant
        n = self.ndim(obj)
        used = sum(1 for c in spec if c != "e")
        out: list = []
        k = 0
        for c in spec:
            if c == "i":
                if k >= len(index) or not isinstance(types.get(index[k].name), ScalarType):
                    return None
                out.append(canon(index[k].name) if inside else ("before", index[k].name))
                k += 1
            elif c == "s" and k + 3 <= len(index):
                start, _, step = (
                    ("const", "None") if types.get(v.name) == NONE else canon(v.name) if inside else ("before", v.name)
                    for v in index[k : k + 3]
                )
                if all(types.get(v.name) == NONE for v in index[k : k + 3]):
                    out.append(_WHOLE)
                elif invariant(start) and invariant(step):  # (its elements: start + step * j, step never 0)
                    out.append(("axis", False, ((start, step),)))
                else:
                    out.append(_PART)
                k += 3
            elif c == "e":
                out.extend([_WHOLE] * (n - used))
            else:
                return None
        out.extend([_WHOLE] * (n - len(out)))  # (the axes left out at the end: whole)
        return out if len(out) == n else None

    def narrow(self, origin: _Origin, obj: str, selected: list | None) -> _Origin:
        """The origin of ``obj[…]`` (its region narrowed by ``selected``, one entry per axis of ``obj``)."""
        if origin.root is None or origin.root == "":
            return origin
        if origin.region is None or selected is None:
            return _Origin(origin.root, None)
        axes = [d for d, r in enumerate(origin.region) if r[0] == "axis"]
        if len(axes) != len(selected):
            return _Origin(origin.root, None)
        region = list(origin.region)
        for d, pick in zip(axes, selected):
            if region[d] == _WHOLE or pick == _WHOLE:
                region[d] = pick if region[d] == _WHOLE else region[d]
            elif pick[0] == "axis":  # a slice of a slice: invariant ones compose
                region[d] = ("axis", False, region[d][2] + pick[2]) if len(region[d]) == len(pick) == 3 else _PART
            elif len(region[d]) == 3:  # an index into slices of invariant starts and steps: one element each
                region[d] = ("shift", region[d][2], pick)
            else:
                region[d] = _SOME
        return _Origin(origin.root, tuple(region))

    # ------------------------------------------------------------------ origins

    def origins(self, name: str, inside: bool) -> frozenset[_Origin]:
        """The arrays the variable ``name`` may be, where it is read (in the body, when ``inside``: there only
        the body's assignments reach it, a value carried between iterations being refused already)."""
        if inside and name in self.defs:
            return self.tables[True].get(name, frozenset())
        if name in self.outside:
            return self.tables[False].get(name, frozenset())
        return frozenset({_Origin(name, (_WHOLE,) * self.ndim(name))})  # a parameter

    def solve(self, inside: bool) -> None:
        """``tables[inside]``: the least solution of the assignments (a view of itself, ``a += b``: loops)."""
        scope = self.defs if inside else self.outside
        table = self.tables[inside]
        names = [n for n in scope if _holds_array(self.types.get(n))]
        for _ in range(64):
            changed = False
            for name in names:
                found = {o for op in scope[name] for o in self.made_by(op, name, inside)}
                if not inside and name in self.fn.params:
                    found.add(_Origin(name, (_WHOLE,) * self.ndim(name)))
                if frozenset(found) != table.get(name):
                    table[name] = frozenset(found)
                    changed = True
            if not changed:
                return
        for name in names:  # (not settled: not known)
            table[name] = frozenset({_UNKNOWN})

    def made_by(self, op: Op, name: str, inside: bool) -> frozenset[_Origin]:
        """The arrays the assignment ``op`` may give ``name`` (in the body, when ``inside``), from what
        ``tables`` holds so far."""
        types, origins = self.types, self.origins
        made = _PRIVATE if inside else _Origin(name, (_WHOLE,) * self.ndim(name))  # (new memory: the array's own)
        if isinstance(op, (Copy, Convert)):
            return origins(op.src.name, inside)
        if isinstance(op, MakeTuple):  # (the arrays it holds)
            held = [o for v in op.items if _holds_array(types.get(v.name)) for o in origins(v.name, inside)]
            return frozenset(held or [made])
        if isinstance(op, GetItem) and isinstance(types.get(op.obj.name), ArrayType):
            selected = self.index_regions(op.obj.name, "i" * len(op.index), op.index, inside)
            if selected is None:  # (an index array selects a copy)
                return frozenset({made})
            return frozenset(self.narrow(o, op.obj.name, selected) for o in origins(op.obj.name, inside))
        if isinstance(op, GetView):
            selected = self.index_regions(op.obj.name, op.spec, op.index, inside)
            return frozenset(self.narrow(o, op.obj.name, selected) for o in origins(op.obj.name, inside))
        if isinstance(op, GetItem):  # an item of a tuple
            scope = self.defs if inside else self.outside
            tdefs = scope.get(op.obj.name, [])
            k = _constant_index(op.index, scope)
            if not tdefs:
                return (
                    frozenset({_Origin(f"{op.obj.name}[{k}]", (_WHOLE,) * self.ndim(name))})
                    if k is not None
                    else (frozenset({_UNKNOWN}))
                )
            makers = [t for t in tdefs if isinstance(t, MakeTuple)]
            if k is not None and len(makers) == len(tdefs) and all(k < len(t.items) for t in makers):
                return frozenset(o for t in makers for o in origins(t.items[k].name, inside))
            if all(isinstance(t, Call) for t in tdefs) and inside:
                return frozenset({_PRIVATE})
            return frozenset({_UNKNOWN}) if inside else frozenset({made})
        if isinstance(op, IntrinsicCall):
            effect = EFFECTS[op.fn]
            if effect is _VIEWS and op.args:
                return frozenset(_Origin(o.root, None) if o.root else o for o in origins(op.args[0].name, inside))
            if effect is _WRITES and op.args:
                return origins(op.args[0].name, inside)
            if effect is _READS:
                return frozenset({made})
            return frozenset({_UNKNOWN}) if inside else frozenset({made})
        if isinstance(op, (BinOp, UnaryOp, Compare, Call)):  # (whole-array operations make new arrays; a call
            return frozenset({made})  # in the body is given no shared array, so it returns its own or new ones)
        return frozenset({_UNKNOWN}) if inside else frozenset({made})

    def own(self) -> set[str]:
        """The variables of the body that only ever hold arrays made in the iteration (tuples of them too)."""
        return {n for n in self.defs if _holds_array(self.types.get(n)) and _all_private(self.origins(n, True))}

    # ------------------------------------------------------------------ touches

    def touch(self, op: Op, var: str, selected: list | None, write: bool) -> None:
        """``op`` reads (or writes) the elements ``selected`` (per axis of ``var``; None: not known) of ``var``."""
        for o in self.origins(var, True):
            if o.root is not None:
                region = self.narrow(o, var, selected).region if selected is not None and o.root else None
                self.touches.setdefault(o.root, []).append((op, region, write, var))

    def record_touches(self) -> None:
        """``touches``: every touch of a shared array by the body's ops, in order (``record``)."""
        for op in self.ops:
            self.record(op)

    def record(self, op: Op) -> None:
        """The touches of shared arrays by the body's ``op``; an op (or an array intrinsic) this check does not
        know, and a call given a shared array, are refused."""
        types, touch, whole = self.types, self.touch, self.whole
        if not isinstance(op, _KNOWN_OPS):
            self.say(op.span, f"{op.NAME} on an array is not supported in a prange loop yet; use range")
            return
        arrays_used = [v.name for v in uses(op) if _holds_array(types.get(v.name))]
        if isinstance(op, IntrinsicCall) and arrays_used:
            effect = EFFECTS[op.fn]
            if effect is _METADATA:
                return
            if effect is _WRITES:
                touch(op, op.args[0].name, whole(op.args[0].name), True)
                for a in op.args[1:]:
                    if _holds_array(types.get(a.name)):
                        touch(op, a.name, whole(a.name), False)
                return
            if effect is not _READS and effect is not _VIEWS:
                # (something that may write an array, unknown to this check: refused rather than risked)
                self.say(op.span, f"{op.fn.value} on an array is not supported in a prange loop yet; use range")
                return
        if isinstance(op, (GetItem, SetItem, GetView)) and isinstance(types.get(op.obj.name), ArrayType):
            spec = op.spec if isinstance(op, GetView) else "i" * len(op.index)
            selected = self.index_regions(op.obj.name, spec, op.index)
            view = isinstance(op, (GetItem, GetView)) and isinstance(types.get(op.dest.name), ArrayType)
            if not view or selected is None:  # (a view reads nothing: its uses are the touches; an index
                touch(op, op.obj.name, selected, isinstance(op, SetItem))  # array copies the elements)
            for v in (*op.index, *((op.value,) if isinstance(op, SetItem) else ())):
                if _holds_array(types.get(v.name)):
                    touch(op, v.name, whole(v.name), False)
            return
        if isinstance(op, (Copy, Convert, MakeTuple, GetItem)):
            return  # (a reference handed on, an item of a tuple: the uses of the value are the touches)
        if isinstance(op, Call):
            shared = [a.name for a in op.args if _holds_array(types.get(a.name)) and _shared(a.name, self.origins)]
            if shared:
                self.say(
                    op.span,
                    f"a call in a prange loop may not be passed an array made before the loop ('{shared[0]}'): "
                    f"the callee could write it from several threads at once; write the work inline, pass an "
                    f"array made in the iteration, or use range",
                )
            return
        for var in arrays_used:  # whole-array operations, reductions, NumPy's functions: every element read
            touch(op, var, whole(var), False)

    # ------------------------------------------------------------------ races

    def shown_name(self, root: str) -> str:
        """A name the source gives the array ``root`` (a view made of it, or a temporary, has none)."""
        if root[:1].isidentifier():
            return root
        for var in sorted(self.types):
            if var[:1].isidentifier() and any(o.root == root for o in self.origins(var, var in self.defs)):
                return var
        return root

    def check_writes(self) -> None:
        """Every shared array written in the body, against all its touches (``check_root``), in order."""
        vague = self.touches.get("", [])  # (an array not known: it may be any written one)
        for root, found in self.touches.items():
            self.check_root(root, found, vague)

    def check_root(self, root: str, found: list[tuple[Op, tuple | None, bool, str]], vague: list) -> None:
        """The shared array ``root``, if written in the body: one axis where every touch (``found``, and the
        ``vague`` ones of arrays not known) has the same injective index, or what races."""
        injective, say = self.injective, self.say
        writes = [t for t in found if t[2]]
        if not writes:
            return
        found = found + [t for t in vague if t not in found]
        first = next((t for t in writes if t[1] is None), writes[0])
        name = first[3] if first[3][:1].isidentifier() else self.shown_name(root)
        if root == "" or first[1] is None:
            say(
                first[0].span,
                f"{_shown(name)} is written in the prange loop through a view whose elements cannot be related to "
                f"the loop variable (a transpose, a reshape, an index array, or one of several arrays); use range",
            )
            return
        region = first[1]
        unknown = [t for t in found if t[1] is None]
        n = len(region)
        axes = [
            d
            for d in range(n)
            if injective(region[d]) and all(t[1] is not None and t[1][d] == region[d] for t in found)
        ]
        if axes:
            return
        if unknown:
            say(
                unknown[0][0].span,
                f"'{name}' is written in the prange loop and read here through a view whose elements cannot be "
                f"related to the loop variable: they may belong to another iteration; use range",
            )
        elif not any(injective(c) for t in writes for c in t[1] or ()):
            if all(c[0] == "axis" for c in region if c != _SOME) and any(c[0] == "axis" for c in region):
                say(
                    first[0].span,
                    f"'{name}' is made before the prange loop and written whole, or a slice of it, in every "
                    f"iteration: iterations would write the same elements at once; write {name}[i] (the loop "
                    f"variable's part), make the array in the iteration, or use range",
                )
            else:
                say(
                    first[0].span,
                    f"'{name}' is written at an index that is not the prange loop variable (plus a loop-invariant "
                    f"offset): two iterations could write the same element; use range",
                )
        else:
            read = next((t for t in found if t[1] != region), first)
            say(
                read[0].span,
                f"'{name}' is written in the prange loop and also touched at another index here: that element may "
                f"belong to another iteration running at the same time; use range, or write to another array",
            )


def _all_private(found: frozenset[_Origin]) -> bool:
    return bool(found) and all(o.root is None for o in found)


def _holds_array(t: Any) -> bool:
    return isinstance(t, ArrayType) or (isinstance(t, TupleType) and any(_holds_array(i) for i in t.items))


def _shared(name: str, origins: Callable[[str, bool], frozenset[_Origin]]) -> bool:
    """Whether the array (or a tuple's arrays) ``name`` may be one made before the loop."""
    return any(o.root is not None for o in origins(name, True))


def _constant_index(index: tuple[Var, ...], defs: dict[str, list[Op]]) -> int | None:
    if len(index) != 1:
        return None
    found = defs.get(index[0].name, [])
    if len(found) == 1 and isinstance(found[0], Const) and isinstance(found[0].value, int):
        return found[0].value
    return None
