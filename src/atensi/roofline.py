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

Angka GPU (spesifikasi pabrik, tanpa Tensor Core, tanpa sparsitas) dibaca
dari :mod:`atensi.hardware`:

- NVIDIA H200 SXM: FP32 67 TFLOP/s, HBM3e 4,8 TB/s (NVIDIA H200 Tensor
  Core GPU datasheet, 2024).
- NVIDIA A100 SXM 80 GB: FP32 19,5 TFLOP/s, HBM2e 2.039 GB/s (NVIDIA A100
  Tensor Core GPU datasheet, 2021).

Model FLOP/byte setiap kernel ada di entrinya di :mod:`atensi.kernels.registry`;
modul ini menerapkannya pada ukuran dan GPU.

Fungsi:
    models(B, T, d_k=64, heads=12, causal=True) → daftar KernelModel
    format_table(B_values=(1, 8), T=1024, ...)   → tabel teks
    report_lines(...)                            → baris-baris untuk bench
"""

from __future__ import annotations

from dataclasses import dataclass

from atensi import hardware
from atensi.formatting import id_float
from atensi.kernels import registry

H, D_K, ANDREA_T = 12, 64, 1024


# The roofs are the hardware table's (one GPU class for the whole library).
H200, A100 = hardware.H200, hardware.A100
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

    def bound_seconds(self, gpu: hardware.GPU) -> float:
        return max(self.flops / gpu.fp32_flops, self.bytes / gpu.bandwidth)

    def limited_by(self, gpu: hardware.GPU) -> str:
        return "komputasi" if self.intensity > gpu.ridge else "memori"


def kernel_names():
    """[(file, kernel)] of every ``__global__`` function in the registry, in book order."""
    return [(k.file, k.name) for k in registry.KERNELS]


def models(B=1, T=ANDREA_T, d_k=D_K, heads=H, *, causal=True):
    """Model setiap kernel di registri untuk attention B × heads × T × d_k.

    Varian per lebar (``_d32``, ``_d64``, ``_d128``): hanya yang berjalan untuk
    ``d_k``. Kernel tanpa model FLOP/byte di registri dilewati."""
    N = B * heads
    width = registry.width_for(d_k) if d_k <= registry.WIDTHS[-1] else None
    out = []
    for k in registry.KERNELS:
        if k.model is None or (k.width is not None and k.width != width):
            continue
        m = k.model(N, T, d_k, causal)
        out.append(KernelModel(k.name, k.file, m.what, m.flops, m.bytes))
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


def table_rows(B_values=(1, 8), T=ANDREA_T, d_k=D_K, heads=H, *, causal=True):
    rows = []
    for B in B_values:
        for m in models(B, T, d_k, heads, causal=causal):
            limits = {m.limited_by(g) for g in GPUS}
            rows.append([
                m.kernel, str(B), _fmt_count(m.flops), _fmt_count(m.bytes, "B"),
                id_float(m.intensity, 2), _fmt_time(m.bound_seconds(H200)),
                _fmt_time(m.bound_seconds(A100)),
                limits.pop() if len(limits) == 1 else "beda per GPU",
            ])
    return rows


def format_table(B_values=(1, 8), T=ANDREA_T, d_k=D_K, heads=H, *, causal=True):
    """Tabel teks: satu baris per kernel per B, bentuk (B, H, T, d_k)."""
    rows = table_rows(B_values, T, d_k, heads, causal=causal)
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


def report_lines(B_values=(1, 8), T=ANDREA_T, d_k=D_K, heads=H, *, causal=True):
    """Judul, tabel, dan keterangan cara menghitung, untuk ``python -m atensi.bench``."""
    lines = [
        f"Model roofline per kernel — attention {'kausal' if causal else 'penuh'}, "
        f"H = {heads}, T = {T}, d_k = {d_k} (dihitung, bukan diukur)",
        format_table(B_values, T, d_k, heads, causal=causal),
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
