"""`make zip`: the built site as one zip, for readers with a poor connection.

Writes ``_build/html/unduh/atensi-luring.zip`` (everything under
``_build/html`` except ``unduh/`` itself). Unzip it and open
``index.html``: formulas, fonts and explorers are all inside. ``--build``
names another ``_build`` folder (``make zip OUTPUT=...``).
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "_build"
ZIP_NAME = "atensi-luring.zip"


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="Salin situs yang sudah dibangun menjadi satu zip.")
    parser.add_argument("--build", type=Path, default=BUILD, help="folder _build (bawaan: _build di akar repo)")
    args = parser.parse_args(argv)
    html = args.build / "html"
    return zip_site(html, html / "unduh" / ZIP_NAME)


def zip_site(html: Path, archive_path: Path) -> int:
    """Zip everything under ``html`` except the folder of ``archive_path`` itself."""
    if not (html / "index.html").is_file():
        print(f"make zip: {html}/index.html tidak ada. Jalankan dulu: make book", file=sys.stderr)
        return 1
    archive_path.parent.mkdir(exist_ok=True)
    tmp = archive_path.with_suffix(".tmp")
    files = sorted(p for p in html.rglob("*") if p.is_file() and archive_path.parent not in p.parents)
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for path in files:
            archive.write(path, Path("atensi") / path.relative_to(html))
    tmp.replace(archive_path)
    size = f"{archive_path.stat().st_size / 2**20:.1f}".replace(".", ",")  # Indonesian decimal comma
    print(f"Salinan luring siap: {archive_path} ({len(files)} berkas, {size} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
