"""The transfer rule of a call (``callvalue``): what the called value is, and so what the call becomes.

    f(x)              a compiled method       → call f(x) (after its defaults), a ``call`` edge, a callee
    math.sqrt(x)      an intrinsic            → intrinsic math.sqrt(x) (an ``overlay`` edge where the owner
                                                replaces its library function: ptx's __nv_sqrt)
    np.sum(a, axis=0) a NumPy function        → its descriptor's bind: which arguments are the operands
    a.reshape(n, m)   an array method         → intrinsic array.reshape(a, n, m)
    np.zeros(n)       an allocation           → intrinsic np.zeros(n)
    aot.gpu.grid(1)   a GPU intrinsic         → its constant arguments checked now
    int(x), bool(x)   a conversion            → convert / truth
    isinstance(x, T)  decided now             → a constant

``call_value`` tries these in a fixed order (the order matters: ``np.ones`` is a Python function too); each
gives a ``Transfer`` (``aot.infer.instances``) with the type and the op it stands for at run time.
"""

from __future__ import annotations

import builtins
from typing import Any

from ..diagnostics import CompileError
from ..intrinsics import registry
from ..intrinsics.spec import PLAIN, Effect, Site
from ..ir import Call, Convert, GetAttr, Intrinsic, IntrinsicCall, Op, Truth, Var
from ..ir.ops import CallValue
from ..types import BOTTOM, F64, I64, ArrayType, ListType, OptionalType, PyValueType, ScalarType, Type
from ..world.edges import Edge, EdgeKind
from . import arrays, calls, constructs, conversions, lists, npfuncs, optional, rules, views
from .body import BodyState, is_temp
from .instances import Transfer, const_type
from .names import user_words
from .rules import RuleError


def call_value(body: BodyState, op: CallValue, label: str, index: int) -> Transfer:
    func = body.t(op.func)
    if func is BOTTOM:
        return Transfer(BOTTOM)
    if not isinstance(func, PyValueType):
        raise RuleError(f"a value of type {func} cannot be called")
    callee = func.value
    argtypes = tuple(body.t(a) for a in op.args)
    if any(t is BOTTOM for t in argtypes):
        return Transfer(BOTTOM)
    table = body.inf.table
    plain_callee = not isinstance(callee, (Intrinsic, npfuncs.BoundMethod, arrays.ArrayMethod))
    intrinsic = table.intrinsic_for(callee) if plain_callee else None
    method = table.method_for(callee) if plain_callee and intrinsic is None else None
    numpy = registry.numpy_function(callee) if plain_callee else None  # (np.ones is a Python function too)
    spelled = registry.spec(callee.fn) if isinstance(callee, npfuncs.BoundMethod) else numpy and numpy[1]
    if isinstance(callee, Intrinsic):  # (a view method: a.squeeze(axis=0))
        spelled = registry.spec(callee)
    if numpy is not None and conversions.routes(numpy[0], numpy[1].fn, argtypes):
        return conversions.call(op, numpy[0], argtypes, registry.spec)  # np.asarray(a), np.copy(a) … of arrays
    keywords = op.keyword_names
    if (
        keywords
        and method is None
        and not (spelled and set(keywords) <= spelled.keywords and len(set(keywords)) == len(keywords))
    ):
        name = getattr(callee, "__qualname__", None) or getattr(callee, "__name__", None) or str(callee)
        raise RuleError(f"{name}() takes no keyword arguments in compiled code; pass its arguments by position")
    if isinstance(callee, Intrinsic) and registry.spec(callee).effect is Effect.VIEWS:
        return array_method(body, op, callee, argtypes)
    if isinstance(callee, npfuncs.BoundMethod):
        return array_method_call(body, op, callee, argtypes)
    if intrinsic is not None and intrinsic.value.startswith("gpu."):
        return gpu_call(body, op, intrinsic, argtypes)
    if constructs.is_isinstance(callee):
        return body.folded(op.dest, constructs.isinstance_call(argtypes), label, index)
    if callee is builtins.sorted:
        sort = registry.spec(Intrinsic.LIST_SORTED)
        result = sort.rule(sort, argtypes, PLAIN)
        return Transfer(result, IntrinsicCall(op.dest, Intrinsic.LIST_SORTED, op.args, op.span))
    fn = numpy[1].fn if numpy is not None else None
    if fn is Intrinsic.LIST_TO_ARRAY and len(argtypes) == 1 and isinstance(argtypes[0], ListType):
        to_array = registry.spec(fn)  # np.array(lst), np.asarray(lst)
        return Transfer(to_array.rule(to_array, argtypes, PLAIN), IntrinsicCall(op.dest, fn, op.args, op.span))
    if numpy is not None and numpy[1].effect is Effect.VIEWS:  # np.ravel(a), np.reshape(a, shape), np.flip(a)
        meaning = IntrinsicCall(op.dest, numpy[1].fn, op.args, op.span)
        if numpy[1].fn in (Intrinsic.RAVEL, Intrinsic.RESHAPE):
            return Transfer(views.function_type(numpy[1].fn, argtypes), meaning)
        site = Site(numpy[0], keywords=keywords, consts=tuple(body.constant_of(a) for a in op.args))
        return Transfer(numpy[1].rule(numpy[1], argtypes, site), meaning)  # (their axes: constants)
    if fn in registry.ALLOCATIONS or isinstance(callee, arrays.ArrayMethod):
        return allocation_call(body, op, fn, callee, argtypes)
    if fn is Intrinsic.NP_SEARCHSORTED and keywords == ("side",):  # np.searchsorted(a, x, side="right")
        if len(argtypes) != 3:
            raise RuleError("np.searchsorted() takes (a, x, side=…) here")
        side = registry.spec(npfuncs.searchsorted_side(argtypes[-1]))  # (the side picks the intrinsic)
        meaning = IntrinsicCall(op.dest, side.fn, op.args[:2], op.span)
        return Transfer(side.rule(side, argtypes[:2], Site(name="searchsorted")), meaning)
    takes_strings = numpy is not None and "kind" in numpy[1].keywords  # (np.sort(a, kind="stable"))
    for a, t in zip(op.args, argtypes) if not takes_strings else ():
        if constructs.is_string(t):
            raise RuleError(f"a string cannot be passed to {user_words(callee)}; {constructs.STRINGS_ARE_CONSTANTS}")
        if isinstance(t, PyValueType):
            raise RuleError(f"{t.value!r} cannot be passed to compiled code")
        if isinstance(t, OptionalType):
            raise RuleError(optional.unnarrowed_message(a.name, t))
        if not t.is_runtime:
            raise RuleError(f"a tuple holding {t} cannot be passed to compiled code")
        if method is not None and lists.untyped(t):
            raise RuleError(lists.UNTYPED)
    if method is not None:
        return method_call(body, op, method, argtypes, label, index)
    numpy_result = numpy_call(body, op, callee, argtypes)
    if numpy_result is not None:
        return numpy_result
    builtin = registry.PYTHON_FUNCTIONS.get(callee) if plain_callee else None
    intrinsic = builtin.fn if builtin is not None else intrinsic
    if intrinsic is Intrinsic.ABS and len(argtypes) == 1 and isinstance(argtypes[0], ArrayType):
        np_abs = registry.spec(Intrinsic.NP_ABS)  # abs(a): np.abs(a)
        result = np_abs.rule(np_abs, argtypes, Site("abs", (False,)))
        return Transfer(result, IntrinsicCall(op.dest, Intrinsic.NP_ABS, op.args, op.span))
    if intrinsic is not None:
        found = registry.spec(intrinsic)
        result = found.rule(found, argtypes, PLAIN)
        overlay = (intrinsic, result) if isinstance(result, ScalarType) else None
        return Transfer(result, IntrinsicCall(op.dest, intrinsic, op.args, op.span), overlay=overlay)
    target: ScalarType | None = None
    if callee is builtins.int:
        target = I64
    elif callee is builtins.float:
        target = F64
    elif isinstance(callee, ScalarType) and callee.kind != "n":
        target = callee
    elif callee is builtins.bool:
        if len(op.args) != 1:
            raise RuleError("bool() takes exactly one argument here")
        return Transfer(rules.truth_type(argtypes[0]), Truth(op.dest, op.args[0], op.span))
    if target is not None:
        if len(op.args) != 1:
            raise RuleError(f"{target.name}() takes exactly one argument here")
        return Transfer(rules.convert_type(target, argtypes[0]), Convert(op.dest, op.args[0], op.span))
    if callee is builtins.range:
        raise RuleError("range() can only be used as the iterable of a for loop")
    if isinstance(callee, type) and issubclass(callee, BaseException):
        raise RuleError('exceptions can only be raised: raise ValueError("message")')
    name = getattr(callee, "__qualname__", None) or getattr(callee, "__name__", None) or repr(callee)
    raise RuleError(f"calls to {name}() are not supported in compiled code")


def method_call(
    body: BodyState, op: CallValue, method: Any, argtypes: tuple[Type, ...], label: str, index: int
) -> Transfer:
    """A call of a compiled method: bound to its parameters (``aot.infer.calls``), its instance inferred (or
    its provisional return type while it recurses)."""
    if getattr(getattr(method, "options", None), "kernel", False):
        raise RuleError(
            f"{method.key} is a kernel: kernels are launched from Python with "
            f"kernel[grid, block](…), not called; call a device function (a plain "
            f"or @aot.jit function) from both instead"
        )
    args, argtypes, defaults, default_edges = calls.bind_call(op, method, argtypes, label, index, const_type)
    try:
        ret = body.inf.call(method, argtypes, body.frame)
    except CompileError as err:
        if err.chain and err.chain[0] == body.fn.name:
            raise
        raise err.with_chain(body.fn.name) from None
    if calls.never_returns(body.inf.done.get((method.key, argtypes))):
        body.cut[label] = index
    call = Call(op.dest, method.key, args, op.span)
    called = Edge(EdgeKind.CALL, method.key, "(" + ", ".join(map(str, argtypes)) + ")")
    edges = (called, *(Edge(*edge) for edge in default_edges))
    meaning: Op | tuple[Op, ...] = defaults + (call,) if defaults else call
    return Transfer(ret, meaning, edges, callee=(method.key, argtypes))


def array_method(body: BodyState, op: CallValue, fn: Intrinsic, argtypes: tuple[Type, ...]) -> Transfer:
    """``a.reshape(…)``, ``a.ravel()``: the array is the object of the ``getattr`` that made ``op.func``."""
    attr = next(
        (o for _, o in body.fn.ops() if isinstance(o, GetAttr) and o.dest == op.func and is_temp(o.dest.name)),
        None,
    )
    if attr is None:
        raise RuleError(f"call array methods directly, as in a.{fn.value.split('.')[1]}(…)")
    arr = body.t(attr.obj)
    view = registry.spec(fn)
    site = Site(keywords=op.keyword_names, consts=(None, *(body.constant_of(a) for a in op.args)))
    result = view.rule(view, (arr, *argtypes), site)
    return Transfer(result, IntrinsicCall(op.dest, fn, (attr.obj, *op.args), op.span))


def array_method_call(
    body: BodyState, op: CallValue, method: npfuncs.BoundMethod, argtypes: tuple[Type, ...]
) -> Transfer:
    """``a.sum()``, ``a.argsort(kind=…)``: a NumPy method of the array ``method.obj`` (``aot.infer.npfuncs``)."""
    obj = body.t(method.obj)
    assert isinstance(obj, ArrayType)
    args = (method.obj, *op.args)
    found = registry.spec(method.fn)
    if found.bind is not None:  # (``axis``, ``ddof=``, ``kind``: which arguments are the operands)
        result, order = found.bind(found, (obj, *argtypes), Site(keywords=op.keyword_names))
        args = tuple(args[i] for i in order)
    else:
        result = npfuncs.method_type(found, obj, argtypes)
    return Transfer(result, IntrinsicCall(op.dest, method.fn, args, op.span))


def numpy_call(body: BodyState, op: CallValue, callee: Any, argtypes: tuple[Type, ...]) -> Transfer | None:
    """``np.sqrt(x)``, ``np.sum(a)``, ``np.float32(x)`` …; None when ``callee`` is no NumPy object."""
    meaning: Op
    overlay = None
    target = npfuncs.scalar_type_of(callee)
    if target is not None:
        if len(op.args) != 1:
            raise RuleError(f"{callee.__name__}() takes exactly one argument here")
        cast = registry.spec(Intrinsic.NP_CAST)
        result: Type = cast.rule(cast, argtypes, Site(name=npfuncs.numpy_type_name(target)))
        if target.kind == "b":
            meaning = Truth(op.dest, op.args[0], op.span)
        elif target.is_float:
            meaning = Convert(op.dest, op.args[0], op.span)
        else:
            meaning = IntrinsicCall(op.dest, Intrinsic.NP_CAST, op.args, op.span)
    else:
        found = registry.numpy_function(callee)
        if found is None or found[1].fn not in registry.NUMPY:
            return None
        name, spec = found
        if spec.fn is Intrinsic.NP_WHERE and len(op.args) == 1:  # (np.where(c) is np.nonzero(c))
            name, spec = "nonzero", registry.spec(Intrinsic.NP_NONZERO)
        site = Site(name, tuple(body.is_literal(a) for a in op.args), op.keyword_names)
        args = op.args
        if spec.bind is not None:  # (``axis``, ``ddof=``, ``kind``: which arguments are the operands)
            result, order = spec.bind(spec, argtypes, site)
            args = tuple(args[i] for i in order)
        else:
            result = spec.rule(spec, argtypes, site)
        meaning = IntrinsicCall(op.dest, spec.fn, args, op.span)
        libm = npfuncs.LIBM.get(spec.fn)
        if libm is not None:  # (the owner may call a function of its own for it: an overlay edge)
            overlay = (libm, result.dtype if isinstance(result, ArrayType) else result)
    return Transfer(result, meaning, overlay=overlay)


def allocation_call(
    body: BodyState, op: CallValue, fn: Intrinsic | None, callee: Any, argtypes: tuple[Type, ...]
) -> Transfer:
    """``np.zeros(…)`` and the like, ``a.copy()``: a new array (``aot.infer.arrays``)."""
    args = op.args
    if fn is None:  # a method of an array: its receiver is the first operand
        fn = registry.METHODS[callee.name].fn
        args = (Var(callee.receiver),) + args
        argtypes = (body.t(args[0]),) + argtypes
    spec = registry.spec(fn)
    assert spec.bind is not None
    result, runtime = spec.bind(spec, argtypes, Site(keywords=op.keyword_names))
    return Transfer(result, IntrinsicCall(op.dest, fn, tuple(args[i] for i in runtime), op.span))


def gpu_call(body: BodyState, op: CallValue, fn: Intrinsic, argtypes: tuple[Type, ...]) -> Transfer:
    """``aot.gpu.*``: axes and shared-array shapes must be constants; a dtype is a compile-time name."""
    spec = registry.spec(fn)
    result = spec.rule(spec, argtypes, Site(consts=tuple(body.constant_of(a) for a in op.args)))
    args = op.args[:1] if fn is Intrinsic.SHARED_ARRAY else op.args  # the dtype is in the type
    return Transfer(result, IntrinsicCall(op.dest, fn, args, op.span))
