"""Hitungan ala profiler dari jalannya kernel di emulator: ``atensi.cudacpu.profile()``.

    with atensi.cudacpu.profile() as prof:
        kernel(grid, block, args)              # RawKernel apa pun, juga milik pembaca
    prof.kernels["nama_kernel"]                 # {nama metrik Nsight Compute: nilai}
    prof.sites                                  # Site(kernel, file, line, metric, value), per tempat akses

    with atensi.cudacpu.profile(warp=((0, 0, 0), 0)) as prof:   # juga alamat satu warp
        kernel(grid, block, args)
    prof.requests                               # WarpRequest: alamat ke-32 lane per permintaan

Every launch inside the context runs a second build of its module (fibers
mode) in which g++ calls a hook before every memory access and at every basic
block (cuda_cpu_profile.h states the model: warp-level requests rebuilt from
per-lane sequence numbers, shared-memory phases and banks, 32-byte sectors).
The arrays the kernel writes are the same as in a normal launch.

What is counted, with Nsight Compute's names (thread-level ``..._thread_...``
metrics count lanes, the others warp-level instructions or requests):

* shared memory per load/store site: requests (``smsp__inst_executed_op_shared_ld.sum``),
  wavefronts (``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum``) and bank
  conflicts = wavefronts beyond the ideal (``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum``);
  ``_st`` for stores;
* global memory per site: requests and 32-byte sectors
  (``l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum``, ``l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum``);
  ``cp.async`` as ``_op_ldgsts``;
* shuffles, votes, barriers, ``wmma::mma_sync`` (``smsp__inst_executed_op_...``);
* floating point per thread (``smsp__sass_thread_inst_executed_op_{ffma,fmul,fadd}_pred_on.sum``,
  MUFU as ``..._op_mufu_pred_on.sum``): the x86 instructions of the profile build
  (``-O2 -ffp-contract=fast``, no vectorisation), counted per basic block and weighted by how
  often each lane ran that block. A GPU compiler can fuse and schedule differently: these are
  the operations the kernel's C code asks for, not NVCC's SASS;
* branches: ``smsp__thread_inst_executed_per_inst_executed.ratio`` (active lanes per warp visit
  of a basic block) and ``smsp__sass_average_branch_targets_threads_uniform.pct`` (warp visits
  where every lane agreed).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import re
import shutil
import subprocess
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from . import build, source
from .errors import BarrierDeadlockError, CudaCpuError

# Hooks instead of a sanitizer runtime (cuda_cpu_profile.h); no vectorising, so one
# C access is one access; contraction as on a GPU (NVRTC's --fmad=true).
PROFILE_FLAGS = ("-O2", "-g", "-fno-tree-vectorize", "-fno-tree-slp-vectorize",
                 "-fsanitize=kernel-address", "--param", "asan-instrumentation-with-call-threshold=0",
                 "--param", "asan-stack=0", "--param", "asan-globals=0",
                 "-fsanitize-coverage=trace-pc", "-DCUDACPU_PROFILE")
WARP = 32
_FLAG_STORE, _FLAG_SHARED, _FLAG_ASYNC = 1, 2, 4


@dataclass(frozen=True)
class Site:
    """One count at one place of the .cu source."""

    kernel: str
    file: str
    line: int
    metric: str
    value: float

    def __str__(self) -> str:
        return f"{self.kernel} {self.file}:{self.line} {self.metric} = {self.value:g}"


@dataclass(frozen=True)
class WarpRequest:
    """Satu permintaan tingkat warp dari warp yang dilacak: alamat setiap lane.

    ``addresses``: 32 alamat bita (``None``: lane itu tidak ikut). *Shared memory*:
    alamat yang dipakai penghitung (bank = alamat / 4 mod 32). Global: ``(array + 1)
    << 40`` ditambah offset bita di array argumen itu, seperti ``cudaMalloc`` yang
    meratakan setiap array ke 256 bita (sektor = alamat / 32).
    """

    kernel: str
    file: str
    line: int
    space: str          # "shared" or "global"
    store: bool
    size: int           # bytes per lane
    addresses: tuple    # 32 entries: int or None
    order: int          # position of its first record in the warp's trace

    @property
    def lanes(self) -> int:
        return sum(a is not None for a in self.addresses)

    @property
    def banks(self) -> tuple:
        """Bank of each lane's first word (``None`` for an idle lane)."""
        return tuple(None if a is None else a // 4 % WARP for a in self.addresses)

    @property
    def sectors(self) -> tuple:
        """Global: the 32-byte sector of each lane's first byte."""
        return tuple(None if a is None else a // 32 for a in self.addresses)

    def phases(self) -> list:
        """Shared: per phase, its lanes and wavefronts, by the model of cuda_cpu_profile.h
        (4-byte accesses: one phase of 32 lanes; 8 bytes: two of 16; 16 bytes: four of 8)."""
        size = max(self.size, 4)
        per = 32 if size <= 4 else 16 if size <= 8 else 8
        out = []
        for ph in range(WARP // per):
            lanes = [l for l in range(ph * per, (ph + 1) * per) if self.addresses[l] is not None]
            if not lanes:
                continue
            words: dict = defaultdict(set)
            for l in lanes:
                a = self.addresses[l]
                for w in range(a // 4, (a + max(self.size, 1) - 1) // 4 + 1):
                    words[w % WARP].add(w)
            out.append((tuple(lanes), max(len(v) for v in words.values())))
        return out

    @property
    def wavefronts(self) -> int:
        return sum(w for _, w in self.phases())

    @property
    def ideal(self) -> int:
        return len(self.phases())

    @property
    def sector_count(self) -> int:
        """Global: distinct 32-byte sectors touched by the active lanes' bytes."""
        return len({s for a in self.addresses if a is not None
                    for s in range(a // 32, (a + max(self.size, 1) - 1) // 32 + 1)})


@dataclass
class Profile:
    """What ``profile()`` yields: sums over every launch inside the context."""

    kernels: dict = field(default_factory=dict)   # kernel -> {metric: value}
    sites: list = field(default_factory=list)     # [Site]
    launches: dict = field(default_factory=dict)  # kernel -> number of launches
    warp: tuple | None = None                     # ((bx, by, bz), warp) traced, or None
    requests: list = field(default_factory=list)  # [WarpRequest] of the traced warp, in order

    def site_totals(self, kernel: str | None = None) -> dict:
        """{(kernel, file, line, metric): value} (summed over launches)."""
        out: dict = defaultdict(float)
        for s in self.sites:
            if kernel is None or s.kernel == kernel:
                out[(s.kernel, s.file, s.line, s.metric)] += s.value
        return dict(out)

    def per_request(self, kernel: str, line: int, what: str = "shared_ld") -> float:
        """Wavefronts (shared) or sectors (global) per request at one .cu line."""
        kinds = ("shared_ld", "shared_st", "global_ld", "global_st")
        if what not in kinds:
            raise ValueError(f"Argumen 'what' harus salah satu dari {', '.join(kinds)}, tetapi "
                             f"yang diterima {what!r:.40}. Contoh: per_request(kernel, baris, "
                             "\"shared_ld\").")
        space, op = what.split("_")
        if space == "shared":
            num = f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"
            den = f"smsp__inst_executed_op_shared_{op}.sum"
        else:
            num = f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum"
            den = f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum"
        tot = self.site_totals(kernel)
        n = sum(v for (k, f, ln, m), v in tot.items() if ln == line and m == num)
        d = sum(v for (k, f, ln, m), v in tot.items() if ln == line and m == den)
        if not d:
            raise KeyError(f"Tidak ada akses {what} di baris {line} kernel '{kernel}'.")
        return n / d


_active: list[Profile] = []
_lock = threading.Lock()


def _check_warp(warp):
    """``((bx, by, bz), w)`` or ``(bx, w)`` -> ``((bx, by, bz), w)``, checked before any launch."""
    from .. import validation as _val

    msg = ("Argumen 'warp' harus None atau (blok, warp), misalnya ((0, 0, 0), 0) atau (0, 0), "
           f"tetapi yang diterima {warp!r}.")
    if not isinstance(warp, tuple) or len(warp) != 2:
        raise ValueError(msg)
    block, w = warp
    if not isinstance(block, tuple):
        block = (block, 0, 0)
    if len(block) != 3:
        raise ValueError(msg)
    block = tuple(_val.check_int(b, "warp", low=0) for b in block)
    return block, _val.check_int(w, "warp", low=0, high=1023 // WARP)


@contextlib.contextmanager
def profile(warp=None):
    """Count every emulator launch inside the ``with`` block (see the module docstring).

    ``warp=((bx, by, bz), w)``: also keep each lane's address of every access made
    by warp ``w`` of block ``(bx, by, bz)`` (``.requests``)."""
    prof = Profile(warp=None if warp is None else _check_warp(warp))
    with _lock:
        _active.append(prof)
    try:
        yield prof
    finally:
        with _lock:
            _active.remove(prof)


def current() -> Profile | None:
    """The innermost active profile (RawKernel asks before each launch)."""
    with _lock:
        return _active[-1] if _active else None


# ---------------------------------------------------------------------------
# The profile build and what its binary says about itself
# ---------------------------------------------------------------------------

@dataclass
class _Lib:
    cdll: ctypes.CDLL
    path: Path
    display: str
    lines: dict = field(default_factory=dict)   # pc offset -> (file, line) in the .cu, or None
    fp_ops: dict | None = None                  # basic-block pc offset -> {kind: count}


_libs: dict = {}


def _profile_flags(options) -> tuple[str, ...]:
    fma = ("-mfma", "-ffp-contract=fast") if build.cpu_has_fma() else ()
    return build.BASE_FLAGS + PROFILE_FLAGS + build.MODE_FLAGS["fibers"] + fma + build.user_flags(options)


def _library(module) -> _Lib:
    key = (module._code, module.path, module.options)
    lib = _libs.get(key)
    if lib is None:
        tu = source.translation_unit(module._code, module.path, module._decls)
        path, _ = build.build(tu, path=module.path, flags=_profile_flags(module.options))
        cdll = build.load_library(path)
        cdll.cudacpu_prof_report.restype = ctypes.c_char_p
        cdll.cudacpu_prof_trace_report.restype = ctypes.c_char_p
        cdll.cudacpu_prof_trace.argtypes = [ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_int]
        cdll.cudacpu_prof_global.argtypes = [ctypes.c_void_p, ctypes.c_ulonglong]
        lib = _libs[key] = _Lib(cdll, path, source._display_name(module.path))
    return lib


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise CudaCpuError(f"Program {name} (paket binutils) tidak ditemukan; profile() membutuhkannya "
                           "untuk menerjemahkan alamat ke baris .cu. Pasang binutils.")
    return found


def _same_file(found: str, display: str) -> bool:
    """DWARF names the #line file relative to the compile folder: compare the tails."""
    found, display = found.replace("\\", "/"), display.replace("\\", "/")
    return found == display or found.endswith("/" + display.lstrip("./"))


def _resolve(lib: _Lib, pcs) -> None:
    """Fill lib.lines for ``pcs``: the innermost frame of the inline chain that is in the .cu."""
    todo = sorted({pc for pc in pcs if pc not in lib.lines})
    if not todo:
        return
    out = subprocess.run([_tool("addr2line"), "-e", str(lib.path), "-i", "-a", *(f"{pc:x}" for pc in todo)],
                         capture_output=True, text=True, check=False).stdout
    chains: dict[int, list] = {}
    cur = None
    for row in out.splitlines():
        if row.startswith("0x"):
            cur = int(row, 16)
            chains[cur] = []
        elif cur is not None:
            file, _, line = row.rpartition(":")
            line = re.match(r"\d+", line)
            chains[cur].append((file, int(line.group(0)) if line else 0))
    for pc in todo:
        chain = [(f, ln) for f, ln in chains.get(pc, []) if ln]
        found = next(((lib.display, ln) for f, ln in chain if _same_file(f, lib.display)), None)
        if found is None and chain:  # a runtime function g++ did not inline: its own header line
            found = (Path(chain[-1][0]).name, chain[-1][1])
        lib.lines[pc] = found


_FP = (
    (re.compile(r"^v?f(?:n)?m(?:add|sub)\d*ss$"), "ffma"),
    (re.compile(r"^v?mulss$"), "fmul"),
    (re.compile(r"^v?(?:add|sub)ss$"), "fadd"),
    (re.compile(r"^v?(?:div|sqrt|rsqrt|rcp)ss$"), "mufu"),
    (re.compile(r"^v?(?:max|min)ss$"), "fmnmx"),
    (re.compile(r"^v?u?comiss$"), "fsetp"),
)
_MUFU_CALLS = re.compile(r"<(?:__)?(?:exp|exp2|expf|exp2f|log|logf|log2f|log2|sin|cos|sinf|cosf|tanhf|tanh|"
                         r"powf|pow|sqrtf|sqrt)(?:@plt)?>")


def _fp_ops(lib: _Lib) -> dict:
    """{basic-block pc offset: {kind: x86 instructions}} from objdump of the profile build."""
    if lib.fp_ops is not None:
        return lib.fp_ops
    text = subprocess.run([_tool("objdump"), "-d", "--no-show-raw-insn", str(lib.path)],
                          capture_output=True, text=True, check=False).stdout
    ops: dict = {}
    bb = None
    call_pending = False
    for row in text.splitlines():
        if row.endswith(">:"):
            bb, call_pending = None, False
            continue
        m = re.match(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$", row)
        if not m:
            continue
        addr, mnem, rest = int(m.group(1), 16), m.group(2), m.group(3)
        if call_pending:  # the instruction after the call is the pc the hook saw
            bb, call_pending = addr, False
            ops.setdefault(bb, {})
        if mnem.startswith("call") and "<__sanitizer_cov_trace_pc>" in rest:
            call_pending = True
            continue
        if bb is None:
            continue
        kind = next((k for pat, k in _FP if pat.match(mnem)), None)
        if kind is None and mnem.startswith("call") and _MUFU_CALLS.search(rest):
            kind = "mufu"
        if kind:
            ops[bb][kind] = ops[bb].get(kind, 0) + 1
    lib.fp_ops = ops
    return ops


# ---------------------------------------------------------------------------
# One launch
# ---------------------------------------------------------------------------

def _metric_names(flags: int) -> tuple[str, ...]:
    op = "st" if flags & _FLAG_STORE else "ld"
    if flags & _FLAG_SHARED:
        return (f"smsp__inst_executed_op_shared_{op}.sum",
                f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum",
                f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum")
    if flags & _FLAG_ASYNC:
        op = "ldgsts"
    return (f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum",
            f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum",
            f"l1tex__t_bytes_pipe_lsu_mem_global_op_{op}.sum")


_COUNTERS = {"bar": "smsp__inst_executed_op_barrier.sum", "shfl": "smsp__inst_executed_op_shfl.sum",
             "vote": "smsp__inst_executed_op_vote.sum", "syncwarp": "smsp__inst_executed_op_warpsync.sum"}


def run(kernel, cfg, smem: int, packed, prof: Profile) -> None:
    """Launch ``kernel`` (a RawKernel) in its profile build and add its counts to ``prof``."""
    module = kernel.module
    lib = _library(module)
    c = lib.cdll
    c.cudacpu_prof_reset()
    (bx, by, bz), w = prof.warp if prof.warp is not None else ((0, 0, 0), -1)
    c.cudacpu_prof_trace(bx, by, bz, w)
    for _, _, arr, _ in packed.arrays:
        c.cudacpu_prof_global(ctypes.c_void_p(arr.ctypes.data), ctypes.c_ulonglong(arr.nbytes))
    fn = getattr(c, f"cudacpu_launch__{kernel.name}")
    fn.argtypes = [ctypes.POINTER(ctypes.c_uint), ctypes.c_ulonglong, ctypes.c_void_p]
    fn.restype = ctypes.c_int
    rc = fn(cfg, smem, packed.argv)
    if rc != 0:
        msg = (c.cudacpu_last_error() or b"").decode(errors="replace")
        raise (BarrierDeadlockError if rc == 1 else CudaCpuError)(msg)
    report = (c.cudacpu_prof_report() or b"").decode()
    _add(prof, kernel.name, lib, report, cfg)
    if prof.warp is not None:  # after the report: both texts share one buffer
        trace = (c.cudacpu_prof_trace_report() or b"").decode()
        _add_requests(prof, kernel.name, lib, report, trace)


def _add_requests(prof: Profile, name: str, lib: _Lib, report: str, trace: str) -> None:
    """The traced warp's records -> WarpRequests, grouped as cuda_cpu_profile.h groups them:
    the k-th execution of one site by each lane is one request."""
    sites = [r.split("\t") for r in report.splitlines() if r.startswith("site\t")]
    groups: dict = {}
    seen: dict = defaultdict(int)
    for n, row in enumerate(trace.splitlines()):
        site, lane, addr, size = row.split("\t")
        site, lane, addr, size = int(site), int(lane), int(addr, 16), int(size)
        k = seen[(site, lane)]
        seen[(site, lane)] += 1
        g = groups.setdefault((site, k), {"order": n, "addr": [None] * WARP, "size": 0})
        g["addr"][lane] = addr
        g["size"] = max(g["size"], size)
    for (site, _k), g in sorted(groups.items(), key=lambda kv: kv[1]["order"]):
        pc, file, line, flags = int(sites[site][1], 16), sites[site][2], int(sites[site][3]), int(sites[site][4])
        where = (file, line) if file else lib.lines.get(pc) or ("<cuda_cpu.h>", 0)
        prof.requests.append(WarpRequest(name, where[0], where[1],
                                         "shared" if flags & _FLAG_SHARED else "global",
                                         bool(flags & _FLAG_STORE), g["size"], tuple(g["addr"]), g["order"]))


def _add(prof: Profile, name: str, lib: _Lib, report: str, cfg) -> None:
    rows = [r.split("\t") for r in report.splitlines() if r]
    _resolve(lib, [int(r[1], 16) for r in rows if r[0] in ("site", "bb") and int(r[1], 16)])
    totals: dict = defaultdict(float)
    sites: dict = defaultdict(float)
    bb_thread = bb_warp = bb_div = 0
    fp = _fp_ops(lib)
    threads_per_block = cfg[3] * cfg[4] * cfg[5]
    for r in rows:
        if r[0] == "site":
            pc, file, line, flags = int(r[1], 16), r[2], int(r[3]), int(r[4])
            req, wav, ideal, sec, thr, nbytes = (int(x) for x in r[6:12])
            where = (file, line) if file else lib.lines.get(pc)
            if where is None:
                where = ("<cuda_cpu.h>", 0)
            names = _metric_names(flags)
            if flags & _FLAG_SHARED:
                values = (req, wav, wav - ideal)
            else:
                values = (req, sec, nbytes)
            for metric, value in zip(names, values):
                totals[metric] += value
                sites[(where[0], where[1], metric)] += value
            if not flags & _FLAG_ASYNC:
                space = "shared" if flags & _FLAG_SHARED else "global"
                op = "st" if flags & _FLAG_STORE else "ld"
                totals[f"smsp__sass_thread_inst_executed_op_{space}_{op}_pred_on.sum"] += thr
        elif r[0] == "bb":
            pc, thr, warp, div = int(r[1], 16), int(r[2]), int(r[3]), int(r[4])
            bb_thread, bb_warp, bb_div = bb_thread + thr, bb_warp + warp, bb_div + div
            for kind, n in fp.get(pc, {}).items():
                metric = f"smsp__sass_thread_inst_executed_op_{kind}_pred_on.sum"
                totals[metric] += n * thr
                where = lib.lines.get(pc)
                if where:
                    sites[(where[0], where[1], metric)] += n * thr
        elif r[0] == "count":
            if r[1] == "wmma_mma":
                totals["smsp__inst_executed_op_wmma_mma_sync.sum"] += int(r[2])
            elif r[1] == "blocks":
                totals["launch__grid_size"] += int(r[2])
            elif r[1] in _COUNTERS:
                # Counted per lane; cudacpu requires full warps in warp functions and barriers.
                totals[_COUNTERS[r[1]]] += int(r[2]) / min(WARP, threads_per_block)
    totals["launch__block_size"] = threads_per_block
    if bb_warp:
        totals["smsp__thread_inst_executed_per_inst_executed.ratio"] = bb_thread / bb_warp
        totals["smsp__sass_average_branch_targets_threads_uniform.pct"] = 100.0 * (1 - bb_div / bb_warp)
    mine = prof.kernels.setdefault(name, {})
    n_before = prof.launches.get(name, 0)
    for metric, value in totals.items():
        if metric.endswith((".ratio", ".pct")) or metric == "launch__block_size":
            # Averages over launches, weighted equally.
            mine[metric] = (mine.get(metric, 0.0) * n_before + value) / (n_before + 1)
        else:
            mine[metric] = mine.get(metric, 0) + value
    prof.launches[name] = n_before + 1
    for (file, line, metric), value in sorted(sites.items()):
        prof.sites.append(Site(name, file, line, metric, value))


@functools.lru_cache(maxsize=None)
def available() -> bool:
    """Are addr2line and objdump here (binutils, installed with g++)?"""
    return shutil.which("addr2line") is not None and shutil.which("objdump") is not None
