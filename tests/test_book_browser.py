"""The built book in a real browser with the network cut off: math renders,
no request leaves the site, the console stays clean."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import toc_pages

pytestmark = [pytest.mark.book, pytest.mark.browser]

PAGES = toc_pages()

# Counts math still left as TeX source in the page text (outside code blocks).
MATH_STATE = """
() => {
  const article = document.querySelector("article") || document.body;
  const copy = article.cloneNode(true);
  copy.querySelectorAll("pre, code, script, style, math").forEach(n => n.remove());
  const text = copy.textContent;
  return {
    rendered: document.querySelectorAll("span.math > math, div.math > div.rumus > math").length,
    sources: document.querySelectorAll("span.math, div.math").length,
    raw: ["\\\\(", "\\\\)", "\\\\[", "\\\\]", "$$"].filter(t => text.includes(t)),
    errors: document.querySelectorAll("merror").length,
  };
}
"""


def typeset(opened):
    """The page's math state: typeset when the book was built, no math script."""
    assert opened.page.locator("script[src*='mathjax'], script[src*='katex']").count() == 0
    return opened.page.evaluate(MATH_STATE)


def assert_stayed_offline(opened):
    assert opened.blocked == [], f"permintaan keluar situs: {opened.blocked}"
    assert opened.failed == [], f"berkas situs gagal dimuat: {opened.failed}"
    assert opened.console_errors == [], f"galat konsol: {opened.console_errors}"


def test_intro_page_renders_math_offline(open_page, tmp_path):
    opened = open_page("chapters/pendahuluan.html")
    state = typeset(opened)
    assert state["sources"] >= 10
    assert state["rendered"] >= state["sources"]
    assert state["raw"] == [], f"TeX mentah tersisa: {state['raw']}"
    assert state["errors"] == 0
    page = opened.page
    assert page.locator("html").get_attribute("lang") == "id"
    assert page.locator("h1").first.inner_text().startswith("Pendahuluan")
    # The math font came from the site too, and the formulas are drawn in it.
    page.evaluate("() => document.fonts.ready")
    fonts = page.evaluate("() => performance.getEntriesByType('resource').map(e => e.name)")
    assert any(url.endswith("/_static/rumus/latinmodern-math.woff2") for url in fonts)
    assert page.evaluate("() => document.fonts.check('16px \"Latin Modern Math\"')")
    assert page.evaluate("() => getComputedStyle(document.querySelector('math')).fontFamily").startswith(
        '"Latin Modern Math"')
    shots = Path(os.environ.get("ATENSI_SCREENSHOT_DIR", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / "pendahuluan.png"), full_page=False)
    assert_stayed_offline(opened)


@pytest.mark.parametrize("page", PAGES)
def test_every_page_works_offline(open_page, page):
    opened = open_page(f"{page}.html")
    state = typeset(opened)
    assert state["raw"] == [], f"{page}: TeX mentah tersisa: {state['raw']}"
    assert state["errors"] == 0
    assert state["rendered"] >= state["sources"]
    opened.page.wait_for_load_state("networkidle")
    assert_stayed_offline(opened)


def test_exercise_solution_opens(open_page):
    opened = open_page("chapters/pendahuluan.html")
    typeset(opened)
    solution = opened.page.locator("details.dropdown, .solution.dropdown").first
    assert solution.count() == 1
    title = solution.locator("summary, .admonition-title").first
    body_text = "lat_" not in solution.inner_text()  # glued numbers were substituted
    assert body_text
    title.click()
    opened.page.wait_for_timeout(300)
    assert "4.194.304" in solution.inner_text()
    assert_stayed_offline(opened)


def test_index_html_opens_the_intro(open_page):
    """`make book` tells the reader to open index.html: it must land on the
    intro, with nothing missing on the way (not even /favicon.ico)."""
    opened = open_page("index.html")
    opened.page.wait_for_url("**/chapters/pendahuluan.html")
    opened.page.wait_for_load_state("load")
    assert opened.page.locator("h1").first.inner_text().startswith("Pendahuluan")
    opened.page.wait_for_load_state("networkidle")
    assert_stayed_offline(opened)


# After _ext/atensi_book/static/wide-math.js: each display equation's box,
# its full width and font sizes, and where its number sits.
DISPLAY_MATH = """
() => Array.from(document.querySelectorAll("div.math")).map((div) => {
  const box = div.querySelector("div.rumus");
  const number = div.querySelector(".eqno");
  const right = (el) => el ? el.getBoundingClientRect().right : 0;
  return {
    id: div.id, client: box.clientWidth, scroll: box.scrollWidth,
    font: parseFloat(getComputedStyle(box).fontSize), full: parseFloat(box.dataset.fullSize || "0"),
    right: Math.max(right(box), right(number)), overflow: getComputedStyle(box).overflowX,
  };
})
"""


@pytest.mark.parametrize("page", PAGES)
def test_display_math_fits_a_phone(open_page, page):
    """At 360 px a wide equation is shrunk to fit (down to 60 %); only what is
    still too wide scrolls. Nothing is cut off at the edge of the screen."""
    opened = open_page(f"{page}.html", width=360, height=800)
    typeset(opened)
    width = opened.page.evaluate("() => document.documentElement.clientWidth")
    if opened.page.locator("div.math").count():
        opened.page.wait_for_function(
            "() => Array.from(document.querySelectorAll('div.math div.rumus')).every(b => b.dataset.fullSize)")
    for eq in opened.page.evaluate(DISPLAY_MATH):
        assert eq["right"] <= width + 0.5, f"{page} {eq['id']}: melewati tepi layar"
        if eq["scroll"] > eq["client"] + 1:  # still too wide: smallest size, and it scrolls
            assert eq["font"] == pytest.approx(0.6 * eq["full"], rel=0.02), (page, eq)
            assert eq["overflow"] == "auto", (page, eq)
    if page == PAGES[0]:  # the book's formula (1) fits whole on a phone
        first = opened.page.evaluate(DISPLAY_MATH)[0]
        assert first["scroll"] <= first["client"] + 1 and first["font"] < first["full"], first
    assert_stayed_offline(opened)


@pytest.mark.parametrize("page", PAGES)
def test_every_solution_opens(open_page, page):
    opened = open_page(f"{page}.html")
    solutions = opened.page.locator(".solution.dropdown")
    if page.endswith("glosarium"):
        assert solutions.count() == 0
        return
    assert solutions.count() >= 2, f"{page}: latihan tanpa jawaban?"
    for n in range(solutions.count()):
        solution = solutions.nth(n)
        button = solution.locator("button.toggle-button").first
        assert button.get_attribute("data-toggle-hint") == "Klik untuk melihat"
        body = solution.locator(":scope > :not(.admonition-title)").first
        assert not body.is_visible(), f"{page}: jawaban {n + 1} sudah terbuka"
        button.click()
        body.wait_for(state="visible", timeout=2000)
        assert "toggle-hidden" not in (solution.get_attribute("class") or "")
    assert_stayed_offline(opened)
