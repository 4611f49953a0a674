"""Pembaca argumen baris perintah yang melapor dalam satu baris bahasa Indonesia.

Semua alat baris perintah proyek (``python -m atensi.kernels``, ``atensi.train``,
``atensi.corpus``, ``atensi.bench``, skrip di ``scripts/``) memakai
:class:`Parser`: argumen yang salah menghasilkan satu baris di *stderr* dan kode
keluar 2, tanpa teks ``usage`` argparse yang berbahasa Inggris.
:func:`run_command` menjalankan ``main`` setiap alat: Ctrl-C menjadi satu baris
dan kode keluar 130, dan keluaran tetap tercetak di terminal yang tidak bisa
menampilkan tipografi buku (``LC_ALL=C``, ``PYTHONIOENCODING=ascii``).
"""

from __future__ import annotations

import argparse
import codecs
import re
import sys
import unicodedata

__all__ = ["Parser", "run_command"]

_TYPES = {"int": "bilangan bulat", "float": "bilangan", "str": "teks"}

# argparse's English messages (CPython 3.8-3.13), in the order they are tried.
_MESSAGES = (
    (r"unrecognized arguments: (.*)", lambda m: f"argumen tidak dikenal: {m[1]}"),
    (r"the following arguments are required: (.*)",
     lambda m: f"argumen wajib belum diberikan: {m[1]}"),
    (r"argument (\S+): invalid (\w+) value: (.*)",
     lambda m: f"{m[1]}: {m[3]} bukan {_TYPES.get(m[2], m[2])}"),
    (r"argument (\S+): invalid choice: (.*?) \(choose from (.*)\)",
     lambda m: f"{m[1]}: pilihan {m[2]} tidak ada (pilih salah satu dari {m[3]})"),
    (r"argument (\S+): expected one argument", lambda m: f"{m[1]} butuh satu nilai"),
    (r"argument (\S+): expected at least one argument",
     lambda m: f"{m[1]} butuh paling sedikit satu nilai"),
    (r"argument (\S+): ignored explicit argument (.*)",
     lambda m: f"{m[1]} tidak menerima nilai (yang diberikan {m[2]})"),
    (r"argument (\S+): not allowed with argument (.*)",
     lambda m: f"{m[1]} tidak boleh dipakai bersama {m[2]}"),
    (r"ambiguous option: (\S+) could match (.*)",
     lambda m: f"opsi {m[1]} ambigu, bisa berarti {m[2]}"),
)

_HELP_WORDS = (
    ("usage:", "pemakaian:"),
    ("positional arguments:", "argumen posisi:"),
    ("options:", "opsi:"),
    ("optional arguments:", "opsi:"),
    ("show this help message and exit", "tampilkan bantuan ini lalu keluar"),
)


def indonesian(message: str) -> str:
    """argparse's English error text in Indonesian (unknown texts are kept)."""
    for pattern, say in _MESSAGES:
        match = re.fullmatch(pattern, message, flags=re.DOTALL)
        if match:
            return say(match)
    return message


class Parser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` with one Indonesian error line and Indonesian help.

    ``usage_line``: the one-line usage printed after an error, e.g.
    ``"python -m atensi.train [--quick] [--steps N] [--out BERKAS]"``.
    """

    def __init__(self, *args, usage_line: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.usage_line = usage_line

    def error(self, message):
        self.fail(f"argumen tidak sah ({indonesian(message)})")

    def fail(self, message: str, status: int = 2):
        """Print ``prog: message. Pemakaian: ...`` on stderr and exit with ``status``."""
        print(f"{self.prog}: {message.rstrip('.')}. Pemakaian: {self.usage_line}", file=sys.stderr)
        raise SystemExit(status)

    def format_help(self):
        return _translate(super().format_help())

    def format_usage(self):
        return _translate(super().format_usage())


def _translate(text: str) -> str:
    for english, indonesian_ in _HELP_WORDS:
        text = text.replace(english, indonesian_)
    return text


# The book's typography, spelled for a terminal that cannot show it.
_PLAIN = {"√": "akar ", "≤": "<=", "≥": ">=", "×": "x", "–": "-", "—": "-", "−": "-",
          "α": "alpha", "…": "...", "→": "->", "←": "<-", "≈": "~", "·": ".", "²": "^2",
          "³": "^3", "⁻": "^-", "¹": "1", "₀": "0", "₁": "1", "“": '"', "”": '"', "‘": "'",
          "’": "'", "±": "+-", "∞": "inf", "µ": "u", "π": "pi", "θ": "theta"}
_ERRORS = "atensi-plain"


def _plain(err: UnicodeEncodeError):
    text = err.object[err.start:err.end]
    out = []
    for char in text:
        plain = _PLAIN.get(char)
        if plain is None:
            plain = unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode() or "?"
        out.append(plain)
    return "".join(out), err.end


codecs.register_error(_ERRORS, _plain)


def plain_streams() -> None:
    """Stdout and stderr that cannot encode the book's typography spell it in ASCII."""
    for stream in (sys.stdout, sys.stderr):
        try:
            "√≤×–α…é".encode(stream.encoding or "ascii")
        except (UnicodeEncodeError, LookupError):
            try:
                stream.reconfigure(errors=_ERRORS)
            except (AttributeError, ValueError, TypeError):
                pass
        except AttributeError:
            pass


def run_command(main, prog: str, argv=None):
    """Run a command-line ``main(argv)`` (returns the exit code) and exit with its code.

    Ctrl-C ends it with one Indonesian line on stderr and exit code 130 (128 + SIGINT),
    without a traceback.
    """
    plain_streams()
    try:
        code = main(argv)
    except KeyboardInterrupt:
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        print(f"{prog}: dihentikan (Ctrl-C).", file=sys.stderr)
        code = 130
    sys.exit(code)
