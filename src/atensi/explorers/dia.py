"""Siapa *dia*? Ketik kalimat, lihat jawaban model rujukan dan baris atensinya.

Pembaca memilih dua nama, kata kerja (aktif atau pasif) dan pelengkap (kata
sambungnya, koma atau *karena*, ikut pelengkap), atau mengetik kalimat dari
kosakata tugas ``atensi.rujukan``; nama boleh ditulis dengan huruf besar atau
kecil. Yang tampil: nama yang dirujuk *dia* menurut model terlatih
(``tasks.load_weights("rujukan")``), penanda apakah kalimat itu pernah dilihat model saat
dilatih, baris atensi *head* pemilih nama dari posisi "?" ke setiap kata
kalimat, dan baris yang sama untuk *head* setiap lapisan. Mode "tebak dulu"
menyembunyikan jawaban sampai pembaca memilih satu nama.

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

from .. import rujukan, tasks
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
    return tasks.load_weights("rujukan") if model is None else model


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


ROLES = (("verb_head", "pembaca kata kerja"), ("completion_head", "pembaca pelengkap"),
         ("head", "pemilih nama"))
GUESS_LABEL = "tebak dulu: sembunyikan jawaban model sampai saya memilih"
SEEN = "kalimat latih: model pernah melihatnya"
UNSEEN = "kalimat ini tidak pernah dilihat model"


def head_labels(model) -> list:
    """Setiap head model sebagai ``[layer, head, label]``, urut layer; label dari
    ukuran yang disimpan di ``model.info`` ("pembaca kata kerja", ...)."""
    c, info = model.config, model.info
    out = []
    for layer in range(c.n_layer):
        for h in range(c.n_head):
            names = [label for key, label in ROLES if list(info.get(key, [])) == [layer, h]]
            out.append([layer, h, ", ".join(names)])
    return out


def compute(model, sentence: str) -> dict:
    """Yang ditampilkan untuk satu kalimat biasa: ``answer`` (nama), ``row`` (baris
    atensi *head* pemilih dari "?" ke setiap kata kalimat), ``rows`` (baris yang sama
    untuk setiap head, per layer), ``seen`` (kalimat latih?), ``logits`` (logit setiap
    kata kosakata di tempat jawaban), ``names`` dan ``probs`` (peluang setiap nama,
    dari *softmax* logit itu)."""
    answer = rujukan.resolve(model, [sentence])[0]
    row = rujukan.head_attention(model, [sentence])[0]
    x = rujukan.question_rows([sentence])
    every = rujukan.attention_rows(model, x, inputs=True)[0]
    logits = np.asarray(model.logits(x), dtype=np.float64)
    last = logits[0, rujukan.ASK]
    p = np.exp(last - last.max())
    p /= p.sum()
    ids = [model.chars.index(n) for n in rujukan.NAMES]
    words = rujukan.sentence(x[0, :rujukan.SENTENCE])
    return {"sentence": words, "answer": answer, "row": [float(v) for v in row],
            "rows": [[float(v) for v in every[l, h, :rujukan.SENTENCE]]
                     for l, h, _ in head_labels(model)],
            "seen": rujukan.seen_in_training([sentence])[0],
            "logits": [float(v) for v in last], "names": list(rujukan.NAMES),
            "probs": [float(p[i]) for i in ids]}


def _bars(words, row, cls):
    items = "".join(
        f'<li><span class="atensi-dia-word">{html.escape(w)}</span>'
        f'<span class="atensi-dia-bar"><span style="width:{100 * a:.1f}%"></span></span>'
        f'<span class="atensi-dia-num">{id_float(a, 2)}</span></li>'
        for w, a in zip(words, row))
    return f'<ol class="{cls}">{items}</ol>'


def readout_html(result, labels=None) -> str:
    """The answer, the badge, the picking head's row and every head's row as text
    and bars (the same HTML as dia.js writes). ``labels``: ``head_labels(model)``."""
    words = result["sentence"].split()
    badge = UNSEEN if not result.get("seen", True) else SEEN
    heads = ""
    if labels and result.get("rows"):
        parts = "".join(
            f'<figure class="atensi-dia-head"><figcaption>lapisan {l + 1}'
            f'{(", " + html.escape(label)) if label else ""}</figcaption>'
            f'{_bars(words, row, "atensi-dia-mini")}</figure>'
            for (l, h, label), row in zip(labels, result["rows"]))
        heads = ('<p class="atensi-dia-caption">Setiap lapisan, dari "?" ke setiap kata:</p>'
                 f'<div class="atensi-dia-heads">{parts}</div>')
    return (f'<p class="atensi-dia-answer">Menurut model, <em>dia</em> = '
            f'<strong>{html.escape(result["answer"])}</strong></p>'
            f'<p class="atensi-dia-badge" data-seen="{str(result.get("seen", True)).lower()}">'
            f"{badge}</p>"
            '<p class="atensi-dia-caption">Bobot atensi <em>head</em> pemilih nama dari "?" '
            "ke setiap kata:</p>"
            f'{_bars(words, result["row"], "atensi-dia-row")}{heads}')


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
        self.labels = head_labels(model)
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
        guess_id = f"{self.element_id}-guess"
        return (f'<div class="atensi-dia-controls">{"".join(parts)}</div>'
                f'<label class="atensi-dia-type" for="{text_id}">atau ketik kalimatnya</label>'
                f'<input type="text" id="{text_id}" data-dia="text" lang="id" '
                f'autocomplete="off" spellcheck="false" value="{value}">'
                f'<p class="atensi-dia-mode"><input type="checkbox" id="{guess_id}" '
                f'data-dia="guess"> <label for="{guess_id}">{GUESS_LABEL}</label></p>'
                '<div class="atensi-dia-guess" hidden><p>Siapa <em>dia</em> menurut Anda?</p>'
                '<button type="button" data-name="0"></button> '
                '<button type="button" data-name="2"></button></div>')

    def to_html(self):
        data = {"start": self.start, "slots": [[s, label] for s, label, _ in SLOTS],
                "names": list(rujukan.NAMES),
                "verbs": [list(p) for p in rujukan.VERB_PAIRS],
                "completions": list(rujukan.COMPLETIONS), "link": rujukan.LINK,
                "vocab": list(rujukan.VOCAB), "T": rujukan.ANSWER,
                "held_out": rujukan.HELD_OUT, "held_out_completion": rujukan.HELD_OUT_COMPLETION,
                "labels": self.labels, "seen": SEEN, "unseen": UNSEEN,
                "guess": GUESS_LABEL,
                "lookalike": rujukan._LOOKALIKE, "invisible": rujukan._INVISIBLE}
        return (
            f'<div class="atensi-dia" id="{self.element_id}" lang="id" data-explorer="{NAME}">'
            f"<style>{asset(CSS_PATH.name)}</style>"
            f'<p class="atensi-dia-title">{html.escape(TITLE)}</p>'
            f"{self._controls_html()}"
            f'<div class="atensi-dia-readout" aria-live="polite">'
            f"{readout_html(self.start, self.labels)}</div>"
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
    labels = head_labels(model)
    readout = W.HTML(readout_html(first, labels))
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
        readout.value = readout_html(box.result, labels)
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
        parts[rujukan.COMMA] = rujukan.LINK[parts[rujukan.COMPLETION]]
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
