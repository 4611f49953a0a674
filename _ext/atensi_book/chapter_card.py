"""A sense of place: the card at the top of every chapter, and "Lanjutkan membaca".

The card, below the chapter's title, holds:

- "Yang akan Anda pelajari": the three lines of the chapter's front matter
  (``atensi: pelajari:``);
- the reading time on a phone with code folded and solutions closed,
  counted at build time from the words a reader sees there
  (``reading_minutes``);
- the prerequisites, linked (``atensi: prasyarat:``, page names such as
  ``softmax``);
- "Bab n dari N", from the numbered parts of ``_toc.yml``;
- on a chapter with "Cek pemahaman" questions, the reader's progress
  (filled in on the device by ``static/cek.js``).

Nothing is typed twice: titles come from the pages, numbers from the toc,
the count of questions from the directives. The front page (the toc's
root) also lists the progress of every chapter with questions, a reset
button, and the place to continue reading, which ``static/kartu.js``
remembers on the device (the last chapter and section read) and offers.
"""

from __future__ import annotations

import html
import math
import re
from pathlib import Path

import yaml
from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

from . import questions

WORDS_PER_MINUTE = 150  # technical prose, read on a small screen
SECONDS_PER_FIGURE = 10
FRONT_MATTER_KEY = "atensi"


def inline_html(text: str) -> str:
    """A front-matter line as HTML: escaped, with *emphasis* as in the chapter's prose."""
    return re.sub(r"\*([^*]+)\*", r"<em>\1</em>", html.escape(text))


def front_matter(path: Path) -> dict:
    """The YAML front matter of a MyST Markdown chapter ({} when there is none)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {}
    if not text.startswith("---\n"):
        return {}
    end = text.find("\n---", 4)
    if end < 0:
        return {}
    try:
        data = yaml.safe_load(text[4:end]) or {}
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


def numbered_chapters(srcdir: Path) -> list[str]:
    """The pages of the toc's numbered parts, in reading order."""
    try:
        toc = yaml.safe_load((srcdir / "_toc.yml").read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return []
    return [chapter["file"] for part in toc.get("parts", []) if part.get("numbered")
            for chapter in part.get("chapters", [])]


def _hidden_on_a_phone(node: nodes.Node) -> bool:
    """Text that a phone reader does not see by default: folded code, closed
    solutions, and the body of a folded section ("pendalaman", see folding.py)."""
    parent, child = node, None
    while parent is not None:
        if isinstance(parent, nodes.Element):
            if parent.get("nb_element") == "cell_code_source" or "solution" in type(parent).__name__.lower():
                return True
            if isinstance(parent, nodes.literal_block) and not _in_output(parent):
                return True
            if (isinstance(parent, nodes.section) and "pendalaman" in parent.get("classes", [])
                    and not isinstance(child, nodes.title)):
                return True
        parent, child = parent.parent, parent
    return False


def _in_output(node: nodes.Node) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, nodes.Element) and parent.get("nb_element") == "cell_code_output":
            return True
        parent = parent.parent
    return False


def reading_minutes(doctree: nodes.Node) -> int:
    """Minutes to read a page on a phone: visible words and figures.

    At read time an exercise's solution is still a start and an end marker
    (sphinx-exercise joins them later): what lies between them is hidden too.
    """
    words = figures = 0
    in_solution = False
    for node in doctree.findall():
        kind = type(node).__name__
        if kind == "solution_start_node":
            in_solution = True
        elif kind == "solution_end_node":
            in_solution = False
        if in_solution or _hidden_on_a_phone(node):
            continue
        if isinstance(node, nodes.Text):
            words += len(node.astext().split())
        elif isinstance(node, nodes.image):
            figures += 1
    return max(1, math.ceil(words / WORDS_PER_MINUTE + figures * SECONDS_PER_FIGURE / 60))


def remember_reading_time(app, doctree):
    env = app.env
    if not hasattr(env, "atensi_reading"):
        env.atensi_reading = {}
    env.atensi_reading[env.docname] = reading_minutes(doctree)


def _purge(app, env, docname):
    getattr(env, "atensi_reading", {}).pop(docname, None)


def _merge(app, env, docnames, other):
    if not hasattr(env, "atensi_reading"):
        env.atensi_reading = {}
    for docname in docnames:
        if docname in getattr(other, "atensi_reading", {}):
            env.atensi_reading[docname] = other.atensi_reading[docname]


class ChapterCard(SphinxPostTransform):
    """The card below the title of every page in the toc (after the fold
    control's transform, so the card comes first)."""

    default_priority = 960
    formats = ("html",)

    def run(self):
        env, docname = self.env, self.env.docname
        section = next(self.document.findall(nodes.section), None)
        if section is None or not section.children or not isinstance(section[0], nodes.title):
            return
        srcdir = Path(env.srcdir)
        chapters = numbered_chapters(srcdir)
        root = env.config.root_doc
        if docname not in chapters and docname != root:
            return
        meta = front_matter(Path(env.doc2path(docname))).get(FRONT_MATTER_KEY) or {}
        builder = self.app.builder
        lines = []
        learn = [item for item in meta.get("pelajari") or [] if isinstance(item, str)]
        if learn:
            items = "".join(f"<li>{inline_html(item)}</li>" for item in learn)
            lines.append(f'<p class="kartu-judul">Yang akan Anda pelajari</p><ul class="kartu-pelajari">{items}</ul>')
        facts = []
        if docname in chapters:
            facts.append(f"Bab {chapters.index(docname) + 1} dari {len(chapters)}")
        minutes = getattr(env, "atensi_reading", {}).get(docname)
        if minutes:
            facts.append(f"± {minutes} menit membaca di ponsel")
        needs = []
        for name in meta.get("prasyarat") or []:
            folder = docname.rsplit("/", 1)[0] + "/" if "/" in docname else ""
            target = name if "/" in name else folder + name
            if target not in env.titles:
                continue
            uri = builder.get_relative_uri(docname, target)
            needs.append(f'<a href="{html.escape(uri)}">{html.escape(env.titles[target].astext())}</a>')
        if needs:
            facts.append("Prasyarat: " + ", ".join(needs))
        if facts:
            lines.append('<p class="kartu-fakta">' + " · ".join(facts) + "</p>")
        counts = questions.questions_per_page(env)
        if counts.get(docname):
            lines.append(f'<p class="kartu-kemajuan">Cek pemahaman: <span class="cek-kemajuan" '
                         f'data-bab="{html.escape(docname)}" data-jumlah="{counts[docname]}"></span></p>')
        if docname == root:
            lines.append(self.front_page(counts, chapters))
        if not lines:
            return
        card = (f'<div class="kartu-bab" data-bab="{html.escape(docname)}" '
                f'data-akar="{html.escape(builder.get_relative_uri(docname, root))}">' + "".join(lines) + "</div>")
        section.insert(1, nodes.raw("", card, format="html"))

    def front_page(self, counts: dict[str, int], chapters: list[str]) -> str:
        env, builder = self.env, self.app.builder
        rows = []
        for page in [env.config.root_doc] + chapters:
            if counts.get(page) and page in env.titles:
                uri = builder.get_relative_uri(env.docname, page)
                rows.append(f'<li><a href="{html.escape(uri)}">{html.escape(env.titles[page].astext())}</a>: '
                            f'<span class="cek-kemajuan" data-bab="{html.escape(page)}" '
                            f'data-jumlah="{counts[page]}"></span></li>')
        progress = ""
        if rows:
            progress = ('<details class="kartu-semua"><summary>Kemajuan Cek pemahaman di perangkat ini</summary>'
                        f'<ul>{"".join(rows)}</ul><button type="button" class="cek-reset" hidden>'
                        'Hapus kemajuan</button></details>')
        return '<p class="kartu-lanjut" hidden></p>' + progress


def setup(app):
    """Registers the reading time, the card, and their stylesheet and script."""
    app.connect("doctree-read", remember_reading_time)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.add_post_transform(ChapterCard)
    app.add_css_file("kartu.css")
    app.add_js_file("kartu.js", defer="defer")
