"""Typed IR → LLVM IR, CPython wrappers, modules and the JIT.

    build_module("m", [inst], lookup, CpuTarget.host(), options)  → (ir.Module, exports)

Imports go one way, from the bottom up: ``types`` (LLVM layouts) and ``context`` (the module's context, the
error path) → ``numerics`` (Python's numeric rules) → ``intrinsics`` (``math``, builtins) and ``gpu_intrinsics``
→ ``function`` (a typed function) → ``cpython`` (wrappers, the dispatcher) → ``module`` (a module of instances)
→ ``gpu`` (kernel modules) and ``engine`` (the JIT). Where targets differ, codegen calls the target's hooks.
"""
