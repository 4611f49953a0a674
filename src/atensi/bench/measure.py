"""``run``: semua metode pada semua bentuk, diperiksa dulu lalu diukur.

Setiap metode diperiksa lebih dulu terhadap pembanding pada bentuk itu
(galat relatif maksimum dicatat di ``max_rel_err``, batasnya di
``tolerance``), baru kemudian diukur (:mod:`atensi.bench.timing`).
"""

from __future__ import annotations

import datetime as _dt
import time

import numpy as np

from atensi import kernels
from atensi.bench.machine import _gpu_ready, machine_info
from atensi.bench.methods import (
    D_K,
    METHODS,
    PRESETS,
    H,
    Preset,
    _callable,
    _torch,
    _torch_gpu_ok,
    flops,
)
from atensi.bench.results import SCHEMA
from atensi.bench.timing import (
    GPU_LAUNCHES,
    LATENCY_FACTOR,
    _launch_floor,
    _peak_cpu,
    _peak_gpu,
    _time_cpu,
    _time_gpu,
)
from atensi.formatting import id_bytes

# Rows whose output differs more than this from the reference are flagged.
MAX_REL_ERR = 1e-4
# PyTorch's SDPA (on a GPU: 3xTF32 tensor-core GEMMs for float32 input) sums in
# its own order: its row is held to its own, looser tolerance, so a correct torch
# row is not "SALAH".
TORCH_REL_ERR = 1e-3


def _inputs(B, T, seed=0):
    rng = np.random.default_rng(seed + 7919 * T + B)
    return tuple(rng.standard_normal((B, H, T, D_K), dtype=np.float32) for _ in range(3))


def _rel_err(got, want, xp):
    return float(xp.max(xp.abs(got - want)) / xp.max(xp.abs(want)))


def _gpu_fits(method, B, T):
    if not method.square:
        return True
    import cupy as cp

    free, _ = cp.cuda.runtime.memGetInfo()
    return 3 * B * H * T * T * 4 < 0.8 * free


def _cases(preset, device, skipped):
    """(device, B, T, [method keys]) in table order: sweep at B = 1, then larger B.
    Methods left out for memory are appended to ``skipped``."""
    gpu = device in ("auto", "gpu") and _gpu_ready()
    if device == "gpu" and not gpu:
        raise RuntimeError(
            "device='gpu' butuh GPU NVIDIA yang terlihat oleh CuPy, tetapi tidak ada. "
            "Pakai device='cpu' atau device='auto'."
        )
    batched = [(B, preset.batch_T) for B in preset.batches]
    cases = []
    if device in ("auto", "cpu"):
        shapes = {(1, T) for T in preset.sweep + preset.emulation_T} | set(batched)
        for B, T in sorted(shapes):
            keys = ["numpy_naive", "numpy_blocked", "numpy_fast"]
            if _torch() is not None:  # optional: a row only when PyTorch is there
                keys.append("torch_sdpa_cpu")
            if B * H * T * T * 4 > preset.max_square_bytes:
                keys.remove("numpy_naive")
                skipped.append({"method": "numpy_naive", "device": "cpu", "B": B, "T": T,
                                "why": f"array (B, H, T, T) lebih dari {id_bytes(preset.max_square_bytes)}"})
            if B == 1 and T in preset.emulation_T:
                if kernels.loading._cpu_available():
                    keys += ["cpu_chain_v2", "cpu_fused"]
                else:  # e.g. a GPU machine without a C++ compiler
                    skipped.extend({"method": key, "device": "cpu", "B": B, "T": T,
                                    "why": "emulasi CPU butuh g++, yang tidak ada"}
                                   for key in ("cpu_chain_v2", "cpu_fused"))
            cases.append(("cpu", B, T, keys))
    if gpu:
        keys = ["cupy_cublas", "gpu_chain_v1", "gpu_chain_v2", "gpu_chain_v3", "gpu_fused",
                "gpu_fused_v2"]
        if _torch_gpu_ok():
            keys.append("torch_sdpa")
        shapes = {(1, T) for T in preset.gpu_sweep} | set(batched)
        # Where fused v2 splits the keys (on the modelled H200, B·H·T small),
        # a row without the split shows what the split buys.
        cases += [("gpu", B, T, keys + ["gpu_fused_v2_s1"]
                   if kernels.launch.fused_splits(B * H, T) > 1 else keys)
                  for B, T in sorted(shapes)]
    return cases


def _measure_case(device, B, T, keys, preset, progress, skipped):
    Q, K, V = _inputs(B, T)
    xp = np
    if device == "gpu":
        import cupy as xp

        Q, K, V = (xp.asarray(x) for x in (Q, K, V))
    rows, want = [], None
    for key in keys:
        method = METHODS[key]
        if device == "gpu" and not _gpu_fits(method, B, T):
            skipped.append({"method": key, "device": "gpu", "B": B, "T": T,
                            "why": "memori GPU tidak cukup"})
            continue
        if progress:
            progress(f"mengukur {method.label}, B = {B}, T = {T} ...")
        fn = _callable(key, Q, K, V)
        if device == "cpu":
            # The traced run is also the warm-up (compilation, caches): the CPU
            # rows are slow, so every run counts. The memory it allocates to
            # compile is tiny next to the arrays.
            out, peak = _peak_cpu(fn)
            seconds, n = _time_cpu(fn, preset.repeats, preset.max_seconds)
        else:
            fn()  # warm-up: NVRTC compilation, memory pool, cuBLAS handles
            out, peak = _peak_gpu(fn, key == "torch_sdpa")
            if key == "torch_sdpa":
                out = xp.from_dlpack(out)
            seconds, n = _time_gpu(fn, preset.gpu_repeats)
            floor = GPU_LAUNCHES.get(key, 1) * _launch_floor()
        # The first method of the shape (naive NumPy, or cuBLAS) is the reference.
        want = out if want is None else want
        rows.append(
            {
                "method": key,
                "label": method.label,
                "device": device,
                "B": B,
                "H": H,
                "T": T,
                "d_k": D_K,
                "causal": True,
                "time_ms": seconds * 1e3,
                "gflops": flops(B, T) / seconds / 1e9,
                # tracemalloc does not see PyTorch's CPU allocator: not measured.
                "peak_mib": None if key == "torch_sdpa_cpu" else peak / 2**20,
                "repeats": n,
                "max_rel_err": _rel_err(out, want, xp),
                "tolerance": (TORCH_REL_ERR if key in ("torch_sdpa", "torch_sdpa_cpu")
                              else MAX_REL_ERR),
            }
        )
        if device == "gpu":  # near launch overhead: a latency, not a throughput
            rows[-1]["launch_floor_ms"] = floor * 1e3
            rows[-1]["latency_bound"] = seconds < LATENCY_FACTOR * floor
        del out
    fastest = min(r["time_ms"] for r in rows)
    for r in rows:
        r["ratio"] = r["time_ms"] / fastest
    return rows


def run(preset="quick", device="auto", *, progress=None):
    """Ukur semua metode; hasilnya dict ``{"machine", "date", "preset", "rows", ...}``.

    ``preset``: ``"book"`` (beberapa detik, untuk buku), ``"quick"`` (≤ 1 menit di
    CPU 2 inti), atau ``"full"``. ``device``: ``"auto"`` (CPU, ditambah GPU bila ada),
    ``"cpu"``, atau ``"gpu"``. ``progress``: fungsi yang menerima satu baris teks.
    """
    if not isinstance(preset, Preset) and preset not in PRESETS:
        raise ValueError(
            f"Argumen 'preset' harus salah satu dari {', '.join(map(repr, PRESETS))}, "
            f"tetapi yang diterima {preset!r}."
        )
    if device not in ("auto", "cpu", "gpu"):
        raise ValueError(
            f"Argumen 'device' harus 'auto', 'cpu', atau 'gpu', tetapi yang diterima {device!r}."
        )
    p = preset if isinstance(preset, Preset) else PRESETS[preset]
    start = time.perf_counter()
    rows, skipped = [], []
    for case in _cases(p, device, skipped):
        rows += _measure_case(*case, p, progress, skipped)
    machine = machine_info()
    peak = (machine["gpu"] or {}).get("fp32_peak_gflops")
    for r in rows:
        r["fp32_peak_share"] = (r["gflops"] / peak if r["device"] == "gpu" and peak
                                and not r.get("latency_bound") else None)
    return {
        "schema": SCHEMA,
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "preset": preset if isinstance(preset, str) else "custom",
        "seconds": time.perf_counter() - start,
        "machine": machine,
        "rows": rows,
        "skipped": skipped,
    }
