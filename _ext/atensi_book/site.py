"""What the published site needs beyond the pages: its address, a sitemap,
robots.txt, a social card, an Indonesian 404 page and the front door.

- **The site's address** comes from the repository the book is built from
  (``repository.py``: the Pages workflow gives it): ``https://github.com/OWNER/REPO``
  is published by GitHub Pages at ``https://OWNER.github.io/REPO/``. A local
  build without a repository has no address: no sitemap or robots.txt, and the
  download links are plain text (``make pdf`` and ``make zip`` write them for
  the Pages site only). Someone who hosts the book elsewhere sets
  ``atensi_site_url`` under ``sphinx: config:`` (or ``ATENSI_SITE_URL``);
  nothing else changes. The sitemap, the social card and the 404 page follow it.
- **The sitemap** lists every page of the book, from the build environment.
  sphinx-sitemap is not used: it collects the pages as they are written
  (``html-page-context``), so after an incremental ``make book`` it loses
  every page that was not rewritten.
- **The social card** is ``static/kartu-atensi.png`` (1200 × 630 px: the
  title and the one-line formula), shown through sphinxext-opengraph's tags.
- **The front door**: ``index.html`` sends the reader to the first chapter,
  with the favicon (written here instead of sphinx-external-toc's bare
  one-line redirect).
- **The downloads** (``unduh/atensi.pdf``, ``unduh/atensi-luring.zip``) are
  written by ``make pdf`` and ``make zip`` after the site, and only the Pages
  job runs both. A page links to them at the site's address, so the link works
  from a plain ``make book``; the offline zip and the PDF link to their own
  copies instead (``downloads``).
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from urllib.parse import urlparse

from atensi import files

from . import downloads
from .assets import FAVICON

CARD = "_static/kartu-atensi.png"
NOT_FOUND_TITLE = "Halaman tidak ditemukan"


def github_pages_url(repository_url: str) -> str:
    """``https://github.com/OWNER/REPO(.git)`` → ``https://owner.github.io/REPO/``."""
    parsed = urlparse(repository_url.strip())
    parts = [p for p in parsed.path.split("/") if p]
    if parsed.scheme != "https" or parsed.netloc != "github.com" or len(parts) != 2:
        raise ValueError(
            f"URL repositori {repository_url!r} di _config.yml bukan alamat GitHub "
            "berbentuk https://github.com/PEMILIK/REPO. Perbaiki 'repository: url', "
            "atau tulis alamat situs sendiri di 'sphinx: config: atensi_site_url'."
        )
    owner, repo = parts[0], parts[1].removesuffix(".git")
    return f"https://{owner.lower()}.github.io/{repo}/"


def site_url(config) -> str:
    override = os.environ.get("ATENSI_SITE_URL") or config.atensi_site_url
    if override:
        return override.rstrip("/") + "/"
    repository = (config.html_theme_options or {}).get("repository_url", "")
    return github_pages_url(repository) if repository else ""


def configure(app, config):
    url = site_url(config)
    config.html_baseurl = url
    # Open Graph: the site's address, the drawn card, Indonesian locale.
    config.ogp_site_url = url
    config.ogp_site_name = config.html_title
    config.ogp_image = url + CARD
    config.ogp_image_alt = f"{config.html_title}: rumus atensi satu baris"
    config.ogp_social_cards = {"enable": False}
    config.ogp_enable_meta_description = True
    config.ogp_custom_meta_tags = ['<meta property="og:locale" content="id_ID" />']
    # 404: absolute links under the site's path, so it works at any depth.
    config.notfound_urls_prefix = urlparse(url).path or "/"
    config.notfound_context = {"title": NOT_FOUND_TITLE, "body": not_found_body(config, url)}


def link_downloads_to_the_site(app, pagename, templatename, context, doctree):
    """``../unduh/atensi.pdf`` in a page's body → ``SITE/unduh/atensi.pdf``
    (without an address, the words stay, without a dead link). On the single
    page that ``make pdf`` prints, the PDF's link to itself is its words."""
    body = context.get("body")
    if body and "unduh/" in body:
        if app.builder.name == "singlehtml":
            body = downloads.words_only(body, {downloads.PDF})
        context["body"] = downloads.at_site(body, app.config.html_baseurl)


def not_found_body(config, url: str) -> str:
    """The 404 page's text; the site's path and the first page come from the
    configuration, so they are escaped like any text pasted into HTML."""
    first = (urlparse(url).path or "/") + (getattr(config, "root_doc", "") or "index") + ".html"
    return (
        f"<h1>{NOT_FOUND_TITLE}</h1>\n"
        "<p>Maaf, halaman yang Anda cari tidak ada di buku ini. Mungkin "
        "alamatnya salah ketik, atau halamannya sudah dipindah.</p>\n"
        f'<p><a href="{html.escape(first, quote=True)}">'
        "Kembali ke Pendahuluan dan daftar isi</a>, atau pakai kotak "
        "pencarian di samping.</p>"
    )


def write_sitemap(outdir: Path, url: str, docnames: list[str]) -> None:
    entries = "".join(
        f"  <url><loc>{html.escape(url + doc)}.html</loc></url>\n" for doc in docnames
    )
    files.write_text(
        outdir / "sitemap.xml",
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        f"{entries}</urlset>\n",
    )


def write_robots(outdir: Path, url: str) -> None:
    files.write_text(outdir / "robots.txt", f"User-agent: *\nAllow: /\n\nSitemap: {url}sitemap.xml\n")


def write_index_redirect(app) -> None:
    # root_doc and the title come from _config.yml: escaped like any other text.
    first = html.escape(f"{app.config.root_doc}.html", quote=True)
    title = html.escape(app.config.html_title or app.config.project)
    page = (
        '<!DOCTYPE html>\n<html lang="id">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{title}</title>\n"
        f'<link rel="icon" href="_static/{FAVICON.name}">\n'
        f'<meta http-equiv="Refresh" content="0; url={first}">\n'
        "</head>\n<body>\n"
        f'<p>Membuka <a href="{first}">halaman pertama buku</a>...</p>\n'
        "</body>\n</html>\n"
    )
    files.write_text(Path(app.outdir, "index.html"), page)


def skip_404_without_toc(app, env):
    """A one-page book (no toctree at all) cannot draw the theme's sidebar on a
    generated page: pydata-sphinx-theme fails on the 404 page. Such a book
    (the configuration tests build one) simply gets no 404 page."""
    if env.toctree_includes:
        return
    for listener in list(app.events.listeners.get("html-collect-pages", [])):
        if getattr(listener.handler, "__module__", "").startswith("notfound"):
            app.disconnect(listener.id)
