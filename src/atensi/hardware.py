"""Fakta GPU yang dipakai buku: satu tabel untuk semua modul dan bab.

Dua GPU yang dibicarakan buku, NVIDIA H200 SXM (Hopper, sm_90) dan A100 SXM
80 GB (Ampere, sm_80), beserta batas setiap arsitektur (*compute capability*)
yang diperiksa kode: *warp*, *block*, register, *shared memory*, *grid*.
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


# CUDA C++ Programming Guide, technical specifications per compute capability.
SM_70 = Arch("sm_70", (7, 0), 64, 32, 64 * KIB, 96 * KIB, 96 * KIB, 0)
SM_75 = Arch("sm_75", (7, 5), 32, 16, 64 * KIB, 64 * KIB, 64 * KIB, 0)
SM_80 = Arch("sm_80", (8, 0), 64, 32, 64 * KIB, 164 * KIB, 163 * KIB, 1 * KIB)
SM_86 = Arch("sm_86", (8, 6), 48, 16, 64 * KIB, 100 * KIB, 99 * KIB, 1 * KIB)
SM_87 = Arch("sm_87", (8, 7), 48, 16, 64 * KIB, 164 * KIB, 163 * KIB, 1 * KIB)
SM_89 = Arch("sm_89", (8, 9), 48, 24, 64 * KIB, 100 * KIB, 99 * KIB, 1 * KIB)
SM_90 = Arch("sm_90", (9, 0), 64, 32, 64 * KIB, 228 * KIB, 227 * KIB, 1 * KIB)
ARCHS = {a.name: a for a in (SM_70, SM_75, SM_80, SM_86, SM_87, SM_89, SM_90)}
DEFAULT_ARCH = SM_90  # the architecture the book models when none is named: H100/H200


@dataclass(frozen=True)
class GPU:
    """Satu GPU: arsitekturnya, jumlah SM, puncak per presisi, lebar pita memori.

    Puncak dalam FLOP/s, lebar pita dalam byte/s."""

    name: str
    arch: Arch
    sm_count: int
    fp32_flops: float  # CUDA cores, without tensor cores
    tf32_sparse_flops: float  # tensor cores, datasheet figure "with sparsity"
    bf16_sparse_flops: float  # tensor cores, datasheet figure "with sparsity"
    fp16_sparse_flops: float  # tensor cores, datasheet figure "with sparsity"
    bandwidth: float  # device memory (HBM)

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
H200 = GPU("H200 SXM", SM_90, 132, 67e12, 989e12, 1979e12, 1979e12, 4.8e12)
# NVIDIA A100 Tensor Core GPU datasheet (2021), 80 GB SXM: FP32 19.5 TFLOPS, TF32 312
# TFLOPS, BF16 and FP16 624 TFLOPS (tensor core, with sparsity), 2,039 GB/s; 108 SMs
# (Ampere Tuning Guide).
A100 = GPU("A100 SXM 80 GB", SM_80, 108, 19.5e12, 312e12, 624e12, 624e12, 2.039e12)
GPUS = (H200, A100)
