"""Pages that appear quickly on a slow phone connection.

A chapter's text needs only its HTML and CSS; everything else may wait:

- Scripts are deferred: they download alongside the page and run after it
  has been parsed, in their original order. ``documentation_options.js``
  stays blocking because inline scripts of the theme write into its object
  straight away.
- The three search scripts (``searchtools.js``, ``language_data.js`` and the
  whole ``searchindex.js``) are loaded by pydata-sphinx-theme on every page
  for its search-as-you-type box, which this book does not use: the search
  field sends the reader to ``search.html``, which loads them itself. Here
  they leave every other page (see ``templates/layout.html``).
- MathJax typesets only the formulas that scroll into view (its ``ui/lazy``
  extension), so a long chapter does not block the phone for a second. The
  single-page build that ``make pdf`` prints typesets everything.
- Every image of a chapter gets its real ``width`` and ``height``, so the text
  does not jump when a figure arrives, and the images after the first load
  only when the reader scrolls near them.
- The static explorers' frames leave the page: a chapter's HTML carried
  every frame as base64 (up to 0,9 MB). They become PNG files under
  ``_images/penjelajah/``; the explorer shows its first frame from there
  and fetches the rest when the reader first touches it.
- The theme's Font Awesome fonts (275 KB, every icon there is) are cut down
  to the twenty-odd icons the book shows: those named in the pages and the
  theme's scripts, and those the theme's stylesheets draw themselves.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from pathlib import Path

BLOCKING = {"documentation_options.js"}
IMG = re.compile(r"<img (?P<attrs>[^>]*?)\s*/?>")
SRC = re.compile(r'\bsrc="(?P<src>[^"]+)"')


def lazy_mathjax(app):
    if app.builder.name != "html":
        return
    config = dict(app.config.mathjax3_config or {})
    loader = dict(config.get("loader", {}))
    loader["load"] = [*loader.get("load", []), "ui/lazy"]
    config["loader"] = loader
    app.config.mathjax3_config = config


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


def size_images(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        if "_images/" in html:
            page.write_text(sized_images(html, page), encoding="utf-8")


# ".fa-magnifying-glass:before,.fa-search:before{content:"\f002"}"
FA_RULE = re.compile(r'(?P<selectors>[^{}]*\.fa-[^{}]*)\{content:"\\(?P<code>[0-9a-f]{4})"\}')
FA_NAME = re.compile(r"\bfa-([a-z0-9-]+)")
CSS_ESCAPE = re.compile(r"\\((?:e|f)[0-9a-f]{3})\b")
PRIVATE_USE = re.compile("[\ue000-\uf8ff]")
FA_FONTS = "_static/vendor/fontawesome/webfonts"


def icon_codepoints(outdir: Path) -> set[int]:
    """Every Font Awesome code point the built site can show."""
    names: dict[str, int] = {}
    shown: set[int] = set()
    for css in (outdir / "_static").rglob("*.css"):
        text = css.read_text(encoding="utf-8", errors="replace")
        for rule in FA_RULE.finditer(text):
            for name in FA_NAME.findall(rule["selectors"]):
                names.setdefault(name, int(rule["code"], 16))
        rest = FA_RULE.sub("", text)  # the icons a stylesheet draws by itself
        shown |= {int(code, 16) for code in CSS_ESCAPE.findall(rest)}
        shown |= {ord(char) for char in PRIVATE_USE.findall(rest)}
    used: set[str] = set()
    for path in [*outdir.rglob("*.html"), *(outdir / "_static").rglob("*.js")]:
        used |= set(FA_NAME.findall(path.read_text(encoding="utf-8", errors="replace")))
    return shown | {names[name] for name in used if name in names}


def subset_icon_fonts(outdir: Path) -> None:
    from fontTools import subset

    folder = outdir / FA_FONTS
    if not folder.is_dir():
        return
    codepoints = icon_codepoints(outdir)
    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]
    for font_path in folder.glob("*.woff2"):
        font = subset.load_font(str(font_path), options)
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=codepoints)
        subsetter.subset(font)
        subset.save_font(font, str(font_path), options)


def trim_icon_fonts(app, exception):
    if exception is None and app.builder.format == "html":
        subset_icon_fonts(Path(app.outdir))


EXPLORER_DATA = re.compile(
    r'(<script type="application/json" class="atensi-data">)(?P<json>.*?)(</script>)', re.S)
FRAMES_DIR = "_images/penjelajah"


def explorer_frames_to_files(html: str, page: Path, outdir: Path) -> str:
    """Each explorer's base64 frames written once as files (named by their
    content), and the page pointing at them instead."""
    def fix(match: re.Match) -> str:
        data = json.loads(match["json"])
        images = data.pop("images", None)
        if not images:
            return match.group(0)
        urls = []
        for encoded in images:
            png = base64.b64decode(encoded)
            target = outdir / FRAMES_DIR / f"{hashlib.sha1(png).hexdigest()[:20]}.png"
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(png)
            urls.append(os.path.relpath(target, page.parent).replace(os.sep, "/"))
            swaps[f"data:{data.get('mime', 'image/png')};base64,{encoded}"] = urls[-1]
        data["urls"] = urls
        payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        payload = payload.replace("</", "<\\/").replace("<!--", "<\\!--")
        return f"{match.group(1)}{payload}{match.group(3)}"

    swaps: dict[str, str] = {}
    html = EXPLORER_DATA.sub(fix, html)
    for data_uri, url in swaps.items():  # the first frame, shown before any script
        html = html.replace(f'src="{data_uri}"', f'src="{url}"')
    return html


def externalize_explorer_frames(app, exception):
    # The site only: `make pdf` prints one page and needs just the first frames.
    if exception is not None or app.builder.name != "html":
        return
    outdir = Path(app.outdir)
    for page in outdir.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        if "atensi-data" in html:
            page.write_text(explorer_frames_to_files(html, page, outdir), encoding="utf-8")


def setup(app):
    app.connect("builder-inited", lazy_mathjax, priority=400)
    app.connect("html-page-context", defer_scripts, priority=950)
    # Before book_guard checks the links of the written pages.
    app.connect("build-finished", externalize_explorer_frames, priority=850)
    app.connect("build-finished", size_images, priority=900)
    app.connect("build-finished", trim_icon_fonts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
