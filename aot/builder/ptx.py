"""The ``ptx`` owner's build (``OwnerBuild``): per package with kernels and per configured arch,
``<pkg>/__aot__/<pkg>.ptx-<arch>.aotimg`` with the kernel and device-function entries and the launch tables
(``launch_tables``), ``<pkg>.<arch>.ptx`` and, when ptxas is installed, ``<pkg>.<arch>.cubin``. Every arch is
compiled anew (nothing of a previous image is reused); a failure stops the package's remaining archs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import serializer
from serializer import crc32

from ..diagnostics import CompileError
from ..image.entries import INDEXED_TABLES
from ..image.header import new_header
from ..world.owners import PTX
from ..world.validate import CurrentWorld
from .owner import OwnerBuild, Package


class PtxProgram(NamedTuple):
    """A package's kernels compiled for one arch (``PtxBuild.compile``), to write (``PtxBuild.write``)."""

    arch: str
    program: Any
    done: dict  # the compiler's inferred instances (``Inferencer.done``)
    world: CurrentWorld


class PtxBuild(OwnerBuild[PtxProgram]):
    owner = PTX

    def compile(self, package: Package) -> Iterator[PtxProgram]:
        """The package's kernels (none: no image) compiled for each configured arch in turn."""
        from linker import LinkerError

        from ..runtime.kernel import find_kernels
        from ..runtime.ptx import PtxCompiler, compile_ptx

        kernels = find_kernels(package.modules)
        if not kernels:
            return
        compiler = PtxCompiler(self.rt.table, verify=self.rt.env.verify_passes)
        world = CurrentWorld(self.rt.table)
        for arch in self.cfg.ptx.arch:
            try:
                program = compile_ptx(kernels, arch, compiler=compiler, opt=self.cfg.cpu.opt)
            except CompileError as err:
                self.result.failed += 1
                self.result.errors.extend(str(d) for d in err.diagnostics)
                return
            except LinkerError as err:
                self.result.failed += 1
                self.result.errors.append(f"{package.name}: {err}")
                return
            yield PtxProgram(arch, program, compiler.inferencer.done, world)

    def write(self, package: Package, made: PtxProgram) -> None:
        """The arch's PTX, its cubin when ptxas assembles it, and its image."""
        from linker import PtxasError, assemble_ptx, find_ptxas
        from linker._files import atomic_write_bytes

        arch, program = made.arch, made.program
        entry_symbols = {(k.method, k.argtypes): k.symbol for k in program.kernels}
        instances = {k: v for k, v in made.done.items()}
        contents = self.build.contents(instances, package.root, made.world, PTX, entry_symbols)
        self.result.built += len(instances)
        folder = package.folder
        ptx_path = folder / f"{package.name}.{arch}.ptx"
        data = program.ptx.encode()
        atomic_write_bytes(ptx_path, data)
        header = new_header(
            PTX,
            {"triple": "nvptx64-nvidia-cuda", "cpu": arch, "features": ""},
            package.name,
            native={"file": ptx_path.name, "crc32": crc32(data), "size": len(data)},
        )
        if find_ptxas() is not None:
            cubin_path = folder / f"{package.name}.{arch}.cubin"
            try:
                assemble_ptx(program.ptx, arch, cubin_path)
                cubin = cubin_path.read_bytes()
                header["cubin"] = {"file": cubin_path.name, "crc32": crc32(cubin), "size": len(cubin)}
            except PtxasError as err:
                self.result.failed += 1
                self.result.errors.append(f"{package.name}: {err}")
        image_path = folder / f"{package.name}.ptx-{arch}.aotimg"
        tables = dict(contents.to_tables(), **launch_tables(program, made.done))
        serializer.write_image(image_path, header, tables, INDEXED_TABLES)
        self.result.images.append(str(image_path))


def launch_tables(program: Any, done: dict) -> dict[str, list]:
    """A ``ptx`` image's ``kernels`` and ``errors`` tables (``aot.image.entries.KERNELS``, ``ERRORS``): each
    kernel's written parameters, and the module's error codes, so that a launch from the image needs no
    inference."""
    from ..codegen.module import written_params
    from ..image.entries import ERRORS, KERNELS

    kernels = [
        KERNELS.pack(
            {
                "method": k.method,
                "argtypes": [str(t) for t in k.argtypes],
                "written": sorted(written_params(done[(k.method, k.argtypes)], done.__getitem__)),
            }
        )
        for k in sorted(program.kernels, key=lambda k: (k.method, [str(t) for t in k.argtypes]))
    ]
    return {"kernels": kernels, "errors": [ERRORS.pack({"exception": e, "message": m}) for e, m in program.errors]}
