"""Penjelajah peta atensi model kecil yang sudah dilatih: kalimat, layer, head.

Dibangun di atas mesin ``atensi.widgets`` (kontrol, kembaran statis, bingkai):

    from atensi import model_explorer
    model_explorer.attention_maps(model)   # hidup di Jupyter, statis di buku

Gambar: bobot atensi A satu head untuk satu kalimat, dengan karakter
kalimat sebagai label sumbu (baris: *query*, kolom: *key*). Bacaan di bawah
gambar menyebut, untuk head itu, berapa rata-rata bobot yang jatuh ke
karakter sebelumnya, ke dirinya sendiri, dan ke awal kata.
"""

from __future__ import annotations

import html

import math

import numpy as np

from . import plots, style, widgets
from . import validation as _val
from .widgets import Control, StaticExplorer, _frames, _resolve

SENTENCES = (
    "Budi bilang dia lapar.",
    "Setiap posisi melihat masa lalu.",
    'Ia berkata "saya lapar".',
)
NAME = "peta-atensi"
TITLE = "Peta atensi model kecil: kalimat, layer, head"
WORD_TITLE = "Peta atensi model kata: cerita, layer, head"


def _shown(text):
    return {" ": "␣", "\n": "⏎"}.get(text, text)


def head_summary(A, text):
    """Rata-rata bobot per pola untuk satu peta ``A`` (T, T) dan teksnya.

    ``sebelumnya``: bobot baris i ke posisi i−1; ``dua_sebelumnya``: ke i−2;
    ``diri``: ke i sendiri (rata-rata atas baris i ≥ 2). ``awal_kata``: ke
    huruf pertama kata tempat posisi i berada, hanya untuk baris yang huruf
    pertamanya lebih jauh dari i−1 (supaya tidak tercampur dengan
    ``sebelumnya``).
    """
    if not isinstance(text, str):
        raise TypeError(f"Argumen 'text' harus str, bukan {type(text).__name__}.")
    A = _val.as_float_array(A, "A", layout="(T, T)")
    _val.check_finite(A, "A")
    A = np.asarray(A, dtype=np.float64)
    T = len(text)
    if T < 3:
        raise ValueError(f"Argumen 'text' terlalu pendek ({T} karakter): perlu paling sedikit 3.")
    if A.shape != (T, T):
        raise ValueError(f"Argumen 'A' harus berbentuk ({T}, {T}) untuk teks sepanjang {T}, "
                         f"tetapi yang diterima {A.shape}.")
    rows = np.arange(2, T)
    starts = np.zeros(T, dtype=int)
    for i in range(1, T):
        starts[i] = i if text[i - 1] == " " else starts[i - 1]
    word = [A[i, starts[i]] for i in rows if starts[i] < i - 1]
    return {
        "sebelumnya": float(A[rows, rows - 1].mean()),
        "dua_sebelumnya": float(A[rows, rows - 2].mean()),
        "diri": float(A[rows, rows].mean()),
        "awal_kata": float(np.mean(word)) if word else 0.0,
    }


def word_head_summary(A, words):
    """Rata-rata bobot per pola untuk model kata: ``A`` (T, T) dan daftar katanya.

    ``sebelumnya``, ``dua_sebelumnya``, ``diri``: seperti ``head_summary``.
    ``kata_sama``: jumlah bobot ke kemunculan sebelumnya dari kata yang sama,
    rata-rata atas baris yang katanya sudah pernah muncul.
    """
    A = np.asarray(A, dtype=np.float64)
    T = len(words)
    if A.shape != (T, T) or T < 3:
        raise ValueError(f"Peta 'A' harus berbentuk ({T}, {T}) untuk {T} kata (paling sedikit "
                         f"3), tetapi {A.shape}.")
    rows = np.arange(2, T)
    same = [sum(A[i, j] for j in range(i) if words[j] == words[i])
            for i in range(T) if words[i] in words[:i]]
    return {
        "sebelumnya": float(A[rows, rows - 1].mean()),
        "dua_sebelumnya": float(A[rows, rows - 2].mean()),
        "diri": float(A[rows, rows].mean()),
        "kata_sama": float(np.mean(same)) if same else 0.0,
    }


def _tokens(model, sentence):
    """Label sumbu: karakter (model karakter) atau kata (model kata)."""
    return sentence.split() if getattr(model, "words", False) else sentence


def attention_figure(A, text, *, title=None):
    """Heatmap satu head ``A`` (T, T); label kedua sumbu: karakter teks, atau
    daftar kata untuk model kata."""
    T = len(text)
    labels = [_shown(c) for c in text]
    words = any(len(c) > 1 for c in labels)  # word labels: room on the left, upright on top
    fig = style.new_figure(4.2, 4.3)
    ax = fig.add_axes([0.17, 0.03, 0.76, 0.7] if words else [0.08, 0.03, 0.78, 0.78])
    plots.draw_heatmap(ax, A, cmap="Blues", vmin=0, vmax=1, annotate=False,
                       xlabel=None, ylabel=None)
    # Every character while they fit at SMALL points, otherwise every step-th one:
    # smaller letters would be unreadable on a phone.
    step = max(1, math.ceil(T * style.SMALL / 260))
    ticks = range(0, T, step)
    ax.set_xticks(ticks)
    ax.set_yticks(ticks)
    ax.set_xticklabels([labels[t] for t in ticks], fontsize=style.SMALL, family="monospace",
                       rotation=90 if words else 0)
    ax.set_yticklabels([labels[t] for t in ticks], fontsize=style.SMALL, family="monospace")
    ax.xaxis.tick_top()
    ax.tick_params(length=0, pad=1)
    if title:
        fig.text(0.02, 0.985, title, fontsize=style.FONT, va="top")
    fig.text(0.02, 0.93, "kolom: key yang dilihat →   baris: query ↓",
             fontsize=style.SMALL, va="top", color="#555555")
    return fig


def _maps(model, sentences):
    return {s: np.asarray(model.attention_maps(s), dtype=np.float64) for s in sentences}


def _word_text(summary, layer, head, sentence):
    f = style.format_number
    return (f"<p>Cerita: <q>{html.escape(sentence)}</q></p>"
            f"<p><b>Layer {layer + 1}, head {head + 1}</b>: rata-rata bobot ke kata "
            f"sebelumnya {f(summary['sebelumnya'], 2)}, ke dua kata sebelumnya "
            f"{f(summary['dua_sebelumnya'], 2)}, ke dirinya sendiri {f(summary['diri'], 2)}, "
            f"ke kata yang sama yang sudah muncul sebelumnya {f(summary['kata_sama'], 2)}.</p>"
            "<p class='atensi-note'>Baris: posisi <i>query</i> (kata yang sedang menebak "
            "kata berikutnya); kolom: <i>key</i> yang dilihatnya. Di atas diagonal selalu 0: "
            "mask kausal.</p>")


def _text(summary, layer, head, sentence):
    f = style.format_number
    return (f"<p>Kalimat: <q>{html.escape(sentence)}</q></p>"
            f"<p><b>Layer {layer + 1}, head {head + 1}</b>: rata-rata bobot ke karakter "
            f"sebelumnya {f(summary['sebelumnya'], 2)}, ke dua karakter sebelumnya "
            f"{f(summary['dua_sebelumnya'], 2)}, ke dirinya sendiri {f(summary['diri'], 2)}, "
            f"ke huruf pertama katanya {f(summary['awal_kata'], 2)}.</p>"
            "<p class='atensi-note'>Baris: posisi <i>query</i> (karakter yang sedang menebak "
            "karakter berikutnya); kolom: <i>key</i> yang dilihatnya. ␣ = spasi. Di atas "
            "diagonal selalu 0: mask kausal.</p>")


def _render(maps, sentence, layer, head, words=False):
    A = maps[sentence][layer, head]
    tokens = sentence.split() if words else sentence
    fig = attention_figure(A, tokens, title=f"layer {layer + 1}, head {head + 1}")
    if words:
        summary = word_head_summary(A, tokens)
        return fig, summary, _word_text(summary, layer, head, sentence)
    summary = head_summary(A, sentence)
    return fig, summary, _text(summary, layer, head, sentence)


def _check_start(model, sentences, sentence, layer, head):
    """Everything the explorer needs, before any map is computed or drawn.

    Returns the sentences as a tuple. Indices are 0-based, each named in its
    message (the live sliders would silently clamp an index out of range).
    """
    from .model import TinyGPT

    if not isinstance(model, TinyGPT):
        raise TypeError(f"Argumen 'model' harus atensi.model.TinyGPT (misalnya "
                        f"TinyGPT.load(...)), bukan {type(model).__name__}.")
    if isinstance(sentences, str) or not isinstance(sentences, (tuple, list)) or not sentences:
        raise TypeError(f"Argumen 'sentences' harus tuple atau list berisi kalimat (str), "
                        f"bukan {sentences!r:.80}. Untuk satu kalimat: sentences=(kalimat,).")
    for n, s in enumerate(sentences):
        if not isinstance(s, str):
            raise TypeError(f"sentences[{n}] harus str, bukan {type(s).__name__}.")
        unit = "kata" if getattr(model, "words", False) else "karakter"
        n_tokens = len(_tokens(model, s))
        if n_tokens < 3:
            raise ValueError(f"sentences[{n}] = {s!r} terlalu pendek: perlu paling sedikit "
                             f"3 {unit}.")
        if n_tokens > model.config.T:
            raise ValueError(f"sentences[{n}] ({n_tokens} {unit}) lebih panjang dari T = "
                             f"{model.config.T}. Perpendek kalimatnya.")
        model.encode(s)  # unknown tokens: a clear error before any drawing
    if len(set(sentences)) != len(sentences):
        raise ValueError("Argumen 'sentences' berisi kalimat yang sama dua kali.")
    c = model.config
    _val.check_int(sentence, "sentence", low=0, high=len(sentences) - 1)
    _val.check_int(layer, "layer", low=0, high=c.n_layer - 1)
    _val.check_int(head, "head", low=0, high=c.n_head - 1)
    return tuple(sentences)


def attention_maps_static(model, sentences=SENTENCES, *, sentence=0, layer=0, head=0):
    """Kembaran statis: setiap kalimat × layer × head sudah digambar."""
    sentences = _check_start(model, sentences, sentence, layer, head)
    maps = _maps(model, sentences)
    c = model.config
    unit = "cerita" if model.words else "kalimat"
    controls = [
        Control("kalimat", unit, "range", tuple(sentences),
                tuple(f"{unit} {n + 1}" for n in range(len(sentences))), sentence),
        Control("layer", "layer", "range", tuple(range(c.n_layer)),
                tuple(f"layer {n + 1}" for n in range(c.n_layer)), layer),
        Control("head", "head", "range", tuple(range(c.n_head)),
                tuple(f"head {n + 1}" for n in range(c.n_head)), head),
    ]

    def render(s, l, h):
        fig, _values, text = _render(maps, s, l, h, model.words)
        return fig, text, []

    # _frames caches by the control values: a different model must not reuse them.
    key = f"{NAME}-{hash(tuple(float(maps[s].sum()) for s in sentences))}"
    frames, images = _frames(key, controls, render)
    title = WORD_TITLE if model.words else TITLE
    return StaticExplorer(NAME, title, controls, frames, images,
                          alt=f"Bobot atensi satu head model kecil untuk satu {unit}; "
                              f"{'kata' if model.words else 'karakter'} sebagai label sumbu")


def attention_maps_explorer(model, sentences=SENTENCES, *, sentence=0, layer=0, head=0):
    """Penjelajah hidup (ipywidgets): pilih kalimat, layer, dan head."""
    import ipywidgets as W

    sentences = _check_start(model, sentences, sentence, layer, head)
    maps = _maps(model, sentences)
    c = model.config
    controls = {
        "sentence": W.Dropdown(options=list(sentences), value=sentences[sentence],
                               description="kalimat"),
        "layer": W.IntSlider(value=layer + 1, min=1, max=c.n_layer, description="layer"),
        "head": W.IntSlider(value=head + 1, min=1, max=c.n_head, description="head"),
    }
    return widgets._build_live(NAME, WORD_TITLE if model.words else TITLE, controls,
                               lambda sentence, layer, head:
                               _render(maps, sentence, layer - 1, head - 1, model.words))


def attention_maps(model, sentences=SENTENCES, mode=None, **start):
    """Penjelajah peta atensi: hidup di Jupyter, statis bila ``ATENSI_BOOK`` diset."""
    unknown = sorted(set(start) - {"sentence", "layer", "head"})
    if unknown:
        raise TypeError(f"Argumen tidak dikenal: {', '.join(unknown)}. Yang ada: sentence, "
                        "layer, head (mulai dari 0).")
    _check_start(model, sentences, start.get("sentence", 0), start.get("layer", 0),
                 start.get("head", 0))
    if _resolve(mode) == "live":
        return attention_maps_explorer(model, sentences, **start)
    return attention_maps_static(model, sentences, **start)


# ------------------------------------------------------------------ figures


def _smooth(values, width):
    values = np.asarray(values, dtype=np.float64)
    if width <= 1 or values.size < width:
        return values
    kernel = np.ones(width) / width
    return np.convolve(values, kernel, mode="valid")


def training_curve_figure(curve, *, bigram=None, unigram=None, title=None, smooth=25):
    """Loss latih (rata-rata bergerak ``smooth`` langkah) dan validasi terhadap langkah,
    dengan garis pembanding bigram dan unigram bila diberikan."""
    fig = style.new_figure(style.MAX_WIDTH, 3.4)
    ax = fig.add_axes([0.16, 0.15, 0.81, 0.72])
    steps = np.asarray(curve["step"], dtype=np.float64)
    width = min(smooth, max(1, steps.size // 5))
    y = _smooth(curve["train"], width)
    ax.plot(steps[width - 1:] if width > 1 else steps, y, color=style.BAR, lw=1.4,
            label="latih (rata-rata bergerak)" if width > 1 else "latih")
    ax.plot(curve["val_step"], curve["val"], "o-", color=style.HIGHLIGHT, ms=3.5, lw=1.4,
            label="validasi")
    for value, label, line in ((bigram, "bigram", "--"), (unigram, "unigram", ":")):
        if value is not None:
            ax.axhline(value, color="#555555", ls=line, lw=1)
            ax.text(steps[-1], value, f" {label} {style.format_number(value, 2)}",
                    va="bottom", ha="right", fontsize=style.SMALL, color="#555555")
    ax.legend(fontsize=style.SMALL, frameon=False, loc="upper right")
    ax.yaxis.set_major_formatter(style.TICKS)
    ax.grid(True, color="#e5e5e5", lw=0.6)
    style.style_axes(ax, title=title, xlabel="langkah", ylabel="cross-entropy (nat/karakter)")
    return fig


def experiment_figure(result, *, smooth=10):
    """Eksperimen √d_k: loss (atas) dan entropi atensi per lapisan (bawah), dengan
    dan tanpa pembagian, seed yang sama."""
    fig = style.new_figure(style.MAX_WIDTH, 6.6)
    ax_loss = fig.add_axes([0.16, 0.64, 0.81, 0.3])
    ax_ent = fig.add_axes([0.16, 0.24, 0.81, 0.3])
    colors = {"dengan": style.BAR, "tanpa": style.HIGHLIGHT}
    names = {"dengan": "dibagi √d_k", "tanpa": "tanpa pembagian"}
    for key, run in result["runs"].items():
        steps = np.asarray(run["step"], dtype=np.float64)
        width = min(smooth, max(1, steps.size // 5))
        ax_loss.plot(steps[width - 1:], _smooth(run["train"], width), color=colors[key],
                     lw=1.4, label=f"{names[key]}, latih")
        ax_loss.plot(run["val_step"], run["val"], "o", color=colors[key], ms=3,
                     label=f"{names[key]}, validasi")
        ent = np.asarray(run["entropy"], dtype=np.float64)  # (checkpoints, layers)
        for layer in range(ent.shape[1]):
            ax_ent.plot(run["val_step"], ent[:, layer], color=colors[key],
                        ls="-" if layer == 0 else "--", marker="o" if layer == 0 else "s",
                        ms=3, lw=1.3, label=f"{names[key]}, lapisan {layer + 1}")
    ax_loss.legend(fontsize=style.SMALL, frameon=False, loc="upper right")
    ax_ent.legend(fontsize=style.SMALL, frameon=False, loc="upper center",
                  bbox_to_anchor=(0.45, -0.2), ncol=2)
    for ax in (ax_loss, ax_ent):
        ax.yaxis.set_major_formatter(style.TICKS)
        ax.grid(True, color="#e5e5e5", lw=0.6)
    style.style_axes(ax_loss, title=f"Loss, d_k = {result['d_k']}", xlabel="langkah",
                 ylabel="nat/karakter")
    style.style_axes(ax_ent, title="Entropi rata-rata baris atensi", xlabel="langkah",
                 ylabel="nat")
    return fig


def head_summaries(model, text, *, n=24):
    """``head_summary`` setiap (layer, head), dirata-rata atas ``n`` potongan ``text``
    sepanjang ``model.config.T`` (potongan berurutan dari awal teks)."""
    T = model.config.T
    windows = [text[a:a + T] for a in range(0, len(text) - T + 1, T)][:n]
    if not windows:
        raise ValueError(f"Argumen 'text' terlalu pendek: perlu paling sedikit T = {T} karakter.")
    ids = np.stack([model.encode(w) for w in windows])
    _, cache = model._forward(model._check_ids(ids), maps=True)
    out = {}
    for l, A in enumerate(cache["maps"]):
        A = np.asarray(A.get() if hasattr(A, "get") else A, dtype=np.float64)
        for h in range(A.shape[1]):
            rows = [head_summary(A[b, h], w) for b, w in enumerate(windows)]
            out[(l, h)] = {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}
    return out


def accuracy_curve_figure(curves, *, chance=None, title=None):
    """Akurasi uji (0..1) terhadap langkah untuk beberapa pelatihan model kata.

    ``curves``: nama -> dict dengan ``val_step`` dan ``val`` (seperti kurva
    ``recall_train.train_recall``). ``chance``: garis tebakan acak.
    """
    fig = style.new_figure(style.MAX_WIDTH, 3.6)
    ax = fig.add_axes([0.13, 0.14, 0.84, 0.62])
    styles = ["o-", "s--", "^-.", "d:"]
    colors = [style.BAR, style.HIGHLIGHT, "#555555", "#9a6fb0"]
    for n, (name, curve) in enumerate(curves.items()):
        ax.plot(curve["val_step"], 100 * np.asarray(curve["val"], dtype=np.float64),
                styles[n % 4], color=colors[n % 4], ms=3.5, lw=1.4, label=name)
    if chance is not None:
        ax.axhline(100 * chance, color="#555555", ls=":", lw=1)
        ax.text(ax.get_xlim()[1], 100 * chance, "tebakan acak ", va="bottom", ha="right",
                fontsize=style.SMALL, color="#555555")
    ax.set_ylim(0, 102)
    ax.legend(fontsize=style.SMALL, frameon=False, loc="lower center",
              bbox_to_anchor=(0.5, 1.0), ncol=2)
    ax.grid(True, color="#e5e5e5", lw=0.6)
    style.style_axes(ax, title=None, xlabel="langkah", ylabel="akurasi uji (%)")
    if title:
        fig.text(0.02, 0.985, title, fontsize=style.FONT, va="top")
    return fig
