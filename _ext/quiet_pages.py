"""Pages that load cleanly: no console errors, no unused remote code.

- Light mode by default: pydata-sphinx-theme logs an error when no mode is
  set, and the figures are drawn on white.
- Thebe (live code on a remote kernel) is switched off in ``_config.yml``, but
  sphinx-thebe still adds its loader, a remote URL and, in some builds, the
  same inline ``const`` twice (a SyntaxError in the console). Its assets are
  dropped from every page.
- A favicon, so the browser does not ask the server for ``/favicon.ico``,
  also on ``index.html``, the page that sends the reader to the first chapter
  (written here instead of sphinx-external-toc's bare one-line redirect).
- One search field, in the sidebar: pydata-sphinx-theme 0.17 adds a second
  one in a top bar of its own unless ``navbar_persistent`` is set.
"""

from __future__ import annotations

import html
from pathlib import Path

FAVICON = Path(__file__).parent / "favicon.svg"


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


def write_index_redirect(app, exception):
    if exception is not None or app.builder.name != "html":
        return
    first = f"{app.config.root_doc}.html"
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
    Path(app.outdir, "index.html").write_text(page, encoding="utf-8")


def setup(app):
    app.connect("config-inited", configure, priority=100)
    app.connect("html-page-context", drop_thebe_assets, priority=900)
    # Before sphinx-external-toc, which writes its redirect only when none exists.
    app.connect("build-finished", write_index_redirect, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
