"""gpukit for the GPU without a GPU: PTX build time, and ptxas's registers and spills per kernel, next to
numba-cuda's for the same kernels written with ``numba.cuda`` (when Numba and its NVVM can compile here).

    python3 tests/bench/gpukit_ptx.py [sm_80 ...]
    -> PTX build of gpukit (10 kernels): infer + codegen … s; sm_80: link + optimise + emit … s; …
    -> kernel          aot regs  spills  stack | numba regs  spills  stack   (sm_80)

Registers come from ``ptxas -v`` on each compiler's PTX; "stack" is the stack frame in bytes (libdevice's
sin/cos keep a small array there on their slow path: it is not a spill).
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "fixtures" / "gpukit"))


def numba_kernels():
    """The gpukit kernels written for numba.cuda, with the same signatures."""
    from numba import cuda, float32, float64

    BINS, THREADS, TILE = 16, 128, 16

    def saxpy(a, x, y):
        i = cuda.grid(1)
        if i < x.size:
            y[i] = a * x[i] + y[i]

    def jacobi2d(u, v):
        i, j = cuda.grid(2)
        n, m = u.shape
        if i < n and j < m:
            if i == 0 or j == 0 or i == n - 1 or j == m - 1:
                v[i, j] = u[i, j]
            else:
                v[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])

    def histogram(x, lo, hi, counts):
        i = cuda.grid(1)
        if i < x.size and lo <= x[i] < hi:
            b = int((x[i] - lo) / (hi - lo) * BINS)
            cuda.atomic.add(counts, b if b < BINS - 1 else BINS - 1, 1)  # min() needs a driver in numba-cuda

    # Device functions are written inline: numba-cuda's @cuda.jit(device=True) needs a CUDA driver to
    # compile, and aot inlines them anyway.
    def shade(x, out):
        i = cuda.grid(1)
        if i < x.size:
            v = x[i]
            p = 0.5 + v * (-1.0 + v * 0.25)
            p = -1.0 if p < -1.0 else 1.0 if p > 1.0 else p
            t = (p + 1.0) / 2.0
            t = 0.0 if t < 0.0 else 1.0 if t > 1.0 else t
            out[i] = t * t * (3.0 - 2.0 * t) * math.exp(-0.5 * (v / 2.0) ** 2)

    def waves(xs, xd, outs, outd):
        i = cuda.grid(1)
        if i < xs.size:
            s = xs[i]
            outs[i] = math.sin(s) * math.cos(s) + math.sqrt(math.fabs(s)) + math.exp(-s * s)
        if i < xd.size:
            d = xd[i]
            outd[i] = math.atan2(math.sin(d), math.cos(d)) + math.log1p(d * d) + math.tanh(d) + math.hypot(d, 1.0)

    def intmix(a, b, out):
        i = cuda.grid(1)
        if i < a.size:
            x = a[i]
            y = b[i]
            out[i, 0] = x // y if y != 0 else 0
            out[i, 1] = x % y if y != 0 else 0
            out[i, 2] = (x << 3) ^ (x >> 2) | (y & 0xFF)
            n = abs(x) % 1000
            steps = 0
            while n > 1:
                if n % 2 == 0:
                    n = n // 2
                else:
                    n = 3 * n + 1
                steps += 1
            out[i, 3] = steps

    def matmul(a, b, c):
        i, j = cuda.grid(2)
        if i < c.shape[0] and j < c.shape[1]:
            acc = float32(0.0)
            for k in range(a.shape[1]):
                acc += a[i, k] * b[k, j]
            c[i, j] = acc

    def scale_strided(x, factor):
        start = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        step = cuda.gridDim.x * cuda.blockDim.x
        for i in range(start, x.size, step):
            x[i] *= factor

    def block_sum(x, total):
        cache = cuda.shared.array(THREADS, float64)
        t = cuda.threadIdx.x
        i = cuda.grid(1)
        cache[t] = x[i] if i < x.size else 0.0
        cuda.syncthreads()
        half = THREADS // 2
        while half > 0:
            if t < half:
                cache[t] += cache[t + half]
            cuda.syncthreads()
            half //= 2
        if t == 0:
            cuda.atomic.add(total, 0, cache[0])

    def transpose(a, out):
        tile = cuda.shared.array((16, 17), float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        i = cuda.blockIdx.y * TILE + ty
        j = cuda.blockIdx.x * TILE + tx
        if i < a.shape[0] and j < a.shape[1]:
            tile[ty, tx] = a[i, j]
        cuda.syncthreads()
        i = cuda.blockIdx.x * TILE + ty
        j = cuda.blockIdx.y * TILE + tx
        if i < out.shape[0] and j < out.shape[1]:
            out[i, j] = tile[tx, ty]

    return {
        name: fn
        for name, fn in locals().items()
        if callable(fn)
        and name
        in (
            "saxpy",
            "jacobi2d",
            "histogram",
            "shade",
            "waves",
            "intmix",
            "matmul",
            "scale_strided",
            "block_sum",
            "transpose",
        )
    }


def main(archs: list[str]) -> None:
    import gpukit  # noqa: F401  (defines every kernel)
    from aot.codegen.types import symbol_name
    from aot.runtime import runtime
    from aot.runtime.ptx import PtxCompiler, compile_ptx
    from aot.targets import PtxTarget
    from gpukit import kernels, reduce
    from linker import find_ptxas, ptxas_resource_usage

    gpukit_kernels = [
        kernels.saxpy,
        kernels.jacobi2d,
        kernels.histogram,
        kernels.shade,
        kernels.waves,
        kernels.intmix,
        kernels.matmul,
        kernels.scale_strided,
        reduce.block_sum,
        reduce.transpose,
    ]
    compiler = PtxCompiler(runtime().table)
    started = time.perf_counter()
    for k in gpukit_kernels:
        compiler.llvm_module([(k.__aot_method__, k.signatures()[0])], PtxTarget())
    print(
        f"PTX build of gpukit ({len(gpukit_kernels)} kernels): inference + LLVM IR "
        f"{time.perf_counter() - started:.3f} s (first time, this process)"
    )
    programs = {}
    for arch in archs:
        programs[arch] = compile_ptx(gpukit_kernels, arch, compiler=compiler)
        print(
            f"  {arch}: codegen + link libdevice + optimise + emit PTX {programs[arch].seconds:.3f} s "
            f"({len(programs[arch].ptx)} bytes)"
        )
    if find_ptxas() is None:
        print("ptxas not found: no register counts")
        return
    try:
        numba = numba_kernels()
        from numba import cuda
    except Exception as e:  # Numba, or its CUDA support, is missing
        numba, cuda = {}, None
        print(f"numba.cuda unavailable ({e}): aot only")
    for arch in archs:
        t0 = time.perf_counter()
        usage = ptxas_resource_usage(programs[arch].ptx, arch)
        print(f"\n{arch}: ptxas -v on aot's PTX {time.perf_counter() - t0:.2f} s")
        print(
            f"{'kernel':<14} {'aot regs':>8} {'spills':>6} {'stack':>5} | {'numba regs':>10} {'spills':>6} {'stack':>5}"
        )
        cc = (int(arch[3:-1]), int(arch[-1]))
        for k in gpukit_kernels:
            name = k.__name__
            u = usage[symbol_name(k.key, k.signatures()[0], "ptx")]
            theirs = "-"
            if name in numba and cuda is not None:
                try:
                    sig = "(" + ", ".join(_numba_type(t) for t in k.signatures()[0]) + ")"
                    ptx, _ = cuda.compile_ptx(numba[name], sig, cc=cc)
                    n = next(v for v in ptxas_resource_usage(ptx, arch).values() if v["entry"])
                    theirs = f"{n['registers']:>10} {n['spills']:>6} {n['stack_frame']:>5}"
                except Exception as e:
                    theirs = f"(numba: {type(e).__name__})"
            print(f"{name:<14} {u['registers']:>8} {u['spills']:>6} {u['stack_frame']:>5} | {theirs}")


def _numba_type(t) -> str:
    from aot.types import ArrayType

    if isinstance(t, ArrayType):
        name = {"f32": "float32", "f64": "float64", "i32": "int32", "i64": "int64"}[t.dtype.name]
        dims = [":"] * t.ndim
        if t.layout == "C":
            dims[-1] = "::1"
        return f"{name}[{', '.join(dims)}]"
    return {"f32": "float32", "f64": "float64", "i64": "int64", "i32": "int32"}[t.name]


if __name__ == "__main__":
    main(sys.argv[1:] or ["sm_80", "sm_90"])
