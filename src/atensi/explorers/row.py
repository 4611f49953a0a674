"""Penjelajah baris demi baris (bab softmax dan jumlah_v): skor, bobot, campuran V.

Satu baris i dari delapan posisi dengan mask kausal: skornya (÷√d_k),
``softmax(skor / suhu)``, dan keluaran[i] = Σ_j bobot_j · V[j] di bidang d_k = 2.
"""

import functools

import numpy as np

from .. import measures, plots, style
from .. import validation as _val
from ..reference import causal_mask, scores, softmax, weighted_sum
from .framework import Explorer, Range, faces

NAME = "baris"
T = 8
D_K = 2  # two dimensions, so that every V[j] is a point in the plane
SEED = 3
# Five steps, about half a decade apart: enough to see sharp → flat, and each
# one is a prerendered frame per row in the book (8 rows × 5 temperatures).
TEMPERATURES = (0.1, 0.3, 1.0, 3.0, 10.0)


@functools.lru_cache(maxsize=4)
def _qkv(seed):
    """Q, K random; V spread around a circle so that the eight points stay apart
    and their labels readable (a teaching choice, not what training produces)."""
    rng = np.random.default_rng(seed)
    Q, K = (rng.standard_normal((T, D_K)).astype(np.float32) for _ in range(2))
    angle = 2 * np.pi * (np.arange(T) + rng.uniform(-0.2, 0.2, T)) / T
    radius = rng.uniform(0.7, 1.3, T)
    V = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
    S = causal_mask(scores(Q, K).astype(np.float64))
    return S, V, ((-1.75, 1.75), (-1.75, 1.75))


def state(row, temperature, seed=SEED):
    """Satu baris: skor (÷√d_k, dengan mask), ``softmax(skor / suhu)``, dan keluaran[row]."""
    seed = _val.check_int(seed, "seed", low=0)
    row = _val.check_int(row, "row", low=0, high=T - 1)
    # 0,001..1000: beyond that s / temperature over- or underflows (and the slider
    # spans 0,1..10); NaN, inf, strings and bools are refused by name.
    temperature = _val.check_number(temperature, "temperature", low=1e-3, high=1e3)
    S, V, limits = _qkv(seed)
    s = S[row]
    w = softmax(s / temperature)
    out = weighted_sum(w[None, :], V)[0]
    values = {"row": row, "temperature": temperature, "weights": w,
              "output": out, "p_max": float(w.max()), "entropy": float(measures.entropy(w))}
    return s, w, V, out, limits, values


def readout(v):
    """HTML bacaan untuk angka dari ``state``."""
    f = style.format_number
    i, w, out = v["row"], v["weights"], v["output"]
    terms = " + ".join(f"{f(w[j], 2)}·V[{j}]" for j in range(i + 1))
    return (f"<p><b>keluaran[{i}]</b> = {terms} = ({f(out[0], 2)}; {f(out[1], 2)})</p>"
            f"<p>Suhu {f(v['temperature'], 2)}: peluang terbesar {f(v['p_max'], 3)}; "
            f"entropi {f(v['entropy'], 3)} nat. Suhu 1 adalah atensi biasa; suhu kecil "
            "menajamkan, suhu besar meratakan.</p>")


def render(row, temperature):
    s, w, V, out, limits, values = state(row, temperature)
    fig = plots.row_figure(s, w, V, out, row=row, temperature=temperature, limits=limits)
    return fig, values, readout(values)


def _temperature(t):
    return f"suhu = {style.format_number(t, 1 if t < 1 else 0)}"


EXPLORER = Explorer(
    name=NAME, title="Baris demi baris",
    alt="Skor, bobot softmax dan campuran V untuk baris i",
    controls=(Range("row", "baris i", 0, T - 1, shown="i = {}"),
              Range("temperature", "suhu", 0.1, 10.0, step=0.05, log=True, book=TEMPERATURES,
                    shown=_temperature)),
    render=render, defaults={"row": 4, "temperature": 1.0})

explorer, live, static = faces(EXPLORER)
