"""Pemeriksaan yang hanya dimiliki :mod:`atensi.reference`.

``reference`` memeriksa masukannya lewat pemeriksaan umum di
:mod:`atensi.validation` (``reference_qkv``, jenis array, float, NaN/inf, skor
yang melampaui float), yang juga dipakai ``loops``, ``kernels`` dan
penjelajah. Di sini yang hanya dipakainya sendiri:

- memori matriks (T, T) yang akan dibuat, sebelum dipesan
  (:func:`check_score_bytes`, :func:`check_square`);
- langkah mundur: dO berbentuk seperti keluaran, gradien dA = dO Vᵀ yang tidak
  melampaui float (:func:`check_backward`), bentuk dO, O dan lse
  (:func:`check_backward_shapes`);
- satu baris V per *key* (:func:`check_weights_for_v`);
- gradien numerik: ``f`` sebuah fungsi (:func:`check_callable`), langkah h
  yang tidak hilang dalam pembulatan (:func:`check_difference_step`), dan
  ``f`` yang mengembalikan satu bilangan hingga (:func:`check_scalar_result`).
"""

from __future__ import annotations

import math

import numpy as np

from atensi import memory
from atensi import validation as _val


def check_score_bytes(Q, K, copies: int, what: str, hint: str, dtype=None) -> None:
    """``copies`` arrays of shape (..., T_q, T_k) must fit in memory
    (in ``dtype``; by default the type of the scores Q Kᵀ)."""
    lead = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2])
    itemsize = np.dtype(dtype or np.result_type(Q.dtype, K.dtype)).itemsize
    nbytes = float(math.prod(lead)) * Q.shape[-2] * K.shape[-2] * itemsize * copies
    memory.check_output_bytes(nbytes, what, hint, _val.kind(Q))


def check_square(S, name: str, *, min_ndim: int = 2, layout: str = "(..., T, T)",
                     allow_neg_inf: bool = True):
    """A score/weight array; -inf allowed when it means masked."""
    S = _val.as_float_array(S, name, min_ndim=min_ndim, layout=layout)
    memory.check_output_bytes(float(S.nbytes), f"Salinan '{name}' {tuple(S.shape)}",
                              "Kecilkan T, atau pakai attention_blocked.", _val.kind(S))
    _val.check_finite(S, name, allow_neg_inf=allow_neg_inf)
    return S


def check_backward(Q, K, V, dO, *, dense=True):
    """Backward: Q, K, V as for attention; dO float, finite, shaped like O."""
    Q, K, V = _val.reference_qkv(Q, K, V)
    dO = _val.as_float_array(dO, "dO", layout="(..., T, d_k)")
    _val.check_same_kind(Q=Q, dO=dO)
    want = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2]) + Q.shape[-2:-1] + V.shape[-1:]
    if tuple(dO.shape) != tuple(want):
        raise ValueError(
            f"Argumen 'dO' harus berbentuk {tuple(want)} (bentuk keluaran O = A V untuk "
            f"Q.shape = {tuple(Q.shape)} dan V.shape = {tuple(V.shape)}), tetapi yang "
            f"diterima {tuple(dO.shape)}."
        )
    _val.check_finite(dO, "dO")
    # dA = dO Vᵀ and dS are computed in float32 at least (float16 would overflow at ~100).
    work = np.result_type(Q.dtype, K.dtype, V.dtype, dO.dtype, np.float32)
    _val.check_gradient_overflow(dO, V, work)
    if dense:
        check_score_bytes(Q, K, 4, "Skor, bobot dan gradiennya (empat array (T, T))",
                          "Pakai attention_backward_blocked, yang tidak pernah membuat "
                          "matriks (T, T), atau kecilkan T.", work)
    return Q, K, V, dO


def check_weights_for_v(A, V) -> None:
    """Weights A (..., T_q, T_k) and values V (..., T_k, d_v): one V row per key."""
    if A.shape[-1] != V.shape[-2]:
        raise ValueError(
            f"Sumbu terakhir 'A' (satu bobot per key) harus sama dengan T milik 'V' (satu "
            f"baris value per key), tetapi yang diterima A.shape = {tuple(A.shape)} dan "
            f"V.shape = {tuple(V.shape)}."
        )


def check_backward_shapes(Q, K, V, dO, O=None, lse=None) -> None:
    """Shapes of dO (and O, lse) against Q, K, V, before anything is computed."""
    rows = tuple(np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])) + (Q.shape[-2],)
    out_shape = rows + (V.shape[-1],)
    for name, x, want in (("dO", dO, out_shape), ("O", O, out_shape),
                          ("lse", lse, rows)):
        if x is not None and tuple(x.shape) != want:
            raise ValueError(
                f"Argumen '{name}' harus berbentuk {want} (bentuk keluaran O = A V "
                f"untuk Q.shape = {tuple(Q.shape)} dan V.shape = {tuple(V.shape)}"
                + ("; satu nilai per baris Q" if name == "lse" else "")
                + f"), tetapi yang diterima {tuple(x.shape)}."
            )


def check_callable(f, name: str) -> None:
    if not callable(f):
        raise TypeError(
            f"Argumen '{name}' harus fungsi (callable) yang menerima array dan mengembalikan "
            f"satu bilangan, tetapi yang diterima {type(f).__name__}. Tulis misalnya "
            f"{name}=lambda X: float((X ** 2).sum())."
        )



def check_difference_step(X, h) -> None:
    """X ± h must be X moved by h, to 1 %: otherwise the difference quotient is
    rounding (in float16, or with a tiny h, X + h == X and the gradient is 0)."""
    xp = _val.xp_of(X)
    step = X.dtype.type(h)
    moved = ((X + step) - X).astype(np.float64)
    worst = float(xp.max(xp.abs(moved - h))) / h
    if worst > 0.01:
        raise ValueError(
            f"Argumen 'h' = {h:g} terlalu kecil untuk X bertipe {X.dtype} (nilai terbesar "
            f"|X| = {float(xp.max(xp.abs(X))):.3g}): X + h dibulatkan, langkahnya meleset "
            f"{worst:.0%}, dan gradiennya menjadi hasil pembulatan (nol, bila X + h == X). "
            "Pakai X.astype(np.float64) dan h sekitar 1e-6 (atau sebanding dengan |X|).")


def check_scalar_result(value) -> float:
    """What the function 'f' of a numerical gradient returned: one finite number."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"Fungsi 'f' harus mengembalikan satu bilangan, tetapi mengembalikan "
                        f"{type(value).__name__}.") from None
    if not math.isfinite(value):
        raise ValueError(f"Fungsi 'f' mengembalikan {value} untuk X di sekitar titik ini; "
                         "beda hingga butuh nilai hingga.")
    return value
