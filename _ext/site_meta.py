"""What the published site needs beyond the pages: its address, a sitemap,
robots.txt, social cards, an Indonesian 404 page and screen-reader labels.

- **The sitemap** lists every page of the book. It is written here, from the
  build environment, because sphinx-sitemap lists only the pages written by
  the current build: after an incremental ``make book`` it lost the rest.
- **The site's address** comes from the one repository URL in ``_config.yml``:
  ``https://github.com/OWNER/REPO`` is published by GitHub Pages at
  ``https://OWNER.github.io/REPO/``. Someone who hosts the book elsewhere sets
  ``atensi_site_url`` under ``sphinx: config:`` (or ``ATENSI_SITE_URL``); nothing else
  changes. The sitemap, social cards and the 404 page all follow it.
- **The social card** is drawn by the build with matplotlib: the book's title
  and the one-line formula as mathtext, 1200 × 630 px.
- **Speed on phones**: the theme's Font Awesome script is dropped (the icons
  come from its web font).
- **Contrast**: links in the exercise boxes get a darker blue (axe-core).
- **Screen-reader labels** that the themes hard-code in English are replaced
  in the written pages (the translatable ones are in ``_ext/locale``).
"""

from __future__ import annotations

import os
import re
from html import escape
from pathlib import Path
from urllib.parse import urlparse

CARD = "_static/kartu-atensi.png"
DESCRIPTION = (
    "Buku berbahasa Indonesia tentang satu attention head model GPT: "
    "skor, skala √d_k, mask kausal, softmax, dan jumlah tertimbang V, "
    "dengan NumPy, kernel CUDA, dan gambar interaktif."
)
NOT_FOUND_TITLE = "Halaman tidak ditemukan"
# Hard-coded English in the themes' templates, as written in the HTML.
LABELS = {
    'aria-label="Main"': 'aria-label="Navigasi utama"',
    'aria-label="Page"': 'aria-label="Halaman"',
    'aria-label="Toggle hidden content"': 'aria-label="Tampilkan atau sembunyikan isi"',
    'alt="Colab logo"': 'alt="Logo Colab"',
    'alt="Binder logo"': 'alt="Logo Binder"',
    'title="Link to this term"': 'title="Tautan ke istilah ini"',
}
# pydata-sphinx-theme's Font Awesome script (1,5 MB, ~0,5 MB compressed) turns
# icons into SVG; its CSS already draws the same icons with the web font, so the
# script only costs phones time (Lighthouse: blocking time, bytes).
FONTAWESOME_JS = re.compile(r'<script defer src="[^"]*_static/scripts/fontawesome\.js[^"]*"></script>\s*')
# sphinx-copybutton picks its messages by <html lang>; it has none for "id".
COPYBUTTON_ID = (
    "messages['id'] = {'copy': 'Salin', 'copy_to_clipboard': 'Salin ke papan klip',"
    " 'copy_success': 'Tersalin!', 'copy_failure': 'Gagal menyalin'};\n"
)


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
    return github_pages_url(repository)


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


def fill_not_found_body(app):
    """Again once the configuration is final: sphinx-external-toc sets root_doc
    (the first page, from _toc.yml) in its own config-inited handler, after ours."""
    app.config.notfound_context["body"] = not_found_body(app.config, app.config.html_baseurl)


def not_found_body(config, url: str) -> str:
    """The 404 page's text; the site's path and the first page come from the
    configuration, so they are escaped like any text pasted into HTML."""
    first = (urlparse(url).path or "/") + (getattr(config, "root_doc", "") or "index") + ".html"
    return (
        f"<h1>{NOT_FOUND_TITLE}</h1>\n"
        "<p>Maaf, halaman yang Anda cari tidak ada di buku ini. Mungkin "
        "alamatnya salah ketik, atau halamannya sudah dipindah.</p>\n"
        f'<p><a href="{escape(first, quote=True)}">'
        "Kembali ke Pendahuluan dan daftar isi</a>, atau pakai kotak "
        "pencarian di samping.</p>"
    )


def draw_card(path: Path, title: str) -> None:
    """The social card: the book's title and the one-line formula (mathtext)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(12, 6.3), dpi=100, facecolor="#0f3d56")
    fig.text(0.06, 0.78, title, color="white", fontsize=44, weight="bold", va="center")
    fig.text(
        0.06, 0.45,
        r"$\mathrm{Attention}(Q,K,V)=\mathrm{softmax}\left(\mathrm{mask}"
        r"\left(\frac{QK^{T}}{\sqrt{d_k}}\right)\right)V$",
        color="white", fontsize=34, va="center",
    )
    fig.text(
        0.06, 0.14,
        "Satu attention head: NumPy, kernel CUDA, dan gambar interaktif",
        color="#cfe8f3", fontsize=22, va="center",
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100, facecolor=fig.get_facecolor())


def write_card(app):
    if app.builder.format == "html":
        draw_card(Path(app.outdir) / CARD, app.config.html_title)


def write_sitemap(outdir: Path, url: str, docnames: list[str]) -> None:
    entries = "".join(
        f"  <url><loc>{escape(url + doc)}.html</loc></url>\n" for doc in docnames
    )
    (outdir / "sitemap.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        f"{entries}</urlset>\n",
        encoding="utf-8",
    )


def finish(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    write_sitemap(outdir, app.config.html_baseurl, sorted(app.env.found_docs))
    (outdir / "robots.txt").write_text(
        f"User-agent: *\nAllow: /\n\nSitemap: {app.config.html_baseurl}sitemap.xml\n",
        encoding="utf-8",
    )
    for page in outdir.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        new = FONTAWESOME_JS.sub("", text)
        for english, indonesian in LABELS.items():
            new = new.replace(english, indonesian)
        if new != text:
            page.write_text(new, encoding="utf-8")
    copybutton = outdir / "_static" / "copybutton.js"
    if copybutton.exists():
        text = copybutton.read_text(encoding="utf-8")
        if "messages['id']" not in text:
            # Insert right after the messages object is declared.
            text = re.sub(r"(const messages = \{.*?\n\}\n)", r"\1" + COPYBUTTON_ID.replace("\\", "\\\\"),
                          text, count=1, flags=re.S)
            copybutton.write_text(text, encoding="utf-8")


def skip_404_without_toc(app, env):
    """A one-page book (no toctree at all) cannot draw the theme's sidebar on a
    generated page: pydata-sphinx-theme fails on the 404 page. Such a book
    (the configuration tests build one) simply gets no 404 page."""
    if env.toctree_includes:
        return
    for listener in list(app.events.listeners.get("html-collect-pages", [])):
        if getattr(listener.handler, "__module__", "").startswith("notfound"):
            app.disconnect(listener.id)


def setup(app):
    app.add_config_value("atensi_site_url", "", "html")
    app.connect("env-updated", skip_404_without_toc)
    # After Jupyter Book has filled html_theme_options (repository_url).
    app.connect("config-inited", configure, priority=800)
    app.connect("builder-inited", fill_not_found_body)
    app.connect("builder-inited", write_card)
    app.connect("build-finished", finish)
    # _ext/static is added to html_static_path by wide_math.
    app.add_css_file("kontras.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
