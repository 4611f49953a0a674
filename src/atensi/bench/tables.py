"""Tabel hasil dalam teks atau markdown, dan keterangan mesinnya.

Kolomnya (``COLUMNS``): waktu median, GFLOP/s, memori puncak tambahan dan
rasio terhadap yang tercepat pada bentuk (B, T) yang sama; baris GPU
mendapat kolom ``FP32_COLUMN`` (bagian dari puncak FP32). Angka ditulis
dengan format Indonesia (:mod:`atensi.formatting`).
"""

from __future__ import annotations

from atensi.bench.measure import MAX_REL_ERR
from atensi.bench.results import _rows
from atensi.formatting import id_float

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
    rows = _rows(results, device)
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
