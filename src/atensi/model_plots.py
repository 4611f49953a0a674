"""Gambar model kecil yang sudah dilatih: peta atensi satu head, kurva latih,
eksperimen √d_k, akurasi model kata. Data masuk, ``Figure`` keluar.

Penjelajah peta atensi (pilih kalimat, layer, head) ada di
``atensi.explorers.attention_maps``; gambarnya ``attention_figure`` di sini.
"""

from __future__ import annotations

import math

import numpy as np

from . import figure_checks as _fig
from . import plots, style
from . import validation as _v
from .result_checks import check_curve, check_experiment


def _shown(text):
    return {" ": "␣", "\n": "⏎"}.get(text, text)


def attention_figure(A, text, *, title=None):
    """Heatmap satu head ``A`` (T, T); label kedua sumbu: karakter teks, atau
    daftar kata untuk model kata: satu per baris ``A``."""
    hint = "Berikan bobot satu head, misalnya model.attention_maps(teks)[layer, head]."
    A = _fig.check_weights(_fig.figure_array(A, "A", hint, ndim=2, shape_name="matriks (T, T)",
                                             finite=True))
    T = _fig.check_square_matrix(A, "A")
    title = _fig.check_label(title, "title")
    tokens = list(text) if isinstance(text, str) else text
    labels = [_shown(c) for c in _fig.check_words(tokens, T, "text", "baris A")]
    words = any(len(c) > 1 for c in labels)  # word labels: room on the left, upright on top
    fig = style.new_figure(4.2, 4.3)
    ax = fig.add_axes([0.17, 0.03, 0.76, 0.7] if words else [0.08, 0.03, 0.78, 0.78])
    plots.draw_heatmap(ax, A, cmap="Blues", vmin=0, vmax=1, annotate=False,
                       xlabel=None, ylabel=None)
    # Every character while they fit at SMALL points, otherwise every step-th one:
    # smaller letters would be unreadable on a phone.
    step = max(1, math.ceil(T * style.SMALL / 260))
    ticks = range(0, T, step)
    ax.set_xticks(ticks)
    ax.set_yticks(ticks)
    ax.set_xticklabels([labels[t] for t in ticks], fontsize=style.SMALL, family="monospace",
                       rotation=90 if words else 0)
    ax.set_yticklabels([labels[t] for t in ticks], fontsize=style.SMALL, family="monospace")
    ax.xaxis.tick_top()
    ax.tick_params(length=0, pad=1)
    if title:
        fig.text(0.02, 0.985, title, fontsize=style.FONT, va="top")
    fig.text(0.02, 0.93, "kolom: key yang dilihat →   baris: query ↓",
             fontsize=style.SMALL, va="top", color="#555555")
    return fig


def _smooth(values, width):
    values = np.asarray(values, dtype=np.float64)
    if width <= 1 or values.size < width:
        return values
    kernel = np.ones(width) / width
    return np.convolve(values, kernel, mode="valid")


def training_curve_figure(curve, *, bigram=None, unigram=None, title=None, smooth=25):
    """Loss latih (rata-rata bergerak ``smooth`` langkah) dan validasi terhadap langkah,
    dengan garis pembanding bigram dan unigram bila diberikan."""
    check_curve(curve, "curve")
    for name, value in (("bigram", bigram), ("unigram", unigram)):
        if value is not None:
            _v.check_number(value, name)
    smooth = _v.check_int(smooth, "smooth")
    fig = style.new_figure(style.MAX_WIDTH, 3.4)
    ax = fig.add_axes([0.16, 0.15, 0.81, 0.72])
    steps = np.asarray(curve["step"], dtype=np.float64)
    width = min(smooth, max(1, steps.size // 5))
    y = _smooth(curve["train"], width)
    ax.plot(steps[width - 1:] if width > 1 else steps, y, color=style.BAR, lw=1.4,
            label="latih (rata-rata bergerak)" if width > 1 else "latih")
    ax.plot(curve["val_step"], curve["val"], "o-", color=style.HIGHLIGHT, ms=3.5, lw=1.4,
            label="validasi")
    for value, label, line in ((bigram, "bigram", "--"), (unigram, "unigram", ":")):
        if value is not None:
            ax.axhline(value, color="#555555", ls=line, lw=1)
            ax.text(steps[-1], value, f" {label} {style.format_number(value, 2)}",
                    va="bottom", ha="right", fontsize=style.SMALL, color="#555555")
    ax.legend(fontsize=style.SMALL, frameon=False, loc="upper right")
    ax.yaxis.set_major_formatter(style.TICKS)
    ax.grid(True, color="#e5e5e5", lw=0.6)
    style.style_axes(ax, title=title, xlabel="langkah", ylabel="cross-entropy (nat/karakter)")
    return fig


def experiment_figure(result, *, smooth=10):
    """Eksperimen √d_k: loss (atas) dan entropi atensi per lapisan (bawah), dengan
    dan tanpa pembagian, seed yang sama."""
    check_experiment(result)
    smooth = _v.check_int(smooth, "smooth")
    fig = style.new_figure(style.MAX_WIDTH, 6.6)
    ax_loss = fig.add_axes([0.16, 0.64, 0.81, 0.3])
    ax_ent = fig.add_axes([0.16, 0.24, 0.81, 0.3])
    colors = {"dengan": style.BAR, "tanpa": style.HIGHLIGHT}
    names = {"dengan": "dibagi √d_k", "tanpa": "tanpa pembagian"}
    for key, run in result["runs"].items():
        steps = np.asarray(run["step"], dtype=np.float64)
        width = min(smooth, max(1, steps.size // 5))
        ax_loss.plot(steps[width - 1:], _smooth(run["train"], width), color=colors[key],
                     lw=1.4, label=f"{names[key]}, latih")
        ax_loss.plot(run["val_step"], run["val"], "o", color=colors[key], ms=3,
                     label=f"{names[key]}, validasi")
        ent = np.asarray(run["entropy"], dtype=np.float64)  # (checkpoints, layers)
        for layer in range(ent.shape[1]):
            ax_ent.plot(run["val_step"], ent[:, layer], color=colors[key],
                        ls="-" if layer == 0 else "--", marker="o" if layer == 0 else "s",
                        ms=3, lw=1.3, label=f"{names[key]}, lapisan {layer + 1}")
    ax_loss.legend(fontsize=style.SMALL, frameon=False, loc="upper right")
    ax_ent.legend(fontsize=style.SMALL, frameon=False, loc="upper center",
                  bbox_to_anchor=(0.45, -0.2), ncol=2)
    for ax in (ax_loss, ax_ent):
        ax.yaxis.set_major_formatter(style.TICKS)
        ax.grid(True, color="#e5e5e5", lw=0.6)
    style.style_axes(ax_loss, title=f"Loss, d_k = {result['d_k']}", xlabel="langkah",
                 ylabel="nat/karakter")
    style.style_axes(ax_ent, title="Entropi rata-rata baris atensi", xlabel="langkah",
                 ylabel="nat")
    return fig


def accuracy_curve_figure(curves, *, chance=None, title=None):
    """Akurasi uji (0..1) terhadap langkah untuk beberapa pelatihan model kata.

    ``curves``: nama -> dict dengan ``val_step`` dan ``val`` (seperti kurva
    ``recall_train.train_recall``). ``chance``: garis tebakan acak.
    """
    _fig.check_series(curves, "curves")
    for name, curve in curves.items():
        check_curve(curve, f"curves[{name!r}]", (("val_step", "val"),))
    if chance is not None:
        chance = _v.check_number(chance, "chance", low=0.0, high=1.0)
    fig = style.new_figure(style.MAX_WIDTH, 3.6)
    ax = fig.add_axes([0.13, 0.14, 0.84, 0.62])
    styles = ["o-", "s--", "^-.", "d:"]
    colors = [style.BAR, style.HIGHLIGHT, "#555555", "#9a6fb0"]
    for n, (name, curve) in enumerate(curves.items()):
        ax.plot(curve["val_step"], 100 * np.asarray(curve["val"], dtype=np.float64),
                styles[n % 4], color=colors[n % 4], ms=3.5, lw=1.4, label=name)
    if chance is not None:
        ax.axhline(100 * chance, color="#555555", ls=":", lw=1)
        ax.text(ax.get_xlim()[1], 100 * chance, "tebakan acak ", va="bottom", ha="right",
                fontsize=style.SMALL, color="#555555")
    ax.set_ylim(0, 102)
    ax.legend(fontsize=style.SMALL, frameon=False, loc="lower center",
              bbox_to_anchor=(0.5, 1.0), ncol=2)
    ax.grid(True, color="#e5e5e5", lw=0.6)
    style.style_axes(ax, title=None, xlabel="langkah", ylabel="akurasi uji (%)")
    if title:
        fig.text(0.02, 0.985, title, fontsize=style.FONT, va="top")
    return fig


def circuit_figure(words, rows, heads, *, title=None):
    """Rangkaian model rujukan: satu panel per *head*, berdampingan, masing-masing
    baris atensinya dari satu posisi ke setiap kata (batang mendatar).

    ``words``: kata-kata yang dilihat (satu per kolom baris); ``rows``: array
    ``(n, len(words))`` bobot 0..1, satu baris per panel; ``heads``: satu judul per
    panel (misalnya "lapisan 1: pembaca kata kerja"), boleh berisi baris baru dan
    angka ablasinya.
    """
    hint = "Berikan satu baris atensi per head, misalnya dari rujukan.attention_rows."
    rows = _fig.figure_array(rows, "rows", hint, ndim=2, shape_name="matriks (head, kata)",
                             finite=True)
    if rows.min() < 0 or rows.max() > 1 + 1e-6:
        raise ValueError("Argumen 'rows' harus berisi bobot atensi 0..1, tetapi ada "
                         f"{_v.max_abs(rows):.3g}. {hint}")
    labels = _fig.check_words(words, rows.shape[1], "words", "kolom rows")
    heads = _fig.check_words(heads, rows.shape[0], "heads", "baris rows")
    title = _fig.check_label(title, "title")
    n = rows.shape[0]
    fig = style.new_figure(style.MAX_WIDTH, 3.9)
    left, width, gap = 0.2, 0.78 / n, 0.02
    for k in range(n):
        ax = fig.add_axes([left + k * width, 0.05, width - gap, 0.62])
        y = np.arange(len(labels))
        peak = int(np.argmax(rows[k]))
        colors = [style.HIGHLIGHT if j == peak else style.BAR for j in y]
        ax.barh(y, rows[k], color=colors, height=0.7)
        ax.set_xlim(0, 1.05)
        ax.set_ylim(len(labels) - 0.5, -0.5)
        ax.set_yticks(y)
        ax.set_yticklabels(labels if k == 0 else [""] * len(labels), fontsize=style.SMALL)
        ax.set_xticks([])
        for side in ("top", "right", "bottom"):
            ax.spines[side].set_visible(False)
        ax.tick_params(length=0, pad=2)
        inside = rows[k, peak] > 0.6  # the number inside a long bar, after a short one
        ax.text(rows[k, peak] + (-0.03 if inside else 0.03), peak,
                style.format_number(rows[k, peak]), va="center", fontsize=style.SMALL,
                color="white" if inside else "#222222", ha="right" if inside else "left")
        ax.set_title(heads[k], fontsize=style.SMALL, loc="left", pad=4)
    if title:
        fig.text(0.02, 0.985, title, fontsize=style.FONT, va="top")
    return fig
