"""RoPE and the sinusoidal encoding: reference, loops and kernels/rope.cu.

The reference is checked against rotation matrices built in float64, the loop
against the reference, and the kernel (CPU emulator; CuPy when a GPU is there)
against float64 on ragged shapes. The property the chapter teaches is tested
on its own: after RoPE, q_i · k_j depends only on i − j.
"""

from __future__ import annotations

import numpy as np
import pytest

import _kernel_cases as kc
from atensi import kernels, loops, reference
from atensi.kernels import registry

BACKEND = "cpu"
# The kernel computes the angle p · ω in double, so its error does not grow with
# the position: what is left is float32 cos/sin and the rotation itself.
KERNEL_TOL = 2e-6


def kernel_tolerance(last_position: int) -> float:
    return KERNEL_TOL


def rotation_by_matrices(X, offset=0, base=10000.0):
    """RoPE written differently: one 2 × 2 rotation matrix per (position, pair), float64."""
    X = np.asarray(X, dtype=np.float64)
    T, d = X.shape[-2:]
    out = np.empty_like(X)
    for p in range(T):
        for m in range(d // 2):
            theta = (offset + p) / base ** (2 * m / d)
            R = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
            out[..., p, 2 * m:2 * m + 2] = X[..., p, 2 * m:2 * m + 2] @ R.T
    return out


# --- reference ------------------------------------------------------------------


@pytest.mark.parametrize("shape, offset", [((5, 2), 0), ((3, 7, 6), 4), ((2, 3, 9, 16), 100)])
def test_reference_is_the_rotation_in_float64(shape, offset):
    X = kc.rng_for("rope-ref", shape).standard_normal(shape)
    out = reference.rope(X, offset=offset)
    assert out.dtype == np.float64 and out.shape == X.shape
    np.testing.assert_allclose(out, rotation_by_matrices(X, offset), rtol=0, atol=1e-12)


def test_reference_keeps_float32_and_lengths():
    X = kc.rng_for("rope-f32").standard_normal((4, 11, 8)).astype(np.float32)
    out = reference.rope(X, offset=3)
    assert out.dtype == np.float32
    # A rotation keeps the length of every pair.
    pairs_in = np.hypot(X[..., 0::2], X[..., 1::2])
    pairs_out = np.hypot(out[..., 0::2], out[..., 1::2])
    np.testing.assert_allclose(pairs_out, pairs_in, rtol=1e-6)
    np.testing.assert_allclose(out, rotation_by_matrices(X, 3), rtol=0, atol=1e-5)


def test_position_zero_is_not_rotated():
    X = kc.rng_for("rope-zero").standard_normal((1, 6))
    assert np.array_equal(reference.rope(X), X)


def test_score_depends_only_on_the_offset_i_minus_j():
    """Same q at every position, same k at every position: after RoPE the scores
    are constant along each diagonal (a Toeplitz matrix), whatever the shift."""
    rng = kc.rng_for("rope-offset")
    T, d = 12, 8
    q, k = rng.standard_normal(d), rng.standard_normal(d)
    Q, K = np.tile(q, (T, 1)), np.tile(k, (T, 1))
    S = reference.rope(Q) @ reference.rope(K).T
    for delta in range(-T + 1, T):
        diagonal = np.diagonal(S, offset=-delta)  # entries with i - j = delta
        np.testing.assert_allclose(diagonal, diagonal[0], rtol=0, atol=1e-12)
    # Shifting every position by the same amount changes no score.
    S_shifted = reference.rope(Q, offset=37) @ reference.rope(K, offset=37).T
    np.testing.assert_allclose(S_shifted, S, rtol=0, atol=1e-12)
    # And different offsets do give different scores (the test can fail).
    assert np.ptp(S[:, 0]) > 0.1


def test_kv_cache_keys_need_no_recomputation():
    """A new query at position p (offset=p) against keys rotated once when they were
    written gives the scores of the whole sequence rotated at once."""
    rng = kc.rng_for("rope-cache")
    T, d = 9, 4
    Q, K = rng.standard_normal((2, T, d))
    full = reference.rope(Q) @ reference.rope(K).T
    cache = np.concatenate([reference.rope(K[p:p + 1], offset=p) for p in range(T)])
    for p in range(T):
        q_new = reference.rope(Q[p:p + 1], offset=p)
        np.testing.assert_allclose(q_new @ cache[:p + 1].T, full[p:p + 1, :p + 1], atol=1e-12)


def test_sinusoidal_positions():
    PE = reference.sinusoidal_positions(50, 8)
    assert PE.shape == (50, 8)
    p = np.arange(50)[:, None]
    omega = 10000.0 ** (-np.arange(0, 8, 2) / 8)
    np.testing.assert_allclose(PE[:, 0::2], np.sin(p * omega), atol=1e-15)
    np.testing.assert_allclose(PE[:, 1::2], np.cos(p * omega), atol=1e-15)
    # Every pair is a point on the unit circle, and moving c positions is a
    # rotation of each pair by c·ω_m: rotating PE[p + c] back by RoPE's angle
    # for position c lands on PE[p].
    np.testing.assert_allclose(PE[:, 0::2] ** 2 + PE[:, 1::2] ** 2, 1.0, atol=1e-12)
    for p, c in ((0, 7), (12, 30)):
        back = reference.rope(PE[p + c][None], offset=c, base=10000.0)[0]
        np.testing.assert_allclose(back, PE[p], atol=1e-12)


@pytest.mark.parametrize("call, match", [
    (lambda: reference.rope(np.zeros((3, 5))), r"'X': d_k = 5 harus genap"),
    (lambda: reference.rope(np.zeros(4)), r"'X' harus berdimensi minimal 2"),
    (lambda: reference.rope(np.array([[np.nan, 0.0]])), r"'X' berisi 1 nilai NaN"),
    (lambda: reference.rope(np.zeros((2, 2)), offset=-1), r"'offset' harus bilangan bulat >= 0"),
    (lambda: reference.rope(np.zeros((2, 2)), offset=1.5), r"'offset' harus bilangan bulat"),
    (lambda: reference.rope(np.zeros((2, 2)), offset=2**24), r"melampaui 16\.777\.215"),
    (lambda: reference.rope(np.zeros((2, 2)), base=1.0), r"'base' harus bilangan hingga > 1"),
    (lambda: reference.rope("Q"), r"'X' harus array NumPy atau CuPy"),
    (lambda: reference.sinusoidal_positions(4, 3), r"'d_model': d_model = 3 harus genap"),
    (lambda: reference.sinusoidal_positions(0, 4), r"'T' harus bilangan bulat >= 1"),
    (lambda: reference.rope_angles(4, 7), r"'d_k': d_k = 7 harus genap"),
])
def test_reference_refuses_bad_input_in_indonesian(call, match):
    with pytest.raises((TypeError, ValueError), match=match):
        call()


# --- loops ------------------------------------------------------------------------


@pytest.mark.parametrize("T, d, offset", [(1, 2, 0), (5, 6, 3), (4, 10, 1000)])
def test_loop_matches_reference(T, d, offset):
    X = kc.rng_for("rope-loop", T, d).standard_normal((T, d)).astype(np.float32)
    np.testing.assert_allclose(loops.rope(X, offset=offset),
                               reference.rope(X.astype(np.float64), offset=offset),
                               rtol=0, atol=1e-12)


# --- kernel --------------------------------------------------------------------------

ROPE_SHAPES = [(lead, T, d) for lead in ((), (3,), (2, 3)) for T in (1, 7, 33, 129)
               for d in (2, 6, 64, 128)]


def _check_kernel(shape, offset, backend, version="v1"):
    X = kc.rng_for("rope-kernel", shape, offset).standard_normal(shape, dtype=np.float32)
    out = kernels.rope(X, offset=offset, version=version, backend=backend)
    ref = reference.rope(X.astype(np.float64), offset=offset)
    out = kc.f64(out)
    assert out.shape == ref.shape and not np.isnan(out).any()
    error = np.abs(out - ref).max() / np.abs(ref).max()
    assert error <= kernel_tolerance(offset + shape[-2] - 1), error


@pytest.mark.parametrize("version", registry.versions("rope"))
@pytest.mark.parametrize("case", ROPE_SHAPES, ids=[kc.case_id(c) for c in ROPE_SHAPES])
def test_kernel_matches_float64_on_ragged_shapes(case, version):
    lead, T, d = case
    _check_kernel((*lead, T, d), 0, BACKEND, version)


@pytest.mark.parametrize("offset", [1, 513, 100_000])
def test_kernel_with_offset(offset):
    _check_kernel((3, 17, 64), offset, BACKEND)


@pytest.mark.parametrize("offset", [2**16, 2**23, 2**24 - 9])
def test_kernel_matches_float64_at_the_largest_positions(offset):
    """Positions up to 2^24 are accepted; there a float32 angle would be off by a radian."""
    _check_kernel((2, 9, 64), offset, BACKEND)


def test_values_whose_rotation_overflows_are_refused(monkeypatch):
    X = np.full((2, 4), np.finfo(np.float32).max / 1.5, np.float32)
    monkeypatch.setattr(kernels.loading, "get_function", lambda *a, **k: pytest.fail("launched"))
    for rope in (reference.rope, lambda X: kernels.rope(X, backend=BACKEND)):
        with pytest.raises(ValueError, match=r"'X' berisi nilai sebesar.*√2.*Perkecil X"):
            rope(X)
    with pytest.raises(ValueError, match=r"'X' berisi nilai sebesar.*float16"):
        reference.rope(np.full((2, 4), 40000.0, np.float16))
    # Half the limit still rotates to finite numbers.
    X = np.full((2, 4), np.finfo(np.float32).max / 2, np.float32)
    monkeypatch.undo()
    assert np.isfinite(kernels.rope(X, offset=3, backend=BACKEND)).all()
    assert np.isfinite(reference.rope(X, offset=3)).all()


def test_kernel_loops_over_rows_past_the_grid(monkeypatch):
    """With a grid of 2 blocks the kernel's loop must still reach every pair."""
    monkeypatch.setattr(kernels.launch, "MAX_GRID_X", 2)
    _check_kernel((4, 50, 32), 2, BACKEND)  # 3.200 pairs, 512 threads


def test_kernel_keeps_the_offset_property():
    rng = kc.rng_for("rope-kernel-offset")
    q, k = rng.standard_normal((2, 16), dtype=np.float32)
    T = 20
    Q, K = np.tile(q, (T, 1)), np.tile(k, (T, 1))
    S = kernels.rope(Q, backend=BACKEND) @ kernels.rope(K, backend=BACKEND).T
    S_shift = (kernels.rope(Q, offset=50, backend=BACKEND)
               @ kernels.rope(K, offset=50, backend=BACKEND).T)
    for delta in range(T):
        d = np.diagonal(S, offset=-delta)
        assert np.abs(d - d[0]).max() < 1e-4
    assert np.abs(S - S_shift).max() < 1e-4


@pytest.mark.parametrize("call, error, match", [
    (lambda: kernels.rope(np.zeros((3, 5), np.float32), backend=BACKEND), ValueError,
     r"'X': d_k = 5 harus genap"),
    (lambda: kernels.rope(np.zeros((3, 4)), backend=BACKEND), TypeError,
     r"'X' harus bertipe float32.*astype\(np\.float32\)"),
    (lambda: kernels.rope(np.zeros((4, 6), np.float32).T, backend=BACKEND), ValueError,
     r"'X' harus C-contiguous"),
    (lambda: kernels.rope(np.zeros(4, np.float32), backend=BACKEND), ValueError,
     r"'X' harus berdimensi minimal 2"),
    (lambda: kernels.rope(np.full((2, 2), np.inf, np.float32), backend=BACKEND), ValueError,
     r"'X' berisi 4 nilai NaN atau inf"),
    (lambda: kernels.rope(np.zeros((2, 2), np.float32), offset=np.int64(-3), backend=BACKEND),
     ValueError, r"'offset' harus bilangan bulat >= 0"),
    (lambda: kernels.rope(np.zeros((2, 2), np.float32), base=1e39, backend=BACKEND), ValueError,
     r"'base' = 1e\+39 terlalu besar untuk float32"),
    (lambda: kernels.rope([[1.0, 2.0]], backend=BACKEND), TypeError,
     r"'X' harus array NumPy atau CuPy"),
])
def test_kernel_refuses_bad_input_before_any_launch(monkeypatch, call, error, match):
    def no_launch(*_args, **_kw):
        raise AssertionError("kernel diluncurkan padahal masukannya salah")

    monkeypatch.setattr(kernels.loading, "get_function", no_launch)
    with pytest.raises(error, match=match):
        call()


@kc.gpu_test
@pytest.mark.parametrize("version", registry.versions("rope"))
@pytest.mark.parametrize("case", ROPE_SHAPES[::5], ids=[kc.case_id(c) for c in ROPE_SHAPES[::5]])
def test_kernel_on_gpu(case, version):
    import cupy

    lead, T, d = case
    _check_kernel((*lead, T, d), 3, "cupy", version)
    X = cupy.asarray(kc.rng_for("rope-gpu").standard_normal((2, T, d), dtype=np.float32))
    out = kernels.rope(X, backend="cupy")
    assert isinstance(out, cupy.ndarray)
    np.testing.assert_allclose(out.get(), reference.rope(X.get().astype(np.float64)),
                               atol=kernel_tolerance(T))
