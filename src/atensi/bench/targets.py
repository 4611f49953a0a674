"""Angka target dari issue: ringkasan tabel, kompilasi dan emulasi, *backward*.

    summary(hasil)         rasio NumPy berubin/naif, fused kernel/v1/cuBLAS
    engine_targets()       waktu kompilasi NVRTC, *spill*, rantai di emulasi CPU
    backward_targets()     *backward* NumPy biasa terhadap berubin

Masing-masing punya fungsi ``_..._lines`` yang menulisnya sebagai kalimat.
"""

from __future__ import annotations

import os
import shutil
import time

import numpy as np

from atensi import kernels, reference
from atensi.bench.measure import _inputs, _rel_err
from atensi.bench.methods import ANDREA_T, D_K, H
from atensi.bench.results import _rows
from atensi.bench.tables import _fmt_ms
from atensi.bench.timing import _peak_cpu, _time_cpu
from atensi.formatting import id_float


def _find(rows, method, B, T):
    for r in rows:
        if (r["method"], r["B"], r["T"]) == (method, B, T):
            return r
    return None


def summary(results):
    """Angka target; kunci yang datanya tidak diukur bernilai ``None``.

    cpu_blocked_speedup      waktu NumPy naif / NumPy berubin  (B=1, T=1024)
    cpu_blocked_memory_ratio memori berubin / memori naif       (B=1, T=1024)
    gpu_fused_vs_v1          waktu rantai v1 / fused kernel     (B=8, T=1024)
    gpu_fused_vs_cublas      waktu CuPy cuBLAS / fused kernel   (B=8, T=1024)
    gpu_fused_fp32_share     GFLOP/s fused / puncak FP32 GPU    (B=8, T=1024)
    """
    rows = _rows(results, None)
    out = dict.fromkeys(
        ["cpu_blocked_speedup", "cpu_blocked_memory_ratio", "gpu_fused_vs_v1",
         "gpu_fused_vs_cublas", "gpu_fused_fp32_share"]
    )
    naive = _find(rows, "numpy_naive", 1, ANDREA_T)
    blocked = _find(rows, "numpy_blocked", 1, ANDREA_T)
    if naive and blocked:
        out["cpu_blocked_speedup"] = naive["time_ms"] / blocked["time_ms"]
        out["cpu_blocked_memory_ratio"] = blocked["peak_mib"] / naive["peak_mib"]
    big_B = max((r["B"] for r in rows if r["device"] == "gpu"), default=None)
    fused = _find(rows, "gpu_fused", big_B, ANDREA_T)
    if fused:
        v1 = _find(rows, "gpu_chain_v1", big_B, ANDREA_T)
        cublas = _find(rows, "cupy_cublas", big_B, ANDREA_T)
        if v1:
            out["gpu_fused_vs_v1"] = v1["time_ms"] / fused["time_ms"]
        if cublas:
            out["gpu_fused_vs_cublas"] = cublas["time_ms"] / fused["time_ms"]
        out["gpu_fused_fp32_share"] = fused.get("fp32_peak_share")
    return out


def _summary_lines(s):
    lines = []
    if s["cpu_blocked_speedup"] is not None:
        lines.append(
            f"CPU, B=1 T=1024: NumPy berubin {id_float(s['cpu_blocked_speedup'], 2)}× lebih "
            f"cepat dari NumPy naif (target ≥ 2), memorinya "
            f"{id_float(s['cpu_blocked_memory_ratio'], 3)}× milik naif (target ≤ 0,125)."
        )
    if s["gpu_fused_vs_v1"] is not None:
        lines.append(
            f"GPU, B=8 T=1024: fused kernel {id_float(s['gpu_fused_vs_v1'], 1)}× lebih cepat "
            "dari rantai v1 (target ≥ 5)."
        )
    if s["gpu_fused_vs_cublas"] is not None:
        lines.append(
            f"GPU, B=8 T=1024: fused kernel {id_float(s['gpu_fused_vs_cublas'], 2)}× kecepatan "
            "CuPy cuBLAS (target ≥ 1)."
        )
    if s["gpu_fused_fp32_share"] is not None:
        lines.append(
            f"GPU: fused kernel mencapai {id_float(100 * s['gpu_fused_fp32_share'], 1)} % "
            "dari puncak FP32 GPU."
        )
    return lines


def engine_targets(archs=("sm_80", "sm_90"), T=256, d_k=D_K):
    """Angka target: kompilasi NVRTC semua kernel, dan rantai kernel satu
    *head* (T = 256, d_k = 64) lewat emulasi CPU. ``None`` bila alatnya tidak ada."""
    out = {"compile_seconds": None, "compile_files": 0, "spill_bytes": None, "chain_ms": {}}
    try:
        reports = [kernels.compile_report(f, arch=a)
                   for f in sorted(kernels.kernel_path(n) for n in kernels.registry.files())
                   for a in archs]
        out["compile_seconds"] = sum(r.seconds for r in reports)
        out["compile_files"] = len(reports) // len(archs)
        out["spill_bytes"] = sum(r.spill_bytes for r in reports)
    except RuntimeError as err:  # no NVRTC on this machine
        out["compile_error"] = str(err)
    if shutil.which(os.environ.get("ATENSI_CXX", "g++")):
        Q, K, V = _inputs(1, T)
        Q, K, V = Q[0, 0], K[0, 0], V[0, 0]
        for label, kwargs in (("v1", {"impl": "chain-v1"}), ("v2", {"impl": "chain-v2"}),
                              ("fused", {"impl": "fused-v1"})):
            kernels.attention(Q, K, V, backend="cpu", **kwargs)  # compile + warm up
            times = []
            for _ in range(3):
                t0 = time.perf_counter()
                kernels.attention(Q, K, V, backend="cpu", **kwargs)
                times.append(1000 * (time.perf_counter() - t0))
            out["chain_ms"][label] = sorted(times)[1]
    return out


def _engine_lines(e, T=256):
    lines = []
    if e["compile_seconds"] is not None:
        lines.append(
            f"NVRTC: {e['compile_files']} berkas .cu × sm_80 dan sm_90 dikompilasi dalam "
            f"{id_float(e['compile_seconds'], 2)} s (target ≤ 5 s); spill total "
            f"{e['spill_bytes']} bita."
        )
    for label, ms in e["chain_ms"].items():
        lines.append(
            f"Emulasi CPU, satu head, T = {T}, d_k = {D_K}: attention {label} "
            f"{id_float(ms, 1)} ms (target ≤ 2 s)."
        )
    return lines


def backward_targets(B=1, T=ANDREA_T, *, block=128, repeats=3, max_seconds=3.0):
    """Baris *backward*: NumPy biasa (``reference.attention_backward``)
    terhadap berubin (``attention_backward_blocked``), attention kausal
    B × 12 × T × 64, diukur seperti baris CPU lain: memori puncak tambahan
    dengan tracemalloc (termasuk dQ, dK, dV), lalu median waktu. Keduanya mulai
    dari Q, K, V, dO saja (yang berubin menghitung sendiri O dan lse-nya)."""
    Q, K, V = (x.reshape(B * H, T, D_K) for x in _inputs(B, T))
    dO = np.random.default_rng(T).standard_normal(Q.shape, dtype=np.float32)
    methods = {
        "plain": ("backward NumPy biasa (attention_backward)",
                  lambda: reference.attention_backward(Q, K, V, dO)),
        "blocked": (f"backward NumPy berubin (blok {block})",
                    lambda: reference.attention_backward_blocked(Q, K, V, dO, block=block)),
    }
    rows, want = {}, None
    for key, (label, fn) in methods.items():
        out, peak = _peak_cpu(fn)
        seconds, n = _time_cpu(fn, repeats, max_seconds)
        want = out if want is None else want
        err = max(_rel_err(g, w, np) for g, w in zip(out, want))
        rows[key] = {"label": label, "B": B, "T": T, "time_ms": 1e3 * seconds,
                     "peak_mib": peak / 2**20, "repeats": n, "max_rel_err": err}
    rows["memory_ratio"] = rows["blocked"]["peak_mib"] / rows["plain"]["peak_mib"]
    return rows


def _backward_lines(b):
    lines = [f"Backward, attention kausal, B = {b['plain']['B']}, H = {H}, "
             f"T = {b['plain']['T']}, d_k = {D_K}:"]
    for key in ("plain", "blocked"):
        r = b[key]
        ms = r["time_ms"]
        took = f"{id_float(ms / 1e3, 2)} s" if ms >= 1e3 else f"{_fmt_ms(ms)} ms"
        lines.append(f"  {r['label']:44s} {took:>9s}  "
                     f"memori puncak tambahan {id_float(r['peak_mib'], 1):>6s} MiB")
    # The target is stated for 12 × 1024 × 64; other sizes just report.
    at_target = (b["plain"]["B"], b["plain"]["T"]) == (1, ANDREA_T)
    lines.append(f"Memori backward berubin / biasa: {id_float(b['memory_ratio'], 3)}"
                 + (" (target ≤ 0,125)." if at_target else "."))
    return lines
