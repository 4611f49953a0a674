"""Pemeriksaan posisi untuk RoPE dan encoding posisi sinusoidal.

Dipakai ``reference`` (``sinusoidal_positions``, ``rope_angles``, ``rope``),
``loops.rope`` dan ``kernels.rope``, sehingga ketiga jalur menolak argumen
yang sama dengan pesan yang sama:

- d_k (atau d_model) genap, karena komponennya diputar berpasangan
  (:func:`check_even`);
- posisi pertama ``offset`` bilangan bulat >= 0, dan posisi terakhir tetap di
  bawah 2^24, tempat float32 masih membedakan dua posisi berurutan
  (:func:`check_positions`);
- X yang putarannya akan melampaui batas float (:func:`check_rotation_overflow`).
"""

from __future__ import annotations

import numpy as np

from atensi.formatting import id_int, id_sci
from atensi.validation import check_int, max_abs


# Positions up to 2^24: the kernel computes the angle in double (exact for
# these), but positions also reach readers as float32, where 2^24 + 1 is not.
MAX_POSITION = 2**24


def check_even(d: int, name: str, what: str = "d_k") -> int:
    """Pairs (x0, x1) are rotated together: the size ``what`` of ``name`` must be even."""
    d = int(d)
    if d % 2:
        raise ValueError(
            f"Argumen '{name}': {what} = {d} harus genap, karena komponennya dipakai "
            f"berpasangan (0, 1), (2, 3), ..., dan komponen terakhir (indeks {d - 1}) tidak punya "
            f"pasangan. Pakai {what} genap, misalnya {d + 1}"
            + (f" atau {d - 1}." if d > 1 else ".")
        )
    return d


def check_positions(offset, T: int, name: str = "offset") -> int:
    """``offset``: the position of row 0, an int >= 0 with offset + T - 1 < 2^24."""
    offset = check_int(offset, name, low=0)
    if offset + T > MAX_POSITION:
        raise ValueError(
            f"Posisi terakhir {name} + T − 1 = {offset + T - 1} melampaui {id_int(MAX_POSITION - 1)}: "
            f"di atas 2^24 float32 tidak bisa membedakan dua posisi yang berurutan. "
            f"Pakai {name} yang lebih kecil (misalnya posisi relatif terhadap awal jendela)."
        )
    return offset


def check_rotation_overflow(X, name: str = "X", dtype=None) -> None:
    """RoPE: x0 cos θ − x1 sin θ reaches √2 · max|x|; refuse X whose rotation overflows."""
    top = float(np.finfo(dtype or X.dtype).max)
    biggest = max_abs(X)
    if biggest > top / 2:
        raise ValueError(
            f"Argumen '{name}' berisi nilai sebesar {id_sci(biggest)}: diputar (RoPE), "
            f"x0 cos θ − x1 sin θ bisa mencapai √2 kali nilai itu, melampaui batas "
            f"{np.dtype(dtype or X.dtype).name} ({id_sci(top)}), dan menjadi inf. Perkecil "
            f"{name}, misalnya {name} / 1e3, atau normalisasi barisnya lebih dulu."
        )
