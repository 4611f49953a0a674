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


def _shown(monkeypatch, module, attribute, call):
    """(args, kwargs) of every display() call made by ``call``."""
    seen = []
    monkeypatch.setattr(module, attribute, lambda *a, **k: seen.append((a, k)))
    call()
    return seen


@pytest.mark.parametrize("value", [8, "0,25", IPython.display.Markdown("*miring*")])
@pytest.mark.parametrize("display", [True, False])
def test_glue_emits_what_myst_nb_glue_emits(monkeypatch, value, display):
    import myst_nb.ext.glue as myst_glue

    ours = _shown(monkeypatch, IPython.display, "display", lambda: glue("skor", value, display=display))
    theirs = _shown(monkeypatch, myst_glue, "ipy_display",
                    lambda: myst_glue.glue("skor", value, display=display))
    assert ours == theirs and len(ours) == 1


def test_myst_nb_reads_the_glued_value_back(monkeypatch):
    import nbformat
    from myst_nb.ext.glue import extract_glue_data_cell

    (args, kwargs), = _shown(monkeypatch, IPython.display, "display",
                             lambda: glue("skor", "0,25", display=False))
    output = nbformat.v4.new_output("display_data", data=args[0], metadata=kwargs["metadata"])
    cell = nbformat.v4.new_code_cell("glue(...)", outputs=[output])
    found = dict(extract_glue_data_cell(cell))
    assert found["skor"]["data"] == {"text/plain": "'0,25'"}


def test_glue_outside_the_book_shows_only_displayed_values(monkeypatch):
    calls = _shown(monkeypatch, IPython.display, "display", lambda: (glue("skor", 8), glue("tersembunyi", 9, display=False)))
    shown, hidden = (args[0] for args, _ in calls)
    assert shown == {"text/plain": "8"}  # what Jupyter or Colab renders
    assert all(kind.startswith("application/papermill.record/") for kind in hidden)  # rendered by none


def test_glue_without_ipython_prints_displayed_values(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "IPython.core.formatters", None)
    glue("skor", 8)
    glue("tersembunyi", 9, display=False)
    assert capsys.readouterr().out == "8\n"


@pytest.mark.slow
def test_glue_does_not_import_nbformat():
    """nbformat pulls in jsonschema, seconds of start-up in every chapter."""
    import subprocess

    code = ("import sys\nfrom atensi.formatting import glue\nglue('a', 1, display=False)\n"
            "print('nbformat' in sys.modules, 'jsonschema' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["False", "False"], out.stderr
