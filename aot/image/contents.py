"""The full reader and writer of an image's tables, and an entry turned back into an instance.

    contents = ImageContents.from_tables(image.tables)     # every record decoded and checked (builds, tools)
    contents.code[("numkit.core:clamp", ("f64", "f64", "f64"))].edges
        → (('global', 'numkit.core:CHECK_ARGS', True), …)
    tables = contents.to_tables()                          # what a build writes
    instance_from_entry(entry, method, root)               # the inferred instance it stores (to cure, to reuse)
    instance_from_entry(entry, root=root)                  # … for code generation only (its method: KeyOnly)

Both readers of an image answer the two questions validation asks (``ImageReader``): ``entry(instance)``
and ``holds_definition(key, current)``. A package's first calls read the image through
``aot.image.entries.ImageIndex``, which decodes records as they are looked up; builds and tools read
it all through ``ImageContents``, with the same record codec (``aot.image.entries``), which alone knows a
record's shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ..world.edges import Edge
from .entries import (
    _ARRAY,
    _EDGE_KINDS,
    _STR,
    INDEX,
    IR,
    METHODS,
    OBJECTS,
    STATE_NEEDS_REVALIDATION,
    STATE_NO_OUTSIDE_EDGES,
    CodeEntry,
    _code_entry,
    _code_record,
    _constant_key,
    _definitions_table,
    _index_record,
    _ir_bytes,
    _method_record,
    _referenced,
    _References,
    _references,
    _tuplify,
)

if TYPE_CHECKING:
    from ..infer import InferredInstance
    from ..world.instances import StoredKey


class ImageReader(Protocol):
    """What validation reads of an image (``aot.world.validate.Validator``), whichever reader holds it."""

    @property
    def entry_count(self) -> int: ...

    def entry(self, instance: StoredKey) -> CodeEntry | None: ...

    def holds_definition(self, key: str, current: bytes | None) -> bool: ...


class ImageContents:
    """Method definitions by key, code entries by instance key, and (for builds) object files by module."""

    def __init__(self) -> None:
        self.fingerprints: dict[str, str] = {}
        self.definitions: Mapping[str, bytes] = {}  # what validation compares (``aot.world.fingerprint``)
        self.code: Mapping[StoredKey, CodeEntry] = {}
        self.objects: dict[str, tuple[str, bytes]] = {}

    @property
    def entry_count(self) -> int:
        return len(self.code)

    def entry(self, instance: StoredKey) -> CodeEntry | None:
        """The entry for ``(method key, argument types)``, or None."""
        return self.code.get(instance)

    def holds_definition(self, key: str, current: bytes | None) -> bool:
        """Whether method ``key``'s stored definition is ``current``."""
        stored = self.definitions.get(key)
        return stored is not None and stored == current

    @classmethod
    def from_tables(cls, tables: dict[str, list]) -> ImageContents:
        """The contents of decoded tables, every record checked now (builds, audits)."""
        out = cls()
        methods, code, ir = tables.get("methods", []), tables.get("code", []), tables.get("ir", [])
        keys: list[Any] = [rec[0] if type(rec) in _ARRAY and rec else None for rec in methods]
        for i, rec in enumerate(methods):
            _method_record(i, rec, keys[i])
        if not set(map(type, keys)) <= _STR or keys != sorted(set(keys)):
            raise ValueError("malformed methods table: keys not strings, unique and sorted")
        out.fingerprints = {rec[0]: rec[1] for rec in methods}
        out.definitions = {rec[0]: rec[2] for rec in methods}
        if len(ir) != len(code):
            raise ValueError(f"{len(ir)} IR records for {len(code)} code records")
        index: Any = tables.get("index")
        if code and (
            type(index) not in _ARRAY
            or len(index) != 1
            or type(index[0]) not in _ARRAY
            or len(index[0]) < len(INDEX.required)
        ):
            raise ValueError("code records without the index table, which holds their strings")
        refs = _references(keys, index[0]) if code else _References(keys, (), ())
        entries = [_code_entry(i, rec, refs, None) for i, rec in enumerate(code)]
        for i, entry in enumerate(entries):
            entry._ir = _ir_bytes(i, ir[i])
            out.code[entry.key] = entry  # type: ignore[index]
        if len(out.code) != len(entries):
            raise ValueError("code records: two entries for the same method and argument types")
        if index is not None:  # what first calls read must be what a build would write for these tables
            methods_of = [rec[0] for rec in code]
            definitions = [out.definitions[k] for k in keys]
            if (
                methods_of != sorted(methods_of)
                or len(index) != 1
                or list(index[0][: len(INDEX.required)])
                != _index_record(keys, methods_of, definitions, *_referenced(entries))
                or tables.get("definitions") != _definitions_table(definitions)
            ):
                raise ValueError("the index table does not fit the methods and code tables")
        for rec in OBJECTS.unpack_all(tables.get("objects", [])):
            out.objects[rec["module"]] = (rec["cache_key"], bytes(rec["object"]))
        return out

    def ordered(self) -> list[CodeEntry]:
        """The code entries in the order of the image's ``code`` table (and of the native entry table)."""
        return sorted(self.code.values(), key=_order)

    def to_tables(self) -> dict[str, list]:
        keys = sorted(self.definitions)
        position = {k: i for i, k in enumerate(keys)}
        entries = self.ordered()
        strings, constants = _referenced(entries)
        number = {text: i for i, text in enumerate(strings)}
        constant = {_constant_key(value): i for i, value in enumerate(constants)}
        code = [_code_record(e, position, number, constant) for e in entries]
        return {
            "methods": [
                METHODS.pack({"key": k, "fingerprint": self.fingerprints.get(k, ""), "definition": self.definitions[k]})
                for k in keys
            ],
            "code": code,
            "ir": [IR.pack({"ir": e.ir}) for e in entries],
            "index": [
                _index_record(
                    keys, [position[e.method] for e in entries], [self.definitions[k] for k in keys], strings, constants
                )
            ],
            "definitions": _definitions_table([self.definitions[k] for k in keys]),
        }

    def object_tables(self) -> dict[str, list]:
        """The object files, kept beside the image (``*.objects``) for incremental builds only: the
        image itself stays small, since importing a package decodes it."""
        return {
            "objects": [
                OBJECTS.pack({"module": m, "cache_key": ck, "object": obj})
                for m, (ck, obj) in sorted(self.objects.items())
            ]
        }


def _order(entry: CodeEntry) -> tuple:
    return (entry.method, entry.argtypes, entry.owner)


def entry_edges(entry: StoredEntry) -> tuple[Edge, ...]:
    return tuple(Edge(_EDGE_KINDS[kind], target, _tuplify(value)) for kind, target, value in entry.edges)


class StoredEntry(Protocol):
    """What an instance is rebuilt from (``instance_from_entry``): a ``CodeEntry``, or a build job's copy of
    one (``aot.builder.objects.StoredInstance``)."""

    @property
    def method(self) -> str: ...

    @property
    def argtypes(self) -> tuple[str, ...]: ...

    @property
    def rettype(self) -> str: ...

    @property
    def ir(self) -> bytes: ...

    @property
    def edges(self) -> tuple[tuple[str, str, Any], ...]: ...

    @property
    def call_keys(self) -> tuple[StoredKey, ...]: ...


class KeyOnly:
    """The method side of an instance rebuilt from storage when only its key is known: all that code
    generation needs of it (a build's object jobs, ``aot inspect``)."""

    def __init__(self, key: str):
        self.key = key


def instance_from_entry(entry: StoredEntry, method: Any = None, root: str = "") -> InferredInstance:
    """The inferred instance an entry stores, rebuilt from its IR without inferring anything; its method is
    ``method``, or ``KeyOnly(entry.method)`` when none is given. The typed IR is decoded when first read
    (``function``: ``check_stored`` reads it)."""
    from serializer.irformat import decode_function

    from ..infer import InferredInstance
    from ..types import parse_type

    if method is None:
        method = KeyOnly(entry.method)

    class StoredInstance(InferredInstance):
        """An instance from an image: its typed IR is decoded only if something reads it (code generation);
        ``stored_ir`` keeps the bytes, so rewriting the image needs no re-encoding."""

        def __init__(self) -> None:
            self.method = method
            self.argtypes = tuple(parse_type(t) for t in entry.argtypes)
            self.return_type = parse_type(entry.rettype)
            self.edges = entry_edges(entry)
            self.callees = tuple((k, tuple(parse_type(t) for t in types)) for k, types in entry.call_keys)
            self.pending = ()
            self._function = None

        @property
        def stored_ir(self) -> bytes:
            return entry.ir

        @property
        def function(self):
            if self._function is None:
                self._function = decode_function(entry.ir, root)
            return self._function

    return StoredInstance()


def check_stored(instance: Any, entry: CodeEntry) -> None:
    """Decode the typed IR of an instance rebuilt from ``entry`` (``instance_from_entry``) and check that it
    is that entry's (name, parameter and return types) and well formed; ValueError saying why not. Runs
    before stored IR is compiled or seeds an inference: a checksum says the bytes are the ones written,
    not that they make sense."""
    from ..ir.verifier import IRVerifyError, verify

    try:
        fn = instance.function
    except Exception as err:  # (msgpack, the IR's own constructors, type parsing: anything a byte can upset)
        raise ValueError(f"its typed IR does not decode ({type(err).__name__}: {err})") from None
    if (
        fn.name != entry.method
        or len(fn.params) != len(instance.argtypes)
        or [fn.types.get(p) for p in fn.params] != list(instance.argtypes)
        or fn.return_type != instance.return_type
    ):
        raise ValueError("its typed IR is not the IR of this entry (name, parameter or return types differ)")
    try:
        verify(fn)
    except IRVerifyError as err:
        raise ValueError(f"its typed IR is malformed ({err})") from None


def entry_state(edges: tuple[Edge, ...]) -> str:
    """The explicit validity state written at build time (never inferred from missing edges later)."""
    return STATE_NEEDS_REVALIDATION if edges else STATE_NO_OUTSIDE_EDGES
