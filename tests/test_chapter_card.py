"""_ext/atensi_book/chapter_card.py and static/kartu.js: the card below each
chapter's title and "Lanjutkan membaca".

From the sources: every chapter of the toc carries the card's fields in its
front matter, its prerequisites name earlier pages, and the reading time
leaves out what a phone hides. In Chromium: a chapter remembers the section
read last, and the front page offers to continue there, from ``file://``.
"""

from __future__ import annotations

import sys

import pytest
from docutils import nodes

from conftest import ROOT, toc_pages

sys.path.insert(0, str(ROOT / "_ext"))

from atensi_book import chapter_card  # noqa: E402

STATIC = ROOT / "_ext" / "atensi_book" / "static"
CHAPTERS = [page for page in toc_pages() if page in chapter_card.numbered_chapters(ROOT)]


def test_numbered_chapters_follow_the_toc():
    chapters = chapter_card.numbered_chapters(ROOT)
    assert chapters[0] == "chapters/cuda_10_menit" and "chapters/pendahuluan" not in chapters
    assert "chapters/glosarium" not in chapters  # the appendix has no number
    assert chapters == [page for page in toc_pages() if page in chapters]  # reading order


@pytest.mark.parametrize("page", [toc_pages()[0]] + CHAPTERS)
def test_every_chapter_has_the_card_fields(page):
    meta = chapter_card.front_matter(ROOT / f"{page}.md").get(chapter_card.FRONT_MATTER_KEY)
    assert meta, f"{page}.md: front matter tanpa 'atensi:' (pelajari, prasyarat)"
    learn = meta.get("pelajari")
    assert isinstance(learn, list) and len(learn) == 3 and all(isinstance(x, str) and x for x in learn)
    earlier = toc_pages()[:toc_pages().index(page)]
    for name in meta.get("prasyarat") or []:
        assert f"chapters/{name}" in earlier, f"{page}: prasyarat {name!r} bukan halaman sebelumnya"


def _cell(source: str, output: str) -> nodes.container:
    cell = nodes.container(nb_element="cell_code")
    box = nodes.container(nb_element="cell_code_source")
    box += nodes.literal_block(source, source)
    out = nodes.container(nb_element="cell_code_output")
    out += nodes.literal_block(output, output)
    cell += [box, out]
    return cell


def test_card_lines_keep_emphasis_and_escape_markup():
    assert chapter_card.inline_html("siapa yang dirujuk *dia*") == "siapa yang dirujuk <em>dia</em>"
    assert chapter_card.inline_html("<b>a</b> & *x*") == "&lt;b&gt;a&lt;/b&gt; &amp; <em>x</em>"


def test_reading_time_counts_prose_and_outputs_not_folded_code():
    doc = nodes.section()
    doc += nodes.paragraph(text="kata " * chapter_card.WORDS_PER_MINUTE * 2)
    doc += _cell("x = 1\n" * 2000, "hasil")
    assert chapter_card.reading_minutes(doc) == 3  # 2 minutes and one word of output
    doc += nodes.literal_block("a b c " * 5000, "a b c " * 5000)  # a listing: folded too
    assert chapter_card.reading_minutes(doc) == 3
    deeper = nodes.section(classes=["pendalaman"])
    deeper += nodes.title(text="Judul yang tetap terbaca")
    deeper += nodes.paragraph(text="kata " * chapter_card.WORDS_PER_MINUTE * 5)
    doc += deeper
    assert chapter_card.reading_minutes(doc) == 3  # a folded section's body: not read on a phone
    deeper["classes"] = []
    assert chapter_card.reading_minutes(doc) == 8


def _chapter_page(folder, name: str) -> None:
    sections = "".join(f'<section id="bagian-{i}"><h2>Bagian {i}</h2>' + "<p>teks</p>" * 60 + "</section>"
                       for i in range(1, 4))
    (folder / f"{name}.html").write_text(
        "<!doctype html><html lang='id'><head><meta charset='utf-8'>"
        f"<script defer src='{(STATIC / 'kartu.js').as_uri()}'></script></head><body><main>"
        f'<section id="{name}"><h1>Judul {name}</h1>'
        f'<div class="kartu-bab" data-bab="chapters/{name}" data-akar="pendahuluan.html"></div>'
        f"{sections}</section></main></body></html>", encoding="utf-8")


@pytest.mark.browser
def test_front_page_offers_the_last_section_read(chromium, tmp_path):
    _chapter_page(tmp_path, "softmax")
    (tmp_path / "pendahuluan.html").write_text(
        "<!doctype html><html lang='id'><head><meta charset='utf-8'>"
        f"<script defer src='{(STATIC / 'kartu.js').as_uri()}'></script></head><body><main><h1>Pendahuluan</h1>"
        '<div class="kartu-bab" data-bab="chapters/pendahuluan" data-akar="">'
        '<p class="kartu-lanjut" hidden></p></div></main></body></html>', encoding="utf-8")
    context = chromium.new_context(viewport={"width": 360, "height": 740})
    try:
        page = context.new_page()
        page.goto((tmp_path / "pendahuluan.html").as_uri())
        assert page.locator(".kartu-lanjut").is_hidden()  # nothing read yet
        page.goto((tmp_path / "softmax.html").as_uri())
        page.locator("#bagian-2 h2").scroll_into_view_if_needed()
        page.evaluate("document.getElementById('bagian-2').scrollIntoView()")
        page.wait_for_timeout(700)
        page.goto((tmp_path / "pendahuluan.html").as_uri())
        offer = page.locator(".kartu-lanjut")
        assert offer.is_visible()
        assert offer.inner_text() == "Lanjutkan membaca: Judul softmax — Bagian 2"
        offer.locator("a").click()
        page.wait_for_load_state()
        assert page.url.endswith("softmax.html#bagian-2")
    finally:
        context.close()
