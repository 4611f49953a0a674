"""A sweep of bad input over the library's newer parts, tallied by what happened.

Written from the contract (DESIGN.md, CONTRIBUTING.md) and not from the
regression tests beside each module: a wrong argument is refused in
Indonesian, naming the argument, before any work; nothing returns a wrong or
NaN result without an error, nothing ends in a traceback or a bare Python
error, and no file the book ships or a reader wrote is damaged.

Each case is judged into one of:

ok       a valid (edge) input gave the right answer
jelas    a clear refusal: Indonesian, names the argument, before any work
buruk    a poor refusal: English, unclear, no argument named, or after work
sampah   garbage: a wrong or non-finite result, or success where a refusal belongs
crash    a traceback, or a bare Python error (AttributeError, KeyError, ...)
hilang   lost: a file damaged, overwritten, or left half-written

The cases run once per module (the ``outcomes`` fixture); each has its own
test, which fails on sampah, crash or hilang, and a last test asserts the
totals (at most 5 % of refusals poor) and prints the table. With
``SAPU_JAM=1`` each case's CPU time and outcome are printed as it runs.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import io
import math
import os
import re
import stat
import sys
import time
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
# Permissions do not bind the superuser: the read-only cases only run for others.
SUPERUSER = hasattr(os, "geteuid") and os.geteuid() == 0

OK, CLEAR, POOR, GARBAGE, CRASH, LOST = "ok", "jelas", "buruk", "sampah", "crash", "hilang"
BAD = (GARBAGE, CRASH, LOST)

# Exception types a refusal never has: they are Python noticing a bug.
BARE = (AttributeError, KeyError, IndexError, StopIteration, ZeroDivisionError, RecursionError,
        NameError, AssertionError, SystemError, NotImplementedError, UnicodeError)

_ID_WORDS = frozenset(
    "harus tidak bukan yang dengan atau berkas argumen adalah diterima pakai pakailah misalnya "
    "ada untuk dari tetapi belum sebutkan ubah jalankan tulis ditolak folder melebihi kosong "
    "nilai berisi bisa dibaca ditulis hanya sah variabel lingkungan hapus buat padahal lebih "
    "kecil besar bilangan bulat salah satu tanpa sudah dipakai sama berbentuk angka kernel ini "
    "itu lalu ke di pilih gunakan berikan kode sumber karakter jumlah punya teks atau terlalu "
    "baris satu dua setiap sebagai dulu periksa hanya boleh ditemukan menulis membaca".split())
_EN_WORDS = frozenset(
    "must the is not expected invalid of should cannot got object has no attribute takes "
    "positional argument arguments required error unrecognized usage but be an a was "
    "index out range key".split())


def indonesian(text: str) -> bool:
    # Quotes and paths echo the reader; identifiers (CUDA_ERROR_INVALID_VALUE,
    # max_threads) are names. Neither is the message's own language.
    text = re.sub(r"'[^'\n]*'|\"[^\"\n]*\"|\S*/\S*", " ", text)
    words = [w.lower() for w in re.findall(r"[A-Za-z_]+", text)
             if "_" not in w and not (w.isupper() and len(w) > 1)]
    ours = sum(w in _ID_WORDS for w in words)
    theirs = sum(w in _EN_WORDS for w in words)
    return ours >= 2 and ours > 2 * theirs


def names_one(text: str, names) -> bool:
    return any(re.search(rf"(?<![\w]){re.escape(n)}(?![\w])", text) for n in names)


@dataclass
class Result:
    outcome: str
    detail: str = ""


def _short(value) -> str:
    text = repr(value)
    return text if len(text) < 120 else text[:117] + "..."


def judge_error(err: BaseException, names, *, work_done: bool = False) -> Result:
    message = str(err)
    if isinstance(err, KeyError) and err.args:
        message = str(err.args[0])
    if isinstance(err, BARE) and not (isinstance(err, KeyError) and indonesian(message)):
        return Result(CRASH, f"{type(err).__name__}: {message[:200]}")
    if not indonesian(message) or not names_one(message, names):
        return Result(POOR, f"{type(err).__name__}: {message[:200]}")
    if work_done:
        return Result(POOR, f"refused after work: {message[:200]}")
    return Result(CLEAR, message[:200])


def refused(call, *names, untouched=None) -> Result:
    """``call()`` must raise a refusal naming one of ``names``; ``untouched()``,
    when given, says whether nothing was done (outputs and files as before)."""
    try:
        with np.errstate(all="ignore"):
            out = call()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as err:  # noqa: BLE001 -- every kind is judged
        return judge_error(err, names, work_done=untouched is not None and not untouched())
    return Result(GARBAGE, f"accepted, returned {_short(out)}")


def accepted(call, check) -> Result:
    """A valid input: ``check(result)`` says whether the answer is right."""
    try:
        with np.errstate(all="ignore"):
            out = call()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as err:  # noqa: BLE001
        if isinstance(err, BARE):
            return Result(CRASH, f"{type(err).__name__}: {err}")
        return Result(POOR, f"valid input refused: {type(err).__name__}: {str(err)[:200]}")
    return Result(OK) if check(out) else Result(GARBAGE, f"wrong answer {_short(out)}")


def cli(main, argv, *names, untouched=None, expect_ok=False) -> Result:
    """A command's ``main(argv)`` run in this process, as its terminal would see it."""
    out, errout = io.StringIO(), io.StringIO()
    code = None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(errout):
            code = main(list(argv))
    except SystemExit as stop:
        code = stop.code
    except KeyboardInterrupt:
        raise
    except WorkStarted:
        return Result(GARBAGE, "bad arguments reached the work (training started)")
    except BaseException as err:  # noqa: BLE001 -- a traceback reaches the reader
        return Result(CRASH, f"traceback: {type(err).__name__}: {str(err)[:200]}")
    text = errout.getvalue() + out.getvalue()
    if "Traceback" in text:
        return Result(CRASH, text[-300:])
    if expect_ok:
        return Result(OK) if code in (0, None) else Result(POOR, f"exit {code}: {text[:200]}")
    if code in (0, None):
        return Result(GARBAGE, f"exit 0 for bad arguments: {text[:200]}")
    if isinstance(code, str):  # sys.exit("message")
        text = code + text
    if not indonesian(text) or not names_one(text, names):
        return Result(POOR, f"exit {code}: {text[:200]}")
    if untouched is not None and not untouched():
        return Result(POOR, f"refused after work: {text[:200]}")
    return Result(CLEAR, text[:200])


def digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def script(name: str):
    """A script of scripts/ as a module (they are run by path, not imported)."""
    spec = importlib.util.spec_from_file_location(f"sweep_{name}", ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------------------
# The cases: (id, function of the fixture context returning a Result)
# ---------------------------------------------------------------------------

CASES: dict = {}


def case(name: str):
    def register(fn):
        assert name not in CASES, name
        CASES[name] = fn
        return fn
    return register


def cases(prefix: str, items):
    """Register ``fn(ctx, value)`` once per ``(label, value)`` of ``items``."""
    def register(fn):
        for label, value in items:
            case(f"{prefix}[{label}]")(lambda ctx, value=value: fn(ctx, value))
        return fn
    return register


class Context:
    """What the cases share: one compiled kernel, temporary folders, the modules."""

    def __init__(self, tmp: Path, monkeypatch):
        self.tmp = tmp
        self.mp = monkeypatch
        self._kernel = None
        self._model = None
        self._n = 0

    def fresh(self, name: str = "f") -> Path:
        self._n += 1
        folder = self.tmp / f"c{self._n}"
        folder.mkdir()
        return folder / name

    @property
    def kernel(self):
        """A tiny kernel compiled for the emulator: y[i] = 2 x[i] for i < n."""
        if self._kernel is None:
            from atensi import cudacpu

            code = ('extern "C" __global__ void twice(const float* x, float* y, int n) {\n'
                    '  int i = blockIdx.x * blockDim.x + threadIdx.x;\n'
                    '  if (i < n) y[i] = 2.0f * x[i];\n}\n')
            self._kernel = cudacpu.RawModule(code=code, path="sapu.cu").get_function("twice")
        return self._kernel

    @property
    def model(self):
        if self._model is None:
            self._model = load_rujukan()
        return self._model


def _lib(name):
    return importlib.import_module(f"atensi.{name}")


def _rujukan():
    # The task modules may move under atensi.tasks; the public names stay.
    for name in ("atensi.rujukan", "atensi.tasks.rujukan"):
        with contextlib.suppress(ImportError):
            return importlib.import_module(name)
    raise ImportError("rujukan")


def load_rujukan(path=None):
    """The book's coreference model (or the file at ``path``), wherever its loader lives."""
    with contextlib.suppress(ImportError, AttributeError):
        return importlib.import_module("atensi.tasks").load_weights("rujukan", path)
    return _rujukan().load(path)


def _recall():
    for name in ("atensi.recall", "atensi.tasks.recall", "atensi.tasks.ingat"):
        with contextlib.suppress(ImportError):
            return importlib.import_module(name)
    raise ImportError("recall")


# --- atensi.cudacpu: the RawKernel call shape ------------------------------------------

def _twice_args(n=5):
    x = np.arange(n, dtype=np.float32)
    y = np.full(n, -7.0, np.float32)
    return x, y


def _kernel_refusal(ctx, grid, block, args_of, *names, **kw):
    x, y = _twice_args()
    before = y.copy()
    args = args_of(x, y)
    return refused(lambda: ctx.kernel(grid, block, args, **kw), *names,
                   untouched=lambda: np.array_equal(y, before))


_BAD_GRIDS = [("zero", 0), ("negative", -1), ("float", 1.5), ("str", "1"), ("four", (1, 1, 1, 1)),
              ("none", None), ("bool", True), ("y-too-big", (1, 65536)), ("x-2^31", (2**31,)),
              ("nan", float("nan")), ("empty", ())]


@cases("cudacpu.launch.grid", _BAD_GRIDS)
def _(ctx, grid):
    return _kernel_refusal(ctx, grid, (32,), lambda x, y: (x, y, np.int32(5)), "grid")


_BAD_BLOCKS = [("zero", 0), ("1025", 1025), ("z-65", (1, 1, 65)), ("2d-over", (64, 32)),
               ("float", 32.0), ("list-str", ["32"]), ("negative", (-32,)), ("bool", False)]


@cases("cudacpu.launch.block", _BAD_BLOCKS)
def _(ctx, block):
    return _kernel_refusal(ctx, (1,), block, lambda x, y: (x, y, np.int32(5)), "block")


_BAD_ARGS = [
    ("too-few", lambda x, y: (x, y), ("n", "args")),
    ("too-many", lambda x, y: (x, y, np.int32(5), np.int32(1)), ("args",)),
    ("python-int", lambda x, y: (x, y, 5), ("n",)),
    ("python-float-for-int", lambda x, y: (x, y, 5.0), ("n",)),
    ("int64-for-int", lambda x, y: (x, y, np.int64(5)), ("n",)),
    ("float64-array", lambda x, y: (x.astype(np.float64), y, np.int32(5)), ("x",)),
    ("int-array", lambda x, y: (x.astype(np.int32), y, np.int32(5)), ("x",)),
    ("strided-out", lambda x, y: (x, np.zeros(10, np.float32)[::2], np.int32(5)), ("y",)),
    ("readonly-out", lambda x, y: (x, np.frombuffer(y.tobytes(), np.float32), np.int32(5)), ("y",)),
    ("list-array", lambda x, y: (x.tolist(), y, np.int32(5)), ("x",)),
    ("none-array", lambda x, y: (None, y, np.int32(5)), ("x",)),
    ("args-not-tuple", lambda x, y: x, ("args",)),
    ("string-scalar", lambda x, y: (x, y, "5"), ("n",)),
    ("bool-scalar", lambda x, y: (x, y, True), ("n",)),
]


@cases("cudacpu.launch.args", [(label, (make, names)) for label, make, names in _BAD_ARGS])
def _(ctx, spec):
    make, names = spec
    return _kernel_refusal(ctx, (1,), (32,), make, *names)


@cases("cudacpu.launch.shared_mem", [("negative", -1), ("float", 1.5), ("over", 1 << 20),
                                     ("str", "0")])
def _(ctx, smem):
    return _kernel_refusal(ctx, (1,), (32,), lambda x, y: (x, y, np.int32(5)), "shared_mem",
                           shared_mem=smem)


@case("cudacpu.launch.ok-partial-block")
def _(ctx):
    x, y = _twice_args(37)
    ctx.kernel((2,), (32,), (x, y, np.int32(37)))
    return Result(OK) if np.array_equal(y, 2 * x) else Result(GARBAGE, "y != 2x")


@case("cudacpu.launch.ok-out-of-bounds-n-is-caught")
def _(ctx):
    # n larger than the arrays: the kernel writes past y; the guard must say so.
    x, y = _twice_args(5)
    return refused(lambda: ctx.kernel((1,), (32,), (x, y, np.int32(9))), "y")


@case("cudacpu.launch.max_dynamic_shared_size_bytes")
def _(ctx):
    def set_it():
        ctx.kernel.max_dynamic_shared_size_bytes = -5
    return refused(set_it, "max_dynamic_shared_size_bytes")


# --- atensi.cudacpu: RawModule and friends ----------------------------------------------

_BAD_MODULES = [
    ("code-bytes", dict(code=b"x"), ("code",)),
    ("code-int", dict(code=5), ("code",)),
    ("nothing", dict(), ("code", "path")),
    ("mode-typo", dict(code="", mode="fiber"), ("mode",)),
    ("mode-int", dict(code="", mode=1), ("mode",)),
    ("sanitize-typo", dict(code="", sanitize="adress"), ("sanitize",)),
    ("sanitize-true", dict(code="", sanitize=True), ("sanitize",)),
    ("seed-negative", dict(code="", seed=-1), ("seed",)),
    ("seed-float", dict(code="", seed=1.5), ("seed",)),
    ("options-int", dict(code="", options=5), ("options",)),
    ("options-bad-flag", dict(code="", options=("-o/tmp/x",)), ("options", "-o/tmp/x")),
    ("path-missing", dict(path="/tidak/ada/sama/sekali.cu"), ("path",)),
    ("path-int", dict(path=5), ("path",)),
]


@cases("cudacpu.RawModule", [(label, (kw, names)) for label, kw, names in _BAD_MODULES])
def _(ctx, spec):
    from atensi import cudacpu

    kw, names = spec
    return refused(lambda: cudacpu.RawModule(**kw), *names)


def _cu_file(ctx, data: bytes) -> Path:
    path = ctx.fresh("k.cu")
    path.write_bytes(data)
    return path


_KERNEL_TEXT = 'extern "C" __global__ void k(float* y) { y[threadIdx.x] = 1.0f; }\n'


@cases("cudacpu.RawModule.path-content", [
    ("latin1", _KERNEL_TEXT.replace("1.0f", "1.0f; // caf\xe9").encode("latin-1")),
    ("binary", b"\x7fELF\x00\x01\x02" * 20),
    ("nul", b"extern \x00"),
])
def _(ctx, data):
    from atensi import cudacpu

    path = _cu_file(ctx, data)
    return refused(lambda: cudacpu.RawModule(path=str(path)), "path", str(path), path.name)


@case("cudacpu.RawModule.path-is-folder")
def _(ctx):
    from atensi import cudacpu

    folder = ctx.fresh("folder.cu")
    folder.mkdir()
    return refused(lambda: cudacpu.RawModule(path=str(folder)), "path", folder.name)


@case("cudacpu.RawModule.ok-bom")
def _(ctx):
    from atensi import cudacpu

    path = _cu_file(ctx, b"\xef\xbb\xbf" + _KERNEL_TEXT.encode())

    def run():
        y = np.zeros(4, np.float32)
        cudacpu.RawModule(path=str(path)).get_function("k")((1,), (4,), (y,))
        return y
    return accepted(run, lambda y: np.array_equal(y, np.ones(4, np.float32)))


@cases("cudacpu.get_function", [("unknown", "nope"), ("int", 3), ("none", None), ("empty", "")])
def _(ctx, name):
    mod = ctx.kernel.module
    return refused(lambda: mod.get_function(name), "name", "Kernel", repr(name), str(name))


@cases("cudacpu.raw_kernel", [("code-none", (None, "k")), ("name-int", (_KERNEL_TEXT, 5)),
                              ("name-missing", (_KERNEL_TEXT, "kk"))])
def _(ctx, spec):
    from atensi import cudacpu

    code, name = spec
    return refused(lambda: cudacpu.raw_kernel(code, name), "code", "name", "kk", "Kernel")


@cases("cudacpu.build_library", [("code-bytes", dict(code=b"")), ("mode-bad", dict(code="", mode="x")),
                                 ("sanitize-bad", dict(code="", sanitize="memory"))])
def _(ctx, kw):
    from atensi import cudacpu

    return refused(lambda: cudacpu.build_library(**kw), "code", "mode", "sanitize")


@cases("cudacpu.sanitizer_env", [("none", None), ("typo", "adress"), ("int", 1), ("empty", "")])
def _(ctx, value):
    from atensi import cudacpu

    return refused(lambda: cudacpu.sanitizer_env(value), "sanitize")


@cases("cudacpu.run_in_subprocess", [
    ("sanitize-bad", dict(sanitize="adress")),
    ("grid-bad", dict(grid=0)),
    ("args-list", dict(args=[1, 2])),
    ("kernel-int", dict(kernel=5)),
])
def _(ctx, kw):
    from atensi import cudacpu

    base = dict(code=_KERNEL_TEXT, path="k.cu", kernel="k", grid=(1,), block=(4,),
                args=(np.zeros(4, np.float32),), sanitize="address")
    base.update(kw)
    return refused(lambda: cudacpu.run_in_subprocess(**base), *kw, "Kernel")


# --- atensi.cudacpu.profile ---------------------------------------------------------------

@cases("cudacpu.profile.per_request", [("what-typo", ("twice", 3, "shared-ld")),
                                        ("what-int", ("twice", 3, 5)),
                                        ("kernel-unknown", ("nope", 3, "global_ld")),
                                        ("line-str", ("twice", "3", "global_ld"))])
def _(ctx, spec):
    from atensi import cudacpu

    kernel, line, what = spec
    x, y = _twice_args(64)
    try:
        with cudacpu.profile() as prof:
            ctx.kernel((2,), (32,), (x, y, np.int32(64)))
    except cudacpu.CudaCpuError as err:  # no binutils: say it, by name
        return judge_error(err, ("profile", "addr2line", "objdump"))
    return refused(lambda: prof.per_request(kernel, line, what), "what", "kernel", "line")


@case("cudacpu.profile.ok-counts")
def _(ctx):
    from atensi import cudacpu

    x, y = _twice_args(64)

    def run():
        with cudacpu.profile() as prof:
            ctx.kernel((2,), (32,), (x, y, np.int32(64)))
        return prof
    return accepted(run, lambda p: p.launches.get("twice") == 1 and bool(p.kernels.get("twice")))


@case("cudacpu.profile.site_totals-unknown-kernel")
def _(ctx):
    from atensi import cudacpu

    with cudacpu.profile() as prof:
        pass
    return accepted(lambda: prof.site_totals("nope"), lambda d: d == {})


# --- environment variables read by the emulator --------------------------------------------

_ENV = [
    ("ATENSI_ARCH", "sm_91"), ("ATENSI_ARCH", "SM_90"), ("ATENSI_ARCH", "sm90"),
    ("ATENSI_ARCH", " sm_80x"), ("ATENSI_ARCH", "\u0455m_90"), ("ATENSI_ARCH", "90"),
    ("ATENSI_ARCH", "sm_9O"), ("ATENSI_ARCH", "sm_90 "),
    ("ATENSI_CUDACPU_MODE", "fiber"), ("ATENSI_CUDACPU_SEED", "-3"),
    ("ATENSI_CUDACPU_SEED", "satu"), ("ATENSI_CUDACPU_MAX_THREADS", "0"),
    ("ATENSI_CPU_BUDGET", "inf"), ("ATENSI_CUDACPU_SANITIZE", "memory"),
]


@cases("env.kernels.attention", [(f"{n}={v!r}", (n, v)) for n, v in _ENV])
def _(ctx, spec):
    from atensi import kernels

    name, value = spec
    Q = np.ones((3, 4), np.float32)
    ctx.mp.setenv(name, value)
    try:
        return refused(lambda: kernels.attention(Q, Q, Q, backend="cpu", impl="chain-v1"), name)
    finally:
        ctx.mp.delenv(name)


@case("env.ATENSI_ARCH.ok-empty-is-unset")
def _(ctx):
    from atensi import kernels, reference

    rng = np.random.default_rng(1)
    Q, K, V = (rng.standard_normal((5, 8)).astype(np.float32) for _ in range(3))
    ctx.mp.setenv("ATENSI_ARCH", "")
    try:
        return accepted(lambda: kernels.attention(Q, K, V, backend="cpu", impl="chain-v1"),
                        lambda O: np.allclose(O, reference.attention(Q, K, V), atol=1e-5))
    finally:
        ctx.mp.delenv("ATENSI_ARCH")


# --- atensi.kernels: the registry's queries ------------------------------------------------

_REGISTRY = [
    ("versions-nope", lambda r: r.versions("nope"), ("step",)),
    ("versions-empty", lambda r: r.versions(""), ("step",)),
    ("versions-none", lambda r: r.versions(None), ("step",)),
    ("versions-list", lambda r: r.versions(["scores"]), ("step",)),
    ("versions-causal-str", lambda r: r.versions("softmax", causal="ya"), ("causal",)),
    ("for_step-version-v0", lambda r: r.for_step("scores", "v0"), ("version",)),
    ("for_step-version-int", lambda r: r.for_step("scores", 2), ("version",)),
    ("for_step-d_k-0", lambda r: r.for_step("fused", "v1", d_k=0), ("d_k",)),
    ("for_step-d_k-129", lambda r: r.for_step("fused", "v1", d_k=129), ("d_k",)),
    ("for_step-d_k-float", lambda r: r.for_step("fused", "v1", d_k=64.0), ("d_k",)),
    ("for_step-d_k-bool", lambda r: r.for_step("fused", "v1", d_k=True), ("d_k",)),
    ("for_step-d_k-str", lambda r: r.for_step("fused", "v1", d_k="64"), ("d_k",)),
    ("for_step-precision-typo", lambda r: r.for_step("fused", "v3", d_k=64, precision="tf16"),
     ("precision",)),
    ("for_step-split-str", lambda r: r.for_step("fused", "v2", d_k=64, split="ya"), ("split",)),
    ("for_step-causal-int", lambda r: r.for_step("softmax", "v2", causal=2), ("causal",)),
    ("emulated_speed-nope", lambda r: r.emulated_speed("nope", "v1"), ("step",)),
    ("emulated_speed-version", lambda r: r.emulated_speed("fused", "v9"), ("version",)),
    ("shared_for-d_k-neg", lambda r: r.shared_for("fused", "v1", -4), ("d_k",)),
    ("shared_for-d_k-none", lambda r: r.shared_for("fused", "v1", None), ("d_k",)),
    ("shared_for-step", lambda r: r.shared_for(None, "v1", 64), ("step",)),
    ("width_for-0", lambda r: r.width_for(0), ("d_k",)),
    ("width_for-nan", lambda r: r.width_for(float("nan")), ("d_k",)),
    ("width_for-1e9", lambda r: r.width_for(10**9), ("d_k",)),
    ("get-nope", lambda r: r.get("nope"), ("nope", "name")),
    ("get-none", lambda r: r.get(None), ("None", "name")),
    ("get-list", lambda r: r.get(["scores_v1"]), ("name", "Kernel")),
    ("variant-family", lambda r: r.variant("nope", 64), ("family", "nope")),
    ("variant-d_k", lambda r: r.variant("attention_fused", 1000), ("d_k",)),
    ("check_constants-nope", lambda r: r.check_constants("nope.cu"), ("file", "nope.cu")),
    ("missing-not-kernel", lambda r: r.missing("scores_v1", r.hardware.ARCHS["sm_80"]), ("k",)),
    ("runs_on-arch-str", lambda r: r.runs_on(r.KERNELS[0], "sm_80"), ("arch",)),
]


@cases("kernels.registry", [(label, (call, names)) for label, call, names in _REGISTRY])
def _(ctx, spec):
    from atensi.kernels import registry

    call, names = spec
    return refused(lambda: call(registry), *names)


@case("kernels.registry.ok-a-reader-file-has-no-defines")
def _(ctx):
    from atensi.kernels import registry

    return accepted(lambda: (registry.defines("salinan_saya.cu"), registry.kernels_in("x.cu")),
                    lambda out: out == ((), ()))


@case("kernels.registry.ok-for_step-no-variant-is-None")
def _(ctx):
    from atensi.kernels import registry

    return accepted(lambda: registry.for_step("scores", "v1", causal=True),
                    lambda k: k is None or k.causal)


_SPLITS = [
    ("H-str", lambda f: f("a", 64), ("H",)), ("H-0", lambda f: f(0, 64), ("H",)),
    ("H-neg", lambda f: f(-1, 64), ("H",)), ("T-0", lambda f: f(1, 0), ("T",)),
    ("T-float", lambda f: f(1, 64.5), ("T",)), ("T-none", lambda f: f(1, None), ("T",)),
    ("sm-0", lambda f: f(1, 64, 0), ("sm_count",)), ("version-v9", lambda f: f(1, 64, 132, "v9"),
                                                        ("version",)),
    ("version-v1", lambda f: f(1, 64, 132, "v1x"), ("version",)),
    ("H-bool", lambda f: f(True, 64), ("H",)),
]


@cases("kernels.fused_splits", [(label, (call, names)) for label, call, names in _SPLITS])
def _(ctx, spec):
    from atensi import kernels

    call, names = spec
    return refused(lambda: call(kernels.fused_splits), *names)


@case("kernels.fused_splits.ok")
def _(ctx):
    from atensi import kernels

    return accepted(lambda: kernels.fused_splits(1, 4096), lambda n: isinstance(n, int) and n > 1)


# --- atensi.kernels: the public launch functions -------------------------------------------

def _qkv(T=8, d=32, H=1, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((H, T, d)).astype(np.float32) for _ in range(3))


def _split_kernel(d=32):
    from atensi.kernels import launch

    return launch.fused_kernel("v2", d, split=True)


def _partials(ctx, change, *names):
    from atensi.kernels import launch

    k = _split_kernel()
    Q, K, V = _qkv()
    args = dict(k=k, Qd=Q, Kd=K, Vd=V, splits=2, causal=True, scale=True, backend="cpu")
    args.update(change(dict(args)))
    return refused(lambda: launch.launch_partials(
        args["k"], args["Qd"], args["Kd"], args["Vd"], args["splits"], causal=args["causal"],
        scale=args["scale"], backend=args["backend"]), *names)


_PARTIALS = [
    ("k-str", lambda a: {"k": "attention_fused_v2_split_d32"}, ("k",)),
    ("k-not-split", lambda a: {"k": __import__("atensi.kernels.launch", fromlist=["x"])
                               .fused_kernel("v2", 32)}, ("k",)),
    ("d_k-over-width", lambda a: {"Qd": _qkv(d=64)[0], "Kd": _qkv(d=64)[1], "Vd": _qkv(d=64)[2]},
     ("d_k", "Qd")),
    ("K-shorter", lambda a: {"Kd": a["Kd"][:, :4].copy()}, ("Kd",)),
    ("V-shorter", lambda a: {"Vd": a["Vd"][:, :4].copy()}, ("Vd",)),
    ("Q-1d", lambda a: {"Qd": np.ones(32, np.float32)}, ("Qd",)),
    ("Q-float64", lambda a: {"Qd": a["Qd"].astype(np.float64)}, ("Qd",)),
    ("K-strided", lambda a: {"Kd": np.ones((1, 16, 32), np.float32)[:, ::2]}, ("Kd",)),
    ("splits-0", lambda a: {"splits": 0}, ("splits",)),
    ("splits-neg", lambda a: {"splits": -1}, ("splits",)),
    ("splits-float", lambda a: {"splits": 2.0}, ("splits",)),
    ("splits-huge", lambda a: {"splits": 70000}, ("splits",)),
    ("causal-int", lambda a: {"causal": 1}, ("causal",)),
    ("scale-none", lambda a: {"scale": None}, ("scale",)),
    ("backend-typo", lambda a: {"backend": "gpu"}, ("backend", "Qd")),
    ("Q-nan", lambda a: {"Qd": np.full((1, 8, 32), np.nan, np.float32)}, ("Qd",)),
]


@cases("kernels.launch_partials", [(label, (change, names)) for label, change, names in _PARTIALS])
def _(ctx, spec):
    change, names = spec
    return _partials(ctx, change, *names)


def _combine_inputs(splits=2, H=1, T=8, d=32):
    from atensi.kernels import launch

    k = _split_kernel(d)
    Q, K, V = _qkv(T, d, H)
    Op, ML = launch.launch_partials(k, Q, K, V, splits, causal=True, scale=True, backend="cpu")
    return k, Q, K, V, Op, ML


_COMBINE = [
    ("name-wrong", lambda i: dict(name="scores_v1"), ("name",)),
    ("name-none", lambda i: dict(name=None), ("name",)),
    ("Op-3d", lambda i: dict(Op=i["Op"][0]), ("Op",)),
    ("Op-float64", lambda i: dict(Op=i["Op"].astype(np.float64)), ("Op",)),
    ("ML-wrong", lambda i: dict(ML=np.ones((2, 1, 8, 3), np.float32)), ("ML",)),
    ("ML-other-splits", lambda i: dict(ML=i["ML"][:1].copy()), ("ML",)),
    ("Od-smaller", lambda i: dict(Od=np.zeros((1, 4, 32), np.float32)), ("Od",)),
    ("Od-larger", lambda i: dict(Od=np.zeros((1, 16, 32), np.float32)), ("Od",)),
    ("Od-other-d", lambda i: dict(Od=np.zeros((1, 8, 16), np.float32)), ("Od",)),
    ("Od-more-heads", lambda i: dict(Od=np.zeros((2, 8, 32), np.float32)), ("Od",)),
    ("Od-readonly", lambda i: dict(Od=np.frombuffer(bytes(8 * 32 * 4), np.float32)
                                   .reshape(1, 8, 32)), ("Od",)),
    ("Od-list", lambda i: dict(Od=[[0.0]]), ("Od",)),
]


@cases("kernels.launch_combine", [(label, (change, names)) for label, change, names in _COMBINE])
def _(ctx, spec):
    from atensi.kernels import launch

    change, names = spec
    k, Q, K, V, Op, ML = _combine_inputs()
    args = dict(name=k.combine, Op=Op, ML=ML, Od=np.full((1, 8, 32), 5.0, np.float32))
    args.update(change(args))
    od = args["Od"]
    before = od.copy() if isinstance(od, np.ndarray) else None
    return refused(lambda: launch.launch_combine(args["name"], args["Op"], args["ML"], od,
                                                 backend="cpu"), *names,
                   untouched=(lambda: np.array_equal(od, before)) if before is not None else None)


@cases("kernels.launch_combine.ok", [("splits-3", 3), ("splits-1", 1)])
def _(ctx, splits):
    from atensi import reference
    from atensi.kernels import launch

    k, Q, K, V, Op, ML = _combine_inputs(splits=splits)
    Od = np.full(Q.shape, 9.0, np.float32)
    return accepted(lambda: launch.launch_combine(k.combine, Op, ML, Od, backend="cpu"),
                    lambda O: np.allclose(O, reference.attention(Q, K, V), atol=1e-5))


_MASK = [
    ("Od-smaller", lambda S: dict(Od=np.zeros((1, 4, 4), np.float32)), ("Od",)),
    ("Od-larger", lambda S: dict(Od=np.zeros((1, 16, 16), np.float32)), ("Od",)),
    ("Sd-float64", lambda S: dict(Sd=S.astype(np.float64)), ("Sd",)),
    ("H-0", lambda S: dict(H=0), ("H",)),
    ("H-wrong", lambda S: dict(H=2), ("Sd", "Od", "H")),
    ("T-wrong", lambda S: dict(T=4), ("Sd", "Od", "T")),
    ("T-float", lambda S: dict(T=8.0), ("T",)),
    ("version-v9", lambda S: dict(version="v9"), ("version",)),
    ("backend-none-str", lambda S: dict(backend="None"), ("backend", "Sd")),
]


@cases("kernels.launch_causal_mask", [(label, (change, names)) for label, change, names in _MASK])
def _(ctx, spec):
    from atensi.kernels import launch

    change, names = spec
    S = np.random.default_rng(2).standard_normal((1, 8, 8)).astype(np.float32)
    args = dict(Sd=S, Od=np.full((1, 8, 8), 3.0, np.float32), H=1, T=8, backend="cpu",
                version="v1")
    args.update(change(S))
    od = args["Od"]
    before = od.copy()
    return refused(lambda: launch.launch_causal_mask(
        args["Sd"], od, args["H"], args["T"], backend=args["backend"], version=args["version"]),
        *names, untouched=lambda: np.array_equal(od, before))


@case("kernels.launch_causal_mask.ok-in-place")
def _(ctx):
    from atensi import reference
    from atensi.kernels import launch

    S = np.random.default_rng(3).standard_normal((2, 5, 5)).astype(np.float32)
    want = reference.causal_mask(S)
    return accepted(lambda: launch.launch_causal_mask(S, S, 2, 5, backend="cpu"),
                    lambda O: np.array_equal(O, want))


# --- atensi.kernels: the command line --------------------------------------------------------

def _kernels_cli(argv):
    from atensi.kernels import cli as kcli

    return kcli.main(argv)


_KCLI = [
    ("profil-unknown", ["--profil", "nope"], ("nope",)),
    ("profil-file", ["--profil", "kernels/scores.cu"], ("kernels/scores.cu",)),
    ("profil-empty-name", ["--profil", ""], ("''", "Kernel", "NAMA")),
    ("profil-with-tabel", ["--profil", "--tabel"], ("--profil", "--tabel")),
    ("profil-with-arch-bad", ["--profil", "--arch", "sm90"], ("--arch", "--profil")),
    ("arch-bad", ["--arch", "sm-90", "kernels/scores.cu"], ("--arch",)),
    ("arch-empty", ["--arch", ""], ("--arch",)),
    ("unknown-option", ["--profile"], ("--profile",)),
    ("daftar-with-file", ["--daftar", "nope.cu"], ("nope.cu", "--daftar")),
    ("sass-missing-file", ["--sass", "/tidak/ada.cu"], ("/tidak/ada.cu",)),
    ("file-missing", ["/tidak/ada.cu"], ("/tidak/ada.cu",)),
    ("file-folder", ["kernels"], ("kernels",)),
]


@cases("kernels.cli", [(label, (argv, names)) for label, argv, names in _KCLI])
def _(ctx, spec):
    argv, names = spec
    return cli(_kernels_cli, argv, *names)


@case("kernels.cli.file-latin1")
def _(ctx):
    path = _cu_file(ctx, b"// caf\xe9\n" + _KERNEL_TEXT.encode())
    return cli(_kernels_cli, [str(path)], str(path))


@case("kernels.cli.ok-daftar")
def _(ctx):
    return cli(_kernels_cli, ["--daftar"], expect_ok=True)


# --- atensi.weight_file ---------------------------------------------------------------------

def _weights(ctx, **change):
    from atensi import weight_file

    args = dict(params={"w": np.ones((2, 2))}, config={"n": 1}, chars="ab", info={"a": 1})
    args.update(change)
    return weight_file, args


def _readonly_target(ctx, target):
    target.parent.chmod(0o500)
    ctx.readonly.append(target.parent)
    return target


def _folder_target(ctx, target):
    target.mkdir()
    return target


_WRITE = [
    ("info-list", dict(info=[1, 2]), None, ("info",)),
    ("info-nan", dict(info={"x": float("nan")}), None, ("info",)),
    ("params-none", dict(params=None), None, ("params",)),
    ("params-str-values", dict(params={"w": "abc"}), None, ("params", "w")),
    ("path-suffix", {}, lambda ctx, t: t.with_suffix(".txt"), ("path", ".npz")),
    ("path-folder", {}, _folder_target, ("path",)),
    ("path-int", {}, lambda ctx, t: 5, ("path",)),
    ("path-nul", {}, lambda ctx, t: str(t) + "\x00x.npz", ("path",)),
    *([("path-readonly-folder", {}, _readonly_target, ("path",))] if not SUPERUSER else []),
    ("path-parent-is-file", {}, lambda ctx, t: (t.write_text("x"), t / "m.npz")[1], ("path",)),
]


@cases("weight_file.write", [(label, (change, where, names))
                             for label, change, where, names in _WRITE])
def _(ctx, spec):
    change, where, names = spec
    target = ctx.fresh("m.npz")
    weight_file, args = _weights(ctx, **change)
    path = where(ctx, target) if where else target
    made_before = sorted(target.parent.iterdir())
    return refused(lambda: weight_file.write(path, **args), *names,
                   untouched=lambda: sorted(target.parent.iterdir()) == made_before)


@case("weight_file.write.keeps-old-on-refusal")
def _(ctx):
    weight_file, args = _weights(ctx)
    target = ctx.fresh("m.npz")
    weight_file.write(target, **args)
    old = digest(target)
    bad = dict(args, info="nicht")
    result = refused(lambda: weight_file.write(target, **bad), "info")
    if digest(target) != old:
        return Result(LOST, "the old weights file changed")
    return result


def _make(config):
    return config, {"w": (2, 2)}


def _read_case(ctx, data: bytes | None, *names, member_edit=None):
    from atensi import weight_file

    path = ctx.fresh("r.npz")
    if data is not None:
        path.write_bytes(data)
    if member_edit is not None:
        weight_file.write(path, params={"w": np.ones((2, 2))}, config={"n": 1}, chars="ab")
        member_edit(path)
    return refused(lambda: weight_file.read(path, _make), *names, str(path), path.name)


def _rezip(path: Path, change):
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    members = change(members)
    with zipfile.ZipFile(path, "w") as z:
        for n, b in members.items():
            z.writestr(n, b)


def _npy(array) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


_READ = [
    ("missing", None, None),
    ("empty", b"", None),
    ("text", b"bukan zip sama sekali", None),
    ("truncated-zip", b"PK\x03\x04" + b"\x00" * 30, None),
    ("no-config", None, lambda p: _rezip(p, lambda m: {k: v for k, v in m.items()
                                                       if k != "config.npy"})),
    ("param-nan", None, lambda p: _rezip(p, lambda m: {**m, "param/w.npy":
                                                        _npy(np.full((2, 2), np.nan, np.float32))})),
    ("param-shape", None, lambda p: _rezip(p, lambda m: {**m, "param/w.npy":
                                                          _npy(np.ones((3, 2), np.float32))})),
    ("param-object", None, lambda p: _rezip(p, lambda m: {**m, "param/w.npy":
                                                           _npy(np.array([None, 1], dtype=object))})),
    ("config-not-json", None, lambda p: _rezip(p, lambda m: {**m, "config.npy": _npy(np.array("{x"))})),
    ("info-list", None, lambda p: _rezip(p, lambda m: {**m, "info.npy": _npy(np.array("[1]"))})),
    ("param-missing", None, lambda p: _rezip(p, lambda m: {k: v for k, v in m.items()
                                                           if k != "param/w.npy"})),
]


@cases("weight_file.read", [(label, (data, edit)) for label, data, edit in _READ])
def _(ctx, spec):
    data, edit = spec
    if data is None and edit is None:
        from atensi import weight_file

        path = ctx.fresh("tidak-ada.npz")
        return refused(lambda: weight_file.read(path, _make), str(path), "path")
    return _read_case(ctx, data, "path", member_edit=edit)


@case("weight_file.read.folder")
def _(ctx):
    from atensi import weight_file

    folder = ctx.fresh("d.npz")
    folder.mkdir()
    return refused(lambda: weight_file.read(folder, _make), "path")


@case("weight_file.read.ok-tilde")
def _(ctx):
    from atensi import weight_file

    home = ctx.fresh("rumah")
    home.mkdir()
    ctx.mp.setenv("HOME", str(home))
    weight_file.write(home / "m.npz", params={"w": np.ones((2, 2))}, config={"n": 1}, chars="ab")
    return accepted(lambda: weight_file.read("~/m.npz", _make),
                    lambda c: np.array_equal(c.params["w"], np.ones((2, 2))) and not
                    (Path.cwd() / "~").exists())


# --- atensi.rujukan -------------------------------------------------------------------------

SENTENCE = "Ani memanggil Budi , dia menoleh"


def _other_model(which: str):
    from atensi.model import TinyGPT

    return TinyGPT.load(ROOT / "results" / which)


_RESOLVE = [
    ("model-none", lambda c: (None, [SENTENCE]), ("model",)),
    ("model-path", lambda c: ("results/model_rujukan.npz", [SENTENCE]), ("model",)),
    ("model-params", lambda c: (c.model.params, [SENTENCE]), ("model",)),
    ("model-character", lambda c: (_other_model("model_kecil.npz"), [SENTENCE]), ("model",)),
    ("model-recall", lambda c: (_other_model("model_ingat.npz"), [SENTENCE]), ("model",)),
    ("sentences-none", lambda c: (c.model, None), ("sentences",)),
    ("sentences-empty", lambda c: (c.model, []), ("sentences",)),
    ("sentences-int", lambda c: (c.model, 5), ("sentences",)),
    ("sentences-bytes", lambda c: (c.model, [SENTENCE.encode()]), ("sentences", "Kalimat")),
    ("same-name", lambda c: (c.model, ["Ani memanggil Ani , dia menoleh"]), ("Kalimat", "sentences")),
    ("unknown-word", lambda c: (c.model, ["Ani memanggil Bob , dia menoleh"]), ("Kalimat", "Bob")),
    ("cyrillic-A", lambda c: (c.model, ["\u0410ni memanggil Budi , dia menoleh"]), ("U+0410",)),
    ("zero-width", lambda c: (c.model, ["Ani mema\u200bnggil Budi , dia menoleh"]), ("U+200B",)),
    ("rtl-override", lambda c: (c.model, ["Ani memanggil Bu\u202edi , dia menoleh"]), ("U+202E",)),
    ("too-short", lambda c: (c.model, ["Ani memanggil Budi"]), ("Kalimat", "sentences")),
    ("too-long", lambda c: (c.model, [SENTENCE + " lagi"]), ("Kalimat", "lagi")),
    ("wrong-link", lambda c: (c.model, ["Ani memanggil Budi karena dia menoleh"]), ("Kalimat",)),
    ("huge", lambda c: (c.model, ["Ani " * 2_000_000]), ("Kalimat",)),
    ("dict", lambda c: (c.model, {SENTENCE: 1}), ("sentences",)),
    ("nested", lambda c: (c.model, [[SENTENCE]]), ("Kalimat", "sentences")),
]


@cases("rujukan.resolve", [(label, (make, names)) for label, make, names in _RESOLVE])
def _(ctx, spec):
    r = _rujukan()
    make, names = spec
    model, sentences = make(ctx)
    res = refused(lambda: r.resolve(model, sentences), *names)
    if res.outcome == CLEAR and len(res.detail) > 0 and len(str(res.detail)) >= 200:
        pass
    return res


@case("rujukan.resolve.huge-message-is-short")
def _(ctx):
    r = _rujukan()
    try:
        r.resolve(ctx.model, ["Ani " * 2_000_000])
    except ValueError as err:
        return Result(CLEAR) if len(str(err)) < 2000 else Result(POOR, f"{len(str(err))} chars")
    return Result(GARBAGE, "accepted")


@case("rujukan.resolve.tampered-weights")
def _(ctx):
    import copy

    r = _rujukan()
    model = copy.deepcopy(ctx.model)
    for v in model.params.values():
        v *= np.float32(1e30)
    return refused(lambda: r.resolve(model, [SENTENCE]), "model")


@case("rujukan.resolve.ok")
def _(ctx):
    r = _rujukan()
    return accepted(lambda: r.resolve(ctx.model, [SENTENCE, "Budi dipanggil Ani karena dia bosan"]),
                    lambda out: out == ["Budi", "Ani"] or (len(out) == 2 and set(out) <= {"Ani", "Budi"}))


_HEAD = [("bools", [True, False]), ("out-of-range", (5, 0)), ("float", (0.5, 0)),
         ("str", "ab"), ("one", (1,)), ("three", (0, 0, 0)), ("negative", (0, -1)),
         ("none-pair", (None, None)), ("nan", (float("nan"), 0)), ("numpy-float", np.array([0.0, 0.0]))]


@cases("rujukan.head_attention.head", _HEAD)
def _(ctx, head):
    r = _rujukan()
    return refused(lambda: r.head_attention(ctx.model, [SENTENCE], head=head), "head")


@case("rujukan.head_attention.ok")
def _(ctx):
    r = _rujukan()
    return accepted(lambda: r.head_attention(ctx.model, [SENTENCE]),
                    lambda A: A.shape == (1, 6) and np.all(np.isfinite(A)) and np.all(A >= 0)
                    and A.sum() <= 1 + 1e-5)


@cases("rujukan.seen_in_training", [("none", None), ("int", 3), ("empty", []),
                                    ("unknown", ["Ani makan Budi , dia menoleh"]),
                                    ("numbers", [[1, 2, 3]])])
def _(ctx, sentences):
    r = _rujukan()
    return refused(lambda: r.seen_in_training(sentences), "sentences", "Kalimat")


@case("rujukan.seen_in_training.ok")
def _(ctx):
    r = _rujukan()
    split = r.make_split(0)
    train, test = r.sentence(split.train[0][:6]), r.sentence(split.test[0][:6])
    return accepted(lambda: r.seen_in_training([train, test]), lambda out: out == [True, False])


@cases("rujukan.sentence", [("neg", [-1]), ("float", [1.7]), ("big", [10_000]), ("str", ["a"]),
                            ("nan", [float("nan")]), ("none", None), ("empty", []),
                            ("bool", [True]), ("text", "Ani")])
def _(ctx, tokens):
    r = _rujukan()
    return refused(lambda: r.sentence(tokens), "tokens")


@cases("rujukan.load", [("folder", "results"), ("missing", "/tidak/ada.npz"),
                        ("corpus", "results/korpus.txt"), ("json", "results/targets.json"),
                        ("other-task", "results/model_kecil.npz"), ("int", 5)])
def _(ctx, path):
    target = ROOT / path if isinstance(path, str) and not path.startswith("/") else path
    before = digest(target) if isinstance(target, Path) else None
    res = refused(lambda: load_rujukan(target), "path", str(path), Path(str(path)).name)
    if before is not None and digest(target) != before:
        return Result(LOST, f"{path} changed")
    if res.outcome == CLEAR and re.search(r"\b[Hh]apus\b", res.detail) and path.startswith("results"):
        return Result(POOR, "advises deleting a shipped file")
    return res


@cases("rujukan.make_split", [("neg", -1), ("float", 1.5), ("str", "0"), ("none", None)])
def _(ctx, seed):
    r = _rujukan()
    return refused(lambda: r.make_split(seed), "seed")


# --- atensi.recall --------------------------------------------------------------------------

@cases("recall.make_split", [("seed-neg", dict(seed=-1)), ("seed-str", dict(seed="0")),
                             ("n_train-0", dict(n_train=0)), ("n_test-float", dict(n_test=2.5)),
                             ("n_train-bool", dict(n_train=True))])
def _(ctx, kw):
    rc = _recall()
    return refused(lambda: rc.make_split(**kw), *kw)


@cases("recall.story", [("neg", [-1]), ("float", [1.7]), ("big", [999]), ("str", ["a"]),
                        ("none", None), ("nan", [float("nan")])])
def _(ctx, tokens):
    rc = _recall()
    return refused(lambda: rc.story(tokens), "tokens")


@case("recall.story.ok")
def _(ctx):
    rc = _recall()
    return accepted(lambda: rc.story([0, rc.VOCAB.index("punya"), rc.VOCAB.index("apel")]),
                    lambda s: s == "Budi punya apel")


@cases("recall.accuracy", [("model-none", "none"), ("model-rujukan", "rujukan")])
def _(ctx, which):
    rc = _recall()
    split = rc.make_split(0, n_train=1, n_test=4)
    model = None if which == "none" else ctx.model
    return refused(lambda: rc.accuracy(model, split.test), "model")


# --- the training command ---------------------------------------------------------------------

def _train_main():
    return importlib.import_module("atensi.train").main


_SHIPPED = ["model_ingat.npz", "model_kecil.npz", "model_rujukan.npz", "eksperimen_rujukan.json",
            "eksperimen_skala.json", "eksperimen_ingat.json", "korpus.txt", "targets.json"]


class WorkStarted(Exception):
    """Raised in place of training: a refusal must come before it."""


def _no_training(*args, **kwargs):
    raise WorkStarted("training started")


def _train(ctx, argv, *names, watch=()):
    before = {p: digest(p) for p in watch}
    ctx.mp.setattr(importlib.import_module("atensi.training_loop"), "fit", _no_training)
    res = cli(_train_main(), argv, *names)
    if any(digest(p) != d for p, d in before.items()):
        return Result(LOST, f"changed: {[str(p) for p, d in before.items() if digest(p) != d]}")
    return res


_TRAIN = [
    ("steps-0", ["--steps", "0"], ("--steps",)),
    ("steps-neg", ["--steps", "-5"], ("--steps",)),
    ("steps-float", ["--steps", "1.5"], ("--steps",)),
    ("steps-word", ["--steps", "banyak"], ("--steps",)),
    ("task-typo", ["--task", "rujuk"], ("--task",)),
    ("experiment-typo", ["--experiment", "scale"], ("--experiment",)),
    ("task-vs-experiment", ["--task", "rujukan", "--experiment", "skala", "--steps", "1"],
     ("--task", "--experiment")),
    ("task-teks-vs-ingat", ["--task", "teks", "--experiment", "ingat", "--steps", "1"],
     ("--task", "--experiment")),
    ("quick-experiment", ["--quick", "--experiment", "rujukan"], ("--quick",)),
    ("unknown", ["--epochs", "3"], ("--epochs",)),
    ("out-empty", ["--quick", "--out", ""], ("--out",)),
    ("out-suffix", ["--quick", "--out", "/tmp/x.txt"], ("--out",)),
    ("out-json-for-model", ["--quick", "--task", "rujukan", "--out", "/tmp/x.json"], ("--out",)),
    ("out-npz-for-experiment", ["--experiment", "rujukan", "--steps", "1", "--out", "/tmp/x.npz"],
     ("--out",)),
]


@cases("train.cli", [(label, (argv, names)) for label, argv, names in _TRAIN])
def _(ctx, spec):
    argv, names = spec
    return _train(ctx, argv, *names, watch=[ROOT / "results" / n for n in _SHIPPED])


@cases("train.cli.out-shipped", [(n, n) for n in _SHIPPED])
def _(ctx, name):
    target = ROOT / "results" / name
    if name.endswith(".json"):
        argv = ["--experiment", "rujukan", "--steps", "1", "--out", str(target)]
    else:
        argv = ["--quick", "--task", "rujukan", "--out", str(target)]
    return _train(ctx, argv, "--out", watch=[target])


@case("train.cli.out-shipped-relative")
def _(ctx):
    ctx.mp.chdir(ROOT)
    target = ROOT / "results" / "model_ingat.npz"
    return _train(ctx, ["--quick", "--task", "ingat", "--out", "results/./model_ingat.npz"],
                  "--out", watch=[target])


@case("train.cli.out-folder")
def _(ctx):
    folder = ctx.fresh("hasil.npz")
    folder.mkdir()
    return _train(ctx, ["--quick", "--task", "rujukan", "--out", str(folder)], "--out")


@(case("train.cli.out-readonly-folder") if not SUPERUSER else (lambda fn: fn))
def _(ctx):
    target = ctx.fresh("m.npz")
    target.parent.chmod(0o500)
    ctx.readonly.append(target.parent)
    return _train(ctx, ["--quick", "--task", "rujukan", "--out", str(target)], "--out")


# /proc takes no new files, even from the superuser: a read-only place for everyone.
UNWRITABLE = Path("/proc/sapu-atensi")


@case("train.cli.out-unwritable-place")
def _(ctx):
    return _train(ctx, ["--quick", "--task", "rujukan", "--out", str(UNWRITABLE / "m.npz")],
                  "--out")


@case("weight_file.write.unwritable-place")
def _(ctx):
    weight_file, args = _weights(ctx)
    return refused(lambda: weight_file.write(Path("/proc") / "sapu-atensi.npz", **args), "path")


@case("make_pdf.out-unwritable-place")
def _(ctx):
    mp = script("make_pdf")
    build = _single(ctx)
    ctx.mp.setitem(sys.modules, "playwright", None)  # Chromium must not start
    ctx.mp.setitem(sys.modules, "playwright.sync_api", None)
    return cli(mp.main, ["--build", str(build), "--out", "/proc/sapu-atensi.pdf"], "--out")


@case("build_book.log-unwritable-place")
def _(ctx):
    bb = script("build_book")
    return cli(bb.main, ["--log", "/proc/sapu-atensi.log", "--", "true"], "--log")


@case("train.cli.out-existing-reader-file")
def _(ctx):
    # A file the reader made (not a weights file) is never replaced by a refused run.
    target = ctx.fresh("catatan.npz")
    target.write_bytes(b"catatan pembaca")
    res = _train(ctx, ["--steps", "0", "--task", "rujukan", "--out", str(target)], "--steps")
    if target.read_bytes() != b"catatan pembaca":
        return Result(LOST, "the reader's file changed")
    return res


@case("train.cli.out-parent-is-file")
def _(ctx):
    blocker = ctx.fresh("berkas")
    blocker.write_text("x")
    return _train(ctx, ["--quick", "--task", "rujukan", "--out", str(blocker / "m.npz")], "--out")


@case("train.cli.out-nul")
def _(ctx):
    return _train(ctx, ["--quick", "--out", "/tmp/a\x00b.npz"], "--out")


# --- scripts/make_zip.py ----------------------------------------------------------------------

def _site(ctx, pages=("index", "chapters/a", "chapters/b"), cut=()):
    build = ctx.fresh("_build")
    html = build / "html"
    for page in pages:
        p = html / f"{page}.html"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("<html><body>isi</body>" + ("" if page in cut else "</html>"), encoding="utf-8")
    toc = build.parent / "_toc.yml"
    toc.write_text("root: index\nchapters:\n- file: chapters/a\n- file: chapters/b\n",
                   encoding="utf-8")
    return build, toc


def _zip_case(ctx, argv_of, *names, site=None):
    mz = script("make_zip")
    build, toc = site or _site(ctx)
    archive = build / "html" / "unduh" / mz.ZIP_NAME
    res = cli(mz.main, argv_of(build, toc), *names)
    if res.outcome == CLEAR and archive.exists():
        return Result(POOR, "refused after writing the zip")
    return res


_ZIP = [
    ("build-missing", lambda b, t: ["--build", str(b.parent / "nope")], ("--build", "nope")),
    ("build-file", lambda b, t: ["--build", str(t)], ("--build", "_toc.yml")),
    ("toc-missing", lambda b, t: ["--build", str(b), "--toc", str(t) + ".x"], ("--toc", "_toc.yml.x")),
    ("toc-binary", lambda b, t: (t.write_bytes(b"\xff\xfe\x00"), ["--build", str(b), "--toc", str(t)])[1],
     ("--toc", "_toc.yml")),
    ("toc-not-yaml", lambda b, t: (t.write_text("root: [\n"), ["--build", str(b), "--toc", str(t)])[1],
     ("--toc", "_toc.yml")),
    ("toc-list-of-numbers", lambda b, t: (t.write_text("- 1\n- 2\n"),
                                          ["--build", str(b), "--toc", str(t)])[1],
     ("--toc", "_toc.yml")),
    ("unknown-option", lambda b, t: ["--bulid", str(b)], ("--bulid",)),
    ("build-no-value", lambda b, t: ["--build"], ("--build",)),
    ("extra-positional", lambda b, t: ["--build", str(b), "--toc", str(t), "lagi"], ("lagi",)),
]


@cases("make_zip", [(label, (argv_of, names)) for label, argv_of, names in _ZIP])
def _(ctx, spec):
    argv_of, names = spec
    return _zip_case(ctx, argv_of, *names)


@case("make_zip.page-missing")
def _(ctx):
    site = _site(ctx, pages=("index", "chapters/a"))
    return _zip_case(ctx, lambda b, t: ["--build", str(b), "--toc", str(t)], "chapters/b.html",
                     site=site)


@case("make_zip.page-cut")
def _(ctx):
    site = _site(ctx, cut=("chapters/a",))
    return _zip_case(ctx, lambda b, t: ["--build", str(b), "--toc", str(t)], "chapters/a.html",
                     site=site)


@(case("make_zip.readonly") if not SUPERUSER else (lambda fn: fn))
def _(ctx):
    build, toc = _site(ctx)
    (build / "html").chmod(0o500)
    ctx.readonly.append(build / "html")
    return _zip_case(ctx, lambda b, t: ["--build", str(b), "--toc", str(t)], "--build",
                     str(build / "html"), "unduh", site=(build, toc))


@case("make_zip.ok-and-old-zip-kept-on-refusal")
def _(ctx):
    mz = script("make_zip")
    build, toc = _site(ctx)
    archive = build / "html" / "unduh" / mz.ZIP_NAME
    first = cli(mz.main, ["--build", str(build), "--toc", str(toc)], expect_ok=True)
    if first.outcome != OK or not zipfile.is_zipfile(archive):
        return first if first.outcome != OK else Result(GARBAGE, "no zip written")
    old = digest(archive)
    (build / "html" / "chapters" / "b.html").unlink()
    cli(mz.main, ["--build", str(build), "--toc", str(toc)], "b.html")
    return Result(OK) if digest(archive) == old else Result(LOST, "the earlier zip changed")


# --- scripts/make_pdf.py (argument errors only: Chromium never starts) -------------------------

def _single(ctx):
    build = ctx.fresh("_build")
    single = build / "singlehtml"
    single.mkdir(parents=True)
    (single / "index.html").write_text("<html></html>", encoding="utf-8")
    return build


_PDF = [
    ("unknown-option", lambda b: ["--ouput", "x.pdf"], ("--ouput",)),
    ("out-suffix", lambda b: ["--build", str(b), "--out", str(b / "buku.txt")], ("--out",)),
    ("out-folder", lambda b: ["--build", str(b), "--out", str(b)], ("--out",)),
    ("out-parent-file", lambda b: ["--build", str(b), "--out",
                                   str(b / "singlehtml" / "index.html" / "a.pdf")], ("--out",)),
    *([("out-readonly", lambda b: (b.chmod(0o500), ["--build", str(b), "--out",
                                                    str(b / "a.pdf")])[1], ("--out",))]
      if not SUPERUSER else []),
    ("single-missing", lambda b: ["--single", str(b / "nope"), "--out", str(b / "a.pdf")],
     ("--single", "nope")),
    ("build-missing", lambda b: ["--build", str(b / "nope")], ("--build", "nope")),
    ("out-no-value", lambda b: ["--out"], ("--out",)),
    ("out-empty", lambda b: ["--build", str(b), "--out", ""], ("--out",)),
]


@cases("make_pdf", [(label, (argv_of, names)) for label, argv_of, names in _PDF])
def _(ctx, spec):
    argv_of, names = spec
    mp = script("make_pdf")
    build = _single(ctx)
    ctx.readonly.append(build)

    def no_browser(*args, **kwargs):
        raise AssertionError("Chromium started for an argument error")

    ctx.mp.setattr(mp, "make_pdf", _guarded_make_pdf(mp.make_pdf, no_browser, ctx))
    return cli(mp.main, argv_of(build), *names)


def _guarded_make_pdf(real, no_browser, ctx):
    # Playwright is the work: an argument error must stop before it is imported.
    def run(*args, **kwargs):
        ctx.mp.setitem(sys.modules, "playwright", None)
        ctx.mp.setitem(sys.modules, "playwright.sync_api", None)
        return real(*args, **kwargs)
    return run


# --- scripts/serve_gzip.py ---------------------------------------------------------------------

_SERVE = [
    ("port-word", lambda f: ["delapan", str(f)], ("PORT", "port")),
    ("port-0", lambda f: ["0", str(f)], ("PORT", "port")),
    ("port-big", lambda f: ["70000", str(f)], ("PORT", "port")),
    ("port-neg", lambda f: ["-1", str(f)], ("PORT", "port", "-1")),
    ("folder-missing", lambda f: ["8000", str(f / "nope")], ("FOLDER", "folder")),
    ("folder-file", lambda f: ["8000", str(f / "a.txt")], ("FOLDER", "folder")),
    ("nothing", lambda f: [], ("port", "PORT")),
    ("extra", lambda f: ["8000", str(f), "lagi"], ("lagi",)),
]


@cases("serve_gzip", [(label, (argv_of, names)) for label, argv_of, names in _SERVE])
def _(ctx, spec):
    argv_of, names = spec
    sg = script("serve_gzip")
    folder = ctx.fresh("situs")
    folder.mkdir()
    (folder / "a.txt").write_text("x")
    return cli(sg.main, argv_of(folder), *names)


def _serve(ctx, folder):
    import functools
    import http.server
    import threading

    sg = script("serve_gzip")
    handler = functools.partial(sg.GzipHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    ctx.servers.append(server)
    return server.server_address[1]


def _get(port, path):
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path, headers={"Accept-Encoding": "gzip"})
        response = conn.getresponse()
        return response.status, response.read()
    except (OSError, http.client.HTTPException) as err:
        return None, str(err).encode()
    finally:
        conn.close()


@cases("serve_gzip.request", [("symlink-out", "/luar/rahasia.txt"), ("nul", "/a.txt%00.html"),
                              ("dotdot", "/../rahasia.txt"), ("encoded-dotdot", "/%2e%2e/rahasia.txt"),
                              ("symlink-file", "/tautan.txt"), ("backslash", "/..%5crahasia.txt")])
def _(ctx, path):
    base = ctx.fresh("srv")
    base.mkdir()
    (base / "rahasia.txt").write_text("RAHASIA")
    folder = base / "situs"
    folder.mkdir()
    (folder / "a.txt").write_text("isi")
    (folder / "luar").symlink_to(base)
    (folder / "tautan.txt").symlink_to(base / "rahasia.txt")
    port = _serve(ctx, folder)
    status, body = _get(port, path)
    if status is None:
        return Result(CRASH, f"connection closed without a response: {body[:100]!r}")
    if b"RAHASIA" in body or (status == 200 and b"RAHASIA" in _gunzip(body)):
        return Result(LOST, f"served a file outside the folder ({status})")
    return Result(CLEAR) if status == 404 else Result(POOR, f"status {status}")


def _gunzip(body: bytes) -> bytes:
    import gzip

    with contextlib.suppress(OSError, EOFError):
        return gzip.decompress(body)
    return body


@case("serve_gzip.request.ok-gzip")
def _(ctx):
    folder = ctx.fresh("situs")
    folder.mkdir()
    (folder / "a.html").write_text("<html>halo</html>")
    port = _serve(ctx, folder)
    status, body = _get(port, "/a.html")
    return Result(OK) if status == 200 and _gunzip(body) == b"<html>halo</html>" else \
        Result(GARBAGE, f"{status} {body[:60]!r}")


# --- scripts/sync_notebooks.py and the repository variables ------------------------------------

_SYNC = [
    ("unknown", ["--cek"], ("--cek",)),
    ("both", ["--check", "--force"], ("--check", "--force")),
    ("positional", ["chapters/skor.md"], ("chapters/skor.md",)),
    ("check-value", ["--check=ya"], ("--check",)),
]


@cases("sync_notebooks.cli", [(label, (argv, names)) for label, argv, names in _SYNC])
def _(ctx, spec):
    argv, names = spec
    sn = script("sync_notebooks")
    ipynbs = {p: digest(p) for p in (ROOT / "chapters").glob("*.ipynb")}
    res = cli(sn.main, argv, *names)
    if any(digest(p) != d for p, d in ipynbs.items()):
        return Result(LOST, "a chapter notebook changed")
    return res


_REPO = [
    ("ATENSI_REPOSITORY", "pemilik"), ("ATENSI_REPOSITORY", "a b/c"),
    ("ATENSI_REPOSITORY", "-x/atensi"), ("ATENSI_REPOSITORY", "pemilik/atensi\"; rm"),
    ("ATENSI_REPOSITORY", "https://gitlab.com/a/b"), ("ATENSI_REPOSITORY", "pemilik/.."),
    ("ATENSI_REPOSITORY", "p\u0435milik/atensi"), ("ATENSI_REPOSITORY", "x" * 300 + "/atensi"),
    ("ATENSI_BRANCH", "-rf"), ("ATENSI_BRANCH", "a b"), ("ATENSI_BRANCH", "main'"),
    ("ATENSI_BRANCH", "x" * 400), ("ATENSI_BRANCH", "\u202emain"),
]


@cases("env.repository", [(f"{n}={v[:20]!r}", (n, v)) for n, v in _REPO])
def _(ctx, spec):
    sn = script("sync_notebooks")
    name, value = spec
    ctx.mp.setenv("ATENSI_REPOSITORY", "pemilik/atensi")
    ctx.mp.setenv(name, value)
    return refused(sn.repo_url, name)


@case("env.repository.ok")
def _(ctx):
    sn = script("sync_notebooks")
    ctx.mp.setenv("ATENSI_REPOSITORY", "pemilik/atensi")
    ctx.mp.setenv("ATENSI_BRANCH", "cabang-1")
    return accepted(sn.repo_url, lambda url: url == "https://github.com/pemilik/atensi")


@cases("sync_notebooks.ipynb_text", [("bom", "\ufeff"), ("crlf", None)])
def _(ctx, prefix):
    sn = script("sync_notebooks")
    source = (ROOT / "chapters" / "skor.md")
    if not source.is_file():
        source = sorted((ROOT / "chapters").glob("*.md"))[1]
    text = source.read_text(encoding="utf-8")
    md = ctx.fresh(source.name)
    md.write_bytes(((prefix or "") + (text if prefix else text.replace("\n", "\r\n"))).encode())
    plain = ctx.fresh(source.name)
    plain.write_text(text, encoding="utf-8")

    def same():
        import json

        a, b = json.loads(sn.ipynb_text(md)), json.loads(sn.ipynb_text(plain))
        return a, b
    return accepted(same, lambda ab: ab[0]["metadata"] == ab[1]["metadata"]
                    and [c["source"] for c in ab[0]["cells"]] == [c["source"] for c in ab[1]["cells"]])


# --- scripts/build_book.py ------------------------------------------------------------------

_BUILD = [
    ("no-log", lambda d: ["--", "true"], ("--log",)),
    ("no-command", lambda d: ["--log", str(d / "log.txt")], ("--", "perintah")),
    ("log-folder", lambda d: ["--log", str(d), "--", "true"], ("--log",)),
    *([("log-readonly", lambda d: (d.chmod(0o500), ["--log", str(d / "l.txt"), "--", "true"])[1],
        ("--log",))] if not SUPERUSER else []),
    ("log-parent-file", lambda d: ((d / "f").write_text("x"), ["--log", str(d / "f" / "l.txt"),
                                                            "--", "true"])[1], ("--log",)),
    ("command-missing", lambda d: ["--log", str(d / "l.txt"), "--", "/tidak/ada/jupyter-book"],
     ("/tidak/ada/jupyter-book",)),
    ("unknown-option", lambda d: ["--log", str(d / "l.txt"), "--lgo", "x", "--", "true"],
     ("--lgo",)),
]


@cases("build_book", [(label, (argv_of, names)) for label, argv_of, names in _BUILD])
def _(ctx, spec):
    argv_of, names = spec
    bb = script("build_book")
    folder = ctx.fresh("log")
    folder.mkdir()
    ctx.readonly.append(folder)
    return cli(bb.main, argv_of(folder), *names)


# ---------------------------------------------------------------------------
# Running and tallying
# ---------------------------------------------------------------------------

SHIPPED_DIRS = ("results", "kernels")


def _shipped_digests() -> dict:
    found = {}
    for folder in SHIPPED_DIRS:
        for p in sorted((ROOT / folder).glob("*")):
            if p.is_file():
                found[p] = digest(p)
    return found


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    ctx = Context(tmp_path_factory.mktemp("sapu"), None)
    ctx.readonly = []
    ctx.servers = []
    home_cwd = Path.cwd()
    shipped = _shipped_digests()
    results = {}
    try:
        for name, run in CASES.items():
            # Each case patches on its own: nothing it sets reaches the next.
            ctx.mp = pytest.MonkeyPatch()
            ctx.mp.chdir(home_cwd)
            start = time.process_time()
            try:
                results[name] = run(ctx)
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as err:  # noqa: BLE001 -- a case's own set-up failing
                results[name] = Result(CRASH, f"case set-up: {type(err).__name__}: {err}")
            finally:
                ctx.mp.undo()
                for folder in ctx.readonly:
                    with contextlib.suppress(OSError):
                        folder.chmod(0o700)
                ctx.readonly.clear()
                if os.environ.get("SAPU_JAM"):
                    print(f"{time.process_time() - start:6.2f} {name} {results.get(name)}",
                          file=sys.__stderr__, flush=True)
    finally:
        for server in ctx.servers:
            server.shutdown()
            server.server_close()
    changed = [str(p.relative_to(ROOT)) for p, d in shipped.items() if digest(p) != d]
    return results, changed


@pytest.mark.parametrize("name", list(CASES))
def test_case(outcomes, name):
    results, _ = outcomes
    result = results[name]
    assert result.outcome not in BAD, f"{name}: {result.outcome}: {result.detail}"


def test_no_shipped_file_changed(outcomes):
    _, changed = outcomes
    assert not changed, f"the sweep changed shipped files: {changed}"


def test_totals(outcomes):
    results, _ = outcomes
    tally = Counter(r.outcome for r in results.values())
    refusals = tally[CLEAR] + tally[POOR]
    lines = [f"{len(results)} kasus:"]
    for outcome in (OK, CLEAR, POOR, GARBAGE, CRASH, LOST):
        lines.append(f"  {outcome:7} {tally[outcome]:4}")
    share = tally[POOR] / refusals if refusals else 0.0
    lines.append(f"  penolakan buruk: {tally[POOR]} dari {refusals} ({100 * share:.1f} %)")
    for name, r in sorted(results.items()):
        if r.outcome not in (OK, CLEAR):
            lines.append(f"  {r.outcome:7} {name}: {r.detail[:160]}")
    print("\n".join(lines))
    assert len(results) >= 250
    assert not any(tally[o] for o in BAD), "\n".join(lines)
    assert share <= 0.05, "\n".join(lines)


# --- the judge itself -------------------------------------------------------------------------

@pytest.mark.parametrize("message, expected", [
    ("Argumen 'T' harus bilangan bulat >= 1, tetapi yang diterima 0.", CLEAR),
    ("T must be a positive integer", POOR),            # English
    ("Nilai tidak sah, periksa masukannya.", POOR),     # Indonesian, but no argument named
])
def test_judge_reads_language_and_the_argument_named(message, expected):
    assert refused(lambda: (_ for _ in ()).throw(ValueError(message)), "T").outcome == expected


def test_judge_calls_bare_python_errors_crashes_and_silence_garbage():
    assert refused(lambda: {}["T"], "T").outcome == CRASH
    assert refused(lambda: None.shape, "T").outcome == CRASH
    assert refused(lambda: np.float32("nan"), "T").outcome == GARBAGE
    out = np.zeros(3)
    late = refused(lambda: (out.fill(1), int("x"))[1], "T", untouched=lambda: not out.any())
    assert late.outcome == POOR  # (English, and after the output was written)


def test_judge_of_a_command_reads_exit_status_and_traceback():
    def ok(argv):
        return 0

    def traceback(argv):
        raise FileNotFoundError(2, "No such file or directory")

    def refusal(argv):
        print("alat: argumen '--out' harus berakhiran .npz, bukan .txt", file=sys.stderr)
        return 2

    assert cli(ok, ["--out", "x.txt"], "--out").outcome == GARBAGE
    assert cli(traceback, [], "--out").outcome == CRASH
    assert cli(refusal, [], "--out").outcome == CLEAR
