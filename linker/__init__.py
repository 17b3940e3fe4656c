"""Native artifacts from compiled code: shared libraries for the CPU, PTX and cubins for NVIDIA GPUs.

    link_shared([obj0, obj1], Path("pkg/__aot__/cpu.so"))       ->  Path("pkg/__aot__/cpu.so")
    link_ptx([kernels_llvm_ir], "sm_80", keep=[entry, …])       ->  PTX text (libdevice linked in)
    assemble_ptx(ptx, "sm_80", Path("pkg/__aot__/k.sm_80.cubin")) ->  Path("pkg/__aot__/k.sm_80.cubin")
    link_shared([b"junk"], out)  ->  LinkerError: linking out failed (cc exited with status 1; ...)
                                       /tmp/aot-link-PID-XXXX/m0.o: file not recognized: ...
                                     to reproduce: cc -shared -o /tmp/aot-link-PID-XXXX/tmp.so ...

Every failure of an external tool raises an error whose text holds the tool's messages
and the exact command line that reproduces it.
"""

from linker.errors import LinkerError, PtxasError, ToolError
from linker.nvvm import find_libdevice, link_ptx
from linker.ptx import assemble_ptx, find_ptxas, parse_ptxas_verbose, ptxas_resource_usage
from linker.shared import REPRODUCIBLE_FLAGS, find_cc, link_shared

__all__ = [
    "REPRODUCIBLE_FLAGS",
    "LinkerError",
    "PtxasError",
    "ToolError",
    "assemble_ptx",
    "find_cc",
    "find_libdevice",
    "find_ptxas",
    "link_ptx",
    "link_shared",
    "parse_ptxas_verbose",
    "ptxas_resource_usage",
]
