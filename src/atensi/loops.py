"""Langkah-langkah attention sebagai loop Python biasa, untuk T kecil.

Setiap fungsi punya loop luar atas "siapa yang bekerja" dan satu badan loop
yang persis dikerjakan oleh satu *thread* CUDA di ``kernels/*.cu``:

    scores        satu thread per (i, j):  satu dot product
    causal_mask   satu thread per (i, j):  tulis -inf bila j > i
    softmax       satu baris per block:    maksimum, jumlah, bagi
    weighted_sum  satu thread per (i, c):  Σ_j A[i, j] · V[j, c]
    rope          satu thread per (p, m):  putar satu pasangan komponen

Masukan berbentuk ``(T, d_k)`` atau ``(T, T)`` (satu head). Hasilnya array
NumPy float64 supaya bisa dipakai sebagai pembanding yang teliti. Masukan
diperiksa seperti di :mod:`atensi.reference` (float, hingga, bentuk cocok);
pekerjaan di atas ``MAX_STEPS`` langkah ditolak, karena Python menghitung satu
perkalian per langkah.
"""

import math

import numpy as np

from atensi import position_checks
from atensi import validation as _v
from atensi.formatting import id_sci

MAX_STEPS = 10**7  # multiply-adds: about ten seconds of Python


def scores(Q, K, *, scale=True):
    """scores[i][j] = dot(Q[i], K[j]) * (1 / sqrt(d_k)) — baris mesin aslinya."""
    Q, K, scale = _scores_inputs(Q, K, scale)  # periksa dulu: bentuk, tipe, NaN
    T_q, d_k = Q.shape
    T_k = K.shape[0]
    factor = 1.0 / math.sqrt(d_k) if scale else 1.0
    S = np.zeros((T_q, T_k))
    for i in range(T_q):
        for j in range(T_k):
            # --- satu thread (i, j) ---
            dot = 0.0
            for c in range(d_k):
                dot += float(Q[i, c]) * float(K[j, c])
            S[i, j] = dot * factor
    return S


def causal_mask(S):
    """Salinan S dengan -inf di setiap posisi j > i."""
    (S,) = _matrices(S=S, allow_neg_inf=True)  # periksa dulu: bentuk, tipe, NaN
    _check_steps(MAX_STEPS, S.size, "causal_mask")
    S = np.array(S, dtype=np.float64)
    T_q, T_k = S.shape
    for i in range(T_q):
        for j in range(T_k):
            # --- satu thread (i, j) ---
            if j > i:
                S[i, j] = -math.inf
    return S


def softmax(S):
    """Softmax per baris, dengan tiga langkah yang dikerjakan satu block per baris."""
    (S,) = _matrices(S=S, allow_neg_inf=True)  # periksa dulu: bentuk, tipe, NaN
    _check_steps(MAX_STEPS, 3 * S.size, "softmax")
    T_q, T_k = S.shape
    A = np.zeros((T_q, T_k))
    for i in range(T_q):
        # --- satu block (baris i) ---
        row_max = -math.inf
        for j in range(T_k):
            row_max = max(row_max, float(S[i, j]))
        if row_max == -math.inf:
            continue  # tidak ada yang terlihat: barisnya tetap nol semua
        total = 0.0
        for j in range(T_k):
            total += math.exp(float(S[i, j]) - row_max)
        for j in range(T_k):
            A[i, j] = math.exp(float(S[i, j]) - row_max) / total
    return A


def weighted_sum(A, V):
    """output[i][c] = Σ_j A[i][j] · V[j][c]."""
    A, V = _weighted_sum_inputs(A, V)  # periksa dulu: bentuk, tipe, NaN
    T_q, T_k = A.shape
    d_k = V.shape[1]
    O = np.zeros((T_q, d_k))
    for i in range(T_q):
        for c in range(d_k):
            # --- satu thread (i, c) ---
            acc = 0.0
            for j in range(T_k):
                acc += float(A[i, j]) * float(V[j, c])
            O[i, c] = acc
    return O


def attention(Q, K, V, *, causal=True, scale=True):
    """Rantai lengkap dengan loop: scores → mask → softmax → weighted_sum."""
    causal = _v.check_flag(causal, "causal")
    Q, K, V = _v.reference_qkv(Q, K, V)
    _check_steps(MAX_STEPS, 2 * Q.shape[0] * K.shape[0] * (Q.shape[1] + V.shape[1]), "attention")
    S = scores(Q, K, scale=scale)
    if causal:
        S = causal_mask(S)
    return weighted_sum(softmax(S), V)


def _scores_inputs(Q, K, scale):
    scale = _v.check_flag(scale, "scale")
    Q, K = _matrices(Q=Q, K=K)
    _check_equal("Dimensi terakhir (d_k) 'Q' dan 'K'", "Q.shape[1]", Q.shape[1], "K.shape[1]",
          K.shape[1])
    _check_steps(MAX_STEPS, Q.shape[0] * K.shape[0] * Q.shape[1], "scores")
    return Q, K, scale


def _weighted_sum_inputs(A, V):
    A, V = _matrices(A=A, V=V)
    _check_equal("Satu baris 'V' per kolom 'A'", "A.shape[1]", A.shape[1], "V.shape[0]", V.shape[0])
    _check_steps(MAX_STEPS, A.shape[0] * A.shape[1] * V.shape[1], "weighted_sum")
    return A, V


def _rope_inputs(X, offset, base):
    (X,) = _matrices(X=X)
    T, d_k = X.shape
    position_checks.check_even(d_k, "X", "d_k")
    offset = position_checks.check_positions(offset, T)
    base = _v.check_number(base, "base", low=1.0, low_open=True)
    _check_steps(MAX_STEPS, T * d_k, "rope")
    return X, offset, base


def rope(X, *, offset=0, base=10000.0):
    """RoPE: setiap pasangan (x[2m], x[2m+1]) baris p diputar (offset + p) · ω_m radian."""
    X, offset, base = _rope_inputs(X, offset, base)  # periksa dulu: bentuk, tipe, NaN
    T, d_k = X.shape
    Y = np.zeros((T, d_k))
    for p in range(T):
        for m in range(d_k // 2):
            # --- satu thread (p, m) ---
            omega = base ** (-2.0 * m / d_k)       # frekuensi pasangan m
            theta = (offset + p) * omega             # sudut untuk posisi ini
            c, s = math.cos(theta), math.sin(theta)
            x0, x1 = float(X[p, 2 * m]), float(X[p, 2 * m + 1])
            Y[p, 2 * m] = x0 * c - x1 * s
            Y[p, 2 * m + 1] = x0 * s + x1 * c
    return Y


# Argument checks of the loops above: one head, on the CPU, small enough for Python.


def _matrices(*, allow_neg_inf=False, **arrays) -> list:
    """NumPy float matrices of one head, finite (-inf allowed in the scores
    ``S`` when ``allow_neg_inf``: masked)."""
    out = []
    for name, x in arrays.items():
        if _v.kind(x) == "cupy":
            raise TypeError(f"Argumen '{name}' harus array NumPy: atensi.loops berjalan di "
                            f"CPU. Pindahkan dulu dengan {name}.get().")
        x = _v.as_float_array(x, name, layout="(T, T)" if name in ("S", "A") else "(T, d_k)")
        if x.ndim != 2:
            raise ValueError(
                f"Argumen '{name}' harus matriks satu head (2 dimensi), tetapi bentuknya "
                f"{tuple(x.shape)}. Ambil satu head dulu, misalnya {name}[0], atau pakai "
                "atensi.reference untuk banyak head.")
        _v.check_finite(x, name, allow_neg_inf=allow_neg_inf and name in ("S",))
        out.append(x)
    return out


def _check_steps(limit: int, count: int, what: str) -> None:
    """Python loops do about 10⁶ steps a second: refuse more than ``limit``."""
    if count > limit:
        raise ValueError(
            f"{what} butuh sekitar {id_sci(count)} langkah perulangan Python, lebih dari "
            f"batas {id_sci(limit)} (bisa bermenit-menit). Kecilkan T, atau pakai "
            "atensi.reference (NumPy) untuk ukuran ini.")


def _check_equal(what: str, a: str, n: int, b: str, m: int) -> None:
    """Two sizes that must agree, e.g. d_k of Q and of K."""
    if n != m:
        raise ValueError(f"{what}: {a} = {n} dan {b} = {m} harus sama.")
