"""`make pdf` and `make zip`: failures are explained, and an empty or broken
PDF is never left behind. (The full PDF is built by the publish workflow and
by `make pdf`; printing all of it takes minutes, so the test suite prints a
tiny page instead.)"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import make_pdf  # noqa: E402
import make_zip  # noqa: E402

TINY = """<!doctype html><html lang="id"><head><meta charset="utf-8"></head>
<body><h1>Satu halaman saja</h1></body></html>"""


def test_missing_build_is_explained(tmp_path, capsys):
    assert make_pdf.make_pdf(tmp_path / "tidak-ada", tmp_path / "buku.pdf") == 1
    assert "make pdf" in capsys.readouterr().err
    assert not (tmp_path / "buku.pdf").exists()


def test_missing_chromium_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    (tmp_path / "index.html").write_text(TINY, encoding="utf-8")
    monkeypatch.setattr(make_pdf, "CHROMIUM", tmp_path / "tidak-ada" / "chromium")
    assert make_pdf.make_pdf(tmp_path, tmp_path / "buku.pdf") == 1
    assert "apt-get install chromium" in capsys.readouterr().err
    assert not (tmp_path / "buku.pdf").exists()


@pytest.mark.browser
def test_a_pdf_that_is_too_short_is_not_kept(tmp_path):
    if not make_pdf.CHROMIUM.exists():
        pytest.skip("Chromium tidak ada")
    (tmp_path / "index.html").write_text(TINY, encoding="utf-8")
    # In its own process: the session's browser fixture may already hold
    # Playwright's event loop in this one.
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_pdf.py"), "--single", str(tmp_path),
         "--out", str(tmp_path / "buku.pdf")],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "tidak disimpan" in proc.stderr
    assert list(tmp_path.glob("*.pdf")) == []


def test_zip_needs_a_built_site(tmp_path, capsys):
    assert make_zip.main(["--build", str(tmp_path)]) == 1
    assert "make book" in capsys.readouterr().err


def test_zip_holds_the_site_but_not_itself(tmp_path):
    html = tmp_path / "html"
    (html / "chapters").mkdir(parents=True)
    (html / "index.html").write_text("<p>indeks</p>", encoding="utf-8")
    (html / "chapters" / "a.html").write_text("<p>a</p>", encoding="utf-8")
    (html / "unduh").mkdir()
    (html / "unduh" / "atensi.pdf").write_bytes(b"%PDF")
    assert make_zip.main(["--build", str(tmp_path)]) == 0
    names = zipfile.ZipFile(html / "unduh" / "atensi-luring.zip").namelist()
    assert sorted(names) == ["atensi/chapters/a.html", "atensi/index.html"]
