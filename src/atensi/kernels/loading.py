"""Memuat kernel: berkas ``kernels/*.cu``, pilihan backend, dan ``get_function``.

Hanya modul ini yang membaca berkas ``kernels/*.cu``. ``backend``:

    ``"cupy"``  kernel dikompilasi NVRTC dan dijalankan di GPU NVIDIA;
    ``"cpu"``   .cu yang sama dijalankan di CPU oleh :mod:`atensi.cudacpu`;
    ``None``    ``"cupy"`` bila CuPy melihat GPU, selain itu ``"cpu"``.

``get_function(file, name, backend)`` memberi *kernel* yang siap diluncurkan
(dikompilasi sekali, lalu diambil dari *cache*), dengan konstanta berkas itu
dari :mod:`atensi.kernels.registry` sebagai opsi ``-D``. Di mesin yang hanya
punya driver NVIDIA, NVRTC dan cuBLAS dari wheel pip dimuat lebih dulu untuk
CuPy (:func:`atensi.cuda_wheels.preload`).

``target(backend)`` menyebut GPU tempat kernel akan berjalan: perangkat CUDA
untuk ``"cupy"``; untuk ``"cpu"`` GPU yang dimodelkan emulator
(``ATENSI_ARCH=sm_75`` memodelkan Tesla T4, bawaannya sm_90), lengkap dengan
batas *shared memory* dan fiturnya dari :mod:`atensi.hardware`.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
from dataclasses import dataclass
from pathlib import Path

from atensi import cuda_wheels, hardware
from atensi.cudacpu import resources
from atensi.cudacpu import source as cu_source
from atensi.kernels import registry

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
        folder = Path(env).expanduser()
        if not folder.is_dir():
            raise FileNotFoundError(
                f"Variabel lingkungan ATENSI_KERNELS_DIR={env!r} tidak menunjuk ke folder "
                f"({'itu sebuah berkas' if folder.exists() else 'folder itu tidak ada'}). Setel ke "
                "folder berisi berkas .cu (kernels/ di repo), atau hapus dengan: unset "
                "ATENSI_KERNELS_DIR")
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
    origin = (" (folder dari variabel lingkungan ATENSI_KERNELS_DIR)"
              if os.environ.get("ATENSI_KERNELS_DIR") else "")
    if path.is_dir():
        raise IsADirectoryError(
            f"'{path}'{origin} adalah folder, padahal kernel '{file}' harus berupa berkas .cu. "
            "Pindahkan atau ganti nama folder itu, lalu letakkan berkas kernelnya di sana.")
    if not path.is_file():
        known = ", ".join(sorted(p.name for p in kernels_dir().glob("*.cu") if p.is_file()))
        raise FileNotFoundError(
            f"Berkas kernel '{file}' tidak ada di {kernels_dir()}{origin}. Berkas .cu yang ada: "
            f"{known or '(tidak ada)'}."
        )
    return path


def _display_name(path: Path) -> str:
    """'kernels/x.cu' for files of this repo, so compiler messages name that."""
    path = Path(path).resolve()
    try:
        return path.relative_to(kernels_dir().resolve().parent).as_posix()
    except (ValueError, FileNotFoundError):
        return str(path)


@functools.lru_cache(maxsize=None)
def gpu_status() -> tuple[bool, str]:
    """(True, name) when CuPy sees a GPU, else (False, why not)."""
    try:
        import cupy
    except ImportError:
        return False, "CuPy tidak terpasang (pip install -r requirements-gpu.txt)"
    cuda_wheels.preload()
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
            f"(dibuat untuk CUDA {cuda_wheels.cuda_major()}): driver CUDA 12 butuh cupy-cuda12x "
            "(lihat requirements-gpu.txt)"
        )
    if count < 1:
        return False, "CuPy tidak menemukan GPU"
    return True, f"{count} GPU"


def gpu_available() -> bool:
    """True bila CuPy melihat setidaknya satu GPU NVIDIA."""
    return gpu_status()[0]


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
            f"{gpu_status()[1]}. Pakai backend='cpu' (kernel yang sama dijalankan "
            "di CPU) atau backend=None."
        )
    return backend


@dataclass(frozen=True)
class Target:
    """Where a kernel would run: the architecture whose limits apply, and its name for messages."""

    arch: hardware.Arch
    name: str  # "Tesla T4", or the GPU ATENSI_ARCH models
    modelled: bool  # the CPU emulator standing in for ``arch`` (ATENSI_ARCH)


# Set while the public functions run a kernel on the CPU because the (real or
# modelled) GPU cannot: the emulator then keeps no GPU's limits but sm_90's, the
# largest.
_unmodelled = contextvars.ContextVar("atensi_unmodelled", default=False)


@contextlib.contextmanager
def unmodelled():
    """Run the CPU emulator as itself, not as the GPU ``ATENSI_ARCH`` names."""
    token = _unmodelled.set(True)
    try:
        yield
    finally:
        _unmodelled.reset(token)


_devices: dict = {}


def _device_target() -> Target:
    """The current CUDA device: its name, and its architecture from the table (or,
    for one the table lacks, from the device's own limits)."""
    from cupy.cuda import runtime

    dev = runtime.getDevice()
    if dev not in _devices:
        p = runtime.getDeviceProperties(dev)
        name = p["name"].decode() if isinstance(p["name"], bytes) else str(p["name"])
        cc = (int(p["major"]), int(p["minor"]))
        arch = hardware.arch_for(cc) or hardware.Arch(
            f"sm_{cc[0]}{cc[1]}", cc, int(p["maxThreadsPerMultiProcessor"]) // hardware.WARP_SIZE,
            int(p.get("maxBlocksPerMultiProcessor", 32)), int(p["regsPerMultiprocessor"]),
            int(p["sharedMemPerMultiprocessor"]), int(p["sharedMemPerBlockOptin"]),
            int(p.get("reservedSharedMemPerBlock", 0)))
        _devices[dev] = Target(arch, name, False)
    return _devices[dev]


def target(backend: str) -> Target:
    """The GPU ``backend`` runs kernels on: the CUDA device for ``"cupy"``; for
    ``"cpu"`` the GPU the emulator models (``ATENSI_ARCH``, default sm_90)."""
    if backend == "cupy":
        return _device_target()
    if _unmodelled.get():
        return Target(hardware.DEFAULT_ARCH, "emulator CPU", False)
    arch = resources.modelled_arch()
    if resources.ARCH_VARIABLE in os.environ and os.environ[resources.ARCH_VARIABLE]:
        return Target(arch, f"GPU {hardware.describe(arch)} yang dimodelkan "
                            f"{resources.ARCH_VARIABLE}={arch.name}", True)
    return Target(arch, "emulator CPU", False)


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
    # The emulator takes its mode and seed from the environment when a module is
    # built, so a module built under another mode or seed is not this one.
    emulator = tuple(os.environ.get(v) for v in ("ATENSI_CUDACPU_MODE", "ATENSI_CUDACPU_SEED",
                                                 "ATENSI_CUDACPU_SANITIZE"))
    if backend == "cpu":  # the GPU the emulator models enforces that GPU's limits
        emulator += (target(backend).arch.name,)
    key = (file, name, backend, os.environ.get("ATENSI_KERNELS_DIR"), emulator)
    kernel = _functions.get(key)
    if kernel is not None:
        return kernel
    backend = resolve_backend(backend)
    path = kernel_path(file)
    module = _modules.get((str(path), backend, emulator))
    if module is None:
        source = cu_source.read_cu(path)  # UTF-8 whatever the locale; a BOM dropped
        if backend == "cupy":
            cuda_wheels.preload()
            import cupy

            module = cupy.RawModule(code=source, options=NVRTC_OPTIONS + registry.defines(file))
        else:
            from atensi import cudacpu

            module = cudacpu.RawModule(code=source, path=_display_name(path),
                                       options=registry.defines(file) + (f"-arch={emulator[-1]}",))
        _modules[(str(path), backend, emulator)] = module
    kernel = _functions[key] = module.get_function(name)
    return kernel
