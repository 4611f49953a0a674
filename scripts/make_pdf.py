"""`make pdf`: the whole book as one PDF, printed by Chromium.

The Makefile first builds the book as a single page (``_build/singlehtml``,
with the same execution cache as ``make book``); this script serves that page
on 127.0.0.1, opens it in the distribution's Chromium through Playwright,
and prints it to ``_build/pdf/atensi.pdf`` (and a copy in
``_build/html/unduh/`` when the site is built, for the link in Pendahuluan).
``--build`` names another ``_build`` folder (``make pdf OUTPUT=...``).
Nothing is fetched from the network.

Print rules added here: code wraps instead of running off the page, the
sidebars and buttons are hidden, the static explorers show their first frame.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))
from atensi import files  # noqa: E402
from atensi.arguments import Parser  # noqa: E402

BUILD = ROOT / "_build"
CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
MIN_PAGES = 20  # the book is far longer; fewer means something did not render

PRINT_CSS = """
@page { size: A4; margin: 16mm 14mm; }
.bd-header, .bd-sidebar-primary, .bd-sidebar-secondary, .header-article,
.prev-next-area, .bd-footer, .bd-footer-article, .copybtn, .toggle-details__summary,
.atensi-controls, .headerlink { display: none !important; }
.bd-main, .bd-content, .bd-article-container, .bd-page-width { max-width: none !important; }
pre, code, .highlight pre { white-space: pre-wrap !important; word-break: break-word; }
details { display: block; } details > * { display: block !important; }
img { max-width: 100% !important; break-inside: avoid; }
"""


def entry_page(index: Path) -> str:
    """The single page, as a file at the top of the build.

    index.html only redirects to the book's root page (chapters/...), whose
    links the singlehtml builder writes relative to the top folder: a copy
    placed there finds its styles, images and the math font.
    """
    found = re.search(r'url=([^"\s]+)"', index.read_text(encoding="utf-8"))
    if not found:
        return "index.html"
    copy = index.parent / "_buku_utuh.html"
    shutil.copy2(index.parent / found.group(1), copy)
    return copy.name


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def fail(message: str) -> int:
    print(f"make pdf: {message}", file=sys.stderr)
    return 1


def main(argv=None) -> int:
    parser = Parser(prog="make pdf", description="Cetak buku halaman tunggal menjadi PDF.",
                    usage_line="python scripts/make_pdf.py [--build FOLDER] [--single FOLDER] "
                               "[--out BERKAS.pdf]")
    parser.add_argument("--build", type=Path, default=BUILD,
                        help="folder _build (bawaan: _build di akar repo)")
    parser.add_argument("--single", type=Path, help="folder build singlehtml (bawaan: BUILD/singlehtml)")
    parser.add_argument("--out", type=Path, help="berkas PDF yang ditulis (bawaan: BUILD/pdf/atensi.pdf, "
                        "dan salinannya di BUILD/html/unduh/ bila situsnya sudah dibangun)")
    args = parser.parse_args(argv)
    single = args.single or args.build / "singlehtml"
    if not (single / "index.html").is_file():
        given = f"--single '{args.single}'" if args.single else f"--build '{args.build}'"
        return fail(f"{given}: {single / 'index.html'} tidak ada, jadi halaman tunggalnya belum "
                    "dibangun. Jalankan lewat 'make pdf' (membangun halaman tunggal dulu).")
    if args.out is not None:
        return make_pdf(single, args.out)
    return make_pdf(single, args.build / "pdf" / "atensi.pdf", site=args.build / "html")


def make_pdf(single: Path, pdf: Path, site: Path | None = None) -> int:
    """Print ``single``/index.html to ``pdf``; copy it into ``site``/unduh/ when the site is built."""
    index = single / "index.html"
    if not index.is_file():
        return fail(f"{index} tidak ada. Jalankan lewat 'make pdf' (membangun halaman tunggal dulu).")
    # Before Chromium starts: a PDF that cannot be written is said first.
    try:
        files.check_output_path(pdf, name="--out", suffix=".pdf")
        if site is not None and (site / "index.html").is_file():
            files.check_output_path(site / "unduh" / pdf.name, name="--build", suffix=".pdf")
    except ValueError as err:
        return fail(f"{err}")
    if not CHROMIUM.exists():
        return fail(
            f"Chromium tidak ada di {CHROMIUM}. Pasang dari distribusi: "
            "sudo apt-get install chromium (Debian/Ubuntu), lalu ulangi 'make pdf'."
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return fail("paket Python 'playwright' belum terpasang: .venv/bin/pip install -r requirements-dev.txt")

    handler = functools.partial(_Quiet, directory=str(single))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        pdf.parent.mkdir(parents=True, exist_ok=True)
        # A name of its own: two runs at once do not print into one file.
        handle, name = tempfile.mkstemp(dir=pdf.parent, prefix=f".{pdf.name}.", suffix=".tmp.pdf")
        os.close(handle)
    except OSError as err:
        server.shutdown()
        return fail(f"{files.write_problem(pdf, err)}")
    tmp = Path(name)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
            page = browser.new_page(viewport={"width": 1000, "height": 1400})
            page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(base) else r.abort())
            page.goto(base + entry_page(index), wait_until="load")
            # Open every solution so the answers are in the PDF too.
            page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
            # Formulas are MathML in the page (_ext/atensi_book/formulas.py): only their font to wait for.
            page.evaluate("() => document.fonts.ready.then(() => true)")
            page.add_style_tag(content=PRINT_CSS)
            page.emulate_media(media="print")
            page.pdf(path=str(tmp), format="A4", print_background=True,
                     margin={"top": "16mm", "bottom": "16mm", "left": "14mm", "right": "14mm"})
            browser.close()
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        server.shutdown()
    data = tmp.read_bytes()
    pages = data.count(b"/Type /Page") - data.count(b"/Type /Pages")
    if pages < MIN_PAGES:
        tmp.unlink()
        return fail(f"PDF hanya {pages} halaman (harus ≥ {MIN_PAGES}); tidak disimpan.")
    os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide the PDF from a web server
    tmp.replace(pdf)
    if site is not None and (site / "index.html").is_file():
        try:
            files.write_bytes(site / "unduh" / pdf.name, data)
        except OSError as err:
            return fail(f"{err}")
    size = f"{len(data) / 2**20:.1f}".replace(".", ",")  # Indonesian decimal comma
    print(f"PDF siap: {pdf} ({pages} halaman, {size} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
