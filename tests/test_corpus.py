"""python -m atensi.corpus: where the frozen corpus is written."""

from __future__ import annotations

import os

import pytest

from atensi import corpus


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="/dev/full tidak ada")
def test_writing_to_a_full_device_is_one_indonesian_line_not_a_traceback(capsys):
    assert corpus.main(["--out", "/dev/full"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("python -m atensi.corpus: Berkas '/dev/full' tidak bisa ditulis: disk penuh")
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_tilde_in_out_means_the_home_folder(tmp_path, monkeypatch, capsys):
    home, work = tmp_path / "rumah", tmp_path / "kerja"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    assert corpus.main(["--out", "~/korpus.txt"]) == 0
    assert (home / "korpus.txt").is_file() and not (work / "~").exists()
    assert corpus.load("~/korpus.txt").path == home / "korpus.txt"
