"""``python -m atensi.bench [--quick] [--preset P] [--device D] [--json PATH]``.

Mengukur lewat :mod:`atensi.bench.measure`, mencetak lewat
:mod:`atensi.bench.report`. Perbandingan dengan PyTorch di CPU dan waktu
kompilasi NVRTC adalah skrip terpisah (``scripts/bench_torch_cpu.py``,
``scripts/bench_compile.py``) yang menambahkan angkanya ke berkas hasil yang sama.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from atensi import roofline
from atensi.arguments import Parser
from atensi.bench import report
from atensi.bench.measure import D_K, H, MAX_REL_ERR, METHODS, PRESETS, backward_comparison, run
from atensi.formatting import id_float


def json_path_problem(path) -> str | None:
    """One Indonesian line when ``--json PATH`` could not be written, else None."""
    path = Path(path)
    if path.is_dir():
        return f"--json {path}: itu folder, bukan berkas. Tulis misalnya --json {path / 'bench.json'}."
    if path.exists():
        if not os.access(path, os.W_OK):
            return f"--json {path}: berkas ini tidak bisa ditulisi. Pilih path lain."
        return None
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        return f"--json {path}: {parent} bukan folder. Pilih path lain."
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"--json {path}: folder {parent} tidak bisa ditulisi. Pilih path lain."
    return None


def main(argv=None):
    parser = Parser(
        prog="python -m atensi.bench",
        description="Ukur biaya atensi kausal (12 head, d_k = 64) di CPU dan GPU.",
        usage_line="python -m atensi.bench [--quick] [--preset P] [--device auto|cpu|gpu] "
                   "[--json BERKAS]",
    )
    parser.add_argument("--quick", action="store_true", help="preset 'quick' (≤ 1 menit di CPU)")
    parser.add_argument("--preset", choices=sorted(PRESETS), help="bawaan: full (quick dengan --quick)")
    parser.add_argument("--device", choices=("auto", "cpu", "gpu"), default="auto")
    parser.add_argument("--json", metavar="PATH", help="simpan hasil (mesin, tanggal, baris) ke PATH")
    args = parser.parse_args(argv)
    preset = args.preset or ("quick" if args.quick else "full")
    if args.json and (problem := json_path_problem(args.json)):
        print(problem, file=sys.stderr)  # before minutes of benchmarking, not after
        return 2

    results = run(preset, args.device,
                  progress=lambda msg: print(msg, file=sys.stderr))
    for device, title in (("cpu", "CPU"), ("gpu", "GPU")):
        if report.select_rows(results, device):
            print(f"\n{title} — attention kausal, H = {H}, d_k = {D_K}")
            print(report.caption(results, device))
            print(report.format_table(results, device))
            for s in results.get("skipped", []):
                if s["device"] == device:
                    print(f"Dilewati: {METHODS[s['method']].label}, B = {s['B']}, T = {s['T']} "
                          f"({s['why']}).")
    if not results["machine"]["gpu"]:
        print("\nTidak ada GPU yang terlihat oleh CuPy: baris GPU dilewati.")
    print()
    for line in report.summary_lines(report.summary(results)):
        print(line)
    if args.device != "gpu":
        p = PRESETS[preset]
        results["backward"] = backward_comparison(T=p.batch_T)
        for line in report.backward_lines(results["backward"]):
            print(line)
    print()
    for line in roofline.report_lines():  # computed, not measured: no GPU needed
        print(line)
    print()
    print(f"Lama pengukuran: {id_float(results['seconds'], 1)} s.")
    if args.json:
        print(f"Hasil disimpan di {report.save_results(results, args.json)}")
    bad = [r for r in results["rows"] if r["max_rel_err"] > r.get("tolerance", MAX_REL_ERR)]
    return 1 if bad else 0
