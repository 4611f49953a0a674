"""Penjelajah RoPE: geser posisi, lihat q dan k berputar dan skornya tetap.

Pemakaian di bab::

    from atensi.explorers import rope
    rope.explorer()      # hidup di Jupyter, statis di buku (ATENSI_BOOK)

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

from .. import example, position_plots, style
from .. import validation as _val
from ..reference import rope as _rope
from .framework import Explorer, Range, faces

NAME = "rope"
TITLE = "Penjelajah RoPE: posisi berputar, skor tetap"
QUERY_WORD, KEY_WORD = "dia", "Budi"
DELTAS = tuple(range(8))   # i − j in the live explorer
SHIFTS = tuple(range(16))  # c in the live explorer
BOOK_DELTAS = tuple(range(4))
BOOK_SHIFTS = tuple(range(5))
LIMIT = 3.6  # plane half-width: |q| = √5 ≈ 2,2 and |k| = 2 in the running example


def _vectors():
    Q, K, _V = example.qkv()
    return (Q[example.TOKENS.index(QUERY_WORD)].astype(np.float64),
            K[example.TOKENS.index(KEY_WORD)].astype(np.float64))


def _rotated(v, position):
    return _rope(v[None, :], offset=int(position))[0]


def state(delta, shift, shifts=SHIFTS):
    """q, k, hasil putarannya dan skornya untuk ``i − j = delta`` dan geseran ``shift``.

    ``values["scores"]``: skor untuk setiap geseran di ``shifts`` dengan selisih
    yang sama (semuanya sama, sampai pembulatan).
    """
    _val.check_choice(delta, DELTAS, "delta")
    _val.check_choice(shift, tuple(shifts), "shift")
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
    f = style.format_number
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


def render(delta, shift, shifts=SHIFTS):
    v = state(delta, shift, shifts)
    fig = position_plots.rope_plane_figure(
        v["q"], v["k"], v["q_rot"], v["k_rot"], i=v["i"], j=v["j"], shifts=v["shifts"],
        scores=v["scores"], shift=shift, limit=LIMIT, plain_score=v["plain_score"])
    return fig, v, _text(v)


def _book_frame(delta, shift):
    """The book's readout speaks of the shifts it offers, 0…4."""
    fig, _values, text = render(delta, shift, BOOK_SHIFTS)
    return fig, text, []


EXPLORER = Explorer(
    name=NAME, title=TITLE,
    alt="Query dan key contoh berjalan sebelum dan sesudah diputar RoPE, "
        "dan skornya untuk setiap geseran posisi",
    controls=(Range("delta", "selisih i − j", DELTAS[0], DELTAS[-1], book=BOOK_DELTAS,
                    shown="i − j = {}"),
              Range("shift", "geseran c", SHIFTS[0], SHIFTS[-1], book=BOOK_SHIFTS,
                    shown="c = {}")),
    render=render, frame=_book_frame, defaults={"delta": 2, "shift": 0})

explorer, live, static = faces(EXPLORER)
