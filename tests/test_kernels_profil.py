"""atensi.kernels.profil: the bound from counts, resource by resource."""

import pytest

from atensi import hardware
from atensi.kernels import profil, registry

H200 = hardware.H200


def test_clock_follows_from_the_fp32_peak():
    # 132 SMs x 128 lanes x 2 FLOP x clock = 67 TFLOP/s: about 1,98 GHz.
    assert profil.clock(H200) == pytest.approx(67e12 / (132 * 256))


def test_shared_memory_binds_when_wavefronts_outnumber_fma_cycles():
    # Per SM and cycle: 128 FP32 lanes, one wavefront. 128 * 1000 lane-FMAs take 1000
    # cycles; 2000 wavefronts take 2000: shared memory binds, at half the FP32 peak.
    m = {profil.FFMA: 128 * 1000, profil.WAVES[0]: 1500, profil.WAVES[1]: 500}
    b = profil.bound("attention_fused_v2_d64", m, T=64, d=64, array_bytes=0)
    cycles = 1 / (profil.clock(H200) * H200.sm_count)
    assert b.seconds["FP32"] == pytest.approx(1000 * cycles)
    assert b.seconds["shared memory"] == pytest.approx(2000 * cycles)
    assert b.binding == "shared memory"
    assert b.best_seconds == b.seconds["shared memory"]
    model = registry.get("attention_fused_v2_d64").model(1, 64, 64, False)
    assert b.useful_flops == model.flops
    assert b.tflops == pytest.approx(model.flops / b.best_seconds / 1e12)


def test_mufu_and_tensor_cores_are_their_own_resources():
    m = {profil.MUFU: 16 * 3000, profil.MMA: 10}
    b = profil.bound("attention_tensorcore_tf32_d64", m, T=64, d=64, array_bytes=0)
    assert b.binding == "MUFU"
    assert b.seconds["tensor core"] == pytest.approx(10 * 2 * 16 * 16 * 8 / H200.tf32_flops)
    # v3 has no FLOP model of its own: the same work as v2 (Q Kᵀ and P V).
    assert b.useful_flops == registry.get("attention_fused_v2_d64").model(1, 64, 64, False).flops


def test_dram_binds_a_kernel_without_work():
    b = profil.bound("softmax_v2_warp", {}, T=128, d=64)
    assert b.binding == "DRAM"
    assert b.seconds["DRAM"] == pytest.approx(registry.get("softmax_v2_warp").model(1, 128, 64, False).bytes
                                              / H200.bandwidth)


def test_unknown_kernel_is_refused_before_running():
    with pytest.raises(KeyError):
        profil.run(["bukan_kernel"])


def test_scaled_bound_grows_the_counts_with_t_squared_and_dram_with_the_model():
    m = {profil.FFMA: 128 * 1000, profil.WAVES[0]: 2000}
    small = profil.bound("attention_fused_v2_d64", m, T=64, d=64, array_bytes=0)
    big = profil.scaled_bound("attention_fused_v2_d64", m, T_run=64, T=1024, d=64, N=96, causal=False)
    factor = 96 * (1024 / 64) ** 2
    assert big.seconds["shared memory"] == pytest.approx(small.seconds["shared memory"] * factor)
    assert big.seconds["DRAM"] == pytest.approx(
        registry.get("attention_fused_v2_d64").model(96, 1024, 64, False).bytes / H200.bandwidth)
    assert big.fp32_share == pytest.approx(small.fp32_share, rel=1e-3)  # the same share of the peak


def test_global_sectors_load_l1():
    # 4 sectors (128 bytes) per SM and cycle: 4000 sectors take 1000 cycles, 128 * 500 FMAs 500.
    m = {profil.FFMA: 128 * 500, profil.SECTORS[0]: 3000, profil.SECTORS[1]: 1000}
    b = profil.bound("scores_v1_naive", m, T=64, d=64, array_bytes=0)
    assert b.binding == "L1"
    assert b.seconds["L1"] == pytest.approx(1000 / (profil.clock(H200) * H200.sm_count))


def test_occupancy_per_architecture_from_ptxas():
    pytest.importorskip("cupy")  # NVRTC: compiles without a GPU
    v2 = profil.occupancy("attention_fused_v2_d64")
    if not v2:
        pytest.skip("NVRTC tidak terpasang")
    # __launch_bounds__(128, 4): four blocks of four warps at least, of 64 warps per SM.
    assert v2["sm_90"] >= 4 * 4 / 64
    # TF32 tensor cores start at sm_80: no sm_75 build of v3.
    v3 = profil.occupancy("attention_tensorcore_tf32_d64")
    assert "sm_75" not in v3 and "sm_90" in v3
