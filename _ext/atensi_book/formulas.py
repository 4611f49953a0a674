"""Formulas on the page: MathML, turned out of TeX once, when the book is built.

- **One path.** MathJax 3 (the ``django-static-mathjax`` wheel, pinned in
  requirements.txt) runs under Node.js at the end of the build
  (``formulas.js``) and turns every formula of every page, at once, into
  MathML. ``to_core`` makes it MathML Core, what browsers draw themselves:
  TeX's letter styles (``\\mathbb{R}``) become Unicode letters (ℝ), table
  alignment and spacing become CSS on each cell, and operators get TeX's
  spaces. The browser draws it in Latin Modern Math (Debian's
  ``fonts-lmodern``), which the build cuts down to the characters the
  formulas use, with the larger and stretched forms of its MATH table, and
  writes as ``_static/rumus/latinmodern-math.woff2`` (about 60 KB) beside
  its licence; ``_static/matematika.css`` names it. The MathML is what
  screen readers read, so there is no hidden copy. No page loads a math
  script, nothing comes from a CDN, and the site works from ``file://``,
  from the zip and in the PDF. A formula MathJax cannot read fails the
  build, naming the source file, its line, the TeX and the reason in
  Indonesian; so does a build without Node.js or without the font. The list
  of formulas kept between builds (``.doctrees/rumus-buku.json``) is written
  whole (``atensi.files``); a torn one is rebuilt from the pages.
- **Why this path.** MathJax's CHTML output (the path before this one)
  carried each formula twice, its own markup of spans for the eye and a
  hidden MathML copy for screen readers: up to 13.000 elements on a page
  for the browser to style and lay out, and that, not bytes, was what a
  phone waited for. Replacing each CHTML container by its own MathML copy,
  before the font and the layout were done, measured (Lighthouse mobile,
  RUNS=3, interleaved) gradien 72 -> 79 and skala_akar_dk 70 -> 75 on a quiet
  machine, and gradien 28 -> 66, sintesis 65 -> 72 at a load average of 7.
  This path as it ships (font and layout done) against the CHTML path,
  measured in turn with ``BUILDS="chtml mathml" RUNS=3
  scripts/audit_site.sh`` on the shared 2-core machine at a load average of
  7 to 12 (Lighthouse mobile performance, median, each run in brackets; the
  elements and the HTML of the page, raw and gzip)::

      page           CHTML          MathML         elements       HTML KB (gzip)
      gradien        42 (42 36 59)  72 (91 72 55)  10345 -> 6165  378 (34) -> 180 (26)
      sintesis       71 (64 79 71)  73 (73 74 72)  10256 -> 7451  370 (41) -> 237 (34)
      skala_akar_dk  70 (49 75 70)  72 (60 72 73)   9275 -> 5913  355 (41) -> 201 (33)

  Better on every page, most where the formulas are (gradien has 165): a
  third fewer elements to style and lay out and half the HTML, the same
  text and formulas, and one font file (60 KB) instead of MathJax's. The
  per-page table, with the theme's shell and the page levers after this
  one, is in ``scripts/audit_site.md``.
- **Wide equations** (``static/wide-math.js``, ``static/matematika.css``):
  each display equation is in its own box (``div.rumus``, reachable by
  keyboard); on narrow screens the number goes under the equation, the
  equation shrinks to fit (down to 60 %), and what still does not fit
  scrolls with a shadow on the edge.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import mathjax
from sphinx.errors import ExtensionError
from sphinx.ext.mathjax import html_visit_displaymath, html_visit_math
from sphinx.util import logging

from atensi import files

from . import fonts

logger = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"  # matematika.css, wide-math.js and the other stylesheets
SCRIPT = Path(__file__).with_suffix(".js")
RENDERER = "atensi"
CSS_NAME = "matematika.css"
# Latin Modern Math (GUST Font License), from Debian's fonts-lmodern or TeX Live.
FONT_SOURCES = (
    Path("/usr/share/texmf/fonts/opentype/public/lm-math/latinmodern-math.otf"),
    Path("/usr/share/texlive/texmf-dist/fonts/opentype/public/lm-math/latinmodern-math.otf"),
)
# Beside matematika.css in _static/, which names it.
FONT_DIR = "rumus"
FONT_NAME = "latinmodern-math.woff2"
LICENCE = "GUST-FONT-LICENSE.txt"
# As Sphinx's mathjax writer marks them up (HTML-escaped TeX inside).
INLINE = re.compile(r'(<span class="math notranslate nohighlight">)\\\((?P<tex>.*?)\\\)(</span>)', re.S)
DISPLAY = re.compile(
    r'(<div class="math notranslate nohighlight"[^>]*>\s*(?:<span class="eqno">.*?</span>)?)'
    r"\s*\\\[(?P<tex>.*?)\\\]\s*(</div>)",
    re.S,
)
MJX_ERROR = re.compile(r'data-mjx-error="([^"]*)"')
MATH_BLOCK = re.compile(r"<math\b.*?</math>", re.S)
# MathJax's reasons, in Indonesian (the rest are quoted as MathJax gives them).
MJX_REASONS = (
    (re.compile(r"Undefined control sequence (\S+)"), "perintah TeX {0} tidak dikenal"),
    (re.compile(r"Missing close brace"), "kurung kurawal tutup '}}' kurang"),
    (re.compile(r"Extra close brace or missing open brace"),
     "kurung kurawal tutup '}}' berlebih, atau kurung buka '{{' kurang"),
    (re.compile(r"Extra open brace or missing close brace"),
     "kurung kurawal buka '{{' berlebih, atau kurung tutup '}}' kurang"),
    (re.compile(r"Missing argument for (\S+)"), "argumen untuk {0} tidak ada"),
    (re.compile(r"Double exponent: use braces to clarify"),
     "dua pangkat berturut-turut; pakai kurung kurawal, misalnya {{x^a}}^b"),
    (re.compile(r"Double subscripts: use braces to clarify"),
     "dua subskrip berturut-turut; pakai kurung kurawal, misalnya {{x_a}}_b"),
    (re.compile(r"Unknown environment '([^']*)'"), "lingkungan '{0}' tidak dikenal"),
    (re.compile(r"Misplaced (\S+)"), "{0} di tempat yang salah"),
)

# --- MathJax's MathML, as MathML Core (what browsers draw) -------------------

TOKENS = {"mi", "mn", "mo", "ms", "mtext"}
# Named spaces (MathML 3), which MathML Core does not read.
NAMED_SPACES = {
    f"{prefix}mathspace": f"{n / 18:.4f}em"
    for n, prefix in enumerate(("veryverythin", "verythin", "thin", "medium", "thick",
                                "verythick", "veryverythick"), start=1)
}
# mathvariant: MathML Core draws only "normal" (on <mi>); the others become the
# Unicode mathematical letters, as TeX's \mathbb{R} is U+211D.
# variant -> (A, a, 0, Greek capital Alpha, Greek alpha); None: no such letters.
ALPHANUMERICS = {
    "bold": (0x1D400, 0x1D41A, 0x1D7CE, 0x1D6A8, 0x1D6C2),
    "italic": (0x1D434, 0x1D44E, None, 0x1D6E2, 0x1D6FC),
    "bold-italic": (0x1D468, 0x1D482, None, 0x1D71C, 0x1D736),
    "script": (0x1D49C, 0x1D4B6, None, None, None),
    "bold-script": (0x1D4D0, 0x1D4EA, None, None, None),
    "fraktur": (0x1D504, 0x1D51E, None, None, None),
    "bold-fraktur": (0x1D56C, 0x1D586, None, None, None),
    "double-struck": (0x1D538, 0x1D552, 0x1D7D8, None, None),
    "sans-serif": (0x1D5A0, 0x1D5BA, 0x1D7E2, None, None),
    "bold-sans-serif": (0x1D5D4, 0x1D5EE, 0x1D7EC, 0x1D756, 0x1D770),
    "sans-serif-italic": (0x1D608, 0x1D622, None, None, None),
    "sans-serif-bold-italic": (0x1D63C, 0x1D656, None, 0x1D790, 0x1D7AA),
    "monospace": (0x1D670, 0x1D68A, 0x1D7F6, None, None),
}
# The letters Unicode had before the mathematical block (its holes).
EARLIER = {
    ("italic", "h"): "\u210e",
    **{("script", c): u for c, u in zip("BEFHILMRego", "\u212c\u2130\u2131\u210b\u2110\u2112\u2133\u211b\u212f\u210a\u2134")},
    **{("fraktur", c): u for c, u in zip("CHIRZ", "\u212d\u210c\u2111\u211c\u2128")},
    **{("double-struck", c): u for c, u in zip("CHNPQRZ", "\u2102\u210d\u2115\u2119\u211a\u211d\u2124")},
}
# After Omega and omega in each Greek run: nabla; partial and the variant forms.
GREEK_CAPITAL_EXTRA = {"\u03f4": 17, "\u2207": 25}
GREEK_SMALL_EXTRA = {"\u2202": 25, "\u03f5": 26, "\u03d1": 27, "\u03f0": 28, "\u03d5": 29, "\u03f1": 30, "\u03d6": 31}
DOTLESS_ITALIC = {"\u0131": "\U0001d6a4", "\u0237": "\U0001d6a5"}


def styled(char: str, variant: str) -> str:
    """One character in a mathvariant, as its Unicode mathematical letter
    (the character itself where Unicode has none, as browsers do)."""
    if variant == "normal":
        return char
    if variant not in ALPHANUMERICS:
        raise KeyError(variant)
    if (variant, char) in EARLIER:
        return EARLIER[variant, char]
    if variant == "italic" and char in DOTLESS_ITALIC:
        return DOTLESS_ITALIC[char]
    capital, small, digit, greek_capital, greek_small = ALPHANUMERICS[variant]
    code = ord(char)
    if "A" <= char <= "Z":
        return chr(capital + code - ord("A"))
    if "a" <= char <= "z":
        return chr(small + code - ord("a"))
    if "0" <= char <= "9" and digit:
        return chr(digit + code - ord("0"))
    if greek_capital and 0x391 <= code <= 0x3A9 and code != 0x3A2:
        return chr(greek_capital + code - 0x391)
    if greek_capital and char in GREEK_CAPITAL_EXTRA:
        return chr(greek_capital + GREEK_CAPITAL_EXTRA[char])
    if greek_small and 0x3B1 <= code <= 0x3C9:
        return chr(greek_small + code - 0x3B1)
    if greek_small and char in GREEK_SMALL_EXTRA:
        return chr(greek_small + GREEK_SMALL_EXTRA[char])
    return char


def table_styles(table: ET.Element) -> None:
    """mtable's column alignment and spacing (MathML 3 attributes, which
    MathML Core does not read) on each cell, as CSS."""
    def listed(element, name, default):
        return (element.attrib.pop(name, None) or default).split()

    aligns = listed(table, "columnalign", "center")
    spaces = listed(table, "columnspacing", "0.8em")
    rows = listed(table, "rowspacing", "1.0ex")
    for name in ("rowalign", "columnlines", "rowlines", "frame", "framespacing", "equalrows", "equalcolumns"):
        table.attrib.pop(name, None)
    for i, row in enumerate(r for r in table if r.tag in ("mtr", "mlabeledtr")):
        row_aligns = listed(row, "columnalign", "") or aligns
        row.attrib.pop("rowalign", None)
        for j, cell in enumerate(row):
            align = cell.attrib.pop("columnalign", None) or row_aligns[min(j, len(row_aligns) - 1)]
            cell.attrib.pop("rowalign", None)
            top = rows[min(i - 1, len(rows) - 1)] if i else "0"
            left = spaces[min(j - 1, len(spaces) - 1)] if j else "0"
            # Chromium aligns the cell's formula by the -webkit- value only;
            # Firefox and Safari read columnalign.
            cell.set("columnalign", align)
            cell.set("style", f"text-align: -webkit-{align}; padding: {top} 0 0 {left}")


SCRIPTED = {"msub", "msup", "msubsup", "munder", "mover", "munderover"}
OPENING = set("([{\u27e8|\u2016\u230a\u2308")
TALL = {"mfrac", "munder", "mover", "munderover", "msqrt", "mroot", "mtable"}


def like_tex(root: ET.Element) -> None:
    """The spaces and brackets TeX draws where MathML Core's operator
    dictionary would draw others (MathJax's own output draws them from TeX's
    classes, which its MathML only keeps as data-mjx-texclass).

    A bracket that stretches takes, in Chromium, the width of its widest
    size variant, however tall it is drawn: ( x ) instead of (x). So only
    the brackets of \\left...\\right around something taller than a line
    stretch; \\big( and the like, and \\left( around a line of text, are
    drawn at the text size."""
    def no_space(mo):
        mo.attrib.setdefault("lspace", "0")
        mo.attrib.setdefault("rspace", "0")

    for mo in root.iter("mo"):
        if mo.text and len(mo.text) > 1 and mo.text.isalpha():
            no_space(mo)  # \max, \lim: the space comes from the function application after them
        if mo.get("minsize") and mo.get("minsize") == mo.get("maxsize"):
            del mo.attrib["minsize"], mo.attrib["maxsize"]
            mo.set("stretchy", "false")
    for row in root.iter("mrow"):
        fences = [k for k in row if k.tag == "mo" and k.get("fence") == "true"]
        if fences and not any(e.tag in TALL for e in row.iter()):
            for mo in fences:
                mo.set("stretchy", "false")

    # An operator alone in a group ({/}, \bigl( ): an ordinary symbol.
    for row in root.iter("mrow"):
        if (len(row) == 1 and row[0].tag == "mo"
                and row.get("data-mjx-texclass") in ("ORD", "OPEN", "CLOSE", "INNER")):
            no_space(row[0])
    # A function name (\log, \max) and its argument: a thin space, none before a bracket.
    for parent in root.iter():
        kids = list(parent)
        for mo, after in zip(kids, kids[1:]):
            if mo.tag != "mo" or mo.text != "\u2061":
                continue
            first = after[0] if after.tag == "mrow" and len(after) else after
            if not (first.get("data-mjx-texclass") == "OPEN" or (first.tag == "mo" and first.text in OPENING)):
                mo.set("rspace", "0.1667em")

    # A function name after a symbol (s_j \log_2 e): the thin space TeX puts
    # before it; MathML Core puts none before an <mi>.
    # (A function name is what comes before the function application U+2061.)
    for parent in root.iter():
        kids = list(parent)
        for before, name, apply in zip(kids, kids[1:], kids[2:]):
            if (apply.tag == "mo" and apply.text == "\u2061"
                    and before.tag not in ("mo", "mspace") and parent.tag not in SCRIPTED | {"mfrac"}):
                parent.insert(list(parent).index(name), ET.Element("mspace", width="0.1667em"))

    # Sub- and superscripts, limits: no space around operators, as in TeX.
    def walk(element, scripted):
        if scripted and element.tag == "mo":
            no_space(element)
        for i, child in enumerate(element):
            walk(child, scripted or (i >= 1 and element.tag in SCRIPTED))

    walk(root, False)


def to_core(mathml: str) -> str:
    """MathJax's MathML (MathML 3) as compact MathML Core for an HTML page."""
    root = ET.fromstring(mathml.replace(' xmlns="http://www.w3.org/1998/Math/MathML"', "", 1))
    like_tex(root)
    for element in root.iter():
        element.tail = None
        for name in [a for a in element.attrib if a.startswith("data-mjx-")]:
            del element.attrib[name]
        for name in ("lspace", "rspace", "width", "height", "depth", "voffset"):
            if element.get(name) in NAMED_SPACES:
                element.set(name, NAMED_SPACES[element.get(name)])
        if element.tag == "mtable":
            table_styles(element)
        variant = element.attrib.pop("mathvariant", None)
        if element.tag not in TOKENS:
            if element.text is not None and not element.text.strip():
                element.text = None
            if variant not in (None, "normal"):
                raise KeyError(variant)
            continue
        if variant is None:
            continue
        if element.tag == "mi" and variant == "normal":
            element.set("mathvariant", "normal")
        elif element.tag == "mtext" and variant in ("italic", "bold", "bold-italic"):
            # Words: the same letters, leaning or heavier (screen readers read them as words).
            element.set("style", ";".join(
                (["font-style: italic"] if "italic" in variant else [])
                + (["font-weight: bold"] if "bold" in variant else [])))
        else:
            element.text = "".join(styled(c, variant) for c in element.text or "")
    return ET.tostring(root, encoding="unicode", short_empty_elements=False)


def drawn_characters(core: str) -> set[str]:
    """Every character the browser draws for this formula: its text, the
    italic letter for each one-letter <mi> (MathML Core's automatic italic),
    and the radical sign that <msqrt> and <mroot> draw without text."""
    chars = {"\u221a"} if re.search(r"<m(sqrt|root)\b", core) else set()
    for tag, text in re.findall(r"<(m\w+)[^>]*>([^<]+)</", core):
        text = html.unescape(text)
        chars |= set(text)
        if tag == "mi" and len(text) == 1:
            chars.add(styled(text, "italic"))
    return chars


# --- Build -----------------------------------------------------------------------


def mathjax_source() -> Path:
    source = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
    if not (source / "startup.js").is_file():
        raise FileNotFoundError(
            f"MathJax tidak ditemukan di {source}. Pasang ulang: "
            "pip install -r requirements.txt"
        )
    return source


def font_source() -> Path:
    # ATENSI_MATH_FONT: a font elsewhere, the same variable scripts/paket_sistem.sh reads.
    given = os.environ.get("ATENSI_MATH_FONT")
    for path in (Path(given),) if given else FONT_SOURCES:
        if path.is_file():
            return path
    raise ExtensionError(
        "Font rumus Latin Modern Math tidak ditemukan (dicari di "
        + ", ".join(str(p) for p in ((Path(given),) if given else FONT_SOURCES))
        + "). Pasang: sudo apt-get install fonts-lmodern (make book memasangnya sendiri), lalu bangun ulang."
    )


def node() -> str:
    path = shutil.which("node")
    if path is None:
        raise ExtensionError(
            "Node.js tidak ditemukan: rumus buku dirender saat build oleh MathJax di Node.js. "
            "Pasang Node.js 18 atau lebih baru (sudo apt-get install nodejs; make book memasangnya sendiri), "
            "lalu bangun ulang."
        )
    return path


def register_renderer(app):
    # Sphinx's mathjax markup (\(...\) in a span, \[...\] in a div), without
    # its script: the formulas are typeset before any reader opens a page.
    app.add_html_math_renderer(RENDERER, (html_visit_math, None), (html_visit_displaymath, None))


def use_renderer(app, config):
    config.html_math_renderer = RENDERER


def start(app):
    if app.builder.format != "html":
        return
    node()  # before hours of reading, not at the end
    font_source()
    # Not a path in _config.yml: Jupyter Book would add its .js to every page a second time.
    app.config.html_static_path.append(str(STATIC))
    app.add_css_file(CSS_NAME)


def typeset(items: list[tuple[str, bool]]) -> list[str]:
    job = {"mathjax": str(mathjax_source()), "items": items}
    proc = subprocess.run(
        [node(), str(SCRIPT)], input=json.dumps(job), capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise ExtensionError(f"MathJax (Node.js) gagal merender rumus buku: {proc.stderr.strip()}")
    return json.loads(proc.stdout)["mathml"]


def write_font(outdir: Path, chars: set[str]) -> None:
    """Latin Modern Math cut down to the characters the formulas draw (with
    the larger and stretched forms its MATH table gives them), as woff2."""
    source = font_source()
    target = outdir / "_static" / FONT_DIR
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    fonts.cut_font(source, target / FONT_NAME, {ord(c) for c in chars})
    licence = source.parents[4] / "doc" / "fonts" / "lm-math" / LICENCE
    if licence.is_file():
        shutil.copy2(licence, target / LICENCE)
    else:  # a TeX Live without its documentation
        files.write_text(target / LICENCE,
                         "Latin Modern Math (c) GUST e-foundry, under the GUST Font License:\n"
                         "http://www.gust.org.pl/projects/e-foundry/licenses\n")


def earlier_formulas(seen: Path) -> list | None:
    """The formulas of earlier builds (``[tex, display]`` pairs), [] before
    the first build, None when the file is torn or not such a list."""
    try:
        data = json.loads(seen.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError):
        data = None
    if not (isinstance(data, list) and all(
            isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
            and isinstance(item[1], bool) for item in data)):
        logger.info(f"[atensi_book] {seen} rusak (build sebelumnya terhenti?); daftar rumus "
                    "disusun ulang dari halaman.")
        return None
    return data


def in_indonesian(reason: str) -> str:
    """MathJax's reason for refusing a formula, in Indonesian where known."""
    for pattern, text in MJX_REASONS:
        found = pattern.search(reason)
        if found:
            return text.format(*found.groups())
    return f"MathJax: {reason}"


def source_line(app, page: str, tex: str) -> str:
    """Where a formula of the written page ``page`` (``chapters/a.html``) is
    in its source: ``chapters/a.md, baris 12`` (the first line that holds
    the TeX), or the source alone when the TeX is not written there as is."""
    docname = page.removesuffix(".html")
    try:
        source = Path(app.env.doc2path(docname))
        text = source.read_text(encoding="utf-8")
    except (AttributeError, KeyError, OSError, UnicodeDecodeError):
        return page
    root = Path(app.srcdir)
    shown = source.relative_to(root).as_posix() if source.is_relative_to(root) else str(source)
    at = text.find(tex)
    if at < 0:
        return shown
    return f"{shown}, baris {text.count(chr(10), 0, at) + 1}"


def typeset_pages(app, pages: dict[Path, str]):
    """Typeset every formula of ``pages`` (path -> HTML) at once; returns the
    page rewrite (HTML -> HTML) for the one pass over the written pages."""
    if app.builder.format != "html":
        return None
    outdir = Path(app.outdir)
    items: dict[tuple[str, bool], int] = {}
    where: dict[tuple[str, bool], str] = {}
    for page, text in pages.items():
        for pattern, display in ((INLINE, False), (DISPLAY, True)):
            for match in pattern.finditer(text):
                key = (html.unescape(match.group("tex")).strip(), display)
                items.setdefault(key, len(items))
                where.setdefault(key, page.relative_to(outdir).as_posix())
    # Pages an incremental build did not rewrite keep their typeset formulas;
    # the font must still cover them, so every formula seen is typeset.
    seen = Path(app.doctreedir) / "rumus-buku.json"
    earlier = earlier_formulas(seen)
    for tex, display in earlier or []:
        items.setdefault((tex, display), len(items))
    rendered = typeset(list(items))
    failed = [
        f"{source_line(app, where[key], key[0])}: {key[0]}  ({in_indonesian(html.unescape(error[1]))})"
        for key, i in items.items()
        if key in where and (error := MJX_ERROR.search(rendered[i]))
    ]
    if failed:
        raise ExtensionError(
            "Rumus yang tidak bisa dibaca MathJax:\n  " + "\n  ".join(failed)
            + "\nPerbaiki TeX-nya di berkas dan baris itu (makro yang tidak dikenal, kurung kurawal yang tidak seimbang)."
        )
    core, unknown = [], []
    for key, i in items.items():
        try:
            core.append(to_core(rendered[i]))
        except KeyError as variant:
            core.append("")
            unknown.append(f"{where.get(key, '?')}: {key[0]}  (mathvariant {variant})")
    if unknown:
        raise ExtensionError(
            "Rumus dengan gaya huruf yang tidak bisa digambar peramban:\n  " + "\n  ".join(unknown)
        )
    chars = set().union(*map(drawn_characters, core)) if core else set()
    if earlier is None:
        # The list is lost: the formulas already typeset in the pages this
        # build did not rewrite name the characters the font must keep.
        for text in pages.values():
            for block in MATH_BLOCK.findall(text):
                chars |= drawn_characters(block)
    write_font(outdir, chars)
    files.write_text(seen, json.dumps(list(items), ensure_ascii=False))
    logger.info(f"[atensi_book] {len(items)} rumus dirender saat build.")

    def replace(display):
        def fix(match):
            markup = core[items[html.unescape(match.group("tex")).strip(), display]]
            if display:
                # A wide equation scrolls sideways on a phone (static/wide-math.js);
                # a keyboard reaches a scrolling box only if it can take focus.
                markup = f'<div class="rumus" tabindex="0">{markup}</div>'
            return f"{match.group(1)}{markup}{match.group(3)}"

        return fix

    def rewrite(text: str, page: Path) -> str:
        return DISPLAY.sub(replace(True), INLINE.sub(replace(False), text))

    return rewrite
