"""The live path: `make lab`'s JupyterLab, driven in Chromium.

For every chapter with an explorer (``explorer_list``: the library's one list
of explorers and the chapters that call them): open its notebook in JupyterLab
(started headless on a free localhost port with a token, exactly as
``scripts/lab.py`` starts it), run all cells, and for every explorer in it
move its first control as a reader would: the face must change (its figure,
or what Python computed for it) and no error output may appear. How long the
change took is printed beside the 2 s target, never asserted: a busy machine
must pass the same test (`scripts/bench_explorers.py` measures speed).
Every request that would leave 127.0.0.1 is aborted and fails the test:
JupyterLab serves its own assets.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import ROOT
from explorer_list import CHAPTERS, ENTRIES

pytestmark = [pytest.mark.browser, pytest.mark.book]

sys.path.insert(0, str(ROOT / "scripts"))
import lab  # noqa: E402

RUN_ALL_TIMEOUT_MS = 180_000
CHANGE_TARGET_MS = 2_000  # printed beside the measured time
CHANGE_TIMEOUT_MS = 30_000  # no change by then: the face is dead
# A loaded 2-core machine starts JupyterLab in well over a minute.
LAB_START_TIMEOUT_S = 300

# How a reader moves the first control of a live face, by what the face holds:
# (control, key pressed or None to pick another option, what must then change).
# A slider redraws the figure; the playground's point is sent to Python, whose
# result is drawn (the page computes nothing itself); a drop-down list is read
# back by Python, whose answer replaces the readout; a row of buttons (a
# ``Choice(buttons=True)``, the mask kind) is tapped on a button not yet chosen.
# The row of buttons comes first: it is the mask explorer's first control.
TOGGLE_BUTTONS = ".jupyter-widget-toggle-buttons button, .widget-toggle-buttons button"
DRIVERS = [
    (TOGGLE_BUTTONS, "tap", "img"),
    (".noUi-handle", "ArrowRight", "img"),
    ("[data-pg=handle]", "ArrowRight", "[data-pg=score]"),
    ("select", None, ".widget-html-content"),
]
WATCH = """([face, selector, attr]) => Array.from(face.querySelectorAll(selector))
  .map(e => attr ? e.getAttribute(attr) : e.textContent).join('|')"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def jupyterlab():
    if not (Path(sys.executable).parent / "jupyter-lab").exists():
        pytest.fail("JupyterLab tidak terpasang: pip install -r requirements-dev.txt")
    port, token = _free_port(), secrets.token_hex(16)
    env = {k: v for k, v in os.environ.items() if k != "ATENSI_BOOK"}
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "scripts" / "lab.py"), "--no-browser", f"--port={port}",
         f"--IdentityProvider.token={token}", "--expose-app-in-browser",
         "--ServerApp.port_retries=0"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    base = f"http://127.0.0.1:{port}/"
    deadline = time.time() + LAB_START_TIMEOUT_S
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"{base}api/status?token={token}", timeout=2)
            break
        except OSError:
            if proc.poll() is not None:
                pytest.fail(f"JupyterLab berhenti:\n{proc.stdout.read()}")
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail(f"JupyterLab tidak siap dalam {LAB_START_TIMEOUT_S} s")
    yield base, token
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


def test_lab_command_stays_on_this_computer():
    cmd = lab.command([])
    assert "--ServerApp.ip=127.0.0.1" in cmd
    assert f"--ServerApp.root_dir={ROOT / 'chapters'}" in cmd
    assert any("NeverCheckForUpdate" in part for part in cmd)


def test_every_explorer_of_the_list_is_in_a_tested_chapter():
    assert {e.name for es in CHAPTERS.values() for e in es} == {e.name for e in ENTRIES}


def move_first_control(page, face):
    """Move the face's first control; returns (what changed, seconds it took)."""
    for control, key, watched in DRIVERS:
        if face.locator(control).count():
            break
    else:
        raise AssertionError("wajah hidup tanpa kontrol yang dikenal")
    args = [face.element_handle(), watched, "src" if watched == "img" else None]
    before = page.evaluate(WATCH, args)
    handle = face.locator(control).first
    if key == "tap":
        other = ", ".join(f"{part}:not(.mod-active)" for part in control.split(", "))
        face.locator(other).first.click()
    elif key is None:
        now, options = handle.evaluate("s => [s.value, [...s.options].map(o => o.value)]")
        handle.select_option(next(v for v in options if v != now))
    else:
        handle.focus()
        page.keyboard.press(key)
    start = time.perf_counter()
    page.wait_for_function(f"([args, old]) => ({WATCH})(args) !== old",
                           arg=[args, before], timeout=CHANGE_TIMEOUT_MS)
    return watched, time.perf_counter() - start


@pytest.mark.parametrize("chapter", list(CHAPTERS))
def test_every_explorer_responds_live(jupyterlab, chromium, chapter):
    base, token = jupyterlab
    # The session's Chromium (conftest): one Playwright per process.
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    outside: list[str] = []

    def route(r):
        if r.request.url.startswith(base):
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    try:
        # reset: a fresh workspace, so tabs of earlier chapters are not restored.
        page.goto(f"{base}lab/tree/{chapter.split('/')[-1]}.ipynb?token={token}&reset",
                  wait_until="load")
        page.wait_for_function("window.jupyterapp && window.jupyterapp.shell.currentWidget"
                               " && window.jupyterapp.shell.currentWidget.sessionContext",
                               timeout=60_000)
        page.wait_for_function(
            "window.jupyterapp.shell.currentWidget.sessionContext.session?.kernel?.status === 'idle'",
            timeout=60_000)
        # Everything below looks only inside this chapter's notebook panel.
        page.evaluate("window.jupyterapp.shell.currentWidget.node.setAttribute('data-uji', '1')")
        page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
        # Off-screen cells are not painted (content-visibility): wait until attached.
        for entry in CHAPTERS[chapter]:
            page.wait_for_selector(f"[data-uji] .atensi-live-{entry.name}", state="attached",
                                   timeout=RUN_ALL_TIMEOUT_MS)
        # Wait until every cell has run (no "[*]" prompt left) and the kernel is idle.
        page.wait_for_function(
            "![...document.querySelectorAll('[data-uji] .jp-InputPrompt')]"
            ".some(p => p.textContent.includes('*'))"
            " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status === 'idle'",
            timeout=RUN_ALL_TIMEOUT_MS)
        errors = page.eval_on_selector_all(
            "[data-mime-type='application/vnd.jupyter.stderr']",
            "els => els.map(e => e.textContent).filter(t => /Error|Traceback/.test(t))")
        assert errors == [], errors

        for entry in CHAPTERS[chapter]:
            face = page.locator(f"[data-uji] .atensi-live-{entry.name}").first
            face.evaluate("e => e.scrollIntoView({block: 'center'})")
            face.locator("input, select, button, [tabindex], .noUi-handle").first.wait_for(
                state="visible", timeout=30_000)
            watched, seconds = move_first_control(page, face)
            print(f"\n{chapter} {entry.name}: {watched} berubah dalam {seconds * 1000:.0f} ms "
                  f"(sasaran {CHANGE_TARGET_MS} ms)")
        errors = page.eval_on_selector_all(
            "[data-mime-type='application/vnd.jupyter.stderr']",
            "els => els.map(e => e.textContent).filter(t => /Error|Traceback/.test(t))")
        assert errors == [], errors
        assert outside == [], f"permintaan ke luar localhost: {outside[:5]}"
    finally:
        context.close()
