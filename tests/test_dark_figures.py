"""Dark figures: atensi.style draws the same figure with the dark palette, and
_ext/atensi_book/figures.py gives the page both pictures; in Chromium the one
that matches ``<html data-theme>`` shows, and switching the theme switches it."""

from __future__ import annotations

import base64
import io
import sys

import pytest
from PIL import Image

from conftest import ROOT

sys.path.insert(0, str(ROOT / "_ext"))

from atensi_book import figures  # noqa: E402

from atensi import style  # noqa: E402

STATIC = ROOT / "_ext" / "atensi_book" / "static"


def _figure():
    fig = style.new_figure(3.0, 2.0)
    ax = fig.add_axes([0.2, 0.2, 0.7, 0.6])
    ax.plot([0, 1], [0, 1], color=style.BAR)
    ax.imshow([[0.0, 1.0], [1.0, 0.0]], cmap="Blues", extent=(0.6, 1.0, 0.0, 0.4))
    ax.text(0.7, 0.1, "0,5", color="black")  # over the picture: chosen against its cell
    ax.set_title("Judul gambar", fontsize=style.FONT)
    return fig


def _pixel(png: bytes, xy) -> tuple:
    with Image.open(io.BytesIO(png)) as image:
        return image.convert("RGB").getpixel(xy)


def test_dark_color_turns_greys_over_and_lightens_dark_hues():
    assert style._hex(style.dark_color("white")) == style.DARK_BACKGROUND
    assert style._hex(style.dark_color("black")) == style.DARK_TEXT
    import colorsys

    r, g, b, _ = style.dark_color("#08306b")  # a dark blue stays blue, lighter
    hue, light, _ = colorsys.rgb_to_hls(r, g, b)
    assert light >= style.DARK_MIN_LIGHTNESS - 1e-9 and 0.55 < hue < 0.7
    assert style.dark_color((1, 0, 0, 0)) == (1, 0, 0, 0)  # transparent stays transparent


def test_the_dark_variant_is_the_same_figure_and_the_figure_stays_light():
    fig = _figure()
    png = style.to_png(fig, dpi=200, with_dark=True)
    with Image.open(io.BytesIO(png)) as image:
        dark = base64.b64decode(image.text[style.DARK_CHUNK])
        size = image.size
    with Image.open(io.BytesIO(dark)) as image:
        assert image.size == size and style.DARK_CHUNK not in image.text
        assert float(image.text["MinFontPx"]) > 0 and image.text["Description"]
    corner = (2, 2)
    assert _pixel(png, corner) == (255, 255, 255)
    assert "#%02x%02x%02x" % _pixel(dark, corner) == style.DARK_BACKGROUND
    # The colour map of the picture is kept: the same pixel in both variants.
    x, y = fig.axes[0].transData.transform((0.9, 0.3)) * 200 / fig.dpi  # a cell of the picture
    inside = (int(x), int(size[1] - y))
    assert _pixel(dark, inside) == _pixel(png, inside)
    # And the figure itself is as it was: drawn again, it is light.
    assert _pixel(style.to_png(fig, dpi=200), corner) == (255, 255, 255)
    assert fig.axes[0].texts[0].get_color() == "black"


def test_only_the_book_build_adds_the_dark_variant(monkeypatch):
    fig = _figure()
    monkeypatch.setenv(style.BOOK_ENV_VAR, "0")
    bundle, _ = fig._repr_mimebundle_()
    with Image.open(io.BytesIO(bundle["image/png"])) as image:
        assert style.DARK_CHUNK not in image.text
    monkeypatch.setenv(style.BOOK_ENV_VAR, "1")
    bundle, _ = fig._repr_mimebundle_()
    with Image.open(io.BytesIO(bundle["image/png"])) as image:
        assert style.DARK_CHUNK in image.text


def _built_figure(folder):
    images = folder / "_images"
    images.mkdir()
    fig = _figure()
    (images / "gambar.png").write_bytes(style.to_png(fig, dpi=fig.dpi * style.PIXEL_RATIO,
                                                     palette=style.PNG_COLORS, with_dark=True))
    page = folder / "bab.html"
    html = '<img alt="Judul gambar" src="_images/gambar.png" style="width: 300px; height: 200px" />'
    return page, figures.with_sharp_images(html, page)


def test_the_page_gets_both_pictures_and_the_light_file_loses_the_dark_one(tmp_path):
    page, html = _built_figure(tmp_path)
    assert html.count("<img ") == 2
    light, dark = html.split("/><img ")
    assert 'class="gambar-terang"' in light and 'src="_images/gambar-1x.png"' in light
    assert 'class="gambar-gelap"' in dark and 'src="_images/gambar-gelap-1x.png"' in dark
    assert "_images/gambar-gelap.png 2x" in html and html.count('alt="Judul gambar"') == 2
    with Image.open(tmp_path / "_images" / "gambar.png") as image:
        assert figures.DARK_CHUNK not in image.text and image.text["PixelRatio"] == "2"
    for name in ("gambar-gelap.png", "gambar-gelap-1x.png", "gambar-1x.png"):
        assert (tmp_path / "_images" / name).is_file()


@pytest.mark.browser
def test_the_theme_toggle_switches_the_picture_without_reloading(chromium, tmp_path):
    page_path, html = _built_figure(tmp_path)
    # images.sized_images makes every picture after the page's first lazy.
    html = html.replace('class="gambar-gelap"', 'loading="lazy" class="gambar-gelap"')
    page_path.write_text(
        "<!doctype html><html lang='id' data-theme='light'><head><meta charset='utf-8'>"
        f"<link rel='stylesheet' href='{(STATIC / 'gambar-gelap.css').as_uri()}'></head>"
        f"<body><main>{html}</main></body></html>", encoding="utf-8")
    page = chromium.new_page(viewport={"width": 360, "height": 740})
    try:
        requested = []
        page.on("request", lambda request: requested.append(request.url.rsplit("/", 1)[-1]))
        page.goto(page_path.as_uri())
        shown = "() => [...document.images].filter(i => i.getBoundingClientRect().width > 0).map(i => i.className)"
        assert page.evaluate(shown) == ["gambar-terang"]
        page.wait_for_timeout(300)
        assert not any(name.startswith("gambar-gelap") and name.endswith(".png") for name in requested)  # light: never downloaded
        page.evaluate("document.documentElement.dataset.theme = 'dark'")
        assert page.evaluate(shown) == ["gambar-gelap"]
        page.wait_for_function("[...document.images].every(i => i.complete)")
        assert page.evaluate("document.querySelector('img.gambar-gelap').naturalWidth") > 0
        page.evaluate("document.documentElement.dataset.theme = 'light'")
        assert page.evaluate(shown) == ["gambar-terang"]
    finally:
        page.close()
