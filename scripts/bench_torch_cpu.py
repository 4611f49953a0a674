"""NumPy cepat terhadap PyTorch SDPA di CPU, diukur berselang-seling.

    python scripts/bench_torch_cpu.py [--preset quick] [--json HASIL.json]

PyTorch opsional: tanpa PyTorch skrip ini mencetak satu baris dan selesai.
Dengan ``--json``, perbandingannya ditambahkan ke berkas hasil
``python -m atensi.bench --json`` di kunci ``cpu_vs_torch`` (dibaca
``scripts/check_targets.py``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from atensi.arguments import Parser, run_command  # noqa: E402
from atensi.bench import cpu_fast, report  # noqa: E402
from atensi.bench.measure import PRESETS, torch_sdpa_cpu  # noqa: E402
from atensi.formatting import id_float, id_sci  # noqa: E402

# The (B, T) shapes of the comparison, H = 12, d_k = 64, causal.
TORCH_SHAPES = ((1, 1024), (1, 4096), (8, 1024))


def compare_with_torch(shapes=TORCH_SHAPES, *, repeats=5, threads=None,
                       heads=12, d_k=64, seed=0):
    """Ukur attention_cpu_fast dan PyTorch SDPA (CPU) **berselang-seling**
    (kita, PyTorch, kita, PyTorch, ...) pada setiap bentuk (B, T), supaya
    beban mesin yang berubah-ubah mengenai keduanya sama rata.

    Mengembalikan daftar dict ``B, T, threads, fast_ms, torch_ms, ratio`` (median;
    ``ratio`` = waktu PyTorch / waktu kita, > 1 berarti kita lebih cepat), atau
    ``[]`` bila PyTorch tidak terpasang. Hasil keduanya diperiksa sama dulu."""
    try:
        import torch  # noqa: F401  (optional)
    except Exception:
        return []
    n = cpu_fast.default_threads() if threads is None else int(threads)
    out = []
    for B, T in shapes:
        rng = np.random.default_rng(seed + 7919 * T + B)
        Q, K, V = (rng.standard_normal((B, heads, T, d_k), dtype=np.float32)
                   for _ in range(3))
        ours = lambda: cpu_fast.attention_cpu_fast(Q, K, V, threads=n)  # noqa: E731
        theirs = torch_sdpa_cpu(Q, K, V, threads=n)
        a, b = ours(), theirs()  # warm-up, and the same answer
        err = float(np.max(np.abs(a - b)) / np.max(np.abs(b)))
        times = {"fast": [], "torch": []}
        for r in range(repeats):
            order = (("fast", ours), ("torch", theirs))
            for name, fn in (order if r % 2 == 0 else order[::-1]):
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
        fast_ms = 1e3 * float(np.median(times["fast"]))
        torch_ms = 1e3 * float(np.median(times["torch"]))
        out.append({"B": B, "T": T, "threads": n, "fast_ms": fast_ms,
                    "torch_ms": torch_ms, "ratio": torch_ms / fast_ms,
                    "max_rel_err": err, "repeats": repeats})
    return out


def torch_comparison_lines(comparison):
    """Baris ringkasan bench dari :func:`compare_with_torch`."""
    if not comparison:
        return []
    n = comparison[0]["threads"]
    lines = [f"CPU, {n} thread, berselang-seling: attention_cpu_fast terhadap PyTorch "
             "SDPA (waktu PyTorch / waktu kita, median):"]
    for c in comparison:
        lines.append(
            f"  B = {c['B']}, T = {c['T']}: {id_float(c['ratio'], 2)}× "
            f"({id_float(c['fast_ms'], 1)} ms terhadap {id_float(c['torch_ms'], 1)} ms, "
            f"selisih relatif {id_sci(c['max_rel_err'])})")
    return lines

def main(argv=None) -> int:
    parser = Parser(prog="scripts/bench_torch_cpu.py",
                    usage_line="python scripts/bench_torch_cpu.py [--preset P] [--json BERKAS]")
    parser.add_argument("--preset", choices=sorted(PRESETS), default="quick")
    parser.add_argument("--json", metavar="PATH", help="tambahkan ke berkas hasil atensi.bench")
    args = parser.parse_args(argv)
    p = PRESETS[args.preset]
    shapes = {(1, T) for T in p.sweep} | {(B, p.batch_T) for B in p.batches}
    comparison = compare_with_torch([s for s in TORCH_SHAPES if s in shapes], repeats=p.repeats)
    if not comparison:
        print("PyTorch tidak terpasang: perbandingan dilewati.")
    for line in torch_comparison_lines(comparison):
        print(line)
    if args.json:
        try:
            print(f"Ditambahkan ke {report.add_to_results(args.json, 'cpu_vs_torch', comparison)}")
        except ValueError as err:
            parser.fail(str(err))
    return 0


if __name__ == "__main__":
    run_command(main, "scripts/bench_torch_cpu.py")
