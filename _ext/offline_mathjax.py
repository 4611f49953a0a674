"""Serve MathJax from the built site instead of a CDN, so math renders offline.

The MathJax 3 files come from the ``django-static-mathjax`` wheel (pinned in
requirements.txt). Only what a page needs is copied, to ``_build/html/_mathjax``:
the combined TeX/CHTML loader, its fonts, the TeX extensions MathJax loads on
demand, the menu and the accessibility pieces. The tree stays out of
``_static`` because Jupyter Book adds every .js found under a static folder to
every page.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import mathjax

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


def setup(app):
    app.connect("config-inited", set_mathjax_path, priority=900)
    app.connect("builder-inited", copy_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
