"""Memori yang masih bisa dipesan, dan penolakan keluaran yang tidak akan muat.

Ukuran keluaran diperkirakan sebelum memori dipesan: array yang tidak muat
ditolak dengan ``MemoryError`` berbahasa Indonesia yang menyebut ukurannya,
memori yang tersedia, dan apa yang bisa dilakukan, alih-alih membuat mesin
menukar ke disk atau proses dihentikan sistem. Di CPU batasnya yang terkecil
dari memori mesin (``/proc/meminfo``), batas ruang alamat proses
(``RLIMIT_AS``) dan batas cgroup (Docker, Colab, sistem antrean); di GPU
memori bebas CuPy. Dipakai ``reference`` (juga lewat ``reference_checks``),
``kernels``, ``masks``, ``measures``, ``model`` dan ``bench``.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from atensi.formatting import id_bytes

SMALL_BYTES = 1 << 20  # outputs below 1 MiB are never refused for memory
CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_SELF = Path("/proc/self")


def available_memory(kind_: str = "numpy") -> float:
    """Bytes that may still be allocated (inf when unknown).

    On the CPU the smallest of three limits: the machine's available memory
    (``/proc/meminfo``), the address-space limit of this process
    (``RLIMIT_AS``, ``ulimit -v``) and the cgroup limit (``memory.max`` −
    ``memory.current``: Docker, Colab, batch systems).
    """
    if kind_ == "cupy":
        try:
            import cupy

            return float(cupy.cuda.runtime.memGetInfo()[0])
        except Exception:
            return math.inf
    return min(_meminfo_available(), _rlimit_as_left(), _cgroup_left())


def _read_number(path: Path) -> float | None:
    """The first number in a one-line file; None for "max", a missing or odd file."""
    try:
        text = path.read_text().split()
        return float(int(text[0])) if text else None
    except (OSError, ValueError):
        return None


def _stat_value(path: Path, key: str) -> float:
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return float(int(value))
    except (OSError, ValueError):
        pass
    return 0.0


def _meminfo_available() -> float:
    try:
        with open(PROC_SELF.parent / "meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return float(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return math.inf


def _rlimit_as_left() -> float:
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError):
        return math.inf
    if soft == resource.RLIM_INFINITY or soft < 0:
        return math.inf
    used = 0.0  # the address space this process already holds
    try:
        for line in (PROC_SELF / "status").read_text().splitlines():
            if line.startswith("VmSize:"):
                used = float(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return max(0.0, float(soft) - used)


def _cgroup_left() -> float:
    """memory.max − memory.current over this cgroup and its parents (v2), or the v1
    memory controller's limit − usage; reclaimable file cache counts as free."""
    left = math.inf
    try:
        lines = (PROC_SELF / "cgroup").read_text().splitlines()
    except OSError:
        lines = []
    for line in lines:
        if line.startswith("0::"):
            folder = CGROUP_ROOT / line[3:].strip().lstrip("/")
            while True:
                limit = _read_number(folder / "memory.max")
                used = _read_number(folder / "memory.current")
                if limit is not None and used is not None:
                    cache = _stat_value(folder / "memory.stat", "inactive_file")
                    left = min(left, max(0.0, limit - max(0.0, used - cache)))
                if folder == CGROUP_ROOT or folder == folder.parent:
                    break
                folder = folder.parent
    v1 = CGROUP_ROOT / "memory"
    limit = _read_number(v1 / "memory.limit_in_bytes")
    used = _read_number(v1 / "memory.usage_in_bytes")
    if limit is not None and used is not None and limit < 2**62:  # 2^63 − page: no limit
        cache = _stat_value(v1 / "memory.stat", "total_inactive_file")
        left = min(left, max(0.0, limit - max(0.0, used - cache)))
    return left


def check_output_bytes(nbytes: float, what: str, hint: str, kind_: str = "numpy") -> None:
    """Refuse before allocating when the arrays cannot fit in memory."""
    if nbytes < SMALL_BYTES:
        return  # not worth reading /proc/meminfo on every small call
    free = available_memory(kind_)
    if nbytes > free:
        raise MemoryError(
            f"{what} butuh sekitar {id_bytes(nbytes)} memori, padahal yang tersedia "
            f"sekitar {id_bytes(free)}. {hint}"
        )
