"""Ukuran kecil untuk membaca satu baris softmax: entropi, Jacobian, sebaran skor.

Dipakai oleh penjelajah (``atensi.explorers``) dan oleh bab-bab buku, supaya
angka di teks dan angka di gambar berasal dari rumus yang sama.

    entropy(p)                H(p) = -Σ p log p      (nat, log natural)
    softmax_jacobian(p)       J = diag(p) - p pᵀ     (∂ softmax / ∂ skor)
    jacobian_norm(p)          ‖J‖_F, norma Frobenius
    random_dot_products(...)  q · k untuk pasangan vektor acak N(0, 1)
    dot_product_spread(...)   simpangan baku dari dot product itu (≈ √d_k)
"""

import math

import numpy as np

from . import memory
from . import validation as _val


def entropy(p, axis=-1):
    """Entropi ``-Σ p log p`` dalam nat (log natural), per baris.

    Suku dengan ``p = 0`` (misalnya posisi yang dimask) bernilai 0. Nilainya 0
    untuk baris *one-hot* dan ``log n`` untuk baris seragam dengan n posisi.
    """
    p = _check_probabilities(p, axis=axis)
    safe = np.where(p > 0, p, 1.0)
    # 0.0 - x, not -x: a one-hot row gives 0.0, not -0.0.
    return 0.0 - np.sum(np.where(p > 0, p * np.log(safe), 0.0), axis=axis)


def softmax_jacobian(p):
    """Jacobian softmax ``J = diag(p) - p pᵀ`` untuk ``p = softmax(s)``.

    ``J[a, b] = ∂p_a / ∂s_b``. Untuk ``p`` berbentuk ``(..., n)`` hasilnya
    ``(..., n, n)``. Saat satu peluang mendekati 1, semua entri J mendekati 0:
    gradien yang melewati softmax itu hilang.
    """
    p = _check_probabilities(p)
    diag = p[..., :, None] * np.eye(p.shape[-1])
    return diag - p[..., :, None] * p[..., None, :]


def jacobian_norm(p):
    """Norma Frobenius ``‖diag(p) - p pᵀ‖_F`` per baris (0 untuk baris *one-hot*).

    Frobenius dipilih karena mudah dihitung dan dibaca: akar jumlah kuadrat
    semua turunan parsial ``∂p_a/∂s_b``. Nilai terbesarnya 0,5 (dua posisi
    masing-masing 0,5); baris seragam dengan n posisi memberi ``√(n-1)/n``.
    """
    J = softmax_jacobian(p)
    return np.sqrt(np.sum(J * J, axis=(-2, -1)))


def random_dot_products(d_k, n=2000, seed=0, scale=False):
    """``n`` dot product ``q · k`` dari vektor acak berkomponen N(0, 1).

    Dengan ``scale=True`` setiap hasil dibagi √d_k, seperti skor atensi.
    Vektor berdimensi ``d_k`` dengan komponen bervarians 1 (bukan vektor
    satuan) memberi dot product bervarians ``d_k``: simpangan bakunya √d_k.
    """
    d_k = _val.check_int(d_k, "d_k", high=2**20)
    n = _val.check_int(n, "n")
    scale = _val.check_flag(scale, "scale")
    memory.check_output_bytes(8.0 * int(n) * int(d_k), f"{n} pasang vektor berdimensi {d_k}",
                              "Kecilkan 'n' atau 'd_k'.")
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, int(d_k)), dtype=np.float32)
    k = rng.standard_normal((n, int(d_k)), dtype=np.float32)
    dots = np.einsum("nd,nd->n", q, k, dtype=np.float64)
    if scale:
        dots = dots / math.sqrt(d_k)
    return dots


def dot_product_spread(d_k, n=2000, seed=0, scale=False):
    """Simpangan baku dari ``random_dot_products``: sekitar √d_k, atau sekitar 1 bila ``scale``."""
    return float(np.std(random_dot_products(d_k, n=n, seed=seed, scale=scale)))


def _check_probabilities(p, name: str = "p", axis=-1) -> np.ndarray:
    """Rows of probabilities (a softmax output) as float64: each in [0, 1], summing to 1 (or 0 when masked)."""
    if isinstance(p, np.ma.MaskedArray):
        raise TypeError(
            f"Argumen '{name}' harus array biasa, bukan masked array (np.ma). "
            f"Pakai {name}.filled(0.0): posisi yang ditutup mask berpeluang 0."
        )
    try:
        p = np.asarray(p, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            f"Argumen '{name}' harus array angka (vektor peluang), tetapi yang diterima "
            f"{type(p).__name__}. Berikan satu baris softmax, misalnya softmax(S)[i]."
        ) from None
    if p.ndim < 1 or p.shape[-1] == 0:
        raise ValueError(
            f"Argumen '{name}' harus berupa vektor peluang yang tidak kosong, "
            f"tetapi bentuk yang diterima {p.shape}. Berikan satu baris softmax, "
            "misalnya softmax(S)[i]."
        )
    if np.isnan(p).any():
        raise ValueError(
            f"Argumen '{name}' berisi NaN. Periksa skor sebelum softmax "
            "(softmax dari atensi.reference tidak pernah menghasilkan NaN)."
        )
    axis = _val.check_axis(axis, p.ndim)
    if np.isinf(p).any() or (p < -1e-9).any() or (p > 1 + 1e-9).any():
        raise ValueError(
            f"Argumen '{name}' harus berisi peluang antara 0 dan 1, tetapi nilainya dari "
            f"{p.min()!r} sampai {p.max()!r}. Berikan hasil softmax, bukan skor."
        )
    sums = p.sum(axis=axis)
    if not np.all((np.abs(sums - 1) <= 1e-3) | (sums == 0)):
        raise ValueError(
            f"Setiap baris argumen '{name}' harus berjumlah 1 (atau 0 untuk baris yang "
            f"seluruhnya ditutup mask), tetapi ada yang berjumlah {float(sums.flat[np.argmax(np.abs(sums - 1))])!r}. "
            "Berikan hasil softmax, atau bagi dulu dengan jumlahnya."
        )
    return p
