"""Each chapter is executed once per test session, with its exercise answers.

A chapter is read the way the book build reads it (MyST-NB's own reader, so
the notebook is the same one the build hashes), executed by nbclient in
``chapters/`` with ``ATENSI_BOOK=1`` (as the build runs it), and its
answers (``exercise_answers.py``) run after it in the same kernel, the way a
reader who pastes them at the end of the notebook would run them.

The executed chapter cells are then written into the build's execution cache
(``_build/.jupyter_cache``), so the session's book build uses them instead of
executing every chapter a second time. A chapter that failed is not cached:
the build then executes it itself and reports the same error.

With several test workers, ``shared_run`` keeps each run as a JSON file in the
session's shared folder: the worker that gets there first executes the
chapter, the others read its result.

nbclient and nbformat are imported inside the functions that use them:
conftest.py imports this module in every session, also in one whose Python
has no notebook packages (``pytest -m gpu`` on the GPU machine).
"""

from __future__ import annotations

import copy
import functools
import json
import os
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from budgets import SHARED_CHAPTERS, shared_work
from exercise_answers import Answer, answers
from sharing import locked

if TYPE_CHECKING:
    import nbformat

ROOT = Path(__file__).resolve().parents[1]
CELL_TIMEOUT_S = 300

# The repository the test builds are made for (never published): the build
# writes it into every setup cell (_ext/atensi_book/repository.py), so a chapter
# is read here with the same cell. On GitHub Actions it is the repository under
# test, as in the Pages build, so both builds share one execution cache.
BOOK_REPOSITORY = {
    "ATENSI_REPOSITORY": os.environ.get("GITHUB_REPOSITORY") or "pemilik-uji/atensi",
    "ATENSI_BRANCH": (os.environ.get("GITHUB_REF_NAME") if os.environ.get("GITHUB_REF_TYPE") == "branch"
                      else None) or "main",
}


def _book_repository():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "atensi_book_repository", ROOT / "_ext" / "atensi_book" / "repository.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass
class ChapterRun:
    page: str  # "chapters/name"
    notebook: nbformat.NotebookNode  # as the build reads it, before execution
    executed: nbformat.NotebookNode  # chapter cells, then one cell per answer
    answers: list[Answer]
    seconds: float
    error: str | None  # the traceback, when a cell raised

    @property
    def answer_cells(self) -> list:
        return self.executed.cells[len(self.notebook.cells):]


def read_like_the_build(path: Path) -> nbformat.NotebookNode:
    from myst_nb.core.read import read_myst_markdown_notebook
    from myst_parser.config.main import MdParserConfig

    repository = _book_repository()
    text = repository.with_setup_cell(path.read_text(encoding="utf-8"),
                                      repository.resolve(environ=BOOK_REPOSITORY))
    return read_myst_markdown_notebook(
        text,
        MdParserConfig(enable_extensions={"amsmath", "dollarmath", "colon_fence"}),
        add_source_map=True,
        path=path,
    )


@functools.lru_cache(maxsize=None)
def run_chapter(page: str) -> ChapterRun:
    import nbclient
    import nbformat

    path = ROOT / f"{page}.md"
    notebook = read_like_the_build(path)
    executed = copy.deepcopy(notebook)
    chapter_answers = answers(path)
    for answer in chapter_answers:
        executed.cells.append(nbformat.v4.new_code_cell(answer.code, metadata={"answer": answer.label}))
    client = nbclient.NotebookClient(
        executed,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    error = None
    start = time.perf_counter()
    try:
        client.execute(env={**os.environ, "ATENSI_BOOK": "1"})
    except Exception:  # CellExecutionError, a dead kernel, a timeout: all reported by the test
        error = traceback.format_exc()
    seconds = time.perf_counter() - start
    return ChapterRun(page, notebook, executed, chapter_answers, seconds, error)


def shared_run(page: str, store: Path) -> ChapterRun:
    """``run_chapter(page)``, executed once for all the session's workers."""
    import nbformat

    store.mkdir(parents=True, exist_ok=True)
    saved = store / (page.replace("/", "__") + ".json")
    with locked(saved.with_suffix(".lock")):
        if saved.exists():
            record = json.loads(saved.read_text(encoding="utf-8"))
            path = ROOT / f"{page}.md"
            return ChapterRun(page, read_like_the_build(path), nbformat.from_dict(record["executed"]),
                              answers(path), record["seconds"], record["error"])
        with shared_work(SHARED_CHAPTERS):
            run = run_chapter(page)
        partial = saved.with_suffix(".tmp")
        partial.write_text(json.dumps({"executed": run.executed, "seconds": run.seconds, "error": run.error}),
                           encoding="utf-8")
        os.replace(partial, saved)
        return run


def cache_for_the_build(run: ChapterRun, cache_dir: Path) -> bool:
    """Put the executed chapter into the build's execution cache; False when it failed."""
    if run.error is not None:
        return False
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    chapter = copy.deepcopy(run.notebook)
    for cell, done in zip(chapter.cells, run.executed.cells):
        if cell.cell_type == "code":
            cell.outputs = done.get("outputs", [])
            cell.execution_count = done.get("execution_count")
    cache = get_cache(str(cache_dir))
    cache.cache_notebook_bundle(
        CacheBundleIn(chapter, str(ROOT / f"{run.page}.md"), data={"execution_seconds": run.seconds}),
        check_validity=False,
        overwrite=True,
    )
    return True
