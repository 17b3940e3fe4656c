"""``prange`` loops on native threads: the loop body outlined, a fork-join driver, and the reductions.

    for i in aot.prange(n):          define internal i32 @f.prange.bb1(i64 %lo, i64 %hi, ptr %env, ptr %partial)
        s += a[i]                       ; copies of the shared variables (through %env), $k = lo, count = hi,
                                 →      ; s = 0: the loop's own blocks; at the end *partial = s
                                     in f:  n = min(aot_num_threads(), count)
                                            aot_parallel_for(@f.prange.bb1, env, count, partials, size, n)
                                            s = s + partial[0] + … + partial[n-1]    (in chunk order)

``aot.analysis.parallel`` has proved the iterations independent. The iteration space is cut into ``n`` equal
chunks; chunk 0 runs on the calling thread and chunks 1 … n-1 on the workers of the module's pool (a chunk
no worker could be started for runs on the caller too). ``n`` is
``AOT_NUM_THREADS`` when set to a positive number, else the number of CPUs the process may run on
(``sched_getaffinity``), read at each loop, at most ``MAX_THREADS``. Everything is emitted into each
module as internal functions: the library (or the JIT's module) needs nothing but libc and the C API, and
no compiler at run time. Partial results are combined in chunk order, so integer reductions equal the
serial result and float ones differ only by rounding.

The pool (``aot_pool_*``, zero-initialised globals of each module): worker ``w`` is started with
``pthread_create`` (detached) by the first loop that has a chunk ``w``, then runs chunk ``w`` of every loop
published to it and parks on a condition variable in between. One loop holds the pool at a time (a
compare-and-swap of the process id in ``busy``); a loop that finds it held runs its chunks serially when its
thread is the holder or a worker (a parallel method called from a chunk: waiting for the pool would never
end), and otherwise starts a thread per chunk for this loop and joins them. ``busy`` holding
another process's id, or the pool's ``pid`` another process's, means a ``fork()``: the child has none of
the threads, and the loop taking the pool resets it (mutex and conditions to their zero initialisers).
The workers are never joined: parked, they hold nothing, and the process exits around them. (Not handled: a
process forked from a child that never ran a loop and given, by pid reuse, the pid of the grandparent whose
pool it inherited would take that pool for its own and wait for its absent workers.)

Errors: a chunk stops at its first error; the worker fetches the exception (``aot.codegen.gil``: a
worker gets a Python thread state only then) and, after the join, the exception of the first failing chunk
(so the first by iteration order) is raised; later chunks may have run their iterations. The GIL is
released while the chunks run, so Python threads go on meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llvmlite import ir

from ..analysis.definite import maybe_unassigned
from ..analysis.parallel import ParallelLoop, parallel_loops
from ..ir import Const, Copy, Intrinsic, IntrinsicCall, Var
from ..types import ScalarType
from . import arrays, gil, interrupt, loops
from . import types as lt
from .intrinsics import lower_intrinsic
from .types import value_type

MAX_THREADS = 256
"""The most chunks one loop is cut into (its partial results live on the caller's stack)."""

_BODY_TYPE = ir.FunctionType(lt.STATUS, [lt.I64, lt.I64, lt.PTR, lt.PTR])
# body, env, lo, hi, partial, status, exc type, value, traceback, pthread_t, on its own thread
_TASK = ir.LiteralStructType([lt.PTR, lt.PTR, lt.I64, lt.I64, lt.PTR, lt.I64, lt.PTR, lt.PTR, lt.PTR, lt.I64, lt.I64])
_I64 = lambda v: ir.Constant(lt.I64, v)  # noqa: E731
_I32 = lambda v: ir.Constant(lt.I32, v)  # noqa: E731


class ParallelLowering:
    """The outermost ``prange`` loops of one function being lowered (``em``: its ``FunctionCodegen``)."""

    def __init__(self, em: Any, loops: list[ParallelLoop]):
        self.em = em
        self.loops = {loop.header: loop for loop in loops}
        self.inside = {label for loop in loops for label in loop.blocks}
        self.all_versions = list(em.versions)
        self.outer_versions = tuple(v for v in em.versions if not (set(v.blocks) | {v.preheader}) & self.inside)

    def lower_block(self, label: str, llblock: ir.Block, targets: dict[str, ir.Block]) -> bool:
        """Lower the block ``label`` of the parent if it belongs to a parallel loop (the header becomes the
        fork-join; the body's blocks are the outlined function's): True when it did."""
        if label not in self.inside:
            return False
        em = self.em
        em.b.position_at_end(llblock)
        loop = self.loops.get(label)
        if loop is None:
            em.b.unreachable()
        else:
            self.fork_join(loop, targets[loop.exit])
        return True

    # ------------------------------------------------------------------ the parent's side
    def fork_join(self, loop: ParallelLoop, exit_block: ir.Block) -> None:
        em = self.em
        ctx, b = em.ctx, em.b
        copied = list(loop.shared) + [r.var for r in loop.reductions if r.kind in ("min", "max")]
        env_layout = [(name, False) for name in copied] + [(name, True) for name in copied if name in em.flags]
        red_type = ir.LiteralStructType([value_type(em.fn.types[r.var]) for r in loop.reductions] or [lt.I8])
        body = self.outline(loop, env_layout, red_type)
        with b.goto_entry_block():
            env = b.alloca(ir.ArrayType(lt.PTR, max(len(env_layout), 1)), name="prange.env")
            partials = b.alloca(ir.ArrayType(red_type, MAX_THREADS), name="prange.partials")
        for j, (name, is_flag) in enumerate(env_layout):
            slot = em.flags[name] if is_flag else em.slots[name]
            b.store(b.bitcast(slot, lt.PTR), b.gep(env, [_I64(0), _I64(j)]))
        count = b.load(em.slots[loop.count])
        run = b.append_basic_block(f"{loop.header}.fork")
        b.cbranch(b.icmp_signed(">", count, _I64(0)), run, exit_block)
        b.position_at_end(run)
        threads = b.call(num_threads_function(ctx), [])
        n = b.select(b.icmp_signed("<", threads, count), threads, count)
        size = b.ptrtoint(b.gep(ir.Constant(red_type.as_pointer(), None), [_I64(1)]), lt.I64)
        status = b.call(
            driver_function(ctx),
            [b.bitcast(body, lt.PTR), b.bitcast(env, lt.PTR), count, b.bitcast(partials, lt.PTR), size, n],
        )
        with b.if_then(b.icmp_signed("!=", status, _I32(0)), likely=False):
            em.error_return()  # (the function's own arrays released, as for any error)
        if loop.reductions:  # s = s ∘ partial[c] for c in 0 … n-1, in that order
            with b.goto_entry_block():
                index = b.alloca(lt.I64, name="prange.chunk")
            b.store(_I64(0), index)
            head, step = b.append_basic_block(f"{loop.header}.join"), b.append_basic_block(f"{loop.header}.combine")
            b.branch(head)
            b.position_at_end(head)
            c = b.load(index)
            b.cbranch(b.icmp_signed("<", c, n), step, exit_block)
            b.position_at_end(step)
            for k, r in enumerate(loop.reductions):
                t = em.fn.types[r.var]
                part = b.load(b.gep(partials, [_I64(0), c, _I32(k)]))
                b.store(combine(em, r.kind, t, em.load(Var(r.var)), part), em.slots[r.var])
            b.store(b.add(c, _I64(1)), index)
            b.branch(head)
        else:
            b.branch(exit_block)

    # ------------------------------------------------------------------ the outlined body
    def outline(self, loop: ParallelLoop, env_layout: list[tuple[str, bool]], red_type: ir.Type) -> ir.Function:
        parent = self.em
        fn = parent.fn
        llfn = ir.Function(parent.ctx.module, _BODY_TYPE, f"{parent.llfn.name}.prange.{loop.header}")
        llfn.linkage = "internal"
        em = type(parent)(parent.ctx, fn, llfn, parent.callee, parent.options)
        em.parallel = None  # (a prange nested in this loop runs serially in each chunk)
        em.in_chunk = True  # (its polls also stop when another chunk raised: codegen/interrupt.py)
        em.owned -= set(loop.borrowed)  # (views of shared arrays: the function holds those through the loop)
        em.plain_counts = set(loop.own)  # (arrays of the iteration: no other thread counts them)
        em.versions = tuple(v for v in self.all_versions if set(v.blocks) <= loop.blocks and v.preheader in loop.blocks)
        lo, hi, env, partial = llfn.args
        b = em.b = ir.IRBuilder(llfn.append_basic_block("entry"))
        for name, t in fn.types.items():
            em.slots[name] = b.alloca(value_type(t), name="v" + name.replace("$", "_"))
            if name in em.owned:  # (counted references: none until assigned, as in the function itself)
                b.store(ir.Constant(value_type(t), None), em.slots[name])
        for name in sorted(maybe_unassigned(fn)):
            if name in em.slots:
                em.flags[name] = b.alloca(lt.I1)
                b.store(ir.Constant(lt.I1, 0), em.flags[name])
        envp = b.bitcast(env, lt.PTR.as_pointer())
        known = _constants(fn)
        for j, (name, is_flag) in enumerate(env_layout):
            target = em.flags[name] if is_flag else em.slots[name]
            if name in known and not is_flag:  # (the range's start and step, mostly: LLVM sees them)
                b.store(em.constant(known[name], fn.types[name]), target)
                continue
            source = b.bitcast(b.load(b.gep(envp, [_I64(j)])), target.type)
            value = b.load(source)
            b.store(value, target)
            if name in em.owned and not is_flag:  # the chunk's slot holds a reference of its own (released
                arrays.incref(parent.ctx, b, value, fn.types[name])  # at its end, or on an error)
        assume = parent.ctx.declare("llvm.assume", ir.FunctionType(ir.VoidType(), [lt.I1]))
        b.call(assume, [b.icmp_signed(">=", lo, _I64(0))])  # 0 <= lo <= hi: a chunk of 0 … count-1
        b.call(assume, [b.icmp_signed("<=", lo, hi)])

        def set_(name: str, value: ir.Value) -> None:
            b.store(value, em.slots[name])
            if name in em.flags:
                b.store(ir.Constant(lt.I1, 1), em.flags[name])

        set_(loop.counter, lo)
        set_(loop.count, hi)
        for r in loop.reductions:  # (min and max start from the value copied in)
            t = fn.types[r.var]
            assert isinstance(t, ScalarType)
            if r.kind in ("add", "mul"):
                one = 1 if r.kind == "mul" else 0
                set_(r.var, ir.Constant(value_type(t), float(one) if t.is_float else one))
        for block in fn.blocks:
            if block.label in loop.blocks:
                em.blocks[block.label] = llfn.append_basic_block(block.label)
        done = llfn.append_basic_block("done")
        em.blocks[loop.exit] = done
        b.branch(em.blocks[loop.header])
        guarded = [v for v in em.versions if v.checks]
        guards = {v.preheader: (v.header, llfn.append_basic_block(v.header + ".guard")) for v in guarded}
        unguarded = {label: v.facts for v in em.versions if not v.checks for label in v.blocks}
        for block in fn.blocks:
            if block.label in loop.blocks:
                targets = dict(em.blocks)
                if block.label in guards:
                    header, guard = guards[block.label]
                    targets[header] = guard
                em.lower_block(block, em.blocks[block.label], targets, unguarded.get(block.label, {}))
        for v in guarded:
            em.lower_fast_version(v, guards[v.preheader][1])
        b.position_at_end(done)
        out = b.bitcast(partial, red_type.as_pointer())
        for k, r in enumerate(loop.reductions):
            b.store(b.load(em.slots[r.var]), b.gep(out, [_I64(0), _I32(k)]))
        em.release_all()
        b.ret(ir.Constant(lt.STATUS, 0))
        arrays.count_atomically(parent.ctx, llfn, em.plain_calls)  # (the chunks count shared blocks at once)
        return llfn


def for_function(em: Any) -> ParallelLowering | None:
    """The parallel loops of the function ``em`` lowers, or None (no ``prange`` in a parallel method, or a
    target whose code runs on no thread of ours: a parallel method called from a kernel runs serially)."""
    if not em.ctx.target.has_host_runtime:
        return None
    if not any(isinstance(op, IntrinsicCall) and op.fn is Intrinsic.PRANGE_LEN for _, op in em.fn.ops()):
        return None
    loops = parallel_loops(em.fn)
    return ParallelLowering(em, loops) if loops else None


def _constants(fn: Any) -> dict[str, Any]:
    """Variables assigned once in ``fn``, from a constant or (with the same type) from such a variable."""
    defs: dict[str, list[Any]] = {}
    for _, op in fn.ops():
        if op.dest_var is not None:
            defs.setdefault(op.dest_var.name, []).append(op)
    out: dict[str, Any] = {}

    def value(name: str, depth: int) -> Any:
        found = defs.get(name, ())
        if len(found) != 1 or depth > 16:
            return _UNKNOWN
        op = found[0]
        if isinstance(op, Const):
            return op.value
        if isinstance(op, Copy) and fn.types[op.src.name] == fn.types[name]:
            return value(op.src.name, depth + 1)
        return _UNKNOWN

    for name in defs:
        v = value(name, 0)
        if v is not _UNKNOWN:
            out[name] = v
    return out


_UNKNOWN = object()


def combine(em: Any, kind: str, t: Any, acc: ir.Value, part: ir.Value) -> ir.Value:
    """``acc + part``, ``acc * part`` (integers wrap), ``min(acc, part)`` or ``max(acc, part)`` (as Python
    picks: ``part`` only when strictly better) in the reduction variable's type."""
    b = em.b
    if kind in ("min", "max"):
        return lower_intrinsic(em, Intrinsic.MIN if kind == "min" else Intrinsic.MAX, [acc, part], [t, t], t)
    if t.is_float:
        return b.fadd(acc, part) if kind == "add" else b.fmul(acc, part)
    return b.add(acc, part) if kind == "add" else b.mul(acc, part)


# ---------------------------------------------------------------------- the threads (once per module)


def num_threads_function(ctx: Any) -> ir.Function:
    """``i64 aot_num_threads()``: ``AOT_NUM_THREADS`` if positive, else the CPUs this process may use."""
    fn, b = ctx.internal_function("aot_num_threads", ir.FunctionType(lt.I64, []))
    if b is None:
        return fn
    getenv = ctx.declare("getenv", ir.FunctionType(lt.PTR, [lt.PTR]))
    strtol = ctx.declare("strtol", ir.FunctionType(lt.I64, [lt.PTR, lt.PTR, lt.I32]))
    affinity = ctx.declare("sched_getaffinity", ir.FunctionType(lt.I32, [lt.I32, lt.I64, lt.PTR]))
    ctpop = ctx.declare("llvm.ctpop.i64", ir.FunctionType(lt.I64, [lt.I64]))
    mask = b.alloca(ir.ArrayType(lt.I64, 16))

    def clamp(n: ir.Value) -> ir.Value:
        return b.select(b.icmp_signed(">", n, _I64(MAX_THREADS)), _I64(MAX_THREADS), n)

    text = b.call(getenv, [ctx.cstring("AOT_NUM_THREADS")])
    with b.if_then(b.icmp_unsigned("!=", text, ir.Constant(lt.PTR, None))):
        n = b.call(strtol, [text, ir.Constant(lt.PTR, None), _I32(10)])
        with b.if_then(b.icmp_signed(">", n, _I64(0))):
            b.ret(clamp(n))
    got = b.call(affinity, [_I32(0), _I64(128), b.bitcast(mask, lt.PTR)])
    with b.if_then(b.icmp_signed("!=", got, _I32(0)), likely=False):
        b.ret(_I64(1))
    total: ir.Value = _I64(0)
    for k in range(16):
        total = b.add(total, b.call(ctpop, [b.load(b.gep(mask, [_I64(0), _I64(k)]))]))
    b.ret(clamp(b.select(b.icmp_signed("<", total, _I64(1)), _I64(1), total)))
    return fn


def worker_function(ctx: Any) -> ir.Function:
    """``ptr aot_parallel_worker(ptr task)``: run one chunk; on an error keep its exception in the task."""
    fn, b = ctx.internal_function("aot_parallel_worker", ir.FunctionType(lt.PTR, [lt.PTR]))
    if b is None:
        return fn
    task = b.bitcast(fn.args[0], _TASK.as_pointer())

    def field(k: int) -> ir.Value:
        return b.gep(task, [_I64(0), _I32(k)])

    body = b.bitcast(b.load(field(0)), _BODY_TYPE.as_pointer())
    status = b.call(body, [b.load(field(2)), b.load(field(3)), b.load(field(1)), b.load(field(4))])
    b.store(b.zext(status, lt.I64), field(5))
    with b.if_then(b.icmp_signed("!=", status, _I32(0)), likely=False):
        fetch = ctx.declare("PyErr_Fetch", ir.FunctionType(ir.VoidType(), [lt.PTR, lt.PTR, lt.PTR]))
        token = b.call(gil.acquire_function(ctx), [])
        b.call(fetch, [b.bitcast(field(k), lt.PTR) for k in (6, 7, 8)])
        b.call(gil.release_function(ctx), [token])
        # A thread of its own got a Python thread state to hold the exception: delete it now.
        this_state = ctx.declare("PyGILState_GetThisThreadState", ir.FunctionType(lt.PTR, []))
        own = b.icmp_signed("!=", b.load(field(10)), _I64(0))
        with b.if_then(own):
            state = b.call(this_state, [])
            with b.if_then(b.icmp_unsigned("!=", state, ir.Constant(lt.PTR, None))):
                restore = ctx.declare("PyEval_RestoreThread", ir.FunctionType(ir.VoidType(), [lt.PTR]))
                release = ctx.declare("PyGILState_Release", ir.FunctionType(ir.VoidType(), [lt.I32]))
                b.call(restore, [state])
                b.call(release, [_I32(1)])  # (PyGILState_UNLOCKED: the count reaches 0, the state goes)
    b.ret(ir.Constant(lt.PTR, None))
    return fn


# ---------------------------------------------------------------------- the pool (once per module)

_POOL_FIELDS = {  # name: type; all zero at load (glibc's and musl's mutex and condition initializers are zeros)
    "lock": ir.ArrayType(lt.I64, 8),  # pthread_mutex_t (40 or 48 bytes)
    "wake": ir.ArrayType(lt.I64, 8),  # pthread_cond_t (48): workers wait for the next generation
    "done": ir.ArrayType(lt.I64, 8),  # the owner waits for pending == 0
    "busy": lt.I64,  # the pid of the process whose thread holds the pool, 0 when free (compare-and-swap)
    "pid": lt.I64,  # the process the pool's threads live in (another: forked, no threads, state reset)
    "owner": lt.I64,  # pthread_self of the holder (0 when free): a loop reached from its chunk runs serially
    "size": lt.I64,  # workers started (1 … size; worker w runs chunk w)
    "generation": lt.I64,  # loops published so far
    "active": lt.I64,  # workers with a chunk in this loop
    "pending": lt.I64,  # their chunks not finished yet
    "tasks": lt.PTR,  # this loop's tasks
    "seen": ir.ArrayType(lt.I64, MAX_THREADS),  # per worker: the last generation it looked at
    "workers": ir.ArrayType(lt.I64, MAX_THREADS),  # per worker: its pthread_self
}


def _pool(ctx: Any, name: str) -> ir.GlobalVariable:
    """The module's pool variable ``name`` (internal, zero at load)."""
    symbol = "aot_pool_" + name
    existing = ctx.module.globals.get(symbol)
    if existing is not None:
        return existing
    gv = ir.GlobalVariable(ctx.module, _POOL_FIELDS[name], symbol)
    gv.linkage = "internal"
    gv.initializer = ir.Constant(_POOL_FIELDS[name], None)
    gv.align = 64 if isinstance(_POOL_FIELDS[name], ir.ArrayType) else 8
    return gv


def _pthread(ctx: Any, name: str) -> ir.Function:
    signatures = {
        "lock": ("pthread_mutex_lock", ir.FunctionType(lt.I32, [lt.PTR])),
        "unlock": ("pthread_mutex_unlock", ir.FunctionType(lt.I32, [lt.PTR])),
        "wait": ("pthread_cond_wait", ir.FunctionType(lt.I32, [lt.PTR, lt.PTR])),
        "broadcast": ("pthread_cond_broadcast", ir.FunctionType(lt.I32, [lt.PTR])),
        "self": ("pthread_self", ir.FunctionType(lt.I64, [])),
    }
    symbol, fnty = signatures[name]
    return ctx.declare(symbol, fnty)


def _mutex(ctx: Any, b: ir.IRBuilder, op: str, *names: str) -> None:
    b.call(_pthread(ctx, op), [b.bitcast(_pool(ctx, n), lt.PTR) for n in names])


def pool_worker_function(ctx: Any) -> ir.Function:
    """``ptr aot_pool_worker(ptr w)``: worker ``w`` of the pool, for the life of the process: parked on the
    ``wake`` condition until a loop is published (a new generation), then it runs chunk ``w`` if the loop has
    one, counts it done (the last one wakes the owner) and parks again."""
    fn, b = ctx.internal_function("aot_pool_worker", ir.FunctionType(lt.PTR, [lt.PTR]))
    if b is None:
        return fn
    w = b.ptrtoint(fn.args[0], lt.I64)
    seen = b.gep(_pool(ctx, "seen"), [_I64(0), w])
    _mutex(ctx, b, "lock", "lock")
    b.store_atomic(b.call(_pthread(ctx, "self"), []), b.gep(_pool(ctx, "workers"), [_I64(0), w]), "monotonic", 8)
    look, park, work, run, back = (fn.append_basic_block(n) for n in ("look", "park", "work", "run", "back"))
    b.branch(look)
    b.position_at_end(look)
    generation = b.load(_pool(ctx, "generation"))
    b.cbranch(b.icmp_signed("==", generation, b.load(seen)), park, work)
    b.position_at_end(park)
    _mutex(ctx, b, "wait", "wake", "lock")
    b.branch(look)
    b.position_at_end(work)
    b.store(generation, seen)
    b.cbranch(b.icmp_signed("<=", w, b.load(_pool(ctx, "active"))), run, look)
    b.position_at_end(run)
    task = b.gep(b.bitcast(b.load(_pool(ctx, "tasks")), _TASK.as_pointer()), [w])
    _mutex(ctx, b, "unlock", "lock")
    b.store(_I64(1), b.gep(task, [_I32(0), _I32(10)]))  # (on a thread of its own: see worker_function)
    b.call(worker_function(ctx), [b.bitcast(task, lt.PTR)])
    _mutex(ctx, b, "lock", "lock")
    pending = b.sub(b.load(_pool(ctx, "pending")), _I64(1))
    b.store(pending, _pool(ctx, "pending"))
    b.cbranch(b.icmp_signed("==", pending, _I64(0)), back, look)
    b.position_at_end(back)
    _mutex(ctx, b, "broadcast", "done")
    b.branch(look)
    return fn


def pool_start_function(ctx: Any) -> ir.Function:
    """``i64 aot_pool_start(ptr tasks, i64 n)``: take the pool and publish chunks 1 … k of ``n`` to its
    workers (started as needed; k < n when threads cannot be started); k + 1, or 0 when the pool is taken:
    by a loop of this process still running (the caller's own, when this loop is reached from one of its
    chunks, or another thread's). A pool marked taken by another process was inherited through ``fork()``:
    it has no threads here, so it is taken over and reset."""
    fn, b = ctx.internal_function("aot_pool_start", ir.FunctionType(lt.I64, [lt.PTR, lt.I64]))
    if b is None:
        return fn
    tasks, n = fn.args
    getpid = ctx.declare("getpid", ir.FunctionType(lt.I32, []))
    create = ctx.declare("pthread_create", ir.FunctionType(lt.I32, [lt.PTR, lt.PTR, lt.PTR, lt.PTR]))
    detach = ctx.declare("pthread_detach", ir.FunctionType(lt.I32, [lt.I64]))
    pid = b.sext(b.call(getpid, []), lt.I64)
    busy = _pool(ctx, "busy")
    taken = b.cmpxchg(busy, _I64(0), pid, "acquire", "acquire")
    got, grow, grown = (fn.append_basic_block(n) for n in ("got", "grow", "grown"))
    with b.if_then(b.not_(b.extract_value(taken, 1)), likely=False):
        holder = b.extract_value(taken, 0)
        with b.if_then(b.icmp_signed("==", holder, pid)):
            b.ret(_I64(0))
        inherited = b.cmpxchg(busy, holder, pid, "acquire", "acquire")
        with b.if_then(b.not_(b.extract_value(inherited, 1))):
            b.ret(_I64(0))
    b.branch(got)
    b.position_at_end(got)
    b.store_atomic(b.call(_pthread(ctx, "self"), []), _pool(ctx, "owner"), "monotonic", 8)
    with b.if_then(b.icmp_signed("!=", b.load(_pool(ctx, "pid")), pid), likely=False):
        for name, t in _POOL_FIELDS.items():  # (first use, or a forked child: no workers here)
            if name not in ("busy", "owner"):
                b.store(ir.Constant(t, None), _pool(ctx, name))
        b.store(pid, _pool(ctx, "pid"))
    _mutex(ctx, b, "lock", "lock")
    limit = b.sub(n, _I64(1))
    limit = b.select(b.icmp_signed("<", limit, _I64(MAX_THREADS - 1)), limit, _I64(MAX_THREADS - 1))
    size = _pool(ctx, "size")
    thread = b.alloca(lt.I64)
    b.branch(grow)
    b.position_at_end(grow)  # start workers until there is one per chunk but the caller's
    start = fn.append_basic_block("start")
    w = b.add(b.load(size), _I64(1))
    b.cbranch(b.icmp_signed("<=", w, limit), start, grown)
    b.position_at_end(start)
    b.store(b.load(_pool(ctx, "generation")), b.gep(_pool(ctx, "seen"), [_I64(0), w]))
    worker = b.bitcast(pool_worker_function(ctx), lt.PTR)
    started = b.call(create, [b.bitcast(thread, lt.PTR), ir.Constant(lt.PTR, None), worker, b.inttoptr(w, lt.PTR)])
    ok = fn.append_basic_block("started")
    b.cbranch(b.icmp_signed("==", started, _I32(0)), ok, grown)
    b.position_at_end(ok)
    b.call(detach, [b.load(thread)])
    b.store(w, size)
    b.branch(grow)
    b.position_at_end(grown)
    have = b.load(size)
    active = b.select(b.icmp_signed("<", have, limit), have, limit)
    b.store(tasks, _pool(ctx, "tasks"))
    b.store(active, _pool(ctx, "active"))
    b.store(active, _pool(ctx, "pending"))
    b.store(b.add(b.load(_pool(ctx, "generation")), _I64(1)), _pool(ctx, "generation"))
    _mutex(ctx, b, "broadcast", "wake")
    _mutex(ctx, b, "unlock", "lock")
    b.ret(b.add(active, _I64(1)))
    return fn


def pool_finish_function(ctx: Any) -> ir.Function:
    """``void aot_pool_finish()``: wait until the workers' chunks are done, and give the pool back."""
    fn, b = ctx.internal_function("aot_pool_finish", ir.FunctionType(ir.VoidType(), []))
    if b is None:
        return fn
    _mutex(ctx, b, "lock", "lock")
    look, wait, done = (fn.append_basic_block(n) for n in ("look", "wait", "done"))
    b.branch(look)
    b.position_at_end(look)
    b.cbranch(b.icmp_signed("==", b.load(_pool(ctx, "pending")), _I64(0)), done, wait)
    b.position_at_end(wait)
    _mutex(ctx, b, "wait", "done", "lock")
    b.branch(look)
    b.position_at_end(done)
    _mutex(ctx, b, "unlock", "lock")
    b.store_atomic(_I64(0), _pool(ctx, "owner"), "monotonic", 8)
    b.store_atomic(_I64(0), _pool(ctx, "busy"), "release", 8)
    b.ret_void()
    return fn


def pool_member_function(ctx: Any) -> ir.Function:
    """``i1 aot_pool_member()``: whether this thread is the pool's holder or one of its workers (a loop
    it reaches runs serially: the pool is busy with the loop this one is part of)."""
    fn, b = ctx.internal_function("aot_pool_member", ir.FunctionType(lt.I1, []))
    if b is None:
        return fn
    me = b.call(_pthread(ctx, "self"), [])
    yes, look, next_, no = (fn.append_basic_block(n) for n in ("yes", "look", "next", "no"))
    index = b.alloca(lt.I64)
    b.store(_I64(1), index)
    b.cbranch(b.icmp_signed("==", b.load_atomic(_pool(ctx, "owner"), "monotonic", 8), me), yes, look)
    b.position_at_end(look)
    w = b.load(index)
    worker = b.load_atomic(b.gep(_pool(ctx, "workers"), [_I64(0), w]), "monotonic", 8)
    b.cbranch(b.icmp_signed("==", worker, me), yes, next_)
    b.position_at_end(next_)
    b.store(b.add(w, _I64(1)), index)
    b.cbranch(b.icmp_signed("<", w, _I64(MAX_THREADS - 1)), look, no)
    b.position_at_end(yes)
    b.ret(ir.Constant(lt.I1, 1))
    b.position_at_end(no)
    b.ret(ir.Constant(lt.I1, 0))
    return fn


def driver_function(ctx: Any) -> ir.Function:
    """``i32 aot_parallel_for(ptr body, ptr env, i64 count, ptr partials, i64 size, i64 n)``: run ``body`` on
    ``n`` chunks of ``0 … count-1`` (chunk ``c`` writes its partial results at ``partials + c*size``) and
    join; 1 with the first failing chunk's exception set, else 0."""
    existing = ctx.module.globals.get("aot_parallel_for")
    if existing is not None:
        return existing
    fn = ir.Function(
        ctx.module, ir.FunctionType(lt.STATUS, [lt.PTR, lt.PTR, lt.I64, lt.PTR, lt.I64, lt.I64]), "aot_parallel_for"
    )
    fn.linkage = "internal"
    body, env, count, partials, size, n = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    tasks = b.alloca(ir.ArrayType(_TASK, MAX_THREADS))
    index = b.alloca(lt.I64)
    failed = b.alloca(lt.I64)
    check = ctx.declare("PyGILState_Check", ir.FunctionType(lt.I32, []))
    save = ctx.declare("PyEval_SaveThread", ir.FunctionType(lt.PTR, []))
    restore = ctx.declare("PyEval_RestoreThread", ir.FunctionType(ir.VoidType(), [lt.PTR]))
    create = ctx.declare("pthread_create", ir.FunctionType(lt.I32, [lt.PTR, lt.PTR, lt.PTR, lt.PTR]))
    join = ctx.declare("pthread_join", ir.FunctionType(lt.I32, [lt.I64, lt.PTR]))
    worker = worker_function(ctx)

    def task_field(c: ir.Value, k: int) -> ir.Value:
        return b.gep(tasks, [_I64(0), c, _I32(k)])

    def each(first: int | ir.Value, emit: Callable[[ir.Value], None]) -> None:  # chunks first … n-1 (one counter)
        loops.counted_loop(b, _I64(first) if isinstance(first, int) else first, n, emit, "chunk", counter=index)

    held = b.icmp_signed("!=", b.call(check, []), _I32(0))
    state = b.alloca(lt.PTR)
    b.store(ir.Constant(lt.PTR, None), state)
    with b.if_then(held):
        b.store(b.call(save, []), state)
    per, extra = b.sdiv(count, n), b.srem(count, n)

    def start_of(c: ir.Value) -> ir.Value:  # c*per + min(c, extra)
        return b.add(b.mul(c, per), b.select(b.icmp_signed("<", c, extra), c, extra))

    def fill(c: ir.Value) -> None:
        for k, value in (
            (0, body),
            (1, env),
            (2, start_of(c)),
            (3, start_of(b.add(c, _I64(1)))),
            (4, b.gep(partials, [b.mul(c, size)])),
            (5, _I64(0)),
            (6, ir.Constant(lt.PTR, None)),
            (7, ir.Constant(lt.PTR, None)),
            (8, ir.Constant(lt.PTR, None)),
            (9, _I64(0)),
            (10, _I64(0)),
        ):
            b.store(value, task_field(c, k))

    each(0, fill)

    def start(c: ir.Value) -> None:
        b.store(_I64(1), task_field(c, 10))
        task = b.bitcast(b.gep(tasks, [_I64(0), c]), lt.PTR)
        started = b.call(
            create, [b.bitcast(task_field(c, 9), lt.PTR), ir.Constant(lt.PTR, None), b.bitcast(worker, lt.PTR), task]
        )
        with b.if_then(b.icmp_signed("!=", started, _I32(0)), likely=False):
            b.store(_I64(0), task_field(c, 10))  # (no thread: the caller runs this chunk)
            b.call(worker, [task])

    def run(c: ir.Value) -> None:
        b.call(worker, [b.bitcast(b.gep(tasks, [_I64(0), c]), lt.PTR)])

    def wait(c: ir.Value) -> None:
        with b.if_then(b.icmp_signed("!=", b.load(task_field(c, 10)), _I64(0))):
            b.call(join, [b.load(task_field(c, 9)), ir.Constant(lt.PTR, None)])

    pooled = b.alloca(lt.I64)  # 1 + the chunks the pool's workers run, 0 without the pool
    b.store(_I64(0), pooled)
    several = b.icmp_signed(">", n, _I64(1))
    with b.if_then(several):
        b.store(b.call(pool_start_function(ctx), [b.bitcast(tasks, lt.PTR), n]), pooled)
    k = b.load(pooled)
    with b.if_else(b.icmp_signed(">", k, _I64(0))) as (pool, other):
        with pool:  # chunk 0 and those no worker took here, then wait for the workers
            run(_I64(0))
            each(k, run)
            b.call(pool_finish_function(ctx), [])
        with other:
            member = b.alloca(lt.I1)
            b.store(ir.Constant(lt.I1, 0), member)
            with b.if_then(several):
                b.store(b.call(pool_member_function(ctx), []), member)
            with b.if_else(b.load(member)) as (nested, busy):
                with nested:  # reached from a chunk of the pool's loop: every chunk here, in order
                    each(0, run)
                with busy:  # the pool serves another thread's loop: threads of this loop's own
                    each(1, start)
                    run(_I64(0))
                    each(1, wait)
    with b.if_then(held):
        b.call(restore, [b.load(state)])
    b.store(_I64(-1), failed)

    def first_failure(c: ir.Value) -> None:
        bad = b.icmp_signed("!=", b.load(task_field(c, 5)), _I64(0))
        with b.if_then(b.and_(bad, b.icmp_signed("<", b.load(failed), _I64(0)))):
            b.store(c, failed)

    each(0, first_failure)
    with b.if_then(b.icmp_signed(">=", b.load(failed), _I64(0)), likely=False):
        token = b.call(gil.acquire_function(ctx), [])
        py_restore = ctx.declare("PyErr_Restore", ir.FunctionType(ir.VoidType(), [lt.PTR, lt.PTR, lt.PTR]))
        decref = ctx.declare("Py_DecRef", ir.FunctionType(ir.VoidType(), [lt.PTR]))

        def hand_over(c: ir.Value) -> None:  # the first failure's exception is raised, the others dropped
            bad = b.icmp_signed("!=", b.load(task_field(c, 5)), _I64(0))
            with b.if_then(bad):
                exc = [b.load(task_field(c, k)) for k in (6, 7, 8)]
                with b.if_else(b.icmp_signed("==", c, b.load(failed))) as (first, other):
                    with first:
                        b.call(py_restore, exc)
                    with other:
                        for e in exc:
                            b.call(decref, [e])

        each(0, hand_over)
        interrupt.clear_abort(ctx, b)  # (chunks stopped by a signal another chunk raised for: this loop's)
        occurred = ctx.declare("PyErr_Occurred", ir.FunctionType(lt.PTR, []))
        with b.if_then(b.icmp_unsigned("==", b.call(occurred, []), ir.Constant(lt.PTR, None)), likely=False):
            # (stopped by another loop's chunk that raised for a signal: a loop of another thread, at once)
            ctx.set_exception(b, "KeyboardInterrupt", "a signal stopped a parallel loop")
        b.call(gil.release_function(ctx), [token])
        b.ret(ir.Constant(lt.STATUS, 1))
    b.ret(ir.Constant(lt.STATUS, 0))
    return fn
