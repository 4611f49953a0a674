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

import numpy as np

from . import plots, widgets
from .widgets import Control, StaticExplorer, _frames, _resolve

SENTENCES = (
    "Setiap posisi hanya boleh melihat masa lalu.",
    "Budi bilang dia lapar.",
    'Kata "dia" merujuk ke "Budi".',
)
NAME = "peta-atensi"
TITLE = "Peta atensi model kecil: kalimat, layer, head"


def _shown(text):
    return {" ": "␣", "\n": "⏎"}.get(text, text)


def head_summary(A, text):
    """Rata-rata bobot per pola untuk satu peta ``A`` (T, T) dan teksnya.

    ``sebelumnya``: bobot ke posisi i−1; ``diri``: ke posisi i; ``awal_kata``:
    ke huruf pertama kata tempat posisi i berada (posisi setelah spasi, tidak
    termasuk i sendiri). Dirata-rata atas baris i ≥ 1.
    """
    A = np.asarray(A, dtype=np.float64)
    T = len(text)
    if A.shape != (T, T):
        raise ValueError(f"Peta 'A' harus berbentuk ({T}, {T}) untuk teks sepanjang {T}, "
                         f"tetapi {A.shape}.")
    rows = np.arange(1, T)
    starts = np.zeros(T, dtype=int)
    for i in range(1, T):
        starts[i] = i if text[i - 1] == " " else starts[i - 1]
    word = [A[i, starts[i]] for i in rows if starts[i] < i]
    return {
        "sebelumnya": float(A[rows, rows - 1].mean()),
        "diri": float(A[rows, rows].mean()),
        "awal_kata": float(np.mean(word)) if word else 0.0,
    }


def attention_figure(A, text, *, title=None):
    """Heatmap satu head ``A`` (T, T), karakter teks sebagai label kedua sumbu."""
    T = len(text)
    labels = [_shown(c) for c in text]
    size = 4.2
    fig = plots.new_figure(size, size + 0.2)
    ax = fig.add_axes([0.1, 0.07, 0.76, 0.76])
    plots.draw_heatmap(ax, A, cmap="Blues", vmin=0, vmax=1, annotate=False, title=title,
                       xlabel=None, ylabel=None)
    font = max(4.0, min(plots.SMALL, 300 / max(T, 1)))
    ax.set_xticks(range(T))
    ax.set_yticks(range(T))
    ax.set_xticklabels(labels, fontsize=font, family="monospace")
    ax.set_yticklabels(labels, fontsize=font, family="monospace")
    ax.xaxis.tick_top()
    ax.tick_params(length=0, pad=1)
    return fig


def _maps(model, sentences):
    return {s: np.asarray(model.attention_maps(s), dtype=np.float64) for s in sentences}


def _text(summary, layer, head):
    f = plots.format_number
    return (f"<p><b>Layer {layer + 1}, head {head + 1}</b>: rata-rata bobot ke karakter "
            f"sebelumnya {f(summary['sebelumnya'], 2)}, ke dirinya sendiri "
            f"{f(summary['diri'], 2)}, ke huruf pertama katanya {f(summary['awal_kata'], 2)}.</p>"
            "<p class='atensi-note'>Baris: posisi query (karakter yang sedang menebak "
            "karakter berikutnya); kolom: key yang dilihatnya. ␣ = spasi. Di atas "
            "diagonal selalu 0: mask kausal.</p>")


def _render(maps, sentence, layer, head):
    A = maps[sentence][layer, head]
    fig = attention_figure(A, sentence, title=f"layer {layer + 1}, head {head + 1}")
    return fig, head_summary(A, sentence), _text(head_summary(A, sentence), layer, head)


def attention_maps_static(model, sentences=SENTENCES, *, sentence=0, layer=0, head=0):
    """Kembaran statis: setiap kalimat × layer × head sudah digambar."""
    maps = _maps(model, sentences)
    c = model.config
    controls = [
        Control("kalimat", "kalimat", "range", tuple(sentences),
                tuple(f"{n + 1}: {s[:18]}…" if len(s) > 18 else f"{n + 1}: {s}"
                      for n, s in enumerate(sentences)), sentence),
        Control("layer", "layer", "range", tuple(range(c.n_layer)),
                tuple(f"layer {n + 1}" for n in range(c.n_layer)), layer),
        Control("head", "head", "range", tuple(range(c.n_head)),
                tuple(f"head {n + 1}" for n in range(c.n_head)), head),
    ]

    def render(s, l, h):
        fig, _values, text = _render(maps, s, l, h)
        return fig, text, []

    # _frames caches by the control values: a different model must not reuse them.
    key = f"{NAME}-{hash(tuple(float(maps[s].sum()) for s in sentences))}"
    frames, images = _frames(key, controls, render)
    return StaticExplorer(NAME, TITLE, controls, frames, images,
                          alt="Bobot atensi satu head model kecil untuk satu kalimat; "
                              "karakter sebagai label sumbu")


def attention_maps_explorer(model, sentences=SENTENCES, *, sentence=0, layer=0, head=0):
    """Penjelajah hidup (ipywidgets): pilih kalimat, layer, dan head."""
    import ipywidgets as W

    maps = _maps(model, sentences)
    c = model.config
    controls = {
        "sentence": W.Dropdown(options=list(sentences), value=sentences[sentence],
                               description="kalimat"),
        "layer": W.IntSlider(value=layer + 1, min=1, max=c.n_layer, description="layer"),
        "head": W.IntSlider(value=head + 1, min=1, max=c.n_head, description="head"),
    }
    return widgets._build_live(NAME, TITLE, controls,
                               lambda sentence, layer, head:
                               _render(maps, sentence, layer - 1, head - 1))


def attention_maps(model, sentences=SENTENCES, mode=None, **start):
    """Penjelajah peta atensi: hidup di Jupyter, statis bila ``ATENSI_BOOK`` diset."""
    for s in sentences:
        model.encode(s)  # unknown characters: a clear error before any drawing
        if len(s) > model.config.T:
            raise ValueError(f"Kalimat {html.escape(s)!r} lebih panjang dari T = "
                             f"{model.config.T}. Perpendek kalimatnya.")
    if _resolve(mode) == "live":
        return attention_maps_explorer(model, sentences, **start)
    return attention_maps_static(model, sentences, **start)
