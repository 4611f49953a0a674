"""Checks on the built HTML: language, table of contents, clean outputs,
nothing loaded from outside the site, launch buttons that open the .ipynb."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml
from bs4 import BeautifulSoup

from chapter_runs import BOOK_REPOSITORY
from conftest import ROOT, toc_pages

pytestmark = pytest.mark.book

PAGES = toc_pages()
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))

# Text that only shows up when a cell failed, printed to stderr, or when an
# ipywidget was rendered as its Python repr instead of a picture.
BAD_OUTPUT = [
    "Traceback (most recent call last)",
    "interactive(children",
    "IntSlider(",
    "FloatSlider(",
    "Dropdown(options",
    "Output()",
]


def soup_of(built_book, page):
    path = built_book / f"{page}.html"
    assert path.is_file(), f"{page}.html tidak dibangun"
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def all_html(built_book):
    """The site's pages (not the theme's template fragments under _static)."""
    return sorted(
        p for p in built_book.rglob("*.html") if p.relative_to(built_book).parts[0] not in ("_static", "_mathjax")
    )


def test_every_toc_page_is_built_in_order(built_book):
    soup = soup_of(built_book, PAGES[0])
    nav = soup.select_one("nav.bd-docs-nav")
    assert nav is not None
    linked = [a["href"] for a in nav.select("a.reference.internal")]
    # The current page links to itself as "#".
    files = [href.split("/")[-1].split("#")[0] or f"{PAGES[0].split('/')[-1]}.html" for href in linked]
    assert files == [f"{page.split('/')[-1]}.html" for page in PAGES]
    captions = [c.get_text(strip=True) for c in nav.select("p.caption")]
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    assert captions == [part["caption"] for part in toc["parts"]]
    # Chapters are numbered 1..n across parts; the appendices are not.
    numbered = [a.get_text(" ", strip=True) for a in nav.select("a.reference.internal")]
    n_numbered = sum(len(part["chapters"]) for part in toc["parts"] if part.get("numbered"))
    for n in range(1, n_numbered + 1):
        assert numbered[n].startswith(f"{n}. "), numbered[n]
    assert not re.match(r"\d+\. ", numbered[-1])


@pytest.mark.parametrize("page", PAGES)
def test_page_language_and_title(built_book, page):
    soup = soup_of(built_book, page)
    assert soup.html.get("lang") == "id"
    title = soup.title.get_text()
    assert "\\(" not in title and "$" not in title, f"matematika mentah di judul: {title}"


def test_every_html_file_is_indonesian(built_book):
    for path in all_html(built_book):
        text = path.read_text(encoding="utf-8")
        if "http-equiv=\"Refresh\"" in text or 'http-equiv="refresh"' in text:
            continue  # the index.html redirect
        assert '<html lang="id"' in text, path


@pytest.mark.parametrize("page", PAGES)
def test_no_error_traceback_or_widget_text(built_book, page):
    soup = soup_of(built_book, page)
    assert not soup.select(".output.traceback, .output.error, .output.stderr"), (
        f"{page}: ada keluaran error/stderr"
    )
    text = soup.get_text()
    for bad in BAD_OUTPUT:
        assert bad not in text, f"{page}: '{bad}' tampil di halaman"
    assert not (built_book / "reports").exists()


def external(url: str | None) -> bool:
    if not url:
        return False
    parsed = urlparse(url)
    return parsed.scheme in ("http", "https") or url.startswith("//")


def test_nothing_loaded_from_outside_the_site(built_book):
    """Scripts, styles, images, frames and fonts all come from the build."""
    offenders = []
    for path in all_html(built_book):
        soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
        for tag in soup.find_all(["script", "img", "iframe", "audio", "video", "source", "embed"]):
            if external(tag.get("src")):
                offenders.append(f"{path.name}: <{tag.name} src={tag['src']}>")
        for tag in soup.find_all("link"):
            rel = " ".join(tag.get("rel", []))
            if rel in ("stylesheet", "preload", "modulepreload", "icon", "manifest") and external(tag.get("href")):
                offenders.append(f"{path.name}: <link rel={rel} href={tag['href']}>")
        for style in soup.find_all("style"):
            for url in re.findall(r"(?:@import|url\()\s*['\"]?([^'\")\s]+)", style.get_text()):
                if external(url):
                    offenders.append(f"{path.name}: CSS {url}")
    for css in built_book.rglob("*.css"):
        for url in re.findall(r"@import\s+(?:url\()?['\"]?([^'\")\s;]+)", css.read_text(encoding="utf-8", errors="ignore")):
            if external(url):
                offenders.append(f"{css.name}: @import {url}")
    assert offenders == []


def test_math_is_typeset_when_the_book_is_built(built_book):
    """Every formula is MathML in the page, which the browser draws and
    screen readers read; no TeX is left, no page loads a math script, and
    nothing comes from a CDN."""
    for page in PAGES:
        soup = soup_of(built_book, page)
        maths = soup.select("span.math, div.math")
        scripts = [s["src"] for s in soup.find_all("script", src=True) if re.search("mathjax|katex", s["src"], re.I)]
        assert scripts == [], page
        assert not soup.find("script", string=re.compile("MathJax")), page
        unrendered = [m.get_text()[:40] for m in maths if not m.find("math")]
        assert unrendered == [], f"{page}: {unrendered}"
        assert not soup.select("math merror, math [data-mjx-error]"), page
        # Display equations: in their own box, which a keyboard can scroll.
        for div in soup.select("div.math"):
            box = div.find("div", class_="rumus")
            assert box is not None and box.get("tabindex") == "0", f"{page}: {div.get('id')}"
            assert box.math.get("display") == "block", f"{page}: {div.get('id')}"
    # The page's one stylesheet carries the math font.
    (link,) = soup_of(built_book, PAGES[0]).find_all("link", rel="stylesheet")
    stylesheet = ((built_book / PAGES[0]).parent / link["href"]).read_text(encoding="utf-8")
    assert "/* matematika.css */" in stylesheet
    assert 'url("rumus/latinmodern-math.woff2")' in stylesheet, "tanpa @font-face rumus"


def test_only_the_build_time_math_path_ships(built_book):
    """One math path: MathML and one math font (with its licence), no
    MathJax output markup, fonts or scripts for a browser, no KaTeX."""
    assert not (built_book / "_mathjax").exists()
    fonts = built_book / "_static" / "rumus"
    assert sorted(p.name for p in fonts.iterdir()) == ["GUST-FONT-LICENSE.txt", "latinmodern-math.woff2"]
    assert not list(built_book.rglob("tex-mml-chtml.js")) and not list(built_book.rglob("*katex*"))
    for page in PAGES:
        assert "<mjx-" not in (built_book / f"{page}.html").read_text(encoding="utf-8"), page
    head_scripts = soup_of(built_book, PAGES[0]).find_all("script")
    assert len(head_scripts) < 40


@pytest.mark.parametrize("page", PAGES)
def test_launch_buttons_open_the_paired_ipynb(built_book, page):
    # The repository the test build is made for (tests/chapter_runs.py).
    owner_repo, branch = BOOK_REPOSITORY["ATENSI_REPOSITORY"], BOOK_REPOSITORY["ATENSI_BRANCH"]
    soup = soup_of(built_book, page)
    links = [a["href"] for a in soup.find_all("a", href=True)]
    colab = [h for h in links if h.startswith(CONFIG["launch_buttons"]["colab_url"])]
    binder = [h for h in links if h.startswith(CONFIG["launch_buttons"]["binderhub_url"])]
    assert colab == [f"https://colab.research.google.com/github/{owner_repo}/blob/{branch}/{page}.ipynb"]
    assert len(binder) == 1 and binder[0].endswith(f"{page}.ipynb")
    assert f"/v2/gh/{owner_repo}/{branch}" in binder[0]
    assert (ROOT / f"{page}.ipynb").is_file()


# Interface text that the themes and extensions write in English unless
# _ext/atensi_book/indonesian.py (or its catalogs) gives them in Indonesian.
ENGLISH_UI = [
    "Search", "Back to top", "Skip to main content", "Launch", "Color mode", "Contents",
    "Download", "Copyright", "By ", "previous", "next", "On this page", "Click to",
    "Exercise", "Solution", "Toggle", "Print to PDF", "Fullscreen", "Source repository",
]
# Attributes a reader sees as tooltips or a screen reader reads out.
UI_ATTRIBUTES = ["title", "aria-label", "placeholder", "data-bs-title", "data-toggle-hint"]


def interface_text(soup) -> str:
    """Everything on a page that is not the chapter's own content."""
    # Exercise and solution titles are written by sphinx-exercise, not the author.
    titles = soup.select("article .exercise .admonition-title, article .solution .admonition-title")
    parts = [title.get_text(" ") for title in titles]
    for article in soup.select("article.bd-article"):
        article.decompose()
    parts.append(soup.get_text(" "))
    for tag in soup.find_all(True):
        parts += [tag[name] for name in UI_ATTRIBUTES if isinstance(tag.get(name), str)]
    return "\n".join(parts)


@pytest.mark.parametrize("page", PAGES + ["search", "genindex"])
def test_interface_text_is_indonesian(built_book, page):
    soup = soup_of(built_book, page)
    hints = re.findall(r"let toggleHint\w+ = '([^']*)'", str(soup))
    solutions = [t.get_text(" ", strip=True) for t in soup.select(".solution .admonition-title")]
    text = interface_text(soup) + "\n" + "\n".join(hints)
    found = [english for english in ENGLISH_UI if re.search(rf"\b{re.escape(english)}", text)]
    assert found == [], f"{page}: teks antarmuka masih berbahasa Inggris: {found}"
    assert "Pencarian" in text and "Hak cipta" in text
    if page in PAGES[:-1]:  # every chapter but the glossary has exercises
        assert hints == ["Klik untuk melihat", "Klik untuk menutup"]
        assert solutions and all(re.fullmatch(r"Jawaban Latihan \d+(\.\d+)?", s) for s in solutions), solutions


def test_index_html_sends_the_reader_to_the_intro(built_book):
    """What `make book` tells the reader to open: a tiny Indonesian page that
    redirects, with the site's icon (no request for /favicon.ico)."""
    soup = BeautifulSoup((built_book / "index.html").read_text(encoding="utf-8"), "html.parser")
    assert soup.html.get("lang") == "id"
    refresh = soup.find("meta", attrs={"http-equiv": "Refresh"})
    assert refresh["content"] == f"0; url={PAGES[0]}.html"
    icon = soup.find("link", rel="icon")
    assert icon is not None and (built_book / icon["href"]).is_file()


# --- Light on a phone (_ext/atensi_book/assets.py, stylesheet.py, icons.py) ------------------


def test_scripts_wait_for_the_text(built_book):
    """Only documentation_options.js blocks the first paint; the theme's
    search scripts (searchindex.js is the whole book's index) stay on the
    search page."""
    for page in PAGES:
        soup = soup_of(built_book, page)
        blocking = [
            s["src"] for s in soup.head.find_all("script", src=True) if not (s.has_attr("defer") or s.has_attr("async"))
        ]
        assert [src.split("/")[-1].split("?")[0] for src in blocking] == ["documentation_options.js"], page
        assert not soup.find("script", src=re.compile(r"searchindex\.js")), page
    search = BeautifulSoup((built_book / "search.html").read_text(encoding="utf-8"), "html.parser")
    assert search.find("script", src=re.compile(r"searchindex\.js"))


def test_one_stylesheet_whose_files_are_all_there(built_book):
    """Every page links one stylesheet, the theme's and the book's joined in
    their order (no @import chain), and every file it names is in the site."""
    sheets = set()
    for page in PAGES + ["search", "genindex"]:
        links = soup_of(built_book, page).find_all("link", rel="stylesheet")
        assert len(links) == 1, (page, [link["href"] for link in links])
        sheets.add(((built_book / page).parent / links[0]["href"].split("?")[0]).resolve())
    for sheet in sheets:
        text = sheet.read_text(encoding="utf-8")
        for name in ("styles/theme.css", "styles/pydata-sphinx-theme.css", "kontras.css", "matematika.css"):
            assert f"/* {name} */" in text, (sheet.name, name)
        assert "@import" not in text
        for url in re.findall(r'url\("([^"]+)"\)', text):
            if not url.startswith("data:"):
                assert (sheet.parent / url.split("?")[0].split("#")[0]).is_file(), (sheet.name, url)


def _icon_font_cmap(folder):
    from fontTools.ttLib import TTFont

    points = set()
    for font in folder.glob("*.woff2"):
        points |= set(TTFont(font).getBestCmap())
    return points


def test_every_icon_on_a_page_is_in_the_cut_icon_fonts(built_book):
    """The icon fonts hold the icons the pages show (each fa-* class of a
    page whose rule names a code point), and little else."""
    folder = built_book / "_static" / "vendor" / "fontawesome" / "webfonts"
    in_fonts = _icon_font_cmap(folder)
    (link,) = soup_of(built_book, PAGES[0]).find_all("link", rel="stylesheet")
    css = ((built_book / PAGES[0]).parent / link["href"]).read_text(encoding="utf-8")
    code_point = {name: int(hex_, 16) for name, hex_ in re.findall(r'\.fa-([a-z0-9-]+):before\{content:"\\([0-9a-f]{4})"\}', css)}
    shown = set()
    for page in PAGES + ["search", "genindex"]:
        for tag in soup_of(built_book, page).select('[class*="fa-"]'):
            shown |= {code_point[c[3:]] for c in tag["class"] if c.startswith("fa-") and c[3:] in code_point}
    assert len(shown) >= 10, sorted(map(hex, shown))
    assert not shown - in_fonts, sorted(map(hex, shown - in_fonts))
    assert len(in_fonts) < 60, len(in_fonts)
    for font in folder.glob("*.woff2"):
        assert font.stat().st_size < 10_000, font.name


def test_icon_fonts_are_cut_to_the_icons_pages_and_their_scripts_name(tmp_path):
    """cut_icon_fonts keeps an icon named by a page, by a script a page loads,
    or by the theme's CSS itself, and drops one named only in a script no
    page loads (the theme's Font Awesome script names every icon)."""
    import sys

    import pydata_sphinx_theme

    sys.path.insert(0, str(ROOT / "_ext"))
    from atensi_book import icons

    theme_fonts = next(Path(pydata_sphinx_theme.__file__).parent.rglob("fa-solid-900.woff2")).parent
    static = tmp_path / "_static"
    fonts = static / "vendor" / "fontawesome" / "webfonts"
    fonts.mkdir(parents=True)
    shutil.copy(theme_fonts / "fa-solid-900.woff2", fonts)
    (static / "scripts").mkdir()
    (static / "icons.css").write_text(
        '.fa-rocket:before,.fa-space-shuttle:before{content:"\\f135"}.fa-code:before{content:"\\f121"}'
        '.fa-gear:before{content:"\\f013"}.fa-bell:before{content:"\\f0f3"}'
        ':root{--pst-icon-bell:"\\f0f3"}', encoding="utf-8")
    (static / "tombol.js").write_text('icon.className = "fa-solid fa-code";', encoding="utf-8")
    (static / "scripts" / "fontawesome.js").write_text('"fa-gear"', encoding="utf-8")
    (tmp_path / "bab.html").write_text(
        '<i class="fas fa-rocket"></i><script defer src="_static/tombol.js?v=1"></script>', encoding="utf-8")

    assert icons.cut_icon_fonts(tmp_path) == {0xF135, 0xF121, 0xF0F3}
    assert _icon_font_cmap(fonts) == {0xF135, 0xF121, 0xF0F3}
    assert (fonts / "fa-solid-900.woff2").stat().st_mode & 0o777 == 0o644
    assert not list(fonts.glob(".*.tmp"))


def test_figures_have_their_size_and_load_when_near(built_book):
    """width/height from the PNG: the text does not jump when a figure arrives."""
    from PIL import Image

    checked = 0
    for page in PAGES:
        soup = soup_of(built_book, page)
        images = [img for img in soup.select("article img") if "_images/" in img["src"]]
        for i, img in enumerate(images):
            with Image.open((built_book / page).parent / img["src"]) as png:
                assert (int(img["width"]), int(img["height"])) == png.size, (page, img["src"])
            assert (img.get("loading") == "lazy") == (i > 0), (page, i)
            checked += 1
    assert checked > 20


def test_explorer_frames_are_files_not_page_weight(built_book):
    """The static explorers' pictures and frame tables are files beside the site,
    not base64 and JSON in the chapter (which made a page 0,9 MB); the page keeps
    the controls and the address of its frame script, and every file exists."""
    import json

    explorers = 0
    for page in PAGES:
        path = built_book / f"{page}.html"
        text = path.read_text(encoding="utf-8")
        assert "data:image/png;base64," not in text, page
        for raw in re.findall(r'class="atensi-data">(.*?)</script>', text, re.S):
            data = json.loads(raw.replace("<\\/", "</"))
            assert "images" not in data and "frames" not in data and data["controls"], page
            script = path.parent / data["src"]
            assert script.suffix == ".js" and script.is_file(), page
            table = script.read_text(encoding="utf-8")
            assert f'["{data["id"]}"]' in table.split("=", 2)[1], page
            body = table[table.index("] = ") + 4:].rstrip(";\n")
            urls = json.loads(body.replace("<\\/", "</"))["urls"]
            assert urls and all((path.parent / url).is_file() for url in urls), page
            assert len(raw.encode("utf-8")) < 5_000, page  # controls only: no frame data
            explorers += 1
        assert len(text.encode("utf-8")) < 700_000, page
    assert explorers >= 3
