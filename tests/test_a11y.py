"""Accessibility of the built book: axe-core on every page, desktop and phone.

No serious or critical violation is allowed (contrast, names of controls,
alt text, landmarks...). Figures and explorer frames must also have
Indonesian alt text, not a file name.

Colour contrast is checked at desktop width only: the book's colours do not
depend on the width, and that rule is most of axe's time on a page. Every
other rule runs at both widths, since layout and what is shown do change.
The dark theme is checked too, at desktop width (its colours are the change).
"""

from __future__ import annotations

import re

import pytest
from bs4 import BeautifulSoup

from conftest import toc_pages

pytestmark = [pytest.mark.book, pytest.mark.browser]

PAGES = [f"{page}.html" for page in toc_pages()] + ["search.html", "genindex.html"]
WIDTHS = (1280, 360)
BLOCKING = ("serious", "critical")
CONTRAST_WIDTH = 1280


@pytest.fixture(scope="session")
def axe():
    from axe_playwright_python.sync_playwright import Axe

    return Axe()


# The dark theme changes colours, not layout: it is checked at the contrast width.
MODES = [(width, "light") for width in WIDTHS] + [(CONTRAST_WIDTH, "dark")]
# Known gaps of the dark theme, each named: strict, so a fixed one fails until removed.
DARK_THEME_GAPS = {
}


def _cases():
    for page in PAGES:
        for width, theme in MODES:
            marks = ()
            if theme == "dark" and page in DARK_THEME_GAPS:
                marks = pytest.mark.xfail(reason=DARK_THEME_GAPS[page], strict=True)
            yield pytest.param(page, width, theme, marks=marks, id=f"{page}-{width}-{theme}")


@pytest.mark.parametrize("page, width, theme", _cases())
def test_axe_finds_no_serious_violation(open_page, axe, page, width, theme):
    opened = open_page(page, width=width, height=800)
    if theme == "dark":  # as the theme's toggle does it: the attribute, no reload
        opened.page.evaluate("document.documentElement.dataset.theme = 'dark'")
        assert opened.page.evaluate("getComputedStyle(document.body).backgroundColor") != "rgb(255, 255, 255)"
    options = {"resultTypes": ["violations"]}
    if width != CONTRAST_WIDTH:
        options["rules"] = {"color-contrast": {"enabled": False}}
    results = axe.run(opened.page, options=options)
    problems = [
        f"{v['id']} ({v['impact']}): {v['help']} — {[n['target'] for n in v['nodes'][:3]]}"
        for v in results.response["violations"]
        if v["impact"] in BLOCKING
    ]
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("page", [f"{p}.html" for p in toc_pages()])
def test_every_figure_has_indonesian_alt_text(built_book, page):
    soup = BeautifulSoup((built_book / page).read_text(encoding="utf-8"), "html.parser")
    main = soup.select_one("main") or soup
    bad = []
    for img in main.find_all("img"):
        alt = (img.get("alt") or "").strip()
        if not alt or re.search(r"\.(png|svg|jpe?g)$", alt) or alt.lower().startswith(("figure", "image")):
            bad.append(f"{img.get('src', '')[:60]}: alt={alt!r}")
    assert bad == []
