"""atensi.files: a failed write leaves the previous file whole."""

import os

import numpy as np
import pytest

from atensi import files
from atensi.model import Config, TinyGPT


def test_replacing_swaps_the_whole_file_and_leaves_no_temp(tmp_path):
    path = tmp_path / "sub" / "hasil.json"
    files.write_text(path, "lama")
    files.write_text(path, "baru")
    assert path.read_text(encoding="utf-8") == "baru"
    assert sorted(p.name for p in path.parent.iterdir()) == ["hasil.json"]
    assert oct(path.stat().st_mode & 0o777) == oct(0o666 & ~_umask())
    path.chmod(0o600)  # a private file stays private
    files.write_text(path, "lagi")
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_write_that_fails_half_way_keeps_the_old_file(tmp_path):
    path = tmp_path / "hasil.bin"
    path.write_bytes(b"versi lama")
    with pytest.raises(KeyboardInterrupt):
        with files.replacing(path) as f:
            f.write(b"separuh")
            raise KeyboardInterrupt
    assert path.read_bytes() == b"versi lama"
    assert [p.name for p in tmp_path.iterdir()] == ["hasil.bin"]


def test_save_that_fails_half_way_keeps_the_previous_weights(tmp_path, monkeypatch):
    model = TinyGPT(Config(vocab=5, T=4, d_model=8, n_head=2, n_layer=1, d_mlp=16), "abcde")
    path = model.save(tmp_path / "bobot.npz")
    before = path.read_bytes()

    def half(f, **data):
        f.write(b"PK\x03\x04 terpotong")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "savez_compressed", half)
    with pytest.raises(OSError):
        model.save(path)
    assert path.read_bytes() == before
    TinyGPT.load(path)
    assert [p.name for p in tmp_path.iterdir()] == ["bobot.npz"]


def _under_a_file(folder):
    (folder / "berkas").write_text("x")
    return folder / "berkas" / "hasil.npz"


@pytest.mark.parametrize("make, words", [(lambda d: d, "folder"), (_under_a_file, "bukan folder")])
def test_output_paths_that_cannot_be_written_are_refused(tmp_path, make, words):
    with pytest.raises(ValueError, match=f"'--out'.*{words}"):
        files.check_output_path(make(tmp_path), "--out", ".npz")


def test_output_path_in_a_folder_still_to_be_made_is_fine(tmp_path):
    assert files.check_output_path(tmp_path / "a" / "b.npz") == tmp_path / "a" / "b.npz"
