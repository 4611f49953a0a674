"""Content of the chapters: their structure, checked in the sources, and the
facts they teach, checked by code and in the built book.

The tests check structure, never wording, so prose can be rewritten freely:
label and title, the order of the sections, exercises with dropdown answers,
every glued number computed by the chapter, the kernels shown and run, and
the facts of the source lesson present on the rendered pages.

Source checks read ``chapters/*.md`` and run in a fraction of a second.
Checks on executed chapters reuse the session's one execution
(``chapter_runs.run_chapter``); checks on rendered pages use the
``built_book`` fixture (tests/conftest.py). Both are marked ``book``.
"""

from __future__ import annotations

import ast
import builtins
import json
import re
from functools import lru_cache

import jupytext
import pytest
from bs4 import BeautifulSoup

from chapter_runs import run_chapter
from conftest import ROOT, toc_pages
from exercise_answers import answers

CHAPTERS = ROOT / "chapters"
PAGES = [page.removeprefix("chapters/") for page in toc_pages()]
APPENDICES = ("menjalankan", "glosarium")
# The numbered chapters end with Ringkasan, then Latihan.
NUMBERED = [name for name in PAGES if name not in APPENDICES and name != "pendahuluan"]
# One step of the attention head each, in the order DESIGN.md gives a chapter.
STEP_CHAPTERS = ("matriks_skor", "skala_akar_dk", "mask_kausal", "softmax", "jumlah_v", "posisi")
# The kernel each chapter shows (literalinclude) and runs.
KERNEL_FILES = {
    "matriks_skor": "scores.cu",
    "skala_akar_dk": "scores.cu",
    "mask_kausal": "causal_mask.cu",
    "posisi": "rope.cu",
    "softmax": "softmax.cu",
    "jumlah_v": "weighted_sum.cu",
    "fused_kernel": "attention_fused.cu",
    "gradien": "attention_backward.cu",
    "flash_v2": "attention_fused.cu",
    "kinerja": "attention_fused.cu",
    "tensor_core": "attention_tensorcore.cu",
}
# Every page's label, "(label)=" right above its title.
ALL_LABELS = sorted(
    label for path in CHAPTERS.glob("*.md")
    for label in re.findall(r"^\((\S+)\)=\n# ", path.read_text(encoding="utf-8"), re.M)
)
# The reference functions a chapter must import, never define again.
LIBRARY_NAMES = ("scores", "causal_mask", "softmax", "weighted_sum", "attention",
                 "attention_blocked")

_FENCE = re.compile(r"^(`{3,}|:{3,})\s*(\S*)")
_CODE_DIRECTIVES = ("{code-cell}", "{code-block}", "{code}", "{literalinclude}", "{glossary}")


@lru_cache(maxsize=None)
def chapter_text(name: str) -> str:
    return (CHAPTERS / f"{name}.md").read_text(encoding="utf-8")


@lru_cache(maxsize=None)
def notebook(name: str):
    return jupytext.read(CHAPTERS / f"{name}.md")


def code_sources(name: str) -> list[str]:
    return [c.source for c in notebook(name).cells if c.cell_type == "code"]


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of the prose: outside code fences, inside directives."""
    found, open_fences = [], []  # (fence, holds code)
    for n, line in enumerate(text.splitlines()):
        stripped = line.strip()
        if open_fences and stripped == open_fences[-1][0]:
            open_fences.pop()
            continue
        fence = _FENCE.match(stripped)
        if fence and not (open_fences and open_fences[-1][1]):
            info = fence.group(2)
            open_fences.append((fence.group(1), not info.startswith("{") or info in _CODE_DIRECTIVES))
            continue
        if not (open_fences and open_fences[-1][1]):
            found.append((n, line))
    return found


def headings(name: str, level: int) -> list[tuple[int, str]]:
    """(line number, heading text) of every heading of that level, in order."""
    marker = "#" * level + " "
    return [(n, line[len(marker):].strip()) for n, line in prose_lines(chapter_text(name))
            if line.startswith(marker)]


def first_line(name: str, pattern: str, start: int = 0) -> int | None:
    for n, line in enumerate(chapter_text(name).splitlines()):
        if n >= start and re.search(pattern, line):
            return n
    return None


def exercises(name: str) -> dict[str, str]:
    """Exercise label -> the exercise's text (the question, not the answer)."""
    found = {}
    for match in re.finditer(r"^(`{3,}|:{3,})\{exercise\}\n:label: (\S+)\n(.*?)(?:^\1$|\Z)",
                             chapter_text(name), re.S | re.M):
        found[match.group(2)] = match.group(3)
    return found


def solutions(name: str) -> dict[str, tuple[list[str], str]]:
    """Solution target -> (its options' lines, its text); the last may end the file."""
    found = {}
    for match in re.finditer(r"^(`{3,}|:{3,})\{solution\} (\S+)\n((?::[^\n]*\n)*)(.*?)(?:^\1$|\Z)",
                             chapter_text(name), re.S | re.M):
        found[match.group(2)] = (match.group(3).splitlines(), match.group(4))
    return found


def equation_labels(name: str) -> set[str]:
    """Labels of the chapter's numbered display equations: ``$$ (label)``."""
    return {label for _, line in prose_lines(chapter_text(name))
            for label in re.findall(r"^\$\$\s*\((\S+)\)\s*$", line.strip())}


def cross_refs_in(text: str, role: str) -> set[str]:
    """Targets of every ``{role}`target``` (or ``{role}`text <target>```) in ``text``."""
    found = set()
    for _, line in prose_lines(text):
        for shown, target in re.findall(rf"\{{{re.escape(role)}\}}`([^`<]*?)(?:\s*<([^>`]+)>)?`", line):
            found.add((target or shown).strip())
    return found


def cross_refs(name: str, role: str) -> set[str]:
    """Targets of every ``{role}`` reference in the chapter's prose."""
    return cross_refs_in(chapter_text(name), role)


def listed_functions(name: str) -> set[tuple[str, str]]:
    """(module, function) of every Python listing: literalinclude's :pyobject: or
    inspect.getsource(module.function) in a code cell."""
    shown = set()
    for match in re.finditer(r"^`{3,}\{literalinclude\} \.\./src/atensi/(\S+)\.py\n((?::.*\n)*)",
                             chapter_text(name), re.M):
        options = dict(re.findall(r"^:(\S+):\s*(.*)$", match.group(2), re.M))
        if "pyobject" in options:
            shown.add((match.group(1).replace("/", "."), options["pyobject"].strip()))
    for source in code_sources(name):
        for node in ast.walk(_python(source)):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "getsource" and node.args
                    and isinstance(node.args[0], ast.Attribute)
                    and isinstance(node.args[0].value, ast.Name)):
                shown.add((node.args[0].value.id, node.args[0].attr))
    return shown


def glue_patterns(name: str) -> list[re.Pattern]:
    """The names the chapter's code glues; an f-string's fields match anything."""
    code = "\n".join(code_sources(name))
    patterns = []
    for is_f, literal in re.findall(r"glue\(\s*(f?)\"([^\"]+)\"", code):
        if is_f:
            parts = re.split(r"\{[^}]*\}", literal)
            patterns.append(re.compile(".+".join(re.escape(p) for p in parts)))
        else:
            patterns.append(re.compile(re.escape(literal)))
    return patterns


def glued_in_prose(name: str) -> set[str]:
    return set(re.findall(r"\{glue(?::text)?\}`([^`]+)`", chapter_text(name)))


def cited(text: str) -> set[tuple[str, str]]:
    """(author, year) of every "Author dkk. (2017)" / "Author dan Other (2017)" citation."""
    flat = " ".join(text.split())
    found = {(a, y) for a, y in re.findall(r"([A-Z][a-zA-Z]+) dkk\.,? \(?(\d{4})", flat)}
    found |= {(a, y) for a, y in re.findall(r"([A-Z][a-zA-Z]+) dan [A-Z][a-zA-Z]+ \(?(\d{4})", flat)}
    return found


def toc_part_of(page: str) -> str:
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    for part in toc["parts"]:
        if any(chapter["file"] == f"chapters/{page}" for chapter in part["chapters"]):
            return part["caption"]
    return ""


def _rng(seed=0):
    import numpy as np

    return np.random.default_rng(seed)


# --- Structure of every page ----------------------------------------------------


@pytest.mark.parametrize("name", PAGES)
def test_front_matter_label_and_one_title_without_math(name):
    text = chapter_text(name)
    assert text.startswith("---\n"), f"{name}: front matter tidak ada"
    titles = headings(name, 1)
    assert len(titles) == 1, f"{name}: harus tepat satu judul '# ', ada {titles}"
    line, title = titles[0]
    lines = text.splitlines()
    assert re.fullmatch(r"\([a-z0-9-]+\)=", lines[line - 1]), f"{name}: (label)= tidak tepat di atas judul"
    assert title and "$" not in title and "\\" not in title, f"{name}: judul kosong atau bermatematika"


def test_every_label_is_unique():
    labels = [chapter_text(n).splitlines()[headings(n, 1)[0][0] - 1] for n in PAGES]
    assert len(labels) == len(set(labels)), labels


@pytest.mark.parametrize("name", [n for n in PAGES if n != "glosarium"])
def test_latihan_closes_the_page_after_ringkasan(name):
    sections = [title for _, title in headings(name, 2)]
    assert sections and sections[-1] == "Latihan", f"{name}: bagian terakhir bukan Latihan: {sections[-3:]}"
    if name in NUMBERED or name == "pendahuluan":
        assert sections[-2] == "Ringkasan", f"{name}: Ringkasan tidak tepat sebelum Latihan"
    assert len(sections) >= 4, f"{name}: terlalu sedikit bagian: {sections}"


@pytest.mark.parametrize("name", [n for n in PAGES if n != "glosarium"])
def test_exercises_have_dropdown_solutions_after_latihan(name):
    found, answered = exercises(name), solutions(name)
    assert len(found) >= (3 if name in NUMBERED else 2), f"{name}: hanya {len(found)} latihan"
    assert sorted(found) == sorted(answered), f"{name}: latihan tanpa jawaban, atau jawaban tanpa latihan"
    for label, (options, _) in answered.items():
        assert ":class: dropdown" in options, f"{name}: jawaban {label} tidak tersembunyi (dropdown)"
    latihan = next(n for n, title in headings(name, 2) if title == "Latihan")
    first = first_line(name, r"\{exercise\}")
    assert first is not None and first > latihan, f"{name}: latihan sebelum bagian Latihan"


@pytest.mark.parametrize("name", PAGES)
def test_every_exercise_and_solution_closes_its_fences(name):
    """An unclosed ```` swallows the rest of the page into the dropdown."""
    lines = [line.strip() for line in chapter_text(name).splitlines()]
    opener = re.compile(r"^(`{3,}|:{3,})\{(?:exercise|solution)\}")
    starts = [n for n, line in enumerate(lines) if opener.match(line)]
    for start, end in zip(starts, starts[1:] + [len(lines)]):
        fence = opener.match(lines[start]).group(1)
        body = lines[start + 1:end]
        assert fence in body, f"{name}.md baris {start + 1}: {lines[start]} tanpa {fence} penutup"
        inner = [line for line in body[:body.index(fence)] if re.match(r"^`{3,}", line)]
        assert len(inner) % 2 == 0, f"{name}.md baris {start + 1}: blok kode di dalamnya tidak ditutup"


@pytest.mark.parametrize("name", STEP_CHAPTERS + ("sintesis", "flash_v2", "kinerja"))
def test_a_numerical_exercise_is_answered_by_a_hidden_cell(name):
    assert any(cross_refs_in(text, "glue:text") for _, text in solutions(name).values()), (
        f"{name}: tidak ada latihan numerik yang jawabannya dihitung kode"
    )


@pytest.mark.parametrize("name", NUMBERED + ["pendahuluan"])
def test_a_coding_exercise_checks_itself(name):
    runnable = answers(CHAPTERS / f"{name}.md")
    assert any(re.search(r"^\s*assert ", a.code, re.M) for a in runnable), (
        f"{name}: tidak ada tugas kode dengan assert"
    )


@pytest.mark.parametrize("name", STEP_CHAPTERS + ("cuda_10_menit", "pendahuluan"))
def test_a_predict_then_run_exercise_states_what_its_code_prints(name):
    # Predict, then run: the answer quotes the output, which the execution test compares.
    assert any(a.expected for a in answers(CHAPTERS / f"{name}.md")), (
        f"{name}: tidak ada jawaban yang menyebut keluaran kodenya (# Keluaran:)"
    )


@pytest.mark.parametrize("name", PAGES)
def test_every_glued_name_is_computed_in_the_chapter(name):
    used = glued_in_prose(name)
    patterns = glue_patterns(name)
    missing = {u for u in used if not any(p.fullmatch(u) for p in patterns)}
    assert not missing, f"{name}: angka di prosa tanpa sel yang menghitungnya: {missing}"
    if name in NUMBERED or name == "pendahuluan":
        assert used, f"{name}: tidak ada angka dari sel yang dijalankan"


@pytest.mark.parametrize("name", PAGES)
def test_glue_calls_sit_in_hidden_cells(name):
    for cell in notebook(name).cells:
        tags = set(cell.metadata.get("tags", []))
        if cell.cell_type == "code" and "glue(" in cell.source and "atensi-setup" not in tags:
            assert tags & {"remove-cell", "remove-input"}, (
                f"{name}: glue() di sel yang terlihat pembaca: {cell.source.splitlines()[0]}"
            )


@pytest.mark.parametrize("name", PAGES)
def test_glue_is_imported_only_where_the_reader_does_not_see_it(name):
    # glue is the book's plumbing, not part of the lesson: a reader who copies
    # the visible cells never meets it.
    for cell in notebook(name).cells:
        tags = set(cell.metadata.get("tags", []))
        if cell.cell_type != "code" or tags & {"remove-cell", "remove-input"}:
            continue
        imported = {alias.asname or alias.name for node in ast.walk(_python(cell.source))
                    if isinstance(node, ast.ImportFrom) for alias in node.names}
        assert "glue" not in imported, f"{name}: glue diimpor di sel yang terlihat: {cell.source.splitlines()[0]}"


HIDDEN_TAGS = {"remove-cell", "remove-input"}


def _python(source: str) -> ast.Module:
    # IPython magics and shell lines are not Python; they define nothing.
    return ast.parse("\n".join("" if line.lstrip().startswith(("%", "!")) else line
                               for line in source.splitlines()))


def bound_names(tree: ast.AST) -> set[str]:
    """Every name a cell binds anywhere: assignments, loop and with targets,
    arguments, functions, classes, imports, except clauses."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


def names_only_hidden_cells_define(cells) -> list[tuple[str, set[str]]]:
    """(first line, names) for each visible cell that reads a name defined
    neither by the setup cell, an earlier visible cell, itself, nor Python."""
    known = set(dir(builtins)) | {"display", "get_ipython"}
    found = []
    for cell in cells:
        if cell.cell_type != "code":
            continue
        tags = set(cell.metadata.get("tags", []))
        tree = _python(cell.source)
        if "atensi-setup" in tags:
            known |= bound_names(tree)
            continue
        if tags & HIDDEN_TAGS:
            continue
        read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        missing = read - bound_names(tree) - known
        if missing:
            found.append((cell.source.strip().splitlines()[0], missing))
        known |= bound_names(tree)
    return found


def test_a_name_from_a_hidden_cell_in_visible_code_is_caught():
    cells = jupytext.reads(
        "```{code-cell} ipython3\n:tags: [remove-cell, atensi-setup]\nimport numpy as np\n```\n\n"
        "```{code-cell} ipython3\n:tags: [remove-cell]\ns = 0.5\n```\n\n"
        "```{code-cell} ipython3\nx = np.ones(2)\nfor i in range(2):\n    print(i * x)\n```\n\n"
        "```{code-cell} ipython3\nprint(s * x)\n```\n",
        fmt="myst").cells
    assert names_only_hidden_cells_define(cells) == [("print(s * x)", {"s"})]


@pytest.mark.parametrize("name", PAGES)
def test_visible_code_runs_without_the_hidden_cells(name):
    # A reader copies the setup cell and the visible cells into a fresh
    # notebook: each visible cell must find every name it reads there.
    found = names_only_hidden_cells_define(notebook(name).cells)
    assert not found, f"{name}: sel terlihat memakai nama dari sel tersembunyi: {found}"


@pytest.mark.parametrize("name", STEP_CHAPTERS + ("sintesis",))
def test_comparisons_glued_into_prose_are_asserted(name):
    # A number the prose compares ("di bawah", "lebih besar") is checked where it is computed.
    hidden = [c.source for c in notebook(name).cells
              if c.cell_type == "code" and "remove-cell" in c.metadata.get("tags", [])]
    assert any("glue(" in s for s in hidden)
    assert sum("assert " in s for s in hidden) >= 2, f"{name}: sel tersembunyi tanpa assert"


def test_equation_references_resolve():
    defined = set()
    for name in PAGES:
        defined |= set(re.findall(r"^\$\$ \((eq-[\w-]+)\)$", chapter_text(name), re.M))
    for name in PAGES:
        used = set(re.findall(r"\{eq\}`(eq-[\w-]+)`", chapter_text(name)))
        assert used <= defined, f"{name}: persamaan tidak dikenal {used - defined}"


@pytest.mark.parametrize("name", sorted(KERNEL_FILES))
def test_kernel_is_shown_with_markers_that_exist(name):
    text = chapter_text(name)
    cu_file = KERNEL_FILES[name]
    blocks = re.findall(rf"```\{{literalinclude\}} \.\./kernels/{re.escape(cu_file)}\n((?::.*\n)*)", text)
    assert blocks, f"{name}: kernels/{cu_file} tidak ditampilkan"
    for other in re.findall(r"\{literalinclude\} \.\./kernels/(\S+)", text):
        assert (ROOT / "kernels" / other).is_file(), f"{name}: kernels/{other} tidak ada"
    source = (ROOT / "kernels" / cu_file).read_text(encoding="utf-8")
    for options in blocks:
        markers = re.findall(r":(?:start-at|end-before|start-after|end-at): \"(.*)\"", options)
        # Excerpts are highlighted; a whole file may be plain text (page weight).
        assert ":language: cuda" in options or (not markers and ":language: text" in options)
        for marker in markers:
            marker = marker.replace('\\"', '"')
            assert marker in source, f"{name}: penanda {marker!r} tidak ada di kernels/{cu_file}"


@pytest.mark.parametrize("name", STEP_CHAPTERS)
def test_step_chapter_sections_come_in_the_design_order(name):
    """Why, math, NumPy, the loop a thread runs, the kernel shown then run, a
    picture, Ringkasan, Latihan."""
    sections = headings(name, 2)
    why = sections[0]
    assert why[1].startswith("Mengapa"), f"{name}: bagian pertama bukan 'Mengapa ...': {why[1]}"
    math = first_line(name, r"^\$\$ \(eq-[\w-]+\)$")
    numpy = first_line(name, r"\breference\.\w+\(")
    loop = first_line(name, r"\bloops\.\w+")
    shown = first_line(name, r"\{literalinclude\} \.\./kernels/")
    run = first_line(name, r"\bkernels\.\w+\(", start=shown or 0)
    picture = first_line(name, r"\b\w*(plots|widgets|explorer)\.\w+\(")
    ringkasan = next(n for n, title in sections if title == "Ringkasan")
    order = {"mengapa": why[0], "matematika": math, "numpy": numpy, "perulangan": loop,
             "kernel": shown, "kernel dijalankan": run, "ringkasan": ringkasan}
    assert None not in order.values(), f"{name}: bagian hilang: {order}"
    assert why[0] < math < loop and numpy < loop < shown < run < ringkasan, f"{name}: urutan: {order}"
    assert picture is not None and picture < ringkasan, f"{name}: tidak ada gambar sebelum Ringkasan"


@pytest.mark.parametrize("name", sorted(set(STEP_CHAPTERS) | {"sintesis", "flash_v2", "kinerja"}))
def test_chapters_import_the_library_and_never_redefine_it(name):
    code = "\n".join(code_sources(name))
    assert "from atensi import" in code
    for fn in LIBRARY_NAMES:
        assert not re.search(rf"^\s*def {fn}\(", code, re.M), f"{name} mendefinisikan ulang {fn}"
    # Kernels run through atensi.kernels, with the backend and the largest
    # difference from NumPy printed.
    assert "kernels." in code and "resolve_backend(None)" in code
    assert "selisih terbesar" in code
    # Random inputs are seeded with the generator, never the global state.
    assert "np.random.seed" not in code
    if "np.random." in code:
        assert "default_rng(" in code


@pytest.mark.parametrize("name", STEP_CHAPTERS)
def test_step_chapters_use_the_library_figures_and_the_running_example(name):
    code = "\n".join(code_sources(name))
    assert "loops." in code
    assert re.search(r"\b\w*plots\.\w+\(", code), f"{name}: tidak ada gambar dari pustaka"
    if name != "posisi":
        assert "example.qkv()" in code, f"{name}: contoh berjalan tidak dipakai"


def test_toc_parts_place_the_on_ramp_first_and_the_advanced_part_after():
    pages = PAGES
    assert pages.index("cuda_10_menit") < pages.index("matriks_skor")
    # The five steps stay continuous; positions come after the weighted sum of V.
    assert pages.index("posisi") == pages.index("jumlah_v") + 1
    for name in ("flash_v2", "kinerja", "tensor_core"):
        assert toc_part_of(name) == "Lanjutan"
    for name in STEP_CHAPTERS + ("sintesis",):
        assert toc_part_of(name) != "Lanjutan", f"{name} bukan bagian pilihan"


# --- What particular chapters must contain ---------------------------------------


def flat_lower(name: str) -> str:
    return " ".join(chapter_text(name).split()).lower()


def solution_text(name: str, label: str) -> str:
    assert label in solutions(name), f"{name}: latihan {label} tidak ada"
    return solutions(name)[label][1]


def cuda_constructs(cu_file: str) -> set[str]:
    source = (ROOT / "kernels" / cu_file).read_text(encoding="utf-8")
    source = re.sub(r"/\*.*?\*/|//[^\n]*", "", source, flags=re.S)  # code only, not comments
    found = set(re.findall(r"\b(__\w+?__|__\w+_sync|__syncthreads|__syncwarp|"
                           r"blockIdx|blockDim|threadIdx|gridDim)\b", source))
    if 'extern "C"' in source:
        found.add('extern "C"')
    return found


def test_cuda_on_ramp_covers_what_the_first_kernel_uses():
    """"CUDA dalam 10 Menit" comes before the first kernel and teaches what it uses."""
    text = chapter_text("cuda_10_menit")
    code = "\n".join(code_sources("cuda_10_menit"))
    assert PAGES.index("cuda_10_menit") < PAGES.index("matriks_skor")
    # A construct is met in the on-ramp, or explained where the kernel is shown.
    shown_in = chapter_text("matriks_skor") + chapter_text("bank_memori")
    needed = cuda_constructs(KERNEL_FILES["matriks_skor"])
    assert {"__global__", 'extern "C"', "blockIdx", "threadIdx", "__syncthreads"} <= needed
    missing = sorted(c for c in needed if c not in text and c not in shown_in)
    assert not missing, f"{missing} dipakai kernel pertama tetapi belum dibahas"
    # The on-ramp's own syllabus: global index, bounds check, 64-bit offsets,
    # heads on the z axis, warps, shared memory and the barrier.
    for pattern in (r"blockIdx\.x \* blockDim\.x \+ threadIdx\.x", r"if \([^)]*>=[^)]*\) return;",
                    r"\(size_t\)", r"gridDim\.z", r"__shfl_\w+_sync", r"__syncwarp\(\)",
                    r"__syncthreads\(\)", r"__shared__"):
        assert re.search(pattern, text), f"cuda_10_menit tidak membahas {pattern}"
    # Warps as they are since Volta (independent thread scheduling).
    assert "volta" in flat_lower("cuda_10_menit")
    assert "cuda_plots.thread_grid(" in code and "cudacpu.RawModule(" in code
    # A short readable launcher (file, grid, block, np.int32 arguments), run against the library.
    assert re.search(r"^def \w+\(", code, re.M) and "kernels.kernel_path(" in code
    assert "ravel_multi_index" in code
    assert "cuda_plots.tiling(" in "\n".join(code_sources("bank_memori"))
    assert "bank conflict" in flat_lower("bank_memori")


@pytest.mark.parametrize("name", ["skala_akar_dk", "mask_kausal", "posisi", "jumlah_v"])
def test_explorer_is_in_its_chapter(name):
    code = "\n".join(code_sources(name))
    assert re.search(r"\b\w+\.explorer\(", code), f"{name}: penjelajah tidak ada"


def test_posisi_shows_the_four_families_and_rope_as_a_step():
    code = "\n".join(code_sources("posisi"))
    # Why: without positions attention is permutation equivariant; what the mask leaks.
    assert "causal=False" in code and "reference.causal_mask(" in code
    # The families, each computed with the library, and the papers cited. Posisi
    # comes before Melatih, so it loads no trained model: its learned table is a
    # random one, and the trained table is drawn where the model is trained.
    assert "TinyGPT.load(" not in code and "P_acak" in code
    assert 'bobot.params["wpe"]' in "\n".join(code_sources("melatih"))
    assert "reference.sinusoidal_positions(" in code
    assert "reference.rope(" in code and "offset=" in code
    assert {("Vaswani", "2017"), ("Su", "2021"), ("Press", "2022")} <= cited(chapter_text("posisi"))
    assert "alibi" in flat_lower("posisi")
    # RoPE as a step: NumPy source, the thread loop, the kernel run and the explorer.
    assert {("reference", "rope_formula"), ("loops", "rope")} <= listed_functions("posisi")
    for used in ("kernels.rope(", "rope.explorer()", "position_plots."):
        assert used in code, used


def test_matriks_skor_derives_q_k_v_from_token_vectors_before_using_them():
    text = chapter_text("matriks_skor")
    code = "\n".join(code_sources("matriks_skor"))
    assert "X @ example.W_Q" in code and "example_plots.projection(" in code
    assert re.search(r"^Q\[i\]\[c\] = dot\(X\[i\]", text, re.M)  # the kernel view
    assert text.index("example_plots.projection(") < text.index("example_plots.vectors(")


@pytest.mark.parametrize("name, step", [("matriks_skor", "skor"), ("skala_akar_dk", "skala"),
                                        ("mask_kausal", "mask"), ("softmax", "softmax"),
                                        ("jumlah_v", "jumlah")])
def test_step_chapters_open_with_the_pipeline_and_their_step_highlighted(name, step):
    text = chapter_text(name)
    shown = re.search(r"\.pipeline\(\w+\.pipeline_rows\(\), highlight=\"(\w+)\"", text)
    assert shown and shown.group(1) == step, f"{name}: gambar pipeline tidak menyorot '{step}'"
    assert shown.start() < text.index("\n## "), f"{name}: gambar pipeline tidak di awal bab"


def test_melatih_opens_the_model_where_it_is_trained():
    # The block and the training step are the library's own code, not a copy.
    assert {("model", "TinyGPT.block"), ("training_loop", "fit")} <= listed_functions("melatih")
    text = chapter_text("melatih")
    assert re.search(r":pyobject: fit\n:start-at: \"for step in range", text)
    assert "{term}`dropout`" in text
    # The PyTorch comparison is optional: its import is guarded, so a missing
    # PyTorch cannot fail the build, and it asks for the causal form.
    code = "\n".join(code_sources("melatih"))
    guarded = re.search(r"try:\n\s+import torch\b.*?\nexcept Exception:", code, re.S)
    assert guarded and "is_causal=True" in code
    assert "scaled_dot_product_attention(" in code


@pytest.mark.parametrize("name", ["posisi", "mask_kausal"])
def test_a_bug_hunt_shows_code_in_the_question(name):
    questions = exercises(name).values()
    assert any(re.search(r"^`{3,}", q, re.M) for q in questions), (
        f"{name}: tidak ada latihan mencari bug (kode di soal)"
    )


def test_skala_measures_the_gradient_and_cites_the_alternatives():
    code = "\n".join(code_sources("skala_akar_dk"))
    text = chapter_text("skala_akar_dk")
    # The paper's hypothesis (saturation) is measured: dL/dQ with and without √d_k.
    assert "plots.score_grid(" in code and "reference.attention_backward(" in code
    assert {"gradien", "melatih"} <= cross_refs("skala_akar_dk", "ref")
    assert {("Vaswani", "2017"), ("Raffel", "2020"), ("Yang", "2022")} <= cited(text)
    # An exercise asks what √d_model instead of √d_k would do, answered by code.
    assert re.search(r"glue\([^\n]*768", code), "tidak ada latihan √d_model"
    # The "divide by d_k" answer builds its own seeded d_k = 64 data.
    answer = solution_text("skala_akar_dk", "ex-skala-dk")
    assert "default_rng(" in answer and "64" in answer


def test_mask_chapter_applies_every_kind_of_mask_and_checks_the_reader_kernel():
    code = "\n".join(code_sources("mask_kausal"))
    text = chapter_text("mask_kausal")
    assert "masked=True" in code
    for builder in ("masks.causal(", "masks.padding(", "masks.sliding_window(",
                    "masks.prefix_lm(", "masks.apply("):
        assert builder in code, f"mask_kausal: {builder} tidak dipakai"
    # -1e9 is the lesson's generic pseudocode, never attributed to the engine.
    for line in text.splitlines():
        assert not ("1e9" in line and "microgpt" in line), line
    answer = solution_text("mask_kausal", "ex-mask-kernel")
    # The reader's kernel runs in the sanitizer child process: a bug gives a report.
    assert "cudacpu.run_in_subprocess(" in answer and 'sanitize="address"' in answer
    assert "\nassert " in answer and "reference.causal_mask(" in answer


def test_softmax_checks_its_properties_overflow_and_both_kernels():
    text = chapter_text("softmax")
    code = "\n".join(code_sources("softmax"))
    # The three properties, computed on a real (T, T) matrix and glued.
    assert {"sm_galat_jumlah", "sm_pelanggaran"} <= glued_in_prose("softmax")
    # Overflow of the naive formula, and the fix.
    assert "np.isnan" in code
    assert "eq-softmax-geser" in cross_refs("softmax", "eq")
    assert "eq-softmax-stabil" in equation_labels("softmax")
    # Both kernel versions, run; the concepts they use are in the glossary's words.
    assert '"v1"' in code and '"v2"' in code
    assert "__syncthreads()" in text and "__shfl_xor_sync" in text
    for term in ("shared memory", "warp shuffle", "bfloat16", "volta"):
        assert term in flat_lower("softmax"), term
    assert "cuda-10-menit" in cross_refs("softmax", "ref")
    # √d_k as a temperature, drawn.
    assert "eq-softmax-suhu" in equation_labels("softmax") and "plots.softmax_temperature" in code
    assert "plots.softmax_bars(" in code
    # Mixed precision and bfloat16 are cited.
    assert {("Micikevicius", "2018"), ("Kalamkar", "2019")} <= cited(text)


def test_jumlah_v_splits_and_joins_the_heads_and_points_to_what_follows():
    code = "\n".join(code_sources("jumlah_v"))
    assert {"eq-jumlah-v-baris", "eq-jumlah-v-matriks"} <= equation_labels("jumlah_v")
    assert "W_O" in code and "np.concatenate" in code  # the heads, concatenated and checked
    assert "plots.weighted_sum_rows(" in code
    # What surrounds attention in a block, as the seed lesson names it.
    for topic in ("multi-*head*", "residual", "layer norm", "mlp"):
        assert topic in flat_lower("jumlah_v"), f"jumlah_v: topik berikutnya '{topic}' tidak ada"
    # Coding tasks: split and join heads, and a causal weighted sum.
    tasks = [a.code for a in answers(CHAPTERS / "jumlah_v.md")]
    assert sum(bool(re.search(r"^def \w+\(", t, re.M)) for t in tasks) >= 2


def test_sintesis_compares_every_path_and_measures_memory():
    code = "\n".join(code_sources("sintesis"))
    assert {"eq-sintesis-satu-baris", "eq-sintesis-online"} <= equation_labels("sintesis")
    for call in ("reference.attention(", "reference.attention_blocked(", "loops.attention(",
                 "kernels.attention(", "kernels.softmax(", "kernels.weighted_sum("):
        assert call in code, f"sintesis: {call} tidak dipakai"
    assert re.search(r"assert selisih\w* < 1e-5", code)
    assert "tracemalloc" in code and "plots.memory_growth" in code
    # The student track ends with fused v1: FlashAttention-2 and performance
    # live in the optional part, which the chapter points to.
    assert "compile_report" not in code and "measure.run(" not in code
    assert {"flash-v2", "kinerja"} <= cross_refs("sintesis", "ref")
    # The readout is computed with the book's vocabulary assumption, and compared.
    cost = "\n".join(code_sources("fused_kernel"))
    assert re.search(r"flop_readout = .*kosakata_andrea", cost)
    assert re.search(r"assert \d+ < readout_kali < \d+", cost)
    # The five-line exercise rejects a softmax that skips the max subtraction:
    # its self-check runs on scores in the hundreds.
    answer = solution_text("sintesis", "latihan-sintesis-lima-baris")
    assert re.search(r"\b\d{3,} \* Q\w*", answer) and "\nassert " in answer


def test_flash_v2_explains_seven_ideas_and_runs_both_versions():
    code = "\n".join(code_sources("flash_v2"))
    assert "eq-flash-v2-ubin" in equation_labels("flash_v2")
    assert "eq-sintesis-online" in cross_refs("flash_v2", "eq")
    numbered = [int(m) for _, title in headings("flash_v2", 3) for m in re.findall(r"^\D*(\d+)\b", title)]
    assert numbered[:7] == list(range(1, 8)), f"flash_v2: tujuh gagasan bernomor tidak ada: {numbered}"
    assert "kernels.fused_splits(" in code and "plots.work_map(" in code
    # Both fused versions run on the same inputs and are compared with NumPy.
    assert re.search(r"for \w+ in \(\"fused-v1\", \"fused-v2\"\):\n\s+\w+ = kernels\.attention\(", code)


def test_kinerja_covers_roofline_tensor_cores_tf32_io_and_the_measured_table():
    text = chapter_text("kinerja")
    code = "\n".join(code_sources("kinerja"))
    assert {"eq-kinerja-roofline", "eq-kinerja-io"} <= equation_labels("kinerja")
    assert "kernels.compile_report(" in code and "plots.roofline(" in code
    # Datasheet peaks (dense) read from the hardware table, and ridge points computed, not typed.
    assert "hardware.H200.tf32_flops" in code and "hardware.H200.bf16_flops" in code
    assert "H200.fp32_flops" in code and "hardware.A100.tf32_flops" in code
    assert "p / H200.bandwidth" in code
    assert "3xtf32" in flat_lower("kinerja") and "allow_tf32" in text
    # The TF32/3xTF32 accuracy has one home, Tensor Core; Kinerja links to it.
    assert "tensor-core-teliti" in cross_refs("kinerja", "ref") and "to_tf32" not in code
    assert "to_tf32" in "\n".join(code_sources("tensor_core"))
    assert "sram_bita = hardware.H200.arch.shared_per_sm" in code
    assert 'measure.run("book", device="cpu")' in code and "report.load_results()" in code
    assert "python -m atensi.bench --quick" in text and "results/bench_gpu.json" in code
    assert "tabel-lebar" in code
    # With or without NVRTC, the compile-report prose is whole sentences, never a dash.
    report_cell = next(c for c in code_sources("kinerja") if "kin_laporan_kalimat" in c)
    assert "–" not in report_cell and "NVRTC" in report_cell


# A GPU figure typed as a number (peaks like 989e12, shared memory like 228 * 1024);
# "/ 1e12" only converts to TFLOP/s.
_TYPED_GPU_FACT = re.compile(r"\b(?!1e12\b)\d+(?:\.\d+)?e12\b|\b(?:96|99|100|163|164|227|228) \* 1024\b")


@pytest.mark.parametrize("name", ["kinerja", "tensor_core"])
def test_performance_chapters_read_gpu_facts_from_the_hardware_table(name):
    code = "\n".join(code_sources(name))
    assert "from atensi import" in code and "hardware.H200." in code
    typed = sorted(set(m.group(0) for m in _TYPED_GPU_FACT.finditer(code)))
    assert typed == [], f"{name}: angka GPU diketik, bukan dibaca dari atensi.hardware: {typed}"


# --- Claims the chapters make, checked on the library -----------------------------


def test_scores_per_head_and_memory_of_12_heads():
    import numpy as np

    from atensi import reference
    from atensi.formatting import id_bytes, id_int

    rng = _rng()
    Q, K = rng.standard_normal((2, 12, 1024, 64), dtype=np.float32)
    S = reference.scores(Q, K)
    assert S.shape == (12, 1024, 1024) and S.dtype == np.float32
    assert id_int(S[0].size) == "1.048.576"
    assert id_bytes(S[0].nbytes) == "4 MiB" and id_bytes(S.nbytes) == "48 MiB"
    # scores[i, j] is the dot product of query i with key j, scaled.
    assert np.isclose(S[3, 10, 700], Q[3, 10] @ K[3, 700] / 8, rtol=1e-5, atol=1e-5)


# --- √d_k: spread, sharpness, vanishing gradient ----------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("d_k, root", [(64, 8), (256, 16), (4096, 64)])
def test_dot_product_spread_is_sqrt_d_k(d_k, root):
    import numpy as np

    from atensi import measures

    spread = measures.dot_product_spread(d_k, n=4000, seed=0)
    assert abs(spread / root - 1) < 0.05
    assert abs(measures.dot_product_spread(d_k, n=4000, seed=0, scale=True) - 1) < 0.05
    # Unit vectors shrink instead: 1/√d_k (the correction the chapter makes).
    u, v = _rng(1).standard_normal((2, 4000, d_k))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    assert abs(np.std(np.sum(u * v, axis=1)) * root - 1) < 0.05


def _sharpness(d_k, scale, rows=200, keys=64):
    import numpy as np

    from atensi import measures, reference

    rng = _rng(d_k)
    Q = rng.standard_normal((rows, d_k), dtype=np.float32)
    K = rng.standard_normal((keys, d_k), dtype=np.float32)
    A = reference.softmax(reference.scores(Q, K, scale=scale))
    return A.max(axis=1).mean(), measures.entropy(A).mean(), measures.jacobian_norm(A).mean()


def test_softmax_sharpens_and_gradient_vanishes_without_scaling():
    dims = (16, 256, 4096)
    raw = [_sharpness(d, False) for d in dims]
    scaled = [_sharpness(d, True) for d in dims]
    p_raw, h_raw, j_raw = zip(*raw)
    p_scaled, h_scaled, j_scaled = zip(*scaled)
    assert p_raw[0] < p_raw[1] < p_raw[2] and p_raw[2] > 0.9
    assert h_raw[0] > h_raw[1] > h_raw[2] and h_raw[2] < 0.2
    assert j_raw[0] > j_raw[1] > j_raw[2]
    # With scaling nothing depends on d_k.
    assert max(p_scaled) - min(p_scaled) < 0.03 and max(h_scaled) - min(h_scaled) < 0.1
    assert max(j_scaled) / min(j_scaled) < 1.1
    assert j_scaled[2] > 3 * j_raw[2]


def test_gradient_to_q_saturates_without_scaling():
    """Without √d_k most rows get almost no gradient at large d_k; with it, none."""
    import numpy as np

    from atensi import reference

    rng = _rng(3)
    stats = {}
    for d_k in (16, 4096):
        Q, K, V, dO = rng.standard_normal((4, 2, 64, d_k), dtype=np.float32)
        dO /= np.float32(np.sqrt(d_k))
        for scale in (False, True):
            dQ = reference.attention_backward(Q, K, V, dO, causal=False, scale=scale)[0]
            norms = np.linalg.norm(dQ, axis=-1)
            stats[d_k, scale] = (np.median(norms), (norms < 0.01).mean())
    assert stats[16, False][0] > stats[16, True][0]           # small d_k: larger, not smaller
    assert stats[4096, False][0] < 0.01 and stats[4096, False][1] > 0.5
    assert stats[4096, True][1] == 0
    assert 0.5 < stats[4096, True][0] / stats[16, True][0] < 2


def test_scaling_by_eight_is_exact_for_d_k_64():
    import numpy as np

    from atensi import loops, reference

    Q, K = _rng().standard_normal((2, 32, 64), dtype=np.float32)
    assert np.array_equal(reference.scores(Q, K, scale=False) / np.float32(8), reference.scores(Q, K))
    small = loops.scores(Q[:4], K[:4], scale=False) / loops.scores(Q[:4], K[:4])
    assert np.all(small == 8.0)


# --- Mask Kausal: the claims, checked by code --------------------------------------


def _leak(attention, causal, T=8, d_model=16, d_k=8):
    """max |Δ output[i]| when token j is replaced, as a (T, T) table D[i, j]."""
    import numpy as np

    rng = _rng()
    X = rng.standard_normal((T, d_model), dtype=np.float32)
    W = rng.standard_normal((3, d_model, d_k), dtype=np.float32) / 4
    other = rng.standard_normal((T, d_model), dtype=np.float32)

    def out(X):
        return np.asarray(attention(*(np.ascontiguousarray(X @ w) for w in W), causal=causal))

    base = out(X)
    D = np.zeros((T, T))
    for j in range(T):
        Xj = X.copy()
        Xj[j] = other[j]
        D[:, j] = np.abs(out(Xj) - base).max(axis=1)
    return D


@pytest.mark.parametrize("path", ["reference", "loops", "kernels"])
def test_leak_future_tokens_change_output_only_without_mask(path):
    import numpy as np

    from atensi import kernels, loops, reference

    attention = {
        "reference": reference.attention,
        "loops": loops.attention,
        "kernels": lambda Q, K, V, causal: kernels.attention(Q, K, V, causal=causal, backend="cpu"),
    }[path]
    future = np.triu(np.ones((8, 8), dtype=bool), k=1)
    assert (_leak(attention, causal=False)[future] > 1e-4).all()
    with_mask = _leak(attention, causal=True)
    assert (with_mask[future] == 0).all()           # bit for bit: nothing leaks
    assert (np.diag(with_mask) > 0).all()           # a token still changes its own output


def test_minus_1e9_overflows_in_float16_but_not_in_float32():
    import numpy as np

    from atensi import reference

    assert float(np.finfo(np.float16).max) == 65504.0
    with np.errstate(over="ignore"):
        assert np.isneginf(np.float16(-1e9))
        assert np.isfinite(np.float16(-1e4)) and np.isneginf(np.float16(-1e5))
    assert np.float32(-1e9) == -1e9
    # float32, a row with something visible: -1e9 and -inf give the same weights.
    S = _rng().standard_normal((6, 6)).astype(np.float32)
    future = np.triu(np.ones((6, 6), dtype=bool), k=1)
    assert np.array_equal(reference.softmax(np.where(future, np.float32(-1e9), S)),
                          reference.softmax(reference.causal_mask(S)))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_fully_masked_row_naive_nan_ours_zero(dtype):
    import numpy as np

    from atensi import reference

    row = np.full(4, -np.inf, dtype=dtype)
    with np.errstate(invalid="ignore"):
        assert np.isnan(np.exp(row) / np.exp(row).sum()).all()   # 0 / 0
        assert np.isnan(row - row.max()).all()                   # -inf - (-inf)
    assert (reference.softmax(row) == 0).all()
    # -1e9 in float32: no NaN, but a silent uniform weight on forbidden positions.
    assert np.allclose(reference.softmax(np.full(4, -1e9, dtype=np.float32)), 0.25)


def test_kernel_softmax_gives_zeros_for_a_fully_masked_row():
    import numpy as np

    from atensi import kernels

    S = np.full((3, 8), -np.inf, dtype=np.float32)
    S[1, :3] = [0.5, 1.0, -2.0]
    for version in ("v1", "v2"):
        A = kernels.softmax(S, version=version, backend="cpu")
        assert (A[0] == 0).all() and (A[2] == 0).all() and not np.isnan(A).any()
        assert np.isclose(A[1].sum(), 1.0)


def test_mask_is_lower_triangular_with_diagonal():
    import numpy as np

    from atensi import reference

    Q, K = _rng().standard_normal((2, 9, 8), dtype=np.float32)
    A = reference.softmax(reference.causal_mask(reference.scores(Q, K)))
    assert np.array_equal(A > 0, np.tril(np.ones((9, 9), dtype=bool)))
    assert np.array_equal(A[0], np.eye(9)[0])
    assert np.allclose(A.sum(axis=1), 1.0)


def test_one_masked_pass_equals_generation_prefix_by_prefix():
    import numpy as np

    from atensi import reference

    Q, K, V = _rng().standard_normal((3, 64, 16), dtype=np.float32)
    full = reference.attention(Q, K, V)
    steps = np.stack([reference.attention(Q[: i + 1], K[: i + 1], V[: i + 1])[-1] for i in range(64)])
    assert np.max(np.abs(full - steps)) < 1e-5


def test_mask_kinds_from_the_library_give_zero_rows_not_nan():
    import numpy as np

    from atensi import example, masks, reference

    Q, K, _ = example.qkv()
    S = reference.scores(Q, K)
    T = example.T
    dia, budi, ani = example.PRONOUN, example.REFERENT, example.OTHER_NAME
    window = reference.softmax(masks.apply(S, masks.sliding_window(T, 2)))
    assert window[dia, ani] == 0 and window[dia, budi] > 0.5   # dia loses Ani, keeps Budi
    prefix = reference.softmax(masks.apply(S, masks.prefix_lm(T, 3)))
    assert prefix[ani, budi] > 0.5                             # Ani reads Budi
    pad = masks.combine(masks.padding([T, 2], T), masks.causal(T))
    A = reference.softmax(masks.apply(np.stack([S, S]), pad))
    assert not np.isnan(A).any() and (A[1, 2:] == 0).all()


def test_mask_kernel_and_fused_scores_mask_match_numpy():
    import numpy as np

    from atensi import kernels, reference

    Q, K = _rng().standard_normal((2, 2, 50, 24), dtype=np.float32)   # 50: not a multiple of 16
    expected = reference.causal_mask(reference.scores(Q, K))
    assert np.array_equal(kernels.causal_mask(reference.scores(Q, K), backend="cpu"), expected)
    fused = kernels.scores(Q, K, causal=True, backend="cpu")
    assert np.array_equal(np.isneginf(fused), np.isneginf(expected))
    visible = np.isfinite(expected)
    assert np.max(np.abs(fused[visible] - expected[visible])) < 1e-5


def test_quick_bench_preset_stays_small():
    # The chapter measures while the book builds: the preset must stay small.
    from atensi.bench import measure

    preset = measure.PRESETS["book"]
    assert max(preset.sweep) <= 1024 and max(preset.emulation_T) <= 256
    assert preset.max_seconds <= 3


# --- Glossary ----------------------------------------------------------------


def glossary_blocks() -> list[str]:
    """The text of every ``{glossary}`` block of the glossary page."""
    text = chapter_text("glosarium")
    return [part.split("\n```\n", 1)[0] for part in text.split("```{glossary}")[1:]]


def glossary_terms() -> list[str]:
    return [line.strip() for block in glossary_blocks() for line in block.splitlines()
            if line and not line.startswith((" ", ":")) and line.strip()]


def test_glossary_terms_cover_the_book_and_are_unique():
    terms = glossary_terms()
    lowered = [t.lower() for t in terms]
    assert len(lowered) == len(set(lowered)), "istilah ganda di glosarium"
    # Terms the style guide fixes, in Indonesian and English.
    for term in ("attention", "head", "query", "key", "value", "softmax", "dot product", "token",
                 "kernel", "thread", "block", "grid", "warp", "shared memory", "forward pass",
                 "decoder-only", "online softmax", "fused kernel", "warp shuffle",
                 "matriks skor", "scores matrix", "skor", "penskalaan", "mask kausal",
                 "causal mask", "bobot atensi", "attention weights", "jumlah tertimbang",
                 "weighted sum", "keluaran", "output", "entropi", "gradien", "pelatihan",
                 "training", "inferensi", "posisi", "masa depan", "proyeksi keluaran",
                 "layer norm", "koneksi residual", "MLP"):
        assert term.lower() in lowered, f"glosarium: istilah '{term}' tidak ada"


def test_glossary_entries_name_their_chapter():
    entries = [e for block in glossary_blocks() for e in re.split(r"\n\n(?=\S)", block.strip())]
    entries = [e for e in entries if not e.startswith(":")]
    assert len(entries) >= 60
    for entry in entries:
        chapters = re.findall(r"Bab: \{ref\}`([\w-]+)`", entry)
        assert chapters, f"entri tanpa bab: {entry.splitlines()[0]}"
        assert set(chapters) <= set(ALL_LABELS), entry.splitlines()[0]


def test_every_term_role_in_the_book_is_defined():
    lowered = {t.lower() for t in glossary_terms()}
    for path in CHAPTERS.glob("*.md"):
        for ref in re.findall(r"\{term\}`([^`]+)`", path.read_text(encoding="utf-8")):
            target = " ".join(re.sub(r"^.*<(.+)>$", r"\1", ref, flags=re.S).split()).lower()
            assert target in lowered, f"{path.name}: {{term}}`{ref}` tidak ada di glosarium"


def test_every_citation_in_the_book_is_in_the_reference_list():
    references = chapter_text("glosarium").split("(referensi)=", 1)[1]
    assert "Vaswani" in references and "arXiv:1706.03762" in references
    in_chapters = set()
    for path in CHAPTERS.glob("*.md"):
        if path.stem != "glosarium":
            in_chapters |= cited(path.read_text(encoding="utf-8"))
    assert ("Vaswani", "2017") in in_chapters
    flat = " ".join(references.split())
    for author, year in sorted(in_chapters):
        assert re.search(rf"{author}, [^()]*\({year}\)", flat), (
            f"rujukan {author} ({year}) dipakai di bab tetapi tidak ada di daftar pustaka"
        )




# --- Executed chapters: the glued numbers ------------------------------------------

GLUE_MIME = "application/papermill.record/text/plain"


def glued_values(name: str) -> dict[str, str]:
    """Glue name -> the text it puts into the prose, from the session's execution."""
    import ast

    run = run_chapter(f"chapters/{name}")
    assert run.error is None, run.error
    values = {}
    for cell in run.executed.cells[: len(run.notebook.cells)]:
        for output in cell.get("outputs", []):
            glued = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if glued is None:
                continue
            data = output.get("data", {})
            text = data.get(GLUE_MIME, data.get("text/plain", ""))
            if re.fullmatch(r"'.*'|\".*\"", text, re.S):
                text = ast.literal_eval(text)
            values[glued] = text
    return values


def printed_outputs(name: str) -> str:
    """Everything the chapter's cells print or display as text, in order."""
    run = run_chapter(f"chapters/{name}")
    assert run.error is None, run.error
    parts = []
    for cell in run.executed.cells[: len(run.notebook.cells)]:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                parts.append(output.get("text", ""))
            elif "scrapbook" not in output.get("metadata", {}):
                data = output.get("data", {})
                parts.append(data.get("text/markdown", data.get("text/plain", "")))
    return "\n".join(parts)


@pytest.mark.book
@pytest.mark.parametrize("name", PAGES)
def test_every_glued_name_has_a_value_after_execution(name):
    values = glued_values(name)
    missing = sorted(glued_in_prose(name) - set(values))
    assert not missing, f"{name}: nama glue tanpa nilai setelah dijalankan: {missing}"
    for used in glued_in_prose(name):
        text = str(values[used]).strip()
        # -inf may be the point (float16 overflow); NaN or nothing never is.
        assert text and text.lower() not in ("nan", "none"), f"{name}: {used} = {text!r}"


def _number(text: str) -> float:
    """'1.048.576' -> 1048576.0, '0,25' -> 0.25 (the book's Indonesian format)."""
    return float(text.replace(".", "").replace(",", ".").replace("−", "-"))


@pytest.mark.book
def test_executed_step_chapters_compute_the_seed_numbers():
    skor = glued_values("matriks_skor")
    assert skor["T_kali_T"] == "1.048.576"
    assert skor["mem_head"] == "4 MiB" and skor["mem_12"] == "48 MiB"
    skala = glued_values("skala_akar_dk")
    assert [skala[f"akar_{d}"] for d in (64, 256, 4096)] == ["8", "16", "64"]
    jumlah = glued_values("jumlah_v")
    assert jumlah["jv_bentuk_head"] == "(1024, 64)" and jumlah["jv_bentuk_gabungan"] == "(1024, 768)"
    assert jumlah["jv_bentuk_WO"] == "(768, 768)" and jumlah["jv_bentuk_tumpuk"] == "(12, 1024, 64)"
    assert jumlah["jv_n_head"] == "12"
    # A weighted sum never leaves the range of the visible values.
    assert jumlah["jv_di_luar"] == "0"


@pytest.mark.book
def test_executed_softmax_shows_its_properties_and_the_overflow():
    values = glued_values("softmax")
    assert values["sm_pelanggaran"] == "0"           # monotone: no row out of order
    outputs = printed_outputs("softmax")
    assert re.search(r"\bnan\b", outputs), "softmax naif yang meluap tidak ditampilkan"
    # float16: rows that silently became zeros are counted beside the NaN rows.
    assert _number(values["sm_rusak16_tajam_nan"]) > 0 and _number(values["sm_rusak16_tajam_nol"]) > 0
    # Arrays are printed with the decimal comma, as in the prose.
    arrays = re.findall(r"\[[^\[\]]*\]", outputs)
    assert arrays and not [a for a in arrays if re.search(r"\d\.\d", a)]


@pytest.mark.book
def test_executed_mask_chapter_shows_minus_inf_nan_and_zero_rows():
    outputs = printed_outputs("mask_kausal")
    assert re.search(r"\bnan\b", outputs)            # the naive softmax of a fully masked row
    assert re.search(r"-inf\b", outputs)             # float16 turns -1e9 into -inf
    assert re.search(r"\(0,00(; 0,00)+\)", outputs)  # ours gives a zero row
    assert _number(glued_values("mask_kausal")["bocor_maks"]) > 0  # without the mask, the future leaks


# --- Rendered pages ------------------------------------------------------------


def page_soup(built_book, name: str) -> BeautifulSoup:
    path = built_book / "chapters" / f"{name}.html"
    assert path.is_file(), f"chapters/{name}.html tidak dibangun"
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def main_text(soup: BeautifulSoup) -> str:
    main = soup.select_one("main") or soup
    return " ".join(main.get_text(" ").split())


def _table_rows(soup):
    return [[td.get_text(" ", strip=True) for td in tr.select("td")] for tr in soup.select("main table tr")]


# The source lesson's facts (DESIGN.md), as they read on the rendered pages.
SEED_FACTS = {
    "skor per head": r"1\.048\.576",
    "Q, K, V satu head": r"\(1024, 64\)",
    "12 head digabung": r"\(1024, 768\)",
    "W_O": r"\(768, 768\)",
    "matriks skor 12 head": r"\(12, 1024, 1024\)",
    "12 head": r"\b12 head|dua belas head",
    "memori 12 head": r"48 MiB",
    "makalah Vaswani": r"Attention Is All You Need",
    "-1e9": r"-1e9",
    "-inf": r"-inf\b",
    "layer norm": r"(?i)layer norm",
    "MLP": r"MLP",
    "koneksi residual": r"(?i)residual",
}


@pytest.mark.book
def test_rendered_book_holds_every_fact_of_the_source_lesson(built_book):
    text = " ".join(main_text(page_soup(built_book, name)) for name in ("pendahuluan",) + STEP_CHAPTERS
                    + ("sintesis",))
    missing = [fact for fact, pattern in SEED_FACTS.items() if not re.search(pattern, text)]
    assert not missing, f"fakta pelajaran sumber tidak tampil: {missing}"
    # The d_k table: √64 = 8, √256 = 16, √4096 = 64.
    rows = _table_rows(page_soup(built_book, "skala_akar_dk"))
    for d_k, root in (("64", "8"), ("256", "16"), ("4.096", "64")):
        assert any(r[:2] == [d_k, root] for r in rows), f"baris d_k = {d_k}, √d_k = {root} tidak tampil"
    # The one-line formula is a numbered equation.
    sintesis = page_soup(built_book, "sintesis")
    assert sintesis.select_one("#equation-eq-sintesis-satu-baris") is not None


@pytest.mark.book
@pytest.mark.parametrize("name", PAGES)
def test_rendered_page_has_title_pictures_and_hidden_answers(built_book, name):
    soup = page_soup(built_book, name)
    text = main_text(soup)
    assert "{glue" not in text and "glue:text" not in text
    title = headings(name, 1)[0][1].replace("*", "")
    assert soup.select_one("main h1") is not None
    assert " ".join(title.split()) in " ".join(soup.select_one("main h1").get_text(" ").split())
    if name in NUMBERED:
        assert soup.select("main img"), f"{name}: tidak ada gambar"
    count = len(exercises(name))
    shown = soup.select("main .solution")
    assert len(shown) == count, f"{name}: {count} latihan, {len(shown)} jawaban tampil"
    assert all("dropdown" in " ".join(s.get("class", [])) for s in shown), f"{name}: jawaban tidak tersembunyi"


@pytest.mark.book
def test_kinerja_page_tables_compile_report_and_gpu_note(built_book):
    soup = page_soup(built_book, "kinerja")
    text = main_text(soup)
    wide = soup.select("main div.tabel-lebar table")
    assert wide, "tabel biaya lebar tanpa wadah geser"
    assert len(wide[0].select("tr")) >= 3
    # The book build has NVRTC: the compiler table holds numbers, the prose no dash.
    numeric = [r for r in _table_rows(soup) if r and any(re.fullmatch(r"\d+", c) for c in r[1:])]
    assert numeric, "laporan kompilator tanpa angka"
    report = glued_values("kinerja")["kin_laporan_kalimat"]
    assert "–" not in report and "( – " not in text and "(– " not in text
    gpu_file = ROOT / "results" / "bench_gpu.json"
    if gpu_file.is_file():
        results = json.loads(gpu_file.read_text(encoding="utf-8"))
        assert results["date"][:10] in text
        assert results["machine"]["gpu"]["name"] in text
    else:
        assert "python -m atensi.bench --quick" in text


@pytest.mark.book
def test_glossary_page(built_book):
    soup = page_soup(built_book, "glosarium")
    terms = soup.select("main dl.glossary dt")
    assert len(terms) >= 80
    links = {a["href"].split("#")[0] for a in soup.select("main dl.glossary a.reference.internal")}
    for page in ("pendahuluan",) + STEP_CHAPTERS + ("sintesis",):
        assert f"{page}.html" in links, f"glosarium tidak menautkan {page}"
    text = main_text(soup)
    assert "Attention Is All You Need" in text and "arXiv:1706.03762" in text


def test_the_story_exercise_cannot_be_passed_without_the_model():
    """A jawab that reads the owner out of the story text must fail the check."""
    import numpy as np

    from atensi import recall, recall_train
    from atensi.model import TinyGPT

    source = (CHAPTERS / "model_kata.md").read_text(encoding="utf-8")
    statement = source[source.index(":label: ex-model-kata-cerita"):]
    check = statement[statement.index("```text\n") + len("```text\n"):]
    check = check[:check.index("\n```")]

    def cerita_dari(fakta, benda):
        return " ".join([w for nama, barang in fakta for w in (nama, "punya", barang, ".")]
                        + ["Ini", benda])

    def jawab_dari_teks(model, teks):  # no model: the owner is in the story itself
        kata = teks.split()
        return kata[kata.index(kata[-1]) - 2]

    def jawab_dengan_model(model, teks):
        logit = model.logits(model.encode(teks)[None, :])
        return model.decode([int(np.argmax(logit[0, -1]))])

    bobot = TinyGPT.load(recall_train.RECALL_WEIGHTS)
    names = {"np": np, "recall": recall, "bobot": bobot, "cerita_dari": cerita_dari}
    exec(check, {**names, "jawab": jawab_dengan_model})
    with pytest.raises(AssertionError):
        exec(check, {**names, "jawab": jawab_dari_teks})
