"""Indonesian alt text for every figure a chapter's code draws.

MyST-NB writes a cell's PNG output as an image whose alt text is its file
name. The book's figures (``atensi.plots.to_png``) carry a description in
the PNG itself (the ``Description`` text chunk: the figure's ``alt`` or its
titles); here it becomes the image's alt text. A PNG without one, or
whose figure has no title, gets "Gambar di bagian «judul bagian»".
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform


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
