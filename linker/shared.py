"""Object files → one reproducible shared library, through the system's C compiler driver.

    link_shared([obj0, obj1], Path("pkg/__aot__/cpu.so"))
      runs    cc -shared -o /tmp/aot-link-PID-XXXX/tmp.so /tmp/aot-link-PID-XXXX/m0.o /tmp/aot-link-PID-XXXX/m1.o
                 -Wl,--build-id=none
      ->      Path("pkg/__aot__/cpu.so")   (byte-identical for identical objects)

The driver (``$CC`` or ``cc``) picks the right linker, crt files and flags for the
platform, which a direct ``ld`` call would have to guess.  Inputs get fixed names in a
fresh temporary folder so nothing about the calling process reaches the output; the
build id (a hash that would change with nothing) is turned off.  The folder is named
with the linking process's pid (``aot-link-4242-…``): the folder of a link killed
before it could remove it is removed by a later link once that process is gone.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from linker._files import atomic_write_bytes, remove_stale_work_folders, work_folder
from linker.errors import LinkerError

__all__ = ["REPRODUCIBLE_FLAGS", "find_cc", "link_shared"]

#: The work folders' names: ``aot-link-<pid>-<random>`` in the temporary directory.
WORK_PREFIX = "aot-link-"

#: Flags that keep the output a function of the inputs only.
REPRODUCIBLE_FLAGS: tuple[str, ...] = ("-Wl,-no_uuid",) if sys.platform == "darwin" else ("-Wl,--build-id=none",)


def find_cc() -> list[str]:
    """The C compiler driver as an argv prefix: ``$CC`` split like a shell would, else ``cc``."""
    env = os.environ.get("CC", "").strip()
    if env:
        try:
            argv = shlex.split(env)
        except ValueError as e:
            raise LinkerError(f"cannot parse $CC={env!r} ({e}); set CC to a C compiler driver such as 'gcc'") from None
        if shutil.which(argv[0]) is None:
            raise LinkerError(
                f"no C compiler driver found (looked for {argv[0]!r}, from $CC); "
                "install gcc or clang, or set CC to one that exists"
            )
        return argv
    if shutil.which("cc") is None:
        raise LinkerError("no C compiler driver found (looked for 'cc'); install gcc or clang, or set CC")
    return ["cc"]


def link_shared(
    objects: Sequence[bytes], out_path: Path, *, extra_args: Sequence[str] = (), exports: Sequence[str] = ()
) -> Path:
    """Link relocatable (PIC) object files into the shared library ``out_path``, atomically.

    ``extra_args`` go after the objects (libraries such as ``-lm`` belong there).  ``exports``, when
    given, are the only names the library exports (shell-style patterns such as ``def_*``), through a
    version script: GNU ld, gold and lld read one; a driver whose linker does not is an error here.  On
    failure a LinkerError carries the driver's messages and the command; the temporary
    folder with the objects is kept so that the command reproduces the failure.
    """
    objects = list(objects)
    if not objects:
        raise LinkerError(f"nothing to link into {out_path}: no object files")
    for i, obj in enumerate(objects):
        if not isinstance(obj, (bytes, bytearray, memoryview)):
            raise TypeError(f"object {i} must be bytes, not {type(obj).__name__}")
    out_path = Path(out_path)
    cc = find_cc()
    remove_stale_work_folders(WORK_PREFIX)  # those of links killed before they could remove their own
    work = work_folder(WORK_PREFIX)
    keep = False  # (a failed link keeps its folder: the command it prints must reproduce the failure)
    try:
        inputs = [work / f"m{i}.o" for i in range(len(objects))]
        for path, obj in zip(inputs, objects):
            path.write_bytes(bytes(obj))
        tmp_so = work / "tmp.so"
        cmd = [*cc, "-shared", "-o", str(tmp_so), *map(str, inputs), *REPRODUCIBLE_FLAGS, *extra_args]
        if exports:
            script = work / "exports.map"
            script.write_text("{\n  global:\n" + "".join(f"    {name};\n" for name in exports) + "  local: *;\n};\n")
            cmd.append(f"-Wl,--version-script={script}")
        try:
            proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace")
        except OSError as e:
            raise LinkerError(f"cannot run the C compiler driver {cc[0]!r} ({e.strerror or e})", cmd) from None
        if proc.returncode != 0 or not tmp_so.is_file():
            keep = True
            raise LinkerError(
                f"linking {out_path} failed ({cc[0]} exited with status {proc.returncode}; "
                f"the objects are kept in {work})",
                cmd,
                output=(proc.stderr + proc.stdout),
            )
        try:
            atomic_write_bytes(out_path, tmp_so.read_bytes(), mode=0o777)
        except OSError as e:
            raise LinkerError(f"cannot write {out_path} ({e.strerror or e})") from None
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    return out_path
