"""atensi.explorers.playground: the row formula, the live anywidget, the static twin, and
the twin in a real browser (dragged by mouse, finger and keyboard, compared
with NumPy), on a bare page and in the built book."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import numpy as np
import pytest

from atensi import example
from atensi.explorers import playground
from atensi.formatting import id_float

ROOT = Path(__file__).resolve().parents[1]
PHONE = {"width": 360, "height": 800}


def row64(Q, K, V, row, scale, mask):
    """The same row, written out in float64 with math only."""
    Q, K, V = (np.asarray(x, dtype=np.float64) for x in (Q, K, V))
    d = Q.shape[1]
    s = [float(Q[row] @ K[j]) / (math.sqrt(d) if scale else 1.0) for j in range(len(K))]
    m = [-math.inf if mask and j > row else x for j, x in enumerate(s)]
    top = max(m)
    e = [0.0 if x == -math.inf else math.exp(x - top) for x in m]
    w = [x / sum(e) for x in e]
    o = [sum(w[j] * V[j, c] for j in range(len(V))) for c in range(V.shape[1])]
    return {"scores": s, "masked": m, "weights": w, "output": o}


def from_json(result):
    """A result as the page gets it: −∞ is null."""
    return {key: [-math.inf if v is None else v for v in values] for key, values in result.items()}


def assert_close(result, want, tol):
    for key in ("scores", "masked", "weights", "output"):
        got = np.asarray(result[key], dtype=np.float64)
        ref = np.asarray(want[key], dtype=np.float64)
        assert not np.isnan(got).any(), key
        assert np.array_equal(np.isneginf(got), np.isneginf(ref)), key
        finite = np.isfinite(ref)
        assert np.allclose(got[finite], ref[finite], rtol=tol, atol=tol), (key, got, ref)


# ------------------------------------------------------------------ compute


@pytest.mark.parametrize("scale", [True, False])
@pytest.mark.parametrize("mask", [True, False])
@pytest.mark.parametrize("T, d_k, seed", [(4, 2, 0), (1, 2, 1), (7, 3, 2), (16, 8, 3)])
def test_compute_matches_float64_on_random_inputs(T, d_k, seed, scale, mask):
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal((T, d_k)).astype(np.float32) for _ in range(3))
    for row in range(T):
        got = playground.compute(Q, K, V, row=row, scale=scale, mask=mask)
        assert got["weights"].dtype == np.float32
        assert_close(got, row64(Q, K, V, row, scale, mask), 1e-5)
        assert got["weights"].sum() == pytest.approx(1.0, abs=1e-6)


def test_compute_on_the_running_example():
    Q, K, V = example.qkv()
    future = example.TOKENS.index("menoleh")
    masked = playground.compute(Q, K, V)
    assert np.isneginf(masked["masked"][future]) and masked["weights"][future] == 0
    assert masked["weights"].argmax() == example.REFERENT  # dia looks at Budi
    assert 0.1 < masked["weights"][example.OTHER_NAME] < masked["weights"][example.REFERENT]
    unmasked = playground.compute(Q, K, V, mask=False)
    assert unmasked["weights"][future] > 0
    raw = playground.compute(Q, K, V, scale=False)
    assert raw["weights"].max() > masked["weights"].max()  # without √d_k: sharper


@pytest.mark.parametrize("kwargs, words", [
    ({"row": 5}, ["'row'", "0 sampai 4"]),
    ({"row": 1.0}, ["'row'", "bilangan bulat"]),
    ({"scale": 1}, ["'scale'", "True atau False"]),
    ({"mask": "ya"}, ["'mask'", "True atau False"]),
])
def test_compute_refuses_bad_arguments_in_indonesian(kwargs, words):
    with pytest.raises((TypeError, ValueError)) as info:
        playground.compute(*example.qkv(), **kwargs)
    assert all(w in str(info.value) for w in words), str(info.value)


def test_compute_refuses_bad_arrays_in_indonesian():
    Q, K, V = example.qkv()
    with pytest.raises(ValueError, match="'Q' harus matriks 2 dimensi"):
        playground.compute(Q[None], K[None], V[None])
    Q[1, 0] = np.nan
    with pytest.raises(ValueError, match="'Q'"):
        playground.compute(Q, K, V)


def test_vectors_from_the_page_are_checked():
    Q, _K, _V = example.qkv()
    assert playground.check_vectors(Q.tolist(), "Q").dtype == np.float32
    with pytest.raises(ValueError, match="batas bidang"):
        playground.check_vectors([[0, 2], [1, 0], [9, 0], [1, 2], [0, 2]], "Q")
    with pytest.raises(ValueError, match=r"berbentuk \(5, 2\)"):
        playground.check_vectors([[0, 1]], "K")
    with pytest.raises(ValueError, match="pasangan angka"):
        playground.check_vectors([[0, 1], [2], [3, 0], [2, 1], [0, 0]], "K")
    with pytest.raises(ValueError, match="pasangan angka"):
        playground.check_vectors([["a", 1]] * 4, "Q")


# ------------------------------------------------------------------ live


def test_live_widget_computes_with_the_reference():
    widget = playground.live()
    Q, K, V = example.qkv()
    assert_close(from_json(widget.result), playground.compute(Q, K, V), 1e-7)
    Q[example.PRONOUN] = [-1.5, 2.25]
    widget.Q = Q.tolist()
    assert_close(from_json(widget.result), row64(Q, K, V, example.PRONOUN, True, True), 1e-6)
    K[0] = [0.5, 3.0]
    widget.K = K.tolist()
    widget.scale, widget.mask = False, False
    future = example.TOKENS.index("menoleh")
    assert widget.result["masked"][future] is not None
    assert_close(from_json(widget.result), row64(Q, K, V, example.PRONOUN, False, False), 1e-6)
    widget.mask = True
    assert widget.result["masked"][future] is None  # −∞ travels as null
    with pytest.raises(ValueError, match="batas bidang"):
        widget.Q = [[0, 2], [1, 0], [1, 0], [1, 7], [0, 2]]


def test_live_widget_loads_the_package_files():
    widget = playground.live(scale=False)
    assert widget.scale is False and widget.data["start"]["scale"] is False
    assert widget._esm == playground.JS_PATH.read_text(encoding="utf-8")
    assert "export default" in widget._esm
    assert widget._css == playground.CSS_PATH.read_text(encoding="utf-8")
    with pytest.raises(ValueError, match="'target'"):
        playground.live(target="Q9")


def test_mode_follows_the_book_variable(monkeypatch):
    monkeypatch.setenv("ATENSI_BOOK", "1")
    assert isinstance(playground.explorer(), playground.PlaygroundStatic)
    monkeypatch.setenv("ATENSI_BOOK", "0")
    assert not isinstance(playground.explorer(), playground.PlaygroundStatic)
    assert isinstance(playground.explorer("static"), playground.PlaygroundStatic)
    with pytest.raises(ValueError, match="'mode'"):
        playground.explorer("hidup")


def test_controls_are_declared_once_and_checked_by_the_framework():
    from atensi.explorers import framework

    assert isinstance(playground.EXPLORER, framework.Explorer)
    assert [c.name for c in playground.EXPLORER.controls] == ["scale", "mask", "target"]
    assert {"atensi-live", "atensi-live-playground"} <= set(playground.live()._dom_classes)
    with pytest.raises(ValueError) as info:
        playground.static(target="Q9")
    assert str(info.value) == (
        "Argumen 'target' harus salah satu dari ['Q3', 'K0', 'K1', 'K2', 'K3', 'K4'] "
        "(Q3 = query dia, Kj = key ke-j), tetapi yang diterima 'Q9'.")
    with pytest.raises(TypeError, match="'scale'.*True atau False"):
        playground.explorer("static", scale=1)
    twin = playground.static(mask=False, target="K0")
    assert twin.data["start"] == {"target": "K0", "scale": True, "mask": False}
    assert 'data-explorer="playground"' in twin.to_html()


# ------------------------------------------------------------------ static


def test_static_twin_carries_the_module_and_the_example():
    text = playground.static().to_html()
    assert playground.JS_PATH.read_text(encoding="utf-8") in text
    assert '<script type="module">' in text  # modules are always deferred
    raw = re.search(r'class="atensi-playground-data">(.*?)</script>', text, re.S).group(1)
    data = json.loads(raw)
    Q, K, V = example.qkv()
    assert data["Q"] == Q.tolist() and data["K"] == K.tolist() and data["V"] == V.tolist()
    assert data["row"] == example.PRONOUN and data["tokens"] == list(example.TOKENS)
    assert [t["id"] for t in data["targets"]] == ["Q3", "K0", "K1", "K2", "K3", "K4"]
    assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", text)  # nothing from the network


def test_package_data_ships_the_javascript_and_css():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["atensi"]
    package = ROOT / "src" / "atensi"
    for path in (playground.JS_PATH, playground.CSS_PATH):
        relative = path.relative_to(package).as_posix()
        assert any(fnmatch(relative, p) for p in patterns), relative


# ------------------------------------------------------------------ labels


def run_module(tmp_path, expression):
    """Evaluates ``expression`` with the module's exports as ``m`` in node; its JSON."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node tidak terpasang")
    module = tmp_path / "playground.mjs"
    module.write_text(playground.JS_PATH.read_text(encoding="utf-8"), encoding="utf-8")
    script = (f"import({json.dumps(module.as_uri())}).then((m) => "
              f"console.log(JSON.stringify({expression})));")
    run = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_points_on_one_spot_share_one_label(tmp_path):
    K = example.K.tolist()
    merged = run_module(tmp_path, f"m.mergeCoincident({json.dumps(K)}, {json.dumps(list(example.TOKENS))})")
    # Every token is named exactly once, and the labels left are on distinct spots.
    spots = {}
    for k, token in zip(K, example.TOKENS):
        spots.setdefault(tuple(k), []).append(token)
    assert sorted(t for t in merged if t) == sorted(", ".join(v) for v in spots.values())
    assert merged.count("") == len(K) - len(spots)
    shared = [names for names in spots.values() if len(names) > 1]
    assert shared, "contoh berjalan punya dua key di satu titik"
    points = [[1, 1], [0, 0], [1, 1], [1, 1], [0.05, 0]]
    assert run_module(tmp_path, f"m.mergeCoincident({points}, ['a', 'b', 'c', 'd', 'e'])") == [
        "a, c, d", "b", "", "", "e"]


def _apart(a, ya, b, yb):
    """Two text boxes (baseline y, height above it) share no area."""
    return (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
            or ya <= yb - b["height"] or yb <= ya - a["height"])


def test_labels_that_would_overlap_move_apart(tmp_path):
    rng = np.random.default_rng(4)
    line, top, bottom = 13, 0, 320

    def box(width):
        return {"x": float(rng.uniform(0, 60)), "y": float(rng.uniform(40, 80)),
                "width": width, "height": 11}

    cases = []
    for _ in range(30):  # crowded: up to eight labels and four points in a corner
        labels = [box(float(rng.choice([0, rng.uniform(20, 90)]))) for _ in range(rng.integers(2, 9))]
        marks = [box(10.0) for _ in range(rng.integers(0, 5))]
        cases.append((labels, marks))
    got = run_module(tmp_path, f"{json.dumps(cases)}.map(([b, marks]) => "
                               f"m.stackLabels(b, {line}, {top}, {bottom}, marks))")
    assert run_module(tmp_path, f"m.stackLabels({json.dumps(cases[0][0])}, {line}, {top}, {bottom})")[0] == \
        cases[0][0][0]["y"]  # without points in the way the first label keeps its place
    for (labels, marks), ys in zip(cases, got):
        shown = [(b, y) for b, y in zip(labels, ys) if b["width"] > 0]
        for n, (a, ya) in enumerate(shown):
            assert top <= ya - a["height"] and ya <= bottom
            lines = (ya - a["y"]) / line  # whole lines away from its point
            assert abs(lines - round(lines)) < 1e-9
            assert all(_apart(a, ya, m, m["y"]) for m in marks), (a, ya, marks)
            assert all(_apart(a, ya, b, yb) for b, yb in shown[n + 1:]), (a, ya, shown)


# ------------------------------------------------------------------ browser


def parse_id(text):
    """'−1.234,500' -> -1234.5; '−∞' -> -inf."""
    text = text.strip().replace("\u2212", "-")
    if text == "-\u221e":
        return -math.inf
    return float(text.replace(".", "").replace(",", "."))


SHOWN = """root => {
  const all = sel => Array.from(root.querySelectorAll(sel)).map(e => e.textContent);
  const one = sel => root.querySelector(sel).textContent;
  return {x: one('[data-pg=x]'), y: one('[data-pg=y]'), scores: all('[data-pg=score]'),
          masked: all('[data-pg=masked]'), weights: all('[data-pg=weight]'),
          output: [one('[data-pg=o0]'), one('[data-pg=o1]')],
          target: root.querySelector('[data-pg=target]').value,
          scale: root.querySelector('[data-pg=scale]').checked,
          mask: root.querySelector('[data-pg=mask]').checked};
}"""


def shown(root):
    face = root.evaluate(SHOWN)
    nums = {k: [parse_id(t) for t in face[k]] for k in ("scores", "masked", "weights", "output")}
    return face, parse_id(face["x"]), parse_id(face["y"]), nums


def check_against_numpy(root, Q, K):
    """The page's numbers equal atensi.reference for the coordinates the page shows.

    Returns the updated Q, K (the moved vector at its shown coordinates)."""
    face, x, y, nums = shown(root)
    Q, K = Q.copy(), K.copy()
    kind, n = face["target"][0], int(face["target"][1:])
    (Q if kind == "Q" else K)[n] = [x, y]
    want = playground.compute(Q, K, example.V, scale=face["scale"], mask=face["mask"])
    for key in ("scores", "masked", "weights", "output"):
        ref = np.asarray(want[key], dtype=np.float64)
        got = np.asarray(nums[key])
        assert np.array_equal(np.isneginf(got), np.isneginf(ref)), key
        finite = np.isfinite(ref)
        # Three decimals shown: within half a unit of the last place.
        assert np.all(np.abs(got[finite] - ref[finite]) <= 5e-4 + 1e-6), (key, got, ref)
    return Q, K, (x, y)


def plane_to_client(root, x, y):
    """Client pixels of a plane point (the JS draws on a 320-unit viewBox, 30 of margin)."""
    box = root.locator("svg.atensi-pg-plane").bounding_box()
    lo, hi = playground.LIMITS
    u = 30 + (x - lo) / (hi - lo) * 260
    v = 320 - 30 - (y - lo) / (hi - lo) * 260
    return box["x"] + u / 320 * box["width"], box["y"] + v / 320 * box["height"]


def handle_center(root):
    root.locator("svg.atensi-pg-plane").evaluate("el => el.scrollIntoView({block: 'center'})")
    box = root.locator("[data-pg=handle] .atensi-pg-ring").bounding_box()
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def ready(root):
    root.scroll_into_view_if_needed()
    root.locator("[data-pg=handle]").wait_for(state="attached", timeout=5000)
    assert root.get_attribute("data-ready") == "yes"


def mouse_drag(page, root, x, y):
    start = handle_center(root)
    end = plane_to_client(root, x, y)
    page.mouse.move(*start)
    page.mouse.down()
    for t in (0.25, 0.5, 0.75, 1.0):
        page.mouse.move(start[0] + t * (end[0] - start[0]), start[1] + t * (end[1] - start[1]))
    page.mouse.up()


def finger_drag(page, root, x, y):
    """A touch sequence through the Chrome DevTools protocol: pointer events of type touch."""
    cdp = page.context.new_cdp_session(page)
    start = handle_center(root)
    end = plane_to_client(root, x, y)
    scroll_before = page.evaluate("() => window.scrollY")

    def touch(kind, point):
        points = [] if kind == "touchEnd" else [{"x": point[0], "y": point[1]}]
        cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})

    touch("touchStart", start)
    for t in (0.2, 0.4, 0.6, 0.8, 1.0):
        touch("touchMove", (start[0] + t * (end[0] - start[0]), start[1] + t * (end[1] - start[1])))
    touch("touchEnd", end)
    cdp.detach()
    assert page.evaluate("() => window.scrollY") == scroll_before, "jari menggulir halaman"


def assert_near(got, want):
    assert abs(got[0] - want[0]) <= 0.1 and abs(got[1] - want[1]) <= 0.1, (got, want)


GRID = """inputs => inputs.map(([Q, K, V, row, scale, mask]) => {
  const r = window.atensiPlayground.compute(Q, K, V, row, scale, mask);
  return {...r, masked: r.masked.map(v => v === -Infinity ? null : v)};
})"""


def exercise_playground(page, root, shots: Path, name: str):
    """Drag by mouse, by finger and by keys, toggle both switches, move a key,
    and compare the page with NumPy after every step."""
    ready(root)
    Q, K, _V = example.qkv()
    Q, K, point = check_against_numpy(root, Q, K)
    assert point == tuple(float(x) for x in example.Q[example.PRONOUN])

    mouse_drag(page, root, 1.0, 2.5)
    Q, K, point = check_against_numpy(root, Q, K)
    assert_near(point, (1.0, 2.5))

    finger_drag(page, root, -1.0, 0.5)
    Q, K, point = check_against_numpy(root, Q, K)
    assert_near(point, (-1.0, 0.5))

    root.locator("[data-pg=handle]").focus()
    for key in ("ArrowRight", "ArrowRight", "ArrowUp"):
        page.keyboard.press(key)
    last = point
    Q, K, point = check_against_numpy(root, Q, K)
    assert 0.15 <= point[0] - last[0] <= 0.25 and 0.05 <= point[1] - last[1] <= 0.15, (last, point)
    assert all(abs(10 * c - round(10 * c)) < 1e-9 for c in point)  # keys move on a 0,1 grid

    before = shown(root)[3]
    root.locator("[data-pg=scale]").uncheck()
    Q, K, _ = check_against_numpy(root, Q, K)
    root.locator("[data-pg=mask]").uncheck()
    Q, K, _ = check_against_numpy(root, Q, K)
    future = example.T - 1
    assert shown(root)[3]["weights"][future] > 0  # menoleh is seen without the mask
    assert shown(root)[3] != before

    root.locator("[data-pg=target]").select_option("K0")
    mouse_drag(page, root, 0.5, 3.0)
    Q, K, point = check_against_numpy(root, Q, K)
    assert_near(point, (0.5, 3.0))
    root.locator("[data-pg=mask]").check()
    root.locator("[data-pg=target]").select_option(f"K{future}")
    weights = shown(root)[3]["weights"]
    finger_drag(page, root, 3.5, 3.5)
    Q, K, _ = check_against_numpy(root, Q, K)
    assert shown(root)[3]["weights"] == weights  # with the mask, the future key changes nothing

    # No horizontal scrolling at 360 px; the plane fits the screen.
    root.evaluate("el => el.scrollIntoView({block: 'start'})")
    widths = page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert widths[0] <= widths[1], widths
    box = root.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    plane = root.locator("svg.atensi-pg-plane").bounding_box()
    assert plane["width"] > 250
    shots.mkdir(parents=True, exist_ok=True)
    root.locator("[data-pg=target]").select_option(f"Q{example.PRONOUN}")
    root.locator("[data-pg=reset]").click()
    root.locator("[data-pg=scale]").check()
    root.evaluate("el => el.scrollIntoView({block: 'start'})")
    page.screenshot(path=str(shots / name))


def shot_dir(tmp_path) -> Path:
    return Path(os.environ.get("ATENSI_SCREENSHOT_DIR", tmp_path))


@pytest.fixture
def bare_page(walled_page):
    """A phone-sized touch page; every request is blocked, console errors recorded."""
    opened = walled_page(**PHONE, allow=(), has_touch=True)
    page, blocked, errors = opened.page, opened.blocked, opened.console_errors
    html = playground.static().to_html()
    page.set_content(
        '<!doctype html><html lang="id"><head><meta charset="utf-8"><title>uji</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1"></head>'
        f'<body><main><p style="height:2000px">teks sebelum</p>{html}<p>teks di antara</p>{html}'
        "</main></body></html>")
    return page, blocked, errors


@pytest.mark.browser
def test_twin_is_built_only_near_the_screen_and_twice_on_one_page(bare_page):
    page, blocked, errors = bare_page
    roots = page.locator(".atensi-playground")
    assert roots.count() == 2
    page.wait_for_timeout(200)
    assert roots.nth(0).get_attribute("data-ready") == "waiting"  # below the fold: not built yet
    ready(roots.nth(0))
    roots.nth(1).scroll_into_view_if_needed()
    ready(roots.nth(1))
    mouse_drag(page, roots.nth(0), 0.0, 3.0)
    start = tuple(float(x) for x in example.Q[example.PRONOUN])
    assert shown(roots.nth(1))[1:3] == start  # the other one did not move
    assert blocked == [] and errors == []


@pytest.mark.browser
def test_table_never_clips_on_a_phone(bare_page):
    page, _blocked, errors = bare_page
    root = page.locator(".atensi-playground").first
    root.scroll_into_view_if_needed()
    ready(root)
    box = root.locator(".atensi-pg-tablebox").evaluate("""b => {
      const r = b.getBoundingClientRect(), t = b.querySelector('table').getBoundingClientRect();
      return {left: r.left, right: r.right, scrolls: b.scrollWidth > b.clientWidth + 1,
              overflow: getComputedStyle(b).overflowX, tableRight: t.right,
              focusable: b.tabIndex === 0 && !!b.getAttribute('aria-label')};
    }""")
    assert box["left"] >= 0 and box["right"] <= PHONE["width"]
    # Either the whole table is on the screen, or its own box scrolls (by keyboard too).
    assert box["tableRight"] <= PHONE["width"] or (box["scrolls"] and box["overflow"] == "auto")
    assert box["focusable"]
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    assert errors == []


@pytest.mark.browser
def test_twin_dragged_on_a_phone_equals_numpy(bare_page, tmp_path):
    page, blocked, errors = bare_page
    exercise_playground(page, page.locator(".atensi-playground").first, shot_dir(tmp_path),
                        "playground-mandiri-360.png")
    assert blocked == [] and errors == []


@pytest.mark.browser
def test_javascript_twin_equals_numpy_on_a_grid(bare_page):
    page, _blocked, errors = bare_page
    rng = np.random.default_rng(7)
    cases = []
    base_Q, base_K, V = example.qkv()
    lo, hi = playground.LIMITS
    for x in np.arange(lo, hi + 1e-9, 1.0):
        for y in np.arange(lo, hi + 1e-9, 1.0):
            for scale in (True, False):
                for mask in (True, False):
                    Q, K = base_Q.copy(), base_K.copy()
                    Q[example.PRONOUN] = [x, y]
                    K[int(rng.integers(4))] = rng.uniform(lo, hi, 2)
                    cases.append((Q, K, V, example.PRONOUN, scale, mask))
    for T, d_k in ((1, 2), (5, 3), (9, 4)):  # other shapes and rows too
        Q, K, V2 = (rng.standard_normal((T, d_k)).astype(np.float32) for _ in range(3))
        cases += [(Q, K, V2, row, True, True) for row in range(T)]
    got = page.evaluate(GRID, [[Q.tolist(), K.tolist(), Vc.tolist(), row, s, m]
                               for Q, K, Vc, row, s, m in cases])
    assert len(got) == len(cases) > 150
    for result, (Q, K, Vc, row, s, m) in zip(got, cases):
        want = playground.compute(Q, K, Vc, row=row, scale=s, mask=m)
        assert_close(from_json(result), want, 2e-6)
    numbers = [0.25, -0.5, 1234.5678, -0.0004, 3.14159, 0.0, 12.0, -2.71828, 1e6 + 0.333]
    shown_js = page.evaluate("xs => xs.map(x => [2, 3].map(d => window.atensiPlayground.formatId(x, d)))",
                             numbers)
    for x, pair in zip(numbers, shown_js):
        # Like id_float, except that a number rounding to zero shows no minus sign.
        want = [id_float(x, d) for d in (2, 3)]
        assert pair == [w.lstrip("-") if parse_id(w) == 0 else w for w in want]
    assert errors == []


LABEL_BOXES = """root => {
  const box = (t) => { const b = t.getBBox(); return [t.textContent, b.x, b.y, b.width, b.height]; };
  const plane = root.querySelector('.atensi-pg-plane');
  const labels = Array.from(plane.querySelectorAll(
    'text.atensi-pg-query-label, text.atensi-pg-output-label, .atensi-pg-key text'));
  return {labels: labels.filter((t) => t.textContent).map(box),
          marks: Array.from(plane.querySelectorAll('.atensi-pg-key rect, circle.atensi-pg-value')).map(box)};
}"""


def assert_labels_apart(root):
    """No two labels on the plane overlap, and none covers a key or value point."""
    found = root.evaluate(LABEL_BOXES)
    boxes, marks = found["labels"], found["marks"]

    def apart(a, b):
        return a[1] + a[3] <= b[1] or b[1] + b[3] <= a[1] or a[2] + a[4] <= b[2] or b[2] + b[4] <= a[2]

    for n, a in enumerate(boxes):
        for b in boxes[n + 1:]:
            assert apart(a, b), f"label '{a[0]}' dan '{b[0]}' bertumpuk"
        assert all(apart(a, m) for m in marks), f"label '{a[0]}' menutupi sebuah titik"
    return [box[0] for box in boxes]


@pytest.mark.browser
def test_labels_on_the_plane_never_overlap(bare_page):
    page, _blocked, errors = bare_page
    root = page.locator(".atensi-playground").first
    ready(root)
    shown_labels = assert_labels_apart(root)
    assert "k memanggil, menoleh" in shown_labels  # both verbs' keys sit at (0, 0)
    # A key dragged next to another one: both labels stay readable.
    root.locator("[data-pg=target]").select_option("K0")
    budi = example.K[example.REFERENT]
    mouse_drag(page, root, float(budi[0]) + 0.1, float(budi[1]) + 0.1)
    assert_labels_apart(root)
    mouse_drag(page, root, float(budi[0]), float(budi[1]))  # on the same spot: one label
    assert "k Ani, Budi" in assert_labels_apart(root)
    assert errors == []


@pytest.mark.browser
def test_twin_has_no_serious_accessibility_problem(bare_page):
    from axe_playwright_python.sync_playwright import Axe

    page, _blocked, _errors = bare_page
    for n in range(2):
        ready(page.locator(".atensi-playground").nth(n))
    results = Axe().run(page)
    problems = [f"{v['id']}: {v['help']} {[x['target'] for x in v['nodes'][:3]]}"
                for v in results.response["violations"] if v["impact"] in ("serious", "critical")]
    assert problems == []


# A stand-in for anywidget's model in the page: every save goes to the Python
# widget (through Playwright), and its result comes back as "change:result".
FAKE_MODEL = """
const attrs = JSON.parse(document.getElementById('attrs').textContent);
const handlers = {};
const model = {
  get: (k) => attrs[k], set: (k, v) => { attrs[k] = v; },
  save_changes() {
    window.pythonSync({Q: attrs.Q, K: attrs.K, scale: attrs.scale, mask: attrs.mask}).then((r) => {
      attrs.result = r; (handlers['change:result'] || []).forEach((f) => f());
      document.getElementById('host').dataset.saves = String(++window.saves);
    });
  },
  on(name, f) { (handlers[name] = handlers[name] || []).push(f); },
  off(name, f) { handlers[name] = (handlers[name] || []).filter((g) => g !== f); },
};
window.saves = 0;
widget.render({model, el: document.getElementById('host')});
"""


def settle(page, calls):
    """Wait until every save the page sent has come back from Python."""
    for _ in range(100):
        page.wait_for_timeout(30)
        if page.evaluate("() => window.saves") == len(calls):
            return
    raise AssertionError(f"{len(calls)} panggilan Python, {page.evaluate('() => window.saves')} kembali")


@pytest.mark.browser
def test_live_view_draws_what_the_python_widget_computes(walled_page):
    live = playground.live()
    calls = []

    def sync(state):
        calls.append(state)
        live.Q, live.K, live.scale, live.mask = state["Q"], state["K"], state["scale"], state["mask"]
        return live.result

    # Everything blocked: the page is given whole, and Python answers through pythonSync.
    opened = walled_page(**PHONE, allow=(), has_touch=True)
    page, errors = opened.page, opened.console_errors
    page.expose_function("pythonSync", sync)
    attrs = {"data": live.data, "Q": live.Q, "K": live.K, "scale": live.scale,
             "mask": live.mask, "result": live.result}
    script = playground.JS_PATH.read_text(encoding="utf-8") + FAKE_MODEL
    page.set_content(
        '<!doctype html><html lang="id"><head><meta charset="utf-8"><title>uji</title>'
        f"<style>{playground.CSS_PATH.read_text(encoding='utf-8')}</style></head><body>"
        f'<script type="application/json" id="attrs">{json.dumps(attrs)}</script>'
        f'<div id="host"></div><script type="module">{script}</script></body></html>')
    root = page.locator("#host .atensi-playground")
    root.wait_for(timeout=5000)
    Q, K, _V = example.qkv()
    Q, K, _ = check_against_numpy(root, Q, K)
    for drag, target in ((mouse_drag, (0.0, 3.0)), (finger_drag, (2.0, -1.5))):
        drag(page, root, *target)
        settle(page, calls)
        Q, K, point = check_against_numpy(root, Q, K)
        assert_near(point, target)
    root.locator("[data-pg=mask]").uncheck()
    settle(page, calls)
    assert calls[-1]["mask"] is False and live.mask is False
    check_against_numpy(root, Q, K)
    assert errors == []


@pytest.mark.book
@pytest.mark.browser
def test_book_playground_dragged_on_a_phone_equals_numpy(built_book, walled_page, book_server,
                                                         tmp_path):
    page_path = built_book / "chapters" / "jumlah_v.html"
    assert 'class="atensi-playground"' in page_path.read_text(encoding="utf-8")
    opened = walled_page(**PHONE, allow=(book_server,), has_touch=True)
    page, blocked, errors = opened.page, opened.blocked, opened.console_errors
    page.goto(book_server + "chapters/jumlah_v.html", wait_until="load")
    roots = page.locator(".atensi-playground")
    assert roots.count() == 1
    exercise_playground(page, roots.first, shot_dir(tmp_path), "playground-360.png")
    assert blocked == [] and errors == []
    # The site's axe check runs before the reader scrolls here: check the built playground too.
    from axe_playwright_python.sync_playwright import Axe

    violations = Axe().run(page).response["violations"]
    assert [v["id"] for v in violations if v["impact"] in ("serious", "critical")] == []
