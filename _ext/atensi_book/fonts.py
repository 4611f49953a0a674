"""Fonts cut down to the characters the book draws, written as woff2.

Both web fonts the pages load are far larger than what the book uses: the
math font (``formulas``) and the theme's Font Awesome icons (``pages``).
A phone on a slow connection waits for them before it draws the text that
uses them, so each is cut to the characters in use when the book is built.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def cut_font(source: Path, target: Path, unicodes: set[int]) -> None:
    """Write ``source`` cut down to ``unicodes`` (with the alternate, larger
    and stretched forms its layout tables give them) to ``target``, as woff2
    for a ``.woff2`` target and as the source's own format otherwise. The
    file appears whole or not at all (a temporary file, then a rename), and
    ``source`` may be ``target``."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    options = subset.Options()
    options.layout_features = ["*"]  # ssty (primes in scripts) and the other math forms
    options.flavor = "woff2" if target.suffix == ".woff2" else None
    font = TTFont(source)
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=unicodes)
    subsetter.subset(font)
    font.flavor = options.flavor
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(handle)
    try:
        font.save(temporary)
        os.chmod(temporary, 0o644)  # mkstemp's 0600 would hide the font from a web server
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
