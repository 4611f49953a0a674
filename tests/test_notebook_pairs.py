"""Each chapter .md has its committed .ipynb twin (what Colab and Binder open),
in sync and without outputs, and starts with the setup cell that makes
``import atensi`` work on Colab while doing nothing on a prepared machine."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jupytext
import pytest
import yaml

from conftest import ROOT, toc_pages

sys.path.insert(0, str(ROOT / "scripts"))
import sync_notebooks  # noqa: E402

PAGES = toc_pages()


def test_every_chapter_file_is_in_the_toc():
    # only_build_toc_files silently drops a page that the toc forgets.
    on_disk = sorted(str(p.relative_to(ROOT).with_suffix("")) for p in (ROOT / "chapters").glob("*.md"))
    assert on_disk == sorted(PAGES)
    assert len(PAGES) == len(set(PAGES)) == 12


def test_toc_order_and_titles():
    titles = []
    for page in PAGES:
        markdown = [c.source for c in jupytext.read(ROOT / f"{page}.md").cells if c.cell_type == "markdown"]
        headings = [line for text in markdown for line in text.splitlines() if line.startswith("# ")]
        titles.append(headings[0][2:].strip())
    assert titles == [
        "Pendahuluan",
        "CUDA dalam 10 Menit",
        "Matriks Skor",
        "Mengapa Membagi dengan √d_k",
        "Mask Kausal",
        "Softmax",
        "Jumlah Tertimbang Vektor *Value*",
        "Menyatukan Langkah: Satu *Forward Pass*",
        "Gradien: Atensi Mundur",
        "Melatih Model Kecil",
        "Menjalankan Buku Ini",
        "Glosarium",
    ]
    for title in titles:
        assert "$" not in title and "\\" not in title, f"jangan ada matematika di judul: {title}"


@pytest.mark.parametrize("page", PAGES)
def test_ipynb_pair_is_in_sync(page):
    md = ROOT / f"{page}.md"
    ipynb = md.with_suffix(".ipynb")
    assert ipynb.is_file(), f"{ipynb.name} belum ada: jalankan make notebooks"
    assert ipynb.read_text(encoding="utf-8") == sync_notebooks.ipynb_text(md), (
        f"{ipynb.name} tidak sama dengan {md.name}: jalankan make notebooks"
    )
    notebook = json.loads(ipynb.read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None
    assert notebook["metadata"]["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("page", PAGES)
def test_chapter_starts_with_the_setup_cell(page):
    md = ROOT / f"{page}.md"
    notebook = jupytext.read(md)
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code_cells, f"{md.name} tidak punya sel kode"
    first = code_cells[0]
    tags = first.metadata.get("tags", [])
    assert sync_notebooks.SETUP_TAG in tags and "remove-cell" in tags
    assert first.source == sync_notebooks.setup_source(), "jalankan make notebooks"
    setup_cells = [c for c in code_cells if sync_notebooks.SETUP_TAG in c.metadata.get("tags", [])]
    assert len(setup_cells) == 1


def test_setup_cell_uses_the_configured_repository_url():
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    url = config["repository"]["url"]
    assert url.startswith("https://github.com/")
    assert f'repo_url="{url.rstrip("/")}"' in sync_notebooks.setup_source()


def test_sync_check_reports_a_stale_pair(tmp_path, monkeypatch):
    chapters = tmp_path / "chapters"
    chapters.mkdir()
    source = (ROOT / "chapters" / "pendahuluan.md").read_text(encoding="utf-8")
    (chapters / "a.md").write_text(source, encoding="utf-8")
    monkeypatch.setattr(sync_notebooks, "CHAPTERS", chapters)
    problems = sync_notebooks.sync(check=True)
    assert any("a.ipynb" in p for p in problems)
    assert not (chapters / "a.ipynb").exists()
    sync_notebooks.sync()
    assert sync_notebooks.sync(check=True) == []


# --- What the setup cell does, without network: subprocess calls are recorded --


def run_setup_cell(monkeypatch, cwd: Path, hidden: set[str]):
    """Execute the setup cell in ``cwd`` as if the modules in ``hidden`` were missing."""
    import importlib.util
    import subprocess

    calls = []
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name in hidden else real_find_spec(name, *a)
    )
    monkeypatch.setattr(subprocess, "run", lambda cmd, **kw: calls.append(cmd))
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "myst_nb", raising=False)
    monkeypatch.chdir(cwd)
    path_before = list(sys.path)
    exec(sync_notebooks.setup_source(), {})
    return calls, sys.path[: len(sys.path) - len(path_before)]


def test_setup_cell_is_a_no_op_when_atensi_is_installed(monkeypatch):
    calls, added = run_setup_cell(monkeypatch, ROOT / "chapters", hidden=set())
    assert calls == [] and added == []


def test_setup_cell_uses_the_checkout_when_not_installed(monkeypatch):
    calls, added = run_setup_cell(monkeypatch, ROOT / "chapters", hidden={"atensi", "myst_nb"})
    assert calls == []
    assert added == [str(ROOT / "src")]
    from myst_nb import glue  # the stand-in: shows the value, needs no Sphinx

    glue("x", 1, display=False)


def test_setup_cell_clones_and_installs_on_colab(monkeypatch, tmp_path):
    calls, added = run_setup_cell(monkeypatch, tmp_path, hidden={"atensi"})
    target = str(tmp_path / "atensi")
    url = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["repository"]["url"]
    assert calls[0] == ["git", "clone", "--depth", "1", url.rstrip("/"), target]
    assert calls[1][1:] == ["-m", "pip", "install", "-q", "-e", target]
    assert added == [str(Path(target) / "src")]
