"""Gambar untuk bab tensor core: bit TF32 dan ubin fragmen WMMA.

Fungsi murni: angka masuk, ``matplotlib.figure.Figure`` keluar (tanpa
``pyplot``); tidak ada perhitungan di sini.

    tf32_bits(rows)
        satu baris kotak 32 bit per bilangan: tanda, eksponen (8 bit),
        mantissa (23 bit); 13 bit terendah yang dibuang TF32 diarsir.
        ``rows``: daftar (label, pola bit uint32).
    fragment_tiles(tiles)
        ubin A 16 x 8, B 8 x 16 dan C 16 x 16, setiap sel diwarnai dan diberi
        nomor lane yang memegangnya. ``tiles``: daftar (judul, array int).
"""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Rectangle

from .plots import new_figure

SIGN = "#fdae6b"
EXPONENT = "#9ecae1"
MANTISSA = "#a1d99b"
DROPPED = "#d9d9d9"
EDGE = "#252525"
TEXT_FONT = 11.0
BIT_FONT = 7.5


def tf32_bits(rows, *, title="float32 dan TF32: bit yang disimpan"):
    """Kotak 32 bit per baris; bit 12..0 (dibuang TF32) diarsir abu-abu."""
    rows = [(str(label), int(bits) & 0xFFFFFFFF) for label, bits in rows]
    if not rows:
        raise ValueError("'rows' kosong: beri paling sedikit satu (label, pola bit).")
    fig = new_figure(width=6.2, height=0.75 + 0.62 * len(rows))
    ax = fig.add_axes([0.22, 0.05, 0.76, 0.8])
    for r, (label, bits) in enumerate(rows):
        y = len(rows) - 1 - r
        for k in range(32):
            bit = (bits >> (31 - k)) & 1
            if k == 0:
                color = SIGN
            elif k <= 8:
                color = EXPONENT
            elif k < 32 - 13:
                color = MANTISSA
            else:
                color = DROPPED
            ax.add_patch(Rectangle((k, y), 1, 0.8, facecolor=color, edgecolor=EDGE, linewidth=0.4,
                                   hatch="//" if k >= 32 - 13 else None))
            ax.text(k + 0.5, y + 0.4, str(bit), ha="center", va="center", fontsize=BIT_FONT)
        ax.text(-0.6, y + 0.4, label, ha="right", va="center", fontsize=TEXT_FONT)
    top = len(rows) + 0.05
    for x0, x1, name in ((0, 1, "tanda"), (1, 9, "eksponen (8)"), (9, 19, "mantissa TF32 (10)"),
                         (19, 32, "dibuang (13)")):
        ax.text((x0 + x1) / 2, top, name, ha="center", va="bottom", fontsize=BIT_FONT + 1)
    ax.set_xlim(-0.1, 32.1)
    ax.set_ylim(0, len(rows) + 0.5)
    ax.axis("off")
    fig.suptitle(title, fontsize=TEXT_FONT + 1)
    return fig


def fragment_tiles(tiles, *, title="Lane pemilik setiap elemen fragmen (emulator)"):
    """Satu panel per ubin; warna dan angka = lane yang memegang elemen itu."""
    tiles = [(str(name), np.asarray(owner)) for name, owner in tiles]
    if not tiles or any(o.ndim != 2 for _, o in tiles):
        raise ValueError("'tiles' harus daftar (judul, array 2-D nomor lane), paling sedikit satu.")
    widths = [o.shape[1] for _, o in tiles]
    fig = new_figure(width=6.4, height=3.2)
    left, gap, total = 0.02, 0.04, 0.96
    scale = (total - gap * (len(tiles) - 1)) / sum(widths)
    x = left
    for (name, owner), w in zip(tiles, widths):
        h = owner.shape[0]
        ax = fig.add_axes([x, 0.08, w * scale, min(0.78, 0.78 * h / 16)])
        ax.imshow(owner % 32, cmap="tab20", vmin=0, vmax=31, interpolation="nearest", aspect="equal")
        for (r, c), lane in np.ndenumerate(owner):
            ax.text(c, r, str(int(lane)), ha="center", va="center", fontsize=4.6)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(f"{name}\n{h} × {owner.shape[1]}", fontsize=TEXT_FONT - 1)
        x += w * scale + gap
    fig.suptitle(title, fontsize=TEXT_FONT)
    return fig
