"""A build that drops a page or writes a broken link fails, naming the page.

Two mistakes pass a Jupyter Book build silently:

* a chapter file that is not in ``_toc.yml``: with ``only_build_toc_files``
  sphinx-external-toc quietly adds it to ``exclude_patterns``, so the page
  simply never appears;
* a raw link (``<a href=...>`` or a Markdown link to a file) whose target
  or ``#anchor`` does not exist: Sphinx does not check those.

Here the first becomes an error before anything is read, and the second
an error once the HTML is written. ``broken_links`` is also what the test
suite uses, so the build and the tests agree on what "broken" means.
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

from sphinx.errors import ConfigError, ExtensionError

EXTERNAL = ("http://", "https://", "mailto:", "data:", "javascript:")
LINK_TAGS = {"a", "link", "img", "script", "source", "iframe"}


class _Page(HTMLParser):
    """Every href/src of one page, and every id (or <a name>) it defines."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in LINK_TAGS:
            self.links += [attrs[a] for a in ("href", "src") if attrs.get(a)]
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def broken_links(html_dir: Path) -> tuple[list[str], set[str]]:
    """("page → href (why)" for every internal link that does not resolve,
    the external links seen). 404.html is skipped: its links are written
    relative to wherever the host serves it."""
    html_dir = Path(html_dir)
    broken, external = [], set()
    parsed: dict[Path, _Page] = {}
    for path in sorted(html_dir.rglob("*.html")):
        rel = path.relative_to(html_dir).as_posix()
        if rel.startswith("_static/") or rel == "404.html":
            continue
        parsed.setdefault(path, _parse(path))
        for href in parsed[path].links:
            if href.startswith(EXTERNAL):
                external.add(href)
                continue
            url = urlparse(href)
            target = (path.parent / unquote(url.path)).resolve() if url.path else path
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{rel} → {href} (berkas tidak ada)")
                continue
            if url.fragment and target.suffix == ".html":
                if target not in parsed:
                    parsed[target] = _parse(target)
                if unquote(url.fragment) not in parsed[target].ids:
                    broken.append(f"{rel} → {href} (jangkar tidak ada)")
    return broken, external


def remember_excludes(app, config):
    app._atensi_excludes_before_toc = set(config.exclude_patterns)


def refuse_pages_missing_from_toc(app, config):
    if not getattr(config, "external_toc_exclude_missing", False):
        return
    before = getattr(app, "_atensi_excludes_before_toc", set())
    dropped = sorted(set(config.exclude_patterns) - before)
    if dropped:
        pages = ", ".join(dropped)
        raise ConfigError(
            f"Halaman tidak ada di _toc.yml: {pages}. Berkas ini akan dilewati diam-diam. "
            "Tambahkan ke _toc.yml, atau pindahkan berkasnya keluar dari folder buku "
            "(atau tambahkan polanya ke exclude_patterns di _config.yml)."
        )


def refuse_broken_links(outdir: Path) -> None:
    broken, _ = broken_links(outdir)
    if broken:
        listing = "\n  ".join(broken)
        raise ExtensionError(
            f"Tautan internal rusak di hasil build ({len(broken)}):\n  {listing}\n"
            "Perbaiki alamat atau #jangkar di halaman yang disebut."
        )
