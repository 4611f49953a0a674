"""Taman bermain 2-D: seret query *dia* (atau satu key) di bidang contoh berjalan.

Pembaca melihat seketika skor baris *dia*, baris itu setelah mask, batang
*softmax*, dan keluaran ``o_dia`` yang digambar di bidang yang sama; dua
sakelar menyalakan atau mematikan pembagian √d_k dan mask.

Pemakaian di bab (satu sel)::

    from atensi.explorers import playground
    playground.explorer()

Kontrolnya (``scale``, ``mask``, ``target``) dinyatakan sekali di ``EXPLORER``
dan diperiksa oleh kerangka (``atensi.explorers.framework``); seperti penjelajah
lain, ``ATENSI_BOOK`` menentukan bentuknya:

* tidak diset (Jupyter, Colab, VS Code): ``live()``, sebuah *anywidget*;
  halaman hanya menggambar dan mengirim vektor yang digeser, Python
  menghitung dengan ``atensi.reference``;
* ``ATENSI_BOOK=1`` (build buku): ``static()``, HTML dengan kembaran JavaScript
  dari rumus yang sama (``explorers/playground.js``) yang menghitung di
  halaman, tanpa bingkai yang digambar sebelumnya dan tanpa jaringan.

``compute(Q, K, V, row=..., scale=..., mask=...)`` adalah rumus yang dipakai
keduanya, untuk satu baris: skor, skor setelah mask, bobot, dan keluaran.
"""

import html
import itertools

import numpy as np

from .. import example, reference
from .. import validation as _val
from .framework import ASSETS, Choice, Explorer, Toggle, asset, faces, json_for_script

JS_PATH = ASSETS / "playground.js"
CSS_PATH = ASSETS / "playground.css"

ROW = example.PRONOUN  # the row on show: the pronoun "dia"
LIMITS = (-2.0, 4.0)  # both axes of the plane; a moved vector stays inside
STEP = 0.05  # a dragged point snaps to this grid, so the coordinates shown are the input
KEY_STEP = 0.1  # one arrow key press (Shift: five)
TITLE = "Taman bermain 2-D: query dia"
NAME = "playground"


def _targets():
    """What the reader can move: the query of "dia", or one key. Id as in the JS."""
    return [{"id": f"Q{ROW}", "label": f"query {example.TOKENS[ROW]}"}] + [
        {"id": f"K{j}", "label": f"key {token}"} for j, token in enumerate(example.TOKENS)]


def compute(Q, K, V, *, row=ROW, scale=True, mask=True):
    """Satu baris atensi, langkah demi langkah, dengan ``atensi.reference``.

    ``Q``, ``K``, ``V``: ``(T, d_k)``. Mengembalikan dict berisi ``scores``
    (baris ``row`` dari S), ``masked`` (baris itu setelah mask kausal, bila
    ``mask``), ``weights`` (softmax-nya) dan ``output`` (``o_row``), semuanya
    array NumPy dengan dtype masukan.
    """
    Q, K, V = _val.reference_qkv(Q, K, V)
    for x, name in ((Q, "Q"), (K, "K"), (V, "V")):
        if x.ndim != 2:
            raise ValueError(
                f"Argumen '{name}' harus matriks 2 dimensi (T, d_k), tetapi bentuknya "
                f"{x.shape}. Taman bermain menghitung satu head saja.")
    row = _val.check_int(row, "row", low=0, high=Q.shape[0] - 1)
    scale = _val.check_flag(scale, "scale")
    mask = _val.check_flag(mask, "mask")
    S = reference.scores(Q, K, scale=scale)
    masked = reference.causal_mask(S) if mask else S
    A = reference.softmax(masked)
    O = reference.weighted_sum(A, V)
    return {"scores": S[row], "masked": masked[row], "weights": A[row], "output": O[row]}


def check_vectors(M, name):
    """Q or K sent by the page: (T, 2) as in the example, finite, inside LIMITS."""
    if isinstance(M, (list, tuple)):
        try:
            M = np.asarray(M, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                f"Argumen '{name}' harus daftar {example.T} pasangan angka (x, y), tetapi yang "
                f"diterima {M!r}.") from None
    M = _val.as_float_array(M, name, min_ndim=2, layout="(T, d_k)")
    if M.shape != (example.T, example.d_k):
        raise ValueError(
            f"Argumen '{name}' harus berbentuk {(example.T, example.d_k)} seperti contoh "
            f"berjalan, tetapi bentuknya {M.shape}.")
    _val.check_finite(M, name)
    lo, hi = LIMITS
    if M.min() < lo or M.max() > hi:
        raise ValueError(
            f"Setiap angka di '{name}' harus di antara {lo:g} dan {hi:g} (batas bidang), "
            f"tetapi ada {float(M.min() if M.min() < lo else M.max()):g}. Geser titiknya "
            "ke dalam bidang.")
    return M.astype(np.float32)


def _result_json(result):
    """The dict the page draws; −∞ travels as null (JSON has no infinity)."""
    def floats(x):
        return [None if np.isneginf(v) else float(v) for v in np.asarray(x, dtype=np.float64)]
    return {key: floats(value) for key, value in result.items()}


def _data(scale, mask, target):
    Q, K, V = example.qkv()
    return {
        "title": TITLE, "tokens": list(example.TOKENS), "axes": list(example.AXES),
        "row": ROW, "Q": Q.tolist(), "K": K.tolist(), "V": V.tolist(),
        "limits": list(LIMITS), "step": STEP, "key_step": KEY_STEP,
        "targets": _targets(), "start": {"target": target, "scale": scale, "mask": mask},
    }


# ------------------------------------------------------------------ static

_instances = itertools.count(1)


class PlaygroundStatic:
    """Kembaran statis: HTML + CSS + modul JavaScript, menghitung di halaman.

    Akarnya ``<div class="atensi-playground" data-host="static">``; data contoh
    ada di ``script.atensi-playground-data``. Modulnya dijalankan setelah
    halaman selesai diurai (``type="module"`` selalu ditunda) dan membangun
    taman bermain saat ia mendekati layar.
    """

    def __init__(self, scale, mask, target):  # checked by EXPLORER
        self.scale, self.mask, self.target = scale, mask, target
        self.data = _data(self.scale, self.mask, self.target)
        self.element_id = f"atensi-playground-{next(_instances)}"

    def to_html(self):
        script, style = asset(JS_PATH.name), asset(CSS_PATH.name)
        payload = json_for_script(self.data)
        return (
            f'<div class="atensi-playground" id="{self.element_id}" data-host="static" '
            f'data-explorer="{NAME}">'
            f"<style>{style}</style>"
            f'<p class="atensi-pg-title">{html.escape(TITLE)}</p>'
            "<p>Taman bermain ini dibangun oleh JavaScript di halaman saat Anda "
            "menggulir ke sini.</p>"
            f'<script type="application/json" class="atensi-playground-data">{payload}</script>'
            f'<script type="module">{script}</script></div>'
        )

    def _repr_html_(self):
        return self.to_html()

    def __repr__(self):
        return f"<PlaygroundStatic {self.target}, scale={self.scale}, mask={self.mask}>"


# ------------------------------------------------------------------ live


def _live(scale, mask, target):
    """Taman bermain hidup di Jupyter: anywidget, dihitung oleh Python.

    Atribut ``Q``, ``K``, ``scale``, ``mask`` mengikuti halaman; setiap
    perubahan menghitung ulang ``result`` dengan ``compute``.
    """
    # Imported here: the book's static build never needs them.
    import anywidget
    import traitlets

    class Playground(anywidget.AnyWidget):
        _esm = JS_PATH
        _css = CSS_PATH
        data = traitlets.Dict().tag(sync=True)
        Q = traitlets.List().tag(sync=True)
        K = traitlets.List().tag(sync=True)
        scale = traitlets.Bool(True).tag(sync=True)
        mask = traitlets.Bool(True).tag(sync=True)
        result = traitlets.Dict().tag(sync=True)

        @traitlets.observe("Q", "K", "scale", "mask")
        def _recompute(self, _change=None):
            Q = check_vectors(self.Q, "Q")
            K = check_vectors(self.K, "K")
            self.result = _result_json(compute(Q, K, example.V, scale=self.scale, mask=self.mask))

    data = _data(scale, mask, target)
    widget = Playground(data=data, Q=data["Q"], K=data["K"], scale=scale, mask=mask)
    widget._recompute()
    return widget


EXPLORER = Explorer(
    name=NAME, title=TITLE,
    alt="Bidang dua dimensi contoh berjalan: query dia, key setiap kata, dan keluarannya",
    controls=(Toggle("scale", "bagi dengan √d_k"), Toggle("mask", "pakai mask"),
              Choice("target", "yang digeser", tuple(t["id"] for t in _targets()),
                     shown={t["id"]: t["label"] for t in _targets()}.get, menu=True,
                     hint=f"Q{ROW} = query {example.TOKENS[ROW]}, Kj = key ke-j")),
    defaults={"scale": True, "mask": True, "target": f"Q{ROW}"},
    live_face=_live, static_face=PlaygroundStatic)

explorer, live, static = faces(EXPLORER)
