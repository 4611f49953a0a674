"""Peluncuran kernel: nama kernel, ukuran *grid*/*block*, dan peluncurnya.

Peluncur ``_launch_scores``, ``_launch_causal_mask``, ``_launch_softmax``,
``_launch_weighted_sum`` dan ``_attention_fused`` menerima array backend yang
sudah diperiksa (lihat :mod:`atensi.kernels.inputs`), menghitung *grid* dan
*block*, lalu meluncurkan *kernel* dari ``loading.get_function``. Modul lain
di atensi (``bench``, langkah mundur) boleh memakainya langsung.

``MAX_GRID_X`` dan ``MAX_GRID_YZ`` dibaca di setiap peluncuran: tes boleh
menurunkannya (``monkeypatch.setattr(kernels.launch, "MAX_GRID_YZ", 2)``)
untuk memeriksa bahwa perulangan *kernel* atas *head* dan baris mencakup
semuanya.
"""

from __future__ import annotations

import numpy as np

from atensi import validation as _v
from atensi.kernels import loading
from atensi.kernels.inputs import _check_d_k_limit, _empty, _kind, _leading

# Launch limits of CUDA grids. Read at every launch, so a test can lower them
# to check that the kernels' loops over heads/rows cover everything.
MAX_GRID_X = 2**31 - 1
MAX_GRID_YZ = 65535

SCORES_TILE = 16  # must match SCORES_TILE in kernels/scores.cu
SCORES_VERSIONS = {"v1": "scores_v1_naive", "v2": "scores_v2_tiled"}
SCORES_CAUSAL = "scores_v2_tiled_causal"
SOFTMAX_VERSIONS = {"v1": "softmax_v1_shared", "v2": "softmax_v2_warp"}
CAUSAL_MASK = "causal_mask_v1"
WEIGHTED_SUM = "weighted_sum_v1"
WEIGHTED_SUM_BLOCK = (32, 8, 1)
SOFTMAX_CAUSAL = "softmax_v2_warp_causal"
WEIGHTED_SUM_VERSIONS = {"v1": WEIGHTED_SUM, "v2": "weighted_sum_v2_tiled"}
WEIGHTED_SUM_CAUSAL = "weighted_sum_v2_tiled_causal"
WEIGHTED_SUM_V2_TILE = 64  # WS_BM = WS_BN in kernels/weighted_sum.cu
WEIGHTED_SUM_V2_THREADS = 256  # WS_THREADS
# attention(version=...): (scores/softmax version, softmax causal variant,
# weighted_sum version).
ATTENTION_VERSIONS = {"v1": ("v1", False, "v1"), "v2": ("v2", False, "v1"),
                      "v3": ("v2", True, "v2")}

# Largest T each launch shape allows: grid.y = ceil(T / rows per block) <= 65535.
MAX_T = {
    "scores": SCORES_TILE * 65535,
    "causal_mask": 16 * 65535,
    "weighted_sum": WEIGHTED_SUM_BLOCK[1] * 65535,
}


def _check_T_limit(T: int, step: str):
    _v.check_T_limit(T, step, MAX_T[step])


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _scale_factor(d_k: int, scale: bool) -> np.float32:
    # Exactly the engine's 1.0f / sqrtf(d_k): IEEE float32 sqrt and division.
    return np.float32(1.0) / np.sqrt(np.float32(d_k)) if scale else np.float32(1.0)


def _launch_scores(Qd, Kd, Sd, H, T, d_k, *, scale, causal, version,
                   backend):
    fused_mask = causal and version == "v2"
    name = SCORES_CAUSAL if fused_mask else SCORES_VERSIONS[version]
    tiles = _ceil_div(T, SCORES_TILE)
    grid = (tiles, tiles, min(H, MAX_GRID_YZ))
    block = (SCORES_TILE, SCORES_TILE, 1)
    args = (Qd, Kd, Sd, np.int32(H), np.int32(T), np.int32(d_k),
            _scale_factor(d_k, scale))
    loading.get_function("scores.cu", name, backend)(grid, block, args)
    if causal and version == "v1":
        # v1 has no fused variant: mask in place with the separate kernel.
        _launch_causal_mask(Sd, Sd, H, T, backend=backend)
    return Sd


def _launch_causal_mask(Sd, Od, H, T, *, backend):
    tiles = _ceil_div(T, 16)
    grid = (tiles, tiles, min(H, MAX_GRID_YZ))
    args = (Sd, Od, np.int32(H), np.int32(T))
    loading.get_function("causal_mask.cu", CAUSAL_MASK, backend)(grid, (16, 16, 1), args)
    return Od


def _softmax_block(n: int) -> int:
    """Next power of two >= n, clamped to [32, 256]: a multiple of 32 as v2 needs."""
    return max(32, min(256, 1 << (n - 1).bit_length()))


def _launch_softmax(Sd, Ad, rows, n, *, version, backend, causal=False):
    # causal: rows = H*T, n = T; only the v2 kernel has a causal variant.
    grid = (min(rows, MAX_GRID_X), 1, 1)
    block = (_softmax_block(n), 1, 1)
    args = (Sd, Ad, np.int32(rows), np.int32(n))
    name = SOFTMAX_CAUSAL if causal else SOFTMAX_VERSIONS[version]
    loading.get_function("softmax.cu", name, backend)(grid, block, args)
    return Ad


def _launch_weighted_sum(Ad, Vd, Od, H, T, d_k, *, backend, version="v1",
                         causal=False):
    if version == "v2":
        tile = WEIGHTED_SUM_V2_TILE
        grid = (_ceil_div(d_k, tile), _ceil_div(T, tile), min(H, MAX_GRID_YZ))
        block = (WEIGHTED_SUM_V2_THREADS, 1, 1)
        name = WEIGHTED_SUM_CAUSAL if causal else WEIGHTED_SUM_VERSIONS["v2"]
    else:  # v1 multiplies every weight, masked or not
        bx, by, _ = block = WEIGHTED_SUM_BLOCK
        grid = (_ceil_div(d_k, bx), _ceil_div(T, by), min(H, MAX_GRID_YZ))
        name = WEIGHTED_SUM
    args = (Ad, Vd, Od, np.int32(H), np.int32(T), np.int32(d_k))
    loading.get_function("weighted_sum.cu", name, backend)(grid, block, args)
    return Od


# --- fused kernel (kernels/attention_fused.cu) ---------------------------------
FUSED_MAX_D_K = 128  # must match FUSED_MAX_DK in kernels/attention_fused.cu
FUSED_THREADS = 128  # FUSED_THREADS in the .cu
# (largest d_k, kernel, query rows per block): the first that holds d_k is used.
# Rows per block = 128 / P threads per row (P = 2, or 4 for the widest rows).
FUSED_VARIANTS = (
    (32, "attention_fused_d32", 64),
    (64, "attention_fused_d64", 64),
    (128, "attention_fused_d128", 32),
)
# v2 (FlashAttention-2 structure): 4 warps, 64 query rows per block.
FUSED_V2_MAX_D_K = 128
FUSED_V2_ROWS = 64  # FV2_BQ in the .cu
FUSED_V2_KEYS = 32  # FV2_BK in the .cu: keys per tile
FUSED_V2_VARIANTS = ((32, "attention_fused_v2_d32"), (64, "attention_fused_v2_d64"),
                     (128, "attention_fused_v2_d128"))
# Split over keys (flash-decoding style): partial kernels and their combine.
FUSED_V2_SPLIT_VARIANTS = ((32, "attention_fused_v2_split_d32"),
                           (64, "attention_fused_v2_split_d64"),
                           (128, "attention_fused_v2_split_d128"))
FUSED_V2_COMBINE = "attention_fused_v2_combine"
# Widths whose Qs + Ks + Vs + Ps (FV2_SMEM(D) = ((64 + 4*32) * D + 64*32) * 4
# bytes) exceed the 48 KiB of static shared memory: extern __shared__, bytes
# set at launch.
FUSED_V2_DYNAMIC_SMEM = {D: ((FUSED_V2_ROWS + 4 * FUSED_V2_KEYS) * D + FUSED_V2_ROWS * FUSED_V2_KEYS) * 4
                         for D in (64, 128)}
FUSED_V2_MAX_SPLITS = 65535  # grid.z
# The SM count the automatic split models on the CPU emulator: an H200.
MODEL_SM_COUNT = 132
FUSED_V2_BLOCKS_PER_SM = 2  # split until there are this many blocks per SM
FUSED_VERSIONS = {"v1": "attention_fused_dD", "v2": "attention_fused_v2_dD",
                  "v3": "attention_tensorcore_<precision>_dD"}
# v3 (kernels/attention_tensorcore.cu): Q·Kᵀ and P·V on tensor cores (WMMA TF32).
FUSED_V3_MAX_D_K = 128
FUSED_V3_ROWS = 64  # TC_BQ in the .cu
FUSED_V3_KEYS = 32  # TC_BK in the .cu
FUSED_V3_PRECISIONS = ("tf32", "3xtf32")
FUSED_V3_DEFAULT_PRECISION = "3xtf32"  # float32 accuracy unless TF32 is asked for
# fused_version -> (largest d_k, kernel named in the error when d_k is larger)
FUSED_LIMITS = {"v1": (FUSED_MAX_D_K, "attention_fused"),
                "v2": (FUSED_V2_MAX_D_K, "attention_fused_v2"),
                "v3": (FUSED_V3_MAX_D_K, "attention_tensorcore")}


def fused_v3_kernel_name(precision: str, d_k: int) -> str:
    """``attention_tensorcore_<precision>_dD`` for the smallest D in 32, 64, 128 that holds d_k."""
    width = next(w for w in (32, 64, 128) if d_k <= w)
    return f"attention_tensorcore_{precision}_d{width}"


def fused_v3_smem(d_k: int) -> int:
    """TC_SMEM(D) in the .cu: Qs, Os (64 x (D+8)), Ks, Vs (32 x (D+8)), Ss (4 x 16 x 40), bytes."""
    width = next(w for w in (32, 64, 128) if d_k <= w)
    ld = width + 8
    return 4 * (2 * FUSED_V3_ROWS * ld + 2 * FUSED_V3_KEYS * ld + 4 * 16 * (FUSED_V3_KEYS + 8))


def _fused_v3_kernel(name: str, d_k: int, backend: str):
    """The v3 kernel with its TC_SMEM(D) bytes of dynamic shared memory allowed."""
    kernel = loading.get_function("attention_tensorcore.cu", name, backend)
    smem = fused_v3_smem(d_k)
    # Every width uses dynamic shared memory; above 48 KiB it must be allowed first.
    if getattr(kernel, "max_dynamic_shared_size_bytes", smem) < smem:
        kernel.max_dynamic_shared_size_bytes = smem
    return kernel, smem


def _fused_v3_partials(Qd, Kd, Vd, splits, *, causal, scale, backend, precision):
    """Split-K pass of v3: ``(Op, ML)`` in the format of :func:`_fused_v2_partials`."""
    T, d_k = Qd.shape[-2], Qd.shape[-1]
    H = _leading(Qd.shape)
    name = fused_v3_kernel_name(precision, d_k).replace("attention_tensorcore_",
                                                        "attention_tensorcore_split_")
    kernel, smem = _fused_v3_kernel(name, d_k, backend)
    Op = _empty((splits, H, T, d_k), backend)
    ML = _empty((splits, H, T, 2), backend)
    grid = (_ceil_div(T, FUSED_V3_ROWS), min(H, MAX_GRID_YZ), splits)
    args = (Qd, Kd, Vd, Op, ML, np.int32(T), np.int32(d_k), np.int32(H),
            _scale_factor(d_k, scale), np.int32(bool(causal)), np.int32(splits))
    kernel(grid, (FUSED_THREADS, 1, 1), args, shared_mem=smem)
    return Op, ML


def _attention_fused_v3(Qd, Kd, Vd, *, causal, scale, backend, precision, splits=None):
    """Launch ``attention_tensorcore_<precision>_dD``: one block per 64 query rows and head.

    ``splits`` > 1: :func:`_fused_v3_partials`, then fused v2's
    ``attention_fused_v2_combine``. None or 1: no split.
    """
    T, d_k = Qd.shape[-2], Qd.shape[-1]
    H = _leading(Qd.shape)
    _check_d_k_limit(d_k, FUSED_V3_MAX_D_K, "attention_tensorcore")
    Od = _empty(Qd.shape, backend)
    if splits is not None and splits > 1:
        Op, ML = _fused_v3_partials(Qd, Kd, Vd, splits, causal=causal, scale=scale,
                                    backend=backend, precision=precision)
        return _fused_v2_combine(Op, ML, Od, backend=backend)
    kernel, smem = _fused_v3_kernel(fused_v3_kernel_name(precision, d_k), d_k, backend)
    grid = (_ceil_div(T, FUSED_V3_ROWS), min(H, MAX_GRID_YZ), 1)
    args = (Qd, Kd, Vd, Od, np.int32(T), np.int32(d_k), np.int32(H),
            _scale_factor(d_k, scale), np.int32(bool(causal)))
    kernel(grid, (FUSED_THREADS, 1, 1), args, shared_mem=smem)
    return Od


def _aligned16(x) -> bool:
    """The array's data starts on a 16-byte boundary (float4 loads allowed)."""
    ptr = x.data.ptr if _kind(x) == "cupy" else x.ctypes.data
    return ptr % 16 == 0


def fused_splits(H: int, T: int, sm_count: int = MODEL_SM_COUNT) -> int:
    """Automatic ``splits`` for fused v2: how many key ranges per query tile.

    ``H`` counts every leading axis (B·H). 1 when the H · ceil(T / 64)
    blocks already give ``FUSED_V2_BLOCKS_PER_SM`` blocks per SM; otherwise
    enough splits to reach that, at most one per key tile (ceil(T / 32)).
    """
    blocks = H * _ceil_div(T, FUSED_V2_ROWS)
    target = FUSED_V2_BLOCKS_PER_SM * sm_count
    if blocks >= target:
        return 1
    return max(1, min(_ceil_div(target, blocks), _ceil_div(T, FUSED_V2_KEYS),
                      FUSED_V2_MAX_SPLITS))


_sm_counts: dict = {}


def _sm_count(backend: str) -> int:
    """SMs of the current CUDA device (cupy); the H200 model on the CPU emulator."""
    if backend != "cupy":
        return MODEL_SM_COUNT
    from cupy.cuda import runtime

    dev = runtime.getDevice()
    if dev not in _sm_counts:  # the attribute exists in CUDA 12 and 13 alike
        _sm_counts[dev] = int(runtime.deviceGetAttribute(
            runtime.cudaDevAttrMultiProcessorCount, dev))
    return _sm_counts[dev]


def _fused_v2_kernel(name: str, d_k: int, backend: str):
    """The v2 kernel; for D = 64 and 128 with its dynamic shared memory allowed."""
    kernel = loading.get_function("attention_fused.cu", name, backend)
    width = next(w for w in (32, 64, 128) if d_k <= w)
    smem = FUSED_V2_DYNAMIC_SMEM.get(width, 0)
    # More than 48 KiB of dynamic shared memory must be allowed first
    # (cupy.RawKernel and the emulator alike; a test's spy may lack it).
    if smem and getattr(kernel, "max_dynamic_shared_size_bytes", smem) < smem:
        kernel.max_dynamic_shared_size_bytes = smem
    return kernel, smem


def _fused_v2_partials(Qd, Kd, Vd, splits, *, causal, scale, backend):
    """Split-K pass: ``(Op, ML)`` for ``splits`` key ranges per query tile.

    ``Op`` (splits, H, T, d_k): o of each range, not divided by l;
    ``ML`` (splits, H, T, 2): (m, l) per row, m in log2 units (Q is
    prescaled by log2 e). Empty ranges hold m = -inf, l = 0, o = 0.
    """
    T, d_k = Qd.shape[-2], Qd.shape[-1]
    H = _leading(Qd.shape)
    name = next(n for width, n in FUSED_V2_SPLIT_VARIANTS if d_k <= width)
    Op = _empty((splits, H, T, d_k), backend)
    ML = _empty((splits, H, T, 2), backend)
    vec = d_k % 4 == 0 and all(_aligned16(x) for x in (Qd, Kd, Vd, Op))
    grid = (_ceil_div(T, FUSED_V2_ROWS), min(H, MAX_GRID_YZ), splits)
    args = (Qd, Kd, Vd, Op, ML, np.int32(T), np.int32(d_k), np.int32(H),
            _scale_factor(d_k, scale), np.int32(bool(causal)), np.int32(vec),
            np.int32(splits))
    kernel, smem = _fused_v2_kernel(name, d_k, backend)
    kernel(grid, (FUSED_THREADS, 1, 1), args, shared_mem=smem)
    return Op, ML


def _fused_v2_combine(Op, ML, Od, *, backend):
    """O = sum_s exp2(m_s - m) o_s / sum_s exp2(m_s - m) l_s, per row."""
    splits, H, T, d_k = Op.shape
    n = H * T * d_k
    grid = (max(1, min(_ceil_div(n, FUSED_THREADS), MAX_GRID_X)), 1, 1)
    args = (Op, ML, Od, np.int32(T), np.int32(d_k), np.int32(H), np.int32(splits))
    loading.get_function("attention_fused.cu", FUSED_V2_COMBINE, backend)(
        grid, (FUSED_THREADS, 1, 1), args)
    return Od


def _attention_fused(Qd, Kd, Vd, *, causal, scale, backend, version="v1",
                     splits=None, precision=FUSED_V3_DEFAULT_PRECISION):
    """Launch ``attention_fused_dD`` (v1) or ``attention_fused_v2_dD`` (v2):
    online softmax, no (T, T) array.

    Q, K, V arrive validated by ``_check_qkv`` and on the backend, shape
    ``(..., T, d_k)``; the output has the same shape, on the same backend.
    v2: ``splits`` key ranges per query tile (None: :func:`fused_splits`
    with the device's SM count); splits > 1 runs ``attention_fused_v2_split_dD``
    then ``attention_fused_v2_combine``, with 4·splits·H·T·(d_k + 2) bytes of
    float32 scratch. v3: ``precision`` ("tf32" or "3xtf32") picks the
    tensor-core kernel, ``splits`` > 1 its split-K pass (None: no split;
    :func:`_attention_fused_v3`).
    """
    if version == "v3":
        return _attention_fused_v3(Qd, Kd, Vd, causal=causal, scale=scale, backend=backend,
                                   precision=precision, splits=splits)
    T, d_k = Qd.shape[-2], Qd.shape[-1]
    H = _leading(Qd.shape)
    if version == "v2":
        _check_d_k_limit(d_k, FUSED_V2_MAX_D_K, "attention_fused_v2")
        if splits is None:
            splits = fused_splits(H, T, _sm_count(backend))
        Od = _empty(Qd.shape, backend)
        if splits > 1:
            Op, ML = _fused_v2_partials(Qd, Kd, Vd, splits, causal=causal,
                                        scale=scale, backend=backend)
            return _fused_v2_combine(Op, ML, Od, backend=backend)
        name = next(n for width, n in FUSED_V2_VARIANTS if d_k <= width)
        # float4 loads only when every row starts 16-byte aligned.
        vec = d_k % 4 == 0 and all(_aligned16(x) for x in (Qd, Kd, Vd, Od))
        grid = (_ceil_div(T, FUSED_V2_ROWS), min(H, MAX_GRID_YZ), 1)
        args = (Qd, Kd, Vd, Od, np.int32(T), np.int32(d_k), np.int32(H),
                _scale_factor(d_k, scale), np.int32(bool(causal)), np.int32(vec))
        kernel, smem = _fused_v2_kernel(name, d_k, backend)
        kernel(grid, (FUSED_THREADS, 1, 1), args, shared_mem=smem)
        return Od
    _check_d_k_limit(d_k, FUSED_MAX_D_K, "attention_fused")
    name, rows = next((n, r) for width, n, r in FUSED_VARIANTS if d_k <= width)
    Od = _empty(Qd.shape, backend)
    grid = (_ceil_div(T, rows), min(H, MAX_GRID_YZ), 1)
    args = (Qd, Kd, Vd, Od, np.int32(T), np.int32(d_k), np.int32(H),
            _scale_factor(d_k, scale), np.int32(bool(causal)))
    kernel = loading.get_function("attention_fused.cu", name, backend)
    kernel(grid, (FUSED_THREADS, 1, 1), args)
    return Od


# --- RoPE (kernels/rope.cu) ----------------------------------------------------
ROPE = "rope_v1"
ROPE_THREADS = 256  # one thread per (row, pair); the kernel loops past the grid


def _launch_rope(Xd, Od, rows, T, d_k, *, offset, base, backend):
    """Rotate every (row, pair) of ``Xd`` (rows = H·T rows of d_k) into ``Od``."""
    pairs = rows * (d_k // 2)
    grid = (max(1, min(_ceil_div(pairs, ROPE_THREADS), MAX_GRID_X)), 1, 1)
    args = (Xd, Od, np.int32(rows), np.int32(T), np.int32(d_k), np.int32(offset),
            np.float32(base))
    loading.get_function("rope.cu", ROPE, backend)(grid, (ROPE_THREADS, 1, 1), args)
    return Od
