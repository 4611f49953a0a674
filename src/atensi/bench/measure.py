"""Biaya atensi, diukur: metode, preset, mesin, dan satu pengukuran.

Setiap baris tabel adalah satu cara menghitung atensi kausal yang sama
(12 *head*, d_k = 64, seperti ANDREA-120M) pada satu bentuk (B, T):

    waktu median      median beberapa putaran hangat (CPU: time.perf_counter;
                      GPU: cupyx.profiler.benchmark, dengan event CUDA)
    GFLOP/s           FLOP berguna / waktu, FLOP = 4·B·H·T²·d_k, dibagi dua
                      untuk atensi kausal (separuh skor ada di masa depan);
                      baris GPU yang waktunya < 5 × biaya peluncuran kernel
                      ditandai "latensi" (angkanya mengukur latensi, bukan laju)
    memori puncak     bita yang dialokasikan selama satu panggilan, termasuk
                      keluaran (CPU: tracemalloc; GPU: memory hook CuPy, atau
                      statistik memori PyTorch untuk baris PyTorch)
    rasio             waktu / waktu tercepat pada bentuk (B, T) yang sama

Setiap metode diperiksa lebih dulu terhadap pembanding pada bentuk itu
(galat relatif maksimum dicatat di ``max_rel_err``), baru kemudian diukur.

    run(preset="quick", device="auto")   → dict hasil (mesin, tanggal, baris)
    backward_comparison()                → backward NumPy biasa terhadap berubin
    machine_info(), gpu_info()           → mesin yang mengukur

Tabel, ringkasan, dan berkas hasil ada di :mod:`atensi.bench.report`; baris
perintahnya di :mod:`atensi.bench.cli`; metode "NumPy cepat" di
:mod:`atensi.bench.cpu_fast`.
"""

from __future__ import annotations

import datetime as _dt
import functools
import os
import platform
import statistics
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from atensi import kernels, reference
from atensi.kernels import launch
from atensi.bench import cpu_fast
from atensi.formatting import id_bytes

# ---------------------------------------------------------------------------
# Methods and presets: what is measured, at which sizes
# ---------------------------------------------------------------------------


H, D_K = 12, 64  # ANDREA-120M: 12 heads of d_k = 64
ANDREA_T = 1024


@dataclass(frozen=True)
class Method:
    key: str
    label: str
    device: str  # "cpu" or "gpu"
    square: bool  # allocates (B, H, T, T) arrays: skipped when those would not fit


METHODS = {
    m.key: m
    for m in (
        Method("numpy_naive", "NumPy naif (reference.attention)", "cpu", True),
        Method("numpy_blocked", "NumPy berubin (attention_blocked)", "cpu", False),
        Method("numpy_fast", "NumPy cepat (attention_cpu_fast)", "cpu", False),
        Method("torch_sdpa_cpu", "PyTorch scaled_dot_product_attention (CPU)", "cpu", False),
        Method("cpu_chain_v2", "rantai kernel v2, emulasi CPU", "cpu", True),
        Method("cpu_fused", "fused kernel, emulasi CPU", "cpu", False),
        Method("gpu_chain_v1", "rantai kernel v1 (GPU)", "gpu", True),
        Method("gpu_chain_v2", "rantai kernel v2, terbaik (GPU)", "gpu", True),
        Method("gpu_chain_v3", "rantai kernel v3: softmax dan jumlah V melewati masa depan (GPU)",
               "gpu", True),
        Method("gpu_fused", "fused kernel (GPU)", "gpu", False),
        Method("gpu_fused_v2", "fused kernel v2, struktur FlashAttention-2 (GPU)", "gpu", False),
        Method("gpu_fused_v2_s1", "fused kernel v2 tanpa split-K, splits = 1 (GPU)", "gpu",
               False),
        Method("cupy_cublas", "CuPy cuBLAS (cp.matmul + elementwise)", "gpu", True),
        # On sm_80+ its float32 path runs the GEMMs on tensor cores with a
        # 3xTF32 split (FP32-accurate, whatever allow_tf32 says): it is not a
        # CUDA-core FP32 baseline, and the label says so.
        Method("torch_sdpa", "PyTorch scaled_dot_product_attention (GPU: tensor core, 3xTF32)",
               "gpu", False),
    )
}


@dataclass(frozen=True)
class Preset:
    sweep: tuple  # T values at B = 1
    batches: tuple  # larger B values, at T = batch_T
    emulation_T: tuple  # T values for the CPU-emulation rows (slow: small T only)
    repeats: int  # timed runs on the CPU (median of these)
    gpu_repeats: int
    max_seconds: float  # stop repeating a CPU measurement after this long
    max_square_bytes: int  # skip a "square" CPU method whose (B, H, T, T) array is larger
    gpu_sweep: tuple = (256, 512, 1024, 2048, 4096, 8192)  # the GPU is fast enough for all
    batch_T: int = ANDREA_T


PRESETS = {
    # For the book build: a few seconds on a 2-core CPU, where the chapter runs
    # while other chapters do. T = 1024 is ANDREA's (the summary reads it); the
    # emulated kernels run at T = 64, a sixteenth of the work at T = 256 (about
    # 1 s a call), enough to show they are right and can be timed.
    "book": Preset((256, 1024), (), (64,), 3, 20, 1.0, 2**30),
    "quick": Preset((256, 512, 1024, 2048), (8,), (256,), 3, 20, 3.0, 2**30),
    "full": Preset((256, 512, 1024, 2048, 4096, 8192), (8,), (256,), 7, 100, 30.0, 2**30),
    # For the tests: every kind of row, in about a second.
    "tiny": Preset((256,), (2,), (32,), 1, 2, 1.0, 2**30, gpu_sweep=(256,), batch_T=48),
}


def flops(B, T, d_k=D_K, heads=H, *, causal=True):
    """FLOP berguna satu attention: 2·T²·d untuk Q Kᵀ, 2·T²·d untuk A V, per head."""
    total = 4 * B * heads * T * T * d_k
    return total / 2 if causal else total


def _torch():
    """PyTorch when importable (optional, never a dependency of atensi)."""
    try:
        import torch
    except Exception:
        return None
    return torch


def _chain(Qd, Kd, Vd, version, backend):
    """The kernel chain scores → softmax → weighted_sum, launched without the
    per-call validation of kernels.attention (inputs are known good here), so
    the GPU rows time the kernels and nothing else."""
    return launch.launch_attention(Qd, Kd, Vd, impl=f"chain-{version}", causal=True,
                                   scale=True, backend=backend)


def _fused(Qd, Kd, Vd, backend, version="v1", splits=None):
    return launch.launch_fused(Qd, Kd, Vd, causal=True, scale=True, backend=backend,
                               version=version, splits=splits)


def _callable(key, Q, K, V):
    """A zero-argument function computing causal attention with method ``key``."""
    if key == "numpy_naive":
        return lambda: reference.attention(Q, K, V)
    if key == "numpy_blocked":
        return lambda: reference.attention_blocked(Q, K, V)
    if key == "numpy_fast":
        return lambda: cpu_fast.attention_cpu_fast(Q, K, V)
    if key == "torch_sdpa_cpu":  # same threads as numpy_fast
        return torch_sdpa_cpu(Q, K, V)
    if key == "cpu_chain_v2":
        return lambda: _chain(Q, K, V, "v2", "cpu")
    if key == "cpu_fused":
        return lambda: _fused(Q, K, V, "cpu")
    if key == "gpu_chain_v1":
        return lambda: _chain(Q, K, V, "v1", "cupy")
    if key == "gpu_chain_v2":
        return lambda: _chain(Q, K, V, "v2", "cupy")
    if key == "gpu_chain_v3":
        return lambda: _chain(Q, K, V, "v3", "cupy")
    if key == "gpu_fused":
        return lambda: _fused(Q, K, V, "cupy")
    if key == "gpu_fused_v2":  # splits=None: split-K when B·H·T is small
        return lambda: _fused(Q, K, V, "cupy", "v2")
    if key == "gpu_fused_v2_s1":
        return lambda: _fused(Q, K, V, "cupy", "v2", splits=1)
    if key == "cupy_cublas":
        return lambda: reference.attention(Q, K, V)  # cp.matmul + CuPy elementwise
    if key == "torch_sdpa":
        torch = _torch()
        q, k, v = (torch.from_dlpack(x) for x in (Q, K, V))
        sdpa = torch.nn.functional.scaled_dot_product_attention
        # Plain TF32 off for any cuBLAS path; the memory-efficient SDPA kernel
        # still uses 3xTF32 tensor-core GEMMs on float32, independent of this.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        return lambda: sdpa(q, k, v, is_causal=True)
    raise ValueError(f"Metode tidak dikenal: {key!r}. Pilihan: {', '.join(METHODS)}.")


def _torch_gpu_ok():
    torch = _torch()
    try:
        return torch is not None and torch.cuda.is_available()
    except Exception:
        return False



def torch_sdpa_cpu(Q, K, V, threads=None):
    """Fungsi tanpa argumen: ``scaled_dot_product_attention`` PyTorch di CPU,
    kausal, float32, masukan 4-D, dengan banyak *thread* yang sama seperti
    :func:`atensi.bench.cpu_fast.attention_cpu_fast`. PyTorch harus sudah terpasang (opsional)."""
    import torch

    torch.set_num_threads(cpu_fast.default_threads() if threads is None else int(threads))
    q, k, v = (torch.from_numpy(np.ascontiguousarray(x)) for x in (Q, K, V))
    sdpa = torch.nn.functional.scaled_dot_product_attention
    return lambda: sdpa(q, k, v, is_causal=True).numpy()



# ---------------------------------------------------------------------------
# The machine: CPU, BLAS, GPU, library versions
# ---------------------------------------------------------------------------


def _cpu_name():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _blas_name():
    try:
        config = np.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]
        return f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    except Exception:
        return None


def _gpu_ready():
    return kernels.gpu_available()


# FP32 lanes per SM by compute capability (CUDA programming guide, arithmetic throughput).
_FP32_LANES = {(6, 0): 64, (7, 0): 64, (7, 2): 64, (7, 5): 64, (8, 0): 64}


def _fp32_lanes(major, minor):
    if (major, minor) in _FP32_LANES:
        return _FP32_LANES[(major, minor)]
    return 128 if major >= 6 else None


def gpu_info():
    import cupy as cp

    props = cp.cuda.runtime.getDeviceProperties(0)
    name = props["name"]
    name = name.decode() if isinstance(name, bytes) else str(name)
    major, minor = int(props["major"]), int(props["minor"])
    sms = int(props["multiProcessorCount"])
    # CUDA 13 dropped clockRate from cudaDeviceProp; the attribute exists in 12 and 13.
    clock_khz = cp.cuda.runtime.deviceGetAttribute(cp.cuda.runtime.cudaDevAttrClockRate, 0)
    lanes = _fp32_lanes(major, minor)
    peak = 2 * lanes * sms * clock_khz * 1e3 / 1e9 if lanes and clock_khz else None

    def version(v):
        return f"{v // 1000}.{(v % 1000) // 10}"

    info = {
        "name": name,
        "compute_capability": f"{major}.{minor}",
        "sm_count": sms,
        "clock_mhz": clock_khz / 1e3 if clock_khz else None,
        "memory_gib": round(props["totalGlobalMem"] / 2**30, 1),
        "fp32_peak_gflops": peak,
        "cuda_driver": version(cp.cuda.runtime.driverGetVersion()),
        "cuda_runtime": version(cp.cuda.runtime.runtimeGetVersion()),
        "nvidia_driver": None,
    }
    try:
        import subprocess

        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20,
        )
        if out.returncode == 0:
            info["nvidia_driver"] = out.stdout.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        pass
    return info


def machine_info():
    """Mesin pengukuran: CPU, GPU (bila CuPy melihatnya), versi pustaka."""
    info = {
        "cpu": _cpu_name(),
        "cpu_cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "blas": _blas_name(),
        "threads_env": {
            k: os.environ[k]
            for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
            if k in os.environ
        },
        "cupy": None,
        "torch": None,
        "gpu": None,
    }
    try:
        import cupy

        info["cupy"] = cupy.__version__
    except ImportError:
        pass
    if _gpu_ready():
        info["gpu"] = gpu_info()
    torch = _torch()
    if torch is not None:
        info["torch"] = torch.__version__
    return info


# ---------------------------------------------------------------------------
# One call: median time and peak memory, on the CPU and the GPU
# ---------------------------------------------------------------------------


def _time_cpu(fn, repeats, max_seconds):
    """Median wall time (s) of up to ``repeats`` warm runs, at least one."""
    times = []
    start = time.perf_counter()
    while len(times) < repeats:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if time.perf_counter() - start > max_seconds:
            break
    return statistics.median(times), len(times)


def _peak_cpu(fn):
    """(result, peak bytes allocated during fn) — NumPy reports its arrays to tracemalloc."""
    tracemalloc.start()
    try:
        out = fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return out, peak


def _peak_gpu(fn, torch_row):
    """(result, peak bytes the call took from the memory pool)."""
    if torch_row:
        torch = _torch()
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        out = fn()
        torch.cuda.synchronize()
        return out, torch.cuda.max_memory_allocated() - before

    import cupy as cp

    class PeakHook(cp.cuda.MemoryHook):
        name = "atensi_peak"

        def __init__(self):
            self.now = self.peak = 0

        def malloc_postprocess(self, **kw):
            self.now += kw["mem_size"]
            self.peak = max(self.peak, self.now)

        def free_postprocess(self, **kw):
            self.now -= kw["mem_size"]

    hook = PeakHook()
    with hook:
        out = fn()
        cp.cuda.get_current_stream().synchronize()
    return out, hook.peak


def _time_gpu(fn, repeats):
    """Median GPU time of ``fn`` in seconds: CUDA events recorded on the stream
    around each call (cupyx.profiler.benchmark), so host time before the first
    launch is not counted; kernels are compiled and looked up once (warm-up)."""
    from cupyx.profiler import benchmark

    result = benchmark(fn, n_repeat=repeats, n_warmup=3, max_duration=20.0)
    return float(np.median(result.gpu_times[0])), len(result.gpu_times[0])


# Kernel launches per call of each GPU method (cuBLAS path: matmuls and CuPy
# elementwise kernels), and how many launch times a row must take before its
# GFLOP/s mean anything: below that it measures latency, not throughput.
# gpu_fused_v2: 2 where it splits the keys (partials, then the combine).
GPU_LAUNCHES = {"gpu_chain_v1": 4, "gpu_chain_v2": 3, "gpu_chain_v3": 3, "gpu_fused": 1,
                "gpu_fused_v2": 2, "gpu_fused_v2_s1": 1, "cupy_cublas": 8, "torch_sdpa": 1}
LATENCY_FACTOR = 5


@functools.lru_cache(maxsize=None)
def _launch_floor():
    """GPU time (s) of launching one empty kernel, timed like the rows."""
    import cupy as cp

    noop = cp.RawKernel('extern "C" __global__ void atensi_noop() {}', "atensi_noop")
    return _time_gpu(lambda: noop((1,), (32,), ()), 200)[0]


# ---------------------------------------------------------------------------
# run: every method at every shape, checked first, then timed
# ---------------------------------------------------------------------------


# Rows whose output differs more than this from the reference are flagged.
MAX_REL_ERR = 1e-4
# PyTorch's SDPA (on a GPU: 3xTF32 tensor-core GEMMs for float32 input) sums in
# its own order: its row is held to its own, looser tolerance, so a correct torch
# row is not "SALAH".
TORCH_REL_ERR = 1e-3

# The version of the results dict that ``run`` returns and the report reads.
SCHEMA = 1



def inputs(B, T, seed=0):
    """Q, K, V acak berbenih, float32 (B, 12, T, 64): sama untuk setiap metode pada bentuk itu."""
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
    Q, K, V = inputs(B, T)
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



def backward_comparison(B=1, T=ANDREA_T, *, block=128, repeats=3, max_seconds=3.0):
    """Baris *backward*: NumPy biasa (``reference.attention_backward``)
    terhadap berubin (``attention_backward_blocked``), attention kausal
    B × 12 × T × 64, diukur seperti baris CPU lain: memori puncak tambahan
    dengan tracemalloc (termasuk dQ, dK, dV), lalu median waktu. Keduanya mulai
    dari Q, K, V, dO saja (yang berubin menghitung sendiri O dan lse-nya)."""
    Q, K, V = (x.reshape(B * H, T, D_K) for x in inputs(B, T))
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


