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

from . import memory
from . import validation as _val
from .validation import check_flag, check_int

__all__ = ["causal", "padding", "sliding_window", "prefix_lm", "combine", "apply",
           "to_additive"]


def _finish(visible, additive):
    return to_additive(visible) if check_flag(additive, "additive") else visible


def causal(T, *, additive=False):
    """Mask kausal ``(T, T)``: posisi ``i`` melihat ``j <= i`` (diri sendiri dan masa lalu)."""
    T = check_int(T, "T")
    _check_mask_bytes(T * T, f"Mask kausal {T} × {T}", additive)
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
    arr = _check_lengths(lengths, T)
    _check_mask_bytes(float(arr.size) * T * T, f"Mask padding {arr.size} × {T} × {T}", additive)
    real = np.arange(T)[None, :] < arr[:, None]  # (B, T): token asli?
    return _finish(real[:, :, None] & real[:, None, :], additive)


def sliding_window(T, w, *, additive=False):
    """Jendela geser kausal ``(T, T)``: posisi ``i`` melihat ``j`` dengan ``i - w < j <= i``.

    Setiap baris melihat paling banyak ``w`` posisi: dirinya sendiri dan
    ``w - 1`` posisi sebelumnya. ``w >= T`` sama dengan mask kausal.
    """
    T = check_int(T, "T")
    w = min(check_int(w, "w"), T)  # a wider window sees no more than the causal mask
    _check_mask_bytes(T * T, f"Mask jendela geser {T} × {T}", additive)
    i = np.arange(T)[:, None]
    j = np.arange(T)[None, :]
    return _finish((j <= i) & (j > i - w), additive)


def prefix_lm(T, p, *, additive=False):
    """Mask *prefix-LM* ``(T, T)``: awalan ``0..p-1`` saling melihat dua arah, sisanya kausal.

    ``visible[i, j] = (j <= i) or (j < p)``. ``p = 0`` dan ``p = 1`` sama
    dengan mask kausal; ``p = T`` membuka seluruh matriks.
    """
    T = check_int(T, "T")
    p = _check_prefix_length(p, T)
    _check_mask_bytes(T * T, f"Mask prefix-LM {T} × {T}", additive)
    i = np.arange(T)[:, None]
    j = np.arange(T)[None, :]
    return _finish((j <= i) | (j < p), additive)


def combine(*visibles):
    """Gabungan beberapa mask: posisi terlihat hanya bila terlihat di **semua** mask."""
    arrays = _check_masks(visibles)
    return np.logical_and.reduce(np.broadcast_arrays(*arrays))


def to_additive(visible, dtype=np.float32):
    """Mask aditif: 0 di posisi terlihat, ``-inf`` di posisi tertutup (``skor + mask``)."""
    visible = _check_visible(visible, "visible")
    dt = _check_float_dtype(dtype)
    return np.where(visible, dt.type(0), dt.type(-np.inf))


def apply(S, visible):
    """Salinan skor ``S`` dengan ``-inf`` di setiap posisi yang tidak terlihat."""
    visible = _check_visible(visible, "visible")
    S = _check_masked_scores(S, visible)
    return np.where(visible, S, S.dtype.type(-np.inf))


# Argument checks of the functions above: each refuses before any memory is
# taken, with one Indonesian message that names the argument and the fix.


def _check_mask_bytes(count: float, what: str, additive) -> None:
    """``count`` booleans (and as many float32 when additive) must fit in memory."""
    itemsize = 5 if additive is True else 1
    memory.check_output_bytes(float(count) * itemsize, what,
                              "Kecilkan T; untuk T besar pakai attention_blocked atau "
                              "kernel fused, yang tidak pernah membuat matriks (T, T).")


def _check_prefix_length(p, T: int) -> int:
    """The prefix length of a prefix-LM mask: an int 0…T."""
    p = check_int(p, "p", low=0)
    if p > T:
        raise ValueError(
            f"Argumen 'p' (panjang awalan) paling besar T = {T}, tetapi yang diterima {p}."
        )
    return p


def _check_lengths(lengths, T: int) -> np.ndarray:
    """Padding lengths: a 1-D array of whole numbers 0…T, one per sentence."""
    _val.refuse_masked(lengths, "lengths")
    try:
        arr = np.asarray(lengths)
    except (ValueError, TypeError):
        arr = np.asarray(lengths, dtype=object)
    if arr.dtype == object:
        raise ValueError(
            f"Argumen 'lengths' harus daftar satu dimensi berisi satu bilangan bulat per "
            f"kalimat, tetapi yang diterima {lengths!r}. Contoh: lengths=[4, 2, 3]."
        )
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(
            f"Argumen 'lengths' harus daftar satu dimensi berisi panjang tiap kalimat, "
            f"tetapi bentuknya {arr.shape}. Contoh: lengths=[4, 2, 3]."
        )
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(
            f"Argumen 'lengths' harus berisi bilangan bulat, tetapi tipenya {arr.dtype}. "
            "Contoh: lengths=[4, 2, 3]."
        )
    bad = (arr < 0) | (arr > T)
    if bad.any():
        b = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"Argumen 'lengths' harus di antara 0 dan T = {T}, tetapi lengths[{b}] = "
            f"{int(arr[b])}. Perbesar T atau potong kalimatnya."
        )
    return arr


def _check_visible(visible, name: str) -> np.ndarray:
    """A boolean mask of shape (..., T, T) (True = may be seen)."""
    _val.refuse_masked(visible, name)
    arr = np.asarray(visible)
    if arr.dtype != bool:
        raise ValueError(
            f"Argumen '{name}' harus array boolean (True = boleh dilihat), tetapi tipenya "
            f"{arr.dtype}. Buat dengan masks.causal, masks.padding, masks.sliding_window "
            "atau masks.prefix_lm."
        )
    if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2] or arr.size == 0:
        raise ValueError(
            f"Argumen '{name}' harus berbentuk (..., T, T) dengan T >= 1 (satu baris dan satu "
            f"kolom per posisi), tetapi bentuknya {arr.shape}. Buat dengan masks.causal(T) "
            "atau fungsi mask lain di atensi.masks."
        )
    return arr


def _check_masks(visibles) -> list:
    """Masks to combine: at least one, each boolean, broadcastable together."""
    if not visibles:
        raise ValueError("combine() butuh paling sedikit satu mask. Berikan misalnya "
                         "combine(masks.causal(T), masks.padding(lengths, T)).")
    arrays = [_check_visible(v, f"mask ke-{n}") for n, v in enumerate(visibles)]
    try:
        np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        shapes = ", ".join(str(a.shape) for a in arrays)
        raise ValueError(
            f"Bentuk mask tidak cocok untuk digabung: {shapes}. Semua harus (..., T, T) "
            "dengan T yang sama."
        ) from None
    return arrays


def _check_float_dtype(dtype, name: str = "dtype") -> np.dtype:
    """A float dtype (where -inf exists)."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt is None or dt.kind != "f":
        raise TypeError(
            f"Argumen '{name}' harus tipe float (misalnya np.float32), karena -inf hanya ada "
            f"di float, tetapi yang diterima {dtype!r}."
        )
    return dt


def _check_masked_scores(S, visible):
    """Scores to mask: float (..., T, T), finite or -inf, broadcastable with ``visible``.

    Returns S as an array.
    """
    _val.refuse_masked(S, "S")
    S = np.asarray(S)
    if S.ndim < 2 or not np.issubdtype(S.dtype, np.floating):
        raise ValueError(
            f"Argumen 'S' harus array skor bertipe float berbentuk (..., T, T), tetapi "
            f"bentuknya {S.shape} dan tipenya {S.dtype}."
        )
    _val.check_finite(S, "S", allow_neg_inf=True)
    if S.shape[-2:] != visible.shape[-2:]:
        raise ValueError(
            f"Bentuk 'S' {S.shape} dan mask {visible.shape} tidak cocok: dua sumbu terakhir "
            "harus sama (T, T). Buat mask dengan T yang sama dengan S."
        )
    try:
        shape = np.broadcast_shapes(S.shape, visible.shape)
    except ValueError:
        raise ValueError(
            f"Bentuk 'S' {S.shape} dan mask {visible.shape} tidak bisa disiarkan bersama."
        ) from None
    memory.check_output_bytes(float(np.prod(shape, dtype=float)) * S.dtype.itemsize,
                              f"Skor bermask {shape}", "Kecilkan T atau jumlah head/batch.")
    return S
