"""Run kernels under AddressSanitizer / ThreadSanitizer in a child process.

A sanitized library can only be loaded into a Python whose sanitizer runtime
was preloaded (``LD_PRELOAD=$(g++ -print-file-name=libasan.so)``), so the
run happens in a fresh interpreter (``_child`` is what that interpreter runs).
"""

from __future__ import annotations

import os
import pickle
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import build
from .errors import BarrierDeadlockError, CudaCpuError, LaunchConfigError, SanitizerError
from .module import resolve_mode
from .source import read_cu

_REPORT = re.compile(
    r"^.*(?:ERROR: AddressSanitizer|WARNING: AddressSanitizer|WARNING: ThreadSanitizer|"
    r"ERROR: ThreadSanitizer|ERROR: LeakSanitizer|runtime error:).*$", re.M)
_CHILD = "import sys; from atensi.cudacpu.sanitizer import _child; sys.exit(_child(*sys.argv[1:]))"
_RUNTIME = {"address": "libasan.so", "thread": "libtsan.so"}
_ERRORS = {cls.__name__: cls for cls in (CudaCpuError, BarrierDeadlockError, LaunchConfigError,
                                          TypeError, ValueError)}


@dataclass
class SubprocessResult:
    returncode: int
    stdout: str
    stderr: str
    report: str                  # the sanitizer's report ("" when it said nothing)
    arrays: tuple | None = None  # run_in_subprocess: the args after the launch

    @property
    def clean(self) -> bool:
        return self.returncode == 0 and not self.report

    def check(self) -> "SubprocessResult":
        """Raise SanitizerError when the sanitizer reported or the child failed."""
        if not self.clean:
            what = "melaporkan masalah" if self.report else f"gagal (kode keluar {self.returncode})"
            raise SanitizerError(f"Proses anak dengan sanitizer {what}:\n{self.report or self.stderr}",
                                 self.report)
        return self


def runtime_library(sanitize: str) -> str:
    name = _RUNTIME[sanitize]
    out = subprocess.run([build.compiler(), f"-print-file-name={name}"], capture_output=True, text=True,
                         check=False).stdout.strip()
    if not out or not os.path.isabs(out) or not os.path.exists(out):
        raise CudaCpuError(
            f"Pustaka {name} dari GCC tidak ditemukan. Pasang paket libasan/libtsan GCC "
            "(di Debian/Ubuntu ikut terpasang bersama g++)."
        )
    return out


def sanitizer_env(sanitize: str, mode: str | None = None, base: dict | None = None) -> dict:
    """Environment for a child process that loads sanitized cudacpu modules."""
    if sanitize is None or sanitize in ("", "none"):
        # resolve_mode reads "no sanitizer" here; a child without one needs no preload.
        raise ValueError(f"Argumen 'sanitize' harus 'address' atau 'thread' (sanitizer yang "
                         f"dimuat proses anak), tetapi yang diterima {sanitize!r}. Untuk proses "
                         "tanpa sanitizer, jalankan kodenya langsung tanpa sanitizer_env.")
    mode, sanitize = resolve_mode(mode, sanitize)
    env = dict(os.environ if base is None else base)
    env["LD_PRELOAD"] = " ".join(filter(None, [runtime_library(sanitize), env.get("LD_PRELOAD", "")]))
    env["ATENSI_CUDACPU_SANITIZE"] = sanitize
    env["ATENSI_CUDACPU_MODE"] = mode
    # Python itself "leaks" at exit; that is not the kernel's problem.
    env["ASAN_OPTIONS"] = ":".join(filter(None, ["detect_leaks=0", env.get("ASAN_OPTIONS", "")]))
    env["TSAN_OPTIONS"] = ":".join(filter(None, ["halt_on_error=0", env.get("TSAN_OPTIONS", "")]))
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("OMP_NUM_THREADS", "1")
    src = str(Path(__file__).resolve().parents[2])  # the directory holding the atensi package
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH", "")]))
    return env


def _result(proc: subprocess.CompletedProcess, arrays=None) -> SubprocessResult:
    m = _REPORT.search(proc.stderr)
    report = proc.stderr[m.start():] if m else ""
    return SubprocessResult(proc.returncode, proc.stdout, proc.stderr, report, arrays)


def run_python_in_subprocess(script: str, *, sanitize: str, mode: str | None = None,
                             timeout: float = 300, cwd: str | None = None) -> SubprocessResult:
    """Run Python ``script`` in a child with the sanitizer runtime preloaded.

    Every ``RawModule`` created there without explicit ``sanitize``/``mode``
    gets this sanitizer (and mode="threads" for "thread").
    """
    env = sanitizer_env(sanitize, mode)
    proc = subprocess.run([sys.executable, "-c", script], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, check=False)
    return _result(proc)


def run_in_subprocess(code: str | None = None, *, path: str, kernel: str, grid, block, args,
                      shared_mem: int = 0, sanitize: str = "address", mode: str | None = None,
                      options=(), timeout: float = 300) -> SubprocessResult:
    """One launch of ``kernel`` under a sanitizer, in a child process.

    Returns the report and ``arrays``: ``args`` as they are after the launch
    (None when the sanitizer stopped the child). An error the launch raises in
    the child (deadlock, bad argument) is raised again here.
    """
    mode, sanitize = resolve_mode(mode, sanitize)
    if code is None:
        code = read_cu(path)
    job = dict(code=code, path=str(path), kernel=kernel, grid=grid, block=block, args=tuple(args),
               shared_mem=shared_mem, mode=mode, sanitize=sanitize, options=tuple(options))
    with tempfile.TemporaryDirectory(prefix="cudacpu-") as tmp:
        job_file, out_file = Path(tmp, "job.pkl"), Path(tmp, "out.pkl")
        job_file.write_bytes(pickle.dumps(job))
        proc = subprocess.run([sys.executable, "-c", _CHILD, str(job_file), str(out_file)],
                              env=sanitizer_env(sanitize, mode), capture_output=True, text=True,
                              timeout=timeout, check=False)
        out = pickle.loads(out_file.read_bytes()) if out_file.exists() else None
    if out is not None and "error" in out:
        cls = _ERRORS.get(out["error"], CudaCpuError)
        raise cls(out["message"])
    return _result(proc, out["arrays"] if out else None)


def _child(job_file: str, out_file: str) -> int:
    from .module import RawModule

    job = pickle.loads(Path(job_file).read_bytes())
    try:
        mod = RawModule(job["code"], path=job["path"], mode=job["mode"], sanitize=job["sanitize"],
                        options=job["options"])
        mod.get_function(job["kernel"])(job["grid"], job["block"], job["args"], shared_mem=job["shared_mem"])
        out = {"arrays": job["args"]}
    except (CudaCpuError, TypeError, ValueError) as exc:
        out = {"error": type(exc).__name__, "message": str(exc)}
    Path(out_file).write_bytes(pickle.dumps(out))
    return 0 if "arrays" in out else 3

