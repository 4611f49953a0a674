"""Numbers for Indonesian prose, and glue inside and outside the book."""

from __future__ import annotations

import sys

import IPython.display
import pytest

from atensi.formatting import glue, id_float, id_int


@pytest.mark.parametrize("n, text", [(1048576, "1.048.576"), (0, "0"), (-1200, "-1.200")])
def test_id_int_groups_thousands_with_dots(n, text):
    assert id_int(n) == text


@pytest.mark.parametrize("x, digits, text", [(0.25, 2, "0,25"), (12345.678, 2, "12.345,68"), (8, 0, "8")])
def test_id_float_uses_a_decimal_comma(x, digits, text):
    assert id_float(x, digits) == text


def test_glue_outside_the_book_shows_the_value(monkeypatch):
    shown = []
    monkeypatch.setitem(sys.modules, "myst_nb", None)  # as on Colab: no MyST-NB
    monkeypatch.setattr(IPython.display, "display", shown.append)
    glue("skor", 8)
    glue("tersembunyi", 9, display=False)
    assert shown == [8]


def test_glue_in_the_book_hands_the_value_to_myst_nb(monkeypatch):
    import myst_nb

    seen = []
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display=True: seen.append((name, value, display)))
    glue("skor", 8, display=False)
    assert seen == [("skor", 8, False)]
