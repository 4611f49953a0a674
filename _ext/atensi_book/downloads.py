"""The book's two downloads, and where a link to them points in each copy.

``make pdf`` and ``make zip`` write ``unduh/atensi.pdf`` and
``unduh/atensi-luring.zip`` after the site (Pendahuluan links to both):

- **On the site** a page links to them at the site's address
  (``site.link_downloads_to_the_site``), so the link also works from a plain
  ``make book``; a build without an address keeps the words without a link.
- **In the offline zip** a reader has no network: the PDF travels inside the
  zip (when ``make pdf`` has written it) and the pages link to that copy,
  relative to the page; the link to the zip itself becomes its words.
- **In the PDF** the link to the PDF itself becomes its words; the zip's link
  stays at the site's address (a PDF has no folder to hold a zip).

No Sphinx import: ``scripts/make_zip.py`` loads this file by path.
"""

from __future__ import annotations

import os
import re
from pathlib import PurePosixPath

FOLDER = "unduh"
PDF = "atensi.pdf"
ZIP = "atensi-luring.zip"
DOWNLOADS = (PDF, ZIP)
_NAMES = "|".join(map(re.escape, DOWNLOADS))
# As the chapter writes it (../unduh/atensi.pdf), or once it points at a site.
RELATIVE_HREF = re.compile(r'href="(?:\.\./)*unduh/(?P<name>' + _NAMES + ')"')
ANY_HREF = re.compile(r'href="(?:[^"<>]*/)?unduh/(?P<name>' + _NAMES + ')"')
_LINK = re.compile(r'<a [^>]*?' + ANY_HREF.pattern + r'[^>]*>(?P<text>.*?)</a>', re.S)


def at_site(body: str, url: str) -> str:
    """The chapter's relative download links at the site's address ``url``
    (ending in /); without an address, the words without a link."""
    if url:
        return RELATIVE_HREF.sub(lambda m: f'href="{url}{FOLDER}/{m["name"]}"', body)
    return words_only(body, DOWNLOADS)


def words_only(body: str, names) -> str:
    """Every link to one of the downloads ``names`` replaced by its words."""
    return _LINK.sub(lambda m: m["text"] if m["name"] in names else m[0], body)


def offline(body: str, page: str, inside: set[str]) -> str:
    """A page of the offline copy: a link to a download that travels in the
    copy (``inside``: names under ``unduh/``) points at it relative to
    ``page`` (the page's path in the copy, such as ``chapters/a.html``); a
    link to the zip itself becomes its words; any other stays as it is."""
    folder = PurePosixPath(page).parent.as_posix()

    def local(match: re.Match) -> str:
        name = match["name"]
        if name == ZIP:
            return match["text"]
        if name in inside:
            return _with_href(match, PurePosixPath(os.path.relpath(f"{FOLDER}/{name}", folder)).as_posix())
        return match[0]

    return _LINK.sub(local, body)


def _with_href(match: re.Match, href: str) -> str:
    whole = match[0]
    start, end = match.start("name") - match.start(0), match.end("name") - match.start(0)
    # The href attribute that holds this name: from its opening quote to the closing one.
    open_quote = whole.rfind('href="', 0, start)
    close_quote = whole.index('"', end)
    return whole[:open_quote] + f'href="{href}"' + whole[close_quote + 1:]
