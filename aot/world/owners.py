"""Owners: who a code instance was compiled for. The same method instance has one code instance per owner.

    CPU, PTX                                   → "cpu", "ptx"
    Owner.parse("ptx:sm_80+ad")                → Owner(target="ptx", arch="sm_80", plugins=("ad",))
    str(Owner("cpu", "", ("ad",)))             → "cpu+ad"

An owner's text is ``target[:arch](+plugin)*`` (``cpu``, ``ptx:sm_80``, ``cpu+ad``). Events, image headers and
entries carry the text; code that asks which target an owner is for compares with the constants here (or asks
the target's hooks).
"""

from __future__ import annotations

CPU = "cpu"
PTX = "ptx"
TARGETS = (CPU, PTX)


class Owner:
    """An owner's parts (immutable by convention; written out, not a dataclass: this module is imported with
    aot, where making a dataclass would cost half a millisecond)."""

    __slots__ = ("target", "arch", "plugins")

    def __init__(self, target: str, arch: str = "", plugins: tuple[str, ...] = ()):
        self.target, self.arch, self.plugins = target, arch, tuple(plugins)

    def __eq__(self, other: object) -> bool:
        return type(other) is Owner and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))

    def __repr__(self) -> str:
        return f"Owner.parse({str(self)!r})"

    @classmethod
    def parse(cls, text: str) -> Owner:
        """``"ptx:sm_80+ad"`` → ``Owner("ptx", "sm_80", ("ad",))`` (ValueError for an empty part)."""
        head, *plugins = text.split("+")
        target, _, arch = head.partition(":")
        if not target or any(not p for p in plugins) or (":" in head and not arch):
            raise ValueError(f"not an owner: {text!r} (expected target[:arch](+plugin)*)")
        return cls(target, arch, tuple(plugins))

    def __str__(self) -> str:
        head = f"{self.target}:{self.arch}" if self.arch else self.target
        return "+".join((head, *self.plugins))
