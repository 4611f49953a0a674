"""Fungsi publik kernel, dengan nama dan argumen yang sama dengan :mod:`atensi.reference`.

Setiap fungsi memilih backend, memeriksa masukan (:mod:`atensi.kernels.inputs`),
memindahkan array ke backend, meluncurkan *kernel*
(:mod:`atensi.kernels.launch`), lalu mengembalikan array sejenis masukannya.
"""

from __future__ import annotations

import numpy as np

from atensi import validation as _v
from atensi.kernels.inputs import (
    _check_array,
    _check_finite,
    _check_int32,
    _check_qkv,
    _check_same_kind,
    _check_square,
    _check_version,
    _empty,
    _kind,
    _like_input,
    _to_backend,
    _xp_name,
)
from atensi.kernels.launch import (
    ATTENTION_VERSIONS,
    FUSED_LIMITS,
    FUSED_V2_MAX_SPLITS,
    FUSED_V2_ROWS,
    FUSED_V3_DEFAULT_PRECISION,
    FUSED_V3_PRECISIONS,
    FUSED_VERSIONS,
    SCORES_VERSIONS,
    SOFTMAX_VERSIONS,
    WEIGHTED_SUM_CAUSAL,
    WEIGHTED_SUM_VERSIONS,
    _attention_fused,
    _check_T_limit,
    _launch_causal_mask,
    _launch_rope,
    _launch_scores,
    _launch_softmax,
    _launch_weighted_sum,
    fused_splits,
)
from atensi.kernels.loading import resolve_backend


def scores(Q, K, *, scale=True, causal=False, version="v2", backend=None):
    """Matriks skor ``Q Kᵀ`` (dikali ``1/√d_k`` bila ``scale``), bentuk ``(..., T, T)``.

    ``causal=True`` sekaligus menulis -inf di j > i: v2 memakai kernel
    ``scores_v2_tiled_causal`` (ubin yang seluruhnya di masa depan tidak
    dihitung), v1 menjalankan kernel mask sesudahnya.
    """
    backend = resolve_backend(backend)
    scale = _v.check_flag(scale, "scale")
    causal = _v.check_flag(causal, "causal")
    _check_version(version, SCORES_VERSIONS)
    H, T, d_k = _check_qkv(Q, K)
    _check_T_limit(T, "scores")
    _v.check_output_bytes(4.0 * H * T * T, f"Matriks skor {H} × {T} × {T} (float32)",
                          "Pakai attention(..., fused=True), yang tidak pernah membuat "
                          "matriks (T, T), atau kecilkan T.", _kind(Q))
    _v.check_cpu_work(_v.pair_work(H, T, d_k), "scores", backend)
    Qd, Kd = _to_backend(Q, backend), _to_backend(K, backend)
    Sd = _empty(Q.shape[:-1] + (T,), backend)
    _launch_scores(Qd, Kd, Sd, H, T, d_k, scale=scale, causal=causal, version=version,
                   backend=backend)
    return _like_input(Sd, Q)


def causal_mask(S, *, backend=None):
    """Array baru: salinan ``S`` dengan -inf di setiap j > i. ``S`` tidak diubah.

    Nilai di j <= i disalin apa adanya (bit demi bit). NaN dan +inf ditolak
    lebih dulu; -inf boleh (sudah ditutup mask).
    """
    backend = resolve_backend(backend)
    H, T = _check_square(S, "S")
    _check_T_limit(T, "causal_mask")
    _check_finite(S, "S", allow_neg_inf=True)
    _v.check_output_bytes(float(S.nbytes), f"Salinan S {tuple(S.shape)}",
                          "Kecilkan T, atau pakai scores(..., causal=True).", _kind(S))
    _v.check_cpu_work(float(H) * T * T, "causal_mask", backend)
    Sd = _to_backend(S, backend)
    Od = _empty(S.shape, backend)
    _launch_causal_mask(Sd, Od, H, T, backend=backend)
    return _like_input(Od, S)


def softmax(S, axis=-1, *, causal=False, version="v2", backend=None):
    """Softmax per baris pada sumbu terakhir. Baris yang seluruhnya -inf → nol.

    ``S`` boleh berbentuk apa saja ``(..., n)``; -inf boleh (hasil mask), NaN
    dan +inf ditolak. ``causal=True`` (hanya v2, ``S`` berbentuk ``(..., T, T)``):
    kernel ``softmax_v2_warp_causal`` memberi bobot 0 pada j > i tanpa membaca
    ``S`` di sana, seolah-olah S sudah dimask.
    """
    backend = resolve_backend(backend)
    causal = _v.check_flag(causal, "causal")
    _check_version(version, SOFTMAX_VERSIONS)
    if causal and version != "v2":
        raise ValueError(
            f"softmax(..., causal=True) hanya ada untuk version='v2' "
            f"(kernel softmax_v2_warp_causal), tetapi yang diterima version={version!r}. "
            "Pakai version='v2', atau mask dulu S dengan causal_mask(S)."
        )
    _check_array(S, "S", min_ndim=1, layout="(..., n)")
    if causal:
        _check_square(S, "S")
    if (isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer))
            or axis not in (-1, S.ndim - 1)):
        raise ValueError(
            f"Kernel softmax hanya mendukung axis=-1 (sumbu terakhir, satu baris per block), "
            f"tetapi yang diterima axis={axis!r} untuk S berdimensi {S.ndim}. Pindahkan dulu "
            f"sumbunya: {_xp_name(S)}.ascontiguousarray({_xp_name(S)}.moveaxis(S, {axis}, -1))."
        )
    n = S.shape[-1]
    rows = S.size // n
    _check_int32(n, "Panjang baris softmax n")
    _check_int32(rows, "Jumlah baris")
    _v.check_output_bytes(float(S.nbytes), f"Keluaran softmax {tuple(S.shape)}",
                          "Kecilkan T, atau pakai attention(..., fused=True).", _kind(S))
    _v.check_cpu_work(float(S.size), "softmax", backend)
    _check_finite(S, "S", allow_neg_inf=True)
    Sd = _to_backend(S, backend)
    Ad = _empty(S.shape, backend)
    _launch_softmax(Sd, Ad, rows, n, version=version, backend=backend, causal=causal)
    return _like_input(Ad, S)


def weighted_sum(A, V, *, causal=False, version="v1", backend=None):
    """Keluaran ``A V`` dengan A ``(..., T, T)`` dan V ``(..., T, d_k)``.

    ``version="v2"``: kernel diubin seperti GEMM (ubin 64 × 64 di *shared
    memory*, 4 × 4 keluaran per *thread*). ``causal=True`` (hanya v2): A[i, j]
    untuk j > i dianggap 0 dan tidak dibaca; ubin masa depan dilewati.
    """
    backend = resolve_backend(backend)
    causal = _v.check_flag(causal, "causal")
    _check_version(version, WEIGHTED_SUM_VERSIONS)
    if causal and version != "v2":
        raise ValueError(
            f"weighted_sum(..., causal=True) hanya ada untuk version='v2' "
            f"(kernel {WEIGHTED_SUM_CAUSAL}), tetapi yang diterima version={version!r}. "
            "Pakai version='v2'; v1 selalu mengalikan seluruh A."
        )
    H, T = _check_square(A, "A")
    _check_array(V, "V")
    _check_same_kind(A=A, V=V)
    if V.shape[:-1] != A.shape[:-1]:
        raise ValueError(
            f"'V' harus berbentuk (..., T, d_k) dengan sumbu depan dan T yang sama dengan "
            f"'A' (..., T, T), tetapi yang diterima A.shape = {tuple(A.shape)} dan "
            f"V.shape = {tuple(V.shape)}."
        )
    d_k = V.shape[-1]
    _check_T_limit(T, "weighted_sum")
    _v.check_cpu_work(_v.pair_work(H, T, d_k), "weighted_sum", backend)
    _check_finite(A, "A")
    _check_finite(V, "V")
    Ad, Vd = _to_backend(A, backend), _to_backend(V, backend)
    Od = _empty(V.shape, backend)
    _launch_weighted_sum(Ad, Vd, Od, H, T, d_k, backend=backend, version=version,
                         causal=causal)
    return _like_input(Od, V)


def _check_splits(splits, fused: bool, fused_version: str):
    """``splits``: None, or an int 1..65535 with fused=True, fused_version "v2" or "v3"."""
    if splits is None:
        return None
    if isinstance(splits, (bool, np.bool_)) or not isinstance(splits, (int, np.integer)):
        raise TypeError(
            f"Argumen 'splits' harus None atau bilangan bulat (int), tetapi yang diterima "
            f"{splits!r} ({type(splits).__name__}). Tulis misalnya splits=4, atau "
            "splits=None agar jumlahnya dipilih otomatis."
        )
    if not fused or fused_version not in ("v2", "v3"):
        raise ValueError(
            f"Argumen 'splits' (pembagian key antar-block) hanya ada untuk fused=True, "
            f"fused_version='v2' atau 'v3', tetapi yang diterima fused={fused!r}, "
            f"fused_version={fused_version!r}. Pakai fused=True, fused_version='v2' atau 'v3', "
            "atau hapus argumen splits."
        )
    if not 1 <= splits <= FUSED_V2_MAX_SPLITS:
        raise ValueError(
            f"Argumen 'splits' harus bilangan bulat 1 sampai {FUSED_V2_MAX_SPLITS} "
            f"(banyaknya rentang key per ubin query), tetapi yang diterima {int(splits)}. "
            "Pakai splits=1 (tanpa pembagian), atau splits=None agar dipilih otomatis."
        )
    return int(splits)


def _check_precision(precision, fused: bool, fused_version: str):
    """``precision``: None, or "tf32"/"3xtf32" with fused=True, fused_version="v3"."""
    if precision is None:
        return FUSED_V3_DEFAULT_PRECISION
    if not isinstance(precision, str) or precision not in FUSED_V3_PRECISIONS:
        raise ValueError(
            f"Argumen 'precision' harus salah satu dari {FUSED_V3_PRECISIONS}, tetapi yang "
            f"diterima {precision!r}. Pakai 'tf32' (satu MMA per potongan, galat sekitar "
            "1e-3) atau '3xtf32' (tiga MMA, setara float32)."
        )
    if not fused or fused_version != "v3":
        raise ValueError(
            f"Argumen 'precision' (format tensor core) hanya ada untuk fused=True, "
            f"fused_version='v3', tetapi yang diterima fused={fused!r}, "
            f"fused_version={fused_version!r}. Pakai fused=True, fused_version='v3', "
            "atau hapus argumen precision."
        )
    return precision


def attention(Q, K, V, *, causal=True, scale=True, version="v2", fused=False,
              fused_version="v1", splits=None, precision=None, backend=None):
    """Satu *attention head* utuh dengan kernel: ``softmax(mask(Q Kᵀ/√d_k)) V``.

    ``version`` dipakai untuk scores dan softmax ("v1", "v2"); ``"v3"`` adalah
    v2 ditambah softmax kausal dan weighted_sum v2 (diubin), sehingga bila
    ``causal`` ketiga langkah melewati masa depan. Semua hasil antara tetap di
    backend (di GPU untuk ``"cupy"``). ``fused=True``: satu *fused kernel*
    dengan *online softmax*, tanpa matriks (T, T); ``fused_version="v2"``
    memakai struktur FlashAttention-2 (``attention_fused_v2_dD``, d_k <= 128).

    ``splits`` (``fused_version="v2"`` atau ``"v3"``): *key* setiap ubin *query* dibagi
    menjadi ``splits`` rentang, satu *block* per rentang, lalu *kernel* kecil
    ``attention_fused_v2_combine`` menggabungkan hasil parsialnya (gaya
    flash-decoding), agar B·H·T kecil tetap mengisi GPU. ``None``: dipilih
    otomatis oleh :func:`atensi.kernels.launch.fused_splits` (1 bila
    B·H·ceil(T/64) sudah memberi 2 *block* per SM; emulator CPU memakai 132 SM
    milik H200 sebagai model). ``splits > 1`` memakai memori sementara float32
    sebesar 4 · splits · B·H · T · (d_k + 2) byte (o parsial, serta m dan ℓ).
    Di v3 ``None`` berarti tanpa pembagian; ``splits > 1`` memakai parsial dan
    penggabung yang sama dengan v2.

    ``fused_version="v3"``: Q·Kᵀ dan P·V di *tensor core* (WMMA, TF32,
    akumulasi FP32; ``kernels/attention_tensorcore.cu``, d_k <= 128).
    ``precision="tf32"``: setiap operan dibulatkan ke TF32 (galat sekitar
    1e-3); ``"3xtf32"`` (bawaan, ``None``): operan dipecah hi + lo, tiga MMA,
    ketelitian setara float32.
    """
    backend = resolve_backend(backend)
    causal = _v.check_flag(causal, "causal")
    scale = _v.check_flag(scale, "scale")
    fused = _v.check_flag(fused, "fused")
    version, causal_softmax, ws_version = _check_version(version, ATTENTION_VERSIONS)
    _v.check_version(fused_version, FUSED_VERSIONS, "fused_version")
    splits = _check_splits(splits, fused, fused_version)
    precision = _check_precision(precision, fused, fused_version)
    max_d_k, kernel_name = FUSED_LIMITS[fused_version]
    H, T, d_k = _check_qkv(Q, K, V, max_d_k=max_d_k if fused else None,
                           kernel=kernel_name)
    if splits is not None and splits > 1:
        _v.check_output_bytes(4.0 * splits * H * T * (d_k + 2),
                              f"Memori sementara split-K ({splits} rentang, float32)",
                              "Kecilkan splits, atau pakai splits=None.", _kind(Q))
    if fused:
        # Q·Kᵀ and P·V (the future skipped when causal), plus every block launched.
        ranges = splits or (fused_splits(H, T) if fused_version == "v2" else 1)
        blocks = H * -(-T // FUSED_V2_ROWS) * ranges
        work = _v.pair_work(H, T, d_k, products=1 if causal else 2,
                            path=f"fused_{fused_version}", blocks=blocks)
        _v.check_cpu_work(work, "attention(..., fused=True)", backend)
        Qd, Kd, Vd = (_to_backend(x, backend) for x in (Q, K, V))
        # The online softmax sums up to T rows p·v before dividing by ℓ: a V near
        # float32's limit is scaled down by a power of two (exact), then back.
        v_scale = _v.online_softmax_v_scale(Vd, T)
        if v_scale is not None:
            Vd = Vd / np.float32(v_scale)
        Od = _attention_fused(Qd, Kd, Vd, causal=causal, scale=scale, backend=backend,
                              version=fused_version, splits=splits, precision=precision)
        if v_scale is not None:
            Od *= np.float32(v_scale)
        return _like_input(Od, Q)
    _check_T_limit(T, "scores")
    _check_T_limit(T, "weighted_sum")
    _v.check_output_bytes(8.0 * H * T * T, f"Skor dan bobot {H} × {T} × {T} (float32, dua array)",
                          "Pakai attention(..., fused=True), yang tidak pernah membuat "
                          "matriks (T, T), atau kecilkan T.", _kind(Q))
    # Q·Kᵀ and A·V; weighted_sum v1 multiplies all of A even when causal.
    _v.check_cpu_work(_v.pair_work(H, T, d_k, products=2), "attention", backend)
    Qd, Kd, Vd = (_to_backend(x, backend) for x in (Q, K, V))
    # Every array before the first launch: a MemoryError then comes before any
    # emulated work, not after minutes of it.
    Sd = _empty(Q.shape[:-1] + (T,), backend)
    Ad = _empty(Sd.shape, backend)
    Od = _empty(V.shape, backend)
    _launch_scores(Qd, Kd, Sd, H, T, d_k, scale=scale, causal=causal, version=version,
                   backend=backend)
    _launch_softmax(Sd, Ad, H * T, T, version=version, backend=backend,
                    causal=causal and causal_softmax)
    _launch_weighted_sum(Ad, Vd, Od, H, T, d_k, backend=backend, version=ws_version,
                         causal=causal and ws_version == "v2")
    return _like_input(Od, Q)


def rope(X, *, offset=0, base=10000.0, backend=None):
    """RoPE untuk Q atau K ``(..., T, d_k)`` dengan kernel ``rope_v1``; array baru.

    Baris p diputar sesuai posisi ``offset + p``, pasangan demi pasangan, seperti
    :func:`atensi.reference.rope`. ``d_k`` harus genap; ``X`` float32,
    C-contiguous, tanpa NaN/inf; semuanya diperiksa sebelum peluncuran.
    """
    backend = resolve_backend(backend)
    _check_array(X, "X")
    T, d_k = X.shape[-2], X.shape[-1]
    _v.check_even(d_k, "X", "d_k")
    offset = _v.check_positions(offset, T)
    base = _v.check_number(base, "base", low=1.0, low_open=True)
    if base > float(np.finfo(np.float32).max):
        raise ValueError(
            f"Argumen 'base' = {base!r} terlalu besar untuk float32 (kernel memakai float32). "
            "Pakai base yang lebih kecil, misalnya 10000.0."
        )
    rows = X.size // d_k
    _check_int32(rows, "Jumlah baris H·T")
    _check_int32(offset + T, "Posisi terakhir offset + T")
    _v.check_output_bytes(float(X.nbytes), f"Keluaran RoPE {tuple(X.shape)}",
                          "Kecilkan T atau jumlah head.", _kind(X))
    _v.check_cpu_work(float(X.size), "rope", backend)
    _check_finite(X, "X")
    Xd = _to_backend(X, backend)
    Od = _empty(X.shape, backend)
    _launch_rope(Xd, Od, rows, T, d_k, offset=offset, base=base, backend=backend)
    return _like_input(Od, X)
