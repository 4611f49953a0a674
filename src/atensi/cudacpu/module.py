"""RawModule / RawKernel: load a .cu compiled for the CPU and launch it.

The call shape is CuPy's: ``kernel(grid, block, args, shared_mem=0)``.
Launch configurations a GPU would refuse are refused here too.
"""

from __future__ import annotations

import ctypes
import os
import threading
import time
from pathlib import Path

import numpy as np

from .. import environment, hardware
from . import args as _args
from . import build, guards, profiling, resources, source
from .errors import BarrierDeadlockError, CudaCpuError, LaunchConfigError

MODES = ("fibers", "threads", "shuffle")
SANITIZERS = ("address", "thread")
# CUDA limits (compute capability 7.0 and newer), from the hardware table.
MAX_BLOCK = hardware.MAX_BLOCK_DIM
MAX_THREADS_PER_BLOCK = hardware.MAX_THREADS_PER_BLOCK
MAX_GRID = hardware.MAX_GRID_DIM
DEFAULT_DYN_SMEM = hardware.DEFAULT_SHARED_PER_BLOCK  # without cudaFuncSetAttribute
# The most a kernel may opt into: sm_90 (H100/H200), the largest of all
# architectures; cuda_cpu.h sizes its dynamic shared buffer (kMaxDynSmem) the same.
MAX_DYN_SMEM = hardware.SM_90.max_shared_per_block
# CUDA threads one CPU launch may run (grid blocks × block threads): about
# 10⁸ take tens of seconds here. ATENSI_CUDACPU_MAX_THREADS changes it.
MAX_CPU_THREADS = 2**31

# The cancel flag of a library stops every launch running on it, so it is raised
# only while the interrupted launch is the library's only one, and no other
# launch starts on it until the flag is lowered again.
_launches = threading.Condition()
_running: dict[int, int] = {}   # id(library) -> launches running on it
_cancelling: set[int] = set()   # id(library) whose cancel flag is up


def resolve_mode(mode: str | None, sanitize: str | None) -> tuple[str, str | None]:
    """Apply defaults (also from ATENSI_CUDACPU_MODE / ATENSI_CUDACPU_SANITIZE) and check."""
    if sanitize is None:
        sanitize = environment.choice("ATENSI_CUDACPU_SANITIZE", (*SANITIZERS, "none"))
    if sanitize in ("", "none"):
        sanitize = None
    if sanitize is not None and sanitize not in SANITIZERS:
        raise ValueError(f"sanitize harus None, 'address' atau 'thread', bukan {sanitize!r}.")
    if mode is None:  # "thread" alone means real threads; mode="fibers" opts into TSan fibers
        mode = environment.choice("ATENSI_CUDACPU_MODE", MODES) or (
            "threads" if sanitize == "thread" else "fibers")
    if mode not in MODES:
        raise ValueError(f"mode harus 'fibers', 'threads' atau 'shuffle', bukan {mode!r}.")
    return mode, sanitize


def runtime_loaded(sanitize: str) -> bool:
    """Is the sanitizer runtime already in this process (LD_PRELOAD)?"""
    name = {"address": "libasan", "thread": "libtsan"}[sanitize]
    try:
        return name in Path("/proc/self/maps").read_text()
    except OSError:
        return name in os.environ.get("LD_PRELOAD", "")


def _load(path: Path) -> ctypes.CDLL:
    return build.load_library(path)


def max_cpu_threads() -> int:
    return environment.integer("ATENSI_CUDACPU_MAX_THREADS", MAX_CPU_THREADS, low=1)


def _dims(label: str, value) -> tuple[int, int, int]:
    vals = value if isinstance(value, tuple) else (value,)
    if not 1 <= len(vals) <= 3 or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                                          for v in vals):
        raise TypeError(
            f"'{label}' harus int atau tuple berisi 1 sampai 3 int (seperti di CuPy), tetapi yang "
            f"diterima {value!r}."
        )
    return tuple(int(v) for v in vals) + (1,) * (3 - len(vals))


def check_launch(kernel: str, grid, block) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    g, b = _dims("grid", grid), _dims("block", block)
    for label, dims, limits in (("grid", g, MAX_GRID), ("block", b, MAX_BLOCK)):
        for axis, v, lim in zip("xyz", dims, limits):
            if not 1 <= v <= lim:
                raise LaunchConfigError(
                    f"Peluncuran kernel '{kernel}' ditolak: {label}.{axis} = {v}, padahal GPU menerima "
                    f"1 sampai {lim}. (Di GPU, CuPy akan melapor CUDA_ERROR_INVALID_VALUE.)"
                )
    threads = b[0] * b[1] * b[2]
    if threads > MAX_THREADS_PER_BLOCK:
        raise LaunchConfigError(
            f"Peluncuran kernel '{kernel}' ditolak: block {b} berisi {threads} thread, padahal satu block "
            f"paling banyak {MAX_THREADS_PER_BLOCK} thread. (Di GPU, CuPy akan melapor "
            f"CUDA_ERROR_INVALID_VALUE.)"
        )
    total = g[0] * g[1] * g[2] * threads
    if total > max_cpu_threads():
        raise LaunchConfigError(
            f"Peluncuran kernel '{kernel}' ditolak: grid {g} × block {b} = {total} thread CUDA, "
            f"terlalu banyak untuk dijalankan di CPU (batas {max_cpu_threads()}; bisa berjam-jam). "
            "Jalankan di GPU (backend='cupy') atau kecilkan masukannya; batasnya bisa diubah "
            "dengan ATENSI_CUDACPU_MAX_THREADS."
        )
    return g, b


class _AsanCopies:
    """Copy array arguments into exactly-sized heap buffers for the launch.

    NumPy buffers may be bigger than the array (small-allocation cache,
    slices of a larger base), so a read one past the end would land in valid
    memory. malloc under AddressSanitizer puts a poisoned red zone right after
    the last byte.
    """

    def __init__(self, packed: _args.Packed):
        libc = ctypes.CDLL(None)
        memalign, self._free = libc.posix_memalign, libc.free
        memalign.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_size_t]
        self._free.argtypes = [ctypes.c_void_p]
        self._bufs: dict[tuple[int, int], list] = {}
        for _, param, arr, holder in packed.arrays:
            key = (arr.ctypes.data, arr.nbytes)
            if key not in self._bufs:
                buf = ctypes.c_void_p()
                if memalign(ctypes.byref(buf), 64, arr.nbytes) != 0:  # 64: float4 loads stay aligned
                    self.finish(copy_back=False)
                    raise MemoryError(f"posix_memalign({arr.nbytes}) gagal.")
                buf = buf.value or 0
                ctypes.memmove(buf, arr.ctypes.data, arr.nbytes)
                self._bufs[key] = [buf, arr, False]
            self._bufs[key][2] |= not param.const
            holder[0] = self._bufs[key][0]

    def finish(self, copy_back: bool) -> None:
        for buf, arr, written in self._bufs.values():
            if copy_back and written:
                ctypes.memmove(arr.ctypes.data, buf, arr.nbytes)
            self._free(buf)
        self._bufs.clear()


def check_options(options) -> tuple:
    """CuPy-style ``options`` as a tuple: one str, or a list/tuple of them."""
    if isinstance(options, str):
        return (options,)
    try:
        return tuple(options)
    except TypeError:
        raise TypeError(f"Argumen 'options' harus tuple berisi str (opsi kompilasi, misalnya "
                        f"('-DTILE=32',)), tetapi yang diterima {type(options).__name__}.") from None


def build_library(code: str, *, path: str = "<kode-cuda>", mode: str | None = None,
                  sanitize: str | None = None, options=()) -> tuple[Path, bool, dict]:
    """Compile ``code`` (or find it in the cache) without loading it.

    Returns (library path, compiled now?, kernels found). Also fine for a
    sanitized build, e.g. to compile before starting a sanitizer subprocess.
    """
    if not isinstance(code, str):
        raise TypeError(f"Argumen 'code' harus str berisi kode CUDA C, bukan "
                        f"{type(code).__name__}.")
    options = check_options(options)
    mode, sanitize = resolve_mode(mode, sanitize)
    decls = source.find_kernels(code)
    tu = source.translation_unit(code, path, decls)
    lib, compiled = build.build(tu, path=path, flags=build.flags_for(mode, sanitize, options))
    return lib, compiled, decls


class RawKernel:
    """One ``__global__`` function; call it like ``cupy.RawKernel``."""

    def __init__(self, module: "RawModule", decl: source.KernelDecl):
        self.module = module
        self.name = decl.name
        lib = module._lib
        sig = getattr(lib, f"cudacpu_signature__{decl.name}")
        sig.restype = ctypes.c_char_p
        self.params = _args.parse_signature(sig().decode(), decl.param_names)
        self._launch = getattr(lib, f"cudacpu_launch__{decl.name}")
        self._launch.argtypes = [ctypes.POINTER(ctypes.c_uint), ctypes.c_ulonglong, ctypes.c_void_p]
        self._launch.restype = ctypes.c_int
        self._max_dyn = DEFAULT_DYN_SMEM
        bound = getattr(lib, f"cudacpu_max_threads__{decl.name}")
        bound.restype = ctypes.c_uint
        self._bound = decl.max_threads is not None
        self._max_threads = min(int(bound()), MAX_THREADS_PER_BLOCK)

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    @property
    def max_dynamic_shared_size_bytes(self) -> int:
        return self._max_dyn

    @max_dynamic_shared_size_bytes.setter
    def max_dynamic_shared_size_bytes(self, value: int) -> None:
        if not isinstance(value, (int, np.integer)) or not 0 <= value <= MAX_DYN_SMEM:
            raise ValueError(f"max_dynamic_shared_size_bytes harus int 0..{MAX_DYN_SMEM}, bukan {value!r}.")
        self._max_dyn = int(value)

    @property
    def max_threads_per_block(self) -> int:
        """Most threads per block: 1024, or less under ``__launch_bounds__`` (as in CuPy)."""
        return self._max_threads

    def __repr__(self) -> str:
        sig = ", ".join(f"{p.ctype} {p.name}" for p in self.params)
        return f"<cudacpu.RawKernel {self.name}({sig}) mode={self.module.mode}>"

    def __call__(self, grid, block, args, *, shared_mem=0) -> None:
        g, b = check_launch(self.name, grid, block)
        if b[0] * b[1] * b[2] > self._max_threads:
            raise LaunchConfigError(
                f"Peluncuran kernel '{self.name}' ditolak: block {b} berisi {b[0] * b[1] * b[2]} thread, "
                f"padahal kernel '{self.name}' dideklarasikan dengan __launch_bounds__("
                f"{self._max_threads}), jadi satu block paling banyak {self._max_threads} thread. Di GPU, "
                "peluncuran ini gagal dengan cudaErrorLaunchOutOfResources (CuPy: "
                "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, \"too many resources requested for launch\"). "
                f"Kecilkan block, atau naikkan angka __launch_bounds__ kernel ini."
            )
        if not isinstance(shared_mem, (int, np.integer)) or isinstance(shared_mem, bool) or shared_mem < 0:
            raise TypeError(f"'shared_mem' harus int >= 0 (jumlah byte), bukan {shared_mem!r}.")
        if shared_mem > self._max_dyn:
            raise LaunchConfigError(
                f"Peluncuran kernel '{self.name}' ditolak: shared_mem={shared_mem} byte melebihi batas "
                f"{self._max_dyn} byte. Di GPU, lebih dari 48 KiB harus diizinkan dulu lewat "
                f"kernel.max_dynamic_shared_size_bytes (maksimal {MAX_DYN_SMEM})."
            )
        threads, arch = b[0] * b[1] * b[2], self.module.arch
        if resources.could_be_refused(threads, int(shared_mem), arch):
            resources.check_launch(self.name, self.module.kernel_uses().get(self.name), threads,
                                   int(shared_mem), arch)
        packed = _args.pack(self.params, args, self.name)
        cfg = (ctypes.c_uint * 6)(*g, *b)
        prof = profiling.current()
        if prof is not None and self.module.sanitize is None:  # inside atensi.cudacpu.profile()
            profiling.run(self, cfg, int(shared_mem), packed, prof)
            return
        if self.module.mode == "shuffle":
            self.module._lib.cudacpu_set_seed(ctypes.c_ulonglong(self.module.seed))
        copies = _AsanCopies(packed) if self.module.sanitize == "address" else None
        # Without AddressSanitizer, guard bytes around each array catch a write past
        # its ends before it damages the Python heap (ThreadSanitizer builds too).
        guarded = guards.GuardedCopies(packed) if copies is None else None
        rc, msg = -1, ""
        try:
            rc, msg = self._run(cfg, int(shared_mem), packed.argv)
        finally:
            if copies is not None:
                copies.finish(copy_back=rc == 0)
            if guarded is not None:
                guarded.finish(self.name, self.module.path)
        if rc != 0:
            if self.module.mode == "threads" and msg.startswith("Gagal membuat"):
                msg = (f"{msg.rstrip('.')}. Mode \"threads\" memakai satu thread OS per thread "
                       f"CUDA ({b[0] * b[1] * b[2]} per block), dan batas proses ini (ulimit -u, "
                       "batas pids container, atau memori untuk stack 1 MiB per thread) tidak "
                       "mengizinkannya. Pakai mode=\"fibers\" (bawaan, semua thread CUDA dalam "
                       "satu thread OS), kecilkan block, atau naikkan batasnya.")
            raise (BarrierDeadlockError if rc == 1 else CudaCpuError)(msg)

    def _call(self, cfg, smem, argv) -> tuple[int, str]:
        """One launch; the error text is read in the same OS thread (it is thread-local)."""
        key = id(self.module._lib)
        with _launches:
            while key in _cancelling:
                _launches.wait()
            _running[key] = _running.get(key, 0) + 1
        try:
            rc = self._launch(cfg, smem, argv)
            msg = "" if rc == 0 else (self.module._lib.cudacpu_last_error() or b"").decode(
                errors="replace")
        finally:
            with _launches:
                _running[key] -= 1
                _launches.notify_all()
        return rc, msg

    def _run(self, cfg, smem, argv) -> tuple[int, str]:
        """Launch, cancellable with Ctrl-C.

        A foreign call cannot be interrupted, so in the main thread the launch
        runs in a helper thread while the main thread waits; KeyboardInterrupt
        there sets the library's cancel flag, which the launch checks between
        blocks, and is raised again once the launch has stopped.

        The wait is on an event the helper sets when it returns, not on
        ``Thread.join``: an interrupted ``join`` (CPython 3.11) marks a thread
        that is still running as stopped, and the launch would then go on
        writing into arrays that the caller frees.
        """
        if threading.current_thread() is not threading.main_thread() or self.module.sanitize:
            return self._call(cfg, smem, argv)
        result: list = []
        errors: list = []
        done = threading.Event()

        def target():
            try:
                result.append(self._call(cfg, smem, argv))
            except BaseException as err:  # pragma: no cover - ctypes errors
                errors.append(err)
            finally:
                done.set()

        worker = threading.Thread(target=target, name=f"cudacpu-{self.name}", daemon=True)
        try:
            worker.start()
        except RuntimeError:  # no thread to spare (a process limit): run here, not cancellable
            return self._call(cfg, smem, argv)
        try:
            while not done.wait(0.1):
                pass
        except KeyboardInterrupt:
            if self._cancel_until(done):
                raise KeyboardInterrupt(
                    f"Kernel '{self.name}' dihentikan (Ctrl-C): block yang belum berjalan "
                    "dilewati, jadi array keluarannya tidak lengkap."
                ) from None
            raise KeyboardInterrupt(
                f"Kernel '{self.name}' dihentikan (Ctrl-C) sesudah selesai: thread lain sedang "
                "menjalankan kernel dari pustaka yang sama, dan memotong peluncuran ini akan "
                "ikut menghentikan peluncuran mereka. Array keluarannya lengkap."
            ) from None
        if errors:
            raise errors[0]
        return result[0]

    def _cancel_until(self, done: threading.Event) -> bool:
        """Keep the cancel flag up until the launch has returned, through more Ctrl-C.

        Returns whether it was cancelled: while another thread's launch runs on the
        same library the flag would stop that one too, so this launch is waited for.
        """
        lib, key = self.module._lib, id(self.module._lib)
        with _launches:
            alone = _running.get(key, 0) <= 1
            if alone:
                _cancelling.add(key)
        try:
            while True:
                try:
                    if alone:
                        lib.cudacpu_cancel(1)
                    if done.wait(0.05):
                        break
                except KeyboardInterrupt:
                    continue
        finally:
            if alone:
                lib.cudacpu_cancel(0)
                with _launches:
                    _cancelling.discard(key)
                    _launches.notify_all()
        return alone


class RawModule:
    """A .cu text compiled with g++ for the CPU (cached), like ``cupy.RawModule``.

    code      the .cu text; when None it is read from ``path``.
    path      name used in ``#line`` so g++/sanitizer messages point at the .cu
              line (e.g. "kernels/softmax.cu").
    mode      "fibers" (default; deterministic, detects barrier deadlock),
              "threads" (one OS thread per CUDA thread: real concurrency,
              slow -- a few ms per __syncthreads) or "shuffle" (fibers run
              in a seeded random order between barriers).
    seed      the order of mode="shuffle" (default ATENSI_CUDACPU_SEED or 0).
    sanitize  None, "address" or "thread" (mode defaults to "threads" then).
              A sanitized module loads only in a process started with the
              sanitizer runtime preloaded: see ``run_in_subprocess``. "thread"
              with mode="fibers" is much faster: each CUDA thread is a
              ThreadSanitizer fiber and only the barriers order them, so races
              are found as with real threads.
    Defaults for mode/sanitize come from ATENSI_CUDACPU_MODE and
    ATENSI_CUDACPU_SANITIZE when set (run_python_in_subprocess sets them).
    options   CuPy-style options; -D/-U/-I are passed to g++, NVRTC-only ones
              (-arch, -lineinfo, --use_fast_math, -std) are ignored.
    """

    def __init__(self, code: str | None = None, *, path: str | os.PathLike | None = None,
                 mode: str | None = None, sanitize: str | None = None, options=(), seed: int | None = None):
        if code is None:
            if path is None:
                raise TypeError("Berikan 'code' (teks .cu) atau 'path' (berkas .cu).")
            code = source.read_cu(path)
        if not isinstance(code, str):
            raise TypeError(f"'code' harus str berisi kode CUDA C, bukan {type(code).__name__}.")
        self.path = str(path) if path is not None else "<kode-cuda>"
        from_env = sanitize is None and environment.is_set("ATENSI_CUDACPU_SANITIZE")
        self.mode, self.sanitize = resolve_mode(mode, sanitize)
        self.options = check_options(options)
        if seed is None:
            seed = environment.integer("ATENSI_CUDACPU_SEED", 0, low=0)
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
            raise TypeError(f"'seed' harus int >= 0, bukan {seed!r}.")
        self.seed = int(seed) % 2**64
        if self.sanitize and not runtime_loaded(self.sanitize):  # before the compile
            lib = "libasan.so" if self.sanitize == "address" else "libtsan.so"
            origin = (f" (dari variabel lingkungan ATENSI_CUDACPU_SANITIZE={self.sanitize})"
                      if from_env else "")
            unset = (" Atau, untuk menjalankan tanpa sanitizer, hapus variabelnya dengan: unset "
                     "ATENSI_CUDACPU_SANITIZE" if from_env else "")
            raise CudaCpuError(
                f"Modul dengan sanitize={self.sanitize!r}{origin} hanya bisa dimuat di proses Python "
                f"yang dijalankan dengan LD_PRELOAD=$(g++ -print-file-name={lib}). Jalankan lewat "
                f"atensi.cudacpu.run_in_subprocess(...) atau run_python_in_subprocess(...).{unset}"
            )
        t0 = time.perf_counter()
        self._code_for_rebuild = code
        self.library_path, self.compiled, self._decls = build_library(
            code, path=self.path, mode=self.mode, sanitize=self.sanitize, options=self.options)
        self.compile_seconds = time.perf_counter() - t0
        self._lib = self._load_healing()
        self._functions: dict[str, RawKernel] = {}
        self.arch = resources.arch_of(self.options)  # the GPU whose limits launches obey
        self._code, self._uses = code, None

    def _load_healing(self) -> ctypes.CDLL:
        """Load the library; one that dlopen refuses or that lacks a kernel's entry point
        (a damaged cache file) is deleted and compiled once more, then refused."""
        for attempt in (1, 2):
            try:
                lib = _load(self.library_path)
                for name in self._decls:
                    getattr(lib, f"cudacpu_launch__{name}")
                return lib
            except (OSError, AttributeError) as err:
                problem = str(err).splitlines()[0] if str(err) else type(err).__name__
            build.forget_library(self.library_path)
            build.discard(self.library_path)
            if attempt == 1:
                self.library_path, self.compiled, self._decls = build_library(
                    self._code_for_rebuild, path=self.path, mode=self.mode,
                    sanitize=self.sanitize, options=self.options)
        raise CudaCpuError(
            f"Pustaka {self.library_path} tidak bisa dimuat ({problem}), juga sesudah dihapus "
            "dan dikompilasi ulang. Kemungkinan folder cache-nya rusak: hapus folder "
            f"{self.library_path.parent} (variabel ATENSI_CACHE memilih tempatnya), atau "
            "setel ATENSI_CACHE ke folder lain, lalu coba lagi."
        )

    def kernel_uses(self) -> dict:
        """Registers and static shared memory per kernel (ptxas, via NVRTC; {} without it)."""
        if self._uses is None:
            self._uses = resources.kernel_uses(self._code, self.path, self.options)
        return self._uses

    @property
    def kernel_names(self) -> tuple[str, ...]:
        return tuple(self._decls)

    def get_function(self, name: str) -> RawKernel:
        if name in self._functions:
            return self._functions[name]
        decl = self._decls.get(name)
        if decl is None:
            known = ", ".join(self._decls) or "(tidak ada)"
            raise CudaCpuError(f"Kernel '{name}' tidak ada di {self.path}. Kernel __global__ yang ada: {known}.")
        if not decl.extern_c:
            raise CudaCpuError(
                f"Kernel '{name}' ({self.path}:{decl.line}) tidak dideklarasikan extern \"C\". CuPy mencari "
                "kernel lewat nama C-nya, jadi tulis: extern \"C\" __global__ void ..."
            )
        self._functions[name] = RawKernel(self, decl)
        return self._functions[name]


def raw_kernel(code: str, name: str, **kwargs) -> RawKernel:
    """Shortcut like ``cupy.RawKernel(code, name)``."""
    return RawModule(code, **kwargs).get_function(name)
