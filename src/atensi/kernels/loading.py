"""Memuat kernel: berkas ``kernels/*.cu``, pilihan backend, dan ``get_function``.

Hanya modul ini yang membaca berkas ``kernels/*.cu``. ``backend``:

    ``"cupy"``  kernel dikompilasi NVRTC dan dijalankan di GPU NVIDIA;
    ``"cpu"``   .cu yang sama dijalankan di CPU oleh :mod:`atensi.cudacpu`;
    ``None``    ``"cupy"`` bila CuPy melihat GPU, selain itu ``"cpu"``.

``get_function(file, name, backend)`` memberi *kernel* yang siap diluncurkan
(dikompilasi sekali, lalu diambil dari *cache*). Di mesin yang hanya punya
driver NVIDIA, NVRTC dan cuBLAS dari wheel pip dimuat lebih dulu untuk CuPy
(``_preload_cuda_wheels``).
"""

from __future__ import annotations

import ctypes
import functools
import os
from pathlib import Path

BACKENDS = ("cupy", "cpu")
# Options for every NVRTC compile (CuPy adds -arch for the GPU it runs on).
NVRTC_OPTIONS = ("-std=c++17",)


def kernels_dir() -> Path:
    """Folder berkas ``.cu``: ``$ATENSI_KERNELS_DIR``, salinan di dalam paket, atau ``kernels/`` repo.

    Wheel (``pip install`` biasa) membawa salinan ``.cu`` di ``atensi/kernels/``;
    instalasi *editable* dan repositori membaca ``kernels/`` di akar repo.
    """
    env = os.environ.get("ATENSI_KERNELS_DIR")
    here = Path(__file__).resolve()  # .../atensi/kernels/loading.py
    if env:
        folder = Path(env)
    elif any(here.parent.glob("*.cu")):
        folder = here.parent  # installed from a wheel
    else:
        folder = here.parents[3] / "kernels"  # src/atensi/kernels -> repo root
    if not folder.is_dir():
        raise FileNotFoundError(
            f"Folder kernel tidak ditemukan: {folder}. Pasang atensi dari repo "
            "(pip install -e .) atau setel ATENSI_KERNELS_DIR ke folder kernels/."
        )
    return folder


def kernel_path(file: str) -> Path:
    """Path lengkap satu berkas kernel, misalnya ``kernel_path("scores.cu")``."""
    path = kernels_dir() / file
    if not path.is_file():
        known = ", ".join(sorted(p.name for p in kernels_dir().glob("*.cu")))
        raise FileNotFoundError(
            f"Berkas kernel '{file}' tidak ada di {kernels_dir()}. Berkas yang ada: {known}."
        )
    return path


def _display_name(path: Path) -> str:
    """'kernels/x.cu' for files of this repo, so compiler messages name that."""
    path = Path(path).resolve()
    try:
        return path.relative_to(kernels_dir().resolve().parent).as_posix()
    except (ValueError, FileNotFoundError):
        return str(path)


# CUDA libraries that CuPy opens by file name only, per CUDA major version of
# the CuPy wheel, as pip wheels ship them (requirements-gpu.txt):
# (folder under nvidia/, libraries in load order). CUDA 12 wheels have one
# folder per library; CUDA 13 wheels (no -cu13 suffix) all use nvidia/cu13.
_CUDA_WHEELS = {
    12: (("cuda_nvrtc", ("libnvrtc.so.12",)),
         ("cublas", ("libcublasLt.so.12", "libcublas.so.12"))),
    13: (("cu13", ("libnvrtc.so.13",)),
         ("cu13", ("libcublasLt.so.13", "libcublas.so.13"))),
}


def _cuda_major():
    """CUDA major version CuPy was built for (12: cupy-cuda12x, 13: cupy-cuda13x)."""
    try:
        from cupy_backends.cuda.api import driver

        return driver.get_build_version() // 1000
    except Exception:  # no CuPy, or a layout this code does not know
        return None


@functools.lru_cache(maxsize=None)
def _preload_cuda_wheels() -> str:
    """Load NVRTC and cuBLAS for CuPy, when CuPy would not find them itself.

    CuPy's wheel opens libnvrtc.so.N and libcublas.so.N (N = its CUDA major
    version) by name, from the library path only; a machine with just the
    NVIDIA driver has neither there. For each library: when its name already
    loads (CUDA toolkit or a machine image that has it), CuPy finds it itself
    and nothing else happens; otherwise the pip wheel's copy is loaded
    globally first. Returns one line saying what was done, for the logs.
    """
    major = _cuda_major()
    if major not in _CUDA_WHEELS:
        return f"CuPy untuk CUDA {major}: tidak ada yang dimuat"
    import importlib.util

    spec = importlib.util.find_spec("nvidia")
    roots = list(spec.submodule_search_locations or []) if spec else []
    done = []
    for folder, libs in _CUDA_WHEELS[major]:
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


@functools.lru_cache(maxsize=None)
def _gpu_status() -> tuple[bool, str]:
    """(True, name) when CuPy sees a GPU, else (False, why not)."""
    try:
        import cupy
    except ImportError:
        return False, "CuPy tidak terpasang (pip install -r requirements-gpu.txt)"
    _preload_cuda_wheels()
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as err:  # no driver: cudaErrorInsufficientDriver and friends
        try:
            driver = cupy.cuda.runtime.driverGetVersion()  # 0: no NVIDIA driver at all
        except Exception:
            driver = 0
        if not driver:
            return False, f"CuPy tidak menemukan driver CUDA ({type(err).__name__})"
        return False, (
            f"driver CUDA {driver // 1000}.{driver % 1000 // 10} terlalu lama untuk CuPy "
            f"(dibuat untuk CUDA {_cuda_major()}): driver CUDA 12 butuh cupy-cuda12x "
            "(lihat requirements-gpu.txt)"
        )
    if count < 1:
        return False, "CuPy tidak menemukan GPU"
    return True, f"{count} GPU"


def gpu_available() -> bool:
    """True bila CuPy melihat setidaknya satu GPU NVIDIA."""
    return _gpu_status()[0]


def _cpu_available() -> bool:
    """cudacpu needs a C++ compiler (g++)."""
    from atensi.cudacpu import CudaCpuError, build

    try:
        build.compiler()
    except CudaCpuError:
        return False
    return True


def available_backends() -> list[str]:
    """Backend yang bisa dipakai di mesin ini, yang terbaik lebih dulu."""
    return (["cupy"] if gpu_available() else []) + (["cpu"] if _cpu_available() else [])


def resolve_backend(backend) -> str:
    """``None`` → backend terbaik; ``"cupy"``/``"cpu"`` diperiksa lebih dulu."""
    if backend is None:
        return "cupy" if gpu_available() else "cpu"
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ValueError(
            f"Argumen 'backend' harus None, 'cupy', atau 'cpu', tetapi yang diterima "
            f"{backend!r}. Pakai backend=None agar atensi memilih sendiri."
        )
    if backend == "cupy" and not gpu_available():
        raise RuntimeError(
            f"backend='cupy' butuh GPU NVIDIA yang terlihat oleh CuPy, tetapi: "
            f"{_gpu_status()[1]}. Pakai backend='cpu' (kernel yang sama dijalankan "
            "di CPU) atau backend=None."
        )
    return backend


_modules: dict = {}  # (path, backend) -> compiled module
_functions: dict = {}  # (file, name, backend, $ATENSI_KERNELS_DIR) -> kernel


def get_function(file: str, name: str, backend: str):
    """Kernel ``name`` dari ``kernels/<file>``, siap dipanggil.

    Hasilnya dipanggil seperti ``cupy.RawKernel``:
    ``k(grid, block, args, shared_mem=0)``, dengan ``args`` berisi array
    backend itu dan skalar ``np.int32``/``np.float32``. Berkas dibaca dan
    dikompilasi sekali per (berkas, backend), dan *kernel* dicari sekali per
    (berkas, nama, backend): panggilan berikutnya hanya mencari di dict.
    """
    key = (file, name, backend, os.environ.get("ATENSI_KERNELS_DIR"))
    kernel = _functions.get(key)
    if kernel is not None:
        return kernel
    backend = resolve_backend(backend)
    path = kernel_path(file)
    module = _modules.get((str(path), backend))
    if module is None:
        source = path.read_text()
        if backend == "cupy":
            _preload_cuda_wheels()
            import cupy

            module = cupy.RawModule(code=source, options=NVRTC_OPTIONS)
        else:
            from atensi import cudacpu

            module = cudacpu.RawModule(code=source, path=_display_name(path))
        _modules[(str(path), backend)] = module
    kernel = _functions[key] = module.get_function(name)
    return kernel
