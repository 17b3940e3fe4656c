"""The ordered IR → IR passes run on every typed function before it is stored or compiled.

    typed = pipeline.run(inferred.function)       # each pass: run(function, context) -> function

Passes are pure functions of the IR (no hidden state); tests run the verifier after each one.
"""
from __future__ import annotations

from typing import Callable

from ..ir import Function
from . import simplify_cfg

PASSES: tuple[tuple[str, Callable[[Function, object], Function]], ...] = (
    ("simplify_cfg", simplify_cfg.run),
)


def run(fn: Function, context: object = None) -> Function:
    for _, pass_ in PASSES:
        fn = pass_(fn, context)
    return fn
