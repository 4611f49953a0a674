"""attention_fused v2: the split over keys (flash-decoding style)
and d_k = 128.

Split-K: with too few (head, query tile) blocks to fill the GPU, the keys of
each query tile are divided into ``splits`` ranges; ``attention_fused_v2_split_dD``
writes a partial o (not divided by l) and (m, l) per row, and
``attention_fused_v2_combine`` rescales and adds them. Checked on the CPU
emulator against a float64 oracle with fresh random inputs (NaN never
passes), ragged T, causal on and off; the automatic choice; neutral partials
of empty ranges; a combine without the rescale fails the same check; bad
``splits`` is refused before any launch; NVRTC sm_80/sm_90 with zero spills.
"""

import numpy as np
import pytest

import _kernel_cases as kc
from atensi import kernels, reference
from atensi.kernels import launch, registry

CPU = "cpu"
TOL = 1e-5  # relative to the largest |value| of the oracle (as test_kernels_v2)
KEYS = registry.CONSTANTS["attention_fused.cu"]["FV2_BK"]  # keys per tile of fused v2
RNG = np.random.default_rng()  # fresh inputs each run; the seed is printed on failure
COMBINE = launch.fused_kernel("v2", 64, split=True).combine  # merges the partials of v2 and v3


def _inputs(lead, T, d_k):
    seed = int(RNG.integers(2**32))
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal(lead + (T, d_k)).astype(np.float32) for _ in range(3))
    return (Q, K, V), seed


def _oracle(Q, K, V, causal):
    return reference.attention(*(x.astype(np.float64) for x in (Q, K, V)), causal=causal)


def _error(out, ref):
    out = np.asarray(out, dtype=np.float64)
    assert out.shape == ref.shape
    if not np.isfinite(out).all():  # NaN / inf never pass
        return float("inf")
    return float(np.abs(out - ref).max()) / max(1.0, float(np.abs(ref).max()))


class _Spy:
    """A kernel that records its launches and forwards everything else
    (``max_dynamic_shared_size_bytes``) to the real kernel."""

    def __init__(self, kernel, name, seen):
        object.__setattr__(self, "_k", kernel)
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_seen", seen)

    def __call__(self, grid, block, args, shared_mem=0):
        self._seen.append((self._name, tuple(grid), shared_mem))
        return self._k(grid, block, args, shared_mem=shared_mem)

    def __getattr__(self, attr):
        return getattr(self._k, attr)

    def __setattr__(self, attr, value):
        setattr(self._k, attr, value)


def _spy(monkeypatch):
    seen = []
    real = kernels.loading.get_function
    monkeypatch.setattr(kernels.loading, "get_function",
                        lambda file, name, backend: _Spy(real(file, name, backend), name, seen))
    return seen


def check_split(lead, T, d_k, causal, splits, monkeypatch=None, backend=CPU, to=None):
    (Q, K, V), seed = _inputs(lead, T, d_k)
    seen = _spy(monkeypatch) if monkeypatch else None
    args = tuple(to(x) for x in (Q, K, V)) if to else (Q, K, V)
    out = kernels.attention(*args, causal=causal, impl="fused-v2",
                            splits=splits, backend=backend)
    assert type(out) is type(args[0])
    out = out.get() if hasattr(out, "get") else out
    err = _error(out, _oracle(Q, K, V, causal))
    assert err <= TOL, (err, seed)
    return seen


# ---- split-K against the float64 oracle ------------------------------------------


@pytest.mark.parametrize("d_k", [32, 64])
@pytest.mark.parametrize("T", [1, 37, 100, 130])
@pytest.mark.parametrize("causal", [False, True], ids=["penuh", "kausal"])
@pytest.mark.parametrize("splits", [1, 2, 3, 9], ids=["s1", "s2", "s3", "s9-lebih"])
def test_split_matches_oracle(monkeypatch, splits, causal, T, d_k):
    # s9: more ranges than the key tiles of every T here (at most 5): some
    # ranges are empty and must give neutral partials.
    seen = check_split((2,), T, d_k, causal, splits, monkeypatch)
    width = 32 if d_k <= 32 else 64
    assert seen[0][2] == registry.get(f"attention_fused_v2_split_d{width}").dynamic_shared  # d64: extern
    if splits == 1:
        assert [s[0] for s in seen] == [f"attention_fused_v2_d{width}"]
    else:  # the split really ran: partials, then the combine
        assert [s[0] for s in seen] == [f"attention_fused_v2_split_d{width}",
                                        "attention_fused_v2_combine"]
        assert seen[0][1] == (kc_ceil(T, 64), 2, splits)


def kc_ceil(a, b):
    return -(-a // b)


@pytest.mark.parametrize("T, d_k, splits", [(1, 128, None), (37, 128, 1), (70, 128, 3),
                                            (70, 97, 2), (33, 100, None)])
@pytest.mark.parametrize("causal", [False, True], ids=["penuh", "kausal"])
def test_d128(monkeypatch, T, d_k, splits, causal):
    seen = check_split((), T, d_k, causal, splits, monkeypatch)
    assert "128" in seen[0][0] and seen[0][2] == registry.get(seen[0][0]).dynamic_shared > 0


@pytest.mark.parametrize("d_k", [16, 7], ids=["float4", "d7-skalar"])
def test_leading_axes_and_unscaled(d_k):
    (Q, K, V), seed = _inputs((2, 3), 45, d_k)
    out = kernels.attention(Q, K, V, causal=True, scale=False, impl="fused-v2", splits=2, backend=CPU)
    ref = reference.attention(*(x.astype(np.float64) for x in (Q, K, V)), causal=True,
                              scale=False)
    assert _error(out, ref) <= TOL, seed


def test_split_loops_over_heads(monkeypatch):
    monkeypatch.setattr(launch, "MAX_GRID_YZ", 2)  # 5 heads, 2 blocks in y
    seen = check_split((5,), 70, 16, True, 3, monkeypatch)
    assert seen[0][1] == (2, 2, 3)


# ---- the automatic choice --------------------------------------------------------


def test_automatic_choice():
    sms = launch.MODEL_SM_COUNT
    assert sms == 132  # the H200 modelled on the CPU emulator
    # B = 1, H = 1, T = 256: 4 blocks for 132 SMs → split, one range per key tile.
    assert launch.fused_splits(1, 256) == 256 // KEYS > 1
    # ANDREA: B = 8, H = 12, T = 1024 → 1 536 blocks, already > 2 per SM.
    assert launch.fused_splits(8 * 12, 1024) == 1
    # Enough splits to reach 2 blocks per SM, no more.
    assert launch.fused_splits(12, 1024) == kc_ceil(2 * sms, 12 * 16)
    assert launch.fused_splits(1, 1) == 1  # one key tile: nothing to split
    assert launch.fused_splits(1, 256, sm_count=1) == 1  # a small GPU is full already
    for H, T in [(1, 7), (3, 300), (2, 5000), (40, 100)]:
        s = launch.fused_splits(H, T)
        assert 1 <= s <= kc_ceil(T, KEYS)


def test_registry_entries_follow_the_file_constants():
    c = registry.CONSTANTS["attention_fused.cu"]
    for kind in ("v2", "v2_split"):
        for width in registry.WIDTHS:
            k = registry.get(f"attention_fused_{kind}_d{width}")
            assert k.rows == c["FV2_BQ"] and k.block == (c["FV2_THREADS"], 1, 1)
            # FV2_SMEM(D): Qs (BQ rows) + Ks and Vs (two tiles of BK rows each) + Ps (BQ x BK),
            # float; above the 48 KiB of static shared memory it is asked for at launch.
            smem = ((c["FV2_BQ"] + 4 * c["FV2_BK"]) * width + c["FV2_BQ"] * c["FV2_BK"]) * 4
            assert k.dynamic_shared == (smem if smem > 48 * 1024 else 0)
    assert registry.get("attention_fused_v2_d32").dynamic_shared == 0
    assert registry.get("attention_fused_v2_d64").dynamic_shared == 57344
    assert registry.get("attention_fused_v2_d128").dynamic_shared == 106496
    assert launch._sm_count(CPU) == launch.MODEL_SM_COUNT


def test_sm_count_read_from_the_device(monkeypatch):
    runtime = pytest.importorskip("cupy.cuda.runtime")
    asked = []
    monkeypatch.setattr(runtime, "getDevice", lambda: 0)
    monkeypatch.setattr(runtime, "deviceGetAttribute",
                        lambda attr, dev: asked.append((attr, dev)) or 108)  # an A100
    monkeypatch.setattr(launch, "_sm_counts", {})
    assert launch._sm_count("cupy") == launch._sm_count("cupy") == 108
    assert asked == [(runtime.cudaDevAttrMultiProcessorCount, 0)]  # read once


def test_automatic_choice_is_used(monkeypatch):
    seen = check_split((), 256, 32, True, None, monkeypatch)
    assert seen[0][0] == "attention_fused_v2_split_d32"
    assert seen[0][1][2] == launch.fused_splits(1, 256)
    assert seen[1][0] == "attention_fused_v2_combine"


# ---- partials: neutral ranges, and the rescale the combine needs -----------------


def _partials(Q, K, V, splits, causal):
    return launch.launch_partials(launch.fused_kernel("v2", Q.shape[-1], split=True), Q, K, V,
                                  splits, causal=causal, scale=True, backend=CPU)


def test_empty_ranges_are_neutral():
    # Causal, T = 130, 5 ranges: the first query tile (rows 0..63) has 2 key
    # tiles, so 3 of its 5 ranges are empty; the rows of a range whose keys
    # all lie in their future must also come back neutral.
    (Q, K, V), seed = _inputs((), 130, 32)
    Op, ML = _partials(Q, K, V, 5, True)
    assert not np.isnan(Op).any() and not np.isnan(ML).any()
    m, lsum = ML[..., 0], ML[..., 1]
    empty = lsum == 0
    assert empty[:, 0, :64].sum(axis=1).tolist().count(64) == 3
    assert np.all(m[empty] == -np.inf) and np.all(Op[empty] == 0)
    assert np.all(np.isfinite(m[~empty])) and np.all(lsum[~empty] >= 1)
    # Row 0 sees key 0 only: 4 of the 5 ranges hold nothing for it.
    assert empty[:, 0, 0].sum() == 4


def test_combine_guards_rows_without_keys():
    Op = np.zeros((3, 1, 4, 8), np.float32)
    ML = np.zeros((3, 1, 4, 2), np.float32)
    ML[..., 0] = -np.inf
    ML[1, 0, 2] = (0.5, 2.0)  # one valid partial for row 2 only
    Op[1, 0, 2] = 4.0
    Od = np.full((1, 4, 8), np.nan, np.float32)
    launch.launch_combine(COMBINE, Op, ML, Od, backend=CPU)
    assert np.all(Od[0, [0, 1, 3]] == 0) and np.allclose(Od[0, 2], 2.0)


def _combine_rescaled(Op, ML):
    m = ML[..., 0].max(axis=0)
    w = np.exp2(ML[..., 0] - np.where(np.isneginf(m), 0, m))
    return (w[..., None] * Op).sum(0) / (w * ML[..., 1]).sum(0)[..., None]


def _combine_plain_sum(Op, ML):  # planted bug: no exp(m_s - m) rescale
    return Op.sum(0) / ML[..., 1].sum(0)[..., None]


def _combine_plain_average(Op, ML):  # planted bug: mean of normalised partials
    part = Op / np.where(ML[..., 1] > 0, ML[..., 1], 1)[..., None]
    return part.sum(0) / (ML[..., 1] > 0).sum(0)[..., None]


@pytest.mark.parametrize("combine, good", [
    (_combine_rescaled, True), (_combine_plain_sum, False), (_combine_plain_average, False),
], ids=["skala-ulang", "tanpa-skala-ulang", "rata-rata-biasa"])
@pytest.mark.parametrize("causal", [False, True], ids=["penuh", "kausal"])
def test_combine_needs_the_rescale(combine, good, causal):
    (Q, K, V), seed = _inputs((2,), 100, 32)
    Op, ML = _partials(Q, K, V, 3, causal)
    with np.errstate(all="ignore"):
        out = combine(Op.astype(np.float64), ML.astype(np.float64))
    err = _error(out, _oracle(Q, K, V, causal))
    assert (err <= TOL) == good, (err, seed)
    if good:  # and the combine kernel gives the same as the NumPy model
        Od = np.empty(Q.shape, np.float32)
        launch.launch_combine(COMBINE, Op, ML, Od, backend=CPU)
        assert np.allclose(Od, out, rtol=1e-5, atol=1e-6)


# ---- sanitizers: out-of-bounds (ASan) and races (TSan fibers) -------------------

_SANITIZED = """
import numpy as np
from atensi import kernels, reference
rng = np.random.default_rng(5)
for d_k, T, splits in [(65, 70, 3), (32, 100, 9)]:
    Q, K, V = (rng.standard_normal((T, d_k)).astype(np.float32) for _ in range(3))
    out = kernels.attention(Q, K, V, causal=True, impl="fused-v2",
                            splits=splits, backend="cpu")
    ref = reference.attention(*(x.astype(np.float64) for x in (Q, K, V)))
    assert np.isfinite(out).all() and np.abs(out - ref).max() < 1e-5
"""


@pytest.mark.slow
@pytest.mark.parametrize("sanitize", ["address", "thread"])
def test_split_under_sanitizer(sanitize):
    # Ragged d_k = 65 (the d128 kernel, scalar loads) and empty ranges.
    from atensi.cudacpu import run_python_in_subprocess

    run_python_in_subprocess(_SANITIZED, sanitize=sanitize).check()


# ---- bad splits: Indonesian errors before any launch ----------------------------


@pytest.mark.parametrize("kwargs, error, match", [
    ({"splits": 0}, ValueError, "'splits'.*1 sampai 65535.*diterima 0"),
    ({"splits": -2}, ValueError, "'splits'.*diterima -2"),
    ({"splits": 70000}, ValueError, "'splits'.*diterima 70000"),
    ({"splits": 2.0}, TypeError, "'splits'.*bilangan bulat.*float"),
    ({"splits": True}, TypeError, "'splits'.*bool"),
    ({"splits": "4"}, TypeError, "'splits'.*str"),
    ({"splits": 2, "impl": "fused-v1"}, ValueError, "'splits'.*impl='fused-v2'.*diterima impl='fused-v1'"),
    ({"splits": 2, "impl": "chain-v2"}, ValueError, "'splits'.*impl='fused-v2'.*diterima impl='chain-v2'"),
])
def test_bad_splits(monkeypatch, kwargs, error, match):
    kc.forbid_launches(monkeypatch)
    Q = np.ones((2, 8, 16), np.float32)
    call = {"impl": "fused-v2", **kwargs}
    with pytest.raises(error, match=match):
        kernels.attention(Q, Q, Q, backend=CPU, **call)


def test_d_k_above_128_refused():
    wide = np.ones((3, 129), np.float32)
    with pytest.raises(ValueError, match="attention_fused_v2.*128"):
        kernels.attention(wide, wide, wide, impl="fused-v2", backend=CPU)


# ---- NVRTC: sm_80 and sm_90, zero spills ----------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_new_kernels_compile_without_spills(arch):
    try:
        found = kernels.compile_report(kernels.kernel_path("attention_fused.cu"),
                                       arch=arch).kernels
    except RuntimeError as err:
        pytest.skip(f"NVRTC tidak ada: {err}")
    names = [f"attention_fused_v2_split_d{w}" for w in registry.WIDTHS] + [
        "attention_fused_v2_d128", "attention_fused_v2_combine"]
    for name in names:
        res = found[name]
        assert 0 < res.registers <= 255, name
        assert res.spill_stores == 0 and res.spill_loads == 0 and res.stack_frame == 0, name
        assert res.occupancy > 0, name
    for D in (32, 64):  # the split kernels keep v2's tiles and its 4 blocks per SM
        res = found[f"attention_fused_v2_split_d{D}"]
        assert res.shared_bytes == found[f"attention_fused_v2_d{D}"].shared_bytes
        assert res.registers <= 128
    for D, blocks in ((64, 4), (128, 2)):
        # 56 KiB (D = 64) and 104 KiB (D = 128) of dynamic shared memory: on sm_90
        # four and two blocks per SM still fit.
        for name in (f"attention_fused_v2_d{D}", f"attention_fused_v2_split_d{D}"):
            assert found[name].shared_bytes == 0
            assert found[name].dynamic_shared_bytes == registry.get(name).dynamic_shared
            assert found[name].registers <= 255
            if arch == "sm_90":
                assert found[name].occupancy == blocks * 4 / 64


# ---- on a GPU (skipped here) -----------------------------------------------------


def _to_cupy(x):
    import cupy

    return cupy.asarray(x)


@kc.gpu_test
@pytest.mark.parametrize("causal", [False, True], ids=["penuh", "kausal"])
def test_split_gpu(causal):
    for lead, T, d_k, splits in [((), 1, 32, 3), ((2,), 130, 64, None), ((1,), 1030, 64, 7),
                                 ((1,), 256, 128, None), ((2,), 70, 128, 1)]:
        check_split(lead, T, d_k, causal, splits, backend="cupy", to=_to_cupy)
