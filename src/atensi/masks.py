"""Ragam mask atensi, sebagai array boolean "boleh dilihat".

Setiap pembuat mask mengembalikan ``visible``: array boolean dengan
``visible[..., i, j] = True`` bila *query* posisi ``i`` boleh melihat *key*
posisi ``j``. Dengan ``additive=True`` hasilnya mask aditif: 0 di posisi yang
terlihat dan ``-inf`` di posisi yang ditutup, siap dijumlahkan ke skor.

    causal(T)                 j <= i                      (model decoder-only)
    padding(lengths, T)       i, j < panjang kalimat b    (satu batch, (B, T, T))
    sliding_window(T, w)      i - w < j <= i              (jendela geser lebar w)
    prefix_lm(T, p)           j <= i  atau  j < p         (awalan dua arah, lalu kausal)
    combine(m1, m2, ...)      boleh dilihat oleh semuanya (AND)
    apply(S, visible)         S dengan -inf di posisi yang ditutup
    to_additive(visible)      0 / -inf

Contoh::

    from atensi import masks, reference
    A = reference.softmax(masks.apply(S, masks.sliding_window(T, 3)))

Baris yang tidak melihat apa pun (misalnya *query* padding) menjadi baris
``-inf`` seluruhnya; ``reference.softmax`` memberi nol untuk baris itu.
"""

import numpy as np

from . import validation as _val
from .validation import check_flag, check_int

__all__ = ["causal", "padding", "sliding_window", "prefix_lm", "combine", "apply",
           "to_additive"]


def _finish(visible, additive):
    return to_additive(visible) if check_flag(additive, "additive") else visible


def causal(T, *, additive=False):
    """Mask kausal ``(T, T)``: posisi ``i`` melihat ``j <= i`` (diri sendiri dan masa lalu)."""
    T = check_int(T, "T")
    _val.check_mask_bytes(T * T, f"Mask kausal {T} × {T}", additive)
    return _finish(np.tril(np.ones((T, T), dtype=bool)), additive)


def padding(lengths, T, *, additive=False):
    """Mask *padding* untuk satu *batch* ``(B, T, T)``.

    ``lengths[b]`` adalah banyaknya *token* asli kalimat ``b``; posisi
    ``lengths[b]`` sampai ``T - 1`` adalah *padding* di ujung kanan. *Token*
    asli tidak melihat *padding*, dan baris *padding* tidak melihat apa pun
    (``visible`` seluruhnya False: *softmax* kita memberi nol di sana).
    Gabungkan dengan ``causal(T)`` lewat ``combine`` untuk model *decoder-only*.
    """
    T = check_int(T, "T")
    arr = _val.check_lengths(lengths, T)
    _val.check_mask_bytes(float(arr.size) * T * T, f"Mask padding {arr.size} × {T} × {T}", additive)
    real = np.arange(T)[None, :] < arr[:, None]  # (B, T): token asli?
    return _finish(real[:, :, None] & real[:, None, :], additive)


def sliding_window(T, w, *, additive=False):
    """Jendela geser kausal ``(T, T)``: posisi ``i`` melihat ``j`` dengan ``i - w < j <= i``.

    Setiap baris melihat paling banyak ``w`` posisi: dirinya sendiri dan
    ``w - 1`` posisi sebelumnya. ``w >= T`` sama dengan mask kausal.
    """
    T = check_int(T, "T")
    w = min(check_int(w, "w"), T)  # a wider window sees no more than the causal mask
    _val.check_mask_bytes(T * T, f"Mask jendela geser {T} × {T}", additive)
    i = np.arange(T)[:, None]
    j = np.arange(T)[None, :]
    return _finish((j <= i) & (j > i - w), additive)


def prefix_lm(T, p, *, additive=False):
    """Mask *prefix-LM* ``(T, T)``: awalan ``0..p-1`` saling melihat dua arah, sisanya kausal.

    ``visible[i, j] = (j <= i) or (j < p)``. ``p = 0`` dan ``p = 1`` sama
    dengan mask kausal; ``p = T`` membuka seluruh matriks.
    """
    T = check_int(T, "T")
    p = _val.check_prefix_length(p, T)
    _val.check_mask_bytes(T * T, f"Mask prefix-LM {T} × {T}", additive)
    i = np.arange(T)[:, None]
    j = np.arange(T)[None, :]
    return _finish((j <= i) | (j < p), additive)


def combine(*visibles):
    """Gabungan beberapa mask: posisi terlihat hanya bila terlihat di **semua** mask."""
    arrays = _val.check_masks(visibles)
    return np.logical_and.reduce(np.broadcast_arrays(*arrays))


def to_additive(visible, dtype=np.float32):
    """Mask aditif: 0 di posisi terlihat, ``-inf`` di posisi tertutup (``skor + mask``)."""
    visible = _val.check_visible(visible, "visible")
    dt = _val.check_float_dtype(dtype)
    return np.where(visible, dt.type(0), dt.type(-np.inf))


def apply(S, visible):
    """Salinan skor ``S`` dengan ``-inf`` di setiap posisi yang tidak terlihat."""
    visible = _val.check_visible(visible, "visible")
    S = _val.check_masked_scores(S, visible)
    return np.where(visible, S, S.dtype.type(-np.inf))
