"""Code generation targets: ``cpu`` (host or named CPU) and ``ptx`` (NVIDIA GPUs)."""

from .base import Target
from .cpu import CpuTarget
from .ptx import PtxTarget

__all__ = ["CpuTarget", "PtxTarget", "Target"]
