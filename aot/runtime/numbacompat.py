"""Numba's spelling on ``@aot.jit``: its decorator options and its signature strings, checked and translated
in this one place (imported only when a Numba-spelled signature or option is given: see ``method.jit``).

    numba_signatures("f8(f8[:], i8)")            → ["f64(f64[:], i64)"]
    numba_signatures(["void(f4[:, ::1])"])       → ["none(f32[:, ::1])"]
    check_numba_options({"cache": True})         → accepted, no effect; a refused option raises

A positional signature is always Numba's spelling (``i8`` is a 64-bit integer there, an 8-bit one in aot's
``signatures=``), so it is never read as aot's: aot's names in it are refused with the spelling to write.
"""

from __future__ import annotations

from ..types import BOTTOM, NONE, ArrayType, ScalarType, Scanner, TupleType, Type, format_signature, parse_type

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


# Numba's scalar type names (``numba.types``) → aot's types.
_SCALAR_NAMES = {
    "f8": "f64",
    "float64": "f64",
    "double": "f64",
    "f4": "f32",
    "float32": "f32",
    "float_": "f32",
    "i8": "i64",
    "int64": "i64",
    "intp": "i64",
    "int_": "i64",
    "i4": "i32",
    "int32": "i32",
    "intc": "i32",
    "i2": "i16",
    "int16": "i16",
    "i1": "i8",
    "int8": "i8",
    "u8": "u64",
    "uint64": "u64",
    "uintp": "u64",
    "uint": "u64",
    "u4": "u32",
    "uint32": "u32",
    "uintc": "u32",
    "u2": "u16",
    "uint16": "u16",
    "u1": "u8",
    "uint8": "u8",
    "byte": "u8",
    "b1": "boolean",
    "boolean": "boolean",
    "bool_": "boolean",
    "void": "none",
    "none": "none",
}

# Numba types aot does not compile: what to say about them.
_REFUSED_NAMES = {
    "complex64": "complex numbers",
    "complex128": "complex numbers",
    "c8": "complex numbers",
    "c16": "complex numbers",
    "complex_": "complex numbers",
    "float16": "16-bit floats",
    "f2": "16-bit floats",
    "unicode_type": "strings",
    "string": "strings",
    "char": "strings",
    "NPDatetime": "datetimes",
    "NPTimedelta": "timedeltas",
    "Record": "records",
    "pyobject": "Python objects",
    "ffi_forced_object": "Python objects",
    "List": "list parameters (pass a tuple or an array)",
    "ListType": "list parameters (pass a tuple or an array)",
    "DictType": "dictionaries",
    "Dict": "dictionaries",
}

# aot's own names, which a positional (Numba-spelled) signature does not take.
_AOT_NAMES = {"f64", "f32", "i16", "i32", "i64", "u16", "u32", "u64", "int", "float", "bool"}


class _NumbaSignatureParser(Scanner):
    """A signature in Numba's spelling: ``ret(args)`` or ``(args)`` (the return type inferred), with scalar
    names, ``T[:]``/``T[:, ::1]``/``T[::1, :]`` arrays, ``UniTuple(T, n)`` and ``Tuple((T, U))``."""

    def fail(self, what: str) -> ValueError:
        return ValueError(f"Numba signature {self.text!r}, column {self.pos + 1}: {what}")

    def name(self) -> str:
        self.skip()
        start = self.pos
        while self.pos < len(self.text) and (self.text[self.pos].isalnum() or self.text[self.pos] in "_."):
            self.pos += 1
        if start == self.pos:
            raise self.fail("expected a type name")
        return self.text[start : self.pos]

    def signature(self) -> tuple[Type, tuple[Type, ...]]:
        self.skip()
        ret: Type = BOTTOM  # ``(args)``: the return type is inferred
        if not self.text.startswith("(", self.pos):
            ret = self.type()
        self.expect("(")
        args = self.items()
        self.skip()
        if self.pos != len(self.text):
            raise self.fail("unexpected text after the signature")
        return ret, args

    def type(self) -> Type:
        start = self.pos
        name = self.name()
        bare = name.removeprefix("types.").removeprefix("numba.")
        if bare == "UniTuple":
            self.expect("(")
            item = self.type()
            self.expect(",")
            self.skip()
            digits = self.pos
            while self.pos < len(self.text) and self.text[self.pos].isdigit():
                self.pos += 1
            if digits == self.pos:
                raise self.fail("expected the tuple's length, as in UniTuple(float64, 3)")
            count = int(self.text[digits : self.pos])
            self.expect(")")
            return TupleType((item,) * count)
        if bare == "Tuple":
            self.expect("(")
            self.expect("(")
            items = self.items()
            self.expect(")")
            return TupleType(items)
        if bare == "optional":
            self.pos = start
            raise self.fail(
                "optional(...) parameters are not declared in aot: leave this signature out, and a call with None "
                "or a value compiles for what it passes"
            )
        if bare in _REFUSED_NAMES:
            self.pos = start
            raise self.fail(f"{bare}: aot does not compile {_REFUSED_NAMES[bare]}")
        if bare not in _SCALAR_NAMES:
            self.pos = start
            if bare in _AOT_NAMES or bare in ("i8", "u8"):
                raise self.fail(
                    f"{bare!r} is aot's spelling; a positional signature is Numba's (float64 or f8, int64 or i8 ...)"
                    f" — or give aot's spelling as signatures=[...]"
                )
            raise self.fail(f"unknown Numba type {bare!r}")
        scalar = parse_type(_SCALAR_NAMES[bare])
        if not self.accept("["):
            return scalar
        if scalar == NONE:
            raise self.fail("arrays of void")
        dims: list[str] = []
        while True:
            if self.accept("::1"):
                dims.append("::1")
            elif self.accept(":"):
                dims.append(":")
            else:
                raise self.fail("expected ':' or '::1'")
            if self.accept("]"):
                break
            self.expect(",")
        if "::1" in dims[:-1] and dims.count("::1") == 1 and dims[0] == "::1":
            layout = "A"  # (Fortran order: aot takes any strides there, which includes Numba's F arrays)
        elif "::1" in dims[:-1]:
            raise self.fail("only the first or the last dimension may be '::1'")
        else:
            layout = "C" if dims[-1] == "::1" else "A"
        assert isinstance(scalar, ScalarType)
        return ArrayType(scalar, len(dims), layout)


def numba_signature(text: str) -> str:
    """One signature in Numba's spelling → aot's signature text (``"(f8[:],)"`` → ``"(f64[:])"``: the return
    type left to inference)."""
    if not isinstance(text, str):
        raise TypeError(
            f"@aot.jit takes signatures as strings in Numba's spelling (e.g. 'float64(float64[:])'), "
            f"not {type(text).__name__}: Numba's type objects are not accepted"
        )
    ret, args = _NumbaSignatureParser(text).signature()
    return "(" + ", ".join(map(str, args)) + ")" if ret is BOTTOM else format_signature(ret, args)


def numba_signatures(given: Any) -> list[str]:
    """``@aot.jit``'s positional signature (a string, or a list or tuple of strings) in Numba's spelling →
    aot's signature texts."""
    texts = [given] if isinstance(given, str) else list(given)
    if not texts:
        raise ValueError("@aot.jit([]): give at least one signature, or none at all (@aot.jit)")
    return [numba_signature(text) for text in texts]


_FASTMATH_FLAGS = {"fast", "nnan", "ninf", "nsz", "arcp", "contract", "afn", "reassoc"}

_ACCEPTED = "cache, nopython=True, forceobj=False, fastmath, inline, error_model='python', locals"


def check_numba_options(options: dict[str, Any]) -> None:
    """Numba's decorator options that aot honours or can ignore without changing a result; anything else is a
    ``TypeError``/``ValueError`` saying what to write. None of them changes the compiled code."""
    for name, value in options.items():
        if name == "cache":
            _bool(name, value)  # aot's images are its cache
        elif name == "nopython":
            if _bool(name, value) is False:
                raise ValueError("@aot.jit(nopython=False): aot compiles nopython code only; leave nopython out")
        elif name == "forceobj":
            if _bool(name, value):
                raise ValueError("@aot.jit(forceobj=True): aot has no object mode; call the plain Python function")
        elif name == "fastmath":
            if not isinstance(value, bool):
                flags = set(value) if isinstance(value, (set, frozenset, list, tuple)) else None
                if flags is None or not flags <= _FASTMATH_FLAGS:
                    raise ValueError(
                        f"@aot.jit(fastmath={value!r}): give True, False or a set of "
                        f"{sorted(_FASTMATH_FLAGS)} (aot accepts and ignores it: IEEE semantics are kept)"
                    )
        elif name == "inline":
            if value not in ("never", "always"):
                raise ValueError(
                    f"@aot.jit(inline={value!r}): aot accepts inline='never' or 'always' (and ignores it: LLVM "
                    "decides); leave the option out"
                )
        elif name == "error_model":
            if value == "numpy":
                raise ValueError(
                    "@aot.jit(error_model='numpy'): aot keeps Python's errors (a scalar division by zero raises "
                    "ZeroDivisionError where Numba's 'numpy' model gives inf or nan); remove the option, or "
                    "divide arrays (NumPy's semantics) where inf or nan is meant"
                )
            if value != "python":
                raise ValueError(f"@aot.jit(error_model={value!r}): write error_model='python' or leave it out")
        elif name == "locals":
            if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
                raise TypeError("@aot.jit(locals=...) takes a dict of local names to types")
        else:
            raise TypeError(
                f"@aot.jit got an unknown option {name}=: aot's own are signatures, boundscheck, parallel and "
                f"nogil; of Numba's it accepts {_ACCEPTED}"
            )


def _bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"@aot.jit({name}=...) takes True or False, not {value!r}")
    return value
