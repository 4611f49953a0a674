"""The kernels on a real NVIDIA GPU through CuPy (skipped without one).

Same cases as test_kernels_cpu.py, with backend="cupy", over the same versions
(``registry.versions``) and chains (``kernels.launch.CHAINS``). Also: CuPy in gives
CuPy out, NumPy in gives NumPy out, and more heads than grid.z allows.
Run on a GPU machine with ``bash scripts/gpu_check.sh``.
"""

import numpy as np
import pytest

import _kernel_cases as kc
from atensi import kernels
from atensi.kernels import registry

# Skipped without a GPU; scripts/gpu_check.sh sets ATENSI_REQUIRE_GPU=1, and
# there a missing GPU is a failure, not a quiet skip.
pytestmark = kc.GPU_MARKS


@pytest.fixture(autouse=True)
def gpu_required():
    kc.require_gpu()


BACKEND = "cupy"


def to_cupy(x):
    import cupy

    return cupy.asarray(x)


@pytest.mark.parametrize("version", registry.versions("scores"))
@pytest.mark.parametrize("case", kc.SHAPES, ids=kc.SHAPE_IDS)
def test_scores(case, version):
    kc.check_scores(case, BACKEND, version=version, to=to_cupy)
    kc.check_scores(case, BACKEND, version=version, causal=True, to=to_cupy)
    kc.check_scores(case, BACKEND, version=version, scale=False)


@pytest.mark.parametrize("version", registry.versions("causal_mask"))
@pytest.mark.parametrize("case", kc.SHAPES, ids=kc.SHAPE_IDS)
def test_causal_mask(case, version):
    kc.check_causal_mask(case, BACKEND, version=version, to=to_cupy)


@pytest.mark.parametrize("version", registry.versions("softmax"))
@pytest.mark.parametrize("case", kc.SHAPES, ids=kc.SHAPE_IDS)
def test_softmax(case, version):
    kc.check_softmax(case, BACKEND, version=version, to=to_cupy)


@pytest.mark.parametrize("version", registry.versions("softmax"))
@pytest.mark.parametrize("n", [1, 31, 257, 1025, 5000])
def test_softmax_long_rows(n, version):
    kc.check_softmax_rows(17, n, BACKEND, version=version, to=to_cupy)


@pytest.mark.parametrize("version", registry.versions("weighted_sum"))
@pytest.mark.parametrize("case", kc.SHAPES, ids=kc.SHAPE_IDS)
def test_weighted_sum(case, version):
    kc.check_weighted_sum(case, BACKEND, version=version, to=to_cupy)
    if version in registry.versions("weighted_sum", causal=True):
        kc.check_weighted_sum(case, BACKEND, version=version, causal=True, to=to_cupy)


@pytest.mark.parametrize("impl", kc.CHAIN_IMPLS)
@pytest.mark.parametrize("case", kc.SHAPES + [((12,), 1024, 64)], ids=kc.SHAPE_IDS + ["andrea"])
def test_attention(case, impl):
    kc.check_attention(case, BACKEND, impl=impl, to=to_cupy)
    kc.check_attention(case, BACKEND, impl=impl, causal=False)


@pytest.mark.parametrize("fused", kc.fused_cases(), ids=kc.fused_case_id)
@pytest.mark.parametrize("case", kc.SHAPES[::5] + [((12,), 1024, 64)],
                         ids=kc.SHAPE_IDS[::5] + ["andrea"])
def test_fused_every_version(case, fused):
    version, precision, splits = fused
    kc.check_fused(case, BACKEND, version=version, precision=precision, splits=splits,
                   to=to_cupy)
    kc.check_fused(case, BACKEND, version=version, precision=precision, splits=splits,
                   causal=False, scale=False, to=to_cupy)


def test_numpy_in_numpy_out():
    kc.check_all_small(BACKEND)


def test_cupy_in_cupy_out():
    import cupy

    kc.check_all_small(BACKEND, to=to_cupy)
    Q = cupy.ones((2, 4, 3), dtype=cupy.float32)
    if "cpu" in kernels.available_backends():  # needs g++
        assert isinstance(kernels.attention(Q, Q, Q, backend="cpu"), cupy.ndarray)
    assert isinstance(kernels.attention(Q, Q, Q), cupy.ndarray)


def test_cupy_validation():
    import cupy

    Q = cupy.ones((4, 3), dtype=cupy.float64)
    with pytest.raises(TypeError, match=r"'Q'.*float64.*Q\.astype\(cupy\.float32\)"):
        kernels.scores(Q, Q)
    Q = cupy.ones((4, 3), dtype=cupy.float32)
    with pytest.raises(ValueError, match=r"'K'.*C-contiguous.*cupy\.ascontiguousarray"):
        kernels.scores(Q, cupy.ones((3, 4), dtype=cupy.float32).T)
    with pytest.raises(TypeError, match="NumPy"):
        kernels.scores(Q, np.ones((4, 3), np.float32))


def test_more_heads_than_grid_z():
    """70 000 heads > 65 535 blocks in grid.z: the kernels' head loops cover the rest."""
    case = ((70000,), 2, 2)
    for version in registry.versions("scores"):
        kc.check_scores(case, BACKEND, version=version, to=to_cupy)
        kc.check_scores(case, BACKEND, version=version, causal=True, to=to_cupy)
    kc.check_causal_mask(case, BACKEND, to=to_cupy)
    for version in registry.versions("weighted_sum"):
        kc.check_weighted_sum(case, BACKEND, version=version, to=to_cupy)
    for impl in kc.CHAIN_IMPLS:
        kc.check_attention(case, BACKEND, impl=impl, to=to_cupy)


def test_grid_loops_with_small_grid(monkeypatch):
    monkeypatch.setattr(kernels.launch, "MAX_GRID_YZ", 2)
    monkeypatch.setattr(kernels.launch, "MAX_GRID_X", 3)
    launches = kc.spy_launches(monkeypatch)
    kc.check_all_small(BACKEND, to=to_cupy)
    assert {name for name, _, _ in launches} == kc.chain_kernels()  # 5 heads, 35 rows
    for name, grid, _ in launches:
        if "softmax" in name:
            assert tuple(grid) == (3, 1, 1), (name, grid)
        else:
            assert grid[2] == 2, (name, grid)


# --- Large paths: the shapes a real run uses -----------------------------------
# Checked on sampled rows against float64 on the host: the whole float64
# answer at these sizes would take minutes of CPU time and tens of GiB.


def _rows_float64(Q, K, V, samples, *, causal):
    """Attention rows (b, h, t) in float64 from the host copies Q, K, V."""
    out = []
    for b, h, t in samples:
        q = Q[b, h, t].astype(np.float64)
        end = t + 1 if causal else K.shape[2]
        k = K[b, h, :end].astype(np.float64)
        v = V[b, h, :end].astype(np.float64)
        s = k @ q / np.sqrt(Q.shape[-1])
        w = np.exp(s - s.max())
        out.append((w / w.sum()) @ v)
    return np.array(out)


def _samples(B, H, T, seed=0):
    """First and last rows of the first and last head, plus a few at random."""
    rng = np.random.default_rng(seed)
    picks = [(0, 0, 0), (0, 0, T - 1), (B - 1, H - 1, 0), (B - 1, H - 1, T - 1),
             (B - 1, H - 1, T // 2), (B // 2, H // 2, T // 3)]
    picks += [tuple(int(x) for x in (rng.integers(B), rng.integers(H), rng.integers(T)))
              for _ in range(10)]
    return picks


def _inputs(B, H, T, d_k, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((B, H, T, d_k), dtype=np.float32) for _ in range(3))


def _check_sampled(O, Q, K, V, *, causal, tol=2e-5):
    import cupy

    B, H, T, _ = Q.shape
    samples = _samples(B, H, T)
    idx = tuple(cupy.asarray([s[i] for s in samples]) for i in range(3))
    got = cupy.asnumpy(O[idx]).astype(np.float64)
    want = _rows_float64(Q, K, V, samples, causal=causal)
    err = np.abs(got - want).max() / np.abs(want).max()
    assert err < tol, (err, samples)


@pytest.mark.parametrize("causal", [True, False])
def test_fused_large_shape(causal):
    """Fused kernel at (8, 12) × 8192 × 64: 96 heads, the benchmark's largest case."""
    import cupy

    Q, K, V = _inputs(8, 12, 8192, 64, seed=1)
    O = kernels.attention(*(cupy.asarray(x) for x in (Q, K, V)), causal=causal, impl="fused-v1")
    assert isinstance(O, cupy.ndarray) and O.shape == Q.shape
    assert bool(cupy.isfinite(O).all())
    _check_sampled(O, Q, K, V, causal=causal)


def test_chain_more_than_2_31_elements():
    """Kernel chain at T = 8192 with 36 heads: S and A hold 36 · 8192² ≈ 2,4 · 10⁹
    elements, more than 2³¹, so every flat index in the last heads overflows int32."""
    import cupy

    B, H, T = 3, 12, 8192
    assert B * H * T * T > 2**31
    free, _ = cupy.cuda.runtime.memGetInfo()
    need = 2 * 4 * B * H * T * T + 4 * 4 * B * H * T * 64
    if free < 1.2 * need:
        pytest.skip(f"GPU ini punya {free / 2**30:.0f} GiB bebas, uji ini butuh {need / 2**30:.0f} GiB")
    Q, K, V = _inputs(B, H, T, 64, seed=2)
    O = kernels.attention(*(cupy.asarray(x) for x in (Q, K, V)), causal=True)
    cupy.get_default_memory_pool().free_all_blocks()
    assert bool(cupy.isfinite(O).all())
    _check_sampled(O, Q, K, V, causal=True)


def test_fused_past_2_31_elements():
    """One fused v2 call whose Q (and K, V, O) holds B·H·T·d_k > 2³¹ floats, so
    every flat offset into the last heads is past int32 (34 GiB on the GPU).
    Checked on sampled rows, the last head's among them, against float64."""
    import cupy

    B, H, T, d_k = 41, 800, 1024, 64
    assert B * H * T * d_k > 2**31
    free, _ = cupy.cuda.runtime.memGetInfo()
    need = 4 * 4 * B * H * T * d_k
    if free < 1.2 * need:
        pytest.skip(f"GPU ini punya {free / 2**30:.0f} GiB bebas, uji ini butuh {need / 2**30:.0f} GiB")
    rng = cupy.random.default_rng(3)
    Qd, Kd, Vd = (rng.standard_normal((B, H, T, d_k), dtype=cupy.float32) for _ in range(3))
    O = kernels.attention(Qd, Kd, Vd, causal=True, impl="fused-v2", splits=1, backend=BACKEND)
    assert bool(cupy.isfinite(O).all())
    # Sampled rows, the last heads among them, against float64 on the host.
    samples = _samples(B, H, T, seed=3)
    heads = sorted({(b, h) for b, h, _ in samples})
    Q, K, V = ({bh: cupy.asnumpy(x[bh]) for bh in heads} for x in (Qd, Kd, Vd))
    idx = tuple(cupy.asarray([s[i] for s in samples]) for i in range(3))
    got = cupy.asnumpy(O[idx]).astype(np.float64)
    want = []
    for b, h, t in samples:
        q = Q[b, h][t].astype(np.float64)
        k, v = K[b, h][:t + 1].astype(np.float64), V[b, h][:t + 1].astype(np.float64)
        s = k @ q / np.sqrt(d_k)
        w = np.exp(s - s.max())
        want.append((w / w.sum()) @ v)
    want = np.array(want)
    assert np.abs(got - want).max() / np.abs(want).max() < 2e-5
