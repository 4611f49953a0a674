"""Gambar bab Posisi: data masuk, ``Figure`` matplotlib keluar, tanpa perhitungan.

    encoding_figure     tabel posisi (T, d) dan kemiripan antarposisi
    rotation_figure     vektor 2-D sebelum dan sesudah diputar RoPE
    rope_plane_figure   penjelajah RoPE: q dan k yang berputar, dan skornya

Gaya (warna, huruf, ukuran) dari :mod:`atensi.style`; heatmap dari :mod:`atensi.plots`.
"""

from __future__ import annotations

import numpy as np

from . import plots, style

QUERY_COLOR = style.HIGHLIGHT
KEY_COLOR = style.BAR
FADED = "#b0b0b0"


def encoding_figure(P, similarity, *, title, component_label="komponen"):
    """Atas: tabel posisi ``P`` (T, d), satu baris per posisi. Bawah: ``similarity``
    (T, T), kemiripan kosinus baris-baris P. Bertumpuk, supaya terbaca di ponsel."""
    P = np.asarray(P, dtype=np.float64)
    similarity = np.asarray(similarity, dtype=np.float64)
    fig = style.new_figure(style.EXPLORER_WIDTH, 7.0)
    ax_p = fig.add_axes([0.16, 0.55, 0.66, 0.35])
    ax_s = fig.add_axes([0.16, 0.07, 0.66, 0.36])
    span = max(1e-9, float(np.abs(P).max()))
    image_p = plots.draw_heatmap(ax_p, P, cmap="RdBu_r", vmin=-span, vmax=span, annotate=False,
                                 colorbar=False, title="nilai tiap komponen",
                                 xlabel=component_label, ylabel="posisi p")
    ax_p.set_aspect("auto")
    image_s = plots.draw_heatmap(ax_s, similarity, cmap="RdBu_r", vmin=-1, vmax=1,
                                 annotate=False, colorbar=False,
                                 title="kemiripan kosinus antarposisi",
                                 xlabel="posisi p′", ylabel="posisi p")
    ax_s.set_aspect("auto")
    for ax, (rows, cols) in ((ax_p, P.shape), (ax_s, similarity.shape)):
        step = 16 if max(rows, cols) > 32 else (4 if max(rows, cols) > 8 else 1)
        ax.set_xticks(np.arange(0, cols, step))
        ax.set_yticks(np.arange(0, rows, step))
    for image, box in ((image_p, [0.85, 0.55, 0.03, 0.35]), (image_s, [0.85, 0.07, 0.03, 0.36])):
        bar = fig.colorbar(image, cax=fig.add_axes(box))
        bar.ax.tick_params(labelsize=style.SMALL)
        bar.ax.yaxis.set_major_formatter(style.TICKS)
    fig.suptitle(title, fontsize=style.FONT, x=0.02, y=0.985, ha="left", va="top")
    return fig


def _arrow(ax, v, color, *, faded=False, width=0.012):
    ax.annotate("", xy=(float(v[0]), float(v[1])), xytext=(0, 0),
                arrowprops=dict(arrowstyle="-|>", color=FADED if faded else color,
                                lw=1.0 if faded else 1.8, ls="--" if faded else "-",
                                shrinkA=0, shrinkB=0, mutation_scale=9 if faded else 12))


def _plane(ax, limit):
    ax.axhline(0, color="#dddddd", lw=0.8, zorder=0)
    ax.axvline(0, color="#dddddd", lw=0.8, zorder=0)
    ax.set_xlim(-limit, limit)
    ax.set_ylim(-limit, limit)
    ax.set_aspect("equal")
    ax.xaxis.set_major_formatter(style.TICKS)
    ax.yaxis.set_major_formatter(style.TICKS)


def _angle_arc(ax, a, b, radius):
    """Arc from the direction of ``a`` to that of ``b`` (the angle between them)."""
    from matplotlib.patches import Arc

    start = np.degrees(np.arctan2(a[1], a[0]))
    turn = (np.degrees(np.arctan2(b[1], b[0])) - start + 180.0) % 360.0 - 180.0
    lo, hi = (start, start + turn) if turn >= 0 else (start + turn, start)
    ax.add_patch(Arc((0, 0), 2 * radius, 2 * radius, theta1=lo, theta2=hi,
                     color="#333333", lw=1.0))


def rotation_figure(before, after, labels, *, title, axes=("sumbu 0", "sumbu 1")):
    """Setiap baris ``before`` (n, 2) sebagai panah putus-putus abu-abu, dan baris
    ``after`` yang sama sebagai panah berwarna, berlabel ``labels``."""
    before = np.asarray(before, dtype=np.float64)
    after = np.asarray(after, dtype=np.float64)
    fig = style.new_figure(4.4, 4.6)
    ax = fig.add_axes([0.14, 0.17, 0.8, 0.72])
    limit = 1.2 * max(1e-9, float(np.abs(np.concatenate([before, after])).max()))
    _plane(ax, limit)
    at_origin = []  # zero vectors: one label at the origin, not names printed over each other
    for n, (b, a, name) in enumerate(zip(before, after, labels)):
        color = style.SERIES_COLORS[n % len(style.SERIES_COLORS)]
        if not a.any() and not b.any():
            at_origin.append(name)
            continue
        _arrow(ax, b, color, faded=True)
        _arrow(ax, a, color)
        ax.annotate(name, (float(a[0]), float(a[1])), xytext=(4, 4), textcoords="offset points",
                    fontsize=style.SMALL, color=color, weight="bold")
    if at_origin:
        ax.plot([0], [0], "o", color="#555555", ms=3)
        ax.text(0.97, 0.03, "di titik asal, vektor nol:\n" + ", ".join(at_origin), transform=ax.transAxes,
                ha="right", va="bottom", fontsize=style.SMALL, color="#555555")
    style.style_axes(ax, title=title, xlabel=axes[0], ylabel=axes[1])
    fig.text(0.02, 0.015, "putus-putus: sebelum diputar; tegas: sesudah diputar",
             fontsize=style.SMALL, color="#555555")
    return fig


def rope_plane_figure(q, k, q_rot, k_rot, *, i, j, shifts, scores, shift, limit,
                      plain_score=None):
    """Gambar penjelajah RoPE.

    Atas: ``q`` dan ``k`` (putus-putus) dan hasil putarannya ``q_rot`` di posisi
    ``i`` dan ``k_rot`` di posisi ``j``. Bawah: skor untuk setiap geseran di
    ``shifts`` (posisi i + c dan j + c), titik tebal di geseran ``shift``;
    ``plain_score``: skor tanpa RoPE, sebagai garis pembanding.
    """
    q, k, q_rot, k_rot = (np.asarray(v, dtype=np.float64) for v in (q, k, q_rot, k_rot))
    shifts = np.asarray(shifts, dtype=np.float64)
    scores = np.asarray(scores, dtype=np.float64)
    fig = style.new_figure(style.EXPLORER_WIDTH, 5.0)
    ax = fig.add_axes([0.14, 0.41, 0.8, 0.52])
    _plane(ax, limit)
    _angle_arc(ax, k_rot, q_rot, 0.22 * limit)
    _arrow(ax, q, QUERY_COLOR, faded=True)
    _arrow(ax, k, KEY_COLOR, faded=True)
    _arrow(ax, q_rot, QUERY_COLOR)
    _arrow(ax, k_rot, KEY_COLOR)
    for v, name, color in ((q_rot, f"q di posisi {i}", QUERY_COLOR),
                           (k_rot, f"k di posisi {j}", KEY_COLOR)):
        ax.annotate(name, (float(v[0]), float(v[1])), xytext=(4, 4), textcoords="offset points",
                    fontsize=style.SMALL, color=color, weight="bold")
    style.style_axes(ax, title="q dan k sesudah RoPE (putus-putus: sebelum)",
                 xlabel="sumbu 0", ylabel="sumbu 1")
    ax_s = fig.add_axes([0.14, 0.08, 0.8, 0.17])
    if plain_score is not None:
        ax_s.axhline(plain_score, color=FADED, ls="--", lw=1)
        ax_s.text(shifts[-1], plain_score, " tanpa RoPE", fontsize=style.SMALL,
                  color="#777777", va="bottom", ha="right")
    ax_s.plot(shifts, scores, "-o", color=style.BAR, ms=3, lw=1.2)
    at = int(np.flatnonzero(shifts == shift)[0])
    ax_s.plot([shifts[at]], [scores[at]], "o", ms=8, color=QUERY_COLOR,
              markeredgecolor="black", zorder=5)
    span = max(1.0, float(np.abs(scores).max()), abs(plain_score or 0.0))
    ax_s.set_ylim(-1.2 * span, 1.2 * span)
    ax_s.set_xticks(shifts)
    ax_s.xaxis.set_major_formatter(style.TICKS)
    ax_s.yaxis.set_major_formatter(style.TICKS)
    style.style_axes(ax_s, title=f"skor untuk i − j = {i - j}, setiap geseran c",
                 xlabel="geseran c", ylabel="skor")
    return fig
