"""Masukan kernel: pemeriksaan sebelum peluncuran, dan array antar-backend.

Sebelum *kernel* diluncurkan, masukan diperiksa: float32, C-contiguous,
rank ≥ 2 (softmax: ≥ 1), bentuk yang cocok, ukuran yang didukung, tanpa
NaN/inf. Kesalahan dilaporkan dalam bahasa Indonesia.

Pemeriksaan itu ada di :mod:`atensi.validation` (dipakai juga oleh
:mod:`atensi.reference`): skor yang akan melampaui float32, flag yang bukan
bool, ukuran keluaran yang tidak muat di memori, dan pekerjaan yang terlalu
besar untuk emulasi CPU (``ATENSI_CPU_BUDGET``) juga ditolak sebelum
peluncuran. Di sini nama-namanya diberi awalan ``_`` (``_check_array``,
``_check_qkv``, ...) untuk modul lain di atensi dan untuk tes.

Array NumPy masuk → array NumPy keluar; array CuPy masuk → array CuPy keluar
(data dipindah seperlunya bila backend berbeda): ``_to_backend``,
``_like_input``, ``_empty``.
"""

from __future__ import annotations

import numpy as np

from atensi.validation import (  # noqa: F401
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
