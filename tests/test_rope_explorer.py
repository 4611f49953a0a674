"""atensi.explorers.rope and atensi.position_plots: the RoPE explorer (live and
static) and the figures of the Posisi chapter."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from atensi import example, position_plots, reference, style
from atensi.explorers import rope as RE

f = style.format_number


def test_state_is_the_reference_rope_score_of_the_running_example():
    Q, K, _ = example.qkv()
    q, k = Q[example.TOKENS.index("dia")], K[example.TOKENS.index("Budi")]
    for delta, shift in ((0, 0), (2, 3), (5, 11)):
        v = RE.state(delta, shift)
        assert (v["i"], v["j"]) == (shift + delta, shift)
        q_rot = reference.rope(q[None].astype(np.float64), offset=v["i"])[0]
        k_rot = reference.rope(k[None].astype(np.float64), offset=v["j"])[0]
        np.testing.assert_allclose(v["q_rot"], q_rot, atol=1e-12)
        assert v["score"] == pytest.approx(float(q_rot @ k_rot) / math.sqrt(2), abs=1e-12)
        # RoPE adds i - j radians to the angle between q and k.
        angle = math.atan2(q_rot[1], q_rot[0]) - math.atan2(k_rot[1], k_rot[0])
        start = math.atan2(q[1], q[0]) - math.atan2(k[1], k[0])
        assert math.cos(angle) == pytest.approx(math.cos(start + delta), abs=1e-12)
        assert v["plain_score"] == pytest.approx(float(q @ k) / math.sqrt(2))


def test_score_is_fixed_for_a_fixed_offset_and_changes_with_it():
    by_delta = {}
    for delta in RE.DELTAS:
        v = RE.state(delta, 0)
        assert np.ptp(v["scores"]) < 1e-9  # every shift c, the same score
        for c in (1, 7, 15):
            assert RE.state(delta, c)["score"] == pytest.approx(v["score"], abs=1e-9)
        by_delta[delta] = v["score"]
    assert len({round(s, 6) for s in by_delta.values()}) == len(RE.DELTAS)


@pytest.mark.parametrize("call, match", [
    (lambda: RE.state(8, 0), r"'delta' harus salah satu dari"),
    (lambda: RE.state(1.0, 0), r"'delta' harus salah satu dari"),
    (lambda: RE.state(1, -1), r"'shift' harus salah satu dari"),
    (lambda: RE.static(delta=5), r"'delta' harus salah satu dari 0, 1, 2, 3"),
    (lambda: RE.explorer(mode="kadang"), r"'mode' harus 'live', 'static' atau None"),
])
def test_bad_arguments_are_refused_in_indonesian(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.slow
def test_live_explorer_redraws_when_a_slider_moves():
    pytest.importorskip("ipywidgets")
    ex = RE.explorer(mode="live")
    assert set(ex.controls) == {"delta", "shift"}
    assert ex.controls["delta"].description == "selisih i − j"
    first = bytes(ex.image.value)
    ex.controls["shift"].value = 6
    assert ex.values["j"] == 6 and ex.values["i"] == 6 + ex.values["delta"]
    assert bytes(ex.image.value) != first  # the arrows turned
    score = ex.values["score"]
    ex.controls["delta"].value = 1
    assert ex.values["score"] != pytest.approx(score)
    assert f(ex.values["score"], 3) in ex.readout.value


@pytest.fixture(scope="module")
def static():
    return RE.explorer(mode="static")


@pytest.mark.slow
def test_static_twin_has_every_frame_and_its_readout(static):
    assert len(static.frames) == len(RE.BOOK_DELTAS) * len(RE.BOOK_SHIFTS)
    page = static.to_html()
    assert 'data-explorer="rope"' in page and page.count('type="range"') == 2
    assert "http" not in page.split("<script", 1)[0]  # no network for the picture
    data = json.loads(re.search(r'class="atensi-data">(.*?)</script>', page, re.S).group(1)
                      .replace("<\\/", "</"))
    for key, (image, text, _boxes) in static.frames.items():
        delta, shift = RE.BOOK_DELTAS[key[0]], RE.BOOK_SHIFTS[key[1]]
        v = RE.state(delta, shift, RE.BOOK_SHIFTS)
        assert f"<b>{f(v['score'], 3)}</b>" in text and f"i = {v['i']}" in text
        assert data["frames"][",".join(map(str, key))][1] == text
    # Pictures differ between frames (the vectors turn with c).
    assert len(static.images) == len(static.frames)
    assert static.nbytes < 600_000


def test_figures_take_data_and_return_figures():
    PE = reference.sinusoidal_positions(16, 8)
    unit = PE / np.linalg.norm(PE, axis=1, keepdims=True)
    fig = position_plots.encoding_figure(PE, unit @ unit.T, title="uji")
    assert len(fig.axes) == 4 and fig._suptitle.get_text() == "uji"
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["0", "4"]
    K = example.K.astype(np.float64)
    fig = position_plots.rotation_figure(K, reference.rope(K), example.TOKENS, title="putar")
    texts = [t.get_text() for t in fig.axes[0].texts]
    zero = [w for w, k in zip(example.TOKENS, K) if not k.any()]
    assert zero and set(example.TOKENS) - set(zero) <= set(texts)
    # Keys that are zero vectors share one label at the origin instead of overprinting.
    assert "di titik asal, vektor nol:\n" + ", ".join(zero) in texts and not set(zero) & set(texts)
    v = RE.state(2, 1)
    fig = position_plots.rope_plane_figure(
        v["q"], v["k"], v["q_rot"], v["k_rot"], i=v["i"], j=v["j"], shifts=v["shifts"],
        scores=v["scores"], shift=1, limit=RE.LIMIT, plain_score=v["plain_score"])
    titles = [ax.get_title(loc="left") for ax in fig.axes]
    assert any("i − j = 2" in t for t in titles)
    assert style.to_png(fig).startswith(b"\x89PNG")
