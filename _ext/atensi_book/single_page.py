"""The single page that ``make pdf`` prints: the same node writers as the site.

Sphinx looks up the writers of custom nodes under the builder's name
("singlehtml") and falls back to its format ("html") only when no extension
registered any writer under that name. sphinx-exercise registers its nodes for
"singlehtml", so every node that other extensions registered for "html" only
(myst-nb's hidden cells among them) would have no writer on the single page
and the build would stop. The single page gets the site's writer for each of
those nodes.
"""

from __future__ import annotations


def share_site_writers(app):
    if app.builder.name != "singlehtml":
        return
    handlers = app.registry.translation_handlers
    single = handlers.setdefault("singlehtml", {})
    for node_name, writer in handlers.get("html", {}).items():
        single.setdefault(node_name, writer)
