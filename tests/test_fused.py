"""kernels/attention_fused.cu: one kernel for the whole head (online softmax).

Checked like the other kernels: NVRTC compile with zero spills (sm_80, sm_90);
the same .cu on the CPU (atensi.cudacpu) against a float64 reference at
irregular shapes, relative error <= 1e-5; AddressSanitizer and
ThreadSanitizer runs; validation before launch; on a GPU when there is one.
"""

import re
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import _kernel_cases as kc
from atensi import cudacpu, kernels, reference
from atensi.cudacpu import guards

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "kernels" / "attention_fused.cu"
VARIANTS = {k.name: (k.width, k.rows) for k in kernels.registry.of_step("fused", "v1")}
CONSTANTS = kernels.registry.CONSTANTS["attention_fused.cu"]
THREADS = CONSTANTS["FUSED_THREADS"]
BK = CONSTANTS["FUSED_BK"]  # keys per shared-memory tile
SKEW = CONSTANTS["FUSED_SKEW"]  # floats between the two halves of a tile row


def _reference(Q, K, V, **kw):
    return reference.attention(kc.f64(Q), kc.f64(K), kc.f64(V), **kw)


# --- NVRTC ---------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_nvrtc_compiles_every_variant_without_spills(arch):
    report = kernels.compile_report(SOURCE, arch=arch)
    assert report.path == "kernels/attention_fused.cu"
    # Fused v1 here; the file's other kernels (v2, its split pass and combine) are
    # checked in test_kernels_v2.py, and every kernel's spills in test_kernels_compile.py.
    v1 = {n: r for n, r in report.kernels.items() if n in VARIANTS}
    assert set(v1) == set(VARIANTS), report.log
    for name, res in v1.items():
        # __launch_bounds__(128, 3): three blocks share an SM's 65536 registers.
        assert 0 < res.registers <= 168, (name, report.log)
        assert res.spill_stores == res.spill_loads == res.stack_frame == 0, (name, report.log)
        # K and V tiles in shared memory: 2 · BK rows · (D + P · skew) floats, nothing else.
        width, rows = VARIANTS[name]
        parts = THREADS // rows
        assert res.shared_bytes == 2 * BK * (width + parts * SKEW) * 4, (name, report.log)
        assert res.barriers >= 1


def test_registry_variants_match_the_source():
    """Each v1 variant's width and rows per block in the registry are the template
    arguments and the header line of its kernel."""
    assert CONSTANTS["FUSED_MAX_DK"] == max(w for w, _ in VARIANTS.values())
    assert all(kernels.registry.get(n).max_d_k == CONSTANTS["FUSED_MAX_DK"] for n in VARIANTS)
    text = SOURCE.read_text()
    for name, (width, rows) in VARIANTS.items():
        assert kernels.registry.get(name).block == (THREADS, 1, 1)
        parts = THREADS // rows
        assert re.search(rf'extern "C" __global__ void __launch_bounds__\(FUSED_THREADS, 3\)\s+{name}\(', text)
        assert f"attention_fused_body<{width}, {parts}>" in text
        assert re.search(rf"{name}\s+d_k <= {width},\s+P = {parts}, R = {rows} baris", text)


def test_header_states_recurrence_mapping_and_limit():
    header = SOURCE.read_text().split("#ifndef")[0]
    for needed in ("online softmax", "m_j", "l_j", "o_j", "exp(m_{j-1} - m_j)",
                   "Thread mapping", "1 <= d_k <= 128", "grid =", "block = (128",
                   "nvrtcCompileProgram"):
        assert needed in header, needed


# --- CPU emulation against the reference -----------------------------------------

# T: 1 row; fewer rows than a tile; around the 32-key and 64-row tiles; several
# query tiles with a ragged end. d_k: 1, 3, and both sides of each width (32/64/128).
CASES = [
    ((), 1, 1), ((), 1, 64), ((), 7, 3), ((2,), 31, 32), ((), 33, 33), ((), 64, 64),
    ((), 65, 65), ((3,), 129, 128), ((2, 3), 33, 3), ((), 200, 100),
]


@pytest.mark.parametrize("scale", [True, False])
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("case", CASES, ids=kc.case_id)
def test_matches_reference_on_cpu(case, causal, scale):
    lead, T, d_k = case
    Q, K, V = kc.qkv(lead, T, d_k, "fused", causal, scale)
    out = kernels.attention(Q, K, V, causal=causal, scale=scale, impl="fused-v1", backend="cpu")
    assert isinstance(out, np.ndarray) and out.dtype == np.float32 and out.shape == Q.shape
    kc.assert_matches(out, _reference(Q, K, V, causal=causal, scale=scale))


@pytest.mark.parametrize("d_k", [1, 3, 64, 128])
def test_one_head_longer_than_the_engine(d_k):
    """T = 1025: 17 query tiles of 64 rows (33 of 32 for d_k = 128), the last
    with one row; 33 key tiles."""
    Q, K, V = kc.qkv((), 1025, d_k, "fused-1025")
    out = kernels.attention(Q, K, V, impl="fused-v1", backend="cpu")
    kc.assert_matches(out, _reference(Q, K, V))


def test_large_scores_do_not_overflow():
    """Scores near 400: exp without the running maximum would be inf in float32."""
    Q, K, V = kc.qkv((2,), 70, 16, "fused-large")
    Q, K = Q * np.float32(10), K * np.float32(10)
    out = kernels.attention(Q, K, V, scale=False, impl="fused-v1", backend="cpu")
    kc.assert_matches(out, _reference(Q, K, V, scale=False), tol=1e-5)


def test_agrees_with_the_kernel_chain():
    Q, K, V = kc.qkv((2,), 129, 64, "fused-chain")
    chain = kernels.attention(Q, K, V, impl="chain-v2", backend="cpu")
    fused = kernels.attention(Q, K, V, impl="fused-v1", backend="cpu")
    np.testing.assert_allclose(fused, chain, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "d_k, name, tiles",
    [(1, "attention_fused_d32", 2), (32, "attention_fused_d32", 2),
     (33, "attention_fused_d64", 2), (64, "attention_fused_d64", 2),
     (65, "attention_fused_d128", 3), (128, "attention_fused_d128", 3)],
)
def test_smallest_variant_and_launch_shape(monkeypatch, d_k, name, tiles):
    launches = kc.spy_launches(monkeypatch)
    Q, K, V = kc.qkv((3,), 70, d_k, "variant")
    kernels.attention(Q, K, V, impl="fused-v1", backend="cpu")
    # 70 rows: ceil(70 / 64) = 2 tiles of 64 rows, or ceil(70 / 32) = 3 of 32; 3 heads.
    assert launches == [(name, (tiles, 3, 1), (128, 1, 1))]


def test_more_heads_than_the_grid(monkeypatch):
    """grid.y capped at 2: the kernel's loop over heads must cover all 5."""
    monkeypatch.setattr(kernels.launch, "MAX_GRID_YZ", 2)
    launches = kc.spy_launches(monkeypatch)
    Q, K, V = kc.qkv((5,), 70, 16, "heads")
    out = kernels.attention(Q, K, V, impl="fused-v1", backend="cpu")
    assert launches[0][1] == (2, 2, 1)
    kc.assert_matches(out, _reference(Q, K, V))


@pytest.mark.slow
def test_key_tiles_above_the_diagonal_are_never_read():
    """Causal, T = 128, only query tile 0 (rows 0..63) launched, and K, V given
    with only their first 64 rows: under AddressSanitizer, any read of a key
    tile above the diagonal (keys 64..127) would be a heap-buffer-overflow."""
    T, d_k = 128, 64
    Q, K, V = kc.qkv((), T, d_k, "diagonal")
    K64, V64 = K[:64].copy(), V[:64].copy()
    O = np.zeros_like(Q)
    args = (Q, K64, V64, O, np.int32(T), np.int32(d_k), np.int32(1), np.float32(0.125),
            np.int32(1))
    result = cudacpu.run_in_subprocess(
        path=str(kernels.kernel_path("attention_fused.cu")), kernel="attention_fused_d64", grid=(1, 1, 1), block=(128, 1, 1),
        args=args, sanitize="address", timeout=600,
    ).check()
    out = result.arrays[3]
    kc.assert_matches(out[:64], _reference(Q[:64], K64, V64))
    assert not out[64:].any()  # rows of the tile that was not launched


@pytest.mark.slow
def test_no_T_by_T_array_is_allocated():
    T = 1024
    Q, K, V = kc.qkv((), T, 64, "memory")
    one_square = T * T * 4

    def peak(**kw):
        kernels.attention(Q, K, V, backend="cpu", **kw)  # compile outside the trace
        tracemalloc.start()
        try:
            kernels.attention(Q, K, V, backend="cpu", **kw)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    # The emulator copies each array (Q, K, V, O) between guard bytes to catch
    # writes past its end: that copy is the same size for both paths.
    guarded = 4 * (Q.nbytes + 2 * guards.guard_bytes(Q.nbytes))
    assert peak(impl="chain-v2") >= 2 * one_square  # the chain's S and A are seen
    assert peak(impl="fused-v1") < guarded + one_square / 4


# --- Validation (before anything is launched) ---------------------------------------


@pytest.fixture
def no_launch(monkeypatch):
    kc.forbid_launches(monkeypatch, "kernel diluncurkan padahal masukannya salah")


def test_d_k_above_the_limit_is_refused(no_launch):
    Q, K, V = kc.qkv((), 5, 129, "limit")
    with pytest.raises(ValueError, match=r"d_k = 129.*attention_fused.*128"):
        kernels.attention(Q, K, V, impl="fused-v1", backend="cpu")


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
    Q, K, V = kc.qkv((), 6, 8, "bad")
    with pytest.raises(error, match=pattern):
        kernels.attention(mutate(Q), K, V, impl="fused-v1", backend="cpu")


# --- Sanitizers -------------------------------------------------------------------


@pytest.mark.slow
def test_thread_sanitizer_sees_a_missing_barrier():
    """The sanitizer run has teeth: without the barrier that protects the tile
    from being overwritten while other rows still read it, ThreadSanitizer
    reports a data race (real threads, mode="threads")."""
    source = SOURCE.read_text()
    barrier = "__syncthreads();  // ubin sebelumnya sudah selesai dibaca semua thread"
    assert source.count(barrier) == 1
    Q, K, V = kc.qkv((), 70, 16, "race")
    O = np.zeros_like(Q)
    args = (Q, K, V, O, np.int32(70), np.int32(16), np.int32(1), np.float32(0.25), np.int32(0))
    result = cudacpu.run_in_subprocess(
        source.replace(barrier, ""), path="kernels/attention_fused.cu",
        kernel="attention_fused_d32", grid=(2, 1, 1), block=(128, 1, 1), args=args,
        sanitize="thread", timeout=600,
    )
    assert "data race" in result.report, result.stderr[-3000:]


# --- On a real GPU (skipped without one) -----------------------------------------------

@kc.gpu_test
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("case", CASES + [((), 1025, 64), ((8, 12), 256, 64)], ids=kc.case_id)
def test_matches_reference_on_gpu(case, causal):
    import cupy as cp

    lead, T, d_k = case
    Q, K, V = kc.qkv(lead, T, d_k, "fused-gpu", causal)
    out = kernels.attention(*(cp.asarray(x) for x in (Q, K, V)), causal=causal, impl="fused-v1",
                            backend="cupy")
    assert isinstance(out, cp.ndarray) and out.shape == Q.shape
    kc.assert_matches(out, _reference(Q, K, V, causal=causal))


@kc.gpu_test
def test_gpu_memory_stays_linear_in_T():
    import cupy as cp

    T = 4096
    Q, K, V = (cp.asarray(x) for x in kc.qkv((2,), T, 64, "fused-gpu-memory"))
    peak = {"now": 0, "max": 0}

    class Hook(cp.cuda.MemoryHook):
        name = "test_peak"

        def malloc_postprocess(self, **kw):
            peak["now"] += kw["mem_size"]
            peak["max"] = max(peak["max"], peak["now"])

        def free_postprocess(self, **kw):
            peak["now"] -= kw["mem_size"]

    with Hook():
        out = kernels.attention(Q, K, V, impl="fused-v1", backend="cupy")
        cp.cuda.Device().synchronize()
    assert peak["max"] < T * T * 4 / 8  # the output (2 · T · 64 floats) and little else
    ref = reference.attention_blocked(Q, K, V)
    assert float(cp.abs(out - ref).max() / cp.abs(ref).max()) <= 1e-5
