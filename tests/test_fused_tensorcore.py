"""kernels/attention_tensorcore.cu: fused v3, Q·Kᵀ and P·V on tensor cores (WMMA TF32).

Checked like fused v1/v2 (tests/test_fused.py, tests/test_kernels_v2.py):
NVRTC compile with zero spills (sm_80, sm_90), the same .cu on the CPU
emulator against a float64 reference over the same shape families (ragged T
and d_k, T = 1, several heads, causal or not), launch shapes, validation.

Tolerances (relative: max |O - ref| / max |ref|): 3xTF32 at the FP32
kernels' 1e-5 (tests/_kernel_cases.py); plain TF32 at 1e-3, the accuracy
frameworks accept for TF32 matrix products (operands rounded to 11
significant bits: relative 2^-11 ≈ 4.9e-4 per operand).
"""

from pathlib import Path

import numpy as np
import pytest

import _kernel_cases as kc
from atensi import cuda_wheels, kernels, reference
from atensi import number_formats as nf

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "kernels" / "attention_tensorcore.cu"
TOL = {"3xtf32": kc.TOLERANCE, "tf32": 1e-3}
PRECISIONS = ["tf32", "3xtf32"]
NAMES = {f"attention_tensorcore{s}_{p}_d{w}" for s in ("", "_split") for p in PRECISIONS
         for w in (32, 64, 128)}
CASES = [
    ((), 1, 1), ((), 1, 64), ((), 7, 3), ((2,), 31, 32), ((), 33, 33), ((), 64, 64),
    ((), 65, 65), ((3,), 129, 128), ((2, 3), 33, 3), ((), 200, 100),
]


# WMMA leaves which lane holds which fragment element unspecified. In shuffle mode the
# emulator draws that mapping from the seed, so every CPU run here also checks that
# v3 does not lean on the fixed layout the chapter draws. An explicit
# ATENSI_CUDACPU_MODE or _SEED from the caller still wins.
LAYOUT_SEED = "5"


@pytest.fixture(autouse=True)
def shuffled_fragment_layout(monkeypatch):
    import os

    monkeypatch.setenv("ATENSI_CUDACPU_MODE", os.environ.get("ATENSI_CUDACPU_MODE", "shuffle"))
    monkeypatch.setenv("ATENSI_CUDACPU_SEED", os.environ.get("ATENSI_CUDACPU_SEED", LAYOUT_SEED))


def _reference(Q, K, V, **kw):
    return reference.attention(kc.f64(Q), kc.f64(K), kc.f64(V), **kw)


def v3(Q, K, V, precision, **kw):
    return kernels.attention(Q, K, V, impl="fused-v3", precision=precision,
                             backend="cpu", **kw)


# --- NVRTC ---------------------------------------------------------------------


def _ptx(arch: str) -> str:
    from cupy.cuda import nvrtc

    cuda_wheels.preload()
    prog = nvrtc.createProgram(SOURCE.read_text(), "kernels/attention_tensorcore.cu", [], [])
    try:
        nvrtc.compileProgram(prog, ["-std=c++17", f"-arch={arch}"])
    except Exception:  # noqa: BLE001 - show NVRTC's own log
        pytest.fail(nvrtc.getProgramLog(prog))
    return nvrtc.getPTX(prog).decode()


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_nvrtc_compiles_every_variant_without_spills(arch):
    report = kernels.compile_report(SOURCE, arch=arch)
    assert report.path == "kernels/attention_tensorcore.cu"
    assert set(report.kernels) == NAMES, report.log
    for name, res in report.kernels.items():
        assert 0 < res.registers <= 255, (name, report.log)
        assert res.spill_stores == res.spill_loads == res.stack_frame == 0, (name, report.log)
        assert res.shared_bytes == 0  # all of it dynamic: TC_SMEM(D) at launch


@pytest.mark.slow
def test_gpu_code_really_uses_tensor_cores():
    """Without <mma.h> the GPU path is PTX: TF32 MMAs, cvt.rna rounding, WMMA loads."""
    ptx = _ptx("sm_80")
    assert "wmma.mma.sync.aligned.row.col.m16n16k8.f32.tf32.tf32.f32" in ptx  # Q Kᵀ
    assert "wmma.mma.sync.aligned.row.row.m16n16k8.f32.tf32.tf32.f32" in ptx  # P V
    assert "cvt.rna.tf32.f32" in ptx
    assert "wmma.load.b.sync.aligned.col.m16n16k8.shared.tf32" in ptx
    assert "wmma.store.d.sync.aligned.row.m16n16k8.shared.f32" in ptx
    # Every WMMA load and store names the .shared state space, none is generic.
    wmma_memory = [line for line in ptx.splitlines() if "wmma.load" in line or "wmma.store" in line]
    assert wmma_memory and all(".shared." in line for line in wmma_memory)


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_wmma_tiles_move_through_lds_and_sts(arch):
    """The tiles live in shared memory: SASS reads and writes them with LDS/STS, and
    no generic LD/ST (64-bit address arithmetic per access) is left in the kernel."""
    from atensi.kernels import sass

    if sass.nvdisasm() is None:
        pytest.skip("nvdisasm tidak terpasang (paket nvidia-cuda-nvdisasm), SASS tidak bisa dibaca")
    mixes = sass.instruction_mix(SOURCE, arch=arch)
    assert set(mixes) == NAMES
    for name, mix in mixes.items():
        assert mix.kernel["LD/ST"] == 0 and mix.loop["LD/ST"] == 0, (name, mix.kernel)
        assert mix.loop["LDS/STS"] > 0 and mix.loop["HMMA"] > 0, (name, mix.loop)


def test_registry_entries_follow_the_file_constants():
    text = SOURCE.read_text()
    c = kernels.registry.CONSTANTS["attention_tensorcore.cu"]
    bq, bk = c["TC_BQ"], c["TC_BK"]
    for k in kernels.registry.kernels_in("attention_tensorcore.cu"):
        assert k.rows == bq and k.block == (c["TC_THREADS"], 1, 1)
        ld = k.width + 8
        smem = (bq * ld + 2 * bk * ld + 4 * 16 * (bk + 8) + bq * ld) * 4  # TC_SMEM(D) in the .cu
        assert k.dynamic_shared == smem
    assert kernels.registry.get("attention_tensorcore_tf32_d64").dynamic_shared == 65536
    for name in NAMES:
        assert name in text.split("#ifndef INFINITY", 1)[0]  # listed in the header


# --- On the CPU emulator, against float64 ---------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("case", CASES, ids=kc.case_id)
def test_matches_reference_on_cpu(case, causal, precision):
    lead, T, d_k = case
    Q, K, V = kc.qkv(lead, T, d_k, "tensorcore", causal)
    out = v3(Q, K, V, precision, causal=causal)
    assert isinstance(out, np.ndarray) and out.dtype == np.float32 and out.shape == Q.shape
    kc.assert_matches(out, _reference(Q, K, V, causal=causal), tol=TOL[precision])


def test_cpu_runs_use_the_shuffled_fragment_layout():
    import os

    Q, K, V = kc.qkv((), 40, 16, "tensorcore-layout")
    kc.assert_matches(v3(Q, K, V, "3xtf32"), _reference(Q, K, V), tol=TOL["3xtf32"])
    module = kernels.loading.get_function("attention_tensorcore.cu", "attention_tensorcore_3xtf32_d32",
                                          "cpu").module
    assert module.mode == os.environ["ATENSI_CUDACPU_MODE"]
    assert module.seed == int(os.environ["ATENSI_CUDACPU_SEED"])


@pytest.mark.parametrize("precision", PRECISIONS)
def test_without_scale(precision):
    """Unscaled scores are √d_k = 4 times larger, and so is TF32's absolute error
    in them (2^-11 of each product): TF32 is held at 3e-3 here, 3xTF32 still at 1e-5."""
    Q, K, V = kc.qkv((2,), 70, 16, "tensorcore-noscale")
    out = v3(Q, K, V, precision, scale=False)
    kc.assert_matches(out, _reference(Q, K, V, scale=False),
                      tol={"tf32": 3e-3, "3xtf32": TOL["3xtf32"]}[precision])


def test_tf32_really_rounds_and_3xtf32_really_recovers():
    """TF32 is not secretly float32, and the two extra MMAs of 3xTF32 pay off."""
    Q, K, V = kc.qkv((2,), 129, 64, "tensorcore-modes")
    ref = _reference(Q, K, V)
    err = {p: np.abs(v3(Q, K, V, p) - ref).max() for p in PRECISIONS}
    fp32 = np.abs(kernels.attention(Q, K, V, impl="fused-v2", backend="cpu") - ref).max()
    assert err["tf32"] > 1e-4
    assert err["3xtf32"] < err["tf32"] / 50
    assert err["3xtf32"] < 10 * fp32


@pytest.mark.parametrize("precision", PRECISIONS)
def test_kernel_and_numpy_model_agree(precision):
    """The emulator's v3 and atensi.number_formats.attention_tf32 round the same
    operands: their difference is far below TF32's own error."""
    Q, K, V = kc.qkv((), 100, 64, "tensorcore-model")
    ref = _reference(Q, K, V)
    out = v3(Q, K, V, precision)
    model = nf.attention_tf32(Q, K, V, precision=precision)
    assert np.abs(out - model).max() <= TOL[precision] * np.abs(ref).max()


def test_more_heads_than_the_grid(monkeypatch):
    monkeypatch.setattr(kernels.launch, "MAX_GRID_YZ", 2)
    launches = kc.spy_launches(monkeypatch)
    Q, K, V = kc.qkv((5,), 70, 16, "tensorcore-heads")
    out = v3(Q, K, V, "3xtf32")
    assert launches == [("attention_tensorcore_3xtf32_d32", (2, 2, 1), (128, 1, 1))]
    kc.assert_matches(out, _reference(Q, K, V))


@pytest.mark.parametrize(
    "d_k, width", [(1, 32), (32, 32), (33, 64), (64, 64), (65, 128), (128, 128)],
)
@pytest.mark.parametrize("precision", PRECISIONS)
def test_smallest_variant_and_launch_shape(monkeypatch, d_k, width, precision):
    launches = kc.spy_launches(monkeypatch)
    Q, K, V = kc.qkv((3,), 70, d_k, "tensorcore-variant")
    v3(Q, K, V, precision)
    # 70 rows: ceil(70 / 64) = 2 query tiles; 3 heads.
    assert launches == [(f"attention_tensorcore_{precision}_d{width}", (2, 3, 1), (128, 1, 1))]


def test_default_precision_is_3xtf32(monkeypatch):
    launches = kc.spy_launches(monkeypatch)
    Q, K, V = kc.qkv((), 9, 8, "tensorcore-default")
    kernels.attention(Q, K, V, impl="fused-v3", backend="cpu")
    assert launches[0][0] == "attention_tensorcore_3xtf32_d32"


@pytest.mark.slow
@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("d_k", [3, 64, 128])
def test_one_head_longer_than_the_engine(d_k, precision):
    """T = 1025: 17 query tiles, the last with one row; 33 key tiles."""
    Q, K, V = kc.qkv((), 1025, d_k, "tensorcore-1025")
    out = v3(Q, K, V, precision)
    kc.assert_matches(out, _reference(Q, K, V), tol=TOL[precision])


# --- Validation (before anything is launched) -----------------------------------------


@pytest.fixture
def no_launch(monkeypatch):
    kc.forbid_launches(monkeypatch, "kernel diluncurkan padahal masukannya salah")


def test_d_k_above_the_limit_is_refused(no_launch):
    Q, K, V = kc.qkv((), 5, 129, "tensorcore-limit")
    with pytest.raises(ValueError, match=r"d_k = 129.*attention_tensorcore.*128"):
        v3(Q, K, V, "tf32")


@pytest.mark.parametrize(
    "kw, pattern",
    [
        (dict(impl="fused-v3", precision="fp16"), r"'precision' harus salah satu.*'tf32'"),
        (dict(impl="fused-v3", precision=1), r"'precision' harus salah satu"),
        (dict(impl="fused-v2", precision="tf32"), r"'precision'.*hanya ada untuk.*'fused-v3'"),
        (dict(impl="chain-v2", precision="3xtf32"), r"'precision'.*hanya ada untuk impl='fused-v3'.*'chain-v2'"),
        (dict(impl="fused-v3", splits=0), r"'splits'.*1 sampai 65535"),
    ],
    ids=["fp16", "bukan-str", "v2", "tidak-fused", "splits"],
)
def test_bad_options_are_refused(no_launch, kw, pattern):
    Q, K, V = kc.qkv((), 6, 8, "tensorcore-options")
    with pytest.raises(ValueError, match=pattern):
        kernels.attention(Q, K, V, backend="cpu", **kw)


@pytest.mark.parametrize(
    "mutate, error, pattern",
    [
        (lambda Q: Q.astype(np.float64), TypeError, "'Q' harus bertipe float32"),
        (lambda Q: np.asfortranarray(Q), ValueError, "'Q' harus C-contiguous"),
        (lambda Q: np.where(np.arange(Q.shape[-1]) == 2, np.float32(np.nan), Q), ValueError, "NaN"),
        (lambda Q: Q[:4].copy(), ValueError, "T"),
    ],
    ids=["float64", "strided", "nan", "T-berbeda"],
)
def test_bad_input_is_refused_like_the_other_kernels(no_launch, mutate, error, pattern):
    Q, K, V = kc.qkv((), 6, 8, "tensorcore-bad")
    with pytest.raises(error, match=pattern):
        v3(mutate(Q), K, V, "tf32")


@pytest.mark.parametrize("splits", [None, 2])
@pytest.mark.parametrize("precision", PRECISIONS)
def test_values_that_tf32_rounds_to_inf_are_refused(no_launch, precision, splits):
    """Within 2^-11 of FLT_MAX, TF32 rounding gives inf: NaN (or zeros with splits)."""
    top = np.finfo(np.float32).max
    Q, K, V = kc.qkv((), 16, 16, "tensorcore-top")
    Q[:] = 0.0
    Q[:, 0] = 0.125
    K[:, 0] = top
    with pytest.raises(ValueError, match=r"'K' berisi nilai sebesar.*TF32.*inf.*K / 2"):
        kernels.attention(Q, K, V, impl="fused-v3", precision=precision, splits=splits,
                          backend="cpu")
    Q[:, 0] = top / 1.4426950408889634
    K[:] = 1e-30
    with pytest.raises(ValueError, match=r"'Q' berisi nilai sebesar.*log₂e.*TF32"):
        kernels.attention(Q, K, V, impl="fused-v3", precision=precision, backend="cpu")


def test_largest_values_below_the_tf32_limit_still_work():
    Q, K, V = kc.qkv((), 16, 16, "tensorcore-below-top")
    Q[:] = 0.0
    Q[:, 0] = 0.125
    K[:, 0] = np.float32(np.finfo(np.float32).max / 2)
    O = v3(Q, K, V, "3xtf32")
    want = reference.attention(Q.astype(np.float64), K.astype(np.float64), V.astype(np.float64))
    np.testing.assert_allclose(O, want, atol=1e-5)


# --- Split-K: v2's partials and combine kernel -------------------------------------------

SPLIT_CASES = [((), 1, 64, 2), ((2,), 65, 3, 2), ((), 100, 64, 3), ((), 33, 32, 5), ((3,), 129, 128, 4)]


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("case", SPLIT_CASES, ids=lambda c: f"{kc.case_id(c[:3])}-s{c[3]}")
def test_split_matches_reference_on_cpu(case, causal, precision):
    """Ragged T and d_k, T = 1, more splits than key tiles (empty ranges), several heads."""
    lead, T, d_k, splits = case
    Q, K, V = kc.qkv(lead, T, d_k, "tensorcore-split", causal)
    out = v3(Q, K, V, precision, causal=causal, splits=splits)
    assert isinstance(out, np.ndarray) and out.dtype == np.float32 and out.shape == Q.shape
    kc.assert_matches(out, _reference(Q, K, V, causal=causal), tol=TOL[precision])


def test_split_launches_partials_then_v2_combine(monkeypatch):
    launches = kc.spy_launches(monkeypatch)
    Q, K, V = kc.qkv((2,), 70, 64, "tensorcore-split-launch")
    v3(Q, K, V, "tf32", splits=3)
    assert [(name, grid) for name, grid, _ in launches] == [
        ("attention_tensorcore_split_tf32_d64", (2, 2, 3)), ("attention_fused_v2_combine", (70, 1, 1))]
    launches.clear()
    v3(Q, K, V, "tf32", splits=1)  # splits=1: the unsplit kernel
    assert [name for name, _, _ in launches] == ["attention_tensorcore_tf32_d64"]


@pytest.mark.parametrize("causal", [True, False])
def test_split_partials_are_v2s(causal):
    """The same (Op, ML) as fused v2's split pass: m in log2 units, o not divided by l,
    neutral partials (m = -inf, l = 0, o = 0) in the same places."""
    Q, K, V = kc.qkv((2,), 100, 40, "tensorcore-partials", causal)
    kw = dict(causal=causal, scale=True, backend="cpu")
    launch = kernels.launch
    v3, v2 = (launch.fused_kernel(v, 40, "3xtf32", split=True) for v in ("v3", "v2"))
    assert v3.combine == v2.combine  # one combine kernel merges both
    Op3, ML3 = launch.launch_partials(v3, Q, K, V, 5, **kw)
    Op2, ML2 = launch.launch_partials(v2, Q, K, V, 5, **kw)
    assert Op3.shape == Op2.shape == (5, 2, 100, 40) and ML3.shape == ML2.shape == (5, 2, 100, 2)
    empty = ML2[..., 0] == -np.inf
    assert empty.any()  # 5 ranges for 2 (causal tile 0) or 4 key tiles: some are empty
    np.testing.assert_array_equal(ML3[..., 0] == -np.inf, empty)
    assert (ML3[..., 1][empty] == 0).all() and (Op3[empty] == 0).all()
    full = ~empty
    np.testing.assert_allclose(ML3[..., 0][full], ML2[..., 0][full], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ML3[..., 1][full], ML2[..., 1][full], rtol=1e-5)
    np.testing.assert_allclose(Op3[full], Op2[full], rtol=1e-4, atol=1e-4 * np.abs(Op2).max())


# --- On a real GPU (skipped without one) -------------------------------------------------


@kc.gpu_test
@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("case", CASES + [((), 1025, 64), ((8, 12), 256, 64)], ids=kc.case_id)
def test_matches_reference_on_gpu(case, causal, precision):
    import cupy as cp

    lead, T, d_k = case
    Q, K, V = kc.qkv(lead, T, d_k, "tensorcore-gpu", causal)
    out = kernels.attention(cp.asarray(Q), cp.asarray(K), cp.asarray(V), causal=causal, impl="fused-v3", precision=precision, backend="cupy")
    kc.assert_matches(out, _reference(Q, K, V, causal=causal), tol=TOL[precision])


@kc.gpu_test
@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("case", SPLIT_CASES + [((), 1025, 64, 9)], ids=lambda c: f"{kc.case_id(c[:3])}-s{c[3]}")
def test_split_matches_reference_on_gpu(case, causal, precision):
    import cupy as cp

    lead, T, d_k, splits = case
    Q, K, V = kc.qkv(lead, T, d_k, "tensorcore-split-gpu", causal)
    out = kernels.attention(cp.asarray(Q), cp.asarray(K), cp.asarray(V), causal=causal, impl="fused-v3", precision=precision, splits=splits, backend="cupy")
    kc.assert_matches(out, _reference(Q, K, V, causal=causal), tol=TOL[precision])


# --- Sanitizers --------------------------------------------------------------------------


@pytest.mark.slow
def test_key_tiles_above_the_diagonal_are_never_read():
    """Causal, T = 128, only query tile 0 launched, K and V with only their first
    64 rows: under AddressSanitizer any read of a key tile above the diagonal
    would be a heap-buffer-overflow. Also: no out-of-bounds access at all."""
    from atensi import cudacpu

    T, d_k = 128, 32
    Q, K, V = kc.qkv((), T, d_k, "tensorcore-diagonal")
    K64, V64 = K[:64].copy(), V[:64].copy()
    O = np.zeros_like(Q)
    args = (Q, K64, V64, O, np.int32(T), np.int32(d_k), np.int32(1),
            np.float32(1 / np.sqrt(d_k)), np.int32(1))
    result = cudacpu.run_in_subprocess(
        path=str(SOURCE), kernel="attention_tensorcore_3xtf32_d32", grid=(1, 1, 1), block=(128, 1, 1),
        args=args, shared_mem=kernels.registry.variant("attention_tensorcore_3xtf32", d_k).dynamic_shared,
        sanitize="address", timeout=600,
    ).check()
    out = result.arrays[3]
    kc.assert_matches(out[:64], _reference(Q[:64], K64, V64))
    assert not out[64:].any()


@pytest.mark.slow
def test_thread_sanitizer_sees_a_missing_syncwarp():
    """The WMMA calls order nothing: without the __syncwarp between storing S and
    reading it back row by row, ThreadSanitizer (fibers: only barriers order the
    CUDA threads) reports a data race between lanes."""
    from atensi import cudacpu

    source = SOURCE.read_text()
    barrier = "__syncwarp();  // S dari semua lane terlihat"
    assert source.count(barrier) == 1
    Q, K, V = kc.qkv((), 40, 16, "tensorcore-race")
    args = (Q, K, V, np.zeros_like(Q), np.int32(40), np.int32(16), np.int32(1), np.float32(0.25),
            np.int32(0))
    run = dict(path="kernels/attention_tensorcore.cu", kernel="attention_tensorcore_tf32_d32",
               grid=(1, 1, 1), block=(128, 1, 1), args=args,
               shared_mem=kernels.registry.get("attention_tensorcore_tf32_d32").dynamic_shared,
               sanitize="thread", mode="fibers", timeout=600)
    assert "data race" not in cudacpu.run_in_subprocess(source, **run).report
    result = cudacpu.run_in_subprocess(source.replace(barrier, ""), **run)
    assert "data race" in result.report, result.stderr[-3000:]
