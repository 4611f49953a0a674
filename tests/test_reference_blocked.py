"""attention_blocked: online softmax per ubin, sama dengan attention, tanpa (T, T)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import _kernel_cases as kc
from _oracles import peak_bytes, qkv, reference64, rel_err
from atensi import reference as R


@pytest.mark.slow
@pytest.mark.parametrize("T", [1, 7, 33, 129, 1025])
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("scale", [True, False])
def test_matches_float64_reference(T, causal, scale):
    Q, K, V = qkv((2, T, 16), seed=T)
    want = reference64(Q, K, V, causal=causal, scale=scale)
    # Block sizes that divide T, do not divide it, and exceed it.
    for block in sorted({1 if T <= 33 else 7, 16, 50, 128, T + 3}):
        got = R.attention_blocked(Q, K, V, causal=causal, scale=scale, block=block)
        assert got.shape == want.shape and got.dtype == np.float32
        assert rel_err(got, want) <= 1e-5, (T, block)


def test_andrea_shape_matches_attention():
    Q, K, V = qkv((12, 256, 64), seed=1)
    got = R.attention_blocked(Q, K, V)
    assert rel_err(got, R.attention(Q, K, V)) <= 1e-5
    assert rel_err(got, reference64(Q, K, V)) <= 1e-5


@settings(max_examples=30, deadline=None)
@given(
    T=st.integers(1, 70),
    d_k=st.integers(1, 20),
    block=st.integers(1, 80),
    causal=st.booleans(),
    scale=st.booleans(),
    seed=st.integers(0, 2**16),
)
@pytest.mark.slow
def test_any_shape_and_block(T, d_k, block, causal, scale, seed):
    Q, K, V = qkv((T, d_k), seed=seed)
    got = R.attention_blocked(Q, K, V, causal=causal, scale=scale, block=block)
    assert rel_err(got, reference64(Q, K, V, causal=causal, scale=scale)) <= 1e-5


def test_leading_axes_and_float64():
    Q, K, V = qkv((2, 3, 40, 8), seed=2, dtype=np.float64)
    got = R.attention_blocked(Q, K, V, block=16)
    assert got.shape == (2, 3, 40, 8) and got.dtype == np.float64
    np.testing.assert_allclose(got, R.attention(Q, K, V), rtol=1e-12, atol=1e-12)


def test_large_scores_do_not_overflow():
    # Scores near 1e4: exp without the running maximum would overflow even in
    # float64 (limit about 709). float64 keeps rounding of the scores out of it.
    Q, K, V = qkv((1, 96, 8), seed=3, dtype=np.float64)
    Q, K = Q * 40, K * 40
    got = R.attention_blocked(Q, K, V, block=32)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, R.attention(Q, K, V), rtol=1e-10, atol=1e-10)


def test_future_blocks_are_never_read(monkeypatch):
    # NaN in keys/values from position 64 on: with causal attention, rows 0..63
    # only read key blocks 0..63, so they stay finite and exact. (NaN input is
    # refused by atensi.validation; the check is switched off to see the reads.)
    from atensi import validation

    monkeypatch.setattr(validation, "check_finite", lambda x, *a, **k: x)
    monkeypatch.setattr(validation, "check_score_overflow", lambda *a, **k: None)
    Q, K, V = qkv((2, 128, 8), seed=4)
    clean = R.attention_blocked(Q, K, V, block=32)
    K[:, 64:], V[:, 64:] = np.nan, np.nan
    got = R.attention_blocked(Q, K, V, block=32)
    np.testing.assert_array_equal(got[:, :64], clean[:, :64])
    assert np.all(np.isnan(got[:, 64:]))


def test_never_allocates_a_T_by_T_array():
    T, d_k = 2048, 64
    Q, K, V = qkv((T, d_k), seed=5)
    one_square = T * T * 4  # one float32 (T, T) array = 16 MiB
    # The measurement itself sees NumPy arrays: the naive path shows up.
    assert peak_bytes(lambda: R.attention(Q, K, V)) >= one_square
    peak = peak_bytes(lambda: R.attention_blocked(Q, K, V, block=128))
    assert peak < one_square / 8, peak


@pytest.mark.parametrize("block", [0, -3])
def test_bad_block_is_rejected(block):
    Q, K, V = qkv((4, 2))
    with pytest.raises(ValueError, match="'block'"):
        R.attention_blocked(Q, K, V, block=block)


@kc.gpu_test
def test_runs_on_cupy_when_a_gpu_is_present():
    import cupy as cp

    Q, K, V = qkv((3, 100, 32), seed=6)
    got = R.attention_blocked(*(cp.asarray(x) for x in (Q, K, V)), block=32)
    assert isinstance(got, cp.ndarray)
    assert rel_err(cp.asnumpy(got), reference64(Q, K, V)) <= 1e-5


@pytest.mark.parametrize("shapes", [((1, 9, 4), (3, 9, 4)), ((9, 4), (2, 3, 9, 4)),
                                    ((2, 1, 9, 4), (1, 3, 9, 4))])
@pytest.mark.parametrize("causal", [True, False])
def test_broadcast_batches_match_the_dense_path(shapes, causal):
    rng = np.random.default_rng(7)
    q_shape, kv_shape = shapes
    Q = rng.standard_normal(q_shape)
    K, V = rng.standard_normal(kv_shape), rng.standard_normal(kv_shape)
    want = R.attention(Q, K, V, causal=causal)
    got = R.attention_blocked(Q, K, V, causal=causal, block=4)
    assert got.shape == want.shape and np.abs(got - want).max() < 1e-12


@pytest.mark.parametrize("causal", [True, False])
def test_more_queries_than_keys_match_the_dense_path(causal):
    rng = np.random.default_rng(8)
    Q, K, V = rng.standard_normal((11, 4)), rng.standard_normal((5, 4)), rng.standard_normal((5, 4))
    want = R.attention(Q, K, V, causal=causal)
    for block in (1, 3, 16):
        got, lse = R.attention_blocked(Q, K, V, causal=causal, block=block, return_lse=True)
        assert np.isfinite(got).all() and np.abs(got - want).max() < 1e-12
        assert lse.shape == (11,)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_near_the_float_limit_give_their_mean_not_inf(dtype):
    """Exact output: a weighted mean of V rows, finite for finite V."""
    T = 64
    rng = np.random.default_rng(9)
    Q, K = rng.standard_normal((T, 4)).astype(dtype), rng.standard_normal((T, 4)).astype(dtype)
    big = np.finfo(dtype).max / 8
    V = (rng.uniform(0.5, 1.0, (T, 4)) * big).astype(dtype)
    want = R.softmax(R.causal_mask(R.scores(Q.astype(np.float64), K.astype(np.float64)))) \
        @ (V.astype(np.float64) / big)
    for block in (1, 16, 128):
        got = R.attention_blocked(Q, K, V, block=block)
        assert np.isfinite(got).all()
        assert np.abs(got / big - want).max() < 1e-5


def test_broadcast_heads_beyond_memory_are_refused_before_allocating(monkeypatch):
    """One (T, d_k) K and V broadcast against 10⁶ query heads: a small input whose
    output and tiles need 35 GiB."""
    from atensi import memory

    monkeypatch.setattr(memory, "available_memory", lambda kind="numpy": 2.0 * 2**30)
    Q = np.broadcast_to(np.ones((1, 1, 64, 8), np.float32), (10**6, 1, 64, 8))
    K = V = np.ones((64, 8), np.float32)
    with pytest.raises(MemoryError, match=r"attention_blocked untuk 1000000 head.*GiB.*Kecilkan "
                                          r"jumlah head"):
        R.attention_blocked(Q, K, V)
    out = R.attention_blocked(Q[:3], K, V)  # a few heads still fit
    assert out.shape == (3, 1, 64, 8)
