"""make notebooks on damaged files: each bad file is reported in Indonesian, the rest synced."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import sync_notebooks  # noqa: E402

GOOD = (ROOT / "chapters" / "pendahuluan.md").read_text(encoding="utf-8")


@pytest.fixture
def chapters(tmp_path, monkeypatch):
    folder = tmp_path / "chapters"
    folder.mkdir()
    monkeypatch.setattr(sync_notebooks, "CHAPTERS", folder)
    return folder


def damage(folder: Path, how: str) -> Path:
    path = folder / "b_rusak.md"
    if how == "not utf-8":
        path.write_bytes(GOOD.encode("utf-8")[:200] + b"\xff\xfe rusak\n")
    elif how == "bad front matter":
        path.write_text("---\njupytext: [tidak ditutup\n---\n# Bab\n", encoding="utf-8")
    elif how == "folder":
        path.mkdir()
    elif how == "bad ipynb bytes":
        path.write_text(GOOD, encoding="utf-8")
        path.with_suffix(".ipynb").write_bytes(b"\xff\xfe\x00{")
    return path


@pytest.mark.parametrize("how", ["not utf-8", "bad front matter", "folder", "bad ipynb bytes"])
def test_one_bad_chapter_is_reported_and_the_others_synced(chapters, how, capsys):
    (chapters / "a.md").write_text(GOOD, encoding="utf-8")
    (chapters / "c.md").write_text(GOOD, encoding="utf-8")
    bad = damage(chapters, how)
    assert sync_notebooks.main([]) == 1
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert "Traceback" not in text
    line = next(l for l in text.splitlines() if bad.name in l or bad.stem in l)
    assert line.startswith("RUSAK chapters/b_rusak.") and "Perbaiki" in line, line
    for name in ("a", "c"):  # before and after the bad one in sorted order
        ipynb = chapters / f"{name}.ipynb"
        assert ipynb.read_text(encoding="utf-8") == sync_notebooks.ipynb_text(ipynb.with_suffix(".md"))


@pytest.mark.parametrize("config", ["repository: [tidak ditutup\n", "- sebuah daftar\n",
                                    "repository: teks\n"])
def test_bad_config_is_reported_and_the_notebooks_still_synced(chapters, tmp_path, monkeypatch,
                                                              config, capsys):
    (tmp_path / "_config.yml").write_text(config, encoding="utf-8")
    monkeypatch.setattr(sync_notebooks, "ROOT", tmp_path)
    (chapters / "a.md").write_text(GOOD, encoding="utf-8")
    assert sync_notebooks.main([]) == 1
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert "Traceback" not in text
    assert any(l.startswith("RUSAK _config.yml") for l in text.splitlines()), text
    assert (chapters / "a.md").read_text(encoding="utf-8") == GOOD  # setup cell left as it was
    ipynb = chapters / "a.ipynb"
    assert ipynb.read_text(encoding="utf-8") == sync_notebooks.ipynb_text(chapters / "a.md")


def test_bad_config_in_check_mode_is_one_line_per_file(chapters, tmp_path, monkeypatch, capsys):
    (tmp_path / "_config.yml").write_bytes(b"\xff\xfe")
    monkeypatch.setattr(sync_notebooks, "ROOT", tmp_path)
    (chapters / "a.md").write_text(GOOD, encoding="utf-8")
    damage(chapters, "not utf-8")
    assert sync_notebooks.main(["--check"]) == 1
    out = capsys.readouterr().out
    assert "RUSAK _config.yml" in out and "RUSAK chapters/b_rusak.md" in out
    assert not (chapters / "a.ipynb").exists()


def test_a_chapter_saved_with_a_byte_order_mark_keeps_its_front_matter(chapters, capsys):
    """Some Windows editors save UTF-8 with a BOM; jupytext then misses the front matter."""
    (chapters / "a.md").write_text(GOOD, encoding="utf-8")
    (chapters / "b.md").write_bytes(b"\xef\xbb\xbf" + GOOD.encode("utf-8"))
    assert sync_notebooks.main([]) == 0
    out = capsys.readouterr().out
    assert "chapters/b.md: tanda BOM (U+FEFF) di awal berkas dibuang" in out
    assert (chapters / "b.md").read_bytes() == GOOD.encode("utf-8")
    # The same notebook as the chapter without a BOM: metadata kept, no front matter cell.
    assert (chapters / "b.ipynb").read_text(encoding="utf-8") == (chapters / "a.ipynb").read_text(
        encoding="utf-8")
    assert '"jupytext"' in (chapters / "b.ipynb").read_text(encoding="utf-8")
