"""Per-launch resource limits of a GPU, from NVRTC's ptxas report.

When NVRTC is importable (``cupy`` with the ``nvidia-cuda-nvrtc`` wheel), a
``RawModule`` compiles its .cu once more for the GPU architecture it models
(``-arch=sm_XX`` in its ``options``, default sm_90) and reads each kernel's
registers and static shared memory from ``-Xptxas=-v``. Without ``-arch``
the architecture is ``$ATENSI_ARCH`` (:func:`modelled_arch`), so the whole CPU
path can model a reader's GPU, e.g. ``ATENSI_ARCH=sm_75`` for a Tesla T4. That compile (up to
tens of seconds for a file of unrolled kernels) happens only for the first
launch that could be refused at all (``could_be_refused``: more than 256
threads per block, or more dynamic shared memory than the limit less the
48 KiB that static shared memory may use), so ordinary launches never wait
for it. A launch the GPU would refuse is then refused here too, before any work:

* registers of one block (per warp: registers × 32, rounded up to 256) above
  the 64K an SM has: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
* static + dynamic shared memory above the architecture's per-block limit
  (227 KiB on sm_90, 163 KiB on sm_80, 99 KiB on sm_86/89, 96 KiB on sm_70,
  64 KiB on sm_75, 48 KiB on sm_60/61):
  CUDA_ERROR_INVALID_VALUE.

(More than 48 KiB of dynamic shared memory without raising
``max_dynamic_shared_size_bytes`` is refused by ``module.RawKernel`` itself.)
Without NVRTC, or when NVRTC cannot compile the text (emulator-only code),
nothing is known and nothing extra is checked. Reports are cached as JSON in
the cudacpu cache folder, keyed by a hash of the text and the options.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass

from atensi import environment, files, hardware, ptxas

from . import build
from .errors import LaunchConfigError

REGISTERS_PER_BLOCK = hardware.MAX_REGISTERS_PER_BLOCK
DEFAULT_ARCH = hardware.DEFAULT_ARCH.name
_ARCH = re.compile(r"^(?:-arch|--gpu-architecture)[= ](sm_\d+)a?$")


@dataclass(frozen=True)
class KernelUse:
    registers: int
    static_shared: int


ARCH_VARIABLE = "ATENSI_ARCH"


def modelled_arch() -> hardware.Arch:
    """The GPU architecture the CPU path models: ``$ATENSI_ARCH`` (one of
    ``hardware.ARCHS``, e.g. ``sm_75`` for a Tesla T4), default sm_90.

    An unknown value is refused by the variable's name, not ignored: a typo
    would otherwise test the matrix on the wrong GPU."""
    name = environment.choice(ARCH_VARIABLE, tuple(hardware.ARCHS), DEFAULT_ARCH)
    return hardware.ARCHS[name]


def arch_of(options) -> str:
    """The ``sm_XX`` named by ``-arch=`` in ``options``; without one, :func:`modelled_arch`."""
    for opt in options:
        m = _ARCH.match(opt) if isinstance(opt, str) else None
        if m:
            return m.group(1)
    return modelled_arch().name


def shared_limit(arch: str) -> int:
    """Most shared memory (static + dynamic) one block may use on ``arch``."""
    return hardware.ARCHS.get(arch, hardware.DEFAULT_ARCH).max_shared_per_block


def _nvrtc():
    """cupy.cuda.nvrtc, loaded from the pip wheel when needed; None when unavailable."""
    try:
        from atensi import cuda_wheels

        cuda_wheels.preload()
        from cupy.cuda import nvrtc

        nvrtc.getVersion()
        return nvrtc
    except Exception:
        return None


def _compile(nvrtc, code: str, path: str, options: tuple) -> dict[str, KernelUse] | None:
    program = nvrtc.createProgram(code, path, [], [])
    try:
        try:
            nvrtc.compileProgram(program, list(options))
        except nvrtc.NVRTCError:
            return None
        log = nvrtc.getProgramLog(program).rstrip("\x00")
    finally:
        nvrtc.destroyProgram(program)
    return {name: KernelUse(k.registers, k.shared_bytes) for name, k in ptxas.parse(log).items()}


def kernel_uses(code: str, path: str, options=()) -> dict[str, KernelUse]:
    """{kernel: registers and static shared bytes} for the modelled architecture; {} when unknown."""
    nvrtc = _nvrtc()
    if nvrtc is None:
        return {}
    arch = arch_of(options)
    kept = tuple(o for o in options if isinstance(o, str) and o.startswith(("-D", "-U", "-I")))
    nvrtc_options = ("-std=c++17", f"-arch={arch}", "-Xptxas=-v") + kept
    key = hashlib.sha256("\0".join((code, path, *nvrtc_options, str(nvrtc.getVersion()))).encode()).hexdigest()
    cache = build.cache_dir() / f"ptxas-{key[:24]}.json"
    cached = _read_cache(cache)
    if cached is not None:
        return cached
    found = _compile(nvrtc, code, path, nvrtc_options)
    if found is None:
        return {}
    try:
        files.write_text(cache, json.dumps(
            {name: [u.registers, u.static_shared] for name, u in found.items()}))
    except OSError:
        pass  # a cache that cannot be written only costs the next compile
    return found


def _read_cache(cache) -> dict[str, KernelUse] | None:
    """The cached report, or None when absent or of the wrong shape (then removed and rebuilt)."""
    try:
        data = json.loads(cache.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        data = None
    whole = isinstance(data, dict) and all(
        isinstance(name, str) and isinstance(v, list) and len(v) == 2
        and all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n < 2**20 for n in v)
        for name, v in data.items())
    if not whole:
        try:
            os.unlink(cache)
        except OSError:
            pass
        return None
    return {name: KernelUse(*v) for name, v in data.items()}


MAX_REGISTERS_PER_THREAD = hardware.MAX_REGISTERS_PER_THREAD
MAX_STATIC_SHARED = hardware.DEFAULT_SHARED_PER_BLOCK


def could_be_refused(threads: int, dynamic_shared: int, arch: str) -> bool:
    """Can any kernel be refused for this launch? (255 registers × 256 threads fit 64K.)"""
    warps = -(-threads // hardware.WARP_SIZE)
    worst_per_warp = -(-MAX_REGISTERS_PER_THREAD * hardware.WARP_SIZE // 256) * 256
    return (warps * worst_per_warp > REGISTERS_PER_BLOCK
            or dynamic_shared + MAX_STATIC_SHARED > shared_limit(arch))


def check_launch(kernel: str, use: KernelUse | None, threads: int, dynamic_shared: int, arch: str) -> None:
    """Refuse (LaunchConfigError, in Indonesian) what the GPU would refuse."""
    if use is None:
        return
    warps = -(-threads // hardware.WARP_SIZE)
    per_warp = -(-use.registers * hardware.WARP_SIZE // 256) * 256
    if warps * per_warp > REGISTERS_PER_BLOCK:
        raise LaunchConfigError(
            f"Peluncuran kernel '{kernel}' ditolak: kernel ini memakai {use.registers} register per thread "
            f"(laporan ptxas, {arch}), jadi satu block {threads} thread butuh {warps} warp × {per_warp} = "
            f"{warps * per_warp} register, padahal satu SM hanya punya {REGISTERS_PER_BLOCK}. Di GPU, "
            "peluncuran ini gagal dengan CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (\"too many resources requested "
            "for launch\"). Kecilkan block, atau batasi register dengan __launch_bounds__(jumlah_thread)."
        )
    limit = shared_limit(arch)
    total = use.static_shared + dynamic_shared
    if total > limit:
        raise LaunchConfigError(
            f"Peluncuran kernel '{kernel}' ditolak: shared memory statis {use.static_shared} byte + dinamis "
            f"{dynamic_shared} byte = {total} byte per block, padahal {arch} mengizinkan paling banyak "
            f"{limit} byte ({limit // 1024} KiB) per block. Di GPU, peluncuran ini gagal dengan "
            "CUDA_ERROR_INVALID_VALUE. Kecilkan shared_mem atau ubin shared memory kernel ini."
        )
