"""Causes: why a method instance was not served from its image entry, as events and reports show it.

    Cause.edge_changed("numkit.core:mean")          → the text "edge-changed:numkit.core:mean"
    Cause(CauseKind.NO_ENTRY)                        → "no-entry"
    Cause.image_incompatible("python-abi cpython-310-linux (this is cpython-311-linux)")
    cause.kind is CauseKind.EDGE_CHANGED, cause.detail == "numkit.core:mean"

A cause is a value with a kind and a detail; its text (``str(cause)``) is what ``aot.Event.cause``, ``aot
inspect --json``'s ``reason`` and the reports carry (docs/CI.md). Code that needs the kind or the detail reads
the fields, never the text.
"""

from __future__ import annotations

from enum import Enum


class CauseKind(str, Enum):
    NO_ENTRY = "no-entry"  # the image holds no entry for the instance (or there is no image)
    EDGE_CHANGED = "edge-changed"  # detail: the target of the first edge that no longer holds
    FINGERPRINT_CHANGED = "fingerprint-changed"  # the method's own definition changed
    REDEFINED = "redefined"  # the method was defined again in this process
    IMAGE_INCOMPATIBLE = "image-incompatible"  # detail: why the whole image was rejected
    NATIVE_MISSING = "native-missing"  # the image's native code is not there (cured from the stored IR)
    NATIVE_CHECKSUM_MISMATCH = "native-checksum-mismatch"  # the library is not the one the image was built with
    NATIVE_UNLOADABLE = "native-unloadable"  # the library would not load here
    NATIVE_OTHER_BUILD = "native-other-build"  # the library says it is of another build than the image
    NATIVE_SLOT_MISMATCH = "native-slot-mismatch"  # the library's slot for the entry holds another key/signature
    IR_DAMAGED = "ir-damaged"  # the entry's stored IR does not decode or compile (compiled from source instead)
    SOURCE_CHANGED = "source-changed"  # the source file no longer holds the code Python imported
    INVALID_AT_BUILD = "invalid-at-build"  # the build wrote the entry as known invalid
    DEBUG_REJECT = "debug-reject"  # AOT_DEBUG_REJECT named the method (a testing hook)
    IMPORT_FAILED = "import-failed"  # (aot verify) detail: the module whose import failed

    def __str__(self) -> str:
        return self.value

    __format__ = str.__format__  # type: ignore[assignment]  # str's own method on purpose; mypy reads it unbound


class Cause:
    """Why an instance was (re)inferred, cured or invalidated (immutable by convention). Written out rather
    than a dataclass: making a dataclass compiles its methods, half a millisecond on a package's first call."""

    __slots__ = ("kind", "detail")

    def __init__(self, kind: CauseKind, detail: str = ""):
        self.kind = kind
        self.detail = detail

    def __eq__(self, other: object) -> bool:
        return type(other) is Cause and (self.kind, self.detail) == (other.kind, other.detail)

    def __hash__(self) -> int:
        return hash((self.kind, self.detail))

    def __repr__(self) -> str:
        return f"Cause({self.kind!s}, {self.detail!r})" if self.detail else f"Cause({self.kind!s})"

    @property
    def text(self) -> str:
        return f"{self.kind.value}:{self.detail}" if self.detail else self.kind.value

    def __str__(self) -> str:
        return self.text

    @classmethod
    def edge_changed(cls, target: str) -> Cause:
        return cls(CauseKind.EDGE_CHANGED, target)

    @classmethod
    def image_incompatible(cls, why: str) -> Cause:
        return cls(CauseKind.IMAGE_INCOMPATIBLE, why)


NO_ENTRY = Cause(CauseKind.NO_ENTRY)
FINGERPRINT_CHANGED = Cause(CauseKind.FINGERPRINT_CHANGED)
REDEFINED = Cause(CauseKind.REDEFINED)
INVALID_AT_BUILD = Cause(CauseKind.INVALID_AT_BUILD)
DEBUG_REJECT = Cause(CauseKind.DEBUG_REJECT)
NATIVE_MISSING = Cause(CauseKind.NATIVE_MISSING)
NATIVE_CHECKSUM_MISMATCH = Cause(CauseKind.NATIVE_CHECKSUM_MISMATCH)
NATIVE_UNLOADABLE = Cause(CauseKind.NATIVE_UNLOADABLE)
NATIVE_OTHER_BUILD = Cause(CauseKind.NATIVE_OTHER_BUILD)
NATIVE_SLOT_MISMATCH = Cause(CauseKind.NATIVE_SLOT_MISMATCH)
IR_DAMAGED = Cause(CauseKind.IR_DAMAGED)
SOURCE_CHANGED = Cause(CauseKind.SOURCE_CHANGED)
