"""The explorers in the built book: static twins, their frames as files.

- **Static twins.** ``ATENSI_BOOK=1`` is set in the build process before any
  notebook runs; the kernels that execute the chapters inherit it, so every
  build (make, tests, CI, by hand) embeds the prerendered explorers (see
  ``atensi.widgets``). An ``ATENSI_BOOK=0`` already set is respected, to check
  the opposite.
- **Frames as files.** A chapter's HTML carried every frame as base64 (up to
  0,9 MB). They become PNG files under ``_images/penjelajah/`` (named by their
  content); the explorer shows its first frame from there and fetches the
  rest when the reader first touches it. Only on the site: ``make pdf``
  prints one page and needs just the first frames.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from pathlib import Path

from atensi.widgets import ENV_VAR


def book_mode() -> None:
    os.environ.setdefault(ENV_VAR, "1")


EXPLORER_DATA = re.compile(
    r'(<script type="application/json" class="atensi-data">)(?P<json>.*?)(</script>)', re.S)
FRAMES_DIR = "_images/penjelajah"


def explorer_frames_to_files(html: str, page: Path, outdir: Path) -> str:
    """Each explorer's base64 frames written once as files (named by their
    content), and the page pointing at them instead."""
    def fix(match: re.Match) -> str:
        data = json.loads(match["json"])
        images = data.pop("images", None)
        if not images:
            return match.group(0)
        urls = []
        for encoded in images:
            png = base64.b64decode(encoded)
            target = outdir / FRAMES_DIR / f"{hashlib.sha1(png).hexdigest()[:20]}.png"
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(png)
            urls.append(os.path.relpath(target, page.parent).replace(os.sep, "/"))
            swaps[f"data:{data.get('mime', 'image/png')};base64,{encoded}"] = urls[-1]
        data["urls"] = urls
        payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        payload = payload.replace("</", "<\\/").replace("<!--", "<\\!--")
        return f"{match.group(1)}{payload}{match.group(3)}"

    swaps: dict[str, str] = {}
    html = EXPLORER_DATA.sub(fix, html)
    for data_uri, url in swaps.items():  # the first frame, shown before any script
        html = html.replace(f'src="{data_uri}"', f'src="{url}"')
    return html
