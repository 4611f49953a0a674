"""Keep every chapter's setup cell and its paired .ipynb up to date.

Run by ``make notebooks``. For each ``chapters/*.md`` (MyST text notebook):

1. the code cell tagged ``atensi-setup`` gets the setup cell of
   ``_ext/atensi_book/repository.py``, for the repository that module
   resolves (``ATENSI_REPOSITORY``/``ATENSI_BRANCH``, else ``repository:`` in
   ``_config.yml``; none: the cell installs from the reader's checkout only);
2. ``chapters/X.ipynb`` is rewritten from the .md by jupytext, without
   outputs. That file is what the Colab and Binder buttons open.

``python scripts/sync_notebooks.py --check`` changes nothing and exits 1
when a file is out of date (the tests use the same functions).

A reader may edit the .ipynb itself (VS Code, a notebook saved from Colab,
Jupyter without jupytext). Such a file is never lost: when it holds outputs,
or is newer than its .md and not the version git has, it is refused, with the
``jupytext --sync`` command that carries the edits into the .md; ``--force``
overwrites it anyway. Whenever a file that git does not have in this form is
overwritten, the old one is kept as ``X.ipynb.bak`` (``X.ipynb.bak.2``, ``.3``, …
when an earlier backup holds other edits), and the output says so.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import importlib.util

import jupytext
import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))  # make notebooks before pip install -e
from atensi import files  # noqa: E402
from atensi.arguments import Parser  # noqa: E402

CHAPTERS = ROOT / "chapters"

# The book's extension and this script write the same cell: one module, loaded
# by path (importing the package would load Sphinx).
_spec = importlib.util.spec_from_file_location("atensi_book_repository",
                                               ROOT / "_ext" / "atensi_book" / "repository.py")
repository = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(repository)
SETUP_TAG = repository.SETUP_TAG

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


def cause(err: BaseException) -> str:
    """Why a file could not be used, in Indonesian."""
    if isinstance(err, UnicodeDecodeError):
        return f"bukan teks UTF-8 (byte ke-{err.start} tidak sah)"
    if isinstance(err, yaml.YAMLError):
        mark = getattr(err, "problem_mark", None)
        where = f" di baris {mark.line + 1}" if mark is not None else ""
        return f"YAML-nya tidak sah{where} ({getattr(err, 'problem', None) or err})"
    if isinstance(err, IsADirectoryError):
        return "sebuah folder, bukan berkas"
    if isinstance(err, OSError):
        return f"tidak bisa dibaca ({err.strerror or err})"
    if isinstance(err, json.JSONDecodeError):
        return f"bukan JSON yang sah (baris {err.lineno})"
    return f"tidak bisa dibaca sebagai notebook ({type(err).__name__}: {err})"


def _repository_config() -> dict:
    path = ROOT / "_config.yml"
    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, yaml.YAMLError) as err:
        raise ValueError(f"_config.yml {cause(err)}. Perbaiki berkas itu.") from err
    section = config.get("repository") if isinstance(config, dict) else None
    if not isinstance(section, dict):
        raise ValueError("_config.yml harus berisi bagian 'repository:' dengan 'url:' dan "
                         "'branch:' di bawahnya (pemetaan YAML; url boleh kosong), tetapi bagian "
                         "itu tidak ada atau bentuknya lain. Perbaiki berkas itu.")
    return section


def repo_url() -> str | None:
    """The URL of the repository the setup cells install from, or None."""
    config = _repository_config()
    try:
        found = repository.resolve(config.get("url"), config.get("branch"))
    except ValueError as err:
        raise ValueError(f"repository.url: {err}") from err
    return None if found is None else found.url


def setup_source(url: str | None = None) -> str:
    """The setup cell, for ``url`` or for the resolved repository; the URL is
    validated and written as a quoted Python string."""
    config = _repository_config()
    if url is not None:
        check_repo_url(url)
    try:
        found = (repository.resolve(config.get("url"), config.get("branch")) if url is None
                 else repository.resolve(url, config.get("branch"), environ={}))
    except ValueError as err:
        raise ValueError(f"repository.url: {err}") from err
    return repository.setup_source(found)


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


def cell_ids(cells) -> list[str]:
    """One id per cell, from its type and text: a cell keeps its id when others are
    added, removed or moved, so a diff shows only the cells that changed. Cells
    with the same text are told apart by a counter, in order."""
    ids, seen = [], {}
    for cell in cells:
        digest = hashlib.sha1(f"{cell.cell_type}\n{cell.source}".encode("utf-8")).hexdigest()[:10]
        seen[digest] = seen.get(digest, 0) + 1
        ids.append(f"sel-{digest}" if seen[digest] == 1 else f"sel-{digest}-{seen[digest]}")
    return ids


BOM = "\ufeff"


def ipynb_text(md_path: Path) -> str:
    """The .ipynb that belongs to ``md_path``: its cells, no outputs."""
    # utf-8-sig: behind a byte order mark, jupytext would not see the front
    # matter and would make it a markdown cell.
    notebook = jupytext.reads(md_path.read_text(encoding="utf-8-sig"), fmt="md:myst")
    for cell, cell_id in zip(notebook.cells, cell_ids(notebook.cells)):
        cell.id = cell_id  # the file only changes with the .md, and only where it did
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return jupytext.writes(notebook, fmt="ipynb")


def _committed(path: Path) -> str | None:
    """The file as the last commit has it, or None (no git, not tracked)."""
    try:
        rel = path.resolve().relative_to(ROOT)
        done = subprocess.run(["git", "-C", str(ROOT), "show", f"HEAD:{rel.as_posix()}"],
                              capture_output=True, timeout=30)
    except (ValueError, OSError, subprocess.SubprocessError):
        return None
    return done.stdout.decode("utf-8", errors="replace") if done.returncode == 0 else None


def reader_edits(ipynb_path: Path, current: str, md_mtime: float) -> tuple[str | None, bool]:
    """(why ``current``, the .ipynb on disk, must not be overwritten, or None;
    whether a ``.bak`` must be kept when it is).

    The book's .ipynb never has outputs, and is either the committed version
    or older than its .md. Anything else was saved outside ``make notebooks``.
    """
    try:
        cells = json.loads(current)["cells"]
    except (ValueError, KeyError, TypeError):
        return "bukan notebook JSON yang sah", True
    if any(isinstance(c, dict) and c.get("cell_type") == "code"
           and (c.get("outputs") or c.get("execution_count") is not None) for c in cells):
        return "berisi keluaran sel (hasil menjalankan notebook)", True
    committed = _committed(ipynb_path) == current
    if not committed and ipynb_path.stat().st_mtime > md_mtime:
        return "disunting sesudah .md-nya (lebih baru, dan tidak sama dengan versi di git)", True
    return None, not committed


def readable(md_paths, problems: list[str]):
    """The chapters whose .md (and .ipynb, when there is one) can be read and parsed;
    each other one adds a problem that starts with ``RUSAK`` and is skipped."""
    for md_path in md_paths:
        current = md_path
        try:
            jupytext.reads(md_path.read_text(encoding="utf-8-sig"), fmt="md:myst")
            current = md_path.with_suffix(".ipynb")
            if current.exists():
                current.read_text(encoding="utf-8")
        except Exception as err:  # noqa: BLE001 - one bad file must not stop the others
            problems.append(
                f"RUSAK {current.relative_to(CHAPTERS.parent)}: {cause(err)}. Perbaiki (atau "
                "hapus) berkas ini lalu jalankan make notebooks lagi; bab lain tetap disinkronkan.")
            continue
        yield md_path


def backup_path(ipynb_path: Path, text: str) -> tuple[Path, bool]:
    """(where ``text`` is kept, whether it must still be written there).

    ``X.ipynb.bak``, then ``X.ipynb.bak.2``, ``.3``, …: an earlier backup that
    holds other edits is never overwritten; one that holds these is reused.
    """
    number = 1
    while True:
        backup = ipynb_path.with_name(ipynb_path.name + ".bak" + ("" if number == 1
                                                                   else f".{number}"))
        if not os.path.lexists(backup):
            return backup, True
        try:
            if backup.read_text(encoding="utf-8") == text:
                return backup, False
        except (OSError, UnicodeDecodeError):
            pass
        number += 1


def sync(check: bool = False, force: bool = False) -> list[str]:
    """Bring every chapter up to date; return the problems (or changes, with check).

    A refused .ipynb (see :func:`reader_edits`) gives a problem that starts with
    ``DITOLAK``; with ``force`` it is overwritten and kept as ``.ipynb.bak``.
    A file that cannot be read or parsed (and a bad ``_config.yml``) gives one
    that starts with ``RUSAK``; the other files are synced all the same, without
    touching the setup cells when the configuration is bad.
    """
    problems = []
    try:
        source = setup_source()
    except ValueError as err:
        source = None
        problems.append(f"RUSAK {err} Sel persiapan bab tidak diperbarui; .ipynb tetap "
                        "disinkronkan dari .md-nya.")
    for md_path in readable(chapter_files(), problems):
        rel = md_path.relative_to(CHAPTERS.parent)
        md_mtime = md_path.stat().st_mtime
        raw = md_path.read_text(encoding="utf-8")
        text = raw.removeprefix(BOM)
        if text != raw:
            problems.append(f"{rel}: tanda BOM (U+FEFF) di awal berkas " + ("harus dibuang" if check
                            else "dibuang, supaya bagian depannya (front matter) terbaca"))
        new_text, found = with_setup_cell(text, source) if source is not None else (text, 1)
        if found != 1:
            problems.append(f"{rel}: harus punya tepat satu sel bertag '{SETUP_TAG}', ada {found}")
        if new_text != text:
            problems.append(f"{rel}: sel persiapan tidak sesuai templat")
        if new_text != raw and not check:
            files.write_text(md_path, new_text)
        ipynb_path = md_path.with_suffix(".ipynb")
        ipynb_rel = ipynb_path.relative_to(CHAPTERS.parent)
        expected = ipynb_text(md_path)
        current = ipynb_path.read_text(encoding="utf-8") if ipynb_path.exists() else None
        if current == expected:
            continue
        why, backup_needed = (reader_edits(ipynb_path, current, md_mtime)
                              if current is not None else (None, False))
        if why and not force:
            problems.append(
                f"DITOLAK {ipynb_rel}: {why}, jadi tidak ditimpa dari {rel}. Bawa suntingannya "
                f"ke .md dengan: jupytext --sync {ipynb_rel}  (atau buang dengan: python "
                f"scripts/sync_notebooks.py --force, yang menyimpan salinannya sebagai "
                f"{ipynb_rel}.bak)")
            continue
        problems.append(f"{ipynb_rel}: tidak sama dengan {rel}" if check
                        else f"{ipynb_rel}: ditulis ulang dari {rel}")
        if check:
            continue
        if backup_needed:
            backup, new = backup_path(ipynb_path, current)
            if new:
                files.write_text(backup, current)
            problems.append(f"{ipynb_rel}: suntingan lama disimpan sebagai "
                            f"{backup.relative_to(CHAPTERS.parent)}")
        files.write_text(ipynb_path, expected)
    return problems


def main(argv=None) -> int:
    parser = Parser(prog="scripts/sync_notebooks.py", description=__doc__.splitlines()[0],
                    usage_line="python scripts/sync_notebooks.py [--check | --force]")
    parser.add_argument("--check", action="store_true", help="hanya periksa, jangan ubah berkas")
    parser.add_argument("--force", action="store_true",
                        help="timpa juga .ipynb yang disunting pembaca (salinannya jadi .bak)")
    args = parser.parse_args(argv)
    if args.check and args.force:
        parser.fail("--check dan --force tidak bisa dipakai bersama")
    try:
        messages = sync(check=args.check, force=args.force)
    except (ValueError, OSError) as err:
        print(f"scripts/sync_notebooks.py: {err}", file=sys.stderr)
        return 1
    for message in messages:
        print(message)
    refused = [m for m in messages if m.startswith(("DITOLAK", "RUSAK"))]
    missing_cell = [m for m in messages if SETUP_TAG in m]
    if args.check:
        return 1 if messages else 0
    print(f"{len(chapter_files())} bab diperiksa, {len(messages)} perubahan/catatan"
          + (f", {len(refused)} .ipynb tidak ditimpa." if refused else "."))
    return 1 if missing_cell or refused else 0


if __name__ == "__main__":
    sys.exit(main())
