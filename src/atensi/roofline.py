"""Model roofline setiap kernel: FLOP, byte, intensitas aritmetika, waktu batas.

Tanpa GPU pun kita bisa tahu berapa cepat sebuah kernel *paling cepat* bisa
berjalan. Sebuah kernel dibatasi oleh salah satu dari dua hal:

    waktu komputasi  = FLOP / puncak FP32 GPU
    waktu memori     = byte / lebar pita memori GPU
    waktu batas      = max(waktu komputasi, waktu memori)

Intensitas aritmetika ``FLOP / byte`` menentukan batas mana yang berlaku: di
bawah ``puncak / lebar pita`` (titik belok, *ridge point*) kernel dibatasi
memori, di atasnya dibatasi komputasi.

Cara menghitung (konvensi), untuk N = B·H *head*, T posisi, d = d_k, float32:

- FLOP: 2 per perkalian-tambah dalam dot product; 1 per operasi lain yang
  dibutuhkan matematikanya (perbandingan untuk maksimum, pengurangan, exp,
  penjumlahan, pembagian). Mask (pilih -inf atau tidak) dihitung 0 FLOP.
  Yang dihitung adalah pekerjaan yang *berguna*: kerja tambahan sebuah versi
  (misalnya penskalaan ulang *online softmax*, atau dot product untuk key masa
  depan di ubin diagonal) tidak ikut. Satu attention utuh: 4·N·T²·d, dibagi
  dua (tepatnya T(T+1)/2 pasangan) bila kausal dan kernelnya melewati masa depan.
- Byte minimum: setiap elemen masukan dibaca sekali dari DRAM dan setiap
  elemen keluaran ditulis sekali (reuse sempurna di dalam kernel, tidak ada
  yang tertinggal di cache antar-kernel). Kernel nyata bisa membaca lebih
  banyak; tidak pernah lebih sedikit. Maka waktu batasnya adalah batas bawah.

Angka GPU (spesifikasi pabrik, tanpa Tensor Core, tanpa sparsitas):

- NVIDIA H200 SXM: FP32 67 TFLOP/s, HBM3e 4,8 TB/s (NVIDIA H200 Tensor
  Core GPU datasheet, 2024).
- NVIDIA A100 SXM 80 GB: FP32 19,5 TFLOP/s, HBM2e 2.039 GB/s (NVIDIA A100
  Tensor Core GPU datasheet, 2021).

Fungsi:
    models(B, T, d_k=64, heads=12, causal=True) → daftar KernelModel
    format_table(B_values=(1, 8), T=1024, ...)   → tabel teks
    report_lines(...)                            → baris-baris untuk bench
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from atensi.formatting import id_float

H, D_K, ANDREA_T = 12, 64, 1024
FLOAT_BYTES = 4
SCORES_TILE = 16  # scores_v2_tiled_causal skips 16 × 16 tiles above the diagonal


@dataclass(frozen=True)
class GPU:
    name: str
    fp32_flops: float  # FLOP/s, FP32 without Tensor Cores
    bandwidth: float  # byte/s of device memory

    @property
    def ridge(self) -> float:
        """FLOP per byte where the memory roof meets the compute roof."""
        return self.fp32_flops / self.bandwidth


# NVIDIA H200 Tensor Core GPU datasheet (2024), SXM: FP32 67 TFLOPS, 4.8 TB/s.
H200 = GPU("H200 SXM", 67e12, 4.8e12)
# NVIDIA A100 Tensor Core GPU datasheet (2021), 80 GB SXM: FP32 19.5 TFLOPS, 2,039 GB/s.
A100 = GPU("A100 SXM 80 GB", 19.5e12, 2.039e12)
GPUS = (H200, A100)


@dataclass(frozen=True)
class KernelModel:
    kernel: str  # the __global__ function (or a family of them)
    file: str
    what: str  # one line, Indonesian
    flops: float
    bytes: float

    @property
    def intensity(self) -> float:
        return self.flops / self.bytes if self.bytes else float("inf")

    def bound_seconds(self, gpu: GPU) -> float:
        return max(self.flops / gpu.fp32_flops, self.bytes / gpu.bandwidth)

    def limited_by(self, gpu: GPU) -> str:
        return "komputasi" if self.intensity > gpu.ridge else "memori"


def _causal_pairs(T: int) -> int:
    """(i, j) with j <= i: the scores a causal row really uses."""
    return T * (T + 1) // 2


def _tile_pairs(T: int, tile: int = SCORES_TILE) -> int:
    """Scores computed by a kernel that skips tiles wholly above the diagonal."""
    total = 0
    for a in range(0, T, tile):
        rows = min(tile, T - a)
        total += rows * min(a + tile, T)  # tiles b <= a: columns 0 .. a + tile
    return total


def _model(name: str, file: str, N: int, T: int, d: int, causal: bool):
    """KernelModel for the kernel ``name``, or None when no model is known."""
    f = FLOAT_BYTES
    sq, vec = N * T * T, N * T * d  # one (T, T) and one (T, d) array, all heads
    pairs = N * (_causal_pairs(T) if causal else T * T)
    if name.startswith("scores_") and "causal" in name:
        computed = N * (_tile_pairs(T) if causal else T * T)
        return KernelModel(name, file, "S = Q Kᵀ · s, mask menyatu, ubin masa depan dilewati",
                           2 * computed * d, f * (2 * vec + sq))
    if name.startswith("scores_"):
        return KernelModel(name, file, "S = Q Kᵀ · s (semua T² skor)",
                           2 * sq * d, f * (2 * vec + sq))
    if name.startswith("causal_mask"):
        return KernelModel(name, file, "S[i, j] = -inf bila j > i (baca S, tulis S)",
                           0, f * 2 * sq)
    if name.startswith("softmax_backward"):
        return KernelModel(name, file, "dS = A ⊙ (dA − rowsum(dA ⊙ A))",
                           4 * sq, f * 3 * sq)
    if name.startswith("softmax") and "causal" in name and causal:
        # Reads only S[i, 0..i], still writes all of A (zeros in the future).
        return KernelModel(name, file, "A = softmax(S), masa depan tidak dibaca (ditulis 0)",
                           5 * pairs, f * (pairs + sq))
    if name.startswith("softmax") and "causal" in name:
        # Reads only j <= i, still writes the zeros of the future half.
        return KernelModel(name, file, "A = softmax(S) kausal (masa depan tidak dibaca)",
                           5 * pairs, f * (pairs + sq))
    if name.startswith("softmax"):
        # max, subtract, exp, add, divide: 5 operations per score.
        return KernelModel(name, file, "A = softmax(S) per baris (maks, exp, jumlah, bagi)",
                           5 * sq, f * 2 * sq)
    if name.startswith("weighted_sum"):
        used = pairs if "causal" in name and causal else sq
        return KernelModel(name, file, "O = A V" + (" (lewati masa depan)" if used < sq else ""),
                           2 * used * d, f * (used + 2 * vec))
    if name.startswith("attention_fused"):
        # Scores, online softmax (5 operations per visible score), A V; reads
        # Q, K, V once, writes O once: no (T, T) array.
        return KernelModel(name, file, "satu kernel: Q Kᵀ, softmax online, A V",
                           pairs * (4 * d + 5), f * 4 * vec)
    if name.startswith("rope"):
        # Per pair: 2 multiplies for the angle, 4 multiplies and 2 adds for the
        # rotation (cos/sin not counted); reads and writes one (T, d) array.
        return KernelModel(name, file, "RoPE: putar pasangan Q atau K sesuai posisi",
                           8 * vec // 2, f * 2 * vec)
    if name.startswith("attention_weights_from_lse"):
        return KernelModel(name, file, "A = exp(S − L) dari log-sum-exp (backward)",
                           2 * sq, f * (2 * sq + N * T))
    if name.startswith("attention_backward_dv"):
        return KernelModel(name, file, "dV = Aᵀ dO", 2 * sq * d, f * (sq + 2 * vec))
    if name.startswith("attention_backward_da"):
        return KernelModel(name, file, "dA = dO Vᵀ", 2 * sq * d, f * (2 * vec + sq))
    if name.startswith("attention_backward_dq"):
        return KernelModel(name, file, "dQ = dS K · s", 2 * sq * d + vec, f * (sq + 2 * vec))
    if name.startswith("attention_backward_dk"):
        return KernelModel(name, file, "dK = dSᵀ Q · s", 2 * sq * d + vec, f * (sq + 2 * vec))
    return None


_GLOBAL = re.compile(r"__global__\s+void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(")
# Kernel files in book order (the chain, then fused, then backward).
_ORDER = ("rope.cu", "scores.cu", "causal_mask.cu", "softmax.cu", "weighted_sum.cu",
          "attention_fused.cu", "attention_backward.cu")


def kernel_names(kernels_dir=None):
    """[(file, kernel)] of every ``__global__`` function, in book order."""
    if kernels_dir is None:
        from atensi.kernels import kernels_dir as _dir

        kernels_dir = _dir()
    kernels_dir = Path(kernels_dir)
    files = sorted(kernels_dir.glob("*.cu"),
                   key=lambda p: (_ORDER.index(p.name) if p.name in _ORDER else len(_ORDER),
                                  p.name))
    out = []
    for path in files:
        text = re.sub(r"//[^\n]*", "", path.read_text(encoding="utf-8"))
        for name in _GLOBAL.findall(text):
            out.append((path.name, name))
    return out


def _for_d_k(name: str, d_k: int) -> bool:
    """Fused kernels come one per padded width (``_d32``, ``_d64``, ``_d128``):
    keep the one that runs for ``d_k``."""
    widths = [int(w) for w in re.findall(r"_d(\d+)(?:_|$)", name)]
    if not widths:
        return True
    fits = [w for w in (32, 64, 128) if w >= d_k]
    return widths[0] == (fits[0] if fits else widths[0])


def models(B=1, T=ANDREA_T, d_k=D_K, heads=H, *, causal=True, kernels_dir=None):
    """Model setiap kernel yang ada di ``kernels/`` untuk attention B × heads × T × d_k.

    Kernel tanpa model (nama baru yang belum dikenal) dilewati."""
    N = B * heads
    out = []
    for file, name in kernel_names(kernels_dir):
        if not _for_d_k(name, d_k):
            continue
        m = _model(name, file, N, T, d_k, causal)
        if m is not None:
            out.append(m)
    return out


def _fmt_time(seconds: float) -> str:
    us = seconds * 1e6
    if us < 1000:
        return f"{id_float(us, 1 if us >= 10 else 2)} µs"
    return f"{id_float(us / 1000, 2)} ms"


def _fmt_count(x: float, unit: str = "") -> str:
    """FLOP or bytes in G (10⁹) or M (10⁶), Indonesian decimals."""
    if x == 0:
        return "0"
    if x >= 1e9:
        return f"{id_float(x / 1e9, 2)} G{unit}"
    return f"{id_float(x / 1e6, 1)} M{unit}"


HEADER = ("kernel", "B", "FLOP", "byte min.", "FLOP/byte",
          "batas H200", "batas A100", "dibatasi oleh")


def table_rows(B_values=(1, 8), T=ANDREA_T, d_k=D_K, heads=H, *, causal=True,
               kernels_dir=None):
    rows = []
    for B in B_values:
        for m in models(B, T, d_k, heads, causal=causal, kernels_dir=kernels_dir):
            limits = {m.limited_by(g) for g in GPUS}
            rows.append([
                m.kernel, str(B), _fmt_count(m.flops), _fmt_count(m.bytes, "B"),
                id_float(m.intensity, 2), _fmt_time(m.bound_seconds(H200)),
                _fmt_time(m.bound_seconds(A100)),
                limits.pop() if len(limits) == 1 else "beda per GPU",
            ])
    return rows


def format_table(B_values=(1, 8), T=ANDREA_T, d_k=D_K, heads=H, *, causal=True,
                 kernels_dir=None):
    """Tabel teks: satu baris per kernel per B, bentuk (B, H, T, d_k)."""
    rows = table_rows(B_values, T, d_k, heads, causal=causal, kernels_dir=kernels_dir)
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(HEADER)]

    def line(cells):
        return "  ".join([cells[0].ljust(widths[0])]
                         + [c.rjust(w) for c, w in zip(cells[1:], widths[1:])]).rstrip()

    rule = "  ".join("-" * w for w in widths)
    out = [line(HEADER), rule]
    previous = None
    for r in rows:
        if previous is not None and r[1] != previous:
            out.append(rule)
        previous = r[1]
        out.append(line(r))
    return "\n".join(out)


def report_lines(B_values=(1, 8), T=ANDREA_T, d_k=D_K, heads=H, *, causal=True,
                 kernels_dir=None):
    """Judul, tabel, dan keterangan cara menghitung, untuk ``python -m atensi.bench``."""
    lines = [
        f"Model roofline per kernel — attention {'kausal' if causal else 'penuh'}, "
        f"H = {heads}, T = {T}, d_k = {d_k} (dihitung, bukan diukur)",
        format_table(B_values, T, d_k, heads, causal=causal, kernels_dir=kernels_dir),
        "FLOP: 2 per perkalian-tambah, 1 per operasi lain (maks, kurang, exp, jumlah,",
        "  bagi); hanya kerja berguna. Attention kausal utuh: 4·B·H·d·T(T+1)/2.",
        "Byte min.: setiap masukan dibaca sekali, setiap keluaran ditulis sekali",
        "  (float32, tanpa reuse antar-kernel; 1 MB = 10⁶ byte).",
        "Batas = max(FLOP / puncak FP32, byte / lebar pita memori): batas bawah waktu.",
    ]
    for g in GPUS:
        lines.append(
            f"{g.name}: FP32 {id_float(g.fp32_flops / 1e12, 1)} TFLOP/s, "
            f"{id_float(g.bandwidth / 1e12, 2)} TB/s, titik belok "
            f"{id_float(g.ridge, 1)} FLOP/byte (datasheet NVIDIA)."
        )
    return lines
