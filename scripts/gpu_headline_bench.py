"""Ukuran utama di GPU: B = 8, H = 12, T = 1024 dan 4096, d_k = 64, kausal.

    python scripts/gpu_headline_bench.py OUT.json [--T 1024 4096]

Baris: fused v1, fused v2 (tanpa split dan dengan split), fused v3 di tensor
core (TF32 dan 3xTF32), rantai v2 (empat kernel), cuBLAS + softmax CuPy, dan
torch SDPA dengan masukan float32. Baris
torch diberi label apa adanya: GEMM-nya berjalan di tensor core dengan
pembagian 3xTF32 (akurat seperti FP32), bukan FP32 CUDA-core, jadi bukan
pembanding yang setara untuk kernel CUDA-core buku ini.

Setiap baris: waktu median (event CUDA, setelah pemanasan), TFLOP/s dari
FLOP berguna 4·B·H·T²·d_k / 2 (kausal), dan bagian dari puncak FP32 perangkat
(2 × jalur FP32 per SM × jumlah SM × clock, dibaca saat berjalan), serta
selisih terbesar terhadap fused v1. Gagal satu baris tidak menghentikan yang lain.
Berkas JSON ditulis ulang setelah setiap baris, jadi lari yang dihentikan di
tengah tetap menyimpan baris yang sudah diukur.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

B, H, D_K = 8, 12, 64
REPEATS = 5


def _time_ms(fn, cp) -> float:
    fn()  # warm-up (and compile)
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(REPEATS):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return sorted(times)[len(times) // 2]


def _cublas_softmax(Q, K, V, cp):
    T = Q.shape[-2]
    S = cp.matmul(Q, K.swapaxes(-1, -2)) * (1.0 / D_K ** 0.5)
    S = cp.where(cp.tri(T, dtype=bool), S, cp.float32(-cp.inf))
    S -= S.max(axis=-1, keepdims=True)
    cp.exp(S, out=S)
    S /= S.sum(axis=-1, keepdims=True)
    return cp.matmul(S, V)


def _variants(Q, K, V, cp):
    from atensi import kernels

    rows = {
        "fused v1": lambda: kernels.attention(Q, K, V, impl="fused-v1", backend="cupy"),
        "fused v2": lambda: kernels.attention(Q, K, V, impl="fused-v2", splits=1,
                                              backend="cupy"),
        "fused v2 split 4": lambda: kernels.attention(Q, K, V, impl="fused-v2", splits=4,
                                                      backend="cupy"),
        "fused v3 TF32 (tensor core)": lambda: kernels.attention(
            Q, K, V, impl="fused-v3", precision="tf32", splits=1, backend="cupy"),
        "fused v3 3xTF32 (tensor core)": lambda: kernels.attention(
            Q, K, V, impl="fused-v3", precision="3xtf32", splits=1, backend="cupy"),
        "rantai v2": lambda: kernels.attention(Q, K, V, impl="chain-v2", backend="cupy"),
        "cuBLAS + softmax CuPy": lambda: _cublas_softmax(Q, K, V, cp),
    }
    try:
        import torch
        import torch.nn.functional as F

        if torch.cuda.is_available():
            tq, tk, tv = (torch.as_tensor(x, device="cuda") for x in (Q, K, V))
            rows["torch SDPA float32 (tensor core, 3xTF32; bukan FP32 CUDA-core)"] = (
                lambda: cp.asarray(F.scaled_dot_product_attention(tq, tk, tv, is_causal=True)))
    except ImportError:
        pass
    return rows


def run(out_path: str, Ts=(1024, 4096)) -> dict:
    import cupy as cp

    from atensi import kernels
    from atensi.bench.measure import gpu_info

    kernels.gpu_available()  # loads the CUDA libraries from the pip wheels when needed
    gpu = gpu_info()
    peak = gpu.get("fp32_peak_gflops")
    result = {"schema": "atensi-headline-1", "gpu": gpu, "shape": {"B": B, "H": H, "d_k": D_K, "causal": True},
              "rows": []}
    for T in Ts:
        rng = cp.random.default_rng(2026)
        Q, K, V = (rng.standard_normal((B, H, T, D_K), dtype=cp.float32) for _ in range(3))
        flop = 4 * B * H * T * T * D_K / 2
        ref = None
        for name, fn in _variants(Q, K, V, cp).items():
            row = {"name": name, "T": T, "flop": flop}
            try:
                out = fn()
                if ref is None:
                    ref = out
                row["max_diff_vs_fused_v1"] = float(cp.abs(out - ref).max())
                del out
                ms = _time_ms(fn, cp)
                row.update(ms=ms, tflops=flop / ms / 1e9)
                if peak:
                    row["fp32_peak_share"] = flop / ms / 1e6 / peak
            except Exception as err:  # one failing row must not stop the others
                row["error"] = f"{type(err).__name__}: {err}"[:300]
            result["rows"].append(row)
            _write(result, out_path)
            print(json.dumps(row, ensure_ascii=False), flush=True)
            cp.get_default_memory_pool().free_all_blocks()
    return result


def _write(result: dict, out_path: str) -> None:
    """The rows so far, replacing the file whole (a reader never sees half of it)."""
    from atensi.files import write_text

    write_text(out_path, json.dumps(result, indent=1, ensure_ascii=False))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="berkas JSON hasil")
    parser.add_argument("--T", type=int, nargs="+", default=[1024, 4096])
    args = parser.parse_args(argv)
    start = time.perf_counter()
    result = run(args.out, tuple(args.T))
    bad = [r["name"] for r in result["rows"] if "error" in r]
    print(f"{len(result['rows'])} baris dalam {time.perf_counter() - start:.1f} s; gagal: {bad or 'tidak ada'}")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
