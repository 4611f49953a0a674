"""Gambar untuk bab tensor core: bit TF32 dan ubin fragmen WMMA.

Fungsi murni: angka masuk, ``matplotlib.figure.Figure`` keluar (tanpa
``pyplot``); tidak ada perhitungan di sini. Gaya dari :mod:`atensi.style`:
selebar ``MAX_WIDTH`` inci, teks paling kecil ``SMALL`` poin.

    tf32_bits(rows)
        satu baris kotak 32 bit per bilangan: tanda, eksponen (8 bit),
        mantissa (23 bit); 13 bit terendah yang dibuang TF32 diarsir.
        ``rows``: daftar (label, pola bit uint32).
    fragment_tiles(tiles)
        ubin A 16 x 8 dan B 8 x 16 berdampingan, C 16 x 16 di bawahnya; setiap
        sel diwarnai dan diberi nomor lane yang memegangnya. ``tiles``: daftar
        (judul, array int), satu atau dua panel per baris gambar.
"""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Rectangle

from . import style
from .figure_checks import check_words, figure_array

SIGN = "#fdae6b"
EXPONENT = "#9ecae1"
MANTISSA = "#a1d99b"
DROPPED = "#d9d9d9"
EDGE = "#252525"
TEXT_FONT = 11.0
BIT_FONT = style.SMALL


def tf32_bits(rows, *, title="float32 dan TF32: bit yang disimpan"):
    """Kotak 32 bit per baris; bit 12..0 (dibuang TF32) diarsir abu-abu."""
    if not isinstance(rows, (list, tuple)) or not rows:
        raise ValueError("Argumen 'rows' harus daftar yang tidak kosong: beri paling sedikit "
                         "satu (label, pola bit).")
    rows = [(str(label), int(bits) & 0xFFFFFFFF) for label, bits in rows]
    # Layout in inches: a header of two lines over the boxes, 0.45 per row.
    width, head, row_h = style.MAX_WIDTH, 0.95, 0.45
    height = head + row_h * len(rows) + 0.1
    fig = style.new_figure(width, height)
    left, right = 0.8, 0.08  # inches for the row labels, and a margin
    ax = fig.add_axes([left / width, 0.1 / height, 1 - (left + right) / width,
                       (row_h * len(rows) + 0.5) / height])
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
    for x0, x1, name in ((0, 1, "tanda"), (1, 9, "eksponen\n(8)"), (9, 19, "mantissa\nTF32 (10)"),
                         (19, 32, "dibuang\n(13)")):
        ax.text((x0 + x1) / 2, top, name, ha="center", va="bottom", fontsize=style.SMALL,
                linespacing=1.1)
    ax.set_xlim(-0.1, 32.1)
    ax.set_ylim(0, len(rows) + 1.1)
    ax.axis("off")
    fig.suptitle(title, fontsize=TEXT_FONT + 1, x=0.02, y=1 - 0.05 / height, ha="left", va="top")
    return fig


def fragment_tiles(tiles, *, title="Lane pemilik setiap elemen fragmen (emulator)"):
    """Satu panel per ubin; warna dan angka = lane yang memegang elemen itu.

    Ubin yang bersama-sama selebar paling banyak 24 kolom berbagi satu baris
    gambar (A 16 × 8 di samping B 8 × 16); semua sel berukuran sama, cukup
    besar untuk nomor lane ``SMALL`` poin di layar ponsel.
    """
    if not isinstance(tiles, (list, tuple)) or not tiles:
        raise ValueError("Argumen 'tiles' harus daftar (judul, array 2-D nomor lane), paling "
                         "sedikit satu.")
    names = check_words([name for name, _ in tiles], len(tiles), "tiles", "ubin")
    owners = [figure_array(owner, "tiles", "Berikan array 2-D nomor lane per ubin.", ndim=2,
                           shape_name="array 2-D nomor lane", finite=True).astype(int)
              for _, owner in tiles]
    # Rows of the figure: tiles side by side while they fit in 24 columns.
    lines, columns = [[]], 0
    for n, owner in enumerate(owners):
        if lines[-1] and columns + owner.shape[1] > 24:
            lines.append([])
            columns = 0
        lines[-1].append(n)
        columns += owner.shape[1]
    width, gap, title_h, label_h = style.MAX_WIDTH, 0.15, 0.35, 0.3
    widest = max(sum(owners[n].shape[1] for n in line) + (len(line) - 1) for line in lines)
    cell = min(0.25, (width - 0.2) / widest)  # inches; a one-column gap between tiles
    heights = [max(owners[n].shape[0] for n in line) * cell for line in lines]
    height = title_h + sum(label_h + h + gap for h in heights)
    fig = style.new_figure(width, height)
    y = height - title_h
    for line, tall in zip(lines, heights):
        used = sum(owners[n].shape[1] for n in line) + (len(line) - 1)
        x = (width - used * cell) / 2
        y -= label_h
        for n in line:
            owner = owners[n]
            h, w = owner.shape
            ax = fig.add_axes([x / width, (y - h * cell) / height, w * cell / width,
                               h * cell / height])
            ax.imshow(owner % 32, cmap="tab20", vmin=0, vmax=31, interpolation="nearest",
                      aspect="equal")
            for (r, c), lane in np.ndenumerate(owner):
                ax.text(c, r, str(int(lane)), ha="center", va="center", fontsize=style.SMALL)
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_title(f"{names[n]}, {h} × {w}", fontsize=style.SMALL, loc="left")
            x += (w + 1) * cell
        y -= tall + gap
    fig.suptitle(title, fontsize=style.FONT, x=0.02, y=1 - 0.08 / height, ha="left", va="top")
    return fig
