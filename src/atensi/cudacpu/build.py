"""Compile a translation unit with g++ into a cached shared library.

The cache lives in ``$ATENSI_CACHE/cudacpu`` (default
``~/.cache/atensi/cudacpu``); a library's name holds a hash of the source,
the header, the flags and the g++ version. Files are written under a temporary
name and moved into place with ``os.replace``, so two processes compiling the
same kernel at once are safe.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from .errors import CudaCpuError

HEADER = Path(__file__).with_name("cuda_cpu.h")
BASE_FLAGS = ("-std=c++20", "-fPIC", "-shared", "-pthread", "-fvisibility=hidden", "-fno-math-errno")
MODE_FLAGS = {"fibers": ("-DCUDACPU_FIBERS",), "threads": ("-DCUDACPU_THREADS",)}
SANITIZE_FLAGS = {
    None: ("-O2",),
    "address": ("-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address"),
    "thread": ("-O1", "-g", "-fsanitize=thread"),
}
# NVRTC options that mean nothing to g++; dropped so one options tuple serves both.
_NVRTC_ONLY = re.compile(r"^(-arch|--gpu-architecture|-lineinfo|--?use_fast_math|-std|-Xptxas|--fmad|"
                         r"-G$|--device-debug|-default-device|-rdc|--relocatable-device-code)")


def cache_dir() -> Path:
    root = os.environ.get("ATENSI_CACHE")
    if root:
        base = Path(root)
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "atensi"
    path = base / "cudacpu"
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=path, delete=True)
        probe.close()
    except OSError:
        path = Path(tempfile.gettempdir()) / f"atensi-cudacpu-{os.getuid()}"
        path.mkdir(parents=True, exist_ok=True)
    return path


def compiler() -> str:
    cxx = os.environ.get("ATENSI_CXX") or "g++"
    if shutil.which(cxx) is None:
        raise CudaCpuError(
            f"Kompiler C++ '{cxx}' tidak ditemukan. cudacpu butuh g++ (GCC 11 atau lebih baru); "
            "pasang dengan `sudo apt install g++` (Debian/Ubuntu/Colab)."
        )
    return cxx


@functools.lru_cache(maxsize=None)
def _compiler_version(cxx: str) -> str:
    out = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=False)
    return out.stdout.splitlines()[0] if out.stdout else "unknown"


def user_flags(options) -> tuple[str, ...]:
    """Keep -D/-U/-I from CuPy-style ``options``; refuse anything else."""
    if isinstance(options, str):
        options = (options,)
    kept = []
    for opt in options:
        if not isinstance(opt, str):
            raise TypeError(f"Setiap elemen 'options' harus str, tetapi yang diterima {type(opt).__name__}.")
        if opt.startswith(("-D", "-U", "-I")):
            kept.append(opt)
        elif not _NVRTC_ONLY.match(opt):
            raise ValueError(
                f"Opsi kompilasi {opt!r} tidak didukung cudacpu. Yang dipakai hanya -D, -U dan -I; "
                "opsi khusus NVRTC (-arch, -lineinfo, --use_fast_math, -std, -Xptxas) diabaikan."
            )
    return tuple(kept)


def flags_for(mode: str, sanitize: str | None, options=()) -> tuple[str, ...]:
    return BASE_FLAGS + SANITIZE_FLAGS[sanitize] + MODE_FLAGS[mode] + user_flags(options)


def _stem(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", Path(path).stem)[:40] or "kernel"


def _write_atomic(target: Path, data: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=target.name + ".", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(data)
    os.replace(tmp, target)


def build(tu: str, *, path: str, flags: tuple[str, ...]) -> tuple[Path, bool]:
    """Compile ``tu`` unless cached. Returns (library path, was it compiled now)."""
    cxx = compiler()
    key = hashlib.sha256(
        "\0".join([tu, HEADER.read_text(), " ".join(flags), _compiler_version(cxx)]).encode()
    ).hexdigest()[:24]
    out_dir = cache_dir()
    lib = out_dir / f"{_stem(path)}-{key}.so"
    if lib.exists():
        return lib, False
    cpp = out_dir / f"{_stem(path)}-{key}.cpp"
    _write_atomic(cpp, tu)
    fd, tmp_lib = tempfile.mkstemp(dir=out_dir, prefix=lib.name + ".", suffix=".tmp")
    os.close(fd)
    cmd = [cxx, *flags, "-I", str(HEADER.parent), "-o", tmp_lib, str(cpp)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise CudaCpuError(
                f"Kompilasi {path} dengan g++ gagal (kode keluar {proc.returncode}). "
                f"Pesan g++ (nomor baris mengacu ke {path}):\n{proc.stderr.strip()}"
            )
        os.replace(tmp_lib, lib)
    finally:
        if os.path.exists(tmp_lib):
            os.unlink(tmp_lib)
    return lib, True
