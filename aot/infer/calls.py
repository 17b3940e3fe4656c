"""Calls between compiled methods as Python writes them: keywords, keyword-only parameters and defaults.

    def solve(a, *, tol=1e-8, out=None): ...
    solve(x)                 → call solve(%x, %$default.bb0.3.1, %$default.bb0.3.2)   (f64[:], f64, none)
    solve(x, out=y, tol=t)   → call solve(%x, %t, %y)

Inference binds a call to the callee's parameters at compile time, by Python's rules (``aot.binding``): every
parameter gets the argument Python would give it, in the callee's order, so a compiled method always takes all
of its parameters by position. A default the call leaves out is folded in as a constant (int, float, bool,
None and tuples of them) and recorded as a ``default`` edge (``aot.world.edges``): changing that default
invalidates exactly the callers that used it. A call Python would reject is a ``CompileError`` with Python's
message; so is a default that is not a constant.
"""

from __future__ import annotations

from typing import Any

from ..binding import DEFAULT, Parameters
from ..ir import Const, Op, Return, Var
from ..ir.ops import CallValue
from ..types import NONE, Type
from ..world.edges import EdgeKind
from .rules import RuleError


def never_returns(inst: Any) -> bool:
    """Whether a finished instance never returns normally (every path it can take raises): code after a call
    of it never runs, so its caller compiles none of it (``if True: raise …`` in a helper whose value is
    used). Such an instance's return type is ``none`` (nothing else decodes an image instance's IR)."""
    if inst is None or inst.return_type != NONE or getattr(inst, "fixed_point", None) is not None:
        return False
    fn = inst.function
    return bool(fn.blocks) and not any(isinstance(op, Return) for _, op in fn.ops())


def default_target(method_key: str, param: str) -> str:
    """The target of a ``default`` edge: ``pkg.mod:qualname#param``."""
    return f"{method_key}#{param}"


def bind_call(
    op: CallValue, method: Any, argtypes: tuple[Type, ...], label: str, index: int, const_type: Any
) -> tuple[tuple[Var, ...], tuple[Type, ...], tuple[Op, ...], list[tuple[EdgeKind, str, Any]]]:
    """The arguments of ``op`` in ``method``'s parameter order and their types, the constants of the defaults
    filled in (ops to run before the call), and the edges on those defaults. ``RuleError`` with Python's
    message for a call Python would reject."""
    keywords = op.keyword_names
    py_func = getattr(method, "py_func", None)
    if py_func is None or not hasattr(py_func, "__code__"):
        if keywords:
            raise RuleError(f"{method.key} takes its arguments by position only")
        return op.args, argtypes, (), []
    params = Parameters.of(py_func)
    plan = params.plan(len(op.args) - len(keywords), keywords)
    if isinstance(plan, str):
        raise RuleError(plan)
    if not keywords and DEFAULT not in plan:
        return op.args, argtypes, (), []
    args: list[Var] = []
    types: list[Type] = []
    consts: list[Op] = []
    edges: list[tuple[EdgeKind, str, Any]] = []
    for i, j in enumerate(plan):
        if j != DEFAULT:
            args.append(op.args[j])
            types.append(argtypes[j])
            continue
        name = params.params[i]
        value = params.defaults[i]
        t = const_type(value) if type(value) in (bool, int, float, tuple) or value is None else None
        if t is None:
            raise RuleError(
                f"the default value of parameter '{name}' of {params.name}() is a {type(value).__name__}; a compiled "
                f"call fills in only constant defaults (int, float, bool, None and tuples of them): pass '{name}'"
            )
        var = Var(f"$default.{label}.{index}.{i}")
        consts.append(Const(var, value, op.span))
        args.append(var)
        types.append(t)
        edges.append((EdgeKind.DEFAULT, default_target(method.key, name), value))
    return tuple(args), tuple(types), tuple(consts), edges


def numpy_arguments(
    name: str, params: tuple[str, ...], args: tuple[Type, ...], keywords: tuple[str, ...], least: int
) -> dict[str, int]:
    """A NumPy function's call bound to its parameters ``params`` (the first ``least`` required): each given
    parameter's name → the index of its argument (the last ``len(keywords)`` given by keyword), with Python's
    complaints (too many, given twice, missing) as ``RuleError``s naming ``np.<name>``."""
    positional = len(args) - len(keywords)
    if positional > len(params):
        raise RuleError(f"np.{name}() takes ({', '.join(params)}) here, got {positional} positional arguments")
    names = list(params[:positional]) + list(keywords)
    if len(set(names)) != len(names):
        raise RuleError(f"np.{name}() got multiple values for one argument")
    where = {n: k for k, n in enumerate(names)}
    missing = [p for p in params[:least] if p not in where]
    if missing:
        raise RuleError(f"np.{name}() is missing the argument {missing[0]!r}")
    return where
