"""scripts/sync_notebooks.py never overwrites an earlier backup of a reader's edits."""

import importlib.util
import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("sync_notebooks", ROOT / "scripts" / "sync_notebooks.py")
sync_notebooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sync_notebooks)


@pytest.fixture
def pair(tmp_path, monkeypatch):
    chapters = tmp_path / "chapters"
    chapters.mkdir()
    md = chapters / "a.md"
    md.write_text((ROOT / "chapters" / "pendahuluan.md").read_text(encoding="utf-8"),
                  encoding="utf-8")
    monkeypatch.setattr(sync_notebooks, "CHAPTERS", chapters)
    return md, md.with_suffix(".ipynb")


def _reader_edit(md, ipynb, note):
    notebook = json.loads(sync_notebooks.ipynb_text(md))
    notebook["cells"].append({"cell_type": "code", "execution_count": None, "id": "milik-pembaca",
                              "metadata": {}, "outputs": [], "source": [note]})
    ipynb.write_text(json.dumps(notebook), encoding="utf-8")
    os.utime(ipynb, (1_000, 1_000))  # older than the .md: replaced without --force
    return ipynb.read_text(encoding="utf-8")


def test_a_second_edit_gets_its_own_numbered_backup(pair):
    md, ipynb = pair
    first = _reader_edit(md, ipynb, "x = 'suntingan pertama'")
    sync_notebooks.sync()
    second = _reader_edit(md, ipynb, "x = 'suntingan kedua'")
    problems = sync_notebooks.sync()
    assert ipynb.with_name("a.ipynb.bak").read_text(encoding="utf-8") == first
    assert ipynb.with_name("a.ipynb.bak.2").read_text(encoding="utf-8") == second
    assert any("disimpan sebagai chapters/a.ipynb.bak.2" in p for p in problems)
    third = _reader_edit(md, ipynb, "x = 'suntingan kedua'")  # the same edit again
    assert third == second
    problems = sync_notebooks.sync()
    assert any("disimpan sebagai chapters/a.ipynb.bak.2" in p for p in problems)
    assert not ipynb.with_name("a.ipynb.bak.3").exists()
