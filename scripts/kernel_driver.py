"""Run every kernel of one .cu file once, on small awkward shapes, and check it.

Made to run under a checker, one process per kernel file:

    compute-sanitizer --tool memcheck  python scripts/kernel_driver.py scores --backend cupy
    compute-sanitizer --tool racecheck python scripts/kernel_driver.py softmax --backend cupy
    python scripts/kernel_driver.py softmax --backend cpu       (AddressSanitizer/ThreadSanitizer
                                                                 through atensi.cudacpu, see
                                                                 tests/test_kernels_cpu.py)

Shapes: three heads, T = 19 (one 16-wide tile plus 3 rows) and T = 1,
d_k = 20 (one full 16-wide slice of d_k plus a partial one), plus softmax rows
longer than a block. The grid is capped at 2 blocks in y/z and 3 in x
(``--grid-cap``), so the kernels' loops over heads and rows run too. With
``--backend cupy`` CuPy's memory pool is switched off, so that memcheck knows
the exact end of every array.
Every version the registry lists for a step is run (``registry.versions``),
with its causal variant, and every fused version with each tensor-core format
and its split-K pass; ``CHECKS`` holds one check per kernel file, and
tests/test_kernels_cpu.py checks that it covers every file of the registry.
Exit code 0: every result matches atensi.reference; 1: a mismatch; 3: the
file's kernel is not implemented yet.
"""

from __future__ import annotations

import sys

import numpy as np

from atensi import kernels, reference
from atensi.arguments import Parser
from atensi.kernels import registry

def _close(name, out, ref, tol=1e-5):
    out = np.asarray(out.get() if hasattr(out, "get") else out, dtype=np.float64)
    ok = np.array_equal(np.isneginf(out), np.isneginf(ref)) and np.allclose(
        np.where(np.isfinite(ref), out, 0), np.where(np.isfinite(ref), ref, 0), rtol=tol, atol=tol
    )
    print(f"{'OK   ' if ok else 'BEDA '} {name}")
    return ok


# One check per kernel file: (Q, K, V float32, their float64 copies, S = Q Kᵀ/√d
# in float64, tag, backend, rng) -> every result matched.


def _scores(Q, K, V, Q64, K64, V64, S, tag, backend, rng):
    ok = True
    for version in registry.versions("scores"):
        ok &= _close(f"scores {version} {tag}", kernels.scores(Q, K, version=version, backend=backend), S)
        out = kernels.scores(Q, K, causal=True, version=version, backend=backend)
        ok &= _close(f"scores {version} causal {tag}", out, reference.causal_mask(S))
    return ok


def _causal_mask(Q, K, V, Q64, K64, V64, S, tag, backend, rng):
    ok = True
    for version in registry.versions("causal_mask"):
        out = kernels.causal_mask(S.astype(np.float32), version=version, backend=backend)
        ok &= _close(f"causal_mask {version} {tag}", out, reference.causal_mask(S))
    return ok


def _softmax(Q, K, V, Q64, K64, V64, S, tag, backend, rng):
    ok = True
    masked = reference.causal_mask(S)
    long_rows = rng.standard_normal((2, 300), dtype=np.float32)
    for version in registry.versions("softmax"):
        out = kernels.softmax(masked.astype(np.float32), version=version, backend=backend)
        ok &= _close(f"softmax {version} {tag}", out, reference.softmax(masked))
        out = kernels.softmax(long_rows, version=version, backend=backend)
        ok &= _close(f"softmax {version} (2, 300)", out, reference.softmax(long_rows.astype(np.float64)))
    for version in registry.versions("softmax", causal=True):
        out = kernels.softmax(S.astype(np.float32), causal=True, version=version, backend=backend)
        ok &= _close(f"softmax {version} causal {tag}", out, reference.softmax(masked))
    return ok


def _weighted_sum(Q, K, V, Q64, K64, V64, S, tag, backend, rng):
    ok = True
    A = reference.softmax(reference.causal_mask(S)).astype(np.float32)
    want = reference.weighted_sum(A.astype(np.float64), V64)
    for version in registry.versions("weighted_sum"):
        out = kernels.weighted_sum(A, V, version=version, backend=backend)
        ok &= _close(f"weighted_sum {version} {tag}", out, want)
    for version in registry.versions("weighted_sum", causal=True):
        out = kernels.weighted_sum(A, V, version=version, causal=True, backend=backend)
        ok &= _close(f"weighted_sum {version} causal {tag}", out, want)
    return ok


def _fused_in(file: str):
    """The check of ``file``: every fused version whose kernels it holds, each
    tensor-core format, and the split-K pass with its combine where there is one."""
    def check(Q, K, V, Q64, K64, V64, S, tag, backend, rng):
        ok = True
        for version in registry.versions("fused"):
            entries = registry.of_step("fused", version)
            if entries[0].file != file:
                continue
            precisions = tuple(dict.fromkeys(k.precision for k in entries))
            splits = (1, 2) if any(k.split for k in entries) else (None,)
            for causal in (True, False):
                ref = reference.attention(Q64, K64, V64, causal=causal)
                # Unmasked: the plain kernel once; masked: every format and split.
                for precision in precisions if causal else precisions[:1]:
                    for n in splits if causal else splits[:1]:
                        out = kernels.attention(Q, K, V, causal=causal, impl=f"fused-{version}",
                                                splits=n, precision=precision, backend=backend)
                        name = " ".join(f"attention fused-{version} {precision or ''} "
                                        f"splits={n} causal={causal} {tag}".split())
                        # TF32 rounds every operand to 10 mantissa bits: about 1e-3.
                        ok &= _close(name, out, ref, tol=1e-2 if precision == "tf32" else 1e-5)
        return ok
    return check


def _attention_backward(Q, K, V, Q64, K64, V64, S, tag, backend, rng):
    ok = True
    dO = rng.standard_normal(Q.shape, dtype=np.float32)
    want = reference.attention_backward(Q64, K64, V64, dO.astype(np.float64))
    _, lse = reference.attention_blocked(Q, K, V, return_lse=True)
    for extra in ({}, {"lse": lse}):
        got = kernels.attention_backward(Q, K, V, dO, backend=backend, **extra)
        for name, g, w in zip(("dQ", "dK", "dV"), got, want):
            ok &= _close(f"attention_backward {name} {sorted(extra)} {tag}", g, w)
    return ok


def _rope(Q, K, V, Q64, K64, V64, S, tag, backend, rng):
    ok = True
    for version in registry.versions("rope"):
        for offset in (0, 5):
            out = kernels.rope(Q, offset=offset, version=version, backend=backend)
            ok &= _close(f"rope {version} offset={offset} {tag}", out,
                         reference.rope(Q64, offset=offset))
    return ok


# Every file of kernels.registry has its check (tests/test_kernels_cpu.py checks it).
CHECKS = {"scores": _scores, "causal_mask": _causal_mask, "softmax": _softmax,
          "weighted_sum": _weighted_sum, "attention_fused": _fused_in("attention_fused.cu"),
          "attention_tensorcore": _fused_in("attention_tensorcore.cu"),
          "attention_backward": _attention_backward, "rope": _rope}
FILES = tuple(CHECKS)


def run(file: str, backend: str) -> bool:
    rng = np.random.default_rng(7)
    ok = True
    for T in (19, 1):
        Q, K, V = (rng.standard_normal((3, T, 20), dtype=np.float32) for _ in range(3))
        Q64, K64, V64 = (x.astype(np.float64) for x in (Q, K, V))
        S = reference.scores(Q64, K64)
        ok &= CHECKS[file](Q, K, V, Q64, K64, V64, S, f"T={T}", backend, rng)
    if backend == "cupy":
        import cupy

        cupy.cuda.Device().synchronize()
    return ok


def main(argv=None) -> int:
    parser = Parser(prog="scripts/kernel_driver.py",
                    description="Jalankan kernel satu berkas .cu dan periksa hasilnya.",
                    usage_line=f"python scripts/kernel_driver.py {{{','.join(FILES)}}} "
                               "[--backend cupy|cpu] [--grid-cap N]")
    parser.add_argument("file", choices=FILES, help="nama berkas di kernels/ tanpa .cu")
    parser.add_argument("--backend", default=None, choices=("cupy", "cpu"))
    parser.add_argument("--grid-cap", type=int, default=2,
                        help="blok maksimum di grid.y/z (grid.x: satu lebih banyak); 0 = batas CUDA")
    args = parser.parse_args(argv)
    if args.grid_cap < 0:
        parser.fail(f"--grid-cap harus bilangan bulat >= 0 (0 = batas CUDA), tetapi yang "
                    f"diterima {args.grid_cap}")
    if args.grid_cap > 0:
        kernels.launch.MAX_GRID_YZ = args.grid_cap  # read by the launchers at each launch
        kernels.launch.MAX_GRID_X = args.grid_cap + 1
    if args.backend == "cupy":
        import cupy

        # No memory pool: every array is its own cudaMalloc of the exact size,
        # so memcheck sees a read one element past an array (inside a pool
        # chunk, rounded up to 512 bytes, it would go unnoticed).
        cupy.cuda.set_allocator(None)
    try:
        ok = run(args.file, args.backend)
    except NotImplementedError as err:
        print(f"LEWATI {args.file}: belum ada ({err})")
        return 3
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
