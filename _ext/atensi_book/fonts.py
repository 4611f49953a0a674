"""Fonts cut down to the characters the book draws, written as woff2.

Both web fonts the pages load are far larger than what the book uses: the
math font (``formulas``) and the theme's Font Awesome icons (``icons``).
A phone on a slow connection waits for them before it draws the text that
uses them, so each is cut to the characters in use when the book is built.
"""

from __future__ import annotations

from pathlib import Path

from atensi import files

REINSTALL = ("Pasang ulang paket yang membawanya (fonts-lmodern untuk font rumus; "
             "pip install -r requirements.txt untuk font ikon tema), lalu bangun ulang.")


def cut_font(source: Path, target: Path, unicodes: set[int]) -> None:
    """Write ``source`` cut down to ``unicodes`` (with the alternate, larger
    and stretched forms its layout tables give them) to ``target``, as woff2
    for a ``.woff2`` target and as the source's own format otherwise. The
    file appears whole or not at all (a temporary file, then a rename), and
    ``source`` may be ``target``. A missing, empty or damaged font, or a
    target that cannot be written, is refused in Indonesian before any work."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    source, target = Path(source), Path(target)
    if not source.is_file():
        raise FileNotFoundError(f"Font '{source}' tidak ada (atau bukan berkas). {REINSTALL}")
    if source.stat().st_size == 0:
        raise ValueError(f"Font '{source}' kosong (0 byte). {REINSTALL}")
    try:
        files.check_output_path(target, name="font", suffix=target.suffix)
    except ValueError as err:
        raise ValueError(f"Font yang dipangkas tidak bisa ditulis: {err}") from None
    options = subset.Options()
    options.layout_features = ["*"]  # ssty (primes in scripts) and the other math forms
    options.flavor = "woff2" if target.suffix == ".woff2" else None
    try:
        font = TTFont(source)
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=unicodes)
        subsetter.subset(font)
    except Exception as err:  # fontTools raises many kinds on a damaged file
        raise ValueError(f"Font '{source}' rusak, tidak bisa dibaca fontTools "
                         f"({type(err).__name__}: {err}). {REINSTALL}") from None
    font.flavor = options.flavor
    # replacing: the old font or the new one, never half of one; made readable
    # to a web server (a new file gets the usual permissions, an old one keeps its own).
    with files.replacing(target) as out:
        font.save(out)
