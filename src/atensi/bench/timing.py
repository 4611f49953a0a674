"""Mengukur satu panggilan: waktu median dan memori puncak, di CPU dan GPU.

CPU: ``time.perf_counter`` dan ``tracemalloc``. GPU: event CUDA lewat
``cupyx.profiler.benchmark`` dan *memory hook* CuPy (statistik memori PyTorch
untuk baris PyTorch). ``_launch_floor`` adalah biaya meluncurkan satu
*kernel* kosong: baris GPU di bawah ``LATENCY_FACTOR`` kali biaya itu
mengukur latensi, bukan laju.
"""

from __future__ import annotations

import functools
import statistics
import time
import tracemalloc

import numpy as np

from atensi.bench.methods import _torch


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
