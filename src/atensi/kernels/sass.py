"""Campuran instruksi SASS per kernel, tanpa GPU: model kecepatan yang kasar.

    instruction_mix(path, arch="sm_90")   {kernel: Mix}, dari cubin NVRTC + nvdisasm
    mix_table(files=None, arch="sm_90")   tabel teks untuk ``python -m atensi.kernels --sass``
    model_rows(path, kernels, arch)       baris model untuk bab kinerja (label, hitungan, batas)
    model_markdown(rows)                  baris-baris itu sebagai tabel Markdown

NVRTC (opsi yang sama dengan CuPy) mengompilasi berkas .cu menjadi cubin, dan
``nvdisasm`` (wheel pip ``nvidia-cuda-nvdisasm``) mengubahnya menjadi SASS.
Keduanya disimpan di cache: cubin lewat ``compile_report``, keluaran
``nvdisasm`` dengan kunci dari cubin dan programnya.
Setiap instruksi dihitung per kelompok (FFMA, HMMA, FP lain, LDS/STS, LD/ST
generik, SHFL, LDG/LDGSTS/STG, BAR, lainnya), untuk seluruh kernel dan untuk perulangan
dalam terpanas: rentang lompatan mundur (``BRA`` ke alamat lebih kecil) yang
dijalankan berulang-ulang. Untuk kernel CUDA core itu rentang yang memuat FFMA
terbanyak (ubin yang dibuka penuh); untuk kernel tensor core rentang dengan
FLOP HMMA per instruksi terbesar (perulangan potongan MMA yang paling padat).

Model: satu penjadwal warp mengeluarkan satu instruksi per siklus.

- FP32: puncak FP32 berarti satu FFMA warp (32 lane × 2 FLOP) per siklus per
  penjadwal; jadi bagian FFMA di perulangan dalam adalah batas atas bagian
  puncak FP32 yang bisa dicapai.
- Tensor core: satu HMMA warp mengerjakan 2·m·n·k FLOP (``HMMA.1684.F32.TF32``:
  m16 n8 k4, 1024 FLOP). Puncak TF32 padat per penjadwal per siklus adalah
  64 FLOP × (puncak TF32 / puncak FP32); FLOP HMMA per instruksi perulangan
  dibagi angka itu (paling besar 1) adalah batas atas bagian puncak TF32.
  3xTF32 menjalankan tiga MMA per hasil kali, jadi FLOP bergunanya sepertiga.
  Hopper hanya mencapai puncak lembar datanya lewat wgmma; untuk HMMA (mma.sync)
  batas ini terlalu longgar, tidak pernah terlalu ketat.

Bila okupansi (ptxas) memberi kurang dari satu warp per penjadwal (4 per SM),
kedua batas dikalikan warp per penjadwal. Ini model, bukan ukuran: latensi
memori, konflik bank dan cabang tidak dihitung.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from atensi import hardware

GROUPS = ("FFMA", "HMMA", "FP lain", "LDS/STS", "LD/ST", "SHFL", "LDG/LDGSTS/STG", "BAR", "lainnya")
_FP_OTHER = {"FADD", "FMUL", "FMNMX", "FSEL", "FSETP", "FSET", "MUFU", "FCHK", "FRND", "F2F", "FMAX", "FMIN",
             "FSWZADD", "I2F", "F2I"}
_LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(?:\{\s*)?(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*)([.\w]*)\s*(.*)$")
_TARGET = re.compile(r"`?\(\.L_x_(\d+)\)")
_LABEL = re.compile(r"^\.L_x_(\d+):")
_FUNC = re.compile(r"^\.text\.(\w+):")
_MMA_SHAPE = re.compile(r"^\.(?:(16)(8)(4|8|16|32)|(8)(8)(4))(?:\.|$)")  # HMMA.1684 = m16 n8 k4
# The peaks (FP32 on CUDA cores, dense TF32 on tensor cores) and the warp
# schedulers per SM come from the hardware table: the model is an H200's.
FFMA_FLOP_PER_CYCLE = 2 * hardware.WARP_SIZE  # one warp FFMA per scheduler per cycle: 32 lanes x 2 FLOP
TF32_FLOP_PER_CYCLE = FFMA_FLOP_PER_CYCLE * hardware.H200.tf32_flops / hardware.H200.fp32_flops


def mma_flops(suffix: str) -> int:
    """FLOP of one warp's HMMA with this suffix (".1684.F32.TF32" -> 2*16*8*4)."""
    m = _MMA_SHAPE.match(suffix)
    if m is None:
        raise ValueError(f"bentuk HMMA tidak dikenal: HMMA{suffix}")
    m_, n, k = (int(g) for g in m.groups() if g is not None)
    return 2 * m_ * n * k


def group_of(op: str) -> str:
    if op == "FFMA":
        return "FFMA"
    if op == "HMMA":
        return "HMMA"
    if op in _FP_OTHER:
        return "FP lain"
    if op in ("LDS", "STS", "LDSM"):
        return "LDS/STS"
    if op == "SHFL":
        return "SHFL"
    if op in ("LDG", "LDGSTS", "STG", "LDGDEPBAR"):
        return "LDG/LDGSTS/STG"
    # Generic LD/ST (a pointer without a state space, e.g. from inline PTX with an
    # "l" operand) still moves data, usually shared memory: not "other".
    if op in ("LD", "ST"):
        return "LD/ST"
    if op in ("BAR", "DEPBAR"):
        return "BAR"
    return "lainnya"


@dataclass
class Mix:
    """Counts per group (GROUPS) for a whole kernel and for its hottest inner loop,
    and the FLOP of the HMMA instructions in each (one warp, one pass)."""

    kernel: Counter = field(default_factory=Counter)
    loop: Counter = field(default_factory=Counter)
    kernel_mma_flops: int = 0
    loop_mma_flops: int = 0

    @staticmethod
    def share(c: Counter) -> float:
        total = sum(c.values())
        return c["FFMA"] / total if total else 0.0

    @staticmethod
    def _occupancy(resident_warps: int | None) -> float:
        schedulers = hardware.H200.arch.schedulers_per_sm
        return 1.0 if resident_warps is None else min(1.0, resident_warps / schedulers)

    def peak_bound(self, resident_warps: int | None = None) -> float:
        """Upper bound on the share of FP32 peak (issue model; see the module docstring)."""
        return self.share(self.loop or self.kernel) * self._occupancy(resident_warps)

    def tensor_peak_bound(self, resident_warps: int | None = None) -> float:
        """Upper bound on the share of the dense TF32 tensor-core peak (same model)."""
        c, flops = (self.loop, self.loop_mma_flops) if self.loop else (self.kernel, self.kernel_mma_flops)
        total = sum(c.values())
        per_cycle = flops / total if total else 0.0
        return min(1.0, per_cycle / TF32_FLOP_PER_CYCLE) * self._occupancy(resident_warps)

    def bound_tflops(self, resident_warps: int | None = None) -> float:
        """The two bounds in TFLOP/s on an H200, added: FFMA and HMMA share the issue slots."""
        return (self.peak_bound(resident_warps) * hardware.H200.fp32_flops
                + self.tensor_peak_bound(resident_warps) * hardware.H200.tf32_flops) / 1e12


def nvdisasm() -> str | None:
    """The nvdisasm program: from the pip wheel (nvidia/cu*/bin), else on PATH."""
    try:
        import nvidia

        for root in nvidia.__path__:
            for cand in sorted(Path(root).glob("*/bin/nvdisasm"), reverse=True):
                if cand.is_file():
                    return str(cand)
    except ImportError:
        pass
    return shutil.which("nvdisasm")


def _cubin(path: Path, arch: str) -> bytes:
    """The binary compile_report makes (the same options, and its disk cache)."""
    from atensi.kernels.compiling import compile_report

    return compile_report(path, arch=arch).cubin


def _disassemble(tool: str, cubin: bytes) -> str:
    """``nvdisasm -c`` of ``cubin``, cached on disk by the binary and the tool."""
    from atensi import files
    from atensi.cudacpu import build

    stat = Path(tool).stat()
    key = hashlib.sha256(cubin)
    key.update(f"\0{tool}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
    cache = build.cache_dir() / f"sass-{key.hexdigest()[:32]}.txt"
    try:
        return cache.read_text(encoding="utf-8")
    except (OSError, ValueError):
        pass
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        out = subprocess.run([tool, "-c", f.name], capture_output=True, text=True, timeout=120, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"nvdisasm gagal (kode {out.returncode}): {out.stderr.strip()[:300]}")
    try:
        files.write_text(cache, out.stdout)  # temp file + os.replace: never half a file
    except OSError:
        pass
    return out.stdout


def parse_sass(text: str) -> dict[str, Mix]:
    """{kernel: Mix} from nvdisasm's output."""
    funcs: dict[str, list[tuple[int, str, str]]] = {}
    labels: dict[str, dict[str, int]] = {}
    current, last_addr = None, 0
    for raw in text.splitlines():
        line = raw.strip()
        if m := _FUNC.match(line):
            current = m.group(1)
            funcs[current], labels[current] = [], {}
            continue
        if current is None:
            continue
        if m := _LABEL.match(line):
            labels[current][m.group(1)] = last_addr + 16  # the next instruction
            continue
        if m := _LINE.search(line):
            addr = int(m.group(1), 16)
            funcs[current].append((addr, m.group(2), m.group(3), m.group(4)))
            last_addr = addr
    mixes = {}
    for name, instrs in funcs.items():
        mix = Mix()
        for _, op, suffix, _ in instrs:
            mix.kernel[group_of(op)] += 1
            if op == "HMMA":
                mix.kernel_mma_flops += mma_flops(suffix)
        best, best_key = None, None
        for addr, op, _, rest in instrs:
            t = _TARGET.search(rest) if op == "BRA" else None
            start = labels[name].get(t.group(1)) if t else None
            if start is None or start > addr:
                continue
            body = [(o, s) for a, o, s, _ in instrs if start <= a <= addr]
            counts = Counter(group_of(o) for o, _ in body)
            flops = sum(mma_flops(s) for o, s in body if o == "HMMA")
            # Tensor-core kernels: the densest MMA loop; CUDA-core kernels: the most FFMA.
            key = flops / len(body) if mix.kernel_mma_flops else counts["FFMA"]
            if best_key is None or key > best_key:
                best, best_key = (counts, flops), key
        mix.loop, mix.loop_mma_flops = best or (Counter(), 0)
        mixes[name] = mix
    return mixes


def instruction_mix(path, arch: str = "sm_90", cubin: bytes | None = None) -> dict[str, Mix]:
    """{kernel: Mix} of one .cu file; ``cubin``: its binary already compiled for ``arch``."""
    tool = nvdisasm()
    if tool is None:
        raise RuntimeError("nvdisasm tidak ditemukan. Pasang dengan pip install -r requirements-dev.txt "
                           "(paket nvidia-cuda-nvdisasm).")
    data = cubin if cubin is not None else _cubin(Path(path), arch)
    return parse_sass(_disassemble(tool, data))


def mix_table(files=None, arch: str = "sm_90") -> str:
    """One row per kernel: the inner loop's mix, its FFMA share and the peak bounds."""
    from atensi.kernels import registry
    from atensi.kernels.compiling import compile_report
    from atensi.kernels.loading import kernel_path

    files = files or sorted(str(kernel_path(f)) for f in registry.files())
    head = ("kernel", *GROUPS, "total", "FFMA %", "batas puncak FP32 %", "batas puncak TF32 %",
            "batas TFLOP/s")
    rows = []
    for file in files:
        report = compile_report(file, arch=arch)
        for name, mix in sorted(instruction_mix(file, arch, cubin=report.cubin).items()):
            res = report.kernels.get(name)
            warps = round(res.occupancy * 64) if res else None  # sm_80/sm_90: 64 warps per SM
            c = mix.loop or mix.kernel
            rows.append((name, *(str(c[g]) for g in GROUPS), str(sum(c.values())),
                         f"{100 * mix.share(c):.0f}", f"{100 * mix.peak_bound(warps):.0f}",
                         f"{100 * mix.tensor_peak_bound(warps):.0f}" if mix.kernel_mma_flops else "-",
                         f"{mix.bound_tflops(warps):.0f}"))
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = [f"Campuran instruksi SASS perulangan dalam ({arch}; model, bukan ukuran)",
             "  ".join(h.ljust(w) for h, w in zip(head, widths))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)) for r in rows]
    lines.append(f"Puncak H200 SXM: FP32 {hardware.H200.fp32_flops / 1e12:.0f} TFLOP/s (CUDA core), "
                 f"TF32 padat {hardware.H200.tf32_flops / 1e12:.0f} TFLOP/s (tensor core). "
                 "3xTF32: FLOP berguna sepertiga FLOP HMMA.")
    return "\n".join(lines)


# The rows the book's performance chapter shows: (label, kernel in attention_fused.cu).
FUSED_MODEL_KERNELS = (
    ("*fused* v1", "attention_fused_d64"),
    ("*fused* v2", "attention_fused_v2_d64"),
    ("*fused* v2, $d_k = 128$", "attention_fused_v2_d128"),
    ("*fused* v2 *split-K*", "attention_fused_v2_split_d64"),
)


@dataclass
class ModelRow:
    """One kernel's inner loop in the model: counts per group, FFMA share, FP32 peak bound."""

    label: str
    kernel: str
    counts: Counter
    share: float
    bound: float


def model_rows(path, kernels=FUSED_MODEL_KERNELS, arch: str = "sm_90", report=None) -> list[ModelRow]:
    """The model for ``kernels`` (pairs of label and name) of one .cu file.

    ``report``: a compile_report of the same file and arch, reused for the
    occupancy (None: compiled here). RuntimeError with an Indonesian message
    when nvdisasm or NVRTC is missing.
    """
    if nvdisasm() is None:
        raise RuntimeError("nvdisasm tidak terpasang, jadi SASS tidak bisa dibaca. Pasang dengan "
                           "pip install -r requirements-dev.txt (paket nvidia-cuda-nvdisasm).")
    if report is None:  # RuntimeError where NVRTC is missing
        from atensi.kernels.compiling import compile_report

        report = compile_report(path, arch=arch)
    mixes = instruction_mix(path, arch, cubin=report.cubin)  # one compile for both
    rows = []
    for label, name in kernels:
        mix, res = mixes[name], report.kernels[name]
        warps = round(res.occupancy * 64)  # sm_80/sm_90: 64 warps per SM
        c = mix.loop or mix.kernel
        rows.append(ModelRow(label, name, c, mix.share(c), mix.peak_bound(warps)))
    return rows


def model_markdown(rows: list[ModelRow]) -> str:
    """The rows as a Markdown table, numbers in Indonesian notation."""
    from atensi.formatting import id_float, id_int

    lines = ["| *kernel* | FFMA | FP lain | LDS/STS | SHFL | lainnya | total | FFMA % | batas puncak FP32 |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        c = r.counts
        rest = sum(c.values()) - sum(c[g] for g in ("FFMA", "FP lain", "LDS/STS", "SHFL"))
        lines.append(f"| {r.label} | {id_int(c['FFMA'])} | {id_int(c['FP lain'])} | {id_int(c['LDS/STS'])} "
                     f"| {id_int(c['SHFL'])} | {id_int(rest)} | {id_int(sum(c.values()))} "
                     f"| {id_float(100 * r.share, 1)} % | {id_float(100 * r.bound, 0)} % |")
    return "\n".join(lines)
