"""Keep every chapter's setup cell and its paired .ipynb up to date.

Run by ``make notebooks``. For each ``chapters/*.md`` (MyST text notebook):

1. the code cell tagged ``atensi-setup`` gets the text of ``SETUP_TEMPLATE``,
   with the repository URL read from ``_config.yml`` (``repository: url:``),
   the one place the URL is written;
2. ``chapters/X.ipynb`` is rewritten from the .md by jupytext, without
   outputs. That file is what the Colab and Binder buttons open.

``python scripts/sync_notebooks.py --check`` changes nothing and exits 1
when a file is out of date (the tests use the same functions).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import jupytext
import yaml

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
SETUP_TAG = "atensi-setup"

SETUP_TEMPLATE = '''\
# Sel persiapan (disembunyikan di buku). Bila atensi belum terpasang (Colab,
# Binder), sel ini memasangnya: dari salinan repositori bila bab dibuka di
# sana, selain itu dari GitHub. Di komputer sendiri sel ini tidak berbuat apa-apa.
import importlib.util, os, subprocess, sys
if importlib.util.find_spec("atensi") is None:
    _sumber = ".." if os.path.isdir(os.path.join("..", "src", "atensi")) else "git+" + {repo_url}
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", _sumber], check=True)
    importlib.invalidate_caches()'''

# A MyST code cell: opening fence, option lines (":key: value"), body, closing fence.
CELL_RE = re.compile(
    r"^(?P<open>```\{code-cell\}[^\n]*\n)"
    r"(?P<opts>(?::[^\n]*\n)+)"
    r"(?P<body>.*?)"
    r"^(?P<close>```)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)


# https://host/owner/repo: nothing that could end a Python string or start a
# git option (quotes, spaces, backslashes, a leading "-").
URL_RE = re.compile(r"https://[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]{1,5})?"
                    r"(?:/[A-Za-z0-9._~%+-]+)+")


def check_repo_url(url) -> str:
    """The URL when it is a plain https URL of a repository, else ValueError."""
    if not isinstance(url, str) or not URL_RE.fullmatch(url):
        raise ValueError(
            f"repository.url di _config.yml harus URL https biasa ke repositori, misalnya "
            f"https://github.com/pemilik/atensi, tetapi yang tertulis {url!r}. URL ini "
            "ditempel ke kode notebook dan ke perintah git clone, jadi tanda kutip, spasi "
            "dan karakter lain tidak diterima."
        )
    return url


def repo_url() -> str:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    url = (config.get("repository") or {}).get("url")
    return check_repo_url(url.rstrip("/") if isinstance(url, str) else url)


def setup_source(url: str | None = None) -> str:
    """The setup cell; the URL is validated and written as a quoted Python string."""
    url = check_repo_url(repo_url() if url is None else url)
    return SETUP_TEMPLATE.format(repo_url=json.dumps(url))


def chapter_files() -> list[Path]:
    return sorted(CHAPTERS.glob("*.md"))


def with_setup_cell(text: str, source: str) -> tuple[str, int]:
    """Return (new text, number of setup cells found) for one .md file."""
    found = 0

    def replace(match: re.Match) -> str:
        nonlocal found
        if SETUP_TAG not in match["opts"]:
            return match[0]
        found += 1
        return f"{match['open']}{match['opts']}\n{source}\n{match['close']}"

    return CELL_RE.sub(replace, text), found


def ipynb_text(md_path: Path) -> str:
    """The .ipynb that belongs to ``md_path``: its cells, no outputs."""
    notebook = jupytext.read(md_path)
    for number, cell in enumerate(notebook.cells):
        cell.id = f"sel-{number:03d}"  # stable ids: the file only changes with the .md
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return jupytext.writes(notebook, fmt="ipynb")


def sync(check: bool = False) -> list[str]:
    """Bring every chapter up to date; return the problems (or changes, with check)."""
    problems = []
    source = setup_source()
    for md_path in chapter_files():
        rel = md_path.relative_to(CHAPTERS.parent)
        text = md_path.read_text(encoding="utf-8")
        new_text, found = with_setup_cell(text, source)
        if found != 1:
            problems.append(f"{rel}: harus punya tepat satu sel bertag '{SETUP_TAG}', ada {found}")
        if new_text != text:
            problems.append(f"{rel}: sel persiapan tidak sesuai templat")
            if not check:
                md_path.write_text(new_text, encoding="utf-8")
        ipynb_path = md_path.with_suffix(".ipynb")
        expected = ipynb_text(md_path)
        current = ipynb_path.read_text(encoding="utf-8") if ipynb_path.exists() else None
        if current != expected:
            problems.append(f"{ipynb_path.relative_to(CHAPTERS.parent)}: tidak sama dengan {rel}")
            if not check:
                ipynb_path.write_text(expected, encoding="utf-8")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="hanya periksa, jangan ubah berkas")
    args = parser.parse_args()
    messages = sync(check=args.check)
    for message in messages:
        print(message)
    missing_cell = [m for m in messages if SETUP_TAG in m]
    if args.check:
        return 1 if messages else 0
    print(f"{len(chapter_files())} bab diperiksa, {len(messages)} perubahan/catatan.")
    return 1 if missing_cell else 0


if __name__ == "__main__":
    sys.exit(main())
