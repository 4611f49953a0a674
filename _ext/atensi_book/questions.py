"""In-page questions, "Cek pemahaman": practice that needs no Python.

A chapter writes a question as a directive; the page gets one element with
the class ``cek-pemahaman`` holding the question and its controls, and
``static/cek.js`` checks the reader's answer in the page::

    ```{cek-pemahaman} Bobot mana yang terbesar di baris *dia*?
    :jenis: pilihan

    - [ ] *Ani*
      Belum: skor *Ani* lebih kecil daripada skor *Budi* ...
    - [x] *Budi*
      Tepat: ...
    ```

    ```{cek-pemahaman} Berapa bobot *Budi* di baris *dia*?
    :jenis: angka
    :jawaban: sm_ex_budi
    :toleransi: 0.01
    :umpan-salah: Hitung e^s untuk setiap kata, lalu bagi dengan jumlahnya.
    :penjelasan: Softmax membagi setiap e^s dengan jumlah keempatnya.
    ```

- **Kinds.** ``pilihan``: one correct option (``- [x]``) among others
  (``- [ ]``); the indented lines under an option are the feedback for
  choosing it, which says *why* a wrong choice is wrong. ``angka``: a number
  to type, accepted within ``:toleransi:`` (stated on the page), with the
  feedback ``:umpan-salah:`` for a wrong number and ``:penjelasan:`` for a
  right one; ``:keliru:`` names a glued value that is a typical mistake
  and ``:umpan-keliru:`` says what that mistake was.
- **Answers come from the chapter's code.** ``:jawaban:`` and ``:keliru:``
  name a value glued by the chapter's own executed cells (``glue``), read
  from the executed notebook at build time; a typed number would drift.
  Options may hold ``{glue:text}`` numbers too.
- **Not in the page source.** The page holds salted hashes (``fnv1a``) of
  the right option, or of the bins of width ``toleransi / BINS_PER_TOLERANCE``
  that lie inside the accepted interval; feedback and answers are masked
  (``mask``) and unmasked only once the reader has answered. This is
  practice, not an exam: hashing is enough.
- **Progress** (answered, right) is kept on the device per chapter by
  ``cek.js``; the chapter card shows it (``chapter_card``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

BINS_PER_TOLERANCE = 4
OPTION = re.compile(r"^- \[(?P<mark>[ xX])\]\s+(?P<text>.*)$")


def fnv1a(text: str) -> str:
    """32-bit FNV-1a of the UTF-8 bytes, as 8 hex digits (cek.js computes the same)."""
    value = 0x811C9DC5
    for byte in text.encode("utf-8"):
        value ^= byte
        value = (value * 0x01000193) & 0xFFFFFFFF
    return f"{value:08x}"


def _keystream(seed: str, length: int) -> bytes:
    state = int(fnv1a(seed), 16) or 1
    out = bytearray()
    for _ in range(length):
        # xorshift32, as in cek.js
        state ^= (state << 13) & 0xFFFFFFFF
        state ^= state >> 17
        state ^= (state << 5) & 0xFFFFFFFF
        out.append(state & 0xFF)
    return bytes(out)


def mask(text: str, seed: str) -> str:
    """Feedback kept out of plain sight: UTF-8 XOR a keystream from ``seed``, base64."""
    data = text.encode("utf-8")
    return base64.b64encode(bytes(a ^ b for a, b in zip(data, _keystream(seed, len(data))))).decode("ascii")


def unmask(masked: str, seed: str) -> str:
    data = base64.b64decode(masked)
    return bytes(a ^ b for a, b in zip(data, _keystream(seed, len(data)))).decode("utf-8")


UNIT = re.compile(r"^(?P<number>.*?\d)\s*(?P<unit>%|[A-Za-z]+)$")


def number_and_unit(text: str) -> tuple[float, str]:
    """A glued value such as '48 MiB' or '95,3 %': its number and its unit ('' for none)."""
    text = text.strip().strip("'\"").strip()
    match = UNIT.match(text)
    if match:
        return parse_number(match["number"]), match["unit"]
    return parse_number(text), ""


def parse_number(text: str) -> float:
    """A glued or typed number in Indonesian or English notation: '1.048.576',
    '0,66', '0.66' (a plain number; '1,5 × 10⁻⁷' is not one)."""
    text = text.strip().strip("'\"").replace("\u2212", "-").replace(" ", "")
    if "," in text:
        text = text.replace(".", "").replace(",", ".")
    elif text.count(".") > 1:
        text = text.replace(".", "")
    return float(text)


def accepted_bins(answer: float, tolerance: float) -> tuple[float, list[int]]:
    """Bin width and the bins (``floor(y / width)``) lying wholly inside
    [answer - tolerance, answer + tolerance]."""
    width = tolerance / BINS_PER_TOLERANCE
    first = math.ceil((answer - tolerance) / width - 1e-9)
    last = math.floor((answer + tolerance) / width + 1e-9) - 1
    return width, list(range(first, last + 1))


def choice_data(salt: str, right: int, feedback: list[str]) -> dict:
    """What cek.js needs for a multiple-choice question: the hash of the right
    option's index and each option's feedback, masked."""
    return {"kunci": fnv1a(f"{salt}:{right}"),
            "umpan": [mask(text, f"{salt}:umpan:{i}") for i, text in enumerate(feedback)]}


def number_data(salt: str, answer: float, tolerance: float, answer_text: str, *, wrong_feedback: str,
                explanation: str, typical_mistake: float | None = None, mistake_feedback: str = "") -> dict:
    """What cek.js needs for a number question: the bin width, the hashes of
    the accepted bins (and of a typical mistake's), the feedback and the
    answer as shown, masked."""
    width, bins = accepted_bins(answer, tolerance)
    data = {"lebar": width, "kunci": [fnv1a(f"{salt}:{b}") for b in bins],
            "umpan": [mask(wrong_feedback, f"{salt}:umpan:salah"), mask(explanation, f"{salt}:umpan:benar")],
            "jawaban": mask(answer_text, f"{salt}:jawaban")}
    if typical_mistake is not None:
        _, wrong_bins = accepted_bins(typical_mistake, tolerance)
        data["keliru"] = [fnv1a(f"{salt}:{b}") for b in wrong_bins if b not in bins]
        data["umpan"].append(mask(mistake_feedback or wrong_feedback, f"{salt}:umpan:keliru"))
    return data


def _positive_float(text: str) -> float:
    value = parse_number(text)
    if not value > 0:
        raise ValueError("toleransi harus bilangan positif, misalnya 0.01")
    return value


class CekPemahaman(SphinxDirective):
    has_content = True
    required_arguments = 0
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec = {
        "jenis": lambda arg: directives.choice(arg, ("pilihan", "angka")),
        "jawaban": directives.unchanged_required,
        "toleransi": _positive_float,
        "satuan": directives.unchanged,
        "umpan-salah": directives.unchanged,
        "penjelasan": directives.unchanged,
        "keliru": directives.unchanged,
        "umpan-keliru": directives.unchanged,
    }

    def glued(self, name: str) -> str:
        from myst_nb.ext.glue.utils import RetrievalError, retrieve_glue_data

        try:
            data = retrieve_glue_data(self.state.document, name).data
        except RetrievalError:
            raise self.error(f"cek-pemahaman: tidak ada nilai glue '{name}' di bab ini. "
                             "Tempelkan jawabannya dengan glue(...) di sel bab, lalu sebut namanya di :jawaban:.")
        text = data.get("text/plain", "")
        return text[1:-1] if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" else text

    def run(self):
        env = self.env
        serial = env.new_serialno("cek-pemahaman") + 1
        qid = f"{env.docname.rsplit('/', 1)[-1]}-{serial}"
        salt = hashlib.sha256(f"{env.docname}:{serial}".encode()).hexdigest()[:12]
        kind = self.options.get("jenis", "pilihan")
        lines = list(self.content)
        start = next((i for i, line in enumerate(lines) if OPTION.match(line)), len(lines))
        box = nodes.container(classes=["cek-pemahaman"], ids=[f"cek-{qid}"])
        self.set_source_info(box)
        box += nodes.raw("", '<p class="cek-judul">Cek pemahaman</p>', format="html")
        question = nodes.container(classes=["cek-soal"])
        if self.arguments:
            para = nodes.paragraph()
            para += self.state.inline_text(self.arguments[0], self.lineno)[0]
            question += para
        if start:
            self.state.nested_parse(self.content[:start], self.content_offset, question)
        box += question
        data = {"id": qid, "bab": env.docname, "jenis": kind, "garam": salt}
        if kind == "pilihan":
            box += self.choices(lines[start:], data, qid)
        else:
            box += self.number(data, qid)
        box += nodes.raw("", (
            '<div class="cek-aksi"><button type="button" class="cek-periksa">Periksa jawaban</button>'
            '<button type="button" class="cek-lihat" hidden>Lihat jawaban</button></div>'
            '<p class="cek-umpan" role="status" aria-live="polite"></p>'
            f'<script type="application/json" class="cek-data">{json.dumps(data, ensure_ascii=True)}</script>'
        ), format="html")
        count_question(env, env.docname)
        return [box]

    def choices(self, lines: list[str], data: dict, qid: str) -> nodes.Node:
        options = []
        for line in lines:
            match = OPTION.match(line)
            if match:
                options.append({"text": match["text"], "right": match["mark"] != " ", "feedback": []})
            elif line.strip() and options:
                options[-1]["feedback"].append(line.strip())
            elif line.strip():
                raise self.error("cek-pemahaman: setiap pilihan ditulis '- [ ] teks' (salah) atau "
                                 "'- [x] teks' (benar), umpan baliknya di baris menjorok di bawahnya.")
        right = [i for i, option in enumerate(options) if option["right"]]
        if len(options) < 2 or len(right) != 1:
            raise self.error(f"cek-pemahaman: butuh sedikitnya dua pilihan dan tepat satu '- [x]' "
                             f"(ada {len(options)} pilihan, {len(right)} yang benar).")
        missing = [i + 1 for i, option in enumerate(options) if not option["feedback"]]
        if missing:
            raise self.error(f"cek-pemahaman: pilihan {missing} belum punya umpan balik. Tulis mengapa "
                             "pilihan itu benar atau salah di baris menjorok di bawahnya.")
        data.update(choice_data(data["garam"], right[0], [" ".join(o["feedback"]) for o in options]))
        group = nodes.container(classes=["cek-pilihan"])
        group += nodes.raw("", f'<fieldset><legend class="cek-petunjuk">Pilih satu jawaban</legend>', format="html")
        for i, option in enumerate(options):
            # The letter also names the option for a screen reader when its text is a formula.
            group += nodes.raw("", f'<label class="cek-opsi"><input type="radio" name="cek-{qid}" value="{i}"> '
                                   f'<span class="cek-huruf">{chr(ord("A") + i)}.</span> <span>', format="html")
            group += self.state.inline_text(option["text"], self.lineno)[0]
            group += nodes.raw("", "</span></label>", format="html")
        group += nodes.raw("", "</fieldset>", format="html")
        return group

    def number(self, data: dict, qid: str) -> nodes.Node:
        for needed in ("jawaban", "toleransi"):
            if needed not in self.options:
                raise self.error(f"cek-pemahaman :jenis: angka butuh :{needed}: "
                                 "(nama nilai glue jawabannya dan toleransinya, misalnya 0.01).")
        shown = self.glued(self.options["jawaban"])
        try:
            answer, glued_unit = number_and_unit(shown)
        except ValueError:
            raise self.error(f"cek-pemahaman: nilai glue '{self.options['jawaban']}' ({shown!r}) "
                             "bukan satu bilangan; tempelkan angkanya saja, misalnya id_float(x, 3).")
        tolerance = self.options["toleransi"]
        unit_name = self.options.get("satuan", glued_unit)
        wrong = number_and_unit(self.glued(self.options["keliru"]))[0] if "keliru" in self.options else None
        data.update(number_data(
            data["garam"], answer, tolerance, shown if glued_unit or not unit_name else f"{shown} {unit_name}",
            wrong_feedback=self.options.get("umpan-salah", "Coba hitung sekali lagi."),
            explanation=self.options.get("penjelasan", "Tepat."),
            typical_mistake=wrong, mistake_feedback=self.options.get("umpan-keliru", "")))
        tolerance_text = f"{tolerance:g}".replace(".", ",")
        return nodes.raw("", (
            f'<div class="cek-angka"><label for="cek-{qid}-isian">Jawaban Anda'
            f'{f" (dalam {unit_name})" if unit_name else ""}'
            f'</label> <input id="cek-{qid}-isian" type="text" inputmode="decimal" autocomplete="off" '
            f'spellcheck="false"><span class="cek-toleransi">diterima bila selisihnya paling banyak '
            f'{tolerance_text}{" " + unit_name if unit_name else ""}; koma atau titik desimal boleh</span></div>'),
            format="html")


def count_question(env, docname: str) -> None:
    counts = getattr(env, "atensi_questions", None)
    if counts is None:
        counts = env.atensi_questions = {}
    counts[docname] = counts.get(docname, 0) + 1


def questions_per_page(env) -> dict[str, int]:
    """How many questions each page holds (read by the chapter card)."""
    return dict(getattr(env, "atensi_questions", {}) or {})


def _purge(app, env, docname):
    getattr(env, "atensi_questions", {}).pop(docname, None)


def _merge(app, env, docnames, other):
    for docname in docnames:
        if docname in getattr(other, "atensi_questions", {}):
            if not hasattr(env, "atensi_questions"):
                env.atensi_questions = {}
            env.atensi_questions[docname] = other.atensi_questions[docname]


def setup(app):
    """Registers the directive, its bookkeeping, the stylesheet and the script."""
    app.add_directive("cek-pemahaman", CekPemahaman)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.add_css_file("cek.css")
    app.add_js_file("cek.js", defer="defer")
