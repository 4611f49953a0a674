"""`make zip`: the built site as one zip, for readers with a poor connection.

Writes ``_build/html/unduh/atensi-luring.zip`` (everything under
``_build/html`` except ``unduh/`` itself). Unzip it and open
``index.html``: MathJax, fonts and explorers are all inside.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
ZIP = HTML / "unduh" / "atensi-luring.zip"


def main() -> int:
    if not (HTML / "index.html").is_file():
        print(f"make zip: {HTML}/index.html tidak ada. Jalankan dulu: make book", file=sys.stderr)
        return 1
    ZIP.parent.mkdir(exist_ok=True)
    tmp = ZIP.with_suffix(".tmp")
    files = sorted(p for p in HTML.rglob("*") if p.is_file() and ZIP.parent not in p.parents)
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for path in files:
            archive.write(path, Path("atensi") / path.relative_to(HTML))
    tmp.replace(ZIP)
    print(f"Salinan luring siap: {ZIP} ({len(files)} berkas, {ZIP.stat().st_size / 2**20:.1f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
