"""Every chapter runs top to bottom without error, within its time budget, and
every exercise answer's code runs after it, printing what its text says.

One test per page of the table of contents: the MyST text notebook is read by
jupytext and executed by nbclient in ``chapters/`` (as the book build and a
reader's Jupyter do). The answers (``tests/exercise_answers.py``) are appended
as extra cells, so they run in the chapter's context, the way a reader who
pastes them at the end of the notebook would run them.
"""

from __future__ import annotations

import time

import jupytext
import nbclient
import nbformat
import pytest

from conftest import ROOT, toc_pages
from exercise_answers import answers, printed

pytestmark = pytest.mark.book

# On this 2-core machine a chapter should run in well under 30 s; the budget
# leaves room for a loaded CI machine. The nbclient timeout only stops a hung
# cell; the budget is what the test asserts.
BUDGET_S = 60
CELL_TIMEOUT_S = 300


@pytest.mark.parametrize("page", toc_pages())
def test_chapter_executes_and_its_answers_run(page):
    path = ROOT / f"{page}.md"
    notebook = jupytext.read(path)
    n_chapter = len(notebook.cells)
    chapter_answers = answers(path)
    for answer in chapter_answers:
        notebook.cells.append(
            nbformat.v4.new_code_cell(answer.code, metadata={"answer": answer.label})
        )
    client = nbclient.NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    start = time.perf_counter()
    client.execute()  # raises CellExecutionError with the traceback
    seconds = time.perf_counter() - start
    print(f"\n{page}: {seconds:.1f} s, {len(chapter_answers)} jawaban dijalankan")
    errors = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    assert errors == []
    for answer, cell in zip(chapter_answers, notebook.cells[n_chapter:]):
        if answer.expected is not None:
            assert printed(cell) == answer.expected, (
                f"Jawaban {answer.label} di {page}.md mencetak {printed(cell)}, "
                f"teksnya menyebut {answer.expected}"
            )
    assert seconds <= BUDGET_S, f"{page} butuh {seconds:.0f} s, anggaran {BUDGET_S} s"


def test_answer_reader_finds_fences_and_expected_output(tmp_path):
    page = tmp_path / "bab.md"
    page.write_text(
        "````{solution} ex-a\n:class: dropdown\n\nTeks.\n\n```python\nprint(1 + 1)\n"
        "# Keluaran:\n# 2\n```\n\n```cuda\nint x;\n```\n````\n\n"
        "```python\nprint('bukan jawaban')\n```\n",
        encoding="utf-8",
    )
    found = answers(page)
    assert [(a.label, a.code, a.expected) for a in found] == [("ex-a", "print(1 + 1)", ["2"])]
