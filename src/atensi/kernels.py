"""Kernel CUDA dari ``kernels/*.cu``, dipanggil seperti fungsi NumPy.

Modul ini satu-satunya yang memuat berkas ``kernels/*.cu``. Nama dan argumen
fungsinya sama dengan :mod:`atensi.reference`, ditambah ``backend``:

    scores(Q, K, *, scale=True, causal=False, version="v2", backend=None)
        S = Q Kᵀ · scale, bentuk (..., T, T). ``causal=True`` memakai varian
        dengan mask kausal yang menyatu (v2) atau v1 lalu kernel mask (v1).
    causal_mask(S, *, backend=None)
        Salinan baru S dengan -inf di j > i; S tidak diubah.
    softmax(S, axis=-1, *, causal=False, version="v2", backend=None)
        Softmax per baris (hanya sumbu terakhir). ``causal=True`` (v2, S
        berbentuk (..., T, T)): j > i bobotnya 0 tanpa S dibaca di sana.
    weighted_sum(A, V, *, causal=False, version="v1", backend=None)
        O = A V, bentuk (..., T, d_k). v2: diubin seperti GEMM; ``causal=True``
        menganggap A[i, j] = 0 untuk j > i dan melewati ubin masa depan.
    attention(Q, K, V, *, causal=True, scale=True, version="v2", fused=False,
              fused_version="v1", backend=None)
        Rantai scores → softmax → weighted_sum tanpa bolak-balik ke host;
        ``version="v3"``: scores v2, softmax v2 kausal, weighted_sum v2
        (bila kausal, masa depan dilewati di ketiga langkah);
        ``fused=True`` memakai satu *fused kernel* (kernels/attention_fused.cu);
        ``fused_version="v2"``: struktur FlashAttention-2, d_k <= 64.
    available_backends()      backend yang bisa dipakai di mesin ini
    compile_report(path)      kompilasi NVRTC + laporan ptxas (register, spill, okupansi)
    ptxas_table()             tabel ptxas semua kernel untuk sm_80 dan sm_90

Versi kernel: ``version="v1"`` (paling sederhana) atau ``"v2"`` (lebih cepat).

``backend``:
    ``"cupy"``  kernel dikompilasi NVRTC dan dijalankan di GPU NVIDIA;
    ``"cpu"``   .cu yang sama dijalankan di CPU oleh :mod:`atensi.cudacpu`;
    ``None``    ``"cupy"`` bila CuPy melihat GPU, selain itu ``"cpu"``.

Array NumPy masuk → array NumPy keluar; array CuPy masuk → array CuPy keluar
(data dipindah seperlunya bila backend berbeda). Sebelum *kernel* diluncurkan,
masukan diperiksa: float32, C-contiguous, rank ≥ 2 (softmax: ≥ 1), bentuk yang cocok, ukuran
yang didukung, tanpa NaN/inf. Kesalahan dilaporkan dalam bahasa Indonesia.

Pemeriksaan itu ada di :mod:`atensi.validation` (dipakai juga oleh
:mod:`atensi.reference`): skor yang akan melampaui float32, flag yang bukan
bool, ukuran keluaran yang tidak muat di memori, dan pekerjaan yang terlalu
besar untuk emulasi CPU (``ATENSI_CPU_BUDGET``) juga ditolak sebelum peluncuran.

Untuk modul lain di atensi (``bench``, *fused kernel*), bagian-bagian kecil di
bawah boleh dipakai langsung: ``get_function(file, name, backend)``,
``resolve_backend``, ``_check_array``, ``_check_qkv``, ``_check_finite``,
``_check_d_k_limit``, ``_to_backend``, ``_like_input``, dan peluncur
``_launch_scores``, ``_launch_causal_mask``, ``_launch_softmax``,
``_launch_weighted_sum`` (array backend yang sudah diperiksa).

Kompilasi dari baris perintah: ``python -m atensi.kernels kernels/scores.cu``.
"""

from __future__ import annotations

import ctypes
import functools
import math
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

BACKENDS = ("cupy", "cpu")
# Options for every NVRTC compile (CuPy adds -arch for the GPU it runs on).
NVRTC_OPTIONS = ("-std=c++17",)
# Launch limits of CUDA grids. Read at every launch, so a test can lower them
# to check that the kernels' loops over heads/rows cover everything.
MAX_GRID_X = 2**31 - 1
MAX_GRID_YZ = 65535
_INT32_MAX = 2**31 - 1

SCORES_TILE = 16  # must match SCORES_TILE in kernels/scores.cu
SCORES_VERSIONS = {"v1": "scores_v1_naive", "v2": "scores_v2_tiled"}
SCORES_CAUSAL = "scores_v2_tiled_causal"
SOFTMAX_VERSIONS = {"v1": "softmax_v1_shared", "v2": "softmax_v2_warp"}
CAUSAL_MASK = "causal_mask_v1"
WEIGHTED_SUM = "weighted_sum_v1"
WEIGHTED_SUM_BLOCK = (32, 8, 1)
SOFTMAX_CAUSAL = "softmax_v2_warp_causal"
WEIGHTED_SUM_VERSIONS = {"v1": WEIGHTED_SUM, "v2": "weighted_sum_v2_tiled"}
WEIGHTED_SUM_CAUSAL = "weighted_sum_v2_tiled_causal"
WEIGHTED_SUM_V2_TILE = 64  # WS_BM = WS_BN in kernels/weighted_sum.cu
WEIGHTED_SUM_V2_THREADS = 256  # WS_THREADS
# attention(version=...): (scores/softmax version, softmax causal variant,
# weighted_sum version).
ATTENTION_VERSIONS = {"v1": ("v1", False, "v1"), "v2": ("v2", False, "v1"),
                      "v3": ("v2", True, "v2")}

# Largest T each launch shape allows: grid.y = ceil(T / rows per block) <= 65535.
MAX_T = {
    "scores": SCORES_TILE * 65535,
    "causal_mask": 16 * 65535,
    "weighted_sum": WEIGHTED_SUM_BLOCK[1] * 65535,
}


# ---------------------------------------------------------------------------
# Locating and compiling the .cu files
# ---------------------------------------------------------------------------


def kernels_dir() -> Path:
    """Folder ``kernels/``: ``$ATENSI_KERNELS_DIR`` atau ``kernels/`` di akar repo.

    (Untuk instalasi yang bukan editable: ``atensi/kernels/`` di dalam paket,
    bila berkasnya ikut dikemas.)
    """
    env = os.environ.get("ATENSI_KERNELS_DIR")
    if env:
        folder = Path(env)
    else:
        here = Path(__file__).resolve()
        folder = here.parents[2] / "kernels"
        if not folder.is_dir() and (here.parent / "kernels").is_dir():
            folder = here.parent / "kernels"
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


# ---------------------------------------------------------------------------
# NVRTC compile report (no GPU needed)
# ---------------------------------------------------------------------------


class CompileError(RuntimeError):
    """Kompilasi NVRTC gagal; pesannya memuat log kompiler (``berkas(baris): error``)."""

    def __init__(self, path, log):
        self.path = path
        self.log = log
        super().__init__(f"Kompilasi {path} oleh NVRTC gagal:\n{log}")


@dataclass
class KernelResources:
    """Sumber daya satu kernel menurut ptxas."""

    registers: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    stack_frame: int = 0
    shared_bytes: int = 0
    barriers: int = 0
    threads: int = 0  # threads per block used for the occupancy figure
    occupancy: float = 0.0  # theoretical: resident warps / max warps per SM


@dataclass
class CompileReport:
    """Hasil :func:`compile_report`: log ptxas dan angka per kernel."""

    path: str
    arch: str
    options: tuple
    seconds: float
    log: str
    kernels: dict = field(default_factory=dict)

    @property
    def spill_bytes(self) -> int:
        return sum(k.spill_stores + k.spill_loads for k in self.kernels.values())

    def __str__(self):
        shown = [o for o in self.options if not o.startswith("-I")]
        folders = len(self.options) - len(shown)  # CuPy's -I folders: long paths
        lines = [f"{self.path} ({self.arch}, {self.seconds:.2f} s): {' '.join(shown)}"
                 + (f" (+{folders} folder -I dari CuPy)" if folders else "")]
        for name, k in self.kernels.items():
            lines.append(
                f"  {name}: {k.registers} register, {k.shared_bytes} byte shared memory, "
                f"spill {k.spill_stores}+{k.spill_loads} byte, stack {k.stack_frame} byte, "
                f"okupansi {round(100 * k.occupancy)} % ({k.threads} thread/block)"
            )
        return "\n".join(lines)


_ENTRY = re.compile(r"Compiling entry function '(\w+)'")
_FRAME = re.compile(
    r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads"
)
_USED = re.compile(r"Used (\d+) registers")
_BARRIERS = re.compile(r"used (\d+) barriers")
_SMEM = re.compile(r"(\d+) bytes smem")


def _parse_ptxas(log: str) -> dict:
    kernels, current = {}, None
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            current = kernels.setdefault(m.group(1), KernelResources())
        elif current is None:
            continue
        elif m := _FRAME.search(line):
            current.stack_frame, current.spill_stores, current.spill_loads = map(
                int, m.groups()
            )
        elif m := _USED.search(line):
            current.registers = int(m.group(1))
            if b := _BARRIERS.search(line):
                current.barriers = int(b.group(1))
            if s := _SMEM.search(line):
                current.shared_bytes = int(s.group(1))
    return kernels


def compile_report(path, *, arch: str = "sm_90") -> CompileReport:
    """Kompilasi satu berkas .cu dengan NVRTC (tanpa GPU) dan baca laporan ptxas.

    Opsi kompilasinya sama dengan yang ditambahkan CuPy saat ``RawModule``
    (lihat ``_cupy_options``: ``-ftz=true``, folder *include*,
    ``--device-as-default-execution-space``), ditambah ``-Xptxas=-v``; jadi
    angka register dan *spill* adalah milik biner yang benar-benar berjalan.
    Setiap kernel juga diberi okupansi teoretis (:func:`occupancy`). ``arch`` berupa ``sm_XX`` agar ptxas ikut berjalan dan melaporkan register,
    *shared memory*, dan *spill*. Gagal → :class:`CompileError` dengan log
    kompiler, misalnya ``kernels/x.cu(12): error: ...``.
    """
    path = Path(path)
    if not path.is_absolute() and not path.exists():
        path = kernels_dir().parent / path
    if not re.fullmatch(r"sm_\d+a?", arch):
        raise ValueError(
            f"Argumen 'arch' harus berbentuk 'sm_XX' (misalnya 'sm_90'), tetapi yang "
            f"diterima {arch!r}. Dengan 'compute_XX' ptxas tidak berjalan dan tidak ada laporan."
        )
    _preload_cuda_wheels()
    try:
        from cupy.cuda import nvrtc

        nvrtc.getVersion()
    except Exception as err:
        raise RuntimeError(
            f"NVRTC tidak bisa dimuat ({err}). Pasang dengan "
            "pip install -r requirements-dev.txt (cupy-cuda12x dan nvidia-cuda-nvrtc-cu12)."
        ) from err
    name = _display_name(path)
    options = _cupy_options(arch) + ("-Xptxas=-v",)
    start = time.perf_counter()
    program = nvrtc.createProgram(path.read_text(), name, [], [])
    try:
        try:
            nvrtc.compileProgram(program, list(options))
            failed = False
        except nvrtc.NVRTCError:
            failed = True
        log = nvrtc.getProgramLog(program).rstrip("\x00")
    finally:
        nvrtc.destroyProgram(program)
    seconds = time.perf_counter() - start
    if failed:
        raise CompileError(name, log)
    found = _parse_ptxas(log)
    for kernel, res in found.items():
        res.threads = KERNEL_THREADS.get(kernel, 256)
        res.occupancy = occupancy(res, arch)
    return CompileReport(name, arch, options, seconds, log, found)


# Threads per block each launcher uses (softmax: its largest block), for the
# occupancy figure of compile_report; other kernels count as 256.
KERNEL_THREADS = {
    "attention_fused_d32": 128, "attention_fused_d64": 128,
    "attention_fused_d128": 128, "softmax_v1_shared": 256, "softmax_v2_warp": 256,
    "attention_fused_v2_d32": 128, "attention_fused_v2_d64": 128,
}
# Per-SM limits (CUDA C++ Programming Guide, compute capabilities table):
# (max warps, max blocks, registers, shared bytes usable by blocks).
_SM_LIMITS = {"sm_80": (64, 32, 65536, 164 * 1024), "sm_90": (64, 32, 65536, 228 * 1024)}


def occupancy(res: KernelResources, arch: str = "sm_90") -> float:
    """Okupansi teoretis: *warp* yang bisa tinggal di satu SM / batasnya.

    Dibatasi oleh jumlah *thread*, register (dialokasikan per *warp* dalam
    kelipatan 256) dan *shared memory* (kelipatan 128 byte, ditambah 1 KiB
    cadangan sistem per *block*). Arsitektur lain dihitung seperti sm_90.
    """
    max_warps, max_blocks, regs_sm, smem_sm = _SM_LIMITS.get(arch, _SM_LIMITS["sm_90"])
    warps = _ceil_div(max(res.threads, 1), 32)
    blocks = min(max_blocks, max_warps // warps)
    if res.registers:
        per_warp = _ceil_div(res.registers * 32, 256) * 256
        blocks = min(blocks, (regs_sm // per_warp) // warps)
    smem = _ceil_div(res.shared_bytes + 1024, 128) * 128
    blocks = min(blocks, smem_sm // smem)
    return blocks * warps / max_warps


def ptxas_table(files=None, archs=("sm_80", "sm_90")) -> str:
    """Tabel ptxas semua kernel: register, *shared memory*, *spill*, okupansi per arsitektur.

    ``files``: berkas .cu (bawaan: semua di ``kernels/``). Angkanya dari
    :func:`compile_report`, jadi dari biner dengan opsi CuPy.
    """
    files = files or sorted(kernels_dir().glob("*.cu"))
    header = ("kernel", "arch", "register", "shared (byte)", "spill (byte)", "okupansi")
    rows = []
    for file in files:
        for arch in archs:
            for name, k in sorted(compile_report(file, arch=arch).kernels.items()):
                rows.append((name, arch, str(k.registers), str(k.shared_bytes),
                             str(k.spill_stores + k.spill_loads),
                             f"{round(100 * k.occupancy)} %"))
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                       for i, (c, w) in enumerate(zip(r, widths))).rstrip()
             for r in [header] + rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _cupy_options(arch: str) -> tuple:
    """The options ``cupy.RawModule`` compiles a kernel with (CuPy 13 and 14).

    Read from CuPy's compiler: our NVRTC_OPTIONS, then its include folders
    (``cupy/_core/include``, its CCCL copy, CUDA_PATH/include, the
    nvidia-cuda-runtime wheel's headers), ``-ftz=true``, ``-arch=sm_XX``, and
    ``--device-as-default-execution-space`` for NVRTC 12 and later; so the
    register and spill figures are those of the binary that runs.
    """
    import cupy
    from cupy.cuda import compiler, nvrtc

    include = Path(cupy.__file__).parent / "_core" / "include"
    options = [f"-I{include / 'cupy' / '_cccl' / lib}" for lib in ("cub", "thrust", "libcudacxx")
               if (include / "cupy" / "_cccl" / lib).is_dir()]
    options += list(NVRTC_OPTIONS) + [f"-I{include}"]
    cuda_path = cupy.cuda.get_cuda_path()
    if cuda_path and Path(cuda_path, "include").is_dir():
        options.append(f"-I{Path(cuda_path, 'include')}")
    options.append("-ftz=true")
    try:
        options += compiler._get_extra_include_dir_opts()
    except Exception:  # private helper: absent or changed in another CuPy version
        pass
    options.append(f"-arch={arch}")
    if nvrtc.getVersion()[0] >= 12:
        options.append("--device-as-default-execution-space")
    return tuple(options)


# ---------------------------------------------------------------------------
# Validation (before anything is launched)
# ---------------------------------------------------------------------------


# The checks live in atensi.validation (shared with atensi.reference); the old
# names stay importable from here for bench and the tests.
from atensi import validation as _v  # noqa: E402
from atensi.validation import (  # noqa: E402,F401
    check_array as _check_array,
    check_finite as _check_finite,
    check_int32 as _check_int32,
    check_qkv as _check_qkv,
    check_same_kind as _check_same_kind,
    check_square as _check_square,
    check_d_k_limit as _check_d_k_limit,
    check_version as _check_version,
    kind as _kind,
    leading as _leading,
    xp_name as _xp_name,
)


def _check_T_limit(T: int, step: str):
    _v.check_T_limit(T, step, MAX_T[step])


def _to_backend(x, backend: str):
    """The array on the backend's side: NumPy for 'cpu', CuPy for 'cupy'."""
    if backend == "cupy":
        import cupy

        return cupy.ascontiguousarray(cupy.asarray(x))
    return x.get() if _kind(x) == "cupy" else x


def _like_input(y, x):
    """Give ``y`` back as the same kind of array as the user's input ``x``."""
    if _kind(x) == _kind(y):
        return y
    if _kind(x) == "cupy":
        import cupy

        return cupy.asarray(y)
    return y.get()


def _empty(shape, backend: str):
    if backend == "cupy":
        import cupy

        return cupy.empty(shape, dtype=cupy.float32)
    return np.empty(shape, dtype=np.float32)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


# ---------------------------------------------------------------------------
# Launchers: backend arrays in, already validated
# ---------------------------------------------------------------------------


def _scale_factor(d_k: int, scale: bool) -> np.float32:
    # Exactly the engine's 1.0f / sqrtf(d_k): IEEE float32 sqrt and division.
    return np.float32(1.0) / np.sqrt(np.float32(d_k)) if scale else np.float32(1.0)


def _launch_scores(Qd, Kd, Sd, H, T, d_k, *, scale, causal, version,
                   backend):
    fused_mask = causal and version == "v2"
    name = SCORES_CAUSAL if fused_mask else SCORES_VERSIONS[version]
    tiles = _ceil_div(T, SCORES_TILE)
    grid = (tiles, tiles, min(H, MAX_GRID_YZ))
    block = (SCORES_TILE, SCORES_TILE, 1)
    args = (Qd, Kd, Sd, np.int32(H), np.int32(T), np.int32(d_k),
            _scale_factor(d_k, scale))
    get_function("scores.cu", name, backend)(grid, block, args)
    if causal and version == "v1":
        # v1 has no fused variant: mask in place with the separate kernel.
        _launch_causal_mask(Sd, Sd, H, T, backend=backend)
    return Sd


def _launch_causal_mask(Sd, Od, H, T, *, backend):
    tiles = _ceil_div(T, 16)
    grid = (tiles, tiles, min(H, MAX_GRID_YZ))
    args = (Sd, Od, np.int32(H), np.int32(T))
    get_function("causal_mask.cu", CAUSAL_MASK, backend)(grid, (16, 16, 1), args)
    return Od


def _softmax_block(n: int) -> int:
    """Next power of two >= n, clamped to [32, 256]: a multiple of 32 as v2 needs."""
    return max(32, min(256, 1 << (n - 1).bit_length()))


def _launch_softmax(Sd, Ad, rows, n, *, version, backend, causal=False):
    # causal: rows = H*T, n = T; only the v2 kernel has a causal variant.
    grid = (min(rows, MAX_GRID_X), 1, 1)
    block = (_softmax_block(n), 1, 1)
    args = (Sd, Ad, np.int32(rows), np.int32(n))
    name = SOFTMAX_CAUSAL if causal else SOFTMAX_VERSIONS[version]
    get_function("softmax.cu", name, backend)(grid, block, args)
    return Ad


def _launch_weighted_sum(Ad, Vd, Od, H, T, d_k, *, backend, version="v1",
                         causal=False):
    if version == "v2":
        tile = WEIGHTED_SUM_V2_TILE
        grid = (_ceil_div(d_k, tile), _ceil_div(T, tile), min(H, MAX_GRID_YZ))
        block = (WEIGHTED_SUM_V2_THREADS, 1, 1)
        name = WEIGHTED_SUM_CAUSAL if causal else WEIGHTED_SUM_VERSIONS["v2"]
    else:  # v1 multiplies every weight, masked or not
        bx, by, _ = block = WEIGHTED_SUM_BLOCK
        grid = (_ceil_div(d_k, bx), _ceil_div(T, by), min(H, MAX_GRID_YZ))
        name = WEIGHTED_SUM
    args = (Ad, Vd, Od, np.int32(H), np.int32(T), np.int32(d_k))
    get_function("weighted_sum.cu", name, backend)(grid, block, args)
    return Od


# ---------------------------------------------------------------------------
# Public functions (same names as atensi.reference)
# ---------------------------------------------------------------------------


def scores(Q, K, *, scale=True, causal=False, version="v2", backend=None):
    """Matriks skor ``Q Kᵀ`` (dikali ``1/√d_k`` bila ``scale``), bentuk ``(..., T, T)``.

    ``causal=True`` sekaligus menulis -inf di j > i: v2 memakai kernel
    ``scores_v2_tiled_causal`` (ubin yang seluruhnya di masa depan tidak
    dihitung), v1 menjalankan kernel mask sesudahnya.
    """
    backend = resolve_backend(backend)
    scale = _v.check_flag(scale, "scale")
    causal = _v.check_flag(causal, "causal")
    _check_version(version, SCORES_VERSIONS)
    H, T, d_k = _check_qkv(Q, K)
    _check_T_limit(T, "scores")
    _v.check_output_bytes(4.0 * H * T * T, f"Matriks skor {H} × {T} × {T} (float32)",
                          "Pakai attention(..., fused=True), yang tidak pernah membuat "
                          "matriks (T, T), atau kecilkan T.", _kind(Q))
    _v.check_cpu_work(float(H) * T * T * d_k, "scores", backend)
    Qd, Kd = _to_backend(Q, backend), _to_backend(K, backend)
    Sd = _empty(Q.shape[:-1] + (T,), backend)
    _launch_scores(Qd, Kd, Sd, H, T, d_k, scale=scale, causal=causal, version=version,
                   backend=backend)
    return _like_input(Sd, Q)


def causal_mask(S, *, backend=None):
    """Array baru: salinan ``S`` dengan -inf di setiap j > i. ``S`` tidak diubah.

    Nilai di j <= i disalin apa adanya (bit demi bit). NaN dan +inf ditolak
    lebih dulu; -inf boleh (sudah ditutup mask).
    """
    backend = resolve_backend(backend)
    H, T = _check_square(S, "S")
    _check_T_limit(T, "causal_mask")
    _check_finite(S, "S", allow_neg_inf=True)
    _v.check_output_bytes(float(S.nbytes), f"Salinan S {tuple(S.shape)}",
                          "Kecilkan T, atau pakai scores(..., causal=True).", _kind(S))
    _v.check_cpu_work(float(H) * T * T, "causal_mask", backend)
    Sd = _to_backend(S, backend)
    Od = _empty(S.shape, backend)
    _launch_causal_mask(Sd, Od, H, T, backend=backend)
    return _like_input(Od, S)


def softmax(S, axis=-1, *, causal=False, version="v2", backend=None):
    """Softmax per baris pada sumbu terakhir. Baris yang seluruhnya -inf → nol.

    ``S`` boleh berbentuk apa saja ``(..., n)``; -inf boleh (hasil mask), NaN
    dan +inf ditolak. ``causal=True`` (hanya v2, ``S`` berbentuk ``(..., T, T)``):
    kernel ``softmax_v2_warp_causal`` memberi bobot 0 pada j > i tanpa membaca
    ``S`` di sana, seolah-olah S sudah dimask.
    """
    backend = resolve_backend(backend)
    causal = _v.check_flag(causal, "causal")
    _check_version(version, SOFTMAX_VERSIONS)
    if causal and version != "v2":
        raise ValueError(
            f"softmax(..., causal=True) hanya ada untuk version='v2' "
            f"(kernel softmax_v2_warp_causal), tetapi yang diterima version={version!r}. "
            "Pakai version='v2', atau mask dulu S dengan causal_mask(S)."
        )
    _check_array(S, "S", min_ndim=1, layout="(..., n)")
    if causal:
        _check_square(S, "S")
    if (isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer))
            or axis not in (-1, S.ndim - 1)):
        raise ValueError(
            f"Kernel softmax hanya mendukung axis=-1 (sumbu terakhir, satu baris per block), "
            f"tetapi yang diterima axis={axis!r} untuk S berdimensi {S.ndim}. Pindahkan dulu "
            f"sumbunya: {_xp_name(S)}.ascontiguousarray({_xp_name(S)}.moveaxis(S, {axis}, -1))."
        )
    n = S.shape[-1]
    rows = S.size // n
    _check_int32(n, "Panjang baris softmax n")
    _check_int32(rows, "Jumlah baris")
    _v.check_output_bytes(float(S.nbytes), f"Keluaran softmax {tuple(S.shape)}",
                          "Kecilkan T, atau pakai attention(..., fused=True).", _kind(S))
    _v.check_cpu_work(float(S.size), "softmax", backend)
    _check_finite(S, "S", allow_neg_inf=True)
    Sd = _to_backend(S, backend)
    Ad = _empty(S.shape, backend)
    _launch_softmax(Sd, Ad, rows, n, version=version, backend=backend, causal=causal)
    return _like_input(Ad, S)


def weighted_sum(A, V, *, causal=False, version="v1", backend=None):
    """Keluaran ``A V`` dengan A ``(..., T, T)`` dan V ``(..., T, d_k)``.

    ``version="v2"``: kernel diubin seperti GEMM (ubin 64 × 64 di *shared
    memory*, 4 × 4 keluaran per *thread*). ``causal=True`` (hanya v2): A[i, j]
    untuk j > i dianggap 0 dan tidak dibaca; ubin masa depan dilewati.
    """
    backend = resolve_backend(backend)
    causal = _v.check_flag(causal, "causal")
    _check_version(version, WEIGHTED_SUM_VERSIONS)
    if causal and version != "v2":
        raise ValueError(
            f"weighted_sum(..., causal=True) hanya ada untuk version='v2' "
            f"(kernel {WEIGHTED_SUM_CAUSAL}), tetapi yang diterima version={version!r}. "
            "Pakai version='v2'; v1 selalu mengalikan seluruh A."
        )
    H, T = _check_square(A, "A")
    _check_array(V, "V")
    _check_same_kind(A=A, V=V)
    if V.shape[:-1] != A.shape[:-1]:
        raise ValueError(
            f"'V' harus berbentuk (..., T, d_k) dengan sumbu depan dan T yang sama dengan "
            f"'A' (..., T, T), tetapi yang diterima A.shape = {tuple(A.shape)} dan "
            f"V.shape = {tuple(V.shape)}."
        )
    d_k = V.shape[-1]
    _check_T_limit(T, "weighted_sum")
    _v.check_cpu_work(float(H) * T * T * d_k, "weighted_sum", backend)
    _check_finite(A, "A")
    _check_finite(V, "V")
    Ad, Vd = _to_backend(A, backend), _to_backend(V, backend)
    Od = _empty(V.shape, backend)
    _launch_weighted_sum(Ad, Vd, Od, H, T, d_k, backend=backend, version=version,
                         causal=causal)
    return _like_input(Od, V)


def attention(Q, K, V, *, causal=True, scale=True, version="v2", fused=False,
              fused_version="v1", backend=None):
    """Satu *attention head* utuh dengan kernel: ``softmax(mask(Q Kᵀ/√d_k)) V``.

    ``version`` dipakai untuk scores dan softmax ("v1", "v2"); ``"v3"`` adalah
    v2 ditambah softmax kausal dan weighted_sum v2 (diubin), sehingga bila
    ``causal`` ketiga langkah melewati masa depan. Semua hasil antara tetap di
    backend (di GPU untuk ``"cupy"``). ``fused=True``: satu *fused kernel*
    dengan *online softmax*, tanpa matriks (T, T); ``fused_version="v2"``
    memakai struktur FlashAttention-2 (``attention_fused_v2_dD``, d_k <= 64).
    """
    backend = resolve_backend(backend)
    causal = _v.check_flag(causal, "causal")
    scale = _v.check_flag(scale, "scale")
    fused = _v.check_flag(fused, "fused")
    version, causal_softmax, ws_version = _check_version(version, ATTENTION_VERSIONS)
    _v.check_version(fused_version, FUSED_VERSIONS, "fused_version")
    max_d_k, kernel_name = FUSED_LIMITS[fused_version]
    H, T, d_k = _check_qkv(Q, K, V, max_d_k=max_d_k if fused else None,
                           kernel=kernel_name)
    work = float(H) * T * T * d_k * (1 if causal else 2)
    if fused:
        _v.check_cpu_work(work / 8, "attention(..., fused=True)", backend)
        Qd, Kd, Vd = (_to_backend(x, backend) for x in (Q, K, V))
        Od = _attention_fused(Qd, Kd, Vd, causal=causal, scale=scale, backend=backend,
                              version=fused_version)
        return _like_input(Od, Q)
    _check_T_limit(T, "scores")
    _check_T_limit(T, "weighted_sum")
    _v.check_output_bytes(8.0 * H * T * T, f"Skor dan bobot {H} × {T} × {T} (float32, dua array)",
                          "Pakai attention(..., fused=True), yang tidak pernah membuat "
                          "matriks (T, T), atau kecilkan T.", _kind(Q))
    _v.check_cpu_work(work, "attention", backend)
    Qd, Kd, Vd = (_to_backend(x, backend) for x in (Q, K, V))
    Sd = _empty(Q.shape[:-1] + (T,), backend)
    _launch_scores(Qd, Kd, Sd, H, T, d_k, scale=scale, causal=causal, version=version,
                   backend=backend)
    Ad = _empty(Sd.shape, backend)
    _launch_softmax(Sd, Ad, H * T, T, version=version, backend=backend,
                    causal=causal and causal_softmax)
    Od = _empty(V.shape, backend)
    _launch_weighted_sum(Ad, Vd, Od, H, T, d_k, backend=backend, version=ws_version,
                         causal=causal and ws_version == "v2")
    return _like_input(Od, Q)


# --- issue 6: fused kernel (kernels/attention_fused.cu) ----------------------
FUSED_MAX_D_K = 128  # must match FUSED_MAX_DK in kernels/attention_fused.cu
FUSED_THREADS = 128  # FUSED_THREADS in the .cu
# (largest d_k, kernel, query rows per block): the first that holds d_k is used.
# Rows per block = 128 / P threads per row (P = 2, or 4 for the widest rows).
FUSED_VARIANTS = (
    (32, "attention_fused_d32", 64),
    (64, "attention_fused_d64", 64),
    (128, "attention_fused_d128", 32),
)
# v2 (FlashAttention-2 structure, issue 12 §3): 4 warps, 64 query rows per block.
FUSED_V2_MAX_D_K = 64
FUSED_V2_ROWS = 64  # FV2_BQ in the .cu
FUSED_V2_VARIANTS = ((32, "attention_fused_v2_d32"), (64, "attention_fused_v2_d64"))
FUSED_VERSIONS = {"v1": "attention_fused_dD", "v2": "attention_fused_v2_dD"}
# fused_version -> (largest d_k, kernel named in the error when d_k is larger)
FUSED_LIMITS = {"v1": (FUSED_MAX_D_K, "attention_fused"),
                "v2": (FUSED_V2_MAX_D_K, "attention_fused_v2")}


def _aligned16(x) -> bool:
    """The array's data starts on a 16-byte boundary (float4 loads allowed)."""
    ptr = x.data.ptr if _kind(x) == "cupy" else x.ctypes.data
    return ptr % 16 == 0


def _attention_fused(Qd, Kd, Vd, *, causal, scale, backend, version="v1"):
    """Launch ``attention_fused_dD`` (v1) or ``attention_fused_v2_dD`` (v2):
    online softmax, no (T, T) array.

    Q, K, V arrive validated by ``_check_qkv`` and on the backend, shape
    ``(..., T, d_k)``; the output has the same shape, on the same backend.
    """
    T, d_k = Qd.shape[-2], Qd.shape[-1]
    H = _leading(Qd.shape)
    if version == "v2":
        _check_d_k_limit(d_k, FUSED_V2_MAX_D_K, "attention_fused_v2")
        name = next(n for width, n in FUSED_V2_VARIANTS if d_k <= width)
        Od = _empty(Qd.shape, backend)
        # float4 loads only when every row starts 16-byte aligned.
        vec = d_k % 4 == 0 and all(_aligned16(x) for x in (Qd, Kd, Vd, Od))
        grid = (_ceil_div(T, FUSED_V2_ROWS), min(H, MAX_GRID_YZ), 1)
        args = (Qd, Kd, Vd, Od, np.int32(T), np.int32(d_k), np.int32(H),
                _scale_factor(d_k, scale), np.int32(bool(causal)), np.int32(vec))
        get_function("attention_fused.cu", name, backend)(grid, (FUSED_THREADS, 1, 1), args)
        return Od
    _check_d_k_limit(d_k, FUSED_MAX_D_K, "attention_fused")
    name, rows = next((n, r) for width, n, r in FUSED_VARIANTS if d_k <= width)
    Od = _empty(Qd.shape, backend)
    grid = (_ceil_div(T, rows), min(H, MAX_GRID_YZ), 1)
    args = (Qd, Kd, Vd, Od, np.int32(T), np.int32(d_k), np.int32(H),
            _scale_factor(d_k, scale), np.int32(bool(causal)))
    get_function("attention_fused.cu", name, backend)(grid, (FUSED_THREADS, 1, 1), args)
    return Od


# ---------------------------------------------------------------------------


def _cli_file_problem(file: str):
    """One Indonesian line when ``file`` cannot be compiled, else None.

    Relative paths are read from the current folder, never silently from
    somewhere else; when the name exists in kernels/, the line says so.
    """
    path = Path(file)
    if not path.exists():
        hint = ""
        other = kernels_dir().parent / path
        if not path.is_absolute() and other.is_file():
            hint = f" Maksud Anda {other}? Jalankan dari akar repo atau tulis path lengkapnya."
        return f"Berkas '{file}' tidak ada (dicari dari folder {Path.cwd()}).{hint}"
    if path.is_dir():
        return f"'{file}' adalah folder, bukan berkas .cu. Sebutkan berkasnya, misalnya {file}/scores.cu."
    try:
        path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        return (f"Berkas '{file}' bukan teks UTF-8 (byte tak sah di posisi {err.start}). "
                "Simpan ulang sebagai UTF-8.")
    except OSError as err:
        return f"Berkas '{file}' tidak bisa dibaca: {err.strerror}."
    return None


def _main(argv=None) -> int:
    import argparse

    class _Parser(argparse.ArgumentParser):
        def error(self, message):  # one Indonesian line instead of argparse's usage text
            print(f"python -m atensi.kernels: argumen tidak sah ({message}). "
                  "Pemakaian: python -m atensi.kernels [--arch sm_XX | --tabel] [berkas.cu ...]",
                  file=sys.stderr)
            raise SystemExit(2)

    parser = _Parser(
        prog="python -m atensi.kernels",
        description="Kompilasi kernel dengan NVRTC dan tampilkan laporan ptxas.",
    )
    parser.add_argument("files", nargs="*", help="berkas .cu (bawaan: semua di kernels/)")
    parser.add_argument("--arch", default="sm_90", help="arsitektur, misalnya sm_80 (bawaan sm_90)")
    parser.add_argument("--tabel", action="store_true",
                        help="satu tabel ptxas untuk sm_80 dan sm_90 (register, shared, spill, okupansi)")
    args = parser.parse_args(argv)
    if args.tabel:
        try:
            print(ptxas_table(args.files or None))
        except Exception as err:  # NVRTC missing, a compile error: one line
            first = str(err).splitlines()[0] if str(err) else type(err).__name__
            print(f"Tabel ptxas gagal: {first}", file=sys.stderr)
            return 1
        return 0
    if not re.fullmatch(r"sm_\d+a?", args.arch):
        print(f"Argumen '--arch' harus berbentuk 'sm_XX' (misalnya sm_90), tetapi yang "
              f"diterima {args.arch!r}.", file=sys.stderr)
        return 2
    try:
        files = args.files or sorted(str(p) for p in kernels_dir().glob("*.cu"))
    except FileNotFoundError as err:
        print(str(err).splitlines()[0], file=sys.stderr)
        return 1
    status = 0
    for file in files:
        problem = _cli_file_problem(file)
        if problem:
            print(problem, file=sys.stderr)
            status = 1
            continue
        try:
            report = compile_report(Path(file).resolve(), arch=args.arch)
        except CompileError as err:
            print(err, file=sys.stderr)
            status = 1
            continue
        except Exception as err:  # NVRTC missing and the like: one line, no traceback
            first = str(err).splitlines()[0] if str(err) else type(err).__name__
            print(f"Kompilasi {file} gagal: {first}", file=sys.stderr)
            status = 1
            continue
        print(report)
        print(report.log)
    return status


if __name__ == "__main__":
    sys.exit(_main())
else:
    # The backward chain lives in its own module and is public here as
    # atensi.kernels.attention_backward. Not under `python -m atensi.kernels`:
    # this file is __main__ then, and the import would load it a second time.
    from atensi.kernels_backward import attention_backward  # noqa: E402,F401
