"""Indonesian for the interface text that the themes leave in English.

Sphinx itself and sphinx-book-theme ship Indonesian catalogs, but
pydata-sphinx-theme has none and a few book-theme strings are missing. The
catalogs in ``_ext/locale/id/LC_MESSAGES`` are compiled here and registered as
fallbacks: they fill the gaps and do not replace existing translations.
"""

from __future__ import annotations

from pathlib import Path

from babel.messages.mofile import write_mo
from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from babel.messages.pofile import read_po

LOCALE_DIR = Path(__file__).parent / "locale"
TEMPLATES_DIR = Path(__file__).parent / "templates"  # buttons whose text is not translatable
SEARCH_PLACEHOLDER = "Cari di buku ini..."
# sphinx-exercise hard-codes English titles: "Exercise 4.1", "Solution to Exercise 4.1".
EXERCISE_FORMAT = "Latihan %s"
EXERCISE_WORDS = (("Solution to", "Jawaban"), ("Exercise", "Latihan"))
# sphinx-togglebutton's hint on the solution dropdowns ("Click to show").
TOGGLE_HINTS = {"togglebutton_hint": "Klik untuk melihat", "togglebutton_hint_hide": "Klik untuk menutup"}


def compile_catalogs() -> list[str]:
    domains = []
    for po_path in sorted(LOCALE_DIR.glob("id/LC_MESSAGES/*.po")):
        mo_path = po_path.with_suffix(".mo")
        if not mo_path.exists() or mo_path.stat().st_mtime < po_path.stat().st_mtime:
            with po_path.open("rb") as po_file:
                catalog = read_po(po_file, locale="id")
            with mo_path.open("wb") as mo_file:
                write_mo(mo_file, catalog)
        domains.append(po_path.stem)
    return domains


def configure(app, config):
    options = dict(config.html_theme_options or {})
    options["search_bar_text"] = SEARCH_PLACEHOLDER
    config.html_theme_options = options
    config.templates_path = [str(TEMPLATES_DIR), *config.templates_path]
    config.numfig_format = {**(config.numfig_format or {}), "exercise": EXERCISE_FORMAT}
    for name, text in TOGGLE_HINTS.items():
        setattr(config, name, text)


class SolutionTitleInIndonesian(SphinxPostTransform):
    """Rename "Solution to Exercise 4.1" to "Jawaban Latihan 4.1"."""

    default_priority = 22  # right after sphinx-exercise resolves the titles

    def run(self):
        from sphinx_exercise.nodes import solution_node

        for node in self.document.findall(solution_node):
            title = node.children[0]
            for text in list(title.findall(nodes.Text)):
                text.parent.replace(text, nodes.Text(_indonesian(text.astext())))
            # The link text starts with the space after "Jawaban": move it out
            # of the link, or the underline starts with a blank.
            for link in list(title.findall(nodes.reference)):
                first = link.children[0] if link.children else None
                if isinstance(first, nodes.Text) and first.astext().startswith(" "):
                    link.replace(first, nodes.Text(first.astext().lstrip()))
                    link.parent.insert(link.parent.index(link), nodes.Text(" "))
            node["title"] = _indonesian(node.get("title", ""))


def _indonesian(text):
    for english, indonesian in EXERCISE_WORDS:
        text = text.replace(english, indonesian)
    return text


def setup(app):
    for domain in compile_catalogs():
        app.add_message_catalog(domain, str(LOCALE_DIR))
    # Before sphinx-book-theme reads html_theme_options.
    app.connect("config-inited", configure, priority=100)
    app.add_post_transform(SolutionTitleInIndonesian)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
