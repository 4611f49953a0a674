"""Each chapter .md has its committed .ipynb twin (what Colab and Binder open),
in sync and without outputs, and starts with the setup cell that makes
``import atensi`` work on Colab while doing nothing on a prepared machine."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import jupytext
import pytest

from conftest import ROOT, toc_pages

sys.path.insert(0, str(ROOT / "scripts"))
import sync_notebooks  # noqa: E402

PAGES = toc_pages()


def test_every_chapter_file_is_in_the_toc():
    # only_build_toc_files silently drops a page that the toc forgets.
    on_disk = sorted(str(p.relative_to(ROOT).with_suffix("")) for p in (ROOT / "chapters").glob("*.md"))
    assert on_disk == sorted(PAGES)
    assert len(PAGES) == len(set(PAGES)) >= 13


# The book's reading order: these pages, in this order (new pages may come between).
READING_ORDER = [
    "Pendahuluan",
    "CUDA dalam 10 Menit",
    "Matriks Skor",
    "Mengapa Membagi dengan √d_k",
    "Mask Kausal",
    "Softmax",
    "Jumlah Tertimbang Vektor *Value*",
    "Posisi",
    "Menyatukan Langkah: Satu *Forward Pass*",
    "Gradien: Atensi Mundur",
    "Melatih Model Kecil",
    "Menjalankan Buku Ini",
    "Glosarium",
]


@pytest.mark.slow
def test_toc_order_and_titles():
    titles = []
    for page in PAGES:
        markdown = [c.source for c in jupytext.read(ROOT / f"{page}.md").cells if c.cell_type == "markdown"]
        headings = [line for text in markdown for line in text.splitlines() if line.startswith("# ")]
        titles.append(headings[0][2:].strip())
    assert titles[0] == READING_ORDER[0] and titles[-1] == READING_ORDER[-1]
    assert [t for t in titles if t in READING_ORDER] == READING_ORDER
    assert len(titles) == len(set(titles)), "dua halaman berjudul sama"
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


@pytest.mark.slow
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


def test_setup_cell_uses_the_repository_the_book_is_made_for(monkeypatch):
    monkeypatch.setenv("ATENSI_REPOSITORY", "budi/buku-atensi")
    monkeypatch.setenv("ATENSI_BRANCH", "terbit")
    assert ('_repositori = "git+https://github.com/budi/buku-atensi@terbit"'
            in sync_notebooks.setup_source())


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


def test_inserting_a_cell_leaves_the_other_cell_ids_alone(tmp_path):
    source = (ROOT / "chapters" / "pendahuluan.md").read_text(encoding="utf-8")
    before = tmp_path / "sebelum.md"
    before.write_text(source, encoding="utf-8")
    first = source.index("```{code-cell}")
    cell = "```{code-cell} ipython3\nprint('sel baru')\n```\n\n"
    after = tmp_path / "sesudah.md"
    after.write_text(source[:first] + cell + source[first:], encoding="utf-8")
    old, new = ([c["id"] for c in json.loads(sync_notebooks.ipynb_text(p))["cells"]]
                for p in (before, after))
    assert len(new) == len(old) + 1 and len(set(new)) == len(new)
    added = [i for i in new if i not in old]
    assert len(added) == 1 and [i for i in new if i != added[0]] == old


def test_cells_with_the_same_text_get_distinct_stable_ids(tmp_path):
    page = tmp_path / "bab.md"
    cell = "```{code-cell} ipython3\nx = 1\n```\n\n"
    source = (ROOT / "chapters" / "pendahuluan.md").read_text(encoding="utf-8")
    header = source[:source.index("\n---\n") + 5]  # the chapters' MyST front matter
    page.write_text(header + "\n# Bab\n\n" + cell + "Teks.\n\n" + cell, encoding="utf-8")
    ids = [c["id"] for c in json.loads(sync_notebooks.ipynb_text(page))["cells"]]
    assert len(set(ids)) == len(ids) == 4
    assert ids[3] == ids[1] + "-2"
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{1,64}", i) for i in ids)  # nbformat's rule


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
    monkeypatch.chdir(cwd)
    exec(sync_notebooks.setup_source(), {})
    return calls


def test_setup_cell_is_a_no_op_when_atensi_is_installed(monkeypatch):
    assert run_setup_cell(monkeypatch, ROOT / "chapters", hidden=set()) == []


def test_setup_cell_installs_the_checkout_it_is_opened_in(monkeypatch):
    calls = run_setup_cell(monkeypatch, ROOT / "chapters", hidden={"atensi"})
    assert calls == [[sys.executable, "-m", "pip", "install", "-q", ".."]]


def test_setup_cell_installs_from_the_repository_on_colab(monkeypatch, tmp_path):
    monkeypatch.setenv("ATENSI_REPOSITORY", "budi/buku-atensi")
    calls = run_setup_cell(monkeypatch, tmp_path, hidden={"atensi"})
    assert calls == [[sys.executable, "-m", "pip", "install", "-q",
                      "git+https://github.com/budi/buku-atensi@main"]]


def test_setup_cell_without_a_repository_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.delenv("ATENSI_REPOSITORY", raising=False)
    monkeypatch.setattr(sync_notebooks, "_repository_config", lambda: {"url": "", "branch": "main"})
    with pytest.raises(RuntimeError, match="pip install git\\+https://github.com/PEMILIK/REPO"):
        run_setup_cell(monkeypatch, tmp_path, hidden={"atensi"})


def test_setup_cell_is_short():
    assert len(sync_notebooks.setup_source().splitlines()) <= 10


# --- A reader's own edits to the .ipynb are never lost ---------------------------


@pytest.fixture
def edited_pair(tmp_path, monkeypatch):
    """chapters/a.md and an a.ipynb that a reader edited in Jupyter (a new cell, outputs)."""
    import os

    chapters = tmp_path / "chapters"
    chapters.mkdir()
    md = chapters / "a.md"
    md.write_text((ROOT / "chapters" / "pendahuluan.md").read_text(encoding="utf-8"),
                  encoding="utf-8")
    monkeypatch.setattr(sync_notebooks, "CHAPTERS", chapters)
    notebook = json.loads(sync_notebooks.ipynb_text(md))
    notebook["cells"].append({"cell_type": "code", "execution_count": None, "id": "milik-pembaca",
                              "metadata": {}, "outputs": [], "source": ["x = 'catatan saya'"]})
    ipynb = md.with_suffix(".ipynb")
    ipynb.write_text(json.dumps(notebook), encoding="utf-8")
    os.utime(md, (1_000_000, 1_000_000))  # the .md is older: the reader saved later
    return md, ipynb, notebook


def _write(path, notebook):
    path.write_text(json.dumps(notebook), encoding="utf-8")


def test_edited_notebook_newer_than_its_md_is_refused(edited_pair, capsys):
    md, ipynb, _ = edited_pair
    before = ipynb.read_text(encoding="utf-8")
    assert sync_notebooks.main([]) == 1
    out = capsys.readouterr().out
    assert ipynb.read_text(encoding="utf-8") == before
    assert "DITOLAK chapters/a.ipynb" in out and "jupytext --sync chapters/a.ipynb" in out
    assert not ipynb.with_name("a.ipynb.bak").exists()


def test_notebook_with_outputs_is_refused_even_when_the_md_is_newer(edited_pair):
    import os

    md, ipynb, notebook = edited_pair
    notebook["cells"][-1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["1"]}]
    notebook["cells"][-1]["execution_count"] = 1
    _write(ipynb, notebook)
    os.utime(md)  # now
    before = ipynb.read_text(encoding="utf-8")
    problems = sync_notebooks.sync()
    assert any(p.startswith("DITOLAK") and "keluaran sel" in p for p in problems)
    assert ipynb.read_text(encoding="utf-8") == before


def test_force_overwrites_and_keeps_a_backup(edited_pair, capsys):
    md, ipynb, _ = edited_pair
    before = ipynb.read_text(encoding="utf-8")
    assert sync_notebooks.main(["--force"]) == 0
    assert ipynb.read_text(encoding="utf-8") == sync_notebooks.ipynb_text(md)
    assert ipynb.with_name("a.ipynb.bak").read_text(encoding="utf-8") == before
    assert "a.ipynb.bak" in capsys.readouterr().out


def test_stale_notebook_unknown_to_git_is_replaced_with_a_backup(edited_pair):
    import os

    md, ipynb, _ = edited_pair
    os.utime(ipynb, (1_000, 1_000))  # older than the .md: the .md was edited since
    before = ipynb.read_text(encoding="utf-8")
    problems = sync_notebooks.sync()
    assert not any(p.startswith("DITOLAK") for p in problems)
    assert ipynb.read_text(encoding="utf-8") == sync_notebooks.ipynb_text(md)
    assert ipynb.with_name("a.ipynb.bak").read_text(encoding="utf-8") == before
    assert any("disimpan sebagai chapters/a.ipynb.bak" in p for p in problems)


def test_check_changes_nothing_and_bad_arguments_are_one_line(edited_pair, capsys):
    md, ipynb, _ = edited_pair
    before = ipynb.read_text(encoding="utf-8")
    assert sync_notebooks.main(["--check"]) == 1
    assert ipynb.read_text(encoding="utf-8") == before
    with pytest.raises(SystemExit) as info:
        sync_notebooks.main(["--check", "--force"])
    assert info.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
