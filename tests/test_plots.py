"""atensi.plots: pure figure functions (no pyplot state, Indonesian labels)."""

import io

import numpy as np
import pytest
from matplotlib import _pylab_helpers
from matplotlib.figure import Figure
from PIL import Image

from atensi import measures, plots, style
from atensi.reference import causal_mask, softmax


@pytest.fixture(autouse=True)
def no_pyplot_figures():
    """Every test also checks that nothing was registered with pyplot."""
    yield
    assert _pylab_helpers.Gcf.get_num_fig_managers() == 0


def texts(fig):
    """All strings drawn in a figure (titles, labels, tick labels, annotations)."""
    style.to_png(fig)  # tick labels get their text when drawn
    found = [t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text"))]
    return " ".join(t for t in found if t)


def png_size(data):
    return Image.open(io.BytesIO(data)).size


def test_format_number_is_indonesian():
    assert style.format_number(0.25) == "0,25"
    assert style.format_number(1048576, 0) == "1.048.576"
    assert style.format_number(-1.5, 1) == "−1,5"
    assert style.format_number(-np.inf) == "−∞"
    assert style.format_number(-0.0) == "0,00"
    assert style.format_number(-0.0001, 3) == "0,000"


def test_figures_show_themselves_as_png_without_pyplot():
    fig = plots.heatmap(np.eye(3), "Contoh")
    assert isinstance(fig, Figure)
    data = fig._repr_png_()
    assert data.startswith(b"\x89PNG")
    width, height = png_size(data)
    assert abs(width - style.MAX_WIDTH * style.DPI) <= 1 and abs(height - 3.8 * style.DPI) <= 1


def test_to_png_palette_is_smaller_and_keeps_size():
    fig = plots.mask_pattern(8)
    full = style.to_png(fig, dpi=130)
    small = style.to_png(fig, dpi=130, palette=64)
    assert png_size(full) == png_size(small)
    assert len(small) < len(full)
    assert Image.open(io.BytesIO(small)).mode == "P"


def test_heatmap_marks_minus_infinity_cells():
    S = causal_mask(np.arange(16, dtype=np.float64).reshape(4, 4))
    fig = plots.heatmap(S, "Skor setelah mask")
    drawn = texts(fig)
    assert "−∞" in drawn and "Skor setelah mask" in drawn
    assert "posisi key j" in drawn and "posisi query i" in drawn
    # The -inf cells are drawn in the grey of MASKED, not in a colormap colour.
    image = np.asarray(Image.open(io.BytesIO(style.to_png(fig))).convert("RGB"))
    grey = np.array([0xCF, 0xCF, 0xCF])
    assert (np.abs(image.astype(int) - grey).sum(axis=-1) < 6).sum() > 500


def test_heatmap_rejects_non_matrix():
    with pytest.raises(ValueError, match="Argumen 'M'.*\\(2, 3, 4\\)"):
        plots.heatmap(np.zeros((2, 3, 4)))


def test_mask_pattern_labels_and_errors():
    drawn = texts(plots.mask_pattern(4))
    assert "Mask kausal, T = 4" in drawn
    assert drawn.count("✓") == 10 and drawn.count("−∞") == 6
    with pytest.raises(ValueError, match="Argumen 'T'.*0"):
        plots.mask_pattern(0)


def test_softmax_row_bars_with_scores_and_mask():
    s = causal_mask(np.array([[1.0, 2.0, 3.0]]))[0]
    fig = plots.softmax_row_bars(softmax(s), scores=s)
    assert len(fig.axes) == 2
    assert "Skor baris ini" in texts(fig)
    with pytest.raises(ValueError, match="Argumen 'p'.*\\(2, 2\\)"):
        plots.softmax_row_bars(np.ones((2, 2)))


def test_dot_product_histograms_one_panel_per_d_k():
    samples = {d: measures.random_dot_products(d, n=500) for d in (64, 256)}
    fig = plots.dot_product_histograms(samples)
    assert len(fig.axes) == 2
    assert "d_k = 256" in texts(fig)
    with pytest.raises(ValueError, match="samples"):
        plots.dot_product_histograms({})


@pytest.mark.slow
def test_chapter_figures_from_other_chapters():
    temps = [0.5, 1, 2]
    weights = [softmax(np.array([1.0, 2.0, 0.5]) / t) for t in temps]
    fig = plots.softmax_temperature(temps, weights, [measures.entropy(p) for p in weights])
    assert len(fig.axes) == 3
    fig = plots.memory_growth([256, 1024, 4096], {"skor": [2**18, 2**22, 2**26]})
    assert "MiB" in texts(fig)
    fig = plots.metrics_vs_d_k([1, 64, 4096], [("Peluang terbesar", "p", {"a": [0.2, 0.8, 1.0]})])
    assert len(fig.axes) == 1
    fig = plots.heatmap_pair(np.eye(3), causal_mask(np.ones((3, 3))), titles=("atas", "bawah"))
    assert len(fig.axes) == 3  # two heatmaps and one shared colour bar
    top, bottom = (ax.get_position() for ax in fig.axes[:2])
    assert top.y0 > bottom.y1  # stacked: each panel as wide as the figure allows
    mask = plots.heatmap_pair(np.tril(np.ones((4, 4))), np.eye(4), titles=("a", "b"), colorbar=False)
    assert len(mask.axes) == 2  # a 0/1 pattern needs no colour bar
    with pytest.raises(ValueError, match="temperatures"):
        plots.softmax_temperature([0], weights[:1], [0.5])
    with pytest.raises(ValueError, match="'weights' dan 'entropies'"):
        plots.softmax_temperature(temps, weights, [0.5])


def test_softmax_temperature_draws_the_weights_and_entropies_it_is_given():
    """No softmax inside the figure: the bars and titles are the caller's numbers."""
    weights = np.array([[0.7, 0.2, 0.1], [0.4, 0.35, 0.25]])
    fig = plots.softmax_temperature([1, 4], weights, [0.123, 0.987])
    drawn = texts(fig)
    assert "bobot terbesar 0,70; entropi 0,12 nat" in drawn
    assert "τ = 4: bobot terbesar 0,40; entropi 0,99 nat" in drawn
    heights = [round(bar.get_height(), 6) for bar in fig.axes[1].patches]
    assert heights == [0.4, 0.35, 0.25]


def test_mask_figure_and_row_outline_land_on_the_row():
    """The static twin's CSS outline must cover the same pixels as the drawn outline."""
    T, row = 8, 5
    S = causal_mask(np.random.default_rng(0).standard_normal((T, T)))
    A = softmax(S)
    fig = plots.mask_figure(S, A, masked=True, scaled=True, row=row)
    image = np.asarray(Image.open(io.BytesIO(style.to_png(fig, dpi=130))).convert("RGB")).astype(int)
    height, width, _ = image.shape
    orange = np.abs(image - np.array([0xE6, 0x55, 0x0D])).sum(axis=-1) < 40
    boxes = plots.row_outline_fractions(fig, row, T)
    assert len(boxes) == 2
    for left, top, w, h in boxes:
        x0, x1 = round(left * width), round((left + w) * width)
        y0, y1 = round(top * height), round((top + h) * height)
        ys, xs = np.nonzero(orange[:, x0 - 4:x1 + 4])
        assert abs(ys.min() - y0) <= 3 and abs(ys.max() - y1) <= 3
        assert abs(xs.min() - 4) <= 3 and abs(xs.max() - (x1 - x0 + 4)) <= 3
    # Row sums panel: every bar reaches 1.
    assert "Bobot A" in texts(fig)


@pytest.mark.slow
def test_sharpness_and_row_figures_have_indonesian_titles():
    dots = measures.random_dot_products(64, n=200)
    fig = plots.sharpness_figure(dots, softmax(dots[:16]), d_k=64, scale=False, limit=256)
    drawn = texts(fig)
    assert "tanpa pembagian" in drawn and "d_k = 64" in drawn and "simpangan baku" in drawn
    s = causal_mask(np.array([[0.3, 1.0, -0.5, 2.0]]))[0]
    s[2:] = -np.inf
    w = softmax(s)
    V = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
    fig = plots.row_figure(s, w, V, w @ V, row=1, temperature=0.5, limits=((-2, 2), (-2, 2)))
    drawn = texts(fig)
    assert "Skor baris i = 1" in drawn and "keluaran[1]" in drawn and "0,50" in drawn


@pytest.mark.slow
def test_roofline_draws_one_roof_per_peak_and_refuses_bad_numbers():
    fig = plots.roofline({"FP32": 67e12, "BF16": 989e12}, 4.8e12,
                         {"fused": (130.0, "FP32"), "fused bf16": (260.0, "BF16"),
                          "rantai": (10.0, "BF16")})
    ax = fig.axes[0]
    roofs = [line for line in ax.get_lines() if len(line.get_xdata()) > 2]
    assert len(roofs) == 2
    for line, top in zip(roofs, (67.0, 989.0)):
        y = np.asarray(line.get_ydata())
        assert np.isclose(y.max(), top)  # flat roof at the peak, in TFLOP/s
        x = np.asarray(line.get_xdata())
        assert np.allclose(y[x < 1] / x[x < 1], 4.8)  # memory roof: bandwidth × intensity
    marks = {tuple(np.ravel(line.get_xdata())): float(np.ravel(line.get_ydata())[0])
             for line in ax.get_lines() if len(line.get_xdata()) == 1}
    assert np.isclose(marks[(130.0,)], 67.0)  # compute-bound under the FP32 roof
    assert np.isclose(marks[(260.0,)], 989.0)  # past the BF16 ridge (206): compute-bound
    assert np.isclose(marks[(10.0,)], 48.0)  # below it: bandwidth × intensity
    assert "fused" in texts(fig) and "fused bf16" in texts(fig)
    with pytest.raises(ValueError, match="'bandwidth'"):
        plots.roofline({"FP32": 67e12}, 0, {})
    with pytest.raises(ValueError, match="'peaks'"):
        plots.roofline({}, 4.8e12, {})
    with pytest.raises(ValueError, match="'points'.*TF32"):
        plots.roofline({"FP32": 67e12}, 4.8e12, {"x": (10.0, "TF32")})


def test_work_map_colours_each_category_and_has_no_colour_bar():
    M = np.array([[2, 0, 0], [2, 1, 0], [2, 2, 2]])
    fig = plots.work_map(M, ["dilewati", "dibuang", "berguna"], title="peta")
    assert len(fig.axes) == 1  # no colour bar
    image = fig.axes[0].get_images()[0]
    rgba = image.to_rgba(image.get_array())
    assert (rgba[0, 1] == rgba[1, 2]).all() and not (rgba[0, 0] == rgba[0, 1]).all()
    drawn = texts(fig)
    assert all(label in drawn for label in ("dilewati", "dibuang", "berguna"))
    big = plots.work_map(np.tril(np.full((256, 256), 2)), ["dilewati", "dibuang", "berguna"])
    assert len(big.axes[0].get_xticks()) <= 9 and len(big.axes[0].get_yticks()) <= 9
    with pytest.raises(ValueError, match="'M'.*0..1"):
        plots.work_map(M, ["a", "b"])


def _min_font_px_on_phone(fig, rendered=328):
    image = Image.open(io.BytesIO(style.to_png(fig)))
    return float(image.info["MinFontPx"]) * min(rendered, image.size[0]) / image.size[0]


@pytest.mark.slow
def test_png_carries_its_smallest_text_and_chapter_figures_stay_legible_on_a_phone():
    fig = style.new_figure(4.0, 2.0)
    ax = fig.add_subplot()
    ax.set_title("judul", fontsize=12)
    ax.text(0.5, 0.5, "kecil", fontsize=6)
    assert float(Image.open(io.BytesIO(style.to_png(fig))).info["MinFontPx"]) == pytest.approx(
        6 / 72 * style.DPI, abs=0.01)
    rng = np.random.default_rng(0)
    figures = [plots.heatmap(rng.standard_normal((8, 8)), "skor"), plots.mask_pattern(8),
               plots.heatmap_pair(rng.standard_normal((8, 8)), rng.standard_normal((8, 8)),
                                  titles=("a", "b"), title="dua"),
               plots.softmax_row_bars(np.array([0.5, 0.3, 0.2]), scores=np.array([1.0, 0.5, 0.0])),
               plots.softmax_temperature([0.5, 1, 2], np.full((3, 3), 1 / 3), [1.1, 1.1, 1.1]),
               plots.metrics_vs_d_k([4, 16], [("p", "y", {"a": [0.1, 0.2]})], title="t")]
    for fig in figures:
        assert fig.get_figwidth() <= style.MAX_WIDTH
        assert _min_font_px_on_phone(fig) >= 9


@pytest.mark.slow
def test_heatmap_writes_numbers_only_where_they_fit():
    rng = np.random.default_rng(1)
    small = plots.heatmap(rng.standard_normal((4, 4)))
    assert "0," in texts(small) or "−0," in texts(small)
    stacked = plots.heatmap_pair(rng.standard_normal((8, 8)), rng.standard_normal((8, 8)),
                                 titles=("a", "b"))
    # "−0,63" at 9 pt does not fit a cell of the stacked 8 × 8 panels: no numbers there.
    assert not any("," in t.get_text() for ax in stacked.axes[:2] for t in ax.texts)


def test_log_axis_ticks_keep_each_its_own_decimals():
    from atensi import style

    assert style.LOG_TICKS.format_ticks([0.25, 1, 4, 256, 1024]) == ["0,25", "1", "4", "256", "1.024"]
    fig = plots.roofline({"FP32": 67e12}, 4.8e12, {"v1": (10, "FP32")})
    fig.canvas.draw()
    labels = [t.get_text() for ax in fig.axes[:1] for t in ax.get_xticklabels() + ax.get_yticklabels()]
    assert "1.024" in labels and not any(label.endswith(",000") for label in labels), labels


def test_ticks_of_one_axis_share_their_decimals():
    from atensi import style

    assert style.TICKS.format_ticks([0, 0.5, 1, 1.5]) == ["0,0", "0,5", "1,0", "1,5"]
    assert style.TICKS.format_ticks([0, 1, 2]) == ["0", "1", "2"]
    assert style.TICKS.format_ticks([-0.25, 0, 0.25]) == ["−0,25", "0,00", "0,25"]
    fig = style.new_figure(3, 3)
    ax = fig.add_subplot()
    image = ax.imshow(np.linspace(0, 1.5, 16).reshape(4, 4), vmin=0, vmax=1.5)
    bar = fig.colorbar(image, ax=ax)
    bar.ax.yaxis.set_major_formatter(style.TICKS)
    fig.canvas.draw()
    labels = [t.get_text() for t in bar.ax.get_yticklabels() if t.get_text()]
    assert len(labels) >= 3 and len({len(s.partition(",")[2]) for s in labels}) == 1, labels
