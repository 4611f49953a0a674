"""Biaya atensi, diukur: ``python -m atensi.bench [--quick] [--json PATH]``.

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

Fungsi untuk bab dan skrip:
    run(preset="quick", device="auto")   → dict hasil (mesin, tanggal, baris)
    format_table(hasil, device="cpu")    → tabel teks (atau markdown=True)
    summary(hasil)                       → rasio-rasio utama tabel
    compile_and_emulation()              → waktu kompilasi NVRTC, rantai di emulasi CPU
    backward_comparison()                → backward NumPy biasa terhadap berubin
    compare_with_torch(bentuk)           → NumPy cepat terhadap PyTorch SDPA (CPU)
    save_results(hasil, path), load_results(path) → dict atau None
    caption(hasil, device="gpu")         → keterangan mesin dan tanggal

Modul ini hanya mengukur dan melaporkan. Angka yang diharapkan dari sebuah
mesin (misalnya "berubin ≥ 2× lebih cepat") adalah data, bukan bagian pustaka:
``results/targets.json``, diperiksa terhadap berkas hasil oleh
``scripts/check_targets.py``. Metode "NumPy cepat" ada di
:mod:`atensi.bench.cpu_fast`.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import os
import platform
import shutil
import statistics
import sys
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from atensi import files, kernels, reference, roofline
from atensi.kernels import launch
from atensi.arguments import Parser
from atensi.bench import cpu_fast
from atensi.formatting import id_bytes, id_float, id_sci
from atensi.result_checks import check_bench_results
from atensi.shipped import results_dir

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


def _gpu_info():
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
        info["gpu"] = _gpu_info()
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
# Results file (JSON)
# ---------------------------------------------------------------------------


SCHEMA = 1
# The committed GPU results file that the pipeline chapter renders.
GPU_RESULTS = results_dir() / "bench_gpu.json"


def save_results(results, path):
    """Tulis hasil ``run`` sebagai JSON (UTF-8, terbaca manusia)."""
    return files.write_text(path, json.dumps(results, indent=1, ensure_ascii=False) + "\n")


def load_results(path=GPU_RESULTS):
    """Hasil yang tersimpan, atau ``None`` bila berkasnya belum ada."""
    path = Path(path)
    if not path.is_file():
        return None
    remake = f"python -m atensi.bench --quick --json {path}"
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:  # ValueError: not UTF-8, or not JSON
        raise ValueError(f"Berkas {path} tidak bisa dibaca sebagai hasil atensi.bench ({err}). "
                         f"Buat ulang dengan: {remake}") from None
    if not isinstance(results, dict) or results.get("schema") != SCHEMA or "rows" not in results:
        raise ValueError(
            f"Berkas {path} bukan hasil atensi.bench (schema {SCHEMA}). Buat ulang dengan "
            f"{remake}."
        )
    return check_bench_results(results, path, remake)


def _rows(results, device):
    rows = results["rows"] if isinstance(results, dict) else list(results)
    return [r for r in rows if device is None or r["device"] == device]


# ---------------------------------------------------------------------------
# run: every method at every shape, checked first, then timed
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Tables and captions
# ---------------------------------------------------------------------------


COLUMNS = (
    "metode",
    "B",
    "T",
    "waktu median",
    "GFLOP/s",
    "memori puncak tambahan (MiB)",
    "rasio thd. tercepat",
)
FP32_COLUMN = "% puncak FP32"


def _fmt_ms(ms):
    digits = 0 if ms >= 100 else 1 if ms >= 10 else 2 if ms >= 0.1 else 3
    return id_float(ms, digits)


def _fmt_time(ms):
    """With its unit, so that '2.880' is never read as 2,88: '880 ms', '2,88 s'."""
    return f"{id_float(ms / 1e3, 2)} s" if ms >= 1e3 else f"{_fmt_ms(ms)} ms"


def _cells(r, with_fp32):
    label = r["label"]
    if r.get("max_rel_err", 0) > r.get("tolerance", MAX_REL_ERR):
        label += " [SALAH: galat relatif {:.1e}]".format(r["max_rel_err"])
    cells = [
        label,
        str(r["B"]),
        str(r["T"]),
        _fmt_time(r["time_ms"]),
        ("latensi" if r.get("latency_bound") else
         id_float(r["gflops"], 0 if r["gflops"] >= 100 else 1 if r["gflops"] >= 1 else 3)),
        "–" if r["peak_mib"] is None else id_float(r["peak_mib"], 1),
        id_float(r["ratio"], 2) + "×",
    ]
    if with_fp32:
        share = r.get("fp32_peak_share")
        cells.append("" if share is None else id_float(100 * share, 1) + " %")
    return cells


def format_table(results, device=None, *, markdown=False):
    """Tabel hasil (``results`` dari ``run``/``load_results`` atau daftar baris).

    ``device="cpu"``/``"gpu"`` memilih baris; bentuk (B, T) dipisahkan garis.
    """
    rows = _rows(results, device)
    if not rows:
        return "(tidak ada baris)"
    # Latency rows have no share, but the column stays: it says why it is empty.
    with_fp32 = any(r.get("fp32_peak_share") is not None or r.get("latency_bound")
                    for r in rows)
    header = list(COLUMNS) + ([FP32_COLUMN] if with_fp32 else [])
    body, shape = [], None
    for r in rows:
        if shape is not None and (r["B"], r["T"]) != shape and not markdown:
            body.append(None)  # separator between shapes
        shape = (r["B"], r["T"])
        body.append(_cells(r, with_fp32))
    if markdown:
        lines = ["| " + " | ".join(header) + " |"]
        lines.append("|" + "|".join([" --- "] + [" ---: "] * (len(header) - 1)) + "|")
        lines += ["| " + " | ".join(c) + " |" for c in body]
        return "\n".join(lines)
    widths = [max(len(h), *(len(c[i]) for c in body if c)) for i, h in enumerate(header)]

    def line(cells):
        first = cells[0].ljust(widths[0])
        rest = [c.rjust(w) for c, w in zip(cells[1:], widths[1:])]
        return "  ".join([first] + rest).rstrip()

    rule = "  ".join("-" * w for w in widths)
    out = [line(header), rule]
    out += [rule if c is None else line(c) for c in body]
    return "\n".join(out)


def caption(results, device="cpu"):
    """Satu kalimat: di mesin apa dan kapan tabel ini diukur."""
    m = results["machine"]
    date = results["date"][:10]
    if device == "gpu" and m.get("gpu"):
        g = m["gpu"]
        driver = g.get("nvidia_driver") or f"CUDA driver {g['cuda_driver']}"
        what = f"{g['name']} (driver {driver}, CUDA runtime {g['cuda_runtime']}, CuPy {m['cupy']})"
    else:
        what = f"{m['cpu']}, {m['cpu_cores']} inti, NumPy {m['numpy']}"
    return f"Diukur pada {what}, tanggal {date}, preset '{results['preset']}'."


# ---------------------------------------------------------------------------
# Summary, compile and emulation numbers, backward
# ---------------------------------------------------------------------------


def _find(rows, method, B, T):
    for r in rows:
        if (r["method"], r["B"], r["T"]) == (method, B, T):
            return r
    return None


def summary(results):
    """Rasio-rasio utama tabel; kunci yang datanya tidak diukur bernilai ``None``.

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
            f"cepat dari NumPy naif, memorinya "
            f"{id_float(s['cpu_blocked_memory_ratio'], 3)}× milik naif."
        )
    if s["gpu_fused_vs_v1"] is not None:
        lines.append(
            f"GPU, B=8 T=1024: fused kernel {id_float(s['gpu_fused_vs_v1'], 1)}× lebih cepat "
            "dari rantai v1."
        )
    if s["gpu_fused_vs_cublas"] is not None:
        lines.append(
            f"GPU, B=8 T=1024: fused kernel {id_float(s['gpu_fused_vs_cublas'], 2)}× kecepatan "
            "CuPy cuBLAS."
        )
    if s["gpu_fused_fp32_share"] is not None:
        lines.append(
            f"GPU: fused kernel mencapai {id_float(100 * s['gpu_fused_fp32_share'], 1)} % "
            "dari puncak FP32 GPU."
        )
    return lines


def compile_and_emulation(archs=("sm_80", "sm_90"), T=256, d_k=D_K):
    """Waktu kompilasi NVRTC semua kernel, dan rantai kernel satu
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


def _compile_lines(e, T=256):
    lines = []
    if e["compile_seconds"] is not None:
        lines.append(
            f"NVRTC: {e['compile_files']} berkas .cu × sm_80 dan sm_90 dikompilasi dalam "
            f"{id_float(e['compile_seconds'], 2)} s; spill total "
            f"{e['spill_bytes']} bita."
        )
    for label, ms in e["chain_ms"].items():
        lines.append(
            f"Emulasi CPU, satu head, T = {T}, d_k = {D_K}: attention {label} "
            f"{id_float(ms, 1)} ms."
        )
    return lines


def backward_comparison(B=1, T=ANDREA_T, *, block=128, repeats=3, max_seconds=3.0):
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
    lines.append(f"Memori backward berubin / biasa: {id_float(b['memory_ratio'], 3)}.")
    return lines


# ---------------------------------------------------------------------------
# The fast NumPy method against PyTorch on the CPU (PyTorch optional)
# ---------------------------------------------------------------------------

# The (B, T) shapes of the comparison, H = 12, d_k = 64, causal.
TORCH_SHAPES = ((1, 1024), (1, 4096), (8, 1024))


def torch_sdpa_cpu(Q, K, V, threads=None):
    """Fungsi tanpa argumen: ``scaled_dot_product_attention`` PyTorch di CPU,
    kausal, float32, masukan 4-D, dengan banyak *thread* yang sama seperti
    :func:`atensi.bench.cpu_fast.attention_cpu_fast`. PyTorch harus sudah terpasang (opsional)."""
    import torch

    torch.set_num_threads(cpu_fast.default_threads() if threads is None else int(threads))
    q, k, v = (torch.from_numpy(np.ascontiguousarray(x)) for x in (Q, K, V))
    sdpa = torch.nn.functional.scaled_dot_product_attention
    return lambda: sdpa(q, k, v, is_causal=True).numpy()


def compare_with_torch(shapes=TORCH_SHAPES, *, repeats=5, threads=None,
                       heads=12, d_k=64, seed=0):
    """Ukur attention_cpu_fast dan PyTorch SDPA (CPU) **berselang-seling**
    (kita, PyTorch, kita, PyTorch, ...) pada setiap bentuk (B, T), supaya
    beban mesin yang berubah-ubah mengenai keduanya sama rata.

    Mengembalikan daftar dict ``B, T, threads, fast_ms, torch_ms, ratio`` (median;
    ``ratio`` = waktu PyTorch / waktu kita, > 1 berarti kita lebih cepat), atau
    ``[]`` bila PyTorch tidak terpasang. Hasil keduanya diperiksa sama dulu."""
    try:
        import torch  # noqa: F401  (optional)
    except Exception:
        return []
    n = cpu_fast.default_threads() if threads is None else int(threads)
    out = []
    for B, T in shapes:
        rng = np.random.default_rng(seed + 7919 * T + B)
        Q, K, V = (rng.standard_normal((B, heads, T, d_k), dtype=np.float32)
                   for _ in range(3))
        ours = lambda: cpu_fast.attention_cpu_fast(Q, K, V, threads=n)  # noqa: E731
        theirs = torch_sdpa_cpu(Q, K, V, threads=n)
        a, b = ours(), theirs()  # warm-up, and the same answer
        err = float(np.max(np.abs(a - b)) / np.max(np.abs(b)))
        times = {"fast": [], "torch": []}
        for r in range(repeats):
            order = (("fast", ours), ("torch", theirs))
            for name, fn in (order if r % 2 == 0 else order[::-1]):
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
        fast_ms = 1e3 * float(np.median(times["fast"]))
        torch_ms = 1e3 * float(np.median(times["torch"]))
        out.append({"B": B, "T": T, "threads": n, "fast_ms": fast_ms,
                    "torch_ms": torch_ms, "ratio": torch_ms / fast_ms,
                    "max_rel_err": err, "repeats": repeats})
    return out


def torch_comparison_lines(comparison):
    """Baris ringkasan bench dari :func:`compare_with_torch`."""
    if not comparison:
        return []
    n = comparison[0]["threads"]
    lines = [f"CPU, {n} thread, berselang-seling: attention_cpu_fast terhadap PyTorch "
             "SDPA (waktu PyTorch / waktu kita, median):"]
    for c in comparison:
        lines.append(
            f"  B = {c['B']}, T = {c['T']}: {id_float(c['ratio'], 2)}× "
            f"({id_float(c['fast_ms'], 1)} ms terhadap {id_float(c['torch_ms'], 1)} ms, "
            f"selisih relatif {id_sci(c['max_rel_err'])})")
    return lines


# ---------------------------------------------------------------------------
# python -m atensi.bench
# ---------------------------------------------------------------------------


def _json_path_problem(path) -> str | None:
    """One Indonesian line when ``--json PATH`` could not be written, else None."""
    path = Path(path)
    if path.is_dir():
        return f"--json {path}: itu folder, bukan berkas. Tulis misalnya --json {path / 'bench.json'}."
    if path.exists():
        if not os.access(path, os.W_OK):
            return f"--json {path}: berkas ini tidak bisa ditulisi. Pilih path lain."
        return None
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        return f"--json {path}: {parent} bukan folder. Pilih path lain."
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"--json {path}: folder {parent} tidak bisa ditulisi. Pilih path lain."
    return None


def _main(argv=None):
    parser = Parser(
        prog="python -m atensi.bench",
        description="Ukur biaya atensi kausal (12 head, d_k = 64) di CPU dan GPU.",
        usage_line="python -m atensi.bench [--quick] [--preset P] [--device auto|cpu|gpu] "
                   "[--json BERKAS]",
    )
    parser.add_argument("--quick", action="store_true", help="preset 'quick' (≤ 1 menit di CPU)")
    parser.add_argument("--preset", choices=sorted(PRESETS), help="bawaan: full (quick dengan --quick)")
    parser.add_argument("--device", choices=("auto", "cpu", "gpu"), default="auto")
    parser.add_argument("--json", metavar="PATH", help="simpan hasil (mesin, tanggal, baris) ke PATH")
    args = parser.parse_args(argv)
    preset = args.preset or ("quick" if args.quick else "full")
    if args.json and (problem := _json_path_problem(args.json)):
        print(problem, file=sys.stderr)  # before minutes of benchmarking, not after
        return 2

    results = run(preset, args.device,
                  progress=lambda msg: print(msg, file=sys.stderr))
    for device, title in (("cpu", "CPU"), ("gpu", "GPU")):
        if _rows(results, device):
            print(f"\n{title} — attention kausal, H = {H}, d_k = {D_K}")
            print(caption(results, device))
            print(format_table(results, device))
            for s in results.get("skipped", []):
                if s["device"] == device:
                    print(f"Dilewati: {METHODS[s['method']].label}, B = {s['B']}, T = {s['T']} "
                          f"({s['why']}).")
    if not results["machine"]["gpu"]:
        print("\nTidak ada GPU yang terlihat oleh CuPy: baris GPU dilewati.")
    print()
    for line in _summary_lines(summary(results)):
        print(line)
    if args.device != "gpu":
        # The fast NumPy method against PyTorch, interleaved runs.
        p = PRESETS[preset]
        shapes = {(1, T) for T in p.sweep} | {(B, p.batch_T) for B in p.batches}
        results["cpu_vs_torch"] = compare_with_torch(
            [s for s in TORCH_SHAPES if s in shapes], repeats=p.repeats)
        for line in torch_comparison_lines(results["cpu_vs_torch"]):
            print(line)
        results["compile_and_emulation"] = compile_and_emulation()
        for line in _compile_lines(results["compile_and_emulation"]):
            print(line)
        results["backward"] = backward_comparison(T=p.batch_T)
        for line in _backward_lines(results["backward"]):
            print(line)
    print()
    for line in roofline.report_lines():  # computed, not measured: no GPU needed
        print(line)
    print()
    print(f"Lama pengukuran: {id_float(results['seconds'], 1)} s.")
    if args.json:
        print(f"Hasil disimpan di {save_results(results, args.json)}")
    bad = [r for r in results["rows"] if r["max_rel_err"] > r.get("tolerance", MAX_REL_ERR)]
    return 1 if bad else 0
