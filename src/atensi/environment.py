"""Variabel lingkungan ``ATENSI_*`` yang dibaca pustaka, diperiksa di satu tempat.

Setiap pembacaan lewat salah satu fungsi di sini, jadi nilai yang salah
(``ATENSI_CPU_BUDGET=nan``, ``1e400``, ``ATENSI_CUDACPU_MAX_THREADS=banyak``)
tidak pernah diam-diam diabaikan atau mematikan batas: ia ditolak dengan
pesan yang menyebut nama variabelnya. Variabel yang kosong sama dengan tidak
disetel.

========================== ==================================================
``ATENSI_CPU_BUDGET``       batas kerja emulasi CPU (bilangan > 0, berhingga)
``ATENSI_CUDACPU_MAX_THREADS`` thread CUDA per peluncuran di CPU (bulat ≥ 1)
``ATENSI_CUDACPU_MODE``     ``fibers``, ``threads`` atau ``shuffle``
``ATENSI_CUDACPU_SANITIZE`` ``address``, ``thread`` atau ``none``
``ATENSI_CUDACPU_SEED``     urutan ``mode="shuffle"`` (bulat ≥ 0)
``ATENSI_CACHE``            folder cache kompilasi
``ATENSI_CXX``              kompilator C++ (bawaan ``g++``)
``ATENSI_ARCH``             GPU yang dimodelkan emulator, ``sm_60`` … ``sm_90`` (bawaan ``sm_90``)
========================== ==================================================
"""

from __future__ import annotations

import math
import os

__all__ = ["EnvironmentValueError", "text", "positive_number", "integer", "choice", "is_set"]


class EnvironmentValueError(ValueError):
    """An ``ATENSI_*`` variable holds a value the library cannot use."""


def _refuse(name: str, raw: str, what: str) -> EnvironmentValueError:
    return EnvironmentValueError(
        f"Variabel lingkungan {name}={raw!r} tidak sah: harus {what}. Perbaiki nilainya, "
        f"atau hapus dengan: unset {name}"
    )


def text(name: str) -> str | None:
    """The variable's text, or None when it is unset or empty."""
    raw = os.environ.get(name)
    return raw if raw else None


def is_set(name: str) -> bool:
    return text(name) is not None


def positive_number(name: str, default: float) -> float:
    """A finite number > 0 (``nan``, ``inf`` and ``1e400`` are refused)."""
    raw = text(name)
    if raw is None:
        return default
    try:
        value = float(raw.replace("_", ""))
    except ValueError:
        raise _refuse(name, raw, "bilangan lebih dari 0, misalnya 1e10") from None
    if not math.isfinite(value) or value <= 0:
        raise _refuse(name, raw, "bilangan berhingga lebih dari 0, misalnya 1e10")
    return value


def integer(name: str, default: int, *, low: int = 0) -> int:
    """A whole number ≥ ``low`` (written as digits, e.g. ``2147483648``)."""
    raw = text(name)
    if raw is None:
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise _refuse(name, raw, f"bilangan bulat >= {low}") from None
    if value < low:
        raise _refuse(name, raw, f"bilangan bulat >= {low}")
    return value


def choice(name: str, choices: tuple[str, ...], default=None):
    """One of ``choices`` (as written), or ``default`` when unset."""
    raw = text(name)
    if raw is None:
        return default
    if raw not in choices:
        raise _refuse(name, raw, "salah satu dari " + ", ".join(repr(c) for c in choices))
    return raw
