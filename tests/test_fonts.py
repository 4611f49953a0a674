"""atensi_book.fonts: the font cutter writes a whole woff2 or refuses in Indonesian."""

from __future__ import annotations

import os
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "_ext"))
from atensi_book import fonts, formulas  # noqa: E402


@pytest.fixture
def math_font():
    try:
        return formulas.font_source()
    except Exception:
        pytest.skip("fonts-lmodern tidak terpasang")


def test_cuts_to_the_characters_asked_into_a_folder_not_made_yet(math_font, tmp_path):
    from fontTools.ttLib import TTFont

    target = tmp_path / "baru" / "rumus.woff2"
    fonts.cut_font(math_font, target, {ord("x"), ord("+")})
    assert target.read_bytes()[:4] == b"wOF2"
    cmap = TTFont(target).getBestCmap()
    assert {ord("x"), ord("+")} <= set(cmap) and len(cmap) < 20
    assert [p.name for p in target.parent.iterdir()] == ["rumus.woff2"]  # no temporary file left


@pytest.mark.parametrize("case, words", [
    ("hilang", "tidak ada"),
    ("kosong", "kosong (0 byte)"),
    ("rusak", "rusak, tidak bisa dibaca fontTools"),
])
def test_a_missing_empty_or_damaged_font_is_named_with_what_to_do(tmp_path, case, words):
    source = tmp_path / "font.otf"
    if case == "kosong":
        source.write_bytes(b"")
    elif case == "rusak":
        source.write_bytes(b"OTTO" + os.urandom(4000))
    target = tmp_path / "keluar.woff2"
    with pytest.raises((ValueError, FileNotFoundError)) as err:
        fonts.cut_font(source, target, {ord("x")})
    assert str(source) in str(err.value) and words in str(err.value)
    assert "fonts-lmodern" in str(err.value)
    assert not target.exists()


def test_a_target_that_cannot_be_written_is_refused_before_reading_the_font(tmp_path, math_font):
    blocker = tmp_path / "berkas"
    blocker.write_text("bukan folder", encoding="utf-8")
    with pytest.raises(ValueError, match="Font yang dipangkas tidak bisa ditulis: .*bukan folder"):
        fonts.cut_font(math_font, blocker / "rumus.woff2", {ord("x")})


def test_a_read_only_target_folder_is_refused(tmp_path, math_font):
    if os.geteuid() == 0:
        pytest.skip("root menulis ke folder hanya-baca")
    folder = tmp_path / "hanya-baca"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        with pytest.raises(ValueError, match="tidak bisa ditulis"):
            fonts.cut_font(math_font, folder / "rumus.woff2", {ord("x")})
    finally:
        folder.chmod(0o755)
