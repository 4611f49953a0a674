"""atensi.weight_file: the weights-file format, read without trusting the archive."""

from __future__ import annotations

import os
import struct

import numpy as np
import pytest

from atensi import weight_file
from atensi.model import Config, TinyGPT


def _model():
    return TinyGPT(Config(vocab=5, T=4, d_model=8, n_head=2, n_layer=1, d_mlp=16), "abcde")


def _rewrite_entries(path, *, flags: int = 0, method: int | None = None) -> None:
    """Set general-purpose flag bits and the compression method of every member, in the
    local headers and the central directory (what an encrypting zip tool writes)."""
    data = bytearray(path.read_bytes())
    for signature, flag_at, method_at in ((b"PK\x03\x04", 6, 8), (b"PK\x01\x02", 8, 10)):
        at = data.find(signature)
        while at >= 0:
            old = struct.unpack_from("<H", data, at + flag_at)[0]
            struct.pack_into("<H", data, at + flag_at, old | flags)
            if method is not None:
                struct.pack_into("<H", data, at + method_at, method)
            at = data.find(signature, at + 4)
    path.write_bytes(bytes(data))


def test_an_encrypted_member_is_refused_in_indonesian(tmp_path):
    path = _model().save(tmp_path / "bobot.npz")
    _rewrite_entries(path, flags=0x1)
    with pytest.raises(ValueError) as info:
        TinyGPT.load(path)
    msg = str(info.value)
    assert f"Berkas bobot '{path}' berisi anggota terenkripsi" in msg and "kata sandi" in msg
    assert "is encrypted" not in msg and "password" not in msg


def test_an_aes_compressed_member_is_refused_in_indonesian(tmp_path):
    path = _model().save(tmp_path / "bobot.npz")
    _rewrite_entries(path, flags=0x1, method=99)
    with pytest.raises(ValueError, match="berisi anggota terenkripsi"):
        TinyGPT.load(path)
    path = _model().save(tmp_path / "lain.npz")
    _rewrite_entries(path, method=99)  # the method alone, as some tools leave it
    with pytest.raises(ValueError, match="terenkripsi"):
        TinyGPT.load(path)
    path = _model().save(tmp_path / "ppmd.npz")
    _rewrite_entries(path, method=98)  # PPMd: another method zipfile cannot read
    with pytest.raises(ValueError, match="dikompresi dengan metode nomor 98, yang tidak bisa dibaca"):
        TinyGPT.load(path)


def test_a_tilde_in_the_path_means_the_home_folder(tmp_path, monkeypatch):
    home = tmp_path / "rumah"
    home.mkdir()
    work = tmp_path / "kerja"
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    model = _model()
    written = model.save("~/m.npz")
    assert written == home / "m.npz" and written.is_file()
    assert not (work / "~").exists()
    back = TinyGPT.load("~/m.npz")
    assert back.path == home / "m.npz" and back.chars == model.chars


def test_read_gives_what_write_wrote(tmp_path):
    model = _model()
    path = weight_file.write(tmp_path / "b.npz", params=model.params, config={"vocab": 5},
                             chars="abcde", curve={"latih": [2.0, 1.0]}, info={"langkah": 2})
    shapes = {k: v.shape for k, v in model.params.items()}
    contents = weight_file.read(path, lambda config: (config, shapes))
    assert contents.config == {"vocab": 5} and contents.chars == "abcde"
    assert contents.info == {"langkah": 2} and contents.curve["latih"].tolist() == [2.0, 1.0]
    assert all(np.array_equal(contents.params[k], v) for k, v in model.params.items())


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="/dev/full tidak ada")
def test_a_device_is_refused_by_name_for_reading_and_a_full_one_for_writing():
    with pytest.raises(ValueError, match="'/dev/null' bukan berkas biasa"):
        TinyGPT.load("/dev/null")
    with pytest.raises(OSError) as info:
        _model().save("/dev/full")
    assert str(info.value).startswith("Berkas '/dev/full' tidak bisa ditulis: disk penuh")
