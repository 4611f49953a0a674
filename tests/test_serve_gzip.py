"""scripts/serve_gzip.py: the folder as GitHub Pages serves it, and nothing outside it."""

from __future__ import annotations

import gzip
import http.client
import signal
import socket
import subprocess
import sys

import pytest

from conftest import ROOT


@pytest.fixture
def server(tmp_path):
    site = tmp_path / "situs"
    site.mkdir()
    (site / "index.html").write_text("<p>halaman</p>", encoding="utf-8")
    secret = tmp_path / "rahasia.html"
    secret.write_text("<p>di luar situs</p>", encoding="utf-8")
    (site / "luar.html").symlink_to(secret)
    (site / "dalam.html").symlink_to(site / "index.html")
    with socket.socket() as probe:  # a free port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "serve_gzip.py"), str(port), str(site)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert "Menyajikan" in proc.stdout.readline()
    yield proc, port
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def get(port: int, path: str):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", path, headers={"Accept-Encoding": "gzip"})
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, response.getheader("Content-Encoding"), body


def test_serves_the_folder_gzipped(server):
    _, port = server
    status, encoding, body = get(port, "/index.html")
    assert (status, encoding) == (200, "gzip") and gzip.decompress(body) == b"<p>halaman</p>"
    assert get(port, "/dalam.html")[0] == 200  # a symlink that stays inside


@pytest.mark.parametrize("path", ["/luar.html", "/index%00.html", "/%00"])
def test_a_symlink_out_of_the_folder_or_a_nul_byte_is_not_found(server, path):
    _, port = server
    status, _, body = get(port, path)
    assert status == 404 and b"di luar situs" not in body


def test_ctrl_c_stops_with_one_line_and_no_traceback(server):
    proc, _ = server
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert "Server dihentikan." in out and "Traceback" not in err
