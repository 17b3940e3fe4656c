"""Positional records whose fields are only ever appended.

    METHODS = record("methods", "key", "fingerprint", ("options", None))
    METHODS.pack({"key": "pkg.mod:f", "fingerprint": "ab12"})
        ->  ["pkg.mod:f", "ab12", None]
    METHODS.unpack(["pkg.mod:f", "ab12"])
        ->  {"key": "pkg.mod:f", "fingerprint": "ab12", "options": None}
    METHODS.unpack(["pkg.mod:f", "ab12", None, "a field from a newer aot"])
        ->  the same dict: unknown trailing fields are ignored

A record is stored as a list, not a map, so an image does not repeat field names
thousands of times.  The price is a rule: a field is never removed, renamed or
reordered; a new one is appended with a default.  Then an older reader ignores the
fields it does not know and a newer reader fills the ones an older image lacks.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Union

__all__ = ["RecordError", "RecordSchema", "record"]


class RecordError(ValueError):
    """A record (or a dict to pack) that does not fit its schema."""


class RecordSchema:
    """The field order of one table (made at import, cheaply; ``record`` checks names).

    ``required`` fields were there from the first format; ``optional`` ones were
    appended later and carry the default that records written before them get.
    """

    __slots__ = ("table", "required", "optional")

    def __init__(self, table: str, required: tuple[str, ...], optional: tuple[tuple[str, Any], ...] = ()):
        self.table = table
        self.required = required
        self.optional = optional

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RecordSchema) and (self.table, self.required, self.optional) == (
            other.table, other.required, other.optional)

    def __hash__(self) -> int:
        return hash((self.table, self.required))

    def __repr__(self) -> str:
        return f"RecordSchema({self.table!r}, {self.required!r}, {self.optional!r})"

    def check(self) -> "RecordSchema":
        names = self.fields
        if not all(isinstance(n, str) and n for n in names):
            raise TypeError(f"{self.table}: field names must be non-empty strings: {names!r}")
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"{self.table}: duplicate field names {dup}")
        return self

    @property
    def fields(self) -> tuple[str, ...]:
        return self.required + tuple(name for name, _ in self.optional)

    def pack(self, obj: Mapping[str, Any]) -> list[Any]:
        """The record for ``obj`` (all fields, in order); unknown keys are an error."""
        unknown = set(obj) - set(self.fields)
        if unknown:
            raise RecordError(f"{self.table}: unknown fields {sorted(map(str, unknown))}")
        missing = [n for n in self.required if n not in obj]
        if missing:
            raise RecordError(f"{self.table}: missing fields {missing}")
        out = [obj[n] for n in self.required]
        out.extend(obj.get(name, default) for name, default in self.optional)
        return out

    def unpack(self, rec: Sequence[Any]) -> dict[str, Any]:
        """The dict for a stored record: extra trailing fields ignored, missing optional ones defaulted."""
        if not isinstance(rec, (list, tuple)):
            raise RecordError(f"{self.table}: a record must be a list, found {type(rec).__name__}")
        n = len(self.required)
        if len(rec) < n:
            raise RecordError(f"{self.table}: record has {len(rec)} fields, needs at least {n}")
        out = dict(zip(self.required, rec))
        for i, (name, default) in enumerate(self.optional, start=n):
            out[name] = rec[i] if i < len(rec) else copy.deepcopy(default)
        return out

    def pack_all(self, objs: Iterable[Mapping[str, Any]]) -> list[list[Any]]:
        return [self.pack(o) for o in objs]

    def unpack_all(self, recs: Iterable[Sequence[Any]]) -> list[dict[str, Any]]:
        out = []
        for i, r in enumerate(recs):
            try:
                out.append(self.unpack(r))
            except RecordError as e:
                raise RecordError(f"record {i} of {e}") from None
        return out


def record(table: str, *fields: Union[str, tuple[str, Any]]) -> RecordSchema:
    """A schema from field specs: ``"name"`` is required, ``("name", default)`` was appended later.

    Required fields must all come before the first appended one.
    """
    required: list[str] = []
    optional: list[tuple[str, Any]] = []
    for f in fields:
        if isinstance(f, str):
            if optional:
                raise ValueError(f"{table}: required field {f!r} after appended field {optional[-1][0]!r}")
            required.append(f)
        elif isinstance(f, tuple) and len(f) == 2 and isinstance(f[0], str):
            optional.append((f[0], f[1]))
        else:
            raise TypeError(f"{table}: a field is 'name' or ('name', default), not {f!r}")
    return RecordSchema(table, tuple(required), tuple(optional)).check()
