"""Gambar untuk bab "CUDA dalam 10 Menit" dan kernel skor berubin.

Fungsi murni: angka masuk, ``matplotlib.figure.Figure`` keluar (tanpa
``pyplot``). Keduanya menggambar matriks skor $T \\times T$ dengan baris
$i$ (*query*) ke bawah dan kolom $j$ (*key*) ke kanan, seperti di NumPy.

    thread_grid(T, block=16, thread=(i, j))
        matriks T × T ditutupi *grid* berisi *block* 16 × 16; satu *thread*
        disorot beserta rumus indeksnya, dan *thread* di luar matriks
        (T bukan kelipatan 16) berwarna abu-abu.
    tiling(T, d_k, tile=16, block=(bx, by), step=s)
        kernel skor berubin: ubin keluaran satu *block* di S, dan ubin Q dan
        K yang dimuat *block* itu ke *shared memory* pada langkah ke-s.

Gambar selebar 5 inci dengan huruf paling kecil 10 poin: di layar ponsel
(gambar sekitar 330 px) teks terkecil tetap di atas 9 px (aturan di
:mod:`atensi.style`).
"""

from __future__ import annotations

import math

from matplotlib.patches import Rectangle

from .style import HIGHLIGHT, MASKED, new_figure
from .figure_checks import check_index_pair
from .validation import check_int

TEXT_FONT = 12.5
LABEL_FONT = 12.0
SMALL_FONT = 10.0
MATRIX_FILL = "#dbe8f5"     # sel matriks yang dikerjakan
BLOCK_FILL = "#fdd0a2"      # block yang disorot
LOAD_FILL = "#6baed6"       # ubin yang sedang dimuat ke shared memory
STRIP_FILL = "#c6dbef"      # ubin lain yang dimuat block ini di langkah lain
EDGE = "#08306b"
MAX_BLOCK_LABELS = 6        # label (bx, by) hanya bila grid sekecil ini


def _rect(ax, x, y, w, h, **kw):
    ax.add_patch(Rectangle((x, y), w, h, **kw))


def _matrix_axes(fig, rect, x_range, y_range):
    ax = fig.add_axes(rect)
    ax.set_xlim(*x_range)
    ax.set_ylim(y_range[1], y_range[0])  # baris 0 di atas, seperti NumPy
    ax.set_aspect("equal")
    return ax


def thread_grid(T=40, block=16, *, thread=(21, 37), title=None):
    """Matriks skor T × T ditutupi *grid* *block* ``block`` × ``block``.

    ``thread=(i, j)``: *thread* yang disorot (baris i, kolom j); boleh juga
    di luar matriks (i atau j ≥ T) asal masih di dalam *grid*, untuk
    menunjukkan *thread* yang tidak mengerjakan apa-apa. Di bawah gambar
    tertulis rumus indeksnya dengan angka *thread* itu.
    """
    T = check_int(T, "T", low=1)  # the text length (number of positions)
    block = check_int(block, "block", low=1)
    if block > 32:
        raise ValueError(
            f"Argumen 'block' = {block} terlalu besar: block {block} × {block} berisi "
            f"{block * block} thread, padahal satu block paling banyak 1024 thread. "
            "Nilai block harus ≤ 32."
        )
    n_blocks = math.ceil(T / block)
    cover = n_blocks * block
    i, j = check_index_pair(thread, "thread", (cover, cover), ("i", "j"))
    by, ty = divmod(i, block)
    bx, tx = divmod(j, block)

    fig = new_figure(5.0, 7.0)
    ax = _matrix_axes(fig, [0.15, 0.33, 0.72, 0.5], (0, cover), (0, cover))

    # Isi matriks, dan daerah grid di luar matriks (thread menganggur).
    _rect(ax, 0, 0, T, T, facecolor=MATRIX_FILL, edgecolor="none")
    if cover > T:
        for x, y, w, h in ((T, 0, cover - T, cover), (0, T, T, cover - T)):
            _rect(ax, x, y, w, h, facecolor=MASKED, edgecolor="none")
    # Block yang disorot, dengan garis tiap thread di dalamnya.
    _rect(ax, bx * block, by * block, block, block, facecolor=BLOCK_FILL, edgecolor="none")
    for t in range(1, block):
        ax.plot([bx * block + t] * 2, [by * block, (by + 1) * block], color="white", lw=0.4)
        ax.plot([bx * block, (bx + 1) * block], [by * block + t] * 2, color="white", lw=0.4)
    # Thread yang disorot.
    _rect(ax, j, i, 1, 1, facecolor=HIGHLIGHT, edgecolor="black", lw=1.2)
    ax.annotate(f"thread ({i}, {j})", xy=(j + 0.5, i + 0.5),
                xytext=(0.5 * block, i + 0.5) if j >= block else (cover - 0.5 * block, i + 0.5),
                ha="center", va="center", fontsize=LABEL_FONT, color="black",
                bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": HIGHLIGHT},
                arrowprops={"arrowstyle": "->", "color": "black", "lw": 1.2})
    # Batas block dan batas matriks.
    for b in range(n_blocks + 1):
        ax.plot([b * block] * 2, [0, cover], color=EDGE, lw=1.2)
        ax.plot([0, cover], [b * block] * 2, color=EDGE, lw=1.2)
    if cover > T:
        ax.plot([T, T, 0], [0, T, T], color="black", lw=1.6, ls="--")
    if n_blocks <= MAX_BLOCK_LABELS:
        for yb in range(n_blocks):
            for xb in range(n_blocks):
                if (xb, yb) == (bx, by) or yb == by:
                    continue  # the row of the highlighted thread holds its label
                ax.text((xb + 0.5) * block, (yb + 0.3) * block, f"block\n({xb}, {yb})",
                        ha="center", va="center", fontsize=SMALL_FONT, color=EDGE)

    ticks = sorted({b * block for b in range(n_blocks + 1)} | {T})
    ax.set_xticks(ticks)
    ax.set_yticks(ticks)
    ax.tick_params(labelsize=SMALL_FONT, length=2, top=True, labeltop=True,
                   bottom=False, labelbottom=False)
    ax.set_xlabel("kolom j (key)", fontsize=LABEL_FONT)
    ax.xaxis.set_label_position("top")
    ax.set_ylabel("baris i (query)", fontsize=LABEL_FONT)
    for side in ax.spines.values():
        side.set_visible(False)

    if title is None:
        title = (f"T = {T}: grid {n_blocks} × {n_blocks} block,\n"
                 f"tiap block {block} × {block} thread")
    fig.text(0.02, 0.985, title, fontsize=TEXT_FONT, va="top")
    inside = i < T and j < T
    lines = [
        f"blockIdx = ({bx}, {by}),  threadIdx = ({tx}, {ty})",
        "j = blockIdx.x · blockDim.x + threadIdx.x",
        f"   = {bx} · {block} + {tx} = {j}",
        "i = blockIdx.y · blockDim.y + threadIdx.y",
        f"   = {by} · {block} + {ty} = {i}",
        (f"{i} < {T} dan {j} < {T}: menghitung S[{i}, {j}]" if inside else
         f"i atau j ≥ T = {T}: di luar matriks, tidak menulis"),
    ]
    if cover > T:
        lines.append("abu-abu: di luar matriks, thread menganggur")
    fig.text(0.03, 0.285, "\n".join(lines), fontsize=LABEL_FONT, va="top", linespacing=1.5)
    return fig


def tiling(T=64, d_k=64, tile=16, *, block=(2, 1), step=0, title=None):
    """Kernel skor berubin: apa yang dimuat satu *block* ke *shared memory*.

    S (T × T) di kanan bawah, Q (T × d_k) di kirinya (barisnya sejajar baris
    S), dan Kᵀ (d_k × T) di atasnya (kolomnya sejajar kolom S). *Block*
    ``block=(bx, by)`` menghitung ubin S baris ``by·tile …`` dan kolom
    ``bx·tile …``. Ia berjalan di sepanjang d_k per ubin: pada langkah
    ``step`` ia memuat ubin Q kolom ``step·tile …`` (ke ``Qs``) dan ubin K
    yang sama (ke ``Ks``), yang digambar biru tua; ubin langkah lain biru muda.
    """
    T = check_int(T, "T", low=1)
    d_k = check_int(d_k, "d_k", low=1)
    tile = check_int(tile, "tile", low=1)
    n_tiles = math.ceil(T / tile)
    n_steps = math.ceil(d_k / tile)
    bx, by = check_index_pair(block, "block", (n_tiles, n_tiles), ("bx", "by"))
    step = check_int(step, "step", low=0, high=n_steps - 1)  # one step per tile of d_k
    i0, j0, c0 = by * tile, bx * tile, step * tile
    rows = min(tile, T - i0)
    cols = min(tile, T - j0)
    width = min(tile, d_k - c0)
    gap = max(2, round(0.06 * (T + d_k)))
    left, top = -(d_k + gap), -(d_k + gap)

    fig = new_figure(5.0, 6.3)
    ax = _matrix_axes(fig, [0.03, 0.16, 0.94, 0.74], (left - 1, T + 1), (top - 1, T + 1))
    ax.axis("off")

    # Tiga matriks.
    _rect(ax, 0, 0, T, T, facecolor=MATRIX_FILL, edgecolor=EDGE, lw=1)
    _rect(ax, left, 0, d_k, T, facecolor="white", edgecolor=EDGE, lw=1)
    _rect(ax, 0, top, T, d_k, facecolor="white", edgecolor=EDGE, lw=1)
    # Ubin-ubin yang dilewati block ini di sepanjang d_k, dan langkah sekarang.
    for s in range(n_steps):
        cs, ws = s * tile, min(tile, d_k - s * tile)
        now = s == step
        fill = LOAD_FILL if now else STRIP_FILL
        _rect(ax, left + cs, i0, ws, rows, facecolor=fill, edgecolor=EDGE, lw=0.6)
        _rect(ax, j0, top + cs, cols, ws, facecolor=fill, edgecolor=EDGE, lw=0.6)
        if ws >= 6 and rows >= 6:
            ax.text(left + cs + ws / 2, i0 + rows / 2, str(s + 1), ha="center",
                    va="center", fontsize=SMALL_FONT, color="white" if now else EDGE)
            ax.text(j0 + cols / 2, top + cs + ws / 2, str(s + 1), ha="center",
                    va="center", fontsize=SMALL_FONT, color="white" if now else EDGE)
    _rect(ax, j0, i0, cols, rows, facecolor=HIGHLIGHT, edgecolor="black", lw=1)
    # Garis bantu: baris ubin Q sejajar ubin S, kolom ubin K sejajar ubin S.
    for y in (i0, i0 + rows):
        ax.plot([left + d_k, j0], [y, y], color=HIGHLIGHT, lw=0.8, ls=":")
    for x in (j0, j0 + cols):
        ax.plot([x, x], [top + d_k, i0], color=HIGHLIGHT, lw=0.8, ls=":")

    ax.text(left + d_k / 2, -0.5, f"Q ({T} × {d_k})", ha="center", va="bottom",
            fontsize=LABEL_FONT)
    ax.text(T / 2, top - 0.5, f"Kᵀ ({d_k} × {T})", ha="center", va="bottom",
            fontsize=LABEL_FONT)
    ax.text(T / 2, T - 0.04 * T, f"S ({T} × {T})", ha="center", va="bottom",
            fontsize=LABEL_FONT)
    ax.text(left + d_k / 2, top + d_k / 2,
            f"block ({bx}, {by})\nlangkah {step + 1}\ndari {n_steps}",
            ha="center", va="center", fontsize=LABEL_FONT, color=EDGE)

    if title is None:
        title = f"Kernel skor berubin: ubin {tile} × {tile},\nT = {T}, d_k = {d_k}"
    fig.text(0.02, 0.975, title, fontsize=TEXT_FONT, va="top")
    legend = (
        f"jingga: ubin S baris {i0}–{i0 + rows - 1}, kolom {j0}–{j0 + cols - 1}\n"
        f"biru tua: dimuat ke Qs dan Ks, kolom d_k {c0}–{c0 + width - 1}\n"
        f"biru muda: ubin langkah lain (total {n_steps} langkah)"
    )
    fig.text(0.03, 0.15, legend, fontsize=SMALL_FONT + 1, va="top", linespacing=1.5)
    return fig
