"""_ext/atensi_book/folding.py and static/lipat.js: code folded on phones.

The summary line of a folded cell is derived, never typed twice; in Chromium,
on a page made of the module's own markup and files: folded at 360 px before
the first paint, shown at 1280 px, one cell opens alone, the page-level
control folds or opens all, and that choice outlives a reload and carries to
another page, also from ``file://``.
"""

from __future__ import annotations

import sys

import pytest
from docutils import nodes

from conftest import ROOT

sys.path.insert(0, str(ROOT / "_ext"))

from atensi_book import folding  # noqa: E402

STATIC = ROOT / "_ext" / "atensi_book" / "static"


def test_summary_prefers_metadata_then_opening_comment_then_the_code():
    source = "# Skor untuk contoh berjalan. Baris kedua.\nS = Q @ K.T\n"
    assert folding.cell_summary({"ringkasan": "Dari metadata."}, source) == "Dari metadata."
    assert folding.cell_summary({}, source) == "Skor untuk contoh berjalan."
    assert folding.cell_summary({}, "S = Q @ K.T\nprint(S)\n") == "Kode (2 baris): menghitung S; mencetak hasilnya"


def test_summary_of_code_names_what_is_defined_and_computed():
    source = "def f(x):\n    return x\n\nclass Kotak:\n    pass\nA, B = f(1), f(2)\n_tersembunyi = 3\n"
    assert folding.summary_of_code(source) == "Kode (6 baris): mendefinisikan f(), Kotak; menghitung A, B"
    assert folding.summary_of_code("import numpy as np\n") == "Kode (1 baris): mengimpor np"
    assert folding.summary_of_code("a = (\n") == "Kode (1 baris)"  # not Python: the size only


def test_opening_comment_spans_lines_and_stops_at_the_first_sentence():
    source = "// Satu thread per (i, j): skor\n// dikali skala. Lainnya.\n__global__ void f() {}\n"
    assert folding.opening_comment(source, ("//",)) == "Satu thread per (i, j): skor dikali skala."
    long = "# " + "kata " * 60 + "\nx = 1\n"
    summary = folding.opening_comment(long)
    assert len(summary) <= folding.SUMMARY_MAX_CHARS and summary.endswith("…")


def _page(path, title: str, n_cells: int = 2) -> None:
    cells = "".join(
        f'<div class="cell lipat docutils container">{folding.control_html(f"Ringkasan {i}", f"kode-{i}")}'
        f'<div class="cell_input docutils container" id="kode-{i}"><pre>S = Q @ K.T  # sel {i}</pre></div>'
        f'<div class="cell_output docutils container"><pre>keluaran {i}</pre></div></div>'
        for i in range(1, n_cells + 1))
    path.write_text(
        "<!doctype html><html lang='id'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<script>{folding.HEAD_SCRIPT}</script>"
        f"<link rel='stylesheet' href='{(STATIC / 'lipat.css').as_uri()}'>"
        f"<script defer src='{(STATIC / 'lipat.js').as_uri()}'></script>"
        f"</head><body><main><section><h1>{title}</h1>{folding.page_control_html()}"
        f"<p>Teks.</p>{cells}</section></main></body></html>",
        encoding="utf-8")


FOLD_STATE = """() => [...document.querySelectorAll("div.cell")].map((cell) => ({
  input: getComputedStyle(cell.querySelector("div.cell_input")).display !== "none",
  output: getComputedStyle(cell.querySelector("div.cell_output")).display !== "none",
  label: cell.querySelector(".lipat-tombol").innerText.trim(),
  expanded: cell.querySelector(".lipat-tombol").getAttribute("aria-expanded"),
}))"""


@pytest.fixture
def fold_pages(tmp_path):
    _page(tmp_path / "satu.html", "Satu")
    _page(tmp_path / "dua.html", "Dua")
    return tmp_path


@pytest.mark.browser
def test_folded_on_a_phone_before_the_first_paint(chromium, fold_pages):
    context = chromium.new_context(viewport={"width": 360, "height": 740})
    try:
        page = context.new_page()
        # What the first paint sees: the state once the body is parsed and the
        # render-blocking stylesheets are in (a loaded machine may parse the body
        # before they arrive; the browser paints nothing until they do).
        page.add_init_script("""document.addEventListener("readystatechange", () => {
          if (document.readyState !== "interactive" || window.__first) return;
          const record = () => {
            const input = document.querySelector("div.cell_input");
            window.__first = window.__first || (input && getComputedStyle(input).display);
          };
          const pending = [...document.querySelectorAll('link[rel="stylesheet"]')]
            .filter(link => !link.sheet);
          if (!pending.length) return record();
          let left = pending.length;
          pending.forEach(link => link.addEventListener("load", () => { if (!--left) record(); }));
        }, true);""")
        page.goto((fold_pages / "satu.html").as_uri())
        assert page.evaluate("document.documentElement.dataset.kode") == "lipat"
        assert page.evaluate("window.__first") == "none"
        state = page.evaluate(FOLD_STATE)
        assert [(c["input"], c["output"], c["label"], c["expanded"]) for c in state] == \
            [(False, True, "Tampilkan kode", "false")] * 2
        assert page.locator(".lipat-semua").inner_text() == "Tampilkan semua kode"
        # One cell opens by keyboard, alone; the other stays folded.
        page.locator(".lipat-tombol").first.focus()
        page.keyboard.press("Enter")
        state = page.evaluate(FOLD_STATE)
        assert [(c["input"], c["label"], c["expanded"]) for c in state] == \
            [(True, "Sembunyikan kode", "true"), (False, "Tampilkan kode", "false")]
    finally:
        context.close()


@pytest.mark.browser
def test_page_control_choice_persists_across_reload_and_pages(chromium, fold_pages):
    context = chromium.new_context(viewport={"width": 360, "height": 740})
    try:
        page = context.new_page()
        page.goto((fold_pages / "satu.html").as_uri())
        page.locator(".lipat-semua").click()
        assert [c["input"] for c in page.evaluate(FOLD_STATE)] == [True, True]
        assert page.locator(".lipat-semua").inner_text() == "Lipat semua kode"
        # The browser hands the stored choice to its storage process on its own
        # time; a reader who reloads a second later always finds it there.
        page.wait_for_function(f"localStorage.getItem('{folding.STORAGE_KEY}') === 'buka'", timeout=5000)
        page.reload()
        assert [c["input"] for c in page.evaluate(FOLD_STATE)] == [True, True]
        page.goto((fold_pages / "dua.html").as_uri())
        assert [c["input"] for c in page.evaluate(FOLD_STATE)] == [True, True]
        page.locator(".lipat-semua").click()  # and back to folded, remembered too
        page.wait_for_function(f"localStorage.getItem('{folding.STORAGE_KEY}') === 'lipat'", timeout=5000)
        page.goto((fold_pages / "satu.html").as_uri())
        assert [c["input"] for c in page.evaluate(FOLD_STATE)] == [False, False]
    finally:
        context.close()


@pytest.mark.browser
def test_desktop_shows_code_with_the_same_controls(chromium, fold_pages):
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = context.new_page()
        page.goto((fold_pages / "satu.html").as_uri())
        state = page.evaluate(FOLD_STATE)
        assert [(c["input"], c["label"], c["expanded"]) for c in state] == [(True, "Sembunyikan kode", "true")] * 2
        page.locator(".lipat-semua").click()
        assert [c["input"] for c in page.evaluate(FOLD_STATE)] == [False, False]
    finally:
        context.close()


@pytest.mark.browser
def test_without_storage_the_page_still_folds_and_opens(chromium, fold_pages):
    context = chromium.new_context(viewport={"width": 360, "height": 740})
    try:
        page = context.new_page()
        page.add_init_script("""Object.defineProperty(window, "localStorage", {
          get() { throw new DOMException("off", "SecurityError"); } });""")
        errors = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto((fold_pages / "satu.html").as_uri())
        assert [c["input"] for c in page.evaluate(FOLD_STATE)] == [False, False]
        page.locator(".lipat-semua").click()
        assert [c["input"] for c in page.evaluate(FOLD_STATE)] == [True, True]
        assert errors == []
    finally:
        context.close()


@pytest.mark.book
@pytest.mark.browser
def test_the_built_chapter_folds_its_cells_on_a_phone_only(open_page):
    count = """() => [...document.querySelectorAll("main div.cell > div.cell_input")]
      .filter((input) => input.closest("div.cell").querySelector(".lipat-baris"))
      .map((input) => getComputedStyle(input).display !== "none")"""
    phone = open_page("chapters/softmax.html", width=360, height=740).page
    shown = phone.evaluate(count)
    assert shown and not any(shown)
    assert phone.evaluate("[...document.querySelectorAll('main div.cell_output')]"
                          ".every((o) => getComputedStyle(o).display !== 'none')")
    desk = open_page("chapters/softmax.html", width=1280, height=800).page
    assert all(desk.evaluate(count))
    assert desk.locator(".kartu-bab").inner_text().count("Bab ") == 1


def _section(title: str, *children) -> nodes.section:
    section = nodes.section()
    section += nodes.title(text=title)
    for child in children:
        section += child
    return section


def test_deeper_titles_come_from_the_front_matter_only_as_strings():
    assert folding.deeper_titles({"atensi": {"pendalaman": ["Kernel CUDA", 3, "Latihan"]}}) == [
        "Kernel CUDA", "Latihan"]
    assert folding.deeper_titles({"atensi": {"pendalaman": "Latihan"}}) == []
    assert folding.deeper_titles({}) == []


def test_marking_names_the_titles_a_page_does_not_have():
    doc = nodes.section()
    kernel = _section("Kernel CUDA", nodes.paragraph(text="isi"))
    doc += _section("Matematika")
    doc += kernel
    assert folding.mark_deeper_sections(doc, ["Kernel CUDA", "Kernal CUDA"]) == ["Kernal CUDA"]
    assert folding.DEEPER_CLASS in kernel["classes"]
    assert all(folding.DEEPER_CLASS not in s["classes"] for s in doc.findall(nodes.section) if s is not kernel)


def test_a_folded_section_keeps_its_title_and_says_how_long_its_body_reads():
    prose = nodes.paragraph(text="kata " * folding.WORDS_PER_MINUTE * 3)
    listing = nodes.literal_block("x = 1 " * 5000, "x = 1 " * 5000)  # code: not counted as reading
    section = _section("Kernel CUDA", prose, listing)
    folding.fold_section(section, "kode-7")
    title, control, body = section.children
    assert isinstance(title, nodes.title) and title.astext() == "Kernel CUDA"
    assert "Pendalaman, ± 3 menit, ada kode" in control.astext()
    assert 'aria-controls="kode-7"' in control.astext() and "Tampilkan bagian" in control.astext()
    assert body["ids"] == ["kode-7"] and list(body.children) == [prose, listing]
    assert "lipat" in section["classes"]
    assert folding.deeper_summary(_section("Latihan", nodes.paragraph(text="a b"))) == "Pendalaman, ± 1 menit"


@pytest.mark.book
@pytest.mark.browser
def test_the_built_chapter_folds_its_deeper_sections_on_a_phone_only(open_page):
    state = """() => [...document.querySelectorAll("main section.pendalaman")].map((s) => ({
      title: getComputedStyle(s.querySelector("h2, h3, h4")).display !== "none",
      body: getComputedStyle(s.querySelector(":scope > .lipat-isi")).display !== "none"}))"""
    phone = open_page("chapters/mask_kausal.html", width=360, height=740).page
    folded = phone.evaluate(state)
    assert len(folded) >= 3 and all(s["title"] and not s["body"] for s in folded)
    kernel = phone.locator("main section.pendalaman", has=phone.locator("h2", has_text="Kernel CUDA"))
    kernel.locator(":scope > .lipat-baris .lipat-tombol").click()
    assert kernel.locator(":scope > .lipat-isi").is_visible()
    assert kernel.locator(":scope > .lipat-baris .lipat-tombol").get_attribute("aria-expanded") == "true"
    desk = open_page("chapters/mask_kausal.html", width=1280, height=800).page
    assert all(s["body"] for s in desk.evaluate(state))


def test_a_section_with_an_in_page_question_is_known_as_such():
    question = nodes.container(classes=["cek-pemahaman"])
    assert folding.holds_questions(_section("Penjelajah", nodes.paragraph(text="a"), question))
    assert not folding.holds_questions(_section("Kernel CUDA", nodes.paragraph(text="a")))
