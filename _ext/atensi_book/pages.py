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

- **Icon fonts cut to the book's icons** (``cut_icon_fonts``): the theme's
  Font Awesome fonts hold about 2.000 icons in 275 KB (woff2); the pages
  draw 30 of them (the icons named by an ``fa-*`` class in a page or a
  script, and those the theme's CSS names itself, such as the admonition
  icons), which fit in 6 KB. The phone asks for the icon fonts with the
  stylesheet, at the highest priority, and on a slow connection the first
  paint waited for them in some runs and not in others, so scores jumped
  between two values. Measured on a quiet machine (median of 5,
  interleaved; scripts/audit_site.md): gradien 78 (97 78 80 78 76) -> 92
  (92 91 93 91 93).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from . import fonts

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
# Font Awesome's own rules, ".fa-rocket:before{content:"\f135"}" (several
# selectors may share one), and the classes that name an icon in a page.
ICON_RULE = re.compile(r'(?P<selectors>(?:\.fa-[a-z0-9-]+::?before\s*,?\s*)+)'
                       r'\{\s*content\s*:\s*"(?P<content>[^"]*)"\s*;?\s*\}')
ICON_SELECTOR = re.compile(r"\.fa-(?P<name>[a-z0-9-]+)::?before")
ICON_CLASS = re.compile(r"\bfa-(?P<name>[a-z0-9-]+)")
CSS_ESCAPE = re.compile(r"\\(?P<hex>[0-9a-fA-F]{1,6})\s?")
PRIVATE_USE = range(0xE000, 0xF900)  # where Font Awesome puts its icons
ICON_FONTS = "vendor/fontawesome/webfonts"


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


def _unescaped(css: str) -> str:
    return CSS_ESCAPE.sub(lambda m: chr(int(m.group("hex"), 16)), css)


def icons_in_use(static: Path, texts) -> set[int]:
    """The icon code points the book draws: those of the ``fa-*`` classes
    named in ``texts`` (pages and scripts), and every private-use character
    the stylesheets under ``static`` name outside Font Awesome's own rules
    (the theme's admonition and navigation icons)."""
    css = "\n".join(path.read_text(encoding="utf-8", errors="replace")
                    for path in sorted(static.rglob("*.css")))
    by_name: dict[str, str] = {}
    for rule in ICON_RULE.finditer(css):
        for selector in ICON_SELECTOR.finditer(rule.group("selectors")):
            by_name[selector.group("name")] = _unescaped(rule.group("content"))
    used = {ord(c) for c in _unescaped(ICON_RULE.sub("", css)) if ord(c) in PRIVATE_USE}
    for text in texts:
        for match in ICON_CLASS.finditer(text):
            used |= {ord(c) for c in by_name.get(match.group("name"), "")}
    return used


def cut_icon_fonts(outdir: Path) -> set[int]:
    """Cut the theme's icon fonts in the built site down to the icons in use
    (see the module docstring); returns those code points."""
    static = outdir / "_static"
    icon_fonts = sorted((static / ICON_FONTS).glob("*.woff2")) + sorted((static / ICON_FONTS).glob("*.ttf"))
    if not icon_fonts:
        return set()
    texts = {}
    for page in sorted(outdir.rglob("*.html")):
        texts[page] = page.read_text(encoding="utf-8", errors="replace")
    # The scripts a page loads, which may add icons; not every script under
    # _static (the theme's own Font Awesome script names all of them).
    for page, text in list(texts.items()):
        for match in SRC.finditer(text):
            script = (page.parent / match.group("src").split("?")[0]).resolve()
            if script.suffix == ".js" and script.is_file() and script not in texts:
                texts[script] = script.read_text(encoding="utf-8", errors="replace")
    used = icons_in_use(static, texts.values())
    for font in icon_fonts:
        fonts.cut_font(font, font, used)
    return used
