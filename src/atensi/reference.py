"""Matematika satu attention head dalam NumPy, dinamai seperti rumusnya.

Semua fungsi menerima bentuk ``(..., T, d_k)`` dengan sumbu depan apa pun
(head, batch). Fungsi ini tidak terikat pada NumPy: array CuPy masuk, array
CuPy keluar (lewat ``_xp``), sehingga rumus yang sama berjalan di GPU.

    scores        S = Q Kᵀ / √d_k          (..., T, T)
    causal_mask   S[i, j] = -inf bila j > i
    softmax       A = exp(S - max) / Σ exp(S - max), per baris
    weighted_sum  O = A V                    (..., T, d_k)
    attention     softmax(mask(Q Kᵀ / √d_k)) V
"""

import math

import numpy as np


def _xp(*arrays):
    """The array module (numpy or cupy) that owns the inputs."""
    for a in arrays:
        module = type(a).__module__.split(".")[0]
        if module == "cupy":
            import cupy

            from atensi.kernels import _preload_cuda_wheels

            _preload_cuda_wheels()  # cuBLAS from its pip wheel, for xp.matmul
            return cupy
    return np


def scores(Q, K, *, scale=True):
    """Matriks skor ``Q Kᵀ``, dibagi √d_k bila ``scale``. Bentuk ``(..., T, T)``."""
    xp = _xp(Q, K)
    S = xp.matmul(Q, xp.swapaxes(K, -1, -2))
    if scale:
        # One multiply per score, exactly like the engine: * (1 / sqrt(d_k)).
        S = S * S.dtype.type(1.0 / math.sqrt(Q.shape[-1]))
    return S


def causal_mask(S):
    """Salinan ``S`` dengan ``-inf`` di atas diagonal (posisi j > i = masa depan)."""
    xp = _xp(S)
    T_q, T_k = S.shape[-2], S.shape[-1]
    future = xp.triu(xp.ones((T_q, T_k), dtype=bool), k=1)
    return xp.where(future, S.dtype.type(-np.inf), S)


def softmax(S, axis=-1):
    """Softmax yang stabil: kurangi maksimum baris dulu, lalu exp dan normalisasi.

    Baris yang seluruhnya ``-inf`` (tidak boleh melihat apa pun) menghasilkan
    nol, bukan NaN.
    """
    xp = _xp(S)
    row_max = xp.max(S, axis=axis, keepdims=True)
    # An all -inf row has max -inf; -inf - (-inf) would be NaN, so shift by 0.
    row_max = xp.where(xp.isfinite(row_max), row_max, S.dtype.type(0))
    E = xp.exp(S - row_max)
    total = xp.sum(E, axis=axis, keepdims=True)
    return E / xp.where(total > 0, total, S.dtype.type(1))


def weighted_sum(A, V):
    """Keluaran ``A V``: baris i adalah campuran baris-baris V dengan bobot A[i]."""
    xp = _xp(A, V)
    return xp.matmul(A, V)


def attention(Q, K, V, *, causal=True, scale=True):
    """Satu attention head utuh: ``softmax(mask(Q Kᵀ / √d_k)) V``."""
    S = scores(Q, K, scale=scale)
    if causal:
        S = causal_mask(S)
    return weighted_sum(softmax(S), V)


def attention_blocked(Q, K, V, *, causal=True, scale=True, block=128):
    """Attention yang sama, dihitung per ubin tanpa pernah membuat array ``(T, T)``.

    Untuk setiap blok ``block`` baris *query*, blok-blok *key*/*value* dibaca
    satu per satu dan *online softmax* menjaga tiga besaran per baris:

        m  maksimum skor yang sudah terlihat
        l  Σ exp(s - m)
        o  Σ exp(s - m) · v        (keluaran yang belum dinormalisasi)

    Saat maksimum naik dari m ke m', l dan o dikali exp(m - m') supaya
    semuanya kembali diukur terhadap m' yang sama. Di akhir, keluaran = o / l.
    Dengan ``causal``, blok *key* yang seluruhnya di atas diagonal dilewati.
    Memori tambahan: O(block² + T · d_k) per *head*, bukan O(T²).
    """
    xp = _xp(Q, K, V)
    block = int(block)
    if block < 1:
        raise ValueError(
            f"Argumen 'block' harus bilangan bulat >= 1, tetapi yang diterima {block}."
        )
    T, d_k = Q.shape[-2], Q.shape[-1]
    dtype = xp.result_type(Q.dtype, K.dtype, V.dtype, xp.float32)
    factor = dtype.type(1.0 / math.sqrt(d_k) if scale else 1.0)
    K_t = xp.swapaxes(K, -1, -2)
    out = xp.empty(Q.shape[:-1] + (V.shape[-1],), dtype=dtype)

    for q0 in range(0, T, block):
        q1 = min(q0 + block, T)
        Q_blk = Q[..., q0:q1, :]
        m = xp.full(Q_blk.shape[:-1] + (1,), -np.inf, dtype=dtype)
        l = xp.zeros_like(m)
        o = xp.zeros(Q_blk.shape[:-1] + (V.shape[-1],), dtype=dtype)
        # Causal: keys beyond the last query of this block are all future.
        k_end = q1 if causal else K.shape[-2]
        for k0 in range(0, k_end, block):
            k1 = min(k0 + block, k_end)
            S = xp.matmul(Q_blk, K_t[..., k0:k1])  # (..., q1-q0, k1-k0)
            S *= factor
            if causal and k1 - 1 > q0:
                # This tile crosses the diagonal: hide j > i.
                future = xp.arange(k0, k1)[None, :] > xp.arange(q0, q1)[:, None]
                xp.copyto(S, dtype.type(-np.inf), where=future)
            m_new = xp.maximum(m, S.max(axis=-1, keepdims=True))
            # Key tiles start at k0 <= q0 <= i, so every row sees key k0: m_new is
            # finite and exp never meets -inf - (-inf) (alpha = 0 on the first tile).
            alpha = xp.exp(m - m_new)
            S -= m_new
            P = xp.exp(S, out=S)
            l *= alpha
            l += P.sum(axis=-1, keepdims=True)
            o *= alpha
            o += xp.matmul(P, V[..., k0:k1, :])
            m = m_new
        # l >= exp(0) = 1 for every row that saw a key; guard 0 anyway.
        out[..., q0:q1, :] = o / xp.where(l > 0, l, dtype.type(1))
    return out


def attention_backward(Q, K, V, dO, *, causal=True, scale=True):
    """Gradien satu *head*: dari ``dO = ∂L/∂O`` ke ``(dQ, dK, dV)``.

    Forward dihitung ulang (A disimpan hanya di dalam fungsi ini), lalu aturan
    rantai dijalankan mundur melewati kelima langkah:

        dV = Aᵀ dO
        dA = dO Vᵀ
        dS = A ⊙ (dA − rowsum(dA ⊙ A))      (Jacobian softmax per baris)
        dQ = dS K · s
        dK = dSᵀ Q · s                       (s = 1/√d_k, atau 1 tanpa skala)

    Mask tidak punya gradien sendiri: posisi yang ditutup punya A = 0, jadi dS
    di sana otomatis 0.
    """
    xp = _xp(Q, K, V, dO)
    S = scores(Q, K, scale=scale)
    if causal:
        S = causal_mask(S)
    A = softmax(S)
    s = S.dtype.type(1.0 / math.sqrt(Q.shape[-1]) if scale else 1.0)
    dV = xp.matmul(xp.swapaxes(A, -1, -2), dO)
    dA = xp.matmul(dO, xp.swapaxes(V, -1, -2))
    dS = A * (dA - xp.sum(dA * A, axis=-1, keepdims=True))
    dQ = xp.matmul(dS, K) * s
    dK = xp.matmul(xp.swapaxes(dS, -1, -2), Q) * s
    return dQ, dK, dV
