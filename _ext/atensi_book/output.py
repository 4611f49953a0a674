"""The build's own files, written whole, and a torn one rebuilt.

The passes at the end of the build (``finish``, ``one_stylesheet`` in
``__init__``) rewrite pages that Sphinx has already written, and the formula
list ``.doctrees/rumus-buku.json`` is kept from one build to the next. A
build killed while writing one of them used to leave it cut short, and an
incremental build then kept the torn page, or failed on the torn list, in
every later run. So:

- each of these files is written through a temporary file and a rename
  (``atensi.files``): the old version or the new one, never half of one;
- a page that an earlier build left torn (it does not end in ``</html>``)
  is removed when the next build starts, so Sphinx writes it again;
  ``formulas`` reads a torn formula list as missing and says so.
"""

from __future__ import annotations

from pathlib import Path

from atensi import files
from sphinx.util import logging

logger = logging.getLogger(__name__)

END = b"</html>"
# Folders of the site that hold no page Sphinx writes from a document.
NOT_PAGES = ("_static", "_sources", "_images", "penjelajah")


def write_page(page: Path, text: str) -> None:
    files.write_text(page, text)


def is_torn(page: Path) -> bool:
    """A written page that stops before its end (``</html>``)."""
    with open(page, "rb") as f:
        f.seek(0, 2)
        size = f.tell()
        f.seek(max(0, size - 512))
        return not f.read().rstrip().endswith(END)


def remove_torn_pages(app) -> None:
    """builder-inited: pages an earlier build left cut short are removed, so
    this build writes them again (Sphinx rewrites a page whose file is gone)."""
    if app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    if not outdir.is_dir():
        return
    for page in sorted(outdir.rglob("*.html")):
        if page.relative_to(outdir).parts[0] in NOT_PAGES or not page.is_file():
            continue
        if is_torn(page):
            logger.info(f"[atensi_book] {page.relative_to(outdir).as_posix()} terpotong oleh build "
                        "sebelumnya; halaman ini ditulis ulang.")
            page.unlink()
