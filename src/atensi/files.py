"""Menulis berkas tanpa pernah merusak versi sebelumnya.

Isi baru ditulis ke berkas sementara di folder yang sama, di-*flush* dan
di-``fsync``, lalu menggantikan berkas lama dengan ``os.replace`` (atomik di
satu sistem berkas). Bila penulisan gagal di tengah jalan (disk penuh, Ctrl-C,
proses dimatikan), berkas lama tetap utuh dan berkas sementara dihapus.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["replacing", "write_bytes", "write_text", "read_text", "as_path",
           "check_output_path"]


@contextlib.contextmanager
def replacing(path):
    """``with replacing(path) as f:`` tulis ke ``f`` (biner); ``path`` diganti di akhir."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        try:  # the old file's permissions, or what open() would give a new one
            mode = path.stat().st_mode & 0o7777
        except OSError:
            mode = 0o666 & ~_umask()
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_bytes(path, data: bytes) -> Path:
    with replacing(path) as f:
        f.write(data)
    return Path(path)


def write_text(path, text: str) -> Path:
    return write_bytes(path, text.encode("utf-8"))


def check_output_path(path, name: str = "--out", suffix: str = "") -> Path:
    """Refuse, before any work, an output path that cannot be written.

    Returns the path. The message names ``name`` (an option or argument).
    """
    path = Path(path)
    if path.is_dir():
        raise ValueError(
            f"'{name}' menunjuk ke folder '{path}', bukan berkas. Tulis nama berkasnya, "
            f"misalnya {path / ('hasil' + suffix)}."
        )
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise ValueError(
            f"'{name}' = '{path}' tidak bisa ditulis: '{folder}' adalah berkas, bukan folder."
        )
    if not os.access(folder, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ValueError(
            f"'{name}' = '{path}' tidak bisa ditulis: tidak ada izin menulis di '{folder}'. "
            "Pilih folder lain."
        )
    return path


def as_path(path, name: str = "path") -> Path:
    """``path`` as a Path; anything that is not a path is refused by name."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"Argumen '{name}' harus path berkas (str atau pathlib.Path), bukan "
                        f"{type(path).__name__}.")
    return Path(path)


def read_text(path, what: str, remake: str) -> str:
    """A UTF-8 text file the project made, or a clear Indonesian error.

    ``what`` names the file ("korpus"); ``remake`` is the command that makes it.
    """
    path = as_path(path)
    if path.is_dir():
        raise IsADirectoryError(
            f"'{path}' adalah folder, bukan berkas {what}. Sebutkan berkasnya, atau buat "
            f"dengan: {remake}"
        )
    if not path.is_file():
        raise FileNotFoundError(f"Berkas {what} '{path}' tidak ditemukan. Buat dengan: {remake}")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(
            f"Berkas {what} '{path}' bukan teks UTF-8 (byte tak sah di posisi {err.start}). "
            f"Buat ulang dengan: {remake}"
        ) from None
    except OSError as err:
        raise OSError(err.errno, f"Berkas {what} '{path}' tidak bisa dibaca: {err.strerror}.") from None
