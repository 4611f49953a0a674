"""Matematika satu attention head dalam NumPy, dinamai seperti rumusnya.

Semua fungsi menerima bentuk ``(..., T, d_k)`` dengan sumbu depan apa pun
(head, batch). Fungsi ini tidak terikat pada NumPy: array CuPy masuk, array
CuPy keluar (lewat ``array_module``), sehingga rumus yang sama berjalan di GPU.
Masukan diperiksa dulu oleh :mod:`atensi.validation`, sama seperti di
:mod:`atensi.kernels`: float16/32/64 (list angka diubah), bentuk yang cocok,
tanpa NaN/inf (-inf boleh di skor), flag bool, dan skor yang tidak melampaui
batas float; pesan kesalahannya berbahasa Indonesia. Pemeriksaan yang hanya
dimilikinya (memori matriks (T, T), langkah mundur, gradien numerik) ada di
:mod:`atensi.reference_checks`, pemeriksaan posisi RoPE di
:mod:`atensi.position_checks`.

    scores        S = Q Kᵀ / √d_k          (..., T, T)
    causal_mask   S[i, j] = -inf bila j > i
    softmax       A = exp(S - max) / Σ exp(S - max), per baris
    weighted_sum  O = A V                    (..., T, d_k)
    attention     softmax(mask(Q Kᵀ / √d_k)) V

Langkah mundur (bab Gradien): ``attention_backward`` → (dQ, dK, dV);
``attention_backward_blocked`` sama, per ubin, dari log-sum-exp yang disimpan
(``attention_blocked(..., return_lse=True)``); ``numerical_gradient`` untuk
pemeriksaan beda hingga.

Posisi (bab Posisi): ``sinusoidal_positions`` (Vaswani dkk.), ``rope`` dan
``rope_angles`` (Su dkk.): putar pasangan komponen Q dan K sesuai posisinya.
"""

import math

import numpy as np

from atensi import memory, position_checks, reference_checks
from atensi import validation as _val

_BIG_HINT = ("Pakai attention_blocked(Q, K, V), yang tidak pernah membuat matriks (T, T), "
             "atau kecilkan T.")


def array_module(*arrays):
    """The array module (numpy or cupy) that owns the inputs."""
    for a in arrays:
        module = type(a).__module__.split(".")[0]
        if module == "cupy":
            import cupy

            from atensi import cuda_wheels

            cuda_wheels.preload()  # cuBLAS from its pip wheel, for xp.matmul
            return cupy
    return np


def scores(Q, K, *, scale=True):
    """Matriks skor ``Q Kᵀ``, dibagi √d_k bila ``scale``. Bentuk ``(..., T, T)``."""
    Q, K, _ = _val.reference_qkv(Q, K)
    scale = _val.check_flag(scale, "scale")
    reference_checks.check_score_bytes(Q, K, 1, "Matriks skor S", _BIG_HINT)
    return _scores(Q, K, scale)


def _scores(Q, K, scale):
    xp = array_module(Q, K)
    S = xp.matmul(Q, xp.swapaxes(K, -1, -2))
    if scale:
        # One multiply per score, exactly like the engine: * (1 / sqrt(d_k)).
        S = S * S.dtype.type(1.0 / math.sqrt(Q.shape[-1]))
    return S


def causal_mask(S):
    """Salinan ``S`` dengan ``-inf`` di atas diagonal (posisi j > i = masa depan)."""
    return _causal_mask(reference_checks.check_square(S, "S"))


def _causal_mask(S):
    xp = array_module(S)
    T_q, T_k = S.shape[-2], S.shape[-1]
    future = xp.triu(xp.ones((T_q, T_k), dtype=bool), k=1)
    return xp.where(future, S.dtype.type(-np.inf), S)


def softmax(S, axis=-1):
    """Softmax yang stabil: kurangi maksimum baris dulu, lalu exp dan normalisasi.

    Baris yang seluruhnya ``-inf`` (tidak boleh melihat apa pun) menghasilkan
    nol, bukan NaN.
    """
    S = reference_checks.check_square(S, "S", min_ndim=1, layout="(..., n)")
    return _softmax(S, _val.check_axis(axis, S.ndim))


def _softmax(S, axis=-1):
    xp = array_module(S)
    row_max = xp.max(S, axis=axis, keepdims=True)
    # An all -inf row has max -inf; -inf - (-inf) would be NaN, so shift by 0.
    row_max = xp.where(xp.isfinite(row_max), row_max, S.dtype.type(0))
    E = xp.exp(S - row_max)
    total = xp.sum(E, axis=axis, keepdims=True)
    return E / xp.where(total > 0, total, S.dtype.type(1))


def weighted_sum(A, V):
    """Keluaran ``A V``: baris i adalah campuran baris-baris V dengan bobot A[i]."""
    A = _val.as_float_array(A, "A", layout="(..., T, T)")
    V = _val.as_float_array(V, "V", layout="(..., T, d_v)")
    _val.check_same_kind(A=A, V=V)
    reference_checks.check_weights_for_v(A, V)
    _val.check_leading({"A": A, "V": V}, broadcast=True)
    _val.check_finite(A, "A")
    _val.check_finite(V, "V")
    return _weighted_sum(A, V)


def _weighted_sum(A, V):
    xp = array_module(A, V)
    return xp.matmul(A, V)


def attention(Q, K, V, *, causal=True, scale=True):
    """Satu attention head utuh: ``softmax(mask(Q Kᵀ / √d_k)) V``."""
    Q, K, V = _val.reference_qkv(Q, K, V)
    causal = _val.check_flag(causal, "causal")
    scale = _val.check_flag(scale, "scale")
    reference_checks.check_score_bytes(Q, K, 3, "Skor, mask dan bobot (tiga array (T, T))",
                                       _BIG_HINT)
    S = _scores(Q, K, scale)
    if causal:
        S = _causal_mask(S)
    return _weighted_sum(_softmax(S), V)


def attention_blocked(Q, K, V, *, causal=True, scale=True, block=128, return_lse=False):
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

    ``return_lse=True``: kembalikan juga ``L = m + log l`` per baris, bentuk
    ``(..., T)`` (log-sum-exp skor baris itu), yang cukup untuk menghitung
    ulang ``A = exp(S − L)`` di *backward* (:func:`attention_backward_blocked`).
    """
    Q, K, V = _val.reference_qkv(Q, K, V)
    causal = _val.check_flag(causal, "causal")
    scale = _val.check_flag(scale, "scale")
    return_lse = _val.check_flag(return_lse, "return_lse")
    block = _val.check_block(block)
    xp = array_module(Q, K, V)
    T, d_k, T_k = Q.shape[-2], Q.shape[-1], K.shape[-2]
    lead = _lead(Q, K, V)  # broadcast head/batch axes, as in attention
    dtype = xp.result_type(Q.dtype, K.dtype, V.dtype, xp.float32)
    factor = dtype.type(1.0 / math.sqrt(d_k) if scale else 1.0)
    K_t = xp.swapaxes(K, -1, -2)
    # o sums up to T_k rows p·v with p <= 1: with |V| near the float limit that sum
    # overflows although the output (a mean of V rows) does not. Such a V is divided
    # by a power of two near its largest |v| and the output multiplied back.
    # The output, lse, and one tile's scores, weights and running m, l, o, for every
    # (broadcast) head: refused before any of them is allocated.
    rows, cols, d_v = min(block, T), min(block, T_k), V.shape[-1]
    per_head = T * (d_v + 1) + 2 * rows * cols + rows * (d_v + 2)
    memory.check_output_bytes(float(math.prod(lead)) * per_head * dtype.itemsize,
                              f"Keluaran dan ubin attention_blocked untuk {math.prod(lead)} head "
                              f"(sumbu depan {lead})",
                              "Kecilkan jumlah head/batch (sumbu depan sesudah broadcasting), "
                              "atau hitung sebagian head per panggilan.", _val.kind(Q))
    v_scale = _val.online_softmax_v_scale(V, T_k, dtype)
    if v_scale is not None:
        V = V / dtype.type(v_scale)
    out = xp.empty(lead + (T, V.shape[-1]), dtype=dtype)
    lse = xp.empty(lead + (T,), dtype=dtype) if return_lse else None

    for q0 in range(0, T, block):
        q1 = min(q0 + block, T)
        Q_blk = Q[..., q0:q1, :]
        m = xp.full(lead + (q1 - q0, 1), -np.inf, dtype=dtype)
        l = xp.zeros_like(m)
        o = xp.zeros(lead + (q1 - q0, V.shape[-1]), dtype=dtype)
        # Causal: keys beyond the last query of this block are all future
        # (and with T_q > T_k, the last rows see every key).
        k_end = min(q1, T_k) if causal else T_k
        for k0 in range(0, k_end, block):
            k1 = min(k0 + block, k_end)
            S = xp.matmul(Q_blk, K_t[..., k0:k1])  # (..., q1-q0, k1-k0)
            S *= factor
            if causal and k1 - 1 > q0:
                # This tile crosses the diagonal: hide j > i.
                future = xp.arange(k0, k1)[None, :] > xp.arange(q0, q1)[:, None]
                xp.copyto(S, dtype.type(-np.inf), where=future)
            m_new = xp.maximum(m, S.max(axis=-1, keepdims=True))
            # Every row sees key k0 <= i, so m_new is finite for valid input. A row
            # whose scores are all -inf keeps m_new = -inf: shift it by 0 instead,
            # so exp never meets -inf - (-inf) and the row ends as zeros, not NaN.
            shift = xp.where(xp.isneginf(m_new), dtype.type(0), m_new)
            alpha = xp.exp(m - shift)
            S -= shift
            P = xp.exp(S, out=S)
            l *= alpha
            l += P.sum(axis=-1, keepdims=True)
            o *= alpha
            o += xp.matmul(P, V[..., k0:k1, :])
            m = m_new
        # l >= exp(0) = 1 for every row that saw a key; guard 0 anyway.
        out[..., q0:q1, :] = o / xp.where(l > 0, l, dtype.type(1))
        if v_scale is not None:
            out[..., q0:q1, :] *= dtype.type(v_scale)
        if return_lse:
            lse[..., q0:q1] = (m + xp.log(l))[..., 0]
    return (out, lse) if return_lse else out


def attention_backward(Q, K, V, dO, *, causal=True, scale=True):
    """Gradien satu *head*: dari ``dO = ∂L/∂O`` ke ``(dQ, dK, dV)``.

    Forward dihitung ulang (A disimpan hanya di dalam fungsi ini), lalu aturan
    rantai dijalankan mundur melewati kelima langkah:

        dV = Aᵀ dO
        dA = dO Vᵀ
        dS = A ⊙ (dA − rowsum(dA ⊙ A))      (Jacobian softmax per baris)
        dQ = dS K · s
        dK = dSᵀ Q · s                       (s = 1/√d_k, atau 1)

    Mask tidak punya gradien sendiri: posisi yang ditutup punya A = 0, jadi dS
    di sana otomatis 0.
    """
    Q, K, V, dO = reference_checks.check_backward(Q, K, V, dO)
    causal = _val.check_flag(causal, "causal")
    scale = _val.check_flag(scale, "scale")
    xp = array_module(Q, K, V, dO)
    # float16 dihitung dalam float32 (hasilnya tetap float16): di float16,
    # dA = dO Vᵀ sudah melampaui batasnya pada |dO|, |V| ≈ 100.
    dtype = xp.result_type(Q.dtype, K.dtype, V.dtype, dO.dtype)
    work = xp.result_type(dtype, xp.float32)
    Q, K, V, dO = (x.astype(work, copy=False) for x in (Q, K, V, dO))
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
    # A broadcast input gets the sum over the axes it was broadcast along, so
    # each gradient has its input's shape (Q -= lr * dQ stays right).
    return tuple(_sum_to(g, x.shape).astype(dtype, copy=False)
                 for g, x in ((dQ, Q), (dK, K), (dV, V)))


def _lead(*arrays) -> tuple:
    return tuple(np.broadcast_shapes(*(x.shape[:-2] for x in arrays)))


def _sum_to(g, shape):
    """``g`` summed over the axes along which an array of ``shape`` was broadcast."""
    shape = tuple(shape)
    if tuple(g.shape) == shape:
        return g
    extra = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(extra))) if extra else g
    ones = tuple(n for n, size in enumerate(shape) if size == 1 and g.shape[n] != 1)
    return g.sum(axis=ones, keepdims=True) if ones else g


def attention_backward_blocked(Q, K, V, dO, *, causal=True, scale=True,
                               block=128, O=None, lse=None):
    """Gradien :func:`attention_backward`, tanpa pernah membuat array (T, T).

    Dari *forward* cukup disimpan keluaran ``O`` dan log-sum-exp per baris
    ``lse`` (``attention_blocked(..., return_lse=True)``; dihitung di sini
    bila tidak diberikan). Bobot dihitung ulang ubin demi ubin,
    ``A = exp(S − lse)``, seperti *backward* FlashAttention-2:

        D   = rowsum(dO ⊙ O)               (sama dengan rowsum(dA ⊙ A))
        dV += Aᵀ dO,   dA = dO Vᵀ,   dS = A ⊙ (dA − D)
        dQ += dS K · s,   dK += dSᵀ Q · s

    Perulangan luar berjalan atas ubin *key*, perulangan dalam atas ubin
    *query*; dengan ``causal``, ubin *query* sebelum ubin *key* dilewati
    (seluruhnya masa depan). Memori tambahan: beberapa ubin ``block²`` dan
    array ``(..., T, d_k)``, bukan ``T²``.
    """
    Q, K, V, dO = reference_checks.check_backward(Q, K, V, dO, dense=False)
    causal = _val.check_flag(causal, "causal")
    scale = _val.check_flag(scale, "scale")
    block = _val.check_block(block)
    if O is not None:
        O = _val.check_finite(_val.as_float_array(O, "O", layout="(..., T, d_k)"), "O")
    if lse is not None:
        lse = _val.check_finite(_val.as_float_array(lse, "lse", min_ndim=1, layout="(..., T)"),
                                "lse")
    xp = array_module(Q, K, V, dO)
    reference_checks.check_backward_shapes(Q, K, V, dO, O, lse)
    given_lse = lse is not None
    if O is None or lse is None:
        O_new, lse_new = attention_blocked(
            Q, K, V, causal=causal, scale=scale, block=block, return_lse=True)
        O = O_new if O is None else O
        lse = lse_new if lse is None else lse
    T, d_k = Q.shape[-2], Q.shape[-1]
    dtype = xp.result_type(Q.dtype, K.dtype, V.dtype, dO.dtype, xp.float32)
    s = dtype.type(1.0 / math.sqrt(d_k) if scale else 1.0)
    D = xp.sum(dO * O, axis=-1, dtype=dtype)  # (..., T)
    lead = _lead(Q, K, V)
    dQ = xp.zeros(lead + Q.shape[-2:], dtype=dtype)
    dK = xp.zeros(lead + K.shape[-2:], dtype=dtype)
    dV = xp.zeros(lead + V.shape[-2:], dtype=dtype)
    for k0 in range(0, K.shape[-2], block):
        k1 = min(k0 + block, K.shape[-2])
        K_blk, V_blk = K[..., k0:k1, :], V[..., k0:k1, :]
        # Views: += on them writes into dK and dV.
        dK_blk, dV_blk = dK[..., k0:k1, :], dV[..., k0:k1, :]
        # Causal: query rows before k0 never see these keys.
        for q0 in range(k0 if causal else 0, T, block):
            q1 = min(q0 + block, T)
            Q_blk, dO_blk = Q[..., q0:q1, :], dO[..., q0:q1, :]
            S = xp.matmul(Q_blk, xp.swapaxes(K_blk, -1, -2))
            S = S.astype(dtype, copy=False)
            S *= s
            if causal and k1 - 1 > q0:
                future = (xp.arange(k0, k1)[None, :]
                          > xp.arange(q0, q1)[:, None])
                xp.copyto(S, dtype.type(-np.inf), where=future)
            S -= lse[..., q0:q1, None]
            A = xp.exp(S, out=S)  # masked: exp(-inf) = 0
            if given_lse and A.size:
                _val.check_recomputed_weights(
                    float(A.max()), f" di baris {q0}..{q1 - 1}, kolom {k0}..{k1 - 1}",
                    "lse=None agar dihitung di sini")
            dV_blk += xp.matmul(xp.swapaxes(A, -1, -2), dO_blk)
            # Dalam dtype (minimal float32): dO Vᵀ float16 meluap di sekitar 100.
            dS = xp.matmul(dO_blk.astype(dtype, copy=False),
                           xp.swapaxes(V_blk.astype(dtype, copy=False), -1, -2))
            dS -= D[..., q0:q1, None]
            dS *= A
            dQ[..., q0:q1, :] += xp.matmul(dS, K_blk) * s
            dK_blk += xp.matmul(xp.swapaxes(dS, -1, -2), Q_blk) * s
    return _sum_to(dQ, Q.shape), _sum_to(dK, K.shape), _sum_to(dV, V.shape)


def numerical_gradient(f, X, *, h=1e-6):
    """Gradien ``∂f/∂X`` dengan beda hingga terpusat, entri demi entri.

    ``f`` menerima X dan mengembalikan satu bilangan. Untuk setiap entri:
    ``(f(X + h·e) − f(X − h·e)) / 2h``; galatnya sebanding dengan h².
    Pakai float64: di float32 pembulatan menelan selisih sekecil itu.
    """
    reference_checks.check_callable(f, "f")
    X = _val.as_float_array(X, "X", min_ndim=0, layout="(...)")
    h = _val.check_positive(h, "h")
    _val.check_finite(X, "X")
    reference_checks.check_difference_step(X, h)
    grad = np.zeros(X.shape, dtype=np.float64)
    for idx in np.ndindex(X.shape):
        keep = X[idx]
        X[idx] = keep + h
        f_plus = reference_checks.check_scalar_result(f(X))
        X[idx] = keep - h
        f_minus = reference_checks.check_scalar_result(f(X))
        X[idx] = keep
        grad[idx] = (f_plus - f_minus) / (2 * h)
    return grad


# ---------------------------------------------------------------------------
# Posisi (bab Posisi): encoding sinusoidal dan RoPE
# ---------------------------------------------------------------------------


def _frequencies(xp, d, base):
    """ω_m = base^(−2m/d) for m = 0 … d/2 − 1, float64: pair m turns ω_m radians per position."""
    return base ** (-xp.arange(0, d, 2, dtype=np.float64) / d)


def sinusoidal_positions(T, d_model, *, base=10000.0):
    """Encoding posisi sinusoidal (Vaswani dkk., 2017), bentuk ``(T, d_model)``, float64.

        PE[p, 2m]     = sin(p · ω_m)
        PE[p, 2m + 1] = cos(p · ω_m),     ω_m = base^(−2m / d_model)

    Pasangan m = 0 berputar satu radian per posisi; pasangan terakhir hampir
    diam. Vektor ini *ditambahkan* ke embedding token sebelum lapisan pertama.
    """
    T = _val.check_int(T, "T", low=1)
    d_model = _val.check_int(d_model, "d_model", low=2)
    position_checks.check_even(d_model, "d_model", "d_model")
    base = _val.check_number(base, "base", low=1.0, low_open=True)
    angle = np.arange(T, dtype=np.float64)[:, None] * _frequencies(np, d_model, base)[None, :]
    PE = np.empty((T, d_model))
    PE[:, 0::2] = np.sin(angle)
    PE[:, 1::2] = np.cos(angle)
    return PE


def rope_angles(T, d_k, *, offset=0, base=10000.0):
    """Sudut RoPE ``θ[p, m] = (offset + p) · base^(−2m/d_k)``, bentuk ``(T, d_k/2)``, float64."""
    T = _val.check_int(T, "T", low=1)
    d_k = _val.check_int(d_k, "d_k", low=2)
    position_checks.check_even(d_k, "d_k", "d_k")
    offset = position_checks.check_positions(offset, T)
    base = _val.check_number(base, "base", low=1.0, low_open=True)
    return rope_angles_formula(np, T, d_k, offset, base)


def rope_angles_formula(xp, T, d_k, offset, base):
    """Rumus sudut :func:`rope_angles` tanpa pemeriksaan, di modul array ``xp``."""
    positions = xp.arange(offset, offset + T, dtype=np.float64)
    return positions[:, None] * _frequencies(xp, d_k, base)[None, :]


def rope(X, *, offset=0, base=10000.0):
    """*Rotary position embedding* (RoPE, Su dkk., 2021) untuk Q atau K, bentuk ``(..., T, d_k)``.

    Baris p (posisi ``offset + p``) dibagi menjadi pasangan ``(x[2m], x[2m+1])``,
    dan setiap pasangan diputar sebesar ``θ = (offset + p) · base^(−2m/d_k)``:

        y[2m]     = x[2m] cos θ − x[2m+1] sin θ
        y[2m + 1] = x[2m] sin θ + x[2m+1] cos θ

    Akibatnya ``rope(q at i) · rope(k at j)`` hanya bergantung pada ``i − j``.
    ``offset``: posisi baris 0 (misalnya panjang *KV cache* saat satu *token*
    baru diputar). ``d_k`` harus genap. Sudut dihitung dalam float64, hasilnya
    bertipe sama dengan ``X``. V tidak pernah diputar.
    """
    X = _val.as_float_array(X, "X")
    T, d_k = X.shape[-2], X.shape[-1]
    position_checks.check_even(d_k, "X", "d_k")
    offset = position_checks.check_positions(offset, T)
    base = _val.check_number(base, "base", low=1.0, low_open=True)
    _val.check_finite(X, "X")
    position_checks.check_rotation_overflow(X)
    return rope_formula(X, offset, base)


def rope_formula(X, offset, base):
    """Rumus :func:`rope` tanpa pemeriksaan argumen, untuk semua baris sekaligus."""
    xp = array_module(X)
    T, d_k = X.shape[-2], X.shape[-1]
    dtype = xp.result_type(X.dtype, xp.float32)  # float16 diputar dalam float32
    angle = rope_angles_formula(xp, T, d_k, offset, base)
    cos, sin = xp.cos(angle).astype(dtype), xp.sin(angle).astype(dtype)
    x0, x1 = X[..., 0::2].astype(dtype), X[..., 1::2].astype(dtype)
    Y = xp.empty(X.shape, dtype=dtype)
    Y[..., 0::2] = x0 * cos - x1 * sin
    Y[..., 1::2] = x0 * sin + x1 * cos
    return Y.astype(X.dtype, copy=False)
