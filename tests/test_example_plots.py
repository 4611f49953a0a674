"""atensi.example_plots: the running example's figures (vectors, score grid,
softmax bars, weighted sum), their labels, grey future cells and refusals."""

import numpy as np
import pytest
from matplotlib import _pylab_helpers
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from atensi import example, example_plots, style
from atensi.reference import causal_mask, scores, softmax, weighted_sum

TOKENS = example.TOKENS


@pytest.fixture(autouse=True)
def no_pyplot_figures():
    yield
    assert _pylab_helpers.Gcf.get_num_fig_managers() == 0


def texts(fig):
    style.to_png(fig)
    return [t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text")) if t.get_text()]


def grey_cells(fig):
    grey = to_rgba(style.MASKED)
    return [p for p in fig.findobj(Rectangle) if p.get_facecolor() == grey]


@pytest.fixture
def example_matrices():
    S = scores(example.Q, example.K)
    A = softmax(causal_mask(S))
    return S, A


def test_vectors_labels_tokens_axes_and_numbers():
    fig = example_plots.vectors(example.Q, example.K, example.V, TOKENS, example.AXES)
    assert isinstance(fig, Figure) and fig._repr_png_().startswith(b"\x89PNG")
    found = texts(fig)
    for word in TOKENS + example.AXES:
        assert word in found
    assert "query Q" in found and "key K" in found and "value V" in found
    assert "0,5" in found and "0.5" not in found  # Indonesian decimal comma
    assert fig.get_figwidth() <= 5.2


@pytest.mark.parametrize("axes", [example.AXES, ("orang", "sasaran", "waktu")])
def test_vectors_axis_names_stay_apart_and_readable_on_a_phone(axes):
    rng = np.random.default_rng(5)
    Q, K, V = (rng.standard_normal((len(TOKENS), len(axes))) for _ in range(3))
    fig = example_plots.vectors(Q, K, V, TOKENS, axes)
    assert style.phone_text_px(fig) >= 9.0
    renderer = FigureCanvasAgg(fig).get_renderer()
    names = [t for t in fig.findobj(lambda a: hasattr(a, "get_text")) if t.get_text() in axes]
    assert len(names) == 3 * len(axes)
    boxes = [t.get_window_extent(renderer) for t in names]
    gap = 4  # pixels of white space at least between two names
    for n, a in enumerate(boxes):
        assert 0 <= a.x0 and a.x1 <= fig.bbox.width, "nama sumbu keluar dari gambar"
        for b in boxes[n + 1:]:
            apart = (a.x1 + gap <= b.x0 or b.x1 + gap <= a.x0
                     or a.y1 + gap <= b.y0 or b.y1 + gap <= a.y0)
            assert apart, f"nama sumbu bertumpuk: {a} dan {b}"


def test_score_grid_masked_cells_are_grey_minus_infinity(example_matrices):
    S, _ = example_matrices
    fig = example_plots.score_grid(causal_mask(S), TOKENS, masked=True, title="Skor")
    found = texts(fig)
    assert all(found.count(word) == 2 for word in TOKENS)  # row and column labels
    T = len(TOKENS)
    assert len(grey_cells(fig)) == T * (T - 1) // 2
    assert found.count("−∞") == T * (T - 1) // 2
    # masked=True greys the future even when S itself has no -inf.
    assert len(grey_cells(example_plots.score_grid(S, TOKENS, masked=True))) == T * (T - 1) // 2
    assert grey_cells(example_plots.score_grid(S, TOKENS)) == []


def test_score_grid_fills_row_by_row(example_matrices):
    S, _ = example_matrices
    T = len(TOKENS)
    for n in (0, 1, 6, T * T):
        found = texts(example_plots.score_grid(S, TOKENS, filled=n))
        shown = [t for t in found if t[0].isdigit() or t[0] == "−"]
        assert len(shown) == n
    second_row = style.format_number(S[1, 0])  # the first cell of row 1, row-major
    assert second_row not in texts(example_plots.score_grid(S, TOKENS, filled=T))
    assert second_row in texts(example_plots.score_grid(S, TOKENS, filled=T + 1))


def test_softmax_bars_all_rows_and_one_row(example_matrices):
    _, A = example_matrices
    found = texts(example_plots.softmax_bars(A, TOKENS, title="Bobot"))
    for word in TOKENS:
        assert found.count(word) >= 4  # every panel names the keys
    assert style.format_number(A[2, 0]) in found
    one = example_plots.softmax_bars(A, TOKENS, row=2)
    assert isinstance(one, Figure) and f"{TOKENS[2]} melihat …" in texts(one)


def test_weighted_sum_rows_shows_the_output(example_matrices):
    _, A = example_matrices
    row = len(TOKENS) - 2
    fig = example_plots.weighted_sum_rows(A, example.V, weighted_sum(A, example.V), TOKENS,
                                          row=row)
    found = texts(fig)
    out = A[row] @ example.V
    for value in out:
        assert style.format_number(value) in found
    assert f"jumlah = O[{TOKENS[row]}]" in found
    assert len(grey_cells(fig)) == 2 * example.V.shape[1]  # the future row, V and scaled


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda S, A: example_plots.vectors(example.Q, example.K[:3], example.V, TOKENS), "'K'"),
        (lambda S, A: example_plots.vectors(example.Q, example.K, example.V, TOKENS[:3]),
         "'tokens'"),
        (lambda S, A: example_plots.vectors(example.Q, example.K, example.V, TOKENS,
                                            axes=("orang",)), "'axes'"),
        (lambda S, A: example_plots.score_grid(S[:, :3], TOKENS), "persegi"),
        (lambda S, A: example_plots.score_grid(S, TOKENS, filled=len(TOKENS) ** 2 + 1),
         "'filled'"),
        (lambda S, A: example_plots.score_grid(S, TOKENS, masked=1), "'masked'"),
        (lambda S, A: example_plots.score_grid(S * np.nan, TOKENS), "'S'"),
        (lambda S, A: example_plots.softmax_bars(S, TOKENS), "softmax"),
        (lambda S, A: example_plots.softmax_bars(A, TOKENS, row=len(TOKENS)), "'row'"),
        (lambda S, A: example_plots.weighted_sum_rows(A, example.V[:2], example.V[:2], TOKENS,
                                                      row=0), "'V'"),
        (lambda S, A: example_plots.weighted_sum_rows(A, example.V, example.V[:, :1], TOKENS,
                                                      row=0), "'O'"),
        (lambda S, A: example_plots.weighted_sum_rows(A, example.V, example.V, "Budi", row=0),
         "'tokens'"),
        (lambda S, A: example_plots.score_grid(np.zeros((9, 9)), [str(n) for n in range(9)]),
         "heatmap"),
    ],
)
def test_bad_input_is_refused_in_indonesian(example_matrices, call, words):
    S, A = example_matrices
    with pytest.raises((ValueError, TypeError), match="harus|paling banyak") as error:
        call(S, A)
    assert words in str(error.value)


def test_long_titles_wrap_inside_a_phone_sized_figure(example_matrices):
    S, A = example_matrices
    title = "Judul yang sangat panjang sekali untuk menguji pemenggalan baris di ponsel"
    figures = [
        example_plots.score_grid(S, TOKENS, masked=True, title=title),
        example_plots.softmax_bars(A, TOKENS, title=title),
        example_plots.softmax_bars(A, TOKENS, row=1, title=title),
        example_plots.weighted_sum_rows(A, example.V, weighted_sum(A, example.V), TOKENS,
                                        row=3, title=title),
    ]
    for fig in figures:
        assert fig.get_figwidth() <= 5.0
        wrapped = [t for t in texts(fig) if t.replace("\n", " ") == title]
        assert wrapped and "\n" in wrapped[0]
        renderer = FigureCanvasAgg(fig).get_renderer()
        right = max(t.get_window_extent(renderer).x1
                    for t in fig.findobj(lambda a: hasattr(a, "get_text")) if t.get_text())
        assert right <= fig.bbox.width + 1, "teks keluar dari gambar"


@pytest.mark.parametrize("masked", [False, True])
def test_score_grid_labels_stay_readable_on_a_phone(masked):
    # Long words ("memanggil") in five narrow columns: the labels must not shrink
    # below 9 px once the figure is fitted to a phone's column.
    S = scores(example.Q, example.K)
    fig = example_plots.score_grid(S, example.TOKENS, masked=masked, title="uji")
    assert style.phone_text_px(fig) >= 9.0
    words = ("menelepon", "memanggil", "menyahut", "mendengar", "menoleh")
    fig = example_plots.score_grid(S, words, masked=masked, title="uji")
    assert style.phone_text_px(fig) >= 9.0


@pytest.mark.parametrize("role, W, P", [("query", example.W_Q, example.Q),
                                        ("key", example.W_K, example.K),
                                        ("value", example.W_V, example.V)])
def test_the_running_example_projections_give_its_hand_set_vectors_exactly(role, W, P):
    # Q, K and V of every chapter are X·W: no rounding, not just close.
    assert np.array_equal(example.X_FEATURES @ W, P)
    assert W.shape == (len(example.FEATURES), example.d_k)


def test_projection_writes_the_three_matrices_and_reads_on_a_phone():
    fig = example_plots.projection(example.X_FEATURES, example.W_K, example.K, TOKENS,
                                   features=example.FEATURES, axes=example.AXES, role="key")
    found = texts(fig)
    for word in TOKENS + example.FEATURES + example.AXES:
        assert word in found
    assert {"X", "W_K", "K", "·", "="} <= set(found)
    assert "−2" in found and "0,5" in found
    assert fig.get_figwidth() <= 5.0 and style.phone_text_px(fig) >= 9.0
    renderer = FigureCanvasAgg(fig).get_renderer()
    for t in fig.findobj(lambda a: hasattr(a, "get_text")):
        if t.get_text():
            box = t.get_window_extent(renderer)
            assert 0 <= box.x0 and box.x1 <= fig.bbox.width + 1, t.get_text()


@pytest.mark.parametrize("kwargs, words", [
    (dict(role="skor"), "'role'"),
    (dict(W=example.W_K[:3]), "'W'"),
    (dict(P=example.K[:, :1]), "'P'"),
    (dict(features=example.FEATURES[:3]), "'features'"),
])
def test_projection_refuses_bad_input_in_indonesian(kwargs, words):
    args = dict(X=example.X_FEATURES, W=example.W_K, P=example.K, tokens=TOKENS,
                features=example.FEATURES, axes=example.AXES, role="key")
    args.update(kwargs)
    with pytest.raises(ValueError, match="harus") as error:
        example_plots.projection(**args)
    assert words in str(error.value)


def test_pipeline_rows_follow_one_row_of_the_running_example_through_a_layer():
    rows = {key: numbers for key, _, numbers in example.pipeline_rows()}
    dia = example.PRONOUN
    assert np.array_equal(rows["proyeksi"], example.Q[dia])
    assert np.allclose(rows["skala"], rows["skor"] / np.sqrt(example.d_k))
    assert np.isneginf(rows["mask"][dia + 1:]).all() and np.isfinite(rows["mask"][:dia + 1]).all()
    assert np.isclose(rows["softmax"].sum(), 1) and rows["softmax"].argmax() == example.REFERENT
    assert np.allclose(rows["jumlah"], rows["softmax"] @ example.V)
    assert rows["gabung"] is None and rows["keluaran"] is None
    with pytest.raises(ValueError, match="'row'"):
        example.pipeline_rows(row=example.T)


@pytest.mark.parametrize("highlight", [None, "skor", "skala", "mask", "softmax", "jumlah"])
def test_pipeline_highlights_one_step_and_reads_on_a_phone(highlight):
    fig = example_plots.pipeline(example.pipeline_rows(), highlight=highlight, title="uji")
    found = texts(fig)
    assert "mask kausal" in found and "−∞" in found and "0,17" in found
    assert fig.get_figwidth() <= 5.0 and style.phone_text_px(fig) >= 9.0
    frames = [p for p in fig.findobj(Rectangle) if p.get_edgecolor() == to_rgba(style.HIGHLIGHT)
              and p.get_facecolor()[3] == 0]
    assert len(frames) == (0 if highlight is None else 1)


@pytest.mark.parametrize("kwargs, words", [
    (dict(highlight="matriks"), "'highlight'"),
    (dict(rows=[("skor", "skor", np.zeros(9))]), "paling banyak"),
    (dict(rows=[("skor", "skor")]), "'rows'"),
    (dict(rows="skor"), "'rows'"),
])
def test_pipeline_refuses_bad_input_in_indonesian(kwargs, words):
    args = dict(rows=example.pipeline_rows())
    args.update(kwargs)
    with pytest.raises(ValueError, match="harus|paling banyak") as error:
        example_plots.pipeline(**args)
    assert words in str(error.value)
