"""The repository the book is built from: its Colab, Binder and GitHub buttons
and the setup cell of every chapter point there, and nowhere else.

- **Where it comes from.** ``ATENSI_REPOSITORY`` (``PEMILIK/REPO``, the form
  of ``GITHUB_REPOSITORY``, or ``https://github.com/PEMILIK/REPO``) and
  ``ATENSI_BRANCH``; the Pages workflow sets both from the repository and
  branch it runs in, so a fork publishes links to itself without editing
  ``_config.yml``. Without them, ``repository: url:`` and ``branch:`` in
  ``_config.yml`` (empty in this repository: the build does not guess).
- **Without one** (a plain local ``make book``) there are no launch or
  repository buttons; each notebook page says so in one visible line.
- **The setup cell** of the notebooks the site serves is written with the same
  repository (``source-read``), so a downloaded chapter installs atensi from
  where the book came from. ``scripts/sync_notebooks.py`` (``make notebooks``)
  writes the committed cells from :func:`resolve` and :data:`SETUP_TEMPLATE`.

Standard library only: ``scripts/sync_notebooks.py`` loads this file directly.
"""

from __future__ import annotations

import html
import json
import os
import re
from typing import Mapping, NamedTuple

ENV_REPOSITORY = "ATENSI_REPOSITORY"
ENV_BRANCH = "ATENSI_BRANCH"
SETUP_TAG = "atensi-setup"
DEFAULT_BRANCH = "main"

# GitHub's own rules for names; nothing that could end a Python string or
# start a git option (quotes, spaces, backslashes, a leading "-").
_OWNER = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})"
_NAME = r"[A-Za-z0-9._-]{1,100}"
_SHORT = re.compile(rf"(?P<owner>{_OWNER})/(?P<name>{_NAME})")
_URL = re.compile(rf"https://github\.com/(?P<owner>{_OWNER})/(?P<name>{_NAME}?)(?:\.git)?/?")
_BRANCH = re.compile(r"[A-Za-z0-9._][A-Za-z0-9._/-]{0,199}")

SETUP_TEMPLATE = '''\
# Sel persiapan (disembunyikan di buku). Bila atensi belum terpasang (Colab,
# Binder), sel ini memasangnya: dari salinan repositori bila bab dibuka di sana,
# selain itu dari repositori tempat buku ini dibangun.
import importlib.util, os, subprocess, sys
_repositori = {source}
if importlib.util.find_spec("atensi") is None:
    _sumber = ".." if os.path.isdir(os.path.join("..", "src", "atensi")) else _repositori
    if _sumber is None: raise RuntimeError({missing})
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", _sumber], check=True)
    importlib.invalidate_caches()'''

MISSING = ("Bab ini tidak membawa alamat repositori atensi (dibuat tanpa ATENSI_REPOSITORY), "
           "jadi sel ini tidak tahu dari mana atensi dipasang. Pasang sendiri dengan "
           "!pip install git+https://github.com/PEMILIK/REPO (repositori tempat bab ini "
           "berasal), lalu jalankan sel ini lagi.")

NO_REPOSITORY_LINE = ("Tombol Colab dan Binder tidak ada: buku ini dibangun tanpa alamat "
                      "repositori (ATENSI_REPOSITORY). Cara menjalankan bab ada di bab Menjalankan.")


class Repository(NamedTuple):
    owner: str
    name: str
    branch: str

    @property
    def url(self) -> str:
        return f"https://github.com/{self.owner}/{self.name}"

    @property
    def pip_source(self) -> str:
        """What ``pip install`` takes: this repository at this branch."""
        return f"git+{self.url}@{self.branch}"


def _parse(value: str, where: str) -> tuple[str, str]:
    value = value.strip()
    match = _SHORT.fullmatch(value) or _URL.fullmatch(value)
    if match is None or match["name"].removesuffix(".git") in ("", ".", ".."):
        raise ValueError(
            f"{where} harus berbentuk PEMILIK/REPO atau https://github.com/PEMILIK/REPO, "
            f"tetapi isinya {value!r}. Tulis alamat repositori GitHub tempat buku ini "
            "berasal (tanpa spasi atau tanda kutip), atau kosongkan.")
    return match["owner"], match["name"].removesuffix(".git")


def _branch(value: str, where: str) -> str:
    value = value.strip()
    if not _BRANCH.fullmatch(value) or ".." in value or value.endswith(("/", ".lock")):
        raise ValueError(
            f"{where} harus nama cabang git biasa, misalnya main, tetapi isinya {value!r}. "
            "Perbaiki nilainya, atau kosongkan (cabang main).")
    return value


def resolve(config_url: str | None = None, config_branch: str | None = None,
            environ: Mapping[str, str] | None = None) -> Repository | None:
    """The repository the book is built from, or None when nobody said.

    The environment wins over ``_config.yml``; each value is checked before it
    is written into a page or a notebook, and refused in Indonesian.
    """
    environ = os.environ if environ is None else environ
    given = (environ.get(ENV_REPOSITORY) or "").strip()
    if given:
        owner, name = _parse(given, f"Variabel lingkungan {ENV_REPOSITORY}")
    elif (config_url or "").strip():
        owner, name = _parse(config_url, "'repository: url:' di _config.yml")
    else:
        return None
    if (environ.get(ENV_BRANCH) or "").strip():
        branch = _branch(environ[ENV_BRANCH], f"Variabel lingkungan {ENV_BRANCH}")
    elif (config_branch or "").strip():
        branch = _branch(config_branch, "'repository: branch:' di _config.yml")
    else:
        branch = DEFAULT_BRANCH
    return Repository(owner, name, branch)


def setup_source(repository: Repository | None) -> str:
    """The setup cell's text; values are written as quoted Python strings."""
    source = "None" if repository is None else json.dumps(repository.pip_source)
    return SETUP_TEMPLATE.format(source=source, missing=json.dumps(MISSING, ensure_ascii=False))


# The setup cell of a MyST notebook: fence, option lines with the tag, body.
_SETUP_CELL = re.compile(
    r"^(?P<head>```\{code-cell\}[^\n]*\n(?::[^\n]*\n)*?:tags:[^\n]*" + SETUP_TAG
    + r"[^\n]*\n(?::[^\n]*\n)*)(?P<body>.*?)^```[ \t]*$",
    re.MULTILINE | re.DOTALL)


def with_setup_cell(text: str, repository: Repository | None) -> str:
    """``text`` (a chapter's MyST source) with its setup cell written for ``repository``."""
    return _SETUP_CELL.sub(lambda m: f"{m['head']}\n{setup_source(repository)}\n```", text)


# --- Sphinx hooks ------------------------------------------------------------------


def configure(app, config):
    """Point the theme's buttons at the repository, or switch them off."""
    theme = dict(config.html_theme_options or {})
    repository = resolve(theme.get("repository_url"), theme.get("repository_branch"))
    app.atensi_repository = repository
    if repository is None:
        theme["repository_url"] = ""
        theme["use_repository_button"] = False
        theme["launch_buttons"] = {}
    else:
        theme["repository_url"] = repository.url
        theme["repository_branch"] = repository.branch
        theme["use_repository_button"] = True
    config.html_theme_options = theme


def write_setup_cell(app, docname, source):
    """The served notebook installs from the repository the book was built from."""
    if SETUP_TAG in source[0]:
        source[0] = with_setup_cell(source[0], getattr(app, "atensi_repository", None))


def say_when_there_is_no_repository(app, pagename, templatename, context, doctree):
    """One visible line on each notebook page where the launch buttons would be."""
    if getattr(app, "atensi_repository", None) is not None or doctree is None:
        return
    metadata = app.env.metadata.get(pagename, {})
    if "kernelspec" not in metadata and "jupytext" not in metadata:
        return
    line = f'<p class="atensi-tanpa-repositori">{html.escape(NO_REPOSITORY_LINE)}</p>\n'
    context["body"] = line + context.get("body", "")
