"""Gambar untuk contoh berjalan (``atensi.example``): data masuk, Figure keluar.

Gayanya meniru penjelasan *transformer* bergambar yang sudah dikenal: setiap
vektor digambar sebagai deretan sel berwarna (ungu = *query*, jingga = *key*,
biru = *value*), label baris dan kolom adalah *token*-nya, dan angka ditulis
di dalam sel dengan format Indonesia (koma desimal). Semua gambar selebar
sekitar 5 inci dengan huruf besar dan sedikit unsur, supaya tetap terbaca
di layar ponsel 360 px.

    vectors(Q, K, V, tokens, axes=None)        vektor q, k, v sebagai sel berwarna
    score_grid(S, tokens, filled=, masked=)    kisi skor T × T (terisi sebagian,
                                               masa depan abu-abu "−∞")
    softmax_bars(A, tokens, row=None)          bobot atensi sebagai batang
    weighted_sum_rows(A, V, tokens, row=)      baris V yang diskalakan bobotnya,
                                               ditumpuk, lalu dijumlahkan
    pipeline(rows, highlight=None)             satu lapisan atensi, langkah demi
                                               langkah, satu baris angka per langkah
    projection(X, W, P, tokens, features=, axes=, role=)
                                               X · W = P: ciri token dikali
                                               matriks proyeksi menjadi Q, K, atau V

Fungsi-fungsi ini untuk contoh kecil (paling banyak 8 *token* dan 8 sumbu);
untuk ukuran ANDREA pakai ``atensi.plots.heatmap``. Warna dasar, huruf, dan
ekspor PNG dari :mod:`atensi.style`; perhitungan (skor, softmax, keluaran)
ada di pemanggil.
"""

import math
import textwrap

import numpy as np
from matplotlib.patches import Rectangle

from .style import HIGHLIGHT, MASKED, colormap, format_number, is_dark, new_figure
from .figure_checks import (check_label, check_rows, check_small, check_square_matrix,
                            check_weights, check_words, figure_array)
from .validation import check_flag, check_int, check_same_shape

# Text sizes in points. A 5-inch figure at 100 dpi is shrunk to about 330 px
# on a 360 px phone (a factor of 0,66), so 14 pt reads there like 13 px text,
# a little smaller than the prose around it.
CELL_FONT = 14.0
LABEL_FONT = 13.5
TITLE_FONT = 14.0
SMALL_FONT = 12.0
# Smallest column label of a score grid (points): 9 CSS px once a 5-inch figure
# is shrunk to a 328 px phone column.
MIN_COLUMN_FONT = 10.5
STAGGER_STEP = 0.3  # inches between the two rows of staggered column labels
MAX_TOKENS = 8
MAX_AXES = 8

# One colour family per role, as in illustrated transformer explainers.
ROLE_CMAPS = {"query": "Purples", "key": "Oranges", "value": "Blues", "skor": "Greens"}
WEIGHT_COLOR = "#4c9a6a"
FUTURE_TEXT = "#666666"


# ------------------------------------------------------------------ checks


def _matrix(value, name, *, allow_minus_inf=False):
    """``value`` as a finite 2-D float64 array (-inf allowed for the future)."""
    return figure_array(value, name, f"Untuk banyak head, ambil satu dulu, misalnya {name}[0].",
                        ndim=2, shape_name="matriks 2 dimensi", finite=True,
                        allow_neg_inf=allow_minus_inf)


def _tokens(tokens, T, name_of_T):
    words = check_words(tokens, T, "tokens", f"baris {name_of_T}")
    check_small(T, MAX_TOKENS, "token", "Untuk matriks besar pakai atensi.plots.heatmap.")
    return words


def _wrap(title, width):
    """``title`` broken into lines that fit ``width`` inches; (text, lines)."""
    if not title:
        return None, 0
    per_line = max(12, int((width - 0.2) / (0.55 * TITLE_FONT / 72)))
    lines = textwrap.wrap(title, per_line) or [title]
    return "\n".join(lines), len(lines)


# ---------------------------------------------------------------- drawing


def _short(x):
    """A number as written in a cell: '2', '0,5', '1,41', '−∞'."""
    x = float(x)
    if math.isinf(x):
        return "−∞" if x < 0 else "∞"
    if abs(x - round(x)) < 5e-3:
        return format_number(round(x), 0)
    if abs(10 * x - round(10 * x)) < 5e-3:
        return format_number(x, 1)
    return format_number(x, 2)


def _canvas(width, height):
    """A figure whose single axes uses inches as data units, y pointing down."""
    fig = new_figure(width, height)
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)
    ax.axis("off")
    return fig, ax


def _cell(ax, x, y, w, h, *, color="white", text=None, text_color="black", edge="white",
          lw=1.5, size=CELL_FONT, weight="normal"):
    ax.add_patch(Rectangle((x, y), w, h, facecolor=color, edgecolor=edge, lw=lw))
    if text is not None:
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=size,
                color=text_color, weight=weight)


def _fitting(word, width):
    """The label font size (points) at which ``word`` fits in ``width`` inches."""
    return min(LABEL_FONT, 0.95 * width * 72 / (0.6 * max(1, len(word))))


def _shade(cmap_name, value, top):
    """Cell colour and text colour: stronger colour for larger |value|."""
    level = 0.12 + 0.6 * (abs(value) / top if top > 0 else 0.0)
    cmap = colormap(cmap_name)
    return cmap(level), "white" if is_dark(cmap, level) else "black"


# ---------------------------------------------------------------- figures


def vectors(Q, K, V, tokens, axes=None):
    """Vektor *query*, *key*, dan *value* setiap *token* sebagai sel berwarna.

    Tiga panel berdampingan (ungu Q, jingga K, biru V); baris = *token*,
    kolom = sumbu (``axes``, misalnya ``("orang", "aksi")``). Warna makin
    pekat bila angkanya makin besar.
    """
    Q = _matrix(Q, "Q")
    K = _matrix(K, "K")
    V = _matrix(V, "V")
    check_same_shape(K, "K", Q, "Q")
    check_rows(V, "V", Q.shape[0], "satu per token, seperti Q")
    T, d_k = Q.shape
    words = _tokens(tokens, T, "Q")
    check_small(max(d_k, V.shape[1]), MAX_AXES, "sumbu",
                "Untuk vektor panjang pakai atensi.plots.heatmap.")
    if axes is None:
        names_qk = [str(n) for n in range(d_k)]
    else:
        names_qk = check_words(axes, d_k, "axes", "kolom Q (nama sumbu)")
    names_v = names_qk if V.shape[1] == d_k else [str(n) for n in range(V.shape[1])]

    label_w = 0.25 + 0.12 * max(len(w) for w in words)
    gap = 0.2
    cols = 2 * d_k + V.shape[1]
    cell_w = min(0.6, (5.0 - label_w - 2 * gap - 0.1) / cols)
    cell_h = 0.48
    # Axis names too long for one cell at a readable size (≥ 9 px on a phone) go
    # on two staggered rows, counted across the three panels, so that each name
    # may use the width of two cells.
    column_names = names_qk + names_qk + names_v
    column_font = min(SMALL_FONT, *(_fitting(name, cell_w) for name in column_names))
    stagger = column_font < MIN_COLUMN_FONT
    if stagger:
        column_font = max(MIN_COLUMN_FONT,
                          min(SMALL_FONT, *(_fitting(name, 1.9 * cell_w) for name in column_names)))
    top = 0.95 + (STAGGER_STEP if stagger else 0.0)
    # The last name may be wider than its cell: leave room for what sticks out.
    overhang = max(0.0, 0.6 * column_font / 72 * len(column_names[-1]) / 2 - cell_w / 2)
    width = label_w + cols * cell_w + 2 * gap + 0.1 + overhang
    fig, ax = _canvas(width, top + T * cell_h + 0.12)
    x = label_w
    column = 0  # column index across the three panels, for the staggering
    for role, M, names, symbol in (("query", Q, names_qk, "Q"), ("key", K, names_qk, "K"),
                                   ("value", V, names_v, "V")):
        peak = float(np.abs(M).max())
        ax.text(x + M.shape[1] * cell_w / 2, 0.3, f"{role} {symbol}", ha="center",
                va="center", fontsize=TITLE_FONT, weight="bold",
                color=colormap(ROLE_CMAPS[role])(0.85))
        for c, name in enumerate(names):
            rise = STAGGER_STEP if stagger and column % 2 else 0.0
            ax.text(x + (c + 0.5) * cell_w, top - 0.2 - rise, name, ha="center", va="center",
                    fontsize=column_font, color="#444444")
            column += 1
        for i in range(T):
            for c in range(M.shape[1]):
                color, ink = _shade(ROLE_CMAPS[role], M[i, c], peak)
                _cell(ax, x + c * cell_w, top + i * cell_h, cell_w, cell_h, color=color,
                      text=_short(M[i, c]), text_color=ink)
        x += M.shape[1] * cell_w + gap
    for i, word in enumerate(words):
        ax.text(label_w - 0.1, top + (i + 0.5) * cell_h, word, ha="right", va="center",
                fontsize=LABEL_FONT)
    return fig


def score_grid(S, tokens, *, filled=None, masked=False, title=None):
    """Kisi skor T × T dengan angka di setiap sel; baris = *query*, kolom = *key*.

    ``filled=n`` hanya menampilkan n sel pertama (baris demi baris) dan
    membingkai sel terakhir yang baru diisi, sehingga beberapa gambar
    berurutan memperlihatkan kisi yang terisi. ``masked=True`` menutup masa
    depan (j > i). Sel yang bernilai ``-inf`` selalu abu-abu bertuliskan "−∞".
    """
    S = _matrix(S, "S", allow_minus_inf=True)
    T = check_square_matrix(S, "S")
    words = _tokens(tokens, T, "S")
    if filled is not None:  # how many cells are already filled, row by row
        filled = check_int(filled, "filled", low=0, high=T * T)
    masked = check_flag(masked, "masked")
    title = check_label(title, "title")
    hidden = np.isneginf(S)
    if masked:
        hidden |= np.triu(np.ones((T, T), dtype=bool), k=1)
    shown = np.ones(T * T, dtype=bool) if filled is None else np.arange(T * T) < filled
    shown = shown.reshape(T, T)

    label_w = 0.3 + 0.12 * max(len(w) for w in words)
    cell = min(0.85, (4.75 - label_w) / T)  # width = label_w + T * cell + 0.25 <= 5
    width = label_w + T * cell + 0.25
    title, lines = _wrap(title, width)
    head = 0.45 + 0.3 * lines
    # Column labels too long for one cell at a readable size (≥ 9 px on a phone)
    # go on two staggered rows, so each may use the width of two cells.
    column_font = min(_fitting(word, cell) for word in words)
    stagger = column_font < MIN_COLUMN_FONT
    if stagger:
        column_font = min(_fitting(word, 1.9 * cell) for word in words)
    top = head + 0.35 + (STAGGER_STEP if stagger else 0.0)
    fig, ax = _canvas(width, top + T * cell + 0.45)
    if title:
        ax.text(0.1, 0.12, title, ha="left", va="top", fontsize=TITLE_FONT, linespacing=1.3)
    finite = S[~hidden & np.isfinite(S)]
    peak = float(np.abs(finite).max()) if finite.size else 0.0
    size = min(CELL_FONT, 22 * cell)  # "12,35" still fits in the small cells of T = 8
    for i in range(T):
        for j in range(T):
            x, y = label_w + j * cell, top + i * cell
            if not shown[i, j]:
                _cell(ax, x, y, cell, cell, color="white", edge="#d9d9d9", lw=1.0)
            elif hidden[i, j]:
                _cell(ax, x, y, cell, cell, color=MASKED, text="−∞", text_color=FUTURE_TEXT,
                      size=size)
            else:
                color, ink = _shade(ROLE_CMAPS["skor"], S[i, j], peak)
                _cell(ax, x, y, cell, cell, color=color, text=_short(S[i, j]), text_color=ink,
                      size=size)
    if filled:
        i, j = divmod(int(filled) - 1, T)
        ax.add_patch(Rectangle((label_w + j * cell, top + i * cell), cell, cell, fill=False,
                               edgecolor=HIGHLIGHT, lw=3))
    for n, word in enumerate(words):
        ax.text(label_w - 0.1, top + (n + 0.5) * cell, word, ha="right", va="center",
                fontsize=LABEL_FONT, color=colormap("Purples")(0.85))
        rise = STAGGER_STEP if stagger and n % 2 else 0.0
        ax.text(label_w + (n + 0.5) * cell, top - 0.12 - rise, word, ha="center", va="bottom",
                fontsize=column_font, color=colormap("Oranges")(0.8))
    ax.text(label_w + T * cell / 2, top + T * cell + 0.22, "key (yang dilihat) →",
            ha="center", va="center", fontsize=SMALL_FONT, color="#444444")
    ax.text(0.1, head + 0.05, "query ↓", ha="left", va="center", fontsize=SMALL_FONT,
            color="#444444")
    return fig


def _weights(A, name="A"):
    A = _matrix(A, name)
    check_square_matrix(A, name)
    return check_weights(A, name)


def _bar_panel(ax, p, words, *, query, title):
    T = len(words)
    positions = np.arange(T)
    zero = p == 0
    # Inches per bar: labels shrink to fit when there are many tokens.
    slot = ax.get_position().width * ax.figure.get_figwidth() / T
    tick_font = min(_fitting(w, slot) for w in words)
    value_font = min(SMALL_FONT, _fitting("0,00", slot))
    ax.bar(positions, p, color=[MASKED if z else WEIGHT_COLOR for z in zero], width=0.7)
    for j in range(T):
        ax.text(j, p[j] + 0.04, "0" if zero[j] else format_number(p[j], 2), ha="center",
                va="bottom", fontsize=value_font,
                color=FUTURE_TEXT if zero[j] else "black")
    ax.set_ylim(0, 1.28)
    ax.set_xlim(-0.55, T - 0.45)
    ax.set_yticks([])
    ax.set_xticks(positions)
    ax.set_xticklabels(words, fontsize=tick_font, color=colormap("Oranges")(0.8))
    ax.tick_params(length=0)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    ax.set_title(title if title else f"{query} melihat …", fontsize=LABEL_FONT, loc="left",
                 color=colormap("Purples")(0.85))


def softmax_bars(A, tokens, *, row=None, title=None):
    """Bobot atensi sebagai batang: satu panel per baris (atau hanya baris ``row``).

    Setiap panel menjawab "*token* ini melihat siapa, seberapa banyak?";
    batang abu-abu bertuliskan 0 adalah bobot nol (masa depan yang ditutup).
    """
    A = _weights(A)
    T = A.shape[0]
    words = _tokens(tokens, T, "A")
    title = check_label(title, "title")
    if row is not None:
        row = check_int(row, "row", low=0, high=T - 1)
        title, lines = _wrap(title, 4.6)
        height = 2.3 + 0.3 * max(lines, 1)
        fig = new_figure(4.6, height)
        ax = fig.add_axes([0.04, 0.4 / height, 0.92, 1.7 / height])
        _bar_panel(ax, A[row], words, query=words[row], title=title)
        return fig
    # One panel per row, stacked: full width keeps the labels large on a phone.
    fig_w = 4.6
    title, lines = _wrap(title, fig_w)
    head = 0.15 + 0.3 * lines if title else 0.0
    panel_h = 1.45
    height = head + T * panel_h + 0.1
    fig = new_figure(fig_w, height)
    if title:
        fig.text(0.02, 1 - 0.1 / height, title, ha="left", va="top", fontsize=TITLE_FONT,
                 linespacing=1.3)
    for i in range(T):
        bottom = height - head - (i + 1) * panel_h + 0.35
        ax = fig.add_axes([0.04, bottom / height, 0.92, 0.8 / height])
        _bar_panel(ax, A[i], words, query=words[i], title=None)
    return fig


def weighted_sum_rows(A, V, O, tokens, *, row, title=None):
    """Jumlah tertimbang baris ``row`` digambar sebagai baris-baris V yang diskalakan.

    Setiap baris gambar: bobot ``A[row, j]`` × ``V[j]`` = vektor yang sudah
    diskalakan; di bawah garis, jumlahnya: keluaran ``O[row]``, dengan
    ``O = reference.weighted_sum(A, V)`` dihitung pemanggil. Baris dengan
    bobot nol (masa depan) digambar abu-abu.
    """
    A = _weights(A)
    V = _matrix(V, "V")
    O = _matrix(O, "O")
    T = A.shape[0]
    check_rows(V, "V", T, "satu per token, seperti A")
    check_same_shape(O, "O", V, "V")
    words = _tokens(tokens, T, "A")
    row = check_int(row, "row", low=0, high=T - 1)
    title = check_label(title, "title")
    d = V.shape[1]
    check_small(d, MAX_AXES, "sumbu", "Untuk vektor panjang pakai atensi.plots.heatmap.")
    w = A[row]
    scaled = w[:, None] * V  # the terms drawn in the right-hand cells
    out = O[row]

    label_w = 0.3 + 0.12 * max(max(len(x) for x in words), 4)
    weight_w, sign_w = 0.62, 0.3
    cell_w = min(0.58, (5.0 - label_w - weight_w - 2 * sign_w - 0.15) / (2 * d))
    cell_h = 0.44
    x_w = label_w
    x_v = x_w + weight_w + sign_w
    x_s = x_v + d * cell_w + sign_w
    width = x_s + d * cell_w + 0.15
    title, lines = _wrap(title, width)
    head = 0.25 + 0.3 * lines if title else 0.15
    top = head + 0.4
    fig, ax = _canvas(width, top + (T + 1) * cell_h + 0.35)
    if title:
        ax.text(0.1, 0.12, title, ha="left", va="top", fontsize=TITLE_FONT, linespacing=1.3)
    ax.text(x_w + weight_w / 2, top - 0.17, f"A[{row}, j]", ha="center", va="center",
            fontsize=SMALL_FONT, color="#444444")
    ax.text(x_v + d * cell_w / 2, top - 0.17, "V[j]", ha="center", va="center",
            fontsize=SMALL_FONT, color="#444444")
    ax.text(x_s + d * cell_w / 2, top - 0.17, "bobot × V[j]", ha="center", va="center",
            fontsize=SMALL_FONT, color="#444444")
    peak = float(np.abs(V).max())
    for j in range(T):
        y = top + j * cell_h
        off = w[j] == 0
        ink_label = FUTURE_TEXT if off else "black"
        ax.text(label_w - 0.1, y + cell_h / 2, words[j], ha="right", va="center",
                fontsize=LABEL_FONT, color=ink_label)
        ax.text(x_w + weight_w / 2, y + cell_h / 2, "0" if off else format_number(w[j], 2),
                ha="center", va="center", fontsize=CELL_FONT, color=ink_label,
                weight="normal" if off else "bold")
        ax.text(x_v - sign_w / 2, y + cell_h / 2, "×", ha="center", va="center",
                fontsize=CELL_FONT, color=ink_label)
        ax.text(x_s - sign_w / 2, y + cell_h / 2, "=", ha="center", va="center",
                fontsize=CELL_FONT, color=ink_label)
        for c in range(d):
            if off:
                v_color, v_ink = MASKED, FUTURE_TEXT
                s_color, s_ink = MASKED, FUTURE_TEXT
            else:
                v_color, v_ink = _shade(ROLE_CMAPS["value"], V[j, c], peak)
                s_color, s_ink = _shade(ROLE_CMAPS["value"], scaled[j, c], peak)
            _cell(ax, x_v + c * cell_w, y, cell_w, cell_h, color=v_color,
                  text=_short(V[j, c]), text_color=v_ink, size=CELL_FONT - 1)
            _cell(ax, x_s + c * cell_w, y, cell_w, cell_h, color=s_color,
                  text=format_number(scaled[j, c], 2), text_color=s_ink, size=CELL_FONT - 1)
    y = top + T * cell_h + 0.12
    ax.plot([x_s - 0.05, x_s + d * cell_w + 0.05], [y - 0.06, y - 0.06], color="black", lw=1.2)
    ax.text(x_s - 0.12, y + cell_h / 2, f"jumlah = O[{words[row]}]", ha="right",
            va="center", fontsize=LABEL_FONT, weight="bold", color=HIGHLIGHT)
    for c in range(d):
        color, ink = _shade(ROLE_CMAPS["value"], out[c], peak)
        _cell(ax, x_s + c * cell_w, y, cell_w, cell_h, color=color, edge=HIGHLIGHT, lw=2,
              text=format_number(out[c], 2), text_color=ink, size=CELL_FONT - 1, weight="bold")
    return fig


ROLE_SYMBOLS = {"query": "Q", "key": "K", "value": "V"}


def projection(X, W, P, tokens, *, features, axes, role):
    """Proyeksi satu peran sebagai tiga matriks sel berwarna: X · W = P.

    ``X``: ciri setiap *token* (T, F), kolomnya ``features``; ``W``: matriks
    proyeksi (F, d), barisnya ciri yang sama dengan urutan yang sama, kolomnya
    ``axes``; ``P``: hasil kalinya (T, d), misalnya Q. ``role``: ``"query"``,
    ``"key"`` atau ``"value"`` (warna dan nama W_Q, W_K, W_V). Hasil kali
    dihitung pemanggil; gambar ini hanya menuliskannya.
    """
    symbol = ROLE_SYMBOLS.get(role) if isinstance(role, str) else None
    if symbol is None:
        raise ValueError(f"Argumen 'role' harus salah satu dari {tuple(ROLE_SYMBOLS)}, "
                         f"tetapi yang diterima {role!r}.")
    X = _matrix(X, "X")
    W = _matrix(W, "W")
    P = _matrix(P, "P")
    T, F = X.shape
    check_rows(W, "W", F, "satu per ciri, seperti kolom X")
    check_rows(P, "P", T, "satu per token, seperti X")
    if P.shape[1] != W.shape[1]:
        raise ValueError(f"Argumen 'P' harus punya {W.shape[1]} kolom (seperti W), "
                         f"tetapi punya {P.shape[1]}. Berikan P = X @ W.")
    words = _tokens(tokens, T, "X")
    names_f = check_words(features, F, "features", "kolom X (nama ciri)")
    names_d = check_words(axes, W.shape[1], "axes", "kolom W (nama sumbu)")
    check_small(max(F, W.shape[1]), MAX_AXES, "sumbu",
                "Untuk matriks besar pakai atensi.plots.heatmap.")

    label_w = 0.25 + 0.12 * max(len(w) for w in words)
    op_w = 0.3
    cols = F + 2 * W.shape[1]
    cell_w = min(0.5, (5.0 - label_w - 2 * op_w - 0.1) / cols)
    cell_h = 0.42
    # Column names stand upright above their cells, so a long name does not
    # need a wide cell; the header is as tall as the longest name.
    column_font = MIN_COLUMN_FONT
    longest = max(len(n) for n in (*names_f, *names_d))
    top = 0.55 + 0.62 * column_font / 72 * longest
    width = label_w + cols * cell_w + 2 * op_w + 0.1
    fig, ax = _canvas(width, top + max(T, F) * cell_h + 0.12)
    x = label_w
    panels = (("X", X, names_f, "Greys"), (f"W_{symbol}", W, names_d, ROLE_CMAPS[role]),
              (symbol, P, names_d, ROLE_CMAPS[role]))
    for n, (name, M, names, cmap) in enumerate(panels):
        peak = float(np.abs(M).max())
        ax.text(x + M.shape[1] * cell_w / 2, 0.25, name, ha="center", va="center",
                fontsize=TITLE_FONT, weight="bold", color=colormap(cmap)(0.85))
        for c, label in enumerate(names):
            ax.text(x + (c + 0.5) * cell_w, top - 0.08, label, ha="center", va="bottom",
                    rotation=90, fontsize=column_font, color="#444444")
        for i in range(M.shape[0]):
            for c in range(M.shape[1]):
                color, ink = _shade(cmap, M[i, c], peak)
                _cell(ax, x + c * cell_w, top + i * cell_h, cell_w, cell_h, color=color,
                      text=_short(M[i, c]), text_color=ink, size=SMALL_FONT)
        x += M.shape[1] * cell_w
        if n < 2:
            ax.text(x + op_w / 2, top + min(T, F) * cell_h / 2, "·" if n == 0 else "=",
                    ha="center", va="center", fontsize=TITLE_FONT, weight="bold")
            x += op_w
    for i, word in enumerate(words):
        ax.text(label_w - 0.1, top + (i + 0.5) * cell_h, word, ha="right", va="center",
                fontsize=LABEL_FONT)
    return fig


PIPELINE_CELLS = 5  # the widest row drawn (T of the running example)


def pipeline(rows, *, highlight=None, title=None):
    """Satu lapisan atensi dari atas ke bawah, satu baris angka per langkah.

    ``rows``: daftar ``(kunci, label, angka)`` seperti
    ``atensi.example.pipeline_rows()``; ``angka`` adalah vektor pendek
    (paling banyak 5 angka, −∞ boleh) atau ``None`` untuk langkah tanpa angka.
    ``highlight``: kunci langkah yang disorot (bab yang sedang dibaca); langkah
    lain digambar pucat.
    """
    if isinstance(rows, (str, bytes)) or not hasattr(rows, "__len__") or not len(rows):
        raise ValueError("Argumen 'rows' harus daftar (kunci, label, angka), misalnya "
                         f"atensi.example.pipeline_rows(), tetapi yang diterima {rows!r}.")
    keys, labels, values = [], [], []
    for n, row in enumerate(rows):
        if not isinstance(row, (tuple, list)) or len(row) != 3:
            raise ValueError(f"Argumen 'rows' harus berisi tiga unsur per langkah (kunci, label, "
                             f"angka), tetapi langkah ke-{n} adalah {row!r}.")
        key, label, numbers = row
        keys.append(check_label(key, f"rows[{n}] (kunci)", optional=False))
        labels.append(check_label(label, f"rows[{n}] (label)", optional=False))
        if numbers is not None:
            numbers = figure_array(numbers, f"rows[{n}]", "Berikan satu vektor pendek per langkah.",
                                   ndim=1, shape_name="vektor", finite=True, allow_neg_inf=True)
            check_small(numbers.size, PIPELINE_CELLS, "angka per langkah",
                        "Gambar ini untuk contoh berjalan.")
        values.append(numbers)
    if highlight is not None and highlight not in keys:
        raise ValueError(f"Argumen 'highlight' harus salah satu kunci langkah {tuple(keys)} atau "
                         f"None, tetapi yang diterima {highlight!r}.")

    width, label_w, cell_w, cell_h, gap = 5.0, 2.15, 0.5, 0.4, 0.16
    text, lines = _wrap(title, width)
    head = 0.15 + 0.3 * lines
    fig, ax = _canvas(width, head + len(rows) * (cell_h + gap) + 0.05)
    if text:
        ax.text(width / 2, 0.12, text, ha="center", va="top", fontsize=TITLE_FONT, weight="bold")
    top_all = max((float(np.abs(v[np.isfinite(v)]).max()) for v in values
                   if v is not None and np.isfinite(v).any()), default=1.0)
    for n, (key, label, numbers) in enumerate(zip(keys, labels, values)):
        y = head + n * (cell_h + gap)
        active = highlight is None or key == highlight
        if key == highlight:
            ax.add_patch(Rectangle((0.03, y - gap / 2 + 0.02), width - 0.06, cell_h + gap - 0.04,
                                   facecolor="none", edgecolor=HIGHLIGHT, lw=2.5))
        ink = "black" if active else "#777777"
        ax.text(label_w - 0.1, y + cell_h / 2, label, ha="right", va="center",
                fontsize=SMALL_FONT, color=ink, weight="bold" if key == highlight else "normal")
        if n:
            ax.text(0.18, y - gap / 2, "↓", ha="center", va="center", fontsize=SMALL_FONT,
                    color="#777777")
        if numbers is None:
            _cell(ax, label_w, y, PIPELINE_CELLS * cell_w, cell_h, color=MASKED,
                  text="(tidak diisi di contoh ini)", text_color=FUTURE_TEXT, size=SMALL_FONT - 1)
            continue
        for c, v in enumerate(numbers):
            if np.isinf(v):
                color, cell_ink = MASKED, FUTURE_TEXT
            else:
                color, cell_ink = _shade(ROLE_CMAPS["skor"], v, top_all)
            if not active:
                cell_ink = "#555555" if cell_ink == "black" else cell_ink
            _cell(ax, label_w + c * cell_w, y, cell_w, cell_h, color=color, text=_short(v),
                  text_color=cell_ink, size=SMALL_FONT)
            if not active:
                ax.patches[-1].set_alpha(0.45)
    fig.alt = ("Satu lapisan atensi dari atas ke bawah: " + ", ".join(labels)
               + (f". Langkah yang disorot: {labels[keys.index(highlight)]}." if highlight else "."))
    return fig
