"""atensi.model_plots: every figure refuses data it cannot draw by name, before drawing."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from atensi import model_plots  # noqa: E402

A = np.tril(np.ones((4, 4))) / np.arange(1, 5)[:, None]
CURVE = {"step": [1, 2, 3], "train": [3.0, 2.0, 1.5], "val_step": [3], "val": [1.6]}
RUN = dict(CURVE, entropy=[[1.0, 0.9]])


@pytest.mark.parametrize("call, error, words", [
    (lambda: model_plots.attention_figure(A, "abcdefg"), ValueError,
     r"'text' harus berisi satu kata untuk setiap baris A \(4 kata\), tetapi berisi 7"),
    (lambda: model_plots.attention_figure(A, ("a", "b")), ValueError, r"'text'.*berisi 2"),
    (lambda: model_plots.attention_figure(A, 5), ValueError, r"'text' harus daftar kata"),
    (lambda: model_plots.attention_figure(np.ones(4), "abcd"), ValueError, r"'A' harus matriks"),
    (lambda: model_plots.attention_figure(np.ones((4, 3)), "abcd"), ValueError, r"'A' harus persegi"),
    (lambda: model_plots.attention_figure(A * 5, "abcd"), ValueError, r"'A' harus berisi bobot"),
    (lambda: model_plots.training_curve_figure({}), ValueError, r"'curve' tidak punya kunci 'step'"),
    (lambda: model_plots.training_curve_figure(None), TypeError, r"'curve' harus dict kurva"),
    (lambda: model_plots.training_curve_figure(dict(CURVE, val=[])), ValueError, r"'curve\['val'\]' kosong"),
    (lambda: model_plots.training_curve_figure(dict(CURVE, train=[1.0])), ValueError,
     r"'step' \(3 nilai\) dan 'train' \(1 nilai\) harus sama panjang"),
    (lambda: model_plots.experiment_figure({}), ValueError, r"'result' harus hasil eksperimen"),
    (lambda: model_plots.experiment_figure({"d_k": 64, "runs": {"dengan": RUN, "tanpa": {}}}),
     ValueError, r"'result\['runs'\]\['tanpa'\]' tidak punya kunci"),
    (lambda: model_plots.accuracy_curve_figure({}), ValueError, r"'curves' harus dict"),
    (lambda: model_plots.accuracy_curve_figure(None), ValueError, r"'curves' harus dict"),
    (lambda: model_plots.accuracy_curve_figure({"a": {}}), ValueError, r"'curves\['a'\]' tidak punya"),
])
def test_figures_refuse_data_they_cannot_draw(call, error, words):
    with pytest.raises(error, match=words):
        call()


def xy(line):
    return [list(map(float, line.get_xdata())), list(map(float, line.get_ydata()))]


@pytest.mark.parametrize("text, labels", [("abcd", list("abcd")),
                                          (("Ani", "memanggil", "Budi", "."),
                                           ["Ani", "memanggil", "Budi", "."])])
def test_attention_figure_draws_the_weights_under_their_tokens(text, labels):
    ax = model_plots.attention_figure(A, text).axes[0]
    np.testing.assert_array_equal(np.asarray(ax.images[0].get_array()), A)
    assert [t.get_text() for t in ax.get_xticklabels()] == labels
    assert [t.get_text() for t in ax.get_yticklabels()] == labels


def test_training_curve_figure_draws_both_losses_and_the_bigram_line():
    train, val, bigram = model_plots.training_curve_figure(CURVE, bigram=2.0).axes[0].lines
    assert xy(train) == [[1.0, 2.0, 3.0], [3.0, 2.0, 1.5]]  # three steps: nothing to smooth
    assert xy(val) == [[3.0], [1.6]]
    assert xy(bigram)[1] == [2.0, 2.0]


def test_experiment_figure_draws_each_run_with_its_entropy_per_layer():
    fig = model_plots.experiment_figure({"d_k": 64, "runs": {"dengan": RUN, "tanpa": RUN}})
    loss, entropy = fig.axes
    assert len(loss.lines) == 4 and xy(loss.lines[1]) == [[3.0], [1.6]]  # train, val per run
    assert [xy(line) for line in entropy.lines[:2]] == [[[3.0], [1.0]], [[3.0], [0.9]]]
    assert len(entropy.lines) == 4  # two layers per run


def test_accuracy_curve_figure_draws_percentages_and_the_chance_line():
    ax = model_plots.accuracy_curve_figure({"a": {"val_step": [1, 2], "val": [0.1, 0.5]}},
                                           chance=0.25).axes[0]
    curve, chance = ax.lines
    assert xy(curve) == [[1.0, 2.0], [10.0, 50.0]] and xy(chance)[1] == [25.0, 25.0]


def test_circuit_figure_draws_one_panel_per_head_and_refuses_bad_rows():
    words = ("Ani", "memanggil", "Budi", ",", "dia", "menoleh")
    rows = np.full((3, 6), 0.1)
    rows[np.arange(3), [1, 3, 2]] = 0.5
    fig = model_plots.circuit_figure(words, rows, ["kata kerja", "pelengkap", "nama"])
    assert len(fig.axes) == 3
    for ax, peak in zip(fig.axes, (1, 3, 2)):
        colors = [bar.get_facecolor() for bar in ax.patches]
        assert colors.count(colors[peak]) == 1  # only the largest weight is highlighted
    with pytest.raises(ValueError, match="'rows' harus berisi bobot atensi 0..1"):
        model_plots.circuit_figure(words, rows * 3, ["a", "b", "c"])
    with pytest.raises(ValueError, match="'heads'"):
        model_plots.circuit_figure(words, rows, ["a", "b"])
    with pytest.raises(ValueError, match="'words'"):
        model_plots.circuit_figure(words[:4], rows, ["a", "b", "c"])
