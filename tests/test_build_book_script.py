"""scripts/build_book.py: make book's output up to the first traceback, the cause
in one Indonesian message, the full log in a file."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "build_book.py"

TRACEBACK = """Traceback (most recent call last):
  File "sphinx.py", line 1, in build
    raise ValueError("x")
"""


def fake_build(tmp_path, body: str, code: int):
    """Run the script on a stand-in for jupyter-book that prints ``body`` and exits ``code``."""
    log = tmp_path / "_build" / "buku.log"
    program = f"import sys\nsys.stdout.write({body!r})\nsys.exit({code})\n"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--log", str(log), "--",
                           sys.executable, "-c", program],
                          capture_output=True, text=True, timeout=60)
    return proc, log


def test_a_failed_build_ends_with_sphinxs_message_and_where_the_log_is(tmp_path):
    body = ("membaca sumber... selesai\n\x1b[91mExtension error:\x1b[39;49;00m\n"
            "Rumus yang tidak bisa dibaca MathJax:\n  chapters/a.md, baris 3: \\x\n"
            + TRACEBACK + "sphinx.errors.ExtensionError: Rumus ...\n\n" + TRACEBACK
            + "RuntimeError: \nThere was an error in building your book. Look above for the cause.\n")
    proc, log = fake_build(tmp_path, body, 1)
    assert proc.returncode == 1
    assert "chapters/a.md, baris 3" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr and "Look above" not in proc.stdout
    assert proc.stderr.strip().splitlines() == [
        "Buku gagal dibangun (kode keluar 1).", "Penyebabnya tertulis di atas.",
        f"Log lengkap (dengan traceback jupyter-book): {log}"]
    assert log.read_text(encoding="utf-8") == body


def test_without_a_message_from_sphinx_the_cause_is_the_first_exception(tmp_path):
    body = ("Running Jupyter-Book\n" + TRACEBACK
            + "ValueError: To use 'repository' buttons, you must specify the repository URL\n"
            + TRACEBACK + "RuntimeError: \n")
    proc, log = fake_build(tmp_path, body, 1)
    assert proc.returncode == 1
    assert ("Penyebabnya: ValueError: To use 'repository' buttons, you must specify the "
            "repository URL") in proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


def test_a_build_that_succeeds_prints_all_and_adds_nothing(tmp_path):
    body = "build succeeded.\n"
    proc, log = fake_build(tmp_path, body, 0)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, body, "")
    assert log.read_text(encoding="utf-8") == body


def test_make_book_and_make_pdf_build_through_it():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for log, builder in (("buku.log", ""), ("pdf.log", " --builder singlehtml")):
        assert (f"\t$(PY) scripts/build_book.py --log $(BUILD)/{log} -- \\\n"
                f"\t  $(VENV)/bin/jupyter-book build . --path-output $(OUTPUT){builder} $(BUILD_FLAGS)\n"
                ) in makefile


def test_without_a_command_or_a_log_it_says_what_is_missing(tmp_path):
    for args, words in ((["--log", str(tmp_path / "a.log")], "perintah build tidak ada"),
                        (["--", "true"], "--log")):
        proc = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 2 and words in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
    assert not (tmp_path / "a.log").exists()
