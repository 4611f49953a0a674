"""Fused v3 (tensor cores) on a GPU: TF32 and 3xTF32 next to v2 and torch SDPA float32.

    python scripts/tensorcore_gpu.py            (scripts/gpu_check.sh runs it)

Headline shapes: B = 8, H = 12, T in {1024, 4096}, d_k = 64, causal, standard
normal float32. For each row: median time of 5 runs after a warm-up (CUDA
events), TFLOP/s counted as 2·B·H·T²·d_k (causal: half of 4·B·H·T²·d_k), and
the largest error against float64 on batch 0 (12 heads). torch's row is
``scaled_dot_product_attention`` on float32 inputs with TF32 allowed (its
default GEMM path on sm_80+ decides); it is skipped when torch is absent.
Prints one line per row; exit code 1 when a v3 result is off its tolerance
(3xTF32 1e-5, TF32 1e-3 relative to max |O|).
"""

from __future__ import annotations

import sys

import numpy as np

from atensi import kernels, reference

B, H, D = 8, 12, 64
TOL = {"tf32": 1e-3, "3xtf32": 1e-5}


def _time_ms(cp, fn, repeats=5) -> float:
    fn()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(repeats):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return float(np.median(times))


def main() -> int:
    import cupy as cp

    try:
        import torch
    except ImportError:
        torch = None
    bad = 0
    for T in (1024, 4096):
        rng = np.random.default_rng(T)
        Q, K, V = (rng.standard_normal((B, H, T, D), dtype=np.float32) for _ in range(3))
        ref = reference.attention(*(x[0].astype(np.float64) for x in (Q, K, V)), causal=True)
        scale = float(np.abs(ref).max())
        flops = 2.0 * B * H * T * T * D
        Qd, Kd, Vd = (cp.asarray(x) for x in (Q, K, V))
        rows = [(f"v3-{p}", lambda p=p: kernels.attention(Qd, Kd, Vd, impl="fused-v3",
                                                           precision=p, backend="cupy"))
                for p in ("tf32", "3xtf32")]
        rows.append(("v2-fp32", lambda: kernels.attention(Qd, Kd, Vd, impl="fused-v2",
                                                          backend="cupy")))
        if torch is not None and torch.cuda.is_available():
            tq, tk, tv = (torch.from_numpy(x).cuda() for x in (Q, K, V))
            torch.backends.cuda.matmul.allow_tf32 = True
            rows.append(("torch-sdpa-fp32", lambda: torch.nn.functional.scaled_dot_product_attention(
                tq, tk, tv, is_causal=True)))
        for name, fn in rows:
            if name.startswith("torch"):
                out = fn()
                torch.cuda.synchronize()
                got = out[0].double().cpu().numpy()
                ms = _time_ms(cp, lambda: (fn(), torch.cuda.synchronize()))
            else:
                got = cp.asnumpy(fn()[0]).astype(np.float64)
                ms = _time_ms(cp, fn)
            err = float(np.abs(got - ref).max()) / scale
            print(f"{name:16s} B={B} H={H} T={T:5d} d_k={D}  {ms:8.3f} ms  "
                  f"{flops / ms / 1e9:7.1f} TFLOP/s  galat relatif {err:.2e}", flush=True)
            precision = name[3:] if name.startswith("v3-") else None
            if precision and not err <= TOL[precision]:
                print(f"  GAGAL: {name} di atas toleransi {TOL[precision]:.0e}")
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
