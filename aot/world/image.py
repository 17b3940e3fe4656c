"""What an image holds, as the world sees it: methods with fingerprints, and code entries with edges.

    entries = ImageContents.from_tables(image.tables)
    entries.code[("numkit.core:clamp", ("f64", "f64", "f64"))].edges
        → (Edge('global', 'numkit.core:CHECK_ARGS', True), …)

Records are positional and only ever extended (see ``serializer.records``); these schemas are the one
place that names their fields. Nothing here imports llvmlite.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import MutableMapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple

from serializer.records import record

if TYPE_CHECKING:  # the inference machinery loads only when an entry is rebuilt for compiling
    from ..infer.solver import Edge

METHODS = record("methods", "key", "fingerprint")
CODE = record("code", "method", "argtypes", "rettype", "owner", "ir", "edges", "symbol", "min_world",
              "max_world", "state", ("boundscheck", True), ("native_size", 0))
OBJECTS = record("objects", "module", "cache_key", "object")

MAX_WORLD = 2**64 - 1
"""``max_world`` of an open-ended code instance."""

# The explicit validity states written at build time (DESIGN.md, validation step 2).
STATE_NO_OUTSIDE_EDGES = "valid-no-outside-edges"
STATE_NEEDS_REVALIDATION = "needs-revalidation"
STATE_INVALID = "invalid"

InstanceKey = tuple[str, tuple[str, ...]]


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
        return isinstance(stored, list) and len(stored) == len(current) and all(
            constant_matches(s, c) for s, c in zip(stored, current))
    if type(current) is not type(stored):
        return False
    if isinstance(current, float) and current != current:
        return stored != stored
    return stored == current


class CodeEntry(NamedTuple):
    """One code instance stored in an image (a named tuple: cheap to build, immutable)."""

    index: int
    method: str
    argtypes: tuple[str, ...]
    rettype: str
    owner: str
    ir: bytes
    edges: tuple[tuple[str, str, Any], ...]
    symbol: str
    min_world: int
    max_world: int
    state: str
    boundscheck: bool
    native_size: int

    @property
    def key(self) -> InstanceKey:
        return (self.method, self.argtypes)

    def calls(self) -> tuple[InstanceKey, ...]:
        """The instances this entry calls (from its ``call`` edges)."""
        return tuple((target, _split_types(value)) for kind, target, value in self.edges if kind == "call")


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


_CODE_FIELD_TYPES = (("method", int), ("argtypes", list), ("rettype", str), ("owner", str), ("ir", bytes),
                     ("edges", list), ("symbol", str), ("min_world", int), ("max_world", int), ("state", str))


def _check_code_record(i: int, rec: dict, n_methods: int) -> None:
    """Field types of a code record (a checksum-valid file may still hold nonsense written by hand).
    msgpack decodes exact types, so ``type(v) is T`` is the check (a bool is no int here)."""
    for name, kind in _CODE_FIELD_TYPES:
        if type(rec[name]) is not kind:
            raise ValueError(f"code record {i}: field {name} is a {type(rec[name]).__name__}, "
                             f"not a {kind.__name__}")
    if not 0 <= rec["method"] < n_methods:
        raise ValueError(f"code record {i}: method index {rec['method']} out of range")
    for t in rec["argtypes"]:
        if type(t) is not str:
            raise ValueError(f"code record {i}: argument types must be strings")
    for e in rec["edges"]:
        if type(e) is not list or len(e) != 3 or type(e[0]) is not str or type(e[1]) is not str:
            raise ValueError(f"code record {i}: malformed edges")


class LazyCode(MutableMapping):
    """Code entries by instance key, each checked and built from its record on first access."""

    def __init__(self, method_keys: list[str] = (), records: list = ()):  # type: ignore[assignment]
        self._keys = method_keys
        self._items: dict[InstanceKey, Any] = {}
        n = len(method_keys)
        for i, rec in enumerate(records):
            # Just what the key needs: the rest of the record is checked when it is first looked up.
            try:
                index, argtypes = rec[0], tuple(rec[1])
                if type(index) is not int or not 0 <= index < n:
                    raise TypeError
                hash(argtypes)
            except (TypeError, IndexError, KeyError):
                raise ValueError(f"code record {i}: malformed method index or argument types") from None
            self._items[(method_keys[index], argtypes)] = (i, rec)

    def __getitem__(self, key: InstanceKey) -> CodeEntry:
        item = self._items[key]
        if not isinstance(item, CodeEntry):  # (index, raw record) until first looked up
            i, raw = item
            n = len(CODE.required)
            if len(raw) < n:
                raise ValueError(f"code record {i}: {len(raw)} fields, needs at least {n}")
            # Positional, as written; fields appended by later formats default (see CODE).
            rec = dict(zip(CODE.fields, raw))
            for name, default in CODE.optional:
                rec.setdefault(name, default)
            _check_code_record(i, rec, len(self._keys))
            item = CodeEntry(i, self._keys[raw[0]], tuple(raw[1]), raw[2], raw[3], raw[4],
                             tuple(tuple(e) for e in raw[5]), raw[6], raw[7], raw[8], raw[9],
                             bool(rec["boundscheck"]), rec["native_size"])
            self._items[key] = item
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


@dataclass
class ImageContents:
    fingerprints: dict[str, str] = field(default_factory=dict)
    code: MutableMapping = field(default_factory=LazyCode)
    objects: dict[str, tuple[str, bytes]] = field(default_factory=dict)

    @classmethod
    def from_tables(cls, tables: dict[str, list], lazy: bool = False) -> "ImageContents":
        """The contents of decoded tables. ``lazy``: code entries are checked and built when first looked
        up (importing a package looks up only the entries of the methods it calls)."""
        out = cls()
        methods = tables.get("methods", [])
        if not all(type(m) is list and len(m) >= 2 and type(m[0]) is str and type(m[1]) is str for m in methods):
            raise ValueError("malformed methods table")
        keys = [m[0] for m in methods]
        out.fingerprints = {m[0]: m[1] for m in methods}
        out.code = LazyCode(keys, tables.get("code", []))
        if not lazy:
            out.code.materialise()
        for rec in OBJECTS.unpack_all(tables.get("objects", [])):
            out.objects[rec["module"]] = (rec["cache_key"], bytes(rec["object"]))
        return out

    def to_tables(self) -> dict[str, list]:
        keys = sorted(self.fingerprints)
        index = {k: i for i, k in enumerate(keys)}
        code = [CODE.pack({
            "method": index[e.method], "argtypes": list(e.argtypes), "rettype": e.rettype, "owner": e.owner,
            "ir": e.ir, "edges": [list(edge) for edge in e.edges], "symbol": e.symbol,
            "min_world": e.min_world, "max_world": e.max_world, "state": e.state,
            "boundscheck": e.boundscheck, "native_size": e.native_size,
        }) for e in sorted(self.code.values(), key=lambda e: (e.method, e.argtypes, e.owner))]
        return {
            "methods": [METHODS.pack({"key": k, "fingerprint": self.fingerprints[k]}) for k in keys],
            "code": code,
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
            self.stored_ir = entry.ir
            self._function = None

        @property
        def function(self):  # type: ignore[override]
            if self._function is None:
                self._function = decode_function(entry.ir, root)
            return self._function

    return StoredInstance()


def entry_state(edges: tuple["Edge", ...]) -> str:
    """The explicit validity state written at build time (never inferred from missing edges later)."""
    return STATE_NEEDS_REVALIDATION if edges else STATE_NO_OUTSIDE_EDGES
