"""The explorers in the built book: static twins, their frames as files.

- **Static twins.** ``ATENSI_BOOK=1`` is set in the build process before any
  notebook runs; the kernels that execute the chapters inherit it, so every
  build (make, tests, CI, by hand) embeds the prerendered explorers (see
  ``atensi.explorers.framework``). An ``ATENSI_BOOK=0`` already set is
  respected, to check the opposite.
- **Frames as files.** A notebook's output carries every frame of an explorer
  (up to 0,9 MB of base64 pictures and readouts). On the site they leave the
  page: each picture becomes a PNG under ``_images/penjelajah/`` and the frame
  table (readouts, outlines, picture addresses) one script file beside them,
  both named by their content. The page keeps its controls, the first
  picture and the first readout; ``static.js`` inserts ``<script src>`` for
  the frame table when the reader first touches the explorer (a script
  element loads from ``file://`` and from the offline zip, a fetch would not).
  The weights of a model that an explorer runs in the page
  (``script.atensi-weights``) leave the same way, as one script file.
  Only on the site: ``make pdf`` prints one page and needs just the first frames.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from pathlib import Path

from atensi.explorers.framework import ENV_VAR, json_for_script


def book_mode() -> None:
    os.environ.setdefault(ENV_VAR, "1")


EXPLORER_DATA = re.compile(
    r'(<script type="application/json" class="atensi-data">)(?P<json>.*?)(</script>)', re.S)
FRAMES_DIR = "_images/penjelajah"
# The weights of a model that an explorer runs in the page (atensi.explorers.dia).
MODEL_WEIGHTS = re.compile(
    r'(<script type="application/json" class="atensi-weights">)(?P<json>.*?)(</script>)', re.S)


def _write_once(target: Path, content: bytes) -> None:
    """Files are named by their content: one that exists is already right."""
    if target.exists():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_bytes(content)
    os.replace(tmp, target)


def frame_script(name: str, frames: dict) -> str:
    """The frame table as a script that registers itself under ``name``."""
    return ("(window.atensiExplorerData = window.atensiExplorerData || {})"
            f"[{json.dumps(name)}] = {json_for_script(frames)};\n")


def explorer_frames_to_files(html: str, page: Path, outdir: Path) -> str:
    """Each explorer's pictures and frame table written once as files, and the page
    pointing at them instead."""
    def relative(target: Path) -> str:
        return os.path.relpath(target, page.parent).replace(os.sep, "/")

    def fix(match: re.Match) -> str:
        data = json.loads(match["json"])
        images, frames = data.pop("images", None), data.pop("frames", None)
        if not images or not frames:
            return match.group(0)
        urls = []
        for encoded in images:
            png = base64.b64decode(encoded)
            target = outdir / FRAMES_DIR / f"{hashlib.sha1(png).hexdigest()[:20]}.png"
            _write_once(target, png)
            urls.append(relative(target))
            swaps[f"data:{data.get('mime', 'image/png')};base64,{encoded}"] = urls[-1]
        table = {"frames": frames, "urls": urls}
        name = hashlib.sha1(json_for_script(table).encode("utf-8")).hexdigest()[:20]
        target = outdir / FRAMES_DIR / f"{name}.js"
        _write_once(target, frame_script(name, table).encode("utf-8"))
        data.update(id=name, src=relative(target))
        return f"{match.group(1)}{json_for_script(data)}{match.group(3)}"

    def weights(match: re.Match) -> str:
        table = json.loads(match["json"])
        if "params" not in table:
            return match.group(0)
        name = hashlib.sha1(json_for_script(table).encode("utf-8")).hexdigest()[:20]
        target = outdir / FRAMES_DIR / f"{name}.js"
        _write_once(target, frame_script(name, table).encode("utf-8"))
        holder = json_for_script({"id": name, "src": relative(target)})
        return f"{match.group(1)}{holder}{match.group(3)}"

    swaps: dict[str, str] = {}
    html = MODEL_WEIGHTS.sub(weights, html)
    html = EXPLORER_DATA.sub(fix, html)
    for data_uri, url in swaps.items():  # the first picture, shown before any script
        html = html.replace(f'src="{data_uri}"', f'src="{url}"')
    return html
