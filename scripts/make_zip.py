"""`make zip`: the built site as one zip, for readers with a poor connection.

Writes ``_build/html/unduh/atensi-luring.zip``: everything under
``_build/html`` except ``unduh/`` itself, plus the PDF when ``make pdf`` has
written it (``unduh/atensi.pdf``). Unzip it and open ``index.html``:
formulas, fonts and explorers are all inside, and Pendahuluan's download
links point at the copy's own PDF, not at the site (``atensi_book.downloads``).
``--build`` names another ``_build`` folder (``make zip OUTPUT=...``).

Before anything is written: every page of ``_toc.yml`` must be in the site,
whole (a page cut short ends before ``</html>``), and the zip's folder must
be writable. The zip appears whole or not at all, under a temporary name of
its own (two ``make zip`` at once do not share one).
"""

from __future__ import annotations

import importlib.util
import sys
import zipfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))
from atensi import files  # noqa: E402
from atensi.arguments import Parser  # noqa: E402

# Loaded by path: importing the atensi_book package would load Sphinx.
_spec = importlib.util.spec_from_file_location("atensi_book_downloads",
                                               ROOT / "_ext" / "atensi_book" / "downloads.py")
downloads = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(downloads)

BUILD = ROOT / "_build"
TOC = ROOT / "_toc.yml"
ZIP_NAME = downloads.ZIP
SHOWN = 5  # missing pages named in the message; the rest are counted


def fail(message: str) -> int:
    print(f"make zip: {message}", file=sys.stderr)
    return 1


def main(argv=None) -> int:
    parser = Parser(prog="make zip", description="Salin situs yang sudah dibangun menjadi satu zip.",
                    usage_line="python scripts/make_zip.py [--build FOLDER] [--toc BERKAS]")
    parser.add_argument("--build", type=Path, default=BUILD, help="folder _build (bawaan: _build di akar repo)")
    parser.add_argument("--toc", type=Path, default=TOC,
                        help="daftar halaman buku yang harus ada di situs (bawaan: _toc.yml di akar repo)")
    args = parser.parse_args(argv)
    if not args.build.is_dir():
        return fail(f"--build '{args.build}' tidak ada atau bukan folder. Sebutkan folder _build "
                    "hasil make book, atau jalankan dulu: make book")
    html = args.build / "html"
    return zip_site(html, html / downloads.FOLDER / ZIP_NAME, toc=args.toc)


def toc_pages(toc: Path) -> list[str]:
    """Every page named in ``toc`` ('chapters/name', no suffix), in its order."""
    if not toc.is_file():
        raise ValueError("tidak ada atau bukan berkas")
    try:
        data = yaml.safe_load(toc.read_text(encoding="utf-8"))
    except UnicodeDecodeError as err:
        raise ValueError(f"bukan teks UTF-8 (byte ke-{err.start} tidak sah)") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" di baris {mark.line + 1}" if mark is not None else ""
        raise ValueError(f"bukan YAML yang sah{where}") from None
    except OSError as err:
        raise ValueError(f"tidak bisa dibaca ({err.strerror})") from None
    pages: list[str] = []

    def walk(node):
        if isinstance(node, dict):
            for key in ("root", "file"):
                if isinstance(node.get(key), str):
                    pages.append(node[key])
            for value in node.values():
                if isinstance(value, (list, dict)):
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(data)
    if not pages:  # nothing to check would zip any half-built site
        raise ValueError("tidak menyebut satu halaman pun (root: dan file:)")
    return pages


def damaged_pages(html: Path, pages: list[str]) -> list[str]:
    """The pages of ``pages`` missing from ``html`` or cut short, with why."""
    found = []
    for name in pages:
        page = html / f"{name}.html"
        if not page.is_file():
            found.append(f"{name}.html (tidak ada)")
        elif not page.read_bytes().rstrip().endswith(b"</html>"):
            found.append(f"{name}.html (terpotong)")
    return found


def zip_site(html: Path, archive_path: Path, toc: Path = TOC) -> int:
    """Zip the site under ``html`` into ``archive_path`` (see the module docstring)."""
    if not (html / "index.html").is_file():
        return fail(f"--build: {html}/index.html tidak ada, jadi situsnya belum dibangun. "
                    "Jalankan dulu: make book")
    try:
        pages = toc_pages(toc)
    except ValueError as err:
        return fail(f"--toc: daftar halaman '{toc}' {err}. Perbaiki berkas itu (atau sebutkan "
                    "_toc.yml buku), lalu ulangi make zip.")
    damaged = damaged_pages(html, pages)
    if damaged:
        named = ", ".join(damaged[:SHOWN]) + (f", dan {len(damaged) - SHOWN} lagi" if len(damaged) > SHOWN else "")
        return fail(f"situs di {html} belum lengkap: {len(damaged)} dari {len(pages)} halaman "
                    f"_toc.yml rusak: {named}. Bangun ulang dengan make book (bila tetap rusak: "
                    "make clean, lalu make book), lalu ulangi make zip. Zip tidak ditulis.")
    try:
        files.check_output_path(archive_path, name="--build", suffix=".zip")
    except ValueError as err:
        return fail(f"{err}")
    folder = archive_path.parent
    pdf = folder / downloads.PDF
    inside = {downloads.PDF} if pdf.is_file() else set()
    listed = sorted(p for p in html.rglob("*") if p.is_file() and folder not in p.parents)
    listed += [pdf] if inside else []
    try:
        with files.replacing(archive_path) as out, \
                zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
            for path in listed:
                name = path.relative_to(html).as_posix()
                if path.suffix == ".html":
                    text = path.read_text(encoding="utf-8")
                    archive.writestr(f"atensi/{name}", downloads.offline(text, name, inside))
                else:
                    archive.write(path, f"atensi/{name}")
    except OSError as err:
        return fail(f"{err}")
    size = f"{archive_path.stat().st_size / 2**20:.1f}".replace(".", ",")  # Indonesian decimal comma
    print(f"Salinan luring siap: {archive_path} ({len(listed)} berkas, {size} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
