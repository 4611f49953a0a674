"""Campuran instruksi SASS statis per kernel, tanpa GPU.

    instruction_mix(path, arch="sm_90")   {kernel: Mix}, dari cubin NVRTC + nvdisasm
    mix_table(files=None, arch="sm_90")   tabel teks untuk ``python -m atensi.kernels --sass``

NVRTC (opsi yang sama dengan CuPy) mengompilasi berkas .cu menjadi cubin, dan
``nvdisasm`` (wheel pip ``nvidia-cuda-nvdisasm``) mengubahnya menjadi SASS.
Keduanya disimpan di cache: cubin lewat ``compile_report``, keluaran
``nvdisasm`` dengan kunci dari cubin dan programnya.
Setiap instruksi dihitung per kelompok (FFMA, HMMA, FP lain, LDS/STS, LD/ST
generik, SHFL, LDG/LDGSTS/STG, BAR, lainnya), untuk seluruh kernel dan untuk
satu perulangan: rentang lompatan mundur (``BRA`` ke alamat lebih kecil) dengan
FFMA terbanyak, atau untuk kernel tensor core dengan FLOP HMMA per instruksi
terbesar.

Ini hitungan **statis**: setiap instruksi dihitung sekali, berapa kali pun ia
dijalankan, dan perulangan yang bersarang tidak dibedakan. Jadi ia bukan batas
kecepatan. Hitungan yang dijalankan (berapa FFMA, *wavefront* *shared memory*,
sektor global, per baris .cu) dan batas dari hitungan itu ada di
:mod:`atensi.kernels.profil` (``python -m atensi.kernels --profil``).
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


GROUPS = ("FFMA", "HMMA", "FP lain", "LDS/STS", "LD/ST", "SHFL", "LDG/LDGSTS/STG", "BAR", "lainnya")
_FP_OTHER = {"FADD", "FMUL", "FMNMX", "FSEL", "FSETP", "FSET", "MUFU", "FCHK", "FRND", "F2F", "FMAX", "FMIN",
             "FSWZADD", "I2F", "F2I"}
_LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(?:\{\s*)?(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*)([.\w]*)\s*(.*)$")
_TARGET = re.compile(r"`?\(\.L_x_(\d+)\)")
_LABEL = re.compile(r"^\.L_x_(\d+):")
_FUNC = re.compile(r"^\.text\.(\w+):")
_MMA_SHAPE = re.compile(r"^\.(?:(16)(8)(4|8|16|32)|(8)(8)(4))(?:\.|$)")  # HMMA.1684 = m16 n8 k4


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
    """Static counts per group (GROUPS) for a whole kernel and for one inner loop,
    and the FLOP of the HMMA instructions in each (one warp, one pass)."""

    kernel: Counter = field(default_factory=Counter)
    loop: Counter = field(default_factory=Counter)
    kernel_mma_flops: int = 0
    loop_mma_flops: int = 0

    @staticmethod
    def share(c: Counter) -> float:
        total = sum(c.values())
        return c["FFMA"] / total if total else 0.0


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
    """One row per kernel: the static mix of its inner loop and its FFMA share."""
    from atensi.kernels import registry
    from atensi.kernels.compiling import compile_report
    from atensi.kernels.loading import kernel_path

    files = files or sorted(str(kernel_path(f)) for f in registry.files())
    head = ("kernel", *GROUPS, "total", "FFMA %", "FLOP HMMA")
    rows = []
    for file in files:
        report = compile_report(file, arch=arch)
        for name, mix in sorted(instruction_mix(file, arch, cubin=report.cubin).items()):
            c = mix.loop or mix.kernel
            flops = mix.loop_mma_flops if mix.loop else mix.kernel_mma_flops
            rows.append((name, *(str(c[g]) for g in GROUPS), str(sum(c.values())),
                         f"{100 * mix.share(c):.0f}", str(flops) if flops else "-"))
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = [f"Campuran instruksi SASS statis perulangan dalam ({arch}): setiap instruksi dihitung sekali",
             "  ".join(h.ljust(w) for h, w in zip(head, widths))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)) for r in rows]
    lines.append("Bukan batas kecepatan: hitungan yang dijalankan dan batasnya ada di "
                 "python -m atensi.kernels --profil.")
    return "\n".join(lines)
