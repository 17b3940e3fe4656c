"""A method's signatures: declared ones (``signatures=`` strings, annotations), the types of arguments, and
the conversions a declared signature makes (an ``int`` where a ``float`` is declared).

    declared_signatures(f, ["f64(f64, i64)"])   → ((f64, i64),)
    scalar_types((float, int))                  → ((f64, i64), ("f64", "i64"), ((f64, i64),))

Hot path (every first call), guarded by ``tests/bench/instructions.py`` and
``tests/bench/test_import_bench.py``: common signatures are made once and shared between methods.
"""

from __future__ import annotations

from ..types import ArrayType, ScalarType, SignatureError, TupleType, Type, accepts, parse_signature, parse_type

TYPE_CHECKING = False  # (not ``typing.TYPE_CHECKING``: importing the runtime imports no ``typing``)
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any


def declared_signatures(py_func: Callable, signatures: Sequence[str] | None) -> tuple[tuple[Type, ...], ...]:
    """Argument types from ``signatures=`` strings, else from concrete annotations, else none (pure JIT).

    Made on a method's first call. The common results are shared between methods (see ``scalar_types``),
    which keeps a thousand first calls from leaving a thousand more objects for the garbage collector."""
    if signatures:
        try:
            return _parse_signatures(tuple(signatures))
        except SignatureError as err:
            raise TypeError(f"{py_func.__qualname__}: {err}") from None
    hints = getattr(py_func, "__annotations__", None) or {}
    code = py_func.__code__
    n = code.co_argcount
    if not hints and n:  # parameters, none annotated: pure JIT
        return ()
    names = code.co_varnames[:n]
    get = hints.get
    # The common case: every parameter `float`, `int` or `bool`, a signature shared with other methods.
    classes = (get(names[0]),) if n == 1 else (get(names[0]), get(names[1])) if n == 2 else tuple(map(get, names))
    common = _shared_scalars(classes)
    if common is None and str in set(map(type, hints.values())):  # `from __future__ import annotations`
        try:
            import typing  # (only for annotations written as strings)

            hints = typing.get_type_hints(py_func)
        except Exception:
            pass
        classes = tuple(map(hints.get, names))
        common = _shared_scalars(classes)
    if common is not None:
        return common[2]
    types = tuple(map(annotation_type, classes))
    return () if None in types else (types,)  # type: ignore[return-value]  # (no None in them)


_PARSED: dict[tuple[str, ...], tuple[tuple[Type, ...], ...]] = {}  # (no functools on import)


def _parse_signatures(texts: tuple[str, ...]) -> tuple[tuple[Type, ...], ...]:
    known = _PARSED.get(texts)
    if known is None:
        known = tuple(_Signature.of(parse_signature(text)[1]) for text in texts)
        if len(_PARSED) >= 1024:
            _PARSED.clear()
        _PARSED[texts] = known
    return known


class _Signature(tuple):
    """The argument types of a declared signature (a tuple), with their texts (``texts``): what a first call
    looks the signature's image entry up by, worked out once per signature instead of on every first call."""

    texts: tuple[str, ...]

    @classmethod
    def of(cls, types: tuple[Type, ...]) -> _Signature:
        signature = cls(types)
        signature.texts = tuple(map(str, types))
        return signature


_PYTHON_TYPES = {int: parse_type("int"), float: parse_type("float"), bool: parse_type("bool")}


_Scalars = tuple[tuple[Type, ...], tuple[str, ...], tuple[tuple[Type, ...]]]
SCALARS: dict[tuple[type, ...], _Scalars] = {}


def scalar_types(classes: tuple[Any, ...]) -> _Scalars | None:
    """For classes of arguments (or annotations) that are all ``int``, ``float`` or ``bool``: their types,
    the types' texts and the declared signatures they make, made once per combination and shared
    (``(float, int)`` → ``((f64, i64), ("f64", "i64"), ((f64, i64),))``); None for any other classes."""
    found = SCALARS.get(classes)
    if found is None:
        if not all(map(_PYTHON_TYPES.__contains__, classes)):
            return None
        types = _Signature.of(tuple(map(_PYTHON_TYPES.__getitem__, classes)))
        found = SCALARS[classes] = (types, types.texts, (types,))
    return found


def _shared_scalars(annotations: tuple[Any, ...]) -> _Scalars | None:
    """``scalar_types`` of annotations, which may be anything (None for an unhashable one)."""
    try:
        return SCALARS.get(annotations) or scalar_types(annotations)
    except TypeError:
        return None


def annotation_type(annotation: Any) -> Type | None:
    if annotation is None:
        return None
    if isinstance(annotation, (ScalarType, ArrayType, TupleType)):
        return annotation
    if type(annotation) is type:
        return _PYTHON_TYPES.get(annotation)
    if isinstance(annotation, str):
        try:
            return parse_type(annotation)
        except SignatureError:
            return None
    return None


def convert(value: Any, t: Type) -> Any:
    """Convert a Python value to what a declared parameter type takes (int → float and the like)."""
    if isinstance(t, ScalarType):
        if t.is_float:
            return float(value)
        if t.kind == "b":
            return bool(value)
        if t.is_int:
            return int(value)
    if isinstance(t, TupleType):
        return tuple(convert(v, it) for v, it in zip(value, t.items))
    return value


def convertible(actual: Type, declared: Type) -> bool:
    if accepts(declared, actual):
        return True
    if isinstance(declared, ScalarType) and isinstance(actual, ScalarType):
        return declared.is_numeric and actual.is_numeric and (declared.is_float or not actual.is_float)
    if isinstance(declared, TupleType) and isinstance(actual, TupleType):
        return len(declared.items) == len(actual.items) and all(
            convertible(a, d) for a, d in zip(actual.items, declared.items)
        )
    return False


def types_named(args: Sequence[Any]) -> tuple[Type, ...]:
    """Types given as strings (``"f64[:]"``), type objects (``aot.f64``) or ``int``/``float``/``bool``."""
    out = []
    for a in args:
        t = parse_type(a) if isinstance(a, str) else annotation_type(a)
        if t is None:
            raise TypeError(f"not a type: {a!r}")
        out.append(t)
    return tuple(out)
