"""Icon fonts cut to the book's icons (``cut_icon_fonts``).

The theme's Font Awesome fonts hold about 2.000 icons in 275 KB (woff2); the
pages draw 30 of them (the icons named by an ``fa-*`` class in a page or a
script, and those the theme's CSS names itself, such as the admonition
icons), which fit in 6 KB. The phone asks for the icon fonts with the
stylesheet, at the highest priority, and on a slow connection the first
paint waited for them in some runs and not in others, so scores jumped
between two values. Measured on a quiet machine (median of 5, interleaved;
scripts/audit_site.md): gradien 78 (97 78 80 78 76) -> 92 (92 91 93 91 93).
"""

from __future__ import annotations

import re
from pathlib import Path

from . import fonts

SRC = re.compile(r'\bsrc="(?P<src>[^"]+)"')
# Font Awesome's own rules, ".fa-rocket:before{content:"\f135"}" (several
# selectors may share one), and the classes that name an icon in a page.
ICON_RULE = re.compile(r'(?P<selectors>(?:\.fa-[a-z0-9-]+::?before\s*,?\s*)+)'
                       r'\{\s*content\s*:\s*"(?P<content>[^"]*)"\s*;?\s*\}')
ICON_SELECTOR = re.compile(r"\.fa-(?P<name>[a-z0-9-]+)::?before")
ICON_CLASS = re.compile(r"\bfa-(?P<name>[a-z0-9-]+)")
CSS_ESCAPE = re.compile(r"\\(?P<hex>[0-9a-fA-F]{1,6})\s?")
PRIVATE_USE = range(0xE000, 0xF900)  # where Font Awesome puts its icons
ICON_FONTS = "vendor/fontawesome/webfonts"


def _unescaped(css: str) -> str:
    return CSS_ESCAPE.sub(lambda m: chr(int(m.group("hex"), 16)), css)


def icons_in_use(static: Path, texts) -> set[int]:
    """The icon code points the book draws: those of the ``fa-*`` classes
    named in ``texts`` (pages and scripts), and every private-use character
    the stylesheets under ``static`` name outside Font Awesome's own rules
    (the theme's admonition and navigation icons)."""
    css = "\n".join(path.read_text(encoding="utf-8", errors="replace")
                    for path in sorted(static.rglob("*.css")))
    by_name: dict[str, str] = {}
    for rule in ICON_RULE.finditer(css):
        for selector in ICON_SELECTOR.finditer(rule.group("selectors")):
            by_name[selector.group("name")] = _unescaped(rule.group("content"))
    used = {ord(c) for c in _unescaped(ICON_RULE.sub("", css)) if ord(c) in PRIVATE_USE}
    for text in texts:
        for match in ICON_CLASS.finditer(text):
            used |= {ord(c) for c in by_name.get(match.group("name"), "")}
    return used


def cut_icon_fonts(outdir: Path) -> set[int]:
    """Cut the theme's icon fonts in the built site down to the icons in use
    (see the module docstring); returns those code points."""
    static = outdir / "_static"
    icon_fonts = sorted((static / ICON_FONTS).glob("*.woff2")) + sorted((static / ICON_FONTS).glob("*.ttf"))
    if not icon_fonts:
        return set()
    texts = {}
    for page in sorted(outdir.rglob("*.html")):
        texts[page] = page.read_text(encoding="utf-8", errors="replace")
    # The scripts a page loads, which may add icons; not every script under
    # _static (the theme's own Font Awesome script names all of them).
    for page, text in list(texts.items()):
        for match in SRC.finditer(text):
            script = (page.parent / match.group("src").split("?")[0]).resolve()
            if script.suffix == ".js" and script.is_file() and script not in texts:
                texts[script] = script.read_text(encoding="utf-8", errors="replace")
    used = icons_in_use(static, texts.values())
    for font in icon_fonts:
        fonts.cut_font(font, font, used)
    return used
