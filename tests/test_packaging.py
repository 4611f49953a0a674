"""The wheel is a working install: its kernels and emulator header come along.

The wheel is built from this checkout, unpacked into an empty folder outside
the repository, and imported from there by a fresh interpreter, which then
runs a kernel on the CPU backend against a float64 reference.
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
