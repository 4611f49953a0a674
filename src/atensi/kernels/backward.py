"""Langkah mundur satu *head* dengan kernel ``kernels/attention_backward.cu``.

Fungsi publiknya juga ada sebagai ``atensi.kernels.attention_backward``:

    attention_backward(Q, K, V, dO, *, causal=True, scale=True, lse=None, backend=None)
        → (dQ, dK, dV), sama dengan ``atensi.reference.attention_backward``.

Rantainya, satu *kernel* per rumus (semua hasil antara tetap di backend):

    S  = Q Kᵀ · s (+ mask)           scores.cu          (kernel forward)
    A  = softmax(S)                  softmax.cu         (kernel forward), atau
    A  = exp(S − lse)                attention_weights_from_lse_v1, bila ``lse`` diberikan
    dV = Aᵀ dO                       attention_backward_dv_v1
    dA = dO Vᵀ                       attention_backward_da_v1
    dS = A ⊙ (dA − rowsum(dA ⊙ A))   softmax_backward_v1
    dQ = dS K · s                    attention_backward_dq_v1
    dK = dSᵀ Q · s                   attention_backward_dk_v1

``lse`` adalah log-sum-exp per baris dari *forward* (bentuk ``Q.shape[:-1]``),
misalnya dari ``reference.attention_blocked(..., return_lse=True)``. Validasi dan
pemuatan *kernel* memakai bagian-bagian :mod:`atensi.kernels` yang sama dengan
*forward*, jadi pesan kesalahannya juga sama; ukuran *block* dari
:mod:`atensi.kernels.registry`.
"""

from __future__ import annotations

import numpy as np

from atensi import memory
from atensi import validation as _v
from atensi.kernels import arrays, launch, limits, loading, registry
from atensi.kernels.loading import resolve_backend

FILE = "attention_backward.cu"
FROM_LSE = "attention_weights_from_lse_v1"
DV, DA, DQ, DK = (f"attention_backward_{x}_v1" for x in ("dv", "da", "dq", "dk"))
SOFTMAX_BACKWARD = "softmax_backward_v1"
KERNELS = (FROM_LSE, DV, DA, SOFTMAX_BACKWARD, DQ, DK)


def _check_dO(dO, Q, V):
    _v.check_array(dO, "dO")
    _v.check_same_kind(Q=Q, dO=dO)
    want = tuple(Q.shape[:-1]) + (V.shape[-1],)
    if tuple(dO.shape) != want:
        raise ValueError(
            f"Argumen 'dO' (gradien terhadap keluaran O) harus berbentuk sama dengan O, "
            f"yaitu {want} untuk Q.shape = {tuple(Q.shape)} dan V.shape = "
            f"{tuple(V.shape)}, tetapi yang diterima {tuple(dO.shape)}. Satu baris dO "
            "untuk setiap baris O."
        )
    _v.check_finite(dO, "dO")


def _check_lse(lse, Q):
    _v.check_array(lse, "lse", min_ndim=1, layout="(..., T)")
    _v.check_same_kind(Q=Q, lse=lse)
    if tuple(lse.shape) != tuple(Q.shape[:-1]):
        raise ValueError(
            f"Argumen 'lse' (log-sum-exp per baris dari forward) harus berbentuk "
            f"{tuple(Q.shape[:-1])}, satu nilai per baris Q (Q.shape = {tuple(Q.shape)}), "
            f"tetapi yang diterima {tuple(lse.shape)}. Ambil dari "
            "reference.attention_blocked(Q, K, V, return_lse=True) dengan Q, K, V yang sama."
        )
    _v.check_finite(lse, "lse")


# ---------------------------------------------------------------------------
# Launchers: backend arrays in, already validated
# ---------------------------------------------------------------------------


def _launch_rows(name, args, H, T, d, backend):
    """dV, dQ, dK: one thread per (row, c)."""
    block = registry.get(name).block  # threadIdx.x -> column c, threadIdx.y -> row
    grid = (launch.ceil_div(d, block[0]), launch.ceil_div(T, block[1]), min(H, launch.MAX_GRID_YZ))
    loading.get_function(FILE, name, backend)(grid, block, args)


def _launch_per_row(name, args, rows, n, backend):
    """Softmax backward and A from lse: one block per row of length n."""
    grid = (min(rows, launch.MAX_GRID_X), 1, 1)
    block = (launch.row_block(n, name), 1, 1)
    loading.get_function(FILE, name, backend)(grid, block, args)


def _backward_chain(Qd, Kd, Vd, dOd, lsed, H, T, d_k, *, causal, scale, backend):
    """The whole chain on backend arrays; returns (dQ, dK, dV) on the backend."""
    d_v = Vd.shape[-1]
    rows = H * T
    # Every array before the first launch: a MemoryError then comes before any
    # emulated work, not after minutes of it.
    Sd = arrays.empty(Qd.shape[:-1] + (T,), backend)
    Ad = arrays.empty(Sd.shape, backend)
    dAd = arrays.empty(Sd.shape, backend)
    dVd = arrays.empty(Vd.shape, backend)
    dQd, dKd = arrays.empty(Qd.shape, backend), arrays.empty(Kd.shape, backend)
    launch.launch_scores(Qd, Kd, Sd, H, T, d_k, scale=scale, causal=causal, version="v2",
                   backend=backend)
    if lsed is None:
        launch.launch_softmax(Sd, Ad, rows, T, version="v2", backend=backend)
    else:
        _launch_per_row(FROM_LSE, (Sd, lsed, Ad, np.int32(rows), np.int32(T)), rows, T, backend)
        # A caller's lse that does not belong to these scores gives weights above 1
        # (gradients off by any factor) or NaN: refuse before they are used.
        _v.check_recomputed_weights(float(Ad.max()), "",
                                    "lse=None agar bobotnya dihitung lewat softmax")
    _launch_rows(DV, (Ad, dOd, dVd, np.int32(H), np.int32(T), np.int32(d_v)), H, T, d_v,
                 backend)
    pair = registry.get(DA).block  # threadIdx.x -> j, threadIdx.y -> i
    grid = (launch.ceil_div(T, pair[0]), launch.ceil_div(T, pair[1]), min(H, launch.MAX_GRID_YZ))
    loading.get_function(FILE, DA, backend)(
        grid, pair, (dOd, Vd, dAd, np.int32(H), np.int32(T), np.int32(d_v)))
    dSd = Sd  # S is no longer needed: its memory holds dS
    _launch_per_row(SOFTMAX_BACKWARD, (Ad, dAd, dSd, np.int32(rows), np.int32(T)), rows, T,
                    backend)
    s = launch.scale_factor(d_k, scale)
    _launch_rows(DQ, (dSd, Kd, dQd, np.int32(H), np.int32(T), np.int32(d_k), s), H, T, d_k,
                 backend)
    _launch_rows(DK, (dSd, Qd, dKd, np.int32(H), np.int32(T), np.int32(d_k), s), H, T, d_k,
                 backend)
    return dQd, dKd, dVd


# ---------------------------------------------------------------------------
# Public function
# ---------------------------------------------------------------------------


def attention_backward(Q, K, V, dO, *, causal=True, scale=True, lse=None, backend=None):
    """Gradien satu *head* dengan rantai *kernel*: ``(dQ, dK, dV)`` dari ``dO``.

    Sama dengan :func:`atensi.reference.attention_backward`. ``dO`` berbentuk
    sama dengan keluaran ``O`` (``(..., T, d_v)``). Bila ``lse`` (log-sum-exp
    per baris dari *forward*, bentuk ``(..., T)``) diberikan, bobot ``A``
    dihitung ulang sebagai ``exp(S − lse)`` alih-alih lewat *softmax*.
    Semua masukan float32 dan C-contiguous; array NumPy masuk → NumPy keluar,
    CuPy masuk → CuPy keluar.
    """
    backend = resolve_backend(backend)
    causal = _v.check_flag(causal, "causal")
    scale = _v.check_flag(scale, "scale")
    H, T, d_k = limits.check_qkv(Q, K, V)
    _check_dO(dO, Q, V)
    _v.check_gradient_overflow(dO, V)
    if lse is not None:
        _check_lse(lse, Q)
    launch.check_T_limit(T, "scores")
    launch.check_T_limit(T, "weighted_sum")
    memory.check_output_bytes(12.0 * H * T * T,
                              f"S, A dan dA {H} × {T} × {T} (float32, tiga array)",
                              "Pakai reference.attention_backward_blocked, yang tidak pernah "
                              "membuat matriks (T, T), atau kecilkan T.", _v.kind(Q))
    # scores, dV, dA, dQ, dK: five (T, T, d) products; the two softmax passes are small.
    limits.check_cpu_work(limits.pair_work(H, T, max(d_k, V.shape[-1]), products=5),
                          "attention_backward", backend)
    Qd, Kd, Vd, dOd = (arrays.to_backend(x, backend) for x in (Q, K, V, dO))
    lsed = None if lse is None else arrays.to_backend(lse, backend)
    grads = _backward_chain(Qd, Kd, Vd, dOd, lsed, H, T, d_k, causal=causal, scale=scale,
                            backend=backend)
    return tuple(arrays.like_input(g, Q) for g in grads)
