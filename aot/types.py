"""The type lattice and the signature-string syntax.

    >>> parse_signature("f64(f64[:], i64)")
    (f64, (f64[:], i64))
    >>> join(I64, F64)
    f64
    >>> typeof(2.5), typeof((1, 2.0))
    (f64, (i64, f64))

Scalar types are module constants (``I64``, ``F64``, ``BOOL`` …). ``BOTTOM`` is "nothing known yet" (the
lattice's least element); ``join`` returns ``None`` where two types conflict (the lattice's top, which the
inference reports as an error rather than representing).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # (not ``typing.TYPE_CHECKING``: ``import aot`` imports no ``typing`` for this module)
if TYPE_CHECKING:
    from typing import Any


class Type:
    """Base of every type. Types are immutable, hashable and compare by value."""

    __slots__ = ()

    @property
    def is_runtime(self) -> bool:
        """Whether values of this type exist in compiled code (not only at compile time)."""
        return True


class _Record(Type):
    """The types below are written out rather than made frozen dataclasses: ``import aot`` makes them, and
    making a dataclass costs about half a millisecond (and importing ``dataclasses``, ``inspect`` with it).
    Each has ``__slots__`` and ``__match_args__`` (its fields, in order), compares and hashes by its fields
    as a dataclass would, and refuses assignment, as a frozen one does."""

    __slots__ = ()
    __match_args__: tuple[str, ...] = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r} of {type(self).__name__}: types are immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r} of {type(self).__name__}: types are immutable")

    def __getstate__(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__match_args__)

    def __setstate__(self, state: tuple) -> None:
        for name, value in zip(self.__match_args__, state):
            object.__setattr__(self, name, value)


_set = object.__setattr__


class ScalarType(_Record):
    """A fixed-width number, ``boolean`` or ``none``. ``kind`` is one of ``i u f b n``."""

    __slots__ = ("name", "kind", "bits")
    __match_args__ = ("name", "kind", "bits")
    name: str
    kind: str
    bits: int

    def __init__(self, name: str, kind: str, bits: int) -> None:
        _set(self, "name", name)
        _set(self, "kind", kind)
        _set(self, "bits", bits)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return (self.name, self.kind, self.bits) == (other.name, other.kind, other.bits)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.name, self.kind, self.bits))

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    @property
    def is_int(self) -> bool:
        return self.kind in "iu"

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_signed(self) -> bool:
        return self.kind == "i"

    @property
    def is_numeric(self) -> bool:
        return self.kind in "iufb"

    @property
    def itemsize(self) -> int:
        return max(self.bits // 8, 1)

    def __getitem__(self, dims: Any) -> ArrayType:
        """``f64[:]``, ``f64[::1]``, ``f64[:, :]`` … as in the annotations of user code."""
        if not isinstance(dims, tuple):
            dims = (dims,)
        if not dims or not all(isinstance(d, slice) for d in dims):
            raise TypeError(f"array types are written {self.name}[:] or {self.name}[:, :]")
        layout = "C" if dims[-1].step == 1 else "A"
        return ArrayType(self, len(dims), layout)

    def __call__(self, value: Any) -> Any:
        """Convert like compiled code does, so ``aot.i32(x)`` also works in plain Python."""
        if self.kind == "b":
            return bool(value)
        if self.kind == "f":
            value = float(value)
            if self.bits == 32:
                import math
                import struct

                try:
                    return struct.unpack("f", struct.pack("f", value))[0]
                except OverflowError:
                    return math.copysign(math.inf, value)
            return value
        if self.kind in "iu":
            value = int(value)
            value &= (1 << self.bits) - 1
            if self.kind == "i" and value >= 1 << (self.bits - 1):
                value -= 1 << self.bits
            return value
        raise TypeError(f"{self.name} is not a conversion")


I8 = ScalarType("i8", "i", 8)
I16 = ScalarType("i16", "i", 16)
I32 = ScalarType("i32", "i", 32)
I64 = ScalarType("i64", "i", 64)
U8 = ScalarType("u8", "u", 8)
U16 = ScalarType("u16", "u", 16)
U32 = ScalarType("u32", "u", 32)
U64 = ScalarType("u64", "u", 64)
F32 = ScalarType("f32", "f", 32)
F64 = ScalarType("f64", "f", 64)
BOOL = ScalarType("boolean", "b", 1)
NONE = ScalarType("none", "n", 0)

SCALARS: dict[str, ScalarType] = {t.name: t for t in (I8, I16, I32, I64, U8, U16, U32, U64, F32, F64, BOOL, NONE)}
SCALARS["bool"] = BOOL
SCALARS["int"] = I64
SCALARS["float"] = F64
SCALARS["None"] = NONE


class ArrayType(_Record):
    """A strided view: data pointer, shape and byte strides. Layout ``C`` (contiguous) or ``A`` (any)."""

    __slots__ = ("dtype", "ndim", "layout")
    __match_args__ = ("dtype", "ndim", "layout")
    dtype: ScalarType
    ndim: int
    layout: str

    def __init__(self, dtype: ScalarType, ndim: int, layout: str = "A") -> None:
        _set(self, "dtype", dtype)
        _set(self, "ndim", ndim)
        _set(self, "layout", layout)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return (self.dtype, self.ndim, self.layout) == (other.dtype, other.ndim, other.layout)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.dtype, self.ndim, self.layout))

    def __repr__(self) -> str:
        dims = [":"] * self.ndim
        if self.layout == "C":
            dims[-1] = "::1"
        return f"{self.dtype.name}[{', '.join(dims)}]"

    __str__ = __repr__

    def with_layout(self, layout: str) -> ArrayType:
        return ArrayType(self.dtype, self.ndim, layout)


class TupleType(_Record):
    """A fixed-size tuple, passed by value."""

    __slots__ = ("items",)
    __match_args__ = ("items",)
    items: tuple[Type, ...]

    def __init__(self, items: tuple[Type, ...]) -> None:
        _set(self, "items", items)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self.items == other.items
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.items,))

    def __repr__(self) -> str:
        if len(self.items) == 1:
            return f"({self.items[0]},)"
        return "(" + ", ".join(map(repr, self.items)) + ")"

    __str__ = __repr__

    @property
    def is_uniform(self) -> bool:
        return len(set(self.items)) <= 1

    @property
    def is_runtime(self) -> bool:
        return all(t.is_runtime for t in self.items)


class PyValueType(_Record):
    """A compile-time Python object (a module, a function, an exception class, a type) used by name."""

    __slots__ = ("value",)
    __match_args__ = ("value",)
    value: Any

    def __init__(self, value: Any) -> None:
        _set(self, "value", value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PyValueType) and other.value is self.value

    def __hash__(self) -> int:
        return hash(("pyvalue", id(self.value)))

    def __repr__(self) -> str:
        if isinstance(self.value, str):  # (a string constant: aot/infer/constructs.py)
            return f"str {self.value!r}"
        name = getattr(self.value, "__qualname__", None) or getattr(self.value, "__name__", None)
        return f"pyobj<{name or type(self.value).__name__}>"

    __str__ = __repr__

    @property
    def is_runtime(self) -> bool:
        return False


class OptionalType(_Record):
    """A value that may be None (``f64?``): what a variable assigned ``None`` on one path and a value on
    another holds. Compiled as a flag and the value; ``x is None`` tests narrow it (``aot.infer.optional``)."""

    __slots__ = ("inner",)
    __match_args__ = ("inner",)
    inner: Type

    def __init__(self, inner: Type) -> None:
        _set(self, "inner", inner)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self.inner == other.inner
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.inner,))

    def __repr__(self) -> str:
        return f"{self.inner}?"

    __str__ = __repr__


class ListType(_Record):
    """A list of one item type (``list[f64]``), held by reference: a block compiled code allocates and counts
    (``aot.codegen.lists``). ``list[bottom]`` is an empty list whose item type is not known yet."""

    __slots__ = ("item",)
    __match_args__ = ("item",)
    item: Type

    def __init__(self, item: Type) -> None:
        _set(self, "item", item)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self.item == other.item
        return NotImplemented

    def __hash__(self) -> int:
        return hash(("list", self.item))

    def __repr__(self) -> str:
        return f"list[{self.item}]"

    __str__ = __repr__


class _Bottom(Type):
    __slots__ = ()

    def __repr__(self) -> str:
        return "bottom"

    __str__ = __repr__

    @property
    def is_runtime(self) -> bool:
        return False


BOTTOM = _Bottom()
"""Least element: no value reaches here yet (e.g. a recursive call whose return type is still unknown)."""

AnyType = ScalarType | ArrayType | TupleType | ListType | PyValueType | OptionalType | _Bottom


# --------------------------------------------------------------------------------------------- lattice


def join(a: Type, b: Type) -> Type | None:
    """Least upper bound of two types; ``None`` when they conflict.

    Numbers widen along one chain, boolean < u8 < i8 < … < i64 < f32 < f64 (so ``True`` joins ``1`` as
    ``1``, and int joins float as float); a chain keeps join associative, which NumPy's promotion
    (used for arithmetic results, see ``promote``) is not;
    tuples join elementwise; arrays of one dtype and rank join to the ``A`` layout.
    """
    if a == b:
        return a
    if a is BOTTOM:
        return b
    if b is BOTTOM:
        return a
    if a == NONE or b == NONE or isinstance(a, OptionalType) or isinstance(b, OptionalType):
        return _join_optional(a, b)
    if isinstance(a, ScalarType) and isinstance(b, ScalarType):
        if a.is_numeric and b.is_numeric:
            return a if _JOIN_ORDER.index(a) > _JOIN_ORDER.index(b) else b
        return None
    if isinstance(a, ArrayType) and isinstance(b, ArrayType):
        if a.dtype == b.dtype and a.ndim == b.ndim:
            return a.with_layout("A")
        return None
    if isinstance(a, TupleType) and isinstance(b, TupleType) and len(a.items) == len(b.items):
        items = tuple(join(x, y) for x, y in zip(a.items, b.items))
        if any(t is None for t in items):
            return None
        return TupleType(items)  # type: ignore[arg-type]
    if isinstance(a, ListType) and isinstance(b, ListType):
        item = list_item_join(a.item, b.item)
        return None if item is None else ListType(item)
    return None


def list_item_join(a: Type, b: Type) -> Type | None:
    """The item type of a list holding ``a`` that takes ``b`` too: an unknown item (``bottom``) takes any,
    arrays of one dtype and rank take either layout; otherwise the two must be equal (a list holds one
    type: ints put into a list of floats convert where they are stored, never the other way)."""
    if a is BOTTOM or a == b:
        return b if a is BOTTOM else a
    if b is BOTTOM:
        return a
    if isinstance(a, ArrayType) and isinstance(b, ArrayType):
        return join(a, b)
    if isinstance(a, TupleType) and isinstance(b, TupleType) and len(a.items) == len(b.items):
        items = tuple(list_item_join(x, y) for x, y in zip(a.items, b.items))
        return None if any(t is None for t in items) else TupleType(items)  # type: ignore[arg-type]
    if isinstance(a, ListType) and isinstance(b, ListType):
        item = list_item_join(a.item, b.item)
        return None if item is None else ListType(item)
    return None


_JOIN_ORDER = (BOOL, U8, I8, U16, I16, U32, I32, U64, I64, F32, F64)


def _join_optional(a: Type, b: Type) -> Type | None:
    """``none`` joins a value's type ``t`` as ``t?`` (and ``t?`` joins ``u`` as the join of ``t`` and ``u``, made
    optional); only values compiled code holds at run time can be optional."""
    inner_a = a.inner if isinstance(a, OptionalType) else None if a == NONE else a
    inner_b = b.inner if isinstance(b, OptionalType) else None if b == NONE else b
    inner = inner_b if inner_a is None else inner_a if inner_b is None else join(inner_a, inner_b)
    if inner is None or not isinstance(inner, (ScalarType, ArrayType, TupleType)) or not inner.is_runtime:
        return None
    return OptionalType(inner)


def widen(old: Type, new: Type, rounds: int, limit: int = 8) -> Type | None:
    """Join, giving up (``None``) after ``limit`` rounds of growth so that every fixed point terminates.

    The scalar part of the lattice has height 4, so only nested tuples could grow for long.
    """
    joined = join(old, new)
    if joined is not None and joined != old and rounds >= limit:
        return None
    return joined


_SIGNED = {8: I8, 16: I16, 32: I32, 64: I64}
_UNSIGNED = {8: U8, 16: U16, 32: U32, 64: U64}


def promote(a: ScalarType, b: ScalarType) -> ScalarType:
    """NumPy's promotion of two number types (booleans count as the smallest integers)."""
    if a == b:
        return a
    if a.kind == "b":
        return b
    if b.kind == "b":
        return a
    if a.is_float or b.is_float:
        if a.is_float and b.is_float:
            return a if a.bits >= b.bits else b
        flt, other = (a, b) if a.is_float else (b, a)
        if flt.bits == 32 and other.bits <= 16:
            return F32
        return F64
    if a.kind == b.kind:
        return a if a.bits >= b.bits else b
    signed, unsigned = (a, b) if a.is_signed else (b, a)
    if unsigned.bits < signed.bits:
        return signed
    if unsigned.bits == 64:
        return F64
    return _SIGNED[unsigned.bits * 2]


def arith_type(t: ScalarType) -> ScalarType:
    """Type in which arithmetic on ``t`` happens: booleans compute as ``int``, as in Python."""
    return I64 if t.kind == "b" else t


# ------------------------------------------------------------------------------------- signatures


class SignatureError(ValueError):
    """A malformed type or signature string."""


_PARSED: dict[Any, Any] = {}  # text → its type, or ("sig", text) → its signature (no functools on import)
_PARSED_LIMIT = 8192


def _remember(key: Any, value: Any) -> Any:
    if len(_PARSED) >= _PARSED_LIMIT:
        _PARSED.clear()
    _PARSED[key] = value
    return value


def parse_type(text: str) -> Type:
    """``"f64"``, ``"f64[:, ::1]"``, ``"(f64, i64)"`` → the type (types are values: parses are cached)."""
    known = _PARSED.get(text)
    if known is not None:
        return known
    parser = _TypeParser(text)
    t = parser.type()
    parser.end()
    return _remember(text, t)


def parse_signature(text: str) -> tuple[Type, tuple[Type, ...]]:
    """``"f64(f64[:], i64)"`` → ``(F64, (ArrayType(F64, 1), I64))``; the return type may be ``none``, or left
    out (``"(f64[:], i64)"``: ``BOTTOM``, inferred)."""
    known = _PARSED.get(("sig", text))
    if known is not None:
        return known
    return _remember(("sig", text), _parse_signature(text))


def _parse_signature(text: str) -> tuple[Type, tuple[Type, ...]]:
    parser = _TypeParser(text)
    ret = parser.type()
    parser.skip()
    if isinstance(ret, TupleType) and parser.pos == len(text):  # ``(args)``: the return type left to inference
        for arg in ret.items:
            if _holds_list(arg):
                raise parser.fail("a list cannot be a parameter (pass a tuple or an array; lists may be returned)")
        return BOTTOM, ret.items
    parser.expect("(")
    args: list[Type] = []
    if not parser.accept(")"):
        while True:
            args.append(parser.type())
            if _holds_list(args[-1]):  # (the wrappers take no lists from Python: ``typeof`` says why)
                raise parser.fail("a list cannot be a parameter (pass a tuple or an array; lists may be returned)")
            if parser.accept(")"):
                break
            parser.expect(",")
    parser.end()
    return ret, tuple(args)


def _holds_list(t: Type) -> bool:
    if isinstance(t, (TupleType, OptionalType)):
        return any(map(_holds_list, t.items if isinstance(t, TupleType) else (t.inner,)))
    return isinstance(t, ListType)


def format_signature(ret: Type, args: tuple[Type, ...]) -> str:
    return f"{ret}({', '.join(map(str, args))})"


class Scanner:
    """A type or signature text read left to right: whitespace skipped, tokens accepted or expected, errors
    naming the column (``fail``, which a parser words its own way)."""

    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def fail(self, what: str) -> ValueError:
        return SignatureError(f"bad type {self.text!r} at column {self.pos + 1}: {what}")

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def accept(self, token: str) -> bool:
        self.skip()
        if self.text.startswith(token, self.pos):
            self.pos += len(token)
            return True
        return False

    def expect(self, token: str) -> None:
        if not self.accept(token):
            raise self.fail(f"expected {token!r}")

    def end(self) -> None:
        self.skip()
        if self.pos != len(self.text):
            raise self.fail("unexpected text")

    def type(self) -> Type:
        raise NotImplementedError  # (each parser reads a type in its own spelling)

    def items(self) -> tuple[Type, ...]:
        """Types separated by commas up to the closing ``)`` (the ``(`` already read; a trailing comma, as in
        ``(f64,)``, is allowed)."""
        items: list[Type] = []
        if self.accept(")"):
            return ()
        while True:
            items.append(self.type())
            if self.accept(")"):
                return tuple(items)
            self.expect(",")
            if self.accept(")"):
                return tuple(items)


class _TypeParser(Scanner):
    """aot's own spelling of types and signatures (``parse_type``, ``parse_signature``)."""

    def type(self) -> Type:
        t = self.plain_type()
        return OptionalType(t) if self.accept("?") else t

    def plain_type(self) -> Type:
        if self.accept("("):
            return TupleType(self.items())
        self.skip()
        start = self.pos
        while self.pos < len(self.text) and (self.text[self.pos].isalnum() or self.text[self.pos] == "_"):
            self.pos += 1
        name = self.text[start : self.pos]
        if name == "list" and self.accept("["):  # (``list[bottom]``: an empty list, typed where it is stored)
            item = BOTTOM if self.accept("bottom") else self.type()
            self.expect("]")
            return ListType(item)
        if name not in SCALARS:
            raise self.fail(f"unknown type name {name!r}")
        scalar = SCALARS[name]
        if not self.accept("["):
            return scalar
        dims = 0
        layout = "A"
        while True:
            if self.accept("::1"):
                layout = "C"
            elif self.accept(":"):
                if layout == "C":
                    raise self.fail("only the last dimension may be '::1'")
            else:
                raise self.fail("expected ':' or '::1'")
            dims += 1
            if self.accept("]"):
                break
            self.expect(",")
        if scalar.kind == "n":
            raise self.fail("arrays of none")
        return ArrayType(scalar, dims, layout)


# ------------------------------------------------------------------------------------------ typeof

# Buffer-protocol format characters (after an optional '@', '=' or '<' byte order) for each dtype.
_FORMAT_KIND = {
    "b": "i",
    "h": "i",
    "i": "i",
    "l": "i",
    "q": "i",
    "n": "i",
    "B": "u",
    "H": "u",
    "I": "u",
    "L": "u",
    "Q": "u",
    "N": "u",
    "e": "f",
    "f": "f",
    "d": "f",
    "?": "b",
}


def dtype_of_format(fmt: str, itemsize: int) -> ScalarType | None:
    """The scalar type of a buffer's elements, or ``None`` if compiled code cannot read them."""
    if fmt[:1] in "@=<":
        if fmt[:1] != "@" and sys.byteorder != "little":
            return None
        fmt = fmt[1:]
    if len(fmt) != 1 or fmt not in _FORMAT_KIND:
        return None
    kind = _FORMAT_KIND[fmt]
    if kind == "b":
        return BOOL if itemsize == 1 else None
    if kind == "f":
        return {4: F32, 8: F64}.get(itemsize)
    table = _SIGNED if kind == "i" else _UNSIGNED
    return table.get(itemsize * 8)


def _is_c_contiguous(view: memoryview) -> bool:
    return view.c_contiguous


def typeof(value: Any) -> Type:
    """The compiled type of a runtime argument; raises ``TypeError`` for values compiled code can't take."""
    cls = type(value)
    if cls is bool:
        return BOOL
    if cls is int:
        return I64
    if cls is float:
        return F64
    if cls is tuple:
        return TupleType(tuple(typeof(v) for v in value))
    if value is None:
        return NONE
    if cls is list:
        raise TypeError(
            "compiled code cannot take a list argument; pass a tuple, or a NumPy array (np.asarray(values)) "
            "(lists are values inside compiled code, and may be returned)"
        )
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, float):
        return F64
    if isinstance(value, int):
        return I64
    try:
        view = memoryview(value)
    except TypeError:
        raise TypeError(f"compiled code cannot take a {cls.__name__}") from None
    with view:
        key = (view.format, view.itemsize, view.ndim, _is_c_contiguous(view))
    found = _BUFFER_TYPES.get(key)
    if found is None:
        fmt, itemsize, ndim, contiguous = key
        dtype = dtype_of_format(fmt, itemsize)
        if dtype is None:
            raise TypeError(f"compiled code cannot take a buffer of format {fmt!r}")
        found = _BUFFER_TYPES[key] = dtype if ndim == 0 else ArrayType(dtype, ndim, "C" if contiguous else "A")
    return found


# The types of buffers by (format, itemsize, ndim, C-contiguous), made once each: a first call with an array
# takes a shared type (there are only so many formats and dimensions).
_BUFFER_TYPES: dict[tuple[str, int, int, bool], Type] = {}


def accepts(declared: Type, actual: Type) -> bool:
    """Whether a value of type ``actual`` may be passed where ``declared`` is expected, unconverted."""
    if declared == actual:
        return True
    if isinstance(declared, ArrayType) and isinstance(actual, ArrayType):
        return (
            declared.dtype == actual.dtype
            and declared.ndim == actual.ndim
            and (declared.layout == "A" or actual.layout == "C")
        )
    if isinstance(declared, TupleType) and isinstance(actual, TupleType):
        return len(declared.items) == len(actual.items) and all(
            accepts(d, a) for d, a in zip(declared.items, actual.items)
        )
    return False


def describe(value: Any) -> str:
    """A stable name for a compile-time object a name lookup resolved to (``module:math``, ``builtins:abs``,
    ``type:f64``): what ``lookup`` edges record and what validation compares."""
    if isinstance(value, type(sys)):
        return f"module:{value.__name__}"
    if isinstance(value, ScalarType):
        return f"type:{value.name}"
    module = getattr(value, "__module__", None) or "builtins"
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None) or type(value).__name__
    return f"{module}:{name}"
