"""_ext/atensi_book/figures.py: figures drawn at 2x get a 1x copy and a srcset;
in the built book every such figure offers both files, and each file knows
its own smallest text (``MinFontPx``)."""

from __future__ import annotations

import io
import sys

import pytest
from bs4 import BeautifulSoup
from PIL import Image

from conftest import ROOT, toc_pages

sys.path.insert(0, str(ROOT / "_ext"))

from atensi_book import figures  # noqa: E402

from atensi import style  # noqa: E402


def _figure():
    fig = style.new_figure(3.0, 2.0)
    ax = fig.add_axes([0.2, 0.2, 0.7, 0.6])
    ax.plot([0, 1], [0, 1])
    ax.set_title("Judul gambar", fontsize=style.FONT)
    ax.tick_params(labelsize=style.SMALL)
    return fig


def test_notebook_output_is_drawn_at_twice_the_pixels_with_its_screen_size():
    data, metadata = _figure()._repr_mimebundle_()
    with Image.open(io.BytesIO(data["image/png"])) as image:
        assert image.size == (600, 400)
        assert image.text["PixelRatio"] == "2"
        assert image.mode == "P" and len(image.getcolors(300)) <= style.PNG_COLORS
        assert float(image.text["MinFontPx"]) == pytest.approx(style.SMALL / 72 * 200, abs=0.01)
    assert metadata == {"image/png": {"width": 300, "height": 200}}


def _page(tmp_path, png: bytes, style_attr=' style="width: 300px; height: 200px;"'):
    (tmp_path / "_images").mkdir()
    (tmp_path / "_images" / "abc.png").write_bytes(png)
    page = tmp_path / "chapters" / "bab.html"
    page.parent.mkdir()
    html = f'<p><img alt="x" class="a" src="../_images/abc.png"{style_attr} /></p>'
    page.write_text(html, encoding="utf-8")
    return page, html


def test_a_2x_figure_gets_a_1x_copy_and_a_srcset(tmp_path):
    page, html = _page(tmp_path, _figure()._repr_mimebundle_()[0]["image/png"])
    out = figures.with_sharp_images(html, page)
    img = BeautifulSoup(out, "html.parser").img
    assert img["src"] == "../_images/abc-1x.png"
    assert img["srcset"] == "../_images/abc-1x.png 1x, ../_images/abc.png 2x"
    assert "style" not in img.attrs and img["alt"] == "x"
    with Image.open(tmp_path / "_images" / "abc-1x.png") as copy, \
            Image.open(tmp_path / "_images" / "abc.png") as sharp:
        assert copy.size == (300, 200) and sharp.size == (600, 400)
        # The same text, in pixels of each file: on screen both read the same size.
        assert float(copy.text["MinFontPx"]) * 2 == pytest.approx(float(sharp.text["MinFontPx"]),
                                                                  abs=0.02)
        assert copy.text["Description"] == sharp.text["Description"] == "Gambar: Judul gambar"
        assert "PixelRatio" not in copy.text and copy.mode == "P"
    assert figures.with_sharp_images(out, page) == out  # a second pass changes nothing


def test_a_1x_figure_and_other_images_are_left_alone(tmp_path):
    page, html = _page(tmp_path, style.to_png(_figure()), style_attr="")
    assert figures.with_sharp_images(html, page) == html
    assert not (tmp_path / "_images" / "abc-1x.png").exists()
    logo = '<img src="../_static/logo.png" alt="logo" />'
    assert figures.with_sharp_images(logo, page) == logo


def test_explorer_frames_keep_their_own_file(tmp_path):
    """An explorer's script swaps src among its frame files: no 1x copy there."""
    frames = tmp_path / figures.FRAMES_DIR
    frames.mkdir(parents=True)
    (frames / "abc.png").write_bytes(_figure()._repr_mimebundle_()[0]["image/png"])
    page = tmp_path / "chapters" / "bab.html"
    page.parent.mkdir()
    html = f'<img alt="x" src="../{figures.FRAMES_DIR}/abc.png" />'
    assert figures.with_sharp_images(html, page) == html
    assert not (frames / "abc-1x.png").exists()


@pytest.mark.book
def test_built_figures_offer_1x_and_2x_files_that_exist(built_book):
    offered = 0
    for page in toc_pages():
        path = built_book / f"{page}.html"
        soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
        for img in soup.select("main img"):
            if "_images/" not in img.get("src", "") or "penjelajah/" in img["src"]:
                continue
            assert img.get("srcset"), f"{page}: {img['src']} tanpa srcset"
            files = dict(reversed(part.split()) for part in img["srcset"].split(","))
            assert files["1x"] == img["src"] and set(files) == {"1x", "2x"}
            with Image.open(path.parent / files["1x"]) as one, \
                    Image.open(path.parent / files["2x"]) as two:
                assert all(abs(big - 2 * small) <= 1 for big, small in zip(two.size, one.size))
                assert "MinFontPx" in one.text and "MinFontPx" in two.text
            assert files["1x"].endswith("-1x.png")
            offered += 1
    assert offered > 20
