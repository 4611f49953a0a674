"""Facts on the rendered pages that go stale when the book changes shape:
chapter numbers, the size of the running example, and which chapter holds
which fused-kernel version.

Each check is a function over one page's HTML (or plain text) that returns a
list of problems, so it can be tried on a planted sentence without a build;
the ``book`` tests run it over every page of the built book.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from bs4 import BeautifulSoup

from atensi import example, reference
from conftest import ROOT, toc_pages

PAGES = toc_pages()
BLOCKS = ("p", "li", "td", "th", "dt", "dd", "figcaption", "caption")

# The chapter that shows each fused-kernel version's code, and one section of
# that code (the comment markers in the .cu file) that proves it still does.
HOLDERS = {
    "v1": ("fused_kernel", "attention_fused.cu", "potongan 3"),
    "v2": ("flash_v2", "attention_fused.cu", "v2 skor"),
    "v3": ("tensor_core", "attention_tensorcore.cu", "v3 pecah"),
}


# --- Numbering from _toc.yml --------------------------------------------------


def chapter_numbers(toc_path: Path = ROOT / "_toc.yml") -> dict[str, int]:
    """Page stem -> chapter number, as Sphinx numbers them: numbered parts
    count on from each other (use_multitoc_numbering); others have none."""
    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    numbers, n = {}, 0
    for part in toc.get("parts", []):
        if not part.get("numbered"):
            continue
        for chapter in part["chapters"]:
            n += 1
            numbers[chapter["file"].split("/")[-1]] = n
    return numbers


# --- Reading a page -----------------------------------------------------------


def _article(html: str):
    soup = BeautifulSoup(html, "html.parser")
    article = soup.select_one("article.bd-article") or soup.select_one("article") or soup
    # Formulas: their MathML text as one run of text in its sentence.
    for formula in article.find_all("math"):
        formula.replace_with(formula.get_text(""))
    for code in article.select("div.highlight, pre"):
        code.decompose()
    return article


def _target(href: str) -> str | None:
    """Page stem an internal link points at ('softmax.html#x' -> 'softmax')."""
    if not href or "://" in href or href.startswith("#"):
        return None
    return href.split("#")[0].split("/")[-1].removesuffix(".html") or None


def _blocks(article):
    """Innermost text blocks, each as (text, [(offset, page, link text)])."""
    for block in article.find_all(BLOCKS):
        if block.find(BLOCKS):
            continue
        text, links = "", []
        for node in block.descendants:
            if isinstance(node, str):
                if not any(parent.name == "a" for parent in _parents_within(node, block)):
                    text += node
            elif node.name == "a":
                page = _target(node.get("href", ""))
                label = node.get_text("")
                if page is not None:
                    links.append((len(text), page, label))
                text += label
        yield text, links


def _parents_within(node, block):
    parent = node.parent
    while parent is not None and parent is not block:
        yield parent
        parent = parent.parent


def _sentences(text: str):
    """(start, end) of each sentence; a decimal comma or '1.024' does not end one."""
    start = 0
    for match in re.finditer(r"[.!?](?=\s+[A-Z*\"“(]|\s*$)", text):
        yield start, match.end()
        start = match.end()
    if start < len(text):
        yield start, len(text)


# --- Check 1: chapter numbers -------------------------------------------------


def chapter_number_problems(html: str, numbers: dict[str, int]) -> list[str]:
    """Every "Bab N" (or a bare "N, " in a table cell) that sits on a link to a
    numbered chapter must be that chapter's number; no "bab N" beyond the last."""
    problems = []
    last = max(numbers.values())
    for text, links in _blocks(_article(html)):
        for offset, page, label in links:
            if page not in numbers:
                continue
            before = text[:offset]
            stated = re.match(r"\s*(?:[Bb]ab\s+)?(\d+)\b", label)
            if stated is None:
                stated = re.search(r"\b[Bb]ab\s+(\d+)\s*[,:]?\s*$", before)
            if stated is None and re.fullmatch(r"\s*(\d+)\s*,\s*", before):
                stated = re.fullmatch(r"\s*(\d+)\s*,\s*", before)
            if stated is not None and int(stated.group(1)) != numbers[page]:
                problems.append(
                    f"'{(before[-30:] + label).strip()}' menyebut bab {stated.group(1)}, "
                    f"padahal {page} adalah bab {numbers[page]}")
        for match in re.finditer(r"\b[Bb]ab\s+(\d+)(?:\s+sampai\s+(\d+))?", text):
            for n in filter(None, match.groups()):
                if not 1 <= int(n) <= last:
                    problems.append(f"'{match.group(0)}': buku hanya punya bab 1 sampai {last}")
    return problems


# --- Check 2: the size of the running example ---------------------------------

EXAMPLE_CUE = re.compile(r"contoh berjalan|Ani memanggil Budi", re.IGNORECASE)
# A size of something else in the same sentence: a block, a tile, a warp.
OTHER_SHAPE = re.compile(r"(block|ubin|warp|grid|tile|MMA|fragmen)\W*\s*$", re.IGNORECASE)
SIZE = re.compile(r"(?<![\d×])(\d+)\s*[×x]\s*(\d+)(?!\s*[×x]\s*\d)")


def example_size_problems(text: str, T: int = example.T, d_k: int = example.d_k) -> list[str]:
    """In a sentence about the running example, every "a × b" must be
    T × d_k or T × T (the shapes of Q, K, V and of S, A)."""
    problems = []
    for start, end in _sentences(text):
        sentence = text[start:end]
        if not EXAMPLE_CUE.search(sentence):
            continue
        for size in SIZE.finditer(sentence):
            if OTHER_SHAPE.search(sentence[max(0, size.start() - 25):size.start()]):
                continue
            a, b = int(size.group(1)), int(size.group(2))
            if a != T or b not in (T, d_k):
                problems.append(
                    f"'{sentence.strip()[:120]}': contoh berjalan berukuran {T} × {d_k} "
                    f"(Q, K, V) atau {T} × {T} (S, A), bukan {a} × {b}")
    return problems


def example_size_problems_html(html: str, T: int = example.T, d_k: int = example.d_k) -> list[str]:
    return [p for text, _ in _blocks(_article(html)) for p in example_size_problems(text, T, d_k)]


# --- Check 3: v1, v2, v3 referenced to the chapter that holds them -------------


def version_reference_problems(html: str, holders: dict[str, str]) -> list[str]:
    """A link to a chapter that holds a fused-kernel version, placed right
    after a mention of another version ("susunan v2 dari <v1's chapter>"),
    points the reader to the wrong chapter."""
    problems = []
    pages = {page: version for version, page in holders.items()}
    for text, links in _blocks(_article(html)):
        # Link texts are titles ("Dari v1 ke v2: ..."), not mentions.
        plain = text
        for offset, _, label in links:
            plain = plain[:offset] + " " * len(label) + plain[offset + len(label):]
        for offset, page, label in links:
            if page not in pages:
                continue
            sentence_start = max((s for s, e in _sentences(text) if s <= offset), default=0)
            window = plain[max(sentence_start, offset - 60):offset]
            mentioned = re.findall(r"\b(v[1-9])\b", window)
            if mentioned and mentioned[-1] in holders and holders[mentioned[-1]] != page:
                problems.append(
                    f"'{(window + label).strip()}': {mentioned[-1]} ada di "
                    f"{holders[mentioned[-1]]}, bukan di {page}")
    return problems


def marker_section(cu_text: str, marker: str) -> str:
    """The code between '// ---- MARKER' and '// ---- akhir MARKER' lines."""
    lines = cu_text.splitlines()
    begin = next(i for i, line in enumerate(lines) if line.strip().startswith(f"// ---- {marker}"))
    end = next(i for i, line in enumerate(lines) if line.strip().startswith(f"// ---- akhir {marker}"))
    return "\n".join(lines[begin + 1:end])


def _squash(text: str) -> str:
    return "".join(text.split())


# --- Without a build: the checks catch planted stale facts --------------------

NUMBERS = chapter_numbers()
VERSION_HOME = {version: page for version, (page, _, _) in HOLDERS.items()}


def page_html(body: str) -> str:
    return f'<html lang="id"><body><article class="bd-article">{body}</article></body></html>'


def test_toc_numbering_counts_on_across_numbered_parts(tmp_path):
    toc = tmp_path / "_toc.yml"
    toc.write_text(
        "root: chapters/depan\nparts:\n"
        "  - caption: A\n    numbered: true\n    chapters:\n      - file: chapters/a\n"
        "  - caption: B\n    numbered: true\n    chapters:\n      - file: chapters/b\n"
        "      - file: chapters/c\n"
        "  - caption: Lampiran\n    chapters:\n      - file: chapters/z\n", encoding="utf-8")
    assert chapter_numbers(toc) == {"a": 1, "b": 2, "c": 3}
    assert sorted(NUMBERS.values()) == list(range(1, len(NUMBERS) + 1))
    assert "pendahuluan" not in NUMBERS and "glosarium" not in NUMBERS


def test_a_stale_chapter_number_is_caught():
    softmax = NUMBERS["softmax"]
    stale = page_html(
        f'<table><tr><td><p>{softmax - 1}, <a class="reference internal" href="softmax.html#softmax">'
        f'Softmax</a></p></td></tr></table>'
        f'<ul><li><p><strong>Bab {softmax - 1}</strong>, <a class="reference internal" '
        f'href="softmax.html#softmax">Softmax</a></p></li>'
        f'<li><p>Bab 2 sampai {max(NUMBERS.values()) + 1}</p></li></ul>')
    assert len(chapter_number_problems(stale, NUMBERS)) == 3
    fresh = page_html(
        f'<p><a class="reference internal" href="softmax.html#softmax">'
        f'<span class="std std-numref">{softmax}, Softmax</span></a> dan '
        f'<a class="reference internal" href="softmax.html#softmax">Bab {softmax}</a></p>')
    assert chapter_number_problems(fresh, NUMBERS) == []


def test_a_stale_running_example_size_is_caught(tmp_path):
    page = tmp_path / "softmax.html"
    page.write_text(page_html(
        "<p>Pada contoh berjalan, hasilnya adalah matriks bobot atensi A berukuran 4 × 4. "
        "Kita cetak.</p>"), encoding="utf-8")
    problems = example_size_problems_html(page.read_text(encoding="utf-8"))
    assert len(problems) == 1 and "bukan 4 × 4" in problems[0]
    T, d_k = example.T, example.d_k
    assert example_size_problems(f"Contoh berjalan berukuran {T} × {d_k}; model sungguhan besar.") == []
    assert example_size_problems(f"Pada contoh berjalan, A berukuran {T} × {T}.") == []
    # Sizes of other things in a sentence about the example are not its size.
    assert example_size_problems(f"Contoh berjalan (T = {T}) dengan *block* 4 × 4.") == []


def test_a_version_referenced_to_the_wrong_chapter_is_caught():
    wrong = page_html(
        '<p>Kernel v3 memakai susunan v2 dari <a class="reference internal" '
        'href="fused_kernel.html#fused-kernel">Fused Kernel</a>: satu block.</p>')
    assert len(version_reference_problems(wrong, VERSION_HOME)) == 1
    right = page_html(
        '<p>Kernel v3 memakai susunan v2 dari <a class="reference internal" '
        'href="flash_v2.html#flash-v2">Dari v1 ke v2</a>. Fused kernel v1 ada di '
        '<a class="reference internal" href="fused_kernel.html#fused-kernel">Fused Kernel</a>.</p>')
    assert version_reference_problems(right, VERSION_HOME) == []


def kernel_listings(source: str) -> list[tuple[str, str]]:
    """(kernel file, first marker) of every literalinclude of kernels/ in a chapter's MyST."""
    found = []
    for match in re.finditer(r"^`{3,}\{literalinclude\} \.\./kernels/(\S+)\n((?::.*\n)*)", source, re.M):
        options = dict(re.findall(r"^:([\w-]+):\s*(.*)$", match.group(2), re.M))
        start = options.get("start-after", options.get("start-at", "")).strip().strip('"')
        found.append((match.group(1), start))
    return found


def test_kernel_listings_reads_the_file_and_its_start_marker():
    source = ('```{literalinclude} ../kernels/a.cu\n:language: cuda\n'
              ':start-after: "// ---- v2 skor: ubin"\n:end-before: "// ---- akhir"\n```\n')
    assert kernel_listings(source) == [("a.cu", "// ---- v2 skor: ubin")]


def test_each_version_home_is_a_page_of_the_book():
    stems = [page.split("/")[-1] for page in PAGES]
    for version, (page, cu, marker) in HOLDERS.items():
        assert page in stems, version
        listings = kernel_listings((ROOT / "chapters" / f"{page}.md").read_text(encoding="utf-8"))
        assert any(file == cu and start.startswith(f"// ---- {marker}") for file, start in listings), (
            f"{page}.md tidak lagi memuat {version} ({cu}: {marker})")


# --- On the built book ---------------------------------------------------------


def soup_text(built_book, page) -> str:
    path = built_book / f"{page}.html"
    assert path.is_file(), f"{page}.html tidak dibangun"
    return path.read_text(encoding="utf-8")


@pytest.mark.book
@pytest.mark.parametrize("page", PAGES)
def test_chapter_numbers_agree_with_the_toc(built_book, page):
    assert chapter_number_problems(soup_text(built_book, page), NUMBERS) == []


@pytest.mark.book
@pytest.mark.parametrize("page", PAGES)
def test_running_example_sizes_agree_with_atensi_example(built_book, page):
    assert example_size_problems_html(soup_text(built_book, page)) == []


@pytest.mark.book
@pytest.mark.parametrize("page", PAGES)
def test_versions_are_referenced_to_the_chapters_that_hold_them(built_book, page):
    assert version_reference_problems(soup_text(built_book, page), VERSION_HOME) == []


@pytest.mark.book
def test_each_version_home_shows_that_versions_code(built_book):
    for version, (page, cu, marker) in HOLDERS.items():
        code = marker_section((ROOT / "kernels" / cu).read_text(encoding="utf-8"), marker)
        soup = BeautifulSoup(soup_text(built_book, f"chapters/{page}"), "html.parser")
        shown = _squash(" ".join(pre.get_text("") for pre in soup.select("article pre")))
        assert _squash(code) in shown, f"{page} tidak lagi menampilkan kode {version} ({cu}: {marker})"


# --- Fidelity labels on performance figures -----------------------------------

# A performance figure (a number or a glued number followed by one of these
# units) must say what it is, in the same paragraph or list item: measured on a
# GPU (card, date), counted from the kernel's run in the emulator, a model, or
# a datasheet peak.
FIDELITY_LABELS = ("diukur di", "dihitung dari jalannya kernel di emulator", "model", "lembar data")
_PERF_NUMBER = r"(?:\d[\d.,]*|\{glue:text\}`[^`]+`)"
_PERF_UNIT = (r"(?:TFLOP/s|GFLOP/s|TB/s|GB/s|µs|ms\b|milidetik|% puncak|persen puncak|kali puncak"
              r"|FLOP per bita|FLOP/bita|kali lebih cepat|kali lebih lambat)")
_PERF_FIGURE = re.compile(_PERF_NUMBER + r"\s*" + _PERF_UNIT)
PERFORMANCE_CHAPTERS = ("kinerja", "flash_v2", "tensor_core")


def _prose_units(md: str) -> list[str]:
    """Paragraphs and list items of a MyST page, without code cells or listings."""
    units: list[str] = []
    current: list[str] = []

    def flush():
        if current:
            units.append(" ".join(current))
            current.clear()

    in_code = False
    for line in md.splitlines():
        text = line.strip()
        if in_code:
            in_code = text != "```"
            continue
        if text.startswith("```") and not text.startswith("````"):
            flush()
            in_code = True
        elif text.startswith("````") or not text:
            flush()
        else:
            if text.startswith("- "):
                flush()
            current.append(text)
    flush()
    return units


def unlabelled_performance_figures(md: str) -> list[str]:
    """Units of prose holding a performance figure but no fidelity label."""
    problems = []
    for unit in _prose_units(md):
        if _PERF_FIGURE.search(unit) and not any(label in unit.replace("*", "").lower()
                                                 for label in FIDELITY_LABELS):
            problems.append(unit[:160])
    return problems


def test_a_performance_figure_without_a_label_is_caught():
    planted = ("Teks biasa.\n\nv2 mencapai 35 TFLOP/s di H200.\n\n"
               "- v3 paling cepat {glue:text}`x` % puncak FP32.\n"
               "- v1 (model) paling cepat 25 % puncak FP32.\n\n"
               "```{code-cell} ipython3\nprint('67 TFLOP/s')\n```\n\n"
               "Batas ini model: 52 % puncak FP32.\n\n"
               "Angka yang dihitung dari jalannya *kernel* di emulator: 1,0 µs.\n")
    problems = unlabelled_performance_figures(planted)
    assert problems == ["v2 mencapai 35 TFLOP/s di H200.", "- v3 paling cepat {glue:text}`x` % puncak FP32."]


@pytest.mark.parametrize("chapter", PERFORMANCE_CHAPTERS)
def test_every_performance_figure_in_the_performance_chapters_has_a_label(chapter):
    md = (ROOT / "chapters" / f"{chapter}.md").read_text(encoding="utf-8")
    assert unlabelled_performance_figures(md) == []


# --- Checks on the chapter sources: claims that contradict the book's own ----
# --- measurements, its glossary definitions, or its own section count --------
#
# These read the .md sources (no build needed): the prose around a glued
# number is typed there, and that typed prose is what goes stale.

CHAPTERS = ROOT / "chapters"
NUMBER_WORDS = {"dua": 2, "tiga": 3, "empat": 4, "lima": 5, "enam": 6, "tujuh": 7}


def _prose(md: str) -> str:
    """The chapter's prose: code cells, fenced blocks and front matter dropped,
    emphasis and line breaks flattened."""
    md = re.sub(r"\A---\n.*?\n---\n", "", md, flags=re.S)
    md = re.sub(r"^(`{3,})[^\n]*\n.*?^\1\s*$", "", md, flags=re.S | re.M)
    md = re.sub(r"[*_]", "", md)
    return " ".join(md.split())


def _section(md: str, title: str) -> str:
    """The text of the '## title' section, up to the next '## ' heading."""
    match = re.search(rf"^## {re.escape(title)}\s*$(.*?)(?=^## |\Z)", md, re.S | re.M)
    return match.group(1) if match else ""


def _opening(md: str) -> str:
    """The paragraphs between the chapter title and its first code cell or section."""
    match = re.search(r"^# .*?$(.*?)(?=^```|^## )", md, re.S | re.M)
    return match.group(1) if match else ""


# A claim the chapter's own measurement refutes, unless the sentence carries
# the qualifier under which it is true. Posisi measures that one causal layer
# cannot see order but two stacked layers recover it (and a model without
# positions still resolves "dia"), so "the mask leaks the count, not the
# order" is true only "for one layer".
SUMMARY_RULES = {
    "posisi": [
        (re.compile(r"mask kausal|lapisan kausal", re.I),
         re.compile(r"bukan urutan|tidak cukup", re.I),
         re.compile(r"satu lapisan", re.I),
         "dua lapisan kausal memulihkan urutan (diukur di bab ini)"),
    ],
}


def summary_problems(md: str, rules) -> list[str]:
    """Sentences of the Ringkasan and of the opening that make a claim the
    chapter's measurement refutes, without the qualifier that makes it true."""
    problems = []
    for part in (_section(md, "Ringkasan"), _opening(md)):
        text = _prose(part)
        for start, end in _sentences(text):
            sentence = text[start:end]
            for topic, claim, qualifier, measured in rules:
                if topic.search(sentence) and claim.search(sentence) and not qualifier.search(sentence):
                    problems.append(f"'{sentence.strip()[:120]}' bertentangan dengan hasil bab: {measured}")
    return problems


def two_causal_layers_change_after_a_swap() -> tuple[float, float]:
    """The measurement behind the Posisi rule: the largest change of the last
    rows when the first and third token swap, after one and two stacked causal
    layers without positions (random weights)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((5, 8))
    layers = [rng.standard_normal((3, 8, 8)) / np.sqrt(8) for _ in range(2)]

    def run(X):
        out = []
        for Wq, Wk, Wv in layers:
            X = X + reference.attention(X @ Wq, X @ Wk, X @ Wv)
            out.append(X)
        return out

    plain, swapped = run(X), run(X[[2, 1, 0, 3, 4]])
    return tuple(float(np.abs(s[3:] - p[3:]).max()) for p, s in zip(plain, swapped))


def glossary_entries(md: str) -> dict[str, str]:
    """Glossary term (first line of each entry, lower case) -> its definition
    text. An entry is one or more unindented term lines, then indented lines."""
    entries, terms, body = {}, [], []
    for line in md.split("(referensi)=", 1)[0].splitlines():
        if line.startswith("  ") and terms:
            body.append(line.strip())
            continue
        if body:
            entries[terms[0].lower()] = " ".join(body)
            terms, body = [], []
        if line.strip() and not line.startswith(("#", "(", "```", ":", "-", "|")):
            terms.append(line.strip())
        else:
            terms = []
    if terms and body:
        entries[terms[0].lower()] = " ".join(body)
    return entries


# A glossary entry must not state more than the chapter it points to: an
# absolute claim, unless the qualifier the chapter gives is there too.
def _registry_has_tensor_core_kernels() -> bool:
    from atensi.kernels import registry
    return any(k.precision for k in registry.KERNELS)


GLOSSARY_RULES = {
    "emulasi cpu": [
        (re.compile(r"sama dengan di GPU", re.I), re.compile(r"pembulatan", re.I),
         lambda: "sampai pembulatan float32" in " ".join(
             (CHAPTERS / "menjalankan.md").read_text(encoding="utf-8").split()),
         "Menjalankan: hasilnya sama hanya sampai pembulatan float32"),
    ],
    "float32": [
        (re.compile(r"semua \*?kernel", re.I), re.compile(r"TF32"),
         _registry_has_tensor_core_kernels,
         "fused v3 mengalikan dengan masukan TF32 (registri)"),
    ],
    "tensor core": [
        (re.compile(r"per instruksi|satu instruksi", re.I), re.compile(r"(?!)"),
         lambda: True,
         "satu panggilan mma_sync dijalankan sebagai beberapa instruksi HMMA"),
    ],
}


def glossary_problems(md: str, rules) -> list[str]:
    entries = glossary_entries(md)
    problems = []
    for term, checks in rules.items():
        if term not in entries:
            problems.append(f"glosarium: entri '{term}' tidak ada")
            continue
        text = entries[term]
        for claim, qualifier, chapter_says_so, why in checks:
            if chapter_says_so() and claim.search(text) and not qualifier.search(text):
                problems.append(f"glosarium '{term}': '{claim.search(text).group(0)}' "
                                f"bertentangan dengan babnya: {why}")
    return problems


# The chapter that presents the ways of giving position, and the pages whose
# sentences count them ("tiga cara memberi posisi", "empat caranya").
FAMILY_CHAPTER, FAMILY_SECTION = "posisi", "Keluarga cara memberi posisi"
FAMILY_COUNTERS = ("posisi", "pendahuluan")


def family_count(md: str, section: str = FAMILY_SECTION) -> int:
    """The number of '### ' subsections of the section that presents the ways."""
    return len(re.findall(r"^### ", _section(md, section), re.M))


def way_count_problems(md: str, n_ways: int) -> list[str]:
    """Every "<number> cara(nya)" in a sentence about position must be n_ways."""
    problems = []
    text = _prose(md)
    for start, end in _sentences(text):
        sentence = text[start:end]
        if "posisi" not in sentence.lower():
            continue
        for match in re.finditer(r"\b(\w+)\s+cara(?:nya)?\b", sentence, re.I):
            stated = NUMBER_WORDS.get(match.group(1).lower())
            if stated is not None and stated != n_ways:
                problems.append(f"'{match.group(0)}' di '{sentence.strip()[:100]}': "
                                f"bab {FAMILY_CHAPTER} menyajikan {n_ways} cara")
    return problems


def _chapter(name: str) -> str:
    return (CHAPTERS / f"{name}.md").read_text(encoding="utf-8")


def test_posisi_measurement_behind_its_summary_rule_still_holds():
    one, two = two_causal_layers_change_after_a_swap()
    assert one < 1e-12 and two > 0.1


def test_posisi_summary_and_opening_agree_with_its_measurement():
    assert summary_problems(_chapter("posisi"), SUMMARY_RULES["posisi"]) == []


def test_a_summary_that_contradicts_the_measurement_is_caught():
    planted = ("# Posisi\n\nTeks pembuka.\n\n## Ringkasan\n\n"
               "- Mask kausal membocorkan **banyaknya** *token* yang terlihat, bukan urutannya: "
               "menukar *Ani* dan *Budi* tidak mengubah keluaran.\n")
    assert len(summary_problems(planted, SUMMARY_RULES["posisi"])) == 1
    opening = "# Posisi\n\nMask kausal membocorkan sedikit posisi, tetapi tidak cukup.\n\n## Lain\n"
    assert len(summary_problems(opening, SUMMARY_RULES["posisi"])) == 1
    qualified = planted.replace("Mask kausal", "Satu lapisan kausal")
    assert summary_problems(qualified, SUMMARY_RULES["posisi"]) == []


def test_glossary_entries_agree_with_their_chapters():
    assert glossary_problems(_chapter("glosarium"), GLOSSARY_RULES) == []


def test_a_glossary_entry_that_overstates_its_chapter_is_caught():
    planted = (
        "emulasi CPU\nCPU emulation\n  Modul `atensi.cudacpu`. Hasilnya\n"
        "  sama dengan di GPU, hanya jauh lebih lambat. Bab: {ref}`menjalankan`.\n\n"
        "float32\nsingle precision\n  Bilangan 32 bit, yang dipakai mesin FP32\n"
        "  ANDREA dan semua *kernel* buku ini.\n\n"
        "tensor core\n  Unit yang mengerjakan satu perkalian\n"
        "  matriks kecil per instruksi untuk satu warp.\n")
    problems = glossary_problems(planted, GLOSSARY_RULES)
    assert len(problems) == 3, problems
    assert glossary_entries(planted)["float32"].startswith("Bilangan 32 bit")


def test_counts_of_ways_agree_with_the_sections_that_present_them():
    n_ways = family_count(_chapter(FAMILY_CHAPTER))
    assert n_ways >= 4  # learned, sinusoidal, RoPE, ALiBi
    for name in FAMILY_COUNTERS:
        assert way_count_problems(_chapter(name), n_ways) == [], name


def test_a_count_of_ways_that_disagrees_with_the_sections_is_caught():
    chapter = ("## Keluarga cara memberi posisi\n\n### Satu\n\n### Dua\n\n### Tiga\n\n"
               "### Empat\n\n## NumPy\n\n### Bukan cara\n")
    assert family_count(chapter) == 4
    planted = "Lalu kita membahas tiga cara memberi posisi: a, b, dan c."
    assert len(way_count_problems(planted, 4)) == 1
    # A count of something other than position is not this check's business.
    assert way_count_problems("Setiap langkah dengan tiga cara yang saling memeriksa.", 4) == []
