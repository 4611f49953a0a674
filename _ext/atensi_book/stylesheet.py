"""One stylesheet per page, so a phone waits for no chain of requests.

The theme's, the extensions' and the book's stylesheets, joined in their
order into ``_static/buku.<hash>.css`` once every extension has written its
own (``one_stylesheet``); the theme's ``@import`` of ``basic.css`` is
inlined, so nothing waits on a chain of requests. Measured against a dozen
stylesheets (median of 3, interleaved, load average 5 to 9;
scripts/audit_site.md): kerangka 77 -> 80, sintesis 72 -> 86, skala_akar_dk
72 -> 75, gradien 74 -> 68 (within its spread).

``content-visibility: auto`` on the sections after the first screen was
measured with the joined stylesheet and left out: no gain beyond the spread
of the runs (gradien 68 -> 75, sintesis 86 -> 84, skala_akar_dk 75 -> 74,
median of 3 at a load average of 5 to 9), while headings moved (a contained
section does not collapse its heading's margin) and Lighthouse's
accessibility score fell to 96 (axe reads skipped text as low contrast).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from atensi import files

STYLESHEET = re.compile(r'<link (?=[^>]*\brel="stylesheet")[^>]*\bhref="(?P<href>[^"]+)"[^>]*>\s*')
CSS_IMPORT = re.compile(r"""@import\s+(?:url\()?["']?(?P<url>[^"')\s;]+)["']?\)?\s*;""")
CSS_URL = re.compile(r"""url\((?P<quote>["']?)(?P<url>[^)"']+)(?P=quote)\)""")
CSS_CHARSET = re.compile(r'@charset\s+"[^"]*";')


def _css(path: Path, static: Path) -> str:
    """One stylesheet, its @imports inlined and its url()s made relative to ``static``."""
    text = CSS_CHARSET.sub("", path.read_text(encoding="utf-8"))

    def moved(match: re.Match) -> str:
        url = match.group("url")
        if url.startswith(("data:", "http:", "https:", "/", "#")):
            return match.group(0)
        name, rest = re.match(r"([^?#]*)(.*)", url).groups()  # fa-solid-900.woff2?v=1
        where = os.path.relpath(os.path.normpath(path.parent / name), static)
        return f'url("{Path(where).as_posix()}{rest}")'

    imported = []

    def hold(match: re.Match) -> str:  # an imported file's url()s are already moved
        imported.append(_css((path.parent / match.group("url")).resolve(), static))
        return f"/*@import {len(imported) - 1}*/"

    text = CSS_URL.sub(moved, CSS_IMPORT.sub(hold, text))
    return re.sub(r"/\*@import (\d+)\*/", lambda m: imported[int(m.group(1))], text)


def one_stylesheet(outdir: Path):
    """The page rewrite that links one stylesheet instead of a dozen: the
    local stylesheets of a page, in their order, joined into
    ``_static/buku.<hash>.css`` (pages with the same list share one file).
    A phone asks for one file and waits for no @import chain."""
    static = outdir / "_static"
    bundles: dict[tuple[Path, ...], str] = {}

    def rewrite(html: str, page: Path) -> str:
        head_end = html.find("</head>")
        if head_end < 0:
            return html
        head = html[:head_end]
        links = []
        for match in STYLESHEET.finditer(head):
            href = match.group("href")
            target = (page.parent / href.split("?")[0].split("#")[0]).resolve()
            if "://" in href or not target.is_file() or static.resolve() not in target.parents:
                return html  # a stylesheet from elsewhere keeps its place in the cascade
            links.append((match, target))
        if len(links) < 2:
            return html
        key = tuple(target for _, target in links)
        if key not in bundles:
            text = "\n".join(f"/* {t.relative_to(static.resolve()).as_posix()} */\n{_css(t, static.resolve())}"
                             for t in key)
            name = f"buku.{hashlib.sha256(text.encode()).hexdigest()[:10]}.css"
            files.write_text(static / name, text)  # whole or not at all
            bundles[key] = name
        href = Path(os.path.relpath(static / bundles[key], page.parent)).as_posix()
        first = links[0][0]
        out = head[:first.start()] + f'<link rel="stylesheet" href="{href}" />\n'
        last = first.end()
        for match, _ in links[1:]:
            out += head[last:match.start()]
            last = match.end()
        return out + head[last:] + html[head_end:]

    return rewrite
