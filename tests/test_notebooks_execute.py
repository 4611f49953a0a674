"""Every chapter runs top to bottom without error, within its time budget.

One test per page of the table of contents: the MyST text notebook is read by
jupytext and executed by nbclient in ``chapters/`` (as the book build and a
reader's Jupyter do).
"""

from __future__ import annotations

import time

import jupytext
import nbclient
import pytest

from conftest import ROOT, toc_pages

pytestmark = pytest.mark.book

# On this 2-core machine a chapter should run in well under 30 s; the budget
# leaves room for a loaded CI machine. The nbclient timeout only stops a hung
# cell; the budget is what the test asserts.
BUDGET_S = 60
CELL_TIMEOUT_S = 300


@pytest.mark.parametrize("page", toc_pages())
def test_chapter_executes(page):
    path = ROOT / f"{page}.md"
    notebook = jupytext.read(path)
    client = nbclient.NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    start = time.perf_counter()
    client.execute()  # raises CellExecutionError with the traceback
    seconds = time.perf_counter() - start
    print(f"\n{page}: {seconds:.1f} s")
    errors = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    assert errors == []
    assert seconds <= BUDGET_S, f"{page} butuh {seconds:.0f} s, anggaran {BUDGET_S} s"
