"""Owners: who a code instance was compiled for. The same method instance has one code instance per owner.

    CPU, PTX                                   → "cpu", "ptx"
    Owner.parse("ptx:sm_80+ad")                → Owner(target="ptx", arch="sm_80", plugins=("ad",))
    str(Owner("cpu", "", ("ad",)))             → "cpu+ad"

An owner's text is ``target[:arch](+plugin)*`` (SPEC.md §2d). Events, image headers and entries carry the text;
code that asks which target an owner is for compares with the constants here (or asks the target's hooks).
"""
from __future__ import annotations

from dataclasses import dataclass

CPU = "cpu"
PTX = "ptx"
TARGETS = (CPU, PTX)


@dataclass(frozen=True, slots=True)
class Owner:
    target: str
    arch: str = ""
    plugins: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> "Owner":
        """``"ptx:sm_80+ad"`` → ``Owner("ptx", "sm_80", ("ad",))`` (ValueError for an empty part)."""
        head, *plugins = text.split("+")
        target, _, arch = head.partition(":")
        if not target or any(not p for p in plugins) or (":" in head and not arch):
            raise ValueError(f"not an owner: {text!r} (expected target[:arch](+plugin)*)")
        return cls(target, arch, tuple(plugins))

    def __str__(self) -> str:
        head = f"{self.target}:{self.arch}" if self.arch else self.target
        return "+".join((head, *self.plugins))
