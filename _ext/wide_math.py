"""Display equations that are wider than a phone screen.

pydata-sphinx-theme puts each display equation in a box that scrolls
sideways, next to its number, with no visible sign that more is hidden: on a
360 px screen the book's main formula ends at "softmax". Here, on narrow
screens, the number goes under the equation, the equation is shrunk to fit
(down to 60 %), and what still does not fit scrolls with a shadow on the edge.

Tables and printed cell output get the same treatment without the shrinking:
they scroll inside their own box (never the page), with a shadow on the
hidden side and a short hint above the box when it is wider than the screen.
Long glossary terms may break on a phone instead of widening the page.
"""

from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).parent / "static"


def add_static_path(app):
    app.config.html_static_path.append(str(STATIC))


def setup(app):
    # Not a path in _config.yml: Jupyter Book would add its .js to every page a second time.
    app.connect("builder-inited", add_static_path)
    app.add_css_file("wide-math.css")
    app.add_js_file("wide-math.js", defer="defer")
    app.add_css_file("wide-tables.css")
    app.add_js_file("wide-tables.js", defer="defer")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
