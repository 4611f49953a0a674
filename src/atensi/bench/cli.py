"""Baris perintah ``python -m atensi.bench [--quick] [--preset P] [--device D] [--json PATH]``.

Mencetak tabel CPU dan GPU, ringkasan target, perbandingan
``attention_cpu_fast`` dengan PyTorch, angka kompilasi dan emulasi, *backward*,
dan model *roofline* per kernel (dihitung, tanpa GPU). Kode keluar 1 bila ada
baris yang galatnya melebihi ``tolerance``-nya, 2 bila ``--json`` tidak bisa
ditulis (diperiksa sebelum pengukuran).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from atensi import cpu_fast, roofline
from atensi.arguments import Parser
from atensi.bench import measure
from atensi.bench.measure import MAX_REL_ERR
from atensi.bench.methods import D_K, METHODS, PRESETS, H
from atensi.bench.results import _rows, save_results
from atensi.bench.tables import caption, format_table
from atensi.bench.targets import (
    _backward_lines,
    _engine_lines,
    _summary_lines,
    backward_targets,
    engine_targets,
    summary,
)
from atensi.formatting import id_float


def _json_path_problem(path) -> str | None:
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


def _main(argv=None):
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
    if args.json and (problem := _json_path_problem(args.json)):
        print(problem, file=sys.stderr)  # before minutes of benchmarking, not after
        return 2

    results = measure.run(preset, args.device,
                          progress=lambda msg: print(msg, file=sys.stderr))
    for device, title in (("cpu", "CPU"), ("gpu", "GPU")):
        if _rows(results, device):
            print(f"\n{title} — attention kausal, H = {H}, d_k = {D_K}")
            print(caption(results, device))
            print(format_table(results, device))
            for s in results.get("skipped", []):
                if s["device"] == device:
                    print(f"Dilewati: {METHODS[s['method']].label}, B = {s['B']}, T = {s['T']} "
                          f"({s['why']}).")
    if not results["machine"]["gpu"]:
        print("\nTidak ada GPU yang terlihat oleh CuPy: baris GPU dilewati.")
    print()
    for line in _summary_lines(summary(results)):
        print(line)
    if args.device != "gpu":
        # attention_cpu_fast against PyTorch, interleaved runs.
        p = PRESETS[preset]
        shapes = {(1, T) for T in p.sweep} | {(B, p.batch_T) for B in p.batches}
        results["cpu_vs_torch"] = cpu_fast.compare_with_torch(
            [s for s in cpu_fast.TARGET_SHAPES if s in shapes], repeats=p.repeats)
        for line in cpu_fast.torch_comparison_lines(results["cpu_vs_torch"]):
            print(line)
        for line in _engine_lines(engine_targets()):
            print(line)
        for line in _backward_lines(backward_targets(T=PRESETS[preset].batch_T)):
            print(line)
    print()
    for line in roofline.report_lines():  # computed, not measured: no GPU needed
        print(line)
    print()
    print(f"Lama pengukuran: {id_float(results['seconds'], 1)} s.")
    if args.json:
        print(f"Hasil disimpan di {save_results(results, args.json)}")
    bad = [r for r in results["rows"] if r["max_rel_err"] > r.get("tolerance", MAX_REL_ERR)]
    return 1 if bad else 0
