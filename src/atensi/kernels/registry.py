"""Fakta setiap kernel di satu tempat: satu entri per ``__global__`` di ``kernels/*.cu``.

Setiap :class:`Kernel` menyebut berkasnya, namanya, ukuran *block*, baris
*query* per *block* (untuk *fused kernel*), lebar ``D`` yang dipakainya
(varian ``_d32``/``_d64``/``_d128``), d_k terbesar yang didukung, *shared
memory* dinamis yang diminta saat peluncuran, model FLOP/byte untuk
roofline, kecepatan emulasi CPU relatif terhadap rantai (untuk batas beban
emulasi, :func:`emulated_speed`), serta langkah dan versi yang dijalankannya
(``step``, ``version``, ``causal``): peluncur mencari kernelnya dengan
:func:`for_step`, dan fungsi publik menerima setiap versi di :func:`versions`.
Setiap entri juga menyatakan apa yang dibutuhkannya dari GPU: fitur
arsitektur (``needs``, misalnya tensor core TF32 sejak sm_80), *shared memory*
per *block* (statis dan dinamis; per d_k lewat :func:`shared_for`) dan batas
register dari ``__launch_bounds__``. Matriks dukungan (:func:`missing`,
:func:`runs_on`, tabel GPU di bab Menjalankan) diturunkan dari sini.
Konstanta waktu kompilasi satu berkas (:data:`CONSTANTS`) sampai ke ``.cu``
sebagai opsi ``-DNAMA=nilai`` (:func:`defines`), baik di NVRTC/CuPy maupun di
:mod:`atensi.cudacpu`; berkas ``.cu`` menyimpan nilai yang sama
sebagai ``#ifndef NAMA`` / ``#define NAMA nilai`` / ``#endif`` agar tetap
terbaca dan bisa dikompilasi sendiri.

Peluncur (``launch``, ``backward``), laporan ptxas (``compiling``), roofline,
daftar sanitizer, ``scripts/gpu_check.sh``, tes, dan bab buku membaca angka
dari sini; tidak ada yang membaca angka dari teks ``.cu``.

    python -m atensi.kernels --daftar     satu baris per kernel: berkas, nama, block
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Callable

from atensi import hardware

# Compile-time constants per file, passed as -D: the #ifndef defaults in the
# .cu must hold the same values (tests/test_registry.py checks it).
CONSTANTS = {
    "rope.cu": {},
    "scores.cu": {"SCORES_TILE": 16},
    "causal_mask.cu": {},
    "softmax.cu": {"SOFTMAX_MAX_BLOCK": 1024},
    "weighted_sum.cu": {"WS_BM": 64, "WS_BN": 64, "WS_BK": 16, "WS_THREADS": 256},
    "attention_fused.cu": {"FUSED_THREADS": 128, "FUSED_BK": 32, "FUSED_MAX_DK": 128,
                           "FUSED_SKEW": 4, "FV2_THREADS": 128, "FV2_BQ": 64, "FV2_BK": 32},
    "attention_backward.cu": {"BACKWARD_MAX_BLOCK": 1024},
    "attention_tensorcore.cu": {"TC_THREADS": 128, "TC_BQ": 64, "TC_BK": 32},
}

WIDTHS = (32, 64, 128)  # padded d_k of the per-width fused variants
DEFAULTS = {file: dict(values) for file, values in CONSTANTS.items()}  # the .cu's #ifndef values


def _power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _largest_block(file: str) -> int:
    return max(k.block[0] for k in kernels_in(file))


# The relations each file's lane layout is built on: (holds(constants), what must
# hold, in Indonesian, or a function giving it). The .cu states the ones inside the file again as a
# static_assert; the relations with the launchers (blocks from the entries
# below) only the registry knows. check_constants() runs them before any compile.
RULES = {
    "rope.cu": (),
    "scores.cu": (
        (lambda c: 1 <= c["SCORES_TILE"] <= 32,
         "SCORES_TILE x SCORES_TILE thread per block, jadi SCORES_TILE 1..32"),
        # Stated here, not only in _entries(): an entry edited in this file is then
        # checked against the constants, not against a rebuild of itself.
        (lambda c: all(k.block == (c["SCORES_TILE"], c["SCORES_TILE"], 1)
                       for k in kernels_in("scores.cu")),
         lambda: "setiap kernel scores.cu (scores_v1_naive, scores_v2_tiled, "
                 "scores_v2_tiled_causal) diluncurkan dengan block (SCORES_TILE, SCORES_TILE, 1), "
                 "karena ubin Qs dan Ks berukuran SCORES_TILE (bila entri di _entries() yang "
                 "diubah, samakan lagi dengan SCORES_TILE); sekarang entri registri "
                 + ", ".join(f"{k.name} block {k.block}" for k in kernels_in("scores.cu"))),
    ),
    "causal_mask.cu": (),
    "softmax.cu": (
        (lambda c: hardware.WARP_SIZE <= c["SOFTMAX_MAX_BLOCK"] <= hardware.MAX_THREADS_PER_BLOCK and _power_of_two(c["SOFTMAX_MAX_BLOCK"]),
         "SOFTMAX_MAX_BLOCK pangkat dua dari 32 sampai 1024 (reduksi pohon v1, satu warp "
         "menggabungkan hasil warp di v2)"),
        (lambda c: c["SOFTMAX_MAX_BLOCK"] >= _largest_block("softmax.cu"),
         lambda: f"SOFTMAX_MAX_BLOCK >= {_largest_block('softmax.cu')}, block terbesar yang "
                 "diluncurkan peluncur softmax (red[] dan warp_results[] berukuran SOFTMAX_MAX_BLOCK)"),
    ),
    "weighted_sum.cu": (
        (lambda c: (c["WS_THREADS"], c["WS_BM"], c["WS_BN"], c["WS_BK"]) == (256, 64, 64, 16),
         "16 x 16 thread dengan 4 x 4 keluaran: WS_THREADS = 256, WS_BM = WS_BN = 64, WS_BK = 16"),
    ),
    "attention_fused.cu": (
        (lambda c: hardware.WARP_SIZE <= c["FUSED_THREADS"] <= hardware.MAX_THREADS_PER_BLOCK
         and c["FUSED_THREADS"] % hardware.WARP_SIZE == 0,
         "FUSED_THREADS kelipatan 32, paling banyak 1024"),
        (lambda c: c["FUSED_SKEW"] >= 0 and c["FUSED_SKEW"] % 4 == 0,
         "FUSED_SKEW kelipatan 4 (setiap bagian baris ubin dibaca 16 byte)"),
        (lambda c: c["FUSED_MAX_DK"] == WIDTHS[-1], f"FUSED_MAX_DK = {WIDTHS[-1]} (lebar terbesar)"),
        (lambda c: c["FUSED_BK"] >= 1
         and 2 * c["FUSED_BK"] * (WIDTHS[-1] + 4 * c["FUSED_SKEW"]) * FLOAT_BYTES <= hardware.DEFAULT_SHARED_PER_BLOCK,
         "ubin K dan V fused v1 untuk D = 128 muat di 48 KiB shared memory statis"),
        (lambda c: (c["FV2_THREADS"], c["FV2_BQ"], c["FV2_BK"]) == (128, 64, 32),
         "fused v2: 4 warp x 16 baris, 8 lane x 4 key: FV2_THREADS = 128, FV2_BQ = 64, FV2_BK = 32"),
    ),
    "attention_backward.cu": (
        (lambda c: hardware.WARP_SIZE <= c["BACKWARD_MAX_BLOCK"] <= hardware.MAX_THREADS_PER_BLOCK
         and c["BACKWARD_MAX_BLOCK"] % hardware.WARP_SIZE == 0,
         "BACKWARD_MAX_BLOCK kelipatan 32 dari 32 sampai 1024"),
        (lambda c: c["BACKWARD_MAX_BLOCK"] >= _largest_block("attention_backward.cu"),
         lambda: f"BACKWARD_MAX_BLOCK >= {_largest_block('attention_backward.cu')}, block terbesar "
                 "yang diluncurkan (warp_sums[] berukuran BACKWARD_MAX_BLOCK / 32)"),
    ),
    "attention_tensorcore.cu": (
        (lambda c: (c["TC_THREADS"], c["TC_BQ"], c["TC_BK"]) == (128, 64, 32),
         "fused v3: 4 warp x 16 baris, 2 lane x 16 key per baris: TC_THREADS = 128, TC_BQ = 64, "
         "TC_BK = 32"),
    ),
}
# Scores one lane of fused v2 holds in registers: rows x keys. A literal array
# bound in the .cu (float s[4][4], one float4 per key column), not a -D
# constant: the lane layout and the float4 packing are built on it.
# tests/test_registry.py checks the .cu declares this shape.
FV2_MICRO_TILE = (4, 4)
FLOAT_BYTES = 4


@dataclass(frozen=True)
class Model:
    """Work of one launch over N = B·H heads: useful FLOP and minimum bytes."""

    what: str  # one line, Indonesian
    flops: float
    bytes: float


@dataclass(frozen=True)
class Kernel:
    """One ``__global__`` function and the facts its launcher and reports use."""

    file: str
    name: str
    block: tuple[int, int, int]  # threads per block (per-row kernels: the largest used)
    rows: int | None = None  # query rows per block (fused kernels)
    width: int | None = None  # padded d_k of a per-width variant (_d32, _d64, _d128)
    max_d_k: int | None = None  # largest d_k the kernel holds; None: any
    dynamic_shared: int = 0  # bytes of extern __shared__ asked for at launch
    model: Callable[[int, int, int, bool], Model] | None = None  # (N, T, d, causal)
    # What the public function asks for: its step ("scores", "softmax", ...,
    # "fused" for attention(impl="fused-vN")), the version string it accepts,
    # and whether this is the variant with the causal mask built in. The
    # launchers find their kernel by these. A helper kernel that no version
    # runs by itself (the split-K combine) has no step; the split pass that
    # runs in its place has one.
    step: str | None = None
    version: str | None = None
    causal: bool = False
    precision: str | None = None  # tensor-core operand format ("tf32", "3xtf32")
    # Split-K (fused kernels): ``split`` marks the pass that writes partial
    # results for one key range per grid.z (launched when splits > 1);
    # ``combine`` names the kernel that merges them; ``auto_splits``: with
    # splits=None the launcher picks the count (kernels.launch.fused_splits),
    # otherwise it does not split. ``key_tile``: keys per shared-memory tile,
    # so at most one split per tile.
    split: bool = False
    combine: str | None = None
    auto_splits: bool = False
    key_tile: int | None = None
    # The kernel takes one more int after ``causal``: 1 when every row starts
    # 16-byte aligned, so it may load float4.
    aligned_flag: bool = False
    micro_tile: tuple[int, int] | None = None  # scores per lane in registers (rows, keys)
    # How fast the CPU emulator runs this kernel's path relative to the chain
    # kernels (1.0): the CPU budget divides a path's work by it
    # (kernels.limits.pair_work). Measured at T = 2048, d_k = 1 and 64 (fused
    # v1: 3-9x, v2: 0.9-3x, tensor cores: 0.4-0.7x), rounded down.
    emulated_speed: float = 1.0
    # What the kernel asks of the GPU, so the support matrix is a fact of this
    # table (hardware.FEATURES keys): ``needs`` it cannot run without (the
    # tensor-core kernels' TF32 wmma, sm_80 on), ``uses`` where present and
    # replaces otherwise (fused v2 copies tiles with cp.async on sm_80 and
    # through registers below). ``static_shared``: bytes of its __shared__
    # arrays (ptxas reports the same; tests/test_arch_matrix.py checks it);
    # with ``dynamic_shared`` that is the shared memory one block needs.
    # ``min_blocks``: the second argument of its __launch_bounds__, which caps
    # its registers (:attr:`max_registers`).
    needs: tuple[str, ...] = ()
    uses: tuple[str, ...] = ()
    static_shared: int = 0
    min_blocks: int | None = None

    @property
    def shared(self) -> int:
        """Shared memory one block needs, static and dynamic, in bytes."""
        return self.static_shared + self.dynamic_shared

    @property
    def min_compute_capability(self) -> tuple[int, int]:
        """The first compute capability with everything in :attr:`needs`."""
        return max((hardware.FEATURES[f][0] for f in self.needs), default=(0, 0))

    @property
    def max_registers(self) -> int:
        """Registers per thread ptxas may give it: the register file shared by
        ``min_blocks`` blocks (``__launch_bounds__``), at most 255."""
        cap = hardware.MAX_REGISTERS_PER_THREAD
        if self.min_blocks:
            cap = min(cap, hardware.MAX_REGISTERS_PER_BLOCK // (self.threads * self.min_blocks))
        return cap

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def family(self) -> str:
        """The name without its width suffix: ``attention_fused_v2`` for ``attention_fused_v2_d64``."""
        return self.name.removesuffix(f"_d{self.width}") if self.width else self.name

    @property
    def constants(self) -> dict:
        """Compile-time constants of this kernel's file (shared by its kernels)."""
        return CONSTANTS[self.file]


# --- FLOP and byte models (the conventions are in atensi.roofline) ------------


def causal_pairs(T: int) -> int:
    """(i, j) with j <= i: the scores a causal row really uses."""
    return T * (T + 1) // 2


def tile_pairs(T: int, tile: int) -> int:
    """Scores computed by a kernel that skips tiles wholly above the diagonal."""
    total = 0
    for a in range(0, T, tile):
        rows = min(tile, T - a)
        total += rows * min(a + tile, T)  # tiles b <= a: columns 0 .. a + tile
    return total


def _pairs(N, T, causal):
    return N * (causal_pairs(T) if causal else T * T)


def _scores(N, T, d, causal):
    return Model("S = Q Kᵀ · s (semua T² skor)", 2 * N * T * T * d,
                 FLOAT_BYTES * (2 * N * T * d + N * T * T))


def _scores_causal(N, T, d, causal):
    tile = CONSTANTS["scores.cu"]["SCORES_TILE"]
    computed = N * (tile_pairs(T, tile) if causal else T * T)
    return Model("S = Q Kᵀ · s, mask menyatu, ubin masa depan dilewati", 2 * computed * d,
                 FLOAT_BYTES * (2 * N * T * d + N * T * T))


def _causal_mask(N, T, d, causal):
    return Model("S[i, j] = -inf bila j > i (baca S, tulis S)", 0, FLOAT_BYTES * 2 * N * T * T)


def _softmax(N, T, d, causal):
    # max, subtract, exp, add, divide: 5 operations per score.
    sq = N * T * T
    return Model("A = softmax(S) per baris (maks, exp, jumlah, bagi)", 5 * sq, FLOAT_BYTES * 2 * sq)


def _softmax_causal(N, T, d, causal):
    # Reads only S[i, 0..i], still writes all of A (zeros in the future).
    pairs, sq = _pairs(N, T, causal), N * T * T
    what = ("A = softmax(S), masa depan tidak dibaca (ditulis 0)" if causal
            else "A = softmax(S) kausal (masa depan tidak dibaca)")
    return Model(what, 5 * pairs, FLOAT_BYTES * (pairs + sq))


def _weighted_sum(N, T, d, causal):
    sq = N * T * T
    return Model("O = A V", 2 * sq * d, FLOAT_BYTES * (sq + 2 * N * T * d))


def _weighted_sum_causal(N, T, d, causal):
    sq, used = N * T * T, _pairs(N, T, causal)
    return Model("O = A V" + (" (lewati masa depan)" if used < sq else ""), 2 * used * d,
                 FLOAT_BYTES * (used + 2 * N * T * d))


def _fused(N, T, d, causal):
    # Scores, online softmax (5 operations per visible score), A V; reads Q, K,
    # V once, writes O once: no (T, T) array.
    return Model("satu kernel: Q Kᵀ, softmax online, A V", _pairs(N, T, causal) * (4 * d + 5),
                 FLOAT_BYTES * 4 * N * T * d)


def _rope(N, T, d, causal):
    # Per pair: 2 multiplies for the angle, 4 multiplies and 2 adds for the
    # rotation (cos/sin not counted); reads and writes one (T, d) array.
    vec = N * T * d
    return Model("RoPE: putar pasangan Q atau K sesuai posisi", 8 * vec // 2,
                 FLOAT_BYTES * 2 * vec)


def _weights_from_lse(N, T, d, causal):
    sq = N * T * T
    return Model("A = exp(S − L) dari log-sum-exp (backward)", 2 * sq,
                 FLOAT_BYTES * (2 * sq + N * T))


def _softmax_backward(N, T, d, causal):
    sq = N * T * T
    return Model("dS = A ⊙ (dA − rowsum(dA ⊙ A))", 4 * sq, FLOAT_BYTES * 3 * sq)


def _product(what, extra_vec=False):
    """A (T, T) by (T, d) product: dV, dA, dQ, dK."""
    def model(N, T, d, causal):
        sq, vec = N * T * T, N * T * d
        return Model(what, 2 * sq * d + (vec if extra_vec else 0), FLOAT_BYTES * (sq + 2 * vec))
    return model


# --- the entries, in book order ------------------------------------------------


def _entries():
    tile = CONSTANTS["scores.cu"]["SCORES_TILE"]
    ws = CONSTANTS["weighted_sum.cu"]
    fused = CONSTANTS["attention_fused.cu"]
    tc = CONSTANTS["attention_tensorcore.cu"]
    # Static __shared__ arrays, as the .cu declares them: Qs[TILE][TILE] and
    # Ks[TILE][TILE + 1]; red[MAX_BLOCK] (softmax v1), warp_results[MAX_BLOCK / 32]
    # (softmax v2, backward); As[BK][BM + 1] and Vs[BK][BN] (weighted_sum v2).
    scores_smem = FLOAT_BYTES * tile * (2 * tile + 1)
    softmax_block = CONSTANTS["softmax.cu"]["SOFTMAX_MAX_BLOCK"]
    backward_block = CONSTANTS["attention_backward.cu"]["BACKWARD_MAX_BLOCK"]
    ws_smem = FLOAT_BYTES * ws["WS_BK"] * (ws["WS_BM"] + 1 + ws["WS_BN"])
    out = [
        Kernel("rope.cu", "rope_v1", (256, 1, 1), model=_rope, step="rope", version="v1"),
        Kernel("scores.cu", "scores_v1_naive", (tile, tile, 1), model=_scores,
               step="scores", version="v1"),
        Kernel("scores.cu", "scores_v2_tiled", (tile, tile, 1), model=_scores,
               step="scores", version="v2", static_shared=scores_smem),
        Kernel("scores.cu", "scores_v2_tiled_causal", (tile, tile, 1), model=_scores_causal,
               step="scores", version="v2", causal=True, static_shared=scores_smem),
        Kernel("causal_mask.cu", "causal_mask_v1", (16, 16, 1), model=_causal_mask,
               step="causal_mask", version="v1"),
        # Softmax rows: the launcher picks a power of two from 32 up to this block.
        Kernel("softmax.cu", "softmax_v1_shared", (256, 1, 1), model=_softmax,
               step="softmax", version="v1", static_shared=FLOAT_BYTES * softmax_block),
        Kernel("softmax.cu", "softmax_v2_warp", (256, 1, 1), model=_softmax,
               step="softmax", version="v2",
               static_shared=FLOAT_BYTES * softmax_block // hardware.WARP_SIZE),
        Kernel("softmax.cu", "softmax_v2_warp_causal", (256, 1, 1), model=_softmax_causal,
               step="softmax", version="v2", causal=True,
               static_shared=FLOAT_BYTES * softmax_block // hardware.WARP_SIZE),
        Kernel("weighted_sum.cu", "weighted_sum_v1", (32, 8, 1), model=_weighted_sum,
               step="weighted_sum", version="v1"),
        Kernel("weighted_sum.cu", "weighted_sum_v2_tiled", (ws["WS_THREADS"], 1, 1),
               rows=ws["WS_BM"], model=_weighted_sum, step="weighted_sum", version="v2",
               static_shared=ws_smem),
        Kernel("weighted_sum.cu", "weighted_sum_v2_tiled_causal", (ws["WS_THREADS"], 1, 1),
               rows=ws["WS_BM"], model=_weighted_sum_causal, step="weighted_sum", version="v2",
               causal=True, static_shared=ws_smem),
    ]
    # Fused v1: rows per block = threads / P threads per row (P = 2, or 4 for D = 128);
    # Ks and Vs of FUSED_TILE(D, P) = BK · (D + P · SKEW) floats each, static.
    for width, lanes_per_row in ((32, 2), (64, 2), (128, 4)):
        out.append(Kernel("attention_fused.cu", f"attention_fused_d{width}",
                          (fused["FUSED_THREADS"], 1, 1), rows=fused["FUSED_THREADS"] // lanes_per_row,
                          width=width, max_d_k=fused["FUSED_MAX_DK"], model=_fused,
                          step="fused", version="v1", key_tile=fused["FUSED_BK"],
                          emulated_speed=2.0, min_blocks=3,
                          static_shared=2 * FLOAT_BYTES * fused["FUSED_BK"]
                          * (width + lanes_per_row * fused["FUSED_SKEW"])))
    # Fused v2: Qs + Ks + Vs + Ps = (BQ + 4 BK) · D + BQ · BK floats (FV2_SMEM in the
    # .cu); above 48 KiB as extern __shared__.
    for kind in ("v2", "v2_split"):
        for width in WIDTHS:
            smem = ((fused["FV2_BQ"] + 4 * fused["FV2_BK"]) * width
                    + fused["FV2_BQ"] * fused["FV2_BK"]) * FLOAT_BYTES
            out.append(Kernel("attention_fused.cu", f"attention_fused_{kind}_d{width}",
                              (fused["FV2_THREADS"], 1, 1), rows=fused["FV2_BQ"], width=width,
                              max_d_k=WIDTHS[-1], dynamic_shared=smem if smem > hardware.DEFAULT_SHARED_PER_BLOCK else 0,
                              static_shared=0 if smem > hardware.DEFAULT_SHARED_PER_BLOCK else smem,
                              uses=("cp.async",), min_blocks=2 if width == WIDTHS[-1] else 4,
                              model=_fused, step="fused", version="v2", split=kind == "v2_split",
                              combine="attention_fused_v2_combine" if kind == "v2_split" else None,
                              auto_splits=kind == "v2", key_tile=fused["FV2_BK"],
                              aligned_flag=True, micro_tile=FV2_MICRO_TILE, emulated_speed=0.75))
    out.append(Kernel("attention_fused.cu", "attention_fused_v2_combine",
                      (fused["FV2_THREADS"], 1, 1)))
    out += [
        Kernel("attention_backward.cu", "attention_weights_from_lse_v1", (256, 1, 1),
               model=_weights_from_lse),
        Kernel("attention_backward.cu", "attention_backward_dv_v1", (32, 8, 1),
               model=_product("dV = Aᵀ dO")),
        Kernel("attention_backward.cu", "attention_backward_da_v1", (16, 16, 1),
               model=_product("dA = dO Vᵀ")),
        Kernel("attention_backward.cu", "softmax_backward_v1", (256, 1, 1),
               model=_softmax_backward,
               static_shared=FLOAT_BYTES * backward_block // hardware.WARP_SIZE),
        Kernel("attention_backward.cu", "attention_backward_dq_v1", (32, 8, 1),
               model=_product("dQ = dS K · s", extra_vec=True)),
        Kernel("attention_backward.cu", "attention_backward_dk_v1", (32, 8, 1),
               model=_product("dK = dSᵀ Q · s", extra_vec=True)),
    ]
    # Tensor cores: every width asks for TC_SMEM(D) bytes of dynamic shared memory:
    # Qs, Os (BQ x (D + 8)), Ks, Vs (BK x (D + 8)), Ss (4 warps x 16 x (BK + 8)).
    for split in ("", "split_"):
        for precision in ("tf32", "3xtf32"):
            for width in WIDTHS:
                ld = width + 8
                smem = FLOAT_BYTES * (2 * tc["TC_BQ"] * ld + 2 * tc["TC_BK"] * ld
                                      + 4 * 16 * (tc["TC_BK"] + 8))
                out.append(Kernel("attention_tensorcore.cu",
                                  f"attention_tensorcore_{split}{precision}_d{width}",
                                  (tc["TC_THREADS"], 1, 1), rows=tc["TC_BQ"], width=width,
                                  max_d_k=WIDTHS[-1], dynamic_shared=smem, step="fused",
                                  version="v3", split=bool(split),
                                  combine="attention_fused_v2_combine" if split else None,
                                  key_tile=tc["TC_BK"], precision=precision, emulated_speed=0.25,
                                  needs=("tf32_wmma",), min_blocks=2))
    return tuple(out)


KERNELS = _entries()
_BY_NAME = {k.name: k for k in KERNELS}


def get(name: str) -> Kernel:
    """Entri kernel ``name``, misalnya ``get("scores_v2_tiled").block``."""
    try:
        return _BY_NAME[name]
    except (KeyError, TypeError):
        raise KeyError(
            f"Kernel {name!r} tidak ada di registri atensi.kernels.registry. Kernel yang "
            f"ada: {', '.join(_BY_NAME)}."
        ) from None


def _refuse_query(name: str, value, what: str, fix: str):
    raise ValueError(f"Argumen '{name}' harus {what}, tetapi yang diterima {value!r}. {fix}")


def _check_bool(value, name: str) -> bool:
    if not isinstance(value, bool):
        _refuse_query(name, value, "bool (True atau False)", f"Tulis {name}=True atau {name}=False.")
    return value


def _check_file(file) -> str:
    if not isinstance(file, str) or file not in files():
        _refuse_query("file", file, f"nama berkas kernel di kernels/ ({', '.join(files())})",
                      "Tulis nama berkasnya saja, misalnya 'scores.cu'.")
    return file


def _check_d_k(d_k) -> int:
    if isinstance(d_k, bool) or not isinstance(d_k, numbers.Integral) or not 1 <= d_k <= WIDTHS[-1]:
        _refuse_query("d_k", d_k, f"bilangan bulat 1 sampai {WIDTHS[-1]} (lebar kernel per "
                      f"d_k: {', '.join(map(str, WIDTHS))})",
                      "d_k yang lebih besar dijalankan rantai kernel (impl='chain-v2').")
    return int(d_k)


def steps() -> tuple[str, ...]:
    """Steps the public functions run, in book order (``"rope"``, ``"scores"``, ...)."""
    return tuple(dict.fromkeys(k.step for k in KERNELS if k.step))


def _check_step(step) -> str:
    if not isinstance(step, str) or step not in steps():
        _refuse_query("step", step, f"salah satu dari {', '.join(map(repr, steps()))}",
                      "Nama langkahnya sama dengan nama fungsi publiknya (fused: "
                      "attention(impl='fused-vN')).")
    return step


def _check_step_version(step, version) -> tuple[str, str]:
    step = _check_step(step)
    known = versions(step) + versions(step, causal=True)
    if not isinstance(version, str) or version not in known:
        _refuse_query("version", version, f"salah satu dari "
                      f"{', '.join(map(repr, dict.fromkeys(known)))} untuk langkah {step!r}",
                      f"Lihat registry.versions({step!r}).")
    return step, version


def width_for(d_k: int) -> int:
    """The smallest padded width in 32, 64, 128 that holds ``d_k`` (1..128, else refused)."""
    d_k = _check_d_k(d_k)
    return next(w for w in WIDTHS if d_k <= w)


def variant(family: str, d_k: int) -> Kernel:
    """The per-width kernel ``<family>_dD`` that runs for ``d_k``."""
    families = tuple(dict.fromkeys(k.family for k in KERNELS if k.width))
    if family not in families:
        _refuse_query("family", family, f"salah satu dari {', '.join(map(repr, families))}",
                      "Ambil dengan launch.fused_family(version).")
    return get(f"{family}_d{width_for(d_k)}")


def versions(step: str, *, causal: bool = False) -> tuple[str, ...]:
    """Versions of ``step`` in book order: the book's softmax has ``("v1", "v2")``.

    ``causal=True``: only the versions with a causal variant (the mask built
    in); of the book's softmax versions, ``("v2",)``. Tests
    parametrize over these, so a new entry is tested without a test edit.
    """
    step = _check_step(step)
    _check_bool(causal, "causal")
    return tuple(dict.fromkeys(k.version for k in KERNELS if k.step == step and k.causal == causal))


def for_step(step: str, version: str, *, causal: bool = False, d_k: int | None = None,
             precision: str | None = None, split: bool = False) -> Kernel | None:
    """The kernel that runs ``version`` of ``step``; None when there is none.

    ``causal``: the variant with the causal mask built in. ``d_k``: the
    per-width variant that holds it. ``precision``: the tensor-core format
    (kernels without one match any). ``split``: the split-K pass instead of
    the whole kernel.
    """
    step, version = _check_step_version(step, version)
    if d_k is not None:
        _check_d_k(d_k)
    _check_bool(causal, "causal")
    _check_bool(split, "split")
    known = tuple(dict.fromkeys(k.precision for k in KERNELS if k.precision))
    if precision is not None and precision not in known:
        _refuse_query("precision", precision, f"None atau salah satu dari "
                      f"{', '.join(map(repr, known))}", "Format itu milik kernel tensor core.")
    for k in KERNELS:
        if (k.step == step and k.version == version and k.causal == causal and k.split == split
                and (d_k is None or k.width == width_for(d_k))
                and k.precision in (None, precision)):
            return k
    return None


def of_step(step: str, version: str) -> tuple[Kernel, ...]:
    """Every kernel (widths, variants) of ``version`` of ``step``."""
    return tuple(k for k in KERNELS if k.step == step and k.version == version)


def emulated_speed(step: str, version: str) -> float:
    """How fast the CPU emulator runs ``version`` of ``step``, relative to the chain (1.0).

    One value per step and version (every width and variant carries it), so a
    new version's speed is its registry entry, e.g. ``emulated_speed("fused", "v1") == 2.0``.
    """
    step, version = _check_step_version(step, version)
    return min(k.emulated_speed for k in of_step(step, version))


def shared_for(step: str, version: str, d_k: int) -> int:
    """Shared memory per block, in bytes, that ``version`` of ``step`` needs at ``d_k``:
    the most of its kernels for that width (every variant and precision)."""
    step, version = _check_step_version(step, version)
    found = of_step(step, version)
    if any(k.width for k in found):
        width = width_for(d_k)
        found = tuple(k for k in found if k.width in (None, width))
    return max(k.shared for k in found)


def missing(k: Kernel, arch: hardware.Arch) -> tuple[str, ...]:
    """What ``arch`` lacks to run ``k``, one Indonesian phrase each; empty when it runs there."""
    if not isinstance(k, Kernel):
        _refuse_query("k", k, "entri registri (Kernel)", "Ambil dengan registry.get(nama).")
    if not isinstance(arch, hardware.Arch):
        _refuse_query("arch", arch, "arsitektur dari atensi.hardware.ARCHS",
                      "Misalnya hardware.ARCHS['sm_80'].")
    lacks = []
    for feature in k.needs:
        if not arch.has(feature):
            first, what = hardware.FEATURES[feature]
            lacks.append(f"{what}, yang baru ada sejak sm_{first[0]}{first[1]}")
    if k.shared > arch.max_shared_per_block:
        lacks.append(f"{k.shared // hardware.KIB} KiB shared memory per block, padahal "
                     f"{arch.name} paling banyak {arch.max_shared_per_block // hardware.KIB} KiB")
    return tuple(lacks)


def runs_on(k: Kernel, arch: hardware.Arch) -> bool:
    """Whether ``arch`` can launch ``k`` (its features, and its shared memory per block)."""
    return not missing(k, arch)


def files() -> tuple[str, ...]:
    """Kernel files in book order."""
    return tuple(dict.fromkeys(k.file for k in KERNELS))


def kernels_in(file: str) -> tuple[Kernel, ...]:
    return tuple(k for k in KERNELS if k.file == file)


def check_constants(file: str) -> None:
    """Refuse, before any compile, constants of ``file`` that break its kernels.

    Checked: the names are the file's, every value an int, the relations in
    :data:`RULES`, and that the entries the launchers read (block, rows,
    shared memory) were made from these values, not from others.
    """
    _check_file(file)
    if file not in CONSTANTS:
        return  # a file without compile-time constants has nothing to break
    values, defaults = CONSTANTS[file], DEFAULTS[file]
    shown = ", ".join(f"{n} = {v!r}" for n, v in values.items()) or "tidak ada"
    usual = ", ".join(f"{n} = {v}" for n, v in defaults.items())

    def refuse(problem: str, fix: str = ""):
        fix = fix or f"Pakai nilai bawaan ({usual}) atau nilai lain yang memenuhi syarat itu"
        raise ValueError(f"Konstanta kernels/{file} ({shown}) tidak bisa dipakai: {problem}. {fix}.")

    if set(values) != set(defaults):
        refuse(f"nama konstantanya harus {sorted(defaults)}, tetapi yang diberikan {sorted(values)}")
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int):
            refuse(f"{name} harus bilangan bulat (int), tetapi yang diberikan {value!r}")
    for holds, what in RULES[file]:
        if not holds(values):
            refuse(f"syaratnya {what() if callable(what) else what}")
    fresh = {k.name: k for k in _entries() if k.file == file}
    for k in kernels_in(file):
        if (k.block, k.rows, k.dynamic_shared) != (fresh[k.name].block, fresh[k.name].rows,
                                                   fresh[k.name].dynamic_shared):
            refuse(f"entri registri {k.name} (block {k.block}, {k.rows} baris) dibuat dari "
                   "konstanta lain, jadi peluncurnya akan memakai ukuran yang salah",
                   "Ubah CONSTANTS di src/atensi/kernels/registry.py sendiri (entri dibuat dari "
                   "nilainya saat modul diimpor), bukan sesudah modul itu diimpor")


def defines(file: str) -> tuple[str, ...]:
    """``-DNAMA=nilai`` for every compile-time constant of ``file`` (none for files not listed).

    The constants are checked first (:func:`check_constants`): a set that
    would break the file's kernels is refused here, before it is compiled.
    """
    if file not in CONSTANTS:  # a reader's own .cu (or a copy) has none
        return ()
    check_constants(file)
    return tuple(f"-D{name}={value}" for name, value in CONSTANTS[file].items())


def table() -> str:
    """One line per kernel: file, name, block, rows, width, dynamic shared memory."""
    lines = []
    for k in KERNELS:
        extra = [f"{k.rows} baris/block"] if k.rows else []
        extra += [f"D = {k.width}"] if k.width else []
        extra += [f"{k.dynamic_shared} byte shared dinamis"] if k.dynamic_shared else []
        block = " x ".join(str(b) for b in k.block)
        lines.append(f"{k.file:24} {k.name:36} block {block}"
                     + (f"  ({', '.join(extra)})" if extra else ""))
    return "\n".join(lines)
