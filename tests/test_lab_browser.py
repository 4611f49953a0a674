"""The live path: `make lab`'s JupyterLab, driven in Chromium.

For every chapter with an explorer: open its notebook in JupyterLab (started
headless on a free localhost port with a token, exactly as ``scripts/lab.py``
starts it), run all cells, move the explorer's slider, and check that the
figure changes within 2 s and that no error output appears. Every request
that would leave 127.0.0.1 is aborted and fails the test: JupyterLab serves
its own assets.
"""

from __future__ import annotations

import os
import re
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import ROOT, toc_pages

pytestmark = [pytest.mark.browser, pytest.mark.book]

sys.path.insert(0, str(ROOT / "scripts"))
import lab  # noqa: E402

EXPLORER_CALL = re.compile(r"^\s*(sharpness|mask|row|attention_maps)\.explorer\(", re.M)
CHAPTERS_WITH_EXPLORERS = [
    page.split("/")[-1]
    for page in toc_pages()
    if EXPLORER_CALL.search((ROOT / f"{page}.md").read_text(encoding="utf-8"))
]
RUN_ALL_TIMEOUT_MS = 180_000
CHANGE_WITHIN_MS = 2_000


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
    deadline = time.time() + 60
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
        pytest.fail("JupyterLab tidak siap dalam 60 s")
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


def test_some_chapters_have_explorers():
    assert len(CHAPTERS_WITH_EXPLORERS) >= 3, CHAPTERS_WITH_EXPLORERS


@pytest.mark.parametrize("chapter", CHAPTERS_WITH_EXPLORERS)
def test_explorer_slider_redraws_live(jupyterlab, chromium, chapter):
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
        page.goto(f"{base}lab/tree/{chapter}.ipynb?token={token}&reset", wait_until="load")
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
        page.wait_for_selector("[data-uji] .atensi-live img", state="attached",
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

        explorer = page.locator("[data-uji] .atensi-live").first
        explorer.evaluate("e => e.scrollIntoView({block: 'center'})")
        explorer.locator(".noUi-handle").first.wait_for(state="visible", timeout=30_000)
        image = explorer.locator("img").first
        before = image.get_attribute("src")
        handle = explorer.locator(".noUi-handle").first
        handle.focus()
        page.keyboard.press("ArrowRight")
        start = time.perf_counter()
        page.wait_for_function(
            "([el, old]) => el.getAttribute('src') !== old",
            arg=[image.element_handle(), before], timeout=CHANGE_WITHIN_MS * 5)
        seconds = time.perf_counter() - start
        print(f"\n{chapter}: gambar berubah dalam {seconds * 1000:.0f} ms")
        assert seconds <= CHANGE_WITHIN_MS / 1000
        errors = page.eval_on_selector_all(
            "[data-mime-type='application/vnd.jupyter.stderr']",
            "els => els.map(e => e.textContent).filter(t => /Error|Traceback/.test(t))")
        assert errors == [], errors
        assert outside == [], f"permintaan ke luar localhost: {outside[:5]}"
    finally:
        context.close()
