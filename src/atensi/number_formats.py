"""Format bilangan tensor core: TF32, pemecahan 3xTF32, dan model NumPy satu MMA.

Satu tugas: apa yang dilakukan format TF32 pada bilangan float32. Modul ini
terpisah dari :mod:`atensi.reference` karena ``reference`` adalah matematika
atensi dalam float32/float64 biasa, sedangkan di sini aturan pembulatan satu
format perangkat keras (bit demi bit), yang dipakai emulator
(``cuda_cpu_wmma.h``), kernel v3 (``kernels/attention_tensorcore.cu``), tes,
dan bab tensor core.

    to_tf32(x)            pembulatan cvt.rna.tf32.f32 (10 bit mantissa)
    split_tf32(x)         (hi, lo) dengan hi = to_tf32(x), lo = to_tf32(x - hi)
    mma_tf32(a, b, c)     satu ubin 16 x 16 x 8, urutan penjumlahan emulator
    matmul_tf32(a, b)     A B dengan operan TF32 (atau 3xTF32), dijumlahkan tepat
    attention_tf32(...)   atensi dengan kedua perkalian matriksnya di TF32

Semua fungsi bekerja pada array NumPy float32 dan mengembalikan float32.
"""

from __future__ import annotations

import numpy as np

from . import validation as _v
from .formatting import id_sci

TF32_MANTISSA_BITS = 10
_DROPPED = 23 - TF32_MANTISSA_BITS  # 13 bit terendah float32 dibuang
_HALF = np.uint32(1 << (_DROPPED - 1))
_KEEP = np.uint32((0xFFFFFFFF >> _DROPPED) << _DROPPED)
CANONICAL_NAN = np.uint32(0x7FFFFFFF)
MMA_M, MMA_N, MMA_K = 16, 16, 8
PRECISIONS = ("tf32", "3xtf32")


def _as_float32(x, name: str) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype != np.float32:
        raise TypeError(
            f"'{name}' harus float32, tetapi dtype-nya {x.dtype}. Ubah dulu dengan "
            f"{name}.astype(np.float32): TF32 didefinisikan sebagai pembulatan dari float32."
        )
    return x


def to_tf32(x) -> np.ndarray:
    """Bulatkan float32 ke TF32 seperti ``cvt.rna.tf32.f32``: hasilnya float32.

    Terdekat, seri menjauhi nol (*round to nearest, ties away*), ke 10 bit
    mantissa: 13 bit terendah menjadi 0. Bilangan subnormal dibulatkan dengan
    aturan yang sama, luapan menjadi ±inf, ±inf tetap, NaN menjadi 0x7fffffff.
    """
    x = _as_float32(x, "x")
    bits = np.ascontiguousarray(x).view(np.uint32)
    out = (bits + _HALF) & _KEEP  # magnitudo + setengah ulp TF32, lalu dipotong
    out = np.where(np.isnan(x), CANONICAL_NAN, out).astype(np.uint32)
    return out.view(np.float32).reshape(x.shape)


def split_tf32(x) -> tuple[np.ndarray, np.ndarray]:
    """Pecah float32 menjadi ``(hi, lo)`` TF32 dengan ``x ≈ hi + lo`` (trik 3xTF32).

    ``hi = to_tf32(x)``; sisa ``x - hi`` tepat dalam float32, lalu
    ``lo = to_tf32(x - hi)``. hi + lo membawa sekitar 21 bit mantissa.
    """
    x = _as_float32(x, "x")
    # hi would be inf and lo -inf: their sum NaN, for a finite x. NaN and inf stay
    # as they are (the kernels refuse them before they get here).
    big = np.isfinite(x) & (np.abs(x) >= np.float32(_v.TF32_OVERFLOW))
    if big.any():
        _check_operand(x[big], "x", "Perkecil x, misalnya x / 2, dan kalikan hasilnya kembali.")
    hi = to_tf32(x)
    with np.errstate(invalid="ignore", over="ignore"):
        lo = to_tf32((x - hi).astype(np.float32))
    return hi, lo


def _check_tf32(x, name: str):
    bits = np.ascontiguousarray(x).view(np.uint32)
    bad = ((bits & ~_KEEP) != 0) & ~np.isnan(x)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"'{name}' harus sudah TF32 (13 bit terendah nol), tetapi {name}[{idx}] = "
            f"{float(x[idx])!r} belum. Bulatkan dulu dengan to_tf32({name})."
        )


def mma_tf32(a, b, c) -> np.ndarray:
    """Satu MMA tensor core ``D = A B + C`` (16 x 8 kali 8 x 16, tambah 16 x 16).

    ``a`` dan ``b`` sudah TF32 (lihat :func:`to_tf32`), ``c`` float32. Untuk
    setiap (r, n): ``acc = C[r, n]``, lalu untuk k = 0..7
    ``acc = fl32(acc + fl32(A[r, k] B[k, n]))`` (float32, terdekat-genap):
    urutan yang dipakai emulator, sehingga hasilnya identik bit demi bit.
    """
    a, b, c = (_as_float32(v, n) for v, n in ((a, "a"), (b, "b"), (c, "c")))
    if a.shape != (MMA_M, MMA_K) or b.shape != (MMA_K, MMA_N) or c.shape != (MMA_M, MMA_N):
        raise ValueError(
            f"mma_tf32 butuh a (16, 8), b (8, 16), c (16, 16), tetapi yang diterima "
            f"a {a.shape}, b {b.shape}, c {c.shape}."
        )
    _check_tf32(a, "a")
    _check_tf32(b, "b")
    acc = c.copy()
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        for k in range(MMA_K):
            # Hasil kali dalam float64 tepat; satu pembulatan ke float32 = fl32(a*b).
            prod = (a[:, k, None].astype(np.float64) * b[None, k, :]).astype(np.float32)
            acc = (acc + prod).astype(np.float32)
    return acc


def _check_precision(precision):
    if precision not in PRECISIONS:
        raise ValueError(
            f"Argumen 'precision' harus salah satu dari {PRECISIONS}, tetapi yang diterima "
            f"{precision!r}. Pakai 'tf32' (cepat, galat sekitar 1e-3) atau '3xtf32' "
            "(tiga MMA, setara float32)."
        )


def _check_operand(x, name: str, hint: str) -> None:
    """A finite operand that rounds to a finite TF32 number (below ``TF32_OVERFLOW``):
    else the product is inf, then NaN, where the kernels refuse the same input."""
    _v.check_finite(x, name)
    if x.size and _v.max_abs(x) >= _v.TF32_OVERFLOW:
        raise ValueError(
            f"Argumen '{name}' berisi nilai sebesar {id_sci(_v.max_abs(x))}: dibulatkan ke TF32 "
            "(10 bit mantissa) nilai itu menjadi inf, karena setiap nilai dalam 2⁻¹¹ dari batas "
            f"float32 dibulatkan ke atas, melewati batas itu. {hint}"
        )


def matmul_tf32(a, b, *, precision="tf32") -> np.ndarray:
    """``A B`` dengan operan TF32 (atau 3xTF32): galat format operan saja.

    ``a`` (..., M, K), ``b`` (..., K, N) float32. Operan dibulatkan
    (:func:`to_tf32`) atau dipecah (:func:`split_tf32`), hasil kalinya
    dijumlahkan tepat dalam float64, lalu dibulatkan sekali ke float32. Jadi
    model ini memisahkan galat format operan; akumulasi FP32 *kernel* (8 suku
    per MMA) menambah galat setingkat float32 di atasnya. ``precision="3xtf32"``:
    ``a_lo b_hi + a_hi b_lo + a_hi b_hi`` (``a_lo b_lo`` dibuang).
    """
    _check_precision(precision)
    a, b = _as_float32(a, "a"), _as_float32(b, "b")
    for x, name in ((a, "a"), (b, "b")):
        _check_operand(x, name, f"Perkecil {name}, misalnya {name} / 2.")
    if a.ndim < 2 or b.ndim < 2 or a.shape[-1] != b.shape[-2]:
        raise ValueError(
            f"matmul_tf32 butuh a (..., M, K) dan b (..., K, N) dengan K yang sama, tetapi yang "
            f"diterima a {a.shape} dan b {b.shape}."
        )
    if precision == "tf32":
        pairs = [(to_tf32(a), to_tf32(b))]
    else:
        a_hi, a_lo = split_tf32(a)
        b_hi, b_lo = split_tf32(b)
        pairs = [(a_lo, b_hi), (a_hi, b_lo), (a_hi, b_hi)]
    total = sum(np.matmul(x.astype(np.float64), y.astype(np.float64)) for x, y in pairs)
    top = float(np.finfo(np.float32).max)
    if total.size and np.abs(total).max() > top:
        raise ValueError(
            f"Argumen 'a' dan 'b' terlalu besar: hasil kali a·b mencapai "
            f"{id_sci(float(np.abs(total).max()))}, melampaui batas float32 ({id_sci(top)}), "
            "dan akan menjadi inf. Perkecil keduanya, misalnya a / 1e3 dan b / 1e3."
        )
    return total.astype(np.float32)


def attention_tf32(Q, K, V, *, causal=True, scale=True, precision="tf32") -> np.ndarray:
    """Model NumPy fused v3: ``softmax(mask(Q Kᵀ/√d_k)) V`` dengan Q·Kᵀ dan P·V di TF32.

    Q dikali skala lebih dulu (seperti kernel), skor dan softmax dalam
    float32, bobot P = exp(S - maks) dibulatkan ke TF32 (atau dipecah untuk
    3xTF32) untuk P·V, lalu dibagi jumlah P float32. Q, K, V (..., T, d_k) float32.
    """
    _check_precision(precision)
    Q, K, V = (_v.as_float_array(_as_float32(x, n), n) for x, n in ((Q, "Q"), (K, "K"), (V, "V")))
    # The checks of kernels.attention(impl="fused-v3") (atensi.kernels.limits.check_qkv),
    # but for the memory layout, which a NumPy model does not care about.
    _v.check_qk_shapes(Q, K, square=True)
    _v.check_leading({"Q": Q, "K": K, "V": V}, broadcast=False)
    _v.check_v(V, K, Q)
    for x, name in ((Q, "Q"), (K, "K"), (V, "V")):
        _v.check_finite(x, name)
    _v.check_score_overflow(Q, K, tf32=True)
    # V divided by a power of two when T · max|v| could overflow, as every fused kernel does.
    v_scale = _v.online_softmax_v_scale(V, K.shape[-2])
    if v_scale is not None:
        V = (V / np.float32(v_scale)).astype(np.float32)
    d_k = Q.shape[-1]
    factor = np.float32(1.0) / np.sqrt(np.float32(d_k)) if scale else np.float32(1.0)
    S = matmul_tf32((Q * factor).astype(np.float32), np.swapaxes(K, -1, -2).copy(), precision=precision)
    T = Q.shape[-2]
    if causal:
        S = np.where(np.tril(np.ones((T, T), bool)), S, np.float32(-np.inf)).astype(np.float32)
    m = S.max(axis=-1, keepdims=True)
    P = np.exp(S - m).astype(np.float32)
    l = P.sum(axis=-1, keepdims=True, dtype=np.float32)
    out = (matmul_tf32(P, V, precision=precision) / l).astype(np.float32)
    return out if v_scale is None else (out * np.float32(v_scale)).astype(np.float32)
