"""The repository the book is built from (_ext/atensi_book/repository.py): the
Colab, Binder and GitHub buttons and every setup cell point there; a build
without one has no launch buttons and says so in one Indonesian line."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import jupytext
import pytest
from bs4 import BeautifulSoup

from chapter_runs import BOOK_REPOSITORY
from conftest import BUILD_FLAGS, ROOT, jupyter_book_command, toc_pages

sys.path.insert(0, str(ROOT / "_ext"))
from atensi_book import repository  # noqa: E402

LAUNCH_HOSTS = ("colab.research.google.com", "mybinder.org")


# --- Where the repository comes from ------------------------------------------------


@pytest.mark.parametrize("given, url", [
    ("budi/buku-atensi", "https://github.com/budi/buku-atensi"),
    ("https://github.com/Budi/atensi.git", "https://github.com/Budi/atensi"),
    ("https://github.com/budi/atensi/", "https://github.com/budi/atensi"),
])
def test_the_environment_names_the_repository(given, url):
    found = repository.resolve("https://github.com/lain/lain", "main",
                               environ={"ATENSI_REPOSITORY": given, "ATENSI_BRANCH": "terbit"})
    assert (found.url, found.branch) == (url, "terbit")
    assert found.pip_source == f"git+{url}@terbit"


def test_without_the_environment_the_config_is_used_and_without_both_there_is_none():
    found = repository.resolve("https://github.com/budi/atensi", "", environ={})
    assert (found.url, found.branch) == ("https://github.com/budi/atensi", "main")
    assert repository.resolve("", "main", environ={}) is None
    assert repository.resolve(None, None, environ={"ATENSI_REPOSITORY": "  "}) is None


@pytest.mark.parametrize("variable, value", [
    ("ATENSI_REPOSITORY", 'budi/a"); import os; ("'),
    ("ATENSI_REPOSITORY", "https://gitlab.com/budi/atensi"),
    ("ATENSI_REPOSITORY", "-oProxyCommand=x/y"),
    ("ATENSI_REPOSITORY", "budi"),
    ("ATENSI_REPOSITORY", "budi/.."),
    ("ATENSI_BRANCH", "--upload-pack=x"),
    ("ATENSI_BRANCH", "a b"),
    ("ATENSI_BRANCH", "a/../b"),
])
def test_a_bad_value_is_refused_in_indonesian_naming_the_variable(variable, value):
    environ = {"ATENSI_REPOSITORY": "budi/atensi", variable: value}
    with pytest.raises(ValueError, match=f"Variabel lingkungan {variable} harus"):
        repository.resolve("", "main", environ=environ)


def _configured(theme, environ):
    app, config = SimpleNamespace(), SimpleNamespace(html_theme_options=dict(theme))
    old = {key: os.environ.get(key) for key in environ}
    os.environ.update(environ)
    try:
        repository.configure(app, config)
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key)
            else:
                os.environ[key] = value
    return app, config.html_theme_options


THEME = {"repository_url": "", "repository_branch": "main", "use_repository_button": True,
         "launch_buttons": {"colab_url": "https://colab.research.google.com",
                            "binderhub_url": "https://mybinder.org"}}


def test_the_theme_is_pointed_at_the_given_repository(monkeypatch):
    monkeypatch.delenv("ATENSI_BRANCH", raising=False)
    app, theme = _configured(THEME, {"ATENSI_REPOSITORY": "budi/atensi"})
    assert theme["repository_url"] == "https://github.com/budi/atensi"
    assert theme["repository_branch"] == "main" and theme["use_repository_button"] is True
    assert theme["launch_buttons"] == THEME["launch_buttons"]
    assert app.atensi_repository.url == "https://github.com/budi/atensi"


def test_without_a_repository_the_launch_and_repository_buttons_are_off(monkeypatch):
    monkeypatch.delenv("ATENSI_REPOSITORY", raising=False)
    app, theme = _configured(THEME, {})
    assert app.atensi_repository is None
    assert theme["launch_buttons"] == {} and theme["use_repository_button"] is False
    assert theme["repository_url"] == ""


def test_the_committed_config_does_not_guess_a_repository():
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert config["repository"]["url"] == ""


def test_only_the_setup_cell_is_rewritten():
    text = (ROOT / "chapters" / "softmax.md").read_text(encoding="utf-8")
    found = repository.Repository("budi", "atensi", "terbit")
    new = repository.with_setup_cell(text, found)
    assert new.count('"git+https://github.com/budi/atensi@terbit"') == 1
    cells = [c for c in jupytext.reads(new, fmt="md:myst").cells if c.cell_type == "code"]
    old = [c for c in jupytext.reads(text, fmt="md:myst").cells if c.cell_type == "code"]
    assert cells[0].source == repository.setup_source(found)
    assert [c.source for c in cells[1:]] == [c.source for c in old[1:]]
    assert repository.with_setup_cell(new, None) == text  # the committed cell has none


# --- A one-page book built with and without a repository ------------------------------

PAGE = """\
---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

```{code-cell} ipython3
:tags: [remove-cell, atensi-setup]

SETUP
```

(uji)=
# Halaman uji

```{code-cell} ipython3
print(1 + 1)
```
"""


def _build_tiny_book(tmp_path: Path, environ: dict) -> Path:
    book = tmp_path / "buku"
    (book / "chapters").mkdir(parents=True)
    shutil.copy(ROOT / "_config.yml", book / "_config.yml")
    shutil.copytree(ROOT / "_ext", book / "_ext", ignore=shutil.ignore_patterns("__pycache__"))
    (book / "_toc.yml").write_text("format: jb-book\nroot: chapters/uji\n", encoding="utf-8")
    page = book / "chapters" / "uji.md"
    page.write_text(PAGE.replace("SETUP", repository.setup_source(None)), encoding="utf-8")
    jupytext.write(jupytext.read(page), book / "chapters" / "uji.ipynb")  # what Colab opens
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATENSI_")}
    proc = subprocess.run(jupyter_book_command() + ["build", str(book)] + BUILD_FLAGS, cwd=book,
                          env={**env, **environ}, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:]
    return book / "_build" / "html"


def _launch_links(page: Path) -> list[str]:
    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    return [a["href"] for a in soup.find_all("a", href=True)
            if any(host in a["href"] for host in LAUNCH_HOSTS) or "github.com" in a["href"]]


def _served_setup_cell(html_dir: Path, page: str) -> str:
    notebook = json.loads((html_dir / "_sources" / f"{page}.ipynb").read_text(encoding="utf-8"))
    cells = [c for c in notebook["cells"] if "atensi-setup" in c["metadata"].get("tags", [])]
    assert len(cells) == 1
    source = cells[0]["source"]
    return "".join(source) if isinstance(source, list) else source


def _expected_links(owner_name: str, branch: str, page: str) -> set[str]:
    return {f"https://colab.research.google.com/github/{owner_name}/blob/{branch}/{page}.ipynb",
            f"https://mybinder.org/v2/gh/{owner_name}/{branch}?urlpath=tree/{page}.ipynb",
            f"https://github.com/{owner_name}"}


@pytest.mark.book
def test_a_book_built_for_a_repository_links_and_installs_from_it(tmp_path):
    html_dir = _build_tiny_book(tmp_path, {"ATENSI_REPOSITORY": "budi/buku-atensi",
                                           "ATENSI_BRANCH": "terbit"})
    page = html_dir / "chapters" / "uji.html"
    assert set(_launch_links(page)) == _expected_links("budi/buku-atensi", "terbit", "chapters/uji")
    assert '_repositori = "git+https://github.com/budi/buku-atensi@terbit"' in \
        _served_setup_cell(html_dir, "chapters/uji")
    assert "atensi-tanpa-repositori" not in page.read_text(encoding="utf-8")
    assert "https://budi.github.io/buku-atensi/sitemap.xml" in \
        (html_dir / "robots.txt").read_text(encoding="utf-8")


@pytest.mark.book
def test_a_book_built_without_a_repository_says_so_instead_of_linking(tmp_path):
    html_dir = _build_tiny_book(tmp_path, {})
    page = html_dir / "chapters" / "uji.html"
    assert _launch_links(page) == []
    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    lines = soup.select("p.atensi-tanpa-repositori")
    assert [p.get_text() for p in lines] == [repository.NO_REPOSITORY_LINE]
    # The theme serves the executed .ipynb only beside launch buttons; none here.
    assert not (html_dir / "_sources" / "chapters" / "uji.ipynb").exists()
    assert not (html_dir / "sitemap.xml").exists()  # no address to list the pages at


# --- The shared build of the whole book ------------------------------------------------


@pytest.mark.book
@pytest.mark.parametrize("page", toc_pages())
def test_every_chapter_links_and_installs_from_the_repository_it_was_built_for(built_book, page):
    owner_name, branch = BOOK_REPOSITORY["ATENSI_REPOSITORY"], BOOK_REPOSITORY["ATENSI_BRANCH"]
    links = set(_launch_links(built_book / f"{page}.html"))
    assert links >= _expected_links(owner_name, branch, page)
    assert {link for link in links if any(host in link for host in LAUNCH_HOSTS)} == \
        _expected_links(owner_name, branch, page) - {f"https://github.com/{owner_name}"}
    assert re.search(rf'_repositori = "git\+https://github\.com/{re.escape(owner_name)}@'
                     rf'{re.escape(branch)}"', _served_setup_cell(built_book, page))
