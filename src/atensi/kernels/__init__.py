"""Kernel CUDA dari ``kernels/*.cu``, dipanggil seperti fungsi NumPy.

Nama dan argumen fungsinya sama dengan :mod:`atensi.reference`, ditambah ``backend``:

    scores(Q, K, *, scale=True, causal=False, version="v2", backend=None)
        S = Q Kᵀ · scale, bentuk (..., T, T). ``causal=True`` memakai varian
        dengan mask kausal yang menyatu (v2) atau v1 lalu kernel mask (v1).
    causal_mask(S, *, backend=None)
        Salinan baru S dengan -inf di j > i; S tidak diubah.
    softmax(S, axis=-1, *, causal=False, version="v2", backend=None)
        Softmax per baris (hanya sumbu terakhir). ``causal=True`` (v2, S
        berbentuk (..., T, T)): j > i bobotnya 0 tanpa S dibaca di sana.
    weighted_sum(A, V, *, causal=False, version="v1", backend=None)
        O = A V, bentuk (..., T, d_k). v2: diubin seperti GEMM; ``causal=True``
        menganggap A[i, j] = 0 untuk j > i dan melewati ubin masa depan.
    attention(Q, K, V, *, causal=True, scale=True, version="v2", fused=False,
              fused_version="v1", splits=None, precision=None, backend=None)
        Rantai scores → softmax → weighted_sum tanpa bolak-balik ke host;
        ``version="v3"``: scores v2, softmax v2 kausal, weighted_sum v2
        (bila kausal, masa depan dilewati di ketiga langkah);
        ``fused=True`` memakai satu *fused kernel* (kernels/attention_fused.cu);
        ``fused_version="v2"``: struktur FlashAttention-2, d_k <= 128;
        ``splits``: key dibagi antar-block bila B·H·T kecil (split-K).
    rope(X, *, offset=0, base=10000.0, backend=None)
        RoPE untuk Q atau K (..., T, d_k), d_k genap: baris p diputar sesuai
        posisi offset + p (kernels/rope.cu).
    attention_backward(Q, K, V, dO, ...)  gradien (dQ, dK, dV), lihat ``backward``
    available_backends()      backend yang bisa dipakai di mesin ini
    compile_report(path)      kompilasi NVRTC + laporan ptxas (register, spill, okupansi)
    ptxas_table()             tabel ptxas semua kernel untuk sm_80 dan sm_90

Versi kernel: ``version="v1"`` (paling sederhana) atau ``"v2"`` (lebih cepat).
``attention(..., fused=True, fused_version="v3")``: Q·Kᵀ dan P·V di *tensor core*
(kernels/attention_tensorcore.cu), ``precision="tf32"`` atau ``"3xtf32"`` (bawaan).
``backend``: ``"cupy"`` (GPU NVIDIA), ``"cpu"`` (emulasi :mod:`atensi.cudacpu`)
atau ``None`` (GPU bila ada). Array NumPy masuk → array NumPy keluar; array
CuPy masuk → array CuPy keluar.

Isi paket, satu tugas per modul (semua nama di bawah juga ada di sini):

    loading     berkas .cu, pilihan backend, pustaka CUDA dari wheel, get_function
    inputs      pemeriksaan masukan (dari atensi.validation), array antar-backend
    launch      nama kernel, grid/block, peluncur ``_launch_*`` dan fused kernel
    compiling   CompileError, compile_report, ptxas_table, okupansi
    api         scores, causal_mask, softmax, weighted_sum, attention, rope
    backward    attention_backward (kernels/attention_backward.cu)
    cli         ``python -m atensi.kernels`` (kompilasi dan laporan ptxas)

Yang dibaca saat dipanggil (``get_function``, ``MAX_GRID_X``, ``MAX_GRID_YZ``,
``_cpu_available``, ``_cuda_major``, ``kernel_path``) diganti di modul
pemiliknya, misalnya ``monkeypatch.setattr(kernels.loading, "get_function", f)``
atau ``kernels.launch.MAX_GRID_YZ``: mengganti nama salinannya di sini tidak
berpengaruh.
"""

from __future__ import annotations

from atensi.kernels import api, backward, cli, compiling, inputs, launch, loading  # noqa: F401
from atensi.kernels.api import attention, causal_mask, rope, scores, softmax, weighted_sum
from atensi.kernels.backward import attention_backward
from atensi.kernels.cli import _cli_file_problem, _main  # noqa: F401
from atensi.kernels.compiling import (  # noqa: F401
    KERNEL_THREADS,
    CompileError,
    CompileReport,
    KernelResources,
    _cupy_options,
    _parse_ptxas,
    compile_report,
    occupancy,
    ptxas_table,
)
from atensi.kernels.inputs import (  # noqa: F401
    _check_array,
    _check_d_k_limit,
    _check_finite,
    _check_int32,
    _check_qkv,
    _check_same_kind,
    _check_square,
    _check_version,
    _empty,
    _kind,
    _leading,
    _like_input,
    _to_backend,
    _xp_name,
)
from atensi.kernels.launch import (  # noqa: F401
    ATTENTION_VERSIONS,
    CAUSAL_MASK,
    FUSED_LIMITS,
    FUSED_MAX_D_K,
    FUSED_THREADS,
    FUSED_V2_COMBINE,
    FUSED_V2_DYNAMIC_SMEM,
    FUSED_V2_KEYS,
    FUSED_V2_MAX_D_K,
    FUSED_V2_MAX_SPLITS,
    FUSED_V2_ROWS,
    FUSED_V2_SPLIT_VARIANTS,
    FUSED_V2_VARIANTS,
    FUSED_VARIANTS,
    FUSED_VERSIONS,
    MAX_GRID_X,
    MAX_GRID_YZ,
    MAX_T,
    ROPE,
    ROPE_THREADS,
    SCORES_CAUSAL,
    SCORES_TILE,
    SCORES_VERSIONS,
    SOFTMAX_CAUSAL,
    SOFTMAX_VERSIONS,
    WEIGHTED_SUM,
    WEIGHTED_SUM_BLOCK,
    WEIGHTED_SUM_CAUSAL,
    WEIGHTED_SUM_V2_THREADS,
    WEIGHTED_SUM_V2_TILE,
    WEIGHTED_SUM_VERSIONS,
    _aligned16,
    _attention_fused,
    _ceil_div,
    _check_T_limit,
    _fused_v2_combine,
    _fused_v2_partials,
    _launch_causal_mask,
    _launch_rope,
    _launch_scores,
    _launch_softmax,
    _launch_weighted_sum,
    _scale_factor,
    _softmax_block,
    fused_splits,
)
from atensi.kernels.loading import (  # noqa: F401
    _CUDA_WHEELS,
    BACKENDS,
    NVRTC_OPTIONS,
    _cpu_available,
    _cuda_major,
    _display_name,
    _gpu_status,
    _preload_cuda_wheels,
    available_backends,
    get_function,
    gpu_available,
    kernel_path,
    kernels_dir,
    resolve_backend,
)
