"""No chapter asserts anything about a wall clock: a busy laptop builds the same book.

A chapter may measure time and print it, and may choose the sentence that
reports it from the measurement (an ``if``). It may not ``assert`` on it: the
build would fail on a loaded machine. The check reads each chapter's code
cells statically: every name computed from a clock (``time.perf_counter()``
and friends, or a function of the chapter that reads one) is followed through
the assignments that use it, and no ``assert`` may read such a name.

The one chapter whose text reports a measured speed is also executed with the
CPU kept busy by two other processes, and must still run (``book`` tier).
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap

import jupytext
import pytest

from conftest import ROOT, toc_pages

CLOCKS = {"perf_counter", "perf_counter_ns", "time", "time_ns", "monotonic", "monotonic_ns",
          "process_time", "thread_time", "default_timer"}


def _reads_a_clock(node: ast.AST, timed_functions: set[str]) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            func = sub.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            owner = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else None
            if name in CLOCKS and owner in (None, "time", "timeit"):
                return True
            if name in timed_functions:
                return True
    return False


def _names(node: ast.AST) -> set[str]:
    return {sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name)}


def _bound(target: ast.AST) -> set[str]:
    """The names an assignment target binds: ``laju[k] = ...`` binds ``laju``, not ``k``."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(_bound(element) for element in target.elts))
    if isinstance(target, ast.Starred):
        return _bound(target.value)
    if isinstance(target, (ast.Subscript, ast.Attribute)):
        return _bound(target.value)
    return set()


def _targets(node: ast.AST) -> set[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return set().union(*(_bound(target) for target in targets))


def clock_asserts(code: str) -> list[str]:
    """The ``assert`` statements of ``code`` that read a value computed from a clock."""
    tree = ast.parse(code)
    timed_functions = {f.name for f in ast.walk(tree)
                       if isinstance(f, ast.FunctionDef) and _reads_a_clock(f, set())}
    tainted: set[str] = set()
    changed = True
    while changed:  # until every name derived from a clock is found
        changed = False
        for node in ast.walk(tree):
            if isinstance(node, ast.For):
                source = node.iter
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.NamedExpr)):
                source = node.value
            else:
                continue
            if source is None:
                continue
            if _reads_a_clock(source, timed_functions) or _names(source) & tainted:
                new = _targets(node) - tainted
                if new:
                    tainted |= new
                    changed = True
    return [ast.unparse(node) for node in ast.walk(tree)
            if isinstance(node, ast.Assert)
            and (_names(node.test) & tainted or _reads_a_clock(node.test, timed_functions))]


def chapter_code(page: str) -> str:
    notebook = jupytext.read(ROOT / f"{page}.md")
    cells = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
    # IPython lines (%magic, !shell) are not Python; they read no clock.
    lines = [line for cell in cells for line in cell.splitlines()
             if not line.lstrip().startswith(("%", "!"))]
    return "\n".join(lines)


@pytest.mark.parametrize("page", toc_pages())
def test_no_chapter_asserts_a_wall_clock_comparison(page):
    assert clock_asserts(chapter_code(page)) == [], (
        f"{page}.md menguji waktu jam dinding dengan assert; di komputer yang sibuk buku gagal "
        "dibangun. Pilih kalimatnya dari pengukuran (if), atau bandingkan pekerjaan yang dihitung."
    )


def test_the_check_finds_an_assert_on_a_timed_rate():
    code = textwrap.dedent("""
        import time
        laju = {}
        for cache in (False, True):
            mulai = time.perf_counter()
            kerja()
            laju[cache] = 3 / (time.perf_counter() - mulai)
        percepatan = laju[True] / laju[False]
        assert percepatan > 1
        assert teks == teks
    """)
    assert clock_asserts(code) == ["assert percepatan > 1"]


def test_the_check_follows_a_timing_function_and_what_is_derived_from_it():
    code = textwrap.dedent("""
        import time
        def median_ms(f):
            mulai = time.perf_counter()
            f()
            return time.perf_counter() - mulai
        ms = median_ms(lambda: None)
        kalimat = "lebih cepat" if ms < 1 else "lebih lambat"
        assert kalimat
        assert ms < 5
    """)
    assert clock_asserts(code) == ["assert kalimat", "assert ms < 5"]
    exact = "n = 4\nposisi = n * (n + 1) // 2\nassert posisi > n\n"
    assert clock_asserts(exact) == []


SPEED_CHAPTER = "chapters/melatih"
BUSY = "while True:\n    pass\n"


@pytest.mark.book
@pytest.mark.slow
def test_the_chapter_that_reports_a_speed_runs_on_a_busy_machine():
    """The measured-speed chapter, executed while two processes keep both cores busy."""
    from chapter_runs import run_chapter

    busy = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(2)]
    try:
        run = run_chapter.__wrapped__(SPEED_CHAPTER)  # a fresh execution, not the session's shared one
    finally:
        for process in busy:
            process.kill()
            process.wait()
    assert run.error is None, run.error
