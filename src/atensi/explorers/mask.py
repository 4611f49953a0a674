"""Penjelajah mask (bab mask_kausal): empat jenis mask, T, penskalaan, baris i.

Gambar: heatmap skor (−∞ abu-abu) dan bobot; bacaan: posisi mana yang dilihat
baris i, bobot terbesarnya, dan jumlah tiap baris bobot. Setiap jenis adalah
mask decoder: *padding* dan awalan digabung dengan kausalitas, jendela geser
sudah kausal sendiri.
"""

import functools

import numpy as np

from .. import masks, measures, plots, style
from .. import validation as _val
from ..reference import causal_mask, scores, softmax
from .framework import Choice, Explorer, Range, Toggle, faces, static_png

NAME = "mask"
T_MAX = 32
D_K = 16
SEED = 1
KINDS = ("kausal", "padding", "jendela", "prefix")
KIND_LABELS = {"kausal": "kausal", "padding": "kausal + padding",
               "jendela": "jendela geser", "prefix": "prefix-LM"}
WINDOW = 3  # sliding window width w
BOOK_T = (4, 6, 8, 12, 16, 24, 32)
# The other kinds get two lengths only in the book: enough to see the pattern,
# and the twin stays small (each (kind, T) adds 4 pictures and 4·T readouts).
BOOK_T_KINDS = (8, 16)


@functools.lru_cache(maxsize=4)
def _qk(seed):
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((T_MAX, D_K)).astype(np.float32)
    K = rng.standard_normal((T_MAX, D_K)).astype(np.float32)
    return Q, K


def _params(kind, T):
    """Parameters of a kind for T positions: real length L, window w, prefix p."""
    return {"padding": {"L": T - max(1, T // 4)}, "jendela": {"w": WINDOW},
            "prefix": {"p": T // 2}}.get(kind, {})


def visible(kind, T):
    """Mask boolean ``(T, T)`` (True = boleh dilihat) untuk jenis ``kind``."""
    _val.check_choice(kind, KINDS, "kind")
    par = _params(kind, T)
    if kind == "padding":
        return masks.combine(masks.causal(T), masks.padding([par["L"]], T)[0])
    if kind == "jendela":
        return masks.sliding_window(T, par["w"])
    if kind == "prefix":
        return masks.prefix_lm(T, par["p"])
    return masks.causal(T)


def state(T, masked, scaled, row, seed=SEED, kind="kausal"):
    """Skor, bobot dan bacaan untuk T posisi (4..32), baris ``row``, jenis ``kind``."""
    seed = _val.check_int(seed, "seed", low=0)
    T = _val.check_int(T, "T", low=4, high=T_MAX)
    row = _val.check_int(row, "row", low=0, high=T - 1)
    masked = _val.check_flag(masked, "masked")
    scaled = _val.check_flag(scaled, "scaled")
    seen_mask = visible(kind, T)
    Q, K = _qk(seed)
    S = scores(Q[:T], K[:T], scale=scaled).astype(np.float64)
    if masked:
        S = causal_mask(S) if kind == "kausal" else masks.apply(S, seen_mask)
    A = softmax(S)
    seen = np.flatnonzero(np.isfinite(S[row]))
    values = {
        "T": T, "masked": masked, "scaled": scaled, "row": row,
        "kind": kind, **_params(kind, T),
        "seen": [int(j) for j in seen], "row_sums": A.sum(axis=-1),
        "p_max": float(A[row].max()), "entropy": float(measures.entropy(A[row])),
    }
    return S, A, values


def _span(js):
    """[3, 4, 5] -> '3–5'; [2] -> '2'."""
    return f"{js[0]}–{js[-1]}" if len(js) > 1 else f"{js[0]}"


def _sees(v):
    """The sentence 'row i sees ...' for the kinds other than causal."""
    T, i, seen, kind = v["T"], v["row"], v["seen"], v["kind"]
    if kind == "padding":
        L = v["L"]
        if i >= L:
            return (f"adalah <i>padding</i> (posisi {_span(list(range(L, T)))}): tidak melihat "
                    "apa pun, jadi seluruh bobotnya 0, bukan NaN")
        return (f"melihat posisi {_span(seen)} ({len(seen)} dari {T}); posisi "
                f"{_span(list(range(L, T)))} adalah <i>padding</i> dan tertutup")
    if kind == "jendela":
        return (f"melihat posisi {_span(seen)} ({len(seen)} dari {T}): jendela "
                f"w = {v['w']} berisi dirinya dan paling banyak {v['w'] - 1} posisi sebelumnya")
    p = v["p"]
    if i < p:
        return (f"ada di awalan (posisi 0–{p - 1}) dan melihat seluruh awalan dua arah, "
                f"termasuk posisi awalan sesudah dirinya ({len(seen)} dari {T})")
    return f"ada sesudah awalan dan melihat posisi {_span(seen)} ({len(seen)} dari {T}), kausal"


def readout(v, A):
    """HTML bacaan untuk angka dan bobot dari ``state``."""
    f = style.format_number
    T, i, seen = v["T"], v["row"], v["seen"]
    kind = v.get("kind", "kausal")
    if v["masked"] and kind != "kausal":
        sees, future = _sees(v), ""
    elif v["masked"]:
        future = (f"; posisi {i + 1}–{T - 1} adalah masa depan dan tertutup (−∞ → bobot 0)"
                  if i < T - 1 else "; tidak ada posisi masa depan untuk baris terakhir")
        sees = f"melihat posisi 0–{i} ({len(seen)} dari {T})" if i else "hanya melihat dirinya sendiri (posisi 0)"
    else:
        future = f", termasuk {T - 1 - i} posisi masa depan" if i < T - 1 else ""
        sees = f"melihat semua {T} posisi"
    top = sorted(seen, key=lambda j: -A[i, j])[:3]
    best = "; ".join(f"j={j}: {f(A[i, j], 2)}" for j in top)
    weights = (f"Bobot terbesar: {best}. Peluang terbesar {f(v['p_max'], 3)}; "
               f"entropi {f(v['entropy'], 3)} nat." if seen else "Tidak ada bobot: baris ini kosong.")
    sums = v["row_sums"]
    always = (" (1 untuk baris yang melihat sesuatu, 0 untuk baris <i>padding</i>)"
              if sums.min() < 0.5 else " (selalu 1)")
    title = f"Mask {KIND_LABELS[kind]}. " if v["masked"] else "Tanpa mask. "
    return (f"<p>{title}<b>Baris i = {i}</b> {sees}{future}.</p>"
            f"<p>{weights}</p>"
            f"<p>Jumlah tiap baris bobot: {f(sums.min(), 3)} sampai {f(sums.max(), 3)}"
            f"{always}.</p><p class='atensi-note'>Abu-abu: skor −∞ (tertutup). Merah/biru: "
            "skor positif/negatif. Bobot: putih = 0, biru tua = 1. Σ: jumlah tiap baris bobot. "
            "Bingkai oranye: baris i.</p>")


def render(kind, T, masked, scaled, row):
    """Live face: row i outlined in the figure itself."""
    S, A, values = state(T, masked, scaled, row, kind=kind)
    fig = plots.mask_figure(S, A, masked=masked, scaled=scaled, row=row)
    return fig, values, readout(values, A)


@functools.lru_cache(maxsize=None)
def _picture(kind, T, masked, scaled):
    """Book face: one picture per (kind, T, mask, scaling); row i is an outline over it."""
    S, A, _values = state(T, masked, scaled, 0, kind=kind)
    fig = plots.mask_figure(S, A, masked=masked, scaled=scaled, row=None)
    png = static_png(fig)
    return png, tuple(plots.row_outline_fractions(fig, r, T) for r in range(T))


def frame(kind, T, masked, scaled, row):
    png, boxes = _picture(kind, T, masked, scaled)
    _S, A, values = state(T, masked, scaled, row, kind=kind)
    return png, readout(values, A), boxes[row]


EXPLORER = Explorer(
    name=NAME, title="Penjelajah mask",
    alt="Heatmap skor dan bobot atensi dengan mask terpilih",
    controls=(
        Choice("kind", "jenis mask", KINDS, shown=KIND_LABELS.get, buttons=True),
        Range("T", "T", 4, T_MAX, book=BOOK_T, shown="T = {}"),
        Toggle("masked", "pakai mask"),
        Toggle("scaled", "bagi dengan √d_k"),
        Range("row", "baris i", 0, T_MAX - 1, shown="i = {}", limit=lambda v: v["T"] - 1),
    ),
    render=render, frame=frame,
    in_book=lambda kind, T, **_: kind == "kausal" or T in BOOK_T_KINDS,
    defaults={"kind": "kausal", "T": 8, "masked": True, "scaled": True, "row": 3})

explorer, live, static = faces(EXPLORER)
