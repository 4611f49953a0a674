"""Every page of the built book on a 360 px phone screen: nothing makes the
page wider than the screen, every table or printed output wider than the
screen scrolls in its own box under a "geser ke samping" hint, and no figure
text is drawn below 9 CSS px.

Figure text is measured from the PNG itself: ``atensi.style.to_png`` writes
the pixel height of the smallest text of the figure into the PNG
(``MinFontPx``). On screen that text is ``MinFontPx`` times the image's
rendered width over its own width in pixels. The page offers each figure
as a 1x and a 2x file (``srcset``); ``currentSrc`` is the one the browser
chose, and each file carries its own ``MinFontPx``.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from PIL import Image

from conftest import toc_pages

pytestmark = [pytest.mark.book, pytest.mark.browser]

PHONE_WIDTH = 360
SMALLEST_TEXT_CSS_PX = 9.0

# Elements whose right edge sticks out of the screen, outside any box that
# scrolls sideways itself (those are allowed: the reader can scroll them).
OVERFLOW = """
(width) => {
  const root = document.documentElement;
  const scrolls = (el) => {
    for (let p = el.parentElement; p; p = p.parentElement) {
      const x = getComputedStyle(p).overflowX;
      if ((x === "auto" || x === "scroll" || x === "hidden") && p !== document.body && p !== root) return true;
    }
    return false;
  };
  const culprits = [];
  for (const el of document.querySelectorAll("body *")) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.right <= width + 1 || scrolls(el)) continue;
    if (getComputedStyle(el).position === "fixed") continue;
    const name = el.tagName.toLowerCase() + (el.id ? "#" + el.id : "")
      + (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\\s+/).join(".") : "");
    culprits.push(`${name} (kanan ${Math.round(box.right)} px)`);
    if (culprits.length >= 5) break;
  }
  return {scrollWidth: Math.max(root.scrollWidth, document.body.scrollWidth), culprits};
}
"""

# Boxes (tables, printed output) wider than their box on screen, and whether
# _ext/static/wide-tables.js put its "geser ke samping" hint above them.
WIDE_BOXES = """
() => [...document.querySelectorAll(".pst-scrollable-table-container, div.tabel-lebar, div.cell_output pre")]
  .filter(box => box.clientWidth > 0 && box.scrollWidth > box.clientWidth + 1)
  .map(box => ({
    text: box.textContent.trim().slice(0, 40),
    hint: !!(box.previousElementSibling && box.previousElementSibling.classList.contains("geser-petunjuk")),
    scrolls: ["auto", "scroll"].includes(getComputedStyle(box).overflowX),
  }))
"""

# Rendered size of each raster image in the article.
IMAGES = """
() => [...document.querySelectorAll("main img")].map(img => ({
  src: img.currentSrc || img.src,
  width: img.getBoundingClientRect().width,
  hidden: img.getBoundingClientRect().width === 0,
}))
"""


def png_path(built_book: Path, url: str) -> Path:
    return built_book / unquote(urlparse(url).path).lstrip("/")


def smallest_text_on_screen(path: Path, rendered_width: float) -> float | None:
    """CSS px of the figure's smallest text; None for a PNG without ``MinFontPx``."""
    with Image.open(path) as image:
        min_font_px = image.info.get("MinFontPx")
        natural_width = image.size[0]
    if min_font_px is None:
        return None
    return float(min_font_px) * rendered_width / natural_width


def test_smallest_text_reads_the_png_and_its_rendered_width(tmp_path):
    from atensi import style

    fig = style.new_figure(5.0, 2.0)
    ax = fig.add_subplot()
    ax.set_title("judul", fontsize=12)
    ax.text(0.5, 0.5, "kecil", fontsize=6)
    path = tmp_path / "gambar.png"
    path.write_bytes(style.to_png(fig))  # 500 px wide at 100 dpi
    # 6 pt at 100 dpi = 8,33 px in the PNG; shown at 250 px wide it is half that.
    assert smallest_text_on_screen(path, 250) == pytest.approx(6 / 72 * 100 / 2, abs=0.01)
    Image.new("RGB", (10, 10)).save(tmp_path / "polos.png")
    assert smallest_text_on_screen(tmp_path / "polos.png", 10) is None


@pytest.mark.parametrize("page", toc_pages())
def test_page_fits_a_phone_and_its_figures_stay_legible(page, open_page, built_book):
    opened = open_page(f"{page}.html", width=PHONE_WIDTH, height=800)
    state = opened.page.evaluate(OVERFLOW, PHONE_WIDTH)
    assert state["scrollWidth"] <= PHONE_WIDTH, (
        f"{page}: halaman selebar {state['scrollWidth']} px di layar {PHONE_WIDTH} px; "
        f"yang menonjol: {state['culprits']}"
    )
    hidden_columns = [box["text"] for box in opened.page.evaluate(WIDE_BOXES)
                      if not (box["hint"] and box["scrolls"])]
    assert hidden_columns == [], (
        f"{page}: tabel/keluaran lebih lebar dari layar tanpa gulir dan petunjuk: {hidden_columns}"
    )
    too_small = []
    for image in opened.page.evaluate(IMAGES):
        path = png_path(built_book, image["src"])
        if image["hidden"] or path.suffix.lower() != ".png" or not path.is_file():
            continue
        css_px = smallest_text_on_screen(path, image["width"])
        if css_px is None:
            too_small.append(f"{path.name}: PNG tanpa MinFontPx (buat dengan atensi.style.to_png)")
        elif css_px < SMALLEST_TEXT_CSS_PX:
            too_small.append(f"{path.name}: teks terkecil {css_px:.1f} px "
                             f"(gambar {image['width']:.0f} px)")
    assert too_small == [], f"{page}: teks gambar di bawah {SMALLEST_TEXT_CSS_PX} px: {too_small}"


@pytest.mark.parametrize("page", ["chapters/kinerja", "chapters/tensor_core"])
def test_a_high_dpi_phone_loads_the_2x_figures_and_they_stay_legible(page, chromium, book_server,
                                                                      built_book):
    context = chromium.new_context(viewport={"width": PHONE_WIDTH, "height": 800},
                                   device_scale_factor=2)
    try:
        tab = context.new_page()
        tab.goto(f"{book_server}{page}.html", wait_until="load")
        # Figures below the fold load lazily: ask for all of them now.
        tab.evaluate("() => document.querySelectorAll('main img')"
                     ".forEach(img => { img.loading = 'eager'; })")
        tab.wait_for_load_state("networkidle")
        # The figure of the other theme is not displayed (width 0): skip it.
        figures = [image for image in tab.evaluate(IMAGES)
                   if "/_images/" in image["src"] and "/penjelajah/" not in image["src"]
                   and image["width"] > 0]
    finally:
        context.close()
    assert figures, f"{page}: tidak ada gambar"
    for image in figures:
        path = png_path(built_book, image["src"])
        assert not path.stem.endswith("-1x"), f"{page}: layar 2x memuat {path.name}"
        with Image.open(path) as png:
            assert png.info.get("PixelRatio") == "2"
        assert smallest_text_on_screen(path, image["width"]) >= SMALLEST_TEXT_CSS_PX


# --- Screens per chapter in the phone default ----------------------------------

SCREEN = (360, 740)
SCREEN_BUDGET = 20
BUDGET_PARTS = ("Langkah demi langkah", "Menyatukan")
def budget_chapters() -> list[str]:
    import yaml

    from conftest import ROOT

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    return [chapter["file"] for part in toc["parts"] if part.get("caption") in BUDGET_PARTS
            for chapter in part["chapters"]]


def screens(chromium, url: str, code: str | None) -> float:
    """Page height in screens at 360 × 740; ``code`` is the stored fold choice
    ("buka", "lipat"), None for a reader who never chose (the default)."""
    context = chromium.new_context(viewport={"width": SCREEN[0], "height": SCREEN[1]})
    try:
        if code is not None:
            context.add_init_script(f"try {{ localStorage.setItem('atensi-kode', '{code}') }} catch (e) {{}}")
        tab = context.new_page()
        tab.goto(url, wait_until="load")
        height = tab.evaluate("Math.max(document.documentElement.scrollHeight, document.body.scrollHeight)")
    finally:
        context.close()
    return height / SCREEN[1]


def test_chapters_fit_the_screen_budget_in_the_phone_default(chromium, book_server, built_book):
    """Solutions stay closed (their default); code and the sections a chapter
    marks as "pendalaman" are folded by default below 576 px.
    Prints screens per page of the toc in that default (one page load each: the
    CPU budget of this file counts them)."""
    rows, over = [], []
    budgeted = set(budget_chapters())
    for page in toc_pages():
        folded = screens(chromium, f"{book_server}{page}.html", None)
        rows.append(f"{page:32} {folded:6.1f}" + ("  *" if page in budgeted else ""))
        if page in budgeted and folded > SCREEN_BUDGET:
            over.append(f"{page}: {folded:.1f} layar (batas {SCREEN_BUDGET})")
    print(f"\nlayar {SCREEN[0]} × {SCREEN[1]} dalam bawaan ponsel (* = anggaran {SCREEN_BUDGET})")
    print("\n".join(rows))
    assert over == [], "bab di atas anggaran layar ponsel:\n" + "\n".join(over)
