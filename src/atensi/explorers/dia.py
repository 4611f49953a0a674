"""Siapa *dia*? Ketik kalimat, lihat jawaban model rujukan dan baris atensinya.

Pembaca memilih dua nama, kata kerja (aktif atau pasif) dan pelengkap, atau
mengetik kalimat dari kosakata tugas ``atensi.rujukan``. Yang tampil: nama
yang dirujuk *dia* menurut model terlatih (``rujukan.load()``) dan baris
atensi *head* pemilih nama dari posisi "?" ke setiap kata kalimat.

Pemakaian di bab (satu sel)::

    from atensi.explorers import dia
    dia.explorer()

Seperti penjelajah lain, ``ATENSI_BOOK`` menentukan bentuknya:

* tidak diset (Jupyter, Colab): ``live()``, ipywidgets yang menghitung dengan
  ``rujukan.resolve`` dan ``rujukan.head_attention``;
* ``ATENSI_BOOK=1`` (build buku): ``static()``, HTML dengan *forward* model
  dalam JavaScript (``explorers/dia.js``). Bobotnya (float32, base64) ada di
  ``script.atensi-weights``; di situs, ekstensi buku memindahkannya ke berkas
  skrip yang baru dimuat saat pembaca pertama kali menyentuh penjelajah.

``weights_data(model)`` adalah bobot itu, ``compute(model, kalimat)`` yang
ditampilkan untuk satu kalimat: jawaban, baris atensi, peluang setiap nama.
"""

from __future__ import annotations

import base64
import html
import itertools

import numpy as np

from .. import rujukan
from ..formatting import id_float
from .framework import ASSETS, asset, json_for_script, mark_live, resolve_mode

JS_PATH = ASSETS / "dia.js"
CSS_PATH = ASSETS / "dia.css"
TITLE = "Siapa dia? Model rujukan di halaman ini"
NAME = "dia"
START = "Ani memanggil Budi , dia menoleh"
# The controls, one per slot of the sentence that can change: (slot, label, words).
SLOTS = (
    (rujukan.FIRST, "nama pertama", rujukan.NAMES),
    (rujukan.VERB, "kata kerja", tuple(w for pair in rujukan.VERB_PAIRS for w in pair)),
    (rujukan.SECOND, "nama kedua", rujukan.NAMES),
    (rujukan.COMPLETION, "pelengkap", rujukan.COMPLETIONS),
)


def _model(model):
    return rujukan.load() if model is None else model


def weights_data(model=None) -> dict:
    """Model rujukan untuk JavaScript: config, kosakata, *head* pemilih, dan setiap
    parameter sebagai float32 little-endian dalam base64 (dengan bentuknya)."""
    model = _model(model)
    c = model.config
    params = {}
    for name, value in model.params.items():
        array = np.ascontiguousarray(np.asarray(value), dtype="<f4")
        params[name] = {"shape": list(array.shape),
                        "data": base64.b64encode(array.tobytes()).decode("ascii")}
    return {"config": {"n_layer": c.n_layer, "n_head": c.n_head, "d_model": c.d_model,
                       "T": c.T, "vocab": c.vocab, "scale": c.scale, "positions": c.positions},
            "vocab": list(model.chars), "head": list(model.info["head"]), "params": params}


def compute(model, sentence: str) -> dict:
    """Yang ditampilkan untuk satu kalimat biasa: ``answer`` (nama), ``row`` (baris
    atensi *head* pemilih dari "?" ke setiap kata kalimat), ``logits`` (logit setiap
    kata kosakata di tempat jawaban), ``names`` dan ``probs`` (peluang setiap nama,
    dari *softmax* logit itu)."""
    answer = rujukan.resolve(model, [sentence])[0]
    row = rujukan.head_attention(model, [sentence])[0]
    logits = np.asarray(model.logits(rujukan.question_rows([sentence])), dtype=np.float64)
    last = logits[0, rujukan.ASK]
    p = np.exp(last - last.max())
    p /= p.sum()
    ids = [model.chars.index(n) for n in rujukan.NAMES]
    return {"sentence": sentence, "answer": answer, "row": [float(x) for x in row],
            "logits": [float(x) for x in last], "names": list(rujukan.NAMES),
            "probs": [float(p[i]) for i in ids]}


def readout_html(result) -> str:
    """The answer and the attention row as text and bars (the same HTML as dia.js writes)."""
    words = result["sentence"].split()
    bars = "".join(
        f'<li><span class="atensi-dia-word">{html.escape(w)}</span>'
        f'<span class="atensi-dia-bar"><span style="width:{100 * a:.1f}%"></span></span>'
        f'<span class="atensi-dia-num">{id_float(a, 2)}</span></li>'
        for w, a in zip(words, result["row"]))
    return (f'<p class="atensi-dia-answer">Menurut model, <em>dia</em> = '
            f'<strong>{html.escape(result["answer"])}</strong></p>'
            '<p class="atensi-dia-caption">Bobot atensi <em>head</em> pemilih nama dari "?" '
            "ke setiap kata:</p>"
            f'<ol class="atensi-dia-row">{bars}</ol>')


# ------------------------------------------------------------------ static

_instances = itertools.count(1)


class DiaStatic:
    """Kembaran statis: kontrol, jawaban awal dari NumPy, dan *forward* JavaScript.

    Akarnya ``<div class="atensi-dia">``; kontrol ``select[data-slot]`` dan
    ``input[data-dia=text]``, bacaan ``.atensi-dia-readout`` (``data-result``:
    angka lengkap hitungan terakhir), bobot ``script.atensi-weights``.
    """

    def __init__(self, sentence=START, model=None):
        model = _model(model)
        self.start = compute(model, sentence)
        self.weights = weights_data(model)
        self.element_id = f"atensi-dia-{next(_instances)}"

    def _controls_html(self):
        words = self.start["sentence"].split()
        parts = []
        for slot, label, choices in SLOTS:
            uid = f"{self.element_id}-{slot}"
            options = "".join(
                f'<option value="{html.escape(w)}"{" selected" if w == words[slot] else ""}>'
                f"{html.escape(w)}</option>" for w in choices)
            parts.append(f'<label for="{uid}">{label}</label>'
                         f'<select id="{uid}" data-slot="{slot}">{options}</select>')
        text_id = f"{self.element_id}-text"
        value = html.escape(self.start["sentence"])
        return (f'<div class="atensi-dia-controls">{"".join(parts)}</div>'
                f'<label class="atensi-dia-type" for="{text_id}">atau ketik kalimatnya</label>'
                f'<input type="text" id="{text_id}" data-dia="text" lang="id" '
                f'autocomplete="off" spellcheck="false" value="{value}">')

    def to_html(self):
        data = {"start": self.start, "slots": [[s, label] for s, label, _ in SLOTS],
                "names": list(rujukan.NAMES),
                "verbs": [list(p) for p in rujukan.VERB_PAIRS],
                "completions": list(rujukan.COMPLETIONS)}
        return (
            f'<div class="atensi-dia" id="{self.element_id}" lang="id" data-explorer="{NAME}">'
            f"<style>{asset(CSS_PATH.name)}</style>"
            f'<p class="atensi-dia-title">{html.escape(TITLE)}</p>'
            f"{self._controls_html()}"
            f'<div class="atensi-dia-readout" aria-live="polite">'
            f"{readout_html(self.start)}</div>"
            f'<script type="application/json" class="atensi-dia-data">{json_for_script(data)}'
            "</script>"
            f'<script type="application/json" class="atensi-weights">'
            f"{json_for_script(self.weights)}</script>"
            f"<script>{asset(JS_PATH.name)}</script></div>")

    def _repr_html_(self):
        return self.to_html()

    def __repr__(self):
        return f"<DiaStatic {self.start['sentence']!r} -> {self.start['answer']}>"


def static(*, sentence=START, model=None):
    """Kembaran statis untuk buku (lihat ``DiaStatic``)."""
    return DiaStatic(sentence, model)


# ------------------------------------------------------------------ live


def live(*, sentence=START, model=None):
    """Penjelajah hidup di Jupyter: pilihan kata dan kotak teks; setiap perubahan
    dihitung ulang oleh ``rujukan.resolve`` dan ``rujukan.head_attention``.
    Atribut: ``.controls`` (slot -> Dropdown), ``.text``, ``.readout``, ``.result``."""
    import ipywidgets as W  # only the live face needs it

    model = _model(model)
    first = compute(model, sentence)
    words = first["sentence"].split()
    controls = {slot: W.Dropdown(options=list(choices), value=words[slot], description=label)
                for slot, label, choices in SLOTS}
    text = W.Text(value=first["sentence"], description="kalimat")
    readout = W.HTML(readout_html(first))
    box = mark_live(W.VBox([W.HTML(f"<b>{html.escape(TITLE)}</b>"), *controls.values(), text,
                            readout]), NAME)
    box.controls, box.text, box.readout, box.result = controls, text, readout, first
    busy = []

    def show(sentence_text):
        try:
            box.result = compute(model, sentence_text)
        except ValueError as err:  # the library's Indonesian message names the word
            readout.value = f'<p class="atensi-error">{html.escape(str(err))}</p>'
            return
        readout.value = readout_html(box.result)
        busy.append(1)
        try:
            for slot, w in enumerate(box.result["sentence"].split()):
                if slot in controls:
                    controls[slot].value = w
            text.value = box.result["sentence"]
        finally:
            busy.pop()

    def from_controls(_change=None):
        if busy:
            return
        parts = text.value.replace(",", " , ").split()
        if len(parts) != rujukan.SENTENCE:
            parts = START.split()
        for slot, control in controls.items():
            parts[slot] = control.value
        show(" ".join(parts))

    def from_text(_change=None):
        if not busy:
            show(" ".join(text.value.replace(",", " , ").split()))

    for control in controls.values():
        control.observe(from_controls, names="value")
    text.observe(from_text, names="value")
    return box


def explorer(mode=None, *, sentence=START):
    """Hidup (ipywidgets) atau statis; ``mode=None``: statis bila ``ATENSI_BOOK`` diset."""
    mode = resolve_mode(mode)
    return live(sentence=sentence) if mode == "live" else static(sentence=sentence)
