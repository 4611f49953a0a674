"""The v2 kernels: weighted_sum v2 (tiled like a GEMM, causal
tiles skipped), the causal softmax that never reads the future, and
attention_fused v2 (FlashAttention-2 structure in FP32).

On the CPU emulator against a float64 oracle, at ragged shapes (T and d_k not
multiples of the 64 × 64 tile, T = 1, leading axes), causal on and off; the
grid loops; NVRTC sm_80/sm_90 with zero spills; the same checks on a GPU when
one is present (marked ``gpu``). Shapes are small: the emulator is slow.
"""

import zlib

import numpy as np
import pytest

import _kernel_cases as kc
from atensi import kernels, reference
from atensi.kernels import registry

CPU = "cpu"
TOL = 1e-5  # relative to the largest |value| of the oracle
# (leading axes, T, d_k): T = 1, a partial tile, more than one tile.
SHAPES = [((), 1, 1), ((2,), 70, 65), ((2, 3), 17, 8), ((), 5, 128)]
IDS = ["T1", "T70-d65", "lead2x3-T17", "T5-d128"]


def _rng(*key):
    # A stable seed per case (hash() of a str changes from run to run).
    return np.random.default_rng(zlib.crc32(repr(("v2",) + key).encode()))


def _close(out, ref):
    out = np.asarray(out, dtype=np.float64)
    assert out.shape == ref.shape and np.isfinite(out).all()
    scale = max(1.0, float(np.abs(ref).max()))
    err = float(np.abs(out - ref).max()) / scale
    assert err <= TOL, err
    return err


def _weights(lead, T, seed):
    """Causal softmax weights with some rows fully masked (rows of zeros)."""
    rng = _rng("A", lead, T, seed)
    S = rng.standard_normal(lead + (T, T)).astype(np.float32)
    A = reference.softmax(np.where(np.triu(np.ones((T, T), bool), 1), -np.inf, S))
    return np.ascontiguousarray(A, dtype=np.float32)


def _to_cupy(x):
    import cupy

    return cupy.asarray(x)


def _get(x):
    return x.get() if hasattr(x, "get") else x


# ---- weighted_sum v2 -------------------------------------------------------


def check_weighted_sum_v2(case, backend, causal, to=None):
    lead, T, d_k = case
    A = _weights(lead, T, 1)
    V = _rng("V", lead, T, d_k).standard_normal(lead + (T, d_k)).astype(np.float32)
    if causal:
        # The future part of A must be ignored, not read: fill it with
        # large values that would ruin the result if they were used.
        A[..., np.triu(np.ones((T, T), bool), 1)] = 1e6
    Ax, Vx = (to(A), to(V)) if to else (A, V)
    out = kernels.weighted_sum(Ax, Vx, version="v2", causal=causal, backend=backend)
    assert type(out) is type(Vx)
    A64 = np.tril(A.astype(np.float64)) if causal else A.astype(np.float64)
    return _close(_get(out), A64 @ V.astype(np.float64))


@pytest.mark.parametrize("causal", [False, True], ids=["penuh", "kausal"])
@pytest.mark.parametrize("case", SHAPES, ids=IDS)
def test_weighted_sum_v2(case, causal):
    check_weighted_sum_v2(case, CPU, causal)


def test_weighted_sum_v2_grid_loop(monkeypatch):
    """More heads than grid.z: the block loops over heads (h += gridDim.z)."""
    monkeypatch.setattr(kernels.launch, "MAX_GRID_YZ", 2)
    launches = kc.spy_launches(monkeypatch)
    for causal in (False, True):
        check_weighted_sum_v2(((5,), 9, 3), CPU, causal)
    assert [grid[2] for _, grid, _ in launches] == [2, 2]  # the cap reached the launcher


def test_weighted_sum_v2_launch(monkeypatch):
    """v2 launches 256 threads per 64 × 64 output tile; causal picks its kernel."""
    calls = kc.spy_launches(monkeypatch)
    A = _weights((3,), 130, 2)
    V = np.ones((3, 130, 70), np.float32)
    kernels.weighted_sum(A, V, version="v2", causal=True, backend=CPU)
    name, grid, block = calls[-1][:3]
    assert name == "weighted_sum_v2_tiled_causal"
    assert tuple(grid) == (2, 3, 3) and tuple(block) == (256, 1, 1)


def test_weighted_sum_default_is_v1(monkeypatch):
    calls = kc.spy_launches(monkeypatch)
    A = _weights((), 4, 3)
    kernels.weighted_sum(A, np.ones((4, 2), np.float32), backend=CPU)
    assert calls[-1][0] == "weighted_sum_v1"


# ---- causal softmax ----------------------------------------------------------


def check_softmax_causal(lead, T, backend, to=None, version="v2"):
    S = (_rng("S", lead, T).standard_normal(lead + (T, T)) * 3).astype(np.float32)
    future = np.triu(np.ones((T, T), bool), 1)
    if T > 3:
        S[..., 3, :4] = -np.inf  # row 3 sees nothing: zeros, not NaN
    S[..., future] = 1e30  # never read: would dominate every row
    Sx = to(S) if to else S
    A = kernels.softmax(Sx, causal=True, version=version, backend=backend)
    assert type(A) is type(Sx)
    A = _get(A)
    ref = reference.softmax(np.where(future, -np.inf, S.astype(np.float64)))
    _close(A, ref)
    assert (A[..., future] == 0).all()
    if T > 3:
        assert (A[..., 3, :] == 0).all()
    visible = np.isfinite(ref).all(axis=-1) & (ref.sum(axis=-1) > 0)
    np.testing.assert_allclose(A.sum(axis=-1)[visible], 1.0, atol=TOL)


@pytest.mark.parametrize("version", registry.versions("softmax", causal=True))
@pytest.mark.parametrize("lead, T", [((), 1), ((2, 3), 7), ((), 300)],
                         ids=["T1", "lead-T7", "T300"])
def test_softmax_causal(lead, T, version):
    check_softmax_causal(lead, T, CPU, version=version)


def test_softmax_causal_grid_loop(monkeypatch):
    """More rows than grid.x: each block walks rows r += gridDim.x, i = r % T."""
    monkeypatch.setattr(kernels.launch, "MAX_GRID_X", 3)
    launches = kc.spy_launches(monkeypatch)
    check_softmax_causal((2,), 5, CPU)
    assert [grid for _, grid, _ in launches] == [(3, 1, 1)]  # 10 rows, 3 blocks


# ---- the chain: attention(impl="chain-v3") --------------------------------------


@pytest.mark.parametrize("causal", [False, True], ids=["penuh", "kausal"])
@pytest.mark.parametrize("case", [((), 1, 3), ((2,), 70, 65), ((2, 3), 9, 4)],
                         ids=["T1", "T70-d65", "lead2x3"])
def test_attention_v3_chain(case, causal):
    lead, T, d_k = case
    rng = _rng("qkv", lead, T, d_k)
    Q, K, V = (rng.standard_normal(lead + (T, d_k)).astype(np.float32) for _ in range(3))
    out = kernels.attention(Q, K, V, causal=causal, impl="chain-v3", backend=CPU)
    ref = reference.attention(*(x.astype(np.float64) for x in (Q, K, V)), causal=causal)
    _close(out, ref)


def test_attention_v3_uses_the_skipping_kernels(monkeypatch):
    calls = kc.spy_launches(monkeypatch)
    Q = np.ones((5, 3), np.float32)
    kernels.attention(Q, Q, Q, impl="chain-v3", backend=CPU)
    assert [c[0] for c in calls] == ["scores_v2_tiled_causal", "softmax_v2_warp_causal",
                                     "weighted_sum_v2_tiled_causal"]
    calls.clear()
    kernels.attention(Q, Q, Q, backend=CPU)  # the default stays what the book shows
    assert [c[0] for c in calls] == ["scores_v2_tiled_causal", "softmax_v2_warp",
                                     "weighted_sum_v1"]


# ---- attention_fused v2 (FlashAttention-2 structure) -----------------------------

FUSED_SHAPES = [((), 1, 3), ((2,), 70, 64), ((2, 3), 33, 7), ((), 129, 32), ((), 65, 40)]
FUSED_IDS = ["T1", "T70-d64", "lead2x3-d7", "T129-d32", "T65-d40"]


def check_fused_v2(case, backend, causal, scale=True, to=None, offset=0):
    """``offset`` > 0: inputs start ``offset`` floats into a buffer, so they
    are not 16-byte aligned and the kernel must take its scalar loads."""
    lead, T, d_k = case
    rng = _rng("fused", lead, T, d_k, offset)
    n = int(np.prod(lead, dtype=int)) * T * d_k
    Q, K, V = (rng.standard_normal(n + offset).astype(np.float32)[offset:]
               .reshape(lead + (T, d_k)) for _ in range(3))
    args = tuple(to(x) for x in (Q, K, V)) if to else (Q, K, V)
    out = kernels.attention(*args, causal=causal, scale=scale, impl="fused-v2", backend=backend)
    assert type(out) is type(args[0]) and out.shape == Q.shape
    ref = reference.attention(*(x.astype(np.float64) for x in (Q, K, V)),
                              causal=causal, scale=scale)
    return _close(_get(out), ref)


@pytest.mark.parametrize("causal", [False, True], ids=["penuh", "kausal"])
@pytest.mark.parametrize("case", FUSED_SHAPES, ids=FUSED_IDS)
def test_fused_v2(case, causal):
    check_fused_v2(case, CPU, causal)


def test_fused_v2_without_scaling_and_grid_loop(monkeypatch):
    check_fused_v2(((), 40, 16), CPU, True, scale=False)
    monkeypatch.setattr(kernels.launch, "MAX_GRID_YZ", 2)  # 5 heads, 2 blocks in y
    launches = kc.spy_launches(monkeypatch)
    check_fused_v2(((5,), 9, 8), CPU, True)
    assert [grid for _, grid, _ in launches] == [(1, 2, 1)]


def _spy_args(monkeypatch):
    seen = []
    real = kernels.loading.get_function

    def spy(file, name, backend):
        kernel = real(file, name, backend)

        def launch(grid, block, args, shared_mem=0):
            seen.append((name, tuple(grid), tuple(block), args))
            return kernel(grid, block, args, shared_mem=shared_mem)

        return launch

    monkeypatch.setattr(kernels.loading, "get_function", spy)
    return seen


@pytest.mark.parametrize("case, offset, vec", [
    (((2,), 20, 8), 0, 1),   # aligned, d_k % 4 == 0: float4 / cp.async
    (((2,), 20, 8), 1, 0),   # 4 bytes off: scalar loads
    (((2,), 20, 6), 0, 0),   # rows not a multiple of 4 floats
], ids=["float4", "tak-rata", "d6"])
def test_fused_v2_vector_flag(monkeypatch, case, offset, vec):
    seen = _spy_args(monkeypatch)
    check_fused_v2(case, CPU, True, offset=offset)
    name, grid, block, args = seen[-1]
    assert name == ("attention_fused_v2_d32")
    assert grid == (1, 2, 1) and block == (128, 1, 1)
    assert int(args[-1]) == vec


def test_fused_default_is_v1(monkeypatch):
    calls = kc.spy_launches(monkeypatch)
    Q = np.ones((5, 64), np.float32)
    kernels.attention(Q, Q, Q, impl="fused-v1", backend=CPU)
    assert calls[-1][0] == "attention_fused_d64"
    kernels.attention(Q, Q, Q, impl="fused-v2", backend=CPU)
    assert calls[-1][0] == "attention_fused_v2_d64"


# ---- bad arguments: Indonesian errors before any work -------------------------


def test_bad_arguments():
    A = _weights((), 4, 4)
    V = np.ones((4, 2), np.float32)
    with pytest.raises(ValueError, match="'version'.*'v1', 'v2'"):
        kernels.weighted_sum(A, V, version=kc.unknown_version("weighted_sum"), backend=CPU)
    with pytest.raises(ValueError, match="causal=True.*version='v2'"):
        kernels.weighted_sum(A, V, causal=True, backend=CPU)
    with pytest.raises(TypeError, match="'causal' harus bool"):
        kernels.weighted_sum(A, V, causal=1, version="v2", backend=CPU)
    with pytest.raises(ValueError, match="causal=True.*version='v2'"):
        kernels.softmax(A, causal=True, version="v1", backend=CPU)
    with pytest.raises(TypeError, match="'causal' harus bool"):
        kernels.softmax(A, causal="ya", backend=CPU)
    with pytest.raises(ValueError, match="'S'"):
        kernels.softmax(np.ones((4, 3), np.float32), causal=True, backend=CPU)
    with pytest.raises(ValueError, match="'impl'.*'chain-v3'"):
        kernels.attention(V, V, V, impl="chain-v4", backend=CPU)
    with pytest.raises(ValueError, match="'impl'.*'fused-v2', 'fused-v3'"):
        kernels.attention(V, V, V, impl=f"fused-{kc.unknown_version('fused')}", backend=CPU)
    wide = np.ones((3, 129), np.float32)
    with pytest.raises(ValueError, match="attention_fused_v2.*128"):
        kernels.attention(wide, wide, wide, impl="fused-v2", backend=CPU)


# ---- NVRTC: sm_80 and sm_90, zero spills ----------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_v2_kernels_compile_without_spills(arch):
    found = {}
    for file in ("weighted_sum.cu", "softmax.cu"):
        found.update(kernels.compile_report(kernels.kernel_path(file), arch=arch).kernels)
    for name in ("weighted_sum_v2_tiled", "weighted_sum_v2_tiled_causal",
                 "softmax_v2_warp_causal"):
        res = found[name]
        assert 0 < res.registers <= 255, name
        assert res.spill_stores == 0 and res.spill_loads == 0 and res.stack_frame == 0, name
    # Tiles of A (16 × 65, padded) and V (16 × 64) in shared memory.
    assert found["weighted_sum_v2_tiled"].shared_bytes == 4 * (16 * 65 + 16 * 64)
    assert found["weighted_sum_v2_tiled"].registers <= 64  # ≥ 50 % occupancy
    fused = kernels.compile_report(kernels.kernel_path("attention_fused.cu"), arch=arch).kernels
    for D in (32, 64):
        res = fused[f"attention_fused_v2_d{D}"]
        assert res.spill_stores == 0 and res.spill_loads == 0 and res.stack_frame == 0, D
        assert res.registers <= 128  # __launch_bounds__(128, 4)
        # Q (64 rows) once, K and V tiles (32 rows) twice: double buffer; and the
        # weights P (64 x 32). D = 64 needs more than 48 KiB: dynamic shared memory.
        assert res.shared_bytes + res.dynamic_shared_bytes == 4 * (D * (64 + 2 * 32 + 2 * 32) + 64 * 32)
    assert fused["attention_fused_v2_d64"].shared_bytes == 0


# ---- on a GPU (skipped here) -------------------------------------------------------


@kc.gpu_test
@pytest.mark.parametrize("causal", [False, True], ids=["penuh", "kausal"])
def test_weighted_sum_v2_gpu(causal):
    for case in SHAPES + [((4,), 1030, 64)]:
        check_weighted_sum_v2(case, "cupy", causal, to=_to_cupy)


@kc.gpu_test
@pytest.mark.parametrize("version", registry.versions("softmax", causal=True))
def test_softmax_causal_gpu(version):
    for lead, T in [((), 1), ((2, 3), 7), ((2,), 1030)]:
        check_softmax_causal(lead, T, "cupy", to=_to_cupy, version=version)


@kc.gpu_test
@pytest.mark.parametrize("causal", [False, True], ids=["penuh", "kausal"])
def test_fused_v2_gpu(causal):
    for case in FUSED_SHAPES + [((2, 12), 1030, 64)]:
        check_fused_v2(case, "cupy", causal, to=_to_cupy)

    def unaligned(x):  # a CuPy view 4 bytes into its buffer: scalar loads
        import cupy

        flat = cupy.asarray(np.concatenate([np.zeros(1, np.float32), x.ravel()]))
        return flat[1:].reshape(x.shape)

    check_fused_v2(((2,), 70, 64), "cupy", causal, to=unaligned)
