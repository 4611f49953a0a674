"""Fungsi gambar murni: data masuk, ``matplotlib.figure.Figure`` keluar.

Tidak ada yang memakai ``pyplot``: setiap fungsi membuat Figure-nya sendiri,
sehingga tidak ada keadaan global yang bocor dan tidak ada gambar ganda di
notebook. Figure yang dikembalikan tampil sendiri di Jupyter (lewat
``_repr_png_``) bila menjadi nilai terakhir sebuah sel.

Gambar untuk bab:
    heatmap(M, judul)              matriks sebagai peta warna
    mask_pattern(T)                posisi mana yang boleh dilihat tiap baris
    softmax_row_bars(p)            satu baris softmax sebagai batang
    dot_product_histograms(data)   sebaran dot product untuk beberapa d_k
    metrics_vs_d_k(d_k, panels)    ukuran (peluang terbesar, entropi, ‖J‖) terhadap d_k
    heatmap_pair(atas, bawah)      dua matriks bertumpuk, skala warna sama
    roofline(puncak, pita, titik)  atap roofline dan intensitas setiap kernel
    work_map(M, label)             pola kerja kernel per sel, tanpa batang warna

Gambar untuk penjelajah (``atensi.explorers``):
    sharpness_figure, mask_figure, row_figure

Perhitungan ada di pemanggil (``reference``, ``measures``, sel bab): fungsi
di sini hanya menata dan menggambar data yang diberikan. Warna, huruf,
ukuran, dan ekspor PNG datang dari :mod:`atensi.style`.

Tata letak memakai margin tetap (bukan *constrained layout*): lebih cepat,
dan posisi sel heatmap dapat dihitung untuk penanda di versi statis.
"""

import math

import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.patches import Rectangle
from matplotlib.ticker import FuncFormatter, MaxNLocator

from . import style
from .figure_checks import check_series, figure_array
from .validation import check_int, check_positive, check_same_shape, check_version
from .formatting import id_bytes


def _position_ticks(ax, n, axis="both"):
    step = 1 if n <= 8 else (2 if n <= 16 else 4)
    ticks = np.arange(0, n, step)
    if axis in ("both", "x"):
        ax.set_xticks(ticks)
    if axis in ("both", "y"):
        ax.set_yticks(ticks)


def draw_heatmap(ax, M, *, cmap="viridis", vmin=None, vmax=None, annotate=None,
                 masked_label="−∞", title=None, xlabel="posisi key j",
                 ylabel="posisi query i", colorbar=True):
    """Gambar matriks ``M`` (T_q, T_k) di ``ax``. Sel ``-inf``/NaN diberi warna abu-abu.

    ``annotate=None`` menulis angka di tiap sel bila matriks cukup kecil (≤ 8).
    """
    M = figure_array(M, "M", "Berikan satu matriks angka, misalnya skor S atau bobot A; "
                     "untuk banyak head ambil satu dulu, misalnya M[0].",
                     ndim=2, shape_name="matriks 2 dimensi")
    hidden = ~np.isfinite(M)
    base = cmap if not isinstance(cmap, str) else style.colormap(cmap)
    colormap = base.with_extremes(bad=style.MASKED)
    image = ax.imshow(np.ma.masked_array(M, hidden), cmap=colormap, vmin=vmin, vmax=vmax,
                      interpolation="nearest")
    rows, cols = M.shape
    decimals = _cell_decimals(ax, M, hidden, masked_label) if max(rows, cols) <= 8 else None
    if annotate is None:
        # Numbers only where they fit their cells at SMALL points.
        annotate = decimals is not None
    if annotate:
        decimals = 1 if decimals is None else decimals
        lo, hi = image.get_clim()
        size = style.SMALL
        for i in range(rows):
            for j in range(cols):
                if hidden[i, j]:
                    text, dark = masked_label, False
                else:
                    text = _cell_text(M[i, j], decimals)
                    level = (M[i, j] - lo) / (hi - lo) if hi > lo else 0.5
                    dark = style.is_dark(colormap, level)
                ax.text(j, i, text, ha="center", va="center", fontsize=size,
                        color="white" if dark else "black")
    _position_ticks(ax, cols, "x")
    _position_ticks(ax, rows, "y")
    ax.tick_params(labelsize=style.SMALL, length=2)
    style.labels(ax, title, xlabel, ylabel)
    if colorbar:
        bar = ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.03)
        bar.ax.tick_params(labelsize=style.SMALL)
        bar.ax.yaxis.set_major_formatter(style.TICKS)
    return image


def _cell_text(x, decimals):
    return style.format_number(x, decimals if abs(x) < 10 else max(0, decimals - 1))


def _cell_decimals(ax, M, hidden, masked_label):
    """Desimal terbanyak (2, 1 atau 0) yang membuat angka terlebar muat di selnya
    pada SMALL poin; None bila tidak ada yang muat."""
    rows, cols = M.shape
    box = ax.get_position()
    fig_w, fig_h = ax.figure.get_size_inches()
    cell_pt = 72 * min(box.width * fig_w / cols, box.height * fig_h / rows)
    whole = bool(np.all(M[~hidden] == np.round(M[~hidden])))
    for decimals in ((0,) if whole else (2, 1, 0)):
        texts = [_cell_text(x, decimals) for x in M[~hidden]]
        texts += [masked_label] if hidden.any() else []
        widest = max((len(t) for t in texts), default=1)
        if widest * 0.6 * style.SMALL <= 0.95 * cell_pt:
            return decimals
    return None


def heatmap(M, title=None, *, cmap="viridis", vmin=None, vmax=None, annotate=None,
            xlabel="posisi key j", ylabel="posisi query i", highlight_row=None):
    """Heatmap satu matriks (misalnya skor atau bobot atensi) sebagai Figure."""
    fig = style.new_figure(style.MAX_WIDTH, 3.8)
    ax = fig.add_axes([0.16, 0.13, 0.68, 0.77])
    draw_heatmap(ax, M, cmap=cmap, vmin=vmin, vmax=vmax, annotate=annotate,
                 title=title, xlabel=xlabel, ylabel=ylabel)
    if highlight_row is not None:
        rows, cols = np.shape(M)
        _outline_row(ax, check_int(highlight_row, "highlight_row", low=0, high=rows - 1), cols)
    return fig


def mask_pattern(T):
    """Pola mask kausal T × T: sel terang boleh dilihat, sel abu-abu adalah masa depan."""
    T = check_int(T, "T", low=1)
    visible = np.tril(np.ones((T, T)))
    fig = style.new_figure(4.2, 4.1)
    ax = fig.add_axes([0.14, 0.11, 0.8, 0.74])
    colors = ListedColormap([style.MASKED, style.GREEN])
    ax.imshow(visible, cmap=colors, vmin=0, vmax=1, interpolation="nearest")
    if T <= 12:
        for i in range(T):
            for j in range(T):
                ax.text(j, i, "✓" if j <= i else "−∞", ha="center", va="center",
                        fontsize=style.SMALL,
                        color="white" if j <= i else "#555555")
    # The border between seen and hidden is a staircase: the diagonal cells are seen.
    steps = [(x, y) for i in range(T - 1) for x, y in ((i + 0.5, i - 0.5), (i + 0.5, i + 0.5))]
    if steps:
        steps.append((T - 0.5, T - 1.5))
        ax.plot(*zip(*steps), color="black", lw=1)
    _position_ticks(ax, T)
    ax.tick_params(labelsize=style.SMALL, length=2)
    ax.set_xlabel("posisi key j (yang dilihat)", fontsize=style.SMALL)
    ax.set_ylabel("posisi query i (yang melihat)", fontsize=style.SMALL)
    ax.set_title(f"Mask kausal, T = {T}\nhijau: boleh dilihat; abu-abu: masa depan",
                 fontsize=style.FONT, loc="left")
    return fig


def _draw_row_bars(ax, p, *, title=None, ylabel="peluang", masked=None, ylim=(0, 1.0),
                   color=style.BAR, reference=None):
    p = np.asarray(p, dtype=np.float64)
    n = p.shape[-1]
    positions = np.arange(n)
    colors = [style.MASKED if masked is not None and masked[j] else color for j in range(n)]
    ax.bar(positions, np.where(np.isfinite(p), p, 0.0), color=colors, width=0.8)
    if masked is not None:
        for j in np.flatnonzero(masked):
            ax.text(j, 0, "×", ha="center", va="bottom", fontsize=style.SMALL, color="#555555")
    if reference is not None:
        ax.axhline(reference, color="#777777", lw=0.8, ls="--")
    if ylim is not None:
        ax.set_ylim(*ylim)
    _position_ticks(ax, n, "x")
    ax.yaxis.set_major_formatter(style.TICKS)
    ax.yaxis.set_major_locator(MaxNLocator(4))
    style.style_axes(ax, title=title, xlabel="posisi j", ylabel=ylabel)


def softmax_row_bars(p, *, scores=None, title="Satu baris softmax", masked=None):
    """Satu baris softmax ``p`` sebagai batang; bila ``scores`` diberikan, skornya di atas.

    ``masked`` (boolean per posisi) menandai posisi masa depan dengan abu-abu.
    """
    p = figure_array(p, "p", "Berikan satu baris bobot, misalnya A[i].", ndim=1,
                     shape_name="satu baris (vektor)")
    if scores is None:
        fig = style.new_figure(style.MAX_WIDTH, 2.8)
        ax = fig.add_axes([0.17, 0.2, 0.78, 0.68])
        _draw_row_bars(ax, p, title=title, masked=masked, reference=1 / p.size)
        return fig
    fig = style.new_figure(style.MAX_WIDTH, 4.6)
    top = fig.add_axes([0.17, 0.6, 0.78, 0.32])
    bottom = fig.add_axes([0.17, 0.1, 0.78, 0.32])
    s = figure_array(scores, "scores", "Berikan skor baris yang sama, misalnya S[i].")
    check_same_shape(s, "scores", p, "p")
    finite = np.isfinite(s)
    span = max(1e-9, np.abs(s[finite]).max()) if finite.any() else 1.0
    _draw_row_bars(top, s, title="Skor baris ini", ylabel="skor", masked=~finite,
                   ylim=(-1.1 * span, 1.1 * span))
    top.axhline(0, color="black", lw=0.6)
    _draw_row_bars(bottom, p, title=title, masked=masked if masked is not None else ~finite)
    return fig


def _draw_histogram(ax, values, *, limit, title, bins=41, color=style.BAR):
    edges = np.linspace(-limit, limit, bins + 1)
    clipped = np.clip(values, -limit, limit)
    counts, _ = np.histogram(clipped, bins=edges)
    share = counts / max(1, len(values))
    ax.bar(0.5 * (edges[:-1] + edges[1:]), share, width=edges[1] - edges[0], color=color)
    ax.set_xlim(-limit, limit)
    ax.xaxis.set_major_formatter(style.TICKS)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _p: style.format_number(100 * y, 0) + "%"))
    ax.yaxis.set_major_locator(MaxNLocator(3))
    style.style_axes(ax, title=title, xlabel="nilai dot product", ylabel="bagian")


def dot_product_histograms(samples, *, scale=False):
    """Histogram dot product acak untuk beberapa d_k, satu panel per d_k, sumbu x sama.

    ``samples``: dict ``{d_k: array}``, misalnya dari
    ``measures.random_dot_products(d_k, scale=scale)``. ``scale`` hanya
    mengubah judul (data sudah dibagi atau belum oleh pemanggil).
    """
    check_series(samples, "samples")
    keys = sorted(samples)
    limit = max(4.0 * float(np.std(samples[d])) for d in keys)
    fig_h = 1.1 + 1.5 * len(keys)
    fig = style.new_figure(style.MAX_WIDTH, fig_h)
    height = 0.82 / len(keys)
    for n, d in enumerate(keys):
        values = np.asarray(samples[d], dtype=np.float64)
        bottom = 0.92 - (n + 1) * height
        ax = fig.add_axes([0.17, bottom + 0.3 * height, 0.78, 0.55 * height])
        _draw_histogram(ax, values, limit=limit,
                        title=f"d_k = {style.format_number(d, 0)}: simpangan baku "
                              f"{style.format_number(np.std(values), 1)}")
        if n < len(keys) - 1:
            ax.set_xlabel("")
    label = "dibagi √d_k" if scale else "tanpa pembagian"
    fig.suptitle(f"Dot product acak, {label}", fontsize=style.FONT, x=0.02,
                 y=1 - 0.08 / fig_h, ha="left", va="top")
    return fig


# ---------------------------------------------------------------- explorers


def sharpness_figure(dots, row_weights, *, d_k, scale, limit):
    """Gambar penjelajah ketajaman: sebaran dot product dan satu baris softmax.

    ``dots``: semua dot product acak untuk d_k ini; ``row_weights``: softmax
    satu baris skor (sudah dibagi √d_k bila ``scale``); ``limit``: batas sumbu
    x histogram, sama untuk semua d_k supaya pelebarannya terlihat.
    """
    fig = style.new_figure(style.EXPLORER_WIDTH, 3.9)
    top = fig.add_axes([0.16, 0.585, 0.8, 0.27])
    bottom = fig.add_axes([0.16, 0.11, 0.8, 0.3])
    spread = style.format_number(np.std(dots), 2 if np.std(dots) < 10 else 1)
    kind = "dibagi √d_k" if scale else "tanpa pembagian"
    _draw_histogram(top, dots, limit=limit,
                    title=f"{style.format_number(len(dots), 0)} dot product acak, {kind}\n"
                          f"d_k = {int(d_k)}: simpangan baku ≈ {spread}")
    p = figure_array(row_weights, "row_weights", "Berikan softmax satu baris skor.", ndim=1,
                     shape_name="satu baris (vektor)")
    _draw_row_bars(bottom, p, title=f"Satu baris softmax ({p.size} key); garis = seragam",
                   reference=1 / p.size)
    return fig


def _outline_row(ax, i, n_cols, color=style.HIGHLIGHT):
    ax.add_patch(Rectangle((-0.5, i - 0.5), n_cols, 1, fill=False, edgecolor=color, lw=2,
                           clip_on=False))


MASK_AXES = {
    "scores": [0.11, 0.17, 0.35, 0.68],
    "weights": [0.55, 0.17, 0.35, 0.68],
    "sums": [0.925, 0.17, 0.06, 0.68],
}


def mask_figure(S, A, *, masked, scaled, row=None):
    """Gambar penjelajah mask: heatmap skor, heatmap bobot, dan jumlah tiap baris bobot.

    ``S``: skor (T, T) setelah mask (``-inf`` di masa depan bila ``masked``);
    ``A``: ``softmax(S)``; ``row``: baris yang diberi bingkai (``None``: tanpa bingkai).
    """
    S = np.asarray(S, dtype=np.float64)
    A = np.asarray(A, dtype=np.float64)
    T = S.shape[-1]
    fig = style.new_figure(style.EXPLORER_WIDTH, 2.5)
    ax_s = fig.add_axes(MASK_AXES["scores"])
    ax_a = fig.add_axes(MASK_AXES["weights"])
    ax_sum = fig.add_axes(MASK_AXES["sums"])
    limit = 3.0 if scaled else 12.0
    draw_heatmap(ax_s, S, cmap="RdBu_r", vmin=-limit, vmax=limit, colorbar=False,
                 title="Skor" + (" ÷ √d_k" if scaled else ""), annotate=T <= 6)
    draw_heatmap(ax_a, A, cmap="Blues", vmin=0.0, vmax=1.0, colorbar=False,
                 title="Bobot A", annotate=T <= 6, ylabel=None)
    sums = A.sum(axis=-1)
    ax_sum.barh(np.arange(T), sums, color=style.GREEN, height=0.8)
    ax_sum.set_ylim(T - 0.5, -0.5)
    ax_sum.set_xlim(0, 1.2)
    ax_sum.set_xticks([0, 1])
    ax_sum.set_yticks([])
    ax_sum.xaxis.set_major_formatter(style.TICKS)
    style.style_axes(ax_sum, title="Σ")  # y fixed in _style: automatic title placement is slow
    ax_sum.spines["left"].set_visible(False)
    if row is not None:
        _outline_row(ax_s, row, T)
        _outline_row(ax_a, row, T)
    return fig


def row_outline_fractions(fig, row, n_rows):
    """Kotak baris ``row`` di kedua heatmap ``mask_figure``, dalam pecahan gambar.

    Hasil: daftar ``(kiri, atas, lebar, tinggi)`` dengan titik asal di pojok kiri
    atas, seperti CSS. Dipakai penanda baris di versi statis.
    """
    width, height = fig.bbox.width, fig.bbox.height
    boxes = []
    for ax in fig.axes[:2]:
        ax.apply_aspect()  # imshow shrinks the axes box to square cells at draw time
        (x0, y0), (x1, y1) = ax.transData.transform([(-0.5, row + 0.5), (n_rows - 0.5, row - 0.5)])
        boxes.append((x0 / width, 1 - y1 / height, (x1 - x0) / width, (y1 - y0) / height))
    return boxes


def row_figure(scores_row, weights_row, V, output, *, row, temperature, limits):
    """Gambar penjelajah baris demi baris.

    ``scores_row``: skor baris ``row`` (``-inf`` di masa depan); ``weights_row``:
    softmax(skor / suhu); ``V``: (T, 2); ``output``: keluaran[row] (2,);
    ``limits``: batas sumbu bidang V, sama untuk semua bingkai.
    """
    s = np.asarray(scores_row, dtype=np.float64)
    w = np.asarray(weights_row, dtype=np.float64)
    V = np.asarray(V, dtype=np.float64)
    T = s.size
    future = ~np.isfinite(s)
    fig = style.new_figure(style.EXPLORER_WIDTH, 4.9)
    ax_s = fig.add_axes([0.15, 0.735, 0.33, 0.19])
    ax_w = fig.add_axes([0.64, 0.735, 0.33, 0.19])
    ax_v = fig.add_axes([0.15, 0.06, 0.82, 0.55])
    span = max(1e-9, np.abs(s[~future]).max())
    _draw_row_bars(ax_s, s, title=f"Skor baris i = {row}", ylabel="skor", masked=future,
                   ylim=(-1.15 * span, 1.15 * span))
    ax_s.axhline(0, color="black", lw=0.6)
    _draw_row_bars(ax_w, w, title=f"softmax(skor / {style.format_number(temperature, 2)})",
                   ylabel=None, masked=future)
    seen = ~future
    ax_v.scatter(V[future, 0], V[future, 1], s=40, facecolors="none", edgecolors="#aaaaaa", lw=1)
    ax_v.scatter(V[seen, 0], V[seen, 1], s=40 + 900 * w[seen], color=style.BAR, alpha=0.75,
                 edgecolors="white")
    for j in np.flatnonzero(seen & (w > 0.005)):
        ax_v.plot([V[j, 0], output[0]], [V[j, 1], output[1]], color=style.BAR, lw=0.4 + 3 * w[j],
                  alpha=0.5)
    for j in range(T):
        ax_v.annotate(f"V[{j}]", tuple(V[j]), xytext=(6, 5), textcoords="offset points",
                      fontsize=style.SMALL, color="#999999" if future[j] else "black")
    ax_v.scatter([output[0]], [output[1]], marker="*", s=260, color=style.HIGHLIGHT,
                 edgecolors="black", lw=0.6, zorder=5)
    ax_v.annotate(f"keluaran[{row}]", (output[0], output[1]), xytext=(0, -22), ha="center",
                  textcoords="offset points", fontsize=style.SMALL, color=style.HIGHLIGHT,
                  weight="bold")
    # Equal units on both axes: widen the x range to the box's width/height ratio.
    (x0, x1), (y0, y1) = limits
    box = ax_v.get_position()
    stretch = (box.width * fig.get_figwidth()) / (box.height * fig.get_figheight())
    half = 0.5 * max(x1 - x0, (y1 - y0) * stretch)
    middle = 0.5 * (x0 + x1)
    ax_v.set_xlim(middle - half, middle + half)
    ax_v.set_ylim(y0, y1)
    ax_v.xaxis.set_major_formatter(style.TICKS)
    ax_v.yaxis.set_major_formatter(style.TICKS)
    style.style_axes(ax_v, title=f"V[j] (besar = berbobot); ★ = keluaran[{row}]")
    return fig


# ------------------------------------------------- softmax and synthesis (bab 4, 6)


def softmax_temperature(temperatures, weights, entropies):
    """Satu baris skor di-softmax pada beberapa suhu τ, satu panel per suhu.

    ``weights[n]``: bobot ``softmax(skor / temperatures[n])`` (satu baris per
    suhu), ``entropies[n]``: entropinya dalam nat (``measures.entropy``).
    Setiap panel: bobot sebagai batang, bobot terbesar dan entropi di judul;
    garis putus = bobot seragam.
    """
    temps = figure_array(temperatures, "temperatures", "Berikan daftar suhu, misalnya [0.5, 1, 2].",
                         ndim=1, shape_name="daftar suhu (vektor)")
    temps = [check_positive(t, "temperatures") for t in temps]
    weights = figure_array(weights, "weights", "Berikan satu baris bobot softmax per suhu.",
                           ndim=2, shape_name="matriks (satu baris bobot per suhu)", finite=True)
    entropies = figure_array(entropies, "entropies", "Berikan satu entropi (nat) per suhu.",
                             ndim=1, shape_name="daftar entropi (vektor)", finite=True)
    if weights.shape[0] != len(temps) or entropies.size != len(temps):
        raise ValueError(
            f"Argumen 'weights' dan 'entropies' harus punya satu baris per suhu ({len(temps)}), "
            f"tetapi bentuknya {weights.shape} dan {entropies.shape}."
        )
    fig = style.new_figure(style.MAX_WIDTH, 0.7 + 1.45 * len(temps))
    height = 0.86 / len(temps)
    for n, (t, p) in enumerate(zip(temps, weights)):
        bottom = 0.93 - (n + 1) * height
        ax = fig.add_axes([0.16, bottom + 0.3 * height, 0.81, 0.55 * height])
        _draw_row_bars(ax, p, ylabel="bobot", reference=1 / p.size,
                       title=f"τ = {style.format_number(t, 0 if t.is_integer() else 2)}: "
                             f"bobot terbesar {style.format_number(p.max())}; entropi "
                             f"{style.format_number(entropies[n])} nat")
        if n < len(temps) - 1:
            ax.set_xlabel("")
    return fig


def _positive_axis(values, name, what):
    """The x values of a line plot as float64, checked: at least two, all > 0."""
    x = figure_array(values, name, f"Berikan paling sedikit dua {what} > 0.", ndim=1,
                     shape_name=f"daftar {what} (vektor)", finite=True)
    if x.size < 2 or (x <= 0).any():
        raise ValueError(
            f"Argumen '{name}' harus berisi paling sedikit dua {what} > 0, tetapi yang "
            f"diterima {values!r}."
        )
    return x


def _plot_series(ax, x, series, axis_name):
    """One line per ``{label: y values}``, in style.SERIES_COLORS / style.SERIES_MARKERS order."""
    for n, (label, values) in enumerate(series.items()):
        y = figure_array(values, f"series['{label}']", f"Berikan satu nilai per {axis_name}.")
        check_same_shape(y, f"series['{label}']", x, axis_name)
        ax.plot(x, y, marker=style.SERIES_MARKERS[n % len(style.SERIES_MARKERS)], ms=4, lw=1.6,
                color=style.SERIES_COLORS[n % len(style.SERIES_COLORS)], label=label)


def memory_growth(T_values, series, *, title="Memori tambahan satu head (float32)"):
    """Memori (bita) terhadap panjang konteks T, sumbu log-log, satu garis per seri.

    ``series``: dict ``{label: bita untuk setiap T}``. Sumbu y memakai satuan
    KiB/MiB/GiB agar mudah dibaca.
    """
    T = _positive_axis(T_values, "T_values", "nilai T")
    check_series(series, "series")
    fig = style.new_figure(style.MAX_WIDTH, 3.6)
    ax = fig.add_axes([0.2, 0.14, 0.76, 0.74])  # room for "512 KiB" and the axis name
    _plot_series(ax, T, series, "T")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.xaxis.set_major_formatter(style.LOG_TICKS)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _p: id_bytes(y)))
    ax.legend(fontsize=style.SMALL, frameon=False, loc="upper left")
    ax.grid(True, which="major", color=style.GRID, lw=0.6)
    style.style_axes(ax, title=title, xlabel="panjang konteks T (token)", ylabel="memori")
    return fig


def roofline(peaks, bandwidth, points, *, title="Model roofline"):
    """Atap *roofline*: FLOP/s yang bisa dicapai terhadap intensitas (FLOP/bita).

    ``peaks``: dict ``{label: puncak FLOP/s}``, satu atap datar per puncak
    (misalnya FP32 dan *tensor core*); ``bandwidth``: lebar pita memori
    (bita/s), atap miring yang sama untuk semuanya; ``points``: dict
    ``{label: (intensitas, label atap)}``, satu penanda per *kernel* di bawah
    atap yang disebut. Sumbu x dan y logaritmik; y dalam TFLOP/s.
    """
    check_series(peaks, "peaks")
    tops = {label: check_positive(v, "peaks") for label, v in peaks.items()}
    bandwidth = check_positive(bandwidth, "bandwidth")
    marks = {}
    for label, value in points.items():
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            raise ValueError(
                f"Argumen 'points' harus berisi {{label: (intensitas > 0, label atap)}}, tetapi "
                f"'{label}' bernilai {value!r}."
            )
        intensity = check_positive(value[0], "points")
        marks[label] = (intensity, tops[check_version(value[1], {t: t for t in tops}, "points")])
    ridges = [v / bandwidth for v in tops.values()]
    xs = [i for i, _ in marks.values()]
    x = np.geomspace(min([0.25, *xs]) / 2, max([*ridges, *xs]) * 4, 200)
    fig = style.new_figure(style.MAX_WIDTH, 3.4)
    ax = fig.add_axes([0.16, 0.14, 0.8, 0.74])
    for n, (label, top) in enumerate(tops.items()):
        color = style.SERIES_COLORS[n % len(style.SERIES_COLORS)]
        ax.plot(x, np.minimum(top, bandwidth * x) / 1e12, lw=1.8, color=color, label=label)
        ax.axvline(top / bandwidth, color=color, lw=0.6, ls=":")
    for n, (label, (intensity, top)) in enumerate(marks.items()):
        y = min(top, bandwidth * intensity) / 1e12
        marker = style.SERIES_MARKERS[(n + 1) % len(style.SERIES_MARKERS)]
        ax.plot([intensity], [y], ls="none", marker=marker, ms=6, color="#333333")
        # Labels alternate below and above their marker so neighbours do not collide.
        ax.annotate(label, (intensity, y), textcoords="offset points",
                    xytext=(-6, -13 if n % 2 == 0 else 7), ha="right", fontsize=style.SMALL)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=10)
    ax.xaxis.set_major_formatter(style.LOG_TICKS)
    ax.yaxis.set_major_formatter(style.LOG_TICKS)
    ax.legend(fontsize=style.SMALL, frameon=False, loc="lower right")
    ax.grid(True, which="major", color=style.GRID, lw=0.6)
    style.style_axes(ax, title=title, xlabel="intensitas (FLOP per bita)",
                     ylabel="TFLOP/s tercapai")
    return fig


def work_map(M, labels, *, title=None, xlabel="posisi key j", ylabel="posisi query i"):
    """Peta kategori: sel ``M[i, j] = k`` diberi warna ke-k dan keterangan ``labels[k]``.

    Untuk pola kerja sebuah *kernel* (misalnya: dilewati, dihitung lalu
    dibuang, berguna). Tanpa batang warna: keterangannya di bawah gambar.
    """
    M = figure_array(M, "M", "Berikan matriks bilangan bulat 0, 1, ... (satu per kategori).")
    if M.ndim != 2 or not np.all(M == np.round(M)) or M.min() < 0 or M.max() >= len(labels):
        raise ValueError(
            f"Argumen 'M' harus matriks 2 dimensi berisi bilangan bulat 0..{len(labels) - 1} "
            f"(satu per label), tetapi yang diterima bentuk {M.shape}, nilai "
            f"{style.format_number(M.min(), 0)}..{style.format_number(M.max(), 0)}."
        )
    colors = [style.MASKED, style.HIGHLIGHT, style.BAR, style.GREEN][: len(labels)]
    if len(labels) > len(colors):
        raise ValueError(f"Argumen 'labels' paling banyak 4 kategori, tetapi ada {len(labels)}.")
    fig = style.new_figure(style.MAX_WIDTH, 4.4)
    ax = fig.add_axes([0.14, 0.24, 0.8, 0.68])
    draw_heatmap(ax, M, cmap=ListedColormap(colors), vmin=-0.5, vmax=len(colors) - 0.5,
                 annotate=False, title=title, xlabel=xlabel, ylabel=ylabel, colorbar=False)
    for axis, n in ((ax.xaxis, M.shape[1]), (ax.yaxis, M.shape[0])):
        step = max(1, 2 ** math.ceil(math.log2(n / 8)))  # at most about 8 ticks a side
        axis.set_ticks(np.arange(0, n, step))
    handles = [Rectangle((0, 0), 1, 1, color=c) for c in colors]
    fig.legend(handles, labels, loc="lower center", ncol=1, fontsize=style.SMALL, frameon=False)
    return fig


# ------------------------------------------------- √d_k and mask (bab 2, 3)


def metrics_vs_d_k(d_k_values, panels, *, title=None):
    """Beberapa ukuran terhadap d_k (sumbu x log₂), satu panel per ukuran.

    ``panels``: daftar ``(judul, label_y, {label_seri: nilai per d_k})``,
    misalnya peluang terbesar "tanpa pembagian" dan "dibagi √d_k".
    """
    d = _positive_axis(d_k_values, "d_k_values", "d_k")
    if not isinstance(panels, (list, tuple)) or not panels:
        raise ValueError("Argumen 'panels' harus daftar yang tidak kosong: "
                         "[(judul, label_y, {seri: nilai})].")
    # Layout in inches: per panel 0.35 (its title) + 1.45 (axes) + 0.5 (x label).
    head = 0.35 if title else 0.05
    fig_h = head + 2.3 * len(panels)
    fig = style.new_figure(style.MAX_WIDTH, fig_h)
    for n, (panel_title, ylabel, series) in enumerate(panels):
        bottom_in = fig_h - head - 2.3 * (n + 1) + 0.5
        ax = fig.add_axes([0.17, bottom_in / fig_h, 0.78, 1.45 / fig_h])
        _plot_series(ax, d, series, "d_k")
        ax.set_xscale("log", base=2)
        ax.set_xticks(d)
        ax.xaxis.set_major_formatter(style.LOG_TICKS)
        ax.xaxis.set_minor_formatter(FuncFormatter(lambda _x, _p: ""))
        ax.yaxis.set_major_formatter(style.TICKS)
        ax.yaxis.set_major_locator(MaxNLocator(4))
        ax.grid(True, which="major", color=style.GRID, lw=0.6)
        ax.legend(fontsize=style.SMALL, frameon=False)
        style.style_axes(ax, title=panel_title, xlabel="d_k", ylabel=ylabel)
    if title:
        fig.suptitle(title, fontsize=style.FONT, x=0.02, y=1 - 0.08 / fig_h, ha="left", va="top")
    return fig


def heatmap_pair(left, right, *, titles, title=None, cmap="viridis", vmin=None, vmax=None,
                 xlabel="posisi key j", ylabel="posisi query i", colorbar=True):
    """Dua matriks, satu di atas yang lain, dengan skala warna yang sama
    (misalnya tanpa/dengan mask). Bertumpuk, bukan berdampingan: di layar
    ponsel setiap panel tetap selebar gambar.

    ``titles``: ``(judul atas, judul bawah)``. Skala warna dibagi bersama,
    supaya warna yang sama berarti angka yang sama di kedua panel.
    ``colorbar=False`` untuk pola 0/1 seperti mask, yang tidak butuh skala.
    """
    left = figure_array(left, "left", "Berikan matriks angka.", ndim=2,
                        shape_name="matriks 2 dimensi")
    right = figure_array(right, "right", "Berikan matriks angka.", ndim=2,
                         shape_name="matriks 2 dimensi")
    finite = np.concatenate([left[np.isfinite(left)], right[np.isfinite(right)]])
    if vmin is None:
        vmin = float(finite.min()) if finite.size else 0.0
    if vmax is None:
        vmax = float(finite.max()) if finite.size else 1.0
    head = 0.45 if title else 0.1      # inci di atas panel pertama untuk judul
    panel = 3.3                        # tinggi satu panel dengan judul dan label, inci
    height = head + 2 * panel
    fig = style.new_figure(style.MAX_WIDTH, height)
    width = 0.62 if colorbar else 0.7
    images = []
    for n, (M, name) in enumerate(((left, titles[0]), (right, titles[1]))):
        bottom = height - head - (n + 1) * panel + 0.55
        ax = fig.add_axes([0.16, bottom / height, width, (panel - 0.9) / height])
        images.append(draw_heatmap(ax, M, cmap=cmap, vmin=vmin, vmax=vmax, colorbar=False,
                                   title=name, xlabel=xlabel, ylabel=ylabel))
    if colorbar:
        bar = fig.colorbar(images[-1], cax=fig.add_axes([0.84, 0.55 / height, 0.03,
                                                         (2 * panel - 0.9) / height]))
        bar.ax.tick_params(labelsize=style.SMALL)
        bar.ax.yaxis.set_major_formatter(style.TICKS)
    if title:
        fig.suptitle(title, fontsize=style.FONT, x=0.02, y=1 - 0.08 / height, ha="left", va="top")
    return fig
