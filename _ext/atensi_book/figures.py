"""The figures a chapter's code draws: Indonesian alt text, and sharp on phones.

MyST-NB writes a cell's PNG output as an image whose alt text is its file
name. The book's figures (``atensi.style.to_png``) carry a description in
the PNG itself (the ``Description`` text chunk: the figure's ``alt`` or its
titles); here it becomes the image's alt text. A PNG without one, or
whose figure has no title, gets "Gambar di bagian «judul bagian»".

Notebook figures arrive drawn at ``PixelRatio`` (2) pixels per screen pixel,
with their screen size as output metadata. After the build each such image
gets a 1x copy next to it, made once by downsampling, and the page offers
both: ``src`` is the 1x copy (what an ordinary screen and an old browser
load), ``srcset`` adds the sharp one for phones with a device pixel ratio of
2 or more. Each copy carries its own ``MinFontPx``, so the phone test reads
the right size from whichever file the browser chose.

Dark figures: while the book is built, a notebook figure's PNG also carries
the same figure drawn with the dark palette (``atensi.style.dark_palette``).
It leaves the PNG as ``name-gelap.png`` (and its 1x copy), and the page gets
a second image beside the first; ``static/gambar-gelap.css`` shows the one
that matches ``<html data-theme>``, so the theme toggle switches them
without reloading, and the hidden one (loaded lazily) is not downloaded.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

from .explorers import FRAMES_DIR


def png_description(path: Path) -> str | None:
    try:
        from PIL import Image

        with Image.open(path) as image:
            return image.text.get("Description") or None
    except (OSError, ValueError):
        return None


def _section_title(node) -> str | None:
    while node is not None:
        if isinstance(node, nodes.section) and node.children and isinstance(node[0], nodes.title):
            return node[0].astext()
        node = node.parent
    return None


class FigureAltText(SphinxPostTransform):
    default_priority = 900

    def run(self):
        for image in self.document.findall(nodes.image):
            if image.get("alt"):
                continue
            uri = image.get("uri", "")
            if not uri.lower().endswith(".png"):
                continue
            path = Path(self.env.srcdir) / uri
            if not path.exists():
                path = Path(uri)
            alt = png_description(path)
            if not alt or alt == "Gambar":  # no title: say where it is
                section = _section_title(image)
                alt = f"Gambar di bagian «{section}»" if section else "Gambar keluaran kode"
            image["alt"] = alt


def _with_class(attrs: str, name: str) -> str:
    found = re.search(r'\bclass="([^"]*)"', attrs)
    if found:
        return attrs.replace(found[0], f'class="{found[1]} {name}"')
    return f'class="{name}" {attrs}'


IMG = re.compile(r"<img (?P<attrs>[^>]*?)\s*/?>")
SRC = re.compile(r'\bsrc="(?P<src>[^"]+\.png)"')
# The screen size MyST-NB writes from the output's metadata: the 1x copy has it.
STYLE_SIZE = re.compile(r'\s*\bstyle="(?:\s*(?:width|height):\s*[\d.]+px;?)+\s*"')
ONE_X = "-1x"


def pixel_ratio(path: Path) -> float:
    """PNG pixels per screen pixel of a figure (1 for any other PNG)."""
    try:
        from PIL import Image

        with Image.open(path) as image:
            return float(image.text.get("PixelRatio", 1))
    except (OSError, ValueError):
        return 1.0


def one_x_copy(path: Path, ratio: float) -> Path:
    """``name-1x.png`` beside ``path``: the figure at one PNG pixel per screen
    pixel, with its description and its ``MinFontPx`` scaled to match."""
    from PIL import Image, PngImagePlugin

    target = path.with_name(f"{path.stem}{ONE_X}.png")
    if target.exists() and target.stat().st_mtime >= path.stat().st_mtime:
        return target
    with Image.open(path) as image:
        text = dict(image.text)
        size = (max(1, round(image.width / ratio)), max(1, round(image.height / ratio)))
        small = image.convert("RGB").resize(size, Image.Resampling.LANCZOS)
    # Like the 2x figure (atensi.style.PNG_COLORS), at most 256 colours: half the
    # bytes of a full-colour copy, and no banding a reader would see.
    small = small.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    info = PngImagePlugin.PngInfo()
    if "Description" in text:
        info.add_text("Description", text["Description"])
    if "MinFontPx" in text:
        info.add_text("MinFontPx", f"{float(text['MinFontPx']) / ratio:.2f}")
    handle, temporary = tempfile.mkstemp(suffix=".png", dir=path.parent)
    os.close(handle)
    try:
        small.save(temporary, format="PNG", optimize=True, pnginfo=info)
        os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return target


DARK_CHUNK = "DarkPNG"  # atensi.style.DARK_CHUNK
DARK = "-gelap"


def take_out_dark_copy(path: Path) -> Path | None:
    """``name-gelap.png`` beside ``path``, from the dark variant the PNG carries
    (``atensi.style.to_png(with_dark=True)``); the chunk leaves the PNG, so the
    reader of the light page downloads only the light picture."""
    import base64

    from PIL import Image, PngImagePlugin

    target = path.with_name(f"{path.stem}{DARK}.png")
    try:
        with Image.open(path) as image:
            text = dict(image.text)
            if DARK_CHUNK not in text:
                return target if target.exists() else None
            image.load()
            light = image.copy()
    except (OSError, ValueError):
        return None
    dark = base64.b64decode(text.pop(DARK_CHUNK))
    _write_atomically(target, dark)
    info = PngImagePlugin.PngInfo()
    for key, value in text.items():
        info.add_text(key, value)
    handle, temporary = tempfile.mkstemp(suffix=".png", dir=path.parent)
    os.close(handle)
    try:
        light.save(temporary, format="PNG", optimize=True, pnginfo=info)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return target


def _write_atomically(target: Path, data: bytes) -> None:
    handle, temporary = tempfile.mkstemp(suffix=target.suffix, dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def with_sharp_images(html: str, page: Path) -> str:
    """Each figure drawn at a pixel ratio above 1: ``src`` its 1x copy, ``srcset``
    both. Pages already rewritten (an incremental build) are left as they are, and
    so are explorer frames: their script swaps ``src`` among the frame files."""
    def fix(match: re.Match) -> str:
        attrs = match["attrs"]
        src = SRC.search(attrs)
        if (not src or "srcset=" in attrs or "_images/" not in src["src"]
                or FRAMES_DIR in src["src"]):
            return match[0]
        sharp = src["src"]
        path = (page.parent / sharp).resolve()
        dark = take_out_dark_copy(path) if path.is_file() else None
        ratio = pixel_ratio(path)
        if ratio <= 1:
            return match[0]
        folder = sharp.rsplit("/", 1)[0] + "/"
        plain = folder + one_x_copy(path, ratio).name
        light = STYLE_SIZE.sub("", attrs.replace(src[0], f'src="{plain}" srcset="{plain} 1x, {sharp} {ratio:g}x"'))
        if dark is None:
            return f"<img {light} />"
        # Both pictures are in the page; the stylesheet shows the one that
        # matches <html data-theme>, so the theme toggle switches them at once,
        # and a hidden lazy picture is never downloaded.
        dark_plain = folder + one_x_copy(dark, ratio).name
        dark_attrs = STYLE_SIZE.sub("", attrs.replace(
            src[0], f'src="{dark_plain}" srcset="{dark_plain} 1x, {folder}{dark.name} {ratio:g}x"'))
        return (f'<img {_with_class(light, "gambar-terang")} />'
                f'<img {_with_class(dark_attrs, "gambar-gelap")} />')

    return IMG.sub(fix, html)
