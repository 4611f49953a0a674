"""Penjelajah ketajaman softmax terhadap d_k (bab skala_akar_dk).

Satu baris softmax atas ``KEYS`` dot product acak q·k_j, untuk d_k = 1 ... 4096,
dengan atau tanpa pembagian √d_k; bacaannya: peluang terbesar, entropi dan
norma Jacobian softmax, untuk baris yang digambar dan rata-rata ``ROWS`` baris.
"""

import functools
import math

import numpy as np

from .. import measures, plots, style
from .. import validation as _val
from ..reference import softmax
from .framework import Choice, Explorer, Guess, Toggle, faces

NAME = "ketajaman"
D_K_VALUES = tuple(2**e for e in range(13))  # 1 ... 4096
KEYS = 16  # keys in the softmax row
ROWS = 128  # random rows averaged in the readouts
SEED = 0


@functools.lru_cache(maxsize=4)
def _dots(seed):
    """Raw dot products q·k_j, (len(D_K_VALUES), rows, keys), float64.

    The vectors for d_k are the first d_k components of one set of 4096-dim
    vectors, so moving the slider adds dimensions to the same vectors.
    """
    rng = np.random.default_rng(seed)
    out = np.empty((len(D_K_VALUES), ROWS, KEYS))
    total = np.zeros((ROWS, KEYS))
    done = 0
    for n, d in enumerate(D_K_VALUES):
        q = rng.standard_normal((ROWS, 1, d - done), dtype=np.float32)
        k = rng.standard_normal((ROWS, KEYS, d - done), dtype=np.float32)
        total += np.einsum("rkc,rkc->rk", np.broadcast_to(q, k.shape), k, dtype=np.float64)
        out[n] = total
        done = d
    return out


def state(d_k, scale, seed=SEED):
    """Dot product ``(ROWS, KEYS)`` dan bacaan untuk satu ``d_k`` (pangkat dua 1..4096)."""
    seed = _val.check_int(seed, "seed", low=0)
    _val.check_choice(d_k, D_K_VALUES, "d_k")
    scale = _val.check_flag(scale, "scale")
    dots = _dots(seed)[D_K_VALUES.index(d_k)]
    if scale:
        dots = dots / math.sqrt(d_k)
    P = softmax(dots)  # every row of the table is one softmax row
    p_max, H, J = P.max(axis=-1), measures.entropy(P), measures.jacobian_norm(P)
    values = {
        "d_k": d_k, "scale": bool(scale), "spread": float(np.std(dots)),
        "p_max": float(p_max[0]), "entropy": float(H[0]), "jacobian": float(J[0]),
        "mean_p_max": float(p_max.mean()), "mean_entropy": float(H.mean()),
        "mean_jacobian": float(J.mean()),
    }
    return dots, values


def readout(v):
    """HTML bacaan untuk angka dari ``state``."""
    f = style.format_number
    root = math.sqrt(v["d_k"])
    how = f"dibagi √d_k = {f(root, 0 if root.is_integer() else 2)}" if v["scale"] else "tanpa pembagian"
    head = f"<b>d_k = {v['d_k']}</b>, {how}; simpangan baku dot product ≈ {f(v['spread'], 2)}"
    rows = [("Baris yang digambar", v["p_max"], v["entropy"], v["jacobian"]),
            (f"Rata-rata {ROWS} baris", v["mean_p_max"], v["mean_entropy"], v["mean_jacobian"])]
    body = "".join(
        f"<tr><th scope='row'>{name}</th><td>{f(a, 3)}</td><td>{f(b, 3)}</td><td>{f(c, 3)}</td></tr>"
        for name, a, b, c in rows)
    return (f"<p>{head}</p><table><thead><tr><th></th><th>peluang terbesar</th>"
            f"<th>entropi (nat)</th><th>‖J‖<sub>F</sub></th></tr></thead><tbody>{body}</tbody>"
            f"</table><p class='atensi-note'>Seragam: entropi {f(math.log(KEYS), 3)}; "
            "‖J‖<sub>F</sub> = norma Frobenius Jacobian softmax diag(p) − p pᵀ, "
            "mendekati 0 berarti gradien hilang.</p>")


def render(d_k, scale):
    dots, values = state(d_k, scale)
    limit = 5.0 if scale else 4.0 * math.sqrt(D_K_VALUES[-1])
    fig = plots.sharpness_figure(dots.ravel(), softmax(dots[0]), d_k=d_k, scale=scale, limit=limit)
    return fig, values, readout(values)


# "Tebak dulu": does the largest weight rise or fall when √d_k is switched?
# A change of the mean below STEADY counts as "hampir tetap" (d_k = 1: √1 = 1).
GUESS_CHOICES = ("naik", "turun", "hampir tetap")
STEADY = 0.02


def _switched(d_k, scale):
    """Readouts now and with the division by √d_k switched."""
    return state(d_k, scale)[1], state(d_k, not scale)[1]


def guess_question(d_k, scale):
    root = style.format_number(math.sqrt(d_k), 0 if math.sqrt(d_k).is_integer() else 2)
    now = f"dibagi √d_k = {root}" if scale else "tanpa pembagian"
    change = "pembagian dengan √d_k dihapus" if scale else f"skor dibagi √d_k = {root}"
    return (f"Sekarang d_k = {d_k}, {now}. Bila {change}, peluang terbesar "
            f"(rata-rata {ROWS} baris) akan …")


def guess_answer(d_k, scale):
    now, then = _switched(d_k, scale)
    change = then["mean_p_max"] - now["mean_p_max"]
    return 2 if abs(change) < STEADY else (0 if change > 0 else 1)


def guess_why(d_k, scale):
    f = style.format_number
    now, then = _switched(d_k, scale)
    numbers = (f"simpangan baku skor dari ≈ {f(now['spread'], 2)} menjadi ≈ {f(then['spread'], 2)}, "
               f"peluang terbesar dari {f(now['mean_p_max'], 2)} menjadi {f(then['mean_p_max'], 2)}")
    if abs(then["mean_p_max"] - now["mean_p_max"]) < STEADY:
        return f"Sebaran skor hampir tidak berubah, jadi softmax juga tidak: {numbers}."
    if then["spread"] < now["spread"]:
        return (f"Skor yang lebih rapat membuat softmax lebih merata, jadi tidak ada kunci yang "
                f"mendominasi: {numbers}.")
    return (f"Skor yang lebih renggang membuat softmax lebih tajam, satu kunci mengambil hampir "
            f"semua bobot: {numbers}.")


EXPLORER = Explorer(
    name=NAME, title="Ketajaman softmax terhadap d_k",
    alt="Sebaran dot product acak dan satu baris softmax untuk d_k terpilih",
    controls=(Choice("d_k", "d_k", D_K_VALUES, shown="d_k = {}"),
              Toggle("scale", "bagi dengan √d_k")),
    render=render, defaults={"d_k": 64, "scale": False},
    guess=Guess(guess_question, GUESS_CHOICES, guess_answer, guess_why,
                reveal=lambda d_k, scale: {"scale": not scale}))

explorer, live, static = faces(EXPLORER)
