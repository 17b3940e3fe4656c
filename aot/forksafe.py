"""What a ``fork()`` must not split, and what the child starts afresh: the one home of aot's process-wide locks.

A fork copies the process as it is at that instant, with one thread: any lock another thread held stays held
in the child forever, and whatever that thread was midway through stays half done. So:

- **Work a fork waits for** (held across the fork, in this order): ``FIRST_CALLS``, held while a method's
  first call loads or compiles a specialization (``aot.runtime.firstcall``), then ``LLVM``, held while LLVM
  works in this process (the JIT, a build's object files, PTX). Just before ``os.fork()`` the forking thread
  takes both, so no other thread is midway through a first call or inside LLVM (whose own mutexes would be
  held in the child); both processes release them right after. A fork therefore waits at most for the one
  first call or compile under way.
- **State of the parent's threads** (``reset_in_child``): a lock that guards one object among the parent's
  threads (a ptx image's validator, a CPU grid's one launch at a time) is made anew in the child, where those
  threads do not exist; the CUDA device is forgotten there (a CUDA context does not survive a fork).

The compiled code's own pool of ``prange`` workers needs nothing from here: a loop that finds another
process's id in the pool resets it (``aot.codegen.parallel``).

    with forksafe.LLVM:                      # around any use of llvmlite.binding
        ...
    forksafe.reset_in_child(self._lock._at_fork_reinit)
"""

from __future__ import annotations

import _thread
import os

FIRST_CALLS = _thread.RLock()
"""Held while a specialization is loaded or compiled: one thread at a time (``aot.runtime.firstcall.obtain``)."""

LLVM = _thread.RLock()
"""Held while this process runs LLVM (parsing, optimising, emitting, the JIT's linking)."""

_HELD = (FIRST_CALLS, LLVM)  # (the order every thread takes them in: a first call compiles under both)
_IN_CHILD: list = []


def reset_in_child(reset) -> None:
    """Call ``reset()`` in the child after every fork (it holds ``reset`` and what it is bound to for good)."""
    _IN_CHILD.append(reset)


def _before() -> None:
    for lock in _HELD:
        lock.acquire()


def _after_in_parent() -> None:
    for lock in reversed(_HELD):
        lock.release()


def _after_in_child() -> None:
    for lock in reversed(_HELD):  # (the child's one thread is the forking thread: the owner)
        lock.release()
    for reset in _IN_CHILD:
        reset()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before, after_in_parent=_after_in_parent, after_in_child=_after_in_child)
