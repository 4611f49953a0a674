"""Waktu kompilasi NVRTC semua kernel, dan rantai kernel satu *head* di emulasi CPU.

    python scripts/bench_compile.py [--json HASIL.json]

Tanpa NVRTC baris kompilasinya dilewati; tanpa g++ baris emulasinya. Dengan
``--json``, angkanya ditambahkan ke berkas hasil ``python -m atensi.bench
--json`` di kunci ``compile_and_emulation`` (dibaca ``scripts/check_targets.py``).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from atensi import kernels  # noqa: E402
from atensi.arguments import Parser, run_command  # noqa: E402
from atensi.bench import report  # noqa: E402
from atensi.bench.measure import D_K, inputs  # noqa: E402
from atensi.formatting import id_float  # noqa: E402


def compile_and_emulation(archs=("sm_80", "sm_90"), T=256, d_k=D_K):
    """Waktu kompilasi NVRTC semua kernel, dan rantai kernel satu
    *head* (T = 256, d_k = 64) lewat emulasi CPU. ``None`` bila alatnya tidak ada."""
    out = {"compile_seconds": None, "compile_files": 0, "spill_bytes": None, "chain_ms": {}}
    try:
        reports = [kernels.compile_report(f, arch=a)
                   for f in sorted(kernels.kernel_path(n) for n in kernels.registry.files())
                   for a in archs]
        out["compile_seconds"] = sum(r.seconds for r in reports)
        out["compile_files"] = len(reports) // len(archs)
        out["spill_bytes"] = sum(r.spill_bytes for r in reports)
    except RuntimeError as err:  # no NVRTC on this machine
        out["compile_error"] = str(err)
    if shutil.which(os.environ.get("ATENSI_CXX", "g++")):
        Q, K, V = inputs(1, T)
        Q, K, V = Q[0, 0], K[0, 0], V[0, 0]
        for label, kwargs in (("v1", {"impl": "chain-v1"}), ("v2", {"impl": "chain-v2"}),
                              ("fused", {"impl": "fused-v1"})):
            kernels.attention(Q, K, V, backend="cpu", **kwargs)  # compile + warm up
            times = []
            for _ in range(3):
                t0 = time.perf_counter()
                kernels.attention(Q, K, V, backend="cpu", **kwargs)
                times.append(1000 * (time.perf_counter() - t0))
            out["chain_ms"][label] = sorted(times)[1]
    return out


def compile_lines(e, T=256):
    lines = []
    if e["compile_seconds"] is not None:
        lines.append(
            f"NVRTC: {e['compile_files']} berkas .cu × sm_80 dan sm_90 dikompilasi dalam "
            f"{id_float(e['compile_seconds'], 2)} s; spill total "
            f"{e['spill_bytes']} bita."
        )
    for label, ms in e["chain_ms"].items():
        lines.append(
            f"Emulasi CPU, satu head, T = {T}, d_k = {D_K}: attention {label} "
            f"{id_float(ms, 1)} ms."
        )
    return lines



def main(argv=None) -> int:
    parser = Parser(prog="scripts/bench_compile.py",
                    usage_line="python scripts/bench_compile.py [--json BERKAS]")
    parser.add_argument("--json", metavar="PATH", help="tambahkan ke berkas hasil atensi.bench")
    args = parser.parse_args(argv)
    measured = compile_and_emulation()
    for line in compile_lines(measured):
        print(line)
    if args.json:
        try:
            print(f"Ditambahkan ke {report.add_to_results(args.json, 'compile_and_emulation', measured)}")
        except ValueError as err:
            parser.fail(str(err))
    return 0


if __name__ == "__main__":
    run_command(main, "scripts/bench_compile.py")
