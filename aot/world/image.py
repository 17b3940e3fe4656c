"""What an image holds, as the world sees it: methods with fingerprints, and code entries with edges.

    entries = ImageContents.from_tables(image.tables)          # everything decoded (builds, audits)
    entries = ImageContents.from_image_file(serializer.open_image(p))   # import: index tables only
    entries.code[("numkit.core:clamp", ("f64", "f64", "f64"))].edges
        → (('global', 'numkit.core:CHECK_ARGS', True), …)

Tables: ``methods`` (key, fingerprint, and the definition bytes the fingerprint hashes, which validation
compares), ``code`` (one record per code instance: argument types, edges,
symbol, validity state…) and ``ir`` (the typed IR of code record *i* at position *i*). Importing a package
decodes the first two; the IR, by far the largest, is decoded only when something reads an entry's
``ir`` (curing, the spurious-reinference check, ``aot inspect``, incremental builds).

Records are positional and only ever extended (see ``serializer.records``); these schemas are the one
place that names their fields. Nothing here imports llvmlite.
"""
from __future__ import annotations

from collections.abc import MutableMapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Optional

from serializer.records import record

if TYPE_CHECKING:  # the inference machinery loads only when an entry is rebuilt for compiling
    from ..infer.solver import Edge

METHODS = record("methods", "key", "fingerprint", "definition")
CODE = record("code", "method", "argtypes", "rettype", "owner", "edges", "symbol", "min_world", "max_world",
              "state", "boundscheck", "native_size")
IR = record("ir", "ir")
OBJECTS = record("objects", "module", "cache_key", "object")

MAX_WORLD = 2**64 - 1
"""``max_world`` of an open-ended code instance."""

# The explicit validity states written at build time (DESIGN.md, validation step 2).
STATE_NO_OUTSIDE_EDGES = "valid-no-outside-edges"
STATE_NEEDS_REVALIDATION = "needs-revalidation"
STATE_INVALID = "invalid"

InstanceKey = tuple[str, tuple[str, ...]]

_ARRAY = (list, tuple)  # what a stored array decodes as (tuples at import, lists in full reads)


def edge_to_record(edge: "Edge") -> list:
    value = edge.value
    return [edge.kind, edge.target, _plain(value)]


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def constant_matches(stored: Any, current: Any) -> bool:
    """Whether a module constant still has the value (and the exact types) an entry folded in."""
    if type(current) not in (bool, int, float, tuple):  # a list is stored like a tuple, but is no constant
        return False
    if isinstance(current, tuple):
        return type(stored) in _ARRAY and len(stored) == len(current) and all(
            constant_matches(s, c) for s, c in zip(stored, current))
    if type(current) is not type(stored):
        return False
    if isinstance(current, float) and current != current:
        return stored != stored
    return stored == current


class CodeEntry:
    """One code instance stored in an image (immutable by convention; ``calls()`` is worked out once)."""

    __slots__ = ("index", "method", "argtypes", "rettype", "owner", "_ir", "edges", "symbol", "min_world",
                 "max_world", "state", "boundscheck", "native_size", "_ir_source", "_calls")

    def __init__(self, index: int, method: str, argtypes: tuple[str, ...], rettype: str, owner: str,
                 ir: Optional[bytes], edges: tuple[tuple[str, str, Any], ...], symbol: str, min_world: int,
                 max_world: int, state: str, boundscheck: bool = True, native_size: int = 0,
                 ir_source: Optional[Callable[[int], bytes]] = None):
        self.index, self.method, self.argtypes, self.rettype, self.owner = index, method, argtypes, rettype, owner
        self._ir, self.edges, self.symbol, self.min_world, self.max_world = ir, edges, symbol, min_world, max_world
        self.state, self.boundscheck, self.native_size = state, boundscheck, native_size
        self._ir_source = ir_source  # reads the IR of code record ``index`` from the image, when first asked
        self._calls: Optional[tuple[InstanceKey, ...]] = None

    @property
    def ir(self) -> bytes:
        """The typed IR (``serializer.irformat``); read from the image's ``ir`` table on first use."""
        ir = self._ir
        if ir is None:
            if self._ir_source is None:
                raise ValueError(f"code entry {self.index} has no IR")
            ir = self._ir = self._ir_source(self.index)
        return ir

    @property
    def key(self) -> InstanceKey:
        return (self.method, self.argtypes)

    def calls(self) -> tuple[InstanceKey, ...]:
        """The instances this entry calls (from its ``call`` edges)."""
        calls = self._calls
        if calls is None:
            calls = self._calls = tuple([
                (target, _split_types(value)) for kind, target, value in self.edges if kind == "call"
            ]) if self.edges else ()
        return calls

    def _replace(self, **changes: Any) -> "CodeEntry":
        fields = {name.lstrip("_"): getattr(self, name) for name in self.__slots__[:-1]}
        return CodeEntry(**{**fields, **changes})

    def __repr__(self) -> str:
        return f"<CodeEntry {self.method}({', '.join(self.argtypes)}) [{self.owner}] {self.state}>"


@lru_cache(maxsize=4096)
def _split_types(text: str) -> tuple[str, ...]:
    """``"(f64[:, :], (i64, f64))"`` → ``("f64[:, :]", "(i64, f64)")``: commas outside brackets split."""
    inner = text.strip()
    if inner.startswith("(") and inner.endswith(")"):
        inner = inner[1:-1]
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(inner):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(inner[start:i].strip())
            start = i + 1
    if inner[start:].strip():
        parts.append(inner[start:].strip())
    return tuple(parts)


# Positions and exact types of the required fields of a code record (see CODE). msgpack decodes exact
# types, so ``type(v) is T`` is the check (a bool is no int here).
_CODE_FIELD_TYPES = ((0, "method", int), (1, "argtypes", list), (2, "rettype", str), (3, "owner", str),
                     (4, "edges", list), (5, "symbol", str), (6, "min_world", int), (7, "max_world", int),
                     (8, "state", str), (9, "boundscheck", bool), (10, "native_size", int))
_N_REQUIRED = len(CODE.required)
# A table decodes with lists (full reads) or tuples (``ImageFile.table(..., tuples=True)``, at import).
_CODE_TYPES = {tuple(kind for _, _, kind in _CODE_FIELD_TYPES),
               tuple(tuple if kind is list else kind for _, _, kind in _CODE_FIELD_TYPES)}
_IMPORT_TYPES = tuple(tuple if kind is list else kind for _, _, kind in _CODE_FIELD_TYPES)  # decoded as tuples
_TUPLE = {tuple}
_INT = {int}
_STR = {str}
_BYTES = {bytes}


def _code_entry(i: int, raw: list, keys: list[str], ir_source: Optional[Callable[[int], bytes]]) -> CodeEntry:
    """The entry of code record ``i``, after checking its fields (a checksum-valid file may still hold
    nonsense written by hand). Fields appended by later formats would take their defaults (see CODE)."""
    if len(raw) < _N_REQUIRED:
        raise ValueError(f"code record {i}: {len(raw)} fields, needs at least {_N_REQUIRED}")
    types = tuple(map(type, raw if len(raw) == _N_REQUIRED else raw[:_N_REQUIRED]))
    if types != _IMPORT_TYPES and types not in _CODE_TYPES:  # one comparison, then the details
        for at, name, kind in _CODE_FIELD_TYPES:
            if type(raw[at]) is not kind and not (kind is list and type(raw[at]) is tuple):
                raise ValueError(f"code record {i}: field {name} is a {type(raw[at]).__name__}, "
                                 f"not a {kind.__name__}")
    if not 0 <= raw[0] < len(keys):
        raise ValueError(f"code record {i}: method index {raw[0]} out of range")
    if not all(map(str.__instancecheck__, raw[1])):
        raise ValueError(f"code record {i}: argument types must be strings")
    edges = raw[4]
    for e in edges:
        if type(e) not in _ARRAY or len(e) != 3 or type(e[0]) is not str or type(e[1]) is not str:
            raise ValueError(f"code record {i}: malformed edges")
    if type(edges) is not tuple or not all(map(tuple.__instancecheck__, edges)):  # a full read: lists
        edges = tuple(map(tuple, edges))
    return CodeEntry(i, keys[raw[0]], tuple(raw[1]), raw[2], raw[3], None, edges,
                     raw[5], raw[6], raw[7], raw[8], raw[9], raw[10], ir_source)


class LazyCode(MutableMapping):
    """Code entries by instance key, each checked and built from its record on first access.

    ``ir_table`` gives the ``ir`` table's records when first called (the IR is decoded only if read)."""

    def __init__(self, method_keys: list[str] = (), records: list = (),  # type: ignore[assignment]
                 ir_table: Optional[Callable[[], list]] = None):
        self._keys = method_keys
        self._ir_table = ir_table
        self._ir_records: Optional[list] = None
        self._ir_reader = self._ir  # one bound method, shared by every entry
        # Just what the key needs (checked with C-level passes: this runs over every record of the image
        # on the first call of any method); the rest of a record is checked when it is first looked up.
        try:
            methods = [rec[0] for rec in records]
            if methods and (not set(map(type, methods)) <= _INT or min(methods) < 0):
                raise TypeError
            keys = zip(map(method_keys.__getitem__, methods), map(tuple, [rec[1] for rec in records]))
            self._items: dict[InstanceKey, Any] = dict(zip(keys, range(len(records))))
            self._records = records
        except (TypeError, IndexError, KeyError):
            raise ValueError("code records: malformed method index or argument types") from None
        if len(self._items) != len(records):
            raise ValueError("code records: two entries for the same method and argument types")

    def _ir(self, index: int) -> bytes:
        """The IR of code record ``index`` (ValueError when the image's ``ir`` table is damaged)."""
        if self._ir_records is None:
            if self._ir_table is None:
                raise ValueError("the image has no ir table")
            from serializer import ImageError
            try:
                self._ir_records = self._ir_table()
            except ImageError as err:
                raise ValueError(str(err)) from None
            if len(self._ir_records) != len(self._records):
                raise ValueError(f"{len(self._ir_records)} IR records for {len(self._records)} code records")
        rec = self._ir_records[index]
        if type(rec) not in _ARRAY or not rec or type(rec[0]) is not bytes:
            raise ValueError(f"ir record {index}: not the bytes of a function")
        return rec[0]

    def __getitem__(self, key: InstanceKey) -> CodeEntry:
        item = self._items[key]
        if type(item) is int:  # the record's index until first looked up
            item = self._items[key] = _code_entry(item, self._records[item], self._keys, self._ir_reader)
        return item

    def get(self, key: InstanceKey, default: Any = None) -> Any:
        item = self._items.get(key)
        if item is None:
            return default
        if type(item) is int:
            item = self._items[key] = _code_entry(item, self._records[item], self._keys, self._ir_reader)
        return item

    def __setitem__(self, key: InstanceKey, entry: CodeEntry) -> None:
        self._items[key] = entry

    def __delitem__(self, key: InstanceKey) -> None:
        del self._items[key]

    def __iter__(self):
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def materialise(self) -> None:
        """Check and build every entry now (raises ValueError/RecordError for a malformed one)."""
        for key in list(self._items):
            self[key]


class ImageContents:
    """Method fingerprints by key, code entries by instance key, and (for builds) object files by module."""

    def __init__(self) -> None:
        self.fingerprints: dict[str, str] = {}
        self.definitions: dict[str, bytes] = {}  # what validation compares (``aot.world.fingerprint``)
        self.code: MutableMapping = LazyCode()
        self.objects: dict[str, tuple[str, bytes]] = {}

    @classmethod
    def from_tables(cls, tables: dict[str, list], lazy: bool = False) -> "ImageContents":
        """The contents of decoded tables. ``lazy``: code entries are checked and built when first looked
        up (importing a package looks up only the entries of the methods it calls)."""
        return cls._make(tables.get("methods", []), tables.get("code", []), lambda: tables.get("ir", []),
                         tables.get("objects", []), lazy)

    @classmethod
    def from_image_file(cls, image: Any) -> "ImageContents":
        """The contents of an image opened with ``serializer.open_image``: the ``methods`` and ``code``
        tables are decoded now, ``ir`` when an entry's IR is first read. Entries are checked lazily."""
        return cls._make(image.table("methods", tuples=True), image.table("code", tuples=True),
                         lambda: image.table("ir", tuples=True), [], True)

    @classmethod
    def _make(cls, methods: list, code: list, ir_table: Callable[[], list], objects: list,
              lazy: bool) -> "ImageContents":
        out = cls()
        try:
            keys, fingerprints, definitions = ([m[0] for m in methods], [m[1] for m in methods],
                                               [m[2] for m in methods])
        except (TypeError, IndexError, KeyError):
            raise ValueError("malformed methods table") from None
        if not set(map(type, keys)) | set(map(type, fingerprints)) <= _STR or \
                not set(map(type, definitions)) <= _BYTES:
            raise ValueError("malformed methods table")
        out.fingerprints = dict(zip(keys, fingerprints))
        out.definitions = dict(zip(keys, definitions))
        out.code = LazyCode(keys, code, ir_table)
        if not lazy:
            out.code.materialise()
        for rec in OBJECTS.unpack_all(objects):
            out.objects[rec["module"]] = (rec["cache_key"], bytes(rec["object"]))
        return out

    def ordered(self) -> list[CodeEntry]:
        """The code entries in the order of the image's ``code`` table (and of the native entry table)."""
        return sorted(self.code.values(), key=lambda e: (e.method, e.argtypes, e.owner))

    def to_tables(self) -> dict[str, list]:
        keys = sorted(self.fingerprints)
        index = {k: i for i, k in enumerate(keys)}
        entries = self.ordered()
        code = [CODE.pack({
            "method": index[e.method], "argtypes": list(e.argtypes), "rettype": e.rettype, "owner": e.owner,
            "edges": [list(edge) for edge in e.edges], "symbol": e.symbol,
            "min_world": e.min_world, "max_world": e.max_world, "state": e.state,
            "boundscheck": bool(e.boundscheck), "native_size": e.native_size,
        }) for e in entries]
        return {
            "methods": [METHODS.pack({"key": k, "fingerprint": self.fingerprints[k],
                                      "definition": self.definitions.get(k, b"")}) for k in keys],
            "code": code,
            "ir": [IR.pack({"ir": e.ir}) for e in entries],
        }

    def object_tables(self) -> dict[str, list]:
        """The object files, kept beside the image (``*.objects``) for incremental builds only: the
        image itself stays small, since importing a package decodes it."""
        return {"objects": [OBJECTS.pack({"module": m, "cache_key": ck, "object": obj})
                            for m, (ck, obj) in sorted(self.objects.items())]}


def _tuplify(value: Any) -> Any:
    return tuple(_tuplify(v) for v in value) if isinstance(value, list) else value


def entry_edges(entry: CodeEntry) -> tuple["Edge", ...]:
    from ..infer.solver import Edge
    return tuple(Edge(kind, target, _tuplify(value)) for kind, target, value in entry.edges)


def instance_from_entry(entry: CodeEntry, method: Any, root: str):
    """The inferred instance an entry stores, rebuilt from its IR without inferring anything."""
    from serializer.irformat import decode_function

    from ..infer.solver import InferredInstance
    from ..types import parse_type

    class StoredInstance(InferredInstance):
        """An instance from an image: its typed IR is decoded only if something reads it (code generation);
        ``stored_ir`` keeps the bytes, so rewriting the image needs no re-encoding."""

        def __init__(self) -> None:
            self.method = method
            self.argtypes = tuple(parse_type(t) for t in entry.argtypes)
            self.return_type = parse_type(entry.rettype)
            self.edges = entry_edges(entry)
            self.callees = tuple((k, tuple(parse_type(t) for t in types)) for k, types in entry.calls())
            self.pending = ()
            self._function = None

        @property
        def stored_ir(self) -> bytes:
            return entry.ir

        @property
        def function(self):  # type: ignore[override]
            if self._function is None:
                self._function = decode_function(entry.ir, root)
            return self._function

    return StoredInstance()


def entry_state(edges: tuple["Edge", ...]) -> str:
    """The explicit validity state written at build time (never inferred from missing edges later)."""
    return STATE_NEEDS_REVALIDATION if edges else STATE_NO_OUTSIDE_EDGES
