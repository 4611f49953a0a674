"""atensi.kernels.limits: the limits only kernels have (int32, grid.y, d_k) and
the CPU budget, whose work per path is divided by the registry's emulated speed."""

import dataclasses

import numpy as np
import pytest

import _kernel_cases as kc
from atensi import kernels
from atensi.kernels import limits, registry

RNG = np.random.default_rng(20240611)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_a_d_k_above_the_kernels_limit_is_refused():
    """The limit check used by kernels that hold a row of d_k in registers."""
    limits.check_d_k_limit(128, 128, "attention_fused")
    limits.check_d_k_limit(4096, None, "scores_v2_tiled")
    with pytest.raises(ValueError, match=r"'Q'.*d_k = 129.*melebihi batas kernel attention_fused.*128"):
        limits.check_d_k_limit(129, 128, "attention_fused")
    with pytest.raises(ValueError, match=r"d_k = 256\) melebihi"):
        limits.check_qkv(rand(3, 256), rand(3, 256), rand(3, 256), max_d_k=128)


def test_more_rows_than_int32_are_refused():
    limits.check_int32(limits.INT32_MAX, "Jumlah baris H·T")
    with pytest.raises(ValueError, match=r"Jumlah baris H·T = 2147483648 melebihi batas int32"):
        limits.check_int32(limits.INT32_MAX + 1, "Jumlah baris H·T")


def test_work_is_pairs_times_width_divided_by_the_paths_speed_plus_blocks():
    assert limits.pair_work(2, 10, 64) == 2 * 10 * 10 * 64
    # Below d = 16 a pair costs as much as at d = 16.
    assert limits.pair_work(1, 10, 1) == limits.pair_work(1, 10, limits.MIN_WORK_D)
    assert limits.pair_work(1, 10, 64, products=2, speed=4.0) == 10 * 10 * 64 * 2 / 4
    assert limits.pair_work(1, 10, 64, blocks=3) == 10 * 10 * 64 + 3 * limits.BLOCK_WORK


def test_every_kernel_of_one_step_and_version_has_one_emulated_speed():
    for step in ("scores", "softmax", "weighted_sum", "fused"):
        for version in registry.versions(step):
            speeds = {k.emulated_speed for k in registry.of_step(step, version)}
            assert speeds == {registry.emulated_speed(step, version)}, (step, version)
    assert registry.emulated_speed("scores", "v1") == 1.0  # the chain is the unit


def test_the_budget_of_a_fused_version_follows_its_registry_speed(monkeypatch):
    """The speed is the registry entry's, not a table keyed by the version's name:
    the same fused-v1 call is accepted or refused as its entries' speed changes."""
    kc.forbid_launches(monkeypatch)
    Q = np.ones((1, 256, 16), np.float32)
    work = limits.pair_work(1, 256, 16, products=2, blocks=1)  # at speed 1
    monkeypatch.setenv("ATENSI_CPU_BUDGET", str(work * 0.75))
    with pytest.raises(AssertionError, match="kernel diluncurkan"):  # accepted at speed 2
        kernels.attention(Q, Q, Q, impl="fused-v1", causal=False, backend="cpu")
    slower = tuple(dataclasses.replace(k, emulated_speed=0.5)
                   if (k.step, k.version) == ("fused", "v1") else k for k in registry.KERNELS)
    monkeypatch.setattr(registry, "KERNELS", slower)
    with pytest.raises(ValueError, match=r"terlalu besar untuk emulasi CPU"):
        kernels.attention(Q, Q, Q, impl="fused-v1", causal=False, backend="cpu")
