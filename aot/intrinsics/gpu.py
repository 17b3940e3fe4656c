"""``aot.gpu`` in kernels: thread and block ids (an optional constant axis), the block barrier, atomic adds and
shared arrays (a constant shape; the dtype is in the result type). ``aot.gpu.intrinsic_functions`` maps the
functions to these intrinsics; the target's hooks lower them (``aot.codegen.gpu_intrinsics``), and a CPU grid
reads the ids from its loop.

    aot.gpu.global_id(0)  →  intrinsic gpu.global_id (%axis)   rules.gpu_rule   lowering.gpu
"""

from __future__ import annotations

from ..codegen import lowering
from ..infer import rules
from ..ir.ops import Intrinsic
from .spec import Effect, IntrinsicSpec


def _gpu(fn: Intrinsic, arity: tuple[int, int | None], effect: Effect = Effect.OPAQUE) -> IntrinsicSpec:
    return IntrinsicSpec(fn, rules.gpu_rule, lowering.gpu, effect, arity=arity)


_IDS = (Intrinsic.THREAD_ID, Intrinsic.BLOCK_ID, Intrinsic.BLOCK_DIM, Intrinsic.GRID_DIM, Intrinsic.GLOBAL_ID)

SPECS = (
    *(_gpu(fn, (0, 1)) for fn in _IDS),
    _gpu(Intrinsic.SYNC_THREADS, (0, 0)),
    _gpu(Intrinsic.ATOMIC_ADD, (3, 3), Effect.UPDATES),
    _gpu(Intrinsic.SHARED_ARRAY, (1, 1)),
)
