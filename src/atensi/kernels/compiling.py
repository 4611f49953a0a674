"""Kompilasi NVRTC tanpa GPU: laporan ptxas (register, *spill*, okupansi).

    compile_report(path, arch="sm_90")   satu berkas .cu → :class:`CompileReport`
    ptxas_table(files=None)              tabel semua kernel untuk sm_80 dan sm_90
    occupancy(res, arch)                 okupansi teoretis satu kernel

Opsi kompilasinya sama dengan yang dipakai ``cupy.RawModule``
(``_cupy_options``, termasuk konstanta ``-D`` dari
:mod:`atensi.kernels.registry`), jadi angkanya milik biner yang benar-benar
berjalan. *Thread* per *block* dan *shared memory* dinamis setiap kernel
juga dibaca dari registri.
Kompilasi yang gagal → :class:`CompileError` berisi log kompilator.

Hasil NVRTC (log ptxas dan cubin) disimpan di folder cache
:func:`atensi.cudacpu.build.cache_dir` (``ATENSI_CACHE``), dengan kunci dari
isi berkas, opsi kompilasi (termasuk konstanta ``-D`` dan ``-arch``) dan versi
NVRTC: bab yang dijalankan ulang tidak mengompilasi lagi.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from atensi import cuda_wheels, files, hardware, ptxas
from atensi.cudacpu import build
from atensi.cudacpu import source as cu_source
from atensi.kernels import registry
from atensi.kernels.launch import ceil_div
from atensi.kernels.loading import (
    NVRTC_OPTIONS,
    _display_name,
    kernel_path,
    kernels_dir,
)
from atensi.ptxas import KernelResources


class CompileError(RuntimeError):
    """Kompilasi NVRTC gagal; pesannya memuat log kompilator (``berkas(baris): error``)."""

    def __init__(self, path, log):
        self.path = path
        self.log = log
        super().__init__(f"Kompilasi {path} oleh NVRTC gagal:\n{log}")


@dataclass
class CompileReport:
    """Hasil :func:`compile_report`: log ptxas dan angka per kernel."""

    path: str
    arch: str
    options: tuple
    seconds: float  # NVRTC's compile time (that of the first compile when read from the cache)
    log: str
    kernels: dict = field(default_factory=dict)
    cubin: bytes | None = field(default=None, repr=False)  # the compiled binary (SASS inside)

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


def compile_report(path, *, arch: str = "sm_90") -> CompileReport:
    """Kompilasi satu berkas .cu dengan NVRTC (tanpa GPU) dan baca laporan ptxas.

    Opsi kompilasinya sama dengan yang ditambahkan CuPy saat ``RawModule``
    (lihat ``_cupy_options``: ``-ftz=true``, folder *include*,
    ``--device-as-default-execution-space``), ditambah ``-Xptxas=-v``; jadi
    angka register dan *spill* adalah milik biner yang benar-benar berjalan.
    Setiap kernel juga diberi okupansi teoretis (:func:`occupancy`). ``arch`` berupa ``sm_XX`` agar ptxas ikut berjalan dan melaporkan register,
    *shared memory*, dan *spill*. Gagal → :class:`CompileError` dengan log
    kompilator, misalnya ``kernels/x.cu(12): error: ...``.
    """
    path = Path(path)
    if not path.is_absolute() and not path.exists():
        path = kernels_dir().parent / path
    if not re.fullmatch(r"sm_\d+a?", arch):
        raise ValueError(
            f"Argumen 'arch' harus berbentuk 'sm_XX' (misalnya 'sm_90'), tetapi yang "
            f"diterima {arch!r}. Dengan 'compute_XX' ptxas tidak berjalan dan tidak ada laporan."
        )
    cuda_wheels.preload()
    try:
        from cupy.cuda import nvrtc

        nvrtc.getVersion()
    except Exception as err:
        raise RuntimeError(
            f"NVRTC tidak bisa dimuat ({err}). Pasang dengan "
            "pip install -r requirements-dev.txt (cupy-cuda12x dan nvidia-cuda-nvrtc-cu12)."
        ) from err
    name = _display_name(path)
    options = _cupy_options(arch, path.name) + ("-Xptxas=-v",)
    source = path.read_bytes()
    cache = _cache_file(source, name, options, nvrtc.getVersion())
    cached = _read_cache(cache)
    if cached is None:
        log, cubin, seconds = _compile(nvrtc, cu_source.decode_cu(source, name), name, options)
        _write_cache(cache, log, cubin, seconds)
    else:
        log, cubin, seconds = cached
    found = ptxas.parse(log)
    known = {k.name: k for k in registry.KERNELS}
    for kernel, res in found.items():
        entry = known.get(kernel)
        res.threads = entry.threads if entry else UNKNOWN_THREADS
        res.dynamic_shared_bytes = entry.dynamic_shared if entry else 0
        res.occupancy = occupancy(res, arch)
    return CompileReport(name, arch, options, seconds, log, found, cubin)


def _compile(nvrtc, source: str, name: str, options: tuple) -> tuple[str, bytes, float]:
    """(ptxas log, cubin, seconds) of one NVRTC compile; CompileError when it fails."""
    start = time.perf_counter()
    program = nvrtc.createProgram(source, name, [], [])
    try:
        try:
            nvrtc.compileProgram(program, list(options))
            failed = False
        except nvrtc.NVRTCError:
            failed = True
        log = nvrtc.getProgramLog(program).rstrip("\x00")
        # CuPy drops the last byte of the ELF (its size counts a terminating NUL).
        cubin = None if failed else nvrtc.getCUBIN(program) + b"\0"
    finally:
        nvrtc.destroyProgram(program)
    if failed:
        raise CompileError(name, log)
    return log, cubin, time.perf_counter() - start


# Bump when the cached fields change: older files then simply miss.
_CACHE_FORMAT = "compile-report-1"


def _cache_file(source: bytes, name: str, options: tuple, nvrtc_version) -> Path:
    """Where the NVRTC output for exactly this text, name, options and NVRTC lives."""
    key = hashlib.sha256(source)
    key.update("\0".join((_CACHE_FORMAT, name, *options, repr(tuple(nvrtc_version)))).encode())
    return build.cache_dir() / f"report-{key.hexdigest()[:32]}.json"


def _read_cache(path: Path) -> tuple[str, bytes, float] | None:
    """The cached (log, cubin, seconds); None when absent, partial or corrupt (then rebuilt)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        log, seconds = data["log"], float(data["seconds"])
        cubin = base64.b64decode(data["cubin"], validate=True)
        if data["format"] != _CACHE_FORMAT or not isinstance(log, str) or not cubin:
            return None
        return log, cubin, seconds
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_cache(path: Path, log: str, cubin: bytes, seconds: float) -> None:
    data = {"format": _CACHE_FORMAT, "log": log, "seconds": seconds,
            "cubin": base64.b64encode(cubin).decode("ascii")}
    try:
        files.write_text(path, json.dumps(data))  # temp file + os.replace: never half a file
    except OSError:
        pass  # a cache that cannot be written only costs the next compile


# Threads per block for the occupancy figure of a kernel the registry does not
# know (a file outside kernels/); registry kernels use their own block.
UNKNOWN_THREADS = 256


def occupancy(res: KernelResources, arch: str = "sm_90") -> float:
    """Okupansi teoretis: *warp* yang bisa tinggal di satu SM / batasnya.

    Dibatasi oleh jumlah *thread*, register (dialokasikan per *warp* dalam
    kelipatan 256) dan *shared memory* (kelipatan 128 byte, ditambah cadangan
    sistem per *block*, 1 KiB sejak sm_80). Batas setiap arsitektur dibaca dari
    :mod:`atensi.hardware`; arsitektur yang tidak ada di sana dihitung seperti sm_90.
    """
    limits = hardware.ARCHS.get(arch, hardware.DEFAULT_ARCH)
    warp = hardware.WARP_SIZE
    warps = ceil_div(max(res.threads, 1), warp)
    blocks = min(limits.max_blocks_per_sm, limits.max_warps_per_sm // warps)
    if res.registers:
        per_warp = ceil_div(res.registers * warp, 256) * 256
        blocks = min(blocks, (limits.registers_per_sm // per_warp) // warps)
    smem = ceil_div(res.shared_bytes + res.dynamic_shared_bytes + limits.reserved_shared_per_block, 128) * 128
    if smem:  # sm_70/75 reserve nothing: a kernel without shared memory is not limited by it
        blocks = min(blocks, limits.shared_per_sm // smem)
    return blocks * warps / limits.max_warps_per_sm


def ptxas_table(files=None, archs=("sm_80", "sm_90")) -> str:
    """Tabel ptxas semua kernel: register, *shared memory*, *spill*, okupansi per arsitektur.

    ``files``: berkas .cu (bawaan: semua di ``kernels/``). Angkanya dari
    :func:`compile_report`, jadi dari biner dengan opsi CuPy.
    """
    files = files or sorted(kernel_path(f) for f in registry.files())
    header = ("kernel", "arch", "register", "shared (byte)", "spill (byte)", "okupansi")
    rows = []
    for file in files:
        for arch in archs:
            for name, k in sorted(compile_report(file, arch=arch).kernels.items()):
                rows.append((name, arch, str(k.registers),
                             str(k.shared_bytes + k.dynamic_shared_bytes),
                             str(k.spill_stores + k.spill_loads),
                             f"{round(100 * k.occupancy)} %"))
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                       for i, (c, w) in enumerate(zip(r, widths))).rstrip()
             for r in [header] + rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _cupy_options(arch: str, file: str = "") -> tuple:
    """The options ``cupy.RawModule`` compiles kernel ``file`` with (CuPy 13 and 14).

    Read from CuPy's compiler: our NVRTC_OPTIONS and the file's -D constants
    from the registry (as ``loading.get_function`` passes them), then its include folders
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
    options += list(NVRTC_OPTIONS) + list(registry.defines(file)) + [f"-I{include}"]
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
