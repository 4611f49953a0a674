"""Indonesian for the interface text that the themes leave in English.

- **Catalogs.** Sphinx itself and sphinx-book-theme ship Indonesian catalogs,
  but pydata-sphinx-theme has none and a few book-theme strings are missing.
  The catalogs in ``locale/id/LC_MESSAGES`` are compiled here and registered
  as fallbacks: they fill the gaps and do not replace existing translations.
- **Exercises.** sphinx-exercise's titles ("Solution to Exercise 4.1") and
  sphinx-togglebutton's hints.
- **Labels** that the themes hard-code in English (screen-reader labels, logo
  alt text) are replaced in the written pages, and sphinx-copybutton gets
  Indonesian messages (it picks them by ``<html lang>`` and has none for "id").
"""

from __future__ import annotations

import re
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

LOCALE_DIR = Path(__file__).parent / "locale"
TEMPLATES_DIR = Path(__file__).parent / "templates"  # buttons whose text is not translatable
SEARCH_PLACEHOLDER = "Cari di buku ini..."
# sphinx-exercise hard-codes English titles: "Exercise 4.1", "Solution to Exercise 4.1".
EXERCISE_FORMAT = "Latihan %s"
EXERCISE_WORDS = (("Solution to", "Jawaban"), ("Exercise", "Latihan"))
# sphinx-togglebutton's hint on the solution dropdowns ("Click to show").
TOGGLE_HINTS = {"togglebutton_hint": "Klik untuk melihat", "togglebutton_hint_hide": "Klik untuk menutup"}
# Hard-coded English in the themes' templates, as written in the HTML.
LABELS = {
    'aria-label="Main"': 'aria-label="Navigasi utama"',
    'aria-label="Page"': 'aria-label="Halaman"',
    'aria-label="Toggle hidden content"': 'aria-label="Tampilkan atau sembunyikan isi"',
    'alt="Colab logo"': 'alt="Logo Colab"',
    'alt="Binder logo"': 'alt="Logo Binder"',
    'title="Link to this term"': 'title="Tautan ke istilah ini"',
}
# sphinx-copybutton picks its messages by <html lang>; it has none for "id".
COPYBUTTON_ID = (
    "messages['id'] = {'copy': 'Salin', 'copy_to_clipboard': 'Salin ke papan klip',"
    " 'copy_success': 'Tersalin!', 'copy_failure': 'Gagal menyalin'};\n"
)


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
    # After Sphinx has numbered every page's figures (its own listener, priority 500).
    app.connect("env-get-updated", number_exercises_per_page, priority=900)
    for name, text in TOGGLE_HINTS.items():
        setattr(config, name, text)


def number_exercises_per_page(app, env) -> list[str]:
    """Number the exercises of each page outside the numbered parts from 1.

    Sphinx gives all pages without a section number one shared counter, so
    the appendix Menjalankan showed "Latihan 5" and "6" after the four of
    Pendahuluan. Numbered chapters ("Latihan 4.1") are left as they are.
    Returns the pages whose numbers changed, so they are written again."""
    changed = []
    for docname, kinds in env.toc_fignumbers.items():
        numbers = kinds.get("exercise")
        if not numbers or any(len(n) != 1 for n in numbers.values()):
            continue
        fresh = {ident: (i,) for i, ident in enumerate(sorted(numbers, key=numbers.get), 1)}
        if fresh != numbers:
            kinds["exercise"] = fresh
            changed.append(docname)
    return changed


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


def with_indonesian_labels(html: str, page: Path) -> str:
    for english, indonesian in LABELS.items():
        html = html.replace(english, indonesian)
    return html


def copybutton_messages(outdir: Path) -> None:
    copybutton = outdir / "_static" / "copybutton.js"
    if copybutton.exists():
        text = copybutton.read_text(encoding="utf-8")
        if "messages['id']" not in text:
            # Insert right after the messages object is declared.
            text = re.sub(r"(const messages = \{.*?\n\}\n)", r"\1" + COPYBUTTON_ID.replace("\\", "\\\\"),
                          text, count=1, flags=re.S)
            copybutton.write_text(text, encoding="utf-8")
