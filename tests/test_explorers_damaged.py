"""Static explorers whose files are missing or damaged, in Chromium (network cut off).

A partial copy of the site, an interrupted download or a deploy that is still
propagating leaves a page whose frame table or frame pictures are missing,
cut short or wrong. The explorer must then say so in Indonesian, in its
readout, with what to do, and never show a label that does not belong to
its picture.

Fast tests build one small explorer (real PNG pictures, six frames), move its
frames into files as the book extension does, tamper with those files and
open the page from ``file://``. One test does the same with a page of the
built book, copied into a temporary folder (``built_book`` fixture).
"""

from __future__ import annotations

import io
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from atensi.explorers import framework

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
PHONE = {"width": 360, "height": 800}
FRAMES_GONE = "Muat ulang halaman, atau unduh salinan luring"
FRAME_KEY = "1,0"  # the start: n = 2, flag off

FACE = """(root) => {
  const img = root.querySelector('img.atensi-frame');
  const labels = {};
  root.querySelectorAll('output[data-value-for]').forEach(o => labels[o.dataset.valueFor] = o.textContent);
  const checks = {};
  root.querySelectorAll('input[type=checkbox][data-control]').forEach(c => checks[c.dataset.control] = c.checked);
  const picked = {};
  root.querySelectorAll('fieldset[data-control]').forEach(f => {
    const on = f.querySelector('input:checked');
    picked[f.dataset.control] = on ? Number(on.value) : null;
  });
  // A choice is off when its fieldset is (that switches off every radio in it).
  const inputs = Array.from(root.querySelectorAll('[data-control]'));
  return {frame: img.getAttribute('data-frame'), src: img.getAttribute('src'),
          visible: getComputedStyle(img).display !== 'none' && getComputedStyle(img).visibility !== 'hidden',
          complete: img.complete && img.naturalWidth > 0,
          readout: root.querySelector('.atensi-readout').textContent, labels, checks, picked,
          disabled: inputs.map(i => i.disabled), error: root.getAttribute('data-error')};
}"""

# A slider to a position among the values it offers; a choice to the value itself.
MOVE = """(root, [key, position]) => {
  const el = root.querySelector('[data-control="' + key + '"]');
  if (el.tagName === 'FIELDSET') {
    el.querySelector('input[value="' + position + '"]').checked = true;
    el.dispatchEvent(new Event('change', {bubbles: true}));
    return;
  }
  el.value = String(position);
  el.dispatchEvent(new Event('input', {bubbles: true}));
}"""

# Which position of control n stands for value index v, given the controls before it
# (a choice is moved to the value itself).
OFFERED = """(root, [n, v]) => {
  const el = root.querySelectorAll('[data-control]')[n];
  return el.tagName !== 'FIELDSET' && el._opts ? el._opts.indexOf(v) : v;
}"""

SETTLE = """(root) => new Promise(done => {
  const img = root.querySelector('img.atensi-frame');
  const start = Date.now();
  (function wait() {
    // A lazy picture may not have started loading yet on a busy machine:
    // settled means it has a source and has loaded or failed.
    const settled = img.getAttribute('src') && img.complete;
    if ((settled && Date.now() - start > 150) || Date.now() - start > 30000) done();
    else setTimeout(wait, 20);
  })();
})"""


def png(colour) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (40, 20), colour).save(buffer, format="PNG")
    return buffer.getvalue()


def explorer():
    """Six frames, each with its own picture and readout."""
    def frame(n, flag):
        return png((40 * n, 200 if flag else 0, 90)), f"<p>n = {n}, bendera = {flag}</p>", []

    return framework.Explorer(
        name="uji", title="Uji", alt="gambar uji",
        controls=(framework.Range("n", "angka n", 0, 4, book=(0, 2, 4), shown="n = {}"),
                  framework.Toggle("flag", "bendera")),
        render=lambda n, flag: None, frame=frame, defaults={"n": 2, "flag": False})


def shell(body: str) -> str:
    return ('<!doctype html><html lang="id"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1"></head>'
            f"<body>{body}</body></html>")


def extension():
    if str(ROOT / "_ext") not in sys.path:
        sys.path.insert(0, str(ROOT / "_ext"))
    from atensi_book import explorers

    return explorers


def page_data(path: Path) -> dict:
    match = re.search(r'<script type="application/json" class="atensi-data">(.*?)</script>',
                      path.read_text(encoding="utf-8"), re.S)
    return json.loads(match.group(1).replace("<\\/", "</"))


class Site:
    """chapters/bab.html with its frame table and pictures in files, as in the book."""

    def __init__(self, tmp_path: Path):
        twin = explorer().static()
        self.page = tmp_path / "chapters" / "bab.html"
        self.page.parent.mkdir(parents=True)
        body = extension().explorer_frames_to_files(twin.to_html(), self.page, tmp_path)
        self.page.write_text(shell(body), encoding="utf-8")
        self.data = page_data(self.page)
        self.script = (self.page.parent / self.data["src"]).resolve()
        self.prefix, self.table = split_script(self.script.read_text(encoding="utf-8"))

    def picture(self, key: str) -> Path:
        return (self.page.parent / self.table["urls"][self.table["frames"][key][0]]).resolve()

    def register(self, table, name=None):
        """Rewrite the frame script so that it registers ``table`` (under ``name``)."""
        prefix = self.prefix if name is None else self.prefix.replace(self.data["id"], name)
        self.script.write_text(prefix + json.dumps(table) + ";\n", encoding="utf-8")


def split_script(text: str):
    prefix, _, rest = text.partition("] = ")
    return prefix + "] = ", json.loads(rest.rstrip().rstrip(";").replace("<\\/", "</"))


@pytest.fixture
def browser_page(walled_page):
    """A phone-sized page that may read file:// only."""
    opened = walled_page(**PHONE)
    return opened.page, opened.blocked


def open_explorer(page, path: Path):
    """The page with its first explorer in view: its picture loads lazily, as a reader scrolls."""
    page.goto(path.as_uri())
    root = page.locator(".atensi-explorer").first
    root.scroll_into_view_if_needed()
    root.evaluate(SETTLE)
    return root


def touch(root):
    """The first touch loads the frame table; wait until it arrived or failed."""
    root.locator("[data-control]").first.dispatch_event("pointerdown")
    root.evaluate("""r => new Promise(done => {
      const start = Date.now();
      (function wait() {
        if (r.hasAttribute('data-ready') || r.hasAttribute('data-error')
            || Date.now() - start > 30000) done();
        else setTimeout(wait, 20);
      })();
    })""")
    root.evaluate(SETTLE)


def shown_key(data, face) -> str:
    """The frame key that the labels and checkboxes on the page stand for."""
    parts = []
    for control in data["controls"]:
        if control["kind"] == "range":
            parts.append(control["shown"].index(face["labels"][control["key"]]))
        elif control["kind"] == "choice":
            parts.append(face["picked"][control["key"]])
        else:
            parts.append(int(face["checks"][control["key"]]))
    return ",".join(map(str, parts))


def assert_consistent(root, data, table):
    """Labels, picture and readout belong to one frame, or the picture is not shown."""
    face = root.evaluate(FACE)
    assert bool(face["error"]) == (FRAMES_GONE in face["readout"]), "data-error dan pesan berbeda"
    key = shown_key(data, face)
    assert face["frame"] == key, f"label {key}, gambar {face['frame']}"
    if face["visible"]:
        assert face["complete"], f"gambar {key} rusak tetapi tetap tampil"
        if table is not None:
            url = table["urls"][table["frames"][key][0]]
            assert face["src"] == url, f"label {key}, gambar lain: {face['src']}"
            readout = re.sub(r"<[^>]+>", "", table["frames"][key][1])
            assert face["readout"].startswith(readout)
    else:
        assert FRAMES_GONE in face["readout"], "gambar tidak tampil dan tidak ada penjelasan"
    return face


def tamper_table(site: Site, how: str):
    table = json.loads(json.dumps(site.table))
    if how == "frame dropped":
        del table["frames"]["2,1"]
    elif how == "picture index out of range":
        table["frames"]["2,1"][0] = len(table["urls"]) + 3
    elif how == "picture list short":
        table["urls"].pop()
    elif how == "no frames":
        table["frames"] = {}
    elif how == "frame not a list":
        table["frames"]["0,0"] = "rusak"
    elif how == "key of the wrong shape":
        table["frames"]["0,0,0"] = table["frames"].pop("0,0")
    elif how == "readout not text":
        table["frames"]["2,0"][1] = 7
    site.register(table)


FRAME_TABLE_DAMAGE = ["missing", "truncated", "empty", "registers another name", "frame dropped",
                      "picture index out of range", "picture list short", "no frames",
                      "frame not a list", "key of the wrong shape", "readout not text"]


@pytest.mark.parametrize("damage", FRAME_TABLE_DAMAGE)
@pytest.mark.parametrize("moved_first", [False, True], ids=["touched", "moved"])
def test_damaged_frame_table_says_so_and_keeps_the_start_frame(browser_page, tmp_path, damage,
                                                              moved_first):
    page, blocked = browser_page
    site = Site(tmp_path)
    text = site.script.read_text(encoding="utf-8")
    if damage == "missing":
        site.script.unlink()
    elif damage == "truncated":
        site.script.write_text(text[: len(text) // 2], encoding="utf-8")
    elif damage == "empty":
        site.script.write_text("", encoding="utf-8")
    elif damage == "registers another name":
        site.register(site.table, name="lain")
    else:
        tamper_table(site, damage)
    root = open_explorer(page, site.page)
    before = root.evaluate(FACE)
    assert before["frame"] == FRAME_KEY and before["complete"] and not before["error"]
    if moved_first:  # the slider moved before the frames arrive: its label moves too
        root.evaluate(MOVE, ["n", 2])
    else:
        touch(root)
    touch(root)
    face = assert_consistent(root, site.data, None)
    assert face["frame"] == FRAME_KEY and face["src"] == before["src"] and face["complete"]
    assert face["labels"]["n"] == "n = 2" and face["checks"]["flag"] is False
    assert FRAMES_GONE in face["readout"] and face["readout"].startswith("n = 2, bendera = False")
    assert face["error"] and all(face["disabled"]), "kontrol tetap bisa digeser tanpa bingkai"
    assert blocked == []


def test_frame_table_check_leaves_good_frames_alone(browser_page, tmp_path):
    page, _ = browser_page
    site = Site(tmp_path)
    root = open_explorer(page, site.page)
    touch(root)
    for n, flag in ((0, 0), (2, 1), (1, 1), (1, 0)):
        root.evaluate(MOVE, ["n", n])
        if root.evaluate(FACE)["checks"]["flag"] != bool(flag):
            root.locator('input[data-control="flag"]').click()
        root.evaluate(SETTLE)
        face = assert_consistent(root, site.data, site.table)
        assert face["visible"] and not face["error"] and FRAMES_GONE not in face["readout"]


@pytest.mark.parametrize("damage", ["deleted", "truncated"])
def test_missing_frame_picture_goes_back_to_the_last_picture(browser_page, tmp_path, damage):
    page, _ = browser_page
    site = Site(tmp_path)
    bad = site.picture("2,0")
    if damage == "deleted":
        bad.unlink()
    else:
        bad.write_bytes(bad.read_bytes()[:20])
    root = open_explorer(page, site.page)
    touch(root)
    root.evaluate(MOVE, ["n", 2])  # n = 4: its picture is gone
    root.evaluate(SETTLE)
    face = assert_consistent(root, site.data, site.table)
    assert FRAMES_GONE in face["readout"] and "Gambar" in face["readout"]
    assert face["visible"] and face["frame"] == FRAME_KEY, "kembali ke gambar terakhir yang tampil"
    # Another position whose picture is there: shown, and the message goes.
    root.evaluate(MOVE, ["n", 0])
    root.evaluate(SETTLE)
    face = assert_consistent(root, site.data, site.table)
    assert face["frame"] == "0,0" and face["visible"] and FRAMES_GONE not in face["readout"]
    assert not any(face["disabled"])


def test_missing_start_picture_is_hidden_with_the_message(browser_page, tmp_path):
    page, _ = browser_page
    site = Site(tmp_path)
    site.picture(FRAME_KEY).unlink()
    root = open_explorer(page, site.page)
    face = assert_consistent(root, site.data, site.table)
    assert not face["visible"] and FRAMES_GONE in face["readout"]
    touch(root)
    root.evaluate(MOVE, ["n", 0])
    root.evaluate(SETTLE)
    face = assert_consistent(root, site.data, site.table)
    assert face["frame"] == "0,0" and face["visible"] and FRAMES_GONE not in face["readout"]


def test_damaged_inline_frames_in_a_notebook_output(browser_page, tmp_path):
    """A notebook's output carries its frames inline; a damaged copy says so too."""
    page, _ = browser_page
    html = explorer().static().to_html()
    match = re.search(r'(<script type="application/json" class="atensi-data">)(.*?)(</script>)',
                      html, re.S)
    data = json.loads(match.group(2))
    del data["frames"]["2,1"]
    html = html.replace(match.group(0),
                        match.group(1) + framework.json_for_script(data) + match.group(3))
    path = tmp_path / "keluaran.html"
    path.write_text(shell(html), encoding="utf-8")
    root = open_explorer(page, path)
    face = assert_consistent(root, data, None)
    assert FRAMES_GONE in face["readout"] and all(face["disabled"])


def test_page_carries_the_count_it_expects(tmp_path):
    twin = explorer().static()
    assert twin.data()["count"] == [len(twin.frames), len(twin.images)] == [6, 6]
    site = Site(tmp_path)  # the book's page keeps it when its frames become files
    assert site.data["count"] == [len(site.table["frames"]), len(site.table["urls"])] == [6, 6]


# ------------------------------------------------------------ a page of the built book


def copy_page_with_its_frames(built: Path, page: str, target: Path) -> Path:
    """The page and the explorer files it names, at the same places under ``target``."""
    source = built / page
    copy = target / page
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, copy)
    text = source.read_text(encoding="utf-8")
    for match in re.finditer(r'<script type="application/json" class="atensi-data">(.*?)</script>',
                             text, re.S):
        data = json.loads(match.group(1).replace("<\\/", "</"))
        if "src" not in data:
            continue
        script = (source.parent / data["src"]).resolve()
        names = [script] + [(script.parent / u.split("/")[-1]) for u in
                            split_script(script.read_text(encoding="utf-8"))[1]["urls"]]
        for name in names:
            out = target / name.relative_to(built.resolve())
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(name, out)
    return copy


@pytest.mark.book
def test_book_page_with_damaged_frame_files(built_book, browser_page, tmp_path):
    page, _ = browser_page
    chapter = "chapters/mask_kausal.html"
    copy = copy_page_with_its_frames(built_book, chapter, tmp_path / "situs")
    data = page_data(copy)
    script = (copy.parent / data["src"]).resolve()
    _, table = split_script(script.read_text(encoding="utf-8"))
    # One picture other than the start's is deleted, then the whole frame table.
    start = ",".join(str(c["start"]) for c in data["controls"])
    other = next(k for k, f in table["frames"].items()
                 if table["urls"][f[0]] != table["urls"][table["frames"][start][0]])
    (copy.parent / table["urls"][table["frames"][other][0]]).resolve().unlink()
    lost_picture = table["frames"][other][0]
    root = open_explorer(page, copy)
    touch(root)
    went_back = 0
    for n, control in enumerate(data["controls"]):  # control by control towards ``other``
        value = int(other.split(",")[n])
        if control["kind"] != "checkbox":  # a slider's position among the values offered here
            root.evaluate(MOVE, [control["key"], root.evaluate(OFFERED, [n, value])])
        elif root.evaluate(FACE)["checks"][control["key"]] != bool(value):
            root.locator(f'input[data-control="{control["key"]}"]').click()
        root.evaluate(SETTLE)
        face = assert_consistent(root, data, table)
        assert face["visible"] and table["frames"][face["frame"]][0] != lost_picture
        went_back += face["error"] == "gambar"
    assert went_back, "gambar yang hilang tidak pernah diminta"
    script.write_text(script.read_text(encoding="utf-8")[:1000], encoding="utf-8")
    root = open_explorer(page, copy)
    root.evaluate(MOVE, [data["controls"][0]["key"], 0])
    touch(root)
    face = assert_consistent(root, data, None)
    assert FRAMES_GONE in face["readout"] and face["frame"] == start and all(face["disabled"])


# ------------------------------------------------------------ the playground


@pytest.mark.parametrize("damage", ["cut short", "a field missing"])
def test_damaged_playground_data_says_so(browser_page, tmp_path, damage):
    """The playground computes in the page; its data is inline. A page copied or
    saved only in part leaves that data damaged: the placeholder must say so."""
    from atensi.explorers import playground

    page, blocked = browser_page
    html = playground.static().to_html()
    match = re.search(r'(<script type="application/json" class="atensi-playground-data">)(.*?)'
                      r"(</script>)", html, re.S)
    if damage == "cut short":
        text = match.group(2)[: len(match.group(2)) // 2]
    else:
        data = json.loads(match.group(2))
        del data["K"]
        text = framework.json_for_script(data)
    html = html.replace(match.group(0), match.group(1) + text + match.group(3))
    path = tmp_path / "taman.html"
    path.write_text(shell(html), encoding="utf-8")
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(path.as_uri())
    root = page.locator(".atensi-playground")
    root.scroll_into_view_if_needed()
    root.evaluate("""r => new Promise(done => { const start = Date.now(); (function wait() {
      if (r.getAttribute('data-ready') === 'rusak' || Date.now() - start > 30000) done();
      else setTimeout(wait, 20); })(); })""")
    text = root.inner_text()
    assert "gagal dibangun" in text and FRAMES_GONE in text
    assert "dibangun oleh JavaScript di halaman saat Anda menggulir" not in text
    assert root.get_attribute("data-ready") == "rusak" and errors == [] and blocked == []
