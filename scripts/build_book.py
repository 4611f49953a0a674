"""Run ``jupyter-book build`` for `make book` and `make pdf`, keeping its full log.

    python scripts/build_book.py --log _build/buku.log -- jupyter-book build . ...

Everything the build prints goes to the log file. The terminal gets the same
lines up to the first Python traceback; a failed build then ends with one
Indonesian message: the cause (the error Sphinx printed above, or the last
line of the traceback) and where the full log is. The exit status is the
build's.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))
from atensi import files  # noqa: E402
from atensi.arguments import Parser  # noqa: E402

TRACEBACK = "Traceback (most recent call last):"
EXCEPTION = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?(?P<kind>[A-Za-z_]\w*(?:Error|Exception|Interrupt)): ?(?P<text>.*)$")
COLOURS = re.compile(r"\x1b\[[0-9;]*m")


def cause(lines: list[str]) -> str | None:
    """What stopped the build, when Sphinx did not print it before the traceback:
    the first exception line of the log that says something."""
    for line in lines:
        found = EXCEPTION.match(COLOURS.sub("", line).strip())
        if found and found["text"].strip():
            return f"{found['kind']}: {found['text'].strip()}"
    return None


def run(command: list[str], log: Path) -> int:
    log.parent.mkdir(parents=True, exist_ok=True)
    try:
        out = open(log, "w", encoding="utf-8")
    except OSError as err:
        print(f"scripts/build_book.py: --log {files.write_problem(log, err)}", file=sys.stderr)
        return 1
    with out:
        try:
            proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    text=True, errors="replace", bufsize=1)
        except OSError as err:
            print(f"scripts/build_book.py: perintah build '{command[0]}' tidak bisa dijalankan "
                  f"({err.strerror}). Periksa perintah sesudah --, misalnya -- jupyter-book "
                  "build .; pasang dulu dengan make venv bila belum.", file=sys.stderr)
            return 127
        return _follow(proc, out, log)


def _follow(proc, out, log: Path) -> int:
    shown_until_traceback = True
    printed_error = False  # Sphinx printed the error itself before the traceback
    after: list[str] = []
    try:
        for line in proc.stdout:
            out.write(line)
            if line.startswith(TRACEBACK):
                shown_until_traceback = False
            if shown_until_traceback:
                sys.stdout.write(line)
                sys.stdout.flush()
                if re.search(r"\b(Extension|Config|Sphinx) error|^Exception occurred", COLOURS.sub("", line)):
                    printed_error = True
            else:
                after.append(line)
        code = proc.wait()
    except KeyboardInterrupt:
        proc.wait()
        print(f"\nBuild buku dihentikan. Log sampai titik ini: {log}", file=sys.stderr)
        return 130
    if code == 0:
        return 0
    message = [f"\nBuku gagal dibangun (kode keluar {code})."]
    found = None if printed_error else cause(after)
    if found:
        message.append(f"Penyebabnya: {found}")
    elif after:
        message.append("Penyebabnya tertulis di atas.")
    message.append(f"Log lengkap (dengan traceback jupyter-book): {log}")
    print("\n".join(message), file=sys.stderr)
    return code


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" not in argv:
        argv.append("--")
    at = argv.index("--")
    own, command = argv[:at], argv[at + 1:]
    parser = Parser(prog="scripts/build_book.py", description=__doc__.splitlines()[0],
                    usage_line="python scripts/build_book.py --log BERKAS -- PERINTAH ...")
    parser.add_argument("--log", required=True, help="berkas tempat log lengkap ditulis")
    args = parser.parse_args(own)
    if not command:
        parser.fail("perintah build tidak ada: tulis sesudah --, misalnya -- jupyter-book build .")
    try:  # before the build: a log that cannot be written is said first
        files.check_output_path(args.log, "--log")
    except (ValueError, TypeError) as err:
        parser.fail(str(err), status=1)
    return run(command, Path(args.log))


if __name__ == "__main__":
    sys.exit(main())
