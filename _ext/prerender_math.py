"""Math typeset when the book is built, not in the reader's browser.

In the browser MathJax costs a phone about a second of work on a long
chapter, and the text jumps twice: once when the raw TeX is replaced by
formulas, once more when MathJax's fonts arrive. Here the same MathJax
(from the pinned wheel, see offline_mathjax.py) runs once under Node.js at
the end of the build, on every formula of every page. The pages then carry
finished CHTML markup, with a hidden MathML copy for screen readers, one
small stylesheet (``_static/matematika.css``, only the glyphs the book uses)
and the same font files under ``_mathjax/``; they load no MathJax script.

A formula MathJax cannot read fails the build, naming the page and the TeX.

Without Node.js (``node`` on PATH) nothing changes: a note is printed and
the browser typesets the math as before. ``ATENSI_MATH=peramban`` chooses
that path on purpose.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from sphinx.errors import ExtensionError
from sphinx.util import logging

from offline_mathjax import ENTRY, OUT_DIR, mathjax_source

logger = logging.getLogger(__name__)

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
        logger.info("[prerender_math] Node.js tidak ada: rumus dirender oleh MathJax di peramban.")


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


def prerender(app, exception):
    if exception is not None or app.builder.format != "html" or not enabled(app):
        return
    outdir = Path(app.outdir)
    pages = {p: p.read_text(encoding="utf-8") for p in sorted(outdir.rglob("*.html"))}
    items: dict[tuple[str, bool], int] = {}
    where: dict[tuple[str, bool], str] = {}
    for page, text in pages.items():
        for pattern, display in ((INLINE, False), (DISPLAY, True)):
            for match in pattern.finditer(text):
                key = (html.unescape(match.group("tex")).strip(), display)
                items.setdefault(key, len(items))
                where.setdefault(key, page.relative_to(outdir).as_posix())
    if not items:
        return
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

    def replace(display):
        def fix(match):
            key = (html.unescape(match.group("tex")).strip(), display)
            markup = rendered[items[key]]
            if display:
                # A wide equation scrolls sideways on a phone (wide_math.py);
                # a keyboard reaches a scrolling box only if it can take focus.
                markup = markup.replace("<mjx-container ", '<mjx-container tabindex="0" ', 1)
            return f"{match.group(1)}{markup}{match.group(3)}"

        return fix

    for page, text in pages.items():
        new = DISPLAY.sub(replace(True), INLINE.sub(replace(False), text))
        if new != text:
            page.write_text(new, encoding="utf-8")
    (outdir / "_static" / CSS_NAME).write_text(css, encoding="utf-8")
    seen.write_text(json.dumps(list(items), ensure_ascii=False), encoding="utf-8")
    logger.info(f"[prerender_math] {len(items)} rumus dirender saat build.")


def setup(app):
    app.connect("builder-inited", choose)
    # After sphinx.ext.mathjax has added its script to the page (priority 500).
    app.connect("html-page-context", drop_mathjax_script, priority=960)
    # Before fast_pages and book_guard read the written pages.
    app.connect("build-finished", prerender, priority=800)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
