"""atensi.files: a failed write leaves the previous file whole."""

import errno
import os
import signal
import stat
import subprocess
import sys
import tempfile
import threading

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


# ---- what is already at the path ------------------------------------------------------------


def _character_device(folder):
    """A copy of /dev/null made with mknod (needs root, as in Colab and Docker)."""
    dev = folder / "null"
    try:
        os.mknod(dev, 0o666 | stat.S_IFCHR, os.stat("/dev/null").st_rdev)
    except (PermissionError, OSError) as err:
        pytest.skip(f"mknod tidak diizinkan di sini ({err})")
    return dev


def test_a_character_device_is_written_into_and_stays_a_device(tmp_path):
    dev = _character_device(tmp_path)
    before = os.lstat(dev)
    files.write_text(dev, "dibuang")
    after = os.lstat(dev)
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    assert after.st_mode == before.st_mode
    assert [p.name for p in tmp_path.iterdir()] == ["null"]


def test_a_symlink_to_a_device_keeps_both(tmp_path):
    dev = _character_device(tmp_path)
    link = tmp_path / "keluaran.npz"
    link.symlink_to(dev)
    model = TinyGPT(Config(vocab=5, T=4, d_model=8, n_head=2, n_layer=1, d_mlp=16), "abcde")
    model.save(link)
    assert link.is_symlink() and stat.S_ISCHR(os.lstat(dev).st_mode)


def test_a_fifo_is_written_into_not_replaced(tmp_path):
    fifo = tmp_path / "pipa"
    os.mkfifo(fifo, 0o600)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    files.write_text(fifo, "isi")
    reader.join(10)
    assert got == [b"isi"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert stat.S_IMODE(os.lstat(fifo).st_mode) == 0o600


def test_a_fifo_nobody_reads_is_refused_in_indonesian_instead_of_hanging(tmp_path):
    fifo = tmp_path / "pipa"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="FIFO yang tidak sedang dibaca") as err:
        files.write_text(fifo, "isi")
    assert str(fifo) in str(err.value)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_symlink_is_followed_and_its_target_replaced(tmp_path):
    real = tmp_path / "asli.json"
    real.write_text("lama")
    real.chmod(0o640)
    link = tmp_path / "tautan.json"
    link.symlink_to(real.name)
    files.write_text(link, "baru")
    assert link.is_symlink() and os.readlink(link) == real.name
    assert real.read_text() == "baru"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["asli.json", "tautan.json"]


def test_a_dangling_symlink_gets_its_target_written(tmp_path):
    link = tmp_path / "tautan.json"
    link.symlink_to("belum_ada.json")
    files.write_text(link, "baru")
    assert link.is_symlink() and (tmp_path / "belum_ada.json").read_text() == "baru"


def test_a_symlink_loop_is_refused_in_indonesian(tmp_path):
    loop = tmp_path / "putar"
    loop.symlink_to(loop.name)
    with pytest.raises(OSError, match="berputar"):
        files.write_text(loop, "x")
    assert loop.is_symlink()
    with pytest.raises(ValueError, match="'--out'.*berputar"):
        files.check_output_path(loop)


def test_a_folder_behind_a_symlink_is_refused(tmp_path):
    (tmp_path / "folder").mkdir()
    link = tmp_path / "tautan"
    link.symlink_to("folder")
    with pytest.raises(OSError, match="adalah folder"):
        files.write_text(link, "x")
    with pytest.raises(ValueError, match="'--out' menunjuk ke folder"):
        files.check_output_path(link)


# ---- names, disks, folders ------------------------------------------------------------------


def test_a_name_close_to_the_limit_is_written(tmp_path):
    """The temporary name is longer than the target's; a legal name must still work."""
    for length in (242, 250, 255):
        path = tmp_path / ("a" * (length - 5) + ".json")
        files.write_text(path, "isi")
        files.write_text(path, "lagi")
        assert path.read_text() == "lagi"
        path.unlink()
    path = tmp_path / ("é" * 122 + ".json")  # 249 bytes: the temporary's is cut mid-character
    assert files.check_output_path(path) == path
    files.write_text(path, "isi")
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_a_name_over_the_limit_is_refused_in_indonesian(tmp_path):
    path = tmp_path / ("b" * 300)
    with pytest.raises(ValueError, match="'--out'.*300 byte.*lebih pendek"):
        files.check_output_path(path)
    with pytest.raises(OSError, match="terlalu panjang"):
        files.write_text(path, "x")


def test_a_full_disk_is_reported_with_the_path_and_the_old_file_kept(tmp_path, monkeypatch):
    path = tmp_path / "hasil.json"
    path.write_text("lama")

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(files.WriteError, match="disk penuh") as err:
        files.write_text(path, "baru")
    assert str(path) in str(err.value) and "tidak diubah" in str(err.value)
    assert path.read_text() == "lama"
    assert [p.name for p in tmp_path.iterdir()] == ["hasil.json"]


def test_dev_full_is_a_device_that_reports_a_full_disk():
    if not os.path.exists("/dev/full"):
        pytest.skip("tidak ada /dev/full")
    with pytest.raises(files.WriteError, match="'/dev/full'.*disk penuh"):
        files.write_text("/dev/full", "x" * 100000)


def test_a_read_only_folder_is_refused_before_work(tmp_path, monkeypatch):
    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    with pytest.raises(ValueError, match="'--out'.*hanya-baca"):
        files.check_output_path(tmp_path / "hasil.npz")
    with pytest.raises(files.WriteError, match="hanya-baca"):
        files.write_text(tmp_path / "hasil.npz", "x")


def test_a_nearly_full_disk_is_refused_before_work(tmp_path):
    with pytest.raises(ValueError, match="hampir penuh"):
        files.check_output_path(tmp_path / "hasil.npz", need=1 << 62)


def test_a_deleted_working_folder_is_named(tmp_path, monkeypatch):
    gone = tmp_path / "dihapus"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    with pytest.raises(ValueError, match="folder kerja saat ini sudah dihapus"):
        files.check_output_path("hasil.npz")
    with pytest.raises(files.WriteError, match="folder kerja saat ini sudah dihapus"):
        files.write_text("hasil.npz", "x")


# ---- temporaries ----------------------------------------------------------------------------


def _dead_pid():
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(proc.stdout)


def test_temporaries_of_a_killed_writer_are_swept_on_the_next_write(tmp_path):
    path = tmp_path / "hasil.json"
    stale = tmp_path / f".hasil.json.{_dead_pid()}-abcdefgh.tmp"
    live = tmp_path / f".hasil.json.{os.getppid()}-abcdefgh.tmp"  # a writer still running
    other = tmp_path / f".lain.json.{_dead_pid()}-abcdefgh.tmp"  # another file's
    mine = tmp_path / ".hasil.json.catatan"  # not our naming
    for leftover in (stale, live, other, mine):
        leftover.write_text("sisa")
    files.write_text(path, "baru")
    assert not stale.exists()
    assert live.exists() and other.exists() and mine.exists()


_SIGTERM_WRITER = """
import os, signal, sys, time
from atensi import files
with files.replacing(sys.argv[1]) as f:
    f.write(b"separuh")
    print("menulis", flush=True)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(30)
"""


def test_sigterm_during_a_write_removes_the_temporary_and_still_ends_the_process(tmp_path):
    path = tmp_path / "hasil.bin"
    path.write_bytes(b"lama")
    proc = subprocess.run([sys.executable, "-c", _SIGTERM_WRITER, str(path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "menulis"
    assert proc.returncode == -signal.SIGTERM
    assert [p.name for p in tmp_path.iterdir()] == ["hasil.bin"]
    assert path.read_bytes() == b"lama"


def test_a_sigterm_handler_of_the_program_is_restored_and_still_called(tmp_path):
    seen = []
    old = signal.signal(signal.SIGTERM, lambda *a: seen.append("dipanggil"))
    try:
        with pytest.raises(OSError):  # the temporary is gone when the handler returns
            with files.replacing(tmp_path / "x.bin") as f:
                f.write(b"x")
                signal.raise_signal(signal.SIGTERM)
        assert seen == ["dipanggil"]
        assert list(tmp_path.iterdir()) == []
        files.write_text(tmp_path / "y.txt", "y")
        assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
        signal.raise_signal(signal.SIGTERM)
        assert seen == ["dipanggil", "dipanggil"]
    finally:
        signal.signal(signal.SIGTERM, old)


_TO_STDOUT = """
import sys
from atensi import files
files.write_text("/dev/stdout", "lewat pipa")
"""


def test_dev_stdout_into_a_pipe_is_written_into(tmp_path):
    proc = subprocess.run([sys.executable, "-c", _TO_STDOUT], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "lewat pipa"
    assert list(tmp_path.iterdir()) == []


def test_dev_stdout_redirected_to_a_file_writes_through_the_descriptor(tmp_path):
    out = tmp_path / "keluaran.txt"
    with open(out, "w") as f:
        proc = subprocess.run([sys.executable, "-c", _TO_STDOUT], stdout=f, stderr=subprocess.PIPE,
                              text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert out.read_text() == "lewat pipa"
    assert [p.name for p in tmp_path.iterdir()] == ["keluaran.txt"]
