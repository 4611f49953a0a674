"""atensi.roofline: FLOP, byte, intensitas dan waktu batas setiap kernel, dihitung tangan."""

import math

import pytest

from atensi import kernels, roofline as R
from atensi.bench import measure

B, H, T, D = 1, 12, 1024, 64
N = B * H


def _by_name(B=1, T=T, **kw):
    return {m.kernel: m for m in R.models(B, T, **kw)}


def test_every_kernel_file_has_its_models():
    names = _by_name()
    files = {p.name for p in kernels.kernels_dir().glob("*.cu")}
    for file, name in R.kernel_names():
        assert file in files
    for needed in ("scores_v1_naive", "scores_v2_tiled", "scores_v2_tiled_causal",
                   "causal_mask_v1", "softmax_v1_shared", "softmax_v2_warp",
                   "weighted_sum_v1", "attention_fused_d64"):
        assert needed in names, needed
    # One fused row per d_k: the d64 variant for d_k = 64, the d32 one for d_k = 32.
    assert not any(n.startswith("attention_fused_d32") or n.startswith("attention_fused_d128")
                   for n in names)
    assert "attention_fused_d32" in _by_name(d_k=32)
    if (kernels.kernels_dir() / "attention_backward.cu").exists():
        assert "attention_backward_dv_v1" in names and "softmax_backward_v1" in names


def test_counts_by_hand():
    m = _by_name()
    assert m["scores_v1_naive"].flops == 2 * N * T * T * D
    assert m["scores_v1_naive"].bytes == 4 * (2 * N * T * D + N * T * T)
    assert m["causal_mask_v1"].flops == 0 and m["causal_mask_v1"].bytes == 8 * N * T * T
    assert m["softmax_v2_warp"].flops == 5 * N * T * T
    assert m["softmax_v2_warp"].bytes == 8 * N * T * T
    assert m["weighted_sum_v1"].flops == 2 * N * T * T * D
    # Fused: 4·d + 5 per visible pair, causal pairs T(T+1)/2; reads Q, K, V, writes O.
    pairs = N * T * (T + 1) // 2
    assert m["attention_fused_d64"].flops == pairs * (4 * D + 5)
    assert m["attention_fused_d64"].bytes == 4 * 4 * N * T * D
    # The same convention as the bench's GFLOP/s (4·B·H·T²·d / 2), up to the diagonal.
    assert math.isclose(pairs * 4 * D, measure.flops(B, T), rel_tol=2 / T)
    if "softmax_v2_warp_causal" in m:  # reads S[i, 0..i] only, writes all of A
        assert m["softmax_v2_warp_causal"].flops == 5 * pairs
        assert m["softmax_v2_warp_causal"].bytes == 4 * (pairs + N * T * T)
    if "weighted_sum_v2_tiled_causal" in m:  # A[i, j > i] never read
        assert m["weighted_sum_v2_tiled_causal"].flops == 2 * pairs * D
        assert m["weighted_sum_v2_tiled_causal"].bytes == 4 * (pairs + 2 * N * T * D)
    # Non-causal: all T² pairs.
    full = _by_name(causal=False)["attention_fused_d64"]
    assert full.flops == N * T * T * (4 * D + 5)


def test_causal_tiles_skip_about_half():
    causal = _by_name()["scores_v2_tiled_causal"].flops
    full = _by_name()["scores_v2_tiled"].flops
    assert 0.5 < causal / full < 0.52  # half, plus the diagonal tiles
    tile_pairs = kernels.registry.tile_pairs
    assert tile_pairs(16, 16) == 16 * 16 and tile_pairs(17, 16) == 16 * 16 + 17
    assert tile_pairs(32, 16) == 16 * 16 * 3


def test_models_scale_with_B():
    one, eight = _by_name(1), _by_name(8)
    for name in one:
        assert eight[name].flops == pytest.approx(8 * one[name].flops)
        assert eight[name].bytes == pytest.approx(8 * one[name].bytes)
        assert eight[name].intensity == pytest.approx(one[name].intensity)


def test_roofline_bound_and_limit():
    m = _by_name()
    for name, model in m.items():
        for gpu in R.GPUS:
            t = model.bound_seconds(gpu)
            assert t == max(model.flops / gpu.fp32_flops, model.bytes / gpu.bandwidth)
            assert model.limited_by(gpu) == ("komputasi" if model.intensity > gpu.ridge
                                             else "memori")
    # The (T, T) passes are memory bound everywhere, the fused kernel compute bound.
    for gpu in R.GPUS:
        assert m["softmax_v2_warp"].limited_by(gpu) == "memori"
        assert m["causal_mask_v1"].limited_by(gpu) == "memori"
        assert m["attention_fused_d64"].limited_by(gpu) == "komputasi"
    # A100 is slower than H200 on every kernel.
    assert all(x.bound_seconds(R.A100) > x.bound_seconds(R.H200) for x in m.values())


def test_spec_numbers():
    assert R.H200.fp32_flops == 67e12 and R.H200.bandwidth == 4.8e12
    assert R.A100.fp32_flops == 19.5e12 and R.A100.bandwidth == 2.039e12
    assert R.H200.ridge == pytest.approx(13.96, abs=0.01)


def test_table_and_report_in_indonesian_format():
    lines = R.report_lines()
    text = "\n".join(lines)
    assert "Model roofline per kernel" in text and "batas H200" in text
    assert "batas A100" in text and "FLOP/byte" in text
    assert "67,0 TFLOP/s" in text and "4,80 TB/s" in text and "19,5 TFLOP/s" in text
    table = R.format_table()
    rows = [ln for ln in table.splitlines()[2:] if not set(ln) <= {"-", " "}]
    assert len(rows) == 2 * len(R.models(1))  # B = 1 and B = 8
    assert "µs" in table and "1,61 G" in table  # scores_v1 at B = 1: 1.610.612.736 FLOP


def test_kernels_without_a_model_are_skipped():
    """Every registry kernel is listed; those without a FLOP/byte model are not in the table."""
    registry = kernels.registry
    assert R.kernel_names() == [(k.file, k.name) for k in registry.KERNELS]
    without = {k.name for k in registry.KERNELS if k.model is None}
    assert "attention_fused_v2_combine" in without and "attention_tensorcore_tf32_d64" in without
    for d_k in (32, 64, 128):
        shown = {m.kernel for m in R.models(d_k=d_k)}
        assert not shown & without
        # Per-width variants: exactly the one that runs for d_k.
        widths = {registry.get(n).width for n in shown} - {None}
        assert widths == {d_k}
