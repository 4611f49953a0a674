"""Periksa berkas hasil ``python -m atensi.bench --json`` terhadap ``results/targets.json``.

    python scripts/check_targets.py HASIL.json [--targets results/targets.json]

Satu baris per target: terpenuhi, TIDAK terpenuhi, atau tidak diukur (misalnya
baris GPU di mesin tanpa GPU). Kode keluar 1 bila ada target yang diukur dan
tidak terpenuhi, 2 bila berkasnya tidak bisa dibaca.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from atensi.bench import measure, report  # noqa: E402
from atensi.arguments import Parser  # noqa: E402
from atensi.formatting import id_float  # noqa: E402

TARGETS = ROOT / "results" / "targets.json"


def measured(results) -> dict:
    """The numbers a results file holds, by target name (absent when not measured)."""
    out = {k: v for k, v in report.summary(results).items() if v is not None}
    torch = results.get("cpu_vs_torch") or []
    if torch:
        out["cpu_fast_vs_torch"] = min(c["ratio"] for c in torch)
    engine = results.get("compile_and_emulation") or {}
    if engine.get("compile_seconds") is not None:
        out["compile_seconds"] = engine["compile_seconds"]
    if engine.get("chain_ms"):
        out["emulated_chain_ms"] = max(engine["chain_ms"].values())
    backward = results.get("backward")
    # The memory target is stated for B = 1, T = 1024; other sizes are not compared.
    if backward and (backward["plain"]["B"], backward["plain"]["T"]) == (1, measure.ANDREA_T):
        out["backward_memory_ratio"] = backward["memory_ratio"]
    return out


def check(results, targets) -> tuple[list[str], bool]:
    """(one line per target, whether every measured target is met)."""
    values = measured(results)
    lines, ok = [], True
    for name, target in targets.items():
        if name not in values:
            lines.append(f"{name}: tidak diukur ({target['what']}).")
            continue
        value = values[name]
        bound = (f"≥ {id_float(target['min'], 3)}" if "min" in target
                 else f"≤ {id_float(target['max'], 3)}")
        met = value >= target["min"] if "min" in target else value <= target["max"]
        ok = ok and met
        lines.append(f"{name}: {id_float(value, 3)} (harapan {bound}) "
                     f"{'terpenuhi' if met else 'TIDAK terpenuhi'} ({target['what']}).")
    return lines, ok


def main(argv=None) -> int:
    parser = Parser(prog="scripts/check_targets.py",
                    usage_line="python scripts/check_targets.py HASIL.json [--targets BERKAS]")
    parser.add_argument("results")
    parser.add_argument("--targets", default=str(TARGETS))
    args = parser.parse_args(argv)
    try:
        results = report.load_results(args.results)
        targets = json.loads(Path(args.targets).read_text(encoding="utf-8"))["targets"]
    except (OSError, ValueError, KeyError) as err:
        parser.fail(f"berkas tidak bisa dibaca ({err})")
    if results is None:
        parser.fail(f"berkas hasil {args.results} tidak ada; buat dengan "
                    "python -m atensi.bench --quick --json HASIL.json")
    lines, ok = check(results, targets)
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
