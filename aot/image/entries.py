"""An image's records and their one codec: code entries with edges, and the first-call reader.

    index = ImageIndex(serializer.open_image(p))     # a package's first calls: records decoded as looked up
    entry = index.entry(("numkit.core:clamp", ("f64", "f64", "f64")))
    entry.edges  → (('global', 'numkit.core:CHECK_ARGS', True), …)

(The full reader and writer, ``ImageContents``, is in ``aot.image.contents``; it decodes records with the
codec here: ``_code_entry`` and ``_method_record`` read, and check, a record; ``_code_record`` writes one.)

Tables: ``methods`` (key, fingerprint, and the definition bytes the fingerprint hashes), ``code`` (one
record per code instance: argument types, edges, symbol, validity state…; grouped by method, in key order),
``ir`` (the typed IR of code record *i* at position *i*), ``index`` (one record: the method keys, where
each method's code records start and where each method's definition starts in ``definitions``, and the
strings and constants the code records refer to) and ``definitions`` (one record: the methods' definitions
back to back, which validation compares in place, in the image's mapping). A package's first calls decode
the index, then the code records of the modules whose methods they call (``ImageIndex``); the methods
table is for tools, and an entry's IR is decoded only when something reads it (curing, the
spurious-reinference check, ``aot inspect``, incremental builds).

A code record refers to text by number, so that decoding one makes almost no objects (each would be fresh
memory on a first call, and touching fresh memory is what a first call pays most for on some machines):
argument types (as one signature text, ``"(f64, i64)"``), return type, owner and validity state are
indices into the index's ``strings``, and each edge is three numbers, ``[kind, target, value]``: the kind
and (except for a call, whose target is the callee's index among the method keys) the target index the
strings; the value indexes the strings, or for a ``global`` edge the index's ``constants`` (the values
entries folded in). Reading records, an edge's numbers are turned into text once per image
(``_References``): entries share their edges, and modules share most of theirs.

World bounds: an entry's ``min_world`` is the building process's world when it was inferred (shown by the
tools; it means nothing in another process), and its ``max_world`` is open-ended (written as nil) unless the
entry was already invalid in the building world; a loader never binds a closed entry (cause
``invalid-at-build``), and a valid one gets ``[current world, open-ended]`` in the loading process.

The header's ``build_id`` (``aot.image.header.build_identity``: a hash of the target and of every entry's
IR, in order) is what image and library share: the library says it too (``build_info``), and each of its
entry-table slots says which entry it holds (``slot_text``); the IR is checked against it when first read.

Records are positional and only ever extended (see ``serializer``, "Records"); these schemas are the one
place that names their fields. The encoding of the code record's fields changed with compiler version
0.7.0 (images of another compiler version are rejected by their header before any table is read).
Nothing here imports llvmlite.

Hot path (every prebuilt method's first call decodes its records here),
guarded by ``tests/bench/instructions.py`` and ``tests/bench/test_import_bench.py``: measure before and after
any change here.
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from serializer import ImageError, record

from ..world.edges import CONSTANT_VALUED, Edge, EdgeKind
from ..world.methods import MAX_WORLD
from .header import build_identity

if TYPE_CHECKING:
    from ..world.instances import StoredKey


METHODS = record("methods", "key", "fingerprint", "definition")
CODE_FIELDS = (
    "method",
    "argtypes",
    "rettype",
    "owner",
    "edges",
    "symbol",
    "min_world",
    "max_world",
    "state",
    "boundscheck",
    "native_size",
)
"""The fields of a code record, in order: what it stores of a ``CodeEntry`` (whose fields these are too)."""
CODE = record("code", *CODE_FIELDS)
IR = record("ir", "ir")
OBJECTS = record("objects", "module", "cache_key", "object")
INDEX = record("index", "keys", "code_starts", "definition_starts", "strings", "constants")
DEFINITIONS = record("definitions", "definitions")
# A ``ptx`` image's launch tables: what a launcher needs beside each kernel's entry (its ``.entry`` is the
# entry's symbol): the parameters whose arrays it writes (copied back), and what each code of the module's
# ``aot_status`` word raises (code *i* + 1 is record *i*).
KERNELS = record("kernels", "method", "argtypes", "written")
ERRORS = record("errors", "exception", "message")

#: Tables whose records are read one at a time (``serializer.ImageFile.records``).
INDEXED_TABLES = ("code", "ir")

# The explicit validity states written at build time: a loader never infers validity from missing edges or
# world numbers (the bug that made Julia re-infer valid precompiled code).
STATE_NO_OUTSIDE_EDGES = "valid-no-outside-edges"
STATE_NEEDS_REVALIDATION = "needs-revalidation"


_ARRAY = (list, tuple)  # what a stored array decodes as (tuples at import, lists in full reads)


def edge_to_record(edge: Edge) -> list:
    value = edge.value
    return [edge.kind, edge.target, _plain(value)]


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


class CodeEntry:
    """One code instance stored in an image (immutable by convention). ``call_keys``: the instances it
    calls (from its ``call`` edges), worked out when it is made.

    Its fields are its code record's (``CODE_FIELDS``), its position in the code table, its IR (a table of
    its own) and what is worked out from them. Written out, not a dataclass: this module is read on a
    package's first call, where ``dataclasses`` is not imported (importing it and making this class would
    cost more than a millisecond), and ``__init__`` keeps its own parameter order."""

    __slots__ = ("index", *CODE_FIELDS, "_ir", "_ir_source", "signature", "call_keys")  # (call_keys last: _replace)

    def __init__(
        self,
        index: int,
        method: str,
        argtypes: tuple[str, ...],
        rettype: str,
        owner: str,
        ir: bytes | None,
        edges: tuple[tuple[str, str, Any], ...],
        symbol: str,
        min_world: int,
        max_world: int,
        state: str,
        boundscheck: bool = True,
        native_size: int = 0,
        ir_source: Callable[[int], bytes] | None = None,
        signature: str | None = None,
        call_keys: tuple[StoredKey, ...] | None = None,
    ):
        # (one field a statement: made once per prebuilt method on its first call, so kept to stores)
        self.index = index
        self.method = method
        self.argtypes = argtypes
        self.rettype = rettype
        self.owner = owner
        self._ir = ir
        self.edges = edges
        self.symbol = symbol
        self.min_world = min_world
        self.max_world = max_world
        self.state = state
        self.boundscheck = boundscheck
        self.native_size = native_size
        self._ir_source = ir_source  # reads the IR of code record ``index`` from the image, when first asked
        # The argument types' text, as the record gives it (what a library slot is checked against, with the key)
        self.signature = signature_text(argtypes) if signature is None else signature
        # (the instances it calls, when its maker has not worked them out already)
        self.call_keys: tuple[StoredKey, ...] = (
            tuple([(target, _split_types(value)) for kind, target, value in edges if kind == EdgeKind.CALL])
            if call_keys is None
            else call_keys
        )

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
    def key(self) -> StoredKey:
        return (self.method, self.argtypes)

    def _replace(self, **changes: Any) -> CodeEntry:
        fields = {name.lstrip("_"): getattr(self, name) for name in self.__slots__[:-1]}
        if "argtypes" in changes:
            del fields["signature"]
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


# The code record's fields whose types are checked as such (the numbers that stand for text or keys are
# checked by indexing with them). msgpack decodes exact types, so ``type(v) is T`` is the check (a bool is
# no int here); arrays decode as tuples at import, lists otherwise. ``max_world`` may also be nil.
_CODE_FIELD_TYPES = (
    ("edges", tuple),
    ("symbol", str),
    ("min_world", int),
    ("max_world", int),
    ("boundscheck", bool),
    ("native_size", int),
)
_N_REQUIRED = len(CODE.required)
_EDGE_KINDS = {kind.value: kind for kind in EdgeKind}  # (a dict lookup: calling the enum costs a few thousand)
_STR = {str}


class _References:
    """What code records refer to by number (see the module docstring): the method keys and the index's
    strings and constants; and what is made of them, once per image and shared by every entry: the argument
    types of each signature text, and each distinct edge with the instance it calls (None unless a call)."""

    __slots__ = ("keys", "strings", "constants", "signatures", "edges")

    def __init__(self, keys: list[str], strings: tuple[str, ...], constants: tuple):
        self.keys, self.strings, self.constants = keys, strings, constants
        self.signatures: list[tuple[str, ...] | None] = [None] * len(strings)
        self.edges: dict[tuple, tuple[tuple[str, str, Any], StoredKey | None]] = {}

    def signature(self, i: int) -> tuple[str, ...]:
        types = self.signatures[i]
        if types is None:
            types = self.signatures[i] = _split_types(self.strings[i])
        return types

    def edge(self, numbers: tuple) -> tuple[tuple[str, str, Any], StoredKey | None]:
        """The edge three numbers stand for, and the instance it calls (IndexError, TypeError or ValueError
        when they stand for nothing)."""
        kind, target, value = numbers
        found: tuple[tuple[str, str, Any], StoredKey | None]
        kind = _EDGE_KINDS[self.strings[kind]]  # (KeyError for a kind this compiler does not know)
        if kind is EdgeKind.CALL:
            target = self.keys[target]
            found = (kind, target, self.strings[value]), (target, self.signature(value))
        else:
            found = (
                (kind, self.strings[target], self.constants[value] if kind in CONSTANT_VALUED else self.strings[value]),
                None,
            )
        self.edges[numbers] = found
        return found


def _code_entry(i: int, raw: Any, refs: _References, ir_source: Callable[[int], bytes] | None) -> CodeEntry:
    """The entry of code record ``i``, after checking its fields (a checksum-valid file may still hold
    nonsense written by hand): each number must index what it refers to (``refs``). Fields appended by
    later formats would take their defaults (see CODE).

    This runs on the first call of every prebuilt method, where each bytecode counts: a number is checked by
    indexing with it (an integer, not too large). A negative one reads from the end: it is no more wrong
    than any other number a hand-edited record may hold, and then it is the entry that is wrong, not the
    reader (the build writes none). Shapes and the other fields' types are checked."""
    if len(raw) != _N_REQUIRED:
        if len(raw) < _N_REQUIRED:
            raise ValueError(f"code record {i}: {len(raw)} fields, needs at least {_N_REQUIRED}")
        raw = raw[:_N_REQUIRED]
    method, argtypes, rettype, owner, edges, symbol, min_world, max_world, state, boundscheck, native_size = raw
    if type(edges) is list:  # a full read decodes arrays as lists
        edges = tuple([tuple(e) if type(e) is list else e for e in edges])
    if not (
        type(edges) is tuple
        and type(symbol) is str
        and type(min_world) is int
        and (type(max_world) is int or max_world is None)
        and type(boundscheck) is bool
        and type(native_size) is int
    ):
        for (name, kind), value in zip(
            _CODE_FIELD_TYPES, (edges, symbol, min_world, max_world, boundscheck, native_size)
        ):
            if type(value) is not kind and not (name == "max_world" and value is None):
                raise ValueError(
                    f"code record {i}: field {name} is a {type(value).__name__}, not "
                    f"{'a list' if kind is tuple else 'a ' + kind.__name__}"
                )
    try:
        known = refs.edges
        resolved: list[tuple[str, str, Any]] = []
        calls: list[StoredKey] = []
        for numbers in edges:
            edge, call = known.get(numbers) or refs.edge(numbers)
            resolved.append(edge)
            if call is not None:
                calls.append(call)
        strings = refs.strings
        return CodeEntry(
            i,
            refs.keys[method],
            refs.signatures[argtypes] or refs.signature(argtypes),
            strings[rettype],
            strings[owner],
            None,
            tuple(resolved),
            symbol,
            min_world,
            MAX_WORLD if max_world is None else max_world,
            strings[state],
            boundscheck,
            native_size,
            ir_source,
            strings[argtypes],
            tuple(calls),
        )
    except (IndexError, TypeError, ValueError):
        raise ValueError(
            f"code record {i}: a number in it that should name a string, a method key or a constant names none"
        ) from None
    except KeyError as err:
        raise ValueError(f"code record {i}: an edge of a kind this compiler does not know ({err})") from None


def _code_record(entry: CodeEntry, position: dict[str, int], number: dict[str, int], constant: dict[str, int]) -> list:
    """Entry ``entry`` as a code record: method keys by their ``position``, text and constants by their
    numbers in the index (``number``, and ``constant`` by ``_constant_key``; see the module docstring)."""
    edges: list[list[int]] = []
    for kind, target, value in entry.edges:
        if kind == EdgeKind.CALL:
            if target not in position:
                raise ValueError(f"{entry.method}: a call edge to {target}, whose definition the image lacks")
            edges.append([number[kind], position[target], number[value]])
        else:
            edges.append(
                [
                    number[kind],
                    number[target],
                    constant[_constant_key(value)] if kind in CONSTANT_VALUED else number[value],
                ]
            )
    return CODE.pack(
        {
            "method": position[entry.method],
            "argtypes": number[signature_text(entry.argtypes)],
            "rettype": number[entry.rettype],
            "owner": number[entry.owner],
            "edges": edges,
            "symbol": entry.symbol,
            "min_world": entry.min_world,
            "max_world": None if entry.max_world == MAX_WORLD else entry.max_world,
            "state": number[entry.state],
            "boundscheck": bool(entry.boundscheck),
            "native_size": entry.native_size,
        }
    )


def _referenced(entries: list[CodeEntry]) -> tuple[list[str], list[Any]]:
    """Every text and every constant the code records of ``entries`` refer to by number, each sorted (so
    rebuilding gives the same image); constants are told apart by ``_constant_key``."""
    texts: set[str] = set()
    constants: dict[str, Any] = {}
    for e in entries:
        text = signature_text(e.argtypes)
        if _split_types(text) != tuple(e.argtypes):
            raise ValueError(f"{e.method}: argument types {e.argtypes!r} do not survive being written as text")
        texts.update((text, e.rettype, e.owner, e.state))
        for kind, target, value in e.edges:
            texts.add(str(kind))
            if kind != EdgeKind.CALL:
                texts.add(target)
            if kind in CONSTANT_VALUED:
                constants[_constant_key(value)] = value
            else:
                texts.add(value)
    if not all(type(t) is str for t in texts):
        raise ValueError("a code entry holds text that is not a string (a type, state or edge)")
    return sorted(texts), [constants[k] for k in sorted(constants)]


def _constant_key(value: Any) -> str:
    """What tells a folded constant from another: its ``repr`` (``1``, ``1.0`` and ``True`` are three), with
    a tuple the same whether it was built (a tuple) or read back (a list)."""
    return repr(_tuplify(value))


def signature_text(argtypes: tuple[str, ...]) -> str:
    """``("f64[:, :]", "i64")`` → ``"(f64[:, :], i64)"``: what call edges record (``_split_types`` undoes
    it)."""
    return "(" + ", ".join(argtypes) + ")"


def slot_text(method: str, argtypes: tuple[str, ...]) -> str:
    """What a library's slot says it holds (``aot.build.objects.emit_entry_table``): its entry's key and
    argument types, ``"pkg.mod:f(f64, i64)"``. Loading binds an entry only to the slot that says so (and
    compares ``entry.method + entry.signature``: the text the record gives)."""
    return method + signature_text(argtypes)


def _ir_bytes(index: int, rec: Any) -> bytes:
    if type(rec) not in _ARRAY or not rec or type(rec[0]) is not bytes:
        raise ValueError(f"ir record {index}: not the bytes of a function")
    return rec[0]


def _method_record(i: int, rec: Any, key: str) -> bytes:
    """The definition in methods record ``i``, after checking that it is the record of method ``key``."""
    if (
        type(rec) not in _ARRAY
        or len(rec) < _N_METHOD_FIELDS
        or rec[0] != key
        or type(rec[1]) is not str
        or type(rec[2]) is not bytes
    ):
        raise ValueError(f"methods record {i}: not the key, fingerprint and definition of {key}")
    return rec[2]


_N_METHOD_FIELDS = len(METHODS.required)


def _index_record(
    keys: list[str], code_methods: list[int], definitions: list[bytes], strings: list[str], constants: list
) -> list:
    """The ``index`` table's one record for sorted method ``keys``, the method index of each code record (in
    table order), each method's definition, and the strings and constants the code records refer to: the
    keys joined by newlines, where each method's code records start and where its definition starts in the
    ``definitions`` table (u32s), then the strings and the constants."""
    if any("\n" in k for k in keys):
        raise ValueError("a method key holds a newline")
    starts = [0] * (len(keys) + 1)
    for m in code_methods:
        starts[m + 1] += 1
    for i in range(len(keys)):
        starts[i + 1] += starts[i]
    definition_starts = [0] * (len(keys) + 1)
    for i, d in enumerate(definitions):
        definition_starts[i + 1] = definition_starts[i] + len(d)
    return INDEX.pack(
        {
            "keys": "\n".join(keys),
            "code_starts": _u32s(starts),
            "definition_starts": _u32s(definition_starts),
            "strings": strings,
            "constants": [_plain(c) for c in constants],
        }
    )


def _definitions_table(definitions: list[bytes]) -> list:
    """The ``definitions`` table: one record, the definitions of the index's keys back to back (a table a
    reader maps rather than decodes: ``serializer.ImageFile.blob``)."""
    return [DEFINITIONS.pack({"definitions": b"".join(definitions)})]


def _references(keys: list[str], rec: Any) -> _References:
    """What the code records refer to, from index record ``rec`` (ValueError when it is malformed)."""
    strings, constants = rec[3], rec[4]
    if type(strings) not in _ARRAY or not _STR.issuperset(map(type, strings)) or type(constants) not in _ARRAY:
        raise ValueError("malformed index table: its strings are not all text, or its constants no list")
    return _References(keys, tuple(strings), tuple(constants))


def _u32s(values: list[int]) -> bytes:
    return struct.pack(f"<{len(values)}I", *values)


def _starts(blob: Any, n: int, end: int) -> Any:
    """``n + 1`` little-endian u32s from 0 to ``end`` (else ()), read in place: each is made an int when it
    is used, not all of them when the image is opened. Their order is not checked here: where a method's
    range runs backwards it reads as empty, and a record range outside the table is refused when read."""
    if type(blob) is not bytes or len(blob) != 4 * (n + 1):
        return ()
    starts = memoryview(blob).cast("I") if _LITTLE_ENDIAN else struct.unpack(f"<{n + 1}I", blob)
    return starts if starts[0] == 0 and starts[n] == end else ()


_LITTLE_ENDIAN = sys.byteorder == "little" and struct.calcsize("I") == 4


class ImageIndex:
    """An image as a package's first calls read it: the records of a module's methods are decoded when one
    of them is first looked up, so the work grows with the modules used (each of which is imported, so
    read, anyway), not with the image; an entry is checked and built when its method is looked up.

    The ``index`` table (the sorted method keys, where each method's code records and definition start, and
    the strings and constants records refer to) is decoded at once, and the ``definitions`` table is
    checksummed and compared in place (``ImageFile.blob``: a copy would be a quarter of a kilobyte of fresh
    memory per method in the image); the ``code`` records of a module's methods are decoded together (one
    msgpack call: decoding record by record would cost twice as much), and an entry's ``ir`` record when
    its IR is first read. The ``methods`` table (keys, fingerprints and definitions again, for tools) is
    not read. Every record is checked when it is used: ValueError when one is malformed (ImageError when a
    table is)."""

    def __init__(self, image: Any):
        index = image.table("index", tuples=True)
        rec = index[0] if len(index) == 1 else None
        if type(rec) is not tuple or len(rec) < len(INDEX.required) or type(rec[0]) is not str:
            raise ValueError("malformed index table")
        self.keys: list[str] = rec[0].split("\n") if rec[0] else []
        self.position = dict(zip(self.keys, range(len(self.keys))))
        self.records = image.records("code")
        self.entry_count = len(self.records)
        n = len(self.keys)
        self.starts = _starts(rec[1], n, len(self.records))
        # Definitions are compared where they lie in the image (see above): from ``_base`` in ``_source``.
        self._source, self._base, end = image.blob("definitions")
        self._definition_starts = _starts(rec[2], n, end - self._base)
        self.refs = _references(self.keys, rec)
        if len(self.position) != n or not self.starts or not self._definition_starts or self.keys != sorted(self.keys):
            raise ValueError("the index table does not fit the code table")
        self._image = image
        self._irs: list[bytes] | None = None  # every entry's IR, once read and checked (``ir``)
        self._ir_reader = self.ir  # one bound method, shared by every entry
        self._decoded: list[bool] = [False] * n  # whose code records are decoded (a module at a time)
        self._code_records: list = [None] * len(self.records)
        # Method key → its one entry (the common case: no dict per method), or its entries by argument types.
        self._code: dict[str, Any] = {}

    @property
    def decoded(self) -> list[str]:
        """The keys of the methods whose records are decoded so far (for tools and tests)."""
        return [k for k, done in zip(self.keys, self._decoded) if done]

    def definition(self, key: str) -> bytes | None:
        """Method ``key``'s definition (``aot.world.fingerprint.definition``), or None."""
        i = self.position.get(key)
        if i is None:
            return None
        starts, base = self._definition_starts, self._base
        return bytes(self._source[base + starts[i] : base + starts[i + 1]])

    def holds_definition(self, key: str, current: bytes | None) -> bool:
        """Whether method ``key``'s stored definition is ``current`` (compared in place: no copy)."""
        i = self.position.get(key)
        if i is None or current is None:
            return False
        starts, base = self._definition_starts, self._base
        start, end = base + starts[i], base + starts[i + 1]
        return end - start == len(current) and self._source[start:end] == current

    def entries(self, key: str) -> dict[tuple[str, ...], CodeEntry]:
        """The code entries of method ``key`` by argument types (empty when it has none)."""
        found = self._code.get(key)
        if found is None:
            found = self._decode(key)
        return {found.argtypes: found} if type(found) is CodeEntry else dict(found)

    def entry(self, instance: StoredKey) -> CodeEntry | None:
        """The entry for ``(method key, argument types)``, or None."""
        found = self._code.get(instance[0])
        if found is None:
            found = self._decode(instance[0])
        if type(found) is CodeEntry:
            return found if found.argtypes == instance[1] else None
        return found.get(instance[1])

    def _decode(self, key: str) -> Any:
        """Check and build the entries of method ``key``: its one entry (the common case, kept without a
        dict), or a dict of them by argument types (empty when it has none)."""
        found: Any = {}
        i = self.position.get(key)
        if i is not None:
            if not self._decoded[i]:
                self._decode_module(i)
            start, end = self.starts[i], self.starts[i + 1]
            if end - start == 1:
                found = self._built(start, key)
            else:
                for j in range(start, end):
                    entry = self._built(j, key)
                    if entry.argtypes in found:
                        raise ValueError(f"code record {j}: a second entry of {key}{entry.argtypes}")
                    found[entry.argtypes] = entry
        self._code[key] = found
        return found

    def _built(self, j: int, key: str) -> CodeEntry:
        """The entry of code record ``j``, checked to be one of method ``key``'s; the record is released."""
        entry = _code_entry(j, self._code_records[j], self.refs, self._ir_reader)
        self._code_records[j] = None  # (what the entry needs of its record, it holds)
        if entry.method != key:
            raise ValueError(f"code record {j}: not an entry of {key}")
        return entry

    def _decode_module(self, i: int) -> None:
        """Decode the code records of the methods of method ``i``'s module (keys are sorted: together)."""
        keys = self.keys
        module = keys[i][: keys[i].find(":") + 1] or keys[i]  # "pkg.mod:"
        lo, hi = i, i + 1
        while lo > 0 and keys[lo - 1].startswith(module):
            lo -= 1
        while hi < len(keys) and keys[hi].startswith(module):
            hi += 1
        first, last = self.starts[lo], self.starts[hi]
        if first < last:
            try:
                self._code_records[first:last] = self.records.run(first, last)
            except ImageError as err:
                raise ValueError(str(err)) from None
        self._decoded[lo:hi] = [True] * (hi - lo)

    def ir(self, index: int) -> bytes:
        """The IR of code record ``index`` (ValueError when the image's ``ir`` table is damaged, or is not
        the IR its build identity says: all of it is read, and checked, when some is first needed)."""
        irs = self._irs
        if irs is None:
            irs = self._irs = self._checked_irs()
        return irs[index]

    def _checked_irs(self) -> list[bytes]:
        try:
            records = self._image.records("ir")
            if len(records) != len(self.records):
                raise ValueError(f"{len(records)} IR records for {len(self.records)} code records")
            irs = [_ir_bytes(i, rec) for i, rec in enumerate(records.run(0, len(records)) if len(records) else ())]
        except ImageError as err:
            raise ValueError(str(err)) from None
        header = self._image.header
        target = header.get("target")
        if type(target) is not dict or build_identity(target, irs) != header.get("build_id"):
            raise ValueError("the typed IR is not the IR of the image's build (its build identity differs)")
        return irs


def _tuplify(value: Any) -> Any:
    return tuple(_tuplify(v) for v in value) if isinstance(value, list) else value
