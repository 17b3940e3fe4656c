"""Intrinsics: one descriptor per ``aot.ir.ops.Intrinsic`` (``spec.py``), grouped by family (``math.py``,
``numpy.py``, ``arrays.py``, ``lists.py``, ``gpu.py``), and the registry that gathers them and derives every
table the compiler's stages ask (``registry.py``). See docs/CONTRIBUTING.md for adding one."""
