"""_ext/atensi_book/questions.py and static/cek.js: "Cek pemahaman" in the page.

The answer is hashed and the feedback masked in Python; cek.js must compute
the same hashes and unmask the same text. In Chromium, on a page made of the
module's own data: a wrong and a right answer of each kind with their
feedback, the answer absent from the page source, and progress that
outlives a reload from ``file://`` and can be reset.
"""

from __future__ import annotations

import json
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "_ext"))

from atensi_book import questions  # noqa: E402

STATIC = ROOT / "_ext" / "atensi_book" / "static"


def test_fnv1a_matches_the_published_vectors():
    assert questions.fnv1a("") == "811c9dc5"
    assert questions.fnv1a("a") == "e40c292c"
    assert questions.fnv1a("foobar") == "bf9cf968"


def test_mask_round_trips_and_hides_the_text():
    text = "Belum tepat: √d_k membagi skor, bukan bobot."
    masked = questions.mask(text, "garam:umpan:1")
    assert "tepat" not in masked and questions.unmask(masked, "garam:umpan:1") == text
    assert questions.mask(text, "garam:umpan:2") != masked  # each option its own keystream


@pytest.mark.parametrize("text, value", [("0,66", 0.66), ("0.66", 0.66), ("1.048.576", 1048576.0),
                                         ("'1.048,5'", 1048.5), ("\u22122,5", -2.5)])
def test_parse_number_reads_indonesian_and_english_notation(text, value):
    assert questions.parse_number(text) == pytest.approx(value)


def test_a_glued_value_with_a_unit_gives_its_number_and_unit():
    assert questions.number_and_unit("'48 MiB'") == (48.0, "MiB")
    assert questions.number_and_unit("33,3 %") == (pytest.approx(33.3), "%")
    assert questions.number_and_unit("1.048.576") == (1048576.0, "")


def test_accepted_bins_lie_inside_the_tolerance():
    width, bins = questions.accepted_bins(0.661, 0.01)
    assert width == pytest.approx(0.0025)
    assert bins and all(0.651 - 1e-9 <= b * width and (b + 1) * width <= 0.671 + 1e-9 for b in bins)
    assert len(bins) >= questions.BINS_PER_TOLERANCE * 2 - 1  # loses at most one bin at an edge


CHOICE_FEEDBACK = ["Skor Ani lebih kecil, jadi bobotnya juga.",
                   "Skor Budi paling besar, dan softmax menjaga urutan.",
                   "Softmax tidak meratakan skor yang berbeda."]


def _question_page(path) -> None:
    choice = {"id": "uji-1", "bab": "chapters/uji", "jenis": "pilihan", "garam": "g1",
              **questions.choice_data("g1", 1, CHOICE_FEEDBACK)}
    number = {"id": "uji-2", "bab": "chapters/uji", "jenis": "angka", "garam": "g2",
              **questions.number_data("g2", 0.661, 0.01, "0,661", wrong_feedback="Bagi e^s dengan jumlahnya.",
                                      explanation="Softmax membagi e^s dengan jumlah keempatnya.",
                                      typical_mistake=0.5, mistake_feedback="Itu bobot sebelum dibagi.")}
    actions = ('<div class="cek-aksi"><button type="button" class="cek-periksa">Periksa jawaban</button>'
               '<button type="button" class="cek-lihat" hidden>Lihat jawaban</button></div>'
               '<p class="cek-umpan" role="status" aria-live="polite"></p>')
    options = "".join(f'<label class="cek-opsi"><input type="radio" name="cek-uji-1" value="{i}"> {name}</label>'
                      for i, name in enumerate(["Ani", "Budi", "Sama semua"]))
    path.write_text(
        "<!doctype html><html lang='id'><head><meta charset='utf-8'>"
        f"<script defer src='{(STATIC / 'cek.js').as_uri()}'></script></head><body><main>"
        '<p>Kemajuan: <span class="cek-kemajuan" data-bab="chapters/uji" data-jumlah="2"></span>'
        ' <button type="button" class="cek-reset" hidden>Hapus kemajuan</button></p>'
        f'<div class="cek-pemahaman" id="cek-uji-1"><p>Bobot terbesar?</p><fieldset>{options}</fieldset>{actions}'
        f'<script type="application/json" class="cek-data">{json.dumps(choice)}</script></div>'
        '<div class="cek-pemahaman" id="cek-uji-2"><p>Berapa?</p><div class="cek-angka">'
        '<label for="isian">Jawaban Anda</label><input id="isian" type="text" inputmode="decimal"></div>'
        f'{actions}<script type="application/json" class="cek-data">{json.dumps(number)}</script></div>'
        "</main></body></html>", encoding="utf-8")


@pytest.fixture
def question_page(tmp_path):
    _question_page(tmp_path / "soal.html")
    return tmp_path / "soal.html"


def test_the_answer_is_not_in_the_page_source(question_page):
    source = question_page.read_text(encoding="utf-8")
    for hidden in ["0,661", "0.661", *CHOICE_FEEDBACK, "sebelum dibagi"]:
        assert hidden not in source


@pytest.mark.browser
def test_the_page_hashes_and_unmasks_like_python(chromium, question_page):
    page = chromium.new_page()
    try:
        page.goto(question_page.as_uri())
        # cek.js keeps its helpers private: check them through what it shows.
        box = page.locator("#cek-uji-1")
        for i, expected in enumerate(CHOICE_FEEDBACK):
            box.locator("input").nth(i).check()
            box.locator(".cek-periksa").click()
            assert expected in box.locator(".cek-umpan").inner_text()
    finally:
        page.close()


@pytest.mark.browser
@pytest.mark.parametrize("width, height", [(360, 740), (1280, 800)])
def test_wrong_then_right_answers_with_their_feedback(chromium, question_page, width, height):
    context = chromium.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        page.goto(question_page.as_uri())
        choice, number = page.locator("#cek-uji-1"), page.locator("#cek-uji-2")
        choice.locator(".cek-periksa").click()
        assert choice.locator(".cek-umpan").inner_text() == "Pilih satu jawaban dulu."
        choice.locator("input").nth(0).check()
        choice.locator(".cek-periksa").click()
        assert choice.locator(".cek-umpan").inner_text() == f"Belum tepat. {CHOICE_FEEDBACK[0]}"
        choice.locator("input").nth(1).check()
        choice.locator(".cek-periksa").click()
        assert choice.locator(".cek-umpan").inner_text() == f"Benar. {CHOICE_FEEDBACK[1]}"

        field = number.locator("input")
        field.fill("dua")
        number.locator(".cek-periksa").click()
        assert "Tulis satu bilangan" in number.locator(".cek-umpan").inner_text()
        assert field.get_attribute("aria-invalid") == "true"
        field.fill("0,5")  # the typical mistake gets its own explanation
        number.locator(".cek-periksa").click()
        assert number.locator(".cek-umpan").inner_text() == "Belum tepat. Itu bobot sebelum dibagi."
        field.fill("0,7")
        number.locator(".cek-periksa").click()
        assert number.locator(".cek-umpan").inner_text() == "Belum tepat. Bagi e^s dengan jumlahnya."
        number.locator(".cek-lihat").click()
        assert number.locator(".cek-umpan").inner_text() == "Jawabannya 0,661."
        field.fill("0.665")  # within the stated tolerance, with a decimal point
        number.locator(".cek-periksa").click()
        assert number.locator(".cek-umpan").inner_text() == \
            "Benar. Softmax membagi e^s dengan jumlah keempatnya."
        assert number.locator(".cek-lihat").is_hidden()
    finally:
        context.close()


@pytest.mark.browser
def test_progress_survives_a_reload_from_file_and_resets(chromium, question_page):
    context = chromium.new_context(viewport={"width": 360, "height": 740})
    try:
        page = context.new_page()
        page.goto(question_page.as_uri())
        progress = page.locator(".cek-kemajuan")
        assert progress.inner_text() == "0 dari 2 dijawab, 0 benar"
        assert page.locator(".cek-reset").is_hidden()
        page.locator("#cek-uji-1 input").nth(2).check()
        page.locator("#cek-uji-1 .cek-periksa").click()
        page.locator("#cek-uji-2 input").fill("0,66")
        page.locator("#cek-uji-2 .cek-periksa").click()
        assert progress.inner_text() == "2 dari 2 dijawab, 1 benar"
        page.reload()
        assert page.locator(".cek-kemajuan").inner_text() == "2 dari 2 dijawab, 1 benar"
        page.locator(".cek-reset").click()
        assert page.locator(".cek-kemajuan").inner_text() == "0 dari 2 dijawab, 0 benar"
        page.reload()
        assert page.locator(".cek-kemajuan").inner_text() == "0 dari 2 dijawab, 0 benar"
    finally:
        context.close()


@pytest.mark.book
@pytest.mark.browser
def test_built_chapter_questions_answer_in_the_page(open_page):
    page = open_page("chapters/softmax.html", width=360, height=740).page
    boxes = page.locator("div.cek-pemahaman")
    assert boxes.count() >= 3
    verdicts = []
    for n in range(boxes.count()):
        box = boxes.nth(n)
        options = box.locator("input[type=radio]")
        for i in range(options.count()):
            options.nth(i).check()
            box.locator(".cek-periksa").click()
            verdicts.append(box.locator(".cek-umpan").inner_text())
        if options.count():
            right = [v for v in verdicts[-options.count():] if v.startswith("Benar.")]
            assert len(right) == 1, verdicts[-options.count():]
    wrong = [v for v in verdicts if v.startswith("Belum tepat.")]
    assert wrong and all(len(v) > len("Belum tepat. ") + 20 for v in wrong)  # says why
    progress = page.locator(".kartu-bab .cek-kemajuan").inner_text()
    assert progress.startswith(f"{sum(boxes.nth(n).locator('input[type=radio]').count() > 0 for n in range(boxes.count()))} dari {boxes.count()} dijawab")
