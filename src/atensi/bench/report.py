"""Hasil atensi.bench: berkas JSON, tabel, keterangan, dan ringkasan.

    format_table(hasil, device="cpu")    → tabel teks (atau markdown=True)
    caption(hasil, device="gpu")         → keterangan mesin dan tanggal
    summary(hasil)                       → rasio-rasio utama tabel
    save_results(hasil, path), load_results(path) → dict atau None

Modul ini hanya melaporkan. Angka yang diharapkan dari sebuah mesin
(misalnya "berubin ≥ 2× lebih cepat") adalah data, bukan bagian pustaka:
``results/targets.json``, diperiksa terhadap berkas hasil oleh
``scripts/check_targets.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

from atensi import files
from atensi.bench.measure import ANDREA_T, D_K, H, MAX_REL_ERR, SCHEMA
from atensi.formatting import id_float
from atensi.result_checks import check_bench_results
from atensi.shipped import results_dir

# ---------------------------------------------------------------------------
# Results file (JSON)
# ---------------------------------------------------------------------------


# The committed GPU results file that the pipeline chapter renders.
GPU_RESULTS = results_dir() / "bench_gpu.json"


def save_results(results, path):
    """Tulis hasil ``run`` sebagai JSON (UTF-8, terbaca manusia)."""
    return files.write_text(path, json.dumps(results, indent=1, ensure_ascii=False) + "\n")


def load_results(path=GPU_RESULTS):
    """Hasil yang tersimpan, atau ``None`` bila berkasnya belum ada."""
    path = Path(path)
    if not path.is_file():
        return None
    remake = f"python -m atensi.bench --quick --json {path}"
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:  # ValueError: not UTF-8, or not JSON
        raise ValueError(f"Berkas {path} tidak bisa dibaca sebagai hasil atensi.bench ({err}). "
                         f"Buat ulang dengan: {remake}") from None
    if not isinstance(results, dict) or results.get("schema") != SCHEMA or "rows" not in results:
        raise ValueError(
            f"Berkas {path} bukan hasil atensi.bench (schema {SCHEMA}). Buat ulang dengan "
            f"{remake}."
        )
    return check_bench_results(results, path, remake)


def add_to_results(path, key, value):
    """Simpan ``value`` di bawah ``key`` dalam berkas hasil yang ditulis CLI bench
    (untuk skrip yang mengukur di luar ``run``); mengembalikan path berkasnya."""
    results = load_results(path)
    if results is None:
        raise ValueError(f"berkas hasil {path} tidak ada; buat dengan "
                         "python -m atensi.bench --quick --json BERKAS")
    results[key] = value
    return save_results(results, path)


def select_rows(results, device):
    """Baris ``results`` (dict hasil atau daftar baris) untuk ``device``
    (``"cpu"``, ``"gpu"``, atau ``None`` untuk semua)."""
    every = results["rows"] if isinstance(results, dict) else list(results)
    return [r for r in every if device is None or r["device"] == device]


# ---------------------------------------------------------------------------
# Tables and captions
# ---------------------------------------------------------------------------


COLUMNS = (
    "metode",
    "B",
    "T",
    "waktu median",
    "GFLOP/s",
    "memori puncak tambahan (MiB)",
    "rasio thd. tercepat",
)
FP32_COLUMN = "% puncak FP32"


def _fmt_ms(ms):
    digits = 0 if ms >= 100 else 1 if ms >= 10 else 2 if ms >= 0.1 else 3
    return id_float(ms, digits)


def _fmt_time(ms):
    """With its unit, so that '2.880' is never read as 2,88: '880 ms', '2,88 s'."""
    return f"{id_float(ms / 1e3, 2)} s" if ms >= 1e3 else f"{_fmt_ms(ms)} ms"


def _cells(r, with_fp32):
    label = r["label"]
    if r.get("max_rel_err", 0) > r.get("tolerance", MAX_REL_ERR):
        label += " [SALAH: galat relatif {:.1e}]".format(r["max_rel_err"])
    cells = [
        label,
        str(r["B"]),
        str(r["T"]),
        _fmt_time(r["time_ms"]),
        ("latensi" if r.get("latency_bound") else
         id_float(r["gflops"], 0 if r["gflops"] >= 100 else 1 if r["gflops"] >= 1 else 3)),
        "–" if r["peak_mib"] is None else id_float(r["peak_mib"], 1),
        id_float(r["ratio"], 2) + "×",
    ]
    if with_fp32:
        share = r.get("fp32_peak_share")
        cells.append("" if share is None else id_float(100 * share, 1) + " %")
    return cells


def format_table(results, device=None, *, markdown=False):
    """Tabel hasil (``results`` dari ``run``/``load_results`` atau daftar baris).

    ``device="cpu"``/``"gpu"`` memilih baris; bentuk (B, T) dipisahkan garis.
    """
    rows = select_rows(results, device)
    if not rows:
        return "(tidak ada baris)"
    # Latency rows have no share, but the column stays: it says why it is empty.
    with_fp32 = any(r.get("fp32_peak_share") is not None or r.get("latency_bound")
                    for r in rows)
    header = list(COLUMNS) + ([FP32_COLUMN] if with_fp32 else [])
    body, shape = [], None
    for r in rows:
        if shape is not None and (r["B"], r["T"]) != shape and not markdown:
            body.append(None)  # separator between shapes
        shape = (r["B"], r["T"])
        body.append(_cells(r, with_fp32))
    if markdown:
        lines = ["| " + " | ".join(header) + " |"]
        lines.append("|" + "|".join([" --- "] + [" ---: "] * (len(header) - 1)) + "|")
        lines += ["| " + " | ".join(c) + " |" for c in body]
        return "\n".join(lines)
    widths = [max(len(h), *(len(c[i]) for c in body if c)) for i, h in enumerate(header)]

    def line(cells):
        first = cells[0].ljust(widths[0])
        rest = [c.rjust(w) for c, w in zip(cells[1:], widths[1:])]
        return "  ".join([first] + rest).rstrip()

    rule = "  ".join("-" * w for w in widths)
    out = [line(header), rule]
    out += [rule if c is None else line(c) for c in body]
    return "\n".join(out)


def caption(results, device="cpu"):
    """Satu kalimat: di mesin apa dan kapan tabel ini diukur."""
    m = results["machine"]
    date = results["date"][:10]
    if device == "gpu" and m.get("gpu"):
        g = m["gpu"]
        driver = g.get("nvidia_driver") or f"CUDA driver {g['cuda_driver']}"
        what = f"{g['name']} (driver {driver}, CUDA runtime {g['cuda_runtime']}, CuPy {m['cupy']})"
    else:
        what = f"{m['cpu']}, {m['cpu_cores']} inti, NumPy {m['numpy']}"
    return f"Diukur pada {what}, tanggal {date}, preset '{results['preset']}'."


# ---------------------------------------------------------------------------
# Summary, compile and emulation numbers, backward
# ---------------------------------------------------------------------------


def _find(rows, method, B, T):
    for r in rows:
        if (r["method"], r["B"], r["T"]) == (method, B, T):
            return r
    return None


def summary(results):
    """Rasio-rasio utama tabel; kunci yang datanya tidak diukur bernilai ``None``.

    cpu_blocked_speedup      waktu NumPy naif / NumPy berubin  (B=1, T=1024)
    cpu_blocked_memory_ratio memori berubin / memori naif       (B=1, T=1024)
    gpu_fused_vs_v1          waktu rantai v1 / fused kernel     (B=8, T=1024)
    gpu_fused_vs_cublas      waktu CuPy cuBLAS / fused kernel   (B=8, T=1024)
    gpu_fused_fp32_share     GFLOP/s fused / puncak FP32 GPU    (B=8, T=1024)
    """
    rows = select_rows(results, None)
    out = dict.fromkeys(
        ["cpu_blocked_speedup", "cpu_blocked_memory_ratio", "gpu_fused_vs_v1",
         "gpu_fused_vs_cublas", "gpu_fused_fp32_share"]
    )
    naive = _find(rows, "numpy_naive", 1, ANDREA_T)
    blocked = _find(rows, "numpy_blocked", 1, ANDREA_T)
    if naive and blocked:
        out["cpu_blocked_speedup"] = naive["time_ms"] / blocked["time_ms"]
        out["cpu_blocked_memory_ratio"] = blocked["peak_mib"] / naive["peak_mib"]
    big_B = max((r["B"] for r in rows if r["device"] == "gpu"), default=None)
    fused = _find(rows, "gpu_fused", big_B, ANDREA_T)
    if fused:
        v1 = _find(rows, "gpu_chain_v1", big_B, ANDREA_T)
        cublas = _find(rows, "cupy_cublas", big_B, ANDREA_T)
        if v1:
            out["gpu_fused_vs_v1"] = v1["time_ms"] / fused["time_ms"]
        if cublas:
            out["gpu_fused_vs_cublas"] = cublas["time_ms"] / fused["time_ms"]
        out["gpu_fused_fp32_share"] = fused.get("fp32_peak_share")
    return out


def summary_lines(s):
    lines = []
    if s["cpu_blocked_speedup"] is not None:
        lines.append(
            f"CPU, B=1 T=1024: NumPy berubin {id_float(s['cpu_blocked_speedup'], 2)}× lebih "
            f"cepat dari NumPy naif, memorinya "
            f"{id_float(s['cpu_blocked_memory_ratio'], 3)}× milik naif."
        )
    if s["gpu_fused_vs_v1"] is not None:
        lines.append(
            f"GPU, B=8 T=1024: fused kernel {id_float(s['gpu_fused_vs_v1'], 1)}× lebih cepat "
            "dari rantai v1."
        )
    if s["gpu_fused_vs_cublas"] is not None:
        lines.append(
            f"GPU, B=8 T=1024: fused kernel {id_float(s['gpu_fused_vs_cublas'], 2)}× kecepatan "
            "CuPy cuBLAS."
        )
    if s["gpu_fused_fp32_share"] is not None:
        lines.append(
            f"GPU: fused kernel mencapai {id_float(100 * s['gpu_fused_fp32_share'], 1)} % "
            "dari puncak FP32 GPU."
        )
    return lines



def backward_lines(b):
    lines = [f"Backward, attention kausal, B = {b['plain']['B']}, H = {H}, "
             f"T = {b['plain']['T']}, d_k = {D_K}:"]
    for key in ("plain", "blocked"):
        r = b[key]
        ms = r["time_ms"]
        took = f"{id_float(ms / 1e3, 2)} s" if ms >= 1e3 else f"{_fmt_ms(ms)} ms"
        lines.append(f"  {r['label']:44s} {took:>9s}  "
                     f"memori puncak tambahan {id_float(r['peak_mib'], 1):>6s} MiB")
    lines.append(f"Memori backward berubin / biasa: {id_float(b['memory_ratio'], 3)}.")
    return lines


