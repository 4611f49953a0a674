"""Reading a .cu file: UTF-8 whatever the locale, a BOM accepted, anything else
(a folder, Latin-1 or binary bytes) refused in Indonesian naming file, line and byte."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from atensi.cudacpu import RawModule, source

ROOT = Path(__file__).resolve().parents[1]
KERNEL = 'extern "C" __global__ void fill(float* x) { x[threadIdx.x] = 2.0f; }  // isi: 2\n'


def _run_fill(mod):
    x = np.zeros(4, np.float32)
    mod.get_function("fill")((1,), (4,), (x,))
    return x


def test_a_cu_file_with_a_bom_compiles_and_runs(tmp_path):
    path = tmp_path / "bom.cu"
    path.write_bytes(b"\xef\xbb\xbf" + KERNEL.encode())
    assert (_run_fill(RawModule(path=path)) == 2).all()
    assert (_run_fill(RawModule("\ufeff" + KERNEL, path="bom.cu")) == 2).all()  # the text itself


@pytest.mark.parametrize("data, line, column, byte", [
    ("// baris satu\n// caf\xe9 di Latin-1\n".encode("latin-1") + KERNEL.encode(), 2, 7, "0xE9"),
    (b"\x7fELF\x02\x01\x01\x00\xff\xfe", 1, 9, "0xFF"),
])
def test_bytes_that_are_not_utf8_name_the_file_line_column_and_byte(tmp_path, data, line, column, byte):
    path = tmp_path / "salah.cu"
    path.write_bytes(data)
    with pytest.raises(ValueError) as info:
        RawModule(path=path)
    msg = str(info.value)
    assert f"'{path}' bukan teks UTF-8: baris {line}, kolom {column} berisi bita {byte}" in msg
    assert "Simpan ulang berkasnya sebagai UTF-8" in msg
    assert not isinstance(info.value, UnicodeDecodeError)


def test_a_folder_given_as_the_cu_file_is_named_a_folder_and_nothing_else(tmp_path):
    folder = tmp_path / "softmax.cu"
    folder.mkdir()
    with pytest.raises(IsADirectoryError) as info:
        RawModule(path=folder)
    msg = str(info.value)
    assert f"'{folder}' adalah folder" in msg and "tidak ditemukan" not in msg
    with pytest.raises(FileNotFoundError, match="tidak ditemukan"):
        source.read_cu(tmp_path / "tidak_ada.cu")


def test_a_kernel_folder_holding_a_folder_named_like_the_kernel_says_so(tmp_path, monkeypatch):
    from atensi.kernels import loading

    (tmp_path / "softmax.cu").mkdir()
    (tmp_path / "scores.cu").write_text(KERNEL, encoding="utf-8")
    monkeypatch.setenv("ATENSI_KERNELS_DIR", str(tmp_path))
    with pytest.raises(IsADirectoryError) as info:
        loading.kernel_path("softmax.cu")
    msg = str(info.value)
    assert "adalah folder" in msg and "ATENSI_KERNELS_DIR" in msg and "tidak ada di" not in msg
    with pytest.raises(FileNotFoundError) as info:
        loading.kernel_path("rope.cu")
    assert "Berkas .cu yang ada: scores.cu." in str(info.value)  # the folder is not listed as a file


def test_book_kernels_run_under_an_ascii_locale(tmp_path):
    """LC_ALL=C with PYTHONUTF8=0 makes Python's default encoding ASCII; the kernels'
    Indonesian comments (and g++'s quotes of them) are UTF-8 all the same."""
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0",
           "ATENSI_CACHE": str(tmp_path / "cache")}
    script = ("import numpy as np\nfrom atensi import kernels\n"
              "S = np.zeros((1, 4, 4), np.float32)\n"
              "print(kernels.causal_mask(S, backend='cpu')[0, 0, 1])\n"
              "from atensi.cudacpu import RawModule\n"
              "try:\n    RawModule('// kernel \\u00e9\\nint x = ;\\n', path='rusak.cu')\n"
              "except Exception as err:\n    print(type(err).__name__)\n")
    proc = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True,
                          text=True, encoding="utf-8", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["-inf", "CudaCpuError"], proc.stdout


def test_a_device_given_as_the_cu_file_is_not_called_missing():
    with pytest.raises(ValueError, match="'/dev/null' bukan berkas biasa") as info:
        source.read_cu("/dev/null")
    assert "tidak ditemukan" not in str(info.value)
