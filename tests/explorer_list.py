"""Every explorer, read from the library's one list (``atensi.explorers.MODULES``),
with the chapters that teach with it: those whose code calls ``MODULE.explorer(``.

The browser tests (static twins, the built book) and the JupyterLab test take
their explorers and chapters from here, so a new explorer is tested by all of
them once it is in ``MODULES`` and a chapter calls it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from atensi import explorers
from conftest import ROOT, toc_pages

CALL = re.compile(r"^\s*(\w+)\.explorer\(", re.M)
IMPORT = re.compile(r"^\s*from atensi\.explorers import ([\w, ]+)$", re.M)


@dataclass(frozen=True)
class Entry:
    module: str  # key of atensi.explorers.MODULES, e.g. "sharpness"
    name: str  # what its faces carry: data-explorer="NAME", class atensi-live-NAME
    twin: str  # "frames" or "page"
    chapters: tuple[str, ...]  # "chapters/x", in reading order

    def load(self):
        return explorers.load(self.module)


def chapter_text(page: str) -> str:
    return (ROOT / f"{page}.md").read_text(encoding="utf-8")


def called_in(page: str) -> set[str]:
    """The explorer modules that a chapter's code calls."""
    return set(CALL.findall(chapter_text(page))) & set(explorers.MODULES)


def imported_in(page: str) -> set[str]:
    """Every name a chapter imports from atensi.explorers."""
    return {name.strip() for names in IMPORT.findall(chapter_text(page)) for name in names.split(",")}


def _entries() -> list[Entry]:
    pages = toc_pages()
    calls = {page: called_in(page) for page in pages}
    return [Entry(module, explorers.load(module).NAME, twin,
                  tuple(page for page in pages if module in calls[page]))
            for module, twin in explorers.MODULES.items()]


ENTRIES = _entries()
# Where each explorer teaches, by the name its faces carry.
HOMES = {e.name: list(e.chapters) for e in ENTRIES}
FRAMES = [e for e in ENTRIES if e.twin == "frames"]
# Every chapter with an explorer, in reading order, with the explorers it holds.
CHAPTERS = {page: [e for e in ENTRIES if page in e.chapters]
            for page in toc_pages() if any(page in e.chapters for e in ENTRIES)}
