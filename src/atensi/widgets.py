"""Penjelajah interaktif: hidup di Jupyter, dan kembaran statis untuk buku.

Pemakaian di bab (satu sel, satu panggilan)::

    from atensi import widgets
    widgets.sharpness()   # 1. Ketajaman softmax terhadap d_k (bab skala_akar_dk)
    widgets.mask()        # 2. Penjelajah mask (4 jenis)   (bab mask_kausal)
    widgets.row()         # 3. Baris demi baris            (bab softmax / jumlah_v)
    # atau: widgets.explorer("ketajaman" | "mask" | "baris")

Hidup atau statis? Ditentukan secara eksplisit oleh variabel lingkungan
``ATENSI_BOOK``:

* tidak ada (Jupyter, Colab, VS Code): kontrol ipywidgets yang menggambar
  ulang gambar setiap kali penggeser digeser (butuh kernel);
* ``ATENSI_BOOK=1``: kembaran statis, HTML + JavaScript mandiri dengan semua
  bingkai sudah digambar, bekerja di halaman buku tanpa kernel dan tanpa
  jaringan. Pada mode ini ipywidgets sama sekali tidak dibuat, sehingga
  halaman tidak berisi keadaan widget beku. Build buku menyetelnya sendiri
  lewat ekstensi ``_ext/static_explorers.py``, dan kernel yang menjalankan
  bab mewarisi lingkungan proses build.

Argumen ``mode="live"`` atau ``mode="static"`` mengalahkan variabel itu.
Fungsi langsung: ``sharpness_explorer()`` / ``sharpness_static()``, dan
pasangan yang sama untuk ``mask`` dan ``row``.

Penjelajah hidup adalah ``ipywidgets.VBox`` dengan atribut tambahan untuk
diuji atau dipakai dari kode: ``.controls`` (dict nama -> widget),
``.image`` (Image PNG), ``.readout`` (HTML), ``.values`` (angka bacaan
terakhir), ``.render_ms`` (lama gambar ulang terakhir, milidetik).

Kembaran statis (``StaticExplorer``) punya ``_repr_html_``; akarnya
``<div class="atensi-explorer" data-explorer="ketajaman|mask|baris">``.
Kontrol: ``input[data-control]``, nilai tampil: ``output[data-value-for]``,
gambar: ``img.atensi-frame`` (atribut ``data-frame`` = kunci bingkai),
bacaan: ``.atensi-readout``.
"""

import base64
import contextlib
import functools
import gc
import hashlib
import html
import itertools
import json
import math
import os
import time
from dataclasses import dataclass

import numpy as np

from . import masks, measures, plots, style
from . import validation as _val
from .reference import causal_mask, scores, softmax, weighted_sum

ENV_VAR = "ATENSI_BOOK"
NAMES = ("ketajaman", "mask", "baris")

# ------------------------------------------------------------------ data
# Each explorer is a pure "state -> (figure, numbers, text)" function; the live
# widget calls it on every change and the static twin calls it for every frame.

D_K_VALUES = tuple(2**e for e in range(13))  # 1 ... 4096
SHARP_KEYS = 16  # keys in the softmax row
SHARP_ROWS = 128  # random rows averaged in the readouts
SHARP_SEED = 0


@functools.lru_cache(maxsize=4)
def _sharpness_dots(seed=SHARP_SEED):
    """Raw dot products q·k_j, (len(D_K_VALUES), rows, keys), float64.

    The vectors for d_k are the first d_k components of one set of 4096-dim
    vectors, so moving the slider adds dimensions to the same vectors.
    """
    rng = np.random.default_rng(seed)
    out = np.empty((len(D_K_VALUES), SHARP_ROWS, SHARP_KEYS))
    total = np.zeros((SHARP_ROWS, SHARP_KEYS))
    done = 0
    for n, d in enumerate(D_K_VALUES):
        q = rng.standard_normal((SHARP_ROWS, 1, d - done), dtype=np.float32)
        k = rng.standard_normal((SHARP_ROWS, SHARP_KEYS, d - done), dtype=np.float32)
        total += np.einsum("rkc,rkc->rk", np.broadcast_to(q, k.shape), k, dtype=np.float64)
        out[n] = total
        done = d
    return out


def sharpness_state(d_k, scale, seed=SHARP_SEED):
    """Data dan bacaan penjelajah ketajaman untuk satu ``d_k`` (pangkat dua 1..4096)."""
    seed = _val.check_int(seed, "seed", low=0)
    if (isinstance(d_k, (bool, np.bool_)) or not isinstance(d_k, (int, np.integer))
            or d_k not in D_K_VALUES):
        raise ValueError(
            f"Argumen 'd_k' harus salah satu dari {D_K_VALUES}, tetapi yang diterima {d_k!r}."
        )
    scale = _val.check_flag(scale, "scale")
    dots = _sharpness_dots(seed)[D_K_VALUES.index(d_k)]
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


def _sharpness_text(v):
    f = style.format_number
    root = math.sqrt(v["d_k"])
    how = f"dibagi √d_k = {f(root, 0 if root.is_integer() else 2)}" if v["scale"] else "tanpa pembagian"
    head = f"<b>d_k = {v['d_k']}</b>, {how}; simpangan baku dot product ≈ {f(v['spread'], 2)}"

    rows = [("Baris yang digambar", v["p_max"], v["entropy"], v["jacobian"]),
            (f"Rata-rata {SHARP_ROWS} baris", v["mean_p_max"], v["mean_entropy"],
             v["mean_jacobian"])]
    body = "".join(
        f"<tr><th scope='row'>{name}</th><td>{f(a, 3)}</td><td>{f(b, 3)}</td><td>{f(c, 3)}</td></tr>"
        for name, a, b, c in rows)
    return (f"<p>{head}</p><table><thead><tr><th></th><th>peluang terbesar</th>"
            f"<th>entropi (nat)</th><th>‖J‖<sub>F</sub></th></tr></thead><tbody>{body}</tbody>"
            f"</table><p class='atensi-note'>Seragam: entropi {f(math.log(SHARP_KEYS), 3)}; "
            "‖J‖<sub>F</sub> = norma Frobenius Jacobian softmax diag(p) − p pᵀ, "
            "mendekati 0 berarti gradien hilang.</p>")


def _sharpness_render(d_k, scale):
    dots, values = sharpness_state(d_k, scale)
    limit = 5.0 if scale else 4.0 * math.sqrt(D_K_VALUES[-1])
    fig = plots.sharpness_figure(dots.ravel(), softmax(dots[0]), d_k=d_k, scale=scale,
                                 limit=limit)
    return fig, values, _sharpness_text(values)


MASK_T_MAX = 32
MASK_D_K = 16
MASK_SEED = 1


@functools.lru_cache(maxsize=4)
def _mask_qk(seed=MASK_SEED):
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((MASK_T_MAX, MASK_D_K)).astype(np.float32)
    K = rng.standard_normal((MASK_T_MAX, MASK_D_K)).astype(np.float32)
    return Q, K


# Kinds ("rasa") of mask the explorer offers. Each one is a decoder mask: padding
# and the prefix are combined with causality, the window is causal by itself.
MASK_KINDS = ("kausal", "padding", "jendela", "prefix")
MASK_KIND_LABELS = {"kausal": "kausal", "padding": "kausal + padding",
                    "jendela": "jendela geser", "prefix": "prefix-LM"}
MASK_WINDOW = 3  # sliding window width w


def _mask_params(kind, T):
    """Parameter jenis mask untuk T posisi: panjang asli L, lebar jendela w, awalan p."""
    return {"padding": {"L": T - max(1, T // 4)}, "jendela": {"w": MASK_WINDOW},
            "prefix": {"p": T // 2}}.get(kind, {})


def mask_visible(kind, T):
    """Mask boolean ``(T, T)`` (True = boleh dilihat) untuk jenis ``kind`` di penjelajah."""
    if not isinstance(kind, str) or kind not in MASK_KINDS:
        raise ValueError(f"Argumen 'kind' harus salah satu dari {MASK_KINDS}, "
                         f"tetapi yang diterima {kind!r}.")
    par = _mask_params(kind, T)
    if kind == "padding":
        return masks.combine(masks.causal(T), masks.padding([par["L"]], T)[0])
    if kind == "jendela":
        return masks.sliding_window(T, par["w"])
    if kind == "prefix":
        return masks.prefix_lm(T, par["p"])
    return masks.causal(T)


def mask_state(T, masked, scaled, row, seed=MASK_SEED, kind="kausal"):
    """Skor, bobot dan bacaan penjelajah mask untuk T posisi (4..32), baris ``row``, jenis ``kind``."""
    seed = _val.check_int(seed, "seed", low=0)
    if isinstance(T, bool) or not isinstance(T, (int, np.integer)) or not 4 <= T <= MASK_T_MAX:
        raise ValueError(f"Argumen 'T' harus bilangan bulat 4..{MASK_T_MAX}, tetapi yang diterima {T!r}.")
    if isinstance(row, bool) or not isinstance(row, (int, np.integer)) or not 0 <= row < T:
        raise ValueError(f"Argumen 'row' harus bilangan bulat 0..{T - 1}, tetapi yang diterima {row!r}.")
    masked = _val.check_flag(masked, "masked")
    scaled = _val.check_flag(scaled, "scaled")
    visible = mask_visible(kind, T)
    Q, K = _mask_qk(seed)
    S = scores(Q[:T], K[:T], scale=scaled).astype(np.float64)
    if masked:
        S = causal_mask(S) if kind == "kausal" else masks.apply(S, visible)
    A = softmax(S)
    seen = np.flatnonzero(np.isfinite(S[row]))
    values = {
        "T": int(T), "masked": bool(masked), "scaled": bool(scaled), "row": int(row),
        "kind": kind, **_mask_params(kind, T),
        "seen": [int(j) for j in seen], "row_sums": A.sum(axis=-1),
        "p_max": float(A[row].max()), "entropy": float(measures.entropy(A[row])),
    }
    return S, A, values


def _span(js):
    """[3, 4, 5] -> '3–5'; [2] -> '2'."""
    return f"{js[0]}–{js[-1]}" if len(js) > 1 else f"{js[0]}"


def _mask_sees(v):
    """Kalimat 'baris i melihat ...' untuk jenis mask selain kausal."""
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


def _mask_text(v, A):
    f = style.format_number
    T, i, seen = v["T"], v["row"], v["seen"]
    kind = v.get("kind", "kausal")
    if v["masked"] and kind != "kausal":
        sees, future = _mask_sees(v), ""
    elif v["masked"]:
        future = (f"; posisi {i + 1}–{T - 1} adalah masa depan dan tertutup (−∞ → bobot 0)"
                  if i < T - 1 else "; tidak ada posisi masa depan untuk baris terakhir")
        sees = f"melihat posisi 0–{i} ({len(seen)} dari {T})" if i else "hanya melihat dirinya sendiri (posisi 0)"
    else:
        future = f", termasuk {T - 1 - i} posisi masa depan" if i < T - 1 else ""
        sees = f"melihat semua {T} posisi"
    top = sorted(seen, key=lambda j: -A[i, j])[:3]
    best = ", ".join(f"j={j}: {f(A[i, j], 2)}" for j in top)
    weights = (f"Bobot terbesar: {best}. Peluang terbesar {f(v['p_max'], 3)}, "
               f"entropi {f(v['entropy'], 3)} nat." if seen else "Tidak ada bobot: baris ini kosong.")
    sums = v["row_sums"]
    always = (" (1 untuk baris yang melihat sesuatu, 0 untuk baris <i>padding</i>)"
              if sums.min() < 0.5 else " (selalu 1)")
    title = f"Mask {MASK_KIND_LABELS[kind]}. " if v["masked"] else "Tanpa mask. "
    return (f"<p>{title}<b>Baris i = {i}</b> {sees}{future}.</p>"
            f"<p>{weights}</p>"
            f"<p>Jumlah tiap baris bobot: {f(sums.min(), 3)} sampai {f(sums.max(), 3)}"
            f"{always}.</p><p class='atensi-note'>Abu-abu: skor −∞ (tertutup). Merah/biru: "
            "skor positif/negatif. Bobot: putih = 0, biru tua = 1. Σ: jumlah tiap baris bobot. "
            "Bingkai oranye: baris i.</p>")


def _mask_render(T, masked, scaled, row, outline=True, kind="kausal"):
    S, A, values = mask_state(T, masked, scaled, row, kind=kind)
    fig = plots.mask_figure(S, A, masked=masked, scaled=scaled, row=row if outline else None)
    return fig, values, _mask_text(values, A)


ROW_T = 8
ROW_D_K = 2  # two dimensions, so that every V[j] is a point in the plane
ROW_SEED = 3
# Five steps, about half a decade apart: enough to see sharp → flat, and each
# one is a prerendered frame per row in the book (8 rows × 5 temperatures).
TEMPERATURES = (0.1, 0.3, 1.0, 3.0, 10.0)


@functools.lru_cache(maxsize=4)
def _row_qkv(seed=ROW_SEED):
    """Q, K random; V spread around a circle so that the eight points stay apart
    and their labels readable (a teaching choice, not what training produces)."""
    rng = np.random.default_rng(seed)
    Q, K = (rng.standard_normal((ROW_T, ROW_D_K)).astype(np.float32) for _ in range(2))
    angle = 2 * np.pi * (np.arange(ROW_T) + rng.uniform(-0.2, 0.2, ROW_T)) / ROW_T
    radius = rng.uniform(0.7, 1.3, ROW_T)
    V = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
    S = causal_mask(scores(Q, K).astype(np.float64))
    return S, V, ((-1.75, 1.75), (-1.75, 1.75))


def row_state(row, temperature, seed=ROW_SEED):
    """Satu baris: skor (÷√d_k, dengan mask), ``softmax(skor / suhu)``, dan keluaran[row]."""
    seed = _val.check_int(seed, "seed", low=0)
    if isinstance(row, bool) or not isinstance(row, (int, np.integer)) or not 0 <= row < ROW_T:
        raise ValueError(f"Argumen 'row' harus bilangan bulat 0..{ROW_T - 1}, tetapi yang diterima {row!r}.")
    # 0,001..1000: beyond that s / temperature over- or underflows (and the slider
    # spans 0,1..10); NaN, inf, strings and bools are refused by name.
    temperature = _val.check_number(temperature, "temperature", low=1e-3, high=1e3)
    S, V, limits = _row_qkv(seed)
    s = S[row]
    w = softmax(s / temperature)
    out = weighted_sum(w[None, :], V)[0]
    values = {"row": int(row), "temperature": float(temperature), "weights": w,
              "output": out, "p_max": float(w.max()), "entropy": float(measures.entropy(w))}
    return s, w, V, out, limits, values


def _row_text(v):
    f = style.format_number
    i, w, out = v["row"], v["weights"], v["output"]
    terms = " + ".join(f"{f(w[j], 2)}·V[{j}]" for j in range(i + 1))
    return (f"<p><b>keluaran[{i}]</b> = {terms} = ({f(out[0], 2)}; {f(out[1], 2)})</p>"
            f"<p>Suhu {f(v['temperature'], 2)}: peluang terbesar {f(v['p_max'], 3)}, "
            f"entropi {f(v['entropy'], 3)} nat. Suhu 1 adalah atensi biasa; suhu kecil "
            "menajamkan, suhu besar meratakan.</p>")


def _row_render(row, temperature):
    s, w, V, out, limits, values = row_state(row, temperature)
    fig = plots.row_figure(s, w, V, out, row=row, temperature=temperature, limits=limits)
    return fig, values, _row_text(values)


# ------------------------------------------------------------------ live


def _live_mode():
    return os.environ.get(ENV_VAR, "").strip().lower() in ("", "0", "false", "no")


def _resolve(mode):
    if mode is None:
        return "live" if _live_mode() else "static"
    if mode not in ("live", "static"):
        raise ValueError(f"Argumen 'mode' harus 'live', 'static' atau None, tetapi yang diterima {mode!r}.")
    return mode


LIVE_DPI = 110


@contextlib.contextmanager
def _young_garbage_only():
    """No garbage collection while drawing, then collect only the young objects.

    A discarded Figure is a web of reference cycles. Left to the automatic
    collector, it is promoted and every few redraws a full collection adds
    100+ ms; collected young (a few ms) it never gets that far.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
        gc.collect(1)


def _build_live(name, title, controls, render):
    """VBox: judul, kontrol, gambar PNG, bacaan. ``render(**values)`` -> (fig, angka, html)."""
    import ipywidgets as W

    class Explorer(W.VBox):
        pass

    image = W.Image(format="png", layout=W.Layout(max_width="100%", height="auto"))
    readout = W.HTML()
    box = Explorer([W.HTML(f"<b>{html.escape(title)}</b>"), W.HBox(list(controls.values()),
                    layout=W.Layout(flex_flow="row wrap")), image, readout])
    box.add_class("atensi-live")
    box.name, box.controls, box.image, box.readout = name, controls, image, readout
    box.values, box.render_ms = {}, None

    @functools.lru_cache(maxsize=128)
    def draw(state):
        fig, values, text = render(**dict(state))
        return style.to_png(fig, dpi=LIVE_DPI, fast=True), values, text

    def redraw(_change=None):
        start = time.perf_counter()
        with _young_garbage_only():
            png, values, text = draw(tuple((k, c.value) for k, c in controls.items()))
        image.value = png
        readout.value = f"<div class='atensi-readout'>{text}</div>"
        box.values = values
        box.render_ms = 1000 * (time.perf_counter() - start)

    for control in controls.values():
        control.observe(redraw, names="value")
    box.redraw, box.cache = redraw, draw  # box.cache.cache_clear() to time a cold redraw
    redraw()
    return box


def _check_choice(value, choices, name):
    """``value`` must be one of ``choices`` (ints: a real int, not a bool or float)."""
    if (isinstance(value, (bool, np.bool_)) or isinstance(value, (float, np.floating))
            or isinstance(value, (list, dict, set, np.ndarray)) or value not in choices):
        shown = ", ".join(style.format_number(c, 2) if isinstance(c, float) else str(c)
                          for c in choices)
        raise ValueError(f"Argumen '{name}' harus salah satu dari {shown}, tetapi yang "
                         f"diterima {value!r}.")
    return value


def sharpness_explorer(d_k=64, scale=False):
    """Penjelajah hidup 1, ketajaman softmax terhadap d_k (ipywidgets)."""
    _check_choice(d_k, D_K_VALUES, "d_k")
    scale = _val.check_flag(scale, "scale")
    import ipywidgets as W

    controls = {
        "d_k": W.SelectionSlider(options=list(D_K_VALUES), value=d_k, description="d_k",
                                 continuous_update=True),
        "scale": W.Checkbox(value=scale, description="bagi dengan √d_k", indent=False),
    }
    return _build_live("ketajaman", "Ketajaman softmax terhadap d_k", controls,
                       lambda d_k, scale: _sharpness_render(d_k, scale))


def mask_explorer(T=8, masked=True, scaled=True, row=3, kind="kausal"):
    """Penjelajah hidup 2, mask (kausal, padding, jendela geser, prefix-LM; ipywidgets)."""
    _check_choice(T, tuple(range(4, MASK_T_MAX + 1)), "T")
    _check_choice(row, tuple(range(T)), "row")
    _check_choice(kind, MASK_KINDS, "kind")
    masked, scaled = _val.check_flag(masked, "masked"), _val.check_flag(scaled, "scaled")
    import ipywidgets as W

    controls = {
        "kind": W.Dropdown(options=[(MASK_KIND_LABELS[k], k) for k in MASK_KINDS], value=kind,
                           description="jenis mask"),
        "T": W.IntSlider(value=T, min=4, max=MASK_T_MAX, description="T"),
        "masked": W.Checkbox(value=masked, description="pakai mask", indent=False),
        "scaled": W.Checkbox(value=scaled, description="bagi dengan √d_k", indent=False),
        "row": W.IntSlider(value=row, min=0, max=T - 1, description="baris i"),
    }
    # Row i may not point past the last row when T shrinks.
    def clamp(change):
        controls["row"].max = change["new"] - 1

    controls["T"].observe(clamp, names="value")
    return _build_live("mask", "Penjelajah mask", controls,
                       lambda kind, T, masked, scaled, row: _mask_render(
                           T, masked, scaled, min(row, T - 1), kind=kind))


def row_explorer(row=4, temperature=1.0):
    """Penjelajah hidup 3, baris demi baris (ipywidgets)."""
    _check_choice(row, tuple(range(ROW_T)), "row")
    temperature = _val.check_number(temperature, "temperature", low=0.1, high=10.0)
    import ipywidgets as W

    controls = {
        "row": W.IntSlider(value=row, min=0, max=ROW_T - 1, description="baris i"),
        "temperature": W.FloatLogSlider(value=temperature, base=10, min=-1, max=1, step=0.05,
                                        description="suhu", readout_format=".2f"),
    }
    return _build_live("baris", "Baris demi baris", controls,
                       lambda row, temperature: _row_render(row, temperature))


# ------------------------------------------------------------------ static


@dataclass
class Control:
    """Satu kontrol kembaran statis: ``range`` atas daftar nilai, atau ``checkbox``."""

    key: str
    label: str
    kind: str  # "range" | "checkbox"
    values: tuple
    shown: tuple  # text shown for each value, e.g. "d_k = 256"
    start: int = 0


_CSS = """
.atensi-explorer{max-width:600px;margin:.5em 0 1em;padding:.6em;border:1px solid #d0d7de;
border-radius:6px;box-sizing:border-box;font-size:.9rem;line-height:1.35;overflow:hidden}
.atensi-explorer *{box-sizing:border-box}
.atensi-explorer .atensi-title{font-weight:600;margin-bottom:.3em}
.atensi-explorer .atensi-controls{display:flex;flex-wrap:wrap;gap:.3em 1em;margin-bottom:.4em}
.atensi-explorer .atensi-control{display:flex;align-items:center;gap:.4em;flex:1 1 15em;min-width:0}
.atensi-explorer .atensi-control.atensi-check{flex:0 1 auto}
.atensi-explorer .atensi-control span{white-space:nowrap}
.atensi-explorer input[type=range]{flex:1 1 auto;min-width:0;width:100%;min-height:24px}
.atensi-explorer output{min-width:6.5em;font-variant-numeric:tabular-nums;white-space:nowrap}
.atensi-explorer .atensi-figure{position:relative;width:100%}
.atensi-explorer img.atensi-frame{display:block;width:100%;max-width:100%;height:auto}
.atensi-explorer .atensi-mark{position:absolute;border:2px solid #e6550d;pointer-events:none}
.atensi-explorer .atensi-readout{margin-top:.3em;overflow-x:auto}
.atensi-explorer .atensi-readout p{margin:.2em 0}
.atensi-explorer .atensi-readout table{border-collapse:collapse;font-size:.85em;margin:.2em 0}
.atensi-explorer .atensi-readout th,.atensi-explorer .atensi-readout td{padding:.1em .4em;
text-align:right;border-bottom:1px solid #e1e4e8}
.atensi-explorer .atensi-readout th[scope=row]{text-align:left;font-weight:normal}
.atensi-explorer .atensi-note{font-size:.85em;opacity:.75}
"""

# Frames are looked up by the key "i,j,k" of control value indices. Earlier
# controls take precedence: a range offers only the values for which a frame
# exists given the controls before it (row i runs to T - 1, T is never limited
# by row i), and keeps its value if it can, else the largest one below.
_JS = """
(function(){
var root=document.getElementById(%(id)s);
var data=JSON.parse(root.querySelector('script.atensi-data').textContent);
var img=root.querySelector('img.atensi-frame'),out=root.querySelector('.atensi-readout');
var fig=root.querySelector('.atensi-figure');
var state=data.controls.map(function(c){return c.start;});
var inputs=data.controls.map(function(c){return root.querySelector('[data-control="'+c.key+'"]');});
function key(s){return s.join(',');}
var prefixes={};Object.keys(data.frames).forEach(function(k){var p=k.split(',');
 for(var n=1;n<=p.length;n++)prefixes[p.slice(0,n).join(',')]=true;});
function options(n){var r=[];for(var v=0;v<data.controls[n].values;v++){
 if(prefixes[key(state.slice(0,n).concat([v]))])r.push(v);}return r;}
function sync(){data.controls.forEach(function(c,n){
 var el=inputs[n];if(c.kind==='checkbox'){el.checked=state[n]===1;return;}
 var opts=options(n);if(opts.indexOf(state[n])<0){var best=opts[0];
  opts.forEach(function(v){if(v<=state[n])best=v;});state[n]=best;}
 el.max=opts.length-1;el.value=opts.indexOf(state[n]);el._opts=opts;
 root.querySelector('[data-value-for="'+c.key+'"]').textContent=c.shown[state[n]];});}
function show(){sync();var k=key(state),f=data.frames[k];
 img.src=data.urls?data.urls[f[0]]:'data:'+data.mime+';base64,'+data.images[f[0]];
 img.setAttribute('data-frame',k);
 out.innerHTML=f[1];Array.prototype.forEach.call(fig.querySelectorAll('.atensi-mark'),
 function(m){m.remove();});(f[2]||[]).forEach(function(b){var m=document.createElement('div');
 m.className='atensi-mark';m.style.left=(100*b[0])+'%%';m.style.top=(100*b[1])+'%%';
 m.style.width=(100*b[2])+'%%';m.style.height=(100*b[3])+'%%';fig.appendChild(m);});}
// In the published book the frames are files (_ext/fast_pages.py): fetched
// when the reader first touches this explorer, not with the page.
var fetched=false;function prefetch(){if(fetched||!data.urls)return;fetched=true;
 data.urls.forEach(function(u){var i=new Image();i.src=u;});}
['pointerdown','touchstart','focusin'].forEach(function(t){
 root.addEventListener(t,prefetch,{passive:true});});
inputs.forEach(function(el,n){function read(){
 state[n]=data.controls[n].kind==='checkbox'?(el.checked?1:0):el._opts[+el.value];show();}
 el.addEventListener('input',read);el.addEventListener('change',read);});
show();
})();
"""

_instances = itertools.count(1)


class StaticExplorer:
    """Penjelajah tanpa kernel: bingkai yang sudah digambar, dipilih oleh kontrol HTML.

    ``frames``: dict ``kunci -> (indeks gambar, html bacaan, kotak penanda)``, kunci
    berupa tuple indeks nilai tiap kontrol. ``images``: bytes PNG.
    """

    def __init__(self, name, title, controls, frames, images, alt, mime="image/png"):
        self.name, self.title, self.controls = name, title, list(controls)
        self.frames, self.images, self.alt, self.mime = frames, images, alt, mime
        start = tuple(c.start for c in self.controls)
        if start not in frames:
            raise ValueError(f"Bingkai awal {start} tidak ada di penjelajah '{name}'.")
        digest = hashlib.sha1(b"".join(images)).hexdigest()[:8]
        self.element_id = f"atensi-{name}-{digest}-{next(_instances)}"
        self._html = None

    def _controls_html(self, start):
        parts = []
        for c in self.controls:
            if c.kind == "checkbox":
                checked = " checked" if c.values[c.start] else ""
                parts.append(f'<label class="atensi-control atensi-check"><input type="checkbox" '
                             f'data-control="{c.key}"{checked}> {html.escape(c.label)}</label>')
            else:
                parts.append(f'<label class="atensi-control"><span>{html.escape(c.label)}</span>'
                             f'<input type="range" min="0" max="{len(c.values) - 1}" step="1" '
                             f'value="{c.start}" data-control="{c.key}" '
                             f'aria-label="{html.escape(c.label)}">'
                             f'<output data-value-for="{c.key}">{html.escape(c.shown[c.start])}'
                             "</output></label>")
        return "".join(parts)

    def to_html(self):
        if self._html is not None:
            return self._html
        start = tuple(c.start for c in self.controls)
        first = self.frames[start]
        images = [base64.b64encode(b).decode("ascii") for b in self.images]
        data = {
            "mime": self.mime, "images": images,
            "controls": [{"key": c.key, "kind": c.kind, "values": len(c.values),
                          "shown": list(c.shown), "start": c.start} for c in self.controls],
            "frames": {",".join(map(str, k)): [f[0], f[1], [[round(x, 5) for x in box] for box in f[2]]]
                       for k, f in self.frames.items()},
        }
        payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        payload = payload.replace("</", "<\\/").replace("<!--", "<\\!--")
        marks = "".join(
            f'<div class="atensi-mark" style="left:{100 * b[0]:.3f}%;top:{100 * b[1]:.3f}%;'
            f'width:{100 * b[2]:.3f}%;height:{100 * b[3]:.3f}%"></div>' for b in first[2])
        self._html = (
            f'<div class="atensi-explorer" id="{self.element_id}" data-explorer="{self.name}">'
            f"<style>{_CSS}</style>"
            f'<div class="atensi-title">{html.escape(self.title)}</div>'
            f'<div class="atensi-controls">{self._controls_html(start)}</div>'
            f'<div class="atensi-figure"><img class="atensi-frame" alt="{html.escape(self.alt)}" '
            f'data-frame="{",".join(map(str, start))}" '
            f'src="data:{self.mime};base64,{images[first[0]]}">{marks}</div>'
            f'<div class="atensi-readout" aria-live="polite">{first[1]}</div>'
            f'<script type="application/json" class="atensi-data">{payload}</script>'
            f"<script>{_JS % {'id': json.dumps(self.element_id)}}</script></div>"
        )
        return self._html

    def _repr_html_(self):
        return self.to_html()

    @property
    def nbytes(self):
        """Ukuran HTML penjelajah dalam byte (UTF-8)."""
        return len(self.to_html().encode("utf-8"))

    def __repr__(self):
        return (f"<StaticExplorer {self.name!r}: {len(self.frames)} bingkai, "
                f"{len(self.images)} gambar, {self.nbytes / 1e6:.2f} MB>")


STATIC_PALETTE = 64  # colours per frame; the figures are flat, 64 is indistinguishable


def _static_png(fig):
    return style.to_png(fig, dpi=style.STATIC_DPI, palette=STATIC_PALETTE)


_FRAMES = {}  # (explorer, control values) -> (frames, images): drawing takes seconds


def _frames(name, controls, render):
    """Draw every combination of control values; identical images are stored once."""
    cache_key = (name, tuple(c.values for c in controls))
    if cache_key in _FRAMES:
        return _FRAMES[cache_key]
    frames, images, index = {}, [], {}
    for key in itertools.product(*(range(len(c.values)) for c in controls)):
        with _young_garbage_only():
            result = render(*(c.values[k] for c, k in zip(controls, key)))
        if result is None:
            continue  # combination that does not exist (row i >= T)
        picture, text, boxes = result
        png = picture if isinstance(picture, bytes) else _static_png(picture)
        if png not in index:
            index[png] = len(images)
            images.append(png)
        frames[key] = (index[png], text, boxes)
    _FRAMES[cache_key] = frames, images
    return frames, images


def _checkbox(key, label, start):
    return Control(key, label, "checkbox", (False, True), ("tidak", "ya"), int(start))


def sharpness_static(d_k=64, scale=False):
    """Kembaran statis penjelajah 1: 13 nilai d_k (1..4096) × dengan/tanpa √d_k."""
    _check_choice(d_k, D_K_VALUES, "d_k")
    scale = _val.check_flag(scale, "scale")
    controls = [
        Control("d_k", "d_k", "range", D_K_VALUES,
                tuple(f"d_k = {d}" for d in D_K_VALUES),
                D_K_VALUES.index(d_k)),
        _checkbox("scale", "bagi dengan √d_k", scale),
    ]

    def render(d, s):
        fig, _values, text = _sharpness_render(d, s)
        return fig, text, []

    frames, images = _frames("ketajaman", controls, render)
    return StaticExplorer("ketajaman", "Ketajaman softmax terhadap d_k", controls, frames, images,
                          alt="Sebaran dot product acak dan satu baris softmax untuk d_k terpilih")


MASK_STATIC_T = (4, 6, 8, 12, 16, 24, 32)
# The other kinds get two lengths only: enough to see the pattern, and the twin
# stays small (each (kind, T) adds 4 pictures and 4·T readouts).
MASK_STATIC_T_KINDS = (8, 16)


def mask_static(T=8, masked=True, scaled=True, row=3, kind="kausal"):
    """Kembaran statis penjelajah 2: jenis mask, T, mask, penskalaan, baris i.

    Mask kausal: T ∈ {4, 6, 8, 12, 16, 24, 32}; jenis lain: T ∈ {8, 16}.
    """
    _check_choice(kind, MASK_KINDS, "kind")
    _check_choice(T, MASK_STATIC_T, "T")
    _check_choice(row, tuple(range(T)), "row")
    masked, scaled = _val.check_flag(masked, "masked"), _val.check_flag(scaled, "scaled")
    controls = [
        Control("kind", "jenis mask", "range", MASK_KINDS,
                tuple(MASK_KIND_LABELS[k] for k in MASK_KINDS), MASK_KINDS.index(kind)),
        Control("T", "T", "range", MASK_STATIC_T, tuple(f"T = {t}" for t in MASK_STATIC_T),
                MASK_STATIC_T.index(T)),
        _checkbox("masked", "pakai mask", masked),
        _checkbox("scaled", "bagi dengan √d_k", scaled),
        Control("row", "baris i", "range", tuple(range(MASK_T_MAX)),
                tuple(f"i = {i}" for i in range(MASK_T_MAX)), row),
    ]
    # The picture depends on (kind, T, mask, scaling); row i is an outline drawn over it.
    pictures = {}

    def render(k, t, m, s, i):
        if i >= t or (k != "kausal" and t not in MASK_STATIC_T_KINDS):
            return None
        if (k, t, m, s) not in pictures:
            fig, _v, _t = _mask_render(t, m, s, 0, outline=False, kind=k)
            png = _static_png(fig)
            pictures[(k, t, m, s)] = (png, [plots.row_outline_fractions(fig, r, t) for r in range(t)])
        png, boxes = pictures[(k, t, m, s)]
        _S, A, values = mask_state(t, m, s, i, kind=k)
        return png, _mask_text(values, A), boxes[i]

    frames, images = _frames("mask", controls, render)
    return StaticExplorer("mask", "Penjelajah mask", controls, frames, images,
                          alt="Heatmap skor dan bobot atensi dengan mask terpilih")


def row_static(row=4, temperature=1.0):
    """Kembaran statis penjelajah 3: baris i = 0..7 × suhu ∈ {0,1; 0,3; 1; 3; 10}."""
    _check_choice(row, tuple(range(ROW_T)), "row")
    if isinstance(temperature, (bool, np.bool_)) or temperature not in TEMPERATURES:
        raise ValueError(
            f"Argumen 'temperature' harus salah satu dari "
            f"{', '.join(style.format_number(t, 1) for t in TEMPERATURES)}, tetapi yang "
            f"diterima {temperature!r}."
        )
    controls = [
        Control("row", "baris i", "range", tuple(range(ROW_T)),
                tuple(f"i = {i}" for i in range(ROW_T)), row),
        Control("temperature", "suhu", "range", TEMPERATURES,
                tuple(f"suhu = {style.format_number(t, 1 if t < 1 else 0)}" for t in TEMPERATURES),
                TEMPERATURES.index(temperature)),
    ]

    def render(i, t):
        fig, _values, text = _row_render(i, t)
        return fig, text, []

    frames, images = _frames("baris", controls, render)
    return StaticExplorer("baris", "Baris demi baris", controls, frames, images,
                          alt="Skor, bobot softmax dan campuran V untuk baris i")


# ------------------------------------------------------------------ choice

_BUILDERS = {
    "ketajaman": (sharpness_explorer, sharpness_static),
    "mask": (mask_explorer, mask_static),
    "baris": (row_explorer, row_static),
}


def explorer(name, mode=None):
    """Penjelajah ``name`` (``"ketajaman"``, ``"mask"``, ``"baris"``), hidup atau statis.

    ``mode=None``: statis bila ``ATENSI_BOOK`` diset (build buku), hidup bila tidak.
    """
    if not isinstance(name, str) or name not in _BUILDERS:
        raise ValueError(f"Argumen 'name' harus salah satu dari {NAMES}, tetapi yang diterima {name!r}.")
    live, static = _BUILDERS[name]
    return live() if _resolve(mode) == "live" else static()


def sharpness(mode=None):
    """Penjelajah 1, ketajaman softmax terhadap d_k (lihat ``explorer``)."""
    return explorer("ketajaman", mode)


def mask(mode=None):
    """Penjelajah 2, mask kausal (lihat ``explorer``)."""
    return explorer("mask", mode)


def row(mode=None):
    """Penjelajah 3, baris demi baris (lihat ``explorer``)."""
    return explorer("baris", mode)
