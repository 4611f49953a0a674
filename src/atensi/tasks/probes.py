"""Alat ukur yang dipasang pada model terlatih, dipakai semua tugas latih.

Setiap alat adalah pengganti ``reference.attention`` dengan tanda tangan yang
sama (``attention=`` pada ``model.logits`` dan ``model.loss_and_grads``):

    HeadAblation(n_layer, layer, head)        keluaran satu head (atau beberapa) dinolkan
    MeanAblation(n_layer, layer, head, means) keluaran satu head diganti rata-ratanya
    head_means(model, rows)                   rata-rata itu, per layer
    uniform_attention (+ _backward)           atensi yang tidak bisa memilih
    unmasked_attention (+ _backward)          atensi tanpa mask kausal

Model memanggil fungsi atensinya sekali per layer, berurutan, jadi panggilan
ke-n (dihitung modulo ``n_layer``) adalah layer n.
"""

from __future__ import annotations

import numpy as np

from .. import reference


def _numpy(a):
    return np.asarray(a.get() if hasattr(a, "get") else a)


class HeadAblation:
    """Pengganti ``reference.attention`` yang menolkan keluaran satu head (``head``
    bilangan bulat) atau beberapa head (list) di satu layer."""

    def __init__(self, n_layer, layer, head):
        self.n_layer, self.layer, self.head, self.calls = n_layer, layer, head, 0

    def __call__(self, Q, K, V, *, causal, scale):
        O = reference.attention(Q, K, V, causal=causal, scale=scale)
        if self.calls % self.n_layer == self.layer:
            O[:, self.head] = 0
        self.calls += 1
        return O


class _Recorder:
    """Attention that records each layer's output (for the mean of one head)."""

    def __init__(self):
        self.outputs = []

    def __call__(self, Q, K, V, *, causal, scale):
        O = reference.attention(Q, K, V, causal=causal, scale=scale)
        self.outputs.append(_numpy(O))
        return O


def head_means(model, rows, chunk=1000) -> list:
    """Keluaran rata-rata setiap head per posisi pada baris token ``rows`` (baris
    lengkap: masukannya semua token kecuali yang terakhir): satu array
    ``(n_head, T, d_k)`` per layer."""
    x = np.asarray(rows)[:, :-1]
    sums, n = None, 0
    for a in range(0, len(x), chunk):
        rec = _Recorder()
        model.logits(x[a:a + chunk], attention=rec)
        part = [O.sum(axis=0) for O in rec.outputs]
        sums = part if sums is None else [s + p for s, p in zip(sums, part)]
        n += len(x[a:a + chunk])
    return [s / n for s in sums]


class MeanAblation:
    """Pengganti ``reference.attention`` yang mengganti keluaran satu head di satu
    layer dengan keluaran rata-ratanya (``head_means``): head itu tetap menulis,
    tetapi hal yang sama untuk setiap kalimat."""

    def __init__(self, n_layer, layer, head, means):
        self.n_layer, self.layer, self.head, self.calls = n_layer, layer, head, 0
        self.mean = means[layer][head]

    def __call__(self, Q, K, V, *, causal, scale):
        O = reference.attention(Q, K, V, causal=causal, scale=scale)
        if self.calls % self.n_layer == self.layer:
            O[:, self.head] = self.mean[:O.shape[-2]].astype(O.dtype)
        self.calls += 1
        return O


def _uniform_weights(T, causal, dtype):
    if causal:
        return (np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]).astype(dtype)
    return np.full((T, T), 1.0 / T, dtype=dtype)


def uniform_attention(Q, K, V, *, causal, scale):
    """Atensi yang tidak bisa memilih: setiap posisi merata-ratakan V semua posisi
    yang boleh dilihatnya (dengan mask: posisi 0..i). Q dan K tidak dipakai."""
    return _uniform_weights(V.shape[-2], causal, V.dtype) @ V


def uniform_attention_backward(Q, K, V, dO, *, causal, scale):
    """Gradien ``uniform_attention``: hanya V yang berpengaruh, dV = Aᵀ dO."""
    A = _uniform_weights(V.shape[-2], causal, V.dtype)
    return np.zeros_like(Q), np.zeros_like(K), A.T @ dO


def unmasked_attention(Q, K, V, *, causal, scale):
    """Atensi tanpa mask kausal: setiap posisi juga melihat masa depan."""
    return reference.attention(Q, K, V, causal=False, scale=scale)


def unmasked_attention_backward(Q, K, V, dO, *, causal, scale):
    """Gradien ``unmasked_attention``."""
    return reference.attention_backward(Q, K, V, dO, causal=False, scale=scale)
