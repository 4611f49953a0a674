"""Code folded on small screens, one tap away.

Below ``PHONE_MAX_PX`` a code cell's input (``div.cell > div.cell_input``)
and every long listing (a ``literalinclude`` or code block of at least
``LONG_LISTING_LINES`` lines) start folded; on a wider screen they start
shown. Each foldable piece carries one line that says what the code does,
and a button "Tampilkan kode" / "Sembunyikan kode". One control at the top
of the page opens or folds them all, and that choice is remembered on the
device (``localStorage``, key ``STORAGE_KEY``) for every page.

- **No layout shift.** A small inline script in ``<head>`` (``HEAD_SCRIPT``)
  sets ``data-kode="lipat"`` or ``"buka"`` on ``<html>`` before the body is
  parsed; the stylesheet (``static/lipat.css``) folds from that attribute,
  so the first paint is already right. The deferred ``static/lipat.js`` only
  wires the buttons. Without scripts nothing is folded and no button shows.
- **Outputs stay.** Only the input of a cell folds: every number, table and
  figure that the prose relies on stays on the page.
- **The summary is never typed twice.** It is the cell's ``ringkasan``
  metadata (``:ringkasan: ...`` in the code-cell), else the cell's opening
  comment, else a line derived from the code itself (what it defines,
  computes and prints; ``summary_of_code``).

A chapter may also name, in its front matter (``atensi: pendalaman:``, the
sections' titles as the page shows them), the sections that go deeper than
a phone reader needs on a first pass: the CUDA kernel, the exercises that
need Python, a detour. Such a section folds in the same way below its
title, behind one line that says how long it is and a button "Tampilkan
bagian"; the page-level control opens and folds it with the code. A title
that the page does not have fails the build (``DeeperSections``), so a
renamed section is never silently left open.

Cells already hidden behind MyST-NB's own toggle (``hide-input``,
``hide-cell``) and code inside an exercise's solution keep their own way of
being opened and are left alone.
"""

from __future__ import annotations

import ast
import html
import re
from pathlib import Path

from docutils import nodes
from sphinx.transforms import SphinxTransform
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

from .chapter_card import FRONT_MATTER_KEY, WORDS_PER_MINUTE, front_matter

logger = logging.getLogger(__name__)

PHONE_MAX_PX = 576
STORAGE_KEY = "atensi-kode"
LONG_LISTING_LINES = 12
SUMMARY_MAX_CHARS = 110
STATIC = Path(__file__).parent / "static"
DEEPER_KEY = "pendalaman"  # front matter: titles of the sections that fold like code
DEEPER_CLASS = "pendalaman"

# Runs in <head> before the body exists: a stored choice wins, else the width.
HEAD_SCRIPT = (
    "(function(){var d=document.documentElement,s=null;"
    f'try{{s=localStorage.getItem("{STORAGE_KEY}")}}catch(e){{}}'
    'd.setAttribute("data-kode",s==="lipat"||s==="buka"?s:'
    f'(window.matchMedia&&matchMedia("(max-width: {PHONE_MAX_PX - 0.02}px)").matches?"lipat":"buka"))'
    "})();"
)

LABELS = ('<span class="jika-terlipat">{show}</span>'
          '<span class="jika-terbuka">{hide}</span>')


def _plural_names(names: list[str], limit: int = 3) -> str:
    shown = names[:limit]
    text = ", ".join(shown)
    if len(names) > limit:
        text += f" dan {len(names) - limit} lainnya"
    return text


def summary_of_code(source: str) -> str:
    """One Indonesian line for a Python cell: what it defines, computes and prints.

    >>> summary_of_code("def f(x):\\n    return x\\nA = f(2)\\nprint(A)")
    'Kode (4 baris): mendefinisikan f(); menghitung A; mencetak hasilnya'
    """
    lines = [line for line in source.splitlines() if line.strip()]
    head = f"Kode ({len(lines)} baris)"
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return head
    defined, computed, imported, prints, draws = [], [], [], False, False
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defined.append(f"{statement.name}()")
        elif isinstance(statement, ast.ClassDef):
            defined.append(statement.name)
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            imported += [alias.asname or alias.name for alias in statement.names]
        elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name) and not name.id.startswith("_") and name.id not in computed:
                        computed.append(name.id)
        for node in ast.walk(statement):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                if called == "print":
                    prints = True
                elif called in {"show", "imshow", "plot", "explore", "display"} or "plot" in called:
                    draws = True
    parts = []
    if defined:
        parts.append("mendefinisikan " + _plural_names(defined))
    if computed:
        parts.append("menghitung " + _plural_names(computed))
    if imported and not (defined or computed):
        parts.append("mengimpor " + _plural_names(imported))
    if prints:
        parts.append("mencetak hasilnya")
    elif draws and not parts:
        parts.append("menggambar hasilnya")
    return head + (": " + "; ".join(parts) if parts else "")


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    match = re.search(r"(?<=[.!?])\s", text)
    if match:
        text = text[:match.start()]
    if len(text) > SUMMARY_MAX_CHARS:
        text = text[:SUMMARY_MAX_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return text


def opening_comment(source: str, marks: tuple[str, ...] = ("#",)) -> str | None:
    """The comment the code opens with (consecutive comment lines), its first sentence."""
    found = []
    for line in source.splitlines():
        stripped = line.strip()
        if not stripped and not found:
            continue
        mark = next((m for m in marks if stripped.startswith(m)), None)
        if mark is None or stripped.startswith("#!"):
            break
        found.append(stripped[len(mark):].strip(" */"))
    text = " ".join(part for part in found if part)
    return _first_sentence(text) if text else None


def cell_summary(metadata: dict, source: str) -> str:
    """The one line shown for a folded cell (see the module docstring)."""
    given = metadata.get("ringkasan")
    if isinstance(given, str) and given.strip():
        return _first_sentence(given)
    return opening_comment(source) or summary_of_code(source)


def listing_summary(node: nodes.literal_block, caption: str | None) -> str:
    source = node.astext()
    language = node.get("language", "")
    lines = len(source.splitlines())
    if caption:
        return _first_sentence(caption)
    comment = opening_comment(source, ("//", "/*", "*", "#"))
    included = node.get("source", "")
    where = f"Berkas {Path(included).name}" if included and not included.endswith((".md", ".ipynb")) else "Kode"
    where += f" ({lines} baris)"
    if language in {"cuda", "c", "cpp", "c++"} and not comment:
        where += ", CUDA C" if language == "cuda" else ", C"
    return f"{where}: {comment}" if comment else where


def control_html(summary: str, target_id: str, what: str = "kode") -> str:
    """The line above one foldable piece: its summary and its button (``what``:
    the word on the button, "kode" or "bagian")."""
    labels = LABELS.format(show=f"Tampilkan {what}", hide=f"Sembunyikan {what}")
    return (f'<div class="lipat-baris"><span class="lipat-ringkasan">{html.escape(summary)}</span>'
            f'<button type="button" class="lipat-tombol" aria-controls="{target_id}">{labels}</button></div>')


def page_control_html() -> str:
    """The control below the page title that opens or folds every piece."""
    labels = LABELS.format(show="Tampilkan semua kode", hide="Lipat semua kode")
    return (f'<div class="lipat-halaman"><button type="button" class="lipat-semua">{labels}</button>'
            '<span class="lipat-keterangan">pilihan ini diingat di perangkat ini</span></div>')


def _control(summary: str, target_id: str, what: str = "kode") -> nodes.raw:
    return nodes.raw("", control_html(summary, target_id, what), format="html")


def deeper_titles(metadata: dict) -> list[str]:
    """The section titles a chapter's front matter folds on a phone."""
    given = (metadata.get(FRONT_MATTER_KEY) or {}).get(DEEPER_KEY) or []
    return [title for title in given if isinstance(title, str)] if isinstance(given, list) else []


def _in_code(node: nodes.Node) -> bool:
    """Inside a listing or a cell's source (read only by whoever opens the code),
    and not in a cell's output (which stays on the page)."""
    parent, code = node.parent, False
    while parent is not None:
        if isinstance(parent, nodes.container) and parent.get("nb_element") == "cell_code_output":
            return False
        if isinstance(parent, nodes.literal_block) or (
                isinstance(parent, nodes.container) and parent.get("nb_element") == "cell_code_source"):
            code = True
        parent = parent.parent
    return code


def deeper_summary(section: nodes.Element) -> str:
    """The line shown under a folded section's title: how long its body reads, and
    whether it holds exercises (to do in Python) or code."""
    words = sum(len(text.astext().split()) for text in section.findall(nodes.Text)
                if not _in_code(text))
    minutes = max(1, round(words / WORDS_PER_MINUTE))
    if any("exercise" in type(n).__name__.lower() for n in section.findall(nodes.Element)):
        holds = ", latihan Python"
    elif any(isinstance(n, nodes.literal_block) or (isinstance(n, nodes.container)
             and n.get("nb_element") == "cell_code") for n in section.findall(nodes.Element)):
        holds = ", ada kode"
    else:
        holds = ""
    # Short enough to share one line with its button on a 360 px phone.
    return f"Pendalaman, ± {minutes} menit{holds}"


def mark_deeper_sections(document: nodes.Node, wanted: list[str]) -> list[str]:
    """Marks every section titled as in ``wanted``; returns the titles not found."""
    found = set()
    for section in document.findall(nodes.section):
        title = section[0].astext().strip() if section.children and isinstance(section[0], nodes.title) else ""
        if title in wanted:
            section["classes"].append(DEEPER_CLASS)
            found.add(title)
    return [title for title in wanted if title not in found]


def holds_questions(section: nodes.Element) -> bool:
    """Whether an in-page question sits in it: the practice a phone reader has must stay in view."""
    return any("cek-pemahaman" in node.get("classes", []) for node in section.findall(nodes.container))


def fold_section(section: nodes.section, target_id: str) -> None:
    """Moves everything below a marked section's title into one foldable box
    (``target_id``), with the summary line and its button above it."""
    inner = nodes.container(classes=["lipat-isi"], ids=[target_id])
    for child in list(section.children[1:]):
        section.remove(child)
        inner += child
    section["classes"].append("lipat")
    section += _control(deeper_summary(inner), target_id, "bagian")
    section += inner


class DeeperSections(SphinxTransform):
    """Marks the sections named in ``atensi: pendalaman:`` (at read time, so
    that the chapter card's reading time already leaves them out)."""

    default_priority = 880

    def apply(self, **kwargs):
        wanted = deeper_titles(front_matter(Path(self.env.doc2path(self.env.docname))))
        for title in mark_deeper_sections(self.document, wanted):
            logger.warning(f"atensi: pendalaman menyebut bagian {title!r}, tetapi halaman ini "
                           f"tidak punya bagian berjudul itu. Salin judulnya persis seperti di halaman.",
                           location=self.env.docname)
        for section in self.document.findall(nodes.section):
            if DEEPER_CLASS in section["classes"] and holds_questions(section):
                logger.warning(f"atensi: pendalaman melipat bagian {section[0].astext()!r}, yang memuat "
                               f"Cek pemahaman. Pindahkan soalnya ke luar bagian itu, atau jangan lipat "
                               f"bagian itu.", location=self.env.docname)


def _inside_solution(node: nodes.Node) -> bool:
    """Code in an exercise's solution or a dropdown is already behind a control."""
    parent = node.parent
    while parent is not None:
        if "solution" in type(parent).__name__.lower():
            return True
        if isinstance(parent, nodes.Element) and "dropdown" in parent.get("classes", []):
            return True
        parent = parent.parent
    return False


def _inside_cell(node: nodes.Node) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, nodes.container) and parent.get("nb_element", "").startswith("cell_code"):
            return True
        parent = parent.parent
    return False


class FoldableCode(SphinxPostTransform):
    """Adds the summary line and button to each foldable piece of code, and
    the page-level control below the title of a page that has any."""

    default_priority = 950
    formats = ("html",)

    def run(self):
        count = 0
        for cell in list(self.document.findall(nodes.container)):
            if cell.get("nb_element") != "cell_code" or cell.get("hide_mode") or _inside_solution(cell):
                continue
            source_box = next((child for child in cell.children if isinstance(child, nodes.container)
                               and child.get("nb_element") == "cell_code_source"), None)
            if source_box is None:
                continue
            count += 1
            target = f"kode-{count}"
            source_box["ids"].append(target)
            cell["classes"].append("lipat")
            summary = cell_summary(cell.get("cell_metadata") or {}, source_box.astext())
            cell.insert(cell.index(source_box), _control(summary, target))
        for block in list(self.document.findall(nodes.literal_block)):
            if _inside_cell(block) or _inside_solution(block):
                continue
            if len(block.astext().splitlines()) < LONG_LISTING_LINES:
                continue
            wrapper = block.parent
            caption = None
            if isinstance(wrapper, nodes.container) and "literal-block-wrapper" in wrapper.get("classes", []):
                caption = wrapper[0].astext() if isinstance(wrapper[0], nodes.caption) else None
                block = wrapper
            count += 1
            target = f"kode-{count}"
            inner = nodes.container(classes=["lipat-isi"], ids=[target])
            outer = nodes.container(classes=["lipat", "lipat-daftar"])
            block.parent.replace(block, outer)  # replace_self would copy its ids and classes
            inner += block
            literal = block if isinstance(block, nodes.literal_block) else next(block.findall(nodes.literal_block))
            outer += _control(listing_summary(literal, caption), target)
            outer += inner
        for section in list(self.document.findall(nodes.section)):
            if DEEPER_CLASS not in section.get("classes", []) or not isinstance(section[0], nodes.title):
                continue
            count += 1
            fold_section(section, f"kode-{count}")
        if count:
            self.add_page_control()

    def add_page_control(self):
        section = next(self.document.findall(nodes.section), None)
        if section is None or not section.children or not isinstance(section[0], nodes.title):
            return
        section.insert(1, nodes.raw("", page_control_html(), format="html"))


def setup(app):
    """Registers the transform, the head script, the stylesheet and the script."""
    app.add_transform(DeeperSections)
    app.add_post_transform(FoldableCode)
    app.add_js_file(None, body=HEAD_SCRIPT, priority=1)
    app.add_css_file("lipat.css")
    app.add_js_file("lipat.js", defer="defer")
