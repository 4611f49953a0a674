"""atensi.loops: the same numbers as the float64 reference, and the same refusals."""

import numpy as np
import pytest

from atensi import loops, reference

RNG = np.random.default_rng(20)


@pytest.mark.parametrize("T_q, T_k, d_k", [(1, 1, 1), (5, 5, 3), (3, 7, 2)])
@pytest.mark.parametrize("causal", [True, False])
def test_attention_matches_float64(T_q, T_k, d_k, causal):
    Q, K, V = RNG.standard_normal((T_q, d_k)), RNG.standard_normal((T_k, d_k)), \
        RNG.standard_normal((T_k, d_k))
    got = loops.attention(Q, K, V, causal=causal)
    want = reference.attention(Q, K, V, causal=causal)
    assert np.isfinite(got).all() and np.abs(got - want).max() < 1e-12


@pytest.mark.parametrize("call, error, words", [
    (lambda: loops.scores(np.ones((3, 2)), np.ones((3, 4))), ValueError, "d_k"),
    (lambda: loops.scores(np.ones((2, 3, 2)), np.ones((3, 2))), ValueError, "'Q'.*satu head"),
    (lambda: loops.scores(np.ones((3, 2)), np.ones((3, 2)), scale=1), TypeError, "'scale'"),
    (lambda: loops.scores("abc", np.ones((3, 2))), TypeError, "'Q'"),
    (lambda: loops.scores(np.ones((3, 2), int), np.ones((3, 2))), TypeError, "'Q'.*float"),
    (lambda: loops.causal_mask(np.array([[0.0, np.nan]])), ValueError, "'S'.*NaN"),
    (lambda: loops.softmax(np.array([[0.0, np.inf]])), ValueError, r"'S'.*\+inf"),
    (lambda: loops.weighted_sum(np.ones((2, 3)), np.ones((2, 3))), ValueError, "'V'"),
    (lambda: loops.weighted_sum(np.ones((2, 2)), np.full((2, 1), np.inf)), ValueError, "'V'"),
    (lambda: loops.attention(*(np.ones((3, 2)),) * 3, causal="ya"), TypeError, "'causal'"),
    (lambda: loops.scores(np.ones((4000, 64)), np.ones((4000, 64))), ValueError,
     "langkah perulangan Python.*atensi.reference"),
])
def test_bad_input_is_refused_in_indonesian(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_masked_scores_keep_minus_inf():
    S = loops.causal_mask(np.zeros((3, 3)))
    A = loops.softmax(S)
    assert np.allclose(A.sum(axis=1), 1) and A[0, 1] == 0
