"""What a page loads: clean, light, and nothing that can wait blocks the text.

A chapter's text needs only its HTML and CSS; everything else may wait:

- **Clean.** Light mode by default (pydata-sphinx-theme logs an error when no
  mode is set, and the figures are drawn on white). Thebe is off in
  ``_config.yml``, but sphinx-thebe still adds its loader, a remote URL and
  sometimes the same inline ``const`` twice: its assets leave every page.
  A favicon, so the browser does not ask for ``/favicon.ico``. One search
  field, in the sidebar (``navbar_persistent``).
- **Scripts are deferred**: they download alongside the page and run after it
  has been parsed, in order. ``documentation_options.js`` stays blocking
  because inline scripts of the theme write into its object straight away.
  The theme's Font Awesome script goes (its CSS draws the same icons).
- **The three search scripts** (``searchtools.js``, ``language_data.js``,
  ``searchindex.js``) load only on ``search.html`` (``templates/layout.html``):
  the search field sends the reader there.

The other jobs that keep a page light on a phone have modules of their own:
``images`` (sized, lazy figures), ``stylesheet`` (one stylesheet per page)
and ``icons`` (icon fonts cut to the icons in use).
"""

from __future__ import annotations

import re
from pathlib import Path

FAVICON = Path(__file__).parent / "favicon.svg"
BLOCKING = {"documentation_options.js"}
# pydata-sphinx-theme's Font Awesome script (1,5 MB, ~0,5 MB compressed) turns
# icons into SVG; its CSS already draws the same icons with the web font, so the
# script only costs phones time (Lighthouse: blocking time, bytes).
FONTAWESOME_JS = re.compile(r'<script defer src="[^"]*_static/scripts/fontawesome\.js[^"]*"></script>\s*')


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


def defer_scripts(app, pagename, templatename, context, doctree):
    # search.html loads searchtools.js without defer, and it needs doctools.js.
    if pagename == "search":
        return
    scripts = []
    for script in context.get("script_files", []):
        name = Path(str(getattr(script, "filename", "") or "")).name
        attrs = getattr(script, "attributes", None)
        if name and attrs is not None and name not in BLOCKING and "async" not in attrs:
            # A new object: Sphinx shares one per script across all pages.
            script = type(script)(script.filename, priority=script.priority,
                                  **{**attrs, "defer": "defer"})
        scripts.append(script)
    context["script_files"] = scripts


def without_fontawesome_script(html: str, page: Path) -> str:
    return FONTAWESOME_JS.sub("", html)
