"""Every chapter runs top to bottom without error, and every exercise answer's
code runs after it, printing what its text says.

One test per page of the table of contents. The chapter is executed once per
session (the ``chapter_run`` fixture: MyST-NB's reader, nbclient in
``chapters/``, as the book build runs it); the session's book build reuses
that execution through its cache. The answers run as extra cells after the
chapter's, in its context.

How long the chapters take is not asserted here (a busy machine must pass
the same tests): their CPU time is the "bab dijalankan" line of
tests/budgets.py, printed and held against its budget at the end of the run.
"""

from __future__ import annotations

import pytest

from conftest import toc_pages
from exercise_answers import answers, printed

pytestmark = pytest.mark.book

@pytest.mark.parametrize("page", toc_pages())
def test_chapter_executes_and_its_answers_run(chapter_run, page):
    run = chapter_run(page)
    print(f"\n{page}: {run.seconds:.1f} s, {len(run.answers)} jawaban dijalankan")
    assert run.error is None, run.error
    errors = [
        output
        for cell in run.executed.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    assert errors == []
    for answer, cell in zip(run.answers, run.answer_cells):
        if answer.expected is not None:
            assert printed(cell) == answer.expected, (
                f"Jawaban {answer.label} di {page}.md mencetak {printed(cell)}, "
                f"teksnya menyebut {answer.expected}"
            )


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
