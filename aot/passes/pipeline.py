"""The ordered IR → IR passes that make the solver's fixed point typed IR, ready to store or compile.

    typed = pipeline.run(solved, fixed_point)                        # resolve, then every other pass
    after = pipeline.run(solved, fixed_point, until="resolve")       # the IR right after one pass
    pipeline.run(solved, fixed_point, verify=True)                   # IRVerifyError: after pass 'simplify-cfg': …
    pipeline.ir_after(table, "numkit.core:sqr", (F64,), "resolve")    # inferred afresh, stopped after resolve

Each pass is ``run(function, context) -> function``: a pure function of its arguments (no hidden state) that
builds a new function and leaves its input alone. The context is what inference knows about the function
(the solver's ``FixedPoint``); ``resolve`` reads it, the other passes do not need it. With ``verify`` the
verifier checks the IR after every pass and a failure names the pass: the test suite turns it on
(``AOT_VERIFY_PASSES=1``, read with the runtime's other switches).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from ..analysis import parallel
from ..infer import Inferencer
from ..ir import Function, IRVerifyError
from ..ir import verify as verify_function
from ..types import Type
from . import resolve, simplify_cfg

Pass = Callable[[Function, Any], Function]

PASSES: tuple[tuple[str, Pass], ...] = (
    ("resolve", resolve.run),
    ("simplify-cfg", simplify_cfg.run),
    ("check-prange", parallel.run),
)


class UnknownPass(ValueError):
    """A pass name that is not in the pipeline."""


def pass_names(passes: tuple[tuple[str, Pass], ...] | None = None) -> tuple[str, ...]:
    return tuple(name for name, _ in (PASSES if passes is None else passes))


def check_pass_name(name: str, passes: tuple[tuple[str, Pass], ...] | None = None) -> str:
    """``name`` if the pipeline has a pass of that name, else ``UnknownPass`` listing the names it has."""
    names = pass_names(passes)
    if name not in names:
        raise UnknownPass(f"unknown pass {name!r} (the passes, in order: {', '.join(names)})")
    return name


def run(
    fn: Function,
    context: Any = None,
    until: str | None = None,
    verify: bool = False,
    passes: tuple[tuple[str, Pass], ...] | None = None,
) -> Function:
    """``fn`` after each pass in order, up to and including ``until`` (all of them when None).

    ``passes`` replaces the pipeline's own list (tests use it to run a deliberately broken pass)."""
    passes = PASSES if passes is None else passes
    if until is not None:
        check_pass_name(until, passes)
    for name, pass_ in passes:
        fn = pass_(fn, context)
        if verify:
            try:
                verify_function(fn)
            except IRVerifyError as err:
                raise IRVerifyError(f"after pass {name!r}: {err}") from None
        if name == until:
            break
    return fn


def ir_after(table: Any, key: str, argtypes: tuple[Type, ...], until: str) -> Function:
    """The IR of method ``key`` (found in ``table``) on ``argtypes`` right after pass ``until``, inferred
    afresh: what ``aot inspect --ir METHOD --until PASS`` prints. Raises ``UnknownPass``, ``LookupError``
    for a method the table does not hold, and ``CompileError`` for code that does not compile."""
    check_pass_name(until)
    method = table.methods.get(key)
    if method is None:
        raise LookupError(f"no method {key} in the current sources")
    return Inferencer(table, passes=partial(run, until=until)).infer(method, tuple(argtypes)).function
