"""Penjelajah RoPE: geser posisi, lihat q dan k berputar dan skornya tetap.

Dibangun di atas mesin ``atensi.widgets`` (kontrol, kembaran statis, bingkai)::

    from atensi import rope_explorer
    rope_explorer.rope()      # hidup di Jupyter, statis di buku (ATENSI_BOOK)

Vektornya dari contoh berjalan (:mod:`atensi.example`): *query* kata *dia*
dan *key* kata *Budi*, d_k = 2, jadi RoPE hanya punya satu pasangan yang
berputar satu radian per posisi. Kontrol: selisih ``i − j`` dan geseran
``c``; key berada di posisi ``j = c`` dan query di ``i = c + (i − j)``.
Skornya ``rope(q, i) · rope(k, j) / √2`` berubah bila selisihnya berubah,
dan tidak berubah sedikit pun bila hanya geserannya yang berubah.
"""

from __future__ import annotations

import math

import numpy as np

from . import example, plots, position_plots, widgets
from .reference import rope as _rope
from .widgets import Control, StaticExplorer, _check_choice, _frames, _resolve

NAME = "rope"
TITLE = "Penjelajah RoPE: posisi berputar, skor tetap"
QUERY_WORD, KEY_WORD = "dia", "Budi"
DELTAS = tuple(range(8))   # i − j in the live explorer
SHIFTS = tuple(range(16))  # c in the live explorer
STATIC_DELTAS = tuple(range(4))
STATIC_SHIFTS = tuple(range(5))
LIMIT = 3.6  # plane half-width: |q| = √5 ≈ 2,2 and |k| = 2 in the running example


def _vectors():
    Q, K, _V = example.qkv()
    return (Q[example.TOKENS.index(QUERY_WORD)].astype(np.float64),
            K[example.TOKENS.index(KEY_WORD)].astype(np.float64))


def _rotated(v, position):
    return _rope(v[None, :], offset=int(position))[0]


def rope_state(delta, shift, shifts=SHIFTS):
    """q, k, hasil putarannya dan skornya untuk ``i − j = delta`` dan geseran ``shift``.

    ``values["scores"]``: skor untuk setiap geseran di ``shifts`` dengan selisih
    yang sama (semuanya sama, sampai pembulatan).
    """
    _check_choice(delta, DELTAS, "delta")
    _check_choice(shift, tuple(shifts), "shift")
    q, k = _vectors()
    scale = 1.0 / math.sqrt(q.size)
    j, i = shift, shift + delta
    q_rot, k_rot = _rotated(q, i), _rotated(k, j)
    scores = np.array([float(_rotated(q, c + delta) @ _rotated(k, c)) * scale for c in shifts])
    values = {
        "delta": int(delta), "shift": int(shift), "i": int(i), "j": int(j),
        "q": q, "k": k, "q_rot": q_rot, "k_rot": k_rot,
        "score": float(q_rot @ k_rot) * scale, "plain_score": float(q @ k) * scale,
        "scores": scores, "shifts": tuple(shifts),
    }
    return values


def _text(v):
    f = plots.format_number
    i, j = v["i"], v["j"]
    spread = float(np.ptp(v["scores"]))
    same = ("tidak berbeda sama sekali (selisih terbesar di bawah 10⁻⁹)" if spread < 1e-9
            else f"berbeda paling banyak {f(spread, 6)}")
    return (f"<p><b>q</b> (<i>{QUERY_WORD}</i>) di posisi i = {i} diputar {i} rad, "
            f"<b>k</b> (<i>{KEY_WORD}</i>) di posisi j = {j} diputar {j} rad.</p>"
            f"<p>Skor (q diputar) · (k diputar) / √2 = <b>{f(v['score'], 3)}</b> untuk "
            f"i − j = {v['delta']}; tanpa RoPE {f(v['plain_score'], 3)}. Untuk setiap "
            f"geseran c = {v['shifts'][0]}…{v['shifts'][-1]} dengan selisih yang sama, skornya "
            f"{same}.</p>"
            "<p class='atensi-note'>Oranye: query, biru: key; putus-putus: vektor sebelum "
            "diputar. Menggeser c memutar keduanya dengan sudut yang sama, jadi sudut di "
            "antara keduanya, dan skornya, tidak berubah.</p>")


def _render(delta, shift, shifts=SHIFTS):
    v = rope_state(delta, shift, shifts)
    fig = position_plots.rope_plane_figure(
        v["q"], v["k"], v["q_rot"], v["k_rot"], i=v["i"], j=v["j"], shifts=v["shifts"],
        scores=v["scores"], shift=shift, limit=LIMIT, plain_score=v["plain_score"])
    return fig, v, _text(v)


def rope_static(delta=2, shift=0):
    """Kembaran statis: i − j = 0…3 × geseran c = 0…4, semua bingkai sudah digambar."""
    _check_choice(delta, STATIC_DELTAS, "delta")
    _check_choice(shift, STATIC_SHIFTS, "shift")
    controls = [
        Control("delta", "selisih i − j", "range", STATIC_DELTAS,
                tuple(f"i − j = {d}" for d in STATIC_DELTAS), STATIC_DELTAS.index(delta)),
        Control("shift", "geseran c", "range", STATIC_SHIFTS,
                tuple(f"c = {c}" for c in STATIC_SHIFTS), STATIC_SHIFTS.index(shift)),
    ]

    def render(d, c):
        fig, _values, text = _render(d, c, STATIC_SHIFTS)
        return fig, text, []

    frames, images = _frames(NAME, controls, render)
    return StaticExplorer(NAME, TITLE, controls, frames, images,
                          alt="Query dan key contoh berjalan sebelum dan sesudah diputar RoPE, "
                              "dan skornya untuk setiap geseran posisi")


def rope_explorer(delta=2, shift=0):
    """Penjelajah hidup (ipywidgets): selisih i − j dan geseran c."""
    _check_choice(delta, DELTAS, "delta")
    _check_choice(shift, SHIFTS, "shift")
    import ipywidgets as W

    controls = {
        "delta": W.IntSlider(value=delta, min=DELTAS[0], max=DELTAS[-1],
                             description="selisih i − j"),
        "shift": W.IntSlider(value=shift, min=SHIFTS[0], max=SHIFTS[-1],
                             description="geseran c"),
    }
    return widgets._build_live(NAME, TITLE, controls,
                               lambda delta, shift: _render(delta, shift))


def rope(mode=None, **start):
    """Penjelajah RoPE: hidup di Jupyter, statis bila ``ATENSI_BOOK`` diset."""
    if _resolve(mode) == "live":
        return rope_explorer(**start)
    return rope_static(**start)
