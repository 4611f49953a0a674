"""Compile a translation unit with g++ into a cached shared library.

The cache lives in ``$ATENSI_CACHE/cudacpu`` (default
``$XDG_CACHE_HOME/atensi/cudacpu`` or ``~/.cache/atensi/cudacpu``).

Security: a library in the cache is loaded into this Python process, so the
cache must be private. Folders are created 0700; before use the folder must
be a real directory (not a symlink), owned by this user, without group or
other write permission, and every folder above it must be owned by this user
or root and not writable by others (unless sticky, like /tmp; writable by the
user's own primary group is allowed there). Every ``.so``
is checked the same way before it is loaded. When the folder fails a check,
a private ``tempfile.mkdtemp`` folder is used for this process instead (removed
when the process exits), and a warning says so once, with the cause. No fixed name in a shared temp folder is ever used.

Cache key: a SHA-256 of the translation unit, the flags (each one
length-prefixed, so ``("-DX=5 -DY=7",)`` and ``("-DX=5", "-DY=7")`` differ),
the g++ version, and the name and contents of every header the source
includes (``cuda_cpu.h`` and ``#include`` files found in ``-I`` folders,
followed recursively), so an edited header is recompiled.

Files are written under a temporary name, fsync'ed and moved into place with
``os.replace``. One process at a time compiles a given library (a record lock
on one byte of the folder's single ``.lock`` file); the others wait, then load
what it wrote. A full disk is reported in Indonesian, naming ATENSI_CACHE.
A compiler that exits 0 without writing an ELF file is an error, never a
cache entry. Next to every ``.so`` its SHA-256 is kept (``.so.sha256``); a
library whose bytes no longer match (a power loss, a damaged disk) is
deleted and compiled again before it is ever loaded.
The C++ text is compiled from a temporary ``.cpp`` that is removed afterwards
(g++ and sanitizer messages point at the ``.cu`` through ``#line``), and
``*.tmp`` files older than an hour (left by a killed compile) are removed.

Fiber stacks are 256 KiB (1 MiB with AddressSanitizer): g++ reports each
function's stack frame (``-fstack-usage``) and a kernel whose frame would
not fit is refused with a clear message instead of crashing the interpreter.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import errno
import fcntl
import functools
import hashlib
import os
import re
import shutil
import stat
import subprocess
import tempfile
import threading
import time
import warnings
from pathlib import Path

from .. import environment, files
from .errors import CudaCpuError

HEADER = Path(__file__).with_name("cuda_cpu.h")
BASE_FLAGS = ("-std=c++20", "-fPIC", "-shared", "-pthread", "-fvisibility=hidden", "-fno-math-errno")
MODE_FLAGS = {"fibers": ("-DCUDACPU_FIBERS",), "threads": ("-DCUDACPU_THREADS",),
              "shuffle": ("-DCUDACPU_FIBERS", "-DCUDACPU_SHUFFLE")}
# Floating-point options a kernel build may ask for (see the package docstring).
FP_OPTIONS = ("-ffp-contract=fast", "-ffp-contract=off")
# The alignment check on (default builds) or off (sanitizer builds).
CHECK_OPTIONS = ("-fsanitize=alignment", "-fno-sanitize=alignment")
# UndefinedBehaviorSanitizer's alignment check: every load, store and member
# access through a misaligned pointer stops the kernel at its .cu line
# (cuda_cpu.h catches the calls). On in every sanitizer build; a default build
# gets it with options=("-fsanitize=alignment",) (it makes kernels 2-5x slower,
# so it is not on by default). The sanitizer flag itself stays last.
ALIGNMENT_FLAG = "-fsanitize=alignment"
SANITIZE_FLAGS = {
    None: ("-O2",),
    "address": ("-O1", "-g", "-fno-omit-frame-pointer", ALIGNMENT_FLAG, "-fsanitize=address"),
    "thread": ("-O1", "-g", ALIGNMENT_FLAG, "-fsanitize=thread"),
}
# Stack of one CUDA thread (must match kStackSize in cuda_cpu.h; threads mode:
# pthread_attr_setstacksize there). A frame may use at most this much of it.
STACK_BYTES = {None: 256 * 1024, "thread": 256 * 1024, "address": 1024 * 1024}
STACK_RESERVE = 32 * 1024  # for the runtime, printf and the trampolines
STALE_TMP_SECONDS = 3600
# NVRTC options that mean nothing to g++; dropped so one options tuple serves both.
_NVRTC_ONLY = re.compile(r"^(-arch|--gpu-architecture|-lineinfo|--?use_fast_math|-std|-Xptxas|--fmad|"
                         r"-G$|--device-debug|-default-device|-rdc|--relocatable-device-code)")

_private_dir: Path | None = None


def _owner_ok(st: os.stat_result) -> bool:
    """Is this file/folder ours? (A test replaces this to simulate another user.)"""
    return st.st_uid == os.getuid()


def _trusted_dir(path: Path) -> str | None:
    """None when ``path`` is safe to load code from, else why not (Indonesian)."""
    try:
        st = os.lstat(path)
    except OSError as err:
        return f"{path} tidak bisa diperiksa ({err.strerror})"
    if stat.S_ISLNK(st.st_mode):
        return f"{path} adalah symlink"
    if not stat.S_ISDIR(st.st_mode):
        return f"{path} bukan folder"
    if not _owner_ok(st):
        return f"{path} dimiliki pengguna lain (uid {st.st_uid})"
    if st.st_mode & 0o022:
        return f"{path} bisa ditulisi grup/pengguna lain (mode {stat.S_IMODE(st.st_mode):o})"
    for parent in Path(os.path.realpath(path)).parents:
        try:
            pst = os.stat(parent)
        except OSError:
            continue
        if pst.st_uid not in (0, os.getuid()) and not _owner_ok(pst):
            return f"folder induk {parent} dimiliki pengguna lain (uid {pst.st_uid})"
        # Group-writable is fine for the user's own (private) group, e.g. a 0775 home.
        others = pst.st_mode & 0o002 or (pst.st_mode & 0o020 and pst.st_gid != os.getgid())
        if others and not pst.st_mode & stat.S_ISVTX:
            return f"folder induk {parent} bisa ditulisi pengguna lain tanpa sticky bit"
    return None


def trusted_library(path: Path) -> str | None:
    """None when the ``.so`` may be loaded: a regular file, ours, not writable by others."""
    try:
        st = os.lstat(path)
    except OSError as err:
        return f"{path} tidak bisa diperiksa ({err.strerror})"
    if not stat.S_ISREG(st.st_mode):
        return f"{path} bukan berkas biasa (symlink?)"
    if not _owner_ok(st):
        return f"{path} dimiliki pengguna lain (uid {st.st_uid})"
    if st.st_mode & 0o022:
        return f"{path} bisa ditulisi grup/pengguna lain (mode {stat.S_IMODE(st.st_mode):o})"
    return _trusted_dir(path.parent)


def _fallback(reason: str, fix: str | None = None) -> Path:
    """A private folder for this process (mkdtemp: 0700, unpredictable name), removed at exit."""
    global _private_dir
    if _private_dir is None or _trusted_dir(_private_dir) is not None:
        _private_dir = Path(tempfile.mkdtemp(prefix="atensi-cudacpu-"))
        atexit.register(shutil.rmtree, _private_dir, True)
        warnings.warn(
            f"Cache cudacpu tidak dipakai: {reason}. Untuk proses ini dipakai folder "
            f"sementara {_private_dir} (dihapus saat proses selesai, jadi proses berikutnya "
            "mengompilasi lagi). " + (fix or "Perbaiki dengan `chmod 700` pada folder cache "
            "(milik Anda), atau setel ATENSI_CACHE ke folder milik Anda."),
            RuntimeWarning,
            stacklevel=3,
        )
    return _private_dir


def _remove_stale(folder: Path) -> None:
    """``*.tmp`` (and old ``.cpp`` copies) left by a compile that was killed."""
    now = time.time()
    for pattern in ("*.tmp", "*.cpp", "*.su"):
        for leftover in folder.glob(pattern):
            try:
                if now - leftover.lstat().st_mtime > STALE_TMP_SECONDS:
                    leftover.unlink()
            except OSError:
                pass


def cache_dir() -> Path:
    root = environment.text("ATENSI_CACHE")
    if root:
        base = Path(root)
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "atensi"
    path = base / "cudacpu"
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        problem = _trusted_dir(path)
        if problem is None:
            probe = tempfile.NamedTemporaryFile(dir=path, delete=True)
            probe.close()
    except OSError as err:
        return _fallback(f"{path} tidak bisa ditulisi ({err.strerror})",
                         "Setel ATENSI_CACHE ke folder yang bisa Anda tulisi.")
    if problem is not None:
        return _fallback(problem)
    _remove_stale(path)
    return path


def _origin() -> str:
    return " (dari variabel lingkungan ATENSI_CXX)" if environment.is_set("ATENSI_CXX") else ""


def compiler() -> str:
    cxx = environment.text("ATENSI_CXX") or "g++"
    if shutil.which(cxx) is None:
        raise CudaCpuError(
            f"Kompilator C++ '{cxx}'{_origin()} tidak ditemukan. cudacpu butuh g++ (GCC 11 atau lebih "
            "baru); pasang dengan `sudo apt install g++` (Debian/Ubuntu/Colab)."
        )
    if environment.is_set("ATENSI_CXX") and _compiler_version(cxx) is None:
        raise CudaCpuError(
            f"Variabel lingkungan ATENSI_CXX={cxx!r} tidak menunjuk ke kompilator C++: "
            f"'{cxx} --version' gagal. Setel ATENSI_CXX ke g++ (GCC 11 atau lebih "
            "baru), misalnya ATENSI_CXX=g++-12, atau hapus dengan: unset ATENSI_CXX"
        )
    return cxx


@functools.lru_cache(maxsize=None)
def _compiler_version(cxx: str) -> str | None:
    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=False,
                             encoding="utf-8", errors="replace")
    except OSError:  # not executable after all
        return None
    if out.returncode != 0:  # no compiler fails to say its version (/bin/false does)
        return None
    return out.stdout.splitlines()[0] if out.stdout.strip() else "unknown"


@functools.lru_cache(maxsize=None)
def cpu_has_fma() -> bool:
    """Does this CPU have fused multiply-add (x86-64: the ``fma`` flag)?"""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return any(line.startswith("flags") and " fma" in line for line in text.splitlines())


def user_flags(options) -> tuple[str, ...]:
    """Keep -D/-U/-I from CuPy-style ``options``; refuse anything else."""
    if isinstance(options, str):
        options = (options,)
    kept = []
    for opt in options:
        if not isinstance(opt, str):
            raise TypeError(f"Setiap elemen 'options' harus str, tetapi yang diterima {type(opt).__name__}.")
        if "\0" in opt:
            raise ValueError(f"Opsi kompilasi {opt!r} berisi karakter NUL.")
        if opt.startswith(("-D", "-U", "-I")):
            kept.append(opt)
        elif opt in CHECK_OPTIONS:
            kept.append(opt)
        elif opt in FP_OPTIONS:
            kept.append(opt)
            if opt == "-ffp-contract=fast" and cpu_has_fma():
                kept.append("-mfma")  # without it x86-64 has no FMA instruction to contract into
        elif not _NVRTC_ONLY.match(opt):
            raise ValueError(
                f"Opsi kompilasi {opt!r} tidak didukung cudacpu. Yang dipakai hanya -D, -U, -I dan "
                "-ffp-contract=fast/off (serta -fsanitize=alignment / -fno-sanitize=alignment); "
                "opsi khusus NVRTC (-arch, -lineinfo, --use_fast_math, -std, -Xptxas) diabaikan."
            )
    return tuple(kept)


def flags_for(mode: str, sanitize: str | None, options=()) -> tuple[str, ...]:
    # -mfma: an explicit fmaf()/__fmaf_rn is one instruction, not a libm call (same exact
    # rounding). With it g++ would also contract a * b + c, so -ffp-contract=off keeps
    # the default; options=("-ffp-contract=fast",) comes later and wins.
    fma = ("-mfma", "-ffp-contract=off") if cpu_has_fma() else ()
    return BASE_FLAGS + SANITIZE_FLAGS[sanitize] + MODE_FLAGS[mode] + fma + user_flags(options)


def _stem(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", Path(path).stem)[:40] or "kernel"


_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]+)[>"]', re.M)


def _include_dirs(flags) -> list[Path]:
    dirs, it = [], iter(flags)
    for flag in it:
        if flag == "-I":
            nxt = next(it, None)
            if nxt:
                dirs.append(Path(nxt))
        elif flag.startswith("-I"):
            dirs.append(Path(flag[2:]))
    return dirs


def _headers(text: str, dirs: list[Path]) -> list[tuple[str, bytes]]:
    """(path, contents) of every header reachable through ``dirs``, recursively."""
    found: dict[str, bytes] = {}
    todo = [text]
    while todo:
        for name in _INCLUDE.findall(todo.pop()):
            for folder in dirs:
                candidate = folder / name
                key = str(candidate)
                if key in found:
                    break
                if candidate.is_file():
                    try:
                        data = candidate.read_bytes()
                    except OSError:
                        continue
                    found[key] = data
                    todo.append(data.decode("utf-8", errors="replace"))
                    break
    return sorted(found.items())


def cache_key(tu: str, flags, cxx: str) -> str:
    """Unambiguous hash of everything that decides the compiled library."""
    h = hashlib.sha256()

    def put(data) -> None:
        data = data.encode() if isinstance(data, str) else data
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)

    put(tu)
    put(HEADER.read_bytes())
    put(str(len(flags)))
    for flag in flags:
        put(flag)
    put(_compiler_version(cxx) or "unknown")
    for name, data in _headers(tu, [HEADER.parent, *_include_dirs(flags)]):
        put(name)
        put(data)
    return h.hexdigest()[:24]


def _stack_problems(su_files, limit: int) -> list[str]:
    """Functions whose stack frame (g++ -fstack-usage) exceeds ``limit`` bytes."""
    bad = []
    for su in su_files:
        try:
            lines = Path(su).read_text(errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            parts = line.rsplit("\t", 2)
            if len(parts) == 3 and parts[1].isdigit() and int(parts[1]) > limit:
                bad.append(f"{parts[0]} ({int(parts[1]) // 1024} KiB)")
    return bad


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _hash_file(lib: Path) -> Path:
    return lib.with_name(lib.name + ".sha256")


def damage(lib: Path) -> str | None:
    """None when the cached ``lib`` is whole (an ELF file with the hash kept beside it)."""
    try:
        with open(lib, "rb") as f:
            magic = f.read(4)
        if magic != b"\x7fELF":
            return "bukan berkas ELF" if magic else "kosong"
        kept = _hash_file(lib).read_text(encoding="ascii").strip()
        if kept != _sha256(lib):
            return "isinya tidak cocok dengan hash yang disimpan"
    except FileNotFoundError as err:
        return f"{Path(err.filename).name} tidak ada"
    except (OSError, UnicodeDecodeError) as err:
        return f"tidak bisa dibaca ({getattr(err, 'strerror', None) or err})"
    return None


_loaded: dict[Path, ctypes.CDLL] = {}
_loaded_lock = threading.Lock()


def load_library(path: Path) -> ctypes.CDLL:
    """The compiled library ``path`` loaded into this process (once), after checking
    that nobody else could have written it."""
    path = Path(path)
    with _loaded_lock:
        lib = _loaded.get(path)
        if lib is None:
            problem = trusted_library(path)
            if problem is not None:
                raise CudaCpuError(
                    f"Pustaka {path} tidak dimuat karena tidak aman: {problem}. Kode di dalamnya "
                    "bisa dijalankan di proses ini. Hapus berkas itu, atau setel ATENSI_CACHE ke "
                    "folder pribadi (chmod 700)."
                )
            lib = ctypes.CDLL(str(path))
            lib.cudacpu_last_error.restype = ctypes.c_char_p
            lib.cudacpu_cancel.argtypes = [ctypes.c_int]
            lib.cudacpu_cancel.restype = None
            _loaded[path] = lib
        return lib


def forget_library(path: Path) -> None:
    """Load ``path`` afresh next time (it is about to be compiled again)."""
    with _loaded_lock:
        _loaded.pop(Path(path), None)


def discard(lib: Path) -> None:
    """Remove a cached library and its hash (it is compiled again on next use)."""
    for leftover in (lib, _hash_file(lib)):
        try:
            os.unlink(leftover)
        except OSError:
            pass


def _install(tmp_lib: str, lib: Path, path: str) -> None:
    """Check, fsync and move the compiled library into place, with its hash."""
    with open(tmp_lib, "rb") as f:
        magic = f.read(4)
        os.fsync(f.fileno())
    if magic != b"\x7fELF":
        raise CudaCpuError(
            f"Kompilasi {path} selesai tanpa galat, tetapi kompilatornya tidak menulis pustaka "
            f"(berkas keluarannya {'kosong' if not magic else 'bukan ELF'}). Periksa kompilator "
            f"'{compiler()}' (variabel ATENSI_CXX)."
        )
    os.chmod(tmp_lib, 0o700)
    digest = _sha256(Path(tmp_lib))
    fd, tmp_hash = tempfile.mkstemp(dir=lib.parent, prefix=lib.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(digest + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp_hash, _hash_file(lib))
    except BaseException:
        if os.path.exists(tmp_hash):
            os.unlink(tmp_hash)
        raise
    os.replace(tmp_lib, lib)
    try:
        dir_fd = os.open(lib.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass


_lock_files: dict[str, int] = {}     # cache folder -> this process's descriptor of its .lock
_key_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


@contextlib.contextmanager
def _compile_lock(lib: Path):
    """One compile of ``lib`` at a time, across threads and processes.

    Between processes: a POSIX record lock on one byte of the folder's ``.lock``
    (one file for the whole cache, so nothing is left per library), chosen by the
    library's name. Record locks belong to the process, so threads of one process
    take a lock per library first, and the descriptor stays open (closing any
    descriptor of the file would drop every lock the process holds on it).
    """
    with _locks_guard:
        key_lock = _key_locks.setdefault(str(lib), threading.Lock())
        folder = str(lib.parent)
        fd = _lock_files.get(folder)
        if fd is None:
            try:
                fd = _lock_files[folder] = os.open(os.path.join(folder, ".lock"),
                                                   os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except OSError:
                fd = None  # a read-only cache: the compile below reports it
    byte = int(hashlib.sha256(lib.name.encode()).hexdigest()[:7], 16)
    with key_lock:
        if fd is not None:
            fcntl.lockf(fd, fcntl.LOCK_EX, 1, byte)
        try:
            yield
        finally:
            if fd is not None:
                fcntl.lockf(fd, fcntl.LOCK_UN, 1, byte)


def _cached(lib: Path) -> bool:
    """Is a whole, trusted ``lib`` already there? A damaged one is removed."""
    if not lib.exists() or trusted_library(lib) is not None:
        return False
    if damage(lib) is None:
        return True
    discard(lib)
    return False


def _cache_full(out_dir: Path, err: OSError) -> CudaCpuError:
    """A write into the cache failed (``err``): say so in Indonesian, naming ATENSI_CACHE."""
    problem = files.write_problem(out_dir, err)
    where = (f"variabel lingkungan ATENSI_CACHE={environment.text('ATENSI_CACHE')!r}"
             if environment.is_set("ATENSI_CACHE") else "bawaannya; setel ATENSI_CACHE untuk memilih "
             "folder lain")
    return CudaCpuError(
        f"Pustaka kernel tidak bisa disimpan di folder cache kompilasi {out_dir} ({where}): "
        f"{problem.message.split(': ', 1)[-1]} Setel ATENSI_CACHE ke folder di disk yang masih "
        "punya ruang, lalu coba lagi."
    )


def build(tu: str, *, path: str, flags: tuple[str, ...]) -> tuple[Path, bool]:
    """Compile ``tu`` unless cached. Returns (library path, was it compiled now)."""
    cxx = compiler()
    key = cache_key(tu, flags, cxx)
    out_dir = cache_dir()
    lib = out_dir / f"{_stem(path)}-{key}.so"
    if _cached(lib):
        return lib, False
    try:
        with _compile_lock(lib):
            return _build_locked(tu, path, flags, cxx, out_dir, lib)
    except OSError as err:
        if err.errno in (errno.ENOSPC, errno.EDQUOT):
            raise _cache_full(out_dir, err) from None
        raise


def _build_locked(tu: str, path: str, flags, cxx: str, out_dir: Path, lib: Path) -> tuple[Path, bool]:
    if lib.exists():
        problem = trusted_library(lib)
        if problem is None:
            if damage(lib) is None:
                return lib, False
            discard(lib)  # damaged: compiled again below
        else:
            out_dir = _fallback(problem, f"Hapus berkas {lib}, atau setel ATENSI_CACHE ke "
                                "folder milik Anda (chmod 700).")
            lib = out_dir / lib.name
            if lib.exists() and trusted_library(lib) is None and damage(lib) is None:
                return lib, False
    fd, cpp = tempfile.mkstemp(dir=out_dir, prefix=f"{lib.stem}.", suffix=".cpp")
    tmp_lib = None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:  # UTF-8 whatever the locale
            f.write(tu)
        fd, tmp_lib = tempfile.mkstemp(dir=out_dir, prefix=lib.name + ".", suffix=".tmp")
        os.close(fd)
        cmd = [cxx, *flags, "-fstack-usage", "-I", str(HEADER.parent), "-o", tmp_lib, cpp]
        sanitize = next((s for s, f in SANITIZE_FLAGS.items() if s and f[-1] in flags), None)
        # g++ quotes the .cu lines: UTF-8, whatever the locale says.
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, encoding="utf-8",
                              errors="replace")
        if proc.returncode != 0 and "No space left on device" in proc.stderr:
            raise OSError(errno.ENOSPC, "No space left on device")
        if proc.returncode != 0 and not proc.stderr.strip():
            raise CudaCpuError(
                f"Kompilasi {path} dengan '{cxx}'{_origin()} gagal (kode keluar {proc.returncode}) "
                "tanpa pesan apa pun. Periksa kompilatornya"
                + (": setel ATENSI_CXX ke g++ (GCC 11 atau lebih baru), atau hapus dengan: unset "
                   "ATENSI_CXX" if _origin() else " (g++ --version)") + "."
            )
        if proc.returncode != 0:
            raise CudaCpuError(
                f"Kompilasi {path} dengan g++ gagal (kode keluar {proc.returncode}). "
                f"Pesan g++ (nomor baris mengacu ke {path}):\n{proc.stderr.strip()}"
            )
        limit = STACK_BYTES[sanitize] - STACK_RESERVE
        too_big = _stack_problems(out_dir.glob(Path(tmp_lib).name + "*.su"), limit)
        if too_big:
            raise CudaCpuError(
                f"Kernel di {path} memakai stack terlalu besar untuk satu thread cudacpu "
                f"(paling banyak {limit // 1024} KiB per thread): {'; '.join(too_big)}. Di CPU "
                "program akan crash. Kecilkan array lokal di kernel, atau pindahkan ke "
                "__shared__ atau memori global."
            )
        _install(tmp_lib, lib, path)
    finally:
        stack_files = out_dir.glob(Path(tmp_lib).name + "*.su") if tmp_lib else ()
        for leftover in [tmp_lib, cpp, *stack_files]:
            if leftover and os.path.exists(leftover):
                os.unlink(leftover)
    return lib, True
