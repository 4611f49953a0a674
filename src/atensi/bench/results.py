"""Berkas hasil: ``save_results`` dan ``load_results`` (JSON, ``SCHEMA``).

``GPU_RESULTS`` adalah berkas hasil GPU yang disimpan di repo
(``results/bench_gpu.json``) dan ditampilkan oleh bab sintesis.
"""

from __future__ import annotations

import json
from pathlib import Path

from atensi import files

SCHEMA = 1
# The committed GPU results file that the pipeline chapter renders.
GPU_RESULTS = Path(__file__).resolve().parents[3] / "results" / "bench_gpu.json"


def save_results(results, path):
    """Tulis hasil ``run`` sebagai JSON (UTF-8, terbaca manusia)."""
    return files.write_text(path, json.dumps(results, indent=1, ensure_ascii=False) + "\n")


def load_results(path=GPU_RESULTS):
    """Hasil yang tersimpan, atau ``None`` bila berkasnya belum ada."""
    path = Path(path)
    if not path.is_file():
        return None
    results = json.loads(path.read_text(encoding="utf-8"))
    if results.get("schema") != SCHEMA or "rows" not in results:
        raise ValueError(
            f"Berkas {path} bukan hasil atensi.bench (schema {SCHEMA}). Buat ulang dengan "
            "python -m atensi.bench --quick --json <path>."
        )
    return results


def _rows(results, device):
    rows = results["rows"] if isinstance(results, dict) else list(results)
    return [r for r in rows if device is None or r["device"] == device]
