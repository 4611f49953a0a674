"""The built book in a real browser with the network cut off: math renders,
no request leaves the site, the console stays clean."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import toc_pages

pytestmark = [pytest.mark.book, pytest.mark.browser]

PAGES = toc_pages()

# Wait for MathJax to finish typesetting (it loads extensions on demand).
WAIT_FOR_MATHJAX = """
async () => {
  for (let i = 0; i < 200 && !(window.MathJax && MathJax.startup && MathJax.startup.promise); i++) {
    await new Promise(r => setTimeout(r, 50));
  }
  if (!(window.MathJax && MathJax.startup && MathJax.startup.promise)) return "MathJax tidak dimuat";
  await MathJax.startup.promise;
  return "ok";
}
"""

# Counts math still left as TeX source in the page text (outside code blocks).
MATH_STATE = """
() => {
  const article = document.querySelector("article") || document.body;
  const copy = article.cloneNode(true);
  copy.querySelectorAll("pre, code, script, style, mjx-assistive-mml").forEach(n => n.remove());
  const text = copy.textContent;
  return {
    rendered: document.querySelectorAll("mjx-container").length,
    sources: document.querySelectorAll("span.math, div.math").length,
    raw: ["\\\\(", "\\\\)", "\\\\[", "\\\\]", "$$"].filter(t => text.includes(t)),
    errors: document.querySelectorAll("mjx-merror, [data-mjx-error]").length,
  };
}
"""


def typeset(opened):
    """Wait for MathJax where the page has math (Sphinx loads it only there)."""
    state = opened.page.evaluate(MATH_STATE)
    if state["sources"]:
        assert opened.page.evaluate(WAIT_FOR_MATHJAX) == "ok"
        state = opened.page.evaluate(MATH_STATE)
    return state


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
    # The font files came from the site too (CHTML output needs them).
    fonts = page.evaluate("() => performance.getEntriesByType('resource').map(e => e.name)")
    assert any("/_mathjax/output/chtml/fonts/" in url for url in fonts)
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
