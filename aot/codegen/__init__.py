"""Typed IR → LLVM IR (``function``, ``intrinsics``), CPython wrappers (``cpython``), modules and the JIT."""
