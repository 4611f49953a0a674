"""Shared fixtures: the built book and a headless Chromium that stays inside it.

- ``book_build`` / ``built_book``: the book is built once per test session, from
  clean, into a temporary folder, with warnings as errors; with several
  workers (``make test``) the first one to need it builds it and the others
  wait for it (``sharing``). Set
  ``ATENSI_REUSE_BUILD=1`` to build into the repository's ``_build/`` instead
  (cached and incremental: fast when iterating on one test), or
  ``ATENSI_BOOK_HTML=path/to/_build/html`` to test an existing build.
- ``walled_page``: a page in Debian's Chromium through Playwright, in a
  context of its own, where every request outside the allowed addresses
  (``file://`` unless told) is blocked and recorded, and so are console
  errors. Browser tests start from this fixture.
- ``open_page``: a ``walled_page`` on a page of the built book, served from
  127.0.0.1; every request to anywhere else is blocked and recorded.

Without Chromium the browser tests skip with a message, except under
``CI=true`` or ``make test`` (``ATENSI_BROWSER_REQUIRED=1``), where a missing
browser is a failure.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

import scheduling
from budgets import (  # noqa: F401 (pytest finds the hooks by name here)
    SHARED_BUILD,
    pytest_runtest_logreport,
    pytest_runtest_makereport,
    pytest_runtest_setup,
    pytest_sessionfinish,
    pytest_terminal_summary,
    shared_work,
)
from chapter_runs import BOOK_REPOSITORY, cache_for_the_build, shared_run
from sharing import locked, shared_folder

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
BUILD_FLAGS = ["--warningiserror", "--nitpick", "--keep-going"]


@pytest.hookimpl(tryfirst=True)  # before xdist turns the groups into node ids
def pytest_collection_modifyitems(items):
    scheduling.group_for_workers(items)


if scheduling.XDIST:
    def pytest_xdist_make_scheduler(config, log):
        if config.getvalue("dist") == "loadgroup":
            return scheduling.BookLastScheduling(config, log)
        return None


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def toc_pages() -> list[str]:
    """Every page of the book, in reading order, as 'chapters/name' (no suffix)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    pages = [toc["root"]]
    for part in toc.get("parts", []):
        pages += [chapter["file"] for chapter in part["chapters"]]
    return pages


def jupyter_book_command() -> list[str]:
    exe = Path(sys.executable).parent / "jupyter-book"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("jupyter-book")
    if found is None:
        pytest.fail("Perintah 'jupyter-book' tidak ditemukan. Jalankan: make test")
    return [found]


@dataclass
class BookBuild:
    returncode: int
    output: str  # stdout and stderr together
    seconds: float
    html: Path  # _build/html
    output_root: Path  # the folder given to --path-output


def build_book(output_root: Path) -> BookBuild:
    """Run ``jupyter-book build`` with warnings as errors into ``output_root/_build``."""
    cmd = jupyter_book_command() + ["build", str(ROOT), "--path-output", str(output_root)]
    start = time.perf_counter()
    proc = subprocess.run(
        cmd + BUILD_FLAGS,
        cwd=ROOT,
        env={**os.environ, **BOOK_REPOSITORY},  # launch buttons and setup cells point there
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    seconds = time.perf_counter() - start
    return BookBuild(proc.returncode, proc.stdout, seconds, output_root / "_build" / "html", output_root)


@pytest.fixture(scope="session")
def chapter_run(tmp_path_factory):
    """``chapter_run(page)``: the session's one execution of a chapter with its answers."""
    return functools.partial(shared_run, store=shared_folder(tmp_path_factory) / "bab")


@pytest.fixture(scope="session")
def book_build(tmp_path_factory, chapter_run) -> BookBuild:
    """The session's one book build (from clean unless ATENSI_REUSE_BUILD=1).

    Every chapter is executed first, once, with its answers (``chapter_runs``);
    the build reads those outputs from its execution cache instead of running
    the chapters again.
    """
    shared = shared_folder(tmp_path_factory)
    if os.environ.get("ATENSI_REUSE_BUILD") == "1":
        output_root = ROOT
    else:
        output_root = shared / "buku"
    record = shared / "build.json"
    with locked(shared / "build.lock"):
        if record.exists():
            done = json.loads(record.read_text(encoding="utf-8"))
            return BookBuild(done["returncode"], done["output"], done["seconds"],
                             Path(done["html"]), Path(done["output_root"]))
        cache_dir = output_root / "_build" / ".jupyter_cache"
        cache_dir.parent.mkdir(parents=True, exist_ok=True)
        for page in toc_pages():
            cache_for_the_build(chapter_run(page), cache_dir)
        with shared_work(SHARED_BUILD):
            build = build_book(output_root)
        partial = record.with_suffix(".tmp")
        partial.write_text(json.dumps({
            "returncode": build.returncode, "output": build.output, "seconds": build.seconds,
            "html": str(build.html), "output_root": str(build.output_root),
        }), encoding="utf-8")
        os.replace(partial, record)
        return build


@pytest.fixture(scope="session")
def built_book(request) -> Path:
    """Path to the built ``_build/html``; fails when the build failed.

    ``ATENSI_BOOK_HTML=/path/to/_build/html`` uses an existing build instead
    (for quick iteration on the HTML and browser tests only).
    """
    prebuilt = os.environ.get("ATENSI_BOOK_HTML")
    if prebuilt:
        return Path(prebuilt).resolve()
    book_build = request.getfixturevalue("book_build")
    if book_build.returncode != 0:
        lines = book_build.output.splitlines()
        problems = [line for line in lines if "WARNING" in line or "ERROR" in line]
        tail = "\n".join(problems + ["..."] + lines[-30:])
        pytest.fail(f"Buku gagal dibangun (kode {book_build.returncode}):\n{tail}")
    return book_build.html


# --- Browser -----------------------------------------------------------------


def _browser_missing(reason: str):
    message = (
        f"{reason} Pasang dengan: bash scripts/paket_sistem.sh test "
        "(atau apt-get update && apt-get install -y chromium)."
    )
    if in_ci():
        pytest.fail(f"CI=true dan uji peramban tidak bisa dijalankan: {message}")
    # make test sets this: a run that tested no page must not pass.
    if os.environ.get("ATENSI_BROWSER_REQUIRED") == "1":
        pytest.fail(f"make test dan uji peramban tidak bisa dijalankan: {message}")
    pytest.skip(message)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # keep pytest output clean
        pass


@pytest.fixture(scope="session")
def book_server(built_book):
    """Serve the built book on 127.0.0.1 (random port); yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(built_book))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def chromium():
    if not Path(CHROMIUM).exists():
        _browser_missing(f"Chromium tidak ada di {CHROMIUM}.")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _browser_missing("Paket Python 'playwright' tidak terpasang (requirements-dev.txt).")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield browser
        browser.close()


@dataclass
class OpenedPage:
    page: object  # playwright.sync_api.Page
    url: str
    blocked: list[str] = field(default_factory=list)  # requests that tried to leave the site
    failed: list[str] = field(default_factory=list)  # requests inside the site that failed
    console_errors: list[str] = field(default_factory=list)
    context: object = None  # playwright.sync_api.BrowserContext, closed after the test


@pytest.fixture
def walled_page(chromium):
    """Factory: ``walled_page(width=360, allow=("file://",), has_touch=True)``.

    A new page in a context of its own where every request whose address does
    not start with one of ``allow`` is aborted and listed in ``.blocked``
    (``allow=()`` blocks everything: pages given with ``set_content``).
    Console errors and uncaught page errors go to ``.console_errors``; requests
    that were allowed and failed go to ``.failed``. Other keywords go to
    ``new_context`` (``has_touch``, ``device_scale_factor``). Every context is
    closed after the test.
    """
    contexts = []

    def _open(*, width: int = 1280, height: int = 800, allow=("file://",), **context_options):
        allow = tuple(allow)
        context = chromium.new_context(viewport={"width": width, "height": height},
                                       **context_options)
        contexts.append(context)
        page = context.new_page()
        opened = OpenedPage(page=page, url="", context=context)

        def route(route_):
            url = route_.request.url
            if allow and url.startswith(allow):
                route_.continue_()
            else:
                opened.blocked.append(url)
                route_.abort()

        context.route("**/*", route)
        page.on("console", lambda msg: msg.type == "error" and opened.console_errors.append(msg.text))
        page.on("pageerror", lambda exc: opened.console_errors.append(str(exc)))
        page.on("requestfailed",
                lambda req: allow and req.url.startswith(allow) and opened.failed.append(req.url))
        return opened

    yield _open
    for context in contexts:
        context.close()


@pytest.fixture
def open_page(walled_page, book_server):
    """Factory: ``open_page("chapters/pendahuluan.html", width=360, height=800)``.

    Returns an ``OpenedPage`` after the ``load`` event. Requests outside the
    local server are aborted and listed in ``.blocked``.
    """

    def _open(path: str = "chapters/pendahuluan.html", *, width: int = 1280, height: int = 800):
        opened = walled_page(width=width, height=height, allow=(book_server,))
        opened.url = book_server + path
        response = opened.page.goto(opened.url, wait_until="load")
        assert response is not None and response.ok, f"Gagal membuka {opened.url}"
        return opened

    return _open
