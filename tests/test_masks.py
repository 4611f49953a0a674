"""atensi.masks: the four kinds of mask, boolean and additive, with clear errors."""

import numpy as np
import pytest

from atensi import masks, reference


def _scores(T, seed=0):
    return np.random.default_rng(seed).standard_normal((T, T)).astype(np.float32)


def test_causal_is_lower_triangle_with_diagonal_and_matches_reference():
    for T in (1, 2, 5, 17):
        visible = masks.causal(T)
        assert visible.dtype == bool and visible.shape == (T, T)
        assert np.array_equal(visible, np.tril(np.ones((T, T), dtype=bool)))
        S = _scores(T)
        assert np.array_equal(masks.apply(S, visible), reference.causal_mask(S))
        assert np.array_equal(S + masks.causal(T, additive=True), reference.causal_mask(S))


def test_additive_is_zero_or_minus_inf():
    add = masks.sliding_window(6, 2, additive=True)
    assert add.dtype == np.float32
    assert set(np.unique(add).tolist()) == {0.0, -np.inf}
    assert np.array_equal(add == 0, masks.sliding_window(6, 2))
    assert masks.to_additive(masks.causal(3), dtype=np.float64).dtype == np.float64


def test_padding_batch_hides_pad_keys_and_pad_rows_give_zeros():
    T, lengths = 5, [5, 3, 1]
    visible = masks.padding(lengths, T)
    assert visible.shape == (3, T, T)
    for b, L in enumerate(lengths):
        expected = np.zeros((T, T), dtype=bool)
        expected[:L, :L] = True
        assert np.array_equal(visible[b], expected)
    S = np.stack([_scores(T, seed) for seed in range(3)])
    A = reference.softmax(masks.apply(S, masks.combine(visible, masks.causal(T))))
    assert not np.isnan(A).any()
    for b, L in enumerate(lengths):
        assert np.allclose(A[b, :L].sum(axis=-1), 1.0)
        assert (A[b, L:] == 0).all()        # padding rows: nothing visible, zeros
        assert (A[b, :, L:] == 0).all()     # nobody looks at padding
    assert masks.padding(np.array([0, 2], dtype=np.int64), 2)[0].sum() == 0


def test_sliding_window_sees_at_most_w_positions():
    T, w = 9, 3
    visible = masks.sliding_window(T, w)
    for i in range(T):
        assert list(np.flatnonzero(visible[i])) == list(range(max(0, i - w + 1), i + 1))
    assert np.array_equal(masks.sliding_window(T, T), masks.causal(T))
    assert np.array_equal(masks.sliding_window(T, 100), masks.causal(T))
    assert np.array_equal(masks.sliding_window(T, 1), np.eye(T, dtype=bool))


def test_prefix_lm_is_bidirectional_in_the_prefix_then_causal():
    T, p = 7, 3
    visible = masks.prefix_lm(T, p)
    assert visible[:p, :p].all()
    assert not visible[:p, p:].any()
    assert np.array_equal(visible[p:], masks.causal(T)[p:])
    assert np.array_equal(masks.prefix_lm(T, 0), masks.causal(T))
    assert np.array_equal(masks.prefix_lm(T, 1), masks.causal(T))
    assert masks.prefix_lm(T, T).all()


def test_combine_is_logical_and_with_broadcasting():
    T = 6
    both = masks.combine(masks.causal(T), masks.prefix_lm(T, 3))
    assert np.array_equal(both, masks.causal(T))
    batch = masks.combine(masks.padding([6, 4], T), masks.causal(T))
    assert batch.shape == (2, T, T)
    assert np.array_equal(batch[0], masks.causal(T))


@pytest.mark.parametrize("call, pattern", [
    (lambda: masks.causal(0), r"Argumen 'T' harus bilangan bulat >= 1.*0"),
    (lambda: masks.sliding_window(4, 0), r"Argumen 'w' harus bilangan bulat >= 1"),
    (lambda: masks.prefix_lm(4, 5), r"Argumen 'p' .*paling besar T = 4.*5"),
    (lambda: masks.prefix_lm(4, -1), r"Argumen 'p' harus bilangan bulat >= 0"),
    (lambda: masks.padding([3, 9], 5), r"Argumen 'lengths' .*lengths\[1\] = 9"),
    (lambda: masks.padding([[3]], 5), r"Argumen 'lengths' harus daftar satu dimensi"),
    (lambda: masks.padding([2.5], 5), r"Argumen 'lengths' harus berisi bilangan bulat"),
    (lambda: masks.apply(np.zeros((4, 4)), np.ones((4, 4))), r"Argumen 'visible' harus array boolean"),
    (lambda: masks.apply(np.zeros((3, 3)), masks.causal(4)), r"Bentuk 'S' \(3, 3\) dan mask \(4, 4\)"),
    (lambda: masks.apply(np.zeros((4, 4), dtype=int), masks.causal(4)), r"Argumen 'S' harus .*float"),
    (lambda: masks.combine(masks.causal(3), masks.causal(4)), r"Bentuk mask tidak cocok"),
    (lambda: masks.combine(), r"combine\(\) butuh.*Berikan misalnya"),
    (lambda: masks.combine(np.zeros((0, 0), bool)), r"'mask ke-0' harus berbentuk \(\.\.\., T, T\) dengan T >= 1"),
    (lambda: masks.combine(masks.causal(3), np.zeros((0, 0), bool)), r"'mask ke-1'.*\(0, 0\)"),
    (lambda: masks.combine(np.ones((2, 3), bool)), r"'mask ke-0'.*\(2, 3\)"),
    (lambda: masks.to_additive(np.zeros((0, 0), bool)), r"'visible'.*T >= 1"),
    (lambda: masks.apply(np.zeros((0, 0)), np.zeros((0, 0), bool)), r"'visible'.*T >= 1"),
])
def test_bad_arguments_get_indonesian_errors(call, pattern):
    with pytest.raises(ValueError, match=pattern):
        call()


@pytest.mark.parametrize("call, pattern", [
    (lambda: masks.causal(4.0), r"Argumen 'T' harus bilangan bulat.*4\.0"),
    (lambda: masks.causal(True), r"Argumen 'T' harus bilangan bulat"),
    (lambda: masks.sliding_window(4, "3"), r"Argumen 'w' harus bilangan bulat"),
    (lambda: masks.causal(4, additive="ya"), r"Argumen 'additive' harus bool"),
])
def test_wrong_types_get_indonesian_type_errors(call, pattern):
    with pytest.raises(TypeError, match=pattern):
        call()


# --- bad input: a clear Indonesian refusal, never garbage ------------------------------


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_apply_refuses_nan_and_plus_inf_scores(bad):
    S = np.zeros((3, 3), np.float32)
    S[1, 0] = bad
    with pytest.raises(ValueError, match=r"'S' berisi 1 nilai NaN atau \+inf"):
        masks.apply(S, masks.causal(3))


def test_apply_keeps_minus_inf_and_refuses_masked_arrays():
    S = np.zeros((3, 3))
    S[2, 0] = -np.inf
    assert masks.apply(S, masks.causal(3))[2, 0] == -np.inf
    with pytest.raises(TypeError, match="'S'.*masked array"):
        masks.apply(np.ma.masked_array(S, mask=np.eye(3, dtype=bool)), masks.causal(3))
    with pytest.raises(TypeError, match="'visible'.*masked array"):
        masks.apply(S, np.ma.masked_array(masks.causal(3)))


def test_ragged_lengths_are_refused_in_indonesian():
    with pytest.raises(ValueError, match="'lengths' harus daftar satu dimensi"):
        masks.padding([[1, 2], [3]], 4)


def test_huge_window_equals_the_causal_mask():
    assert (masks.sliding_window(5, 10**30) == masks.causal(5)).all()


@pytest.mark.parametrize("dtype", [np.int32, "bukan tipe", bool])
def test_to_additive_needs_a_float_dtype(dtype):
    with pytest.raises(TypeError, match="'dtype' harus tipe float"):
        masks.to_additive(masks.causal(3), dtype=dtype)


def test_to_additive_accepts_float_dtypes_by_name():
    out = masks.to_additive(masks.causal(2), dtype="float64")
    assert out.dtype == np.float64 and out[0, 1] == -np.inf and out[1, 0] == 0


@pytest.mark.parametrize("make", [
    lambda: masks.causal(200_000),
    lambda: masks.sliding_window(200_000, 3),
    lambda: masks.prefix_lm(200_000, 2),
    lambda: masks.padding([3] * 100, 20_000),
    lambda: masks.apply(np.zeros((1, 4, 4), np.float32),
                        np.broadcast_to(masks.causal(4), (10**9, 4, 4))),
])
def test_masks_beyond_memory_are_refused_before_allocating(make, monkeypatch):
    from atensi import memory

    monkeypatch.setattr(memory, "available_memory", lambda kind="numpy": 2e9)
    with pytest.raises(MemoryError, match="butuh sekitar.*Kecilkan T"):
        make()
