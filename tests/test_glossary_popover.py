"""_ext/atensi_book/glossary_popover.py and static/glosarium.js: a glossary
term opens its one-line definition in the page, by tap and by keyboard."""

from __future__ import annotations

import json
import sys

import pytest
from docutils import nodes

from conftest import ROOT

sys.path.insert(0, str(ROOT / "_ext"))

from atensi_book import glossary_popover  # noqa: E402

STATIC = ROOT / "_ext" / "atensi_book" / "static"


def test_plain_math_reads_as_text():
    assert glossary_popover.plain_math(r"d_\text{model} = 768") == "dmodel = 768"
    assert glossary_popover.plain_math(r"0, \dots, i") == "0, …, i"
    assert glossary_popover.plain_math(r"\left(x\right) \le 1") == "(x) ≤ 1"


def test_first_sentence_drops_the_chapter_line_and_the_rest():
    definition = nodes.definition()
    paragraph = nodes.paragraph()
    paragraph += nodes.Text("Model bahasa kecil dengan ")
    paragraph += nodes.math(r"d_k = 64", r"d_k = 64")
    paragraph += nodes.Text(". Mesinnya lain. Bab: Pendahuluan.")
    definition += paragraph
    assert glossary_popover.first_sentence(definition) == "Model bahasa kecil dengan dk = 64."


def _page(path) -> None:
    terms = {"term-softmax": {"istilah": "softmax", "arti": "Fungsi yang mengubah skor menjadi peluang."}}
    path.write_text(
        "<!doctype html><html lang='id'><head><meta charset='utf-8'>"
        f"<link rel='stylesheet' href='{(STATIC / 'glosarium.css').as_uri()}'>"
        f"<script defer src='{(STATIC / 'glosarium.js').as_uri()}'></script></head><body><main>"
        "<p>Awal <a class='glosarium-istilah reference internal' href='glosarium.html#term-softmax'>"
        "<span class='xref std std-term'>softmax</span></a> dipakai di sini.</p>"
        f"<script type='application/json' class='glosarium-data'>{json.dumps(terms)}</script>"
        "</main></body></html>", encoding="utf-8")


@pytest.mark.browser
def test_popover_by_keyboard_and_back(chromium, tmp_path):
    _page(tmp_path / "bab.html")
    page = chromium.new_page(viewport={"width": 1280, "height": 800})
    try:
        page.goto((tmp_path / "bab.html").as_uri())
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.textContent") == "softmax"
        page.keyboard.press("Enter")
        box = page.locator(".glosarium-popover")
        assert box.get_attribute("role") == "dialog"
        assert box.inner_text().split()[:6] == "softmax Fungsi yang mengubah skor menjadi".split()
        assert page.url.endswith("bab.html")  # the reader stays on the page
        assert page.evaluate("document.activeElement.textContent") == "Entri lengkap di Glosarium"
        assert page.locator("a.glosarium-istilah").get_attribute("aria-expanded") == "true"
        page.keyboard.press("Escape")
        assert box.count() == 0
        assert page.evaluate("document.activeElement.textContent") == "softmax"
        assert page.locator("a.glosarium-istilah").get_attribute("aria-expanded") == "false"
    finally:
        page.close()


@pytest.mark.browser
def test_popover_by_tap_stays_on_a_phone_screen(chromium, tmp_path):
    _page(tmp_path / "bab.html")
    context = chromium.new_context(viewport={"width": 360, "height": 740}, has_touch=True)
    try:
        page = context.new_page()
        page.goto((tmp_path / "bab.html").as_uri())
        page.locator("a.glosarium-istilah").tap()
        box = page.locator(".glosarium-popover")
        edges = box.evaluate("b => { const r = b.getBoundingClientRect(); return [r.left, r.right]; }")
        assert edges[0] >= 0 and edges[1] <= 360
        assert box.locator("a").get_attribute("href") == "glosarium.html#term-softmax"
        page.touchscreen.tap(10, 700)  # elsewhere: closes
        assert box.count() == 0
        page.locator("a.glosarium-istilah").tap()
        page.locator(".glosarium-popover button").tap()
        assert page.locator(".glosarium-popover").count() == 0
    finally:
        context.close()
