"""atensi.reference against float64 loops, and the properties softmax promises."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from atensi import loops, reference

T_VALUES = [1, 7, 33, 129, 1025]
DK_VALUES = [1, 3, 64, 128]
LOOP_T_LIMIT = 33  # pure-Python loops beyond this are too slow for the suite


def rel_err(got, want):
    got = np.asarray(got, dtype=np.float64)
    assert not np.isnan(got).any(), "hasil mengandung NaN"
    return np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-30)


def float64_attention(Q, K, V, causal, scale):
    """An independent float64 attention: row by row, no shared code with reference."""
    Q, K, V = (np.asarray(x, dtype=np.float64) for x in (Q, K, V))
    T, d_k = Q.shape
    out = np.empty((T, V.shape[1]))
    for i in range(T):
        visible = i + 1 if causal else T
        s = K[:visible] @ Q[i]
        if scale:
            s = s / np.sqrt(d_k)
        w = np.exp(s - s.max())
        out[i] = (w / w.sum()) @ V[:visible]
    return out


def random_qkv(rng, lead, T, d_k):
    shape = (*lead, T, d_k)
    return tuple(rng.standard_normal(shape).astype(np.float32) for _ in range(3))


@pytest.mark.slow
@pytest.mark.parametrize("T", T_VALUES)
@pytest.mark.parametrize("d_k", DK_VALUES)
@pytest.mark.parametrize("lead", [(), (3,), (2, 2)])
def test_attention_matches_float64(T, d_k, lead):
    rng = np.random.default_rng([T, d_k, len(lead)])
    Q, K, V = random_qkv(rng, lead, T, d_k)
    for causal in (True, False):
        out = reference.attention(Q, K, V, causal=causal)
        assert out.shape == Q.shape and out.dtype == np.float32
        for idx in np.ndindex(*lead):
            want = float64_attention(Q[idx], K[idx], V[idx], causal, True)
            assert rel_err(out[idx], want) <= 1e-5


@pytest.mark.parametrize("T", [t for t in T_VALUES if t <= LOOP_T_LIMIT])
@pytest.mark.parametrize("d_k", [1, 3, 64])
def test_each_step_matches_loops(T, d_k):
    rng = np.random.default_rng([T, d_k, 7])
    Q, K, V = random_qkv(rng, (), T, d_k)
    for scale in (True, False):
        S_loop = loops.scores(Q, K, scale=scale)
        assert rel_err(reference.scores(Q, K, scale=scale), S_loop) <= 1e-5
    S = loops.scores(Q, K)
    M = reference.causal_mask(S)
    np.testing.assert_array_equal(M, loops.causal_mask(S))
    A_loop = loops.softmax(loops.causal_mask(S))
    assert rel_err(reference.softmax(M), A_loop) <= 1e-12
    assert rel_err(reference.weighted_sum(A_loop, V), loops.weighted_sum(A_loop, V)) <= 1e-12
    assert rel_err(reference.attention(Q, K, V), loops.attention(Q, K, V)) <= 1e-5


def test_loops_agree_with_independent_float64():
    rng = np.random.default_rng(11)
    Q, K, V = random_qkv(rng, (), 9, 5)
    for causal in (True, False):
        for scale in (True, False):
            want = float64_attention(Q, K, V, causal, scale)
            got = loops.attention(Q, K, V, causal=causal, scale=scale)
            assert rel_err(got, want) <= 1e-12


def test_scores_shape_and_scale():
    rng = np.random.default_rng(1)
    Q, K, _ = random_qkv(rng, (12,), 16, 64)
    S = reference.scores(Q, K)
    assert S.shape == (12, 16, 16)
    np.testing.assert_allclose(reference.scores(Q, K, scale=False) / 8, S, rtol=1e-6)


def test_mask_writes_minus_inf_and_copies():
    S = np.arange(16, dtype=np.float32).reshape(4, 4)
    M = reference.causal_mask(S)
    assert np.all(np.isneginf(M[np.triu_indices(4, k=1)]))
    np.testing.assert_array_equal(M[np.tril_indices(4)], S[np.tril_indices(4)])
    assert not np.isinf(S).any(), "mask tidak boleh mengubah masukan"


def test_all_minus_inf_row_gives_zeros():
    S = np.full((3, 5), -np.inf, dtype=np.float32)
    S[1, 2] = 0.5
    A = reference.softmax(S)
    assert not np.isnan(A).any()
    np.testing.assert_array_equal(A[0], 0)
    np.testing.assert_array_equal(A[2], 0)
    np.testing.assert_array_equal(A[1], [0, 0, 1, 0, 0])


def test_softmax_other_axis():
    rng = np.random.default_rng(2)
    S = rng.standard_normal((4, 6))
    np.testing.assert_allclose(reference.softmax(S, axis=0), reference.softmax(S.T).T)


# Property tests ------------------------------------------------------------

finite_rows = hnp.arrays(
    np.float32,
    st.tuples(st.integers(1, 12), st.integers(1, 12)),
    elements=st.floats(-1e4, 1e4, width=32),
)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(finite_rows)
def test_softmax_rows_are_distributions(S):
    A = reference.softmax(S)
    assert not np.isnan(A).any()
    assert (A >= 0).all()
    np.testing.assert_allclose(A.sum(axis=-1), 1.0, rtol=1e-5)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(finite_rows)
def test_softmax_preserves_order_within_row(S):
    A = reference.softmax(S)
    for s_row, a_row in zip(S, A):
        order = np.argsort(s_row, kind="stable")
        # Larger score never gets a smaller probability (ties and underflow may tie).
        assert (np.diff(a_row[order]) >= 0).all()


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(finite_rows)
def test_masked_softmax_is_zero_above_diagonal(S):
    A = reference.softmax(reference.causal_mask(S))
    T_q, T_k = A.shape
    above = np.triu(np.ones((T_q, T_k), dtype=bool), k=1)
    assert (A[above] == 0).all()
    assert not np.isnan(A).any()
    visible_rows = np.arange(T_q) < T_k
    np.testing.assert_allclose(A[visible_rows].sum(axis=-1), 1.0, rtol=1e-5)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(finite_rows, st.data())
def test_rows_of_only_minus_inf_give_zeros(S, data):
    hidden = data.draw(hnp.arrays(bool, S.shape[0]), label="hidden rows")
    S = S.copy()
    S[hidden] = -np.inf
    A = reference.softmax(S)
    assert not np.isnan(A).any()
    assert (A[hidden] == 0).all()
    np.testing.assert_allclose(A[~hidden].sum(axis=-1), 1.0, rtol=1e-5)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 40), st.floats(1.0, 1e4))
def test_no_nan_for_large_scores(T, magnitude):
    rng = np.random.default_rng(T)
    S = (rng.choice([-1.0, 1.0], size=(T, T)) * magnitude).astype(np.float32)
    A = reference.softmax(reference.causal_mask(S))
    assert np.isfinite(A).all()
    np.testing.assert_allclose(A.sum(axis=-1), 1.0, rtol=1e-5)


# --- TF32 rounding -------------------------------------------------------------


@pytest.mark.slow
def test_reference_does_not_import_the_kernel_loader():
    """atensi.reference is pure array code: importing it loads no part of atensi.kernels."""
    import subprocess
    import sys

    code = "import sys, atensi.reference; print(sorted(m for m in sys.modules if m.startswith('atensi')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         timeout=60).stdout
    assert "atensi.kernels" not in out and "atensi.cudacpu" not in out, out
