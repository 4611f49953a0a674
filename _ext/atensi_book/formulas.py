"""Formulas on the page: typeset once, when the book is built, by MathJax 3.

- **One path.** MathJax 3 (the ``django-static-mathjax`` wheel, pinned in
  requirements.txt) runs under Node.js at the end of the build
  (``formulas.js``), on every formula of every page at once. The pages carry
  finished CHTML markup with a hidden MathML copy for screen readers, one
  small stylesheet (``_static/matematika.css``, only the glyphs the book uses)
  and the font files it names, under ``_mathjax/``. No page loads a math
  script, nothing comes from a CDN, and the site works from ``file://`` and
  from the zip. A formula MathJax cannot read fails the build, naming the page
  and the TeX; so does a build without Node.js.
- **Why this path.** Against KaTeX prerendered by ``sphinxcontrib-katex``
  0.9.10 (KaTeX 0.16.10, its CSS and woff2 fonts served from the build),
  the three pages with the most math, measured in turn with
  ``BUILDS="mathjax katex" RUNS=3 scripts/audit_site.sh`` on the shared
  2-core machine at a load average of 12 to 14 (Lighthouse mobile
  performance, median, each run in brackets)::

      page      MathJax          KaTeX        HTML, raw (gzip)       all bytes sent
      gradien   51 (39 62 51)    56 (55 56 56)  445 (37,9) / 540 (44,2) KB  317 / 311 KB
      sintesis  57 (27 57 58)    56 (41 56 57)  398 (48,7) / 445 (52,5) KB  307 / 298 KB
      skala     not measured in time            362 (38,7) / 492 (44,5) KB

  The difference lies inside the spread of one variant's runs, so the
  scores do not choose a path. KaTeX's pages are 7 to 17 % bigger
  compressed, its woff2 fonts make the total 2 to 3 % smaller; the math
  stylesheet is about the same (4,2 against 3,9 KB gzip). No measurable
  gain, so the path the book already has stays and KaTeX's extra Sphinx
  extension and npm package (for its stylesheet and fonts) stay out.
  Accessibility, best practices and SEO were 100 for both.

- **Wide equations** (``static/wide-math.*``): on narrow screens the number
  goes under the equation, the equation shrinks to fit (down to 60 %), and
  what still does not fit scrolls with a shadow on the edge.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import mathjax
from sphinx.errors import ExtensionError
from sphinx.ext.mathjax import html_visit_displaymath, html_visit_math
from sphinx.util import logging

logger = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"  # wide-math.css/.js and the other stylesheets
SCRIPT = Path(__file__).with_suffix(".js")
RENDERER = "atensi"
CSS_NAME = "matematika.css"
# The CHTML fonts, out of _static: Jupyter Book adds every .js found under a
# static folder to every page.
OUT_DIR = "_mathjax"
FONTS = "output/chtml/fonts/woff-v2"
# Relative to _static/, where the stylesheet is written.
FONT_URL = f"../{OUT_DIR}/{FONTS}"
# As Sphinx's mathjax writer marks them up (HTML-escaped TeX inside).
INLINE = re.compile(r'(<span class="math notranslate nohighlight">)\\\((?P<tex>.*?)\\\)(</span>)', re.S)
DISPLAY = re.compile(
    r'(<div class="math notranslate nohighlight"[^>]*>\s*(?:<span class="eqno">.*?</span>)?)'
    r"\s*\\\[(?P<tex>.*?)\\\]\s*(</div>)",
    re.S,
)
MJX_ERROR = re.compile(r'data-mjx-error="([^"]*)"')


def mathjax_source() -> Path:
    source = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
    if not (source / "startup.js").is_file():
        raise FileNotFoundError(
            f"MathJax tidak ditemukan di {source}. Pasang ulang: "
            "pip install -r requirements.txt"
        )
    return source


def node() -> str:
    path = shutil.which("node")
    if path is None:
        raise ExtensionError(
            "Node.js tidak ditemukan: rumus buku dirender saat build oleh MathJax di Node.js. "
            "Pasang Node.js 18 atau lebih baru (sudo apt-get install nodejs, atau bash .ci/run), "
            "lalu bangun ulang."
        )
    return path


def register_renderer(app):
    # Sphinx's mathjax markup (\(...\) in a span, \[...\] in a div), without
    # its script: the formulas are typeset before any reader opens a page.
    app.add_html_math_renderer(RENDERER, (html_visit_math, None), (html_visit_displaymath, None))


def use_renderer(app, config):
    config.html_math_renderer = RENDERER


def start(app):
    if app.builder.format != "html":
        return
    node()  # before hours of reading, not at the end
    # Not a path in _config.yml: Jupyter Book would add its .js to every page a second time.
    app.config.html_static_path.append(str(STATIC))
    app.add_css_file(CSS_NAME)


def typeset(items: list[tuple[str, bool]]) -> tuple[list[str], str]:
    job = {"mathjax": str(mathjax_source()), "fontURL": FONT_URL, "items": items}
    proc = subprocess.run(
        [node(), str(SCRIPT)], input=json.dumps(job), capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise ExtensionError(f"MathJax (Node.js) gagal merender rumus buku: {proc.stderr.strip()}")
    out = json.loads(proc.stdout)
    return out["html"], out["css"]


def copy_fonts(outdir: Path, css: str) -> None:
    """The font files the stylesheet names, and MathJax's licence."""
    source = mathjax_source()
    target = outdir / OUT_DIR
    shutil.rmtree(target, ignore_errors=True)  # an earlier build's fonts, or MathJax for browsers
    for name in sorted(set(re.findall(rf"{re.escape(FONT_URL)}/([\w.-]+\.woff2?)", css))):
        dst = target / FONTS / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / FONTS / name, dst)
    shutil.copy2(source.parent / "LICENSE", target / "LICENSE")


def typeset_pages(app, pages: dict[Path, str]):
    """Typeset every formula of ``pages`` (path -> HTML) at once; returns the
    page rewrite (HTML -> HTML) for the one pass over the written pages."""
    if app.builder.format != "html":
        return None
    outdir = Path(app.outdir)
    items: dict[tuple[str, bool], int] = {}
    where: dict[tuple[str, bool], str] = {}
    for page, text in pages.items():
        for pattern, display in ((INLINE, False), (DISPLAY, True)):
            for match in pattern.finditer(text):
                key = (html.unescape(match.group("tex")).strip(), display)
                items.setdefault(key, len(items))
                where.setdefault(key, page.relative_to(outdir).as_posix())
    # Pages an incremental build did not rewrite keep their typeset formulas;
    # the stylesheet must still cover them, so every formula seen is typeset.
    seen = Path(app.doctreedir) / "rumus-buku.json"
    earlier = json.loads(seen.read_text(encoding="utf-8")) if seen.exists() else []
    for tex, display in earlier:
        items.setdefault((tex, display), len(items))
    rendered, css = typeset(list(items))
    failed = [
        f"{where[key]}: {key[0]}  ({html.unescape(error[1])})"
        for key, i in items.items()
        if key in where and (error := MJX_ERROR.search(rendered[i]))
    ]
    if failed:
        raise ExtensionError(
            "Rumus yang tidak bisa dibaca MathJax:\n  " + "\n  ".join(failed)
            + "\nPerbaiki TeX-nya di halaman itu (makro yang tidak dikenal, kurung kurawal yang tidak seimbang)."
        )
    (outdir / "_static" / CSS_NAME).write_text(css, encoding="utf-8")
    copy_fonts(outdir, css)
    seen.write_text(json.dumps(list(items), ensure_ascii=False), encoding="utf-8")
    logger.info(f"[atensi_book] {len(items)} rumus dirender saat build.")

    def replace(display):
        def fix(match):
            key = (html.unescape(match.group("tex")).strip(), display)
            markup = rendered[items[key]]
            if display:
                # A wide equation scrolls sideways on a phone (static/wide-math.*);
                # a keyboard reaches a scrolling box only if it can take focus.
                markup = markup.replace("<mjx-container ", '<mjx-container tabindex="0" ', 1)
            return f"{match.group(1)}{markup}{match.group(3)}"

        return fix

    def rewrite(text: str, page: Path) -> str:
        return DISPLAY.sub(replace(True), INLINE.sub(replace(False), text))

    return rewrite
