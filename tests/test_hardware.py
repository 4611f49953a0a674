"""The GPU fact table: self-consistent, at the bottom of the import graph, and the
one source of the numbers the roofline, SASS model, occupancy, launchers,
emulator and kernel limits use."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from atensi import hardware, roofline
from atensi.cudacpu import module as cudacpu_module
from atensi.cudacpu import resources
from atensi.kernels import compiling, launch, limits, registry, sass
from atensi.ptxas import KernelResources

SRC = Path(hardware.__file__).resolve().parent


def _atensi_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "atensi"}
        elif isinstance(node, ast.ImportFrom):
            if node.level or (node.module or "").split(".")[0] == "atensi":
                found.add("." * node.level + (node.module or ""))
    return found


def test_the_table_imports_nothing_from_atensi():
    assert _atensi_imports(SRC / "hardware.py") == set()


def test_the_sass_model_takes_its_peaks_from_the_table_not_from_the_roofline():
    imports = _atensi_imports(SRC / "kernels" / "sass.py")
    assert "atensi.roofline" not in imports and "atensi" in imports
    # No peak typed there ("/ 1e12" only converts to TFLOP/s).
    text = (SRC / "kernels" / "sass.py").read_text(encoding="utf-8")
    assert not re.search(r"\b(?!1e12\b)\d+(?:\.\d+)?e12\b", text)


@pytest.mark.parametrize("gpu", hardware.GPUS, ids=lambda g: g.name)
def test_dense_tensor_core_peaks_are_half_the_sparsity_figures(gpu):
    assert gpu.tf32_flops == gpu.tf32_sparse_flops / 2
    assert gpu.bf16_flops == gpu.bf16_sparse_flops / 2
    assert gpu.fp16_flops == gpu.fp16_sparse_flops / 2
    assert gpu.bf16_sparse_flops == gpu.fp16_sparse_flops  # the datasheets give one figure
    # Tensor cores: TF32 at least 7x FP32 on CUDA cores, BF16 twice TF32.
    assert gpu.fp32_flops * 7 < gpu.tf32_flops and gpu.bf16_flops == pytest.approx(2 * gpu.tf32_flops, rel=1e-3)
    assert gpu.arch is hardware.ARCHS[gpu.arch.name] and gpu.sm_count > 0 and gpu.bandwidth > 1e12


def test_the_book_gpus_are_an_h200_on_sm_90_and_an_a100_on_sm_80():
    assert hardware.GPUS == (hardware.H200, hardware.A100)
    assert hardware.H200.arch is hardware.SM_90 is hardware.DEFAULT_ARCH
    assert hardware.A100.arch is hardware.SM_80
    assert hardware.H200.sm_count > hardware.A100.sm_count
    assert hardware.H200.bandwidth > hardware.A100.bandwidth


@pytest.mark.parametrize("arch", hardware.ARCHS.values(), ids=lambda a: a.name)
def test_each_architecture_is_self_consistent(arch):
    major, minor = arch.compute_capability
    assert arch.name == f"sm_{major}{minor}"
    # Shared memory: the default 48 KB <= what a block may opt into <= what an SM has,
    # with room for the system's reserve of that block.
    assert hardware.DEFAULT_SHARED_PER_BLOCK <= arch.max_shared_per_block <= arch.shared_per_sm
    assert arch.max_shared_per_block + arch.reserved_shared_per_block <= arch.shared_per_sm
    assert arch.max_shared_per_block % 1024 == 0 and arch.shared_per_sm % 1024 == 0
    # Threads and registers: one full block fits on an SM.
    assert hardware.MAX_THREADS_PER_BLOCK <= arch.max_threads_per_sm
    assert hardware.MAX_REGISTERS_PER_BLOCK <= arch.registers_per_sm
    assert arch.max_warps_per_sm % arch.schedulers_per_sm == 0
    assert arch.max_blocks_per_sm <= arch.max_warps_per_sm


def test_block_and_grid_limits():
    assert hardware.MAX_BLOCK_DIM[0] == hardware.MAX_BLOCK_DIM[1] == hardware.MAX_THREADS_PER_BLOCK
    assert hardware.MAX_THREADS_PER_BLOCK % hardware.WARP_SIZE == 0
    assert hardware.MAX_GRID_DIM == (2**31 - 1, 65535, 65535)
    # 255 registers per thread x 256 threads is the most that fits one block.
    per_warp = -(-hardware.MAX_REGISTERS_PER_THREAD * hardware.WARP_SIZE // 256) * 256
    assert 8 * per_warp <= hardware.MAX_REGISTERS_PER_BLOCK < 9 * per_warp


def test_the_roofline_reads_its_roofs_from_the_table():
    # One GPU class in the library: the roofline's GPUs are the table's own.
    assert roofline.GPUS == hardware.GPUS and roofline.H200 is hardware.H200
    assert not hasattr(roofline, "GPU")
    assert hardware.H200.ridge == hardware.H200.fp32_flops / hardware.H200.bandwidth


def test_a_card_measured_on_the_spot_has_no_tensor_core_peaks():
    card = hardware.GPU("NVIDIA H100 80GB HBM3", hardware.SM_90, 132, 60e12, 3.0e12)
    assert (card.tf32_flops, card.bf16_flops, card.fp16_flops) == (0.0, 0.0, 0.0)
    assert card.ridge == 20.0


def test_the_launchers_and_the_split_model_read_the_table():
    assert launch.MODEL_SM_COUNT == hardware.H200.sm_count
    assert (launch.MAX_GRID_X, launch.MAX_GRID_YZ) == hardware.MAX_GRID_DIM[:2]
    assert launch.FUSED_MAX_SPLITS == hardware.MAX_GRID_DIM[2]
    for step, limit in launch.MAX_T.items():
        assert limit % hardware.MAX_GRID_DIM[1] == 0, step


def test_the_T_limit_names_the_grid_limit_of_the_table():
    with pytest.raises(ValueError, match=f"grid.y paling banyak {hardware.MAX_GRID_DIM[1]} block"):
        limits.check_T_limit(10, "scores", 5)


@pytest.mark.parametrize("arch", [hardware.SM_80, hardware.SM_90], ids=lambda a: a.name)
def test_occupancy_uses_the_architecture_limits_of_the_table(arch):
    # A block of all the shared memory one block may have: one block per SM.
    whole = KernelResources(threads=128, shared_bytes=arch.max_shared_per_block)
    warps = 128 // hardware.WARP_SIZE
    assert compiling.occupancy(whole, arch.name) == warps / arch.max_warps_per_sm
    # Small blocks: limited by the warps an SM can hold.
    small = KernelResources(threads=arch.max_threads_per_sm // 4, registers=16)
    assert compiling.occupancy(small, arch.name) == 1.0
    # Registers: 255 per thread, 256 threads: one block.
    heavy = KernelResources(threads=256, registers=hardware.MAX_REGISTERS_PER_THREAD)
    assert compiling.occupancy(heavy, arch.name) == 8 / arch.max_warps_per_sm


def test_occupancy_of_an_unknown_architecture_is_sm_90s():
    res = KernelResources(threads=256, shared_bytes=40 * 1024)
    assert compiling.occupancy(res, "sm_120") == compiling.occupancy(res, "sm_90")


def test_the_registry_rules_use_the_table_limits():
    for k in registry.KERNELS:
        threads = k.block[0] * k.block[1] * k.block[2]
        assert threads <= hardware.MAX_THREADS_PER_BLOCK, k.name
        assert k.dynamic_shared <= hardware.DEFAULT_ARCH.max_shared_per_block, k.name


def test_the_emulator_limits_come_from_the_table():
    assert cudacpu_module.MAX_BLOCK == hardware.MAX_BLOCK_DIM
    assert cudacpu_module.MAX_GRID == hardware.MAX_GRID_DIM
    assert cudacpu_module.MAX_THREADS_PER_BLOCK == hardware.MAX_THREADS_PER_BLOCK
    assert cudacpu_module.DEFAULT_DYN_SMEM == hardware.DEFAULT_SHARED_PER_BLOCK
    # The largest opt-in of every architecture: sm_90's.
    assert cudacpu_module.MAX_DYN_SMEM == max(a.max_shared_per_block for a in hardware.ARCHS.values())
    assert resources.REGISTERS_PER_BLOCK == hardware.MAX_REGISTERS_PER_BLOCK
    assert resources.MAX_REGISTERS_PER_THREAD == hardware.MAX_REGISTERS_PER_THREAD
    assert resources.MAX_STATIC_SHARED == hardware.DEFAULT_SHARED_PER_BLOCK
    assert resources.DEFAULT_ARCH == hardware.DEFAULT_ARCH.name
    for name, arch in hardware.ARCHS.items():
        assert resources.shared_limit(name) == arch.max_shared_per_block
    assert resources.shared_limit("sm_120") == hardware.DEFAULT_ARCH.max_shared_per_block


def _header_constant(name: str) -> int:
    header = (SRC / "cudacpu" / "cuda_cpu.h").read_text(encoding="utf-8")
    m = re.search(rf"constexpr [\w:]+ {name} = ([0-9 *]+);", header)
    assert m, name
    value = 1
    for factor in m.group(1).split("*"):
        value *= int(factor)
    return value


def test_the_emulator_header_agrees_with_the_table():
    # cuda_cpu.h sizes its arrays at compile time; it cannot import the table.
    assert _header_constant("kMaxThreads") == hardware.MAX_THREADS_PER_BLOCK
    assert _header_constant("kWarp") == hardware.WARP_SIZE
    assert _header_constant("kMaxDynSmem") == cudacpu_module.MAX_DYN_SMEM


# --- the GPUs readers own ------------------------------------------------------

# Most shared memory one block may opt into, per architecture (CUDA C++ Programming
# Guide, technical specifications per compute capability), in KiB.
OPT_IN_KIB = {"sm_60": 48, "sm_61": 48, "sm_70": 96, "sm_75": 64, "sm_80": 163, "sm_86": 99,
              "sm_89": 99, "sm_90": 227}


@pytest.mark.parametrize("name, kib", OPT_IN_KIB.items())
def test_each_architecture_allows_its_opt_in_shared_memory(name, kib):
    arch = hardware.ARCHS[name]
    assert arch.max_shared_per_block == kib * 1024
    assert arch.registers_per_sm == 64 * 1024 and arch.max_threads_per_sm >= 1024
    # cp.async and the TF32 tensor cores both arrive with Ampere.
    assert arch.cp_async == arch.tf32_wmma == (arch.compute_capability >= (8, 0))


def test_the_matrix_covers_every_gpu_readers_own():
    by_name = {c.name: c.arch.name for c in hardware.CARDS}
    assert by_name["GeForce GTX 10xx"] == "sm_61"
    assert by_name["Tesla T4"] == by_name["GeForce RTX 20xx"] == "sm_75"
    assert by_name["GeForce RTX 30xx"] == "sm_86"
    assert by_name["GeForce RTX 40xx"] == by_name["NVIDIA L4"] == "sm_89"
    assert by_name["A100"] == "sm_80" and by_name["H100"] == by_name["H200"] == "sm_90"
    assert set(hardware.MATRIX_ARCHS) <= set(hardware.ARCHS)
    assert {c.arch.name for c in hardware.CARDS} >= set(hardware.MATRIX_ARCHS)
    assert hardware.describe(hardware.SM_75) == "sm_75 (Tesla T4, GeForce RTX 20xx)"
    assert hardware.arch_for((8, 6)) is hardware.SM_86 and hardware.arch_for((12, 0)) is None


@pytest.mark.parametrize("arch", ["sm_70", "sm_75"])
def test_occupancy_of_a_kernel_without_shared_memory_where_nothing_is_reserved(arch):
    # sm_70/75 reserve no shared memory per block: 0 bytes must not divide by zero.
    res = KernelResources(threads=256, registers=32)
    limits_ = hardware.ARCHS[arch]
    assert compiling.occupancy(res, arch) == min(
        limits_.max_blocks_per_sm * 8, limits_.max_warps_per_sm) / limits_.max_warps_per_sm


def test_the_modelled_architecture_is_atensi_arch(monkeypatch):
    monkeypatch.delenv("ATENSI_ARCH", raising=False)
    assert resources.modelled_arch() is hardware.DEFAULT_ARCH
    monkeypatch.setenv("ATENSI_ARCH", "sm_75")
    assert resources.modelled_arch() is hardware.SM_75 and resources.arch_of(()) == "sm_75"
    assert resources.arch_of(("-arch=sm_80",)) == "sm_80"  # a module's own -arch still wins
    for bad in ("sm_95", "75", "SM_75", "sm_75 "):
        monkeypatch.setenv("ATENSI_ARCH", bad)
        with pytest.raises(ValueError, match=r"Variabel lingkungan ATENSI_ARCH=.* tidak sah: "
                                             r"harus salah satu dari 'sm_60', 'sm_61'"):
            resources.modelled_arch()
