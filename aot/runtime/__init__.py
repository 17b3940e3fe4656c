"""Import-time loading, dispatch, events and strict mode (llvmlite only when compiling)."""

from .firstcall import Specialization
from .method import jit
from .state import Event, Runtime, StrictModeError, runtime

__all__ = ["Event", "Runtime", "Specialization", "StrictModeError", "jit", "runtime"]
