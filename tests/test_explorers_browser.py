"""The static explorers in a real browser (Debian's Chromium, network cut off).

Two settings, the same checks: each static twin on its own page (fast, no
book build needed), and each explorer inside the built book, on the chapter
that teaches with it. Every control is moved to several values; the shown
value, the frame (image, readout, row outline) must follow, with the frame
being exactly the one prerendered for that state. Phone screenshots at
360 × 800 must fit without horizontal scrolling.
"""

from __future__ import annotations

import base64
import html as htmllib
import json
import os
import re
from pathlib import Path

import pytest

from explorer_list import FRAMES, HOMES

pytestmark = pytest.mark.browser

MAX_BYTES = 1_500_000
PHONE = {"width": 360, "height": 800}
# The prerendered twins that need nothing but their controls (attention_maps
# needs a trained model: it is moved in the built book only).
BUILDERS = {e.name: e.load().static for e in FRAMES if hasattr(e.load(), "EXPLORER")}

# Current face of one explorer: what a reader sees.
STATE = """(root) => {
  const img = root.querySelector('img.atensi-frame');
  const values = {};
  root.querySelectorAll('output[data-value-for]').forEach(o => values[o.dataset.valueFor] = o.textContent);
  const checks = {};
  root.querySelectorAll('input[type=checkbox][data-control]').forEach(c => checks[c.dataset.control] = c.checked);
  const picked = {}, offered = {};
  root.querySelectorAll('fieldset[data-control]').forEach(f => {
    const on = f.querySelector('input:checked');
    picked[f.dataset.control] = on ? Number(on.value) : null;
    offered[f.dataset.control] = Array.from(f.querySelectorAll('input'))
      .filter(r => !r.disabled).map(r => Number(r.value));
  });
  const marks = Array.from(root.querySelectorAll('.atensi-mark')).map(m =>
    [m.style.left, m.style.top, m.style.width, m.style.height].map(parseFloat));
  return {frame: img.getAttribute('data-frame'), src: img.getAttribute('src'),
          complete: img.complete && img.naturalWidth > 0,
          readout: root.querySelector('.atensi-readout').textContent, values, checks, picked,
          offered, marks};
}"""

MOVE = """(root, [key, position]) => {
  const el = root.querySelector('input[data-control="' + key + '"]');
  el.value = String(position);
  el.dispatchEvent(new Event('input', {bubbles: true}));
  return [Number(el.min), Number(el.max), Number(el.value)];
}"""


def text_of(fragment):
    """Readout HTML as the browser's textContent shows it."""
    return htmllib.unescape(re.sub(r"<[^>]+>", "", fragment))


def embedded(page, root):
    """The explorer's controls and frame table, read from the page itself: inline in
    a notebook's output, from the frame script it loaded in the built book."""
    data = json.loads(root.locator("script.atensi-data").text_content())
    if "src" in data:
        data.update(page.evaluate("id => window.atensiExplorerData[id]", data["id"]))
    return data


LOADED = """(root) => {
  const data = JSON.parse(root.querySelector('script.atensi-data').textContent);
  if (!data.src) return null;
  const name = data.src.split('/').pop();
  return performance.getEntriesByType('resource').some(e => e.name.endsWith('/' + name))
    || !!(window.atensiExplorerData && window.atensiExplorerData[data.id]);
}"""


def touch(page, root, first=True):
    """The reader's first touch: the frames arrive (in the book: only now)."""
    if first:
        assert root.evaluate(LOADED) in (None, False), "bingkai dimuat sebelum disentuh"
    root.locator("[data-control]").first.dispatch_event("pointerdown")
    root.evaluate("""r => new Promise((done, fail) => {
      const start = Date.now();
      (function wait() {
        if (r.hasAttribute('data-ready')) done();
        else if (Date.now() - start > 10000) fail(new Error('bingkai tidak datang'));
        else setTimeout(wait, 20);
      })();
    })""")
    assert root.evaluate(LOADED) in (None, True)


def expected_face(data, state):
    key = ",".join(map(str, state))
    image, readout, boxes = data["frames"][key]
    # In the built book the pictures are files (_ext/atensi_book/explorers.py);
    # in a notebook's output they are inline.
    src = data["urls"][image] if "urls" in data else f"data:{data['mime']};base64,{data['images'][image]}"
    return key, src, text_of(readout), boxes


def assert_face(page, root, data, state):
    key, src, readout, boxes = expected_face(data, state)
    face = root.evaluate(STATE)
    assert face["frame"] == key
    assert face["src"] == src, f"gambar bingkai {key} bukan yang dirender untuk keadaan itu"
    assert face["readout"] == readout
    for n, control in enumerate(data["controls"]):
        if control["kind"] == "range":
            assert face["values"][control["key"]] == control["shown"][state[n]]
        elif control["kind"] == "choice":  # its button checked, those without a frame off
            assert face["picked"][control["key"]] == state[n]
            assert face["offered"][control["key"]] == options_of(data, state, n)
        else:
            assert face["checks"][control["key"]] is (state[n] == 1)
    assert len(face["marks"]) == len(boxes)
    for shown, box in zip(face["marks"], boxes):
        assert shown == pytest.approx([100 * b for b in box], abs=0.01)
    return face


def options_of(data, state, n):
    """Values of control n for which a frame exists given the controls before it."""
    prefixes = {tuple(k.split(",")[:n + 1]) for k in data["frames"]}
    return [v for v in range(data["controls"][n]["values"])
            if tuple(map(str, state[:n] + [v])) in prefixes]


def nearest_valid(data, state, n):
    """The JS rule: a range keeps its value if it can, else the largest one below."""
    options = options_of(data, state, n)
    return max([v for v in options if v <= state[n]] or options[:1])


def exercise(page, root, first_touch=True):
    """Move every control to several values; each move must change the face correctly."""
    # Figures after a page's first load lazily: the reader scrolls to the
    # explorer first, and so does the test.
    root.scroll_into_view_if_needed()
    touch(page, root, first_touch)
    data = embedded(page, root)
    controls = data["controls"]
    state = [c["start"] for c in controls]
    root.evaluate("""r => new Promise(done => {
      const img = r.querySelector('img.atensi-frame');
      if (img.complete && img.naturalWidth) done(); else img.addEventListener('load', done, {once: true});
      setTimeout(done, 5000);
    })""")
    face = assert_face(page, root, data, state)
    assert face["complete"], "gambar awal tidak tampil"
    moves = []

    def move(n, position):
        """Checkbox: position 0/1. Range, choice: position among the offered values."""
        nonlocal face
        control = controls[n]
        if control["kind"] == "checkbox":
            if position == state[n]:
                return
            root.locator(f'input[data-control="{control["key"]}"]').click()
            state[n] = position
        elif control["kind"] == "choice":  # the reader taps the button of that value
            options = options_of(data, state, n)
            position = min(position, len(options) - 1)
            if options[position] == state[n]:
                return
            root.locator(f'fieldset[data-control="{control["key"]}"] '
                         f'input[value="{options[position]}"]').click()
            state[n] = options[position]
        else:
            # A range offers only the values that exist given the controls before it.
            options = options_of(data, state, n)
            position = min(position, len(options) - 1)
            if options[position] == state[n]:
                return
            low, high, value = root.evaluate(MOVE, [control["key"], position])
            assert (low, high, value) == (0, len(options) - 1, position)
            state[n] = options[position]
        for m in range(n + 1, len(controls)):
            if controls[m]["kind"] != "checkbox":
                state[m] = nearest_valid(data, state, m)
        before, face = face, assert_face(page, root, data, state)
        assert (face["src"], face["readout"], face["marks"]) != (
            before["src"], before["readout"], before["marks"]), f"{control['key']}: tidak berubah"
        moves.append((control["key"], state[n]))

    for n, control in enumerate(controls):
        if control["kind"] == "checkbox":
            move(n, 1 - state[n])
            move(n, 1 - state[n])
        else:
            top = control["values"] - 1
            for target in (0, top, top // 2, 1):
                move(n, target)
    # Every range to its end, then the first one back to its start: a range that
    # depends on it (row i on T) must follow.
    ranges = [n for n, c in enumerate(controls) if c["kind"] != "checkbox"]
    for n in reversed(ranges):
        move(n, controls[n]["values"] - 1)
    move(ranges[0], 0)
    assert len(moves) >= 6
    return data


def explorer_bytes(root):
    return root.evaluate("el => new Blob([el.outerHTML]).size")


def phone_check(page, root, shot: Path):
    """At 360 × 800: no horizontal scrolling, first slider or choice and figure inside
    the screen, every button of a choice a finger's size (44 px tall)."""
    root.evaluate("el => el.scrollIntoView({block: 'start'})")
    widths = page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert widths[0] <= widths[1], f"halaman bergulir mendatar: {widths}"
    for selector in ("input[type=range], fieldset.atensi-choice", "img.atensi-frame"):
        box = root.locator(selector).first.bounding_box()
        assert box is not None and box["width"] > 100
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], (selector, box)
        assert box["y"] >= 0 and box["y"] + box["height"] <= PHONE["height"], (selector, box)
    heights = root.evaluate("r => Array.from(r.querySelectorAll('.atensi-option'))"
                            ".map(o => o.getBoundingClientRect().height)")
    assert all(h >= 44 for h in heights), heights
    box = root.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    shot.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shot))


def screenshot_dir(tmp_path) -> Path:
    return Path(os.environ.get("ATENSI_SCREENSHOT_DIR", tmp_path))


# ------------------------------------------------------------ standalone twins


@pytest.fixture
def bare_page(walled_page):
    """A phone-sized page where every request is blocked and console errors recorded."""
    opened = walled_page(**PHONE, allow=())
    return opened.page, opened.blocked, opened.console_errors


@pytest.mark.parametrize("name", list(BUILDERS))
def test_static_twin_on_its_own_page(bare_page, name, tmp_path):
    page, blocked, errors = bare_page
    ex = BUILDERS[name]()
    second = BUILDERS[name]()  # two instances on one page must not disturb each other
    page.set_content(
        '<!doctype html><html lang="id"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1"></head>'
        f"<body>{ex._repr_html_()}<p>teks di antara</p>{second._repr_html_()}</body></html>")
    roots = page.locator(f'.atensi-explorer[data-explorer="{name}"]')
    assert roots.count() == 2
    first, other = roots.nth(0), roots.nth(1)
    untouched = other.evaluate(STATE)
    data = exercise(page, first)
    assert other.evaluate(STATE) == untouched
    assert data["images"] == [base64.b64encode(b).decode() for b in ex.images]
    assert explorer_bytes(first) <= MAX_BYTES
    phone_check(page, first, screenshot_dir(tmp_path) / f"penjelajah-{name}-mandiri.png")
    assert blocked == [] and errors == []


def test_a_choice_moves_with_the_keyboard(bare_page):
    """The mask kind is a radio group: Tab reaches its checked button, the arrow keys
    move to the next kind, and the frame follows."""
    page, blocked, errors = bare_page
    page.set_content('<!doctype html><html lang="id"><head><meta charset="utf-8"></head>'
                     f'<body><button>sebelum</button>{BUILDERS["mask"]()._repr_html_()}</body></html>')
    root = page.locator('.atensi-explorer[data-explorer="mask"]')
    page.locator("button").focus()
    page.keyboard.press("Tab")
    focused = page.evaluate("() => [document.activeElement.type, document.activeElement.value]")
    data = embedded(page, root)
    kind = [c["key"] for c in data["controls"]].index("kind")
    assert focused == ["radio", str(data["controls"][kind]["start"])]
    touch(page, root, first=False)
    before = root.evaluate(STATE)
    page.keyboard.press("ArrowRight")
    state = [c["start"] for c in data["controls"]]
    state[kind] += 1
    for m in range(kind + 1, len(state)):
        if data["controls"][m]["kind"] != "checkbox":
            state[m] = nearest_valid(data, state, m)
    face = assert_face(page, root, data, state)
    assert face["picked"]["kind"] == state[kind] and face["src"] != before["src"]
    page.keyboard.press("ArrowLeft")
    assert root.evaluate(STATE)["picked"]["kind"] == data["controls"][kind]["start"]
    assert blocked == [] and errors == []


def test_guess_first_then_the_outcome(bare_page):
    """The sharpness explorer asks first: a wrong answer says which is right and
    why, a right one says so; either way the explorer moves to the outcome."""
    page, blocked, errors = bare_page
    from atensi.explorers import sharpness

    ex = BUILDERS["ketajaman"]
    page.set_content('<!doctype html><html lang="id"><head><meta charset="utf-8"></head>'
                     f"<body>{ex()._repr_html_()}{ex()._repr_html_()}</body></html>")
    roots = page.locator('.atensi-explorer[data-explorer="ketajaman"]')
    data = embedded(page, roots.nth(0))
    start = [c["start"] for c in data["controls"]]
    reveal = data["guess"]["reveal"]
    assert reveal != start
    right = sharpness.GUESS_CHOICES[sharpness.guess_answer(64, False)]
    why = sharpness.guess_why(64, False)
    for root, picked in ((roots.nth(0), "naik"), (roots.nth(1), right)):
        assert root.locator(".atensi-verdict").is_hidden()
        root.get_by_role("button", name=picked, exact=True).click()
        verdict = root.locator(".atensi-verdict")
        verdict.wait_for(state="visible")
        expected = "Tepat." if picked == right else f"Belum tepat: jawabannya «{right}», bukan «{picked}»."
        assert verdict.text_content() == f"{expected} {why}"
        assert verdict.get_attribute("data-right") == str(picked == right).lower()
        assert all(b.is_disabled() for b in root.locator(".atensi-guess button").all())
        assert_face(page, root, data, reveal)  # the frame where the outcome is on show
    assert blocked == [] and errors == []


# The theme's dark colours, as pydata-sphinx-theme sets them, for a page without it.
THEME = ("<style>html{--pst-color-background:#fff;--pst-color-text-base:#222832;"
         "--pst-color-border:#d1d5da;--pst-color-surface:#f5f6f8;background:#fff;color:#222832}"
         "html[data-theme=dark]{--pst-color-background:#14181e;--pst-color-text-base:#ced6dd;"
         "--pst-color-border:#48566b;--pst-color-surface:#29313d;background:#14181e;color:#ced6dd}"
         "body{background:inherit;margin:8px}</style>")


def bright_share(png: bytes) -> float:
    """Share of a screenshot's pixels that are light (grey level above 150 of 255): a
    light slab under a dark theme shows as many (the theme's light box is 212)."""
    import io

    from PIL import Image

    grey = Image.open(io.BytesIO(png)).convert("L")
    values = list(grey.getdata())
    return sum(v > 150 for v in values) / len(values)


@pytest.fixture(scope="module")
def axe():
    from axe_playwright_python.sync_playwright import Axe

    return Axe()


def dark_check(page, root, axe, shot: Path):
    """Under the dark theme: axe finds nothing serious in the explorer, and its
    screenshot at 360 px has no light slab. Returns the bright share."""
    page.evaluate("document.documentElement.dataset.theme = 'dark'")  # as the toggle does
    root.scroll_into_view_if_needed()
    results = axe.run(page, options={"resultTypes": ["violations"]})
    problems = [f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes'][:3]]}"
                for v in results.response["violations"] if v["impact"] in ("serious", "critical")]
    assert problems == []
    shot.parent.mkdir(parents=True, exist_ok=True)
    share = bright_share(root.screenshot(path=str(shot)))
    assert share < 0.08, f"bidang terang di tema gelap: {share:.1%} piksel terang"
    return share


@pytest.mark.parametrize("name", list(BUILDERS) + ["playground"])
def test_explorer_follows_the_dark_theme(bare_page, axe, name, tmp_path):
    page, blocked, errors = bare_page
    if name == "playground":
        from atensi.explorers import playground

        body, selector = playground.static()._repr_html_(), ".atensi-playground"
    else:
        body, selector = BUILDERS[name]()._repr_html_(), f'.atensi-explorer[data-explorer="{name}"]'
    page.set_content('<!doctype html><html lang="id" data-theme="light"><head><meta charset="utf-8">'
                     '<meta name="viewport" content="width=device-width, initial-scale=1">'
                     f"<title>uji</title>{THEME}</head><body><main>{body}</main></body></html>")
    root = page.locator(selector).first
    root.scroll_into_view_if_needed()
    page.wait_for_function("r => !r.querySelector('img') || r.querySelector('img').complete",
                           arg=root.element_handle())
    light = bright_share(root.screenshot())
    share = dark_check(page, root, axe, screenshot_dir(tmp_path) / f"penjelajah-{name}-gelap.png")
    print(f"\n{name}: piksel terang {light:.1%} di tema terang, {share:.1%} di tema gelap")
    assert light > 0.2  # the check can fail: in the light theme the picture is light
    assert blocked == [] and errors == []


# ------------------------------------------------------------ in the built book


def pages_with(built_book: Path, name: str) -> list[str]:
    marker = f'data-explorer="{name}"'
    return sorted(str(p.relative_to(built_book).with_suffix(""))
                  for p in built_book.rglob("*.html") if marker in p.read_text(encoding="utf-8"))


@pytest.mark.book
def test_book_has_explorers_where_they_teach_and_no_widget_state(built_book):
    """Every explorer of the list, on exactly the pages whose chapter calls it."""
    for name, homes in HOMES.items():
        found = pages_with(built_book, name)
        assert found == homes, f"{name}: ada di {found}, seharusnya di {homes}"
    for path in built_book.rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        assert "application/vnd.jupyter.widget-state+json" not in text, path
        assert "widget-view" not in text, path


@pytest.mark.book
@pytest.mark.parametrize("name", [e.name for e in FRAMES])
def test_book_explorer_moves_offline(built_book, open_page, name, tmp_path):
    found = pages_with(built_book, name)
    assert found, f"penjelajah '{name}' tidak ada di buku"
    for page_name in found:
        opened = open_page(f"{page_name}.html", **PHONE)
        page = opened.page
        roots = page.locator(f'.atensi-explorer[data-explorer="{name}"]')
        assert roots.count() >= 1
        for n in range(roots.count()):
            root = roots.nth(n)
            assert explorer_bytes(root) <= MAX_BYTES
            exercise(page, root)
            phone_check(page, root, screenshot_dir(tmp_path) /
                        f"penjelajah-{name}-{Path(page_name).name}-{n}.png")
        assert opened.blocked == [], f"permintaan keluar situs: {opened.blocked}"
        assert opened.failed == [], f"berkas situs gagal dimuat: {opened.failed}"
        assert opened.console_errors == [], f"galat konsol: {opened.console_errors}"


@pytest.mark.book
@pytest.mark.parametrize("name", list(HOMES))
def test_book_explorers_follow_the_dark_theme(built_book, open_page, axe, name, tmp_path):
    """On the chapter that teaches with it, at 360 px, after the theme's toggle
    turned the page dark: the explorer, touched, passes axe and shows no light slab."""
    for page_name in pages_with(built_book, name):
        opened = open_page(f"{page_name}.html", **PHONE)
        page = opened.page
        root = page.locator(f'[data-explorer="{name}"]').first
        root.scroll_into_view_if_needed()
        root.dispatch_event("pointerdown")  # the first touch: frames and model arrive
        page.wait_for_timeout(500)
        share = dark_check(page, root, axe, screenshot_dir(tmp_path) /
                           f"penjelajah-{name}-{Path(page_name).name}-gelap.png")
        print(f"\n{page_name} {name}: {share:.1%} piksel terang di tema gelap")
        assert opened.console_errors == [], opened.console_errors


# ------------------------------------------------------------ frames as files


def test_frames_load_from_file_pages_on_first_touch(walled_page, tmp_path):
    """As in the book and the offline zip: the page opened from file://, its
    frames in a script file that only the first touch loads. A slider moved
    before they arrive shows its frame as soon as they do."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "_ext"))
    from atensi_book import explorers

    opened = walled_page(**PHONE)
    page, blocked, errors = opened.page, opened.blocked, opened.console_errors
    ex = BUILDERS["mask"]()
    path = tmp_path / "chapters" / "bab.html"
    path.parent.mkdir()
    body = explorers.explorer_frames_to_files(ex._repr_html_(), path, tmp_path)
    path.write_text('<!doctype html><html lang="id"><head><meta charset="utf-8">'
                    '<meta name="viewport" content="width=device-width, initial-scale=1"></head>'
                    f"<body>{body}</body></html>", encoding="utf-8")
    page.goto(path.as_uri())
    root = page.locator('.atensi-explorer[data-explorer="mask"]')
    assert root.evaluate(LOADED) is False and not root.evaluate("r => r.hasAttribute('data-ready')")
    # Keyboard first: focus alone starts the load, the arrow key moves row i.
    row_input = root.locator('input[data-control="row"]')
    row_input.focus()
    row_input.press("ArrowRight")
    root.evaluate("""r => new Promise(done => { (function wait() {
      if (r.hasAttribute('data-ready')) done(); else setTimeout(wait, 20); })(); })""")
    data = embedded(page, root)
    state = [c["start"] for c in data["controls"]]
    state[4] += 1
    assert_face(page, root, data, state)
    row_input.press("ArrowLeft")  # back to the start, where exercise() begins
    exercise(page, root, first_touch=False)
    assert blocked == [] and errors == []
