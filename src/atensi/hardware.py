"""Fakta GPU yang dipakai buku: satu tabel untuk semua modul dan bab.

Dua GPU yang dibicarakan buku, NVIDIA H200 SXM (Hopper, sm_90) dan A100 SXM
80 GB (Ampere, sm_80), beserta batas setiap arsitektur (*compute capability*)
yang diperiksa kode: *warp*, *block*, register, *shared memory*, *grid*, dan
fitur yang baru ada sejak arsitektur tertentu (``cp.async``, tensor core
TF32). Arsitekturnya sm_60 sampai sm_90, termasuk GPU yang dimiliki pembaca
(:data:`CARDS`: GTX 10xx, Tesla T4 di Colab, RTX 20xx/30xx/40xx, L4, A100,
H100, H200).
Roofline, model SASS, okupansi, peluncuran, emulator CPU dan bab-bab membaca
angkanya dari sini; tidak ada modul lain yang mengetik angka perangkat keras.

Modul ini paling bawah di graf impor: ia tidak mengimpor apa pun dari
``atensi``.

Sumber:

- NVIDIA H200 Tensor Core GPU datasheet (2024), SXM: FP32 67 TFLOPS, TF32
  tensor core 989 TFLOPS, BF16/FP16 tensor core 1.979 TFLOPS (angka tensor
  core "with sparsity"), HBM3e 4,8 TB/s.
- NVIDIA A100 Tensor Core GPU datasheet (2021), 80 GB SXM: FP32 19,5 TFLOPS,
  TF32 156/312 TFLOPS, BF16/FP16 312/624 TFLOPS (padat/dengan sparsity),
  HBM2e 2.039 GB/s.
- NVIDIA Hopper Tuning Guide: H100 (GPU yang sama dengan H200, GH100) punya
  132 SM pada SXM5; *shared memory* per SM sampai 228 KB, satu *block* paling
  banyak 227 KB.
- NVIDIA Ampere Tuning Guide: A100 punya 108 SM; *shared memory* per SM
  sampai 164 KB, satu *block* paling banyak 163 KB.
- CUDA C++ Programming Guide, "Technical Specifications per Compute
  Capability": batas *warp*/*block* per SM, register, *shared memory* per
  arsitektur, ukuran *block* dan *grid*; 1 KB *shared memory* dicadangkan
  sistem untuk setiap *block* (sejak 8.0).

Angka tensor core di lembar data H200 hanya ada dalam versi *sparsity*;
untuk matriks padat (yang dipakai buku) angkanya separuh. Tabel ini menyimpan
angka lembar data apa adanya (``*_sparse_flops``) dan menurunkan angka padat
(``tf32_flops``, ``bf16_flops``, ``fp16_flops``).
"""

from __future__ import annotations

from dataclasses import dataclass

KIB = 1024

# --- Limits shared by every compute capability from 7.0 on ---------------------
# (CUDA C++ Programming Guide, technical specifications per compute capability.)
WARP_SIZE = 32
MAX_THREADS_PER_BLOCK = 1024
MAX_BLOCK_DIM = (1024, 1024, 64)  # x, y, z of one block
MAX_GRID_DIM = (2**31 - 1, 65535, 65535)  # x, y, z of one grid
MAX_REGISTERS_PER_BLOCK = 64 * KIB  # 32-bit registers
MAX_REGISTERS_PER_THREAD = 255
# Static __shared__ of one block, and dynamic shared memory without
# cudaFuncSetAttribute(MaxDynamicSharedMemorySize): 48 KB.
DEFAULT_SHARED_PER_BLOCK = 48 * KIB


# Hardware features a kernel may need, with the first compute capability that has
# them (CUDA C++ Programming Guide, "Compute Capabilities": cp.async and the
# TF32 forms of wmma/mma arrive with 8.0, Ampere). Values: what the feature is,
# in Indonesian, for refusals and the book's table.
FEATURES = {
    "cp.async": ((8, 0), "salinan asinkron global → shared memory (cp.async)"),
    "tf32_wmma": ((8, 0), "tensor core TF32 (wmma/mma dengan operan .tf32)"),
}


@dataclass(frozen=True)
class Arch:
    """Batas satu arsitektur (``sm_XX``), sama untuk semua GPU arsitektur itu.

    Semua ukuran memori dalam byte; register dalam register 32 bit."""

    name: str  # "sm_90"
    compute_capability: tuple[int, int]
    max_warps_per_sm: int  # resident warps
    max_blocks_per_sm: int  # resident blocks
    registers_per_sm: int
    shared_per_sm: int  # the most shared memory the blocks of one SM may use together
    max_shared_per_block: int  # static + dynamic, with the opt-in attribute
    reserved_shared_per_block: int  # taken by the system from shared_per_sm for each block
    schedulers_per_sm: int = 4  # warp schedulers (one instruction per cycle each)

    @property
    def max_threads_per_sm(self) -> int:
        return self.max_warps_per_sm * WARP_SIZE

    def has(self, feature: str) -> bool:
        """Whether this architecture has ``feature`` (a key of :data:`FEATURES`)."""
        return self.compute_capability >= FEATURES[feature][0]

    @property
    def cp_async(self) -> bool:
        return self.has("cp.async")

    @property
    def tf32_wmma(self) -> bool:
        return self.has("tf32_wmma")


# CUDA C++ Programming Guide, "Technical Specifications per Compute Capability"
# (the table of resident warps and blocks per SM, 32-bit registers per SM,
# shared memory per SM and the most one block may opt into): 6.0 64 KB per SM,
# 6.1 96 KB per SM, both 48 KB per block with no opt-in above it; 7.0 96/96 KB;
# 7.5 64/64 KB; 8.0 164/163 KB; 8.6 and 8.9 100/99 KB; 8.7 164/163 KB; 9.0
# 228/227 KB. 1 KB per block is reserved by the system from 8.0 on. Pascal
# GP100 (6.0) has two warp schedulers per SM, every later SM four.
SM_60 = Arch("sm_60", (6, 0), 64, 32, 64 * KIB, 64 * KIB, 48 * KIB, 0, schedulers_per_sm=2)
SM_61 = Arch("sm_61", (6, 1), 64, 32, 64 * KIB, 96 * KIB, 48 * KIB, 0)
SM_70 = Arch("sm_70", (7, 0), 64, 32, 64 * KIB, 96 * KIB, 96 * KIB, 0)
SM_75 = Arch("sm_75", (7, 5), 32, 16, 64 * KIB, 64 * KIB, 64 * KIB, 0)
SM_80 = Arch("sm_80", (8, 0), 64, 32, 64 * KIB, 164 * KIB, 163 * KIB, 1 * KIB)
SM_86 = Arch("sm_86", (8, 6), 48, 16, 64 * KIB, 100 * KIB, 99 * KIB, 1 * KIB)
SM_87 = Arch("sm_87", (8, 7), 48, 16, 64 * KIB, 164 * KIB, 163 * KIB, 1 * KIB)
SM_89 = Arch("sm_89", (8, 9), 48, 24, 64 * KIB, 100 * KIB, 99 * KIB, 1 * KIB)
SM_90 = Arch("sm_90", (9, 0), 64, 32, 64 * KIB, 228 * KIB, 227 * KIB, 1 * KIB)
ARCHS = {a.name: a for a in (SM_60, SM_61, SM_70, SM_75, SM_80, SM_86, SM_87, SM_89, SM_90)}
DEFAULT_ARCH = SM_90  # the architecture the book models when none is named: H100/H200
# The architectures the book's support matrix is tested on (NVRTC compiles and
# ATENSI_ARCH runs): one per kind of GPU students own, from GTX 10xx to H100.
MATRIX_ARCHS = ("sm_61", "sm_75", "sm_86", "sm_89", "sm_90")


@dataclass(frozen=True)
class Card:
    """Satu jenis GPU yang dimiliki pembaca, dengan arsitekturnya."""

    name: str
    arch: Arch
    where: str  # where a reader meets it, in Indonesian


# The GPUs readers run the book on: Colab's free T4 and paid L4, their own
# GeForce cards, and the data-centre cards of a lab or a cloud.
CARDS = (
    Card("Tesla P100", SM_60, "pusat data lama, Kaggle"),
    Card("GeForce GTX 10xx", SM_61, "laptop dan PC lama"),
    Card("Tesla T4", SM_75, "Colab gratis"),
    Card("GeForce RTX 20xx", SM_75, "laptop dan PC"),
    Card("GeForce RTX 30xx", SM_86, "laptop dan PC"),
    Card("GeForce RTX 40xx", SM_89, "laptop dan PC"),
    Card("NVIDIA L4", SM_89, "Colab berbayar"),
    Card("A100", SM_80, "Colab berbayar, pusat data"),
    Card("H100", SM_90, "pusat data"),
    Card("H200", SM_90, "pusat data"),
)


def cards_of(arch: Arch) -> tuple[str, ...]:
    """Names of the reader GPUs built on ``arch`` (empty for one no reader card uses)."""
    return tuple(c.name for c in CARDS if c.arch is arch)


def describe(arch: Arch) -> str:
    """``"sm_75 (Tesla T4, GeForce RTX 20xx)"``: the architecture with its cards."""
    cards = cards_of(arch)
    return f"{arch.name} ({', '.join(cards)})" if cards else arch.name


def arch_for(compute_capability: tuple[int, int]) -> Arch | None:
    """The table's entry for a device of ``compute_capability``; None when not in the table."""
    return next((a for a in ARCHS.values() if a.compute_capability == tuple(compute_capability)),
                None)


@dataclass(frozen=True)
class GPU:
    """Satu GPU: arsitekturnya, jumlah SM, puncak per presisi, lebar pita memori.

    Puncak dalam FLOP/s, lebar pita dalam byte/s."""

    name: str
    arch: Arch
    sm_count: int
    fp32_flops: float  # CUDA cores, without tensor cores
    bandwidth: float  # device memory (HBM)
    # Tensor cores, datasheet figures "with sparsity"; 0 for a card measured on
    # the spot (gpu_check), whose tensor-core peaks nobody looked up.
    tf32_sparse_flops: float = 0.0
    bf16_sparse_flops: float = 0.0
    fp16_sparse_flops: float = 0.0

    @property
    def ridge(self) -> float:
        """FLOP per byte where the memory roof meets the FP32 compute roof (roofline)."""
        return self.fp32_flops / self.bandwidth

    @property
    def tf32_flops(self) -> float:
        """TF32 tensor core untuk matriks padat: separuh angka *sparsity*."""
        return self.tf32_sparse_flops / 2

    @property
    def bf16_flops(self) -> float:
        """BF16 tensor core untuk matriks padat: separuh angka *sparsity*."""
        return self.bf16_sparse_flops / 2

    @property
    def fp16_flops(self) -> float:
        """FP16 tensor core untuk matriks padat: separuh angka *sparsity*."""
        return self.fp16_sparse_flops / 2


# NVIDIA H200 Tensor Core GPU datasheet (2024), SXM: FP32 67 TFLOPS, TF32 989 TFLOPS,
# BF16 and FP16 1,979 TFLOPS (tensor core, with sparsity), 4.8 TB/s; 132 SMs (Hopper
# Tuning Guide, H100 SXM5: the same GH100 GPU).
H200 = GPU("H200 SXM", SM_90, 132, 67e12, 4.8e12, tf32_sparse_flops=989e12,
           bf16_sparse_flops=1979e12, fp16_sparse_flops=1979e12)
# NVIDIA A100 Tensor Core GPU datasheet (2021), 80 GB SXM: FP32 19.5 TFLOPS, TF32 312
# TFLOPS, BF16 and FP16 624 TFLOPS (tensor core, with sparsity), 2,039 GB/s; 108 SMs
# (Ampere Tuning Guide).
A100 = GPU("A100 SXM 80 GB", SM_80, 108, 19.5e12, 2.039e12, tf32_sparse_flops=312e12,
           bf16_sparse_flops=624e12, fp16_sparse_flops=624e12)
GPUS = (H200, A100)
