"""Gambar untuk bab "Memori bersama: bank dan sektor": 32 lane satu warp.

Fungsi murni: angka masuk, ``matplotlib.figure.Figure`` keluar (tanpa
``pyplot``).

    warp_lanes(keys, texts, rows, *, title, flagged=None)
        32 lane sebagai kisi 4 × 8 (baris r berisi lane 8r … 8r+7). Warna
        setiap sel dari ``keys`` (bank atau sektor yang disentuh lane itu;
        ``None``: lane tidak ikut), teksnya dari ``texts``; sel ``flagged``
        bergaris tebal (lane yang antre di bank yang sama). ``rows``: teks di
        kanan setiap baris (misalnya gelombang fase itu).

Lebar ``style.EXPLORER_WIDTH`` dengan huruf paling kecil ``style.SMALL``: di
layar ponsel teksnya tetap terbaca (aturan di :mod:`atensi.style`).
"""

from __future__ import annotations

from matplotlib.patches import Rectangle

from . import style
from .validation import check_choice

LANES, COLUMNS, ROWS = 32, 8, 4
IDLE = "#f0f0f0"
EDGE = "#3a3a3a"
# Eight well separated hues, light enough for dark text: keys that differ by 1
# (neighbouring banks or sectors) never look alike.
PALETTE = ("#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5")


def _color(key: int) -> str:
    return PALETTE[key % len(PALETTE)]


def warp_lanes(keys, texts, rows, *, title, flagged=None):
    """Kisi 4 × 8 lane satu warp: warna = bank/sektor, teks per lane, catatan per baris."""
    keys, texts, rows = list(keys), list(texts), list(rows)
    flagged = [False] * LANES if flagged is None else list(flagged)
    for name, seq, n in (("keys", keys, LANES), ("texts", texts, LANES), ("flagged", flagged, LANES),
                         ("rows", rows, ROWS)):
        check_choice(len(seq), (n,), f"len({name})")
    fig = style.new_figure(style.EXPLORER_WIDTH, 2.75)
    ax = fig.add_axes((0.01, 0.02, 0.98, 0.8))
    ax.set_xlim(0, COLUMNS + 2.3)
    ax.set_ylim(ROWS, 0)
    ax.set_axis_off()
    for lane in range(LANES):
        r, c = divmod(lane, COLUMNS)
        key = keys[lane]
        ax.add_patch(Rectangle((c + 0.04, r + 0.06), 0.92, 0.88,
                               facecolor=IDLE if key is None else _color(key),
                               edgecolor=style.HIGHLIGHT if flagged[lane] else EDGE,
                               linewidth=2.6 if flagged[lane] else 0.6))
        ax.text(c + 0.5, r + 0.3, str(lane), ha="center", va="center", fontsize=style.SMALL,
                color="#555555")
        ax.text(c + 0.5, r + 0.68, texts[lane], ha="center", va="center", fontsize=style.SMALL,
                fontweight="bold", color="#111111")
    for r, note in enumerate(rows):
        ax.text(COLUMNS + 0.15, r + 0.5, note, ha="left", va="center", fontsize=style.SMALL)
    fig.text(0.01, 0.97, title, ha="left", va="top", fontsize=style.FONT)
    return fig
