"""Instance keys: a method instance named two ways, for the compiler and for images and events.

    InstanceKey  ("numkit.core:clamp", (F64, F64, F64))         argument types as types (inference, codegen)
    StoredKey    ("numkit.core:clamp", ("f64", "f64", "f64"))   their texts (images, events, backedges)
    stored_key(("numkit.core:clamp", (F64,)))    → ("numkit.core:clamp", ("f64",))   (worked out once per key)
    instance_key(("numkit.core:clamp", ("f64",))) → ("numkit.core:clamp", (F64,))

Both are plain tuples, so that dictionaries keyed by them stay fast; these two functions are the one place that
turns one into the other.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..types import Type

InstanceKey = tuple[str, tuple["Type", ...]]
StoredKey = tuple[str, tuple[str, ...]]


@lru_cache(maxsize=8192)
def stored_key(key: InstanceKey) -> StoredKey:
    """The key images, events and backedges use for ``key``: its argument types as text."""
    return (key[0], tuple(map(str, key[1])))


@lru_cache(maxsize=8192)
def instance_key(key: StoredKey) -> InstanceKey:
    """The key inference and codegen use for ``key``: its argument types parsed."""
    from ..types import parse_type

    return (key[0], tuple(map(parse_type, key[1])))
