"""Pemeriksaan masukan fungsi gambar.

Modul gambar (``plots``, ``example_plots``, ``cuda_plots``,
``tensorcore_plots``, ``model_plots``) tidak menghitung: data masuk,
``Figure`` keluar. Yang masuk diperiksa di sini lebih dulu,
dengan pesan bahasa Indonesia yang menyebut argumennya dan apa yang harus
diberikan:

- angka yang akan digambar (:func:`figure_array`): array float64 yang tidak
  kosong, dengan jumlah sumbu yang diminta; sel *masked array* menjadi NaN
  (digambar abu-abu);
- sel atau *block* yang disorot (:func:`check_index_pair`), judul dan label
  (:func:`check_label`), satu kata per baris (:func:`check_words`);
- ukuran gambar yang menulis angka di setiap sel (:func:`check_small`);
- deret garis (:func:`check_series`), matriks persegi, jumlah baris, dan bobot
  atensi antara 0 dan 1.
"""

from __future__ import annotations

import numpy as np


def figure_array(values, name: str, hint: str, *, ndim: int | None = None,
                 shape_name: str = "", finite: bool = False, allow_neg_inf: bool = False):
    """Numbers to draw, as a float64 NumPy array that is not empty.

    Cells of a masked array (np.ma) become NaN, which figures draw grey.
    ``ndim``: the required number of axes (``shape_name`` says what it is,
    e.g. "matriks 2 dimensi"); ``finite``: refuse NaN and inf (-inf too,
    unless ``allow_neg_inf``: -inf means "ditutup mask"). ``hint`` says
    what to pass instead.
    """
    if isinstance(values, np.ma.MaskedArray):
        values = values.filled(np.nan)  # masked cells are drawn grey, like NaN
    try:
        if np.iscomplexobj(values):
            raise TypeError("complex")  # the imaginary part would be dropped silently
        out = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            f"Argumen '{name}' harus berisi angka, tetapi yang diterima {type(values).__name__} "
            f"{values!r:.60}. {hint}"
        ) from None
    if ndim is not None and out.ndim != ndim:
        what = shape_name or f"array {ndim} dimensi"
        raise ValueError(
            f"Argumen '{name}' harus {what}, tetapi bentuk yang diterima {out.shape}. {hint}"
        )
    if out.size == 0:
        raise ValueError(f"Argumen '{name}' kosong (bentuk {out.shape}). {hint}")
    if finite:
        bad = np.isnan(out) | (out == np.inf)
        if not allow_neg_inf:
            bad |= out == -np.inf
        if bad.any():
            first = tuple(int(i) for i in np.argwhere(bad)[0])
            raise ValueError(
                f"Argumen '{name}' harus berisi angka hingga"
                + (" (atau -inf untuk yang ditutup mask)" if allow_neg_inf else "")
                + f", tetapi ada {out[first]} di indeks {first}. Periksa perhitungan sebelumnya."
            )
    return out


def check_index_pair(value, name: str, limits, parts) -> tuple[int, int]:
    """Two ints (a, b) with 0 <= a < limits[0] and 0 <= b < limits[1]: a cell, a block."""
    what = f"({parts[0]}, {parts[1]})"
    if (
        not isinstance(value, (tuple, list))
        or len(value) != 2
        or not all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
                   for v in value)
    ):
        raise TypeError(
            f"Argumen '{name}' harus pasangan dua bilangan bulat {what}, tetapi yang "
            f"diterima {value!r}."
        )
    a, b = (int(v) for v in value)
    if not (0 <= a < limits[0] and 0 <= b < limits[1]):
        raise ValueError(
            f"Argumen '{name}' = {value!r} di luar jangkauan: {what} harus memenuhi "
            f"0 ≤ {parts[0]} < {limits[0]} dan 0 ≤ {parts[1]} < {limits[1]}."
        )
    return a, b


def check_label(value, name: str, *, optional: bool = True):
    """A title or label: text (or None when ``optional``)."""
    if (value is None and optional) or isinstance(value, str):
        return value
    allowed = "teks atau None" if optional else "teks"
    raise ValueError(f"Argumen '{name}' harus {allowed}, tetapi yang diterima {value!r}.")


def check_words(words, count: int, name: str, per: str) -> list[str]:
    """Labels, one per ``per`` (``count`` of them): a list of words, not one string."""
    if isinstance(words, str) or not hasattr(words, "__len__"):
        raise ValueError(
            f"Argumen '{name}' harus daftar kata, misalnya ('Budi', 'bilang'), tetapi yang "
            f"diterima {words!r}."
        )
    words = [str(w) for w in words]
    if len(words) != count:
        raise ValueError(
            f"Argumen '{name}' harus berisi satu kata untuk setiap {per} ({count} "
            f"kata), tetapi berisi {len(words)}."
        )
    return words


def check_small(size: int, limit: int, what: str, instead: str) -> None:
    """Figures that write a number in every cell: at most ``limit`` rows or axes."""
    if size > limit:
        raise ValueError(
            f"Gambar ini untuk contoh kecil (paling banyak {limit} {what}), tetapi ada "
            f"{size}. {instead}"
        )


def check_series(values, name: str, *, at_least: int = 1):
    """A non-empty dict ``{label: values}`` (series of a line plot, peaks, samples)."""
    if not isinstance(values, dict) or len(values) < at_least:
        raise ValueError(
            f"Argumen '{name}' harus dict {{label: nilai}} dengan paling sedikit {at_least} "
            f"isi, tetapi yang diterima {values!r:.60}."
        )
    return values


def check_square_matrix(M: np.ndarray, name: str) -> int:
    """A (T, T) matrix (scores, weights); returns T."""
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ValueError(f"Argumen '{name}' harus persegi (T, T), tetapi bentuknya {M.shape}.")
    return M.shape[0]


def check_rows(M: np.ndarray, name: str, rows: int, why: str) -> None:
    """``M`` has ``rows`` rows (``why``: e.g. "satu per token, seperti A")."""
    if M.shape[0] != rows:
        raise ValueError(
            f"Argumen '{name}' harus punya {rows} baris ({why}), tetapi punya {M.shape[0]}."
        )


def check_weights(A: np.ndarray, name: str = "A") -> np.ndarray:
    """Attention weights: every entry between 0 and 1 (a softmax result)."""
    if (A < -1e-6).any() or (A > 1 + 1e-6).any():
        raise ValueError(
            f"Argumen '{name}' harus berisi bobot atensi antara 0 dan 1 (hasil softmax), "
            f"tetapi nilainya dari {A.min()} sampai {A.max()}. Jalankan softmax dulu."
        )
    return A
