"""Serve a folder on 127.0.0.1 the way GitHub Pages does: gzip for text.

Used by scripts/audit_site.sh, so that Lighthouse measures what a reader
gets from the published site, not Python's uncompressed http.server.
    python scripts/serve_gzip.py PORT FOLDER
"""

from __future__ import annotations

import functools
import gzip
import http.server
import sys

TEXT = (".html", ".js", ".css", ".svg", ".json", ".txt", ".xml", ".map", ".woff")


class GzipHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send_head(self):
        path = self.translate_path(self.path)
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
        import io

        return io.BytesIO(body)


if __name__ == "__main__":
    port, folder = int(sys.argv[1]), sys.argv[2]
    handler = functools.partial(GzipHandler, directory=folder)
    http.server.ThreadingHTTPServer(("127.0.0.1", port), handler).serve_forever()
