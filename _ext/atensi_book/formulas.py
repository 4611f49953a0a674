"""Formulas on the page: MathJax from the build, typeset once at build time.

- **Offline.** MathJax 3 comes from the ``django-static-mathjax`` wheel
  (pinned in requirements.txt). Only what a page needs is copied, to
  ``_build/html/_mathjax``: the TeX/CHTML loader, its fonts, the TeX
  extensions MathJax loads on demand, the menu and the accessibility pieces.
  The tree stays out of ``_static`` because Jupyter Book adds every .js found
  under a static folder to every page.
- **Typeset at build time.** In the browser MathJax costs a phone about a
  second on a long chapter, and the text jumps twice. So the same MathJax
  runs once under Node.js at the end of the build (``formulas.js``), on every
  formula of every page. The pages then carry finished CHTML markup, with a
  hidden MathML copy for screen readers, one small stylesheet
  (``_static/matematika.css``, only the glyphs the book uses) and the font
  files under ``_mathjax/``; they load no MathJax script. A formula MathJax
  cannot read fails the build, naming the page and the TeX. Without Node.js
  (``node`` on PATH), or with ``ATENSI_MATH=peramban``, the same files are
  typeset in the reader's browser instead, lazily (``ui/lazy``: only the
  formulas that scroll into view).
- **Wide equations** (``static/wide-math.*``): on narrow screens the number
  goes under the equation, the equation shrinks to fit (down to 60 %), and
  what still does not fit scrolls with a shadow on the edge.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import mathjax
from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

# --- MathJax served from the build -------------------------------------------

STATIC = Path(__file__).parent / "static"  # wide-math.css/.js and the other stylesheets
OUT_DIR = "_mathjax"
ENTRY = "tex-mml-chtml.js"
PARTS = [
    ENTRY,
    "output/chtml/fonts",
    "input/tex/extensions",
    "ui",
    "a11y",
    "adaptors",
]


def mathjax_source() -> Path:
    source = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
    if not (source / ENTRY).is_file():
        raise FileNotFoundError(
            f"MathJax tidak ditemukan di {source}. Pasang ulang: "
            "pip install -r requirements.txt"
        )
    return source


def set_mathjax_path(app, config):
    # Sphinx puts "_static/" in front of a relative path, hence "../".
    config.mathjax_path = f"../{OUT_DIR}/{ENTRY}"


def copy_mathjax(app):
    # Copied before the pages are written, so Sphinx can add its ?v= checksum.
    if app.builder.format != "html":
        return
    source = mathjax_source()
    target = Path(app.outdir) / OUT_DIR
    for part in PARTS:
        src = source / part
        dst = target / part
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    shutil.copy2(source.parent / "LICENSE", target / "LICENSE")


def lazy_mathjax(app):
    # In the browser, MathJax typesets only the formulas that scroll into view.
    if app.builder.name != "html":
        return
    config = dict(app.config.mathjax3_config or {})
    loader = dict(config.get("loader", {}))
    loader["load"] = [*loader.get("load", []), "ui/lazy"]
    config["loader"] = loader
    app.config.mathjax3_config = config


def add_static_path(app):
    # Not a path in _config.yml: Jupyter Book would add its .js to every page a second time.
    app.config.html_static_path.append(str(STATIC))


# --- Typeset at build time ----------------------------------------------------

SCRIPT = Path(__file__).with_suffix(".js")
CSS_NAME = "matematika.css"
# Relative to _static/, where the stylesheet is written.
FONT_URL = f"../{OUT_DIR}/output/chtml/fonts/woff-v2"
# As Sphinx's mathjax extension writes them (HTML-escaped TeX inside).
INLINE = re.compile(r'(<span class="math notranslate nohighlight">)\\\((?P<tex>.*?)\\\)(</span>)', re.S)
DISPLAY = re.compile(
    r'(<div class="math notranslate nohighlight"[^>]*>\s*(?:<span class="eqno">.*?</span>)?)'
    r"\s*\\\[(?P<tex>.*?)\\\]\s*(</div>)",
    re.S,
)
MJX_ERROR = re.compile(r'data-mjx-error="([^"]*)"')


def node_path() -> str | None:
    if os.environ.get("ATENSI_MATH", "").lower() == "peramban":
        return None
    return shutil.which("node")


def enabled(app) -> bool:
    return getattr(app, "_atensi_prerender_math", False)


def choose(app):
    if app.builder.format != "html":
        return
    app._atensi_prerender_math = node_path() is not None
    if enabled(app):
        app.add_css_file(CSS_NAME)
    else:
        logger.info("[atensi_book] Node.js tidak ada: rumus dirender oleh MathJax di peramban.")


def drop_mathjax_script(app, pagename, templatename, context, doctree):
    if not enabled(app):
        return
    context["script_files"] = [
        script
        for script in context.get("script_files", [])
        if ENTRY not in str(getattr(script, "filename", "") or "")
        and not (getattr(script, "attributes", {}).get("body") or "").startswith("window.MathJax")
    ]


def typeset(items: list[tuple[str, bool]]) -> tuple[list[str], str]:
    job = {"mathjax": str(mathjax_source()), "fontURL": FONT_URL, "items": items}
    proc = subprocess.run(
        [node_path() or "node", str(SCRIPT)],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise ExtensionError(f"MathJax (Node.js) gagal merender rumus buku: {proc.stderr.strip()}")
    out = json.loads(proc.stdout)
    return out["html"], out["css"]


def typeset_pages(app, pages: dict[Path, str]):
    """Typeset every formula of ``pages`` (path -> HTML) at once; returns the
    page rewrite (HTML -> HTML) for the one pass over the written pages, or
    None when the browser typesets the math."""
    if app.builder.format != "html" or not enabled(app):
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
    if not items:
        return None
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
