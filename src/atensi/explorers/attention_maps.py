"""Penjelajah peta atensi model kecil yang sudah dilatih: kalimat, lapisan, head.

Pemakaian di bab::

    from atensi.explorers import attention_maps
    attention_maps.explorer(model)   # hidup di Jupyter, statis di buku

Gambar: bobot atensi A satu head untuk satu kalimat, dengan karakter (atau
kata) kalimat sebagai label sumbu (baris: *query*, kolom: *key*); gambarnya
``model_plots.attention_figure``. Bacaan di bawah gambar menyebut, untuk head
itu, berapa rata-rata bobot yang jatuh ke posisi sebelumnya, ke dirinya
sendiri, dan ke awal kata (model karakter) atau ke kata yang sama yang sudah
muncul (model kata): ``head_summary`` dan ``word_head_summary``. Hanya API
publik ``TinyGPT`` yang dipakai: ``attention_maps``, ``encode``, ``config``.
"""

from __future__ import annotations

import html

import numpy as np

from .. import model_plots, style
from .. import validation as _val
from ..model import TinyGPT
from .framework import Choice, Explorer, resolve_mode

# The book's running example (atensi.example) as the character model reads it,
# with its comma: the model's vocabulary has every one of these characters.
RUNNING_EXAMPLE = "Ani memanggil Budi, dia menoleh"
SENTENCES = (
    RUNNING_EXAMPLE,
    "Setiap posisi melihat masa lalu.",
    'Ia berkata "saya lapar".',
)
NAME = "peta-atensi"
TITLE = "Peta atensi model kecil: kalimat, lapisan, head"
WORD_TITLE = "Peta atensi model kata: cerita, lapisan, head"


def _rows(A, T, what):
    A = _val.as_float_array(A, "A", layout="(T, T)")
    _val.check_finite(A, "A")
    A = np.asarray(A, dtype=np.float64)
    if A.shape != (T, T):
        raise ValueError(f"Argumen 'A' harus berbentuk ({T}, {T}) untuk {what}, "
                         f"tetapi yang diterima {A.shape}.")
    return A, np.arange(2, T)


def _neighbours(A, rows):
    """Mean weight of rows i to i−1, i−2 and i itself."""
    return {"sebelumnya": float(A[rows, rows - 1].mean()),
            "dua_sebelumnya": float(A[rows, rows - 2].mean()),
            "diri": float(A[rows, rows].mean())}


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
    T = len(text)
    if T < 3:
        raise ValueError(f"Argumen 'text' terlalu pendek ({T} karakter): perlu paling sedikit 3.")
    A, rows = _rows(A, T, f"teks sepanjang {T}")
    starts = np.zeros(T, dtype=int)
    for i in range(1, T):
        starts[i] = i if text[i - 1] == " " else starts[i - 1]
    word = [A[i, starts[i]] for i in rows if starts[i] < i - 1]
    return {**_neighbours(A, rows), "awal_kata": float(np.mean(word)) if word else 0.0}


def word_head_summary(A, words):
    """Rata-rata bobot per pola untuk model kata: ``A`` (T, T) dan daftar katanya.

    ``sebelumnya``, ``dua_sebelumnya``, ``diri``: seperti ``head_summary``.
    ``kata_sama``: jumlah bobot ke kemunculan sebelumnya dari kata yang sama,
    rata-rata atas baris yang katanya sudah pernah muncul.
    """
    T = len(words)
    if T < 3:
        raise ValueError(f"Argumen 'words' terlalu pendek ({T} kata): perlu paling sedikit 3.")
    A, rows = _rows(A, T, f"{T} kata")
    same = [sum(A[i, j] for j in range(i) if words[j] == words[i])
            for i in range(T) if words[i] in words[:i]]
    return {**_neighbours(A, rows), "kata_sama": float(np.mean(same)) if same else 0.0}


def _numpy_maps(model, text):
    A = model.attention_maps(text)
    return np.asarray(A.get() if hasattr(A, "get") else A, dtype=np.float64)


def head_summaries(model, text, *, n=24):
    """``head_summary`` setiap (layer, head), dirata-rata atas ``n`` potongan ``text``
    sepanjang ``model.config.T`` (potongan berurutan dari awal teks)."""
    _check_model(model)
    n = _val.check_int(n, "n")  # a negative n would silently drop windows from the end
    T = model.config.T
    windows = [text[a:a + T] for a in range(0, len(text) - T + 1, T)][:n]
    if not windows:
        raise ValueError(f"Argumen 'text' terlalu pendek: perlu paling sedikit T = {T} karakter.")
    maps = [_numpy_maps(model, w) for w in windows]  # each (n_layer, n_head, T, T)
    out = {}
    for l in range(model.config.n_layer):
        for h in range(model.config.n_head):
            rows = [head_summary(A[l, h], w) for A, w in zip(maps, windows)]
            out[(l, h)] = {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}
    return out


def _text(summary, layer, head, sentence, words):
    """The readout under a map: the head's mean weights, for a word or a character model."""
    f = style.format_number
    unit = "kata" if words else "karakter"
    last = (f"ke kata yang sama yang sudah muncul sebelumnya {f(summary['kata_sama'], 2)}"
            if words else f"ke huruf pertama katanya {f(summary['awal_kata'], 2)}")
    return (f"<p>{'Cerita' if words else 'Kalimat'}: <q>{html.escape(sentence)}</q></p>"
            f"<p><b>Lapisan {layer + 1}, head {head + 1}</b>: rata-rata bobot ke {unit} "
            f"sebelumnya {f(summary['sebelumnya'], 2)}; ke dua {unit} sebelumnya "
            f"{f(summary['dua_sebelumnya'], 2)}; ke dirinya sendiri {f(summary['diri'], 2)}; "
            f"{last}.</p>"
            f"<p class='atensi-note'>Baris: posisi <i>query</i> ({unit} yang sedang menebak "
            f"{unit} berikutnya); kolom: <i>key</i> yang dilihatnya.{'' if words else ' ␣ = spasi.'}"
            " Di atas diagonal selalu 0: mask kausal.</p>")


def _check_model(model):
    if not isinstance(model, TinyGPT):
        raise TypeError(f"Argumen 'model' harus atensi.model.TinyGPT (misalnya "
                        f"TinyGPT.load(...)), bukan {type(model).__name__}.")


def _check_sentences(model, sentences):
    """The sentences as a tuple, each one the model can read, before any map is computed."""
    _check_model(model)
    if isinstance(sentences, str) or not isinstance(sentences, (tuple, list)) or not sentences:
        raise TypeError(f"Argumen 'sentences' harus tuple atau list berisi kalimat (str), "
                        f"bukan {sentences!r:.80}. Untuk satu kalimat: sentences=(kalimat,).")
    unit = "kata" if model.words else "karakter"
    for n, s in enumerate(sentences):
        if not isinstance(s, str):
            raise TypeError(f"sentences[{n}] harus str, bukan {type(s).__name__}.")
        n_tokens = len(s.split() if model.words else s)
        if n_tokens < 3:
            raise ValueError(f"sentences[{n}] = {s!r} terlalu pendek: perlu paling sedikit "
                             f"3 {unit}.")
        if n_tokens > model.config.T:
            raise ValueError(f"sentences[{n}] ({n_tokens} {unit}) lebih panjang dari T = "
                             f"{model.config.T}. Perpendek kalimatnya.")
        model.encode(s, name=f"sentences[{n}]")  # unknown tokens: refused before any drawing
    if len(set(sentences)) != len(sentences):
        raise ValueError("Argumen 'sentences' berisi kalimat yang sama dua kali.")
    return tuple(sentences)


def _declaration(model, sentences, start):
    """The explorer for this model and these sentences; ``start`` checked by name."""
    sentences = _check_sentences(model, sentences)
    c = model.config
    unit = "cerita" if model.words else "kalimat"
    controls = (
        Choice("sentence", unit, tuple(range(len(sentences))), shown=lambda n: f"{unit} {n + 1}",
               menu=True),
        Choice("layer", "lapisan", tuple(range(c.n_layer)), shown=lambda n: f"lapisan {n + 1}"),
        Choice("head", "head", tuple(range(c.n_head)), shown=lambda n: f"head {n + 1}"),
    )
    maps = {}  # filled once every argument has been checked

    def render(sentence, layer, head):
        text = sentences[sentence]
        A = maps[text][layer, head]
        tokens = text.split() if model.words else text
        fig = model_plots.attention_figure(A, tokens, title=f"lapisan {layer + 1}, head {head + 1}")
        summary = word_head_summary(A, tokens) if model.words else head_summary(A, text)
        return fig, summary, _text(summary, layer, head, text, model.words)

    explorer_ = Explorer(
        name=NAME, title=WORD_TITLE if model.words else TITLE,
        alt=f"Bobot atensi satu head model kecil untuk satu {unit}; "
            f"{'kata' if model.words else 'karakter'} sebagai label sumbu",
        controls=controls, render=render, defaults={"sentence": 0, "layer": 0, "head": 0})
    explorer_.start(start, static=False)  # every index by name, before any map is computed
    maps.update((s, _numpy_maps(model, s)) for s in sentences)
    # The frames depend on the model too: its maps, not only the control values.
    key = hash(tuple(float(maps[s].sum()) for s in sentences)) ^ hash(sentences)
    return explorer_, key


def explorer(model, sentences=SENTENCES, mode=None, **start):
    """Hidup di Jupyter, statis bila ``ATENSI_BOOK`` diset; ``start``: sentence, layer,
    head (indeks mulai dari 0)."""
    if resolve_mode(mode) == "live":
        return live(model, sentences, **start)
    return static(model, sentences, **start)


def live(model, sentences=SENTENCES, **start):
    """Penjelajah hidup (ipywidgets): pilih kalimat, lapisan, dan head."""
    explorer_, _key = _declaration(model, sentences, start)
    return explorer_.live(**start)


def static(model, sentences=SENTENCES, **start):
    """Kembaran statis: setiap kalimat × layer × head sudah digambar."""
    explorer_, key = _declaration(model, sentences, start)
    return explorer_.static(cache_key=key, **start)
