"""Batas kernel dan beban emulasi CPU, diperiksa sebelum peluncuran.

Masukan kernel diperiksa bersama di sini (:func:`check_qkv`,
:func:`check_square`): float32 C-contiguous, bentuk yang cocok, nilai hingga
dan skor yang tidak melampaui float32 (pemeriksaan umum di
:mod:`atensi.validation`), lalu batas yang hanya dimiliki kernel: indeks
int32, jumlah *block* grid.y (:func:`check_T_limit`), d_k yang muat di
register atau *shared memory* (:func:`check_d_k_limit`).

Emulator CPU menjalankan sekitar 10⁸ operasi rantai per detik; pekerjaan yang
akan memakan berjam-jam ditolak (:func:`check_cpu_work`, batasnya
``ATENSI_CPU_BUDGET``). Kerjanya H·T²·max(d_k, 16) per perkalian (T, T, d_k),
dibagi kecepatan emulasi jalurnya (fakta registri,
``registry.emulated_speed``), ditambah biaya setiap *block* split-K
(:func:`pair_work`).
"""

from __future__ import annotations

from atensi import environment, hardware
from atensi import validation as _v
from atensi.formatting import id_float, id_sci

INT32_MAX = 2**31 - 1

# Multiply-adds the CPU emulation accepts in one call (scores of ANDREA's
# 12 heads at T = 1024 are 8·10⁸); the chain runs about 10⁸ per second.
CPU_BUDGET = 1e10
CPU_OPS_PER_SECOND = 1e8  # the emulated chain, measured on a 2-core laptop
# Below d = 16 the cost of each (i, j) pair (loads, loop, exp) outweighs its d
# multiply-adds: d_k = 1 is as slow per pair as d_k = 16.
MIN_WORK_D = 16
# A block that does almost nothing (a split-K range of a tiny T) still costs
# about a millisecond to emulate.
BLOCK_WORK = 1e5


def check_int32(value: int, what: str) -> None:
    if value > INT32_MAX:
        raise ValueError(
            f"{what} = {value} melebihi batas int32 ({INT32_MAX}) yang dipakai kernel. "
            "Bagi pekerjaannya menjadi beberapa panggilan yang lebih kecil."
        )


def check_T_limit(T: int, step: str, limit: int) -> None:
    if T > limit:
        raise ValueError(
            f"T = {T} melebihi batas kernel {step} ({limit}: grid.y paling banyak "
            f"{hardware.MAX_GRID_DIM[1]} block). Bagi barisannya menjadi potongan yang lebih kecil."
        )


def check_d_k_limit(d_k: int, limit, kernel: str) -> None:
    """Untuk kernel yang menyimpan satu baris d_k di register/shared memory."""
    if limit is not None and d_k > limit:
        raise ValueError(
            f"Dimensi terakhir 'Q', 'K', 'V' (d_k = {d_k}) melebihi batas kernel {kernel}: "
            f"paling besar {limit}. Pakai impl='chain-v2' (rantai kernel biasa) atau kecilkan d_k."
        )


_NO_V = object()  # V left out (scores), unlike V=None (refused)


def check_qkv(Q, K, V=_NO_V, *, max_d_k=None, kernel="attention", tf32=False):
    """Kernels: Q, K (and V) together; returns (H, T, d_k), H = product of leading axes.

    ``V=None`` is checked (and refused) like any other V; leave V out for scores.
    ``tf32``: the kernel rounds Q and K to TF32 (:func:`atensi.validation.check_score_overflow`).
    """
    if V is _NO_V:
        V = None
        names = {"Q": Q, "K": K}
    else:
        names = {"Q": Q, "K": K, "V": V}
    for name, x in names.items():
        _v.check_array(x, name)
    _v.check_same_kind(**names)
    _v.check_qk_shapes(Q, K, square=True)
    _v.check_leading(names, broadcast=False)
    if "V" in names:
        _v.check_v(V, K, Q)
    H, T, d_k = _v.leading(Q.shape), Q.shape[-2], Q.shape[-1]
    check_d_k_limit(d_k, max_d_k, kernel)
    check_int32(H * T, "Jumlah baris H·T")
    for name, x in names.items():
        _v.check_finite(x, name)
    _v.check_score_overflow(Q, K, tf32=tf32)
    return H, T, d_k


def check_square(S, name: str):
    """Kernels: (..., T, T) array; returns (H, T)."""
    _v.check_array(S, name, layout="(..., T, T)")
    if S.shape[-1] != S.shape[-2]:
        raise ValueError(
            f"Argumen '{name}' harus persegi pada dua sumbu terakhir (..., T, T), tetapi "
            f"yang diterima bentuk {tuple(S.shape)}."
        )
    H, T = _v.leading(S.shape), S.shape[-1]
    check_int32(H * T, "Jumlah baris H·T")
    return H, T


def cpu_budget() -> float:
    """``ATENSI_CPU_BUDGET`` (a finite number > 0, else refused by name) or ``CPU_BUDGET``."""
    return environment.positive_number("ATENSI_CPU_BUDGET", CPU_BUDGET)


def pair_work(H: int, T: int, d: int, *, products: float = 1.0, speed: float = 1.0,
              blocks: float = 0) -> float:
    """Emulated work of ``products`` (T, T, d) products over H heads, in chain operations.

    H·T²·max(d, 16)·products, divided by the path's emulated ``speed``
    relative to the chain kernels (``registry.emulated_speed(step, version)``;
    1 for the chain), plus ``BLOCK_WORK`` for each of ``blocks`` launched blocks.
    """
    pairs = float(H) * T * T * max(d, MIN_WORK_D) * products
    return pairs / speed + float(blocks) * BLOCK_WORK


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{id_float(max(seconds, 1.0), 0)} detik"
    if seconds < 3600:
        return f"{id_float(seconds / 60, 0)} menit"
    return f"{id_float(seconds / 3600, 1)} jam"


def _budget_source() -> str:
    return ("dari variabel lingkungan ATENSI_CPU_BUDGET" if environment.is_set("ATENSI_CPU_BUDGET")
            else "beberapa menit di laptop")


def check_cpu_work(work: float, what: str, backend: str, *, first: str = "") -> None:
    """The CPU emulation runs ~10⁸ chain operations per second: refuse hours of work.

    ``first``: the remedy to name before the usual ones (the argument that made
    the work large, e.g. ``splits``)."""
    if backend != "cpu":
        return
    budget = cpu_budget()
    if work > budget:
        seconds = work / CPU_OPS_PER_SECOND
        raise ValueError(
            f"{what} terlalu besar untuk emulasi CPU: sekitar {id_sci(work)} operasi, "
            f"kira-kira {_duration(seconds)} di sini, "
            f"batasnya {id_sci(budget)} ({_budget_source()}). {first}Jalankan di GPU "
            f"(backend='cupy'), atau kecilkan T atau jumlah head, atau hitung dengan NumPy "
            "lewat atensi.reference (atensi utuh tanpa matriks (T, T): "
            "reference.attention_blocked); batasnya bisa diubah dengan "
            "variabel lingkungan ATENSI_CPU_BUDGET."
        )
