"""atensi.explorers.dia: the reference model's weights for the page, the live face,
the static twin, and its JavaScript forward pass in a real browser (against
NumPy, offline, from file://, with damaged weights), on a bare page and in the
built book."""

from __future__ import annotations

import base64
import html as htmllib
import json
import re
import sys
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import numpy as np
import pytest

from atensi import rujukan, tasks
from atensi.explorers import dia

ROOT = Path(__file__).resolve().parents[1]
WIDTHS = (360, 1280)
TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def model():
    return tasks.load_weights("rujukan")


def sentences(n, seed=0):
    """``n`` distinct sentences of the task, active and passive, every name and verb."""
    rng = np.random.default_rng(seed)
    verbs = [v for pair in rujukan.VERB_PAIRS for v in pair]
    out = set()
    while len(out) < n:
        a, b = rng.choice(len(rujukan.NAMES), 2, replace=False)
        completion = rujukan.COMPLETIONS[rng.integers(len(rujukan.COMPLETIONS))]
        out.add(f"{rujukan.NAMES[a]} {verbs[rng.integers(len(verbs))]} {rujukan.NAMES[b]} "
                f"{rujukan.LINK[completion]} dia {completion}")
    return sorted(out)


def numpy_results(model, texts):
    """The NumPy forward pass of the same sentences, in one batch."""
    x = rujukan.question_rows(texts)
    logits = np.asarray(model.logits(x))[:, rujukan.ASK]
    rows = rujukan.head_attention(model, texts)
    return rujukan.resolve(model, texts), logits, rows


# ------------------------------------------------------------------ Python


def test_weights_for_the_page_are_the_model_in_float32(model):
    data = dia.weights_data(model)
    assert data["vocab"] == list(model.chars) and data["head"] == list(model.info["head"])
    assert set(data["params"]) == set(model.params)
    for name, value in model.params.items():
        entry = data["params"][name]
        back = np.frombuffer(base64.b64decode(entry["data"]), dtype="<f4").reshape(entry["shape"])
        np.testing.assert_array_equal(back, value)
    assert data["config"]["positions"] == model.config.positions


def test_compute_is_the_library_answer_and_row(model):
    texts = ["Ani memanggil Budi , dia menoleh", "Ani dipanggil Budi , dia menoleh"]
    results = [dia.compute(model, t) for t in texts]
    assert [r["answer"] for r in results] == rujukan.resolve(model, texts) == ["Budi", "Ani"]
    np.testing.assert_allclose([r["row"] for r in results], rujukan.head_attention(model, texts),
                               atol=1e-6)
    for r in results:
        assert abs(sum(r["probs"]) - 1) < 0.01 and len(r["logits"]) == len(model.chars)


def test_unknown_word_is_refused_in_indonesian_naming_it(model):
    with pytest.raises(ValueError, match="tidak dikenal model: 'Xavier'"):
        dia.compute(model, "Ani memanggil Xavier , dia menoleh")


def test_live_face_follows_the_controls_and_the_text(model):
    box = dia.live(model=model)
    assert box.result["answer"] == "Budi"
    box.controls[rujukan.VERB].value = "dipanggil"
    assert box.result["answer"] == "Ani" and box.text.value == "Ani dipanggil Budi , dia menoleh"
    box.text.value = "Siti menyapa Eko , dia menoleh"
    assert box.result["answer"] == "Eko" and box.controls[rujukan.SECOND].value == "Eko"
    np.testing.assert_allclose(box.result["row"],
                               rujukan.head_attention(model, [box.text.value])[0], atol=1e-6)
    box.controls[rujukan.COMPLETION].value = "bosan"  # the joining word follows
    assert box.text.value == "Siti menyapa Eko karena dia bosan" and box.result["answer"] == "Siti"
    box.text.value = "Siti menyapa Zorro , dia menoleh"
    assert "tidak dikenal model: 'Zorro'" in htmllib.unescape(box.readout.value)
    assert box.result["answer"] == "Siti"  # the last good answer stays


def test_compute_shows_every_layer_and_whether_the_sentence_was_seen(model):
    held = dia.compute(model, "Ani memanggil Budi , dia menoleh")
    trained = dia.compute(model, "Ani memanggil Siti , dia menoleh")
    assert held["seen"] is False and trained["seen"] is True
    labels = dia.head_labels(model)
    assert [label for *_, label in labels] == ["pembaca kata kerja", "pembaca pelengkap",
                                               "pemilih nama"]
    picker = [n for n, (l, h, _) in enumerate(labels) if [l, h] == model.info["head"]][0]
    np.testing.assert_allclose(held["rows"][picker], held["row"], atol=1e-7)
    page = dia.readout_html(held, labels)
    assert dia.UNSEEN in page and page.count("atensi-dia-head\"") == model.config.n_layer
    assert dia.SEEN in dia.readout_html(trained, labels)


def test_mode_follows_the_book_variable(monkeypatch):
    monkeypatch.setenv("ATENSI_BOOK", "1")
    assert isinstance(dia.explorer(), dia.DiaStatic)


def test_static_twin_has_labelled_controls_and_the_start_answer(model):
    page = dia.static(model=model).to_html()
    assert 'lang="id"' in page and "Menurut model" in page and "<strong>Budi</strong>" in page
    for control_id in re.findall(r'<(?:select|input)[^>]* id="([^"]+)"', page):
        assert f'<label for="{control_id}"' in page or f'for="{control_id}"' in page
    weights = re.search(r'<script type="application/json" class="atensi-weights">(.*?)</script>',
                        page, re.S)
    assert json.loads(weights.group(1))["params"]  # a notebook's output carries them inline


def test_package_data_ships_the_javascript_and_css():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["atensi"]
    for path in (dia.JS_PATH, dia.CSS_PATH):
        relative = path.relative_to(ROOT / "src" / "atensi").as_posix()
        assert any(fnmatch(relative, p) for p in patterns), relative


def book_extension():
    sys.path.insert(0, str(ROOT / "_ext"))
    from atensi_book import explorers

    return explorers


def test_site_moves_the_weights_into_one_script_file(model, tmp_path):
    explorers = book_extension()
    page = tmp_path / "chapters" / "bab.html"
    html = explorers.explorer_frames_to_files(dia.static(model=model).to_html(), page, tmp_path)
    holder = json.loads(re.search(r'class="atensi-weights">(.*?)</script>', html).group(1))
    assert set(holder) == {"id", "src"}
    script = (page.parent / holder["src"]).resolve()
    text = script.read_text(encoding="utf-8")
    assert text.startswith("(window.atensiExplorerData")
    assert json.dumps(holder["id"]) in text and len(html) < 40_000


# ------------------------------------------------------------------ browser

TEXT = 'input[data-dia="text"]'
RESULT = """r => {
  const o = r.querySelector('.atensi-dia-readout');
  return o.hasAttribute('data-result') ? JSON.parse(o.getAttribute('data-result')) : null;
}"""
LOADED = """(r) => {
  const holder = JSON.parse(r.querySelector('script.atensi-weights').textContent);
  if (!holder.src) return null;
  const name = holder.src.split('/').pop();
  return performance.getEntriesByType('resource').some(e => e.name.endsWith('/' + name))
    || !!(window.atensiExplorerData && window.atensiExplorerData[holder.id]);
}"""


def page_html(body):
    return ('<!doctype html><html lang="id"><head><meta charset="utf-8"><title>uji</title>'
            '<meta name="viewport" content="width=device-width, initial-scale=1"></head>'
            f"<body><main>{body}</main></body></html>")


def type_sentence(root, text):
    root.locator(TEXT).fill(text)
    return root.evaluate(RESULT)


def answer_shown(root):
    return root.locator(".atensi-dia-answer strong").text_content()


def no_sideways_scroll(page, root, width):
    widths = page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert widths[0] <= widths[1], widths
    box = root.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5


@pytest.fixture(scope="module")
def file_page(tmp_path_factory, model):
    """The twin as the site serves it: a page under chapters/ and its weights file."""
    explorers = book_extension()
    folder = tmp_path_factory.mktemp("situs")
    page = folder / "chapters" / "bab.html"
    page.parent.mkdir()
    page.write_text(page_html(explorers.explorer_frames_to_files(
        dia.static(model=model).to_html(), page, folder)), encoding="utf-8")
    return page


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
def test_javascript_forward_pass_equals_numpy_on_100_sentences(walled_page, model, width):
    opened = walled_page(width=width, allow=())
    page, blocked, errors = opened.page, opened.blocked, opened.console_errors
    page.set_content(page_html(dia.static(model=model).to_html()))
    root = page.locator(".atensi-dia")
    texts = sentences(100, seed=width)
    answers, logits, rows = numpy_results(model, texts)
    worst = 0.0
    for n, text in enumerate(texts):
        got = type_sentence(root, text)
        assert got["sentence"] == text and got["answer"] == answers[n] == answer_shown(root)
        worst = max(worst, float(np.abs(np.asarray(got["logits"]) - logits[n]).max()),
                    float(np.abs(np.asarray(got["row"]) - rows[n]).max()))
    assert worst <= TOLERANCE, worst
    no_sideways_scroll(page, root, width)
    assert blocked == [] and errors == []


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
def test_offline_from_file_weights_load_on_first_touch_and_passive_flips(walled_page,
                                                                         file_page, width):
    opened = walled_page(width=width)
    page, blocked, errors = opened.page, opened.blocked, opened.console_errors
    page.goto(file_page.as_uri())
    root = page.locator(".atensi-dia")
    page.wait_for_timeout(300)
    assert root.evaluate(LOADED) is False, "bobot dimuat sebelum disentuh"
    assert answer_shown(root) == "Budi"  # computed by NumPy when the page was built
    # Keyboard only: Tab to the first control, the arrow key picks the next name.
    page.keyboard.press("Tab")
    assert root.evaluate("r => r.contains(document.activeElement)")
    page.wait_for_function(
        "() => document.querySelector('.atensi-dia').hasAttribute('data-ready')")
    assert root.evaluate(LOADED) is True
    active = type_sentence(root, "Ani memanggil Budi , dia menoleh")
    root.locator(TEXT).fill("")
    root.locator(TEXT).press_sequentially("Ani dipanggil Budi , dia menoleh")
    passive = root.evaluate(RESULT)
    assert (active["answer"], passive["answer"]) == ("Budi", "Ani")
    assert answer_shown(root) == "Ani"
    assert root.locator('select[data-slot="1"]').input_value() == "dipanggil"
    root.locator('select[data-slot="1"]').select_option("memanggil")
    assert answer_shown(root) == "Budi"
    root.locator(TEXT).fill("Ani dipanggil Gatot , dia menoleh")
    message = root.locator(".atensi-error").text_content()
    assert "tidak dikenal model: 'Gatot'" in message
    no_sideways_scroll(page, root, width)
    assert blocked == [] and errors == []


@pytest.mark.browser
@pytest.mark.parametrize("damage", ["hilang", "terpotong", "angka-salah"])
def test_damaged_weights_give_an_indonesian_message_not_garbage(walled_page, file_page,
                                                                damage, tmp_path):
    page_text = file_page.read_text(encoding="utf-8")
    src = json.loads(re.search(r'class="atensi-weights">(.*?)</script>', page_text).group(1))["src"]
    weights = (file_page.parent / src).resolve()
    copy = tmp_path / "chapters" / "bab.html"
    copy.parent.mkdir()
    copy.write_text(page_text, encoding="utf-8")
    target = (copy.parent / src).resolve()
    target.parent.mkdir(parents=True)
    text = weights.read_text(encoding="utf-8")
    if damage == "terpotong":
        target.write_text(text[: len(text) // 2], encoding="utf-8")
    elif damage == "angka-salah":  # whole file, one parameter a few floats short
        target.write_text(re.sub(r'("l1\.Wq":\{"shape":\[32,32\],"data":")....', r"\1", text),
                          encoding="utf-8")
        assert target.read_text(encoding="utf-8") != text
    opened = walled_page(width=360)
    page, blocked, errors = opened.page, opened.blocked, opened.console_errors
    page.goto(copy.as_uri())
    root = page.locator(".atensi-dia")
    root.locator('select[data-slot="1"]').select_option("dipanggil")
    page.wait_for_function(
        "() => document.querySelector('.atensi-dia').getAttribute('data-error') === 'bobot'")
    message = root.locator(".atensi-error").text_content()
    assert message.startswith("Bobot model gagal dimuat") and "Muat ulang halaman" in message
    assert answer_shown(root) == "Budi"  # the start sentence and its answer, not garbage
    assert root.locator('select[data-slot="1"]').input_value() == "memanggil"
    assert root.locator(TEXT).is_disabled()
    assert blocked == []
    # The browser's own report of the broken file, and nothing from the page's code.
    expected = {"hilang": ("ERR_FILE_NOT_FOUND", "Failed to load"),
                "terpotong": ("SyntaxError", "Unexpected", "Invalid or unexpected token"),
                "angka-salah": ()}[damage]
    assert all(any(x in e for x in expected) for e in errors), errors


def _weights_src(page_text):
    return json.loads(re.search(r'class="atensi-weights">(.*?)</script>',
                                page_text).group(1))["src"]


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
def test_an_edit_typed_before_the_weights_arrive_is_kept(walled_page, file_page, width):
    name = _weights_src(file_page.read_text(encoding="utf-8")).split("/")[-1]
    opened = walled_page(width=width)
    page, errors = opened.page, opened.console_errors
    held = []
    page.route(f"**/{name}", lambda route: held.append(route))  # a slow phone: not yet
    page.goto(file_page.as_uri())
    root = page.locator(".atensi-dia")
    root.locator(TEXT).fill("Ani dipanggil Budi , dia menoleh")  # valid, waits for weights
    page.wait_for_function("() => true")
    root.locator(TEXT).fill("Ani dipanggil Gatot , dia menoleh")  # then an invalid edit
    assert held, "bobot tidak diminta"
    held[0].continue_()
    page.wait_for_function(
        "() => document.querySelector('.atensi-dia').hasAttribute('data-ready')")
    page.wait_for_timeout(100)
    assert root.locator(TEXT).input_value() == "Ani dipanggil Gatot , dia menoleh"
    assert "tidak dikenal model: 'Gatot'" in root.locator(".atensi-error").text_content()
    assert root.get_attribute("data-error") == "kalimat"
    no_sideways_scroll(page, root, width)
    assert errors == []


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
def test_names_in_any_case_the_badge_and_every_layer(walled_page, model, width):
    opened = walled_page(width=width, allow=())
    page = opened.page
    page.set_content(page_html(dia.static(model=model).to_html()))
    root = page.locator(".atensi-dia")
    got = type_sentence(root, "Ani memanggil budi, dia menoleh")
    assert got["answer"] == "Budi" and got["seen"] is False
    assert root.locator(".atensi-dia-badge").text_content() == dia.UNSEEN
    assert root.locator(".atensi-dia-head").count() == model.config.n_layer
    expected = dia.compute(model, "Ani memanggil Budi , dia menoleh")["rows"]
    assert np.abs(np.asarray(got["rows"]) - np.asarray(expected)).max() <= TOLERANCE
    flip = type_sentence(root, "Ani memanggil Budi karena dia bosan")
    assert flip["answer"] == "Ani"
    assert type_sentence(root, "Ani memanggil Siti , dia menoleh")["seen"] is True
    assert root.locator(".atensi-dia-badge").text_content() == dia.SEEN
    root.locator(TEXT).fill("\u0410ni memanggil Budi , dia menoleh")
    assert "huruf U+0410 (Kiril) yang mirip 'A'" in root.locator(".atensi-error").text_content()
    root.locator(TEXT).fill("Ani memanggil \u202eBudi , dia menoleh")
    message = root.locator(".atensi-error").text_content()
    assert "U+202E" in message and "\u202e" not in message
    root.locator(TEXT).fill("A" * 5000 + " memanggil Budi , dia menoleh")
    assert len(root.locator(".atensi-error").text_content()) < 600
    no_sideways_scroll(page, root, width)
    assert opened.blocked == [] and opened.console_errors == []


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
def test_guess_first_hides_the_answer_until_the_reader_chooses(walled_page, model, width):
    opened = walled_page(width=width, allow=())
    page = opened.page
    page.set_content(page_html(dia.static(model=model).to_html()))
    root = page.locator(".atensi-dia")
    root.locator('input[data-dia="guess"]').check()
    type_sentence(root, "Ani memanggil Budi karena dia bosan")
    assert root.locator(".atensi-dia-readout").is_hidden()
    buttons = root.locator(".atensi-dia-guess button")
    assert buttons.all_text_contents() == ["Ani", "Budi"]
    buttons.nth(1).click()  # Budi: wrong, the bored one is the caller
    verdict = root.locator(".atensi-dia-verdict")
    assert verdict.get_attribute("data-right") == "false" and "Model menjawab Ani" in \
        verdict.text_content()
    assert root.locator(".atensi-dia-readout").is_visible()
    type_sentence(root, "Ani dipanggil Budi karena dia bosan")
    root.locator(".atensi-dia-guess button", has_text="Budi").click()
    assert root.locator(".atensi-dia-verdict").get_attribute("data-right") == "true"
    no_sideways_scroll(page, root, width)
    assert opened.console_errors == []


def _tampered(model, how):
    from atensi.model import Config, TinyGPT

    if how == "model-ingat":
        other = TinyGPT.load(ROOT / "results" / "model_ingat.npz")
        other.info = dict(other.info, head=[0, 0])
        return dia.weights_data(other)
    if how == "acak":
        fresh = TinyGPT(Config(vocab=len(rujukan.VOCAB), **dict(
            __import__("atensi.rujukan_train").rujukan_train.MODEL, seed=7)), rujukan.VOCAB)
        fresh.info = dict(model.info)
        return dia.weights_data(fresh)
    data = dia.weights_data(model)
    if how == "T4":
        data["config"]["T"] = 4
        wpe = np.frombuffer(base64.b64decode(data["params"]["wpe"]["data"]), "<f4")
        data["params"]["wpe"] = {"shape": [4, model.config.d_model], "data": base64.b64encode(
            wpe[:4 * model.config.d_model].tobytes()).decode("ascii")}
    elif how == "kali-1e38":
        for entry in data["params"].values():
            values = np.frombuffer(base64.b64decode(entry["data"]), "<f4")
            scaled = np.where(np.abs(values) < 1, values * np.float32(1e38), values)
            entry["data"] = base64.b64encode(scaled.astype("<f4").tobytes()).decode("ascii")
    elif how == "kata-kerja-ditukar":
        vocab = data["vocab"]
        a, b = vocab.index("memanggil"), vocab.index("dipanggil")
        vocab[a], vocab[b] = vocab[b], vocab[a]
    return data


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("how", ["model-ingat", "T4", "kali-1e38", "kata-kerja-ditukar", "acak"])
def test_foreign_or_tampered_weights_are_refused_not_run(walled_page, model, how, width, tmp_path):
    body = re.sub(r'(<script type="application/json" class="atensi-weights">).*?(</script>)',
                  lambda m: m.group(1) + json.dumps(_tampered(model, how)).replace(
                      "</", "<\\/") + m.group(2), dia.static(model=model).to_html(),
                  count=1, flags=re.S)
    # As the site serves it: the (tampered) weights in their own script file,
    # which arrives late, after the reader's first touch (a phone on a slow line).
    page_file = tmp_path / "chapters" / "bab.html"
    page_file.parent.mkdir()
    page_file.write_text(page_html(book_extension().explorer_frames_to_files(
        body, page_file, tmp_path)), encoding="utf-8")
    name = _weights_src(page_file.read_text(encoding="utf-8")).split("/")[-1]
    opened = walled_page(width=width)
    page = opened.page
    held = []
    page.route(f"**/{name}", lambda route: held.append(route))
    page.goto(page_file.as_uri())
    root = page.locator(".atensi-dia")
    root.locator('select[data-slot="1"]').select_option("dipanggil")
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(20)
    assert held, "bobot tidak diminta"
    assert root.get_attribute("data-error") != "bobot"  # nothing judged before they arrive
    held[0].continue_()
    page.wait_for_function(
        "() => document.querySelector('.atensi-dia').getAttribute('data-error') === 'bobot'")
    assert root.locator(".atensi-error").text_content().startswith("Bobot model gagal dimuat")
    assert answer_shown(root) == "Budi" and "NaN" not in root.inner_text()
    assert root.locator(TEXT).is_disabled()
    no_sideways_scroll(page, root, width)
    assert opened.console_errors == []


@pytest.mark.browser
def test_twin_has_no_serious_accessibility_problem(walled_page, model):
    from axe_playwright_python.sync_playwright import Axe

    page = walled_page(width=360, allow=()).page
    page.set_content(page_html(dia.static(model=model).to_html()))
    type_sentence(page.locator(".atensi-dia"), "Ani dipanggil Budi , dia menoleh")
    results = Axe().run(page)
    problems = [f"{v['id']}: {v['help']}" for v in results.response["violations"]
                if v["impact"] in ("serious", "critical")]
    assert problems == []


# ------------------------------------------------------------------ built book


@pytest.mark.book
@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
def test_book_twin_computes_in_the_page_offline(built_book, open_page, model, width):
    chapter = built_book / "chapters" / "siapa_dia.html"
    text = chapter.read_text(encoding="utf-8")
    assert text.count('class="atensi-dia"') == 1
    holder = json.loads(re.search(r'class="atensi-weights">(.*?)</script>', text).group(1))
    assert set(holder) == {"id", "src"}  # the weights are a file of their own
    opened = open_page("chapters/siapa_dia.html", width=width)
    page = opened.page
    root = page.locator(".atensi-dia")
    assert root.evaluate(LOADED) is False, "bobot dimuat sebelum disentuh"
    root.locator(TEXT).focus()
    page.wait_for_function("() => document.querySelector('.atensi-dia').hasAttribute('data-ready')")
    texts = sentences(20, seed=3) + ["Ani memanggil Budi , dia menoleh"]
    answers, logits, rows = numpy_results(model, texts)
    for n, sentence in enumerate(texts):
        got = type_sentence(root, sentence)
        assert got["answer"] == answers[n]
        assert np.abs(np.asarray(got["logits"]) - logits[n]).max() <= TOLERANCE
        assert np.abs(np.asarray(got["row"]) - rows[n]).max() <= TOLERANCE
    assert type_sentence(root, "Ani dipanggil Budi , dia menoleh")["answer"] == "Ani"
    root.scroll_into_view_if_needed()
    no_sideways_scroll(page, root, width)
    assert opened.blocked == [] and opened.failed == [] and opened.console_errors == []
