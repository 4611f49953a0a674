"""Accuracy of fused v3 (tensor cores) against float64, on the CPU emulator and in NumPy.

    python scripts/tensorcore_accuracy.py [--T 1024 4096] [--out results/tensorcore_accuracy.json]

One head, d_k = 64, causal, standard-normal float32 Q, K, V (seed 2026 + T).
Rows: v3-TF32 and v3-3xTF32 run by atensi.cudacpu (the .cu itself) and by the
NumPy model atensi.number_formats.attention_tf32, and v2 (FP32) on the
emulator. Each entry: the largest |O - O_float64| and the wall time of the
call on this machine. The chapter chapters/tensor_core.md glues the table
from the JSON this writes (through a temporary file and os.replace).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

from atensi import kernels, reference
from atensi import number_formats as nf

ROOT = Path(__file__).resolve().parents[1]
D_K = 64


def inputs(T: int):
    rng = np.random.default_rng(2026 + T)
    return tuple(rng.standard_normal((T, D_K), dtype=np.float32) for _ in range(3))


def measure(T: int) -> dict:
    Q, K, V = inputs(T)
    ref = reference.attention(*(x.astype(np.float64) for x in (Q, K, V)), causal=True)
    rows = {}

    def record(name, fn):
        start = time.perf_counter()
        out = fn()
        seconds = time.perf_counter() - start
        rows[name] = {"max_error": float(np.abs(out - ref).max()), "seconds": round(seconds, 3)}
        print(f"T={T:5d} {name:22s} galat maks {rows[name]['max_error']:.3e}  {seconds:7.2f} s", flush=True)

    for precision in nf.PRECISIONS:
        record(f"v3-{precision}-emulator", lambda p=precision: kernels.attention(
            Q, K, V, impl="fused-v3", precision=p, backend="cpu"))
        record(f"v3-{precision}-numpy", lambda p=precision: nf.attention_tf32(Q, K, V, precision=p))
    record("v2-fp32-emulator", lambda: kernels.attention(Q, K, V, impl="fused-v2",
                                                         backend="cpu"))
    return {"T": T, "d_k": D_K, "causal": True, "rows": rows}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--T", type=int, nargs="+", default=[1024, 4096])
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "tensorcore_accuracy.json")
    args = parser.parse_args(argv)
    # Compile outside the timing: one tiny call of each kernel.
    Q, K, V = inputs(8)
    for precision in nf.PRECISIONS:
        kernels.attention(Q[:8], K[:8], V[:8], impl="fused-v3", precision=precision,
                          backend="cpu")
    kernels.attention(Q[:8], K[:8], V[:8], impl="fused-v2", backend="cpu")
    result = {"machine": f"{platform.machine()}, {os.cpu_count()} CPU", "runs": [measure(T) for T in args.T]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=args.out.parent, prefix=args.out.name + ".", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    os.replace(tmp, args.out)
    print(f"ditulis: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
