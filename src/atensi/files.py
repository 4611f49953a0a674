"""Menulis berkas tanpa pernah merusak versi sebelumnya.

Isi baru ditulis ke berkas sementara di folder yang sama, di-*flush* dan
di-``fsync``, lalu menggantikan berkas lama dengan ``os.replace`` (atomik di
satu sistem berkas). Bila penulisan gagal di tengah jalan (disk penuh, Ctrl-C,
SIGTERM, proses dimatikan), berkas lama tetap utuh dan berkas sementara dihapus
(yang tertinggal oleh proses yang mati dengan kill -9 dihapus pada penulisan
berikutnya ke berkas yang sama).

Tujuan yang bukan berkas biasa tidak pernah diganti: symlink diikuti dan
berkas tujuannya yang diganti; perangkat karakter (``/dev/null``) dan FIFO
ditulisi langsung; folder, perangkat blok dan soket ditolak. Kegagalan menulis
dilaporkan dalam bahasa Indonesia dengan path dan penyebabnya
(:class:`WriteError`).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import signal
import stat
import tempfile
import threading
import time
from pathlib import Path

__all__ = ["replacing", "write_bytes", "write_text", "read_text", "as_path",
           "check_output_path", "WriteError", "write_problem"]

# Bytes of a temporary name beyond the (possibly shortened) target name:
# "." + name + "." + pid + "-" + 8 random characters + ".tmp".
_TMP_RE = re.compile(r"^\.(?P<stem>.*)\.(?P<pid>\d+)-[a-z0-9_]{8}\.tmp$", re.DOTALL)
_NAME_MAX = 255
# A free-space floor below which an output folder counts as full before any work.
MIN_FREE_BYTES = 1 << 20


class WriteError(OSError):
    """A file could not be written; the message (Indonesian) names the path and the cause."""

    def __init__(self, err_no: int, message: str, filename=None):
        super().__init__(err_no, message, None if filename is None else str(filename))
        self.message = message

    def __str__(self) -> str:
        return self.message


_CAUSES = {
    errno.ENOSPC: ("disk penuh", "Kosongkan ruang disk, atau pilih folder di disk lain."),
    errno.EDQUOT: ("kuota disk habis", "Kosongkan ruang, atau pilih folder di disk lain."),
    errno.EFBIG: ("berkas melebihi ukuran terbesar yang diizinkan",
                  "Pilih folder di sistem berkas lain."),
    errno.EROFS: ("sistem berkasnya hanya-baca", "Pilih folder yang bisa ditulisi."),
    errno.EACCES: ("tidak ada izin menulis", "Pilih folder milik Anda."),
    errno.EPERM: ("tidak ada izin menulis", "Pilih folder milik Anda."),
    errno.EIO: ("galat masukan/keluaran perangkat", "Periksa disknya, atau pilih folder lain."),
    errno.ENOTDIR: ("salah satu bagian path adalah berkas, bukan folder",
                    "Perbaiki path-nya."),
}


def _name_max(folder) -> int:
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        return _NAME_MAX


def _cwd_gone(path: Path) -> bool:
    if path.is_absolute():
        return False
    try:
        os.getcwd()
    except FileNotFoundError:
        return True
    return False


def write_problem(path, err: OSError) -> WriteError:
    """``err`` (from writing ``path``) as a :class:`WriteError` in Indonesian."""
    if isinstance(err, WriteError):
        return err
    path = Path(path)
    code = err.errno or errno.EIO
    head = f"Berkas '{path}' tidak bisa ditulis"
    if _cwd_gone(path):
        text = (f"{head}: folder kerja saat ini sudah dihapus. Pindah ke folder yang ada "
                "(cd), atau tulis path lengkapnya.")
    elif code == errno.ENAMETOOLONG:
        longest = max((len(os.fsencode(p)) for p in path.parts), default=0)
        text = (f"{head}: namanya terlalu panjang ({longest} byte, paling banyak "
                f"{_name_max(_existing_folder(path))} byte per nama). Pakai nama yang lebih pendek.")
    elif code == errno.ENOENT and path.parent.is_dir():
        # The folder is there but makes no files (/proc, /sys): not "missing".
        text = (f"{head}: folder '{path.parent}' tidak menerima berkas baru (sistem berkas "
                "khusus). Pilih folder biasa, misalnya di folder rumah.")
    elif code == errno.ENOENT:
        text = f"{head}: foldernya tidak ada atau terhapus saat menulis. Pilih folder yang ada."
    elif code in _CAUSES:
        cause, fix = _CAUSES[code]
        text = f"{head}: {cause}. {fix}"
    else:
        text = f"{head}: {err.strerror or type(err).__name__}. Pilih path lain."
    if code in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO):
        text += " Berkas lama (bila ada) tidak diubah."
    return WriteError(code, text, path)


def _existing_folder(path: Path) -> Path:
    folder = path.parent
    while folder != folder.parent:
        try:
            if folder.exists():
                break
        except OSError:
            pass
        folder = folder.parent
    return folder


def _kind(path: Path) -> tuple[Path, str]:
    """(the path to write, what is there): "missing", "regular" or "stream".

    A symlink is followed to its target (which is then judged the same way);
    folders, block devices, sockets and symlink loops are refused.
    """
    if _cwd_gone(path):
        raise write_problem(path, FileNotFoundError(errno.ENOENT, "cwd"))
    target = path
    try:
        st = os.lstat(target)
        if stat.S_ISLNK(st.st_mode):
            try:
                st = os.stat(path)  # what the kernel reaches, also through /dev/stdout, /proc/self/fd
            except FileNotFoundError:  # dangling: its target is made
                return Path(os.path.realpath(path)), "missing"
            if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
                return path, "stream"
            real = Path(os.path.realpath(path))
            if stat.S_ISREG(st.st_mode):
                try:
                    same = os.lstat(real)
                except OSError:
                    same = None
                if same is None or (same.st_dev, same.st_ino) != (st.st_dev, st.st_ino):
                    return path, "stream"  # a file only a descriptor names (e.g. /dev/stdout > f)
            target = real
    except FileNotFoundError:
        return target, "missing"
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise WriteError(err.errno, f"Berkas '{path}' tidak bisa ditulis: symlink-nya "
                             "berputar (menunjuk ke dirinya sendiri). Hapus symlink itu, atau "
                             "pilih path lain.", path) from None
        raise write_problem(path, err) from None
    mode = st.st_mode
    if stat.S_ISREG(mode):
        return target, "regular"
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return target, "stream"
    what = ("folder" if stat.S_ISDIR(mode) else "perangkat blok (disk)" if stat.S_ISBLK(mode)
            else "soket" if stat.S_ISSOCK(mode) else "symlink yang berputar"
            if stat.S_ISLNK(mode) else "berkas khusus")
    shown = f"'{path}'" + (f" (menunjuk ke '{target}')" if target != path else "")
    code = errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL
    raise WriteError(code, f"{shown} adalah {what}, bukan berkas biasa, jadi tidak ditimpa. "
                     "Tulis nama berkas biasa.", path)


def _temp_stem(folder: Path, name: str) -> str:
    """``name`` shortened (at a UTF-8 character boundary) so the temporary name fits."""
    room = max(1, _name_max(folder) - len(f"..{os.getpid()}-xxxxxxxx.tmp"))
    data = os.fsencode(name)
    if len(data) <= room:
        return name
    cut = data[:room]
    while len(cut) > 1 and cut[-1] & 0xC0 == 0x80:  # inside a multi-byte character
        cut = cut[:-1]
    if len(cut) > 1 and cut[-1] >= 0xC0:  # its first byte
        cut = cut[:-1]
    return os.fsdecode(cut)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _sweep(folder: Path, stem: str) -> None:
    """Remove temporaries of ``stem`` left by processes that no longer run (kill -9)."""
    prefix = f".{stem}."
    try:
        entries = [e for e in os.scandir(folder) if e.name.startswith(prefix)]
    except OSError:
        return
    for entry in entries:
        match = _TMP_RE.match(entry.name)
        if not match or match["stem"] != stem:
            continue
        pid = int(match["pid"])
        if pid != os.getpid() and not _alive(pid):
            with contextlib.suppress(OSError):
                if entry.is_file(follow_symlinks=False):
                    os.unlink(entry.path)


@contextlib.contextmanager
def _removed_on_sigterm(temps: list):
    """While the block runs, SIGTERM first removes ``temps``, then acts as before."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    try:
        old = signal.getsignal(signal.SIGTERM)
    except (ValueError, OSError):
        old = None
    if old is None or old is signal.SIG_IGN:  # not ours to change, or ignored anyway
        yield
        return

    def handler(signum, frame):
        for tmp in temps:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        temps.clear()
        signal.signal(signal.SIGTERM, old)
        if callable(old):
            old(signum, frame)
        else:  # SIG_DFL: end the process as the signal would have
            os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        if signal.getsignal(signal.SIGTERM) is handler:
            signal.signal(signal.SIGTERM, old)


# Errors from the caller's writes into the file that are about the disk, not the caller.
_WRITE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO)


@contextlib.contextmanager
def replacing(path):
    """``with replacing(path) as f:`` tulis ke ``f`` (biner); ``path`` diganti di akhir.

    Symlink diikuti (berkas tujuannya yang diganti); perangkat karakter dan FIFO
    ditulisi langsung; folder dan berkas khusus lain ditolak. Gagal menulis →
    :class:`WriteError` (turunan ``OSError``) yang menyebut path dan penyebabnya.
    """
    path = Path(path)
    target, kind = _kind(path)
    if kind == "stream":
        with _stream(path, target) as f:
            yield f
        return
    folder = target.parent
    temps: list = []
    with _removed_on_sigterm(temps):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            stem = _temp_stem(folder, target.name)
            _sweep(folder, stem)
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{stem}.{os.getpid()}-",
                                       suffix=".tmp")
        except OSError as err:
            raise write_problem(path, err) from None
        temps.append(tmp)
        try:
            with os.fdopen(fd, "wb") as f:
                try:
                    yield f
                except OSError as err:
                    if err.errno in _WRITE_ERRNOS:
                        raise write_problem(path, err) from None
                    raise
                try:
                    f.flush()
                    os.fsync(f.fileno())
                except OSError as err:
                    raise write_problem(path, err) from None
            try:
                try:  # the old file's permissions, or what open() would give a new one
                    st = os.lstat(target)
                    mode = stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else None
                except FileNotFoundError:
                    mode = None
                os.chmod(tmp, 0o666 & ~_umask() if mode is None else mode)
                os.replace(tmp, target)
                temps.clear()
                _fsync_folder(folder)
            except OSError as err:
                raise write_problem(path, err) from None
        except BaseException:
            for leftover in temps:
                with contextlib.suppress(OSError):
                    os.unlink(leftover)
            temps.clear()
            raise


def _open_stream(path: Path, target: Path, tries: int = 20) -> int:
    """A write descriptor; non-blocking, since a FIFO nobody reads would hang forever
    (a reader that is still starting gets a second)."""
    for attempt in range(tries + 1):
        try:
            return os.open(target, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError as err:
            if err.errno != errno.ENXIO:
                raise write_problem(path, err) from None
            if attempt == tries:
                raise WriteError(err.errno, f"'{path}' adalah FIFO yang tidak sedang dibaca "
                                 "proses mana pun, jadi tidak ada yang menerima isinya. "
                                 "Jalankan pembacanya dulu, atau tulis ke berkas biasa.",
                                 path) from None
            time.sleep(0.05)
    raise AssertionError("unreachable")


@contextlib.contextmanager
def _stream(path: Path, target: Path):
    """Write straight into a character device or FIFO (never replace it)."""
    fd = _open_stream(path, target)
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)
    with os.fdopen(fd, "wb") as f:
        try:
            yield f
            f.flush()
        except OSError as err:
            if err.errno in _WRITE_ERRNOS + (errno.EPIPE,):
                raise write_problem(path, err) from None
            raise


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself survive a power loss (best effort)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


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


def check_output_path(path, name: str = "--out", suffix: str = "", *,
                      need: int = MIN_FREE_BYTES) -> Path:
    """Refuse, before any work, an output path that cannot be written.

    Returns the path. The message names ``name`` (an option or argument).
    Checked: the working folder still exists, what is at the path (a symlink
    is followed; a folder, block device or socket is refused), the name's
    length, that a file can be made in the folder (read-only or foreign
    folders), and at least ``need`` bytes free there.
    """
    path = as_path(path, name)
    try:
        target, kind = _kind(path)
    except WriteError as err:
        if err.errno == errno.EISDIR:
            raise ValueError(
                f"'{name}' menunjuk ke folder '{path}', bukan berkas. Tulis nama berkasnya, "
                f"misalnya {path / ('hasil' + suffix)}."
            ) from None
        raise ValueError(f"'{name}': {err}") from None
    if kind == "stream":
        return path
    if suffix and path.suffix.lower() != suffix.lower():
        # A weights file named .txt, or an experiment named .npz, is the
        # reader's slip: the file would be written, then never found again.
        raise ValueError(
            f"'{name}' = '{str(path)[:80]}' harus berakhiran {suffix}, tetapi akhirannya "
            f"{path.suffix or '(tidak ada)'}. Tulis misalnya {path.with_suffix(suffix).name}."
        )
    folder = target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise ValueError(
            f"'{name}' = '{path}' tidak bisa ditulis: '{folder}' adalah berkas, bukan folder."
        )
    for part in target.parts:
        if len(os.fsencode(part)) > _name_max(folder):
            raise ValueError(
                f"'{name}' = '{path}' tidak bisa ditulis: nama '{part[:40]}…' panjangnya "
                f"{len(os.fsencode(part))} byte, padahal paling banyak {_name_max(folder)} "
                "byte per nama. Pakai nama yang lebih pendek."
            )
    if not os.access(folder, os.W_OK | os.X_OK) or (kind == "regular"
                                                    and not os.access(target, os.W_OK)):
        raise ValueError(
            f"'{name}' = '{path}' tidak bisa ditulis: tidak ada izin menulis di '{folder}'. "
            "Pilih folder lain."
        )
    try:  # a real file, as the write will make: read-only mounts, odd file systems
        fd, probe = tempfile.mkstemp(dir=folder, prefix=f".{_temp_stem(folder, target.name)}."
                                     f"{os.getpid()}-", suffix=".tmp")
        os.close(fd)
        os.unlink(probe)
        free = os.statvfs(folder)
        free = free.f_bavail * free.f_frsize
    except OSError as err:
        raise ValueError(f"'{name}': {write_problem(path, err)}") from None
    if free < need:
        raise ValueError(
            f"'{name}' = '{path}' tidak bisa ditulis: disk di '{folder}' hampir penuh (sisa "
            f"{free} byte, butuh sekitar {need}). Kosongkan ruang disk, atau pilih folder lain."
        )
    return path


def as_path(path, name: str = "path") -> Path:
    """``path`` as a Path; anything that is not a path is refused by name."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"Argumen '{name}' harus path berkas (str atau pathlib.Path), bukan "
                        f"{type(path).__name__}.")
    raw = os.fspath(path)
    if ("\0" if isinstance(raw, str) else b"\0") in raw:
        raise ValueError(f"Argumen '{name}' berisi karakter NUL (\\x00), yang tidak boleh ada "
                         "di nama berkas. Ketik ulang path-nya.")
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
