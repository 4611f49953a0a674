"""Serve a folder on 127.0.0.1 the way GitHub Pages does: gzip for text.

Used by scripts/audit_site.sh, so that Lighthouse measures what a reader
gets from the published site, not Python's uncompressed http.server.
    python scripts/serve_gzip.py PORT FOLDER

Only what lies inside FOLDER is served: a symlink that leads out of it, or a
path with a NUL byte (``%00``), is answered 404. Ctrl-C stops the server
with one line, not a traceback.
"""

from __future__ import annotations

import functools
import gzip
import http.server
import io
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from atensi.arguments import Parser  # noqa: E402

TEXT = (".html", ".js", ".css", ".svg", ".json", ".txt", ".xml", ".map", ".woff")


class GzipHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def outside(self, path: str) -> bool:
        """A path with a NUL byte, or one that leads out of the folder (a symlink)."""
        if "\0" in path:
            return True
        root = os.path.realpath(self.directory)
        return os.path.commonpath([root, os.path.realpath(path)]) != root

    def send_head(self):
        path = self.translate_path(self.path)
        if self.outside(path):
            self.send_error(404, "File not found")
            return None
        wants = "gzip" in self.headers.get("Accept-Encoding", "")
        if not wants or not path.endswith(TEXT):
            return super().send_head()
        try:
            with open(path, "rb") as f:
                body = gzip.compress(f.read(), compresslevel=6)
        except OSError:
            return super().send_head()
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "max-age=600")  # as GitHub Pages
        self.end_headers()
        return io.BytesIO(body)


def main(argv=None) -> int:
    parser = Parser(prog="scripts/serve_gzip.py",
                    description="Sajikan folder di 127.0.0.1 dengan gzip seperti GitHub Pages.",
                    usage_line="python scripts/serve_gzip.py PORT FOLDER")
    parser.add_argument("port", type=int, help="nomor port 1..65535")
    parser.add_argument("folder", help="folder situs, misalnya _build/html")
    args = parser.parse_args(argv)
    if not 1 <= args.port <= 65535:
        parser.fail(f"PORT harus 1..65535, tetapi yang diterima {args.port}")
    if not os.path.isdir(args.folder):
        parser.fail(f"FOLDER '{args.folder}' tidak ada atau bukan folder; bangun dulu bukunya "
                    "(make book)")
    handler = functools.partial(GzipHandler, directory=args.folder)
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), handler)
    except OSError as err:
        print(f"scripts/serve_gzip.py: port {args.port} tidak bisa dipakai ({err.strerror}). "
              "Pilih port lain.", file=sys.stderr)
        return 1
    try:
        with server:
            print(f"Menyajikan {args.folder} di http://127.0.0.1:{args.port}/ "
                  "(Ctrl-C untuk berhenti)", flush=True)
            server.serve_forever()
    except KeyboardInterrupt:
        print("\nServer dihentikan.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
