"""MathJax's MathML as the browser draws it (_ext/atensi_book/formulas.py):
the TeX letter styles, table alignment and operator spacing that MathML Core
does not read from MathJax's attributes. No build: a few formulas through
the same conversion the build uses."""

from __future__ import annotations

import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "_ext"))
from atensi_book import formulas  # noqa: E402

MML = ' xmlns="http://www.w3.org/1998/Math/MathML"'


def core(body: str, display: bool = False) -> str:
    block = ' display="block"' if display else ""
    return formulas.to_core(f"<math{MML}{block}>\n  {body}\n</math>")


def test_letter_styles_become_unicode_letters():
    assert core('<mi mathvariant="double-struck">R</mi>') == "<math><mi>ℝ</mi></math>"
    assert core('<mi mathvariant="bold">x</mi><mi mathvariant="bold-italic">&#x3B1;</mi>') == (
        "<math><mi>𝐱</mi><mi>𝜶</mi></math>")
    assert core('<mi mathvariant="script">L</mi><mi mathvariant="italic">h</mi>') == (
        "<math><mi>ℒ</mi><mi>ℎ</mi></math>")
    # Upright single letters stay letters, which MathML Core keeps upright itself.
    assert core('<mi mathvariant="normal">d</mi>') == '<math><mi mathvariant="normal">d</mi></math>'
    # Words keep their letters (a screen reader reads them as words).
    assert core('<mtext mathvariant="italic">head</mtext>') == (
        '<math><mtext style="font-style: italic">head</mtext></math>')
    with pytest.raises(KeyError):
        core('<mi mathvariant="tailed">x</mi>')


def test_table_alignment_and_spacing_are_css_on_each_cell():
    out = core('<mtable columnalign="right left" columnspacing="0em" rowspacing="3pt">'
               "<mtr><mtd><mi>a</mi></mtd><mtd><mo>=</mo><mi>b</mi></mtd></mtr>"
               "<mtr><mtd><mi>c</mi></mtd><mtd><mo>=</mo><mi>d</mi></mtd></mtr></mtable>", display=True)
    assert out.startswith('<math display="block"><mtable>')
    assert out.count('columnalign="right" style="text-align: -webkit-right') == 2
    assert 'columnalign="left" style="text-align: -webkit-left; padding: 3pt 0 0 0em"' in out


def test_spacing_and_brackets_as_in_tex():
    # No space around an operator in a superscript, nor around {/}.
    out = core("<msup><mi>e</mi><mrow><mi>a</mi><mo>&#x2212;</mo><mi>b</mi></mrow></msup>"
               '<mrow data-mjx-texclass="ORD"><mo>/</mo></mrow>')
    assert out.count('lspace="0" rspace="0"') == 2 and "data-mjx" not in out
    # \\bigl( is drawn at the text size: a stretched bracket is as wide as its widest form.
    out = core('<mrow data-mjx-texclass="OPEN"><mo minsize="1.2em" maxsize="1.2em">(</mo></mrow>')
    assert 'stretchy="false"' in out and "minsize" not in out
    # \\log x: a thin space after the name; \\log(x): none.
    assert 'rspace="0.1667em"' in core("<mi>log</mi><mo>&#x2061;</mo><mi>x</mi>")
    assert "rspace" not in core('<mi>log</mi><mo>&#x2061;</mo><mo stretchy="false">(</mo>')
    # s_j \log_2 e: a thin space before the name too, none after "=".
    out = core('<msub><mi>s</mi><mi>j</mi></msub><msub><mi>log</mi><mn>2</mn></msub>'
               '<mo>&#x2061;</mo><mi>e</mi><mo>=</mo><mi>sin</mi><mo>&#x2061;</mo><mi>x</mi>')
    assert out.count('<mspace width="0.1667em"></mspace>') == 1
    assert out.index("<mspace") < out.index("<mi>log</mi>")


def test_the_font_covers_the_automatic_italic():
    chars = formulas.drawn_characters(core("<mi>x</mi><mi>max</mi><mo>+</mo>"))
    assert {"x", "𝑥", "m", "a", "+"} <= chars and "√" not in chars
    # A square root draws the radical sign from the font, though no text names it.
    assert "√" in formulas.drawn_characters(core("<msqrt><mi>d</mi></msqrt>"))


def test_without_the_math_font_the_build_says_which_package(monkeypatch, tmp_path):
    from sphinx.errors import ExtensionError

    monkeypatch.setattr(formulas, "FONT_SOURCES", (tmp_path / "tidak-ada.otf",))
    monkeypatch.delenv("ATENSI_MATH_FONT", raising=False)
    with pytest.raises(ExtensionError, match="apt-get install fonts-lmodern"):
        formulas.font_source()


def test_the_math_font_is_read_from_where_the_system_package_script_looks(monkeypatch, tmp_path):
    from sphinx.errors import ExtensionError

    font = tmp_path / "latinmodern-math.otf"
    monkeypatch.setenv("ATENSI_MATH_FONT", str(font))
    with pytest.raises(ExtensionError, match=str(font)):
        formulas.font_source()
    font.write_bytes(b"")
    assert formulas.font_source() == font


@pytest.mark.parametrize("reason, said", [
    ("Undefined control sequence \\tidakada", "perintah TeX \\tidakada tidak dikenal"),
    ("Missing close brace", "kurung kurawal tutup '}' kurang"),
    ("Double exponent: use braces to clarify", "dua pangkat berturut-turut; pakai kurung kurawal, "
                                               "misalnya {x^a}^b"),
    ("Something MathJax says one day", "MathJax: Something MathJax says one day"),
])
def test_mathjax_reasons_are_said_in_indonesian(reason, said):
    assert formulas.in_indonesian(reason) == said


@pytest.mark.parametrize("text, earlier", [
    (None, []),
    ('[["x^2", false], ["y", true]]', [["x^2", False], ["y", True]]),
    ('[["x^2", fal', None),  # cut short by a killed build
    ('{"x": 1}', None),
    ('[["x^2"]]', None),
])
def test_the_formula_list_of_earlier_builds_is_read_or_found_torn(tmp_path, text, earlier):
    seen = tmp_path / "rumus-buku.json"
    if text is not None:
        seen.write_text(text, encoding="utf-8")
    assert formulas.earlier_formulas(seen) == earlier
