"""Berapa lama penjelajah live menggambar ulang? (target: ≤ 200 ms).

    .venv/bin/python scripts/bench_explorers.py

Setiap kontrol digeser ke nilai baru (cache dikosongkan dulu, jadi setiap
gambar benar-benar dibuat ulang). Tabel: median dan maksimum waktu dinding
dan waktu CPU proses per penjelajah. Ini tolok ukur, bukan tes: angkanya
bergantung pada mesin dan bebannya.
"""

import statistics
import sys
import time

from atensi.explorers import mask, row, sharpness

MOVES = {
    "ketajaman": (sharpness.live,
                  [("d_k", d) for d in (1, 4, 16, 256, 1024, 4096)] + [("scale", True), ("scale", False)]),
    "mask": (mask.live,
             [("T", t) for t in (4, 12, 20, 32)] + [("row", 9), ("masked", False), ("scaled", False)]),
    "baris": (row.live,
              [("row", r) for r in (0, 3, 7)] + [("temperature", t) for t in (0.1, 2.0, 10.0)]),
}


def measure(name, repeats=1):
    """Wall and CPU milliseconds of every uncached redraw of one explorer."""
    make, moves = MOVES[name]
    wall, cpu = [], []
    for _ in range(repeats):
        explorer = make()
        explorer.cache.cache_clear()
        for key, value in moves:
            w0, c0 = time.perf_counter(), time.process_time()
            explorer.controls[key].value = value
            wall.append(1000 * (time.perf_counter() - w0))
            cpu.append(1000 * (time.process_time() - c0))
    return wall, cpu


def table(repeats=1):
    lines = ["penjelajah  | gambar ulang | dinding median | dinding maks | CPU median | CPU maks",
             "----------- | -----------: | -------------: | -----------: | ---------: | -------:"]
    for name in MOVES:
        wall, cpu = measure(name, repeats)
        lines.append(f"{name:<11} | {len(wall):>12} | {statistics.median(wall):>11.0f} ms | "
                     f"{max(wall):>9.0f} ms | {statistics.median(cpu):>7.0f} ms | {max(cpu):>5.0f} ms")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(repeats=int(sys.argv[1]) if len(sys.argv) > 1 else 2))
