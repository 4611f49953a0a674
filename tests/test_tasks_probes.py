"""atensi.tasks.probes: the attention replacements every training task measures with."""

from __future__ import annotations

import numpy as np

from atensi import recall, reference
from atensi.model import Config, TinyGPT
from atensi.tasks import probes


def test_head_ablation_zeroes_exactly_one_head_of_one_layer():
    rng = np.random.default_rng(4)
    Q, K, V = (rng.standard_normal((2, 3, 5, 4)) for _ in range(3))
    full = reference.attention(Q, K, V, causal=True, scale=True)
    ablate = probes.HeadAblation(n_layer=2, layer=1, head=2)
    first = ablate(Q, K, V, causal=True, scale=True)  # layer 0: untouched
    second = ablate(Q, K, V, causal=True, scale=True)  # layer 1: head 2 zeroed
    assert np.array_equal(first, full)
    assert np.all(second[:, 2] == 0)
    keep = [0, 1]
    assert np.array_equal(second[:, keep], full[:, keep])


def test_uniform_attention_is_the_running_mean_and_its_gradient_is_right():
    rng = np.random.default_rng(5)
    Q, K, V, dO = (rng.standard_normal((2, 5, 3)) for _ in range(4))
    O = probes.uniform_attention(Q, K, V, causal=True, scale=True)
    assert np.allclose(O, np.cumsum(V, axis=-2) / np.arange(1, 6)[:, None])
    dQ, dK, dV = probes.uniform_attention_backward(Q, K, V, dO, causal=True, scale=True)
    assert not dQ.any() and not dK.any()
    eps, i = 1e-6, (1, 2, 0)
    Vp, Vm = V.copy(), V.copy()
    Vp[i] += eps
    Vm[i] -= eps
    numeric = ((probes.uniform_attention(Q, K, Vp, causal=True, scale=True)
                - probes.uniform_attention(Q, K, Vm, causal=True, scale=True)) * dO).sum() / (2 * eps)
    assert np.isclose(dV[i], numeric, rtol=1e-6)


def test_unmasked_attention_lets_the_first_position_see_the_last():
    rng = np.random.default_rng(6)
    Q, K, V, dO = (rng.standard_normal((4, 3)) for _ in range(4))
    O = probes.unmasked_attention(Q, K, V, causal=True, scale=True)
    assert np.allclose(O, reference.attention(Q, K, V, causal=False, scale=True))
    assert not np.allclose(O[0], V[0])  # with the mask, row 0 would be V[0] exactly
    grads = probes.unmasked_attention_backward(Q, K, V, dO, causal=True, scale=True)
    want = reference.attention_backward(Q, K, V, dO, causal=False, scale=True)
    assert all(np.allclose(g, w) for g, w in zip(grads, want))


def _small_word_model():
    config = Config(vocab=len(recall.VOCAB), T=recall.LENGTH - 1, d_model=8, n_head=2,
                    n_layer=2, d_mlp=16, seed=3)
    return TinyGPT(config, recall.VOCAB)


def test_mean_ablation_writes_the_heads_mean_for_every_row():
    model = _small_word_model()
    rows = recall.make_split(0, n_train=8, n_test=6).test
    means = probes.head_means(model, rows)
    assert len(means) == 2 and means[0].shape == (2, recall.LENGTH - 1, 4)
    ablate = probes.MeanAblation(2, 1, 0, means)
    rng = np.random.default_rng(7)
    Q, K, V = (rng.standard_normal((3, 2, recall.LENGTH - 1, 4)).astype(np.float32)
               for _ in range(3))
    full = reference.attention(Q, K, V, causal=True, scale=True)
    assert np.array_equal(ablate(Q, K, V, causal=True, scale=True), full)  # layer 0
    second = ablate(Q, K, V, causal=True, scale=True)  # layer 1: head 0 is its mean
    assert np.allclose(second[:, 0], means[1][0].astype(np.float32))
    assert np.array_equal(second[:, 1], full[:, 1])


def test_head_means_are_the_mean_of_what_the_head_writes():
    model = _small_word_model()
    rows = recall.make_split(0, n_train=8, n_test=5).test
    outputs = []

    def record(Q, K, V, *, causal, scale):
        O = reference.attention(Q, K, V, causal=causal, scale=scale)
        outputs.append(np.asarray(O))
        return O

    model.logits(rows[:, :-1], attention=record)
    means = probes.head_means(model, rows, chunk=2)  # in chunks: the same mean
    for layer, O in enumerate(outputs):
        assert np.allclose(means[layer], O.mean(axis=0), atol=1e-6)
