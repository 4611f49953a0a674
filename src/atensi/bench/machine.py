"""Mesin pengukuran: nama CPU, BLAS, GPU (bila CuPy melihatnya), versi pustaka.

``machine_info()`` dicatat di setiap hasil ``run`` agar tabel menyebut di mesin
apa angkanya diukur; ``_gpu_info()`` menambahkan puncak FP32 GPU.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

import numpy as np

from atensi import kernels
from atensi.bench.methods import _torch


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
