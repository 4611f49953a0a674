"""Jenis-jenis ("rasa") mask atensi, sebagai array boolean "boleh dilihat".

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


def _positive_int(value, name, *, minimum=1):
    """Bilangan bulat >= ``minimum`` (bukan bool): TypeError/ValueError berbahasa Indonesia."""
    return check_int(value, name, low=minimum)


def _flag(value, name):
    return check_flag(value, name)


def _finish(visible, additive):
    return to_additive(visible) if _flag(additive, "additive") else visible


def _check_size(count: float, what: str, additive) -> None:
    """``count`` booleans (float32 too when additive) must fit in memory."""
    itemsize = 5 if additive is True else 1
    _val.check_output_bytes(float(count) * itemsize, what,
                            "Kecilkan T; untuk T besar pakai attention_blocked atau "
                            "kernel fused, yang tidak pernah membuat matriks (T, T).")


def causal(T, *, additive=False):
    """Mask kausal ``(T, T)``: posisi ``i`` melihat ``j <= i`` (diri sendiri dan masa lalu)."""
    T = _positive_int(T, "T")
    _check_size(T * T, f"Mask kausal {T} × {T}", additive)
    return _finish(np.tril(np.ones((T, T), dtype=bool)), additive)


def padding(lengths, T, *, additive=False):
    """Mask *padding* untuk satu *batch* ``(B, T, T)``.

    ``lengths[b]`` adalah banyaknya *token* asli kalimat ``b``; posisi
    ``lengths[b]`` sampai ``T - 1`` adalah *padding* di ujung kanan. *Token*
    asli tidak melihat *padding*, dan baris *padding* tidak melihat apa pun
    (``visible`` seluruhnya False: *softmax* kita memberi nol di sana).
    Gabungkan dengan ``causal(T)`` lewat ``combine`` untuk model *decoder-only*.
    """
    T = _positive_int(T, "T")
    _val._refuse_masked(lengths, "lengths")
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
    _check_size(float(arr.size) * T * T, f"Mask padding {arr.size} × {T} × {T}", additive)
    real = np.arange(T)[None, :] < arr[:, None]  # (B, T): token asli?
    return _finish(real[:, :, None] & real[:, None, :], additive)


def sliding_window(T, w, *, additive=False):
    """Jendela geser kausal ``(T, T)``: posisi ``i`` melihat ``j`` dengan ``i - w < j <= i``.

    Setiap baris melihat paling banyak ``w`` posisi: dirinya sendiri dan
    ``w - 1`` posisi sebelumnya. ``w >= T`` sama dengan mask kausal.
    """
    T = _positive_int(T, "T")
    w = min(_positive_int(w, "w"), T)  # a wider window sees no more than the causal mask
    _check_size(T * T, f"Mask jendela geser {T} × {T}", additive)
    i = np.arange(T)[:, None]
    j = np.arange(T)[None, :]
    return _finish((j <= i) & (j > i - w), additive)


def prefix_lm(T, p, *, additive=False):
    """Mask *prefix-LM* ``(T, T)``: awalan ``0..p-1`` saling melihat dua arah, sisanya kausal.

    ``visible[i, j] = (j <= i) or (j < p)``. ``p = 0`` dan ``p = 1`` sama
    dengan mask kausal; ``p = T`` membuka seluruh matriks.
    """
    T = _positive_int(T, "T")
    p = _positive_int(p, "p", minimum=0)
    if p > T:
        raise ValueError(
            f"Argumen 'p' (panjang awalan) paling besar T = {T}, tetapi yang diterima {p}."
        )
    _check_size(T * T, f"Mask prefix-LM {T} × {T}", additive)
    i = np.arange(T)[:, None]
    j = np.arange(T)[None, :]
    return _finish((j <= i) | (j < p), additive)


def _visible(visible, name):
    _val._refuse_masked(visible, name)
    arr = np.asarray(visible)
    if arr.dtype != bool:
        raise ValueError(
            f"Argumen '{name}' harus array boolean (True = boleh dilihat), tetapi tipenya "
            f"{arr.dtype}. Buat dengan masks.causal, masks.padding, masks.sliding_window "
            "atau masks.prefix_lm."
        )
    if arr.ndim < 2:
        raise ValueError(
            f"Argumen '{name}' harus berbentuk (..., T, T), tetapi bentuknya {arr.shape}."
        )
    return arr


def combine(*visibles):
    """Gabungan beberapa mask: posisi terlihat hanya bila terlihat di **semua** mask."""
    if not visibles:
        raise ValueError("combine() butuh paling sedikit satu mask.")
    arrays = [_visible(v, f"mask ke-{n}") for n, v in enumerate(visibles)]
    try:
        return np.logical_and.reduce(np.broadcast_arrays(*arrays))
    except ValueError:
        shapes = ", ".join(str(a.shape) for a in arrays)
        raise ValueError(
            f"Bentuk mask tidak cocok untuk digabung: {shapes}. Semua harus (..., T, T) "
            "dengan T yang sama."
        ) from None


def to_additive(visible, dtype=np.float32):
    """Mask aditif: 0 di posisi terlihat, ``-inf`` di posisi tertutup (``skor + mask``)."""
    visible = _visible(visible, "visible")
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt is None or dt.kind != "f":
        raise TypeError(
            f"Argumen 'dtype' harus tipe float (misalnya np.float32), karena -inf hanya ada "
            f"di float, tetapi yang diterima {dtype!r}."
        )
    return np.where(visible, dt.type(0), dt.type(-np.inf))


def apply(S, visible):
    """Salinan skor ``S`` dengan ``-inf`` di setiap posisi yang tidak terlihat."""
    visible = _visible(visible, "visible")
    _val._refuse_masked(S, "S")
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
    _val.check_output_bytes(float(np.prod(shape, dtype=float)) * S.dtype.itemsize,
                            f"Skor bermask {shape}", "Kecilkan T atau jumlah head/batch.")
    return np.where(visible, S, S.dtype.type(-np.inf))
