"""The wheel is a working install: its kernels, emulator header and shipped results come along.

The wheel is built from this checkout, unpacked into an empty folder outside
the repository, and imported from there by a fresh interpreter, which then
runs a kernel on the CPU backend against a float64 reference, loads both
trained models, and runs the cells of a chapter that load its model, the way
Colab runs them after its setup cell has installed the package.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile

import pytest

from conftest import ROOT

pytestmark = pytest.mark.slow

KERNEL_FILES = sorted(p.name for p in (ROOT / "kernels").glob("*.cu"))
RESULT_FILES = sorted(p.name for pattern in ("*.npz", "*.json", "*.txt") for p in (ROOT / "results").glob(pattern))

RUN_FROM_INSTALL = r"""
import sys
site = sys.argv[1]
sys.path.insert(0, site)
import numpy as np
import atensi
from atensi import kernels
from atensi.kernels.loading import kernels_dir

assert atensi.__file__.startswith(site), atensi.__file__
assert str(kernels_dir()).startswith(site), kernels_dir()
rng = np.random.default_rng(7)
Q = rng.standard_normal((2, 5, 3)).astype(np.float32)
K = rng.standard_normal((2, 5, 3)).astype(np.float32)
S = kernels.scores(Q, K, backend="cpu")
expected = (Q.astype(np.float64) @ np.swapaxes(K, -1, -2).astype(np.float64)) / np.sqrt(3)
diff = float(np.max(np.abs(S - expected)))
assert np.all(np.isfinite(S)) and diff < 1e-5, diff
print("selisih", diff)
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--quiet", "--wheel-dir", str(out), str(ROOT)],
        check=True, capture_output=True, text=True,
    )
    (found,) = out.glob("atensi-*.whl")
    return found


def test_wheel_ships_every_kernel_and_the_emulator_header(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert KERNEL_FILES, "kernels/*.cu kosong"
    for name in KERNEL_FILES:
        assert f"atensi/kernels/{name}" in names
    assert "atensi/cudacpu/cuda_cpu.h" in names
    for name in ("static.js", "static.css", "playground.js", "playground.css"):
        assert f"atensi/explorers/{name}" in names  # the explorers' page code


def test_installed_copy_runs_a_kernel_on_the_cpu(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = {k: v for k, v in os.environ.items() if k not in ("ATENSI_KERNELS_DIR", "PYTHONPATH")}
    run = subprocess.run(
        [sys.executable, "-c", RUN_FROM_INSTALL, str(site)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "selisih" in run.stdout


def test_wheel_ships_the_results_the_chapters_load(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"model_kecil.npz", "model_ingat.npz", "korpus.txt"} <= set(RESULT_FILES)
    for name in RESULT_FILES:
        assert f"atensi/results/{name}" in names


LOAD_FROM_INSTALL = r"""
import sys
site = sys.argv[1]
from atensi import corpus, recall_train, train
from atensi.model import TinyGPT
from atensi.shipped import results_dir

assert str(results_dir()).startswith(site), results_dir()
for path in (train.WEIGHTS, recall_train.RECALL_WEIGHTS, corpus.SNAPSHOT):
    assert str(path).startswith(site), path
kecil = TinyGPT.load(train.WEIGHTS)
ingat = TinyGPT.load(recall_train.RECALL_WEIGHTS)
assert kecil.n_params > 0 and ingat.n_params > 0
print("dimuat", kecil.n_params, ingat.n_params)
"""


def _cells_up_to(page: str, last: str, name: str) -> list[str]:
    """The setup cell, the import cell that imports ``name``, and the cell holding ``last``."""
    import jupytext

    cells = [c.source for c in jupytext.read(ROOT / f"{page}.md").cells if c.cell_type == "code"]
    (setup,) = [c for c in cells if "find_spec(\"atensi\")" in c]
    imports = next(c for c in cells if c.lstrip().startswith("import") and "from atensi" in c
                   and f" {name}" in c)
    loading = next(c for c in cells if last in c)
    return [setup, imports, loading]


def test_installed_copy_loads_both_models_and_runs_a_chapters_loading_cells(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = {k: v for k, v in os.environ.items() if k not in ("ATENSI_KERNELS_DIR", "PYTHONPATH")}
    env["PYTHONPATH"] = str(site)  # what `pip install` into the interpreter gives
    env["MPLBACKEND"] = "Agg"
    models = subprocess.run([sys.executable, "-c", LOAD_FROM_INSTALL, str(site)],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert models.returncode == 0, models.stdout + models.stderr
    assert "dimuat" in models.stdout

    chapter = "\n\n".join(_cells_up_to("chapters/melatih", 'tasks.load_weights("teks")', "tasks"))
    script = tmp_path / "bab.py"
    script.write_text("from IPython.display import display\n" + chapter
                      + "\nimport atensi\nassert atensi.__file__.startswith(%r)\nprint('bab jalan')\n" % str(site),
                      encoding="utf-8")
    run = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "bab jalan" in run.stdout
