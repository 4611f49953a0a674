"""The book builds from clean with warnings as errors, rebuilds from cache, and
its configuration does what it promises (failing cells fail, junk is ignored)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import textwrap

import jupytext
import pytest

from conftest import BUILD_FLAGS, ROOT, build_book, jupyter_book_command, toc_pages

pytestmark = pytest.mark.book

# Targets for a 2-core machine, printed beside the measured times: a chapter
# executes in at most 30 s and the build itself (Sphinx, math, pages) in 180 s;
# a cached rebuild takes about 15 s. A cache that does not work is caught by
# what it does (a chapter executed twice), not by a clock.
CHAPTER_TARGET_S = 30
BUILD_TARGET_S = 180


def warnings_in(output: str) -> list[str]:
    return [line for line in output.splitlines() if re.search(r"\bWARNING\b|\bERROR\b", line)]


def test_book_builds_without_warnings(book_build):
    assert warnings_in(book_build.output) == []
    tail = "\n".join(book_build.output.splitlines()[-40:])
    assert book_build.returncode == 0, f"build gagal:\n{tail}"
    assert "build succeeded" in book_build.output
    assert (book_build.html / "index.html").is_file()
    assert not (book_build.html / "reports").exists(), "ada laporan eksekusi yang gagal"
    print(f"\nbuild buku: {book_build.seconds:.1f} s")


@pytest.mark.skipif(
    os.environ.get("ATENSI_REUSE_BUILD") == "1", reason="build bukan dari awal (ATENSI_REUSE_BUILD=1)"
)
def test_clean_build_runs_every_chapter_and_prints_its_time(book_build, chapter_run):
    # The session executes each chapter once before building (chapter_runs); a
    # clean build costs that execution plus the build itself. The time is
    # printed beside its target, never asserted: a busy machine builds the same book.
    assert book_build.returncode == 0
    pages = toc_pages()
    runs = {page: chapter_run(page) for page in pages}
    assert all(run.seconds > 0 for run in runs.values()), "bab yang tidak dijalankan"
    executed = sum(run.seconds for run in runs.values())
    target = CHAPTER_TARGET_S * len(pages) + BUILD_TARGET_S
    slowest = max(runs, key=lambda page: runs[page].seconds)
    print(f"\nbuild dari awal: {executed:.0f} s menjalankan {len(pages)} bab + {book_build.seconds:.0f} s build "
          f"= {executed + book_build.seconds:.0f} s (sasaran {target} s; bab terlama {slowest}: "
          f"{runs[slowest].seconds:.0f} s)")


def test_build_reuses_the_session_execution_of_every_chapter(book_build):
    assert book_build.returncode == 0
    executed = [line for line in book_build.output.splitlines() if "Executing notebook" in line]
    assert executed == [], f"bab dijalankan dua kali: {executed}"


def test_cached_rebuild_executes_nothing(book_build, tmp_path):
    assert book_build.returncode == 0
    # A copy: other workers are reading the session's build while this one runs.
    shutil.copytree(book_build.output_root / "_build", tmp_path / "_build", symlinks=True)
    again = build_book(tmp_path)
    assert again.returncode == 0, again.output[-3000:]
    assert warnings_in(again.output) == []
    executed = [line for line in again.output.splitlines() if "Executing notebook" in line]
    assert executed == [], f"cache tidak dipakai: {executed}"
    # Printed, not asserted: a busy machine must pass the same test.
    print(f"\nbuild ulang (cache): {again.seconds:.1f} s")


# --- The configuration, on a one-page book that uses the real _config.yml ------

PAGE = textwrap.dedent(
    """\
    ---
    jupytext:
      text_representation:
        extension: .md
        format_name: myst
    kernelspec:
      display_name: Python 3
      language: python
      name: python3
    ---

    (uji)=
    # Halaman uji

    Rumus $x^2$ dan

    $$
    y = \\sqrt{x}
    $$

    ```{code-cell} ipython3
    {code}
    ```
    """
)


@pytest.fixture
def tiny_book(tmp_path):
    """A copy of the book's configuration with one page; returns a writer."""
    book = tmp_path / "buku"
    (book / "chapters").mkdir(parents=True)
    shutil.copy(ROOT / "_config.yml", book / "_config.yml")
    shutil.copytree(ROOT / "_ext", book / "_ext", ignore=shutil.ignore_patterns("__pycache__"))
    (book / "_toc.yml").write_text("format: jb-book\nroot: chapters/uji\n", encoding="utf-8")

    def write(code: str):
        (book / "chapters" / "uji.md").write_text(PAGE.replace("{code}", code), encoding="utf-8")
        return book

    return write


def build_other(book, **env):
    return subprocess.run(
        jupyter_book_command() + ["build", str(book)] + BUILD_FLAGS,
        cwd=book,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_failing_cell_fails_the_build_naming_the_page(tiny_book):
    book = tiny_book("raise ValueError('sel ini sengaja gagal')")
    proc = build_other(book)
    assert proc.returncode != 0
    assert re.search(r"chapters/uji\.md: .*Executing notebook failed", proc.stdout), proc.stdout[-3000:]


def test_page_missing_from_the_toc_fails_the_build_naming_it(tiny_book):
    """only_build_toc_files would drop the page silently (_ext/atensi_book/guard.py)."""
    book = tiny_book("print(1)")
    (book / "chapters" / "terlupa.md").write_text("# Bab yang terlupa\n", encoding="utf-8")
    proc = build_other(book)
    assert proc.returncode != 0
    assert "Halaman tidak ada di _toc.yml: chapters/terlupa.md" in proc.stdout, proc.stdout[-3000:]


def test_broken_internal_link_fails_the_build_naming_the_page(tiny_book):
    """Sphinx does not check raw links; the written pages are (_ext/atensi_book/guard.py)."""
    book = tiny_book("print(1)")
    page = book / "chapters" / "uji.md"
    page.write_text(
        page.read_text(encoding="utf-8") + '\n<a href="bab_hilang.html#bagian">bab yang hilang</a>\n\n'
        "[bagian yang hilang](#tidak-ada)\n",
        encoding="utf-8",
    )
    proc = build_other(book)
    assert proc.returncode != 0
    assert "chapters/uji.html → bab_hilang.html#bagian (berkas tidak ada)" in proc.stdout, proc.stdout[-3000:]


def test_formula_mathjax_cannot_read_fails_the_build_naming_its_source_line(tiny_book):
    book = tiny_book("print(1)")
    page = book / "chapters" / "uji.md"
    text = page.read_text(encoding="utf-8")
    page.write_text(text + "\nRumus rusak $\\tidakada{x}$.\n", encoding="utf-8")
    line = text.count("\n") + 2
    proc = build_other(book)
    assert proc.returncode != 0
    assert (f"chapters/uji.md, baris {line}: \\tidakada{{x}}  (perintah TeX \\tidakada tidak dikenal)"
            in proc.stdout), proc.stdout[-3000:]


def test_a_page_or_formula_list_torn_by_a_killed_build_is_rebuilt(tiny_book):
    """A build killed while the last pass rewrote a page, or the formula list."""
    book = tiny_book("print(1)")
    first = build_other(book)
    assert first.returncode == 0, first.stdout[-3000:]
    page = book / "_build" / "html" / "chapters" / "uji.html"
    formulas = book / "_build" / ".doctrees" / "rumus-buku.json"
    whole = page.read_text(encoding="utf-8")
    page.write_text(whole[: len(whole) // 2], encoding="utf-8")
    formulas.write_text(formulas.read_text(encoding="utf-8")[:5], encoding="utf-8")
    again = build_other(book)
    assert again.returncode == 0, again.stdout[-3000:]
    assert warnings_in(again.stdout) == []
    assert "chapters/uji.html terpotong oleh build sebelumnya" in again.stdout
    assert "rumus-buku.json rusak" in again.stdout
    rebuilt = page.read_text(encoding="utf-8")
    assert rebuilt.rstrip().endswith("</html>") and rebuilt.count("<math") == whole.count("<math") == 2
    assert sorted(map(tuple, json.loads(formulas.read_text(encoding="utf-8")))) == [
        ("x^2", False), ("y = \\sqrt{x}", True)]


def test_without_node_the_build_stops_before_reading_and_says_why(tiny_book, tmp_path):
    """Formulas are only typeset at build time, so Node.js is required."""
    book = tiny_book("print(1)")
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("python3", "git"):  # what the build runs, without node
        found = shutil.which(tool)
        if found:
            (bare / tool).symlink_to(found)
    proc = build_other(book, PATH=str(bare))
    assert proc.returncode != 0
    assert "Node.js tidak ditemukan" in proc.stdout, proc.stdout[-3000:]
    assert not (book / "_build" / "html" / "chapters" / "uji.html").exists()


def test_venv_tests_and_hidden_folders_do_not_break_the_build(tiny_book):
    book = tiny_book("print(1 + 1)")
    junk = [
        ".venv/lib/python3.11/site-packages/paket/README.md",
        ".pytest_cache/README.md",
        ".ipynb_checkpoints/uji-checkpoint.md",
        "tests/catatan.md",
        "README.md",
        "_build/lama.md",
    ]
    for path in junk:
        (book / path).parent.mkdir(parents=True, exist_ok=True)
        (book / path).write_text("# Bukan halaman buku\n", encoding="utf-8")
    # The paired notebook of a chapter must not be read as a second source.
    jupytext.write(jupytext.read(book / "chapters" / "uji.md"), book / "chapters" / "uji.ipynb")
    proc = build_other(book)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert warnings_in(proc.stdout) == []
    html = book / "_build" / "html"
    assert (html / "chapters" / "uji.html").is_file()
    assert (html / "_static" / "matematika.css").is_file()
    assert not list(html.rglob("catatan.html")) and not (html / "README.html").exists()
