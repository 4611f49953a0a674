"""Figures that do not make the text jump, and that wait until they are near.

Images get their real ``width`` and ``height``, so the text does not jump
when a figure arrives, and those after the first load lazily.
"""

from __future__ import annotations

import re
from pathlib import Path

IMG = re.compile(r"<img (?P<attrs>[^>]*?)\s*/?>")
SRC = re.compile(r'\bsrc="(?P<src>[^"]+)"')


def png_size(path: Path) -> tuple[int, int] | None:
    try:
        from PIL import Image

        with Image.open(path) as image:
            return image.size
    except (OSError, ValueError):
        return None


def sized_images(html: str, page: Path) -> str:
    """The page's images with width/height from the files, lazy after the first."""
    seen = 0

    def fix(match: re.Match) -> str:
        nonlocal seen
        attrs = match.group("attrs")
        src = SRC.search(attrs)
        if not src or "_images/" not in src.group("src") or " width=" in f" {attrs}":
            return match.group(0)
        size = png_size((page.parent / src.group("src")).resolve())
        if size is None:
            return match.group(0)
        seen += 1
        extra = f'width="{size[0]}" height="{size[1]}" style="height: auto"'
        if seen > 1:
            extra += ' loading="lazy"'
        return f"<img {attrs} {extra} />"

    return IMG.sub(fix, html)
