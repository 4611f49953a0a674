"""Fungsi publik kernel, dengan nama dan argumen yang sama dengan :mod:`atensi.reference`.

Setiap fungsi memilih backend, memeriksa masukan (:mod:`atensi.validation`,
:mod:`atensi.kernels.limits`), memindahkan array ke backend
(:mod:`atensi.kernels.arrays`), meluncurkan *kernel* (:mod:`atensi.kernels.launch`),
lalu mengembalikan array sejenis masukannya.
"""

from __future__ import annotations

import numpy as np

from atensi import memory, position_checks
from atensi import validation as _v
from atensi.formatting import id_int
from atensi.kernels import arrays, launch, limits, loading, registry
from atensi.kernels.launch import (
    DEFAULT_PRECISION,
    FUSED,
    FUSED_MAX_SPLITS,
    IMPLS,
    PRECISION_IMPLS,
    PRECISIONS,
    SPLIT_IMPLS,
    check_T_limit,
)
from atensi.kernels.loading import resolve_backend


def _check_version(version, step: str) -> None:
    """``version`` is one of the versions the registry has for ``step``."""
    _v.check_version(version, dict.fromkeys(registry.versions(step)))


def _check_causal_variant(version: str, step: str, hint: str) -> None:
    """``causal=True`` needs a kernel of ``step`` with the mask built in, for ``version``."""
    if registry.for_step(step, version, causal=True) is None:
        causal = [(v, registry.for_step(step, v, causal=True)) for v in registry.versions(step)]
        have = " atau ".join(f"version={v!r} (kernel {k.name})" for v, k in causal if k)
        raise ValueError(
            f"{step}(..., causal=True) hanya ada untuk {have}, tetapi yang diterima "
            f"version={version!r}. {hint}"
        )


def scores(Q, K, *, scale=True, causal=False, version="v2", backend=None):
    """Matriks skor ``Q Kᵀ`` (dikali ``1/√d_k`` bila ``scale``), bentuk ``(..., T, T)``.

    ``causal=True`` sekaligus menulis -inf di j > i: versi yang punya varian
    kausal memakainya (v2: ``scores_v2_tiled_causal``, ubin yang seluruhnya di
    masa depan tidak dihitung); versi tanpa varian itu (v1) menjalankan kernel
    mask sesudahnya.
    """
    backend = resolve_backend(backend)
    scale = _v.check_flag(scale, "scale")
    causal = _v.check_flag(causal, "causal")
    _check_version(version, "scores")
    H, T, d_k = limits.check_qkv(Q, K)
    check_T_limit(T, "scores")
    memory.check_output_bytes(4.0 * H * T * T, f"Matriks skor {H} × {T} × {T} (float32)",
                              "Pakai attention(..., impl='fused-v1'), yang tidak pernah membuat "
                              "matriks (T, T), atau kecilkan T.", _v.kind(Q))
    limits.check_cpu_work(limits.pair_work(H, T, d_k), "scores", backend)
    Qd, Kd = arrays.to_backend(Q, backend), arrays.to_backend(K, backend)
    Sd = arrays.empty(Q.shape[:-1] + (T,), backend)
    launch.launch_scores(Qd, Kd, Sd, H, T, d_k, scale=scale, causal=causal, version=version,
                   backend=backend)
    return arrays.like_input(Sd, Q)


def causal_mask(S, *, version="v1", backend=None):
    """Array baru: salinan ``S`` dengan -inf di setiap j > i. ``S`` tidak diubah.

    Nilai di j <= i disalin apa adanya (bit demi bit). NaN dan +inf ditolak
    lebih dulu; -inf boleh (sudah ditutup mask).
    """
    backend = resolve_backend(backend)
    _check_version(version, "causal_mask")
    H, T = limits.check_square(S, "S")
    check_T_limit(T, "causal_mask")
    _v.check_finite(S, "S", allow_neg_inf=True)
    memory.check_output_bytes(float(S.nbytes), f"Salinan S {tuple(S.shape)}",
                              "Kecilkan T, atau pakai scores(..., causal=True).", _v.kind(S))
    limits.check_cpu_work(float(H) * T * T, "causal_mask", backend)
    Sd = arrays.to_backend(S, backend)
    Od = arrays.empty(S.shape, backend)
    launch.launch_causal_mask(Sd, Od, H, T, backend=backend, version=version)
    return arrays.like_input(Od, S)


def softmax(S, axis=-1, *, causal=False, version="v2", backend=None):
    """Softmax per baris pada sumbu terakhir. Baris yang seluruhnya -inf → nol.

    ``S`` boleh berbentuk apa saja ``(..., n)``; -inf boleh (hasil mask), NaN
    dan +inf ditolak. ``causal=True`` (hanya versi yang punya varian kausal,
    ``registry.versions("softmax", causal=True)``, misalnya v2; ``S`` berbentuk
    ``(..., T, T)``): kernelnya (v2: ``softmax_v2_warp_causal``) memberi bobot
    0 pada j > i tanpa membaca ``S`` di sana, seolah-olah S sudah dimask.
    """
    backend = resolve_backend(backend)
    causal = _v.check_flag(causal, "causal")
    _check_version(version, "softmax")
    if causal:
        _check_causal_variant(version, "softmax",
                              "Pakai versi itu, atau mask dulu S dengan causal_mask(S).")
    _v.check_array(S, "S", min_ndim=1, layout="(..., n)")
    if causal:
        limits.check_square(S, "S")
    if (isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer))
            or axis not in (-1, S.ndim - 1)):
        raise ValueError(
            f"Kernel softmax hanya mendukung axis=-1 (sumbu terakhir, satu baris per block), "
            f"tetapi yang diterima axis={axis!r} untuk S berdimensi {S.ndim}. Pindahkan dulu "
            f"sumbunya: {_v.xp_name(S)}.ascontiguousarray({_v.xp_name(S)}.moveaxis(S, {axis}, -1))."
        )
    n = S.shape[-1]
    rows = S.size // n
    limits.check_int32(n, "Panjang baris softmax n")
    limits.check_int32(rows, "Jumlah baris")
    memory.check_output_bytes(float(S.nbytes), f"Keluaran softmax {tuple(S.shape)}",
                              "Kecilkan T, atau pakai attention(..., impl='fused-v1').", _v.kind(S))
    limits.check_cpu_work(float(S.size), "softmax", backend)
    _v.check_finite(S, "S", allow_neg_inf=True)
    Sd = arrays.to_backend(S, backend)
    Ad = arrays.empty(S.shape, backend)
    launch.launch_softmax(Sd, Ad, rows, n, version=version, backend=backend, causal=causal)
    return arrays.like_input(Ad, S)


def weighted_sum(A, V, *, causal=False, version="v1", backend=None):
    """Keluaran ``A V`` dengan A ``(..., T, T)`` dan V ``(..., T, d_k)``.

    ``version="v2"``: kernel diubin seperti GEMM (ubin 64 × 64 di *shared
    memory*, 4 × 4 keluaran per *thread*). ``causal=True`` (hanya versi yang
    punya varian kausal, ``registry.versions("weighted_sum", causal=True)``,
    misalnya v2): A[i, j] untuk j > i dianggap 0 dan tidak dibaca; ubin masa
    depan dilewati.
    """
    backend = resolve_backend(backend)
    causal = _v.check_flag(causal, "causal")
    _check_version(version, "weighted_sum")
    if causal:
        _check_causal_variant(version, "weighted_sum",
                              "Pakai versi itu; versi tanpa varian kausal selalu mengalikan seluruh A.")
    H, T = limits.check_square(A, "A")
    _v.check_array(V, "V")
    _v.check_same_kind(A=A, V=V)
    if V.shape[:-1] != A.shape[:-1]:
        raise ValueError(
            f"'V' harus berbentuk (..., T, d_k) dengan sumbu depan dan T yang sama dengan "
            f"'A' (..., T, T), tetapi yang diterima A.shape = {tuple(A.shape)} dan "
            f"V.shape = {tuple(V.shape)}."
        )
    d_k = V.shape[-1]
    check_T_limit(T, "weighted_sum")
    limits.check_cpu_work(limits.pair_work(H, T, d_k), "weighted_sum", backend)
    _v.check_finite(A, "A")
    _v.check_finite(V, "V")
    Ad, Vd = arrays.to_backend(A, backend), arrays.to_backend(V, backend)
    Od = arrays.empty(V.shape, backend)
    launch.launch_weighted_sum(Ad, Vd, Od, H, T, d_k, backend=backend, version=version,
                         causal=causal)
    return arrays.like_input(Od, V)


def _impl_list(impls) -> str:
    """``'fused-v2' atau 'fused-v3'``: the impls an argument belongs to."""
    return " atau ".join(repr(impl) for impl in impls)


def _check_splits(splits, impl: str):
    """``splits``: None, or an int 1..65535 with an impl that has a split-K pass."""
    if splits is None:
        return None
    if isinstance(splits, (bool, np.bool_)) or not isinstance(splits, (int, np.integer)):
        raise TypeError(
            f"Argumen 'splits' harus None atau bilangan bulat (int), tetapi yang diterima "
            f"{splits!r} ({type(splits).__name__}). Tulis misalnya splits=4, atau "
            "splits=None agar jumlahnya dipilih otomatis."
        )
    if impl not in SPLIT_IMPLS:
        raise ValueError(
            f"Argumen 'splits' (pembagian key antar-block) hanya ada untuk "
            f"impl={_impl_list(SPLIT_IMPLS)}, tetapi yang diterima impl={impl!r}. Pakai "
            f"impl={_impl_list(SPLIT_IMPLS)}, atau hapus argumen splits."
        )
    if not 1 <= splits <= FUSED_MAX_SPLITS:
        raise ValueError(
            f"Argumen 'splits' harus bilangan bulat 1 sampai {FUSED_MAX_SPLITS} "
            f"(banyaknya rentang key per ubin query), tetapi yang diterima {int(splits)}. "
            "Pakai splits=1 (tanpa pembagian), atau splits=None agar dipilih otomatis."
        )
    return int(splits)


def _check_precision(precision, impl: str):
    """``precision``: None, or a tensor-core format ("tf32", "3xtf32") with an impl that has one."""
    if precision is None:
        return DEFAULT_PRECISION
    if not isinstance(precision, str) or precision not in PRECISIONS:
        raise ValueError(
            f"Argumen 'precision' harus salah satu dari {PRECISIONS}, tetapi yang "
            f"diterima {precision!r}. Pakai 'tf32' (satu MMA per potongan, galat sekitar "
            "1e-3) atau '3xtf32' (tiga MMA, setara float32)."
        )
    if impl not in PRECISION_IMPLS:
        raise ValueError(
            f"Argumen 'precision' (format tensor core) hanya ada untuk "
            f"impl={_impl_list(PRECISION_IMPLS)}, tetapi yang diterima impl={impl!r}. Pakai "
            f"impl={_impl_list(PRECISION_IMPLS)}, atau hapus argumen precision."
        )
    return precision


_told: set = set()  # (what, GPU) whose fallback line was shown


def _runnable_backend(kernels_, backend: str, given, *, what: str, impl=None, d_k=None,
                      precision=DEFAULT_PRECISION) -> tuple[str, bool]:
    """``(backend, on_cpu_instead)``: where ``kernels_`` run.

    A GPU (real, or modelled by ``ATENSI_ARCH``) that cannot run one of them:
    refused before any work when the caller asked for ``backend='cupy'``;
    otherwise one line says so (once per ``what`` and GPU) and the emulator CPU
    runs them without that GPU's limits.
    """
    found = launch.first_unsupported(kernels_, backend)
    if found is None:
        return backend, False
    if given == "cupy":
        launch.check_runs(kernels_, backend, impl=impl, d_k=d_k, precision=precision)
    k, where = found
    if (what, where.name) not in _told:
        _told.add((what, where.name))
        print(launch.fallback_note(k, where, what))
    return "cpu", True


def attention(Q, K, V, *, causal=True, scale=True, impl="chain-v2", splits=None,
              precision=None, backend=None):
    """Satu *attention head* utuh dengan kernel: ``softmax(mask(Q Kᵀ/√d_k)) V``.

    ``impl`` memilih jalurnya (:data:`atensi.kernels.launch.IMPLS`):

    - ``"chain-v1"``, ``"chain-v2"`` (bawaan): rantai scores → softmax →
      weighted_sum dengan kernel v1 atau v2 (weighted_sum selalu v1);
    - ``"chain-v3"``: scores v2, softmax v2 kausal dan weighted_sum v2 (diubin),
      sehingga bila ``causal`` ketiga langkah melewati masa depan;
    - ``"fused-v1"``: satu *fused kernel* dengan *online softmax*, tanpa
      matriks (T, T) (``attention_fused_dD``);
    - ``"fused-v2"``: struktur FlashAttention-2 (``attention_fused_v2_dD``);
    - ``"fused-v3"``: Q·Kᵀ dan P·V di *tensor core* (WMMA, TF32, akumulasi FP32;
      ``kernels/attention_tensorcore.cu``).

    Di rantai, semua hasil antara tetap di backend (di GPU untuk ``"cupy"``).
    *Fused kernel* menerima d_k sampai batas di registri (128).

    ``splits`` (*fused kernel* yang punya lintasan split-K,
    :data:`atensi.kernels.launch.SPLIT_IMPLS`; di buku ``"fused-v2"`` dan
    ``"fused-v3"``): *key* setiap ubin *query* dibagi menjadi ``splits``
    rentang, satu *block* per rentang, lalu *kernel* kecil
    ``attention_fused_v2_combine`` menggabungkan hasil parsialnya (gaya
    flash-decoding), agar B·H·T kecil tetap mengisi GPU. ``None``: di v2
    dipilih otomatis oleh :func:`atensi.kernels.launch.fused_splits` (1 bila
    B·H·ceil(T/64) sudah memberi 2 *block* per SM; emulator CPU memakai
    jumlah SM H200 dari :mod:`atensi.hardware` sebagai model), di v3 tanpa
    pembagian. ``splits > 1`` memakai memori sementara float32 sebesar
    4 · splits · B·H · T · (d_k + 2) byte (o parsial, serta m dan ℓ).

    ``impl=None``: versi terbaik yang bisa dijalankan GPU ini pada d_k ini
    (fused terbaru lebih dulu, :func:`atensi.kernels.launch.best_impl`; rantai
    ``"chain-v2"`` bila tidak ada).

    GPU yang tidak bisa menjalankan *kernel* versi yang diminta (misalnya
    ``"fused-v3"`` di Tesla T4, sm_75: tensor core TF32 baru ada sejak sm_80;
    atau ``"fused-v2"`` dengan d_k > 64 di RTX 30xx/40xx: 104 KiB *shared
    memory* per *block*, batasnya 99 KiB): dengan ``backend="cupy"`` ditolak
    sebelum peluncuran, dengan pesan yang menyebut *kernel*, GPU, yang kurang,
    dan penggantinya; dengan ``backend=None`` atau ``"cpu"`` satu baris
    catatan dicetak dan *kernel* yang sama dijalankan di emulator CPU.
    ``ATENSI_ARCH=sm_75`` membuat emulator CPU berlaku seperti GPU itu.

    ``precision`` (*fused kernel* dengan format *tensor core*,
    :data:`atensi.kernels.launch.PRECISION_IMPLS`; di buku ``"fused-v3"``):
    ``"tf32"``: setiap operan dibulatkan ke TF32 (galat sekitar 1e-3);
    ``"3xtf32"`` (bawaan, ``None``): operan dipecah hi + lo, tiga MMA,
    ketelitian setara float32 untuk nilai normal. Tensor core membuang
    bilangan subnormal (|x| < 1,2e-38) menjadi 0, jadi di bawah sekitar 1e-38
    "setara float32" tidak berlaku: operan sekecil itu (dan bagian lo di bawah
    batas itu) dihitung sebagai nol. Nilai K (dan Q · log₂e) dalam 2⁻¹¹ dari
    batas float32 ditolak, karena pembulatan TF32 menjadikannya inf.
    """
    given, backend = backend, resolve_backend(backend)
    asked = precision
    causal = _v.check_flag(causal, "causal")
    scale = _v.check_flag(scale, "scale")
    if impl is None:  # the best version this GPU runs at this d_k
        _v.check_array(Q, "Q")
        _check_splits(splits, SPLIT_IMPLS[-1])
        if precision is not None:
            _check_precision(precision, PRECISION_IMPLS[-1])
        impl = launch.best_impl(Q.shape[-1], loading.target(backend).arch,
                                splits=splits, precision=precision)
    _v.check_version(impl, dict.fromkeys(IMPLS), "impl")
    splits = _check_splits(splits, impl)
    precision = _check_precision(precision, impl)
    fused = impl in FUSED
    if fused:
        version = FUSED[impl]
        H, T, d_k = limits.check_qkv(Q, K, V, max_d_k=launch.fused_max_d_k(version),
                                     kernel=launch.fused_family(version, precision),
                                     tf32=impl in PRECISION_IMPLS)
    else:
        H, T, d_k = limits.check_qkv(Q, K, V)
    backend, on_cpu = _runnable_backend(
        launch.impl_kernels(impl, d_k, precision), backend, given, what=f"impl={impl!r}",
        impl=impl, d_k=d_k, precision=precision)
    if on_cpu:
        with loading.unmodelled():
            return attention(Q, K, V, causal=causal, scale=scale, impl=impl, splits=splits,
                             precision=asked, backend="cpu")
    if splits is not None and splits > 1:
        memory.check_output_bytes(4.0 * splits * H * T * (d_k + 2),
                                  f"Memori sementara split-K ({splits} rentang, float32)",
                                  "Kecilkan splits, atau pakai splits=None.", _v.kind(Q))
    if fused:
        # Q·Kᵀ and P·V (the future skipped when causal), plus every block launched.
        ranges = splits or launch.default_splits(version, H, T)
        blocks = H * launch.ceil_div(T, launch.fused_kernel(version, d_k, precision).rows) * ranges
        speed = registry.emulated_speed("fused", version)
        work = limits.pair_work(H, T, d_k, products=1 if causal else 2, speed=speed,
                                blocks=blocks)
        pairs = limits.pair_work(H, T, d_k, products=1 if causal else 2, speed=speed)
        many = (splits or 1) > 1 and work > 2 * pairs  # most of the work is the split blocks
        limits.check_cpu_work(
            work, f"attention(..., impl={impl!r}" + (f", splits={splits})" if many else ")"),
            backend, first=(f"Kecilkan 'splits' (setiap rentang key adalah satu block yang ikut "
                            f"diemulasi: {id_int(blocks)} block), misalnya splits=None. "
                            if many else ""))
        Qd, Kd, Vd = (arrays.to_backend(x, backend) for x in (Q, K, V))
        # The online softmax sums up to T rows p·v before dividing by ℓ: a V near
        # float32's limit is scaled down by a power of two (exact), then back.
        v_scale = _v.online_softmax_v_scale(Vd, T)
        if v_scale is not None:
            Vd = Vd / np.float32(v_scale)
        Od = launch.launch_attention(Qd, Kd, Vd, impl=impl, causal=causal, scale=scale,
                                     backend=backend, splits=splits, precision=precision)
        if v_scale is not None:
            Od *= np.float32(v_scale)
        return arrays.like_input(Od, Q)
    check_T_limit(T, "scores")
    check_T_limit(T, "weighted_sum")
    memory.check_output_bytes(8.0 * H * T * T, f"Skor dan bobot {H} × {T} × {T} (float32, dua array)",
                              "Pakai attention(..., impl='fused-v1'), yang tidak pernah membuat "
                              "matriks (T, T), atau kecilkan T.", _v.kind(Q))
    # Q·Kᵀ and A·V; weighted_sum v1 multiplies all of A even when causal.
    limits.check_cpu_work(limits.pair_work(H, T, d_k, products=2), "attention", backend)
    Qd, Kd, Vd = (arrays.to_backend(x, backend) for x in (Q, K, V))
    Od = launch.launch_attention(Qd, Kd, Vd, impl=impl, causal=causal, scale=scale,
                                 backend=backend)
    return arrays.like_input(Od, Q)


def rope(X, *, offset=0, base=10000.0, version="v1", backend=None):
    """RoPE untuk Q atau K ``(..., T, d_k)`` dengan kernel ``rope_v1``; array baru.

    Baris p diputar sesuai posisi ``offset + p``, pasangan demi pasangan, seperti
    :func:`atensi.reference.rope`: sudutnya dihitung dalam double, jadi hasilnya
    sama dengan ``reference.rope`` dalam float64 sampai sekitar 1e-6 · max|X|
    (pembulatan float32 cos/sin dan rotasinya) di setiap posisi yang diterima
    (``offset + T`` sampai 2²⁴). ``d_k`` harus genap; ``X`` float32,
    C-contiguous, tanpa NaN/inf, dan |X| paling besar setengah batas float32
    (rotasinya bisa mencapai √2 · |x|); semuanya diperiksa sebelum peluncuran.
    """
    backend = resolve_backend(backend)
    _check_version(version, "rope")
    _v.check_array(X, "X")
    T, d_k = X.shape[-2], X.shape[-1]
    position_checks.check_even(d_k, "X", "d_k")
    offset = position_checks.check_positions(offset, T)
    base = _v.check_number(base, "base", low=1.0, low_open=True)
    if base > float(np.finfo(np.float32).max):
        raise ValueError(
            f"Argumen 'base' = {base!r} terlalu besar untuk float32 (kernel memakai float32). "
            "Pakai base yang lebih kecil, misalnya 10000.0."
        )
    rows = X.size // d_k
    limits.check_int32(rows, "Jumlah baris H·T")
    limits.check_int32(offset + T, "Posisi terakhir offset + T")
    memory.check_output_bytes(float(X.nbytes), f"Keluaran RoPE {tuple(X.shape)}",
                              "Kecilkan T atau jumlah head.", _v.kind(X))
    limits.check_cpu_work(float(X.size), "rope", backend)
    _v.check_finite(X, "X")
    position_checks.check_rotation_overflow(X)
    Xd = arrays.to_backend(X, backend)
    Od = arrays.empty(X.shape, backend)
    launch.launch_rope(Xd, Od, rows, T, d_k, offset=offset, base=base, backend=backend,
                       version=version)
    return arrays.like_input(Od, X)
