"""`make pdf` and `make zip`: failures are explained, and an empty or broken
PDF is never left behind. (The full PDF is built by the publish workflow and
by `make pdf`; printing all of it takes minutes, so the test suite prints a
tiny page instead.)"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import make_pdf  # noqa: E402
import make_zip  # noqa: E402

sys.path.insert(0, str(ROOT / "_ext"))
from atensi_book import site as site_meta  # noqa: E402

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


SITE = "https://pemilik.github.io/atensi/"
WHOLE = '<!DOCTYPE html><html lang="id"><body>{}</body></html>\n'
# Pendahuluan as the site writes it: the downloads at the site's address.
INTRO = ('<p><a href="https://pemilik.github.io/atensi/unduh/atensi.pdf">seluruh buku sebagai satu '
         'PDF</a>, atau <a class="x" href="https://pemilik.github.io/atensi/unduh/atensi-luring.zip">'
         'salinan luring</a>; <a href="b.html">bab b</a></p>')


def built_site(tmp_path, *, pdf=True, pages=("chapters/a", "chapters/b")):
    """A built site of ``pages`` (the first one is Pendahuluan) and a _toc.yml naming them."""
    html = tmp_path / "_build" / "html"
    (html / "chapters").mkdir(parents=True)
    (html / "index.html").write_text(WHOLE.format("indeks"), encoding="utf-8")
    for n, page in enumerate(pages):
        (html / f"{page}.html").write_text(WHOLE.format(INTRO if n == 0 else page), encoding="utf-8")
    if pdf:
        (html / "unduh").mkdir()
        (html / "unduh" / "atensi.pdf").write_bytes(b"%PDF-1.7 buku")
    toc = tmp_path / "_toc.yml"
    toc.write_text("format: jb-book\nroot: chapters/a\nparts:\n  - caption: Bab\n    chapters:\n"
                   "      - file: chapters/b\n", encoding="utf-8")
    return html, ["--build", str(html.parent), "--toc", str(toc)]


def test_zip_holds_the_site_and_the_pdf_but_not_itself(tmp_path):
    html, args = built_site(tmp_path)
    (html / "unduh" / "atensi-luring.zip").write_bytes(b"zip lama")
    assert make_zip.main(args) == 0
    names = zipfile.ZipFile(html / "unduh" / "atensi-luring.zip").namelist()
    assert sorted(names) == ["atensi/chapters/a.html", "atensi/chapters/b.html", "atensi/index.html",
                             "atensi/unduh/atensi.pdf"]


def test_zip_pages_link_to_the_pdf_inside_the_zip_not_the_site(tmp_path):
    html, args = built_site(tmp_path)
    assert make_zip.main(args) == 0
    archive = zipfile.ZipFile(html / "unduh" / "atensi-luring.zip")
    intro = archive.read("atensi/chapters/a.html").decode("utf-8")
    assert intro == WHOLE.format('<p><a href="../unduh/atensi.pdf">seluruh buku sebagai satu PDF</a>, '
                                 'atau salinan luring; <a href="b.html">bab b</a></p>')
    assert archive.read("atensi/unduh/atensi.pdf") == b"%PDF-1.7 buku"
    # The site itself is left as it was: online, the links go to the site.
    assert (html / "chapters" / "a.html").read_text(encoding="utf-8") == WHOLE.format(INTRO)


def test_zip_without_a_pdf_keeps_the_pdf_link_at_the_site(tmp_path):
    html, args = built_site(tmp_path, pdf=False)
    assert make_zip.main(args) == 0
    intro = zipfile.ZipFile(html / "unduh" / "atensi-luring.zip").read("atensi/chapters/a.html")
    assert f'href="{SITE}unduh/atensi.pdf"'.encode() in intro
    assert b"atensi-luring.zip" not in intro


@pytest.mark.parametrize("damage, why", [("hilang", "tidak ada"), ("terpotong", "terpotong")])
def test_zip_refuses_a_site_with_a_page_of_the_toc_missing_or_cut_short(tmp_path, capsys, damage, why):
    html, args = built_site(tmp_path)
    page = html / "chapters" / "b.html"
    if damage == "hilang":
        page.unlink()
    else:
        page.write_text(WHOLE.format("b")[:30], encoding="utf-8")
    assert make_zip.main(args) == 1
    err = capsys.readouterr()
    assert f"chapters/b.html ({why})" in err.err and "make clean" in err.err
    assert "Salinan luring siap" not in err.out
    assert not (html / "unduh" / "atensi-luring.zip").exists()


def test_zip_into_a_folder_that_cannot_be_made_says_so_before_work(tmp_path):
    html, args = built_site(tmp_path, pdf=False)
    (html / "unduh").write_text("bukan folder", encoding="utf-8")  # blocks even root
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_zip.py"), *args],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.startswith("make zip: ") and "bukan folder" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_zip_on_a_read_only_build_says_so_before_work(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root menulis ke folder hanya-baca")
    html, args = built_site(tmp_path, pdf=False)
    html.chmod(0o555)
    try:
        proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_zip.py"), *args],
                              capture_output=True, text=True, timeout=120)
    finally:
        html.chmod(0o755)
    assert proc.returncode == 1 and "tidak bisa ditulis" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_two_zips_at_once_each_write_a_whole_zip(tmp_path):
    html, args = built_site(tmp_path)
    rng = random.Random(3)  # incompressible: each zip takes long enough for the two to overlap
    for n in range(40):
        (html / "_static" / f"{n}.bin").parent.mkdir(exist_ok=True)
        (html / "_static" / f"{n}.bin").write_bytes(rng.randbytes(200_000))
    command = [sys.executable, str(ROOT / "scripts" / "make_zip.py"), *args]
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    for run in runs:
        out, err = run.communicate(timeout=300)
        assert run.returncode == 0, err
        assert "Traceback" not in err
    archive = zipfile.ZipFile(html / "unduh" / "atensi-luring.zip")
    assert archive.testzip() is None and len(archive.namelist()) == 44
    assert sorted(p.name for p in (html / "unduh").iterdir()) == ["atensi-luring.zip", "atensi.pdf"]


def test_pdf_into_a_folder_that_cannot_be_made_says_so_before_chromium(tmp_path, monkeypatch, capsys):
    (tmp_path / "index.html").write_text(TINY, encoding="utf-8")
    blocker = tmp_path / "berkas"
    blocker.write_text("bukan folder", encoding="utf-8")
    # Were Chromium looked for first, the message would be about Chromium.
    monkeypatch.setattr(make_pdf, "CHROMIUM", tmp_path / "tidak-ada" / "chromium")
    assert make_pdf.main(["--single", str(tmp_path), "--out", str(blocker / "buku.pdf")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("make pdf: '--out'") and "bukan folder" in err and "Chromium" not in err


def test_the_pdf_does_not_link_to_itself_and_links_the_zip_at_the_site():
    """The single page that make pdf prints (builder singlehtml)."""
    app = SimpleNamespace(builder=SimpleNamespace(name="singlehtml"),
                          config=SimpleNamespace(html_baseurl=SITE))
    context = {"body": '<a href="../unduh/atensi.pdf">PDF</a> <a href="../unduh/atensi-luring.zip">zip</a>'}
    site_meta.link_downloads_to_the_site(app, "index", "page.html", context, None)
    assert context["body"] == f'PDF <a href="{SITE}unduh/atensi-luring.zip">zip</a>'
