"""atensi.widgets: live explorers driven from code, static twins, live/static choice."""

import base64
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from atensi import measures, style, widgets
from atensi.reference import softmax

f = style.format_number
MAX_BYTES = 1_500_000


def drive(explorer, key, value):
    """Set one control like a reader would; return (png, numbers, readout html)."""
    explorer.controls[key].value = value
    return bytes(explorer.image.value), explorer.values, explorer.readout.value


# ------------------------------------------------------------------ live 1


@pytest.mark.slow
def test_sharpness_max_probability_grows_without_scaling_and_stays_flat_with_it():
    ex = widgets.sharpness_explorer(d_k=1, scale=False)
    assert set(ex.controls) == {"d_k", "scale"}
    assert list(ex.controls["d_k"].options) == [2**e for e in range(13)]
    assert ex.controls["scale"].description == "bagi dengan √d_k"
    results = {}
    for scale in (False, True):
        drive(ex, "scale", scale)
        previous = None
        for d_k in widgets.D_K_VALUES:
            png, values, readout = drive(ex, "d_k", d_k)
            assert values["d_k"] == d_k and values["scale"] is scale
            assert png.startswith(b"\x89PNG") and png != previous  # the picture changed
            previous = png
            assert f"d_k = {d_k}" in readout
            for name in ("p_max", "entropy", "jacobian", "mean_p_max"):
                assert f(values[name], 3) in readout
            results[scale, d_k] = dict(values)
    raw = [results[False, d]["mean_p_max"] for d in widgets.D_K_VALUES]
    scaled = [results[True, d]["mean_p_max"] for d in widgets.D_K_VALUES]
    # Without scaling: from near-uniform (1/16 would be 0.06) to one-hot.
    assert raw[0] < 0.3 and raw[-1] > 0.97
    assert all(raw[k + 2] > raw[k] for k in range(len(raw) - 2))  # every 4x in d_k
    assert all(b > a - 0.03 for a, b in zip(raw, raw[1:]))
    # With scaling: flat.
    assert max(scaled) - min(scaled) < 0.05 and all(0.2 < p < 0.3 for p in scaled)
    # Spread of the dot products: √d_k without, 1 with scaling.
    for d_k in widgets.D_K_VALUES:
        assert results[False, d_k]["spread"] == pytest.approx(math.sqrt(d_k), rel=0.1)
        assert results[True, d_k]["spread"] == pytest.approx(1.0, rel=0.1)
    # Gradient through softmax vanishes without scaling only.
    assert results[False, 4096]["mean_jacobian"] < 0.1 * results[False, 1]["mean_jacobian"]
    assert results[True, 4096]["mean_jacobian"] > 0.9 * results[True, 64]["mean_jacobian"]
    assert results[False, 4096]["mean_entropy"] < 0.1 < results[True, 4096]["mean_entropy"]


def test_sharpness_readouts_are_the_drawn_row():
    dots, values = widgets.sharpness_state(256, scale=True)
    assert dots.shape == (widgets.SHARP_ROWS, widgets.SHARP_KEYS)
    p = softmax(dots[0])
    assert values["p_max"] == pytest.approx(p.max())
    assert values["entropy"] == pytest.approx(measures.entropy(p))
    assert values["jacobian"] == pytest.approx(measures.jacobian_norm(p))
    assert values["mean_p_max"] == pytest.approx(softmax(dots).max(axis=-1).mean())
    raw, _ = widgets.sharpness_state(256, scale=False)
    np.testing.assert_allclose(dots, raw / 16)
    with pytest.raises(ValueError, match="Argumen 'd_k'.*100"):
        widgets.sharpness_state(100, scale=False)


# ------------------------------------------------------------------ live 2


@pytest.mark.slow
def test_mask_explorer_shows_what_row_i_sees():
    ex = widgets.mask_explorer(T=8, masked=True, scaled=True, row=3)
    assert set(ex.controls) == {"kind", "T", "masked", "scaled", "row"}
    assert ex.controls["kind"].value == "kausal"
    assert (ex.controls["T"].min, ex.controls["T"].max) == (4, 32)
    png, values, readout = drive(ex, "row", 5)
    assert values["seen"] == [0, 1, 2, 3, 4, 5]
    assert "Baris i = 5</b> melihat posisi 0–5 (6 dari 8)" in readout
    assert "posisi 6–7 adalah masa depan" in readout
    np.testing.assert_allclose(values["row_sums"], 1.0, atol=1e-12)
    png2, values, readout = drive(ex, "masked", False)
    assert png2 != png
    assert values["seen"] == list(range(8))
    assert "melihat semua 8 posisi, termasuk 2 posisi masa depan" in readout
    png3, values, _ = drive(ex, "T", 32)
    assert png3 != png2 and values["T"] == 32 and ex.controls["row"].max == 31
    drive(ex, "masked", True)
    _, values, readout = drive(ex, "row", 0)
    assert values["seen"] == [0] and "hanya melihat dirinya sendiri" in readout
    # Shrinking T pulls row i back inside the matrix.
    drive(ex, "row", 20)
    _, values, _ = drive(ex, "T", 4)
    assert ex.controls["row"].value == 3 and values["row"] == 3 and values["seen"] == [0, 1, 2, 3]
    # Scaling changes the scores and makes the rows flatter.
    sharp = drive(ex, "scaled", False)
    flat = drive(ex, "scaled", True)
    assert sharp[0] != flat[0]
    assert sharp[1]["entropy"] < flat[1]["entropy"]


def test_mask_state_weights_are_zero_in_the_future():
    S, A, values = widgets.mask_state(16, True, True, 7)
    assert np.isneginf(S[np.triu_indices(16, 1)]).all()
    assert (A[np.triu_indices(16, 1)] == 0).all()
    np.testing.assert_allclose(A.sum(axis=-1), 1.0, atol=1e-12)
    S_raw, _, _ = widgets.mask_state(16, True, False, 7)
    np.testing.assert_allclose(S[np.tril_indices(16)], S_raw[np.tril_indices(16)] / 4, rtol=1e-6)
    with pytest.raises(ValueError, match="Argumen 'T'.*33"):
        widgets.mask_state(33, True, True, 0)
    with pytest.raises(ValueError, match="Argumen 'row'.*8"):
        widgets.mask_state(8, True, True, 8)


@pytest.mark.slow
def test_mask_kinds_padding_window_prefix():
    from atensi import masks

    ex = widgets.mask_explorer(T=8, row=7)
    png, values, readout = drive(ex, "kind", "padding")
    assert values["kind"] == "padding" and values["L"] == 6
    assert values["seen"] == [] and "tidak melihat apa pun" in readout
    assert values["row_sums"][6:].max() == 0 and values["row_sums"][:6].min() > 0.999
    png2, values, readout = drive(ex, "kind", "jendela")
    assert png2 != png and values["seen"] == [5, 6, 7] and "w = 3" in readout
    _, values, readout = drive(ex, "kind", "prefix")
    assert values["p"] == 4 and values["seen"] == list(range(8))
    _, values, readout = drive(ex, "row", 1)
    assert values["seen"] == [0, 1, 2, 3] and "awalan" in readout
    for kind in widgets.MASK_KINDS:
        S, A, _ = widgets.mask_state(12, True, True, 0, kind=kind)
        visible = widgets.mask_visible(kind, 12)
        assert np.array_equal(np.isfinite(S), visible)
        assert (A[~visible] == 0).all() and not np.isnan(A).any()
    assert np.array_equal(widgets.mask_visible("kausal", 5), masks.causal(5))
    with pytest.raises(ValueError, match="Argumen 'kind'.*'segitiga'"):
        widgets.mask_state(8, True, True, 0, kind="segitiga")


# ------------------------------------------------------------------ live 3


@pytest.mark.slow
def test_row_explorer_mixes_v_with_the_softmax_weights():
    ex = widgets.row_explorer(row=4, temperature=1.0)
    assert set(ex.controls) == {"row", "temperature"}
    previous = None
    for i in range(widgets.ROW_T):
        png, values, readout = drive(ex, "row", i)
        assert png != previous
        previous = png
        s, w, V, out, _limits, _ = widgets.row_state(i, 1.0)
        np.testing.assert_allclose(values["weights"], w)
        assert w.sum() == pytest.approx(1.0)
        assert (w[i + 1:] == 0).all() and np.isneginf(s[i + 1:]).all()
        np.testing.assert_allclose(values["output"], w @ V)
        assert f"<b>keluaran[{i}]</b>" in readout
        assert f"({f(out[0], 2)}; {f(out[1], 2)})" in readout
    _, values, _ = drive(ex, "row", 0)
    np.testing.assert_allclose(values["weights"][0], 1.0)  # row 0 only sees itself
    drive(ex, "row", 4)
    _, cold, readout = drive(ex, "temperature", 0.1)
    assert cold["p_max"] > 0.99 and "Suhu 0,10" in readout
    _, hot, _ = drive(ex, "temperature", 10.0)
    assert hot["entropy"] == pytest.approx(math.log(5), abs=0.05)  # nearly uniform over 0..4
    assert cold["entropy"] < values["entropy"] < hot["entropy"] or cold["entropy"] < hot["entropy"]
    with pytest.raises(ValueError, match="Argumen 'temperature'"):
        widgets.row_state(1, 0.0)


@pytest.mark.slow
def test_live_explorers_record_redraw_time():
    ex = widgets.mask_explorer()
    ex.cache.cache_clear()
    drive(ex, "T", 12)
    assert ex.render_ms is not None and ex.render_ms > 0
    assert "atensi-live" in ex._dom_classes


@pytest.mark.slow
def test_redraw_benchmark_prints_its_table():
    """The 200 ms redraw target is measured by scripts/bench_explorers.py
    (a benchmark, not a timed test); here only that it runs and reports."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "bench_explorers", Path(__file__).resolve().parents[1] / "scripts" / "bench_explorers.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    wall, cpu = bench.measure("mask")
    assert len(wall) == len(bench.MOVES["mask"][1]) and min(wall) > 0 and min(cpu) >= 0
    text = bench.table()
    assert all(name in text for name in bench.MOVES)


# ------------------------------------------------------------------ choice


@pytest.mark.slow
def test_environment_variable_picks_live_or_static(monkeypatch):
    import ipywidgets

    monkeypatch.delenv(widgets.ENV_VAR, raising=False)
    assert isinstance(widgets.sharpness(), ipywidgets.VBox)
    monkeypatch.setenv(widgets.ENV_VAR, "1")
    assert isinstance(widgets.sharpness(), widgets.StaticExplorer)
    assert isinstance(widgets.explorer("ketajaman", mode="live"), ipywidgets.VBox)
    monkeypatch.setenv(widgets.ENV_VAR, "0")
    assert isinstance(widgets.sharpness(), ipywidgets.VBox)
    assert isinstance(widgets.explorer("ketajaman", mode="static"), widgets.StaticExplorer)
    with pytest.raises(ValueError, match="Argumen 'name'.*'softmax'"):
        widgets.explorer("softmax")
    with pytest.raises(ValueError, match="Argumen 'mode'"):
        widgets.explorer("mask", mode="frozen")


@pytest.mark.slow
def test_book_mode_never_creates_an_ipywidget():
    """Frozen widget state in the book comes from widgets created in the kernel."""
    code = ("import sys; from atensi import widgets; e = widgets.sharpness(); "
            "html = e._repr_html_(); print(type(e).__name__, 'ipywidgets' in sys.modules)")
    env = dict(os.environ, ATENSI_BOOK="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["StaticExplorer", "False"]


def test_sphinx_extension_sets_book_mode(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "_ext"))
    from atensi_book import explorers

    monkeypatch.delenv(widgets.ENV_VAR, raising=False)
    explorers.book_mode()
    assert os.environ[widgets.ENV_VAR] == "1"
    monkeypatch.setenv(widgets.ENV_VAR, "0")
    explorers.book_mode()
    assert os.environ[widgets.ENV_VAR] == "0"


# ------------------------------------------------------------------ static


@pytest.fixture(scope="module")
def statics():
    return {"ketajaman": widgets.sharpness_static(), "mask": widgets.mask_static(),
            "baris": widgets.row_static()}


def payload(html):
    match = re.search(r'<script type="application/json" class="atensi-data">(.*?)</script>',
                      html, re.S)
    return json.loads(match.group(1).replace("<\\/", "</"))


@pytest.mark.parametrize("name, frames, images", [
    ("ketajaman", 26, 26),
    ("mask", 4 * sum(widgets.MASK_STATIC_T) + 3 * 4 * sum(widgets.MASK_STATIC_T_KINDS),
     4 * len(widgets.MASK_STATIC_T) + 3 * 2 * len(widgets.MASK_STATIC_T_KINDS)),
    ("baris", 8 * len(widgets.TEMPERATURES), 8 * len(widgets.TEMPERATURES)),
])
@pytest.mark.slow
def test_static_twin_is_self_contained_and_small(statics, name, frames, images):
    ex = statics[name]
    html = ex._repr_html_()
    assert html.startswith(f'<div class="atensi-explorer" id="{ex.element_id}" '
                           f'data-explorer="{name}">')
    assert ex.nbytes == len(html.encode()) <= MAX_BYTES
    assert len(ex.frames) == frames and len(ex.images) == images
    # Nothing is fetched: no URL, no stylesheet link, no widget state.
    assert not re.search(r"https?://|<link|<iframe|src=\"(?!data:)", html)
    assert "widget-state" not in html and "widget-view" not in html
    data = payload(html)
    assert len(data["images"]) == images
    for key, (image, text, boxes) in data["frames"].items():
        assert 0 <= image < images and text
        assert len(key.split(",")) == len(ex.controls)
    start = ",".join(str(c.start) for c in ex.controls)
    shown = re.search(r'<img class="atensi-frame"[^>]*src="data:image/png;base64,([^"]+)"', html)
    assert shown.group(1) == data["images"][data["frames"][start][0]]
    assert base64.b64decode(shown.group(1)).startswith(b"\x89PNG")


@pytest.mark.slow
def test_static_twin_text_matches_the_live_readout(statics):
    """Both faces of an explorer say the same numbers for the same state."""
    ex = widgets.sharpness_explorer()
    for d_index, scale in [(0, 0), (6, 0), (12, 0), (12, 1)]:
        drive(ex, "scale", bool(scale))
        drive(ex, "d_k", widgets.D_K_VALUES[d_index])
        assert statics["ketajaman"].frames[d_index, scale][1] in ex.readout.value
    ex = widgets.mask_explorer()
    for T, masked, scaled, row in [(4, 1, 1, 3), (16, 0, 1, 9), (32, 1, 0, 31)]:
        for key, value in (("T", T), ("masked", bool(masked)), ("scaled", bool(scaled)),
                           ("row", row)):
            drive(ex, key, value)
        key = (0, widgets.MASK_STATIC_T.index(T), masked, scaled, row)
        assert statics["mask"].frames[key][1] in ex.readout.value
    for kind, T, row in [("padding", 8, 7), ("jendela", 16, 9), ("prefix", 8, 1)]:
        for key, value in (("kind", kind), ("T", T), ("masked", True), ("scaled", True),
                           ("row", row)):
            drive(ex, key, value)
        key = (widgets.MASK_KINDS.index(kind), widgets.MASK_STATIC_T.index(T), 1, 1, row)
        assert statics["mask"].frames[key][1] in ex.readout.value
    ex = widgets.row_explorer()
    last = len(widgets.TEMPERATURES) - 1
    for row, t_index in [(0, 0), (4, widgets.TEMPERATURES.index(1.0)), (7, last)]:
        drive(ex, "row", row)
        drive(ex, "temperature", widgets.TEMPERATURES[t_index])
        assert statics["baris"].frames[row, t_index][1] in ex.readout.value


def test_static_mask_rows_exist_only_inside_the_matrix(statics):
    frames = statics["mask"].frames
    for t_index, T in enumerate(widgets.MASK_STATIC_T):
        rows = sorted(k[4] for k in frames if k[:4] == (0, t_index, 1, 1))
        assert rows == list(range(T))
        boxes = [frames[0, t_index, 1, 1, i][2] for i in range(T)]
        tops = [b[0][1] for b in boxes]
        assert tops == sorted(tops) and len(boxes[0]) == 2  # outline on both heatmaps


def test_two_instances_get_different_ids(statics):
    again = widgets.sharpness_static()
    assert again.element_id != statics["ketajaman"].element_id
    assert again.images == statics["ketajaman"].images


@pytest.mark.parametrize("call", [
    lambda seed: widgets.sharpness_state(64, True, seed=seed),
    lambda seed: widgets.mask_state(8, True, True, 3, seed=seed),
    lambda seed: widgets.row_state(2, 1.0, seed=seed),
])
@pytest.mark.parametrize("seed, error", [(-1, ValueError), (1.5, TypeError), ("0", TypeError),
                                         (True, TypeError)])
def test_seed_is_checked_by_name(call, seed, error):
    with pytest.raises(error, match="'seed'"):
        call(seed)
