"""atensi.cuda_plots: the CUDA on-ramp figures (pure, Indonesian, checked input)."""

import numpy as np
import pytest
from matplotlib import _pylab_helpers
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from atensi import cuda_plots, style


@pytest.fixture(autouse=True)
def no_pyplot_figures():
    yield
    assert _pylab_helpers.Gcf.get_num_fig_managers() == 0


def texts(fig):
    style.to_png(fig)
    found = [t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text"))]
    return " ".join(t for t in found if t)


def rectangles(fig, color):
    from matplotlib.colors import to_rgba

    return [
        p for p in fig.axes[0].patches
        if isinstance(p, Rectangle) and p.get_facecolor() == to_rgba(color)
    ]


def test_thread_grid_shows_the_index_formula_of_the_highlighted_thread():
    fig = cuda_plots.thread_grid(40, 16, thread=(21, 37))
    assert isinstance(fig, Figure)
    text = texts(fig)
    assert "j = blockIdx.x · blockDim.x + threadIdx.x\n   = 2 · 16 + 5 = 37" in text
    assert "i = blockIdx.y · blockDim.y + threadIdx.y\n   = 1 · 16 + 5 = 21" in text
    assert "grid 3 × 3 block" in text and "menghitung S[21, 37]" in text
    # 40 is not a multiple of 16: the grid covers 48 and the rest is idle.
    assert "menganggur" in text
    assert fig.axes[0].get_xlim() == (0, 48)
    # the thread is one cell at (x=j, y=i)
    (cell,) = rectangles(fig, style.HIGHLIGHT)
    assert (cell.get_x(), cell.get_y(), cell.get_width()) == (37, 21, 1)


def test_thread_grid_idle_thread_and_exact_multiple():
    text = texts(cuda_plots.thread_grid(40, 16, thread=(45, 3)))
    assert "di luar matriks, tidak menulis" in text
    text = texts(cuda_plots.thread_grid(32, 16, thread=(0, 0)))
    assert "menganggur" not in text and "= 0 · 16 + 0 = 0" in text


def test_tiling_marks_the_tiles_a_block_loads():
    fig = cuda_plots.tiling(64, 64, 16, block=(2, 1), step=1)
    text = texts(fig)
    assert "ubin S baris 16–31, kolom 32–47" in text
    assert "kolom d_k 16–31" in text and "total 4 langkah" in text
    loaded = rectangles(fig, cuda_plots.LOAD_FILL)
    # one Q tile (rows 16..31 of Q, columns 16..31) and one K tile (drawn as Kᵀ)
    assert len(loaded) == 2
    q_tile, k_tile = loaded
    assert q_tile.get_y() == 16 and q_tile.get_height() == 16
    assert k_tile.get_x() == 32 and k_tile.get_width() == 16


def test_tiling_partial_tiles_at_the_edges():
    fig = cuda_plots.tiling(40, 20, 16, block=(2, 2), step=1)
    text = texts(fig)
    assert "ubin S baris 32–39, kolom 32–39" in text and "kolom d_k 16–19" in text


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda: cuda_plots.thread_grid(0), ValueError, "'T'"),
        (lambda: cuda_plots.thread_grid(40.0), TypeError, "'T'"),
        (lambda: cuda_plots.thread_grid(40, 64), ValueError, "1024 thread"),
        (lambda: cuda_plots.thread_grid(40, thread=(48, 0)), ValueError, "'thread'"),
        (lambda: cuda_plots.thread_grid(40, thread=3), TypeError, "'thread'"),
        (lambda: cuda_plots.tiling(64, 64, block=(4, 0)), ValueError, "'block'"),
        (lambda: cuda_plots.tiling(64, 64, step=4), ValueError, "'step'"),
        (lambda: cuda_plots.tiling(64, True), TypeError, "'d_k'"),
    ],
)
def test_bad_arguments_get_indonesian_errors(call, error, words):
    with pytest.raises(error, match=words) as info:
        call()
    assert "harus" in str(info.value)


def test_figures_are_phone_sized():
    for fig in (cuda_plots.thread_grid(), cuda_plots.tiling()):
        assert fig.get_figwidth() <= 5.0
        width, _ = np.array(fig.get_size_inches()) * fig.dpi
        assert width <= 500
