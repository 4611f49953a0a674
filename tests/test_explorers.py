"""atensi.explorers: the framework and the sharpness, mask and row explorers: live
faces driven from code, static twins, live/static choice, the JavaScript lint."""

import base64
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from atensi import measures, style
from atensi.explorers import framework, mask, sharpness
from atensi.explorers import row as row_explorer
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
    ex = sharpness.live(d_k=1, scale=False)
    assert set(ex.controls) == {"d_k", "scale"}
    assert [value for _label, value in ex.controls["d_k"].options] == [2**e for e in range(13)]
    assert ex.controls["scale"].description == "bagi dengan √d_k"
    results = {}
    for scale in (False, True):
        drive(ex, "scale", scale)
        previous = None
        for d_k in sharpness.D_K_VALUES:
            png, values, readout = drive(ex, "d_k", d_k)
            assert values["d_k"] == d_k and values["scale"] is scale
            assert png.startswith(b"\x89PNG") and png != previous  # the picture changed
            previous = png
            assert f"d_k = {d_k}" in readout
            for name in ("p_max", "entropy", "jacobian", "mean_p_max"):
                assert f(values[name], 3) in readout
            results[scale, d_k] = dict(values)
    raw = [results[False, d]["mean_p_max"] for d in sharpness.D_K_VALUES]
    scaled = [results[True, d]["mean_p_max"] for d in sharpness.D_K_VALUES]
    # Without scaling: from near-uniform (1/16 would be 0.06) to one-hot.
    assert raw[0] < 0.3 and raw[-1] > 0.97
    assert all(raw[k + 2] > raw[k] for k in range(len(raw) - 2))  # every 4x in d_k
    assert all(b > a - 0.03 for a, b in zip(raw, raw[1:]))
    # With scaling: flat.
    assert max(scaled) - min(scaled) < 0.05 and all(0.2 < p < 0.3 for p in scaled)
    # Spread of the dot products: √d_k without, 1 with scaling.
    for d_k in sharpness.D_K_VALUES:
        assert results[False, d_k]["spread"] == pytest.approx(math.sqrt(d_k), rel=0.1)
        assert results[True, d_k]["spread"] == pytest.approx(1.0, rel=0.1)
    # Gradient through softmax vanishes without scaling only.
    assert results[False, 4096]["mean_jacobian"] < 0.1 * results[False, 1]["mean_jacobian"]
    assert results[True, 4096]["mean_jacobian"] > 0.9 * results[True, 64]["mean_jacobian"]
    assert results[False, 4096]["mean_entropy"] < 0.1 < results[True, 4096]["mean_entropy"]


def test_sharpness_readouts_are_the_drawn_row():
    dots, values = sharpness.state(256, scale=True)
    assert dots.shape == (sharpness.ROWS, sharpness.KEYS)
    p = softmax(dots[0])
    assert values["p_max"] == pytest.approx(p.max())
    assert values["entropy"] == pytest.approx(measures.entropy(p))
    assert values["jacobian"] == pytest.approx(measures.jacobian_norm(p))
    assert values["mean_p_max"] == pytest.approx(softmax(dots).max(axis=-1).mean())
    raw, _ = sharpness.state(256, scale=False)
    np.testing.assert_allclose(dots, raw / 16)
    with pytest.raises(ValueError, match="Argumen 'd_k'.*100"):
        sharpness.state(100, scale=False)


# ------------------------------------------------------------------ live 2


@pytest.mark.slow
def test_mask_explorer_shows_what_row_i_sees():
    ex = mask.live(T=8, masked=True, scaled=True, row=3)
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
    S, A, values = mask.state(16, True, True, 7)
    assert np.isneginf(S[np.triu_indices(16, 1)]).all()
    assert (A[np.triu_indices(16, 1)] == 0).all()
    np.testing.assert_allclose(A.sum(axis=-1), 1.0, atol=1e-12)
    S_raw, _, _ = mask.state(16, True, False, 7)
    np.testing.assert_allclose(S[np.tril_indices(16)], S_raw[np.tril_indices(16)] / 4, rtol=1e-6)
    with pytest.raises(ValueError, match="Argumen 'T'.*33"):
        mask.state(33, True, True, 0)
    with pytest.raises(ValueError, match="Argumen 'row'.*8"):
        mask.state(8, True, True, 8)


@pytest.mark.slow
def test_mask_kinds_padding_window_prefix():
    from atensi import masks

    ex = mask.live(T=8, row=7)
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
    for kind in mask.KINDS:
        S, A, _ = mask.state(12, True, True, 0, kind=kind)
        visible = mask.visible(kind, 12)
        assert np.array_equal(np.isfinite(S), visible)
        assert (A[~visible] == 0).all() and not np.isnan(A).any()
    assert np.array_equal(mask.visible("kausal", 5), masks.causal(5))
    with pytest.raises(ValueError, match="Argumen 'kind'.*'segitiga'"):
        mask.state(8, True, True, 0, kind="segitiga")


# ------------------------------------------------------------------ live 3


@pytest.mark.slow
def test_row_explorer_mixes_v_with_the_softmax_weights():
    ex = row_explorer.live(row=4, temperature=1.0)
    assert set(ex.controls) == {"row", "temperature"}
    previous = None
    for i in range(row_explorer.T):
        png, values, readout = drive(ex, "row", i)
        assert png != previous
        previous = png
        s, w, V, out, _limits, _ = row_explorer.state(i, 1.0)
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
        row_explorer.state(1, 0.0)


@pytest.mark.slow
def test_live_explorers_record_redraw_time():
    ex = mask.live()
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

    monkeypatch.delenv(framework.ENV_VAR, raising=False)
    assert isinstance(sharpness.explorer(), ipywidgets.VBox)
    monkeypatch.setenv(framework.ENV_VAR, "1")
    assert isinstance(sharpness.explorer(), framework.StaticExplorer)
    assert isinstance(sharpness.explorer(mode="live"), ipywidgets.VBox)
    monkeypatch.setenv(framework.ENV_VAR, "0")
    assert isinstance(sharpness.explorer(), ipywidgets.VBox)
    assert isinstance(sharpness.explorer(mode="static"), framework.StaticExplorer)
    with pytest.raises(TypeError, match="tidak dikenal: dk.*d_k, scale"):
        sharpness.explorer(dk=64)
    with pytest.raises(ValueError, match="Argumen 'mode'"):
        mask.explorer(mode="frozen")


@pytest.mark.slow
def test_book_mode_never_creates_an_ipywidget():
    """Frozen widget state in the book comes from widgets created in the kernel."""
    code = ("import sys; from atensi.explorers import sharpness; e = sharpness.explorer(); "
            "html = e._repr_html_(); print(type(e).__name__, 'ipywidgets' in sys.modules)")
    env = dict(os.environ, ATENSI_BOOK="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["StaticExplorer", "False"]


def test_sphinx_extension_sets_book_mode(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "_ext"))
    from atensi_book import explorers

    monkeypatch.delenv(framework.ENV_VAR, raising=False)
    explorers.book_mode()
    assert os.environ[framework.ENV_VAR] == "1"
    monkeypatch.setenv(framework.ENV_VAR, "0")
    explorers.book_mode()
    assert os.environ[framework.ENV_VAR] == "0"


# ------------------------------------------------------------------ static


@pytest.fixture(scope="module")
def statics():
    return {"ketajaman": sharpness.static(), "mask": mask.static(),
            "baris": row_explorer.static()}


def payload(html):
    match = re.search(r'<script type="application/json" class="atensi-data">(.*?)</script>',
                      html, re.S)
    return json.loads(match.group(1).replace("<\\/", "</"))


@pytest.mark.parametrize("name, frames, images", [
    ("ketajaman", 26, 26),
    ("mask", 4 * sum(mask.BOOK_T) + 3 * 4 * sum(mask.BOOK_T_KINDS),
     4 * len(mask.BOOK_T) + 3 * 2 * len(mask.BOOK_T_KINDS)),
    ("baris", 8 * len(row_explorer.TEMPERATURES), 8 * len(row_explorer.TEMPERATURES)),
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
    ex = sharpness.live()
    for d_index, scale in [(0, 0), (6, 0), (12, 0), (12, 1)]:
        drive(ex, "scale", bool(scale))
        drive(ex, "d_k", sharpness.D_K_VALUES[d_index])
        assert statics["ketajaman"].frames[d_index, scale][1] in ex.readout.value
    ex = mask.live()
    for T, masked, scaled, row in [(4, 1, 1, 3), (16, 0, 1, 9), (32, 1, 0, 31)]:
        for key, value in (("T", T), ("masked", bool(masked)), ("scaled", bool(scaled)),
                           ("row", row)):
            drive(ex, key, value)
        key = (0, mask.BOOK_T.index(T), masked, scaled, row)
        assert statics["mask"].frames[key][1] in ex.readout.value
    for kind, T, row in [("padding", 8, 7), ("jendela", 16, 9), ("prefix", 8, 1)]:
        for key, value in (("kind", kind), ("T", T), ("masked", True), ("scaled", True),
                           ("row", row)):
            drive(ex, key, value)
        key = (mask.KINDS.index(kind), mask.BOOK_T.index(T), 1, 1, row)
        assert statics["mask"].frames[key][1] in ex.readout.value
    ex = row_explorer.live()
    last = len(row_explorer.TEMPERATURES) - 1
    for row, t_index in [(0, 0), (4, row_explorer.TEMPERATURES.index(1.0)), (7, last)]:
        drive(ex, "row", row)
        drive(ex, "temperature", row_explorer.TEMPERATURES[t_index])
        assert statics["baris"].frames[row, t_index][1] in ex.readout.value


@pytest.mark.slow  # draws every frame of three explorers (the statics fixture)
def test_static_mask_rows_exist_only_inside_the_matrix(statics):
    frames = statics["mask"].frames
    for t_index, T in enumerate(mask.BOOK_T):
        rows = sorted(k[4] for k in frames if k[:4] == (0, t_index, 1, 1))
        assert rows == list(range(T))
        boxes = [frames[0, t_index, 1, 1, i][2] for i in range(T)]
        tops = [b[0][1] for b in boxes]
        assert tops == sorted(tops) and len(boxes[0]) == 2  # outline on both heatmaps


@pytest.mark.slow  # draws every frame of three explorers (the statics fixture)
def test_two_instances_get_different_ids(statics):
    again = sharpness.static()
    assert again.element_id != statics["ketajaman"].element_id
    assert again.images == statics["ketajaman"].images


@pytest.mark.parametrize("call", [
    lambda seed: sharpness.state(64, True, seed=seed),
    lambda seed: mask.state(8, True, True, 3, seed=seed),
    lambda seed: row_explorer.state(2, 1.0, seed=seed),
])
@pytest.mark.parametrize("seed, error", [(-1, ValueError), (1.5, TypeError), ("0", TypeError),
                                         (True, TypeError)])
def test_seed_is_checked_by_name(call, seed, error):
    with pytest.raises(error, match="'seed'"):
        call(seed)


# ------------------------------------------------------------------ framework


def tiny_explorer(**extra):
    """An explorer whose pictures are tiny PNG stand-ins: no matplotlib, fast."""
    def frame(n, flag):
        return (b"\x89PNG" + bytes([n, flag])), f"<p>n = {n}, flag = {flag}</p>", []

    return framework.Explorer(
        name="uji", title="Uji", alt="gambar uji",
        controls=(framework.Range("n", "angka n", 0, 5, book=(0, 2, 4), shown="n = {}"),
                  framework.Toggle("flag", "bendera")),
        render=lambda n, flag: None, frame=frame, defaults={"n": 2, "flag": False}, **extra)


def test_one_declaration_gives_both_faces_their_ranges():
    ex = tiny_explorer()
    twin = ex.static()
    assert [(c.key, c.kind, c.values) for c in twin.controls] == [
        ("n", "range", (0, 2, 4)), ("flag", "checkbox", (False, True))]
    assert twin.controls[0].shown == ("n = 0", "n = 2", "n = 4")
    assert len(twin.frames) == 6 and (1, 0) in twin.frames
    # The live face accepts every step, the book only what it prerendered.
    assert ex.start({"n": 5}, static=False)["n"] == 5
    with pytest.raises(ValueError, match="Argumen 'n' harus salah satu dari 0, 2, 4"):
        ex.static(n=5)
    with pytest.raises(ValueError, match="Argumen 'n' harus bilangan bulat 0 sampai 5"):
        ex.start({"n": 6}, static=False)
    with pytest.raises(TypeError, match="'flag'"):
        ex.start({"flag": "ya"}, static=False)


def test_explorers_that_share_a_name_never_share_their_pictures():
    def other_frame(n, flag):
        return b"\x89PNG lain" + bytes([n, flag]), f"<p>lain {n}</p>", []

    first = tiny_explorer().static()
    other = framework.Explorer(
        name="uji", title="Uji", alt="gambar uji", controls=tiny_explorer().controls,
        render=lambda n, flag: None, frame=other_frame, defaults={"n": 2, "flag": False}).static()
    assert set(other.images).isdisjoint(first.images)
    assert tiny_explorer().static().images == first.images  # the same drawing: drawn once


def test_limit_and_in_book_leave_out_frames_that_do_not_exist():
    ex = framework.Explorer(
        name="uji-batas", title="Uji", alt="gambar uji",
        controls=(framework.Range("T", "T", 1, 4), framework.Range("i", "i", 0, 3,
                                                                   limit=lambda v: v["T"] - 1)),
        render=lambda T, i: None, frame=lambda T, i: (bytes([T, i]), f"{T},{i}", []),
        in_book=lambda T, i: T != 3, defaults={"T": 2, "i": 1})
    twin = ex.static()
    assert sorted(twin.frames) == [(0, 0), (1, 0), (1, 1), (3, 0), (3, 1), (3, 2), (3, 3)]
    with pytest.raises(ValueError, match="Argumen 'i' harus salah satu dari 0, 1,"):
        ex.static(T=2, i=2)
    # The HTML offers only the rows that exist for the start T.
    assert twin.options([1, 1], 1) == [0, 1]
    assert 'max="1" step="1" value="1" data-control="i"' in twin.to_html()


def test_live_face_follows_the_declaration():
    pytest.importorskip("ipywidgets")
    ex = mask.live(T=8, row=3)
    assert ex.controls["kind"].description == "jenis mask"
    assert ex.controls["row"].max == 7 and ex.controls["T"].max == mask.T_MAX
    cold = row_explorer.live()
    assert (cold.controls["temperature"].min, cold.controls["temperature"].max) == (-1, 1)


def test_a_choice_of_buttons_is_buttons_in_both_faces():
    """The mask kind (named options, no order) is a row of buttons live and a radio
    group in the book; an ordered choice (d_k) stays a slider."""
    ipywidgets = pytest.importorskip("ipywidgets")
    kind = mask.live(T=8, row=3).controls["kind"]
    assert isinstance(kind, ipywidgets.ToggleButtons)
    assert [label for label, _ in kind.options] == [mask.KIND_LABELS[k] for k in mask.KINDS]
    assert kind.value == "kausal"
    assert isinstance(sharpness.live().controls["d_k"], ipywidgets.SelectionSlider)
    twin = mask.static(kind="jendela", T=8)
    assert [(c.key, c.kind) for c in twin.controls][:2] == [("kind", "choice"), ("T", "range")]
    page = twin.to_html()
    group = re.search(r'<fieldset class="atensi-control atensi-choice" data-control="kind">'
                      r"<legend>jenis mask</legend>(.*?)</fieldset>", page)
    assert group, "jenis mask bukan kelompok tombol"
    radios = re.findall(r'<input type="radio" name="([^"]+)" value="(\d+)"( checked)?', group[1])
    assert [int(v) for _, v, _ in radios] == list(range(len(mask.KINDS)))
    assert len({name for name, _, _ in radios}) == 1  # one group: one Tab stop
    assert [bool(c) for _, _, c in radios] == [k == "jendela" for k in mask.KINDS]
    assert re.findall(r"<span>([^<]*)</span></label>", group[1]) == [
        mask.KIND_LABELS[k] for k in mask.KINDS]
    assert 'data-control="kind" aria-label' not in page  # no slider for it
    # Two twins on one page: their groups must not share a name.
    assert twin.element_id != mask.static(kind="jendela", T=8).element_id
    with pytest.raises(ValueError, match="menu=True atau buttons=True"):
        framework.Choice("x", "x", (1, 2), menu=True, buttons=True)


def test_a_value_without_a_frame_switches_its_button_off():
    ex = framework.Explorer(
        name="uji-tombol", title="Uji", alt="gambar uji",
        controls=(framework.Range("T", "T", 1, 2),
                  framework.Choice("c", "pilihan", ("a", "b", "c"), buttons=True)),
        render=lambda T, c: None, frame=lambda T, c: (f"{T}{c}".encode(), f"{T}{c}", []),
        in_book=lambda T, c: T == 2 or c != "c", defaults={"T": 1, "c": "a"})
    page = ex.static().to_html()
    assert re.findall(r'type="radio" name="[^"]+" value="(\d)"( checked)?( disabled)?', page) == [
        ("0", " checked", ""), ("1", "", ""), ("2", "", " disabled")]


def test_guess_first_in_the_sharpness_explorer_comes_from_its_numbers():
    # The right option is what the readouts say when the division is switched.
    for d_k, scale in [(1, False), (64, False), (64, True), (4096, False)]:
        before = sharpness.state(d_k, scale)[1]["mean_p_max"]
        after = sharpness.state(d_k, not scale)[1]["mean_p_max"]
        expected = "hampir tetap" if abs(after - before) < sharpness.STEADY else (
            "naik" if after > before else "turun")
        assert sharpness.GUESS_CHOICES[sharpness.guess_answer(d_k, scale)] == expected
        why = sharpness.guess_why(d_k, scale)
        assert style.format_number(after, 2) in why and style.format_number(before, 2) in why
    assert sharpness.GUESS_CHOICES[sharpness.guess_answer(1, False)] == "hampir tetap"
    assert sharpness.GUESS_CHOICES[sharpness.guess_answer(64, False)] == "turun"


def test_guess_first_keeps_its_answer_out_of_the_page_source():
    twin = sharpness.static(d_k=64, scale=False)
    page = twin.to_html()
    why = sharpness.guess_why(64, False)
    data = json.loads(re.search(r'class="atensi-data">(.*?)</script>', page, re.S)[1])
    guess = data["guess"]
    assert why not in page
    # No verdict outside the scripts (static.js holds the words, not the answer).
    assert "Tepat" not in re.sub(r"<script.*?</script>", "", page, flags=re.S)
    assert base64.b64decode(guess["why"]).decode("utf-8") == why
    right = sharpness.guess_answer(64, False)
    matches = [n for n in range(len(guess["choices"]))
               if framework.answer_hash(guess["salt"], n) == guess["hash"]]
    assert matches == [right]
    # The reveal is the frame with the division switched on, as a state of indices.
    keys = [c.key for c in twin.controls]
    assert guess["reveal"][keys.index("scale")] == 1
    assert guess["reveal"][keys.index("d_k")] == sharpness.D_K_VALUES.index(64)
    assert ",".join(map(str, guess["reveal"])) in data["frames"]
    assert '<button type="button" data-guess="1">turun</button>' in page


def test_guess_first_in_the_live_face_moves_to_the_outcome():
    pytest.importorskip("ipywidgets")
    ex = sharpness.live(d_k=256, scale=False)
    assert ex.controls["scale"].value is False
    wrong = sharpness.GUESS_CHOICES.index("naik")
    ex.guess_buttons[wrong].click()
    assert ex.guessed == wrong and ex.controls["scale"].value is True
    text = ex.guess_panel.children[-1].value
    assert "Belum tepat: jawabannya «turun», bukan «naik»." in text
    assert all(b.disabled for b in ex.guess_buttons)
    assert ex.values["scale"] is True  # the redraw followed the control
    right = sharpness.live(d_k=256, scale=False)
    right.guess_buttons[sharpness.GUESS_CHOICES.index("turun")].click()
    assert right.guess_panel.children[-1].value.startswith("<p class='atensi-verdict'>Tepat.")


def test_javascript_files_pass_node_check(tmp_path):
    """Every JavaScript file of the package parses (node --check); modules as modules."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node tidak terpasang")
    files = sorted(framework.ASSETS.glob("*.js"))
    assert {p.name for p in files} >= {"static.js", "playground.js"}
    for path in files:
        text = path.read_text(encoding="utf-8")
        module = re.search(r"^export ", text, re.M) is not None
        target = tmp_path / (path.stem + (".mjs" if module else ".cjs"))
        target.write_text(text, encoding="utf-8")
        run = subprocess.run([node, "--check", str(target)], capture_output=True, text=True)
        assert run.returncode == 0, f"{path.name}: {run.stderr}"
    broken = tmp_path / "rusak.cjs"
    broken.write_text("(function () {", encoding="utf-8")
    assert subprocess.run([node, "--check", str(broken)], capture_output=True).returncode != 0


def test_assets_may_not_close_their_element(monkeypatch, tmp_path):
    (tmp_path / "x.js").write_text("var a = '</script>';", encoding="utf-8")
    monkeypatch.setattr(framework, "ASSETS", tmp_path)
    with pytest.raises(ValueError, match="x.js tidak boleh berisi"):
        framework.asset("x.js")


def test_book_moves_pictures_and_frame_table_into_files(monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "_ext"))
    from atensi_book import explorers

    twin = tiny_explorer().static()
    page = tmp_path / "chapters" / "bab.html"
    page.parent.mkdir()
    html = twin.to_html()
    out = explorers.explorer_frames_to_files(html, page, tmp_path)
    assert "base64,iVBOR" not in out and len(out) < len(html)
    data = payload(out)
    assert "frames" not in data and "images" not in data
    assert data["controls"] == payload(html)["controls"] and data["options"] == [[0, 1, 2], [0, 1]]
    script = (page.parent / data["src"]).resolve()
    assert script.parent == (tmp_path / explorers.FRAMES_DIR).resolve()
    text = script.read_text(encoding="utf-8")
    prefix = f'(window.atensiExplorerData = window.atensiExplorerData || {{}})["{data["id"]}"] = '
    assert text.startswith(prefix) and text.endswith(";\n")
    table = json.loads(text[len(prefix):-2].replace("<\\/", "</"))
    assert table["frames"] == payload(html)["frames"]
    pictures = [(page.parent / u).resolve().read_bytes() for u in table["urls"]]
    assert pictures == twin.images
    first = table["urls"][twin.frames[1, 0][0]]
    assert f'src="{first}"' in out  # the first picture still shows before any script
    # Named by content: a second page with the same explorer shares the files.
    before = sorted((tmp_path / explorers.FRAMES_DIR).iterdir())
    again = explorers.explorer_frames_to_files(html, tmp_path / "chapters" / "lain.html", tmp_path)
    assert payload(again)["src"] == data["src"]
    assert sorted((tmp_path / explorers.FRAMES_DIR).iterdir()) == before


# ------------------------------------------------------------------ the one list


def test_the_list_holds_every_explorer_module_once():
    from atensi import explorers
    from explorer_list import ENTRIES

    modules = {p.stem for p in framework.ASSETS.glob("*.py")} - {"__init__", "framework"}
    assert set(explorers.MODULES) == modules
    assert set(explorers.MODULES.values()) <= {"frames", "page"}
    names = [e.name for e in ENTRIES]
    assert len(set(names)) == len(names)
    with pytest.raises(ValueError, match="tidak ada di atensi.explorers.MODULES: sharpness, mask"):
        explorers.load("tidak_ada")


def test_every_explorer_teaches_somewhere_and_chapters_use_only_listed_ones():
    from atensi import explorers
    from conftest import toc_pages
    from explorer_list import ENTRIES, imported_in

    assert all(e.chapters for e in ENTRIES), [e.module for e in ENTRIES if not e.chapters]
    for page in toc_pages():
        assert imported_in(page) <= set(explorers.MODULES), page


def test_faces_come_from_the_declaration():
    """Modules that declare EXPLORER get their three functions from it, and every
    live face carries the explorer's name."""
    from explorer_list import ENTRIES

    declared = [e.load() for e in ENTRIES if hasattr(e.load(), "EXPLORER")]
    assert len(declared) >= 5
    for module in declared:
        assert module.EXPLORER.name == module.NAME
        assert module.explorer.__module__ == module.__name__
        names = [c.name for c in module.EXPLORER.controls]
        assert ", ".join(names) in module.explorer.__doc__
        with pytest.raises(TypeError, match="Argumen tidak dikenal: tidak_ada"):
            module.live(tidak_ada=1)
    face = sharpness.live()
    assert {"atensi-live", "atensi-live-ketajaman"} <= set(face._dom_classes)
