"""The published site: the Pages workflow, the site's address, sitemap,
robots.txt, social cards, the 404 page, Indonesian screen-reader labels,
internal links and anchors, and search that understands Indonesian affixes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml
from bs4 import BeautifulSoup

from chapter_runs import BOOK_REPOSITORY
from conftest import ROOT, toc_pages

sys.path.insert(0, str(ROOT / "_ext"))
from atensi_book import guard as book_guard  # noqa: E402
from atensi_book import site as site_meta  # noqa: E402

WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"
# The test builds are made for BOOK_REPOSITORY (tests/chapter_runs.py).
SITE = site_meta.github_pages_url("https://github.com/" + BOOK_REPOSITORY["ATENSI_REPOSITORY"])


# --- The workflow ---------------------------------------------------------------


def test_workflow_passes_actionlint():
    exe = Path(sys.executable).parent / "actionlint"
    if not exe.exists():
        pytest.fail("actionlint tidak terpasang: pip install -r requirements-dev.txt")
    proc = subprocess.run([str(exe), str(WORKFLOW)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _readme_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", readme, re.S).group(1)
    return [line.strip() for line in block.splitlines() if line.strip()]


def _workflow_runs(job: str) -> list[str]:
    jobs = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]
    lines = []
    for step in jobs[job]["steps"]:
        lines += [line.strip() for line in step.get("run", "").splitlines()]
    return lines


def test_workflow_tests_and_publishes_through_the_ci_script():
    book, test = _readme_commands()[:2]
    assert (book, test) == ("make book", "make test")
    # .ci/run with no argument is `make test` (tests/test_ci.py); with targets, those.
    assert "bash .ci/run" in _workflow_runs("test")
    assert "bash .ci/run book pdf zip" in _workflow_runs("publish")
    jobs = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]
    uses = {job: [step.get("uses", "") for step in jobs[job]["steps"]] for job in jobs}
    for action in ("actions/configure-pages", "actions/upload-pages-artifact",
                   "actions/deploy-pages", "actions/upload-artifact", "actions/cache"):
        assert any(u.startswith(action + "@") for u in uses["publish"]), action
    assert any(u.startswith("actions/cache@") for u in uses["test"])


# --- The site's address -----------------------------------------------------------


@pytest.mark.parametrize(
    "repo, site",
    [
        ("https://github.com/atensi-id/atensi", "https://atensi-id.github.io/atensi/"),
        ("https://github.com/Budi/buku-atensi.git", "https://budi.github.io/buku-atensi/"),
        ("https://github.com/Budi/buku/", "https://budi.github.io/buku/"),
    ],
)
def test_pages_url_follows_the_repository(repo, site):
    assert site_meta.github_pages_url(repo) == site


@pytest.mark.parametrize("repo", ["", "http://github.com/a/b", "https://gitlab.com/a/b",
                                  "https://github.com/hanya-pemilik"])
def test_a_repository_url_that_is_not_github_is_refused_in_indonesian(repo):
    with pytest.raises(ValueError, match="bukan alamat GitHub"):
        site_meta.github_pages_url(repo)


# --- The built site -----------------------------------------------------------------

book = pytest.mark.book


def _soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


@book
def test_sitemap_and_robots_use_the_site_address(built_book):
    sitemap = (built_book / "sitemap.xml").read_text(encoding="utf-8")
    locations = re.findall(r"<loc>([^<]+)</loc>", sitemap)
    assert sorted(locations) == sorted(SITE + page + ".html" for page in toc_pages())
    robots = (built_book / "robots.txt").read_text(encoding="utf-8")
    assert f"Sitemap: {SITE}sitemap.xml" in robots


@book
@pytest.mark.parametrize("page", toc_pages())
def test_social_card_meta_is_indonesian(built_book, page):
    soup = _soup(built_book / f"{page}.html")
    meta = {m.get("property"): m.get("content") for m in soup.find_all("meta") if m.get("property")}
    assert meta["og:url"] == SITE + page + ".html"
    assert meta["og:image"] == SITE + site_meta.CARD
    assert meta["og:locale"] == "id_ID"
    assert meta["og:title"] and meta["og:description"]
    words = set(re.findall(r"[a-z]+", meta["og:description"].lower()))
    assert words & {"yang", "dan", "di", "ini", "untuk", "dengan", "setiap"}, meta["og:description"]


@book
def test_social_card_image_is_drawn_by_the_build(built_book):
    card = built_book / site_meta.CARD
    assert card.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    from matplotlib.image import imread

    assert imread(card).shape[:2] == (630, 1200)


@book
def test_404_page_is_indonesian_and_links_to_the_contents(built_book):
    soup = _soup(built_book / "404.html")
    text = " ".join(soup.get_text(" ").split())
    assert site_meta.NOT_FOUND_TITLE in text
    prefix = urlparse(SITE).path
    links = [a["href"] for a in soup.find_all("a", href=True)]
    assert f"{prefix}chapters/pendahuluan.html" in links
    # Absolute paths under the site's folder: it works at any depth.
    assets = [t.get("src") or t.get("href") for t in soup.find_all(["script", "link"])]
    local = [a for a in assets if a and not a.startswith(("http", "data:", "#"))]
    assert local and all(a.startswith(prefix) for a in local), local


ENGLISH_LABELS = ['aria-label="Main"', 'aria-label="Page"', "Toggle hidden content",
                  "Link to this term", 'alt="Colab logo"', 'alt="Binder logo"']


@book
def test_no_english_screen_reader_labels(built_book):
    found = []
    for path in built_book.rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        found += [f"{path.name}: {label}" for label in ENGLISH_LABELS if label in text]
    assert found == []


# --- Internal links -----------------------------------------------------------------


@book
def test_every_internal_link_and_anchor_resolves(built_book):
    """The build itself refuses broken links (_ext/atensi_book/guard.py); the same
    checker runs here on the finished site, and lists the external links."""
    broken, external = book_guard.broken_links(built_book)
    print(f"\n{len(external)} tautan eksternal (didaftar, tidak dibuka):")
    for href in sorted(external):
        print("  ", href)
    assert broken == []


def test_the_link_checker_finds_a_missing_page_and_anchor(tmp_path):
    (tmp_path / "a.html").write_text(
        '<p id="ada"></p><a href="#ada">ok</a><a href="b.html#tidak">x</a><a href="c.html">y</a>'
        '<a href="https://contoh.id/">luar</a>',
        encoding="utf-8",
    )
    (tmp_path / "b.html").write_text('<h1 id="judul">B</h1>', encoding="utf-8")
    broken, external = book_guard.broken_links(tmp_path)
    assert broken == ["a.html → b.html#tidak (jangkar tidak ada)", "a.html → c.html (berkas tidak ada)"]
    assert external == {"https://contoh.id/"}


# --- Search -------------------------------------------------------------------------


def _sastrawi():
    from Sastrawi.Stemmer.StemmerFactory import StemmerFactory

    return StemmerFactory().create_stemmer()


def _book_words(built_book: Path) -> list[str]:
    words = set()
    for page in toc_pages():
        soup = _soup(built_book / f"{page}.html")
        main = soup.select_one("main") or soup
        words |= set(re.findall(r"[a-z]+", main.get_text(" ").lower()))
    return sorted(w for w in words if len(w) > 2)


@book
@pytest.mark.browser
def test_search_stemmer_agrees_with_sastrawi_on_the_books_vocabulary(built_book, open_page):
    words = _book_words(built_book)
    stem = _sastrawi().stem
    expected = {w: stem(w) or w for w in words}
    opened = open_page("search.html")
    opened.page.wait_for_function("typeof Search !== 'undefined' && Search._index !== null",
                                  timeout=10_000)
    got = opened.page.evaluate("(ws) => { const s = new Stemmer(); "
                               "return Object.fromEntries(ws.map(w => [w, s.stemWord(w)])); }", words)
    differ = {w: (expected[w], got[w]) for w in words if expected[w] != got[w]}
    print(f"\n{len(words)} kata dari buku, {len(differ)} berbeda")
    assert differ == {}


@book
@pytest.mark.browser
@pytest.mark.parametrize("query, root", [("menghitung", "hitung"), ("perkalian", "kali")])
def test_search_finds_pages_through_affixes(open_page, query, root):
    opened = open_page(f"search.html?q={query}")
    page = opened.page
    page.wait_for_function("typeof Search !== 'undefined' && Search._index !== null", timeout=10_000)
    assert page.evaluate(f"new Stemmer().stemWord('{query}')") == root
    page.wait_for_selector("#search-results li", timeout=10_000)
    assert page.locator("#search-results li").count() > 0


def test_404_page_escapes_what_comes_from_the_configuration():
    from types import SimpleNamespace

    config = SimpleNamespace(root_doc='bab/"><script>alert(1)</script>')
    body = site_meta.not_found_body(config, 'https://contoh.id/buku"onmouseover="x/')
    assert "<script>" not in body and 'onmouseover="x' not in body
    assert "&lt;script&gt;" in body and "&quot;" in body
    assert 'href="/buku&quot;onmouseover=&quot;x/bab/&quot;&gt;&lt;script&gt;' in body


def test_404_page_links_to_the_first_page_under_the_site_path():
    from types import SimpleNamespace

    body = site_meta.not_found_body(SimpleNamespace(root_doc="chapters/pendahuluan"),
                                    "https://atensi-id.github.io/atensi/")
    assert 'href="/atensi/chapters/pendahuluan.html"' in body


def test_index_redirect_escapes_what_comes_from_the_configuration(tmp_path):
    from types import SimpleNamespace

    config = SimpleNamespace(root_doc='bab/"><script>x</script>', html_title="<b>Buku</b>", project="p")
    site_meta.write_index_redirect(SimpleNamespace(config=config, outdir=str(tmp_path)))
    page = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert "<script>" not in page and "<b>" not in page
    assert 'url=bab/&quot;&gt;&lt;script&gt;x&lt;/script&gt;.html"' in page


def test_download_links_point_at_the_site_address():
    """make pdf and make zip write unduh/ after the site; a page links there at
    the site's address, so the link also works from a plain make book and the PDF."""
    class App:
        class builder:
            name = "html"

        class config:
            html_baseurl = "https://pemilik.github.io/atensi/"
    body = ('<a href="../unduh/atensi.pdf">PDF</a> <a href="../unduh/atensi-luring.zip">zip</a> '
            '<a href="../unduh/lain.txt">lain</a> <a href="unduh/atensi.pdf">PDF</a>')
    context = {"body": body}
    site_meta.link_downloads_to_the_site(App, "chapters/pendahuluan", "page.html", context, None)
    assert context["body"] == (
        '<a href="https://pemilik.github.io/atensi/unduh/atensi.pdf">PDF</a> '
        '<a href="https://pemilik.github.io/atensi/unduh/atensi-luring.zip">zip</a> '
        '<a href="../unduh/lain.txt">lain</a> '
        '<a href="https://pemilik.github.io/atensi/unduh/atensi.pdf">PDF</a>')


@book
def test_built_pages_link_downloads_at_the_site_address(built_book):
    hrefs = [a["href"] for a in _soup(built_book / "chapters" / "pendahuluan.html").select("a[href]")
             if "unduh/" in a["href"]]
    assert sorted(hrefs) == [SITE + "unduh/atensi-luring.zip", SITE + "unduh/atensi.pdf"]
