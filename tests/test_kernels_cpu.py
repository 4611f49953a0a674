"""The .cu kernels, run on the CPU by atensi.cudacpu, against atensi.reference.

Every kernel and every version the registry lists for its step
(``registry.versions``), at irregular shapes (see _kernel_cases.py): float32
against a float64 reference, relative error <= 1e-5, masked entries exactly
-inf, no NaN. Plus the grid loops (more heads/rows than the grid has blocks),
T = 1025, and one small run of each kernel file of the registry under
AddressSanitizer and ThreadSanitizer.
"""

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import _kernel_cases as kc
from atensi import kernels, reference
from atensi.cudacpu import sanitizer_env
from atensi.kernels import registry

BACKEND = "cpu"
ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("version", registry.versions("scores"))
@pytest.mark.parametrize("case", kc.SHAPES, ids=kc.SHAPE_IDS)
def test_scores(case, version):
    kc.check_scores(case, BACKEND, version=version)


@pytest.mark.parametrize("version", registry.versions("scores"))
@pytest.mark.parametrize("case", kc.SHAPES, ids=kc.SHAPE_IDS)
def test_scores_causal(case, version):
    kc.check_scores(case, BACKEND, version=version, causal=True)


@pytest.mark.parametrize("version", registry.versions("scores"))
@pytest.mark.parametrize("case", [((), 33, 3), ((2, 3), 7, 64), ((), 129, 128)], ids=kc.case_id)
def test_scores_without_scaling(case, version):
    kc.check_scores(case, BACKEND, version=version, scale=False)


def test_scores_v1_is_the_engine_line():
    """v1 (and every other version) multiplies by 1.0f / sqrtf(d_k) in float32: bit
    for bit the same as NumPy doing that one multiply after an exact dot product of
    small integers."""
    rng = kc.rng_for("engine")
    Q = rng.integers(-3, 4, size=(9, 64)).astype(np.float32)
    K = rng.integers(-3, 4, size=(9, 64)).astype(np.float32)
    expected = (Q @ K.T) * (np.float32(1.0) / np.sqrt(np.float32(64)))
    for version in registry.versions("scores"):
        out = kernels.scores(Q, K, version=version, backend=BACKEND)
        np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("version", registry.versions("causal_mask"))
@pytest.mark.parametrize("case", kc.SHAPES, ids=kc.SHAPE_IDS)
def test_causal_mask(case, version):
    kc.check_causal_mask(case, BACKEND, version=version)


@pytest.mark.parametrize("version", registry.versions("softmax"))
@pytest.mark.parametrize("case", kc.SHAPES, ids=kc.SHAPE_IDS)
def test_softmax(case, version):
    kc.check_softmax(case, BACKEND, version=version)


@pytest.mark.parametrize("version", registry.versions("softmax"))
@pytest.mark.parametrize("rows, n", [(1, 1), (5, 31), (4, 257), (3, 1025)])
def test_softmax_rows_longer_than_the_block(rows, n, version):
    kc.check_softmax_rows(rows, n, BACKEND, version=version)


@pytest.mark.parametrize("version", registry.versions("softmax"))
def test_softmax_edge_rows(version):
    S = np.array(
        [
            [-np.inf, -np.inf, -np.inf],  # nothing visible: zeros
            [0.0, -np.inf, -np.inf],  # one visible key: weight exactly 1
            [80.0, 80.0, -np.inf],  # large scores: no overflow thanks to the max
            [-80.0, -80.0, -80.0],  # very negative: no underflow to 0/0
        ],
        dtype=np.float32,
    )
    A = kernels.softmax(S, version=version, backend=BACKEND)
    np.testing.assert_array_equal(A[0], 0.0)
    np.testing.assert_array_equal(A[1], [1.0, 0.0, 0.0])
    np.testing.assert_allclose(A[2], [0.5, 0.5, 0.0], rtol=1e-6)
    np.testing.assert_allclose(A[3], 1 / 3, rtol=1e-6)
    # A one-dimensional row works too.
    np.testing.assert_allclose(kernels.softmax(S[2], version=version, backend=BACKEND), A[2])


@pytest.mark.parametrize("case", kc.SHAPES, ids=kc.SHAPE_IDS)
def test_weighted_sum(case):
    kc.check_weighted_sum(case, BACKEND)


# The other versions (v2: tiled like a GEMM, with its causal variant) also have
# their own cases in test_kernels_v2.py; here every version on a few shapes.
@pytest.mark.parametrize("version", registry.versions("weighted_sum"))
@pytest.mark.parametrize("case", [((), 1, 1), ((2, 3), 33, 3), ((3,), 129, 64)], ids=kc.case_id)
def test_weighted_sum_every_version(case, version):
    kc.check_weighted_sum(case, BACKEND, version=version)
    if version in registry.versions("weighted_sum", causal=True):
        kc.check_weighted_sum(case, BACKEND, version=version, causal=True)


@pytest.mark.parametrize("impl", kc.CHAIN_IMPLS)
@pytest.mark.parametrize(
    "case", [((), 1, 3), ((), 33, 64), ((3,), 7, 128), ((2, 3), 33, 3), ((), 129, 64)], ids=kc.case_id
)
def test_attention(case, impl):
    kc.check_attention(case, BACKEND, impl=impl)
    kc.check_attention(case, BACKEND, impl=impl, causal=False, scale=False)


# Each fused version also has its own file (test_fused.py, test_kernels_v2.py,
# test_fused_split.py, test_fused_tensorcore.py); here every version, format and
# split of the registry on a few shapes.
@pytest.mark.parametrize("fused", kc.fused_cases(), ids=kc.fused_case_id)
@pytest.mark.parametrize("case", [((), 1, 3), ((2, 3), 33, 3), ((3,), 70, 128), ((), 129, 64)],
                         ids=kc.case_id)
def test_fused_every_version(case, fused):
    version, precision, splits = fused
    kc.check_fused(case, BACKEND, version=version, precision=precision, splits=splits)
    kc.check_fused(case, BACKEND, version=version, precision=precision, splits=splits,
                   causal=False, scale=False)


def test_versions_agree():
    """Every version of a step gives what its first version gives."""
    Q, K, V = kc.qkv((2,), 33, 64, "versions")
    first, *others = registry.versions("scores")
    for causal in (False, True):
        s1 = kernels.scores(Q, K, causal=causal, version=first, backend=BACKEND)
        for version in others:
            s2 = kernels.scores(Q, K, causal=causal, version=version, backend=BACKEND)
            np.testing.assert_allclose(s1, s2, rtol=1e-5, atol=1e-5, err_msg=version)
    S = kc.masked_scores((2,), 33, "versions")
    first, *others = registry.versions("softmax")
    a1 = kernels.softmax(S, version=first, backend=BACKEND)
    for version in others:
        a2 = kernels.softmax(S, version=version, backend=BACKEND)
        np.testing.assert_allclose(a1, a2, rtol=1e-6, atol=1e-7, err_msg=version)


# attention(impl=f"chain-{version}") with the scores and softmax of that version.
LONG_VERSIONS = tuple(dict.fromkeys(registry.versions("scores") + registry.versions("softmax")))


@pytest.mark.slow
@pytest.mark.parametrize("version", LONG_VERSIONS)
def test_one_head_longer_than_the_engine(version):
    """T = 1025 (one more than ANDREA's context), d_k = 64: every kernel, one head.
    The last version also runs the kernels of steps that have fewer versions."""
    case = ((), 1025, 64)
    if version in registry.versions("scores"):
        kc.check_scores(case, BACKEND, version=version, causal=True)
    if version in registry.versions("softmax"):
        kc.check_softmax(case, BACKEND, version=version)
    if kc.chain_for(version):
        kc.check_attention(case, BACKEND, impl=kc.chain_for(version))
    if version == LONG_VERSIONS[-1]:
        kc.check_scores(case, BACKEND, version=registry.versions("scores")[-1])
        kc.check_causal_mask(case, BACKEND, version=registry.versions("causal_mask")[-1])
        kc.check_weighted_sum(case, BACKEND, version=registry.versions("weighted_sum")[-1])


@pytest.mark.slow
@pytest.mark.parametrize("d_k", [1, 3, 128])
def test_T_1025_at_the_other_widths(d_k):
    """T = 1025 with the d_k values above besides 64: the kernels whose work
    depends on d_k (mask and softmax do not), both versions."""
    case = ((), 1025, d_k)
    for version in registry.versions("scores"):
        kc.check_scores(case, BACKEND, version=version)
        if kc.chain_for(version):
            kc.check_attention(case, BACKEND, impl=kc.chain_for(version))
    kc.check_weighted_sum(case, BACKEND)


def test_more_heads_and_rows_than_the_grid(monkeypatch):
    """With the grid capped at 2 blocks in y/z and 3 in x, the kernels' loops
    over heads and rows must still cover every head and row (5 heads, 35 rows)."""
    monkeypatch.setattr(kernels.launch, "MAX_GRID_YZ", 2)
    monkeypatch.setattr(kernels.launch, "MAX_GRID_X", 3)
    launches = kc.spy_launches(monkeypatch)
    kc.check_all_small(BACKEND, case=((5,), 7, 3))
    # Every kernel of the chain's steps in the registry ran under the caps.
    assert {name for name, _, _ in launches} == kc.chain_kernels()
    assert {"scores_v1_naive", "softmax_v2_warp", "weighted_sum_v2_tiled_causal"} <= kc.chain_kernels()
    for name, grid, _ in launches:
        if "softmax" in name:
            assert grid == (3, 1, 1), (name, grid)  # 35 rows, 3 blocks
        else:
            assert grid[2] == 2, (name, grid)  # 5 heads, 2 blocks


def test_numpy_in_numpy_out_and_new_arrays():
    Q, K, V = kc.qkv((2,), 7, 3, "kinds")
    S = kernels.scores(Q, K, backend=BACKEND)
    M = kernels.causal_mask(S, backend=BACKEND)
    A = kernels.softmax(M, backend=BACKEND)
    O = kernels.weighted_sum(A, V, backend=BACKEND)
    for out, shape in ((S, (2, 7, 7)), (M, (2, 7, 7)), (A, (2, 7, 7)), (O, (2, 7, 3))):
        assert isinstance(out, np.ndarray) and out.dtype == np.float32 and out.shape == shape
    assert np.isfinite(S).all()  # causal_mask did not touch its input
    assert M is not S and A is not M
    np.testing.assert_allclose(O, kernels.attention(Q, K, V, backend=BACKEND), rtol=1e-6)


def test_backend_none_runs_on_cpu_here():
    if kernels.gpu_available():
        pytest.skip("Ada GPU: backend=None memilih 'cupy'.")
    Q, K, V = kc.qkv((), 5, 3, "none")
    out = kernels.attention(Q, K, V)
    kc.assert_matches(out, reference.attention(*(kc.f64(x) for x in (Q, K, V))))


def test_fused_is_reachable():
    """attention(impl="fused-v1") runs the fused kernel (kernels/attention_fused.cu)."""
    Q, K, V = kc.qkv((2,), 33, 64, "fused")
    out = kernels.attention(Q, K, V, impl="fused-v1", backend=BACKEND)
    kc.assert_matches(out, reference.attention(*(kc.f64(x) for x in (Q, K, V))))


# --- AddressSanitizer / ThreadSanitizer --------------------------------------

# Every file of the registry, each through scripts/kernel_driver.py (its CHECKS).
SANITIZED_FILES = [Path(file).stem for file in kernels.registry.files()]


def _driver():
    spec = importlib.util.spec_from_file_location("kernel_driver", ROOT / "scripts" / "kernel_driver.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_sanitizer_driver_checks_every_kernel_file():
    missing = sorted(set(SANITIZED_FILES) - set(_driver().CHECKS))
    assert not missing, (
        f"kernels/{missing[0]}.cu belum diperiksa oleh scripts/kernel_driver.py: tambahkan satu fungsi "
        "di CHECKS, agar berkas itu berjalan di bawah AddressSanitizer dan ThreadSanitizer. Hanya mode "
        "threads dan TSan yang melihat read-modify-write non-atomik di antara dua barrier.")
    assert sorted(_driver().CHECKS) == sorted(SANITIZED_FILES)
    assert {sanitizer for sanitizer, _ in kc.SANITIZER_MODES} == {"address", "thread"}
    assert {mode for sanitizer, mode in kc.SANITIZER_MODES if sanitizer == "thread"} == \
        {"threads", "fibers"}


@pytest.mark.slow
@pytest.mark.parametrize("sanitizer, mode", kc.SANITIZER_MODES, ids=kc.SANITIZER_IDS)
@pytest.mark.parametrize("file", SANITIZED_FILES)
def test_kernel_file_under_sanitizer(file, sanitizer, mode):
    """scripts/kernel_driver.py in a fresh process whose cudacpu modules are built
    with the sanitizer (and its runtime preloaded)."""
    env = sanitizer_env(sanitizer, mode)
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "kernel_driver.py"), file, "--backend", "cpu"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "BEDA" not in output and "OK" in output and "LEWATI" not in output, output
    for marker in ("AddressSanitizer", "ThreadSanitizer", "LeakSanitizer", "runtime error"):
        assert marker not in output, output
