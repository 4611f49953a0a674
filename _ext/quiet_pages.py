"""Pages that load cleanly: no console errors, no unused remote code.

- Light mode by default: pydata-sphinx-theme logs an error when no mode is
  set, and the figures are drawn on white.
- Thebe (live code on a remote kernel) is switched off in ``_config.yml``, but
  sphinx-thebe still adds its loader, a remote URL and, in some builds, the
  same inline ``const`` twice (a SyntaxError in the console). Its assets are
  dropped from every page.
- A favicon, so the browser does not ask the server for ``/favicon.ico``.
"""

from __future__ import annotations

from pathlib import Path

FAVICON = Path(__file__).parent / "favicon.svg"


def configure(app, config):
    context = dict(config.html_context or {})
    context["default_mode"] = "light"  # read by pydata-sphinx-theme's layout
    config.html_context = context
    config.html_favicon = str(FAVICON)


def is_thebe(asset) -> bool:
    name = str(asset.filename or "") if hasattr(asset, "filename") else str(asset)
    body = getattr(asset, "attributes", {}).get("body", "") or ""
    return "thebe" in name or "THEBE_JS_URL" in body


def drop_thebe_assets(app, pagename, templatename, context, doctree):
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [asset for asset in context[key] if not is_thebe(asset)]


def setup(app):
    app.connect("config-inited", configure, priority=100)
    app.connect("html-page-context", drop_thebe_assets, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
