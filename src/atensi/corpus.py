"""Korpus latihan model kecil: prosa Indonesia buku ini sendiri.

Teks diambil dari ``chapters/*.md``: sel kode, blok kode, rumus, direktif,
opsi direktif, tabel, dan markup dibuang; yang tersisa adalah kalimat-kalimat
bab, satu paragraf per baris. Tidak ada yang diunduh.

Bab-bab terus disunting, jadi pelatihan membaca **salinan beku**
``results/korpus.txt`` yang di-*commit*, bukan bab-bab yang sedang berubah.
``python -m atensi.corpus`` membuat ulang salinan itu dari bab-bab.

Pembagian latih/validasi tetap: di setiap bab, setiap paragraf kesepuluh
(paragraf ke-10, ke-20, ...) masuk validasi, sisanya latih. Jadi validasi
tersebar di seluruh buku, bukan hanya bagian akhir bab (daftar pustaka,
latihan). Di berkas salinan, setiap bab
diawali baris ``### nama_bab``.

    extract(markdown)           teks .md -> prosa (satu paragraf per baris)
    build_snapshot(chapters)    semua bab -> isi berkas salinan
    load(path=None)             salinan -> Corpus(train, val, chars)
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from . import files
from . import validation as _val
from .shipped import results_dir

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = ROOT / "chapters"
SNAPSHOT = results_dir() / "korpus.txt"
VAL_FRACTION = 0.1
MIN_COUNT = 3  # characters seen fewer times than this are dropped from the snapshot
HEADER = "### "

_FENCE = re.compile(r"^\s*(`{3,}|~{3,}|:{3,})(.*)$")
_ROLE = re.compile(r"\{(\w[\w:-]*)\}`([^`]*)`")
_KEEP_ROLES = {"term", "abbr", "sub", "sup"}
# Directives whose body is prose worth keeping (the fence lines are dropped).
_PROSE_DIRECTIVES = {"exercise", "solution", "admonition", "note", "tip", "warning",
                     "important", "hint", "caution", "attention", "seealso", "glossary"}


def _role(match):
    name, body = match.group(1), match.group(2)
    if name in _KEEP_ROLES:
        # {term}`teks <sasaran>` -> teks
        return re.sub(r"\s*<[^>]*>\s*$", "", body)
    return ""


def _inline(line):
    """Markup di dalam satu baris prosa -> teks polos."""
    line = re.sub(r"\$\$.*?\$\$", "", line)
    line = re.sub(r"(?<!\\)\$[^$]+\$", "", line)  # matematika sebaris
    line = _ROLE.sub(_role, line)
    line = re.sub(r"`[^`]*`", "", line)  # kode sebaris
    line = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", line)  # gambar
    line = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", line)  # tautan -> teksnya
    line = re.sub(r"<[^>]+>", "", line)  # HTML
    line = re.sub(r"(\*\*|\*|__|(?<!\w)_)(\S.*?\S|\S)\1", r"\2", line)  # tebal/miring
    line = line.replace("\\", "")
    line = re.sub(r"^\s*#+\s*", "", line)  # judul
    line = re.sub(r"^\s*([-*+]|\d+[.)])\s+", "", line)  # penanda daftar
    line = re.sub(r"^\s*>\s?", "", line)  # kutipan
    line = re.sub(r"\(\s*[,;]?\s*\)", "", line)  # kurung yang isinya terbuang
    line = re.sub(r"\s+", " ", line)
    return re.sub(r" ([,.;:?!)])", r"\1", line).strip()


def extract(markdown: str) -> list[str]:
    """Prosa satu bab Markdown/MyST sebagai daftar paragraf (teks polos).

    ``markdown``: isi babnya sebagai teks (str), bukan path atau bytes.
    """
    if isinstance(markdown, (bytes, bytearray)):
        raise TypeError("Argumen 'markdown' harus teks (str), bukan bytes. Ubah dulu dengan "
                        "markdown.decode('utf-8'), atau baca babnya dengan "
                        "Path(berkas).read_text(encoding='utf-8').")
    _val.check_instance(markdown, str, "markdown", "teks (str) isi satu bab",
                        "Baca babnya dengan Path(berkas).read_text(encoding='utf-8').")
    lines = markdown.splitlines()
    if lines and lines[0].strip() == "---":  # front matter
        end = next((n for n in range(1, len(lines)) if lines[n].strip() == "---"), 0)
        lines = lines[end + 1:]
    paragraphs, current = [], []
    stack = []  # open fences: (marker, keep body as prose?)
    in_math = in_comment = False

    def flush():
        text = _inline(" ".join(current))
        current.clear()
        if re.search(r"[A-Za-z]{2}", text):
            paragraphs.append(text)

    for raw in lines:
        line = raw.rstrip()
        stripped = line.strip()
        if in_comment:
            in_comment = "-->" not in stripped
            continue
        if stripped.startswith("<!--"):
            in_comment = "-->" not in stripped
            flush()
            continue
        fence = _FENCE.match(line)
        if fence and not in_math:
            marker, rest = fence.group(1), fence.group(2).strip()
            if stack and marker[0] == stack[-1][0][0] and len(marker) >= len(stack[-1][0]) \
                    and rest == "":
                flush()
                stack.pop()
                continue
            if not stack or stack[-1][1]:
                flush()
                name = re.match(r"\{([\w:-]+)\}", rest)
                stack.append((marker, bool(name) and name.group(1) in _PROSE_DIRECTIVES))
                continue
        if stack and not stack[-1][1]:
            continue  # inside code or a non-prose directive
        if in_math:
            in_math = not stripped.startswith("$$") and not stripped.endswith("$$")
            continue
        if stripped.startswith("$$"):
            flush()
            in_math = not (len(stripped) > 2 and stripped.endswith("$$"))
            continue
        if (not stripped or stripped.startswith("|") or stripped.startswith(":")
                or re.match(r"^\([\w-]+\)=$", stripped) or re.match(r"^[-=*_]{3,}$", stripped)):
            flush()
            continue
        if stripped.startswith("#"):
            flush()
            current.append(re.sub(r"^#+\s*", "", stripped))
            flush()
            continue
        if re.match(r"^([-*+]|\d+[.)])\s+", stripped):
            flush()
        current.append(re.sub(r"^([-*+]|\d+[.)])\s+", "", stripped))
    flush()
    return paragraphs


def build_snapshot(chapters=None) -> str:
    """Isi ``results/korpus.txt`` dari bab-bab (``chapters``: daftar path .md;
    ``None``: semua ``chapters/*.md``)."""
    if chapters is None:
        paths = sorted(CHAPTERS.glob("*.md"))
    elif isinstance(chapters, (str, bytes, os.PathLike)) or not isinstance(chapters, Iterable):
        raise TypeError(
            f"Argumen 'chapters' harus daftar path bab (list), bukan {type(chapters).__name__} "
            f"{chapters!r:.60}. Untuk satu bab tulis chapters=[{chapters!r:.40}], atau None "
            "untuk semua chapters/*.md.")
    else:
        paths = [files.as_path(p, f"chapters[{n}]") for n, p in enumerate(chapters)]
        if not paths:
            raise ValueError("Argumen 'chapters' kosong. Berikan paling sedikit satu path bab, "
                             "atau None untuk semua chapters/*.md.")
        paths = sorted(paths)
    # Every file is checked (and refused by name) before any is processed.
    for n, p in enumerate(paths):
        if not Path(p).is_file():
            what = "adalah folder" if Path(p).is_dir() else "tidak ada"
            raise FileNotFoundError(
                f"Argumen 'chapters': '{p}' {what}, bukan berkas bab .md. Periksa path-nya, "
                "misalnya chapters/pendahuluan.md, atau pakai chapters=None untuk semua bab.")
    texts = {Path(p).stem: files.read_text(p, "bab", "simpan bab itu sebagai UTF-8")
             for p in paths}
    parts = {name: extract(text) for name, text in texts.items()}
    counts = {}
    for paragraphs in parts.values():
        for ch in "".join(paragraphs):
            counts[ch] = counts.get(ch, 0) + 1
    rare = {ch for ch, n in counts.items() if n < MIN_COUNT}
    out = []
    for name, paragraphs in parts.items():
        kept = [re.sub(r"\s+", " ", "".join(c for c in p if c not in rare)).strip()
                for p in paragraphs]
        kept = [p for p in kept if p]
        if kept:
            out.append(HEADER + name)
            out.extend(kept)
    return "\n".join(out) + "\n"


@dataclass
class Corpus:
    """Teks latih dan validasi, dan daftar karakter (kosakata) yang terurut."""

    train: str
    val: str
    chars: str
    path: Path

    def __repr__(self):
        return (f"<Corpus {self.path.name}: latih {len(self.train)} karakter, "
                f"validasi {len(self.val)}, kosakata {len(self.chars)}>")


def split(snapshot_text: str):
    """Isi salinan -> (teks latih, teks validasi): paragraf ke-10, ke-20, ... tiap bab."""
    train, val, chapter = [], [], []
    every = round(1 / VAL_FRACTION)

    def close():
        for n, paragraph in enumerate(chapter, start=1):
            (val if n % every == 0 else train).append(paragraph)
        chapter.clear()

    for line in snapshot_text.splitlines():
        if line.startswith(HEADER):
            close()
        elif line.strip():
            chapter.append(line)
    close()
    return "\n".join(train) + "\n", "\n".join(val) + "\n"


def load(path=None) -> Corpus:
    """Baca salinan beku (bawaan ``results/korpus.txt``) dan bagi latih/validasi."""
    path = files.as_path(path).expanduser() if path is not None else SNAPSHOT
    text = files.read_text(path, "korpus", "python -m atensi.corpus")
    train, val = split(text)
    if len(train) < 1000 or len(val) < 100:
        raise ValueError(
            f"Berkas korpus '{path}' terlalu pendek (latih {len(train)}, validasi "
            f"{len(val)} karakter). Buat ulang dengan: python -m atensi.corpus"
        )
    chars = "".join(sorted(set(train) | set(val)))
    return Corpus(train, val, chars, path)


def main(argv=None) -> int:
    from .arguments import Parser
    from .formatting import id_int

    parser = Parser(
        prog="python -m atensi.corpus",
        description="Buat ulang salinan beku korpus (results/korpus.txt) dari chapters/*.md.",
        usage_line="python -m atensi.corpus [--out BERKAS]")
    parser.add_argument("--out", default=str(SNAPSHOT), help="berkas tujuan")
    args = parser.parse_args(argv)
    out = Path(args.out).expanduser()  # a folder literally named "~" is a trap
    try:
        files.check_output_path(out, "--out", ".txt")
    except ValueError as err:
        parser.fail(str(err))
    text = build_snapshot()
    try:
        files.write_text(out, text)
    except OSError as err:  # a full disk, or a device such as /dev/full: not a usage error
        print(f"{parser.prog}: {files.write_problem(out, err)}", file=sys.stderr)
        return 1
    if not out.is_file():  # a device or a pipe: nothing to read back
        print(f"Korpus ditulis ke {out}: {id_int(len(text))} karakter.")
        return 0
    corpus = load(out)
    print(f"Korpus ditulis ke {out}: latih {id_int(len(corpus.train))} karakter, "
          f"validasi {id_int(len(corpus.val))}, kosakata {len(corpus.chars)} karakter.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
