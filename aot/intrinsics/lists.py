"""Lists in compiled code: displays, ``append``/``pop``/``sort``/``reverse`` on a local list, ``sorted(lst)``,
``np.array(lst)``, and the length check of unpacking ``a, b = x`` (a list or a 1-D array).

    out = []; out.append(x)  →  intrinsic list.new ()  …  intrinsic list.append (%out, %x)   lists.list_rule

The frontend lowers the method calls on a local list (``aot/frontend/lists.py``); these descriptors type and
lower what it made. Kernels make no lists.
"""

from __future__ import annotations

from ..codegen import lowering
from ..infer import lists
from ..ir.ops import Intrinsic
from .spec import Effect, IntrinsicSpec, Rule


def _list(
    fn: Intrinsic, arity: tuple[int, int | None], *, numpy: tuple[str, ...] = (), rule: Rule = lists.list_rule
) -> IntrinsicSpec:
    return IntrinsicSpec(
        fn, rule, lowering.list_op, Effect.OPAQUE, arity=arity, device_refusal="makes a list", numpy=numpy
    )


SPECS = (
    _list(Intrinsic.LIST_NEW, (0, None)),
    _list(Intrinsic.LIST_APPEND, (2, 2)),
    _list(Intrinsic.LIST_POP, (1, 2)),
    _list(Intrinsic.LIST_TO_ARRAY, (1, 1), numpy=("array", "asarray")),
    _list(Intrinsic.LIST_SORT, (1, 1)),
    _list(Intrinsic.LIST_SORTED, (1, 1), rule=lists.sorted_rule),  # sorted(lst)
    _list(Intrinsic.LIST_REVERSE, (1, 1)),
    # a, b = x: x and the constant count; checked now for a tuple (the op is dropped), at run time otherwise
    IntrinsicSpec(Intrinsic.UNPACK, lists.unpack_rule, lowering.list_op, Effect.READS, arity=(2, 2)),
)
