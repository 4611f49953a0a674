"""Pustaka CUDA dari wheel pip untuk CuPy: NVRTC dan cuBLAS, dimuat sebelum CuPy mencarinya.

CuPy membuka ``libnvrtc.so.N`` dan ``libcublas.so.N`` hanya lewat namanya;
mesin yang hanya punya driver NVIDIA tidak punya keduanya di jalur pustaka.
:func:`preload` memuat salinan dari wheel pip (requirements-gpu.txt) lebih
dulu. Dipakai oleh :mod:`atensi.kernels` dan oleh :mod:`atensi.reference`
untuk array CuPy (``xp.matmul`` butuh cuBLAS), tanpa memuat kernel apa pun.
"""

from __future__ import annotations

import ctypes
import functools
from pathlib import Path

# CUDA libraries that CuPy opens by file name only, per CUDA major version of
# the CuPy wheel, as pip wheels ship them (requirements-gpu.txt):
# (folder under nvidia/, libraries in load order). CUDA 12 wheels have one
# folder per library; CUDA 13 wheels (no -cu13 suffix) all use nvidia/cu13.
WHEELS = {
    12: (("cuda_nvrtc", ("libnvrtc.so.12",)),
         ("cublas", ("libcublasLt.so.12", "libcublas.so.12"))),
    13: (("cu13", ("libnvrtc.so.13",)),
         ("cu13", ("libcublasLt.so.13", "libcublas.so.13"))),
}


def cuda_major():
    """CUDA major version CuPy was built for (12: cupy-cuda12x, 13: cupy-cuda13x)."""
    try:
        from cupy_backends.cuda.api import driver

        return driver.get_build_version() // 1000
    except Exception:  # no CuPy, or a layout this code does not know
        return None


@functools.lru_cache(maxsize=None)
def preload() -> str:
    """Load NVRTC and cuBLAS for CuPy, when CuPy would not find them itself.

    CuPy's wheel opens libnvrtc.so.N and libcublas.so.N (N = its CUDA major
    version) by name, from the library path only; a machine with just the
    NVIDIA driver has neither there. For each library: when its name already
    loads (CUDA toolkit or a machine image that has it), CuPy finds it itself
    and nothing else happens; otherwise the pip wheel's copy is loaded
    globally first. Returns one line saying what was done, for the logs.
    """
    major = cuda_major()
    if major not in WHEELS:
        return f"CuPy untuk CUDA {major}: tidak ada yang dimuat"
    import importlib.util

    spec = importlib.util.find_spec("nvidia")
    roots = list(spec.submodule_search_locations or []) if spec else []
    done = []
    for folder, libs in WHEELS[major]:
        try:
            for lib in libs:
                ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
            done.append(f"{libs[-1]} dari sistem")
            continue
        except OSError:
            pass
        for root in roots:
            paths = [Path(root) / folder / "lib" / lib for lib in libs]
            if all(path.is_file() for path in paths):
                try:
                    for path in paths:
                        ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
                    done.append(f"{libs[-1]} dari wheel nvidia/{folder}")
                except OSError:
                    pass  # CuPy then reports the missing library itself
                break
        else:
            done.append(f"{libs[-1]} tidak ada")
    return f"CuPy untuk CUDA {major}: " + ", ".join(done)
