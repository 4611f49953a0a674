"""Pages that load cleanly and appear quickly on a slow phone connection.

A chapter's text needs only its HTML and CSS; everything else may wait:

- **Clean.** Light mode by default (pydata-sphinx-theme logs an error when no
  mode is set, and the figures are drawn on white). Thebe is off in
  ``_config.yml``, but sphinx-thebe still adds its loader, a remote URL and
  sometimes the same inline ``const`` twice: its assets leave every page.
  A favicon, so the browser does not ask for ``/favicon.ico``. One search
  field, in the sidebar (``navbar_persistent``).
- **Scripts are deferred**: they download alongside the page and run after it
  has been parsed, in order. ``documentation_options.js`` stays blocking
  because inline scripts of the theme write into its object straight away.
  The theme's Font Awesome script goes (its CSS draws the same icons).
- **The three search scripts** (``searchtools.js``, ``language_data.js``,
  ``searchindex.js``) load only on ``search.html`` (``templates/layout.html``):
  the search field sends the reader there.
- **Images** get their real ``width`` and ``height``, so the text does not
  jump when a figure arrives, and those after the first load lazily.
- **One stylesheet**: the theme's, the extensions' and the book's, joined in
  their order into ``_static/buku.<hash>.css`` once every extension has
  written its own (``one_stylesheet``); the theme's ``@import`` of
  ``basic.css`` is inlined, so nothing waits on a chain of requests.
  Measured against a dozen stylesheets (median of 3, interleaved, load
  average 5 to 9; scripts/audit_site.md): kerangka 77 -> 80, sintesis
  72 -> 86, skala_akar_dk 72 -> 75, gradien 74 -> 68 (within its spread).

``content-visibility: auto`` on the sections after the first screen was
measured with the joined stylesheet and left out: no gain beyond the spread
of the runs (gradien 68 -> 75, sintesis 86 -> 84, skala_akar_dk 75 -> 74,
median of 3 at a load average of 5 to 9), while headings moved (a contained
section does not collapse its heading's margin) and Lighthouse's
accessibility score fell to 96 (axe reads skipped text as low contrast).

The theme's Font Awesome fonts ship whole: cutting them down to the book's
icons saved 270 KB on a first visit but no measurable Lighthouse points
(median of 5 on the three heaviest pages, within the spread of the runs).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

FAVICON = Path(__file__).parent / "favicon.svg"
BLOCKING = {"documentation_options.js"}
# pydata-sphinx-theme's Font Awesome script (1,5 MB, ~0,5 MB compressed) turns
# icons into SVG; its CSS already draws the same icons with the web font, so the
# script only costs phones time (Lighthouse: blocking time, bytes).
FONTAWESOME_JS = re.compile(r'<script defer src="[^"]*_static/scripts/fontawesome\.js[^"]*"></script>\s*')
IMG = re.compile(r"<img (?P<attrs>[^>]*?)\s*/?>")
STYLESHEET = re.compile(r'<link (?=[^>]*\brel="stylesheet")[^>]*\bhref="(?P<href>[^"]+)"[^>]*>\s*')
CSS_IMPORT = re.compile(r"""@import\s+(?:url\()?["']?(?P<url>[^"')\s;]+)["']?\)?\s*;""")
CSS_URL = re.compile(r"""url\((?P<quote>["']?)(?P<url>[^)"']+)(?P=quote)\)""")
CSS_CHARSET = re.compile(r'@charset\s+"[^"]*";')
SRC = re.compile(r'\bsrc="(?P<src>[^"]+)"')


def configure(app, config):
    context = dict(config.html_context or {})
    context["default_mode"] = "light"  # read by pydata-sphinx-theme's layout
    config.html_context = context
    config.html_favicon = str(FAVICON)
    config.html_theme_options = {**(config.html_theme_options or {}), "navbar_persistent": []}


def is_thebe(asset) -> bool:
    name = str(asset.filename or "") if hasattr(asset, "filename") else str(asset)
    body = getattr(asset, "attributes", {}).get("body", "") or ""
    return "thebe" in name or "THEBE_JS_URL" in body


def drop_thebe_assets(app, pagename, templatename, context, doctree):
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [asset for asset in context[key] if not is_thebe(asset)]


def defer_scripts(app, pagename, templatename, context, doctree):
    # search.html loads searchtools.js without defer, and it needs doctools.js.
    if pagename == "search":
        return
    scripts = []
    for script in context.get("script_files", []):
        name = Path(str(getattr(script, "filename", "") or "")).name
        attrs = getattr(script, "attributes", None)
        if name and attrs is not None and name not in BLOCKING and "async" not in attrs:
            # A new object: Sphinx shares one per script across all pages.
            script = type(script)(script.filename, priority=script.priority,
                                  **{**attrs, "defer": "defer"})
        scripts.append(script)
    context["script_files"] = scripts


def without_fontawesome_script(html: str, page: Path) -> str:
    return FONTAWESOME_JS.sub("", html)


def png_size(path: Path) -> tuple[int, int] | None:
    try:
        from PIL import Image

        with Image.open(path) as image:
            return image.size
    except (OSError, ValueError):
        return None


def sized_images(html: str, page: Path) -> str:
    """The page's images with width/height from the files, lazy after the first."""
    seen = 0

    def fix(match: re.Match) -> str:
        nonlocal seen
        attrs = match.group("attrs")
        src = SRC.search(attrs)
        if not src or "_images/" not in src.group("src") or " width=" in f" {attrs}":
            return match.group(0)
        size = png_size((page.parent / src.group("src")).resolve())
        if size is None:
            return match.group(0)
        seen += 1
        extra = f'width="{size[0]}" height="{size[1]}" style="height: auto"'
        if seen > 1:
            extra += ' loading="lazy"'
        return f"<img {attrs} {extra} />"

    return IMG.sub(fix, html)


def _css(path: Path, static: Path) -> str:
    """One stylesheet, its @imports inlined and its url()s made relative to ``static``."""
    text = CSS_CHARSET.sub("", path.read_text(encoding="utf-8"))

    def moved(match: re.Match) -> str:
        url = match.group("url")
        if url.startswith(("data:", "http:", "https:", "/", "#")):
            return match.group(0)
        name, rest = re.match(r"([^?#]*)(.*)", url).groups()  # fa-solid-900.woff2?v=1
        where = os.path.relpath(os.path.normpath(path.parent / name), static)
        return f'url("{Path(where).as_posix()}{rest}")'

    imported = []

    def hold(match: re.Match) -> str:  # an imported file's url()s are already moved
        imported.append(_css((path.parent / match.group("url")).resolve(), static))
        return f"/*@import {len(imported) - 1}*/"

    text = CSS_URL.sub(moved, CSS_IMPORT.sub(hold, text))
    return re.sub(r"/\*@import (\d+)\*/", lambda m: imported[int(m.group(1))], text)


def one_stylesheet(outdir: Path):
    """The page rewrite that links one stylesheet instead of a dozen: the
    local stylesheets of a page, in their order, joined into
    ``_static/buku.<hash>.css`` (pages with the same list share one file).
    A phone asks for one file and waits for no @import chain."""
    static = outdir / "_static"
    bundles: dict[tuple[Path, ...], str] = {}

    def rewrite(html: str, page: Path) -> str:
        head_end = html.find("</head>")
        if head_end < 0:
            return html
        head = html[:head_end]
        links = []
        for match in STYLESHEET.finditer(head):
            href = match.group("href")
            target = (page.parent / href.split("?")[0].split("#")[0]).resolve()
            if "://" in href or not target.is_file() or static.resolve() not in target.parents:
                return html  # a stylesheet from elsewhere keeps its place in the cascade
            links.append((match, target))
        if len(links) < 2:
            return html
        key = tuple(target for _, target in links)
        if key not in bundles:
            text = "\n".join(f"/* {t.relative_to(static.resolve()).as_posix()} */\n{_css(t, static.resolve())}"
                             for t in key)
            name = f"buku.{hashlib.sha256(text.encode()).hexdigest()[:10]}.css"
            (static / name).write_text(text, encoding="utf-8")
            bundles[key] = name
        href = Path(os.path.relpath(static / bundles[key], page.parent)).as_posix()
        first = links[0][0]
        out = head[:first.start()] + f'<link rel="stylesheet" href="{href}" />\n'
        last = first.end()
        for match, _ in links[1:]:
            out += head[last:match.start()]
            last = match.end()
        return out + head[last:] + html[head_end:]

    return rewrite
