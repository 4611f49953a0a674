"""Kernel CUDA dari ``kernels/*.cu``, dipanggil seperti fungsi NumPy.

Nama dan argumen fungsinya sama dengan :mod:`atensi.reference`, ditambah ``backend``:

    scores(Q, K, *, scale=True, causal=False, version="v2", backend=None)
        S = Q Kᵀ · scale, bentuk (..., T, T). ``causal=True`` memakai varian
        dengan mask kausal yang menyatu (v2) atau v1 lalu kernel mask (v1).
    causal_mask(S, *, version="v1", backend=None)
        Salinan baru S dengan -inf di j > i; S tidak diubah.
    softmax(S, axis=-1, *, causal=False, version="v2", backend=None)
        Softmax per baris (hanya sumbu terakhir). ``causal=True`` (v2, S
        berbentuk (..., T, T)): j > i bobotnya 0 tanpa S dibaca di sana.
    weighted_sum(A, V, *, causal=False, version="v1", backend=None)
        O = A V, bentuk (..., T, d_k). v2: diubin seperti GEMM; ``causal=True``
        menganggap A[i, j] = 0 untuk j > i dan melewati ubin masa depan.
    attention(Q, K, V, *, causal=True, scale=True, impl="chain-v2", splits=None,
              precision=None, backend=None)
        Satu *head* utuh. ``impl`` memilih jalurnya (``IMPLS``):
        ``"chain-v1"``, ``"chain-v2"``, ``"chain-v3"`` (rantai scores →
        softmax → weighted_sum tanpa bolak-balik ke host; v3 melewati masa
        depan di ketiga langkah), ``"fused-v1"`` (satu *fused kernel*,
        kernels/attention_fused.cu), ``"fused-v2"`` (struktur
        FlashAttention-2), ``"fused-v3"`` (Q·Kᵀ dan P·V di *tensor core*,
        kernels/attention_tensorcore.cu, ``precision="tf32"`` atau
        ``"3xtf32"``). ``splits`` (fused-v2, fused-v3): key dibagi
        antar-block bila B·H·T kecil (split-K).
    rope(X, *, offset=0, base=10000.0, version="v1", backend=None)
        RoPE untuk Q atau K (..., T, d_k), d_k genap: baris p diputar sesuai
        posisi offset + p (kernels/rope.cu).
    attention_backward(Q, K, V, dO, ...)  gradien (dQ, dK, dV), lihat ``backward``
    available_backends()      backend yang bisa dipakai di mesin ini
    compile_report(path)      kompilasi NVRTC + laporan ptxas (register, spill, okupansi)
    ptxas_table()             tabel ptxas semua kernel untuk sm_80 dan sm_90
    support_table()           GPU pembaca (GTX 10xx … H200) dan versi yang berjalan di sana
    support_markdown()        tabel yang sama dalam Markdown (bab Menjalankan)

Fakta setiap kernel (berkas, *block*, *shared memory*, konstanta ``-D``,
model FLOP/byte) ada di satu tempat: :mod:`atensi.kernels.registry`.

``backend``: ``"cupy"`` (GPU NVIDIA), ``"cpu"`` (emulasi :mod:`atensi.cudacpu`)
atau ``None`` (GPU bila ada). Array NumPy masuk → array NumPy keluar; array
CuPy masuk → array CuPy keluar.

Isi paket, satu tugas per modul:

    registry    satu entri per __global__: berkas, block, shared memory, konstanta, model
    loading     berkas .cu, pilihan backend, pustaka CUDA dari wheel, get_function
    arrays      array antar-backend (NumPy/CuPy masuk, jenis yang sama keluar)
    launch      grid/block dan peluncur setiap kernel, pilihan ``impl``
    limits      batas kernel (int32, grid.y, d_k) dan beban emulasi CPU, sebelum peluncuran
    compiling   CompileError, compile_report, ptxas_table, okupansi
    sass        campuran instruksi SASS (``python -m atensi.kernels --sass``)
    api         scores, causal_mask, softmax, weighted_sum, attention, rope
    backward    attention_backward (kernels/attention_backward.cu)
    cli         ``python -m atensi.kernels`` (kompilasi, laporan ptxas, daftar kernel)

Di sini hanya nama publik. Tes mengganti nama di modul pemiliknya, misalnya
``monkeypatch.setattr(kernels.loading, "get_function", f)`` atau
``kernels.launch.MAX_GRID_YZ``.
"""

from __future__ import annotations

from atensi.kernels import registry
from atensi.kernels.api import attention, causal_mask, rope, scores, softmax, weighted_sum
from atensi.kernels.backward import attention_backward
from atensi.kernels.compiling import (
    CompileError,
    CompileReport,
    compile_report,
    occupancy,
    ptxas_table,
)
from atensi.kernels.launch import IMPLS, fused_splits, support_markdown, support_table
from atensi.kernels.loading import (
    BACKENDS,
    available_backends,
    get_function,
    gpu_available,
    kernel_path,
    kernels_dir,
    resolve_backend,
)
from atensi.ptxas import KernelResources

__all__ = [
    "BACKENDS", "IMPLS", "CompileError", "CompileReport", "KernelResources", "attention",
    "attention_backward", "available_backends", "causal_mask", "compile_report",
    "fused_splits", "get_function", "gpu_available", "kernel_path", "kernels_dir",
    "occupancy", "ptxas_table", "registry", "resolve_backend", "rope", "scores", "softmax",
    "support_markdown", "support_table", "weighted_sum",
]
